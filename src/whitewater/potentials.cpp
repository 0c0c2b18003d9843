// Whitewater, pass 1: the potentials of every fluid particle (Ihmsen et al. 2012, section 4). A gather
// over each particle's fluid neighbours in the neighbour grid's fixed order: the same bits on any
// number of threads.
#include <algorithm>
#include <cmath>

#include "core/branchless.hpp"
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

namespace {

constexpr int kLanes = 16;  // one AVX-512 register (two AVX2) per sum

// Particle i's colour gradient g (3) and, kFast, trapped air v_diff over its neighbour list L (len
// entries), kLanes neighbours at a time, branch-free (both pieces of the kernel computed, then selected)
// so that the lane loop vectorises (gathers); lanes added in order: the same bits on any thread count.
// P, V: positions and velocities, D floats per particle.
template <int D, bool kFast>
void list_sums(const float* __restrict P, const float* __restrict V, std::size_t i, const std::uint32_t* L,
               std::uint32_t len, float inv_h, float dw_scale, float* out) {
    const float xi0 = P[D * i], xi1 = P[D * i + 1], xi2 = D == 3 ? P[D * i + D - 1] : 0.0f;
    const float vi0 = V[D * i], vi1 = V[D * i + 1], vi2 = D == 3 ? V[D * i + D - 1] : 0.0f;
    const float z3 = D == 3 ? 1.0f : 0.0f;  // 2D: the third coordinate is the second's, weighted 0
    alignas(64) float gx[kLanes] = {}, gy[kLanes] = {}, gz[kLanes] = {}, vd[kLanes] = {};
    for (std::uint32_t c0 = 0; c0 < len; c0 += kLanes) {
        const std::uint32_t n = std::min<std::uint32_t>(kLanes, len - c0);
        for (int l = 0; l < kLanes; ++l) {
            const std::size_t j = L[c0 + (std::uint32_t(l) < n ? std::uint32_t(l) : 0u)];  // a valid index; masked below
            const float dx = xi0 - P[D * j], dy = xi1 - P[D * j + 1], dz = z3 * (xi2 - P[D * j + D - 1]);
            const float d2 = dx * dx + dy * dy + dz * dz;
            // In the list, not on i (the full pass skipped d = 0): one select by bits (core/branchless.hpp).
            const float in = pick((std::uint32_t(l) < n) & (d2 > 0.0f), 1.0f, 0.0f);
            const float d = std::sqrt(d2);
            const float inv_d = in / max_of(d, 1e-30f);
            const float q = min_of(d * inv_h, 1.0f), t = 1.0f - q;
            const float inner = pick(q <= 0.5f, 1.0f, 0.0f);  // dW/dr / (6 sigma / h) of the cubic spline
            const float dw = inner * (3.0f * q * q - 2.0f * q) - (1.0f - inner) * t * t;
            const float f = dw * dw_scale * inv_d;
            gx[l] += f * dx;
            gy[l] += f * dy;
            gz[l] += f * dz;
            if constexpr (kFast) {
                // |v_ij| (1 - v^_ij . x^_ij) W~ = (|v_ij| - v_ij . x_ij / |x_ij|) (1 - |x_ij| / h): 0 at v_ij = 0
                const float ux = vi0 - V[D * j], uy = vi1 - V[D * j + 1], uz = z3 * (vi2 - V[D * j + D - 1]);
                const float vn = std::sqrt(ux * ux + uy * uy + uz * uz);
                vd[l] += (vn * in - (ux * dx + uy * dy + uz * dz) * inv_d) * t;
            }
        }
    }
    float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int l = 0; l < kLanes; ++l) {
        sums[0] += gx[l];
        sums[1] += gy[l];
        sums[2] += gz[l];
        sums[3] += vd[l];
    }
    for (int k = 0; k < 4; ++k) out[k] = sums[k];
}

}  // namespace

template <int D>
void potentials(const NeighborGrid<D>& grid, const NeighborLists* lists, std::span<const Vec<D>> pos,
                std::span<const Vec<D>> vel, float particle_radius, const WhitewaterSettings& s, const ExecContext& exec,
                WhitewaterPotentials& p) {
    const std::size_t n = pos.size();
    EDDY_ASSERT(vel.size() == n);
    p.trapped_air.assign(n, 0.0f);
    p.wave_crest.assign(n, 0.0f);
    p.kinetic.assign(n, 0.0f);
    if (n == 0) return;
    const float h = s.support(particle_radius);
    const CubicSpline<D> kernel(h);
    // A particle's volume V = (2r)^D: the colour field's gradient sum_j V grad W_ij is about 1/h at a
    // free surface and about 0 inside the fluid.
    const float volume = static_cast<float>(std::pow(2.0 * particle_radius, D));
    const float inv_h = 1.0f / h;
    const float dw_scale = kernel.sigma * inv_h * 6.0f * volume;  // dW/dr = sigma 6 / h (piece of q), times V
    static_assert(sizeof(Vec<D>) == D * sizeof(float));
    const float* P = reinterpret_cast<const float*>(pos.data());
    const float* V = reinterpret_cast<const float*>(vel.data());
    std::vector<Vec<D>> normal(n, Vec<D>::zero());

    // Kinetic energy per unit mass (eq. 6 divided by the particle's mass: the limits do not depend on the
    // particle size). Where it is below its limit nothing is generated (eq. 7 multiplies by I_k): the
    // other potentials are not needed there; a fluid that is all slow needs no neighbours at all.
    std::size_t fast = 0;
    for (std::size_t i = 0; i < n; ++i) {
        p.kinetic[i] = clamp_potential(0.5f * norm2(vel[i]), s.kinetic_min, s.kinetic_max);
        fast += p.kinetic[i] > 0.0f ? 1 : 0;
    }
    if (fast == 0) return;
    // The lists within h: the caller's (the method's, at these positions: the same lists), or searched.
    NeighborLists own;
    if (lists == nullptr) grid.find_neighbors(pos, h, true, own, exec);
    const NeighborLists& nl = lists ? *lists : own;
    EDDY_ASSERT(nl.size() == n);
    // Outward normals n^_i = -g_i / |g_i| (surface particles only) and trapped air (eq. 2):
    //   v_diff_i = sum_j |v_ij| (1 - v^_ij . x^_ij) W~(x_ij),  W~(x) = 1 - |x| / h.
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const bool slow = p.kinetic[i] == 0.0f;
        // A slow particle's normal is read only by a fast neighbour's wave crest: none, no normal.
        if (slow) {
            bool near_fast = false;
            for (const std::uint32_t j : nl[i]) near_fast = near_fast || p.kinetic[j] > 0.0f;
            if (!near_fast) return;
        }
        const auto L = nl[i];
        float sums[4];
        if (slow) list_sums<D, false>(P, V, i, L.data(), std::uint32_t(L.size()), inv_h, dw_scale, sums);
        else list_sums<D, true>(P, V, i, L.data(), std::uint32_t(L.size()), inv_h, dw_scale, sums);
        Vec<D> g;
        for (int a = 0; a < D; ++a) g[a] = sums[a];
        const float vdiff = sums[3];
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

template void potentials<2>(const NeighborGrid<2>&, const NeighborLists*, std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                            const WhitewaterSettings&, const ExecContext&, WhitewaterPotentials&);
template void potentials<3>(const NeighborGrid<3>&, const NeighborLists*, std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                            const WhitewaterSettings&, const ExecContext&, WhitewaterPotentials&);

}  // namespace ww

template <int D>
WhitewaterPotentials whitewater_potentials(std::span<const Vec<D>> pos, std::span<const Vec<D>> vel,
                                           float particle_radius, const WhitewaterSettings& s, const ExecContext& exec) {
    NeighborGrid<D> grid(s.support(particle_radius));
    if (!pos.empty()) grid.build(pos, exec);
    WhitewaterPotentials p;
    ww::potentials<D>(grid, nullptr, pos, vel, particle_radius, s, exec, p);
    return p;
}

template WhitewaterPotentials whitewater_potentials<2>(std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                                                       const WhitewaterSettings&, const ExecContext&);
template WhitewaterPotentials whitewater_potentials<3>(std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                                                       const WhitewaterSettings&, const ExecContext&);

}  // namespace eddy
