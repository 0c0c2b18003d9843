// The passes of a whitewater step (src/whitewater/), shared by step.cpp; not public API.
#pragma once
#include <cstdint>
#include <span>

#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/whitewater.hpp"

namespace eddy::ww {

/// Phi(I, tau_min, tau_max) (eq. 1): I clamped to [tau_min, tau_max] and mapped to [0, 1].
float clamp_potential(float i, float lo, float hi);

/// A counter-based generator: 64 random bits from (seed, step, particle, draw), no state (splitmix64's
/// finaliser chained over the four words).
inline std::uint64_t mix64(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
inline float uniform01(std::uint64_t seed, std::uint64_t step, std::uint64_t particle, std::uint64_t draw) {
    std::uint64_t h = mix64(seed);
    h = mix64(h ^ step);
    h = mix64(h ^ particle);
    h = mix64(h ^ draw);
    return static_cast<float>(h >> 40) * 0x1p-24f;  // [0, 1), 24 bits
}

/// The type of a diffuse particle with `neighbors` fluid particles within h (section 5).
inline std::uint8_t classify(int neighbors, int spray_below, int bubble_above) {
    if (neighbors < spray_below) return static_cast<std::uint8_t>(Diffuse::spray);
    if (neighbors > bubble_above) return static_cast<std::uint8_t>(Diffuse::bubble);
    return static_cast<std::uint8_t>(Diffuse::foam);
}

/// Pass 1 (potentials.cpp) on a grid built over pos with cell size h; lists: pos's own lists within h on
/// that grid (same_set), or null to search them.
template <int D>
void potentials(const NeighborGrid<D>& grid, const NeighborLists* lists, std::span<const Vec<D>> pos,
                std::span<const Vec<D>> vel, float particle_radius, const WhitewaterSettings& s, const ExecContext& exec,
                WhitewaterPotentials& p);

/// Pass 3 (advection.cpp): classifies, moves and ages the diffuse particles against the fluid on the
/// grid (built over the fluid's positions: the search gives the distances), fluid_vel its velocities,
/// then drops expired foam and particles outside `keep`. walls (may be null): a particle that ends
/// within wall_margin of a wall is put back there without its velocity into the wall (guard_walls);
/// spray doing so is dropped (counts.walled).
template <int D>
void advect(Whitewater<D>& w, const NeighborGrid<D>& grid, std::span<const Vec<D>> fluid_vel, float h, Vec<D> gravity,
            float dt, const Aabb<D>& keep, const WhitewaterSettings& s, const ExecContext& exec,
            const std::vector<Wall<D>>* walls, float wall_margin);

/// Pass 2 (generation.cpp): appends the new diffuse particles of every fluid particle, in the fluid's id
/// order, classified against the fluid on the grid; one placed within wall_margin of a wall is put back
/// there first (guard_walls; walls may be null). order[k]: the index of the k-th fluid particle in id
/// order, rank[i] the place of particle i in it (the random draws' key); both empty: the index order.
template <int D>
void generate(Whitewater<D>& w, const WhitewaterPotentials& p, const NeighborGrid<D>& grid,
              std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel, std::span<const std::uint32_t> order,
              std::span<const std::uint32_t> rank, float particle_radius, float h, float dt, std::uint64_t step_index,
              const WhitewaterSettings& s, const ExecContext& exec, const std::vector<Wall<D>>* walls, float wall_margin);

/// Fluid neighbours within h of x, and their velocities' kernel-weighted mean (zero without neighbours).
template <int D>
inline int fluid_around(const NeighborGrid<D>& grid, std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
                        const CubicSpline<D>& kernel, const Vec<D>& x, Vec<D>* mean_velocity) {
    int count = 0;
    Vec<D> sum = Vec<D>::zero();
    float wsum = 0.0f;
    grid.for_each_neighbor(x, kernel.h, [&](std::uint32_t j) {
        ++count;
        if (mean_velocity) {
            const float wj = kernel.value(norm(x - fluid_pos[j]));
            sum += wj * fluid_vel[j];
            wsum += wj;
        }
    });
    if (mean_velocity) *mean_velocity = wsum > 0.0f ? (1.0f / wsum) * sum : Vec<D>::zero();
    return count;
}

}  // namespace eddy::ww
