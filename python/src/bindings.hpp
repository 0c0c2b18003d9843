// eddy's Python module (issue 13): what the binding files share. Each file binds one part of the
// library (scenes, particle simulations, shallow water, surfaces and files) into the module `_eddy`.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <nlohmann/json.hpp>

#include <string>

#include "eddy/error.hpp"
#include "eddy/exec.hpp"

namespace eddy::python {

namespace py = pybind11;

/// A thread count from Python (any size of int): 0 (every core) or 1..kMaxThreads, else ValueError
/// (InputError) naming `what`, e.g. "Simulation: threads"; 10**20 too, not pybind's TypeError.
inline int threads_arg(const py::int_& threads, const char* what) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(threads.ptr(), &overflow);
    if (overflow != 0)
        throw InputError(std::string(what) + " = " + py::repr(threads).cast<std::string>() +
                         ": allowed: 0 (every core) or 1 to " + std::to_string(kMaxThreads));
    return checked_threads(v, what);
}

/// JSON <-> Python objects, through Python's json module (exact for what scenes hold).
py::object to_python(const nlohmann::json& j);
nlohmann::json to_json(const py::handle& o);

void bind_scene(py::module_& m);
void bind_simulation(py::module_& m);
/// sim.bodies, add_body, set_body_force onto the Simulation class (bodies.cpp; after bind_simulation).
void bind_bodies(py::module_& m);
void bind_shallow(py::module_& m);
void bind_surface(py::module_& m);

}  // namespace eddy::python
