// Whitewater, pass 3: the diffuse particles classified by their fluid neighbours, moved by type and aged
// (Ihmsen et al. 2012, section 5). Each particle writes only its own data; the dead are dropped in order.
#include <cmath>

#include "eddy/kernels.hpp"
#include "whitewater/internal.hpp"

namespace eddy::ww {

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
    NeighborLists nl;  // the fluid around each diffuse particle
    grid.find_neighbors(w.position, h, false, nl, exec);
    parallel_for_each_index(exec, n, [&](std::size_t d) {
        Vec<D>& x = w.position[d];
        Vec<D>& u = w.velocity[d];
        // v~_f: the fluid's velocity at x, kernel-weighted (cubic spline K).
        const auto around = nl[d];
        const int count = static_cast<int>(around.size());
        Vec<D> vf = Vec<D>::zero();
        if (count > 0) {
            float wsum = 0.0f;
            for (const std::uint32_t j : around) {
                const float wj = kernel.value(norm(x - fluid_pos[j]));
                vf += wj * fluid_vel[j];
                wsum += wj;
            }
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
