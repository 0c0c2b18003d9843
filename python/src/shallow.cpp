// eddy.ShallowWater: a heightfield shallow-water grid (Chentanez & Mueller's staggered scheme) stepped or
// run from Python; its cell fields as 2D numpy arrays indexed [j, i] (y, x).
#include <array>
#include <cmath>
#include <memory>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "run.hpp"
#include "views.hpp"

namespace eddy::python {

namespace {

struct PyShallowWater {
    std::unique_ptr<ExecContext> exec;
    ShallowWaterSimulation sim;
    PyShallowWater(const Scene& scene, int threads)
        : exec(std::make_unique<ExecContext>(threads)), sim(make_shallow_water(scene)) {}
    ViewLeases views;
    bool busy = false;  ///< stepping or running (views.hpp: Busy)
    template <class F>
    decltype(auto) visit(F&& f) {
        return std::visit(std::forward<F>(f), sim.solver);
    }
    /// Before a step or run: views still alive keep their buffers (views.hpp).
    void before_change() {
        visit([&](auto& g) {
            views.detach(g.grid().terrain);
            views.detach(g.grid().depth);
        });
    }
    void after_change() {}
};

/// A (ny, nx) view of a cell field, in the grid's precision (float32 or float64); keeps `owner` alive
/// and never reads freed memory (ViewLeases).
template <class Real>
py::array cells(PyShallowWater& s, std::vector<Real>& v, int nx, int ny, const py::object& owner, bool writable) {
    return s.views.make(v, py::dtype::of<Real>(), {py::ssize_t(ny), py::ssize_t(nx)},
                        {py::ssize_t(sizeof(Real)) * nx, py::ssize_t(sizeof(Real))}, owner, writable);
}

/// grid.step(n, until=, fps=): n steps, one slice of the grid run's loop each (step_slice), as the particles'.
py::dict step_grid(PyShallowWater& s, const py::object& n_given, const py::object& until_given, const py::object& fps_given) {
    const std::uint64_t n = count_arg(n_given, "step: n", 0, kMaxCount, "a whole number of steps >= 0");
    SliceLimits one;
    one.max_steps = 1;
    one.until = until_given.is_none() ? 0.0 : positive_arg(until_given, "step: until", kMaxDuration, " of seconds");
    one.fps = fps_given.is_none() ? 0.0 : positive_arg(fps_given, "step: fps", kMaxFps, " of frames per second");
    Busy busy(s.busy);
    s.before_change();
    py::dict last;
    for (std::uint64_t k = 0; k < n; ++k) {
        GridSliceResult r;
        {
            py::gil_scoped_release release;
            r = step_slice(s.sim, *s.exec, one);
        }
        if (r.reached_end) break;
        if (!r.diverged.empty()) throw DivergenceError(r.diverged);
        const ShallowWaterStats& st = r.last;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        last["dt"] = st.dt, last["max_speed"] = st.max_speed, last["max_depth"] = st.max_depth;
        last["clamped"] = st.clamped;
        py::dict passes;  // the step's named passes: wall-clock seconds
        for (int p = 0; p < st.pass_count; ++p) passes[st.passes[p].name] = st.passes[p].seconds;
        last["passes"] = passes;
    }
    return last;
}

}  // namespace

void bind_shallow(py::module_& m) {
    py::class_<PyShallowWater>(m, "ShallowWater",
                               "A shallow-water grid built from a Scene whose method is 'shallow_water'.\n\n"
                               "ShallowWater(scene, threads=0): threads 0 uses every core, else 1 to 4096 (ValueError\n"
                               "otherwise). terrain and depth are views of the grid (no copy;\n"
                               "depth is writable, e.g. to start from your own water; a view shows the grid until its\n"
                               "next step() or run(), then keeps its old values), eta (terrain + depth) and\n"
                               "velocity (cell-centred, from the staggered faces) are computed copies. Arrays are\n"
                               "indexed [j, i]: row j along y, column i along x; cell (i, j) has its centre at\n"
                               "((i + 0.5) dx, (j + 0.5) dx).")
        .def(py::init([](const Scene& scene, const py::int_& threads_given) {
                 const int threads = threads_arg(threads_given, "ShallowWater: threads");
                 if (scene.method != "shallow_water")
                     throw InputError(scene.where() + ": a particle scene: use eddy.Simulation(scene)");
                 return std::make_unique<PyShallowWater>(scene, threads);
             }),
             py::arg("scene"), py::arg("threads") = 0)
        .def_property_readonly("time", [](PyShallowWater& s) { return s.visit([](auto& g) { return g.time(); }); },
                               "simulated time (s)")
        .def_property_readonly("steps", [](PyShallowWater& s) { return s.visit([](auto& g) { return g.steps(); }); },
                               "steps taken")
        .def_property_readonly("shape", [](PyShallowWater& s) {
            return s.visit([](auto& g) { return py::make_tuple(g.grid().ny, g.grid().nx); });
        }, "(ny, nx)")
        .def_property_readonly("dx", [](PyShallowWater& s) { return s.visit([](auto& g) { return double(g.grid().dx); }); },
                               "cell size (m)")
        .def("step", &step_grid, py::arg("n") = 1, py::kw_only(), py::arg("until") = py::none(),
             py::arg("fps") = py::none(),
             "step(n=1, *, until=None, fps=None) -> dict: advances n time steps (the solver's own CFL size) on\n"
             "eddy run's clock: each step lands on every frame time k / fps (the scene's output.fps and duration,\n"
             "or fps) and never passes until (s): stepping to a time gives `eddy run --until`'s state, bit for bit\n"
             "(state_hash). Returns the last step's statistics (dt, max_speed, max_depth, clamped, and passes:\n"
             "{name: seconds} of the step's named passes); {} when no\n"
             "step was taken (n = 0, or the clock at until already). n must be a whole number >= 0, until a\n"
             "number > 0, fps a number in (0, 1e6]: anything else raises ValueError. Raises eddy.DivergenceError\n"
             "when a step diverges (its message names the step and why, as eddy run's); KeyboardInterrupt on Ctrl-C.")
        .def("run", &run_method<PyShallowWater>, RUN_ARGS, kRunDoc)
        .def(
            "add_source",
            [](PyShallowWater& s, std::array<double, 2> lo, std::array<double, 2> hi, double rate, double start,
               const py::object& end, bool ink) {
                check_idle(s.busy);
                // Through the scene's own keys ("sources" / "ink") and their checks, so a bad value gets the
                // scene file's message and checkpoints (which keep the scene) resume with the source.
                Scene scene = s.sim.scene;
                nlohmann::json entry = {{"min", lo}, {"max", hi}, {"rate", rate}, {"start", start}};
                if (!end.is_none()) entry["end"] = end.cast<double>();
                const char* key = ink ? "ink" : "sources";
                nlohmann::json list = scene.shallow_water.contains(key) ? scene.shallow_water[key] : nlohmann::json::array();
                list.push_back(entry);
                scene.shallow_water[key] = list;
                scene.document[key] = list;
                ShallowWaterScene spec = parse_shallow_water(scene);  // InputError (ValueError) naming the key
                s.visit([&](auto& g) { g.set_sources(spec.water_sources, spec.ink_sources); });
                s.sim.scene = std::move(scene);
                s.sim.spec = std::move(spec);
            },
            py::arg("min"), py::arg("max"), py::arg("rate"), py::arg("start") = 0.0, py::arg("end") = py::none(),
            py::arg("ink") = false,
            "add_source(min, max, rate, start=0.0, end=None, ink=False): from the next step, every cell whose\n"
            "centre lies in the rectangle [min, max] ((x, y) in m) gains rate m of water per second (negative:\n"
            "a drain; ink=True: rate of ink concentration per second) while start <= t < end (s). The same\n"
            "entry as a scene's \"sources\" (or \"ink\") list, checked the same way (ValueError naming the key);\n"
            "the run's checkpoint and summary carry it.")
        .def(
            "add_drop",
            [](PyShallowWater& s, double x, double y, double radius, double height, double ink) {
                check_idle(s.busy);
                for (double v : {x, y, radius, height, ink})
                    if (!std::isfinite(v)) throw InputError("add_drop: values must be finite numbers");
                if (!(radius > 0.0) || !(height > 0.0) || ink < 0.0)
                    throw InputError("add_drop: allowed: radius > 0 (m), height > 0 (m), ink >= 0");
                s.before_change();
                s.visit([&](auto& g) { g.add_drop(x, y, radius, height, ink); });
            },
            py::arg("x"), py::arg("y"), py::arg("radius"), py::arg("height"), py::arg("ink") = 0.0,
            "add_drop(x, y, radius, height, ink=0.0): adds a cosine bump of water `height` m high and `radius` m\n"
            "wide at (x, y) (m) now, as the scene's drops and the viewer's clicks do.")
        .def("state_hash", [](PyShallowWater& s) { return state_hash(s.sim); },
             "A 64-bit hash of the grid's state (the checkpoint tests'), the same for any thread count.")
        .def_property_readonly(
            "terrain",
            [](py::object self) {
                auto& s = self.cast<PyShallowWater&>();
                check_idle(s.busy);
                return s.visit([&](auto& g) { auto& G = g.grid(); return cells(s, G.terrain, G.nx, G.ny, self, false); });
            },
            "(ny, nx) terrain height H (m), read-only view")
        .def_property_readonly(
            "depth",
            [](py::object self) {
                auto& s = self.cast<PyShallowWater&>();
                check_idle(s.busy);
                return s.visit([&](auto& g) { auto& G = g.grid(); return cells(s, G.depth, G.nx, G.ny, self, true); });
            },
            "(ny, nx) water depth h (m), writable view")
        .def_property_readonly(
            "eta",
            [](PyShallowWater& s) {
                return s.visit([](auto& g) {
                    const auto& G = g.grid();
                    py::array_t<double> a({G.ny, G.nx});
                    auto r = a.mutable_unchecked<2>();
                    for (int j = 0; j < G.ny; ++j)
                        for (int i = 0; i < G.nx; ++i) r(j, i) = double(G.eta(G.cell(i, j)));
                    return a;
                });
            },
            "(ny, nx) water surface elevation H + h (m), a copy")
        .def_property_readonly(
            "velocity",
            [](PyShallowWater& s) {
                return s.visit([](auto& g) {
                    const auto& G = g.grid();
                    py::array_t<double> a({G.ny, G.nx, 2});
                    auto r = a.mutable_unchecked<3>();
                    for (int j = 0; j < G.ny; ++j)
                        for (int i = 0; i < G.nx; ++i) {
                            r(j, i, 0) = double(G.uc(i, j));
                            r(j, i, 1) = double(G.wc(i, j));
                        }
                    return a;
                });
            },
            "(ny, nx, 2) cell-centred velocity (m/s; x, y), a copy")
        .def_property_readonly("volume", [](PyShallowWater& s) { return s.visit([](auto& g) { return g.grid().volume(); }); },
                               "water volume (m^3)");
}

}  // namespace eddy::python
