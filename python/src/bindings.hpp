// eddy's Python module (issue 13): what the binding files share. Each file binds one part of the
// library (scenes, particle simulations, shallow water, surfaces and files) into the module `_eddy`.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <nlohmann/json.hpp>

namespace eddy::python {

namespace py = pybind11;

/// JSON <-> Python objects, through Python's json module (exact for what scenes hold).
py::object to_python(const nlohmann::json& j);
nlohmann::json to_json(const py::handle& o);

void bind_scene(py::module_& m);
void bind_simulation(py::module_& m);
void bind_shallow(py::module_& m);
void bind_surface(py::module_& m);

}  // namespace eddy::python
