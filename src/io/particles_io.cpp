// Particle files: the ParaView collection (.pvd) and the reader that picks a format by extension.
// Each format has its own file: particles_vtp.cpp, particles_csv.cpp, particles_ply.cpp (helpers in
// particle_files.hpp).
#include "io/particle_files.hpp"

namespace eddy::io {

using namespace detail;

// ---- ParaView collection ----------------------------------------------------------------------


void write_pvd(const std::filesystem::path& path, const std::vector<std::pair<double, std::string>>& entries) {
    std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n";
    // "{}" is the shortest text that reads back as the same double: frame times stay exact.
    for (const auto& [t, file] : entries)
        s += fmt::format("    <DataSet timestep=\"{}\" group=\"\" part=\"0\" file=\"{}\"/>\n", t, xml_escape(file));
    s += "  </Collection>\n</VTKFile>\n";
    write_atomic(path, s);
}

template <int D>
ParticleSet<D> read_particles(const std::filesystem::path& path, const ParticleReadOptions& options) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".csv") return read_csv<D>(path, options);
    if (ext == ".vtp") return read_vtp<D>(path, options);
    if (ext == ".pvtp") return read_pvtp<D>(path, options);
    if (ext == ".ply") return read_ply<D>(path, options);
    throw input_error(path, "unknown particle file type '{}'; allowed: .csv, .vtp, .pvtp, .ply", ext);
}

template ParticleSet<2> read_particles<2>(const std::filesystem::path&, const ParticleReadOptions&);
template ParticleSet<3> read_particles<3>(const std::filesystem::path&, const ParticleReadOptions&);

}  // namespace eddy::io
