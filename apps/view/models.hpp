// eddy-view: users' models (scene boundaries with "shape": "mesh" in 3D, "polygon" in 2D) as the
// window draws them: the model's geometry at rest, built once per reset and shared by every snapshot
// (immutable), and its rigid pose at the snapshot's time (the boundary object's motion). 3D models are
// drawn as shaded meshes, 2D polygons as an outline band on the wall's side; their wall particles are
// not drawn. No OpenGL here: the simulation-thread tests link it without a window.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "camera.hpp"
#include "eddy/boundary.hpp"
#include "eddy/mesh.hpp"
#include "mesh.hpp"

namespace eddy::view {

/// A closed polygon's segments (2D): vertices (x, y, 0) and pairs of vertex indices, oriented as
/// eddy's cleaned meshes are (walking a segment from its first vertex to its second, the model's
/// inside is on the left).
struct Outline {
    std::vector<float> xyz;                ///< 3 per vertex (m), z = 0
    std::vector<std::uint32_t> segments;   ///< 2 vertex indices per segment
    std::size_t size() const { return segments.size() / 2; }
};

/// One model of the running scene, as drawn.
struct ModelView {
    std::uint16_t object = 0;  ///< Boundary object: index into the scene's "boundaries" (BoundarySet::object)
    bool solid = true;         ///< An obstacle (true) or a container that holds the fluid (false)
    bool moving = false;       ///< Follows a prescribed motion: `pose` changes between snapshots
    bool closed = true;        ///< No open edges: its outside is the side its triangles face (see draw_model)
    std::uint64_t id = 0;      ///< Identifies the rest geometry (the window uploads it once per id)
    /// 3D: the model's triangles at rest (scene coordinates), vertices split along creases sharper than
    /// 35 degrees, so that boxes and blades look flat-shaded and cups smooth.
    std::shared_ptr<const SurfaceMesh> mesh;
    std::shared_ptr<const Outline> outline;  ///< 2D: the polygon at rest
    Mat4 pose = Mat4::identity();            ///< Rest -> scene at the snapshot's time (rotation and translation)

    /// A rest point at the snapshot's time.
    V3 apply(V3 rest) const;
};

/// The triangles of a model for shading: every triangle gets its own three vertices, each with the
/// area-weighted normal of the triangles around it that turn less than `crease_deg` from this one.
SurfaceMesh shaded_mesh(const Mesh<3>& m, float crease_deg = 35.0f);

/// A polygon's segments as an Outline.
Outline outline_of(const Mesh<2>& m);

/// The matrix of x -> pivot + shift + R (x - pivot); in 2D a rotation in the xy plane.
template <int D>
Mat4 pose_matrix(const RigidPose<D>& p);

/// Triangles (x, y, z per corner) of a band of width `width` along the posed outline, on the wall's
/// side (outside a container, inside a solid), with round joins at the corners.
std::vector<float> outline_band(const Outline& o, const Mat4& pose, bool solid, float width);

/// Line segments (pairs of points) of the posed outline.
std::vector<float> outline_lines(const Outline& o, const Mat4& pose);

}  // namespace eddy::view
