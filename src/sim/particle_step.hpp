// One particle step (issue 41): the opening and the closing every particle run shares, around a method's own
// passes (DFSPH's, WCSPH's, PBF's, Clavet's), written once. eddy::step (src/sim/run.cpp) calls it with the
// plain exchange below; the distributed run (src/distributed/particle_boxes.cpp) with one that agrees on the
// time step over the processes, emits everywhere alike, cuts the boxes, migrates the particles, builds the
// halo and sums the removals. The method never knows which.
//
// A step, in order:
//   1. the time step: the method's own (agreed over the processes), at most the emitters' limit, spread over
//      the last steps before `until` so that the step lands on it (landing_step);
//   2. the emitters' particles due at the step's start (after the time step is chosen: a nozzle's drive
//      does not shorten the step it starts);
//   3. the exchange's preparation (one process: none);
//   4. the method's passes, then the bodies over the same interval;
//   5. the exchange's tidying (the ghosts dropped), then the particles that left (outflow, escaped, drained);
//   6. the clock.
#pragma once
#include <algorithm>
#include <cstdint>
#include <variant>

#include "core/pass_timer.hpp"
#include "eddy/bodies.hpp"
#include "eddy/emitters.hpp"
#include "eddy/simulation.hpp"

namespace eddy::detail {

/// What a run does around a step's passes where its particles are not all on one process. The defaults are
/// one process's.
template <int D>
struct StepExchange {
    virtual ~StepExchange() = default;
    /// The time step every process takes, from this process's suggestion.
    virtual float agreed_dt(float dt) { return dt; }
    /// The emitters' particles due at the step's start; returns how many were put in.
    virtual std::size_t emit(ParticleSimulation<D>& sim) {
        return sim.flow.emits() ? eddy::emit(sim.flow, sim.fluid, sim.time) : 0;
    }
    /// Before the method's passes, the step `dt` long.
    virtual void before_passes(ParticleSimulation<D>& /*sim*/, float /*dt*/, const ExecContext& /*exec*/) {}
    /// After the method's passes and the bodies.
    virtual void after_passes(ParticleSimulation<D>& /*sim*/) {}
    /// The particles outside the domain, beyond every container or in a sink at `t_end`, removed and counted
    /// in the flow's totals (over every process).
    virtual Removed remove(ParticleSimulation<D>& sim, double t_end, const ExecContext& exec) {
        return remove_outflow(sim.flow, sim.fluid, sim.bounds, t_end, exec);
    }
};

/// A step's removals in its statistics.
inline void note_removed(StepStats& st, const Removed& r) {
    st.removed_outflow = static_cast<std::uint32_t>(r.outflow);
    st.removed_escaped = static_cast<std::uint32_t>(r.escaped);
    st.removed_drained = static_cast<std::uint32_t>(r.total() - r.outflow - r.escaped);
}

/// One step of `sim`, landing on `until` when it is near (0: the method's own step), through `exchange`.
template <int D>
StepStats step_particles(ParticleSimulation<D>& sim, const ExecContext& exec, double until, StepExchange<D>& exchange) {
    return std::visit(
        [&](auto& method) {
            float dt = exchange.agreed_dt(method.suggest_dt(sim.fluid));
            const bool underflow = dt < method_dt_min(sim.method);
            dt = std::min(dt, sim.flow.dt_limit(sim.time));
            bool lands = false;
            dt = landing_step(dt, sim.time, until, lands);
            const std::size_t emitted = exchange.emit(sim);
            exchange.before_passes(sim, dt, exec);
            const double t_end = lands ? until : sim.time + dt;  // the clock after the step
            StepStats st = method.step(sim.fluid, sim.boundary, sim.time, dt, exec);
            PassTimer timer;  // after the method's passes: the bodies', the outflow's
            advance_bodies(sim.bodies, sim.boundary, sim.time, dt, t_end);
            timer.lap("bodies");
            exchange.after_passes(sim);
            if (!st.non_finite)  // a step that diverged keeps its particles, for the report
                note_removed(st, exchange.remove(sim, t_end, exec));
            st = timer.finish("outflow", st);
            st.emitted = static_cast<std::uint32_t>(emitted), st.dt_underflow = underflow;
            st.scene_speed_limit = sim.speed_bound.limit();
            sim.time = t_end, ++sim.steps;
            return st;
        },
        sim.method);
}

}  // namespace eddy::detail
