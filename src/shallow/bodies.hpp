// Private to the shallow-water bodies (src/shallow/bodies.cpp, src/shallow/passes/body_*.cpp): small
// vector algebra in double, the vertical column a body occupies above a cell centre, and the three
// passes a step runs on them (docs/bodies.md, "Shallow water", has the model and its equations).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "eddy/checkpoint.hpp"
#include "eddy/exec.hpp"
#include "eddy/shallow_water.hpp"

namespace eddy::shallow_detail {

using D3 = std::array<double, 3>;
using Q4 = std::array<double, 4>;  // (w, x, y, z)

inline D3 add(const D3& a, const D3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline D3 sub(const D3& a, const D3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline D3 scale(const D3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
inline double dot(const D3& a, const D3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline D3 cross(const D3& a, const D3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
// v rotated by the unit quaternion q (body -> world), and by its inverse (world -> body).
inline D3 rotate(const Q4& q, const D3& v) {
    const D3 u{q[1], q[2], q[3]};
    const D3 t = scale(cross(u, v), 2.0);
    return add(add(v, scale(t, q[0])), cross(u, t));
}
inline D3 unrotate(const Q4& q, const D3& v) { return rotate({q[0], -q[1], -q[2], -q[3]}, v); }

// The column of a body above the point (x, y): the world heights [lo, hi] where the vertical line through
// (x, y) is inside the body; false when it misses. In the body's frame the line is p0 + t d with t the
// world height: slabs for the box's faces and the cylinder's caps, a quadratic for the sphere and the
// cylinder's mantle.
// The line's frame, once per body: p0 = base + x ex + y ey.
struct BodyFrame {
    D3 base, ex, ey, d;
};
inline BodyFrame body_frame(const ShallowBody& b) {
    return {unrotate(b.q, {-b.x[0], -b.x[1], -b.x[2]}), unrotate(b.q, {1.0, 0.0, 0.0}), unrotate(b.q, {0.0, 1.0, 0.0}),
            unrotate(b.q, {0.0, 0.0, 1.0})};
}
inline bool body_column(const ShallowBody& b, const BodyFrame& f, double x, double y, double& lo, double& hi) {
    const D3 p0 = add(f.base, add(scale(f.ex, x), scale(f.ey, y)));
    const D3& d = f.d;
    double t0 = -1e300, t1 = 1e300;
    auto slab = [&](int a, double h) {
        if (std::abs(d[a]) < 1e-12) return std::abs(p0[a]) <= h;
        double u0 = (-h - p0[a]) / d[a], u1 = (h - p0[a]) / d[a];
        if (u0 > u1) std::swap(u0, u1);
        t0 = std::max(t0, u0);
        t1 = std::min(t1, u1);
        return t0 <= t1;
    };
    // |(p0 + t d) restricted to the axes in `mask`| <= r
    auto quadric = [&](const D3& mask, double r) {
        const D3 pm{p0[0] * mask[0], p0[1] * mask[1], p0[2] * mask[2]}, dm{d[0] * mask[0], d[1] * mask[1], d[2] * mask[2]};
        const double A = dot(dm, dm), B = dot(pm, dm), C = dot(pm, pm) - r * r;
        if (A < 1e-24) return C <= 0.0;
        const double disc = B * B - A * C;
        if (disc < 0.0) return false;
        const double s = std::sqrt(disc);
        t0 = std::max(t0, (-B - s) / A);
        t1 = std::min(t1, (-B + s) / A);
        return t0 <= t1;
    };
    bool in = true;
    if (b.shape == 0) in = slab(0, b.half[0]) && slab(1, b.half[1]) && slab(2, b.half[2]);
    else if (b.shape == 1) in = quadric({1, 1, 1}, b.half[0]);
    else in = slab(0, b.half[0]) && quadric({0, 1, 1}, b.half[1]);
    if (!in || !(t1 > t0)) return false;
    lo = t0;
    hi = t1;
    return true;
}
inline bool body_column(const ShallowBody& b, double x, double y, double& lo, double& hi) {
    return body_column(b, body_frame(b), x, y, lo, hi);
}

// A cell is sampled at kSub x kSub points: a body covers a fraction of a cell, so that a column does not
// enter or leave its footprint all at once as it moves (each such jump would pump a short wave into the
// water under it). f(x, y) for each point, in a fixed order.
constexpr int kSub = 3;
template <class F>
void for_samples(int i, int j, double dx, F&& f) {
    for (int b = 0; b < kSub; ++b)
        for (int a = 0; a < kSub; ++a) f((i + (a + 0.5) / kSub) * dx, (j + (b + 0.5) / kSub) * dx);
}

// Cells [i0, i1) x [j0, j1) that the body's horizontal bounding box can cover (clamped to the grid; empty
// if none): along a world axis a, a box (or the box around a cylinder) reaches sum_k |axis_k . e_a| half_k.
template <class Real>
void body_rect(const ShallowBody& b, const ShallowWaterGrid<Real>& g, int& i0, int& i1, int& j0, int& j1) {
    const double dx = double(g.dx);
    double reach[2] = {b.half[0], b.half[0]};
    if (b.shape != 1) {
        const D3 ax[3] = {rotate(b.q, {1, 0, 0}), rotate(b.q, {0, 1, 0}), rotate(b.q, {0, 0, 1})};
        for (int a = 0; a < 2; ++a)
            reach[a] = std::abs(ax[0][a]) * b.half[0] + std::abs(ax[1][a]) * b.half[1] + std::abs(ax[2][a]) * b.half[2];
    }
    auto lo = [&](double c, double r) { return int(std::floor((c - r) / dx - 0.5)); };
    auto hi = [&](double c, double r) { return int(std::ceil((c + r) / dx - 0.5)) + 1; };
    i0 = std::clamp(lo(b.x[0], reach[0]), 0, g.nx);
    i1 = std::clamp(hi(b.x[0], reach[0]), 0, g.nx);
    j0 = std::clamp(lo(b.x[1], reach[1]), 0, g.ny);
    j1 = std::clamp(hi(b.x[1], reach[1]), 0, g.ny);
}

// What the coupling needs of the solver beyond the grid and the bodies.
struct BodyCoupling {
    double gravity = 9.81;      // m/s^2, along -z
    double density = 1000.0;    // water's rho (kg/m^3)
    double stiffness = 3.0;     // k of the displacement, already lowered for this step's Courant number
    double dry = 0.0;           // depth of a dry cell (m)
};

// Pass 1 (src/shallow/passes/body_motion.cpp): the water's force and torque on every body at its pose and
// velocity, and the bodies' drag on the water per cell (ax, ay in m/s^2, added by pass 3).
// The cells it touches: `drag_cells` lists the cells whose ax, ay it set (the previous list's are zeroed
// first); `mark` is a grid-sized array of zeros, left as found.
struct BodyCells {
    std::vector<std::uint32_t> drag;       // cells with a drag on the water this step
    std::vector<std::uint32_t> displaced;  // cells whose displaced depth is not zero
    std::vector<std::uint8_t> mark;        // grid-sized scratch, all zero between passes
};

template <class Real>
void body_loads_and_motion(std::vector<ShallowBody>& bodies, const ShallowWaterGrid<Real>& g, const BodyCoupling& c,
                           double dt, std::vector<Real>& ax, std::vector<Real>& ay, BodyCells& cells);

// Pass 2 (src/shallow/passes/body_bounds.cpp): bodies kept on the grid (clamped at its borders) and above
// the terrain (lifted out of it).
template <class Real>
void keep_bodies_on_grid(std::vector<ShallowBody>& bodies, const ShallowWaterGrid<Real>& g);

// Pass 3 (src/shallow/passes/body_displacement.cpp): the displaced depth of the bodies at their new poses
// replaces the old one in the depth (volume kept: depth - displaced does not change), and the drag on the
// water is added to the face velocities. Serial over the bodies' cells in a fixed order (they are few):
// the same bits on any thread count. `scratch` is grid-sized and all zero between calls.
template <class Real>
void displace_water(ShallowWaterGrid<Real>& g, const std::vector<ShallowBody>& bodies, const BodyCoupling& c, Real dt,
                    const std::vector<Real>& ax, const std::vector<Real>& ay, std::vector<Real>& scratch, BodyCells& cells);

// The displaced depth at the start (bodies.cpp): the scene's water surface holds the bodies already.
template <class Real>
void initial_displacement(ShallowWaterGrid<Real>& g, const std::vector<ShallowBody>& bodies, double stiffness);

// The bodies' state in checkpoints (their shapes and masses come from the scene).
void save_bodies(StateWriter& w, const std::vector<ShallowBody>& bodies);
void load_bodies(StateReader& r, std::vector<ShallowBody>& bodies);

// The largest step at which the bodies' buoyancy (a spring rho g A on mass m) is integrated accurately:
// 0.5 / omega with omega^2 = rho g A / m, A the body's largest cross-section.
inline double body_time_step(const ShallowBody& b, double density, double gravity) {
    const double* h = b.half.data();
    double area = 4.0 * std::max({h[0] * h[1], h[1] * h[2], h[0] * h[2]});
    if (b.shape == 1) area = 3.14159265358979 * h[0] * h[0];
    if (b.shape == 2) area = std::max(4.0 * h[0] * h[1], 3.14159265358979 * h[1] * h[1]);
    return 0.5 * std::sqrt(b.mass / (density * gravity * area));
}

}  // namespace eddy::shallow_detail
