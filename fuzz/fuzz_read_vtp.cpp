// Fuzz target: a .vtp particle file through eddy's reader (eddy mesh and "shape": "file" read them),
// in 2D and 3D.
#include "eddy/io.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = eddy::fuzz::as_file(data, size, ".vtp");
    eddy::fuzz::expect_clean([&] { eddy::io::read_particles<2>(file); });
    return eddy::fuzz::expect_clean([&] { eddy::io::read_particles<3>(file); });
}
