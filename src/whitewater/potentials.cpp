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

// The sorted fluid's arrays and constants of the lane sums below.
struct LaneArrays {
    const float* x0;
    const float* x1;
    const float* x2;
    const float* v0;
    const float* v1;
    const float* v2;
    float z3, h2, inv_h, dw_scale;
};

// Sorted particle si's sums over the runs (pairs s0, s1) around its cell, kLanes at a time: the colour
// gradient g (3) and, kFast, the trapped air v_diff; written out flat (one array per sum, restrict
// pointers) so that the lane loop vectorises. Lanes added in order: the same bits on any thread count.
template <bool kFast>
void normal_sums(const LaneArrays& A, std::uint32_t si, const std::uint32_t* runs, int m, float* out) {
    const float* __restrict x0 = A.x0;
    const float* __restrict x1 = A.x1;
    const float* __restrict x2 = A.x2;
    const float* __restrict v0 = A.v0;
    const float* __restrict v1 = A.v1;
    const float* __restrict v2 = A.v2;
    const float z3 = A.z3, h2 = A.h2, inv_h = A.inv_h, dw_scale = A.dw_scale;
    const float xi0 = x0[si], xi1 = x1[si], xi2 = x2[si], vi0 = v0[si], vi1 = v1[si], vi2 = v2[si];
    alignas(64) float gx[kLanes] = {}, gy[kLanes] = {}, gz[kLanes] = {}, vd[kLanes] = {};
    for (int r = 0; r < m; ++r) {
        const std::uint32_t s0 = runs[2 * r], s1 = runs[2 * r + 1];
        for (std::uint32_t j0 = s0; j0 < s1; j0 += kLanes) {
            const std::uint32_t len = std::min<std::uint32_t>(kLanes, s1 - j0);
            float dx[kLanes], dy[kLanes], dz[kLanes], f[kLanes], u[kLanes];
            for (int l = 0; l < kLanes; ++l) {
                const std::uint32_t j = j0 + (std::uint32_t(l) < len ? l : 0);  // a valid index; masked below
                dx[l] = xi0 - x0[j];
                dy[l] = xi1 - x1[j];
                dz[l] = z3 * (xi2 - x2[j]);
                const float d2 = dx[l] * dx[l] + dy[l] * dy[l] + dz[l] * dz[l];
                // Within h, in the run, not i itself (nor a particle on it): two tests and a factor (three
                // tests in one condition keep the loop from vectorising).
                const float in = ((d2 < h2 && std::uint32_t(l) < len) ? 1.0f : 0.0f) * (d2 > 0.0f ? 1.0f : 0.0f);
                const float d = std::sqrt(d2);
                const float inv_d = in / std::max(d, 1e-30f);
                const float q = std::min(d * inv_h, 1.0f), t = 1.0f - q;
                const float inner = q <= 0.5f ? 1.0f : 0.0f;  // dW/dr / (6 sigma / h), both pieces, selected
                const float dw = inner * (3.0f * q * q - 2.0f * q) - (1.0f - inner) * t * t;
                f[l] = dw * dw_scale * inv_d;
                if constexpr (kFast) {
                    const float ux = vi0 - v0[j], uy = vi1 - v1[j], uz = z3 * (vi2 - v2[j]);
                    const float vn = std::sqrt(ux * ux + uy * uy + uz * uz);
                    u[l] = (vn * in - (ux * dx[l] + uy * dy[l] + uz * dz[l]) * inv_d) * t;
                } else {
                    u[l] = 0.0f;
                }
            }
            for (int l = 0; l < kLanes; ++l) {
                gx[l] += f[l] * dx[l];
                gy[l] += f[l] * dy[l];
                gz[l] += f[l] * dz[l];
                vd[l] += u[l];
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

// The work is kept to where a potential can be non-zero; the numbers are those of the full passes:
// - generation multiplies by I_k (eq. 7): trapped air and wave crests are computed only for fast
//   particles (|v|^2 / 2 above kinetic_min);
// - a wave crest reads its neighbours' normals: normals are computed only for particles in the 3^D
//   cells around a cell that holds a fast particle (every neighbour within h of a fast one is there);
// - the fluid sorted by cell (FluidGrid): cell by cell, each particle's neighbours are a few runs of
//   contiguous memory, summed kLanes at a time without branches (lane sums added in lane order).
// A still or slow fluid costs one pass over the velocities.
template <int D>
void potentials(const FluidGrid<D>& grid, std::span<const Vec<D>> pos, std::span<const Vec<D>> vel,
                float particle_radius, const WhitewaterSettings& s, const ExecContext& exec, WhitewaterPotentials& p) {
    const std::size_t n = pos.size();
    EDDY_ASSERT(vel.size() == n && grid.size() == n);
    p.trapped_air.assign(n, 0.0f);
    p.wave_crest.assign(n, 0.0f);
    p.kinetic.assign(n, 0.0f);
    if (n == 0) return;
    const float h = s.support(particle_radius);
    EDDY_ASSERT(h <= grid.h * (1.0f + 1e-6f));
    const CubicSpline<D> kernel(h);
    // A particle's volume V = (2r)^D: the colour field's gradient sum_j V grad W_ij is about 1/h at a
    // free surface and about 0 inside the fluid.
    const float volume = static_cast<float>(std::pow(2.0 * particle_radius, D));
    const float inv_h = 1.0f / h, h2 = h * h;
    const float dw_in = kernel.sigma * inv_h * 6.0f, dw_scale = dw_in * volume;

    // Kinetic energy per unit mass (eq. 6 divided by the particle's mass: the limits do not depend on
    // the particle size). Where it is below its limit nothing is generated (eq. 7 multiplies by I_k).
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        p.kinetic[i] = clamp_potential(0.5f * norm2(vel[i]), s.kinetic_min, s.kinetic_max);
    });
    // fast_before[k]: fast particles among the first k sorted ones.
    std::vector<std::uint32_t> fast_before(n + 1, 0);
    for (std::size_t k = 0; k < n; ++k) fast_before[k + 1] = fast_before[k] + (p.kinetic[grid.order[k]] > 0.0f ? 1u : 0u);
    if (fast_before[n] == 0) return;

    // Normals, sorted order, padded with kLanes zeros (no normal).
    std::vector<float> nrm[D];
    for (int a = 0; a < D; ++a) nrm[a].assign(n + kLanes, 0.0f);
    const auto& xs = grid.x;  // sorted, padded
    const auto& vs = grid.v;
    const std::size_t cells = grid.keys.size();
    using Runs = std::array<std::array<std::uint32_t, 2>, FluidGrid<D>::kRuns>;

    const float* X[3] = {xs[0].data(), xs[1].data(), xs[D - 1].data()};
    const float* V[3] = {vs[0].data(), vs[1].data(), vs[D - 1].data()};
    const float z3 = D == 3 ? 1.0f : 0.0f;  // 2D: the third axis is the second's copy, weighted 0

    // Outward normals n^_i = -g_i / |g_i| (surface particles only), g_i = sum_j V grad W_ij, and trapped
    // air (eq. 2): v_diff_i = sum_j |v_ij| (1 - v^_ij . x^_ij) W~(x_ij),  W~(x) = 1 - |x| / h, written
    // |v_ij| - v_ij . x_ij / |x_ij| (the same, and 0 at v_ij = 0). Lane sums: g (3), v_diff.
    const LaneArrays arrays{X[0], X[1], X[2], V[0], V[1], V[2], z3, h2, inv_h, dw_scale};
    auto gather = [&]<bool kFast>(std::uint32_t si, const Runs& runs, int m, float* out) {
        normal_sums<kFast>(arrays, si, runs.data()->data(), m, out);
    };
    parallel_for_each_index(exec, cells, [&](std::size_t c) {
        const std::uint32_t b = grid.starts[c], e = grid.starts[c + 1];
        Runs runs;
        const int m = grid.runs(grid.cell_of(pos[grid.order[b]]), runs);
        std::uint32_t near = 0;
        for (int r = 0; r < m; ++r) near += fast_before[runs[r][1]] - fast_before[runs[r][0]];
        if (near == 0) return;
        for (std::uint32_t si = b; si < e; ++si) {
            const std::uint32_t i = grid.order[si];
            const bool fast = p.kinetic[i] > 0.0f;
            float out[4] = {0, 0, 0, 0};
            if (fast) gather.template operator()<true>(si, runs, m, out);
            else gather.template operator()<false>(si, runs, m, out);
            Vec<D> g;
            for (int a = 0; a < D; ++a) g[a] = out[a];
            const float gn = norm(g);
            if (gn * h >= s.normal_threshold && gn > 0.0f)
                for (int a = 0; a < D; ++a) nrm[a][si] = -g[a] / gn;
            if (fast) p.trapped_air[i] = clamp_potential(out[3], s.trapped_air_min, s.trapped_air_max);
        }
    });

    // Wave crests (eqs. 3-5): kappa_i = sum_j (1 - n^_i . n^_j) W~(x_ij) over surface neighbours j behind
    // i's surface (x^_ji . n^_i < 0), kept where i moves along its normal (v^_i . n^_i >= 0.6).
    const float* N[3] = {nrm[0].data(), nrm[1].data(), nrm[D - 1].data()};
    parallel_for_each_index(exec, cells, [&](std::size_t c) {
        const std::uint32_t b = grid.starts[c], e = grid.starts[c + 1];
        if (fast_before[e] == fast_before[b]) return;
        Runs runs;
        int m = -1;
        for (std::uint32_t si = b; si < e; ++si) {
            const std::uint32_t i = grid.order[si];
            if (!(p.kinetic[i] > 0.0f)) continue;
            const float ni[3] = {N[0][si], N[1][si], z3 * N[2][si]}, xi[3] = {X[0][si], X[1][si], X[2][si]};
            const float n2 = ni[0] * ni[0] + ni[1] * ni[1] + ni[2] * ni[2];
            if (n2 == 0.0f) continue;
            const float vn = norm(vel[i]);
            float vdotn = 0.0f;
            for (int a = 0; a < D; ++a) vdotn += vel[i][a] * nrm[a][si];
            if (!(vn > 0.0f) || vdotn < s.crest_alignment * vn) continue;
            if (m < 0) m = grid.runs(grid.cell_of(pos[i]), runs);
            alignas(64) float acc[kLanes] = {};
            for (int r = 0; r < m; ++r) {
                const std::uint32_t s0 = runs[r][0], s1 = runs[r][1];
                for (std::uint32_t j0 = s0; j0 < s1; j0 += kLanes) {
                    const std::uint32_t len = std::min<std::uint32_t>(kLanes, s1 - j0);
                    for (int l = 0; l < kLanes; ++l) {
                        const std::uint32_t j = j0 + l;
                        const float dx = X[0][j] - xi[0], dy = X[1][j] - xi[1], dz = z3 * (X[2][j] - xi[2]);  // x_ji
                        const float d2 = dx * dx + dy * dy + dz * dz;
                        const float side = dx * ni[0] + dy * ni[1] + dz * ni[2];
                        const float nx = N[0][j], ny = N[1][j], nz = z3 * N[2][j];
                        const float nj2 = nx * nx + ny * ny + nz * nz;
                        const float nn = ni[0] * nx + ni[1] * ny + ni[2] * nz;
                        const float in = (d2 < h2 && nj2 > 0.0f && side < 0.0f && std::uint32_t(l) < len) ? 1.0f : 0.0f;
                        const float t = std::max(1.0f - std::sqrt(d2) * inv_h, 0.0f);
                        acc[l] += (1.0f - nn) * t * in;
                    }
                }
            }
            float kappa = 0.0f;
            for (int l = 0; l < kLanes; ++l) kappa += acc[l];
            p.wave_crest[i] = clamp_potential(kappa, s.wave_crest_min, s.wave_crest_max);
        }
    });
}

template void potentials<2>(const FluidGrid<2>&, std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                            const WhitewaterSettings&, const ExecContext&, WhitewaterPotentials&);
template void potentials<3>(const FluidGrid<3>&, std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                            const WhitewaterSettings&, const ExecContext&, WhitewaterPotentials&);

}  // namespace ww

template <int D>
WhitewaterPotentials whitewater_potentials(std::span<const Vec<D>> pos, std::span<const Vec<D>> vel,
                                           float particle_radius, const WhitewaterSettings& s, const ExecContext& exec) {
    ww::FluidGrid<D> grid;
    grid.build(pos, vel, s.support(particle_radius), exec);
    WhitewaterPotentials p;
    ww::potentials<D>(grid, pos, vel, particle_radius, s, exec, p);
    return p;
}

template WhitewaterPotentials whitewater_potentials<2>(std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                                                       const WhitewaterSettings&, const ExecContext&);
template WhitewaterPotentials whitewater_potentials<3>(std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                                                       const WhitewaterSettings&, const ExecContext&);

}  // namespace eddy
