// eddy-view: a triangle mesh to draw over the particles (the reconstructed fluid surface). Plain arrays,
// so that any producer can fill it: a Wavefront OBJ file (`--mesh FILE.obj`, e.g. from `eddy mesh`),
// or the surface reconstruction run on the simulation thread.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

namespace eddy::view {

struct SurfaceMesh {
    std::vector<float> xyz;               ///< 3 per vertex (m)
    std::vector<float> normals;           ///< 3 per vertex, unit, outward; empty: computed from the triangles
    std::vector<std::uint32_t> triangles; ///< 3 vertex indices per triangle
    std::size_t vertices() const { return xyz.size() / 3; }
    bool empty() const { return triangles.empty(); }
    /// Fills `normals` from the triangles (area-weighted) when it is empty or of the wrong size.
    void compute_normals();
    /// Bounding box (m): lo[3], hi[3].
    void bounds(float lo[3], float hi[3]) const;
};

/// Reads the vertices (v), normals (vn) and faces (f, any of the v, v/t, v//n, v/t/n forms; polygons
/// are fanned into triangles) of an OBJ file; other lines are ignored. Throws InputError naming the
/// file and line on a missing file, a bad number or an index out of range.
SurfaceMesh read_obj(const std::filesystem::path& path);

}  // namespace eddy::view
