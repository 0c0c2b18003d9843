// Whitewater, pass 3: the diffuse particles classified by their fluid neighbours, moved by type and aged
// (Ihmsen et al. 2012, section 5). Each particle writes only its own data; the dead are dropped in order.
#include <algorithm>
#include <cmath>

#include "eddy/kernels.hpp"
#include "whitewater/internal.hpp"

namespace eddy::ww {

namespace {

constexpr int kLanes = 16;  // one AVX-512 register (two AVX2) per sum

// Over the fluid neighbours L (len of them) of x: sum K(x - x_j) and sum K v_j (D), kLanes at a time,
// branch-free (both pieces of the cubic spline computed, then selected) so that the lane loop vectorises
// (gathers); lanes added in order: the same bits on any thread count. P, V: D floats per fluid particle.
template <int D>
void weighted_velocity(const float* __restrict P, const float* __restrict V, const Vec<D>& x, const std::uint32_t* L,
                       std::uint32_t len, const CubicSpline<D>& kernel, float* out) {
    const float x0 = x[0], x1 = x[1], x2 = x[D - 1], z3 = D == 3 ? 1.0f : 0.0f;
    const float inv_h = kernel.inv_h, sigma = kernel.sigma;
    alignas(64) float sw[kLanes] = {}, s0[kLanes] = {}, s1[kLanes] = {}, s2[kLanes] = {};
    for (std::uint32_t c0 = 0; c0 < len; c0 += kLanes) {
        const std::uint32_t n = std::min<std::uint32_t>(kLanes, len - c0);
        for (int l = 0; l < kLanes; ++l) {
            const std::size_t j = L[c0 + (std::uint32_t(l) < n ? std::uint32_t(l) : 0u)];  // a valid index; masked below
            const float dx = x0 - P[D * j], dy = x1 - P[D * j + 1], dz = z3 * (x2 - P[D * j + D - 1]);
            const float q = std::sqrt(dx * dx + dy * dy + dz * dz) * inv_h;
            const float t = std::max(1.0f - q, 0.0f);
            const float in = std::uint32_t(l) < n ? 1.0f : 0.0f;
            const float w = in * sigma * (q <= 0.5f ? 6.0f * (q * q * q - q * q) + 1.0f : 2.0f * t * t * t);
            sw[l] += w;
            s0[l] += w * V[D * j];
            s1[l] += w * V[D * j + 1];
            s2[l] += w * (z3 * V[D * j + D - 1]);
        }
    }
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
void advect(Whitewater<D>& w, const NeighborGrid<D>& grid, std::span<const Vec<D>> fluid_pos,
            std::span<const Vec<D>> fluid_vel, float h, Vec<D> gravity, float dt, const Aabb<D>& keep,
            const WhitewaterSettings& s, const ExecContext& exec, const std::vector<Wall<D>>* walls, float wall_margin) {
    const std::size_t n = w.size();
    if (n == 0) return;
    const CubicSpline<D> kernel(h);
    const int spray_below = s.spray_below(D), bubble_above = s.bubble_above(D);
    const bool walled = walls != nullptr && !walls->empty();
    // 0 keep, 1 expired (foam's lifetime ran out), 2 escaped (beyond `keep`), 3 spray that hit a wall.
    std::vector<std::uint8_t> fate(n, 0);
    static_assert(sizeof(Vec<D>) == D * sizeof(float));
    const float* P = reinterpret_cast<const float*>(fluid_pos.data());
    const float* V = reinterpret_cast<const float*>(fluid_vel.data());
    // Each diffuse particle with the fluid around it (its list searched and read at once, none kept).
    grid.for_each_list(w.position, h, exec, [&](std::size_t d, std::span<const std::uint32_t> around) {
        Vec<D>& x = w.position[d];
        Vec<D>& u = w.velocity[d];
        // v~_f: the fluid's velocity at x, kernel-weighted (cubic spline K).
        const int count = static_cast<int>(around.size());
        Vec<D> vf = Vec<D>::zero();
        if (count > 0) {
            float sums[4];
            weighted_velocity<D>(P, V, x, around.data(), std::uint32_t(count), kernel, sums);
            const float wsum = sums[0];
            for (int a = 0; a < D; ++a) vf[a] = sums[1 + a];
            if (wsum > 0.0f) vf *= 1.0f / wsum;
        }
        const std::uint8_t type = classify(count, spray_below, bubble_above);
        w.type[d] = type;
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

template void advect<2>(Whitewater<2>&, const NeighborGrid<2>&, std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                        Vec<2>, float, const Aabb<2>&, const WhitewaterSettings&, const ExecContext&,
                        const std::vector<Wall<2>>*, float);
template void advect<3>(Whitewater<3>&, const NeighborGrid<3>&, std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                        Vec<3>, float, const Aabb<3>&, const WhitewaterSettings&, const ExecContext&,
                        const std::vector<Wall<3>>*, float);

}  // namespace eddy::ww
