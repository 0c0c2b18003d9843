// Fuzz target: a .obj model (fuzz/model_support.hpp: read from memory, checked, cleaned, in a BVH).
#include "model_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return eddy::fuzz::read_model(data, size, "input.obj");
}
