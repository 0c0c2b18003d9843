// eddy: boundary particles (Akinci et al. 2012, "Versatile Rigid-Fluid Coupling for Incompressible
// SPH"). Walls are sampled with particles that never move with the fluid (they may follow a prescribed
// rigid motion, e.g. a rotating stirrer). Each carries a pseudo-mass
//   psi_b = rho0 * V_b,   V_b = 1 / sum_k W(x_b - x_k)   (k: boundary neighbours of b, b included)
// so that a fluid particle next to a wall, however densely the wall is sampled, sees the density it
// would see inside the fluid: rho_i = sum_j m_j W_ij + sum_b psi_b W_ib.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/geometry.hpp"
#include "eddy/kernels.hpp"
#include "eddy/math.hpp"

namespace eddy {

/// A keyframe of a prescribed motion: the body's displacement at `time`, a translation and a rotation
/// (degrees about x, then y, then z; in 2D only z) about the motion's pivot.
struct Keyframe {
    double time = 0.0;                       ///< (s)
    std::array<double, 3> translate{0, 0, 0};  ///< (m)
    std::array<double, 3> rotate_deg{0, 0, 0};  ///< (deg)
};

/// A rigid transform x -> pivot + shift + R (x - pivot), in double precision.
template <int D>
struct RigidPose {
    std::array<std::array<double, D>, D> R{};
    std::array<double, D> pivot{}, shift{};
    Vec<D> apply(const Vec<D>& x) const;
    Vec<D> inverse(const Vec<D>& x) const;  ///< The body-frame point that apply() takes to x
};

/// The prescribed rigid motion of one boundary object. At time t a rest point x0 goes to
///   x(t) = pivot + T(t) + R_key(t) R_spin(t) (x0 - pivot),   T(t) = velocity t + translate_key(t),
/// R_spin the rotation by angular_velocity t about axis (2D: in the xy plane), and translate_key,
/// R_key interpolated linearly between keyframes (the first holds before it, the last after it).
/// The motion of a body the fluid moves (eddy/bodies.hpp): its pose at `time`, its rest points x0 at
///   x = pivot + shift + R (x0 - pivot)   (pivot: the body's centre of mass at rest),
/// and its velocities then; after `time` the pose goes on at these velocities (what the fluid's next step
/// sees; the bodies' integration sets a new state after each step).
struct DrivenState {
    double time = 0.0;                                    ///< (s)
    std::array<std::array<double, 3>, 3> R{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};  ///< Rotation since rest
    std::array<double, 3> shift{0, 0, 0};                 ///< Displacement of the centre of mass (m)
    std::array<double, 3> velocity{0, 0, 0};              ///< Of the centre of mass (m/s)
    std::array<double, 3> angular_velocity{0, 0, 0};      ///< (rad/s; 2D: z)
    /// The body's mobility, for a solver that lets the body give way within its pressure solve (DFSPH):
    /// its inverse mass and inverse inertia about the centre of mass, in world axes (1/kg, 1/(kg m^2);
    /// 2D per metre of depth), each axis it may not move along or turn about (fixed_axes) zeroed. All
    /// zero: the solver holds it at its velocity over the step, as any moving wall.
    std::array<std::array<double, 3>, 3> inverse_mass{}, inverse_inertia{};
};

template <int D>
struct BoundaryMotion {
    Vec<D> pivot = Vec<D>::zero();           ///< Centre of rotation (m)
    Vec3 axis = {{0.0f, 0.0f, 1.0f}};        ///< Unit rotation axis (3D; 2D rotates in the xy plane)
    float angular_velocity = 0.0f;           ///< Angular velocity (rad/s), counter-clockwise about the axis
    Vec<D> velocity = Vec<D>::zero();        ///< Constant translation velocity (m/s)
    std::vector<Keyframe> keyframes;         ///< Sorted by time; empty: none
    bool driven = false;                     ///< A body's: the pose follows `state`, not the keys above
    DrivenState state;                       ///< driven: the body's last integrated state
    bool moving() const;
    RigidPose<D> pose(double t) const;
};

/// The fluid's load on one boundary object (eddy/wall_loads.hpp computes it; double: a sum over many pairs).
struct ObjectLoad {
    std::array<double, 3> force{0.0, 0.0, 0.0};   ///< (N; 2D: N per metre of depth, z = 0)
    std::array<double, 3> torque{0.0, 0.0, 0.0};  ///< About the object's pivot (N m; 2D: N m/m, about z only)
};

template <int D>
struct BoundarySet {
    std::vector<Vec<D>> position;       ///< Current position (m)
    std::vector<Vec<D>> rest_position;  ///< Position at t = 0 (m)
    std::vector<Vec<D>> velocity;       ///< Velocity of the prescribed motion (m/s)
    std::vector<float> psi;             ///< Pseudo-mass psi_b = rho0 V_b (kg; kg/m in 2D)
    std::vector<std::uint16_t> object;  ///< Index of the boundary object (scene "boundaries" entry)
    std::vector<BoundaryMotion<D>> motions;  ///< One per boundary object
    /// Per object: the layers of a Poisson-sampled model wall (sample_wall), 0 for the lattice-sampled
    /// analytic shapes; such walls get their own volume calibration (sampled_wall_correction).
    std::vector<std::uint8_t> sampled_layers;
    float particle_radius = 0.0f;            ///< r of the sampling (m)
    int layers = 2;                          ///< Layers sampled (build_boundary: 2 for WCSPH and DFSPH, 1 for PBF)
    /// Under mpirun, on every process but the first (issue 44): only the moving walls' particles are here yet;
    /// the distributed run adds the fixed walls near this process's box once the boxes are cut.
    bool moving_only = false;
    /// Per object: the fluid's force and torque on it over the last step (wall_loads.hpp), every process's
    /// fluid included; empty before the first step.
    std::vector<ObjectLoad> load;

    std::size_t size() const { return position.size(); }
    bool empty() const { return position.empty(); }
    bool any_moving() const {
        for (const auto& m : motions)
            if (m.moving()) return true;
        return false;
    }
    /// Appends a particle of object `obj` at x (at rest).
    void push_back(const Vec<D>& x, std::uint16_t obj);
    std::size_t memory_bytes() const;
};

/// Sets psi_b = gamma rho0 / sum_k W(x_b - x_k) over the boundary neighbours k within the kernel
/// support (b included). Gathers: each particle writes only its own value.
///
/// Akinci's volume 1 / sum_k W_bk assumes the boundary's own neighbourhood stands for a full one. It
/// does not: the sum misses the fluid side, so the volume is too large, and fluid resting on a flat wall
/// sees more than rho0 (1.03 rho0 on our double layer; 1.064 rho0 in 3D and 1.074 in 2D on PBF's single
/// layer, where the first step's constraint then lifted the whole column: a dam break's particles had a
/// median 0.45 m/s after one 2 ms step). gamma corrects this once for the walls eddy builds: it is the
/// ratio of the kernel sum over a wall of `layers` flat lattice layers of spacing `spacing`, seen from
/// a particle of the layer next to the fluid, to the kernel sum of a full lattice, so that fluid
/// resting on such a wall has exactly rho0 while curved or unevenly sampled walls keep Akinci's adaptive
/// volumes. spacing <= 0: gamma = 1 (Akinci's formula as published).
template <int D>
void compute_boundary_psi(BoundarySet<D>& b, const CubicSpline<D>& kernel, float rest_density, const ExecContext& exec,
                          float spacing = 0.0f, int layers = 2);

/// The extra factor of Poisson-sampled model walls: Akinci's volumes assume a regular sampling (the
/// self term W(0) of an irregular one weighs more), so a flat wall sampled by sample_wall would give
/// fluid resting on it about 2% less density than the lattice wall of the analytic shapes. The factor
/// is measured once per kernel: a flat square patch of side 20 h sampled by sample_wall with `layers`
/// layers, its psi computed with gamma as above, against the lattice wall of the same layers, the
/// density mean over probes at r above both, far from the patch's edges.
template <int D>
float sampled_wall_correction(const CubicSpline<D>& kernel, float particle_radius, int layers, float gamma,
                              const ExecContext& exec);

/// gamma of compute_boundary_psi for `layers` wall layers of the given spacing (1 when spacing <= 0):
/// 0.682 (2D) and 0.701 (3D) for one layer at h = 2 spacings.
template <int D>
float wall_volume_correction(const CubicSpline<D>& kernel, float spacing, int layers);

/// A wall for position-based methods' collision step: a container keeps particles inside, a solid
/// obstacle keeps them outside. Analytic shapes, or a model's signed-distance grid (sdf). A wall that
/// follows a boundary object's motion is tested in that object's frame (pose, set each step by
/// update_wall_poses).
template <int D>
struct Wall {
    enum class Shape { box, ball, cylinder, sdf } shape = Shape::box;  ///< ball: circle (2D) or sphere (3D)
    bool solid = false;               ///< false: container (keep inside); true: obstacle (keep outside)
    bool body = false;                ///< A rigid body's shape (the fluid moves it: eddy/bodies.hpp)
    Vec<D> lo = Vec<D>::zero();       ///< box corners (m)
    Vec<D> hi = Vec<D>::zero();
    Vec<D> center = Vec<D>::zero();   ///< ball centre; cylinder: centre of the bottom disc (m)
    float radius = 0.0f;              ///< ball/cylinder radius (m)
    float height = 0.0f;              ///< cylinder height along y (m)
    /// A solid cylinder (the walls of an open-top cylinder tank) is a tube from inner_radius to radius;
    /// 0: a full disc (m)
    float inner_radius = 0.0f;
    std::shared_ptr<const SdfGrid<D>> sdf;  ///< sdf: the model's signed distance (negative inside the model)
    int object = -1;                  ///< Boundary object whose motion it follows (-1: none)
    int owner = -1;                   ///< Boundary object it belongs to, moving or not (loads; -1: none)
    bool moving = false;              ///< pose applies
    RigidPose<D> pose;                ///< Body frame -> world at the current time
    /// A solid's box in the world at its pose (update_wall_reach): keep_inside skips a solid whose box,
    /// widened by the margin, does not hold the particle (a thousand bodies are a thousand walls).
    bool bounded = false;
    Vec<D> reach_lo = Vec<D>::zero(), reach_hi = Vec<D>::zero();
    /// The walls' index (index_walls): every wall of a list holds the same one, so that keep_inside, given
    /// the list, looks only at the solids near a particle. Null: every wall is scanned.
    std::shared_ptr<const struct WallIndex> index;
};

/// A uniform grid over the bounded solids' boxes (widened by `pad`): per cell, the walls that may be
/// within `pad` of a point in it, by increasing wall number; walls that are not bounded are always looked
/// at. Built by index_walls after the walls' poses change.
struct WallIndex {
    int dim = 0;
    float pad = 0.0f;                       ///< Margin the boxes were widened by (m); a larger one scans all
    std::array<float, 3> lo{}, cell{};      ///< The grid's corner and cell size (m)
    std::array<int, 3> cells{1, 1, 1};
    std::vector<std::uint32_t> start;       ///< Per cell (x fastest), into `walls`; one more than cells
    std::vector<std::uint32_t> walls;       ///< Bounded walls per cell, increasing
    std::vector<std::uint32_t> unbounded;   ///< Walls without a box, increasing
    std::vector<std::uint32_t> containers;  ///< Walls neither solid nor shells (the containers), increasing
};

/// Builds the index of a list of walls (after update_wall_reach of each) and gives it to every wall; for
/// lists of at most a few walls it drops it (a scan is as fast). `pad`: the largest margin keep_inside
/// will be asked for (m).
template <int D>
void index_walls(std::vector<Wall<D>>& walls, float pad);

/// Sets w's world box at its pose (solids that are not open shells; others stay unbounded).
template <int D>
void update_wall_reach(Wall<D>& w);

/// Sets the pose of every wall that follows a moving boundary object to that object's pose at t.
template <int D>
void update_wall_poses(std::vector<Wall<D>>& walls, const std::vector<BoundaryMotion<D>>& motions, double t);

/// Signed distance from x to the wall's surface, positive on the fluid's side (m), and the unit
/// direction from x towards the surface (the way out of the fluid). For Clavet's stickiness.
template <int D>
float distance_to_wall(const Wall<D>& w, const Vec<D>& x, Vec<D>& towards);

/// Moves x to the nearest point at least `margin` inside the containers (if it is inside none) and
/// `margin` outside every solid. Returns true if x moved. No walls: x is left alone.
template <int D>
bool keep_inside(Vec<D>& x, const std::vector<Wall<D>>& walls, float margin);

/// The walls' shapes as a guard behind the boundary particles of the pressure-based methods (WCSPH,
/// DFSPH): a particle whose centre came within `margin` of a wall (a splash against a thin plate, a
/// lone droplet the wall's pressure does not hold) is put back there (keep_inside) and loses the part
/// of its velocity v that carried it in. Returns true if x moved.
template <int D>
bool guard_walls(Vec<D>& x, Vec<D>& v, const std::vector<Wall<D>>& walls, float margin);

/// The margin of guard_walls for a particle of radius r (m). A particle with pressure (`held`) is
/// pushed off by the wall particles' pressure and guarded only within r/4 of the surface, so fluid
/// resting or pressed on a wall keeps its SPH dynamics. A particle without pressure gets nothing from
/// the Akinci wall term: its density stays below rho0 even against the wall (a lone particle has 0.47
/// rho0 at r from a flat double-layer wall in 3D and 0.82 rho0 at the surface itself), so nothing
/// but the guard holds it; it touches the wall as a ball of radius r, where fluid rests.
inline float wall_contact_margin(float particle_radius, bool held) { return (held ? 0.25f : 0.5f) * particle_radius; }

/// Moves every boundary particle of a moving object to its pose at time t (s) and sets its velocity.
template <int D>
void update_boundary_motion(BoundarySet<D>& b, double t, const ExecContext& exec);

/// The start of a step [t, t + dt] of the particle methods that sample walls at the step's start:
/// boundary particles to their pose at t, the walls' shapes (collision, guard) to t + dt, where the
/// fluid will be. Returns whether anything moves (the boundary neighbour grid must then be rebuilt).
template <int D>
bool move_walls(BoundarySet<D>& b, std::vector<Wall<D>>& walls, double t, float dt, const ExecContext& exec);

}  // namespace eddy
