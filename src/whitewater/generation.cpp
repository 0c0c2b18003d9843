// Whitewater, pass 2: new diffuse particles from the fluid's potentials (Ihmsen et al. 2012, section 4.4).
// Every random number comes from a counter-based generator keyed on (seed, step, fluid particle, draw),
// so each fluid particle's new particles do not depend on any other's or on the thread count; they are
// appended in fluid-particle order after a prefix sum of the counts.
#include <cmath>
#include <numbers>

#include "eddy/kernels.hpp"
#include "whitewater/internal.hpp"

namespace eddy::ww {

namespace {

// Two unit vectors perpendicular to v^ and to each other (3D); one in 2D (e2 unused).
template <int D>
void perpendiculars(const Vec<D>& vhat, Vec<D>& e1, Vec<D>& e2) {
    if constexpr (D == 2) {
        e1 = Vec<D>{{-vhat[1], vhat[0]}};
        e2 = Vec<D>::zero();
    } else {
        // The axis least aligned with v^, crossed with it.
        const float ax = std::fabs(vhat[0]), ay = std::fabs(vhat[1]), az = std::fabs(vhat[2]);
        const Vec<3> a = ax <= ay && ax <= az ? Vec<3>{{1, 0, 0}} : ay <= az ? Vec<3>{{0, 1, 0}} : Vec<3>{{0, 0, 1}};
        Vec<3> c{{vhat[1] * a[2] - vhat[2] * a[1], vhat[2] * a[0] - vhat[0] * a[2], vhat[0] * a[1] - vhat[1] * a[0]}};
        c *= 1.0f / norm(c);
        e1 = c;
        e2 = Vec<3>{{vhat[1] * c[2] - vhat[2] * c[1], vhat[2] * c[0] - vhat[0] * c[2], vhat[0] * c[1] - vhat[1] * c[0]}};
    }
}

}  // namespace

template <int D>
void generate(Whitewater<D>& w, const WhitewaterPotentials& p, const NeighborGrid<D>& grid,
              std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel, std::span<const std::uint32_t> order,
              std::span<const std::uint32_t> rank, float particle_radius, float h, float dt, std::uint64_t step_index,
              const WhitewaterSettings& s, const ExecContext& exec, const std::vector<Wall<D>>* walls, float wall_margin) {
    const std::size_t n = fluid_pos.size();
    if (n == 0) return;
    EDDY_ASSERT(order.size() == rank.size() && (order.empty() || order.size() == n));
    // Particle i's place in the id order: its draws' key, as if the fluid were held in that order.
    auto key = [&](std::size_t i) -> std::uint64_t { return rank.empty() ? i : rank[i]; };
    const std::uint64_t seed = static_cast<std::uint64_t>(s.seed);
    // n_d = I_k (k_ta I_ta + k_wc I_wc) dt (eq. 7): its whole part, and one more with the fraction's
    // probability (draw 0).
    std::vector<std::uint32_t> count(n, 0);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const double nd = double(p.kinetic[i]) *
                          (double(s.trapped_air_rate) * p.trapped_air[i] + double(s.wave_crest_rate) * p.wave_crest[i]) * dt;
        if (!(nd > 0.0)) return;
        const double whole = std::floor(std::min(nd, 1e6));
        const double frac = nd - whole;
        count[i] = static_cast<std::uint32_t>(whole) + (uniform01(seed, step_index, key(i), 0) < frac ? 1u : 0u);
    });
    // Offsets in the fluid's id order, up to the cap.
    const std::size_t cap = s.max_particles > 0 ? static_cast<std::size_t>(s.max_particles) : n;
    const std::size_t old = w.size();
    std::vector<std::size_t> offset(n + 1, 0);
    std::size_t total = old;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = order.empty() ? k : order[k];
        offset[i] = total;
        const std::size_t room = total < cap ? cap - total : 0;
        if (count[i] > room) {
            w.counts.capped += count[i] - room;
            count[i] = static_cast<std::uint32_t>(room);
        }
        total += count[i];
    }
    offset[n] = total;
    if (total == old) return;
    w.position.resize(total);
    w.velocity.resize(total);
    w.type.resize(total);
    w.lifetime.resize(total);
    w.id.resize(total);
    const std::uint32_t id0 = w.next_id;
    w.next_id += static_cast<std::uint32_t>(total - old);
    w.counts.generated += total - old;
    const CubicSpline<D> kernel(h);
    const int spray_below = s.spray_below(D), bubble_above = s.bubble_above(D);
    const float two_pi = 2.0f * std::numbers::pi_v<float>;
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        if (count[i] == 0) return;
        const Vec<D> v = fluid_vel[i];
        const float speed = norm(v);
        const Vec<D> vhat = speed > 0.0f ? (1.0f / speed) * v : Vec<D>::zero();
        Vec<D> e1 = Vec<D>::zero(), e2 = Vec<D>::zero();
        if (speed > 0.0f) perpendiculars<D>(vhat, e1, e2);
        const std::uint64_t ki = key(i);
        for (std::uint32_t k = 0; k < count[i]; ++k) {
            const std::size_t d = offset[i] + k;
            const std::uint64_t draw = 1 + 4 * std::uint64_t(k);
            const float xr = uniform01(seed, step_index, ki, draw), xt = uniform01(seed, step_index, ki, draw + 1);
            const float xh = uniform01(seed, step_index, ki, draw + 2), xl = uniform01(seed, step_index, ki, draw + 3);
            // In the cylinder of radius r around x_i along v_i dt (eq. 8): r_V sqrt(X_r) at angle 2 pi X_theta
            // (2D: across the velocity, r_V (2 X_r - 1)), and X_h |v| dt along it. The velocity is the fluid
            // particle's (the paper adds the radial offset, a length, to it; eddy does not).
            Vec<D> off;
            if constexpr (D == 2) {
                off = (particle_radius * (2.0f * xr - 1.0f)) * e1;
                (void)xt;
            } else {
                const float rad = particle_radius * std::sqrt(xr), theta = two_pi * xt;
                off = (rad * std::cos(theta)) * e1 + (rad * std::sin(theta)) * e2;
            }
            off += (xh * speed * dt) * vhat;
            w.position[d] = fluid_pos[i] + off;
            w.velocity[d] = v;
            // Placed into a wall (a fluid particle at the wall moving into it): back off its surface.
            if (walls != nullptr && !walls->empty()) guard_walls(w.position[d], w.velocity[d], *walls, wall_margin);
            w.lifetime[d] = s.lifetime_min + (s.lifetime_max - s.lifetime_min) * xl;
            w.id[d] = id0 + static_cast<std::uint32_t>(d - old);
            w.type[d] = classify(fluid_around<D>(grid, fluid_pos, fluid_vel, kernel, w.position[d], nullptr), spray_below,
                                 bubble_above);
        }
    });
}

template void generate<2>(Whitewater<2>&, const WhitewaterPotentials&, const NeighborGrid<2>&, std::span<const Vec<2>>,
                          std::span<const Vec<2>>, std::span<const std::uint32_t>, std::span<const std::uint32_t>, float,
                          float, float, std::uint64_t, const WhitewaterSettings&,
                          const ExecContext&, const std::vector<Wall<2>>*, float);
template void generate<3>(Whitewater<3>&, const WhitewaterPotentials&, const NeighborGrid<3>&, std::span<const Vec<3>>,
                          std::span<const Vec<3>>, std::span<const std::uint32_t>, std::span<const std::uint32_t>, float,
                          float, float, std::uint64_t, const WhitewaterSettings&,
                          const ExecContext&, const std::vector<Wall<3>>*, float);

}  // namespace eddy::ww
