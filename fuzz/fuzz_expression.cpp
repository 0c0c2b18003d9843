// Fuzz target: a shallow-water scene whose terrain is the input, a muparser expression of x, y, Lx,
// Ly, dx, evaluated over a small grid (as the scene loader and the solver's constructor do).
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string expr(reinterpret_cast<const char*>(data), size);
    return eddy::fuzz::expect_clean([&] {
        nlohmann::json j = {{"name", "fuzz"}, {"method", "shallow_water"},
                            {"grid", {{"cells", {16, 8}}, {"dx", 0.1}}},
                            {"terrain", expr}, {"water", {{"depth", "0.1"}}}};
        const eddy::Scene scene = eddy::parse_scene(j, "fuzz.json");
        eddy::ShallowWaterSimulation sim = eddy::make_shallow_water(scene);
        (void)sim;
    });
}
