// eddy: what a particle solver sees of a run spread over several processes (issue 14), and nothing more.
//
// A process holds the particles it owns first, then, after them, `ghosts()` copies of particles other
// processes own within reach of its subdomain (src/distributed/particle_slabs.cpp builds them). A
// solver's passes are gathers: particle i reads its neighbours' values of the previous pass. Owned
// particles have every neighbour held, so they compute what one process would; a ghost's own
// neighbourhood is cut off at the edge of the halo, so whatever a ghost computes is wrong and must be
// replaced by its owner's value before a neighbour reads it: refresh() after every pass whose result
// neighbours read. Statistics (error norms, the largest speed that sets the time step) are taken over
// owned particles and reduced over the processes with reduce(). ExactSum makes the sums the same bits
// whatever the number of processes.
//
// On one process the solver's halo is null and none of this runs.
#pragma once
#include <cstddef>
#include <span>

#include "eddy/exec.hpp"
#include "eddy/math.hpp"

namespace eddy {

template <int D>
class Halo {
public:
    virtual ~Halo() = default;
    /// Particles held that are copies of other processes' (they come after the owned ones).
    virtual std::size_t ghosts() const = 0;
    /// Owned particles over every process (the denominator of a mean).
    virtual std::size_t global_owned() const = 0;
    /// Overwrites the ghosts' entries of a per-particle field (sized as the particle set) with their
    /// owners' values. Collective: every process calls it at the same point.
    virtual void refresh(std::span<float> field) = 0;
    virtual void refresh(std::span<Vec<D>> field) = 0;
    /// Collective reductions: maxima in place, sums in place (ExactSum: order-free), any.
    virtual void max(std::span<float> values) = 0;
    virtual void sum(std::span<ExactSum> values) = 0;
    virtual bool any(bool v) = 0;
};

/// Owned particles of a set of n held particles: all of them without a halo.
template <int D>
inline std::size_t owned_count(const Halo<D>* halo, std::size_t n) {
    return halo ? n - halo->ghosts() : n;
}

}  // namespace eddy
