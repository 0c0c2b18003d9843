// Vorticity confinement (Fedkiw, Stam & Jensen 2001).
// (A pass of ShallowWaterSolver::step: include/eddy/shallow_water.hpp has the equations of all of them.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eddy/shallow_water.hpp"
#include "shallow/passes/passes.hpp"

namespace eddy {

using namespace shallow_detail;

// ---- vorticity confinement (Fedkiw, Stam & Jensen 2001), scaled by dx and dt as the seed notes -------
// omega = dw/dx - du/dy at cells (central differences of the cell velocities), N = grad|omega| / |.|,
// f = eps dx (N x omega) = eps dx (N_y omega, -N_x omega); faces between two wet cells get dt times the
// mean of their cells' f.
template <class Real>
void ShallowWaterSolver<Real>::vorticity_confinement(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real dry = Real(s.dry_depth) * g.dx, inv2dx = Real(0.5) / g.dx;
    Real* omega = m_a.data();
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                if (g.depth[c] <= dry) {
                    omega[c] = 0;
                    continue;
                }
                const int il = std::max(i - 1, 0), ir = std::min(i + 1, nx - 1), jl = std::max(j - 1, 0), jr = std::min(j + 1, ny - 1);
                const Real dwdx = ir > il ? (g.wc(ir, j) - g.wc(il, j)) / (Real(ir - il) * g.dx) : Real(0);
                const Real dudy = jr > jl ? (g.uc(i, jr) - g.uc(i, jl)) / (Real(jr - jl) * g.dx) : Real(0);
                omega[c] = dwdx - dudy;
            }
    });
    Real* fx = m_b.data();
    Real* fy = m_c.data();
    const Real scale = Real(s.vorticity) * g.dx;
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                const int il = std::max(i - 1, 0), ir = std::min(i + 1, nx - 1), jl = std::max(j - 1, 0), jr = std::min(j + 1, ny - 1);
                const Real gx = (std::abs(omega[g.cell(ir, j)]) - std::abs(omega[g.cell(il, j)])) * inv2dx;
                const Real gy = (std::abs(omega[g.cell(i, jr)]) - std::abs(omega[g.cell(i, jl)])) * inv2dx;
                const Real len = std::sqrt(gx * gx + gy * gy);
                if (!(len > Real(1e-12)) || omega[c] == 0) {
                    fx[c] = fy[c] = 0;
                    continue;
                }
                fx[c] = scale * (gy / len) * omega[c];
                fy[c] = -scale * (gx / len) * omega[c];
            }
    });
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny)
                for (int i = 1; i < nx; ++i) {
                    const std::size_t l = g.cell(i - 1, j), r = g.cell(i, j);
                    if (g.depth[l] > dry && g.depth[r] > dry) g.u[g.uface(i, j)] += dt * Real(0.5) * (fx[l] + fx[r]);
                }
            if (j > 0 && j < ny)
                for (int i = 0; i < nx; ++i) {
                    const std::size_t b = g.cell(i, j - 1), t = g.cell(i, j);
                    if (g.depth[b] > dry && g.depth[t] > dry) g.w[g.wface(i, j)] += dt * Real(0.5) * (fy[b] + fy[t]);
                }
        }
    });
}

template void ShallowWaterSolver<float>::vorticity_confinement(float, const ExecContext&);
template void ShallowWaterSolver<double>::vorticity_confinement(double, const ExecContext&);

}  // namespace eddy
