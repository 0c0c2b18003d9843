// eddy: checks of a scene's fluids made when the scene is loaded (scene.cpp calls them), so that a
// fluid no method can start from is refused naming the fluid and its file, instead of surfacing later
// as "cannot derive the speed of sound" or a divergence (issue 29). They share the builders' shape
// tests (builders.cpp), so a file fluid is clipped at the walls as a fluid block is.
#pragma once
#include <array>
#include <string>

#include "eddy/math.hpp"
#include "eddy/scene.hpp"

namespace eddy::detail {

/// Is x inside the boundary's shape grown by `margin` (m; shrunk when negative)? (builders.cpp)
template <int D>
bool inside_shape(const BoundarySpec& b, const Vec<D>& x, float margin);

/// "[x, y] to [x, y]" (D components) for messages. (builders.cpp)
template <int D>
std::string box_text(const std::array<double, 3>& lo, const std::array<double, 3>& hi);

/// The fastest initial fluid velocity a scene may give (m/s): the speed of light. Faster is a typo, and
/// from about 1e15 m/s the first step overflows floats (NaN: a "divergence", exit 3, for bad input).
inline constexpr double kMaxFluidSpeed = 3e8;

/// A fluid block's `velocity` (scene units, D components used): InputError naming `where` (e.g.
/// "scene.json: fluids[2]") above kMaxFluidSpeed.
void check_fluid_velocity(const std::array<double, 3>& v, int dim, const std::string& where);

/// A fluid read from a particle file (f.file_particles set, f.min/max its box), against the scene's
/// particle radius and the boundaries parsed before it. Refused (InputError, `where` naming the fluid,
/// e.g. "scene.json: fluids[2]"): a velocity that is not finite or faster than kMaxFluidSpeed, a single particle, two particles at the
/// same position, every particle outside the containers or inside solids. Particles whose centre lies
/// outside every container (when there is one) or inside a solid obstacle are dropped, as a block's
/// lattice points are (builders.cpp), but at the walls' surface itself, not r inside it: a frame of an
/// earlier run has particles closer than r to its walls. f's particles and box are updated then, and
/// the returned warning says how many were dropped ("" when none).
std::string check_file_fluid(const Scene& s, FluidSpec& f, const std::string& where);

/// A mesh or polygon fluid (f.model set) whose vertices all lie in one plane (a mesh) or on one line
/// (a polygon) encloses nothing to fill: InputError naming it.
void check_model_fluid(const FluidSpec& f, const std::string& where);

}  // namespace eddy::detail
