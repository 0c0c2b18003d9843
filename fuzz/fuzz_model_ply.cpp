// Fuzz target: a .ply model, ASCII or binary (not fuzz_read_ply: that one is the particle reader) (fuzz/model_support.hpp: read from memory, checked, cleaned, in a BVH).
#include "model_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return eddy::fuzz::read_model(data, size, "input.ply");
}
