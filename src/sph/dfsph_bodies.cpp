// eddy: bodies that give way within DFSPH's pressure solves (issue 40; docs/bodies.md, "Bodies inside the
// pressure solve"). One stage of DfsphSolver::step in its own file; the coupling itself (pairs, relaxation,
// exact sums) is eddy/body_coupling.hpp's, shared with PBF.
//
// Each pressure increment dK of either solver moves the body at once, as the engine will move it with the
// step's loads (m dK_i psi_b grad W_ib is the pair's push on the body: dfsph_loads.cpp):
//
//   dv_o = M_o^-1 m dt sum_i dK_i G_i,   dw_o = I_o^-1 m dt sum_i dK_i T_i,
//
// and the fluid's next residual sees it: the walls' share of Drho_i/Dt, sum_b psi_b grad W_ib . v_b, grows
// by G_i . dv_o + T_i . dw_o. The body falls with gravity over the step as the fluid does (the engine adds
// g dt), so the density solve sees that too. The solves then converge to pressures that move fluid and
// body together. An increment dK_i = e_i alpha_i / dt^2 on each of a light body's neighbours would move the
// body by S_o times the particles' own correction: the neighbours of body o take alpha_i / (1 + S_o).
#include "eddy/dfsph.hpp"

#include "eddy/halo.hpp"

namespace eddy {

template <int D>
bool DfsphSolver<D>::begin_body_coupling(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, double t,
                                         const ExecContext& exec) {
    m_bodies.clear();
    if (m_s.extrapolated_wall_pressure) return false;  // its walls push with a pressure of their own
    if (!m_bodies.begin(fluid.position.data(), m_alpha.size(), wall_set(boundary), boundary.motions, wall_lists(), m_kernel,
                        t, exec))
        return false;
    // S_o (body_coupling.hpp) from alpha, over the owned particles and every process.
    const std::size_t owned = owned_count(m_halo, m_alpha.size());
    m_bodies.relax(m_alpha.data(), m_bodies.relaxation(m_alpha.data(), m_mass, owned, m_halo, exec), exec);
    return true;
}

template <int D>
void DfsphSolver<D>::push_bodies(const float* dK, float dt, const ExecContext& exec) {
    // The pairs' push on each body, m dt dK_i (G_i, T_i), summed exactly: its velocity change.
    const std::size_t owned = owned_count(m_halo, m_alpha.size());
    change_body_rates(m_bodies.response(dK, double(m_mass) * dt, owned, m_halo, exec), exec);
}

template <int D>
void DfsphSolver<D>::fall_bodies(const Vec<D>& gdt, const ExecContext& exec) {
    change_body_rates(m_bodies.fall(gdt), exec);
}

template <int D>
void DfsphSolver<D>::change_body_rates(const std::vector<std::array<double, 6>>& dv, const ExecContext& exec) {
    // The walls' share of Drho_i/Dt, sum_b psi_b grad W_ib . v_b, as each body's velocity changes by
    // (dv, dw): G_i . dv + T_i . dw; the stored rate (Drho_i/Dt = ... - wall share) with it.
    m_bodies.for_each_change(dv, exec, [&](std::uint32_t i, float change) {
        if (change == 0.0f) return;
        m_wall_rate[i] += change;
        m_rate[i] -= change;
    });
}

template bool DfsphSolver<2>::begin_body_coupling(const ParticleSet<2>&, const BoundarySet<2>&, double, const ExecContext&);
template bool DfsphSolver<3>::begin_body_coupling(const ParticleSet<3>&, const BoundarySet<3>&, double, const ExecContext&);
template void DfsphSolver<2>::push_bodies(const float*, float, const ExecContext&);
template void DfsphSolver<3>::push_bodies(const float*, float, const ExecContext&);
template void DfsphSolver<2>::fall_bodies(const Vec<2>&, const ExecContext&);
template void DfsphSolver<3>::fall_bodies(const Vec<3>&, const ExecContext&);
template void DfsphSolver<2>::change_body_rates(const std::vector<std::array<double, 6>>&, const ExecContext&);
template void DfsphSolver<3>::change_body_rates(const std::vector<std::array<double, 6>>&, const ExecContext&);

}  // namespace eddy
