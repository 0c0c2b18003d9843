// Floating bodies, pass 3: the bodies displace the water, and their drag pulls it.
// (A pass of ShallowWaterSolver::step, between the height and the velocity passes; docs/bodies.md.)
//
// The depth h of a cell holds the water w and the bodies' displaced depth b: h = w + b, so that the
// velocity pass's surface eta = H + w + b feels the bodies (a dropped box raises it: waves; a moving boat
// raises it at the bow and lowers it at the stern: a wake). Per cell, with w = h - b_old (this step's
// height pass has moved the water) and each body's column [lo, hi] at its new pose:
//   b = sum over bodies of clamp(k (H + w - max(lo, H)), 0, hi - max(lo, H))
//   h' = w + b      (if w + b < 0, which only a body rising out of a column drained below it can ask,
//                    b = -w: h' = 0); the water w is untouched: sum(h - b) is kept to rounding.
// b is the pressure head of the body's underside as a stiff spring on the water below it: water above the
// underside (H + w > lo) pushes it up k times as much. An exact lid (k -> infinity) would need an
// implicit solve; k is lowered for steps whose Courant number C would make the stiffened wave speed
// sqrt(1 + k) c unstable: k <= (0.5 / C)^2 - 1 (solver.cpp). At rest eta is level, b = k / (1 + k) of the
// submerged depth, and the buoyancy (body_motion.cpp, from eta) is exactly rho g V_sub.
// Drag on the water: each face adds dt times the mean of its two cells' ax (ay): a gather.
#include <algorithm>
#include <cmath>

#include "shallow/bodies.hpp"
#include "shallow/passes/passes.hpp"

namespace eddy::shallow_detail {

template <class Real>
void displace_water(ShallowWaterGrid<Real>& g, const std::vector<ShallowBody>& bodies, const BodyCoupling& c, Real dt,
                    const std::vector<Real>& ax, const std::vector<Real>& ay, std::vector<Real>& scratch,
                    const ExecContext& exec, int rows_per_task) {
    const double dx = double(g.dx);
    // The new displaced depth, body by body in scene order, each over its own rectangle.
    std::vector<Real>& bn = scratch;
    std::fill(bn.begin(), bn.end(), Real(0));
    for (const ShallowBody& b : bodies) {
        int i0, i1, j0, j1;
        body_rect(b, g, i0, i1, j0, j1);
        for (int j = j0; j < j1; ++j)
            for (int i = i0; i < i1; ++i) {
                const std::size_t cell = g.cell(i, j);
                if (g.solid[cell]) continue;
                double lo, hi;
                if (!body_column(b, (i + 0.5) * dx, (j + 0.5) * dx, lo, hi)) continue;
                const double H = double(g.terrain[cell]);
                const double w = double(g.depth[cell]) - double(g.displaced[cell]);
                const double bottom = std::max(lo, H);
                const double d = std::clamp(c.stiffness * (H + w - bottom), 0.0, std::max(0.0, hi - bottom));
                bn[cell] = Real(double(bn[cell]) + d);
            }
    }
    const int nx = g.nx, ny = g.ny;
    for_rows(exec, ny, rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t cell = g.cell(i, j);
                const Real old = g.displaced[cell], now = bn[cell];
                if (old == 0 && now == 0) continue;
                const Real w = g.depth[cell] - old;
                if (w + now < 0) {
                    g.displaced[cell] = -w;
                    g.depth[cell] = 0;
                } else {
                    g.displaced[cell] = now;
                    g.depth[cell] = w + now;
                }
            }
    });
    // The drag on the water, on the faces between two water cells (walls and borders keep theirs).
    for_rows(exec, ny, rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 1; i < nx; ++i) {
                const std::size_t l = g.cell(i - 1, j), r = g.cell(i, j);
                const Real a = ax[l] + ax[r];
                if (a != 0 && !g.solid[l] && !g.solid[r]) g.u[g.uface(i, j)] += Real(0.5) * dt * a;
            }
    });
    for_rows(exec, ny - 1, rows_per_task, [&](int j0, int j1) {
        for (int j = j0 + 1; j < j1 + 1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t l = g.cell(i, j - 1), r = g.cell(i, j);
                const Real a = ay[l] + ay[r];
                if (a != 0 && !g.solid[l] && !g.solid[r]) g.w[g.wface(i, j)] += Real(0.5) * dt * a;
            }
    });
}

template void displace_water<float>(ShallowWaterGrid<float>&, const std::vector<ShallowBody>&, const BodyCoupling&, float,
                                     const std::vector<float>&, const std::vector<float>&, std::vector<float>&,
                                     const ExecContext&, int);
template void displace_water<double>(ShallowWaterGrid<double>&, const std::vector<ShallowBody>&, const BodyCoupling&, double,
                                      const std::vector<double>&, const std::vector<double>&, std::vector<double>&,
                                      const ExecContext&, int);

}  // namespace eddy::shallow_detail
