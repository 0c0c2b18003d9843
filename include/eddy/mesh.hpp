// eddy: the mesh type shared by the surface module (reconstructed fluid surfaces) and the geometry
// module (walls and fluid volumes from users' models): triangles in 3D, segments in 2D.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "eddy/math.hpp"

namespace eddy {

/// A per-vertex field of a mesh: `components` floats per vertex (1: a scalar, D: a vector), e.g. the
/// particles' velocity interpolated onto a reconstructed surface (interpolate_attributes).
struct VertexAttribute {
    std::string name;
    int components = 1;
    std::vector<float> values;  ///< vertices.size() * components, vertex-major
};

/// A mesh: triangles in 3D, line segments in 2D (closed contour lines), with shared vertices.
/// Cells are oriented outward: triangle normals (right-hand rule) point out of the enclosed volume
/// (the fluid, for a reconstructed surface; the model, for a wall or fluid volume of the geometry
/// module); in 2D, walking a segment from its first to its second vertex, the inside is on the left
/// (contours run counter-clockwise). normals may be empty (geometry does not use them).
template <int D>
struct Mesh {
    std::vector<Vec<D>> vertices;                   ///< (m)
    std::vector<Vec<D>> normals;                    ///< Unit, outward (from the signed-distance gradient)
    std::vector<std::array<std::uint32_t, D>> cells;  ///< Triangles (3D) or segments (2D)
    std::vector<VertexAttribute> attributes;        ///< Optional per-vertex fields (PLY writes them)
};

/// Enclosed volume (m^3; area m^2 in 2D) by the divergence theorem; positive for outward orientation.
template <int D>
double enclosed_volume(const Mesh<D>& m);

}  // namespace eddy
