#include "eddy/neighborhood.hpp"

#include <cstring>

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
    m_taken = false;
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
    m_taken = false;
    m_fluid_grid.build(fluid.position, exec);
    fluid.reorder(m_fluid_grid.morton_order(fluid.position, exec), exec);
    m_steps_since_sort = 0;
}

template <int D>
void FluidNeighborhood<D>::update(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, bool boundary_moved,
                                  const ExecContext& exec) {
    // The lists refresh_fluid took at these very positions are the ones this search would give.
    if (!(m_taken && taken_at(fluid))) search_fluid(fluid, exec);
    m_taken = false;
    if (boundary_moved || !m_boundary_built) {
        m_boundary_grid.build(boundary.position, exec);
        m_boundary_built = true;
    }
    m_boundary_grid.find_neighbors(fluid.position, m_radius, false, m_boundary_lists, exec);
}

template <int D>
void FluidNeighborhood<D>::search_fluid(const ParticleSet<D>& fluid, const ExecContext& exec) {
    ++m_fluid_searches;
    // Buckets in id order: every list is in (cell, id) order, independent of the storage order.
    m_fluid_grid.build(fluid.position, exec, fluid.id);
    m_fluid_grid.find_neighbors(fluid.position, m_radius, true, m_fluid_lists, exec, m_candidate_limit);
}

template <int D>
bool FluidNeighborhood<D>::taken_at(const ParticleSet<D>& fluid) const {
    const std::size_t n = fluid.size();
    return m_taken_x.size() == n && m_taken_id.size() == n && fluid.id.size() == n &&
           (n == 0 || (std::memcmp(m_taken_x.data(), fluid.position.data(), n * sizeof(Vec<D>)) == 0 &&
                       std::memcmp(m_taken_id.data(), fluid.id.data(), n * sizeof(std::uint32_t)) == 0));
}

template <int D>
FluidLists<D> FluidNeighborhood<D>::refresh_fluid(const ParticleSet<D>& fluid, const ExecContext& exec) {
    if (!(m_taken && taken_at(fluid))) {
        search_fluid(fluid, exec);
        m_taken_x.assign(fluid.position.begin(), fluid.position.end());
        m_taken_id.assign(fluid.id.begin(), fluid.id.end());
        m_taken = true;
    }
    return {&m_fluid_grid, &m_fluid_lists, m_radius};
}

template <int D>
std::uint32_t FluidNeighborhood<D>::fullest_cell(const ParticleSet<D>& fluid, const ExecContext& exec,
                                                 std::uint32_t& particle) {
    m_taken = false;
    m_fluid_grid.build(fluid.position, exec, fluid.id);
    return m_fluid_grid.fullest_bucket(particle);
}

template <int D>
std::size_t FluidNeighborhood<D>::memory_bytes() const {
    return m_fluid_grid.memory_bytes() + m_boundary_grid.memory_bytes() + m_fluid_lists.memory_bytes() +
           m_boundary_lists.memory_bytes() + m_taken_x.capacity() * sizeof(Vec<D>) +
           m_taken_id.capacity() * sizeof(std::uint32_t);
}

template class FluidNeighborhood<2>;
template class FluidNeighborhood<3>;

}  // namespace eddy
