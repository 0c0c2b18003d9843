// eddy: bodies that give way within a solver's pressure or constraint solve (issue 40; docs/bodies.md,
// "Bodies inside the pressure solve"). One room for what DFSPH's solves and PBF's constraint iterations
// share; each solver says what a unit of its increment is (src/sph/dfsph_bodies.cpp, src/pbf/pbf_bodies.cpp).
//
// With explicit coupling (Akinci et al. 2012) a solve holds a body where it starts the step, as if it
// were a wall, and the body then takes the whole answer: a body lighter than the fluid it drags along (its
// added mass) is pushed further each step than the step before. Here, after Gissler et al. 2019
// ("Interlinked SPH pressure solvers for strong fluid-rigid coupling"), each increment w_i of the solve
// moves the body at once, as the engine (Box2D, Bullet) will move it with the step's loads:
//
//   du_o = s M_o^-1 sum_i w_i G_i,   dw_o = s I_o^-1 sum_i w_i T_i,
//   G_i = sum_{b in o} psi_b grad W_ib,   T_i = sum_{b in o} (x_b - c_o) x psi_b grad W_ib,
//
// (u: the body's velocity for DFSPH, its displacement for PBF; s the solver's scale), and the fluid sees
// it in its next iteration: a body particle moved by du + dw x (x_b - c) changes the density sum of i by
// -(G_i . du + T_i . dw), its rate by the same with velocities.
//
// A Jacobi update would overshoot where a light body couples many particles: an increment on each of
// the body's neighbours moves the body by as much again as the particles' own correction,
//   S_o = m sum_i a_i (G_i . M^-1 G_i + T_i . I^-1 T_i)
// times it (a_i: the solver's increment per unit of i's error, DFSPH's alpha_i). The neighbours of body
// o take 1 / (1 + S_o) of their increment: the body's mode is then corrected once, not 1 + S_o times; a
// converged solve is the same.
//
// Every sum is exact (ExactSum) over the owned particles and over the processes: the same bits on any
// thread and process count.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/halo.hpp"
#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"

namespace eddy {

template <int D>
class BodyCoupling {
public:
    /// Per body: (du, dw), the change of its velocity or displacement (3 + 3; 2D: x, y and the turn about z).
    using Change = std::array<double, 6>;

    /// The mobile bodies among `motions` (driven, with a mobility: DrivenState::inverse_mass or
    /// inverse_inertia not zero), their centres at time t, and each of the n fluid particles' pairs with
    /// them from its wall list bn over `walls` (the walls as the solver sees them; walls.object indexes
    /// motions). False: no mobile body (nothing else is then valid).
    bool begin(const Vec<D>* x, std::size_t n, const BoundarySet<D>& walls, const std::vector<BoundaryMotion<D>>& motions,
               const NeighborLists& bn, const CubicSpline<D>& W, double t, const ExecContext& exec);
    /// Forgets the bodies (a step without coupling).
    void clear() { m_mobile.clear(); }
    bool active() const { return !m_mobile.empty(); }
    std::size_t bodies() const { return m_mobile.size(); }
    /// The fluid particles with pairs, ascending.
    const std::vector<std::uint32_t>& particles() const { return m_particles; }
    /// Body b's boundary object (its index in `motions`).
    std::uint32_t object(std::size_t b) const { return m_object[b]; }

    /// Per body 1 / (1 + mass S_o), S_o over the owned particles' a_i (header) and every process.
    std::vector<float> relaxation(const float* a, float mass, std::size_t owned, Halo<D>* halo, const ExecContext& exec) const;
    /// a_i *= the smallest relaxation of the bodies particle i touches (the particles with pairs only).
    void relax(float* a, const std::vector<float>& relaxation, const ExecContext& exec) const;
    /// Per body: scale M^-1 sum_i w_i G_i and scale I^-1 sum_i w_i T_i over the owned particles (w_i = 0
    /// skipped) and every process.
    std::vector<Change> response(const float* w, double scale, std::size_t owned, Halo<D>* halo, const ExecContext& exec) const;
    /// Per body: gdt along each axis it may move along (the fall of the fluid's own step), no turn.
    std::vector<Change> fall(const Vec<D>& gdt) const;
    /// For each particle with pairs, f(i, c) with c = sum over its bodies of G_i . du + T_i . dw (floats).
    template <class F>
    void for_each_change(const std::vector<Change>& change, const ExecContext& exec, F&& f) const;

private:
    // Per fluid particle (CSR m_off) and body it touches: the body's index among m_mobile, G and T
    // (2D: z only); per body its mobility and centre c at the step's start.
    struct Pair {
        std::uint32_t body;
        Vec<D> G;
        Vec3 T;
    };
    struct Mobile {
        std::array<std::array<double, 3>, 3> inv_mass, inv_inertia;
        std::array<double, 3> center;
    };
    std::vector<std::uint32_t> m_off, m_particles;  // CSR offsets; the particles with pairs, ascending
    std::vector<Pair> m_pairs;
    std::vector<Mobile> m_mobile;
    std::vector<std::uint32_t> m_object;  // per body its boundary object
};

template <int D>
template <class F>
void BodyCoupling<D>::for_each_change(const std::vector<Change>& change, const ExecContext& exec, F&& f) const {
    std::vector<Vec<D>> v(change.size());
    std::vector<Vec3> w(change.size());
    for (std::size_t b = 0; b < change.size(); ++b) {
        for (int a = 0; a < D; ++a) v[b][a] = static_cast<float>(change[b][a]);
        for (int a = 0; a < 3; ++a) w[b][a] = static_cast<float>(change[b][3 + a]);
    }
    parallel_for_each_index(exec, m_particles.size(), [&](std::size_t q) {
        const std::uint32_t i = m_particles[q];
        float c = 0.0f;
        for (std::uint32_t e = m_off[i]; e < m_off[i + 1]; ++e) {
            const Pair& p = m_pairs[e];
            c += dot(p.G, v[p.body]) + dot(p.T, w[p.body]);
        }
        f(i, c);
    });
}

extern template class BodyCoupling<2>;
extern template class BodyCoupling<3>;

}  // namespace eddy
