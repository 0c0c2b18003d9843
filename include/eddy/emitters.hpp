// eddy: emitters and outflow (issue 31; docs/emitters.md). Where particles come from and where they go:
// the solvers do not know. An emitter is a nozzle (2D: a segment of `width` across its direction; 3D: a
// disk of `radius` facing it) that puts particles on a lattice at `speed` along its direction, so that
// the mass it injects is rho0 x speed x width (x pi radius^2 in 3D) x time, to within one particle's
// mass at any time; the outflow removes the particles outside the scene's `domain`, and those that left
// every container, and counts them; a sink (a drain: a box, a sphere or a circle, open from `start` to
// `stop`) removes what enters it and counts it per sink.
//
//   rate   n' = rho0 A U / m   (particles per second; A = width or pi R^2, U = speed, m the particle's
//                               mass; Clavet, which has no mass: A U / (2r)^D)
//   column c = e mod N of the N lattice points across the nozzle (spacing 2r) gets particle e, due at
//          t_e = start + e / n'; emitted at the first step that starts at t >= t_e, at
//          x = p_c + U d (t - t_e), with velocity U d.
// Column c's particles run c/N of a layer behind column 0's: the lattice is sheared along the jet, never
// closer than 2r across it, so no two new particles overlap. The nozzle drives its fluid: particles within
// two spacings ahead of it move at U d (the pipe behind pushes them), so the jet does not slow and pile
// up there. A due particle closer than 0.45 x 2r to fluid already there (fluid pushed back into the
// nozzle) is not emitted: it counts as blocked.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/math.hpp"
#include "eddy/particles.hpp"

namespace eddy {

/// One entry of a scene's "emitters" (checked by parse_scene; SI units).
struct EmitterSpec {
    std::array<double, 3> center{0, 0, 0};     ///< Middle of the nozzle (m)
    std::array<double, 3> direction{0, 0, 0};  ///< Where the jet goes (unit length after parsing)
    double speed = 0.0;                        ///< Jet speed (m/s); from flow_rate when that is given
    double width = 0.0;                        ///< 2D: the nozzle's length across direction (m)
    double radius = 0.0;                       ///< 3D: the nozzle disk's radius (m)
    double start = 0.0;                        ///< First emission (s)
    double stop = std::numeric_limits<double>::infinity();  ///< No particle is due at or after it (s)
};

/// The scene's "domain": particles outside it are removed and counted (the outflow).
struct DomainSpec {
    bool given = false;
    std::array<double, 3> min{0, 0, 0}, max{0, 0, 0};  ///< Corners (m)
};

/// One entry of a scene's "sinks" (checked by parse_scene; SI units): a drain that removes the fluid
/// inside it while it is open (start <= t < stop) and counts it.
struct SinkSpec {
    std::string name;                          ///< Its name in summary.json ("sinks[i]" when not given)
    std::string shape = "box";                 ///< "box", or "sphere" (3D) / "circle" (2D)
    std::array<double, 3> min{0, 0, 0}, max{0, 0, 0};  ///< Box corners (m)
    std::array<double, 3> center{0, 0, 0};     ///< Sphere or circle centre (m)
    double radius = 0.0;                       ///< Sphere or circle radius (m)
    double start = 0.0;                        ///< Opens (s)
    double stop = std::numeric_limits<double>::infinity();  ///< Closes (s)
};

/// A sink ready to drain (make_flow).
template <int D>
struct Sink {
    std::string name;
    bool round = false;                    ///< A sphere (circle) of `radius` about `center`, else `box`
    Aabb<D> box;                           ///< m
    Vec<D> center = Vec<D>::zero();        ///< m
    float radius = 0.0f;                   ///< m
    double start = 0.0, stop = 0.0;       ///< s
    bool open(double t) const { return t >= start && t < stop; }
    bool contains(const Vec<D>& x) const { return round ? norm2(x - center) <= radius * radius : box.contains(x); }
};

/// An emitter ready to emit (make_flow).
template <int D>
struct Emitter {
    Vec<D> center = Vec<D>::zero();     ///< Middle of the nozzle (m)
    Vec<D> direction = Vec<D>::zero();  ///< Unit
    float half_width = 0.0f;            ///< Half the nozzle's width (or its radius) plus half a spacing (m)
    float speed = 0.0f;                 ///< m/s
    std::vector<Vec<D>> columns;        ///< The lattice points across the nozzle (m), spacing 2r
    double area = 0.0;                  ///< width (2D, m) or pi R^2 (3D, m^2)
    double rate = 0.0;                  ///< Particles per second (n' above)
    double start = 0.0, stop = 0.0;     ///< s
    /// Particles due by time t (t_e <= t, t_e < stop).
    std::uint64_t due_by(double t) const;
};

/// What the emitters and the outflow have done since the start (checkpointed with the run).
struct FlowCounts {
    std::vector<std::uint64_t> due;      ///< Per emitter: particles due so far (emitted or blocked)
    std::vector<std::uint64_t> emitted;  ///< Per emitter: particles put in
    std::uint64_t removed_outflow = 0;   ///< Left the domain
    std::uint64_t removed_escaped = 0;   ///< Left every container (and the scene's bounds)
    std::vector<std::uint64_t> drained;  ///< Per sink: particles it removed
    std::uint64_t emitted_total() const;
    std::uint64_t drained_total() const;
    std::uint64_t blocked_total() const;
};

/// A particle simulation's sources and sinks.
template <int D>
struct Flow {
    std::vector<Emitter<D>> emitters;
    std::optional<Aabb<D>> domain;  ///< Outflow box; none: only particles that leave every container go
    std::vector<Sink<D>> sinks;     ///< Drains (a particle in an open one is removed)
    float spacing = 0.0f;           ///< Lattice spacing 2r (m)
    float particle_mass = 0.0f;     ///< m (kg; kg/m in 2D; 0 for Clavet)
    /// Most fluid particles (--max-particles): at it, what falls due is not put in (it counts as blocked).
    std::size_t max_fluid = std::numeric_limits<std::size_t>::max();
    FlowCounts counts;
    bool emits() const { return !emitters.empty(); }
    /// The largest time step at which a new particle moves at most 0.4 of a spacing (s); infinity when
    /// no emitter is on at time t.
    float dt_limit(double t) const;
};

/// Builds the emitters of a scene: the nozzles' lattices, their rates from the method's particle mass
/// and rest density (`particle_volume` = m / rho0, or (2r)^D for Clavet). InputError naming
/// `emitters[i]` (in `where`) for a nozzle whose lattice reaches into a wall or outside every container
/// (`walls`: the scene's, at rest), or that lies outside the domain, or whose lattice alone holds more
/// points than `max_fluid` (checked before it is built: a nozzle 1e15 m wide is one line, not a hang).
/// The sinks come as they are (parse_scene checked them).
template <int D>
Flow<D> make_flow(const std::vector<EmitterSpec>& emitters, const DomainSpec& domain, const std::vector<SinkSpec>& sinks,
                  float spacing, float particle_mass,
                  float particle_volume, const std::vector<Wall<D>>& walls, const std::string& where,
                  std::size_t max_fluid = std::numeric_limits<std::size_t>::max());

/// A particle an emitter owes (take_due): where it goes, its velocity, its emitter.
template <int D>
struct NewParticle {
    Vec<D> x, v;
    std::uint32_t emitter = 0;
};

/// emit's passes, for a run over several processes (src/distributed/particle_boxes.cpp): the nozzles'
/// drive on the fluid there; the particles due by t not yet taken (counts.due advanced), at most `room`
/// of them (the rest are never built: they count as blocked); for each of them 1 when `fluid` holds a
/// particle closer than 0.45 x 2r.
template <int D>
void drive_nozzles(const Flow<D>& flow, ParticleSet<D>& fluid, double t);
template <int D>
std::vector<NewParticle<D>> take_due(Flow<D>& flow, double t, std::size_t room);
template <int D>
std::vector<std::uint8_t> blocked_by(const Flow<D>& flow, const std::vector<NewParticle<D>>& fresh,
                                     const ParticleSet<D>& fluid);

/// Puts in the particles due by time t (next ids, velocity U d); returns how many. Blocked ones (fluid
/// at the nozzle, or the fluid at flow.max_fluid) are counted, not emitted. Serial and in emitter, then particle order: the same bits on any thread count.
template <int D>
std::size_t emit(Flow<D>& flow, ParticleSet<D>& fluid, double t);

/// What one removal took out: outside the domain, beyond every container, per sink.
struct Removed {
    std::size_t outflow = 0, escaped = 0;
    std::vector<std::size_t> drained;  ///< Per sink
    std::size_t total() const;
};

/// Removes the particles in an open sink at time t (counts.drained; the first sink holding a particle
/// takes it), those outside the domain (counts.removed_outflow) and those beyond `bounds` (the scene's
/// walls plus a margin: they left every container; counts.removed_escaped), keeping the others in their
/// order with their ids. Returns what it removed.
template <int D>
Removed remove_outflow(Flow<D>& flow, ParticleSet<D>& fluid, const Aabb<D>& bounds, double t, const ExecContext& exec);

/// remove_outflow without the counts (the caller adds them: over several processes, their sums).
template <int D>
Removed remove_outside(const Flow<D>& flow, ParticleSet<D>& fluid, const Aabb<D>& bounds, double t,
                       const ExecContext& exec);

/// Adds `r` to the counts.
void add_removed(FlowCounts& counts, const Removed& r);

extern template struct Sink<2>;
extern template struct Sink<3>;
extern template struct Emitter<2>;
extern template struct Emitter<3>;
extern template struct Flow<2>;
extern template struct Flow<3>;

}  // namespace eddy
