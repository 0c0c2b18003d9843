// eddy.Simulation's rigid bodies (issue 30; eddy/bodies.hpp): sim.bodies (their state as numpy arrays),
// sim.add_body (a body dropped into the running simulation) and sim.set_body_force (a scripted push).
// Bound onto the Simulation class that simulation.cpp registers.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/simulation.hpp"
#include "particle_sim.hpp"

namespace eddy::python {

namespace {

// The state's columns, in BodyState's order: the numpy views below slice one (n, 13) view of it.
static_assert(sizeof(BodyState) == 13 * sizeof(double), "BodyState is 13 doubles without padding");

py::dict bodies_dict(py::object self) {
    auto& s = self.cast<PySimulation&>();
    check_idle(s.busy);
    return s.visit([&](auto& p) {
        const std::size_t n = p.bodies.size();
        py::dict d;
        // position, orientation, velocity, angular_velocity: read-only views of the bodies' own state
        // (no copy; strided: the rows are BodyState records). ViewLeases: they keep the values they had
        // once the simulation moves on (particle_sim.hpp detaches the state before every change).
        const char* names[] = {"position", "orientation", "velocity", "angular_velocity"};
        const py::ssize_t first[] = {0, 3, 7, 10}, width[] = {3, 4, 3, 3};
        if (n > 0) {
            py::array all = s.views.make(p.bodies.state, py::dtype::of<double>(), {py::ssize_t(n), py::ssize_t(13)},
                                         {py::ssize_t(sizeof(BodyState)), py::ssize_t(sizeof(double))}, self, false);
            for (int k = 0; k < 4; ++k)
                d[names[k]] = all[py::make_tuple(py::slice(py::none(), py::none(), py::none()),
                                                 py::slice(first[k], first[k] + width[k], 1))];
        } else {
            for (int k = 0; k < 4; ++k)
                d[names[k]] = py::array_t<double>(std::vector<py::ssize_t>{0, width[k]});
        }
        // force, torque: the fluid's load on each body over the last step (its boundary object's load;
        // set_body_force's push not included), NaN before the first step; mass, object: copies.
        const py::ssize_t rows = py::ssize_t(n);
        py::array_t<double> force(std::vector<py::ssize_t>{rows, 3});
        py::array_t<double> torque(std::vector<py::ssize_t>{rows, 3});
        py::array_t<double> mass(std::vector<py::ssize_t>{rows});
        py::array_t<std::uint32_t> object(std::vector<py::ssize_t>{rows});
        auto f = force.mutable_unchecked<2>();
        auto t = torque.mutable_unchecked<2>();
        auto m = mass.mutable_unchecked<1>();
        auto o = object.mutable_unchecked<1>();
        const bool known = p.boundary.load.size() == p.boundary.motions.size();
        for (std::size_t k = 0; k < n; ++k) {
            const std::uint16_t obj = p.bodies.object[k];
            for (int c = 0; c < 3; ++c) {
                f(k, c) = known ? p.boundary.load[obj].force[c] : std::nan("");
                t(k, c) = known ? p.boundary.load[obj].torque[c] : std::nan("");
            }
            m(k) = p.bodies.specs[k].mass.mass;
            o(k) = obj;
        }
        d["force"] = force;
        d["torque"] = torque;
        d["mass"] = mass;
        d["object"] = object;
        return d;
    });
}

std::size_t add_body_py(PySimulation& s, const py::object& body) {
    const nlohmann::json j = to_json(body);
    Changing changing(s);
    py::gil_scoped_release release;
    return add_body(s.sim, j, *s.exec);
}

// A real number from Python: a float or an int (not a bool), a numpy integer or float scalar, or a 0-d
// array of one (np.float32(1.0), np.array(1.0)).
bool real_scalar(const py::handle& v) {
    if (PyBool_Check(v.ptr())) return false;
    if (PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr())) return true;
    if (!py::hasattr(v, "dtype") || !py::hasattr(v, "ndim") || v.attr("ndim").cast<int>() != 0) return false;
    const std::string kind = py::str(v.attr("dtype").attr("kind"));
    return kind == "f" || kind == "i" || kind == "u";
}

/// The largest push set_body_force takes, per component (N, N m): what the rigid-body engines step.
constexpr double kMaxPush = 1e15;

// 3 finite numbers from Python (2D: 2, or 3 with z = 0; a torque in 2D: one number about z, or 3 with
// x = y = 0), each at most kMaxPush, else InputError (ValueError) naming `what`.
std::array<double, 3> three(const py::object& v, int dim, bool torque, const std::string& what) {
    std::array<double, 3> out{0, 0, 0};
    std::vector<double> x;
    try {
        if (torque && dim == 2 && real_scalar(v)) x = {py::float_(v).cast<double>()};
        else x = v.cast<std::vector<double>>();
    } catch (const std::exception&) {  // pybind's cast_error, or a Python error (len() of an unsized object)
        throw InputError(fmt::format("{}: expected {} numbers", what, dim == 2 && torque ? "1 (about z) or 3" : "3"));
    }
    const bool ok = dim == 2 ? (torque ? x.size() == 1 || x.size() == 3 : x.size() == 2 || x.size() == 3) : x.size() == 3;
    if (!ok)
        throw InputError(fmt::format("{}: expected {} numbers, got {}", what,
                                     dim == 3 ? "3" : torque ? "1 (about z) or 3" : "2 or 3", x.size()));
    for (double c : x) {
        if (!std::isfinite(c)) throw InputError(fmt::format("{}: not finite (NaN or infinite)", what));
        if (std::fabs(c) > kMaxPush)  // Box2D works in float: 1e38 N aborted it, 1e30 N froze the body
            throw InputError(fmt::format("{}: {:g} {}: allowed: up to {:g} {} per component", what, c, torque ? "N m" : "N",
                                         kMaxPush, torque ? "N m" : "N"));
    }
    if (torque && dim == 2) {
        if (x.size() == 3 && (x[0] != 0.0 || x[1] != 0.0))
            throw InputError(fmt::format("{}: a 2D body turns about z only; allowed: (0, 0, tz) or tz", what));
        out[2] = x.back();
    } else {
        for (std::size_t a = 0; a < x.size(); ++a) out[a] = x[a];
        if (dim == 2 && out[2] != 0.0) throw InputError(fmt::format("{}: a 2D body has no z; allowed: fz = 0", what));
    }
    return out;
}

void set_body_force(PySimulation& s, const py::object& k_given, const py::object& force, const py::object& torque) {
    check_idle(s.busy);
    s.visit([&](auto& p) {
        constexpr int D = std::decay_t<decltype(p)>::kDimension;
        const std::string allowed =
            p.bodies.empty() ? std::string("none (the simulation has 0 bodies; add_body adds one)")
                             : fmt::format("0 to {} (the simulation has {} bod{})", p.bodies.size() - 1, p.bodies.size(),
                                           p.bodies.size() == 1 ? "y" : "ies");
        const std::uint64_t k = count_arg(k_given, "set_body_force: k", 0, kMaxCount, allowed);  // -1, 1.5, True
        if (k >= p.bodies.size()) throw InputError(fmt::format("set_body_force: body {}: allowed: {}", k, allowed));
        ObjectLoad push;
        push.force = three(force, D, false, "set_body_force: force");
        if (!torque.is_none()) push.torque = three(torque, D, true, "set_body_force: torque");
        if (p.bodies.external.size() < p.bodies.size()) p.bodies.external.resize(p.bodies.size(), ObjectLoad{});
        p.bodies.external[std::size_t(k)] = push;
    });
}

}  // namespace

void bind_bodies(py::module_& m) {
    auto cls = py::reinterpret_borrow<py::class_<PySimulation>>(m.attr("Simulation"));
    cls.def_property_readonly(
           "bodies", &bodies_dict,
           "The rigid bodies (the scene's 'bodies', then those add_body() added), a dict of numpy arrays, one\n"
           "row per body:\n"
           "  position (n, 3)          centre of mass (m); 2D: z = 0\n"
           "  orientation (n, 4)       rotation since the scene's pose, unit quaternion w, x, y, z\n"
           "  velocity (n, 3)          of the centre of mass (m/s)\n"
           "  angular_velocity (n, 3)  (rad/s; 2D: about z)\n"
           "  force, torque (n, 3)     the fluid's load over the last step (N, N m about the centre of\n"
           "                           mass; 2D per metre of depth), NaN before the first step; a push\n"
           "                           from set_body_force() is not included\n"
           "  mass (n,)                (kg; 2D kg per metre of depth)\n"
           "  object (n,)              the body's boundary object (its row of boundary_forces())\n"
           "position, orientation, velocity and angular_velocity are read-only float64 views of the\n"
           "bodies' state (no copy; strided), current until the next step(), run(), add_body() or\n"
           "settings change, after which they keep the values they had. force, torque, mass and object\n"
           "are fresh copies.")
        .def("add_body", &add_body_py, py::arg("body"),
             "add_body(body: dict) -> int\n\n"
             "Adds a body to the running simulation: `body` is one entry of a scene's 'bodies' list\n"
             "({'shape': 'box', 'min': [...], 'max': [...], 'density': 500}, a circle, sphere,\n"
             "cylinder, polygon or mesh, with velocity, friction, ... as in a scene file). It must lie\n"
             "inside the walls and clear of them and of the other bodies where they are now. Fluid\n"
             "particles inside it or within r of its surface are removed; the method is rebuilt on the\n"
             "new walls; the other bodies keep their state; checkpoints hold it. Returns the number of\n"
             "fluid particles removed. ValueError (one line naming bodies[i]) on a bad key or value or an\n"
             "overlap; the simulation is then unchanged.")
        .def("set_body_force", &set_body_force, py::arg("k"), py::arg("force"), py::arg("torque") = py::none(),
             "set_body_force(k, force, torque=None)\n\n"
             "A push from outside on body k, added to the fluid's load at every step until set again:\n"
             "force (N at the centre of mass; 2D: 2 numbers, or 3 with fz = 0, in N per metre) and torque\n"
             "(N m about the centre of mass; 2D: one number about z). set_body_force(k, [0, 0, 0])\n"
             "removes it. ValueError for a body that does not exist, a value not finite or above 1e15.");
}

}  // namespace eddy::python
