// eddy: bodies that give way within PBF's constraint iterations (issue 40; docs/bodies.md, "Bodies inside
// the pressure solve"). One stage of PbfSolver::substep in its own file; the coupling itself (pairs,
// relaxation, exact sums) is eddy/body_coupling.hpp's, shared with DFSPH.
//
// Explicitly coupled, the iterations held a body where it was at the substep's start (its particles at
// their pose at t, the fluid predicted to t + dt) and the engine then moved it with the loads: the fluid
// never saw the body move within a step, and a light body was pushed by its added mass (a 0.1 box floated
// 17.6% deep, 10.8% now; docs/bodies.md; PBF's overdamped heave is not the coupling's: the same with and
// without it). Here the iterations see each body where the engine will put it
// at t + dt (semi-implicit Euler, as Box2D and Bullet step): moved from its pose at t by
//   s_o = e_o + dt (v_o + dv_o),   dv_o = (the step's) g dt + pushes / dt,
// e_o the displacement beyond its poses that earlier substeps of the step left, and by every iteration's
// push: the wall pairs' corrections lambda_i G_i / rho0 (pbf.cpp) move particle i, their reaction moves the
// body by
//   du_o = -(m / rho0) M_o^-1 sum_i lambda_i G_i,   dtheta_o = -(m / rho0) I_o^-1 sum_i lambda_i T_i,
// the displacement the loads m dx / dt^2 (unchanged) give the body in the engine. To first order a body
// particle moved by s + theta x (x_b - c) changes rho_i by -(G_i . s + T_i . theta): each particle's density
// carries that term. lambda's relaxation on a body's neighbours (body_coupling.hpp) takes the lattice's
// lambda per unit of error, a_i = 1 / (rho0^2 (S_lattice + eps)).
#include "eddy/pbf.hpp"

#include "eddy/halo.hpp"

namespace eddy {

template <int D>
bool PbfSolver<D>::begin_body_coupling(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary,
                                       const BoundarySet<D>& walls, double t, float dt, const ExecContext& exec) {
    const std::size_t n = fluid.size();
    if (!m_bodies.begin(fluid.position.data(), n, walls, boundary.motions, m_smooth.lists(m_neighbors.boundary()), m_kernel,
                        t, exec))
        return false;
    const std::size_t nb = m_bodies.bodies();
    if (m_body_dv.size() != nb) {  // the step's first substep (step() clears them)
        m_body_dv.assign(nb, {});
        m_body_extra.assign(nb, {});
    }
    const std::vector<typename BodyCoupling<D>::Change> fall = m_bodies.fall(m_g * dt);
    std::vector<typename BodyCoupling<D>::Change> shift(nb);
    for (std::size_t b = 0; b < nb; ++b) {
        const DrivenState& s = boundary.motions[m_bodies.object(b)].state;
        for (int a = 0; a < 3; ++a) {
            m_body_dv[b][a] += fall[b][a];
            shift[b][a] = m_body_extra[b][a] + double(dt) * (s.velocity[a] + m_body_dv[b][a]);
            shift[b][3 + a] = m_body_extra[b][3 + a] + double(dt) * (s.angular_velocity[a] + m_body_dv[b][3 + a]);
        }
        for (int a = 0; a < 6; ++a) m_body_extra[b][a] += double(dt) * m_body_dv[b][a];  // the pushes add theirs
    }
    m_body_rho.assign(n, 0.0f);
    m_bodies.for_each_change(shift, exec, [&](std::uint32_t i, float c) { m_body_rho[i] = -c; });
    const std::size_t owned = owned_count(m_halo, n);
    const float rho0 = m_s.rest_density;
    m_body_relax.assign(n, 1.0f / (rho0 * rho0 * (1.0f / m_lambda_ref + m_eps)));
    const std::vector<float> relaxation = m_bodies.relaxation(m_body_relax.data(), m_mass, owned, m_halo, exec);
    std::fill(m_body_relax.begin(), m_body_relax.end(), 1.0f);
    m_bodies.relax(m_body_relax.data(), relaxation, exec);
    return true;
}

template <int D>
void PbfSolver<D>::push_bodies(float dt, const ExecContext& exec) {
    const std::size_t owned = owned_count(m_halo, m_lambda.size());
    const auto du = m_bodies.response(m_lambda.data(), -double(m_mass) / double(m_s.rest_density), owned, m_halo, exec);
    for (std::size_t b = 0; b < du.size(); ++b)
        for (int a = 0; a < 6; ++a) {
            m_body_extra[b][a] += du[b][a];
            m_body_dv[b][a] += du[b][a] / double(dt);
        }
    m_bodies.for_each_change(du, exec, [&](std::uint32_t i, float c) { m_body_rho[i] -= c; });
}

template bool PbfSolver<2>::begin_body_coupling(const ParticleSet<2>&, const BoundarySet<2>&, const BoundarySet<2>&, double,
                                                float, const ExecContext&);
template bool PbfSolver<3>::begin_body_coupling(const ParticleSet<3>&, const BoundarySet<3>&, const BoundarySet<3>&, double,
                                                float, const ExecContext&);
template void PbfSolver<2>::push_bodies(float, const ExecContext&);
template void PbfSolver<3>::push_bodies(float, const ExecContext&);

}  // namespace eddy
