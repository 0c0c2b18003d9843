// eddy: what a particle solver sees of a run spread over several processes (issue 14), and nothing more.
//
// A process holds the particles it owns first, then, after them, `ghosts()` copies of particles other
// processes own within reach of its subdomain (src/distributed/particle_boxes.cpp builds them). A
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
    virtual double max(double value) = 0;
    virtual void sum(std::span<ExactSum> values) = 0;
    virtual __int128 sum(__int128 value) = 0;  ///< Integers: the same total in any order
    virtual bool any(bool v) = 0;
    /// The wall particles held changed since the last step (the walls near a process's part are
    /// redistributed when its part moves): the boundary's neighbour grid must be rebuilt.
    virtual bool walls_changed() const = 0;
};

/// Whether the boundary grid needs a rebuild: the walls moved, or the process now holds other walls.
template <int D>
inline bool walls_changed(const Halo<D>* halo, bool moved) {
    return moved || (halo && halo->walls_changed());
}

/// order_free_sum (eddy/exec.hpp) over the owned particles of every process: the same bits as on one
/// process holding them all.
template <int D, class F>
double order_free_sum(const ExecContext& exec, std::size_t n, F&& f, Halo<D>* halo) {
    if (!halo) return order_free_sum(exec, n, f);
    const std::size_t owned = n - halo->ghosts();
    const double top = halo->max(detail::order_free_top(exec, owned, f));
    if (!std::isfinite(top)) return top;
    if (top == 0.0) return 0.0;
    const int e = std::ilogb(top) + 1;
    return detail::fixed_to_double(halo->sum(detail::order_free_fixed(exec, owned, f, e)), e - 62);
}

/// Owned particles of a set of n held particles: all of them without a halo.
template <int D>
inline std::size_t owned_count(const Halo<D>* halo, std::size_t n) {
    return halo ? n - halo->ghosts() : n;
}

}  // namespace eddy
