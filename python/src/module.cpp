// The module `eddy._eddy`; python/eddy/__init__.py re-exports it. Errors: eddy's InputError (bad input:
// the same one line the command line prints) becomes ValueError.
#include "bindings.hpp"

#include <algorithm>
#include <string>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "particle_sim.hpp"
#include "run.hpp"

namespace eddy::python {

py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

nlohmann::json to_json(const py::handle& o) {
    // numpy scalars and arrays (np.float32(0.1), np.array([0, 0])) as their Python values; float32
    // as the decimal it prints as (0.1, not the double nearest to float32(0.1)).
    const py::object as_python = py::cpp_function([](const py::object& v) -> py::object {
        if (py::hasattr(v, "dtype") && py::hasattr(v, "tolist")) {
            const py::object dt = v.attr("dtype");
            if (py::str(dt.attr("kind")).cast<std::string>() == "f" && dt.attr("itemsize").cast<int>() < 8) {
                if (v.attr("ndim").cast<int>() == 0) return py::module_::import("builtins").attr("float")(py::str(v));
                return py::list(v);  // elements (float32 scalars or rows) come back through this function
            }
        }
        if (py::hasattr(v, "tolist")) return v.attr("tolist")();
        if (py::hasattr(v, "__fspath__")) return py::module_::import("os").attr("fspath")(v);
        throw py::type_error("not a JSON value: " + std::string(py::str(py::type::of(v).attr("__name__"))));
    });
    const std::string text =
        py::str(py::module_::import("json").attr("dumps")(o, py::arg("allow_nan") = false, py::arg("default") = as_python));
    return parse_json_text(text, "the dict");  // bounded nesting, as scene files
}

/// The command line's one line: newlines folded, at most 300 characters (apps/eddy/main.cpp).
std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return text_excerpt(s, 300);
}

}  // namespace eddy::python

PYBIND11_MODULE(_eddy, m) {
    using namespace eddy::python;
    m.doc() = "eddy: particle fluids (WCSPH, DFSPH, PBF, Clavet), shallow water and fluid surfaces, from Python.";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const eddy::InputError& e) {
            PyErr_SetString(PyExc_ValueError, one_line(e.what()).c_str());
        } catch (const nlohmann::json::exception& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        }
    });
    m.attr("__version__") = EDDY_PY_VERSION;
    py::register_exception<DivergenceError>(m, "DivergenceError", PyExc_RuntimeError);
    m.attr("DivergenceError").attr("__doc__") =
        "A step or run diverged (a value not finite, a speed no motion of the scene explains, a time step\n"
        "below dt_min, particles beyond the scene's bounds); the message says which, as the command line.";
    bind_scene(m);
    bind_settings(m);
    bind_simulation(m);
    bind_bodies(m);
    bind_emitters(m);
    bind_shallow(m);
    bind_surface(m);
    bind_whitewater(m);
}
