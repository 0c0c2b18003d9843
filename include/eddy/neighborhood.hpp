// eddy: the neighbourhood of a particle fluid, as every particle method needs it: fluid-fluid and
// fluid-boundary CSR lists within the kernel support, the grids they come from, and the periodic
// Morton reordering of the fluid (through ParticleSet::reorder, so every field follows).
#pragma once
#include <cstddef>

#include "eddy/boundary.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/particles.hpp"

namespace eddy {

/// A fluid's neighbour lists within `radius` and the grid they came from (cell size `radius`, buckets in
/// id order, so each list is in (cell, id) order), at its current positions: what a reader outside the
/// method, such as the whitewater (eddy/whitewater.hpp), may take instead of searching again.
template <int D>
struct FluidLists {
    const NeighborGrid<D>* grid = nullptr;
    const NeighborLists* lists = nullptr;
    float radius = 0.0f;
};

template <int D>
class FluidNeighborhood {
public:
    /// radius (m): the kernel support h; sort_interval: steps between reorderings (0: never).
    void configure(float radius, int sort_interval);

    /// Builds the boundary grid and puts the fluid in Morton order. Call once before the first update.
    void init(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const ExecContext& exec);
    /// Reorders the fluid every sort_interval calls. Call first in a step, before any per-step arrays
    /// of the solver are filled.
    void reorder_if_due(ParticleSet<D>& fluid, const ExecContext& exec);
    /// Lists of the fluid's current positions; the boundary grid is rebuilt when the boundary moved.
    void update(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, bool boundary_moved,
                const ExecContext& exec);

    /// The fluid lists and grid at the fluid's current positions, for a reader between two steps (the
    /// whitewater of a run): searched now, as update() searches, and kept for the next update(), which finds
    /// the fluid where they were taken (the same count, positions and ids, compared bit for bit) and
    /// skips its own search. The lists are a function of those alone, so the method's bits do not change;
    /// the search moves from the next step to now. A reordering, fullest_cell() or a change of the fluid
    /// in between makes update() search again. Costs a copy of the positions and ids while kept.
    FluidLists<D> refresh_fluid(const ParticleSet<D>& fluid, const ExecContext& exec);
    /// Searches of the fluid lists so far (update() and refresh_fluid() that did search): a reader's test
    /// that a step kept the lists refresh_fluid took.
    std::uint64_t fluid_searches() const { return m_fluid_searches; }

    /// Position-based methods: a fluid particle with more than `n` fluid particles in its 3^D cells gets
    /// no lists (crowded() then counts them); 0: no limit. See NeighborGrid::find_neighbors.
    void set_candidate_limit(std::size_t n) { m_candidate_limit = n; }
    std::size_t candidate_limit() const { return m_candidate_limit; }
    /// Fluid particles the last update() left without lists (crowded), the first of them and its count.
    std::size_t crowded() const { return m_fluid_lists.crowded; }
    std::uint32_t crowded_particle() const { return m_fluid_lists.crowded_query; }
    std::uint32_t crowded_candidates() const { return m_fluid_lists.crowded_candidates; }

    /// The most particles in one cell (of side the radius) at the fluid's current positions, and one of
    /// them (its index): the collapse check at the end of a position-based step, whose collision can
    /// crush the fluid after the step's density pass. One counting sort (the grid the next update()
    /// rebuilds anyway), no distance computed.
    std::uint32_t fullest_cell(const ParticleSet<D>& fluid, const ExecContext& exec, std::uint32_t& particle);

    const NeighborLists& fluid() const { return m_fluid_lists; }
    const NeighborLists& boundary() const { return m_boundary_lists; }
    float radius() const { return m_radius; }
    std::size_t memory_bytes() const;
    /// Steps since the last reordering (checkpoints keep it: the next reordering must fall on the same step).
    int sort_phase() const { return m_steps_since_sort; }
    void set_sort_phase(int steps) { m_steps_since_sort = steps; }

private:
    float m_radius = 1.0f;
    int m_sort_interval = 0;
    int m_steps_since_sort = 0;
    std::size_t m_candidate_limit = 0;
    bool m_boundary_built = false;
    NeighborGrid<D> m_fluid_grid, m_boundary_grid;
    NeighborLists m_fluid_lists, m_boundary_lists;
    // refresh_fluid: the fluid the lists were taken at, until the next update() (m_taken: kept).
    bool m_taken = false;
    std::uint64_t m_fluid_searches = 0;
    std::vector<Vec<D>> m_taken_x;
    std::vector<std::uint32_t> m_taken_id;
    bool taken_at(const ParticleSet<D>& fluid) const;
    void search_fluid(const ParticleSet<D>& fluid, const ExecContext& exec);
};

extern template class FluidNeighborhood<2>;
extern template class FluidNeighborhood<3>;

}  // namespace eddy
