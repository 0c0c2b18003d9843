// Fuzz target: a heightmap PNG under a shallow-water scene's terrain (header checks, the memory
// estimate of its decoded size, stb_image's decoder, the sampling onto the grid).
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto png = eddy::fuzz::as_file(data, size, ".png");
    return eddy::fuzz::expect_clean([&] {
        nlohmann::json j = {{"name", "fuzz"}, {"method", "shallow_water"},
                            {"grid", {{"cells", {16, 16}}, {"dx", 0.1}}},
                            {"terrain", {{"heightmap", png.string()}, {"scale", 1.0}}}, {"water", {{"depth", "0.1"}}}};
        const eddy::Scene scene = eddy::parse_scene(j, "fuzz.json");
        eddy::ShallowWaterSimulation sim = eddy::make_shallow_water(scene, eddy::MemoryBudget{std::size_t(1) << 30});
        (void)sim;
    });
}
