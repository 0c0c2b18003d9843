#include "eddy/neighborhood.hpp"

namespace eddy {

template <int D>
void FluidNeighborhood<D>::configure(float radius, int sort_interval) {
    m_radius = radius;
    m_sort_interval = sort_interval;
    m_fluid_grid.set_cell_size(radius);
    m_boundary_grid.set_cell_size(radius);
}

template <int D>
void FluidNeighborhood<D>::init(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const ExecContext& exec) {
    m_boundary_grid.build(boundary.position, exec);
    m_boundary_built = true;
    if (!fluid.empty()) {
        m_fluid_grid.build(fluid.position, exec);
        fluid.reorder(m_fluid_grid.morton_order(fluid.position, exec), exec);
    }
    m_steps_since_sort = 0;
}

template <int D>
void FluidNeighborhood<D>::reorder_if_due(ParticleSet<D>& fluid, const ExecContext& exec) {
    if (m_sort_interval <= 0 || ++m_steps_since_sort < m_sort_interval) return;
    // Reorder along a Z curve of the current cells; the next build sees the new order.
    m_fluid_grid.build(fluid.position, exec);
    fluid.reorder(m_fluid_grid.morton_order(fluid.position, exec), exec);
    m_steps_since_sort = 0;
}

template <int D>
void FluidNeighborhood<D>::update(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, bool boundary_moved,
                                  const ExecContext& exec) {
    // Buckets in id order: every list is in (cell, id) order, independent of the storage order.
    m_fluid_grid.build(fluid.position, exec, fluid.id);
    m_fluid_grid.find_neighbors(fluid.position, m_radius, true, m_fluid_lists, exec, m_candidate_limit);
    if (boundary_moved || !m_boundary_built) {
        m_boundary_grid.build(boundary.position, exec);
        m_boundary_built = true;
    }
    m_boundary_grid.find_neighbors(fluid.position, m_radius, false, m_boundary_lists, exec);
}

template <int D>
std::uint32_t FluidNeighborhood<D>::fullest_cell(const ParticleSet<D>& fluid, const ExecContext& exec,
                                                 std::uint32_t& particle) {
    m_fluid_grid.build(fluid.position, exec, fluid.id);
    return m_fluid_grid.fullest_bucket(particle);
}

template <int D>
std::size_t FluidNeighborhood<D>::memory_bytes() const {
    return m_fluid_grid.memory_bytes() + m_boundary_grid.memory_bytes() + m_fluid_lists.memory_bytes() +
           m_boundary_lists.memory_bytes();
}

template class FluidNeighborhood<2>;
template class FluidNeighborhood<3>;

}  // namespace eddy
