// Checkpoints of shallow-water grids: the scene as run and the solver's fields and clock; resuming
// rebuilds the solver from the scene and puts the saved grid in place (include/eddy/checkpoint.hpp).
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#include "eddy/json_text.hpp"
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
    auto bad = [&](const std::string& key, const std::string& what) {
        throw InputError(fmt::format("{}: corrupt checkpoint: meta key '{}' {}", where, key, what));
    };
    try {
        if (meta.value("kind", "") != "grid") bad("kind", "is not \"grid\" (a shallow-water grid's checkpoint)");
        check_common_meta(meta, where);
        // The terrain is part of the saved grid: a heightmap is not read again (it may have moved or
        // changed since; issue 29, item 10). The scene is rebuilt on a flat terrain, then the grid
        // loaded over it.
        nlohmann::json document = meta["scene"];
        if (document.contains("terrain") && document["terrain"].is_object()) document["terrain"] = "0";
        std::optional<Scene> parsed;
        try {
            parsed.emplace(parse_scene(document, meta["scene_source"].get<std::string>()));
        } catch (const InputError& e) {
            throw InputError(fmt::format("{}: the scene it holds: {}", where, e.what()));
        }
        const Scene& scene = *parsed;
        // The run's formats, for the frame writers' buffers (the run loop checks the record in full).
        std::vector<std::string> formats;
        if (const auto& run = meta["run"]; run.contains("formats") && run["formats"].is_array())
            for (const auto& f : run["formats"])
                if (f.is_string() && (f == "vti" || f == "csv" || f == "obj" || f == "ply"))
                    formats.push_back(f.get<std::string>());
        ShallowWaterSimulation sim = make_shallow_water(scene, budget, formats);
        StateReader r(ck.state, where);
        std::visit([&](auto& solver) { solver.load_state(r); }, sim.solver);
        if (!r.done()) r.fail("unexpected bytes after the grid");
        std::visit(
            [&](const auto& solver) {
                if (solver.time() != meta["time"].get<double>() || solver.steps() != meta["steps"].get<std::uint64_t>())
                    r.fail("the clock in its state is not the one in its meta data");
                const auto& g = solver.grid();
                for (const auto* v : {&g.terrain, &g.depth, &g.ink, &g.u, &g.w})
                    for (auto x : *v)
                        if (!std::isfinite(x)) r.fail("a terrain height, depth, ink or velocity is not finite");
                for (auto d : g.depth)
                    if (d < 0) r.fail("a water depth is negative");
            },
            sim.solver);
        record = meta["run"];
        return sim;
    } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("{}: corrupt checkpoint: its meta data has a value of the wrong type ({})", where,
                                     text_excerpt(e.what(), 80)));
    }
}

}  // namespace eddy
