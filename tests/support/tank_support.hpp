// A 2D tank of water at rest: the pressure at given depths against rho0 g d. Shared by the WCSPH and
// DFSPH tank tests (tests/validation) and the eddy-tank-at-rest tool (bench/tank_at_rest.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "eddy/particles.hpp"

namespace eddy::test {

struct BandPressure {
    double deviation = 0.0;  ///< mean p over the band / (rho0 g d) - 1, each particle's p referred to the band's depth
    double count = 0.0;      ///< particles in the band
};

/// The pressure of the particles at each depth of `bands` (m), within 2r of it and at least 5 cm from
/// the side walls of a tank `width` wide. Depth is by mass: the particles above (half of the particle
/// itself) times m, over the width, over rho0, so that the top rows' settling (1-3 mm) does not count.
inline std::vector<BandPressure> band_pressures(const ParticleSet<2>& f, double width, double r, double rho0, double g,
                                                std::span<const double> bands) {
    std::vector<double> ys(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) ys[i] = f.position[i][1];
    std::sort(ys.begin(), ys.end());
    std::vector<double> sum(bands.size(), 0.0);
    std::vector<BandPressure> out(bands.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
        const double x = f.position[i][0], y = f.position[i][1];
        if (x < 0.05 || x > width - 0.05) continue;
        const double above = double(ys.end() - std::upper_bound(ys.begin(), ys.end(), y)) + 0.5;
        const double d = above * f.mass / (rho0 * width);
        for (std::size_t b = 0; b < bands.size(); ++b)
            if (std::abs(d - bands[b]) < 2.0 * r) {
                sum[b] += f.pressure[i] - rho0 * g * (d - bands[b]);  // referred to the band's depth
                out[b].count += 1.0;
            }
    }
    for (std::size_t b = 0; b < bands.size(); ++b)
        if (out[b].count > 0.0) out[b].deviation = sum[b] / out[b].count / (rho0 * g * bands[b]) - 1.0;
    return out;
}

}  // namespace eddy::test
