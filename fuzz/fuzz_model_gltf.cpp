// Fuzz target: a glTF 2.0 model (fuzz/model_support.hpp: read from memory, checked, cleaned, in a BVH):
// binary GLB when the input starts with its magic "glTF", JSON .gltf otherwise (buffers as base64 data
// uris; external ones are not found).
#include <cstring>

#include "model_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const bool glb = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
    return eddy::fuzz::read_model(data, size, glb ? "input.glb" : "input.gltf");
}
