// Floating bodies, pass 2: bodies stay on the grid and above its terrain.
// (A pass of ShallowWaterSolver::step; docs/bodies.md, "Shallow water".)
//
// Borders: a body's centre is clamped to the grid inset by its horizontal reach (the radius of its
// bounding sphere; the centre of the grid when the grid is narrower), and its velocity towards the border
// is dropped: it stops there (an open border lets the water go, not the bodies). Terrain: where a body's
// column reaches below the bed (H > lo) it is lifted by the deepest such reach and its downward velocity
// dropped: a positional support with no friction and no torque (the bodies' contacts with the ground and
// with each other are not modelled; docs/bodies.md).
#include <algorithm>
#include <cmath>

#include "shallow/bodies.hpp"

namespace eddy::shallow_detail {

template <class Real>
void keep_bodies_on_grid(std::vector<ShallowBody>& bodies, const ShallowWaterGrid<Real>& g) {
    const double dx = double(g.dx);
    const double L[2] = {g.nx * dx, g.ny * dx};
    for (ShallowBody& b : bodies) {
        const double reach = std::sqrt(b.half[0] * b.half[0] + b.half[1] * b.half[1] + b.half[2] * b.half[2]);
        const double r = std::min(reach, b.bound);
        for (int a = 0; a < 2; ++a) {
            const double lo = std::min(r, 0.5 * L[a]), hi = std::max(L[a] - r, 0.5 * L[a]);
            if (b.x[a] < lo) {
                b.x[a] = lo;
                b.v[a] = std::max(b.v[a], 0.0);
            } else if (b.x[a] > hi) {
                b.x[a] = hi;
                b.v[a] = std::min(b.v[a], 0.0);
            }
        }
        int i0, i1, j0, j1;
        body_rect(b, g, i0, i1, j0, j1);
        double lift = 0.0;
        for (int j = j0; j < j1; ++j)
            for (int i = i0; i < i1; ++i) {
                double lo, hi;
                if (!body_column(b, (i + 0.5) * dx, (j + 0.5) * dx, lo, hi)) continue;
                lift = std::max(lift, double(g.terrain[g.cell(i, j)]) - lo);
            }
        if (lift > 0.0) {
            b.x[2] += lift;
            b.v[2] = std::max(b.v[2], 0.0);
        }
    }
}

template void keep_bodies_on_grid<float>(std::vector<ShallowBody>&, const ShallowWaterGrid<float>&);
template void keep_bodies_on_grid<double>(std::vector<ShallowBody>&, const ShallowWaterGrid<double>&);

}  // namespace eddy::shallow_detail
