// Whitewater, pass 3: the diffuse particles classified by their fluid neighbours, moved by type and aged
// (Ihmsen et al. 2012, section 5). Each particle writes only its own data; the dead are dropped in order.
#include <algorithm>
#include <array>
#include <cmath>

#include "eddy/kernels.hpp"
#include "whitewater/internal.hpp"

namespace eddy::ww {

template <int D>
void advect(Whitewater<D>& w, const FluidGrid<D>& grid, std::span<const Vec<D>> fluid_pos,
            std::span<const Vec<D>> fluid_vel, float h, Vec<D> gravity, float dt, const Aabb<D>& keep,
            const WhitewaterSettings& s, const ExecContext& exec, const std::vector<Wall<D>>* walls, float wall_margin) {
    (void)fluid_pos;  // read from the grid's sorted copies
    (void)fluid_vel;
    const std::size_t n = w.size();
    if (n == 0) return;
    const CubicSpline<D> kernel(h);
    const int spray_below = s.spray_below(D), bubble_above = s.bubble_above(D);
    const bool walled = walls != nullptr && !walls->empty();
    const float inv_h = 1.0f / h, h2 = h * h;
    const float* X[3] = {grid.x[0].data(), grid.x[1].data(), grid.x[D - 1].data()};  // sorted, padded
    const float* V[3] = {grid.v[0].data(), grid.v[1].data(), grid.v[D - 1].data()};
    const float z3 = D == 3 ? 1.0f : 0.0f;  // 2D: the third axis is the second's copy, weighted 0
    const float sigma = kernel.sigma;
    // 0 keep, 1 expired (foam's lifetime ran out), 2 escaped (beyond `keep`), 3 spray that hit a wall.
    std::vector<std::uint8_t> fate(n, 0);
    parallel_for_each_index(exec, n, [&](std::size_t d) {
        Vec<D>& x = w.position[d];
        Vec<D>& u = w.velocity[d];
        // v~_f: the fluid's velocity at x, kernel-weighted (cubic spline K), over the fluid within h: the
        // grid's runs around x, kLanes at a time, the lanes added in order.
        std::array<std::array<std::uint32_t, 2>, FluidGrid<D>::kRuns> runs;
        const int m = grid.runs(grid.cell_of(x), runs);
        const float xi[3] = {x[0], x[1], x[D - 1]};
        alignas(64) float acc[5][kLanes] = {};  // count, sum w, sum w v (3)
        for (int r = 0; r < m; ++r) {
            const std::uint32_t s0 = runs[r][0], s1 = runs[r][1];
            for (std::uint32_t j0 = s0; j0 < s1; j0 += kLanes) {
                const std::uint32_t len = std::min<std::uint32_t>(kLanes, s1 - j0);
                for (int l = 0; l < kLanes; ++l) {
                    const std::uint32_t j = j0 + l;  // past the run: masked (the arrays are padded)
                    const float dx = xi[0] - X[0][j], dy = xi[1] - X[1][j], dz = z3 * (xi[2] - X[2][j]);
                    const float d2 = dx * dx + dy * dy + dz * dz;
                    const float in = (d2 < h2 && std::uint32_t(l) < len) ? 1.0f : 0.0f;
                    const float q = std::sqrt(d2) * inv_h, t = std::max(1.0f - q, 0.0f);
                    const float wj = in * sigma * (q <= 0.5f ? 6.0f * (q * q * q - q * q) + 1.0f : 2.0f * t * t * t);
                    acc[0][l] += in;
                    acc[1][l] += wj;
                    acc[2][l] += wj * V[0][j];
                    acc[3][l] += wj * V[1][j];
                    acc[4][l] += wj * (z3 * V[2][j]);
                }
            }
        }
        float sums[5];
        for (int k = 0; k < 5; ++k) {  // lanes in order: the same bits on any thread count
            float t = 0.0f;
            for (int l = 0; l < kLanes; ++l) t += acc[k][l];
            sums[k] = t;
        }
        const int count = static_cast<int>(sums[0]);
        const float wsum = sums[1];
        Vec<D> vf = Vec<D>::zero();
        for (int a = 0; a < D; ++a) vf[a] = sums[2 + a];
        if (wsum > 0.0f) vf *= 1.0f / wsum;
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

template void advect<2>(Whitewater<2>&, const FluidGrid<2>&, std::span<const Vec<2>>, std::span<const Vec<2>>, float,
                        Vec<2>, float, const Aabb<2>&, const WhitewaterSettings&, const ExecContext&,
                        const std::vector<Wall<2>>*, float);
template void advect<3>(Whitewater<3>&, const FluidGrid<3>&, std::span<const Vec<3>>, std::span<const Vec<3>>, float,
                        Vec<3>, float, const Aabb<3>&, const WhitewaterSettings&, const ExecContext&,
                        const std::vector<Wall<3>>*, float);

}  // namespace eddy::ww
