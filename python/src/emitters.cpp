// eddy.Simulation's emitters and outflow (issue 31; eddy/emitters.hpp): sim.emitters (each nozzle and
// what it has put in), sim.removed (what the outflow took), sim.add_emitter and sim.stop_emitter.
// Bound onto the Simulation class that simulation.cpp registers.
#include <cstdint>
#include <string>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/simulation.hpp"
#include "particle_sim.hpp"

namespace eddy::python {

namespace {

py::list emitters_list(PySimulation& s) {
    check_idle(s.busy);
    return s.visit([&](auto& p) {
        constexpr int D = std::decay_t<decltype(p)>::kDimension;
        py::list out;
        for (std::size_t k = 0; k < p.flow.emitters.size(); ++k) {
            const auto& e = p.flow.emitters[k];
            const EmitterSpec& spec = p.scene.emitters[k];
            py::dict d;
            py::list c, dir;
            for (int a = 0; a < D; ++a) {
                c.append(spec.center[a]);
                dir.append(spec.direction[a]);
            }
            d["center"] = c;
            d["direction"] = dir;
            d["speed"] = spec.speed;
            d[D == 2 ? "width" : "radius"] = D == 2 ? spec.width : spec.radius;
            d["start"] = spec.start;
            d["stop"] = spec.stop;
            d["rate"] = e.rate;
            d["volume_rate"] = e.area * spec.speed;
            d["columns"] = e.columns.size();
            d["emitted"] = p.flow.counts.emitted[k];
            d["blocked"] = p.flow.counts.due[k] - p.flow.counts.emitted[k];
            d["mass_emitted"] = double(p.flow.counts.emitted[k]) * p.flow.particle_mass;
            out.append(d);
        }
        return out;
    });
}

py::dict removed_dict(PySimulation& s) {
    check_idle(s.busy);
    return s.visit([&](auto& p) {
        py::dict d;
        d["outflow"] = p.flow.counts.removed_outflow;
        d["escaped"] = p.flow.counts.removed_escaped;
        d["drained"] = p.flow.counts.drained_total();
        py::dict sinks;  // per sink, by name
        for (std::size_t k = 0; k < p.flow.sinks.size(); ++k) sinks[py::str(p.flow.sinks[k].name)] = p.flow.counts.drained[k];
        d["sinks"] = sinks;
        d["total"] = p.flow.counts.removed_outflow + p.flow.counts.removed_escaped + p.flow.counts.drained_total();
        return d;
    });
}

std::size_t add_emitter_py(PySimulation& s, const py::object& emitter) {
    const nlohmann::json j = to_json(emitter);
    Changing changing(s);
    py::gil_scoped_release release;
    return add_emitter(s.sim, j, *s.exec);
}

void stop_emitter_py(PySimulation& s, const py::object& k_given) {
    check_idle(s.busy);
    const std::size_t n = s.visit([](auto& p) { return p.scene.emitters.size(); });
    const std::string allowed = n == 0 ? std::string("none (the simulation has no emitters; add_emitter adds one)")
                                       : "0 to " + std::to_string(n - 1) + " (the simulation has " + std::to_string(n) +
                                             " emitter(s))";
    const std::uint64_t k = count_arg(k_given, "stop_emitter: k", 0, kMaxCount, allowed);  // -1, 1.5, '0', None, True
    Changing changing(s);
    stop_emitter(s.sim, std::size_t(k), *s.exec);
}

}  // namespace

void bind_emitters(py::module_& m) {
    auto cls = py::reinterpret_borrow<py::class_<PySimulation>>(m.attr("Simulation"));
    cls.def_property_readonly(
           "emitters", &emitters_list,
           "The emitters (the scene's 'emitters', then those add_emitter() added), a list of dicts:\n"
           "center, direction, speed (m/s), width (2D, m) or radius (3D, m), start, stop (s), rate\n"
           "(particles/s), volume_rate (m^2/s in 2D, m^3/s in 3D), columns (lattice points across the\n"
           "nozzle), emitted, blocked (due but not put in: fluid at the nozzle) and mass_emitted (kg; 2D kg\n"
           "per metre; 0 for Clavet). docs/scenes.md, 'Emitters and outflow'.")
        .def_property_readonly("removed", &removed_dict,
                               "Particles removed since the start, a dict: outflow (outside the scene's 'domain'),\n"
                               "escaped (beyond every container), drained (by the scene's 'sinks'), sinks (each sink's\n"
                               "count by name) and total.")
        .def("add_emitter", &add_emitter_py, py::arg("emitter"),
             "add_emitter(emitter: dict) -> int\n\n"
             "Adds an emitter to the running simulation: one entry of a scene's 'emitters' list\n"
             "({'center': [...], 'direction': [...], 'speed': 1.0, 'width': 0.05} in 2D, 'radius' in 3D;\n"
             "or 'flow_rate' instead of 'speed'). It starts now (or at a later 'start') and runs until\n"
             "its 'stop' or stop_emitter(). Checkpoints hold it. Returns its index. ValueError (one line\n"
             "naming emitters[i]) on a bad key or value or a nozzle in a wall; the simulation is then\n"
             "unchanged.")
        .def("stop_emitter", &stop_emitter_py, py::arg("k"),
             "stop_emitter(k)\n\nStops emitter k from now on (one stopped already keeps its stop). ValueError for an\n"
             "emitter that does not exist or a k that is no whole number (an int or a numpy integer).");
}

}  // namespace eddy::python
