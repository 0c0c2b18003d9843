// eddy.Whitewater and eddy.whitewater (issue 32; eddy/whitewater.hpp): spray, foam and bubbles
// (Ihmsen et al. 2012) beside a fluid that Python drives (Whitewater.step after each fluid step), or
// from a finished run's frames (whitewater(run_dir), as `eddy whitewater RUN_DIR`). Settings are the
// keys of whitewater_fields() as keyword arguments, checked by the same table as the command line's
// --ww-set: a bad key or value is a ValueError naming it. The diffuse particles come back as copies.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/settings.hpp"
#include "eddy/up_axis.hpp"
#include "eddy/whitewater.hpp"
#include "views.hpp"

namespace eddy::python {

namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

/// Keyword arguments as whitewater settings over the defaults, checked (ValueError naming the key).
WhitewaterSettings settings_from(const py::kwargs& kwargs, const std::string& where) {
    nlohmann::json obj = nlohmann::json::object();
    for (const auto& [k, v] : kwargs) {
        const std::string key = py::str(k);
        try {
            obj[key] = to_json(v);
        } catch (const py::error_already_set&) {  // NaN, inf, an object JSON has no value for
            throw InputError(fmt::format("{}: key '{}' = {}: allowed: a finite number", where, text_excerpt(key),
                                         text_excerpt(py::repr(v).cast<std::string>(), 40)));
        }
    }
    WhitewaterSettings s;
    apply_json(s, whitewater_fields(), obj, where);
    validate(s, where);
    return s;
}

/// A finite float argument, else ValueError "<what> = <v>: allowed: <allowed>".
double finite_arg(const py::handle& v, const std::string& what, const std::string& allowed) {
    double x = 0.0;
    try {
        if (PyBool_Check(v.ptr())) throw py::cast_error();
        x = v.cast<double>();
    } catch (const py::cast_error&) {
        throw InputError(fmt::format("{} = {}: allowed: {}", what, text_excerpt(py::repr(v).cast<std::string>(), 40), allowed));
    }
    if (!std::isfinite(x)) throw InputError(fmt::format("{} = {}: allowed: {}", what, x, allowed));
    return x;
}

/// An (n, D) float32 copy of a Python array, checked: shape (rows < 0: any) and finite values.
template <int D>
std::vector<Vec<D>> rows_of(const py::object& o, py::ssize_t rows, const std::string& what) {
    FloatArray a;
    try {
        a = o.cast<FloatArray>();
    } catch (const py::cast_error&) {
        throw InputError(fmt::format("{}: expected an array of numbers of shape (n, {})", what, D));
    }
    if (a.ndim() != 2 || a.shape(1) != D || (rows >= 0 && a.shape(0) != rows))
        throw InputError(fmt::format("{}: expected an array of shape ({}, {})", what, rows >= 0 ? std::to_string(rows) : "n", D));
    std::vector<Vec<D>> v(std::size_t(a.shape(0)));
    if (!v.empty()) std::memcpy(v.data(), a.data(), v.size() * sizeof(Vec<D>));
    for (std::size_t i = 0; i < v.size(); ++i)
        for (int k = 0; k < D; ++k)
            if (!std::isfinite(v[i][k])) throw InputError(fmt::format("{}: row {} is not finite (NaN or infinite)", what, i));
    return v;
}

/// Gravity from Python: D numbers (2D: also 3 with z = 0), finite.
template <int D>
Vec<D> gravity_of(const py::object& g, const std::string& what) {
    std::vector<double> x;
    try {
        x = g.cast<std::vector<double>>();
    } catch (const py::cast_error&) {
        throw InputError(fmt::format("{}: expected {} numbers (m/s^2)", what, D));
    }
    if (!(x.size() == std::size_t(D) || (D == 2 && x.size() == 3)))
        throw InputError(fmt::format("{}: expected {} numbers (m/s^2), got {}", what, D, x.size()));
    for (double c : x)
        if (!std::isfinite(c)) throw InputError(fmt::format("{}: not finite (NaN or infinite)", what));
    if (D == 2 && x.size() == 3 && x[2] != 0.0) throw InputError(fmt::format("{}: a 2D fluid has no z; allowed: gz = 0", what));
    Vec<D> out;
    for (int k = 0; k < D; ++k) out[k] = static_cast<float>(x[std::size_t(k)]);
    return out;
}

/// The Python eddy.Whitewater: the diffuse particles of one fluid, their settings and a step count.
struct PyWhitewater {
    int dimension = 3;
    float radius = 0.0f;
    WhitewaterSettings settings;
    std::variant<Whitewater<2>, Whitewater<3>> state;
    std::uint64_t steps = 0;
    bool busy = false;  // stepping with the GIL released (views.hpp: Busy)
    std::unique_ptr<ExecContext> exec;  // kept between steps while the thread count asked for stays
    int exec_threads = -1;

    const ExecContext& exec_for(int threads) {
        if (!exec || exec_threads != threads) {
            exec = std::make_unique<ExecContext>(threads);
            exec_threads = threads;
        }
        return *exec;
    }
    template <class F>
    decltype(auto) visit(F&& f) {
        return std::visit(std::forward<F>(f), state);
    }
};

template <int D>
void step_impl(PyWhitewater& w, Whitewater<D>& ww, const py::object& positions, const py::object& velocities, double dt,
               const py::object& gravity, std::uint64_t step_index, int threads) {
    const std::vector<Vec<D>> x = rows_of<D>(positions, -1, "Whitewater.step: positions");
    const std::vector<Vec<D>> v = rows_of<D>(velocities, py::ssize_t(x.size()), "Whitewater.step: velocities");
    const Vec<D> g = gravity_of<D>(gravity, "Whitewater.step: gravity");
    Busy busy(w.busy);
    const ExecContext& exec = w.exec_for(threads);
    py::gil_scoped_release release;
    step_whitewater<D>(ww, x, v, w.radius, g, dt, step_index, w.settings, exec);
}

py::dict counts_dict(const WhitewaterCounts& c) {
    py::dict d;
    d["spray"] = c.spray;
    d["foam"] = c.foam;
    d["bubbles"] = c.bubbles;
    d["generated"] = c.generated;
    d["expired"] = c.expired;
    d["escaped"] = c.escaped;
    d["capped"] = c.capped;
    return d;
}

template <class T>
py::array copy_of(const std::vector<T>& v, std::vector<py::ssize_t> shape) {
    py::array_t<T> a(shape);
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    return a;
}

template <int D>
py::array vectors_of(const std::vector<Vec<D>>& v) {
    py::array_t<float> a(std::vector<py::ssize_t>{py::ssize_t(v.size()), py::ssize_t(D)});
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(Vec<D>));
    return a;
}

// "Whitewater: key ..." as the where of settings' errors; the class is named in each.
constexpr const char* kWhere = "Whitewater";

using WhitewaterClass = py::class_<PyWhitewater>;

/// Whitewater(*, dimension=3, radius, **settings).
void def_whitewater_init(WhitewaterClass& cls) {
    cls.def(py::init([](int dimension, const py::object& radius, const py::kwargs& kwargs) {
                if (dimension != 2 && dimension != 3)
                    throw InputError(fmt::format("Whitewater: dimension = {}: allowed: 2 or 3", dimension));
                const double r = finite_arg(radius, "Whitewater: radius", "a particle radius > 0 (m)");
                if (!(r > 0.0) || !(r < 1e9)) throw InputError(fmt::format("Whitewater: radius = {}: allowed: > 0 (m)", r));
                auto w = std::make_unique<PyWhitewater>();
                w->dimension = dimension;
                w->radius = static_cast<float>(r);
                w->settings = settings_from(kwargs, kWhere);
                if (dimension == 2) w->state = Whitewater<2>{};
                else w->state = Whitewater<3>{};
                return w;
            }),
            py::kw_only(), py::arg("dimension") = 3, py::arg("radius"));
}

/// Whitewater.step: one whitewater step beside a fluid step.
void def_whitewater_step(WhitewaterClass& cls) {
    cls.def(
        "step",
        [](PyWhitewater& w, const py::object& positions, const py::object& velocities, const py::object& dt_given,
           const py::object& gravity, const py::object& step_given, const py::int_& threads_given) {
            check_idle(w.busy);
            const int threads = threads_arg(threads_given, "Whitewater.step: threads");
            const double dt = finite_arg(dt_given, "Whitewater.step: dt", "a time step >= 0 (s)");
            if (dt < 0.0) throw InputError(fmt::format("Whitewater.step: dt = {}: allowed: a time step >= 0 (s)", dt));
            const std::uint64_t step_index =
                step_given.is_none() ? w.steps : count_arg(step_given, "Whitewater.step: step_index", 0, kMaxCount, "0 to 2**63 - 1");
            py::object g = gravity;
            if (g.is_none()) g = w.dimension == 2 ? py::cast(std::vector<double>{0.0, -9.81}) : py::cast(std::vector<double>{0.0, -9.81, 0.0});
            w.visit([&](auto& ww) {
                constexpr int D = std::is_same_v<std::decay_t<decltype(ww)>, Whitewater<2>> ? 2 : 3;
                step_impl<D>(w, ww, positions, velocities, dt, g, step_index, threads);
            });
            ++w.steps;
        },
        py::arg("positions"), py::arg("velocities"), py::arg("dt"), py::kw_only(), py::arg("gravity") = py::none(),
        py::arg("step_index") = py::none(), py::arg("threads") = 0,
        "step(positions, velocities, dt, *, gravity=None, step_index=None, threads=0)\n\n"
        "One whitewater step after a fluid step of dt seconds (>= 0) that left the fluid at positions and\n"
        "velocities ((n, D) arrays, m and m/s; copied): existing diffuse particles are classified by their\n"
        "fluid neighbours (spray, foam, bubble), moved (spray ballistic under gravity, foam with the fluid,\n"
        "bubbles buoyant and dragged) and aged, then new ones are generated from the fluid's trapped-air,\n"
        "wave-crest and kinetic-energy potentials. gravity: D numbers (m/s^2), default 9.81 down y.\n"
        "step_index keys the random draws (use the simulation's step count); default: this object's\n"
        "number of steps so far (ww.steps). threads: 0 uses every core, else 1 to 4096; the result does\n"
        "not depend on it. Empty positions drop every diffuse particle (counted as escaped).");
}

/// The diffuse particles' arrays (fresh copies) and counts.
void def_whitewater_arrays(WhitewaterClass& cls) {
    cls.def_property_readonly(
        "positions",
        [](PyWhitewater& w) {
            check_idle(w.busy);
            return w.visit([](const auto& ww) { return vectors_of(ww.position); });
        },
        "(m, D) float32 positions of the diffuse particles (m), a fresh copy.");
    cls.def_property_readonly(
        "velocities",
        [](PyWhitewater& w) {
            check_idle(w.busy);
            return w.visit([](const auto& ww) { return vectors_of(ww.velocity); });
        },
        "(m, D) float32 velocities of the diffuse particles (m/s), a fresh copy.");
    cls.def_property_readonly(
        "types",
        [](PyWhitewater& w) {
            check_idle(w.busy);
            return w.visit([](const auto& ww) { return copy_of(ww.type, {py::ssize_t(ww.type.size())}); });
        },
        "(m,) uint8 type of each diffuse particle: 0 spray, 1 foam, 2 bubble (the files' 'type' array), a copy.");
    cls.def_property_readonly(
        "lifetimes",
        [](PyWhitewater& w) {
            check_idle(w.busy);
            return w.visit([](const auto& ww) { return copy_of(ww.lifetime, {py::ssize_t(ww.lifetime.size())}); });
        },
        "(m,) float32 remaining lifetime (s); it runs down only while a particle is foam; a copy.");
    cls.def_property_readonly(
        "ids",
        [](PyWhitewater& w) {
            check_idle(w.busy);
            return w.visit([](const auto& ww) { return copy_of(ww.id, {py::ssize_t(ww.id.size())}); });
        },
        "(m,) uint32 ids, unique, in order of generation; a copy.");
    cls.def_property_readonly(
        "counts",
        [](PyWhitewater& w) {
            check_idle(w.busy);
            return w.visit([](const auto& ww) { return counts_dict(ww.counts); });
        },
        "A dict: spray, foam, bubbles (now), and since the start generated, expired (foam whose lifetime\n"
        "ran out), escaped (left the fluid's bounding box plus the margin) and capped (not generated\n"
        "because of max_particles).");
}

/// settings, dimension, radius, steps.
void def_whitewater_info(WhitewaterClass& cls) {
    cls.def_property_readonly(
        "settings",
        [](const PyWhitewater& w) {
            nlohmann::json j = eddy::to_json(w.settings, whitewater_fields());
            // Settings are floats: show 0.6, not the double nearest float(0.6) (as sim.settings).
            for (auto& v : j)
                if (v.is_number_float())
                    v = std::strtod(fmt::format("{}", static_cast<float>(v.get<double>())).c_str(), nullptr);
            return to_python(j);
        },
        "The settings as a dict (every key of the table, defaults included); a copy.");
    cls.def_property_readonly("dimension", [](const PyWhitewater& w) { return w.dimension; }, "2 or 3.");
    cls.def_property_readonly("radius", [](const PyWhitewater& w) { return w.radius; }, "The fluid's particle radius r (m).");
    cls.def_property_readonly("steps", [](const PyWhitewater& w) { return w.steps; },
                              "How many times step() was called (the default step_index).");
}

/// write, __len__, __repr__.
void def_whitewater_output(WhitewaterClass& cls) {
    cls.def(
        "write",
        [](PyWhitewater& w, const std::filesystem::path& path, const std::string& up) {
            check_idle(w.busy);
            const UpAxis axis = parse_up_axis(up, "Whitewater.write: up");
            const std::string ext = path.extension().string();
            if (ext != ".vtp" && ext != ".ply")
                throw InputError(fmt::format("{}: Whitewater.write: extension '{}': allowed: .vtp, .ply", path.string(), ext));
            w.visit([&](const auto& ww) {
                constexpr int D = std::is_same_v<std::decay_t<decltype(ww)>, Whitewater<2>> ? 2 : 3;
                if (ext == ".vtp") write_whitewater_vtp<D>(path, ww, axis);
                else write_whitewater_ply<D>(path, ww, axis);
            });
        },
        py::arg("path"), py::arg("up") = "y",
        "write(path, up='y'): the diffuse particles as a .vtp (VTK PolyData: point arrays type (UInt8),\n"
        "velocity, lifetime, id) or a binary .ply (x y z vx vy vz lifetime type id), by the extension,\n"
        "written atomically; 2D points get z = 0. up: the run's up axis ('y' or 'z'), as eddy run's files.");
    cls.def("__len__", [](PyWhitewater& w) {
        check_idle(w.busy);
        return w.visit([](const auto& ww) { return ww.size(); });
    });
    cls.def("__repr__", [](PyWhitewater& w) {
        if (w.busy) return std::string("eddy.Whitewater(stepping)");
        return w.visit([&](const auto& ww) {
            return fmt::format("eddy.Whitewater(dimension={}, radius={:g}, steps={}, spray={}, foam={}, bubbles={})",
                               w.dimension, w.radius, w.steps, ww.counts.spray, ww.counts.foam, ww.counts.bubbles);
        });
    });
}

/// eddy.whitewater(run_dir, ...): the whitewater of a finished run's frames.
void def_whitewater_post(py::module_& m) {
    m.def(
        "whitewater",
        [](const std::filesystem::path& run_dir, const py::object& substeps_given, const py::int_& threads_given,
           const py::object& radius_given, const py::object& gravity, bool allow_outside_references, const py::kwargs& kwargs) {
            const int threads = threads_arg(threads_given, "whitewater: threads");
            WhitewaterPostOptions o;
            o.run_dir = run_dir;
            o.settings = settings_from(kwargs, "whitewater");
            o.substeps = int(count_arg(substeps_given, "whitewater: substeps", 1, 100000, "1 to 100000"));
            const double r = finite_arg(radius_given, "whitewater: radius", "0 (the run's) or a particle radius > 0 (m)");
            if (r < 0.0) throw InputError(fmt::format("whitewater: radius = {}: allowed: 0 (the run's) or > 0 (m)", r));
            o.particle_radius = static_cast<float>(r);
            if (!gravity.is_none()) o.gravity = [&] {
                const Vec<3> g = gravity_of<3>(gravity, "whitewater: gravity");
                return std::array<double, 3>{g[0], g[1], g[2]};
            }();
            o.allow_outside_references = allow_outside_references;
            WhitewaterPostReport report;
            {
                py::gil_scoped_release release;
                ExecContext exec(threads);
                report = whitewater_post_process(o, exec);
            }
            py::list rows;
            for (const auto& row : report.rows) {
                py::dict d;
                d["frame"] = row.frame;
                d["time"] = row.time;
                d["spray"] = row.spray;
                d["foam"] = row.foam;
                d["bubbles"] = row.bubbles;
                rows.append(d);
            }
            return rows;
        },
        py::arg("run_dir"), py::kw_only(), py::arg("substeps") = 10, py::arg("threads") = 0, py::arg("radius") = 0.0,
        py::arg("gravity") = py::none(), py::arg("allow_outside_references") = false,
        "whitewater(run_dir, *, substeps=10, threads=0, radius=0, gravity=None, allow_outside_references=False,\n"
        "           **settings) -> list of dicts\n\n"
        "The whitewater of a finished `eddy run` (as `eddy whitewater RUN_DIR`): from its particle frames\n"
        "(with velocities), `substeps` whitewater steps between two frames (the fluid interpolated\n"
        "linearly), written into run_dir: frames/whitewater_NNNNN.vtp and .ply (point array 'type': 0 spray,\n"
        "1 foam, 2 bubble), whitewater.pvd and whitewater.csv. radius: 0 takes summary.json's particle\n"
        "radius; gravity: 3 numbers in the files' axes (m/s^2), default 9.81 down the run's up axis.\n"
        "settings: as Whitewater's (ValueError naming a bad key). Returns one dict per frame: frame, time\n"
        "(s), spray, foam, bubbles. threads: 0 uses every core; the files do not depend on it.");
}

}  // namespace

void bind_whitewater(py::module_& m) {
    WhitewaterClass cls(
        m, "Whitewater",
        "Whitewater(dimension=3, radius, **settings): spray, foam and bubbles (Ihmsen et al. 2012) as diffuse\n"
        "particles beside a particle fluid that you step (docs/whitewater.md, docs/python.md):\n\n"
        "    ww = eddy.Whitewater(dimension=3, radius=0.01, seed=1)\n"
        "    for k in range(steps):\n"
        "        ...                                  # a fluid step of dt seconds\n"
        "        ww.step(x, v, dt, gravity=(0, -9.81, 0), step_index=k)\n"
        "    ww.counts, ww.positions, ww.types        # 0 spray, 1 foam, 2 bubble\n"
        "    ww.write('foam.vtp')                     # or .ply; a 'type' point array\n\n"
        "radius: the fluid's particle radius r (m). settings: the keys of `eddy whitewater --help`\n"
        "(kernel_radius, trapped_air_min/max, wave_crest_min/max, kinetic_min/max, trapped_air_rate,\n"
        "wave_crest_rate, lifetime_min/max, buoyancy, drag, seed, max_particles, margin, ...), checked by\n"
        "the same table as the command line: a bad key or value raises ValueError naming it. The whitewater\n"
        "never acts on the fluid. Results are the same bits for any thread count.");
    def_whitewater_init(cls);
    def_whitewater_step(cls);
    def_whitewater_arrays(cls);
    def_whitewater_info(cls);
    def_whitewater_output(cls);
    def_whitewater_post(m);
}

}  // namespace eddy::python
