// eddy: rigid bodies the fluid moves (issue 30; docs/bodies.md). Two-way coupling after Akinci et al.
// 2012 ("Versatile rigid-fluid coupling for incompressible SPH"): a body is a boundary object whose wall
// particles push the fluid like any wall's; the fluid's force and torque on them (eddy/wall_loads.hpp,
// every particle method's own pair forces) integrate the body:
//
//   m dv/dt = F_fluid + m g,      d(I w)/dt = T_fluid          (T about the centre of mass)
//
// A rigid-body engine integrates these and owns what the fluid does not see: contacts between bodies and
// with the walls, friction, stacking. Bullet (double precision) in 3D, Box2D in 2D (src/bodies/). The
// solvers do not know bodies exist: each step they see walls at a pose (BoundaryMotion::driven), and after
// the step advance_bodies() hands the engine the loads they reported and sets the next pose.
//
// The coupling is explicit (the loads of step n move the body over step n -> n+1). It is stable at the
// fluid's own time step while the body outweighs the fluid it would have to push aside in one step; a
// light body (density well below the fluid's) meets the added-mass limit, where docs/bodies.md says what
// eddy does. DFSPH goes further: each body's walls carry its mobility (DrivenState::inverse_mass,
// inverse_inertia, set with the pose), and its pressure solves move the body as they push it
// (src/sph/dfsph_bodies.cpp), so the loads they hand over are those of fluid and body moving together.
//
// Determinism: the loads are the same bits on any thread and process count (WallLoadGather), and every
// process steps its own copy of the engine single-threaded with the same inputs, so the bodies are the
// same bits everywhere. The engines keep contact caches and warm-start impulses between steps that a
// checkpoint could not hold; eddy therefore builds the engine's world anew every step from the bodies'
// state (only the shapes are kept), so that a resumed run steps exactly as the run that carried on.
// Contacts start cold each step; the solvers iterate more to make up for it (docs/bodies.md).
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/scene.hpp"

namespace eddy {

/// One body's state, in double.
struct BodyState {
    std::array<double, 3> position{0, 0, 0};          ///< Centre of mass (m)
    std::array<double, 4> orientation{1, 0, 0, 0};    ///< Rotation since the scene's pose, unit quaternion (w, x, y, z)
    std::array<double, 3> velocity{0, 0, 0};          ///< Of the centre of mass (m/s)
    std::array<double, 3> angular_velocity{0, 0, 0};  ///< (rad/s; 2D: z)
};

/// The rigid-body engine of a set of bodies (src/bodies/: Box2D in 2D, Bullet in 3D).
class BodyEngine {
public:
    virtual ~BodyEngine() = default;
    /// Advances every body by dt (s) under gravity and the fluid's loads (force at the centre of mass,
    /// torque about it), with the contacts between bodies and with the walls (prescribed motions at their
    /// pose over [t, t + dt]).
    virtual void step(std::vector<BodyState>& state, const std::vector<ObjectLoad>& load, double t, double dt) = 0;
};

/// The engine (its shapes) as a cache that a copy does not share: a copy builds its own.
struct EngineCache {
    std::shared_ptr<BodyEngine> engine;
    EngineCache() = default;
    EngineCache(const EngineCache&) {}
    EngineCache& operator=(const EngineCache&) {
        engine.reset();
        return *this;
    }
    EngineCache(EngineCache&&) = default;
    EngineCache& operator=(EngineCache&&) = default;
};

/// The bodies of a simulation: what the scene says of them, their state, and the engine.
template <int D>
struct RigidBodies {
    std::vector<BodySpec> specs;            ///< Scene::bodies
    std::vector<BoundarySpec> shapes;       ///< Each body's shape at rest (its Scene::boundaries entry)
    std::vector<std::uint16_t> object;      ///< The boundary object of each body
    std::vector<BodyState> state;           ///< Now
    std::vector<ObjectLoad> load;           ///< The last step's load (the fluid's plus `external`), about the centre of mass
    /// Forces from outside the scene (the viewer's drag, a script), added to the fluid's each step until
    /// changed: force at the centre of mass (N; 2D N/m), torque about it. Empty or shorter: none.
    std::vector<ObjectLoad> external;
    /// The walls the bodies collide with: the scene's boundaries that are not bodies, with their object
    /// index (prescribed motions move them) and the length scale of the engine's units.
    std::vector<BoundarySpec> walls;
    std::vector<std::uint16_t> wall_object;
    std::vector<BoundaryMotion<D>> wall_motion;
    std::array<double, 3> gravity{0, -9.81, 0};
    double particle_radius = 0.01;
    EngineCache cache;

    std::size_t size() const { return state.size(); }
    bool empty() const { return state.empty(); }
    /// Drops the engine (its shapes): the next step builds it anew (after the bodies changed).
    void reset_engine() const { const_cast<EngineCache&>(cache).engine.reset(); }
};

/// The bodies of a scene at their initial state; sets the driven motions of their boundary objects.
/// Throws InputError naming bodies[i] when a body overlaps a wall or another body (its wall particles
/// inside another object's shape).
template <int D>
RigidBodies<D> make_bodies(const Scene& scene, BoundarySet<D>& boundary);

/// After a fluid step [t, t + dt] that left the fluid's loads in boundary.load: the engine moves the
/// bodies by dt and their boundary objects' driven motions take the new state, stamped `t_end`: the
/// simulation's clock after the step. That is t + dt, except on a step that lands on a frame time, where
/// the clock takes the frame time itself while dt is that gap rounded to float: stamped t + dt, the walls
/// were posed a rounding error ahead of the body on the next step, which a resumed run (stamped with the
/// clock) did not repeat.
template <int D>
void advance_bodies(RigidBodies<D>& bodies, BoundarySet<D>& boundary, double t, double dt, double t_end);

/// add_body(Simulation&, ...), adding a body to a running simulation, is declared in simulation.hpp.

/// Sets the driven motions of the bodies' boundary objects to their state at time t (after the state was
/// changed from outside; advance_bodies does it after each step).
template <int D>
void sync_body_motions(const RigidBodies<D>& bodies, BoundarySet<D>& boundary, double t);

/// The engine for the bodies (src/bodies/box2d_world.cpp, bullet_world.cpp).
std::unique_ptr<BodyEngine> make_box2d_engine(const RigidBodies<2>& bodies);
std::unique_ptr<BodyEngine> make_bullet_engine(const RigidBodies<3>& bodies);

/// Rotation matrix of a unit quaternion (w, x, y, z), and the quaternion of a rotation matrix.
std::array<std::array<double, 3>, 3> quaternion_matrix(const std::array<double, 4>& q);
std::array<double, 4> matrix_quaternion(const std::array<std::array<double, 3>, 3>& R);

}  // namespace eddy
