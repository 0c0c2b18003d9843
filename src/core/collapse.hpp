// The neighbour search's collapse report, shared by the position-based methods (PBF, Clavet): a
// collapse crowds thousands of particles into a few cells, the search refuses their lists (its
// candidate limit) and the step ends; run() reports it through step_divergence().
#pragma once
#include <cstdint>

#include "eddy/halo.hpp"
#include "eddy/neighborhood.hpp"
#include "eddy/particles.hpp"
#include "eddy/wcsph.hpp"

namespace eddy {

/// After FluidNeighborhood::update() with a candidate limit: true when the search on any process left
/// particles without lists (every process returns the same answer, so all stop together). Then `st`
/// gets the largest candidate count, the limit and, on the process that found it, the crowded particle.
template <int D>
bool crowded_search(const FluidNeighborhood<D>& neighbors, const ParticleSet<D>& fluid, Halo<D>* halo,
                    StepStats& st) {
    const std::size_t crowded = neighbors.crowded();
    float any[2] = {crowded > 0 ? 1.0f : 0.0f, static_cast<float>(neighbors.crowded_candidates())};
    if (halo) halo->max(any);
    if (!(any[0] > 0.0f)) return false;
    st.crowded = static_cast<std::uint32_t>(any[1]);
    st.crowded_limit = static_cast<std::uint32_t>(neighbors.candidate_limit());
    if (crowded > 0) {
        const std::uint32_t i = neighbors.crowded_particle();
        st.where_id = fluid.id[i];
        for (int a = 0; a < D; ++a) st.where[a] = fluid.position[i][a];
        st.where_dimension = D;
    }
    return true;
}

}  // namespace eddy
