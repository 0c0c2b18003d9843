// Floating bodies, pass 3: the bodies displace the water, and their drag pulls it.
// (A pass of ShallowWaterSolver::step, between the height and the velocity passes; docs/bodies.md.)
//
// The depth h of a cell holds the water w and the bodies' displaced depth b: h = w + b, so that the
// velocity pass's surface eta = H + w + b feels the bodies (a dropped box raises it: waves; a moving boat
// raises it at the bow and lowers it at the stern: a wake). Per cell, with w = h - b_old (this step's
// height pass has moved the water) and each body's column [lo, hi] at its new pose:
//   b = sum over bodies of the mean over the cell's kSub^2 points of clamp(k (H + w - max(lo, H)), 0, hi - max(lo, H))
//   h' = w + b      (if w + b < 0, which only a body rising out of a column drained below it can ask,
//                    b = -w: h' = 0); the water w is untouched: sum(h - b) is kept to rounding.
// b is the pressure head of the body's underside as a stiff spring on the water below it: water above the
// underside (H + w > lo) pushes it up k times as much. An exact lid (k -> infinity) would need an
// implicit solve; k is lowered for steps whose Courant number C would make the stiffened wave speed
// sqrt(1 + k) c unstable: k <= (0.5 / C)^2 - 1 (solver.cpp). At rest eta is level, b = k / (1 + k) of the
// submerged depth, and the buoyancy (body_motion.cpp, from eta) is exactly rho g V_sub.
// Drag on the water: each face adds dt/2 times each of its two cells' ax (ay).
// Only the cells the bodies cover now or covered before are visited (BodyCells), in a fixed order.
#include <algorithm>
#include <cmath>

#include "shallow/bodies.hpp"

namespace eddy::shallow_detail {

template <class Real>
void displace_water(ShallowWaterGrid<Real>& g, const std::vector<ShallowBody>& bodies, const BodyCoupling& c, Real dt,
                    const std::vector<Real>& ax, const std::vector<Real>& ay, std::vector<Real>& scratch, BodyCells& cells) {
    const double dx = double(g.dx);
    // The new displaced depth, body by body in scene order, each over its own rectangle; the cells it
    // touches, then the cells displaced before, are listed once each (marked).
    std::vector<Real>& bn = scratch;
    std::vector<std::uint32_t> touched;
    auto touch = [&](std::size_t cell) {
        if (cells.mark[cell]) return;
        cells.mark[cell] = 1;
        touched.push_back(std::uint32_t(cell));
    };
    for (const ShallowBody& b : bodies) {
        int i0, i1, j0, j1;
        body_rect(b, g, i0, i1, j0, j1);
        const BodyFrame frame = body_frame(b);
        for (int j = j0; j < j1; ++j)
            for (int i = i0; i < i1; ++i) {
                const std::size_t cell = g.cell(i, j);
                if (g.solid[cell]) continue;
                const double H = double(g.terrain[cell]);
                const double w = double(g.depth[cell]) - double(g.displaced[cell]);
                double d = 0.0;  // the mean over the cell's sample points
                for_samples(i, j, dx, [&](double x, double y) {
                    double lo, hi;
                    if (!body_column(b, frame, x, y, lo, hi)) return;
                    const double bottom = std::max(lo, H);
                    d += std::clamp(c.stiffness * (H + w - bottom), 0.0, std::max(0.0, hi - bottom));
                });
                if (d > 0.0) {
                    bn[cell] = Real(double(bn[cell]) + d / (kSub * kSub));
                    touch(cell);
                }
            }
    }
    for (std::uint32_t cell : cells.displaced) touch(cell);
    cells.displaced.clear();
    for (std::uint32_t cell : touched) {
        const Real old = g.displaced[cell], now = bn[cell];
        const Real w = g.depth[cell] - old;
        if (w + now < 0) {
            g.displaced[cell] = -w;
            g.depth[cell] = 0;
        } else {
            g.displaced[cell] = now;
            g.depth[cell] = w + now;
        }
        if (g.displaced[cell] != 0) cells.displaced.push_back(cell);
        bn[cell] = 0;
        cells.mark[cell] = 0;
    }
    // The drag on the water: each listed cell gives dt ax / 2 to its two x-faces and dt ay / 2 to its two
    // y-faces (faces between two water cells; walls and borders keep theirs), in the list's fixed order.
    const int nx = g.nx, ny = g.ny;
    const Real half = Real(0.5) * dt;
    for (std::uint32_t cell : cells.drag) {
        const int i = int(cell % std::uint32_t(nx)), j = int(cell / std::uint32_t(nx));
        if (ax[cell] != 0) {
            if (i > 0 && !g.solid[cell - 1]) g.u[g.uface(i, j)] += half * ax[cell];
            if (i + 1 < nx && !g.solid[cell + 1]) g.u[g.uface(i + 1, j)] += half * ax[cell];
        }
        if (ay[cell] != 0) {
            if (j > 0 && !g.solid[cell - nx]) g.w[g.wface(i, j)] += half * ay[cell];
            if (j + 1 < ny && !g.solid[cell + nx]) g.w[g.wface(i, j + 1)] += half * ay[cell];
        }
    }
}

template void displace_water<float>(ShallowWaterGrid<float>&, const std::vector<ShallowBody>&, const BodyCoupling&, float,
                                     const std::vector<float>&, const std::vector<float>&, std::vector<float>&, BodyCells&);
template void displace_water<double>(ShallowWaterGrid<double>&, const std::vector<ShallowBody>&, const BodyCoupling&, double,
                                      const std::vector<double>&, const std::vector<double>&, std::vector<double>&, BodyCells&);

}  // namespace eddy::shallow_detail
