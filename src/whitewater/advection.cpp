// Whitewater, pass 3: the diffuse particles classified by their fluid neighbours, moved by type and aged
// (Ihmsen et al. 2012, section 5). Each particle writes only its own data; the dead are dropped in order.
#include <algorithm>
#include <cmath>

#include "core/branchless.hpp"
#include "eddy/kernels.hpp"
#include "whitewater/internal.hpp"

namespace eddy::ww {

namespace {

constexpr int kLanes = 16;  // one AVX-512 register (two AVX2) per sum

// Over the fluid neighbours L (len of them, their squared distances Q from x beside them): sum K and
// sum K v_j (D), neighbour k in lane k % kLanes, the lanes added in order at the end: the same bits on any
// thread count. Whole groups of kLanes run branch-free (both pieces of the cubic spline computed, then
// selected) so that the lane loop vectorises (gathers of v_j only: the search measured the distances); the
// last group's lanes one by one (a lane without a neighbour would add +0, which changes no lane's sum).
// V: D floats per fluid particle.
template <int D>
void weighted_velocity(const float* __restrict V, const std::uint32_t* __restrict L, const float* __restrict Q,
                       std::uint32_t len, const CubicSpline<D>& kernel, float* out) {
    const float z3 = D == 3 ? 1.0f : 0.0f;
    const float inv_h = kernel.inv_h, sigma = kernel.sigma;
    alignas(64) float sw[kLanes] = {}, s0[kLanes] = {}, s1[kLanes] = {}, s2[kLanes] = {};
    auto add = [&](int l, std::uint32_t at) {
        const std::size_t j = L[at];
        const float q = std::sqrt(Q[at]) * inv_h;
        const float t = max_of(1.0f - q, 0.0f);
        const float w = sigma * pick(q <= 0.5f, 6.0f * (q * q * q - q * q) + 1.0f, 2.0f * t * t * t);
        sw[l] += w;
        s0[l] += w * V[D * j];
        s1[l] += w * V[D * j + 1];
        s2[l] += w * (z3 * V[D * j + D - 1]);
    };
    std::uint32_t c0 = 0;
    for (; c0 + kLanes <= len; c0 += kLanes)
        for (int l = 0; l < kLanes; ++l) add(l, c0 + std::uint32_t(l));
    for (int l = 0; c0 + std::uint32_t(l) < len; ++l) add(l, c0 + std::uint32_t(l));
    float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int l = 0; l < kLanes; ++l) {
        sums[0] += sw[l];
        sums[1] += s0[l];
        sums[2] += s1[l];
        sums[3] += s2[l];
    }
    for (int k = 0; k < 4; ++k) out[k] = sums[k];
}

}  // namespace

template <int D>
void advect(Whitewater<D>& w, const NeighborGrid<D>& grid, std::span<const Vec<D>> fluid_vel, float h, Vec<D> gravity,
            float dt, const Aabb<D>& keep, const WhitewaterSettings& s, const ExecContext& exec,
            const std::vector<Wall<D>>* walls, float wall_margin) {
    const std::size_t n = w.size();
    if (n == 0) return;
    const CubicSpline<D> kernel(h);
    const int spray_below = s.spray_below(D), bubble_above = s.bubble_above(D);
    const bool walled = walls != nullptr && !walls->empty();
    // 0 keep, 1 expired (foam's lifetime ran out), 2 escaped (beyond `keep`), 3 spray that hit a wall.
    std::vector<std::uint8_t> fate(n, 0);
    static_assert(sizeof(Vec<D>) == D * sizeof(float));
    const float* V = reinterpret_cast<const float*>(fluid_vel.data());
    // Each diffuse particle with the fluid around it (its list searched and read at once, none kept).
    grid.for_each_list(w.position, h, exec, [&](std::size_t d, std::span<const std::uint32_t> around,
                                                std::span<const float> d2) {
        Vec<D>& x = w.position[d];
        Vec<D>& u = w.velocity[d];
        const int count = static_cast<int>(around.size());
        const std::uint8_t type = classify(count, spray_below, bubble_above);
        w.type[d] = type;
        // v~_f: the fluid's velocity at x, kernel-weighted (cubic spline K); spray does not read it.
        Vec<D> vf = Vec<D>::zero();
        if (count > 0 && type != std::uint8_t(Diffuse::spray)) {
            float sums[4];
            weighted_velocity<D>(V, around.data(), d2.data(), std::uint32_t(count), kernel, sums);
            const float wsum = sums[0];
            for (int a = 0; a < D; ++a) vf[a] = sums[1 + a];
            if (wsum > 0.0f) vf *= 1.0f / wsum;
        }
        if (type == std::uint8_t(Diffuse::spray)) {
            // Ballistic (eq. 9, integrated exactly for constant gravity): x += dt u + dt^2 g / 2, u += dt g.
            x += dt * u + (0.5f * dt * dt) * gravity;
            u += dt * gravity;
        } else if (type == std::uint8_t(Diffuse::foam)) {
            // Advected by the fluid (eq. 10): x += dt v~_f.
            u = vf;
            x += dt * vf;
            w.lifetime[d] -= dt;
        } else {
            // Bubbles (eq. 11): u += dt (-k_b g) + k_d (v~_f - u), then x += dt u.
            u += (-dt * s.buoyancy) * gravity + s.drag * (vf - u);
            x += dt * u;
        }
        // The walls: back r/2 off the surface, without the velocity into the wall (foam and bubbles
        // then slide along it); spray that hits one is dropped (the droplet joins the wall's film).
        const bool hit = walled && guard_walls(x, u, *walls, wall_margin);
        if (type == std::uint8_t(Diffuse::foam) && !(w.lifetime[d] > 0.0f)) fate[d] = 1;
        else if (!keep.contains(x)) fate[d] = 2;
        else if (hit && type == std::uint8_t(Diffuse::spray)) fate[d] = 3;
    });
    std::size_t k = 0;
    for (std::size_t d = 0; d < n; ++d) {
        if (fate[d] == 1) {
            ++w.counts.expired;
            continue;
        }
        if (fate[d] == 2) {
            ++w.counts.escaped;
            continue;
        }
        if (fate[d] == 3) {
            ++w.counts.walled;
            continue;
        }
        if (k != d) {
            w.position[k] = w.position[d];
            w.velocity[k] = w.velocity[d];
            w.type[k] = w.type[d];
            w.lifetime[k] = w.lifetime[d];
            w.id[k] = w.id[d];
        }
        ++k;
    }
    w.position.resize(k);
    w.velocity.resize(k);
    w.type.resize(k);
    w.lifetime.resize(k);
    w.id.resize(k);
}

template void advect<2>(Whitewater<2>&, const NeighborGrid<2>&, std::span<const Vec<2>>, float, Vec<2>, float,
                        const Aabb<2>&, const WhitewaterSettings&, const ExecContext&, const std::vector<Wall<2>>*,
                        float);
template void advect<3>(Whitewater<3>&, const NeighborGrid<3>&, std::span<const Vec<3>>, float, Vec<3>, float,
                        const Aabb<3>&, const WhitewaterSettings&, const ExecContext&, const std::vector<Wall<3>>*,
                        float);

}  // namespace eddy::ww
