// Whitewater, pass 1: the potentials of every fluid particle (Ihmsen et al. 2012, section 4). A gather
// over each particle's fluid neighbours in the neighbour grid's fixed order: the same bits on any
// number of threads.
#include <algorithm>
#include <cmath>

#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/whitewater.hpp"
#include "whitewater/internal.hpp"

namespace eddy {

namespace ww {

// Phi(I, tau_min, tau_max) = (min(I, tau_max) - min(I, tau_min)) / (tau_max - tau_min)  (eq. 1)
float clamp_potential(float i, float lo, float hi) {
    return (std::min(i, hi) - std::min(i, lo)) / (hi - lo);
}

}  // namespace ww

namespace ww {

template <int D>
void potentials(const NeighborGrid<D>& grid, std::span<const Vec<D>> pos, std::span<const Vec<D>> vel,
                float particle_radius, const WhitewaterSettings& s, const ExecContext& exec, WhitewaterPotentials& p) {
    const std::size_t n = pos.size();
    EDDY_ASSERT(vel.size() == n);
    p.trapped_air.assign(n, 0.0f);
    p.wave_crest.assign(n, 0.0f);
    p.kinetic.assign(n, 0.0f);
    if (n == 0) return;
    const float h = s.support(particle_radius);
    NeighborLists nl;
    grid.find_neighbors(pos, h, true, nl, exec);
    const CubicSpline<D> kernel(h);
    // A particle's volume V = (2r)^D: the colour field's gradient sum_j V grad W_ij is about 1/h at a
    // free surface and about 0 inside the fluid.
    const float volume = static_cast<float>(std::pow(2.0 * particle_radius, D));
    const float inv_h = 1.0f / h;
    std::vector<Vec<D>> normal(n, Vec<D>::zero());

    // Outward normals n^_i = -g_i / |g_i| (surface particles only) and trapped air (eq. 2):
    //   v_diff_i = sum_j |v_ij| (1 - v^_ij . x^_ij) W~(x_ij),  W~(x) = 1 - |x| / h.
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        // Kinetic energy per unit mass (eq. 6 divided by the particle's mass: the limits do not depend
        // on the particle size). Where it is below its limit nothing is generated (eq. 7 multiplies by
        // I_k): the other potentials are not needed there.
        p.kinetic[i] = clamp_potential(0.5f * norm2(vel[i]), s.kinetic_min, s.kinetic_max);
        const bool slow = p.kinetic[i] == 0.0f;
        Vec<D> g = Vec<D>::zero();
        float vdiff = 0.0f;
        for (const std::uint32_t j : nl[i]) {
            const Vec<D> xij = pos[i] - pos[j];
            const float d = norm(xij);
            if (!(d > 0.0f)) continue;
            g += kernel.derivative(d) * volume / d * xij;
            if (!slow) {
                const Vec<D> vij = vel[i] - vel[j];
                const float vn = norm(vij);
                if (vn > 0.0f) vdiff += vn * (1.0f - dot(vij, xij) / (vn * d)) * (1.0f - d * inv_h);
            }
        }
        const float gn = norm(g);
        if (gn * h >= s.normal_threshold && gn > 0.0f) normal[i] = (-1.0f / gn) * g;
        p.trapped_air[i] = slow ? 0.0f : clamp_potential(vdiff, s.trapped_air_min, s.trapped_air_max);
    });

    // Wave crests (eqs. 3-5): kappa_i = sum_j (1 - n^_i . n^_j) W~(x_ij) over surface neighbours j behind
    // i's surface (x^_ji . n^_i < 0), kept where i moves along its normal (v^_i . n^_i >= 0.6).
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const Vec<D>& ni = normal[i];
        if (norm2(ni) == 0.0f || p.kinetic[i] == 0.0f) return;
        const float vn = norm(vel[i]);
        if (!(vn > 0.0f) || dot(vel[i], ni) < s.crest_alignment * vn) return;
        float kappa = 0.0f;
        for (const std::uint32_t j : nl[i]) {
            const Vec<D>& nj = normal[j];
            if (norm2(nj) == 0.0f) continue;
            const Vec<D> xji = pos[j] - pos[i];
            if (!(dot(xji, ni) < 0.0f)) continue;
            const float d = norm(xji);
            kappa += (1.0f - dot(ni, nj)) * (1.0f - d * inv_h);
        }
        p.wave_crest[i] = clamp_potential(kappa, s.wave_crest_min, s.wave_crest_max);
    });
}

template void potentials<2>(const NeighborGrid<2>&, std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                            const WhitewaterSettings&, const ExecContext&, WhitewaterPotentials&);
template void potentials<3>(const NeighborGrid<3>&, std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                            const WhitewaterSettings&, const ExecContext&, WhitewaterPotentials&);

}  // namespace ww

template <int D>
WhitewaterPotentials whitewater_potentials(std::span<const Vec<D>> pos, std::span<const Vec<D>> vel,
                                           float particle_radius, const WhitewaterSettings& s, const ExecContext& exec) {
    NeighborGrid<D> grid(s.support(particle_radius));
    if (!pos.empty()) grid.build(pos, exec);
    WhitewaterPotentials p;
    ww::potentials<D>(grid, pos, vel, particle_radius, s, exec, p);
    return p;
}

template WhitewaterPotentials whitewater_potentials<2>(std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                                                       const WhitewaterSettings&, const ExecContext&);
template WhitewaterPotentials whitewater_potentials<3>(std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                                                       const WhitewaterSettings&, const ExecContext&);

}  // namespace eddy
