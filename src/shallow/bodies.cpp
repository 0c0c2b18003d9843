// Floating bodies on the shallow-water grid: a body from its scene spec (mass, inertia, orientation), the
// solver's body step (the three passes of src/shallow/passes/body_*.cpp in order), the displaced depth at
// the start, and the bodies in checkpoints. docs/bodies.md, "Shallow water", has the model.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "eddy/shallow_water.hpp"
#include "shallow/bodies.hpp"

namespace eddy {

using namespace shallow_detail;

ShallowBody make_shallow_body(const ShallowBodySpec& s) {
    ShallowBody b;
    double volume = 0.0;
    double i_unit[3] = {0, 0, 0};  // principal moments per unit mass
    if (s.shape == "box") {
        b.shape = 0;
        b.half = {0.5 * s.size[0], 0.5 * s.size[1], 0.5 * s.size[2]};
        volume = s.size[0] * s.size[1] * s.size[2];
        const double a2 = b.half[0] * b.half[0], b2 = b.half[1] * b.half[1], c2 = b.half[2] * b.half[2];
        i_unit[0] = (b2 + c2) / 3.0;
        i_unit[1] = (a2 + c2) / 3.0;
        i_unit[2] = (a2 + b2) / 3.0;
    } else if (s.shape == "sphere") {
        b.shape = 1;
        b.half = {s.radius, s.radius, s.radius};
        volume = 4.0 / 3.0 * std::numbers::pi * s.radius * s.radius * s.radius;
        i_unit[0] = i_unit[1] = i_unit[2] = 0.4 * s.radius * s.radius;
    } else {  // cylinder: its own axis is x
        b.shape = 2;
        b.half = {0.5 * s.length, s.radius, s.radius};
        volume = std::numbers::pi * s.radius * s.radius * s.length;
        i_unit[0] = 0.5 * s.radius * s.radius;
        i_unit[1] = i_unit[2] = (3.0 * s.radius * s.radius + s.length * s.length) / 12.0;
    }
    b.mass = s.mass > 0.0 ? s.mass : s.density * volume;
    for (int a = 0; a < 3; ++a) b.inertia[a] = b.mass * i_unit[a];
    b.bound = std::sqrt(b.half[0] * b.half[0] + b.half[1] * b.half[1] + b.half[2] * b.half[2]);
    if (b.shape == 1) b.bound = s.radius;
    b.drag = s.drag;
    b.x = s.center;
    b.v = s.velocity;
    b.omega = s.angular_velocity;
    // Orientation: the cylinder's axis (its own x) onto the given world axis, then the yaw about z.
    Q4 q{1, 0, 0, 0};
    if (b.shape == 2 && s.axis == "y") q = {std::cos(std::numbers::pi / 4), 0, 0, std::sin(std::numbers::pi / 4)};
    if (b.shape == 2 && s.axis == "z") q = {std::cos(std::numbers::pi / 4), 0, -std::sin(std::numbers::pi / 4), 0};
    const double half_yaw = 0.5 * s.yaw * std::numbers::pi / 180.0;
    const Q4 yaw{std::cos(half_yaw), 0, 0, std::sin(half_yaw)};
    // yaw * q
    b.q = {yaw[0] * q[0] - yaw[3] * q[3], yaw[0] * q[1] - yaw[3] * q[2], yaw[0] * q[2] + yaw[3] * q[1], yaw[0] * q[3] + yaw[3] * q[0]};
    return b;
}

namespace shallow_detail {

// The displaced depth of bodies placed in water whose surface (as the scene gives it) already holds
// them: b = k h_sub / (1 + k), the value a body at rest keeps (body_displacement.cpp), taken out of the
// given depth, so that a body placed at its draft starts at rest in a level lake.
template <class Real>
void initial_displacement(ShallowWaterGrid<Real>& g, const std::vector<ShallowBody>& bodies, double stiffness) {
    g.displaced.assign(g.cells(), Real(0));
    const double dx = double(g.dx), f = stiffness / (1.0 + stiffness);
    for (const ShallowBody& b : bodies) {
        int i0, i1, j0, j1;
        body_rect(b, g, i0, i1, j0, j1);
        for (int j = j0; j < j1; ++j)
            for (int i = i0; i < i1; ++i) {
                const std::size_t c = g.cell(i, j);
                if (g.solid[c]) continue;
                const double H = double(g.terrain[c]), eta = H + double(g.depth[c]) - double(g.displaced[c]);
                double d = 0.0;
                for_samples(i, j, dx, [&](double x, double y) {
                    double lo, hi;
                    if (!body_column(b, x, y, lo, hi)) return;
                    const double bottom = std::max(lo, H);
                    d += std::clamp(f * (eta - bottom), 0.0, std::max(0.0, hi - bottom));
                });
                if (d > 0.0) g.displaced[c] = Real(std::min(double(g.displaced[c]) + d / (kSub * kSub), double(g.depth[c])));
            }
    }
}

template void initial_displacement<float>(ShallowWaterGrid<float>&, const std::vector<ShallowBody>&, double);
template void initial_displacement<double>(ShallowWaterGrid<double>&, const std::vector<ShallowBody>&, double);

void save_bodies(StateWriter& w, const std::vector<ShallowBody>& bodies) {
    w.put<std::uint64_t>(bodies.size());
    for (const ShallowBody& b : bodies) {
        for (const auto* a : {&b.x, &b.v, &b.omega, &b.force, &b.torque})
            for (double v : *a) w.put(v);
        for (double v : b.q) w.put(v);
    }
}

void load_bodies(StateReader& r, std::vector<ShallowBody>& bodies) {
    if (r.get<std::uint64_t>() != bodies.size()) r.fail("its bodies are not its scene's");
    for (ShallowBody& b : bodies) {
        for (auto* a : {&b.x, &b.v, &b.omega, &b.force, &b.torque})
            for (double& v : *a) v = r.get<double>();
        for (double& v : b.q) v = r.get<double>();
        for (double v : b.x) if (!std::isfinite(v)) r.fail("a body's position is not finite");
        const double n = b.q[0] * b.q[0] + b.q[1] * b.q[1] + b.q[2] * b.q[2] + b.q[3] * b.q[3];
        if (!(std::abs(n - 1.0) < 1e-6)) r.fail("a body's orientation is not a unit quaternion");
    }
}

}  // namespace shallow_detail

}  // namespace eddy
