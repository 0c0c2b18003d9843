#include "eddy/pbf.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/collapse.hpp"
#include "core/pass_timer.hpp"
#include "eddy/error.hpp"

namespace eddy {

std::span<const Field<PbfSettings>> pbf_fields() {
    using S = PbfSettings;
    static const Field<S> table[] = {
        {"rest_density", &S::rest_density, "kg/m^3", 0, kInf, "rest density rho0 (kg/m^2 in 2D)", {}, true},
        {"iterations", &S::iterations, "", 1, 1000,
         "constraint iterations per substep: the fewest when density_error_target is set, all of them when it is 0"},
        {"density_error_target", &S::density_error_target, "", 0, 1,
         "iterate until the mean compression mean(max(0, rho/rho0 - 1)) is at most this (0.005 = 0.5%; 0: exactly "
         "'iterations')"},
        {"max_iterations", &S::max_iterations, "", 1, 1000, "bound on iterations when a target is set"},
        {"relaxation", &S::relaxation, "", 0, 100, "constraint relaxation eps, relative to a full lattice's sum |grad C|^2",
         {}, true},
        {"tensile_k", &S::tensile_k, "", 0, 10, "tensile instability term s_corr strength k"},
        {"tensile_n", &S::tensile_n, "", 1, 16, "s_corr exponent n"},
        {"tensile_dq", &S::tensile_dq, "", 0, 0.99, "s_corr reference distance |dq| as a fraction of h (must be < 1)",
         {}, true},
        {"xsph", &S::xsph, "", 0, 1, "XSPH viscosity c"},
        {"wall_xsph", &S::wall_xsph, "", 0, 1, "XSPH smoothing towards the walls' velocity (wall friction)"},
        {"vorticity", &S::vorticity, "m/s", 0, kInf, "vorticity confinement eps: a = eps N x omega"},
        {"time_step", &S::time_step, "s", 0, kInf, "time step; 0: 0.5 * 2r / sqrt(2 g H)"},
        {"substeps", &S::substeps, "", 1, 1000, "substeps per time step"},
        {"support_ratio", &S::support_ratio, "", 2, 8, "kernel support radius h in particle radii r"},
        {"sort_interval", &S::sort_interval, "steps", 0, 1e6, "steps between Morton reorderings (0: never)"},
        {"boundary_model", &S::boundary_model, "", 0, 0,
         "smooth (default): closed containers act through their shapes, each face as the fluid's mirror image, "
         "their edges counted once (docs/methods.md, PBF's smooth walls); particles: Akinci et al. 2012's "
         "calibrated single layer everywhere (seed 002); balls, cylinders and closed models (bodies' included) act "
         "through volume maps, ball bodies and open shells keep their particles",
         {"smooth", "particles"}},
        {"wall_law_viscosity", &S::wall_law_viscosity, "m^2/s", 0, 1e3, kWallLawViscosityHelp},
    };
    return table;
}

template <int D>
PbfSolver<D>::PbfSolver(const PbfSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                        std::vector<Wall<D>> walls, const std::string& where)
    : m_s(s), m_r(particle_radius), m_g(gravity), m_walls(std::move(walls)) {
    validate(s, pbf_fields(), where);
    if (!(particle_radius > 0.0f)) throw InputError(fmt::format("{}: particle_radius must be > 0", where));
    if (s.density_error_target > 0.0f && s.max_iterations < s.iterations)
        throw InputError(fmt::format("{}: key 'max_iterations' = {} is below 'iterations' = {}", where, s.max_iterations,
                                     s.iterations));
    m_kernel = CubicSpline<D>(s.support_ratio * particle_radius);
    const float spacing = 2.0f * particle_radius;
    m_mass = lattice_mass(m_kernel, spacing, s.rest_density);
    // S_lattice = |grad_i C_i|^2 + sum_j |grad_j C_i|^2 on a full lattice (the first term vanishes there).
    double sum = 0.0;
    for_each_lattice_offset<D>(spacing, m_kernel.h, [&](const Vec<D>& x) {
        sum += norm2(m_kernel.gradient(x) * (m_mass / s.rest_density));
    });
    m_eps = static_cast<float>(s.relaxation * sum);
    m_lambda_ref = static_cast<float>(1.0 / sum);
    m_w_dq = m_kernel.value(s.tensile_dq * m_kernel.h);
    if (s.time_step > 0.0f) {
        m_dt = s.time_step;
    } else {
        const float v = std::sqrt(2.0f * norm(gravity) * std::max(fluid_height, 0.0f));
        if (!(v > 0.0f))
            throw InputError(fmt::format("{}: cannot derive the time step without gravity or fluid height; set 'time_step'",
                                         where));
        m_dt = 0.5f * spacing / v;
    }
    m_neighbors.configure(m_kernel.h, s.sort_interval);
    m_neighbors.set_candidate_limit(crowded_candidate_limit<D>(m_kernel.h, particle_radius));
}

template <int D>
void PbfSolver<D>::compute_wall_volumes(BoundarySet<D>& boundary, const ExecContext& exec) const {
    // Akinci's single layer, its volumes calibrated so that fluid resting on a flat wall has rho0 (a lattice
    // at rest stays at rest: as published, the first row had 1.064 rho0 in 3D and the first step lifted it).
    compute_boundary_psi(boundary, m_kernel, m_s.rest_density, exec, 2.0f * m_r, 1);
}

template <int D>
void PbfSolver<D>::init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec) {
    fluid.mass = m_mass;
    compute_wall_volumes(boundary, exec);
    // Smooth walls for the closed analytic containers (eddy/smooth_walls.hpp), as DFSPH's and WCSPH's; their
    // friction is the wall XSPH and the law of the wall; the edges' excess taken off (the constraint turns it
    // into velocity at once: a 3D tank's corners left at 5.5 g dt after the first step).
    m_smooth.init(m_s.boundary_model == "smooth", m_walls, boundary.motions.size(), m_kernel, m_r, m_mass,
                  m_s.rest_density, m_s.wall_law_viscosity, &exec);
    m_neighbors.init(fluid, boundary, exec);
}

template <int D>
StepStats PbfSolver<D>::step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                             const ExecContext& exec) {
    StepStats stats;
    stats.dt = dt;
    const float h = dt / static_cast<float>(m_s.substeps);
    stats.density_ratio_limit = kCollapseDensityRatio;
    m_loads.begin(boundary, t);
    m_body_dv.clear();  // the bodies' motion within the step (pbf_bodies.cpp) starts again
    m_body_extra.clear();
    for (int k = 0; k < m_s.substeps && stats.crowded == 0; ++k)
        substep(fluid, boundary, t + k * double(h), h, dt, exec, stats);
    m_loads.finish(boundary, m_halo);
    // The fullest cell where the step left the fluid: its last collision comes after its last density pass.
    check_crowded_cells(m_neighbors, fluid, m_halo, m_kernel.h, m_r, stats, exec);
    return stats;
}

namespace {

inline Vec3 as3(const Vec2& v) { return Vec3{{v[0], v[1], 0.0f}}; }
inline Vec3 as3(const Vec3& v) { return v; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
    return Vec3{{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
template <int D>
Vec<D> from3(const Vec3& v) {
    Vec<D> r;
    for (int a = 0; a < D; ++a) r[a] = v[a];
    return r;
}

}  // namespace

template <int D>
void PbfSolver<D>::substep(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, float step_dt,
                           const ExecContext& exec, StepStats& stats) {
    const std::size_t n = fluid.size();
    auto& x = fluid.position;
    auto& v = fluid.velocity;
    detail::PassTimer timer;  // StepStats::passes: each pass's wall-clock time, summed over the substeps
    const bool moved = move_walls(boundary, m_walls, t, dt, exec);

    // Reorder first (before x_old is taken), so that every per-particle array is in the new order
    // (not with ghosts, which stay behind the owned particles).
    if (!m_halo) m_neighbors.reorder_if_due(fluid, exec);
    resize_buffers(n);
    predict_positions(fluid, dt, exec);
    timer.lap("predict");
    m_neighbors.update(fluid, boundary, walls_changed(m_halo, moved), exec);
    // A collapse crowds thousands of particles into a few cells: the search refused their lists (its
    // candidate limit), and the step ends here; run() reports it (step_divergence). On several
    // processes every one stops with the others.
    if (crowded_search(m_neighbors, fluid, m_halo, stats)) return;
    // The walls every term reads: the smooth faces' virtual particles (with copies of the other walls'
    // particles), or the boundary particles themselves.
    m_smooth.update(m_walls, boundary.motions, t, m_g, x.data(), n, m_neighbors.boundary(), boundary, exec);
    const BoundarySet<D>& walls = m_smooth.set(boundary);
    begin_body_coupling(fluid, boundary, walls, t, dt, exec);  // bodies give way within the iterations
    timer.lap("neighbours");
    const DensityMeasure dens = solve_density(fluid, walls, dt, exec, stats);
    timer.lap("density_solve");
    const float inv_dt = 1.0f / dt;  // velocities from positions
    parallel_for_each_index(exec, n, [&](std::size_t i) { v[i] = (x[i] - m_old_x[i]) * inv_dt; });
    if (m_s.vorticity > 0.0f) vorticity_confinement(fluid, dt, exec);
    SpeedMeasure st = smooth_velocities(fluid, walls, dt, exec);
    add_substep_loads(fluid, walls, dt, step_dt, exec);
    std::size_t count = n;
    if (m_halo) {  // the next substep starts from the ghosts' velocities
        m_halo->refresh(v);
        float mx[2] = {st.vmax, st.bad ? 1.0f : 0.0f};
        m_halo->max(mx);
        st.vmax = mx[0];
        st.bad = mx[1] > 0.0f;
        count = m_halo->global_owned();
    }

    stats.max_speed = std::max(stats.max_speed, st.vmax);
    stats.max_density_error = std::max(stats.max_density_error, dens.emax);
    stats.mean_density_error = count ? static_cast<float>(dens.esum.value() / double(count)) : 0.0f;
    stats.non_finite = stats.non_finite || st.bad;
    stats = timer.finish("velocities", stats);
}

template <int D>
void PbfSolver<D>::resize_buffers(std::size_t n) {
    m_old_x.resize(n);
    m_dx.resize(n);
    m_lambda.resize(n);
    m_scratch_v.resize(n);
    m_wall_dv.resize(n);
}

// Prediction (external forces only). The collisions' displacements (the difference of two nearby floats:
// exactly the change of x) are summed in m_wall_dv for the walls' loads.
template <int D>
void PbfSolver<D>::predict_positions(ParticleSet<D>& fluid, float dt, const ExecContext& exec) {
    const std::size_t n = fluid.size();
    auto& x = fluid.position;
    auto& v = fluid.velocity;
    const Vec<D> g = m_g;
    const float margin = 0.5f * m_r;
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        m_old_x[i] = x[i];
        v[i] += g * dt;
        x[i] += v[i] * dt;
        const Vec<D> free = x[i];
        keep_inside(x[i], m_walls, margin);
        m_wall_dv[i] = x[i] - free;
    });

}

// The density constraints' iterations (Macklin & Mueller 2013, Algorithm 1, lines 8-19): lambdas, then
// position corrections and collisions, until the mean compression meets its target (or `iterations`
// without one), a collapse, or max_iterations. Returns the last measurement, reduced over the processes.
template <int D>
typename PbfSolver<D>::DensityMeasure PbfSolver<D>::solve_density(ParticleSet<D>& fluid, const BoundarySet<D>& walls,
                                                                  float dt, const ExecContext& exec, StepStats& stats) {
    const std::size_t n = fluid.size(), owned = owned_count(m_halo, n);
    auto& x = fluid.position;
    auto& rho = fluid.density;
    // Each wall pair's share of the corrections, summed over this substep's iterations (the positions
    // move between iterations, so the sum is kept per pair: its wall particle's object and lever).
    m_pair_dx.assign(m_smooth.lists(m_neighbors.boundary()).total(), Vec<D>::zero());
    // The pressure the corrections stand for: dx_i = (1/rho0) sum_j m (lambda_i + lambda_j) grad W_ij is the
    // displacement dt^2 a_i of the SPH pressure force a_i = -sum_j m (p_i + p_j) / rho0^2 grad W_ij (seed
    // eq. f at rho = rho0) with p = -rho0 lambda / dt^2, summed over the iterations. Output only.
    auto& pr = fluid.pressure;
    const float p_scale = m_s.rest_density / (dt * dt);
    parallel_for_each_index(exec, n, [&](std::size_t i) { pr[i] = 0.0f; });
    const int max_iter = m_s.density_error_target > 0.0f ? m_s.max_iterations : m_s.iterations;
    int iter = 0;
    DensityMeasure dens;
    float local_emax = 0.0f;  // this process's part of dens.emax (the particle named is one of its own)
    for (; iter < max_iter; ++iter) {
        dens = constraint_lambdas(fluid, walls, exec);  // density, constraint and lambda (eq. 2, 1, 11)
        std::size_t count = n;
        local_emax = dens.emax;
        if (m_halo) {  // the corrections read the neighbours' lambda; XSPH and vorticity their density
            m_halo->refresh(m_lambda);
            m_halo->refresh(rho);
            m_halo->max({&dens.emax, 1});
            m_halo->sum({&dens.esum, 1});
            count = m_halo->global_owned();
        }
        // A collapse (issue 29): a density the constraint cannot undo in any number of iterations; the
        // step ends with it measured (step_divergence reports it) instead of iterating to the maximum
        // over lists that grew with the crowd (PBF 3D at a 0.2 s step: 21 s for its one step).
        if (1.0f + dens.emax > kCollapseDensityRatio) break;
        // With a target: at least `iterations` corrections, then stop as soon as the mean compression
        // measured here (of the positions as they are) is at or below it.
        if (m_s.density_error_target > 0.0f && iter >= m_s.iterations &&
            dens.esum.value() / double(std::max<std::size_t>(count, 1)) <= m_s.density_error_target)
            break;
        correct_positions(fluid, walls, p_scale, exec);
        if (m_bodies.active()) push_bodies(dt, exec);
    }
    m_last_iterations = iter;
    stats.iterations += iter;
    // Collapse: the density of the last measurement (what max_density_error reports), the ratio to
    // rho0 with the particle where it is now.
    if (1.0f + dens.emax > stats.max_density_ratio && dens.emax > 0.0f && stats.crowded == 0) {
        stats.max_density_ratio = 1.0f + dens.emax;
        stats.where_dimension = 0;
        if (local_emax == dens.emax && dens.densest < owned) {
            stats.where_id = fluid.id[dens.densest];
            for (int a = 0; a < D; ++a) stats.where[a] = x[dens.densest][a];
            stats.where_dimension = D;
        }
    }
    return dens;
}

// Density, constraint and lambda (eq. 2, 1, 11) at the positions as they are; the largest compression
// names this process's particle (ties: the earlier block's).
template <int D>
typename PbfSolver<D>::DensityMeasure PbfSolver<D>::constraint_lambdas(ParticleSet<D>& fluid, const BoundarySet<D>& walls,
                                                                       const ExecContext& exec) {
    const std::size_t n = fluid.size(), owned = owned_count(m_halo, n);
    const auto& x = fluid.position;
    auto& rho = fluid.density;
    const auto& xb = walls.position;
    const auto& psi = walls.psi;
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = m_smooth.lists(m_neighbors.boundary());
    const float w0 = W.value(0.0f);
    // Bodies that give way (pbf_bodies.cpp): the density their motion adds, lambda's relaxation.
    const float* body_rho = m_bodies.active() ? m_body_rho.data() : nullptr;
    const float* relax = m_bodies.active() ? m_body_relax.data() : nullptr;
    return parallel_reduce_blocks(
        exec, n, DensityMeasure{},
        [&](std::size_t b0, std::size_t b1) {
            DensityMeasure s;
            for (std::size_t i = b0; i < b1; ++i) {
                const Vec<D> xi = x[i];
                float r = m * w0;
                Vec<D> grad_i = Vec<D>::zero();
                float sum_grad2 = 0.0f;
                for (std::uint32_t j : fn[i]) {
                    const Vec<D> d = xi - x[j];
                    const float len = norm(d);
                    float w, dw;
                    W.value_and_derivative(len, w, dw);
                    r += m * w;
                    if (len > 0.0f) {
                        const Vec<D> gj = d * (dw / len * m * inv_rho0);
                        grad_i += gj;
                        sum_grad2 += norm2(gj);
                    }
                }
                for (std::uint32_t k : bn[i]) {
                    const Vec<D> d = xi - xb[k];
                    const float len = norm(d);
                    float w, dw;
                    W.value_and_derivative(len, w, dw);
                    r += psi[k] * w;
                    if (len > 0.0f) grad_i += d * (dw / len * psi[k] * inv_rho0);
                }
                if (body_rho) r += body_rho[i];
                rho[i] = r;
                const float c = std::max(r * inv_rho0 - 1.0f, 0.0f);
                m_lambda[i] = -c / (norm2(grad_i) + sum_grad2 + m_eps) * (relax ? relax[i] : 1.0f);
                if (i >= owned) continue;  // a ghost: its owner counts it
                if (c > s.emax) {
                    s.emax = c;
                    s.densest = static_cast<std::uint32_t>(i);
                }
                s.esum.add(c);
            }
            return s;
        },
        [](DensityMeasure l, const DensityMeasure& r) {
            if (r.emax > l.emax) {  // ties: the earlier block's particle
                l.emax = r.emax;
                l.densest = r.densest;
            }
            l.esum += r.esum;
            return l;
        });
}

// Position corrections (eq. 12-14), each wall pair's share of them, the collisions, and the pressure the
// corrections stand for (p_scale = rho0 / dt^2).
template <int D>
void PbfSolver<D>::correct_positions(ParticleSet<D>& fluid, const BoundarySet<D>& walls, float p_scale,
                                     const ExecContext& exec) {
    const std::size_t n = fluid.size();
    auto& x = fluid.position;
    auto& pr = fluid.pressure;
    const auto& xb = walls.position;
    const auto& psi = walls.psi;
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = m_smooth.lists(m_neighbors.boundary());
    const float k_corr = m_s.tensile_k * m_lambda_ref, inv_w_dq = 1.0f / m_w_dq;
    const int n_corr = m_s.tensile_n;
    const float margin = 0.5f * m_r;
    // Plain pointers: the compiler cannot prove that the members do not alias the outputs.
    const Vec<D>* xs = x.data();
    const float* lam = m_lambda.data();
    Vec<D>* out = m_dx.data();
    Vec<D>* pair_dx = m_pair_dx.data();
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const Vec<D> xi = xs[i];
        const float li = lam[i];
        Vec<D> dp = Vec<D>::zero();
        for (std::uint32_t j : fn[i]) {
            const Vec<D> d = xi - xs[j];
            const float len = norm(d);
            if (len == 0.0f) continue;
            float w, dw;
            W.value_and_derivative(len, w, dw);
            const float corr = w * inv_w_dq;
            float p;
            if (n_corr == 4) {
                p = corr * corr;
                p *= p;
            } else {
                p = corr;
                for (int e = 1; e < n_corr; ++e) p *= corr;
            }
            const float s_corr = -k_corr * p;
            dp += d * ((li + lam[j] + s_corr) * m * dw / len);
        }
        Vec<D>* pair = pair_dx + bn.offsets[i];
        for (std::uint32_t k : bn[i]) {
            const Vec<D> d = xi - xb[k];
            const float len = norm(d);
            if (len > 0.0f) {
                // dp's own expression as without the loads (with FMA contraction a shared product
                // would round differently and change the motion's bits).
                const float s = li * psi[k] * W.derivative(len) / len;
                dp += d * s;
                *pair += d * (s * inv_rho0);
            }
            ++pair;
        }
        out[i] = dp * inv_rho0;
    });
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        x[i] += m_dx[i];
        const Vec<D> free = x[i];
        keep_inside(x[i], m_walls, margin);
        m_wall_dv[i] += x[i] - free;
        pr[i] -= p_scale * m_lambda[i];
    });
    if (m_halo) m_halo->refresh(x);
}

// XSPH viscosity (eq. 17), and its wall counterpart (friction against the boundary particles) and the smooth
// faces' law of the wall, into the velocities; the fastest owned particle.
template <int D>
typename PbfSolver<D>::SpeedMeasure PbfSolver<D>::smooth_velocities(ParticleSet<D>& fluid, const BoundarySet<D>& walls,
                                                                    float dt, const ExecContext& exec) {
    const std::size_t n = fluid.size(), owned = owned_count(m_halo, n);
    const auto& x = fluid.position;
    auto& v = fluid.velocity;
    const auto& rho = fluid.density;
    const auto& xb = walls.position;
    const auto& psi = walls.psi;
    const float inv_dt = 1.0f / dt;
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = m_smooth.lists(m_neighbors.boundary());
    const float c = m_s.xsph, c_wall = m_s.wall_xsph;
    const auto& vb = walls.velocity;
    const SpeedMeasure local = parallel_reduce_blocks(
        exec, n, SpeedMeasure{},
        [&](std::size_t b0, std::size_t b1) {
            SpeedMeasure s;
            for (std::size_t i = b0; i < b1; ++i) {
                Vec<D> dv = Vec<D>::zero(), dw = Vec<D>::zero();
                if (c > 0.0f)
                    for (std::uint32_t j : fn[i]) dv += (v[j] - v[i]) * (m / rho[j] * W.value(norm(x[i] - x[j])));
                if (c_wall > 0.0f)  // walls: the same smoothing towards the wall's velocity
                    for (std::uint32_t k : bn[i]) dw += (vb[k] - v[i]) * (psi[k] * inv_rho0 * W.value(norm(x[i] - xb[k])));
                const Vec<D> shear = m_smooth.shear(i, x[i], v[i], dt);  // the smooth faces' law of the wall
                m_scratch_v[i] = v[i] + dv * c + dw * c_wall + shear;
                m_wall_dv[i] = m_wall_dv[i] * inv_dt + dw * c_wall + shear;  // the walls' velocity change
                if (i >= owned) continue;
                const float sp = norm(m_scratch_v[i]);
                if (!std::isfinite(sp) || !is_finite(x[i])) s.bad = true;
                s.vmax = std::max(s.vmax, sp);
            }
            return s;
        },
        [](SpeedMeasure l, const SpeedMeasure& r) {
            l.vmax = std::max(l.vmax, r.vmax);
            l.bad = l.bad || r.bad;
            return l;
        });
    v.swap(m_scratch_v);
    return local;
}

// The walls' loads of one substep, weighted dt / step_dt in the step's.
template <int D>
void PbfSolver<D>::add_substep_loads(const ParticleSet<D>& fluid, const BoundarySet<D>& walls, float dt, float step_dt,
                                     const ExecContext& exec) {
    const std::size_t owned = owned_count(m_halo, fluid.size());
    const float m = m_mass;
    const auto& bn = m_smooth.lists(m_neighbors.boundary());
    // The walls' loads of this substep, weighted dt / step_dt in the step's: the pairs' corrections
    // (a force m dx / dt^2 on the fluid), the collisions and the wall XSPH (impulses m dv).
    m_loads.add_pairs(exec, owned, bn, walls, [&, scale = m / (dt * step_dt)](std::size_t, std::uint32_t,
                                                                               std::size_t slot) {
        return m_pair_dx[slot] * scale;
    });
    m_loads.add_impulses(exec, owned, bn, walls, fluid.position.data(), m_wall_dv.data(), m, step_dt);
}

template <int D>
void PbfSolver<D>::vorticity_confinement(ParticleSet<D>& fluid, float dt, const ExecContext& exec) {
    // Vorticity confinement (eq. 15, 16).
    const std::size_t n = fluid.size();
    const auto& x = fluid.position;
    auto& v = fluid.velocity;
    const auto& rho = fluid.density;
    const auto& fn = m_neighbors.fluid();
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass;
    m_omega.resize(n);
    m_omega_len.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        Vec3 w = Vec3::zero();
        for (std::uint32_t j : fn[i]) {
            const Vec<D> d = x[i] - x[j];
            const float len = norm(d);
            if (len == 0.0f) continue;
            // grad_j W_ij = -grad_i W_ij
            const Vec<D> gj = d * (-W.derivative(len) / len);
            w += cross(as3(Vec<D>(v[j] - v[i])), as3(gj)) * (m / rho[j]);
        }
        m_omega[i] = w;
        m_omega_len[i] = norm(w);
    });
    if (m_halo) m_halo->refresh(m_omega_len);
    const float eps = m_s.vorticity;
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        Vec<D> eta = Vec<D>::zero();
        for (std::uint32_t j : fn[i]) {
            const Vec<D> d = x[i] - x[j];
            const float len = norm(d);
            if (len == 0.0f) continue;
            eta += d * (W.derivative(len) / len * m / rho[j] * m_omega_len[j]);
        }
        const float el = norm(eta);
        m_scratch_v[i] = el > 1e-12f ? from3<D>(cross(as3(Vec<D>(eta * (1.0f / el))), m_omega[i])) * (eps * dt)
                                     : Vec<D>::zero();
    });
    parallel_for_each_index(exec, n, [&](std::size_t i) { v[i] += m_scratch_v[i]; });
    if (m_halo) m_halo->refresh(v);  // XSPH reads the neighbours' velocities
}

template <int D>
nlohmann::json PbfSolver<D>::describe() const {
    nlohmann::json s = to_json(m_s, pbf_fields());
    s["derived_time_step"] = m_dt;
    s["derived_particle_mass"] = m_mass;
    s["derived_support_radius"] = m_kernel.h;
    s["derived_epsilon"] = m_eps;
    return s;
}

template <int D>
void PbfSolver<D>::save_state(StateWriter& w) const {
    w.put(m_last_iterations);
    w.put(m_neighbors.sort_phase());
}

template <int D>
void PbfSolver<D>::load_state(StateReader& r) {
    m_last_iterations = r.get<int>();
    m_neighbors.set_sort_phase(r.get<int>());
}

template <int D>
std::size_t PbfSolver<D>::memory_bytes() const {
    return m_neighbors.memory_bytes() + m_smooth.memory_bytes() +
           (m_old_x.capacity() + m_dx.capacity() + m_scratch_v.capacity() + m_pair_dx.capacity() + m_wall_dv.capacity()) *
               sizeof(Vec<D>) +
           m_omega.capacity() * sizeof(Vec3) + (m_lambda.capacity() + m_omega_len.capacity()) * sizeof(float);
}

template class PbfSolver<2>;
template class PbfSolver<3>;

}  // namespace eddy
