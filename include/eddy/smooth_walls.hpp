// eddy: smooth walls from the walls' shapes, for the particle methods' pressure solvers (issue 40).
//
// Instead of sampling a wall with particles, each fluid particle i near a wall face sees the density the
// fluid's own mirror image across the face would give it, as a function of its distance d to the face:
//
//   rho_B(d) = lambda rho0 S(s),   s = r + 2 kappa (d - r),   S(s) = integral over z > s of W1(z) dz,
//   W1(z)    = the kernel integrated over a plane at distance z (1/m),
//
// the kernel mass beyond a plane at s. A bottom row at rest at d = r has s = r: the half space beyond r is
// what the fluid's mirror lattice (rows at 2r, 4r, ... below it) fills. When i moves towards the face its
// mirror image comes towards it as well, so s falls twice as fast as d (kappa = 1 for the continuous
// fluid). Two constants, computed once from the rest lattice's own sums, make the lattice at rest exact:
//   lambda: fluid resting at r reads rho0: lambda rho0 S(r) = rho0 - m sum of W over its half lattice
//           (its own row included);
//   kappa:  there the wall's push per unit pressure, |grad rho_B| = 2 kappa lambda rho0 W1(r), is twice
//           the rows above's, 2 m sum |dW/dy| (the mirror's P_i + P_i). The lattice's rows, three points
//           across the kernel, are a coarse quadrature of W1: kappa is 1.2-1.3, not 1.
// The push, the density and the rate (v_i - v_wall) . grad rho_B are one smooth function of d: no sampling
// slots, no bumps, and the velocity update stays the transpose of the rate. The Akinci wall (a lattice
// held still, half this gradient) let DFSPH's bottom row sink to the guard at r/4 (docs/methods.md).
//
// A mirror image also carries the hydrostatic pressure of its depth: the ghost rows below a floor push
// harder than the row itself. That part does not depend on the solver's pressures; it is the
// pressure-independent acceleration
//
//   a_i = sum over faces with g . n < 0 of  -(g . n) H(d) n,   H(d) = [s W1(s) + S(s)] / (2 [r W1(r) + S(r)])
//
// (the kernel's first moment over the mirror region, scaled so that H(r) = 1/2: in a column of rows at
// rest, whose pairs only reach the next row, the hydrostatic pressures balance the bottom row exactly when
// the wall adds half its weight). Without it the wall's push mirrors the row's own pressure only, and the
// floor rows' pressures alternate (+22% / -9% / +7% in the 2D tank: the pair force (P_i + P_j) cannot see
// a pressure that alternates row by row, so only the wall sets that mode). The solvers apply it with
// gravity, in full to particles at rest density and not at all below 0.8 rho0 (a drop or a film on a
// floor is no column; switching it on the particles that had pressure instead rang the tank's column).
//
// The solvers see it as one virtual wall particle per face near i: at x_b = x_i - delta n with the
// pseudo-mass psi such that psi W(delta) = rho_B(d) and psi W'(delta) = -|grad rho_B(d)| (W / |W'| falls
// monotonically over the support, so delta is unique), the velocity of the wall at x_b, and the face's
// boundary object (its loads). Their loops, loads, friction and viscosity are unchanged.
//
// Faces: a box container gives its 2D faces, a cylinder container its side, floor and lid, a ball
// container its sphere. Each face is a half-space: corners where two faces meet count the small region
// beyond both twice. The reach is r + (h - r) / (2 kappa), about 2.2 r at h = 4r. Only closed analytic
// containers are drawn so (smooth_wall_mask): solids, bodies, models and open shells keep their boundary
// particles for now (one face at a solid's nearest point, tried, read a box held under water 21% heavy
// and let a neutral body drift 2 r; shells let particles through), and the solvers see both in one list.
// (Volume maps, Bender et al. 2019, integrate the solid itself; not built: issue 40.)
#pragma once
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"

namespace eddy {

/// rho_B(d) and its virtual particle (delta, psi) tabulated over the distance d to a face, for one kernel,
/// particle radius and rest density.
template <int D>
struct SmoothWallProfile {
    float reach = 0.0f;       ///< d beyond which a face adds nothing: r + (h - r) / (2 kappa) (m)
    float step = 0.0f;        ///< Table spacing in d (m), from d = 0
    float lambda = 1.0f;      ///< The rest lattice's density calibration above
    float kappa = 1.0f;       ///< and its push's: s = r + 2 kappa (d - r) in place of 2d - r
    std::vector<float> delta;  ///< Distance of the virtual particle from x_i (m)
    std::vector<float> psi;    ///< Its pseudo-mass (kg; kg/m in 2D)
    std::vector<float> rho;    ///< rho_B (kg/m^3; kg/m^2 in 2D)
    std::vector<float> hold;   ///< H(d): a_i per unit of -(g . n) (dimensionless)
    /// delta and psi at distance d (m); d < 0 (inside the wall) takes d = 0. Returns false beyond reach.
    bool at(float d, float& delta_out, float& psi_out) const;
    float density(float d) const;  ///< rho_B(d)
    float support(float d) const;  ///< H(d)
};

template <int D>
SmoothWallProfile<D> make_smooth_wall_profile(const CubicSpline<D>& kernel, float particle_radius, float mass,
                                              float rest_density);

/// The virtual wall particles of one step: `set` (positions, velocities, psi, object; no motions: the loads
/// take their objects' pivots from the scene's BoundarySet) and, per fluid particle, its list into it.
template <int D>
struct VirtualWalls {
    BoundarySet<D> set;
    NeighborLists lists;
    std::vector<float> density;          ///< Per fluid particle: the walls' rho_B summed over its faces
    std::vector<Vec<D>> hold;           ///< Per fluid particle: a_i above (m/s^2)
    std::vector<std::uint32_t> counts;  ///< Per fluid particle: the boundary particles copied into its list
    std::size_t memory_bytes() const {
        return set.memory_bytes() + lists.memory_bytes() + (density.capacity() + counts.capacity()) * 4 + hold.capacity() * sizeof(Vec<D>);
    }
};

/// Builds the virtual wall particles of fluid positions x[0, n) against the walls with smooth[w] set, at
/// their current poses; `motions` (the scene's boundary objects) give each face's velocity at time t; g:
/// gravity (m/s^2). Particle walls stay as they were: particle i's list also holds copies of its boundary
/// particle neighbours (particle_lists into `particles`) whose object is not drawn smooth (smooth_object).
/// Gathers: each particle writes only its own slots, whatever the thread count.
template <int D>
void build_virtual_walls(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& smooth,
                         const std::vector<BoundaryMotion<D>>& motions, double t, const SmoothWallProfile<D>& profile,
                         const Vec<D>& g, const Vec<D>* x, std::size_t n, VirtualWalls<D>& out, const ExecContext& exec,
                         const NeighborLists* particle_lists = nullptr, const BoundarySet<D>* particles = nullptr,
                         const std::vector<std::uint8_t>* smooth_object = nullptr);

/// The walls the smooth model draws: closed analytic containers (box, cylinder, ball); solids, bodies,
/// models and open shells keep their boundary particles. Per wall 1 or 0; per object in `objects`
/// (size: the boundary objects) 1 if one of its walls is drawn smooth.
template <int D>
std::vector<std::uint8_t> smooth_wall_mask(const std::vector<Wall<D>>& walls, std::size_t object_count,
                                           std::vector<std::uint8_t>& objects);

extern template struct SmoothWallProfile<2>;
extern template struct SmoothWallProfile<3>;

}  // namespace eddy
