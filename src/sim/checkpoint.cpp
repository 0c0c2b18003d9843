// Checkpoints of particle simulations (include/eddy/checkpoint.hpp has the file layout): the scene as
// run, the clock, every particle field in its current order (the order is part of the state: sums
// run over neighbours in it), and the method's own state. Resuming rebuilds the simulation from the
// scene (walls, settings, derived constants) and then puts the saved state in place.
#include <limits>

#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#include "eddy/simulation.hpp"

namespace eddy {

namespace {

template <int D>
void save_particles(StateWriter& w, const ParticleSet<D>& f) {
    w.put_vector(f.position);
    w.put_vector(f.velocity);
    w.put_vector(f.acceleration);
    w.put_vector(f.density);
    w.put_vector(f.pressure);
    w.put_vector(f.id);
    w.put(f.mass);
    w.put(f.next_id);
    w.put<std::uint64_t>(f.scalars.size());
    for (const auto& s : f.scalars) {
        w.put_string(s.name);
        w.put_vector(s.data);
    }
    w.put<std::uint64_t>(f.vectors.size());
    for (const auto& v : f.vectors) {
        w.put_string(v.name);
        w.put_vector(v.data);
    }
}

template <int D>
void load_particles(StateReader& r, ParticleSet<D>& f) {
    r.get_vector(f.position);
    const std::size_t n = f.position.size();
    r.get_vector(f.velocity, n);
    r.get_vector(f.acceleration, n);
    r.get_vector(f.density, n);
    r.get_vector(f.pressure, n);
    r.get_vector(f.id, n);
    f.mass = r.get<float>();
    f.next_id = r.get<std::uint32_t>();
    for (std::uint32_t id : f.id)
        if (id >= f.next_id) r.fail("a particle id is not below next_id");
    const auto ns = r.get<std::uint64_t>();
    if (ns > 1024) r.fail("too many extra fields");
    f.scalars.resize(ns);
    for (auto& s : f.scalars) {
        s.name = r.get_string();
        r.get_vector(s.data, n);
    }
    const auto nv = r.get<std::uint64_t>();
    if (nv > 1024) r.fail("too many extra fields");
    f.vectors.resize(nv);
    for (auto& v : f.vectors) {
        v.name = r.get_string();
        r.get_vector(v.data, n);
    }
}

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const Simulation& simulation, const nlohmann::json& record) {
    std::visit(
        [&](const auto& sim) {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            nlohmann::json meta;
            meta["kind"] = "particles";
            meta["dimension"] = D;
            meta["method"] = sim.scene.method;
            meta["scene"] = sim.scene.document;
            meta["scene_source"] = sim.scene.source.string();
            meta["time"] = sim.time;
            meta["steps"] = sim.steps;
            meta["run"] = record;
            StateWriter w;
            w.put(sim.time);
            w.put(sim.steps);
            save_particles(w, sim.fluid);
            std::visit([&](const auto& m) { m.save_state(w); }, sim.method);
            write_checkpoint_file(file, meta, w.bytes());
        },
        simulation);
}

Simulation read_checkpoint(const std::filesystem::path& file, const ExecContext& exec, nlohmann::json& record,
                           const MemoryBudget& budget) {
    return restore_simulation(read_checkpoint_file(file), exec, record, budget);
}

Simulation restore_simulation(const CheckpointFile& ck, const ExecContext& exec, nlohmann::json& record,
                              const MemoryBudget& budget) {
    const std::string where = ck.file.string();
    const auto& meta = ck.meta;
    auto bad = [&](const char* what) {
        throw InputError(fmt::format("{}: corrupt checkpoint: {}", where, what));
    };
    if (!meta.contains("kind") || meta["kind"] != "particles") bad("not a particle simulation's checkpoint");
    if (!meta.contains("scene") || !meta["scene"].is_object() || !meta.contains("scene_source") ||
        !meta["scene_source"].is_string())
        bad("the scene is missing");
    // The scene as it was run (the file may have changed since); relative paths in it (models,
    // heightmaps) resolve against the original file's folder.
    const Scene scene = parse_scene(meta["scene"], meta["scene_source"].get<std::string>());
    Simulation simulation = make_simulation(scene, std::numeric_limits<std::size_t>::max(), exec, budget);
    StateReader r(ck.state, where);
    std::visit(
        [&](auto& sim) {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            if (meta.value("dimension", 0) != D) bad("its dimension does not match its scene");
            sim.time = r.get<double>();
            sim.steps = r.get<std::uint64_t>();
            load_particles(r, sim.fluid);
            std::visit([&](auto& m) { m.load_state(r); }, sim.method);
        },
        simulation);
    if (!r.done()) r.fail("unexpected bytes after the method's state");
    record = meta.value("run", nlohmann::json::object());
    return simulation;
}

}  // namespace eddy
