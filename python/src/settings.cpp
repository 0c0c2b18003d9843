// sim.settings: the running method's settings as a mapping, read and changed through the method's own
// settings table (the one scene files, --set and `eddy run --help` use). A change rebuilds the method
// on the running particles (rebuild_method(), as the viewer's live settings), checked first: a bad value
// raises ValueError with the command line's message and leaves the simulation as it was.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/settings.hpp"
#include "particle_sim.hpp"
#include "scene/method_switch.hpp"

namespace eddy::python {

namespace {

template <int D> auto table_of(const WcsphSolver<D>&) { return wcsph_fields(); }
template <int D> auto table_of(const DfsphSolver<D>&) { return dfsph_fields(); }
template <int D> auto table_of(const PbfSolver<D>&) { return pbf_fields(); }
template <int D> auto table_of(const ClavetSolver<D>&) { return clavet_fields(); }

/// The Python object behind sim.settings: a handle on the Python Simulation (kept alive).
struct PySettings {
    py::object owner;
    PySimulation& sim() const { return owner.cast<PySimulation&>(); }

    /// Every key of the method's table with its value in the running method (defaults included).
    nlohmann::json current() const {
        check_idle(sim().busy);
        nlohmann::json j = eddy::method_settings(sim().sim);
        // Settings are floats: show 0.1, not the double nearest float(0.1) (0.10000000149011612).
        for (auto& v : j)
            if (v.is_number_float()) v = std::strtod(fmt::format("{}", static_cast<float>(v.get<double>())).c_str(), nullptr);
        return j;
    }

    /// The table's help: "key (unit, range; default X): doc", one line per key.
    std::string help() const {
        return sim().visit([](auto& p) {
            return std::visit(
                [](const auto& m) {
                    using S = std::decay_t<decltype(m.settings())>;
                    return describe(table_of(m), S{});
                },
                p.method);
        });
    }

    /// Applies `changes` (a JSON object) at once: one rebuild, checked before anything changes.
    void update(const nlohmann::json& changes) {
        PySimulation& s = sim();
        Busy busy(s.busy);
        Scene scene = s.visit([](auto& p) { return p.scene; });
        if (!scene.settings.is_object()) scene.settings = nlohmann::json::object();
        for (auto it = changes.begin(); it != changes.end(); ++it) scene.settings[it.key()] = it.value();
        // As load_scene checks them: an unknown key gets the closest one ("did you mean").
        detail::check_method_settings(scene.method, scene.settings, scene.where() + ": settings");
        s.before_change();  // init() may settle particles (WCSPH's hydrostatic start): views keep theirs
        {
            py::gil_scoped_release release;
            rebuild_method(s.sim, scene, *s.exec);  // InputError (ValueError) before anything changes
        }
        // Checkpoints and summary.json keep the scene's document: the run goes on with these settings.
        s.visit([&](auto& p) { p.scene.document["settings"] = p.scene.settings; });
        s.after_change();
    }
};

}  // namespace

void bind_settings(py::module_& m) {
    py::class_<PySettings>(m, "Settings",
                           "sim.settings: the running method's settings (the keys of a scene's \"settings\"\n"
                           "object, every one with its current value), a mapping:\n\n"
                           "    sim.settings['viscosity']          # read\n"
                           "    sim.settings['viscosity'] = 0.1    # change: the method is rebuilt on the particles\n"
                           "    sim.settings.update(cfl=0.3, viscosity=0.1)   # several at once, one rebuild\n"
                           "    print(sim.settings.help())         # keys, units, ranges, defaults\n\n"
                           "Values are checked by the same table as scene files and --set: a bad key or value\n"
                           "raises ValueError with the command line's one-line message and changes nothing.\n"
                           "A change takes effect from the next step; the particles, walls and clock are kept\n"
                           "(Clavet's springs start afresh). The Scene the simulation reports, its checkpoints\n"
                           "and summary.json carry the new settings.")
        .def("__getitem__",
             [](const PySettings& s, const std::string& key) -> py::object {
                 const nlohmann::json j = s.current();
                 if (!j.contains(key)) throw py::key_error(key);
                 return to_python(j[key]);
             })
        .def("__setitem__",
             [](PySettings& s, const std::string& key, const py::object& value) {
                 nlohmann::json changes = nlohmann::json::object();
                 changes[key] = to_json(value, key);
                 s.update(changes);
             })
        .def(
            "update",
            [](PySettings& s, const py::object& other, const py::kwargs& kwargs) {
                nlohmann::json changes = nlohmann::json::object();
                if (!other.is_none()) {
                    const nlohmann::json o = to_json(py::dict(other));
                    for (auto it = o.begin(); it != o.end(); ++it) changes[it.key()] = it.value();
                }
                const nlohmann::json k = to_json(kwargs);
                for (auto it = k.begin(); it != k.end(); ++it) changes[it.key()] = it.value();
                if (!changes.empty()) s.update(changes);
            },
            py::arg("other") = py::none(),
            "update(other=None, **kwargs): changes several settings at once (one rebuild, all checked first).")
        .def("__contains__", [](const PySettings& s, const std::string& key) { return s.current().contains(key); })
        .def("__len__", [](const PySettings& s) { return s.current().size(); })
        .def("__iter__", [](const PySettings& s) { return py::iter(to_python(s.current())); })
        .def("keys", [](const PySettings& s) { return to_python(s.current()).attr("keys")(); },
             "The keys of the method's settings table.")
        .def("items", [](const PySettings& s) { return to_python(s.current()).attr("items")(); },
             "(key, value) pairs of a copy of the current settings.")
        .def("values", [](const PySettings& s) { return to_python(s.current()).attr("values")(); },
             "The values of a copy of the current settings.")
        .def(
            "get",
            [](const PySettings& s, const std::string& key, const py::object& fallback) -> py::object {
                const nlohmann::json j = s.current();
                return j.contains(key) ? to_python(j[key]) : fallback;
            },
            py::arg("key"), py::arg("default") = py::none(), "get(key, default=None): the value, or default.")
        .def("to_dict", [](const PySettings& s) { return to_python(s.current()); },
             "The settings as a plain dict (a copy).")
        .def("help", &PySettings::help, "One line per key: unit, allowed range, default, meaning.")
        .def("__repr__", [](const PySettings& s) { return "eddy.Settings(" + s.current().dump() + ")"; });
}

/// sim.settings, bound on eddy.Simulation by bind_simulation.
py::object simulation_settings(py::object sim) { return py::cast(PySettings{std::move(sim)}); }

}  // namespace eddy::python
