// Advection: the seed's gather (semi-Lagrangian).
// (A pass of ShallowWaterSolver::step: include/eddy/shallow_water.hpp has the equations of all of them.)
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eddy/shallow_water.hpp"
#include "shallow/passes/passes.hpp"

namespace eddy {

using namespace shallow_detail;

// ---- advection: the seed's gather (semi-Lagrangian) --------------------------------------------------
// Pass 1: cell velocity from the faces (mean of the two faces). Pass 2: per cell, a 3x3 weighted mean of
// the cell velocities (1-2-1 weights, cells past the border left out) traced back by
// step * dt; the cell velocity and ink there (bilinear) replace the cell's, blended by `blend`; a
// back-trace leaving the domain leaves the cell as it is (the seed's border rule). Pass 3: each face
// takes the mean change of its two cells, so that without pass 2 the faces are exactly unchanged (the
// seed's check that passes 1 and 3 are inverse).
template <class Real>
void ShallowWaterSolver<Real>::advect_semi_lagrangian(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real trace = Real(s.advection_step) * dt / g.dx, blend = Real(s.advection_blend);
    Real* du = m_a.data();
    Real* dw = m_b.data();
    Real* ink2 = m_c.data();
    const GridBlock& b = m_block;
    const int gnx = b.global_nx, gny = b.global_ny;
    auto owned = [&](int i, int j) { return i >= b.own_i0 && i < b.own_i1 && j >= b.own_j0 && j < b.own_j1; };
    std::atomic<std::size_t> overruns{0};
    const bool no_ink = ink_idle(exec, g.ink);
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        std::size_t overrun = 0;
        for (int j = j0; j < j1; ++j) {
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                du[c] = 0;
                dw[c] = 0;
                if (!no_ink) ink2[c] = g.ink[c];  // no ink: the field is kept, not swapped
                if (g.solid[c]) continue;
                Real su = 0, sw = 0, sum = 0;
                for (int b = -1; b <= 1; ++b) {
                    const int jj = j + b;
                    if (jj < 0 || jj >= ny) continue;
                    for (int a = -1; a <= 1; ++a) {
                        const int ii = i + a;
                        if (ii < 0 || ii >= nx) continue;
                        const Real wgt = Real((2 - std::abs(a)) * (2 - std::abs(b)));
                        su += wgt * g.uc(ii, jj);
                        sw += wgt * g.wc(ii, jj);
                        sum += wgt;
                    }
                }
                // In the whole grid's cell coordinates (a block: the same bits as the whole grid's pass).
                const Real px = Real(i + b.i0) + Real(0.5) - trace * su / sum, py = Real(j + b.j0) + Real(0.5) - trace * sw / sum;
                if (!(px >= 0 && px <= Real(gnx) && py >= 0 && py <= Real(gny))) continue;  // upstream is outside: skip
                const Real fx = std::clamp(px - Real(0.5), Real(0), Real(gnx - 1));
                const Real fy = std::clamp(py - Real(0.5), Real(0), Real(gny - 1));
                const int gx0 = std::min(int(fx), gnx - 1), gy0 = std::min(int(fy), gny - 1);
                const Real tx = fx - Real(gx0), ty = fy - Real(gy0);
                // The four cells read, in this grid; past its edge only in a block's halo (counted when owned).
                const int lx0 = gx0 - b.i0, ly0 = gy0 - b.j0;
                const int lx1 = std::min(gx0 + 1, gnx - 1) - b.i0, ly1 = std::min(gy0 + 1, gny - 1) - b.j0;
                if (lx0 < 0 || ly0 < 0 || lx1 >= nx || ly1 >= ny) {
                    if (owned(i, j)) ++overrun;
                    continue;
                }
                const int x0 = lx0, y0 = ly0, x1 = lx1, y1 = ly1;
                auto lerp2 = [&](auto&& q) {
                    return (1 - ty) * ((1 - tx) * q(x0, y0) + tx * q(x1, y0)) + ty * ((1 - tx) * q(x0, y1) + tx * q(x1, y1));
                };
                const Real u_up = lerp2([&](int a, int b) { return g.uc(a, b); });
                const Real w_up = lerp2([&](int a, int b) { return g.wc(a, b); });
                du[c] = blend * (u_up - g.uc(i, j));
                dw[c] = blend * (w_up - g.wc(i, j));
                if (!no_ink) {
                    const Real ink_up = lerp2([&](int a, int b) { return g.ink[g.cell(a, b)]; });
                    ink2[c] = g.ink[c] + blend * (ink_up - g.ink[c]);
                }
            }
        }
        if (overrun) overruns += overrun;
    });
    m_halo_overrun += overruns.load();
    // Faces: row j holds the x-faces of cell row j (j < ny) and the y-faces below cell row j.
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny) {
                Real* u = &g.u[g.uface(0, j)];
                const Real* d = &du[g.cell(0, j)];
                u[0] += d[0];
                for (int i = 1; i < nx; ++i) u[i] += Real(0.5) * (d[i - 1] + d[i]);
                u[nx] += d[nx - 1];
            }
            Real* w = &g.w[g.wface(0, j)];
            if (j == 0) {
                for (int i = 0; i < nx; ++i) w[i] += dw[g.cell(i, 0)];
            } else if (j == ny) {
                for (int i = 0; i < nx; ++i) w[i] += dw[g.cell(i, ny - 1)];
            } else {
                const Real* lo = &dw[g.cell(0, j - 1)];
                const Real* hi = &dw[g.cell(0, j)];
                for (int i = 0; i < nx; ++i) w[i] += Real(0.5) * (lo[i] + hi[i]);
            }
        }
    });
    if (!no_ink) g.ink.swap(m_c);
}

template void ShallowWaterSolver<float>::advect_semi_lagrangian(float, const ExecContext&);
template void ShallowWaterSolver<double>::advect_semi_lagrangian(double, const ExecContext&);

}  // namespace eddy
