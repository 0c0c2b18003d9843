// eddy: the rigid bodies in files for ParaView and Blender (issue 30; src/io/bodies_io.cpp).
//
// - bodies/body_KK.obj, once per run: body KK's surface at rest with coordinates relative to its centre
//   of mass, so that an object placed at the body's position and turned by its orientation (bodies.csv)
//   is the body at its pose. Blender's add-on animates such objects by keyframes (docs/blender.md).
// - frames/bodies_NNNNN.vtp, every frame: every body's surface at its pose, one PolyData of triangles
//   with a cell array "body" (its index in bodies.csv) and a point array "velocity" (the rigid
//   velocity v + w x r); bodies.pvd lists them with the frames' times.
//
// 2D bodies (box, circle, polygon) are drawn as prisms a few particle radii deep about z = 0, so that a
// 3D tool shows them as solids. Every file has the run's up axis (eddy/up_axis.hpp); bodies.csv, like
// the bodies' state, stays in the world's axes (y up).
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "eddy/bodies.hpp"
#include "eddy/mesh.hpp"
#include "eddy/up_axis.hpp"

namespace eddy::io {

/// Each body's closed surface at rest, relative to its centre of mass, in the world's axes (y up):
/// a box's 12 triangles, a sphere's UV tessellation (32 x 16), a cylinder's or model's own triangles,
/// and in 2D a prism of depth `depth` (m) about z = 0 (a circle as a 48-gon, a polygon's corners
/// ear-clipped for the caps). Triangles are oriented outward.
template <int D>
std::vector<Mesh<3>> body_rest_meshes(const RigidBodies<D>& bodies, double depth);

/// The depth of a 2D body's prism: 4 particle radii (at least a visible slab beside the body's size).
inline double body_prism_depth(double particle_radius) { return 4.0 * particle_radius; }

/// Writes `folder`/body_KK.obj (KK = 00, 01, ...; atomic) for each mesh in the axes of `up`, and removes
/// the body_*.obj an earlier run left beyond them (none when `rest` is empty). Creates the folder when
/// there are bodies. Returns the files' names relative to `folder`.
std::vector<std::string> write_body_meshes(const std::filesystem::path& folder, const std::vector<Mesh<3>>& rest,
                                           UpAxis up);

/// The bodies at their pose as VTK XML PolyData (atomic): each rest mesh turned by its body's orientation
/// and moved to its position (state[k]), points in the axes of `up`, cell array "body" (Int32), point array
/// "velocity" (Float32, v + w x r). Throws std::invalid_argument when rest and state differ in size.
void write_bodies_vtp(const std::filesystem::path& path, const std::vector<Mesh<3>>& rest,
                      const std::vector<BodyState>& state, UpAxis up);

}  // namespace eddy::io
