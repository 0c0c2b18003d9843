// Advection: the seed's direct scheme (first-order upwind).
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

// ---- advection: the seed's direct discretisation, first-order upwind ---------------------------------
// u_t = -(u u_x + w u_y) at x-faces (w averaged from the 4 nearest y-faces), likewise w at y-faces and
// ink at cells; differences taken on the upwind side, zero where that side is past the border. Scaled by
// step * blend like the gather, so that the two agree to first order.
template <class Real>
void ShallowWaterSolver<Real>::advect_upwind(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real k = Real(s.advection_step) * Real(s.advection_blend) * dt / g.dx;
    auto U = [&](int i, int j) { return g.u[g.uface(i, j)]; };
    auto W = [&](int i, int j) { return g.w[g.wface(i, j)]; };
    auto upwind = [](Real vel, Real minus, Real here, Real plus, bool has_minus, bool has_plus) -> Real {
        if (vel > 0) return has_minus ? here - minus : Real(0);
        return has_plus ? plus - here : Real(0);
    };
    const bool no_ink = ink_idle(exec, g.ink);
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny) {
                for (int i = 0; i <= nx; ++i) {
                    const Real uf = U(i, j);
                    const int il = std::max(i - 1, 0), ir = std::min(i, nx - 1);
                    const Real wf = Real(0.25) * (W(il, j) + W(ir, j) + W(il, j + 1) + W(ir, j + 1));
                    const Real dudx = upwind(uf, i > 0 ? U(i - 1, j) : 0, uf, i < nx ? U(i + 1, j) : 0, i > 0, i < nx);
                    const Real dudy = upwind(wf, j > 0 ? U(i, j - 1) : 0, uf, j + 1 < ny ? U(i, j + 1) : 0, j > 0, j + 1 < ny);
                    m_u2[g.uface(i, j)] = uf - k * (uf * dudx + wf * dudy);
                }
            }
            for (int i = 0; i < nx; ++i) {
                const Real wf = W(i, j);
                const int jl = std::max(j - 1, 0), jr = std::min(j, ny - 1);
                const Real uf = Real(0.25) * (U(i, jl) + U(i + 1, jl) + U(i, jr) + U(i + 1, jr));
                const Real dwdx = upwind(uf, i > 0 ? W(i - 1, j) : 0, wf, i + 1 < nx ? W(i + 1, j) : 0, i > 0, i + 1 < nx);
                const Real dwdy = upwind(wf, j > 0 ? W(i, j - 1) : 0, wf, j < ny ? W(i, j + 1) : 0, j > 0, j < ny);
                m_w2[g.wface(i, j)] = wf - k * (uf * dwdx + wf * dwdy);
            }
            if (j < ny && !no_ink) {
                const Real* ink = g.ink.data();
                upwind_ink_row(nx, k, ink + std::size_t(j) * nx, ink + std::size_t(j > 0 ? j - 1 : j) * nx,
                               ink + std::size_t(j + 1 < ny ? j + 1 : j) * nx, &g.u[g.uface(0, j)], &g.w[g.wface(0, j)],
                               &g.w[g.wface(0, j + 1)], &m_c[g.cell(0, j)]);
            }
        }
    });
    g.u.swap(m_u2);
    g.w.swap(m_w2);
    if (!no_ink) g.ink.swap(m_c);
}

template void ShallowWaterSolver<float>::advect_upwind(float, const ExecContext&);
template void ShallowWaterSolver<double>::advect_upwind(double, const ExecContext&);

}  // namespace eddy
