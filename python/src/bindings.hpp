// eddy's Python module (issue 13): what the binding files share. Each file binds one part of the
// library (scenes, particle simulations, shallow water, surfaces and files) into the module `_eddy`.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/json_text.hpp"

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

/// The largest count a Python argument may give (steps, particles): 2^63 - 1.
inline constexpr std::uint64_t kMaxCount = 9223372036854775807ULL;

/// A count from Python (step(n), run(steps=...), max_particles, a body's index): an int, or anything with
/// __index__ (numpy integers), from lo to hi; a float (even 2.0), a bool, a string, None or an int out of
/// range is an InputError (ValueError) "<what> = <value>: allowed: <allowed>", not pybind's TypeError or
/// a silent nothing (step(-1) did no step and returned {}).
inline std::uint64_t count_arg(const py::handle& v, const char* what, std::uint64_t lo, std::uint64_t hi,
                               const std::string& allowed) {
    auto refuse = [&]() -> std::uint64_t {
        throw InputError(std::string(what) + " = " + text_excerpt(py::repr(v).cast<std::string>(), 40) +
                         ": allowed: " + allowed);
    };
    if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr())) return refuse();
    const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow != 0 || x < 0 || std::uint64_t(x) < lo || std::uint64_t(x) > hi) return refuse();
    return std::uint64_t(x);
}

/// A time or rate from Python (step's until and fps): an int or float (not a bool), finite, in (0, hi].
inline double positive_arg(const py::handle& v, const char* what, double hi, const char* unit) {
    const bool number = !PyBool_Check(v.ptr()) && (PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr()));
    const double x = number ? v.cast<double>() : 0.0;
    if (!number || !std::isfinite(x) || x <= 0.0 || x > hi)
        throw InputError(fmt::format("{} = {}: allowed: a number{} above 0, at most {:g}", what,
                                     text_excerpt(py::repr(v).cast<std::string>(), 40), unit, hi));
    return x;
}

/// JSON <-> Python objects, through Python's json module (exact for what scenes hold). A value JSON cannot
/// hold (NaN, inf, an object of no JSON type) inside `o` is an InputError naming its key path below `path`
/// (the name of `o` itself, if any): "center[0]: not finite (NaN or infinite); allowed: a finite number".
py::object to_python(const nlohmann::json& j);
nlohmann::json to_json(const py::handle& o, const std::string& path = "");

void bind_scene(py::module_& m);
void bind_simulation(py::module_& m);
/// sim.bodies, add_body, set_body_force onto the Simulation class (bodies.cpp; after bind_simulation).
void bind_bodies(py::module_& m);
/// sim.emitters, removed, add_emitter, stop_emitter onto the Simulation class (emitters.cpp; after bind_simulation).
void bind_emitters(py::module_& m);
void bind_shallow(py::module_& m);
void bind_surface(py::module_& m);
/// eddy.Whitewater and eddy.whitewater (whitewater.cpp; issue 32).
void bind_whitewater(py::module_& m);

}  // namespace eddy::python
