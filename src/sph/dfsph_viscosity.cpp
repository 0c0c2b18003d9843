// eddy: DFSPH's implicit viscosity (Weiler, Koschier, Brand & Bender 2018, "A physically consistent
// implicit viscosity solver for SPH fluids", Computer Graphics Forum 37(2)), one stage of
// DfsphSolver::step in its own file.
//
// The viscous acceleration (Weiler et al. 2018 eq. 7, the SPH Laplacian of Monaghan 2005 and Morris et
// al. 1997 in the form that conserves linear and angular momentum):
//   a_i = 2 (d + 2) nu sum_j m (2 / (rho_i + rho_j)) (v_ij . x_ij) / (|x_ij|^2 + 0.01 h^2) grad W_ij
//       + 2 (d + 2) nu_b sum_b (psi_b / rho0) (v_ib . x_ib) / (|x_ib|^2 + 0.01 h^2) grad W_ib
// (the symmetric 2 / (rho_i + rho_j) in place of the paper's 1 / rho_j makes the operator symmetric;
// walls after Akinci et al. 2012, their velocity v_b known). It is linear in the velocities,
// a = L v + a_b, and taken implicitly (eq. 13):
//   (I - dt L) v^{n+1} = v* + dt a_b,
// so a stiff fluid (honey, nu of 1e-2 m^2/s and more) needs no smaller time step. Every term acts along
// x_ij and grad W_ij = x_ij W'(r) / r with W' <= 0, so L is symmetric negative semidefinite: the system
// is symmetric positive definite and conjugate gradients solve it, preconditioned by the inverse of each
// particle's D x D diagonal block (block Jacobi, as the paper). Central pair forces conserve linear and
// angular momentum, and a rigid rotation (v_ij perpendicular to x_ij) feels none. The iteration starts
// from the previous step's correction v^{n+1} - v* (a ParticleSet field, so it follows reorderings) and
// stops when |r| <= viscosity_error_target |r_0|, r_0 the residual of taking no correction (the step's
// viscous change). Dot products are order_free_sums: the same bits whatever the storage order or
// thread count.
#include "eddy/dfsph.hpp"

#include "core/buffers.hpp"

#include <array>
#include <cmath>

namespace eddy {

namespace {

template <int D>
using Block = std::array<float, D * D>;

template <int D>
Block<D> invert(const Block<D>& a) {
    Block<D> r{};
    if constexpr (D == 2) {
        const float det = a[0] * a[3] - a[1] * a[2];
        const float inv = det != 0.0f ? 1.0f / det : 0.0f;
        r = {a[3] * inv, -a[1] * inv, -a[2] * inv, a[0] * inv};
    } else {
        const float c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6];
        const float det = a[0] * c00 + a[1] * c01 + a[2] * c02;
        const float inv = det != 0.0f ? 1.0f / det : 0.0f;
        r = {c00 * inv,
             (a[2] * a[7] - a[1] * a[8]) * inv,
             (a[1] * a[5] - a[2] * a[4]) * inv,
             c01 * inv,
             (a[0] * a[8] - a[2] * a[6]) * inv,
             (a[2] * a[3] - a[0] * a[5]) * inv,
             c02 * inv,
             (a[1] * a[6] - a[0] * a[7]) * inv,
             (a[0] * a[4] - a[1] * a[3]) * inv};
    }
    return r;
}

template <int D>
Vec<D> apply(const Block<D>& a, const Vec<D>& v) {
    Vec<D> r;
    for (int row = 0; row < D; ++row) {
        float s = 0.0f;
        for (int c = 0; c < D; ++c) s += a[row * D + c] * v[c];
        r[row] = s;
    }
    return r;
}

// The linear system (I - dt L) v = b of one step: the neighbour lists and the particles it reads, and the
// per-pair coefficients and preconditioner it builds (assemble).
template <int D>
struct ViscositySystem {
    const ExecContext& exec;
    Halo<D>* halo;  // over several processes (eddy/halo.hpp); null: one
    std::size_t n;
    const std::uint32_t* off;
    const std::uint32_t* idx;
    const NeighborLists& bn;
    const Vec<D>* x;
    const float* rho;
    const Vec<D>* grad;  // m grad W_ij
    const Vec<D>* xb;
    const Vec<D>* vb;
    const float* psi;
    const CubicSpline<D>& kernel;
    float h2, inv_rho0, cf, cb;
    float* pair;
    Block<D>* pre;

    // A wall particle's term: x_ib, psi_b grad W_ib and dt 2(d+2) nu_b / rho0 / (|x_ib|^2 + 0.01 h^2);
    // false for a coincident one (no direction).
    bool wall_term(std::size_t i, std::uint32_t kb, Vec<D>& d, Vec<D>& g, float& c) const {
        d = x[i] - xb[kb];
        const float len2 = norm2(d);
        if (len2 == 0.0f) return false;
        const float len = std::sqrt(len2);
        g = d * (psi[kb] * kernel.derivative(len) / len);
        c = cb * inv_rho0 / (len2 + h2);
        return true;
    }
    // Over several processes: the ghosts' entries of u refreshed from their owners.
    void refresh(Vec<D>* u) const {
        if (halo) halo->refresh(std::span<Vec<D>>(u, n));
    }
};

// Per pair dt 2(d+2) nu 2 / (rho_i + rho_j) / (|x_ij|^2 + 0.01 h^2): (dt L v)_i = sum_j pair (x_ij . v_ij) m grad W_ij.
// The right-hand side b = v* + dt a_b, and the preconditioner: each particle's diagonal block of
// I - dt L, inverted.
template <int D>
void assemble(const ViscositySystem<D>& s, const Vec<D>* v, Vec<D>* b) {
    const std::uint32_t* off = s.off;
    const std::uint32_t* idx = s.idx;
    const Vec<D>* x = s.x;
    const float* rho = s.rho;
    const Vec<D>* grad = s.grad;
    parallel_blocks(s.exec, s.n, [&](std::size_t b0, std::size_t b1) {
        for (std::size_t i = b0; i < b1; ++i) {
            Block<D> diag{};
            for (int a = 0; a < D; ++a) diag[a * D + a] = 1.0f;
            for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) {
                const Vec<D> d = x[i] - x[idx[k]];
                const float c = s.cf * 2.0f / (rho[i] + rho[idx[k]]) / (norm2(d) + s.h2);
                s.pair[k] = c;
                for (int row = 0; row < D; ++row)
                    for (int col = 0; col < D; ++col) diag[row * D + col] -= c * grad[k][row] * d[col];
            }
            Vec<D> rhs = v[i];
            if (s.cb > 0.0f) {
                for (std::uint32_t kb : s.bn[i]) {
                    Vec<D> d, g;
                    float c;
                    if (!s.wall_term(i, kb, d, g, c)) continue;
                    // (v_i - v_b) . x_ib: the v_i part on the left (the block), the wall's on the right.
                    for (int row = 0; row < D; ++row)
                        for (int col = 0; col < D; ++col) diag[row * D + col] -= c * g[row] * d[col];
                    rhs -= g * (c * dot(s.vb[kb], d));
                }
            }
            b[i] = rhs;
            s.pre[i] = invert<D>(diag);
        }
    });
}

// y = (I - dt L) u, the walls' part of L included (their velocities are on the right-hand side).
template <int D>
void product(const ViscositySystem<D>& s, Vec<D>* u, Vec<D>* y) {
    const std::uint32_t* off = s.off;
    const std::uint32_t* idx = s.idx;
    const Vec<D>* x = s.x;
    const Vec<D>* grad = s.grad;
    s.refresh(u);
    parallel_blocks(s.exec, s.n, [&](std::size_t b0, std::size_t b1) {
        for (std::size_t i = b0; i < b1; ++i) {
            Vec<D> acc = u[i];
            for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) {
                const Vec<D> d = x[i] - x[idx[k]];
                acc -= grad[k] * (s.pair[k] * dot(d, u[i] - u[idx[k]]));
            }
            if (s.cb > 0.0f) {
                for (std::uint32_t kb : s.bn[i]) {
                    Vec<D> d, g;
                    float c;
                    if (s.wall_term(i, kb, d, g, c)) acc -= g * (c * dot(d, u[i]));
                }
            }
            y[i] = acc;
        }
    });
}

// u . w summed over the particles, the same bits in any storage order.
template <int D>
double dot_sum(const ViscositySystem<D>& s, const Vec<D>* u, const Vec<D>* w) {
    return order_free_sum(s.exec, s.n, [&](std::size_t i) { return dot(u[i], w[i]); }, s.halo);
}

// The conjugate gradients' vectors: the right-hand side b, the residual r, the preconditioned residual
// z, the search direction p and its product q.
template <int D>
struct CgVectors {
    Vec<D>* b;
    Vec<D>* r;
    Vec<D>* z;
    Vec<D>* p;
    Vec<D>* q;
};

// The squared tolerance on |r| and the start of the iteration from v = v* + dv; returns r . z.
template <int D>
double start_iteration(const ViscositySystem<D>& s, const CgVectors<D>& cg, Vec<D>* v, const Vec<D>* dv,
                       float error_target, double& tol2) {
    const std::size_t n = s.n;
    const ExecContext& exec = s.exec;
    Vec<D>*b = cg.b, *r = cg.r, *z = cg.z, *p = cg.p, *q = cg.q;
    const Block<D>* pre = s.pre;
    // The tolerance is relative to what the viscosity changes in this step: the residual of taking no
    // correction, b - (I - dt L) b (a tolerance relative to |b| would stop while most of a small
    // viscous change is still missing).
    product(s, b, q);
    parallel_for_each_index(exec, n, [&](std::size_t i) { r[i] = b[i] - q[i]; });
    const double change = dot_sum(s, r, r);
    // Start from the last step's correction: v = v* + dv.
    parallel_for_each_index(exec, n, [&](std::size_t i) { v[i] += dv[i]; });
    product(s, v, q);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        r[i] = b[i] - q[i];
        z[i] = apply<D>(pre[i], r[i]);
        p[i] = z[i];
    });
    const double rz = dot_sum(s, r, z);
    tol2 = double(error_target) * error_target * change;
    return rz;
}

// Preconditioned conjugate gradients from the start above, until |r|^2 <= tol2 or max_iterations;
// returns the iterations taken.
template <int D>
int conjugate_gradients(const ViscositySystem<D>& s, const CgVectors<D>& cg, Vec<D>* v, double rz, double tol2,
                        int max_iterations) {
    const std::size_t n = s.n;
    const ExecContext& exec = s.exec;
    Vec<D>*r = cg.r, *z = cg.z, *p = cg.p, *q = cg.q;
    const Block<D>* pre = s.pre;
    int it = 0;
    for (; it < max_iterations; ++it) {
        const double rr = dot_sum(s, r, r);
        if (!(rr > tol2)) break;
        product(s, p, q);
        const double pq = dot_sum(s, p, q);
        if (!(pq > 0.0)) break;
        const float alpha = static_cast<float>(rz / pq);
        parallel_for_each_index(exec, n, [&](std::size_t i) {
            v[i] += p[i] * alpha;
            r[i] -= q[i] * alpha;
            z[i] = apply<D>(pre[i], r[i]);
        });
        const double rz_new = dot_sum(s, r, z);
        const float beta = static_cast<float>(rz_new / rz);
        rz = rz_new;
        parallel_for_each_index(exec, n, [&](std::size_t i) { p[i] = z[i] + p[i] * beta; });
    }
    return it;
}

// Make the residual sum to zero: a uniform shift leaves the fluid part of L unchanged, so without
// wall friction the total momentum is then exactly that of the right-hand side, whatever the
// solver's tolerance.
template <int D>
void zero_residual_sum(const ViscositySystem<D>& s, const Vec<D>* r, Vec<D>* v) {
    const std::size_t n = s.n;
    Halo<D>* const halo = s.halo;
    Vec<D> shift;
    for (int a = 0; a < D; ++a)
        shift[a] = static_cast<float>(order_free_sum(s.exec, n, [&](std::size_t i) { return r[i][a]; }, halo) /
                                      double(halo ? halo->global_owned() : n));
    parallel_for_each_index(s.exec, n, [&](std::size_t i) { v[i] += shift; });
}

}  // namespace

template <int D>
int DfsphSolver<D>::solve_viscosity(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, float dt,
                                    const ExecContext& exec) {
    const std::size_t n = fluid.size();
    if ((n == 0 && !m_halo) || (m_s.viscosity <= 0.0f && m_s.wall_viscosity <= 0.0f)) return 0;
    // Over several processes (eddy/halo.hpp): sums over the owned particles of all, and the ghosts' entries
    // of every vector a product reads refreshed from their owners.
    Halo<D>* const halo = m_halo;
    if (halo) halo->refresh(fluid.density);  // the pair terms read the neighbours' densities
    const auto& fn = m_neighbors.fluid();
    Vec<D>* v = fluid.velocity.data();
    const float h2 = 0.01f * m_kernel.h * m_kernel.h, inv_rho0 = 1.0f / m_s.rest_density;
    // nu over the lattice factor: the discrete Laplacian with h = 4r gives 0.65 (2D) / 0.70 (3D) of the
    // exact one (DfsphSolver's constructor).
    const float c0 = 2.0f * (D + 2) * dt / m_viscosity_factor;
    const float cf = c0 * m_s.viscosity, cb = c0 * m_s.wall_viscosity;
    Vec<D>* dv = fluid.vectors[fluid.add_vector(kViscosityField)].data.data();

    detail::resize_for_overwrite(m_visc_pair, fn.total());  // assemble() writes every pair
    m_visc_block.resize(n * D * D);
    m_visc_b.resize(n);
    m_visc_r.resize(n);
    m_visc_z.resize(n);
    m_visc_p.resize(n);
    m_visc_q.resize(n);
    const ViscositySystem<D> s{exec, halo, n, fn.offsets.data(), fn.indices.data(), wall_lists(),
                               fluid.position.data(), fluid.density.data(), m_grad.data(),
                               boundary.position.data(), boundary.velocity.data(), boundary.psi.data(),
                               m_kernel, h2, inv_rho0, cf, cb, m_visc_pair.data(),
                               reinterpret_cast<Block<D>*>(m_visc_block.data())};
    const CgVectors<D> cg{m_visc_b.data(), m_visc_r.data(), m_visc_z.data(), m_visc_p.data(), m_visc_q.data()};

    assemble(s, v, cg.b);
    double tol2 = 0.0;
    const double rz = start_iteration(s, cg, v, dv, m_s.viscosity_error_target, tol2);
    const int it = conjugate_gradients(s, cg, v, rz, tol2, m_s.max_viscosity_iterations);
    zero_residual_sum(s, cg.r, v);
    // The correction, for the next step's start: v^{n+1} - v* (b holds v* + dt a_b; dt a_b is small).
    const Vec<D>* b = cg.b;
    parallel_for_each_index(exec, n, [&](std::size_t i) { dv[i] = v[i] - b[i]; });
    return it;
}

template int DfsphSolver<2>::solve_viscosity(ParticleSet<2>&, const BoundarySet<2>&, float, const ExecContext&);
template int DfsphSolver<3>::solve_viscosity(ParticleSet<3>&, const BoundarySet<3>&, float, const ExecContext&);

}  // namespace eddy
