// eddy.Simulation's C++ side, shared by simulation.cpp (stepping, views, add_particles) and settings.cpp
// (sim.settings): the simulation, the thread arena it runs in, its numpy views' leases, and the speed
// put into it from Python.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>

#include "bindings.hpp"
#include "eddy/simulation.hpp"
#include "views.hpp"

namespace eddy::python {

struct PySimulation {
    std::unique_ptr<ExecContext> exec;
    Simulation sim;
    std::size_t max_particles;
    ViewLeases views;
    bool busy = false;  ///< stepping, running or changing (views.hpp: Busy)
    /// Fastest particle (m/s) when Python last handed control back: a faster particle before the next
    /// step was made so from Python (velocities written, particles added), and the scene's speed bound
    /// grows by the difference, as it does for the viewer's mouse (SpeedBound::added).
    float last_max_speed = 0.0f;

    PySimulation(const Scene& scene, int threads, std::size_t max_particles_)
        : exec(std::make_unique<ExecContext>(threads)),
          sim(make_simulation(scene, max_particles_, *exec)),
          max_particles(max_particles_) {
        last_max_speed = max_speed();
    }

    template <class F>
    decltype(auto) visit(F&& f) {
        return std::visit(std::forward<F>(f), sim);
    }

    float max_speed() {
        return visit([&](auto& p) {
            return parallel_reduce_blocks(
                *exec, p.fluid.size(), 0.0f,
                [&](std::size_t b, std::size_t e) {
                    float m = 0.0f;
                    for (std::size_t i = b; i < e; ++i) m = std::max(m, norm(p.fluid.velocity[i]));
                    return m;
                },
                [](float a, float b) { return std::max(a, b); });
        });
    }

    /// Before the simulation changes its particles (a step, a run, particles added, the method
    /// rebuilt): views still alive keep their buffers (ViewLeases), and speed given from Python is
    /// counted. GIL held.
    void before_change() {
        visit([&](auto& p) {
            views.detach(p.fluid.position);
            views.detach(p.fluid.velocity);
            views.detach(p.fluid.density);
            views.detach(p.fluid.pressure);
            views.detach(p.fluid.id);
            views.detach(p.bodies.state);  // sim.bodies (bodies.cpp)
        });
        const float v = max_speed();
        if (std::isfinite(v) && v > last_max_speed) {
            visit([&](auto& p) { p.speed_bound.added += v - last_max_speed; });
            last_max_speed = v;
        }
    }
    /// After it changed them.
    void after_change() { last_max_speed = max_speed(); }
};

/// A change of the simulation from Python as one guard: busy while it lasts (Busy: views and other
/// calls refused), before_change() at the start, after_change() at the end, also when it throws.
class Changing {
public:
    explicit Changing(PySimulation& s) : m_busy(s.busy), m_s(s) { s.before_change(); }
    ~Changing() { m_s.after_change(); }
    Changing(const Changing&) = delete;
    Changing& operator=(const Changing&) = delete;

private:
    Busy m_busy;
    PySimulation& m_s;
};

void bind_settings(py::module_& m);
/// The eddy.Settings mapping of a Python eddy.Simulation (settings.cpp).
py::object simulation_settings(py::object sim);

}  // namespace eddy::python
