// The module `eddy._eddy`; python/eddy/__init__.py re-exports it. Errors: eddy's InputError (bad input:
// the same one line the command line prints) becomes ValueError.
#include "bindings.hpp"

#include "eddy/error.hpp"
#include "run.hpp"

namespace eddy::python {

py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

nlohmann::json to_json(const py::handle& o) {
    const std::string text = py::str(py::module_::import("json").attr("dumps")(o, py::arg("allow_nan") = false));
    return nlohmann::json::parse(text);
}

}  // namespace eddy::python

PYBIND11_MODULE(_eddy, m) {
    using namespace eddy::python;
    m.doc() = "eddy: particle fluids (WCSPH, DFSPH, PBF, Clavet), shallow water and fluid surfaces, from Python.";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const eddy::InputError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const nlohmann::json::exception& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        }
    });
    m.attr("__version__") = EDDY_PY_VERSION;
    py::register_exception<DivergenceError>(m, "DivergenceError", PyExc_RuntimeError);
    bind_scene(m);
    bind_simulation(m);
    bind_shallow(m);
    bind_surface(m);
}
