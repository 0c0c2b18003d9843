// eddy: a user's hands in a running particle simulation, shared by the viewer (apps/view) and the web page
// (web/): the mouse's brush, a block of fluid dropped in, a body dropped and a tap opened where the user
// points. All act between steps, on the simulation alone, so what they do does not depend on the thread
// count, and the page's tools do what the viewer's do.
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "eddy/exec.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"

namespace eddy {

/// The mouse's brush (world units): a velocity target. Every fluid particle within `radius` of the
/// point relaxes toward the mouse's velocity u at `rate`, weighted by w = (1 - d^2/R^2)^2 (1 at the
/// centre, 0 at the rim): before each step of length dt, v += w (1 - exp(-rate dt)) (u - v). A change of
/// velocity, not a force: the same for light and heavy particles, so it is felt alike at 1,000 or
/// 1,000,000 particles (see docs/viewer.md, "Mouse and keys").
struct MouseForce {
    bool active = false;
    std::array<float, 3> point{};     ///< Where the mouse is (m)
    std::array<float, 3> velocity{};  ///< How fast it moves (m/s)
    float radius = 0.05f;             ///< The brush's radius R (m); the viewer sets 8% of the scene's extent
    float rate = 20.0f;               ///< How fast the particles take the mouse's velocity (1/s)
};

/// Applies the brush for a step of dt seconds (nothing when it is not active). The speed it may add is
/// recorded in the simulation's speed bound (SpeedBound::added).
void apply_mouse_force(Simulation& sim, const MouseForce& brush, float dt, const ExecContext& exec);

/// Adds a block of fluid particles (20 x 20 in 2D, 12^3 in 3D at the scene's spacing, at most 0.4 of the
/// scene's extent per side) centred at `center` (m; z ignored in 2D), kept inside the scene's bounds;
/// without a centre, above the middle of the scene. Lattice points next to existing particles are
/// skipped (overlaps explode, seed 003), and no more than max_particles are kept. Returns what happened,
/// for a status line: "added N particles" or "no room for a block of particles here".
std::string add_fluid_block(Simulation& sim, std::optional<std::array<double, 3>> center, std::size_t max_particles,
                            const ExecContext& exec);

/// The viewer's and the page's dropped body: a ball (circle in 2D) or a box, `size_radii` particle radii
/// across, of `density` (kg/m^3), centred at `point` clamped inside the scene clear of its edges by the body
/// and two particle radii; added by add_body (a body overlapping a wall or another body is refused with an
/// InputError). Returns the fluid particles removed.
std::size_t drop_body_at(Simulation& sim, bool ball, const std::array<double, 3>& point, const ExecContext& exec,
                         double size_radii = 8.0, double density = 500.0);

/// A model file dropped as a rigid body (3D; the page's "click drops" a bundled model): `file` (OBJ, STL, PLY,
/// glTF; relative to the running scene's folder, as a scene's "file") scaled so that its largest extent is
/// `size_radii` particle radii, its bounding box centred at `point` clamped as a dropped body's, of `density`
/// (kg/m^3): a "mesh" body added by add_body, which reads the file again with every check of a scene's model.
/// InputError in 2D, for a file the model reader refuses, or where add_body refuses it. Returns the fluid
/// particles removed.
std::size_t drop_model_at(Simulation& sim, const std::string& file, const std::array<double, 3>& point,
                          const ExecContext& exec, double size_radii = 16.0, double density = 500.0);

/// The viewer's and the page's tap: an emitter at `point` (clamped as a dropped body's), pointing along
/// gravity (down when there is none), at `speed` (m/s), `size_radii` particle radii across (2D width, 3D
/// diameter), from now until stopped; added by add_emitter (a nozzle in a wall is refused with an
/// InputError). Returns its index.
std::size_t tap_at(Simulation& sim, const std::array<double, 3>& point, double speed, double size_radii,
                   const ExecContext& exec);

/// A shallow-water grid: a drop at (x, y) (m), a round bump of radius max(3 dx, 3% of the grid's extent)
/// a third of the mean wet depth high; with `ink`, ink alone (no water).
void drop_water(ShallowWaterSimulation& water, double x, double y, bool ink);

}  // namespace eddy
