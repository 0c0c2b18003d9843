// The WebAssembly build (docs/web.md): the functions of the library files left out because their
// dependency has no web build (cmake/eddyWebSources.cmake), as refusals that name what is missing. A
// scene that needs one fails to load with this one line, shown on the page like any other bad input.
#include <string>

#include "eddy/error.hpp"
#include "eddy/surface.hpp"

namespace eddy {

namespace {
[[noreturn]] void refuse(const std::string& what, const std::string& library) {
    throw InputError(what + ": not available in eddy's web build (" + library +
                     " has no WebAssembly build here; docs/web.md); the native eddy has it");
}
}  // namespace

namespace vdb {
template <int D>
void write_level_set(const std::filesystem::path& path, const SparseGrid<D>&, float, const SparseGrid<D>*) {
    refuse(path.string() + ": .vdb files", "OpenVDB");
}
template void write_level_set<2>(const std::filesystem::path&, const SparseGrid<2>&, float, const SparseGrid<2>*);
template void write_level_set<3>(const std::filesystem::path&, const SparseGrid<3>&, float, const SparseGrid<3>*);

FileInfo read_info(const std::filesystem::path& path, const Vec3&) { refuse(path.string() + ": .vdb files", "OpenVDB"); }

SparseGrid<3> fog_to_sdf(const SparseGrid<3>&, float) { refuse("OpenVDB's fogToSdf", "OpenVDB"); }

std::size_t particles_to_mesh(std::span<const Vec3>, float, float, double*) { refuse("OpenVDB's particlesToSdf", "OpenVDB"); }
}  // namespace vdb

}  // namespace eddy
