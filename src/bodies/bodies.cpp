// Rigid bodies the fluid moves (eddy/bodies.hpp): their initial state, the overlap check, and the step
// that hands the fluid's loads to the engine and the engine's state back to the bodies' walls.
#include "eddy/bodies.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "eddy/error.hpp"

namespace eddy {

using Mat3d = std::array<std::array<double, 3>, 3>;

Mat3d quaternion_matrix(const std::array<double, 4>& q) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    return {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
             {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
             {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

std::array<double, 4> matrix_quaternion(const Mat3d& m) {
    // Shepperd's method: the largest of the four squares first, for accuracy.
    const double tr = m[0][0] + m[1][1] + m[2][2];
    std::array<double, 4> q;
    if (tr > 0.0) {
        const double s = 2.0 * std::sqrt(1.0 + tr);
        q = {0.25 * s, (m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s};
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        const double s = 2.0 * std::sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]);
        q = {(m[2][1] - m[1][2]) / s, 0.25 * s, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s};
    } else if (m[1][1] > m[2][2]) {
        const double s = 2.0 * std::sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]);
        q = {(m[0][2] - m[2][0]) / s, (m[0][1] + m[1][0]) / s, 0.25 * s, (m[1][2] + m[2][1]) / s};
    } else {
        const double s = 2.0 * std::sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]);
        q = {(m[1][0] - m[0][1]) / s, (m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, 0.25 * s};
    }
    if (q[0] < 0.0)
        for (auto& c : q) c = -c;
    return q;
}

namespace {

// Is x inside the shape of a boundary spec as it is at rest (containers: the fluid's side)?
template <int D>
bool inside_spec(const BoundarySpec& b, const Vec<D>& x) {
    if (const MeshShape<D>* m = model_shape<D>(b.model)) return m->inside(x);
    if (b.shape == "box") {
        for (int a = 0; a < D; ++a)
            if (x[a] < b.min[a] || (x[a] > b.max[a] && !(a == 1 && b.open_top))) return false;
        return true;
    }
    if (b.shape == "cylinder") {  // containers only: axis y from the bottom disc's centre
        const double dx = x[0] - b.center[0], dz = D == 3 ? x[D - 1] - b.center[2] : 0.0;
        return dx * dx + dz * dz <= b.radius * b.radius && x[1] >= b.center[1] &&
               (b.open_top || x[1] <= b.center[1] + b.height);
    }
    double d2 = 0.0;
    for (int a = 0; a < D; ++a) d2 += (x[a] - b.center[a]) * (x[a] - b.center[a]);
    return d2 <= b.radius * b.radius;
}

// The box a spec fills (m), for a quick rejection.
template <int D>
bool near_spec(const BoundarySpec& b, const Vec<D>& x) {
    if (b.shape == "circle" || b.shape == "sphere") {
        for (int a = 0; a < D; ++a)
            if (std::fabs(x[a] - b.center[a]) > b.radius) return false;
        return true;
    }
    if (b.shape == "cylinder") return true;
    for (int a = 0; a < D; ++a)
        if (x[a] < b.min[a] || x[a] > b.max[a]) return false;
    return true;
}

template <std::size_t N>
bool all_finite(const std::array<double, N>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}
bool all_finite(const BodyState& s) {
    return all_finite(s.position) && all_finite(s.orientation) && all_finite(s.velocity) && all_finite(s.angular_velocity);
}
bool all_finite(const ObjectLoad& l) { return all_finite(l.force) && all_finite(l.torque); }

// Whether the engine may step the bodies: every state and load finite (Box2D's assertions abort on a NaN
// pose, SIGABRT; Bullet flings a body by an infinite force without a word). A load that is not finite
// comes from a fluid that diverged in this step, which the step reports; the bodies then stay as they are.
bool engine_can_take(const std::vector<BodyState>& state, const std::vector<ObjectLoad>& load) {
    return std::all_of(state.begin(), state.end(), [](const BodyState& s) { return all_finite(s); }) &&
           std::all_of(load.begin(), load.end(), [](const ObjectLoad& l) { return all_finite(l); });
}

// After the engine's step: a body whose state is not finite (a load that overflowed the engine's floats)
// is a divergence, reported before the walls take the state; the bodies keep `before`, so that no later
// step hands the engine a NaN pose.
void check_engine_state(std::vector<BodyState>& state, const std::vector<BodyState>& before,
                        const std::vector<ObjectLoad>& load, double t) {
    for (std::size_t k = 0; k < state.size(); ++k)
        if (!all_finite(state[k])) {
            state = before;
            throw std::runtime_error(fmt::format("diverged at t = {:.6g} s: bodies[{}]: its state is not finite (NaN or "
                                                 "infinite) after the rigid-body step, under a force of ({:.3g}, {:.3g}, "
                                                 "{:.3g}) N",
                                                 t, k, load[k].force[0], load[k].force[1], load[k].force[2]));
        }
}

// The body's mobility in world axes (DrivenState): inverse mass and R I^-1 R^T, the axes of fixed_axes
// zeroed on both sides (the engines' linear and angular factors, in world axes).
void set_mobility(const BodySpec& spec, const Mat3d& R, int dim, DrivenState& out) {
    const auto& I = spec.mass.inertia;
    Mat3d inv{};
    if (dim == 2) {
        inv[2][2] = I[2][2] > 0.0 ? 1.0 / I[2][2] : 0.0;
    } else {
        const double c00 = I[1][1] * I[2][2] - I[1][2] * I[2][1], c01 = I[1][2] * I[2][0] - I[1][0] * I[2][2],
                     c02 = I[1][0] * I[2][1] - I[1][1] * I[2][0];
        const double det = I[0][0] * c00 + I[0][1] * c01 + I[0][2] * c02;
        if (det > 0.0) {
            inv = {{{c00, I[0][2] * I[2][1] - I[0][1] * I[2][2], I[0][1] * I[1][2] - I[0][2] * I[1][1]},
                    {c01, I[0][0] * I[2][2] - I[0][2] * I[2][0], I[0][2] * I[1][0] - I[0][0] * I[1][2]},
                    {c02, I[0][1] * I[2][0] - I[0][0] * I[2][1], I[0][0] * I[1][1] - I[0][1] * I[1][0]}}};
            for (auto& row : inv)
                for (double& e : row) e /= det;
        }
    }
    out.inverse_mass = {};
    for (int a = 0; a < 3; ++a) {
        if (a < dim && !spec.fixed_translation[a] && spec.mass.mass > 0.0) out.inverse_mass[a][a] = 1.0 / spec.mass.mass;
        for (int b = 0; b < 3; ++b) {
            double e = 0.0;
            for (int k = 0; k < 3; ++k)
                for (int l = 0; l < 3; ++l) e += R[a][k] * inv[k][l] * R[b][l];
            const bool turns = !spec.fixed_rotation[a] && !spec.fixed_rotation[b] && (dim == 3 || (a == 2 && b == 2));
            out.inverse_inertia[a][b] = turns ? e : 0.0;
        }
    }
}

}  // namespace

template <int D>
void sync_body_motions(const RigidBodies<D>& bodies, BoundarySet<D>& boundary, double t) {
    for (std::size_t k = 0; k < bodies.size(); ++k) {
        BoundaryMotion<D>& m = boundary.motions[bodies.object[k]];
        const BodyState& s = bodies.state[k];
        m.driven = true;
        m.state.time = t;
        m.state.R = quaternion_matrix(s.orientation);
        for (int a = 0; a < 3; ++a) m.state.shift[a] = s.position[a] - bodies.specs[k].mass.center[a];
        m.state.velocity = s.velocity;
        m.state.angular_velocity = s.angular_velocity;
        if constexpr (D == 2) m.state.shift[2] = m.state.velocity[2] = 0.0;
        set_mobility(bodies.specs[k], m.state.R, D, m.state);
    }
}

template <int D>
RigidBodies<D> make_bodies(const Scene& scene, BoundarySet<D>& boundary) {
    RigidBodies<D> out;
    out.gravity = scene.gravity;
    out.particle_radius = scene.particle_radius;
    for (std::size_t i = 0; i < scene.boundaries.size(); ++i) {
        const BoundarySpec& b = scene.boundaries[i];
        if (b.body >= 0) continue;
        out.walls.push_back(b);
        out.wall_object.push_back(static_cast<std::uint16_t>(i));
        out.wall_motion.push_back(i < boundary.motions.size() ? boundary.motions[i] : BoundaryMotion<D>{});
    }
    for (const BodySpec& spec : scene.bodies) {
        out.specs.push_back(spec);
        out.shapes.push_back(scene.boundaries[spec.boundary]);
        out.object.push_back(static_cast<std::uint16_t>(spec.boundary));
        BodyState s;
        s.position = spec.mass.center;
        s.velocity = spec.velocity;
        s.angular_velocity = spec.angular_velocity;
        if constexpr (D == 2) {
            s.position[2] = s.velocity[2] = 0.0;
            s.angular_velocity[0] = s.angular_velocity[1] = 0.0;
        }
        out.state.push_back(s);
    }
    out.load.assign(out.size(), ObjectLoad{});
    if (out.empty()) return out;

    // A body may not start inside a wall or another body: its wall particles (inside its surface) must
    // lie on the fluid's side of every other object.
    std::vector<int> body_of(boundary.motions.size(), -1);
    for (std::size_t k = 0; k < out.size(); ++k) body_of[out.object[k]] = static_cast<int>(k);
    bool any_container = false;
    for (const auto& b : scene.boundaries) any_container = any_container || (!b.solid && b.body < 0);
    for (std::size_t p = 0; p < boundary.size(); ++p) {
        const int k = body_of[boundary.object[p]];
        if (k < 0) continue;
        // A body added to a running simulation (add_body) was checked where everything was then; at the
        // scene's poses it may overlap a body that started where it was dropped and has moved away.
        if (out.specs[k].added_at > 0.0) continue;
        const Vec<D> x = boundary.position[p];
        bool contained = !any_container;
        for (std::size_t o = 0; o < scene.boundaries.size(); ++o) {
            if (o == boundary.object[p]) continue;
            const BoundarySpec& b = scene.boundaries[o];
            if (b.body >= 0 && scene.bodies[std::size_t(b.body)].added_at > 0.0) continue;  // as above
            if (!b.solid) {
                if (!contained && inside_spec<D>(b, x)) contained = true;
                continue;
            }
            if (near_spec<D>(b, x) && inside_spec<D>(b, x))
                throw InputError(fmt::format("{}: bodies[{}]: overlaps {} at ({:.4g}, {:.4g}{}); a body must start clear of "
                                             "the walls and of other bodies",
                                             scene.where(), k, boundary_key(scene, o), x[0], x[1],
                                             D == 3 ? fmt::format(", {:.4g}", x[D - 1]) : std::string()));
        }
        if (!contained)
            throw InputError(fmt::format("{}: bodies[{}]: reaches outside every container at ({:.4g}, {:.4g}{}); a body must "
                                         "start inside the walls",
                                         scene.where(), k, x[0], x[1], D == 3 ? fmt::format(", {:.4g}", x[D - 1]) : std::string()));
    }
    sync_body_motions(out, boundary, 0.0);
    return out;
}

template <int D>
void advance_bodies(RigidBodies<D>& bodies, BoundarySet<D>& boundary, double t, double dt, double t_end) {
    if (bodies.empty()) return;
    // What moves each body: the fluid's load on its object over the step, and any load from outside.
    for (std::size_t k = 0; k < bodies.size(); ++k) {
        bodies.load[k] = bodies.object[k] < boundary.load.size() ? boundary.load[bodies.object[k]] : ObjectLoad{};
        if (k < bodies.external.size())
            for (int a = 0; a < 3; ++a) {
                bodies.load[k].force[a] += bodies.external[k].force[a];
                bodies.load[k].torque[a] += bodies.external[k].torque[a];
            }
    }
    auto& engine = bodies.cache.engine;
    if (!engine) {
        if constexpr (D == 2) engine = make_box2d_engine(bodies);
        else engine = make_bullet_engine(bodies);
    }
    const std::vector<BodyState> before = bodies.state;
    if (engine_can_take(bodies.state, bodies.load)) engine->step(bodies.state, bodies.load, t, dt);
    check_engine_state(bodies.state, before, bodies.load, t);
    sync_body_motions(bodies, boundary, t_end);
}

template RigidBodies<2> make_bodies<2>(const Scene&, BoundarySet<2>&);
template RigidBodies<3> make_bodies<3>(const Scene&, BoundarySet<3>&);
template void advance_bodies<2>(RigidBodies<2>&, BoundarySet<2>&, double, double, double);
template void advance_bodies<3>(RigidBodies<3>&, BoundarySet<3>&, double, double, double);
template void sync_body_motions<2>(const RigidBodies<2>&, BoundarySet<2>&, double);
template void sync_body_motions<3>(const RigidBodies<3>&, BoundarySet<3>&, double);

}  // namespace eddy
