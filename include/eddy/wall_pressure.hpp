// eddy: the fluid's pressure on the walls' own particles (issue 28: "the load on a dam" in ParaView).
//
// Each wall particle b takes the pressure of its fluid neighbours f within the kernel support h,
// extrapolated to the wall as Adami, Hu & Adams 2012 (JCP 231, eq. 27) do for their wall boundary
// condition:
//
//   p_b = ( sum_f p_f W_bf + g . sum_f rho_f (x_b - x_f) W_bf ) / sum_f W_bf
//
// the Shepard mean of the fluid's pressure plus the hydrostatic head between each fluid particle and the
// wall (a floor under water reads rho0 g H, not the pressure half a particle above it). Adami's term
// -a_b (the wall's own acceleration) is left out: eddy's prescribed motions are piecewise linear in
// their keyframes (no acceleration between them, an unbounded one at them), so no clean a_b exists;
// for a moving wall the value is the quasi-static one. A wall particle with no fluid within h gets 0.
//
// A gather: each wall particle writes only its own value, summing its fluid neighbours in the order of
// a NeighborGrid built with the particles' ids as keys, (cell, id) order, so the result is the same bits
// on any thread count, storage order and number of processes (the fluid gathered whole).
#pragma once
#include <span>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/math.hpp"
#include "eddy/particles.hpp"

namespace eddy {

/// The fluid's pressure on every wall particle (Pa in 3D; N/m in 2D, as ParticleSet::pressure), eq. 27
/// of Adami et al. 2012 above, with the cubic spline of support `support` (m; the method's
/// neighbor_radius()) and gravity g (m/s^2). fluid.pressure and fluid.density must be the method's (any
/// particle method writes both each step). Returns one value per wall particle, in b's order.
template <int D>
std::vector<float> wall_pressure(const BoundarySet<D>& walls, const ParticleSet<D>& fluid, const Vec<D>& gravity,
                                 float support, const ExecContext& exec);

/// The wall particles' pressure carried to other points on the walls (a model's vertices in walls.vtp):
/// the kernel-weighted (Shepard) mean of `pressure` over the wall particles within `support` (m) of
/// each point, 0 where none is. Deterministic as wall_pressure.
template <int D>
std::vector<float> wall_pressure_at(std::span<const Vec<D>> points, const BoundarySet<D>& walls,
                                    std::span<const float> pressure, float support, const ExecContext& exec);

extern template std::vector<float> wall_pressure<2>(const BoundarySet<2>&, const ParticleSet<2>&, const Vec<2>&, float,
                                                    const ExecContext&);
extern template std::vector<float> wall_pressure<3>(const BoundarySet<3>&, const ParticleSet<3>&, const Vec<3>&, float,
                                                    const ExecContext&);
extern template std::vector<float> wall_pressure_at<2>(std::span<const Vec<2>>, const BoundarySet<2>&,
                                                       std::span<const float>, float, const ExecContext&);
extern template std::vector<float> wall_pressure_at<3>(std::span<const Vec<3>>, const BoundarySet<3>&,
                                                       std::span<const float>, float, const ExecContext&);

}  // namespace eddy
