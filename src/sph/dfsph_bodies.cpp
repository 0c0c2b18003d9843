// eddy: bodies that give way within DFSPH's pressure solves (issue 40; docs/bodies.md, "Bodies inside the
// pressure solve"). One stage of DfsphSolver::step in its own file.
//
// With explicit coupling (Akinci et al. 2012) the solves hold a body at the velocity it starts the step
// with, as if it were a wall, and the body then takes the whole answer: a body lighter than the fluid it
// drags along (its added mass) is pushed further each step than the step before (a box of half the
// water's density dropped 1 cm was thrown out of the water). Here, after Gissler et al. 2019
// ("Interlinked SPH pressure solvers for strong fluid-rigid coupling"), each pressure increment dK of
// either solver moves the body at once, as the engine will move it with the step's loads:
//
//   dv_o = M_o^-1 m dt sum_i dK_i G_i,   dw_o = I_o^-1 m dt sum_i dK_i T_i,
//   G_i = sum_{b in o} psi_b grad W_ib,   T_i = sum_{b in o} (x_b - c_o) x psi_b grad W_ib,
//
// (m dK_i psi_b grad W_ib is the pair's push on the body: dfsph_loads.cpp), and the fluid's next residual
// sees it: the walls' share of Drho_i/Dt, sum_b psi_b grad W_ib . v_b, grows by G_i . dv_o + T_i . dw_o. The
// body falls with gravity over the step as the fluid does (the engine adds g dt), so the density solve
// sees that too. The solves then converge to pressures that move fluid and body together.
//
// A relaxed Jacobi update would overshoot where a light body couples many particles: an increment dK_i =
// e_i alpha_i / dt^2 on each of the body's neighbours moves the body by as much again as the particles'
// own correction, S_o = m sum_i alpha_i (G_i . M^-1 G_i + T_i . I^-1 T_i) times it. The neighbours of body o
// take alpha_i / (1 + S_o): the body's mode is then corrected once, not 1 + S_o times; a converged solve
// is the same.
//
// Every sum is exact (ExactSum) over the owned particles and over the processes: the same bits on any
// thread and process count.
#include "eddy/dfsph.hpp"

#include <algorithm>
#include <limits>

#include "eddy/halo.hpp"

namespace eddy {

namespace {

constexpr std::uint32_t kNoBody = std::numeric_limits<std::uint32_t>::max();
constexpr int kMostBodies = 8;  // bodies one particle is coupled to (more: the extra ones are walls)

using Mat3d = std::array<std::array<double, 3>, 3>;

double quadratic(const Mat3d& A, const double* u) {
    double s = 0.0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) s += u[a] * A[a][b] * u[b];
    return s;
}

}  // namespace

template <int D>
bool DfsphSolver<D>::begin_body_coupling(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, double t,
                                         const ExecContext& exec) {
    m_mobile.clear();
    if (m_s.extrapolated_wall_pressure) return false;  // its walls push with a pressure of their own
    std::vector<std::uint32_t> body_of(boundary.motions.size(), kNoBody);
    for (std::size_t o = 0; o < boundary.motions.size(); ++o) {
        const BoundaryMotion<D>& motion = boundary.motions[o];
        const DrivenState& s = motion.state;
        bool mobile = false;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) mobile = mobile || s.inverse_mass[a][b] != 0.0 || s.inverse_inertia[a][b] != 0.0;
        if (!motion.driven || !mobile) continue;
        Mobile body{s.inverse_mass, s.inverse_inertia, {0, 0, 0}};
        for (int a = 0; a < 3; ++a)
            body.center[a] = (a < D ? double(motion.pivot[a]) : 0.0) + s.shift[a] + s.velocity[a] * (t - s.time);
        body_of[o] = static_cast<std::uint32_t>(m_mobile.size());
        m_mobile.push_back(body);
    }
    if (m_mobile.empty()) return false;

    const BoundarySet<D>& walls = wall_set(boundary);
    const auto& bn = wall_lists();
    const std::size_t n = m_alpha.size();
    const Vec<D>* x = fluid.position.data();
    const Vec<D>* xb = walls.position.data();
    const float* psi = walls.psi.data();
    const CubicSpline<D> W = m_kernel;
    // The bodies particle i touches, in the order its wall list first meets them.
    auto bodies_of = [&](std::size_t i, std::uint32_t* out) {
        int c = 0;
        for (std::uint32_t k : bn[i]) {
            const std::uint32_t body = body_of[walls.object[k]];
            if (body == kNoBody || std::find(out, out + c, body) != out + c || c == kMostBodies) continue;
            out[c++] = body;
        }
        return c;
    };
    m_body_off.assign(n + 1, 0);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint32_t seen[kMostBodies];
        m_body_off[i + 1] = static_cast<std::uint32_t>(bodies_of(i, seen));
    });
    m_body_particles.clear();
    for (std::size_t i = 0; i < n; ++i) {
        if (m_body_off[i + 1] != 0) m_body_particles.push_back(static_cast<std::uint32_t>(i));
        m_body_off[i + 1] += m_body_off[i];
    }
    m_body_pairs.resize(m_body_off[n]);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint32_t seen[kMostBodies];
        const int c = bodies_of(i, seen);
        BodyPair* out = m_body_pairs.data() + m_body_off[i];
        for (int e = 0; e < c; ++e) out[e] = BodyPair{seen[e], Vec<D>::zero(), Vec3::zero()};
        for (std::uint32_t k : bn[i]) {
            const std::uint32_t body = body_of[walls.object[k]];
            BodyPair* p = std::find_if(out, out + c, [&](const BodyPair& q) { return q.body == body; });
            if (p == out + c) continue;
            const Vec<D> d = x[i] - xb[k];
            const float len = norm(d);
            if (len == 0.0f) continue;
            const Vec<D> g = d * (psi[k] * W.derivative(len) / len);  // as the density pass's
            p->G += g;
            Vec<D> r;
            for (int a = 0; a < D; ++a) r[a] = static_cast<float>(double(xb[k][a]) - m_mobile[body].center[a]);
            if constexpr (D == 2) {
                p->T[2] += r[0] * g[1] - r[1] * g[0];
            } else {
                p->T[0] += r[1] * g[2] - r[2] * g[1];
                p->T[1] += r[2] * g[0] - r[0] * g[2];
                p->T[2] += r[0] * g[1] - r[1] * g[0];
            }
        }
    });

    // S_o (header), over the owned particles and every process.
    const std::size_t owned = owned_count(m_halo, n), nb = m_mobile.size();
    const std::uint32_t* list = m_body_particles.data();
    const std::size_t touching = std::lower_bound(list, list + m_body_particles.size(), owned) - list;
    std::vector<ExactSum> S = parallel_reduce_blocks(
        exec, touching, std::vector<ExactSum>(nb),
        [&](std::size_t b0, std::size_t b1) {
            std::vector<ExactSum> s(nb);
            for (std::size_t q = b0; q < b1; ++q) {
                const std::uint32_t i = list[q];
                for (std::uint32_t e = m_body_off[i]; e < m_body_off[i + 1]; ++e) {
                    const BodyPair& p = m_body_pairs[e];
                    double G[3] = {0, 0, 0}, T[3] = {p.T[0], p.T[1], p.T[2]};
                    for (int a = 0; a < D; ++a) G[a] = p.G[a];
                    const Mobile& body = m_mobile[p.body];
                    s[p.body].add(double(m_alpha[i]) * (quadratic(body.inv_mass, G) + quadratic(body.inv_inertia, T)));
                }
            }
            return s;
        },
        [](std::vector<ExactSum> l, const std::vector<ExactSum>& r) {
            for (std::size_t b = 0; b < l.size(); ++b) l[b] += r[b];
            return l;
        });
    if (m_halo) m_halo->sum(S);
    std::vector<float> relax(nb);
    for (std::size_t b = 0; b < nb; ++b) relax[b] = static_cast<float>(1.0 / (1.0 + double(m_mass) * S[b].value()));
    parallel_for_each_index(exec, m_body_particles.size(), [&](std::size_t q) {
        const std::uint32_t i = list[q];
        float f = 1.0f;
        for (std::uint32_t e = m_body_off[i]; e < m_body_off[i + 1]; ++e) f = std::min(f, relax[m_body_pairs[e].body]);
        m_alpha[i] *= f;
    });
    return true;
}

template <int D>
void DfsphSolver<D>::push_bodies(const float* dK, float dt, const ExecContext& exec) {
    // The pairs' push on each body, m dt dK_i (G_i, T_i), summed exactly: force then torque, 3 + 3 per body.
    const std::size_t n = m_alpha.size(), owned = owned_count(m_halo, n), nb = m_mobile.size();
    const std::uint32_t* list = m_body_particles.data();
    const std::size_t touching = std::lower_bound(list, list + m_body_particles.size(), owned) - list;
    std::vector<ExactSum> sum = parallel_reduce_blocks(
        exec, touching, std::vector<ExactSum>(6 * nb),
        [&](std::size_t b0, std::size_t b1) {
            std::vector<ExactSum> s(6 * nb);
            for (std::size_t q = b0; q < b1; ++q) {
                const std::uint32_t i = list[q];
                if (dK[i] == 0.0f) continue;
                for (std::uint32_t e = m_body_off[i]; e < m_body_off[i + 1]; ++e) {
                    const BodyPair& p = m_body_pairs[e];
                    for (int a = 0; a < D; ++a) s[6 * p.body + a].add(double(dK[i]) * p.G[a]);
                    for (int a = 0; a < 3; ++a) s[6 * p.body + 3 + a].add(double(dK[i]) * p.T[a]);
                }
            }
            return s;
        },
        [](std::vector<ExactSum> l, const std::vector<ExactSum>& r) {
            for (std::size_t b = 0; b < l.size(); ++b) l[b] += r[b];
            return l;
        });
    if (m_halo) m_halo->sum(sum);
    std::vector<std::array<double, 6>> dv(nb);
    const double scale = double(m_mass) * dt;
    for (std::size_t b = 0; b < nb; ++b) {
        const Mobile& body = m_mobile[b];
        for (int a = 0; a < 3; ++a) {
            double v = 0.0, w = 0.0;
            for (int c = 0; c < 3; ++c) {
                v += body.inv_mass[a][c] * sum[6 * b + c].value();
                w += body.inv_inertia[a][c] * sum[6 * b + 3 + c].value();
            }
            dv[b][a] = scale * v;
            dv[b][3 + a] = scale * w;
        }
    }
    change_body_rates(dv, exec);
}

template <int D>
void DfsphSolver<D>::fall_bodies(const Vec<D>& gdt, const ExecContext& exec) {
    std::vector<std::array<double, 6>> dv(m_mobile.size());
    for (std::size_t b = 0; b < m_mobile.size(); ++b)
        for (int a = 0; a < D; ++a) dv[b][a] = m_mobile[b].inv_mass[a][a] != 0.0 ? double(gdt[a]) : 0.0;
    change_body_rates(dv, exec);
}

template <int D>
void DfsphSolver<D>::change_body_rates(const std::vector<std::array<double, 6>>& dv, const ExecContext& exec) {
    // The walls' share of Drho_i/Dt, sum_b psi_b grad W_ib . v_b, as each body's velocity changes by
    // (dv, dw): G_i . dv + T_i . dw; the stored rate (Drho_i/Dt = ... - wall share) with it.
    std::vector<Vec<D>> v(dv.size());
    std::vector<Vec3> w(dv.size());
    for (std::size_t b = 0; b < dv.size(); ++b) {
        for (int a = 0; a < D; ++a) v[b][a] = static_cast<float>(dv[b][a]);
        for (int a = 0; a < 3; ++a) w[b][a] = static_cast<float>(dv[b][3 + a]);
    }
    parallel_for_each_index(exec, m_body_particles.size(), [&](std::size_t q) {
        const std::uint32_t i = m_body_particles[q];
        float change = 0.0f;
        for (std::uint32_t e = m_body_off[i]; e < m_body_off[i + 1]; ++e) {
            const BodyPair& p = m_body_pairs[e];
            change += dot(p.G, v[p.body]) + dot(p.T, w[p.body]);
        }
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
