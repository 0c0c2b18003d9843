// The module `eddy._eddy`; python/eddy/__init__.py re-exports it. Errors: eddy's InputError (bad input:
// the same one line the command line prints) becomes ValueError.
#include "bindings.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "particle_sim.hpp"
#include "run.hpp"

namespace eddy::python {

py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

namespace {

// json.dumps' default= for what JSON has no type of: numpy scalars and arrays (np.float32(0.1),
// np.array([0, 0])) as their Python values, float32 as the decimal it prints as (0.1, not the double
// nearest to float32(0.1)); paths as text.
py::object json_value(const py::object& v) {
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
}

// Where json.dumps stopped, which names no key: the path ("center[0]", "settings.cfl") of the first value
// in `o`, in its order, that is a float not finite or has no JSON value (after json_value), and what is
// wrong with it; an empty `what` when there is none within 64 levels (a circular reference).
struct NotJson {
    std::string path, what;
};
NotJson first_not_json(const py::handle& o, const std::string& path, int depth) {
    if (depth > 64 || o.is_none() || PyBool_Check(o.ptr()) || PyLong_Check(o.ptr()) || PyUnicode_Check(o.ptr())) return {};
    if (PyFloat_Check(o.ptr()))
        return std::isfinite(PyFloat_AsDouble(o.ptr())) ? NotJson{}
                                                        : NotJson{path, "not finite (NaN or infinite); allowed: a finite number"};
    if (PyDict_Check(o.ptr())) {
        for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(o)) {
            const std::string key = py::str(k);
            if (NotJson n = first_not_json(v, path.empty() ? key : path + "." + key, depth + 1); !n.what.empty()) return n;
        }
        return {};
    }
    if (PyList_Check(o.ptr()) || PyTuple_Check(o.ptr())) {
        std::size_t i = 0;
        for (const auto& v : o)
            if (NotJson n = first_not_json(v, path + "[" + std::to_string(i++) + "]", depth + 1); !n.what.empty()) return n;
        return {};
    }
    try {
        return first_not_json(json_value(py::reinterpret_borrow<py::object>(o)), path, depth + 1);
    } catch (const py::type_error& e) {
        return {path, std::string(e.what()) + "; allowed: a number, string, true/false, None, list or dict"};
    } catch (const std::exception&) {  // json.dumps' own error stands
        return {};
    }
}

}  // namespace

nlohmann::json to_json(const py::handle& o, const std::string& path) {
    std::string text;
    try {
        text = py::str(py::module_::import("json").attr("dumps")(o, py::arg("allow_nan") = false,
                                                                 py::arg("default") = py::cpp_function(&json_value)))
                   .cast<std::string>();
    } catch (const py::error_already_set&) {
        // "Out of range float values are not JSON compliant", "not a JSON value: object": say where.
        const NotJson n = first_not_json(o, path, 0);
        if (n.what.empty() || n.path.empty()) throw;
        throw InputError(n.path + ": " + n.what);
    }
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
