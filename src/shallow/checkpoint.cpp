// Checkpoints of shallow-water grids: the scene as run and the solver's fields and clock; resuming
// rebuilds the solver from the scene and puts the saved grid in place (include/eddy/checkpoint.hpp).
#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#include "eddy/shallow_water.hpp"

namespace eddy {

void write_checkpoint(const std::filesystem::path& file, const ShallowWaterSimulation& sim, const nlohmann::json& record) {
    std::visit(
        [&](const auto& solver) {
            nlohmann::json meta;
            meta["kind"] = "grid";
            meta["method"] = sim.scene.method;
            meta["precision"] = sim.spec.settings.precision;
            meta["scene"] = sim.scene.document;
            meta["scene_source"] = sim.scene.source.string();
            meta["time"] = solver.time();
            meta["steps"] = solver.steps();
            meta["run"] = record;
            StateWriter w;
            solver.save_state(w);
            write_checkpoint_file(file, meta, w.bytes());
        },
        sim.solver);
}

ShallowWaterSimulation restore_shallow_water(const CheckpointFile& ck, nlohmann::json& record,
                                             const MemoryBudget& budget) {
    const std::string where = ck.file.string();
    const auto& meta = ck.meta;
    if (meta.value("kind", "") != "grid" || !meta.contains("scene") || !meta["scene"].is_object() ||
        !meta.contains("scene_source") || !meta["scene_source"].is_string())
        throw InputError(fmt::format("{}: corrupt checkpoint: not a shallow-water grid's", where));
    const Scene scene = parse_scene(meta["scene"], meta["scene_source"].get<std::string>());
    std::vector<std::string> formats;  // the run's, for the frame writers' buffers
    if (const auto run = meta.find("run"); run != meta.end() && run->is_object() && run->contains("formats") &&
                                           (*run)["formats"].is_array())
        for (const auto& f : (*run)["formats"])
            if (f.is_string()) formats.push_back(f.get<std::string>());
    ShallowWaterSimulation sim = make_shallow_water(scene, budget, formats);
    StateReader r(ck.state, where);
    std::visit([&](auto& solver) { solver.load_state(r); }, sim.solver);
    if (!r.done()) r.fail("unexpected bytes after the grid");
    record = meta.value("run", nlohmann::json::object());
    return sim;
}

}  // namespace eddy
