// eddy.Simulation: a particle simulation (WCSPH, DFSPH, PBF, Clavet; 2D or 3D) stepped or run from
// Python, its particle fields as numpy arrays that look into the simulation's own memory.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/simulation.hpp"
#include "particle_sim.hpp"
#include "run.hpp"

namespace eddy::python {

namespace {

/// A view of one per-particle array (ViewLeases: no copy, keeps the simulation alive, never reads freed
/// memory). Valid, i.e. the simulation's current values, until it next steps, runs, grows or rebuilds.
template <class T>
py::array view(PySimulation& s, std::vector<T>& data, std::vector<py::ssize_t> shape, std::vector<py::ssize_t> strides,
               const py::object& owner, bool writable) {
    using Scalar = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, std::uint32_t>, T, float>;
    return s.views.make(data, py::dtype::of<Scalar>(), std::move(shape), std::move(strides), owner, writable);
}

template <int D>
py::array vectors(PySimulation& s, std::vector<Vec<D>>& v, const py::object& owner, bool writable) {
    return view(s, v, {py::ssize_t(v.size()), D}, {py::ssize_t(sizeof(Vec<D>)), py::ssize_t(sizeof(float))}, owner,
                writable);
}

template <class T>
py::array scalars(PySimulation& s, std::vector<T>& v, const py::object& owner) {
    return view(s, v, {py::ssize_t(v.size())}, {py::ssize_t(sizeof(T))}, owner, false);
}

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

/// An (k, D) float array from Python, checked: shape and finite values; InputError (ValueError) naming
/// `what` otherwise.
void check_rows(const FloatArray& a, py::ssize_t rows, int D, const std::string& what) {
    if (a.ndim() != 2 || (rows >= 0 && a.shape(0) != rows) || a.shape(1) != D)
        throw InputError(what + ": expected an array of shape (" + (rows >= 0 ? std::to_string(rows) : std::string("k")) +
                         ", " + std::to_string(D) + ")");
    const float* p = a.data();
    for (py::ssize_t i = 0; i < a.shape(0) * D; ++i)
        if (!std::isfinite(p[i]))
            throw InputError(what + ": row " + std::to_string(i / D) + " is not finite (NaN or infinite)");
}

/// The closest a particle added from Python may come to an existing fluid particle, a wall particle or
/// another added particle, in particle radii: kOverlapRadii r (docs/python.md, "Adding particles", has
/// the measurements). Fluid rests on a lattice of spacing 2 r and 2 r from the first layer of wall
/// particles, so a block laid on the scene's lattice next to fluid or walls is kept, with 10% to spare,
/// while a particle put inside the fluid's volume is not: no point of a lattice of spacing 2 r lies
/// farther than sqrt(D) r (1.41 r in 2D, 1.73 r in 3D) from its nearest node. At r (half a diameter)
/// a sixth (2D) to two fifths (3D) of particles put at random into water at rest were kept, enough for
/// WCSPH to diverge at 38 m/s.
inline constexpr float kOverlapRadii = 1.8f;

/// Which particle an added one would overlap.
enum class Overlap : std::uint8_t { none, fluid, wall, added };

/// For each of the k new positions x: whether it lies closer than `gap` to an existing fluid particle, a
/// wall particle, or a new particle before it that is kept (so the kept ones never overlap each other).
/// The existing particles near the new ones' box go into a hash grid of cell `gap`; hash collisions
/// only add candidates, the distances decide. `nearest` gets the distance to what it overlaps.
template <int D>
std::vector<Overlap> find_overlaps(const std::vector<Vec<D>>& fluid, const std::vector<Vec<D>>& walls,
                                   const std::vector<Vec<D>>& x, float gap, std::vector<float>& nearest) {
    std::vector<Overlap> out(x.size(), Overlap::none);
    nearest.assign(x.size(), 0.0f);
    if (x.empty()) return out;
    Aabb<D> box{x[0], x[0]};
    for (const auto& p : x)
        for (int a = 0; a < D; ++a) {
            box.lo[a] = std::min(box.lo[a], p[a]);
            box.hi[a] = std::max(box.hi[a], p[a]);
        }
    box.lo = box.lo - Vec<D>::filled(gap);
    box.hi = box.hi + Vec<D>::filled(gap);
    auto cell = [&](const Vec<D>& p) {
        std::array<std::int64_t, D> c;
        for (int a = 0; a < D; ++a) c[a] = static_cast<std::int64_t>(std::floor((p[a] - box.lo[a]) / gap));
        return c;
    };
    auto key = [](const std::array<std::int64_t, D>& c) {
        std::uint64_t h = 1469598103934665603ULL;
        for (int a = 0; a < D; ++a) h = (h ^ static_cast<std::uint64_t>(c[a])) * 1099511628211ULL;
        return h;
    };
    // Existing particles near the new ones, sorted by the key of their cell.
    struct Entry {
        std::uint64_t key;
        Vec<D> p;
        Overlap what;
    };
    std::vector<Entry> grid;
    for (const auto* set : {&fluid, &walls})
        for (const auto& p : *set)
            if (box.contains(p)) grid.push_back({key(cell(p)), p, set == &fluid ? Overlap::fluid : Overlap::wall});
    const std::size_t existing = grid.size();
    std::sort(grid.begin(), grid.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
    std::unordered_map<std::uint64_t, std::vector<Vec<D>>> kept;
    const float gap2 = gap * gap;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const auto c = cell(x[i]);
        float best = gap2;
        Overlap what = Overlap::none;
        std::array<std::int64_t, D> n;
        for (int off = 0; off < (D == 2 ? 9 : 27); ++off) {
            int o = off;
            for (int a = 0; a < D; ++a, o /= 3) n[a] = c[a] + (o % 3) - 1;
            const std::uint64_t k = key(n);
            auto lo = std::lower_bound(grid.begin(), grid.begin() + existing, k,
                                       [](const Entry& e, std::uint64_t v) { return e.key < v; });
            for (; lo != grid.begin() + existing && lo->key == k; ++lo)
                if (const float d2 = norm2(lo->p - x[i]); d2 < best) {
                    best = d2;
                    what = lo->what;
                }
            if (auto it = kept.find(k); it != kept.end())
                for (const auto& p : it->second)
                    if (const float d2 = norm2(p - x[i]); d2 < best) {
                        best = d2;
                        what = Overlap::added;
                    }
        }
        out[i] = what;
        if (what == Overlap::none) kept[key(c)].push_back(x[i]);
        else nearest[i] = std::sqrt(best);
    }
    return out;
}

/// sim.step(n, until=, fps=): n steps, one slice of eddy run's loop each (step_slice: its clock and its guard),
/// Ctrl-C checked between them.
py::dict step_method(PySimulation& s, const py::object& n_given, const py::object& until_given, const py::object& fps_given) {
    const std::uint64_t n = count_arg(n_given, "step: n", 0, kMaxCount, "a whole number of steps >= 0");
    SliceLimits one;
    one.max_steps = 1;
    one.until = until_given.is_none() ? 0.0 : positive_arg(until_given, "step: until", kMaxDuration, " of seconds");
    one.fps = fps_given.is_none() ? 0.0 : positive_arg(fps_given, "step: fps", kMaxFps, " of frames per second");
    py::dict last;
    Changing changing(s);
    for (std::uint64_t k = 0; k < n; ++k) {
        SliceResult r;
        {
            py::gil_scoped_release release;
            r = step_slice(s.sim, *s.exec, one);
        }
        if (r.reached_end) break;
        if (!r.diverged.empty()) throw DivergenceError(r.diverged);
        const StepStats& st = r.last;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        last["dt"] = st.dt;
        last["max_speed"] = st.max_speed;
        last["mean_density_error"] = st.mean_density_error;
        last["max_density_error"] = st.max_density_error;
        last["iterations"] = st.iterations;
        last["divergence_iterations"] = st.divergence_iterations;
        last["viscosity_iterations"] = st.viscosity_iterations;
        py::dict passes;  // the step's named passes: wall-clock seconds
        for (int p = 0; p < st.pass_count; ++p) passes[st.passes[p].name] = st.passes[p].seconds;
        last["passes"] = passes;
    }
    return last;
}

/// sim.probe: the fluid at points (read_probes; the scene's "probes" when none are given): a dict of
/// "pressure" (k,) and "velocity" (k, D), float32 copies.
py::dict probe(PySimulation& s, const py::object& points) {
    check_idle(s.busy);
    return s.visit([&](auto& p) {
        constexpr int D = std::decay_t<decltype(p)>::kDimension;
        std::vector<Vec<D>> xs = probe_points<D>(p.scene);
        if (!points.is_none()) {
            const auto a = points.cast<FloatArray>();
            check_rows(a, -1, D, "probe: points");
            xs.assign(static_cast<std::size_t>(a.shape(0)), Vec<D>::zero());
            for (std::size_t i = 0; i < xs.size(); ++i)
                for (int d = 0; d < D; ++d) {
                    xs[i][d] = a.data()[i * D + d];
                    if (!std::isfinite(xs[i][d])) throw InputError(fmt::format("probe: points[{}] is not finite", i));
                }
        }
        std::vector<ProbeReading> r;
        {
            py::gil_scoped_release release;
            r = read_probes<D>(p, p.fluid, xs, *s.exec);
        }
        py::array_t<float> pressure(py::ssize_t(r.size())), velocity({py::ssize_t(r.size()), py::ssize_t(D)});
        auto pw = pressure.mutable_unchecked<1>();
        auto vw = velocity.mutable_unchecked<2>();
        for (std::size_t k = 0; k < r.size(); ++k) {
            pw(k) = r[k].pressure;
            for (int d = 0; d < D; ++d) vw(k, d) = r[k].velocity[d];
        }
        py::dict out;
        out["pressure"] = pressure;
        out["velocity"] = velocity;
        return out;
    });
}

/// sim.add_particles: appends fluid particles (ParticleSet::push_back: the next ids) and re-initialises
/// the method on them, as the viewer's "add a block" does. Particles closer than kOverlapRadii r to the
/// fluid, a wall or an earlier added particle are skipped (a warning says how many) or refused
/// (on_overlap="error"). Returns the ids of those added.
py::array_t<std::uint32_t> add_particles(PySimulation& s, const FloatArray& positions, const py::object& velocities,
                                         const std::string& on_overlap) {
    check_idle(s.busy);
    if (on_overlap != "skip" && on_overlap != "error")
        throw InputError("add_particles: on_overlap = '" + text_excerpt(on_overlap, 40) + "': allowed: 'skip', 'error'");
    return s.visit([&](auto& p) {
        constexpr int D = std::decay_t<decltype(p)>::kDimension;
        check_rows(positions, -1, D, "add_particles: positions");
        const py::ssize_t k = positions.shape(0);
        FloatArray v;
        if (!velocities.is_none()) {
            v = velocities.cast<FloatArray>();
            check_rows(v, k, D, "add_particles: velocities");
        }
        std::vector<Vec<D>> xs(static_cast<std::size_t>(k)), vs(static_cast<std::size_t>(k), Vec<D>::zero());
        const float* x = positions.data();
        for (py::ssize_t i = 0; i < k; ++i) {
            for (int a = 0; a < D; ++a) {
                xs[i][a] = x[i * D + a];
                if (!velocities.is_none()) vs[i][a] = v.data()[i * D + a];
            }
            if (!p.bounds.contains(xs[i]))
                throw InputError("add_particles: particle " + std::to_string(i) +
                                 " lies outside the scene's bounds (its walls plus a margin): it would count as escaped");
        }
        const float r = static_cast<float>(p.scene.particle_radius);
        const float gap = kOverlapRadii * r;
        std::vector<float> nearest;
        const std::vector<Overlap> overlap = find_overlaps<D>(p.fluid.position, p.boundary.position, xs, gap, nearest);
        std::size_t skipped = 0, first = xs.size();
        for (std::size_t i = 0; i < xs.size(); ++i)
            if (overlap[i] != Overlap::none) {
                ++skipped;
                first = std::min(first, i);
            }
        if (skipped > 0) {
            const Overlap w = overlap[first];
            const char* what = w == Overlap::fluid ? "a fluid particle" : w == Overlap::wall ? "a wall particle"
                                                                                             : "an earlier particle of these";
            const std::string msg = fmt::format(
                "{} of {} particle(s) lie closer than {:g} m ({:g} r) to the fluid, a wall or each other (particle {} is "
                "{:.3g} m from {})",
                skipped, xs.size(), gap, kOverlapRadii, first, nearest[first], what);
            if (on_overlap == "error")
                throw InputError("add_particles: " + msg + "; nothing was added; allowed: particles at least that far "
                                 "apart (the scene's lattice, spacing 2 r), or on_overlap='skip'");
            const std::string warning = "add_particles: skipped " + msg;
            if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
        }
        const std::size_t added = xs.size() - skipped;
        if (p.fluid.size() + added > s.max_particles)
            throw InputError("add_particles: " + std::to_string(p.fluid.size()) + " + " + std::to_string(added) +
                             " particles exceed max_particles = " + std::to_string(s.max_particles) +
                             " (eddy.Simulation(scene, max_particles=...))");
        py::array_t<std::uint32_t> ids(static_cast<py::ssize_t>(added));
        if (added == 0) return ids;
        Busy busy(s.busy);
        s.before_change();
        auto id = ids.template mutable_unchecked<1>();
        py::ssize_t n = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            if (overlap[i] != Overlap::none) continue;
            id(n++) = p.fluid.next_id;
            p.fluid.push_back(xs[i], vs[i]);
        }
        {
            py::gil_scoped_release release;
            std::visit([&](auto& method) { method.init(p.fluid, p.boundary, *s.exec); }, p.method);
        }
        s.before_change();  // the new particles' speed counts as given from Python
        s.after_change();
        return ids;
    });
}

using SimulationClass = py::class_<PySimulation>;

/// Simulation(scene, threads=0, max_particles=10_000_000).
void def_simulation_init(SimulationClass& cls) {
    cls.def(py::init([](const Scene& scene, const py::int_& threads_given, const py::object& max_given) {
                const int threads = threads_arg(threads_given, "Simulation: threads");
                // As the command line's --max-particles.
                const std::size_t max_particles = count_arg(max_given, "Simulation: max_particles", 1, 4294967295ULL,
                                                            "a whole number from 1 to 4294967295 (particle ids are 32-bit)");
                if (scene.method == "shallow_water")
                    throw InputError(scene.where() + ": a shallow-water scene: use eddy.ShallowWater(scene)");
                return std::make_unique<PySimulation>(scene, threads, max_particles);
            }),
            py::arg("scene"), py::arg("threads") = 0, py::arg("max_particles") = 10'000'000);
}

/// dimension, method, scene, time, steps, threads, settings, max_particles, __len__.
void def_simulation_state(SimulationClass& cls) {
    cls.def_property_readonly("dimension", [](PySimulation& s) { return s.sim.index() == 0 ? 2 : 3; }, "2 or 3");
    // Each read checks busy: add_emitter or add_body (GIL released) may be replacing the scene meanwhile.
    cls.def_property_readonly(
        "method", [](PySimulation& s) { check_idle(s.busy); return s.visit([](auto& p) { return p.scene.method; }); },
        "'wcsph', 'dfsph', 'pbf' or 'clavet'");
    cls.def_property_readonly(
        "scene", [](PySimulation& s) { check_idle(s.busy); return s.visit([](auto& p) { return p.scene; }); },
        "the Scene as running (a copy; its settings follow sim.settings)");
    cls.def_property_readonly(
        "time", [](PySimulation& s) { check_idle(s.busy); return s.visit([](auto& p) { return p.time; }); },
        "simulated time (s)");
    cls.def_property_readonly(
        "steps", [](PySimulation& s) { check_idle(s.busy); return s.visit([](auto& p) { return p.steps; }); },
        "steps taken");
    cls.def_property_readonly("threads", [](PySimulation& s) { return s.exec->threads(); }, "threads of its arena");
    cls.def_property_readonly("settings", &simulation_settings,
                              "The method's settings (eddy.Settings, a mapping): read them, or change them between\n"
                              "steps (sim.settings['viscosity'] = 0.1), checked by the scene files' table.");
    cls.def_property_readonly("max_particles", [](PySimulation& s) { return s.max_particles; },
                              "most particles it may hold (add_particles)");
    cls.def("__len__", [](PySimulation& s) { check_idle(s.busy); return s.visit([](auto& p) { return p.fluid.size(); }); });
}

/// step, run, add_particles.
void def_simulation_stepping(SimulationClass& cls) {
    cls.def("step", &step_method, py::arg("n") = 1, py::kw_only(), py::arg("until") = py::none(),
            py::arg("fps") = py::none(),
            "step(n=1, *, until=None, fps=None) -> dict: advances n time steps (the method's own dt) on eddy\n"
            "run's clock: each step lands on every frame time k / fps (the scene's output.fps and duration, or\n"
            "fps) and never passes until (s): stepping to a time gives `eddy run --until`'s state, bit for bit\n"
            "(state_hash). Returns the last step's statistics (dt, max_speed, mean/max_density_error,\n"
            "iterations, divergence_iterations, viscosity_iterations, and passes: {name: seconds} of the\n"
            "step's named passes); {} when no step was taken (n = 0, or\n"
            "the clock at until already). n must be a whole number >= 0 (an int or a numpy integer), until a\n"
            "number > 0, fps a number in (0, 1e6]: anything else raises ValueError. Raises\n"
            "eddy.DivergenceError when a step diverges (the message names the step and why, as eddy run's),\n"
            "KeyboardInterrupt on Ctrl-C (checked between steps). The GIL is released while stepping. Views\n"
            "taken before stop following the simulation (see positions).");
    cls.def("run", &run_method<PySimulation>, RUN_ARGS, kRunDoc);
    cls.def("add_particles", &add_particles, py::arg("positions"), py::arg("velocities") = py::none(),
            py::arg("on_overlap") = "skip",
            "add_particles(positions, velocities=None, on_overlap='skip') -> ids\n\n"
            "Appends fluid particles: positions and velocities (k, D) in m and m/s (velocities default\n"
            "to 0), inside the scene's bounds, at most max_particles in all. The method is\n"
            "re-initialised on the particles, as the viewer's 'add a block' does (Clavet's springs\n"
            "start afresh; WCSPH settles particles at rest into its hydrostatic start). Put them on\n"
            "the scene's lattice (spacing 2 r). A particle closer than 1.8 r to a fluid particle, a wall\n"
            "particle or an earlier row of these (overlapping particles are pushed apart violently) is\n"
            "skipped with a UserWarning saying how many (on_overlap='skip'), or nothing is added and\n"
            "ValueError says which (on_overlap='error'). Returns the ids (uint32) of the particles\n"
            "added, in the order of their rows. ValueError on a bad shape, a value not finite, a\n"
            "particle outside the bounds or too many.");
}

/// boundary_forces, probe, state_hash.
void def_simulation_readouts(SimulationClass& cls) {
    cls.def(
        "boundary_forces",
        [](PySimulation& s) {
            check_idle(s.busy);
            return s.visit([](auto& p) { return loads_array(p.boundary.load, p.boundary.motions.size()); });
        },
        "boundary_forces() -> (objects, 6) float64 array\n\n"
        "The fluid's load on each boundary object (the scene's `boundaries`, in order) over the last\n"
        "step: fx, fy, fz (N) and tx, ty, tz (N m, the torque about the object's pivot where it is\n"
        "now). In 2D per metre of depth: force N/m, torque N m/m about z, fz = tx = ty = 0. A fresh\n"
        "copy. Rows of NaN before the first step, or for a method that does not gather loads. A scene\n"
        "without boundaries gives shape (0, 6). run() returns each frame's mean ('loads').");
    cls.def("probe", &probe, py::arg("points") = py::none(),
            "probe(points=None) -> dict\n\n"
            "The fluid at points (k, D) in m (default: the scene's \"probes\", as probes.csv reads them):\n"
            "'pressure' (k,) in Pa and 'velocity' (k, D) in m/s, float32, each the Shepard-normalised\n"
            "average over the particles within the kernel support (zeros where none is). ValueError on a\n"
            "bad shape or a value not finite.");
    cls.def(
        "state_hash", [](PySimulation& s) { check_idle(s.busy); return state_hash(s.sim); },
        "A 64-bit hash (FNV-1a) of the particle state: positions, velocities and ids, bit for bit (the\n"
        "checkpoint tests' hash); the same for any thread count.");
}

/// The particle fields as views of the simulation's memory: positions, velocities, density, pressure, ids.
void def_simulation_arrays(SimulationClass& cls) {
    cls.def_property_readonly(
        "positions",
        [](py::object self) {
            auto& s = self.cast<PySimulation&>();
            check_idle(s.busy);
            return s.visit([&](auto& p) { return vectors(s, p.fluid.position, self, false); });
        },
        "(n, D) float32 positions (m): a read-only view of the simulation's memory (no copy).\n\n"
        "A view shows the simulation's current values until its next step(), run(),\n"
        "add_particles() or settings change: a step may reorder the rows (the neighbour search\n"
        "sorts particles along a space-filling curve; follow a particle by its id). A view still\n"
        "alive then keeps the values it had, in memory of its own (copied at that moment), so it\n"
        "never reads freed memory; take a new one after each step. A view keeps the simulation\n"
        "object alive.");
    cls.def_property(
        "velocities",
        [](py::object self) {
            auto& s = self.cast<PySimulation&>();
            check_idle(s.busy);
            return s.visit([&](auto& p) { return vectors(s, p.fluid.velocity, self, true); });
        },
        [](py::object self, const FloatArray& v) {
            auto& s = self.cast<PySimulation&>();
            check_idle(s.busy);
            s.visit([&](auto& p) {
                constexpr int D = std::decay_t<decltype(p)>::kDimension;
                check_rows(v, py::ssize_t(p.fluid.size()), D, "velocities");
                const float* src = v.data();  // in place: views of velocities see the new values
                for (std::size_t i = 0; i < p.fluid.size(); ++i)
                    for (int a = 0; a < D; ++a) p.fluid.velocity[i][a] = src[i * D + a];
            });
        },
        "(n, D) float32 velocities (m/s): a writable view (sim.velocities[:, 0] += 1), or assign a whole\n"
        "array of the same shape (ValueError otherwise). Speed given this way raises the scene's\n"
        "divergence bound by as much (as the viewer's mouse does), so a fast initial field is not\n"
        "mistaken for a blow-up. Valid as positions is.");
    cls.def_property_readonly(
        "density",
        [](py::object self) {
            auto& s = self.cast<PySimulation&>();
            check_idle(s.busy);
            return s.visit([&](auto& p) { return scalars(s, p.fluid.density, self); });
        },
        "(n,) float32 density (kg/m^3; kg/m^2 in 2D), read-only view");
    cls.def_property_readonly(
        "pressure",
        [](py::object self) {
            auto& s = self.cast<PySimulation&>();
            check_idle(s.busy);
            return s.visit([&](auto& p) { return scalars(s, p.fluid.pressure, self); });
        },
        "(n,) float32 pressure (Pa; N/m in 2D), read-only view");
    cls.def_property_readonly(
        "ids",
        [](py::object self) {
            auto& s = self.cast<PySimulation&>();
            check_idle(s.busy);
            return s.visit([&](auto& p) { return scalars(s, p.fluid.id, self); });
        },
        "(n,) uint32 stable particle ids (rows are reordered by the neighbour search; ids are not)");
}

}  // namespace

void bind_simulation(py::module_& m) {
    SimulationClass cls(m, "Simulation",
                        "A particle simulation built from a Scene (WCSPH, DFSPH, PBF or Clavet; 2D or 3D).\n\n"
                        "Simulation(scene, threads=0, max_particles=10_000_000): threads 0 uses every core, else 1\n"
                        "to 4096; max_particles 1 to 4294967295 (ValueError otherwise); "
                        "results are the same bits for any thread count. Particle fields (positions,\n"
                        "velocities, density, pressure, ids) are numpy views of the simulation's memory:\n"
                        "no copy, current until the next step(), run(), add_particles() or settings change (a\n"
                        "step may reorder the particles: use ids to follow one); a view keeps the simulation\n"
                        "alive and keeps its old values after that, never reading freed memory.\n"
                        "sim.settings is the method's settings table, changeable between steps.");
    def_simulation_init(cls);
    def_simulation_state(cls);
    def_simulation_stepping(cls);
    def_simulation_readouts(cls);
    def_simulation_arrays(cls);
    cls.def("__repr__", [](PySimulation& s) {
        if (s.busy) return std::string("<eddy.Simulation (busy)>");
        return s.visit([](auto& p) {
            return "<eddy.Simulation " + p.scene.name + ": " + p.scene.method + ", " +
                   std::to_string(p.fluid.size()) + " particles, t = " + std::to_string(p.time) + " s>";
        });
    });
}

}  // namespace eddy::python
