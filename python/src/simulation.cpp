// eddy.Simulation: a particle simulation (WCSPH, DFSPH, PBF, Clavet; 2D or 3D) stepped or run from
// Python, its particle fields as numpy arrays that look into the simulation's own memory.
#include <atomic>
#include <csignal>
#include <memory>
#include <optional>

#include "bindings.hpp"
#include "run.hpp"
#include "eddy/error.hpp"
#include "eddy/simulation.hpp"

namespace eddy::python {

namespace {

/// The simulation and the thread arena it runs in, owned together.
struct PySimulation {
    std::unique_ptr<ExecContext> exec;
    Simulation sim;
    PySimulation(const Scene& scene, int threads, std::size_t max_particles)
        : exec(std::make_unique<ExecContext>(threads)), sim(make_simulation(scene, max_particles, *exec)) {}
    template <class F>
    decltype(auto) visit(F&& f) {
        return std::visit(std::forward<F>(f), sim);
    }
};

/// A view of one per-particle array: its memory stays the simulation's (no copy), and the array keeps
/// the Python Simulation alive (`owner` is its base), so a view that outlives the variable never reads
/// freed memory. Valid until the simulation next steps, reorders or grows.
template <class T>
py::array view(std::vector<T>& data, std::vector<py::ssize_t> shape, std::vector<py::ssize_t> strides,
               const py::object& owner, bool writable) {
    using Scalar = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, std::uint32_t>, T, float>;
    py::array a(py::dtype::of<Scalar>(), std::move(shape), std::move(strides),
                reinterpret_cast<const Scalar*>(data.data()), owner);
    if (!writable) a.attr("setflags")(py::arg("write") = false);
    return a;
}

template <int D>
py::array vectors(std::vector<Vec<D>>& v, const py::object& owner, bool writable) {
    return view(v, {py::ssize_t(v.size()), D}, {py::ssize_t(sizeof(Vec<D>)), py::ssize_t(sizeof(float))}, owner, writable);
}

template <class T>
py::array scalars(std::vector<T>& v, const py::object& owner) {
    return view(v, {py::ssize_t(v.size())}, {py::ssize_t(sizeof(T))}, owner, false);
}

}  // namespace

void bind_simulation(py::module_& m) {
    py::class_<PySimulation>(m, "Simulation",
                             "A particle simulation built from a Scene (WCSPH, DFSPH, PBF or Clavet; 2D or 3D).\n\n"
                             "Simulation(scene, threads=0, max_particles=10_000_000): threads 0 uses every core;\n"
                             "results are the same bits for any thread count. Particle fields (positions,\n"
                             "velocities, density, pressure, ids) are numpy views of the simulation's memory:\n"
                             "no copy, valid until the next step() or run() (a step may reorder the particles:\n"
                             "use ids to follow one). A view keeps the simulation alive.")
        .def(py::init([](const Scene& scene, int threads, std::size_t max_particles) {
                 if (scene.method == "shallow_water")
                     throw InputError(scene.where() + ": a shallow-water scene: use eddy.ShallowWater(scene)");
                 return std::make_unique<PySimulation>(scene, threads, max_particles);
             }),
             py::arg("scene"), py::arg("threads") = 0, py::arg("max_particles") = std::size_t(10'000'000))
        .def_property_readonly("dimension", [](PySimulation& s) { return s.sim.index() == 0 ? 2 : 3; })
        .def_property_readonly("method", [](PySimulation& s) { return s.visit([](auto& p) { return p.scene.method; }); })
        .def_property_readonly("scene", [](PySimulation& s) { return s.visit([](auto& p) { return p.scene; }); })
        .def_property_readonly("time", [](PySimulation& s) { return s.visit([](auto& p) { return p.time; }); },
                               "simulated time (s)")
        .def_property_readonly("steps", [](PySimulation& s) { return s.visit([](auto& p) { return p.steps; }); })
        .def_property_readonly("threads", [](PySimulation& s) { return s.exec->threads(); })
        .def("__len__", [](PySimulation& s) { return s.visit([](auto& p) { return p.fluid.size(); }); })
        .def(
            "step",
            [](PySimulation& s, int n) {
                py::dict last;
                for (int k = 0; k < n; ++k) {
                    StepStats st;
                    std::string diverged;
                    {
                        py::gil_scoped_release release;
                        st = step(s.sim, *s.exec);
                        const float dt_min = s.visit([](auto& p) {
                            return std::visit([](const auto& method) { return method.min_dt(); }, p.method);
                        });
                        diverged = step_divergence(st, dt_min);
                    }
                    if (!diverged.empty()) throw DivergenceError(diverged);
                    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
                    if (k + 1 == n) {
                        last["dt"] = st.dt;
                        last["max_speed"] = st.max_speed;
                        last["mean_density_error"] = st.mean_density_error;
                        last["max_density_error"] = st.max_density_error;
                        last["iterations"] = st.iterations;
                    }
                }
                return last;
            },
            py::arg("n") = 1,
            "step(n=1) -> dict: advances n time steps (the method's own dt); returns the last step's\n"
            "statistics (dt, max_speed, mean/max_density_error, iterations). Raises eddy.DivergenceError\n"
            "when a step diverges (the message names the step and why), KeyboardInterrupt on Ctrl-C.")
        .def("run", &run_method<PySimulation>, RUN_ARGS, kRunDoc)
        .def(
            "state_hash", [](PySimulation& s) { return state_hash(s.sim); },
            "A 64-bit hash of the complete state (the checkpoint tests' and summary.json's).")
        .def_property_readonly(
            "positions",
            [](py::object self) {
                auto& s = self.cast<PySimulation&>();
                return s.visit([&](auto& p) { return vectors(p.fluid.position, self, false); });
            },
            "(n, D) float32 positions (m), read-only view")
        .def_property(
            "velocities",
            [](py::object self) {
                auto& s = self.cast<PySimulation&>();
                return s.visit([&](auto& p) { return vectors(p.fluid.velocity, self, true); });
            },
            [](py::object self, py::array_t<float, py::array::c_style | py::array::forcecast> v) {
                auto& s = self.cast<PySimulation&>();
                s.visit([&](auto& p) {
                    constexpr int D = std::decay_t<decltype(p)>::kDimension;
                    if (v.ndim() != 2 || v.shape(0) != py::ssize_t(p.fluid.size()) || v.shape(1) != D)
                        throw InputError("velocities: expected an array of shape (" + std::to_string(p.fluid.size()) +
                                         ", " + std::to_string(D) + ")");
                    const float* src = v.data();
                    for (std::size_t i = 0; i < p.fluid.size(); ++i)
                        for (int a = 0; a < D; ++a) p.fluid.velocity[i][a] = src[i * D + a];
                });
            },
            "(n, D) float32 velocities (m/s): a writable view (sim.velocities[:, 0] += 1), or assign a whole\n"
            "array of the same shape")
        .def_property_readonly(
            "density",
            [](py::object self) {
                auto& s = self.cast<PySimulation&>();
                return s.visit([&](auto& p) { return scalars(p.fluid.density, self); });
            },
            "(n,) float32 density (kg/m^3; kg/m^2 in 2D), read-only view")
        .def_property_readonly(
            "pressure",
            [](py::object self) {
                auto& s = self.cast<PySimulation&>();
                return s.visit([&](auto& p) { return scalars(p.fluid.pressure, self); });
            },
            "(n,) float32 pressure (Pa; N/m in 2D), read-only view")
        .def_property_readonly(
            "ids",
            [](py::object self) {
                auto& s = self.cast<PySimulation&>();
                return s.visit([&](auto& p) { return scalars(p.fluid.id, self); });
            },
            "(n,) uint32 stable particle ids (rows are reordered by the neighbour search; ids are not)")
        .def("__repr__", [](PySimulation& s) {
            return s.visit([](auto& p) {
                return "<eddy.Simulation " + p.scene.name + ": " + p.scene.method + ", " +
                       std::to_string(p.fluid.size()) + " particles, t = " + std::to_string(p.time) + " s>";
            });
        });
}

}  // namespace eddy::python
