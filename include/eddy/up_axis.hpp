// eddy: the up axis of the files eddy writes (docs/blender.md).
//
// eddy's particle scenes are y-up (gravity [0, -9.81, 0] by default); its shallow-water grids are
// z-up (the height along z). Files do not mix the two: every 3D geometry file eddy writes (particles
// .vtp/.csv/.ply, walls .vtp/.obj, surfaces .obj/.ply, the water surface .obj/.ply, .vdb grids) has
// one up axis, y unless `--up z` says otherwise. summary.json records it ("up_axis").
//
// - y up: OBJ's and glTF's convention; Houdini, Maya and ParaView's default view. Blender's OBJ
//   importer (forward -Z, up Y) turns it into Blender's z up.
// - z up: Blender's own frame (its PLY importer and Python API take coordinates as they are),
//   3ds Max, Unreal. A y-up world goes to z up by +90 degrees about x: (x, y, z) -> (x, -z, y),
//   exactly what Blender's OBJ importer does, so a --up z PLY and a --up y OBJ land the same way.
//
// 2D scenes are written in the x-y plane (z = 0) and refuse --up z.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "eddy/error.hpp"
#include "eddy/math.hpp"
#include "eddy/mesh.hpp"

namespace eddy {

enum class UpAxis : std::uint8_t { y, z };

inline const char* name(UpAxis up) { return up == UpAxis::y ? "y" : "z"; }

/// "y" or "z"; InputError naming `where` and what is allowed otherwise.
inline UpAxis parse_up_axis(std::string_view s, std::string_view where) {
    if (s == "y") return UpAxis::y;
    if (s == "z") return UpAxis::z;
    throw InputError(std::string(where) + ": up axis '" + std::string(s) + "': allowed: y, z");
}

/// A vector of the world whose up axis is `world` as a file whose up axis is `file` holds it: identity
/// when they agree; y up -> z up: (x, -z, y); z up -> y up: (x, z, -y). Positions, velocities and
/// normals alike (a proper rotation: lengths, angles and orientation are kept).
inline Vec3 to_file_axes(const Vec3& v, UpAxis world, UpAxis file) {
    if (world == file) return v;
    if (world == UpAxis::y) return Vec3{{v[0], -v[2], v[1]}};
    return Vec3{{v[0], v[2], -v[1]}};
}

/// In place, for every vector of `v`.
inline void to_file_axes(std::span<Vec3> v, UpAxis world, UpAxis file) {
    if (world == file) return;
    for (auto& x : v) x = to_file_axes(x, world, file);
}

/// A mesh's vertices, normals and 3-component attributes (velocity) in the file's axes.
inline void to_file_axes(Mesh<3>& m, UpAxis world, UpAxis file) {
    if (world == file) return;
    to_file_axes(std::span<Vec3>(m.vertices), world, file);
    to_file_axes(std::span<Vec3>(m.normals), world, file);
    for (auto& a : m.attributes)
        if (a.components == 3)
            for (std::size_t i = 0; i + 2 < a.values.size(); i += 3) {
                const Vec3 v = to_file_axes(Vec3{{a.values[i], a.values[i + 1], a.values[i + 2]}}, world, file);
                for (int c = 0; c < 3; ++c) a.values[i + c] = v[c];
            }
}

}  // namespace eddy
