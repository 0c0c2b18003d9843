// An emitter added to a running simulation, or stopped (eddy/simulation.hpp: add_emitter, stop_emitter):
// the scene's document gains it (or its stop), is parsed again as a scene (the same checks and errors as
// a file's), and the flow is rebuilt from it with the other emitters' counts kept, so that a checkpoint
// taken later resumes the same run.
#include <algorithm>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/simulation.hpp"

namespace eddy {

namespace {

// What the outflow and the sinks removed so far, carried into a rebuilt flow (the same sinks).
void keep_removed(const FlowCounts& from, FlowCounts& to) {
    to.removed_outflow = from.removed_outflow;
    to.removed_escaped = from.removed_escaped;
    to.drained = from.drained;
}

// The scene of `doc` (the running one's, edited), its flow rebuilt, counts carried over for the first
// `kept` emitters.
template <int D>
void take_scene(ParticleSimulation<D>& sim, const nlohmann::json& doc, std::size_t kept, const ExecContext& exec) {
    Scene next = parse_scene_from(doc, sim.scene.where(), scene_inputs(sim.scene));
    next.source = sim.scene.source;
    next.warnings = sim.scene.warnings;
    Flow<D> flow = scene_flow<D>(next, sim, exec);
    for (std::size_t k = 0; k < kept && k < flow.emitters.size() && k < sim.flow.counts.due.size(); ++k) {
        flow.counts.due[k] = sim.flow.counts.due[k];
        flow.counts.emitted[k] = sim.flow.counts.emitted[k];
    }
    keep_removed(sim.flow.counts, flow.counts);
    for (const auto& e : next.emitters) sim.speed_bound.initial = std::max(sim.speed_bound.initial, float(e.speed));
    sim.flow = std::move(flow);
    sim.scene = std::move(next);
}

}  // namespace

std::size_t add_emitter(Simulation& simulation, const nlohmann::json& emitter, const ExecContext& exec) {
    return std::visit(
        [&](auto& sim) {
            const std::size_t index = sim.scene.emitters.size();
            nlohmann::json e = emitter;
            if (!e.is_object())
                throw InputError(fmt::format("{}: emitters[{}]: expected an object, got {}", sim.scene.where(), index,
                                             e.type_name()));
            // From now on: a start before the clock would owe the particles of the time before it. A start
            // that is no number >= 0 is left for the scene's check to refuse by name.
            if (!e.contains("start")) e["start"] = sim.time;
            else if (e["start"].is_number() && e["start"].get<double>() >= 0.0)
                e["start"] = std::max(e["start"].get<double>(), sim.time);
            if (!e.contains("stop")) e["stop"] = kMaxDuration;  // until stop_emitter
            nlohmann::json doc = sim.scene.document;
            if (!doc.contains("emitters")) doc["emitters"] = nlohmann::json::array();
            doc["emitters"].push_back(e);
            take_scene(sim, doc, index, exec);
            return index;
        },
        simulation);
}

void stop_emitter(Simulation& simulation, std::size_t k, const ExecContext& exec) {
    std::visit(
        [&](auto& sim) {
            const std::size_t n = sim.scene.emitters.size();
            if (n == 0) throw InputError(fmt::format("stop_emitter({}): the simulation has no emitters", k));
            if (k >= n)
                throw InputError(fmt::format("stop_emitter({}): the simulation has {} emitter(s); allowed: 0 to {}", k, n, n - 1));
            // Stopped already: it keeps its stop (a later one would owe the particles of the gap, a burst).
            if (sim.scene.emitters[k].stop <= sim.time) return;
            nlohmann::json doc = sim.scene.document;
            auto& e = doc["emitters"][k];
            const double start = e.contains("start") && e["start"].is_number() ? e["start"].get<double>() : 0.0;
            // Stopping before it started: it never emits (stop must follow start; a hair after it).
            e["stop"] = std::max(sim.time, start + 1e-9);
            take_scene(sim, doc, sim.scene.emitters.size(), exec);
        },
        simulation);
}

}  // namespace eddy
