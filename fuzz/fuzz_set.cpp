// Fuzz target: one `--set KEY=VALUE` override applied to a bundled scene, as `eddy run --set` does.
#include "eddy/scene.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const nlohmann::json base = nlohmann::json::parse(R"({"name": "fuzz", "dimension": 2, "particle_radius": 0.01,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [1, 1]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.4]}]})");
    const std::string set(reinterpret_cast<const char*>(data), size);
    return eddy::fuzz::expect_clean([&] { eddy::parse_scene(base, "fuzz.json", {set}); });
}
