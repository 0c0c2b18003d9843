// eddy: file formats. Every writer is atomic: it writes ".<name>.eddy-tmp-XXXXXX" (random letters,
// created with O_EXCL|O_NOFOLLOW) and renames it over the target, so a crash never leaves a
// half-written file and a link planted in the folder is never written through.
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "eddy/boundary.hpp"
#include "eddy/mesh.hpp"
#include "eddy/particles.hpp"
#include "eddy/up_axis.hpp"

namespace eddy::io {

/// n bytes from the kernel's random source (getrandom; the browser's crypto.getRandomValues in the web
/// build), std::random_device where it fails: temporary names and run ids.
void random_bytes(unsigned char* out, std::size_t n);

/// Writes bytes to path atomically (temporary file + fsync + rename). Throws std::runtime_error
/// naming the path on failure.
void write_atomic(const std::filesystem::path& path, std::string_view bytes);
/// The same for bytes in parts, written one after another (a large state is never copied to join them).
void write_atomic_parts(const std::filesystem::path& path, std::span<const std::string_view> parts);

/// Is `name` (a file name, no folder) one of write_atomic's temporaries (".NAME.eddy-tmp-XXXXXX")?
bool is_temporary_name(std::string_view name);
/// Removes the temporaries a killed write left in `folder` (not below it): regular files whose name
/// is_temporary_name, never a link, nothing else. A folder that is a symbolic link is left alone.
/// Returns how many were removed.
std::size_t remove_stale_temporaries(const std::filesystem::path& folder);

/// A copy of particles (positions, velocities) or walls (positions, rest positions, velocities) of a
/// y-up world in the axes of a file whose up axis is `up` (eddy/up_axis.hpp).
inline ParticleSet<3> in_file_axes(ParticleSet<3> p, UpAxis up) {
    to_file_axes(std::span<Vec3>(p.position), UpAxis::y, up);
    to_file_axes(std::span<Vec3>(p.velocity), UpAxis::y, up);
    return p;
}
inline BoundarySet<3> in_file_axes(BoundarySet<3> b, UpAxis up) {
    to_file_axes(std::span<Vec3>(b.position), UpAxis::y, up);
    to_file_axes(std::span<Vec3>(b.rest_position), UpAxis::y, up);
    to_file_axes(std::span<Vec3>(b.velocity), UpAxis::y, up);
    return b;
}

/// JSON, pretty-printed, atomically.
void write_json(const std::filesystem::path& path, const nlohmann::json& j);

/// VTK XML PolyData (.vtp), binary appended raw data (UInt64 headers), points as vertices, with point
/// data: velocity (vector), density, pressure, id. 2D points get z = 0.
template <int D>
void write_vtp(const std::filesystem::path& path, const ParticleSet<D>& p);

/// CSV with header id,x,y[,z],vx,vy[,vz],density,pressure (full float precision, "%.9g").
template <int D>
void write_csv(const std::filesystem::path& path, const ParticleSet<D>& p);

/// Binary little-endian PLY point cloud: x y z (float), vx vy vz, density, pressure (float), id (uint).
template <int D>
void write_ply(const std::filesystem::path& path, const ParticleSet<D>& p);

/// The walls (src/io/walls_io.cpp): VTK PolyData with two pieces, the boundary particles (vertices)
/// and the models' surfaces as given (triangles, or lines in 2D), both with the point arrays velocity,
/// psi and object: on the models' vertices the velocity of their object's rigid motion (fitted to its
/// wall particles' velocities; zero at rest) and psi 0. With `pressure` (one per wall particle,
/// eddy/wall_pressure.hpp) both pieces carry a point array "pressure": the particles' own, and
/// `model_pressure` on the models' vertices (one per vertex, in the models' order; empty: zeros).
/// Every piece has the same arrays or VTK's reader (ParaView's) reads the file as 0 points (issue 31).
template <int D>
void write_walls_vtp(const std::filesystem::path& path, const BoundarySet<D>& b,
                     const std::vector<std::pair<std::uint16_t, Mesh<D>>>& models, std::span<const float> pressure = {},
                     std::span<const float> model_pressure = {});

/// Parallel VTK PolyData (.pvtp): the pieces (.vtp files written by write_vtp, relative to the .pvtp's
/// folder) that ParaView opens as one data set; a run over several processes writes one per process.
void write_pvtp(const std::filesystem::path& path, const std::vector<std::string>& pieces);

/// ParaView collection (.pvd) of (time, relative file) entries.
void write_pvd(const std::filesystem::path& path, const std::vector<std::pair<double, std::string>>& entries);

/// How particle files are read (files from users are untrusted: eddy/input_file.hpp).
struct ParticleReadOptions {
    /// Bytes the file may hold (a .pvtp: itself and its pieces together), decided from the sizes before
    /// anything is read; `limit_origin` says where the limit came from in the message ("--max-memory").
    std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
    std::string limit_origin = "the limit";
    /// A .pvtp's pieces may lie outside its folder (absolute Source, '..', links leading out).
    bool allow_outside_references = false;
    /// Refuse a file without velocities (vx, vy columns or properties; a 'velocity' array) instead of
    /// reading them as zero: eddy whitewater needs them (a frame without them made no whitewater, silently).
    bool require_velocity = false;
};

/// Readers for the files above (positions, velocities, density, pressure, id where present).
/// Throw InputError naming the file on a missing file, one that is not a regular file (a FIFO is
/// refused without blocking), one larger than options.max_bytes, or bad content. The dimension is read
/// from the file (csv: presence of z; vtp/ply: 3 components; all-zero z in vtp/ply reads fine as 3D).
template <int D>
ParticleSet<D> read_csv(const std::filesystem::path& path, const ParticleReadOptions& options = {});
template <int D>
ParticleSet<D> read_vtp(const std::filesystem::path& path, const ParticleReadOptions& options = {});
template <int D>
ParticleSet<D> read_ply(const std::filesystem::path& path, const ParticleReadOptions& options = {});
/// A .pvtp's pieces as one set (empty pieces skipped; ids unique across them). Pieces are confined to
/// the .pvtp's folder unless options.allow_outside_references.
template <int D>
ParticleSet<D> read_pvtp(const std::filesystem::path& path, const ParticleReadOptions& options = {});
/// Any of the above, chosen by the extension (.csv, .vtp, .pvtp, .ply); other extensions are an InputError.
template <int D>
ParticleSet<D> read_particles(const std::filesystem::path& path, const ParticleReadOptions& options = {});

}  // namespace eddy::io
