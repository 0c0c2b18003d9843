// Test support for the smooth walls (eddy/smooth_walls.hpp, eddy/volume_map.hpp): what the virtual particles
// add up to for the one fluid particle they were built for.
#pragma once
#include <cstdint>

#include "eddy/smooth_walls.hpp"

namespace eddy::test {

/// The virtual particles' density at x (of the one particle vw was built for) and, when asked, its gradient.
template <int D>
double virtual_density(const VirtualWalls<D>& vw, const CubicSpline<D>& W, const Vec<D>& x, Vec<D>* grad = nullptr) {
    double rho = 0.0;
    Vec<D> gsum = Vec<D>::zero();
    for (std::uint32_t k : vw.lists[0]) {
        const Vec<D> d = x - vw.set.position[k];
        const float len = norm(d);
        rho += vw.set.psi[k] * W.value(len);
        if (len > 0.0f) gsum += d * (vw.set.psi[k] * W.derivative(len) / len);
    }
    if (grad) *grad = gsum;
    return rho;
}

}  // namespace eddy::test
