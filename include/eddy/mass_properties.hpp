// eddy: mass properties of rigid bodies of uniform density (issue 30, two-way rigid bodies): mass,
// centre of mass and inertia tensor of boxes, balls, cylinders, polygons and closed triangle meshes,
// whether a triangle mesh bounds a solid, and the principal axes of an inertia tensor.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "eddy/mesh.hpp"

namespace eddy {

/// Mass, centre of mass and inertia tensor of a rigid body of uniform density (kg/m^3; 2D: the body is a
/// prism of unit depth, so mass is kg per metre and inertia kg m^2 per metre, only inertia[2][2] non-zero).
struct MassProperties {
    double mass = 0.0;                               ///< kg (2D: kg/m)
    double volume = 0.0;                             ///< m^3 (2D: area, m^2)
    std::array<double, 3> center{0, 0, 0};           ///< centre of mass (m; 2D z = 0)
    std::array<std::array<double, 3>, 3> inertia{};  ///< about the centre of mass, scene axes (kg m^2)
};

/// Axis-aligned box (2D: rectangle, z ignored); requires min < max on each used axis, density > 0.
MassProperties box_mass_properties(int dim, const std::array<double, 3>& min, const std::array<double, 3>& max,
                                   double density);
/// Circle (2D, z of the centre ignored) or sphere (3D); radius > 0, density > 0.
MassProperties ball_mass_properties(int dim, const std::array<double, 3>& center, double radius, double density);
/// Solid cylinder (3D), axis along +y from the centre of its bottom disc; radius, height, density > 0.
MassProperties cylinder_mass_properties(const std::array<double, 3>& bottom_center, double radius, double height,
                                        double density);
/// Closed polygon (2D, at least 3 corners, the last joined to the first), either winding (the area's
/// sign is dropped), not self-intersecting; its area must be non-zero.
MassProperties polygon_mass_properties(const std::vector<std::array<double, 2>>& corners, double density);
/// Closed triangle mesh (3D) by the divergence theorem (signed tetrahedra from a reference point, as
/// in Tonon 2004 / Eberly "Polyhedral mass properties"); inward or outward winding (the sign of the
/// volume decides). The mesh must bound a solid: check closed_mesh_problem() first.
MassProperties mesh_mass_properties(const Mesh<3>& closed_mesh, double density);

/// Why a triangle mesh does not bound a solid ("" when it does): an edge used by other than exactly two
/// triangles, or two triangles across an edge with inconsistent orientation, or (near) zero volume. For the
/// one-line error "bodies[i]: the mesh is not closed: <reason>".
std::string closed_mesh_problem(const Mesh<3>& mesh);

/// Principal moments (ascending, kg m^2) and a right-handed rotation whose columns are the principal
/// axes: inertia = axes * diag(moments) * axes^T.
struct PrincipalAxes {
    std::array<double, 3> moments{};
    std::array<std::array<double, 3>, 3> axes{};
};
/// Eigen-decomposition of a symmetric 3x3 inertia tensor (cyclic Jacobi rotations).
PrincipalAxes principal_axes(const std::array<std::array<double, 3>, 3>& inertia);

}  // namespace eddy
