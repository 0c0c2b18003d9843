// eddy: DFSPH's share of the walls' loads (issue 28; eddy/wall_loads.hpp, docs/methods.md "Loads on the
// walls"), one stage of DfsphSolver::step in its own file: what each wall particle b did to fluid
// particle i this step, as a force, gathered per boundary object.
//   friction (implicit viscosity, after it):  m psi_b grad W_ib c_ib (x_ib . (v_i - v_b)) / dt
//   pressure (both solvers, after them):      -m (P_i + P^v_i) psi_b grad W_ib
//   wall XSPH and the guard (after step 5):   impulses m dv / dt at the particle
// Kept out of step() itself: its code (and so the rounding of the solvers, with contracted
// multiply-adds) stays as it was without the loads.
#include "eddy/dfsph.hpp"

#include <cmath>

namespace eddy {

template <int D>
void DfsphSolver<D>::begin_wall_loads(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, double t, float dt,
                                      const ExecContext& exec) {
    m_loads.begin(boundary, t);
    const std::size_t n = fluid.size();
    if (!(m_s.wall_viscosity > 0.0f) || n == 0) return;
    // dfsph_viscosity.cpp: c_ib = dt 2(d+2) nu_b / C / rho0 / (|x_ib|^2 + 0.01 h^2); the solve gave
    // particle i the velocity change psi_b grad W_ib c_ib (x_ib . (v_i - v_b)) from b, v_i the new velocity.
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass;
    const float cb = 2.0f * (D + 2) * dt / m_viscosity_factor * m_s.wall_viscosity / m_s.rest_density;
    const float h2 = 0.01f * W.h * W.h;
    const Vec<D>* x = fluid.position.data();
    const Vec<D>* v = fluid.velocity.data();
    const BoundarySet<D>& walls = wall_set(boundary);  // the pivots above come from the scene's objects
    const Vec<D>* xb = walls.position.data();
    const Vec<D>* vb = walls.velocity.data();
    const float* psi = walls.psi.data();
    m_loads.add_pairs(exec, owned_count(m_halo, n), wall_lists(), walls, [&](std::size_t i, std::uint32_t k) {
        const Vec<D> d = x[i] - xb[k];
        const float len2 = norm2(d);
        if (len2 == 0.0f) return Vec<D>::zero();
        const float len = std::sqrt(len2);
        const Vec<D> g = d * (psi[k] * W.derivative(len) / len);
        return g * (m * cb / (len2 + h2) * dot(d, v[i] - vb[k]) / dt);
    });
}

template <int D>
void DfsphSolver<D>::add_pressure_wall_loads(const ParticleSet<D>& fluid, const float* P, const float* Pv,
                                             const BoundarySet<D>& boundary, const ExecContext& exec) {
    const std::size_t n = fluid.size();
    if (n == 0) return;
    // The wall's share of particle i's velocity updates is -dt (P_i + P^v_i) psi_b grad W_ib (2017 eq. 9
    // with the step's accumulated pressures K = P, P^v, warm start included).
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass;
    const Vec<D>* x = fluid.position.data();
    const Vec<D>* xb = boundary.position.data();
    const float* psi = boundary.psi.data();
    const std::size_t owned = owned_count(m_halo, n);
    const auto& bn = wall_lists();
    if (!m_s.extrapolated_wall_pressure) {
        m_loads.add_pairs(exec, owned, bn, boundary, [&](std::size_t i, std::uint32_t k) {
            const Vec<D> d = x[i] - xb[k];
            const float len = norm(d);
            if (len == 0.0f) return Vec<D>::zero();
            return d * (-m * (P[i] + Pv[i]) * psi[k] * W.derivative(len) / len);
        });
        return;
    }
    // With the extrapolated wall pressure (dfsph.hpp) the wall pushes with P_i + P_b: the pressures'
    // part -(P_i + P^v_i + avg_i) psi_b grad W_ib (avg_i the Shepard average of P + P^v around i, with
    // the step's weights), and the pressure-independent part -(1/rho_i) psi_b grad W_ib
    // [max(0, lift_i) - g . (x_i - x_b)], lift_i = sum_j w_ij g . (x_i - x_j): m_wall_push pair by pair.
    const auto& fn = m_neighbors.fluid();
    const float* w = m_w.data();
    const float* rho = fluid.density.data();
    const Vec<D> g = m_g;
    m_load_avg.resize(n);
    m_load_lift.resize(n);
    parallel_for_each_index(exec, owned, [&](std::size_t i) {
        if (bn[i].empty()) return;
        float avg = m_wself[i] * (P[i] + Pv[i]), lift = 0.0f;
        for (std::uint32_t k = fn.offsets[i]; k < fn.offsets[i + 1]; ++k) {
            const std::uint32_t j = fn.indices[k];
            avg += w[k] * (P[j] + Pv[j]);
            lift += w[k] * dot(g, x[i] - x[j]);
        }
        m_load_avg[i] = avg;
        m_load_lift[i] = std::max(lift, 0.0f);
    });
    m_loads.add_pairs(exec, owned, bn, boundary, [&](std::size_t i, std::uint32_t k) {
        const Vec<D> d = x[i] - xb[k];
        const float len = norm(d);
        if (len == 0.0f) return Vec<D>::zero();
        const Vec<D> gw = d * (psi[k] * W.derivative(len) / len);
        return gw * (-m * (P[i] + Pv[i] + m_load_avg[i]) - m / rho[i] * (m_load_lift[i] - dot(g, d)));
    });
}

template <int D>
void DfsphSolver<D>::finish_wall_loads(const ParticleSet<D>& fluid, BoundarySet<D>& boundary, float dt,
                                       const ExecContext& exec) {
    m_loads.add_impulses(exec, owned_count(m_halo, fluid.size()), wall_lists(), wall_set(boundary),
                         fluid.position.data(), m_wall_dv.data(), m_mass, dt);
    m_loads.finish(boundary, m_halo);
}

template void DfsphSolver<2>::begin_wall_loads(const ParticleSet<2>&, const BoundarySet<2>&, double, float, const ExecContext&);
template void DfsphSolver<3>::begin_wall_loads(const ParticleSet<3>&, const BoundarySet<3>&, double, float, const ExecContext&);
template void DfsphSolver<2>::add_pressure_wall_loads(const ParticleSet<2>&, const float*, const float*, const BoundarySet<2>&,
                                                      const ExecContext&);
template void DfsphSolver<3>::add_pressure_wall_loads(const ParticleSet<3>&, const float*, const float*, const BoundarySet<3>&,
                                                      const ExecContext&);
template void DfsphSolver<2>::finish_wall_loads(const ParticleSet<2>&, BoundarySet<2>&, float, const ExecContext&);
template void DfsphSolver<3>::finish_wall_loads(const ParticleSet<3>&, BoundarySet<3>&, float, const ExecContext&);

}  // namespace eddy
