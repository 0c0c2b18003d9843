// Floating bodies, pass 1: the water's loads on each body and the body's step (semi-implicit Euler).
// (A pass of ShallowWaterSolver::step; docs/bodies.md, "Shallow water", has the model.)
//
// Per point (x_c, y_c) under a body (kSub^2 points per cell, each of area dx^2 / kSub^2 = A), its column
// [lo, hi] (bodies.hpp) and the cell's water surface eta = H + h:
//   submerged depth   s = clamp(min(eta, hi) - max(lo, H), 0)          (the part above the bed, below eta)
//   buoyancy          F_b = rho g s A e_z at (x_c, y_c, max(lo, H) + s / 2): the pressure on the body's
//                     underside; eta includes the bodies' own displacement, so at rest it is the level around
//   drag              F_d = c (v_w - v - omega x r), c = 0.5 rho C_d A |v_w - v_p| (v_w: the cell's water
//                     velocity, horizontal; v_p the body's velocity at the point)
// Linear:  v' = (m v + dt (F_b - m g e_z + sum c (v_w - omega x r))) / (m + dt sum c)      (drag implicit)
// Angular: (I_w + dt D) omega' = I_w omega + dt (sum r x F_b + sum r x c (v_w - v)),  D = sum c (|r|^2 1 - r r^T)
// then x' = x + dt v', q' = normalize(q + dt/2 (0, omega') q). The drag is implicit in the body's own
// velocity so that a light body in a fast river is stable at the grid's step; buoyancy is explicit (a
// spring of stiffness rho g A: stable while dt < 2 sqrt(m / (rho g A)), which suggest_dt keeps).
// Cells are visited row by row in a fixed order, bodies in scene order: the same bits on any thread count.
// The cells given a drag on the water are listed (BodyCells::drag) so that the next step clears only them.
#include <algorithm>
#include <cmath>

#include "shallow/bodies.hpp"

namespace eddy::shallow_detail {

namespace {

using M3 = std::array<double, 9>;  // row-major

// I_w = R diag(I) R^T with R's columns the body's axes in the world.
M3 world_inertia(const ShallowBody& b) {
    const D3 ax[3] = {rotate(b.q, {1, 0, 0}), rotate(b.q, {0, 1, 0}), rotate(b.q, {0, 0, 1})};
    M3 m{};
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k) m[r * 3 + c] += ax[k][r] * b.inertia[k] * ax[k][c];
    return m;
}

D3 mul(const M3& m, const D3& v) {
    return {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
}

// Solves m x = r for a symmetric positive definite 3x3 m (Cramer's rule; m is well conditioned: an
// inertia tensor plus a positive semi-definite damping).
D3 solve(const M3& m, const D3& r) {
    const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
    if (!(std::abs(det) > 0.0)) return {0, 0, 0};
    auto col = [&](int c) {
        M3 a = m;
        for (int k = 0; k < 3; ++k) a[k * 3 + c] = r[k];
        return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
    };
    return {col(0) / det, col(1) / det, col(2) / det};
}

}  // namespace

template <class Real>
void body_loads_and_motion(std::vector<ShallowBody>& bodies, const ShallowWaterGrid<Real>& g, const BodyCoupling& c,
                           double dt, std::vector<Real>& ax, std::vector<Real>& ay, BodyCells& cells) {
    for (std::uint32_t cell : cells.drag) ax[cell] = ay[cell] = Real(0);
    cells.drag.clear();
    const double dx = double(g.dx), area = dx * dx / (kSub * kSub), rho = c.density;  // per sample
    for (ShallowBody& b : bodies) {
        int i0, i1, j0, j1;
        body_rect(b, g, i0, i1, j0, j1);
        const BodyFrame frame = body_frame(b);
        D3 fb{}, tb{}, fd_explicit{}, td_explicit{};  // buoyancy; drag without the implicit parts
        double csum = 0.0;
        M3 damp{};
        for (int j = j0; j < j1; ++j)
            for (int i = i0; i < i1; ++i) {
                const std::size_t cell = g.cell(i, j);
                if (g.solid[cell]) continue;
                const double H = double(g.terrain[cell]), h = double(g.depth[cell]);
                if (h <= c.dry) continue;
                for_samples(i, j, dx, [&](double x, double y) {
                double lo, hi;
                if (!body_column(b, frame, x, y, lo, hi)) return;
                const double bottom = std::max(lo, H);
                const double s = std::min(H + h, hi) - bottom;
                if (!(s > 0.0)) return;
                const D3 r{x - b.x[0], y - b.x[1], bottom + 0.5 * s - b.x[2]};
                const D3 f{0.0, 0.0, rho * c.gravity * s * area};
                fb = add(fb, f);
                tb = add(tb, cross(r, f));
                if (b.drag > 0.0) {
                    const D3 vw{double(g.uc(i, j)), double(g.wc(i, j)), 0.0};
                    const D3 vp = add(b.v, cross(b.omega, r));
                    const D3 rel = sub(vw, vp);
                    const double k = 0.5 * rho * b.drag * area * std::sqrt(dot(rel, rel));
                    if (k > 0.0) {
                        csum += k;
                        fd_explicit = add(fd_explicit, scale(sub(vw, cross(b.omega, r)), k));
                        td_explicit = add(td_explicit, cross(r, scale(sub(vw, b.v), k)));
                        const double rr = dot(r, r);
                        for (int p = 0; p < 3; ++p)
                            for (int q = 0; q < 3; ++q) damp[p * 3 + q] += k * ((p == q ? rr : 0.0) - r[p] * r[q]);
                        // The body's pull on the water: -F_d / (rho h dx^2), at most what turns the
                        // relative velocity to zero in one step (h is the column the solver moves).
                        const double rate = std::min(1.0 / dt, k / (rho * h * dx * dx));
                        ax[cell] += Real(-rel[0] * rate);
                        ay[cell] += Real(-rel[1] * rate);
                        if (!cells.mark[cell]) {
                            cells.mark[cell] = 1;
                            cells.drag.push_back(std::uint32_t(cell));
                        }
                    }
                }
                });
            }
        const double m = b.mass;
        // Linear: gravity and buoyancy explicit, drag implicit in v.
        D3 v;
        for (int a = 0; a < 3; ++a) {
            const double ext = fb[a] + fd_explicit[a] - (a == 2 ? m * c.gravity : 0.0);
            v[a] = (m * b.v[a] + dt * ext) / (m + dt * csum);
        }
        // Angular: (I_w + dt D) omega' = I_w omega + dt tau.
        const M3 Iw = world_inertia(b);
        M3 A = Iw;
        for (int k = 0; k < 9; ++k) A[k] += dt * damp[k];
        const D3 tau = add(tb, td_explicit);
        const D3 w = solve(A, add(mul(Iw, b.omega), scale(tau, dt)));
        // The loads as applied (drag with the new velocities), for bodies.csv.
        b.force = sub(add(fb, fd_explicit), scale(v, csum));
        b.torque = sub(tau, mul(damp, w));
        b.v = v;
        b.omega = w;
        for (int a = 0; a < 3; ++a) b.x[a] += dt * v[a];
        // q' = q + dt/2 (0, omega) q, normalised.
        const Q4& q = b.q;
        const double hw = 0.5 * dt;
        Q4 n{q[0] - hw * (w[0] * q[1] + w[1] * q[2] + w[2] * q[3]), q[1] + hw * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2]),
             q[2] + hw * (w[1] * q[0] + w[2] * q[1] - w[0] * q[3]), q[3] + hw * (w[2] * q[0] + w[0] * q[2] - w[1] * q[1])};
        const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] + n[3] * n[3]);
        for (double& e : n) e /= len;
        b.q = n;
    }
    for (std::uint32_t cell : cells.drag) cells.mark[cell] = 0;
}

template void body_loads_and_motion<float>(std::vector<ShallowBody>&, const ShallowWaterGrid<float>&, const BodyCoupling&,
                                           double, std::vector<float>&, std::vector<float>&, BodyCells&);
template void body_loads_and_motion<double>(std::vector<ShallowBody>&, const ShallowWaterGrid<double>&, const BodyCoupling&,
                                            double, std::vector<double>&, std::vector<double>&, BodyCells&);

}  // namespace eddy::shallow_detail
