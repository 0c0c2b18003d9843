// eddy-view: the scene's rigid bodies (issue 30, eddy/bodies.hpp) as the window draws, picks and drags
// them. No OpenGL here: the simulation-thread tests link it without a window.
//
// Each body's shape at rest (its BoundarySpec) is turned once per reset (or added body) into drawable
// geometry in scene coordinates: 3D a shaded triangle mesh (box, sphere; cylinders and meshes through
// their closed model), 2D filled triangles (box, circle, polygon). A snapshot poses it with the body's
// state: x = position + R (x0 - centre of mass at rest). Picking tests the posed triangles (a ray in 3D,
// a point in 2D), so what can be grabbed is exactly what is drawn.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "camera.hpp"
#include "eddy/bodies.hpp"
#include "eddy/scene.hpp"
#include "mesh.hpp"

namespace eddy::view {

/// A body's geometry at rest (scene coordinates), shared by every snapshot (immutable).
struct BodyGeometry {
    std::uint64_t id = 0;        ///< Identifies the geometry (the window uploads it once per id)
    std::string shape;           ///< As the scene gave it: box, circle, polygon, sphere, cylinder, mesh
    SurfaceMesh mesh;            ///< 3D: triangles with normals; 2D: triangles (z = 0), no normals
    std::vector<float> outline;  ///< 2D: the outline as line segments (pairs of points, z = 0)
};

/// One body in a snapshot: its geometry, pose and the numbers the panel shows (copies).
struct BodyView {
    std::size_t index = 0;     ///< Into RigidBodies (the scene's "bodies" order, then added ones)
    std::uint16_t object = 0;  ///< Its boundary object (Snapshot::loads / pivots index)
    std::shared_ptr<const BodyGeometry> geometry;
    Mat4 pose = Mat4::identity();  ///< Rest -> now
    std::array<double, 3> rest_center{};  ///< Centre of mass at rest (m)
    BodyState state;                      ///< Now
    double mass = 0.0;                    ///< (kg; 2D kg/m)
    bool dragged = false;                 ///< The window's drag acts on it now
};

/// The drawn colour of body k: a palette of hues the speed colour map (blue -> yellow -> red), the
/// walls' greys and the load arrow's magenta do not use, so that bodies stand apart from the fluid and
/// from each other.
std::array<float, 3> body_color(std::size_t k);

/// The drawable geometry of a body's shape at rest. D: the scene's dimension.
template <int D>
std::shared_ptr<const BodyGeometry> make_body_geometry(const BoundarySpec& shape);

/// The pose matrix of a body's state: rest point x0 -> position + R(orientation) (x0 - rest_center).
Mat4 body_pose(const BodyState& s, const std::array<double, 3>& rest_center);

/// A rest point of body b where it is now.
V3 posed(const BodyView& b, V3 rest);

/// What a press on the bodies grabbed: which body, where (m, now), and that point in the body's frame
/// (relative to its centre of mass, unrotated: it moves with the body).
struct BodyHit {
    std::size_t body = 0;  ///< Index into the snapshot's bodies (= BodyView::index)
    V3 point;
    std::array<double, 3> local{};
    float distance = 0;    ///< 3D: along the ray
};

/// 3D: the nearest body the ray (origin o, unit direction d) enters. 2D (is_3d false): the body whose
/// drawn triangles hold the point o (x, y).
std::optional<BodyHit> pick_body(const std::vector<BodyView>& bodies, V3 o, V3 d, bool is_3d);

/// A drag in progress: the grabbed body and point and where the cursor wants that point to be.
struct BodyDrag {
    bool active = false;
    std::size_t body = 0;             ///< Index into the simulation's bodies
    std::array<double, 3> local{};    ///< The grabbed point in the body's frame (relative to its centre of mass)
    std::array<double, 3> target{};   ///< Where the cursor is (m)
    /// The spring's natural angular frequency (rad/s) and damping ratio. The stiffness is mass x
    /// frequency^2 and the damping mass x 2 ratio frequency, so a light and a heavy body follow the
    /// cursor alike (the same period, critically damped); a body hangs g / frequency^2 below the
    /// cursor (1.1 cm at 30 rad/s).
    double frequency = 30.0;
    double damping_ratio = 1.0;
};

/// The drag's spring-damper load on a body: F = m (w^2 (target - p) - 2 zeta w v_p) at the grabbed
/// point p (velocity v_p = v + omega x r, r = R local), as a force at the centre of mass and the torque
/// r x F about it. 2D: z components zero but the torque's.
ObjectLoad drag_load(const BodyDrag& drag, const BodyState& s, double mass, int dimension);

}  // namespace eddy::view
