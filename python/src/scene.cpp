// eddy.scenes(), eddy.load_scene() and eddy.Scene: the same loader, --set overrides and one-line errors
// as the command line; the method's settings are checked at once (keys, with a "did you mean", and
// values), not when the simulation is built.
#include <filesystem>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "scene/method_switch.hpp"

namespace eddy::python {

namespace {

/// The scene's "settings" against its method's table (detail::check_method_settings), with the name
/// make_simulation gives them, so the message is the one Simulation() would raise later.
Scene checked(Scene s) {
    detail::check_method_settings(s.method, s.settings, s.where() + ": settings");
    return s;
}

Scene load(const py::object& source, const std::vector<std::string>& overrides) {
    if (py::isinstance<py::dict>(source)) {
        const nlohmann::json j = to_json(source);
        const std::string where = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "scene";
        return checked(parse_scene(j, where, overrides));
    }
    if (py::isinstance<py::str>(source) || py::hasattr(source, "__fspath__")) {
        const std::string text = py::str(py::module_::import("os").attr("fspath")(source));
        return checked(load_scene(resolve_scene(text), overrides));
    }
    throw py::type_error("load_scene: expected a scene file path, a bundled scene name or a dict");
}

}  // namespace

void bind_scene(py::module_& m) {
    m.def(
        "scenes",
        [] {
            py::dict d;
            for (const auto& e : list_bundled_scenes()) d[py::str(e.name)] = e.description;
            return d;
        },
        "The bundled scenes: {name: description}, sorted by name (as `eddy scenes`).");

    py::class_<Scene>(m, "Scene",
                      "A checked scene: the particle or shallow-water setup a Simulation is built from.\n\n"
                      "Made by eddy.load_scene(); `document` is the scene's JSON (after overrides) as a dict.\n"
                      "Change it with scene.set('key.path=value', ...) (the command line's --set), which returns\n"
                      "a new, checked Scene.")
        .def_property_readonly("name", [](const Scene& s) { return s.name; }, "the scene's name")
        .def_property_readonly("description", [](const Scene& s) { return s.description; }, "one line, as `eddy scenes` shows")
        .def_property_readonly("method", [](const Scene& s) { return s.method; },
                               "'wcsph', 'dfsph', 'pbf', 'clavet' or 'shallow_water'")
        .def_property_readonly("dimension", [](const Scene& s) { return s.dimension; }, "2 or 3")
        .def_property_readonly("particle_radius", [](const Scene& s) { return s.particle_radius; }, "r (m)")
        .def_property_readonly("duration", [](const Scene& s) { return s.duration; }, "simulated time (s)")
        .def_property_readonly("source", [](const Scene& s) { return s.source; }, "the file it came from, if any")
        .def_property_readonly("settings", [](const Scene& s) { return to_python(s.settings); },
                               "the method's settings as given (a copy; change them with set())")
        .def_property_readonly("document", [](const Scene& s) { return to_python(s.document); },
                               "the whole scene as JSON, after overrides (a copy)")
        .def_property_readonly("warnings", [](const Scene& s) { return s.warnings; },
                               "things worth knowing that are not errors, one line each (the CLI prints them)")
        .def(
            "set",
            [](const Scene& s, py::args overrides) {
                std::vector<std::string> o;
                for (const auto& a : overrides) o.push_back(py::str(a));
                const std::string where = s.source.empty() ? s.name : s.source.string();
                return checked(parse_scene(s.document, where, o));
            },
            "set('settings.viscosity=0.1', 'method=dfsph', ...) -> Scene: the scene with these overrides\n"
            "(the command line's --set), checked, its settings included; ValueError with the command line's\n"
            "message if not (an unknown key with the closest one: \"did you mean 'viscosity'?\").")
        .def("__repr__", [](const Scene& s) {
            return "<eddy.Scene " + s.name + ": " + s.method + ", " + std::to_string(s.dimension) + "D>";
        });

    m.def("load_scene", &load, py::arg("source"), py::arg("overrides") = std::vector<std::string>{},
          "load_scene(source, overrides=[]) -> Scene\n\n"
          "source: a scene file (.json), the name of a bundled scene (see scenes()), or a dict with the\n"
          "file's keys (docs/scenes.md). overrides: 'key.path=value' strings, as the command line's --set.\n"
          "Raises ValueError with the command line's one-line message on bad input; the method's settings\n"
          "are checked here too (an unknown key with the closest one: \"did you mean 'viscosity'?\"; a value\n"
          "of the wrong type or out of range), not first when the Simulation is built.");
}

}  // namespace eddy::python
