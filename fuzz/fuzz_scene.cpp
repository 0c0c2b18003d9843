// Fuzz target: a scene file (JSON text) through the loader and the builders, as `eddy run FILE` does,
// with a small particle cap so that an input cannot make a slow run of it.
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = eddy::fuzz::as_file(data, size, ".json");
    return eddy::fuzz::expect_clean([&] {
        const eddy::Scene scene = eddy::load_scene(file);
        if (scene.method == "shallow_water") return;  // fuzz_expression covers the grid's scenes
        const eddy::ExecContext exec(1);
        eddy::Simulation sim = eddy::make_simulation(scene, 20'000, exec, eddy::MemoryBudget{std::size_t(1) << 30});
        eddy::step(sim, exec);
    });
}
