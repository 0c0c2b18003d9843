// eddy: boundary particles (Akinci et al. 2012, "Versatile Rigid-Fluid Coupling for Incompressible
// SPH"). Walls are sampled with particles that never move with the fluid (they may follow a prescribed
// rigid motion, e.g. a rotating stirrer). Each carries a pseudo-mass
//   psi_b = rho0 * V_b,   V_b = 1 / sum_k W(x_b - x_k)   (k: boundary neighbours of b, b included)
// so that a fluid particle next to a wall, however densely the wall is sampled, sees the density it
// would see inside the fluid: rho_i = sum_j m_j W_ij + sum_b psi_b W_ib.
#pragma once
#include <cstdint>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/kernels.hpp"
#include "eddy/math.hpp"

namespace eddy {

/// A prescribed rigid rotation of one boundary object about a pivot (and, in 3D, an axis).
template <int D>
struct BoundaryMotion {
    Vec<D> pivot = Vec<D>::zero();           ///< Centre of rotation (m)
    Vec3 axis = {{0.0f, 0.0f, 1.0f}};        ///< Unit rotation axis (3D; 2D rotates in the xy plane)
    float angular_velocity = 0.0f;           ///< Angular velocity (rad/s), counter-clockwise about the axis
    bool moving() const { return angular_velocity != 0.0f; }
};

template <int D>
struct BoundarySet {
    std::vector<Vec<D>> position;       ///< Current position (m)
    std::vector<Vec<D>> rest_position;  ///< Position at t = 0 (m)
    std::vector<Vec<D>> velocity;       ///< Velocity of the prescribed motion (m/s)
    std::vector<float> psi;             ///< Pseudo-mass psi_b = rho0 V_b (kg; kg/m in 2D)
    std::vector<std::uint16_t> object;  ///< Index of the boundary object (scene "boundaries" entry)
    std::vector<BoundaryMotion<D>> motions;  ///< One per boundary object

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
/// Akinci's volume 1 / sum_k W_bk assumes the boundary's own neighbourhood stands for a full one,
/// which holds for their single layer but overestimates the volume of our double layer (the sum misses
/// the fluid side): a fluid particle resting on a flat wall would see rho = 1.03 rho0, and the Tait
/// pressure would push it off the wall. gamma corrects this once for the walls eddy builds: it is the
/// ratio of the kernel sum of an inner-layer particle of a flat double-layer wall of spacing
/// `spacing` to the kernel sum of a full lattice, so that fluid resting on such a wall has exactly
/// rho0 while curved or unevenly sampled walls keep Akinci's adaptive volumes. spacing <= 0: gamma = 1
/// (Akinci's formula as published).
template <int D>
void compute_boundary_psi(BoundarySet<D>& b, const CubicSpline<D>& kernel, float rest_density, const ExecContext& exec,
                          float spacing = 0.0f);

/// gamma of compute_boundary_psi for a double layer of the given spacing (1 when spacing <= 0).
template <int D>
float double_layer_volume_correction(const CubicSpline<D>& kernel, float spacing);

/// An analytic wall, for position-based methods' collision step: a container keeps particles inside,
/// a solid obstacle keeps them outside. Only walls that do not move are listed.
template <int D>
struct Wall {
    enum class Shape { box, ball, cylinder } shape = Shape::box;  ///< ball: circle (2D) or sphere (3D)
    bool solid = false;               ///< false: container (keep inside); true: obstacle (keep outside)
    Vec<D> lo = Vec<D>::zero();       ///< box corners (m)
    Vec<D> hi = Vec<D>::zero();
    Vec<D> center = Vec<D>::zero();   ///< ball centre; cylinder: centre of the bottom disc (m)
    float radius = 0.0f;              ///< ball/cylinder radius (m)
    float height = 0.0f;              ///< cylinder height along y (m)
};

/// Moves x to the nearest point at least `margin` inside the containers (if it is inside none) and
/// `margin` outside every solid. Returns true if x moved. No walls: x is left alone.
template <int D>
bool keep_inside(Vec<D>& x, const std::vector<Wall<D>>& walls, float margin);

/// Moves every boundary particle of a moving object to its pose at time t (s) and sets its velocity.
template <int D>
void update_boundary_motion(BoundarySet<D>& b, double t, const ExecContext& exec);

}  // namespace eddy
