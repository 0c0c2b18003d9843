#include "eddy/dfsph.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/buffers.hpp"
#include "core/pass_timer.hpp"
#include "eddy/error.hpp"

namespace eddy {

std::span<const Field<DfsphSettings>> dfsph_fields() {
    using S = DfsphSettings;
    static const Field<S> table[] = {
        {"rest_density", &S::rest_density, "kg/m^3", 0, kInf, "rest density rho0 (kg/m^2 in 2D)", {}, true},
        {"density_error_target", &S::density_error_target, "", 0, 1,
         "density solver: iterate until the mean compression (rho* - rho0)/rho0 is below this (0.0005 = 0.05%)", {}, true},
        {"correct_prediction", &S::correct_prediction, "", 0, 1,
         "density solver: aim below density_error_target by the compression the last step ended with beyond its "
         "linear prediction (x (dt/dt_prev)^2, down to a quarter of the target), so that steps end at the target"},
        {"density_error_max", &S::density_error_max, "", 0, 1,
         "density solver: also iterate until no particle's predicted compression exceeds this (0: the mean target "
         "alone); impacts and walls then end their steps under density_error_target too, at more iterations"},
        {"divergence_error_target", &S::divergence_error_target, "", 0, 1,
         "divergence solver: iterate until the mean density change over one step, dt Drho/Dt / rho0, is below this", {},
         true},
        {"min_iterations", &S::min_iterations, "", 0, 1000, "density solver: fewest iterations per step"},
        {"max_iterations", &S::max_iterations, "", 1, 10000, "density solver: most iterations per step"},
        {"min_divergence_iterations", &S::min_divergence_iterations, "", 0, 1000,
         "divergence solver: fewest iterations per step"},
        {"max_divergence_iterations", &S::max_divergence_iterations, "", 0, 10000,
         "divergence solver: most iterations per step (0: no divergence solver)"},
        {"warm_start", &S::warm_start, "", 0, 1,
         "density solver: fraction of the previous step's pressures it starts from (0: cold start)"},
        {"divergence_warm_start", &S::divergence_warm_start, "", 0, 1,
         "divergence solver: fraction of the previous step's pressures it starts from (0: cold start)"},
        {"viscosity", &S::viscosity, "m^2/s", 0, 1e3,
         "kinematic viscosity nu, solved implicitly (Weiler et al. 2018): water 1e-6, olive oil 1e-4, honey 1e-2"},
        {"wall_viscosity", &S::wall_viscosity, "m^2/s", 0, 1e3, "the same against the walls (wall friction)"},
        {"wall_law_viscosity", &S::wall_law_viscosity, "m^2/s", 0, 1e3, kWallLawViscosityHelp},
        {"viscosity_error_target", &S::viscosity_error_target, "", 0, 1,
         "viscosity solver: iterate until the residual is below this fraction of the step's viscous change", {}, true},
        {"max_viscosity_iterations", &S::max_viscosity_iterations, "", 0, 10000,
         "viscosity solver: most conjugate gradient iterations per step"},
        {"xsph", &S::xsph, "", 0, 1, "XSPH velocity smoothing c: dv_i = c sum_j m/rho0 (v_j - v_i) W_ij"},
        {"wall_xsph", &S::wall_xsph, "", 0, 1, "XSPH smoothing towards the walls' velocity (wall friction)"},
        {"cfl", &S::cfl, "", 0, 1, "CFL number: dt <= cfl 2r / (v_max + |g| dt) and dt <= cfl 2r / sqrt(|g| H), H the fluid's height", {}, true},
        {"dt_min", &S::dt_min, "s", 0, kInf, "smallest time step; needing less means the run diverged", {}, true},
        {"dt_max", &S::dt_max, "s", 0, kInf, "largest time step", {}, true},
        {"fixed_dt", &S::fixed_dt, "s", 0, kInf, "fixed time step; 0: adaptive (CFL)"},
        {"dt_growth", &S::dt_growth, "", 0, 100,
         "adaptive time step: grows by at most this factor per step, from a quarter of its limits at the first "
         "(the solvers build the pressure of fluid released at rest); 0: off"},
        {"support_ratio", &S::support_ratio, "", 2, 8, "kernel support radius h in particle radii r"},
        {"sort_interval", &S::sort_interval, "steps", 0, 1e6, "steps between Morton reorderings (0: never)"},
        {"boundary_model", &S::boundary_model, "", 0, 0,
         "smooth (default): walls act through their shapes, each face as the fluid's mirror image (a smooth "
         "density and push, docs/methods.md), balls, cylinders and closed models through volume maps; particles: "
         "Akinci et al. 2012 boundary particles",
         {"smooth", "particles"}},
        {"extrapolated_wall_pressure", &S::extrapolated_wall_pressure, "", 0, 1,
         "walls push with the particle's pressure plus the pressure extrapolated to the wall particles (Band et "
         "al. 2018: the neighbourhood's, carried hydrostatically), so that water at rest sits at r from the walls "
         "with the hydrostatic pressure; off (default): the particle's own pressure alone (Akinci et al. 2012); "
         "on, a tank whose fluid was set in motion can keep swinging (docs/methods.md)"},
    };
    return table;
}

namespace {

struct Stats {
    float emax = 0.0f, vmax = 0.0f;
    ExactSum esum;  // order-independent (ExactSum): the same on any number of processes
    bool bad = false;
};
Stats join(Stats l, const Stats& r) {
    l.emax = std::max(l.emax, r.emax);
    l.vmax = std::max(l.vmax, r.vmax);
    l.esum += r.esum;
    l.bad = l.bad || r.bad;
    return l;
}

// The wave limit on the step: the fluid's gravity waves, sqrt(g H) for its height H, cross at most cfl of a
// diameter per step, as the fastest particle may. Fluid at rest has no speed to bound its step, and the
// force limit (suggest_dt) does not grow with the depth: a 30 cm tank at r = 2 mm (75 rows) at 2 ms steps
// met its mean target while its floor rows compressed by 10-27% and threw particles off at 2-5 m/s, every
// few tenths of a second (docs/methods.md, "The wave limit"); 0.93 ms there, 2.1 ms at r = 4 mm, 24 cm.
float wave_step(float cfl, float r, float g, float height) {
    const float wave = std::sqrt(g * std::max(height, 0.0f));
    return wave > 0.0f ? cfl * 2.0f * r / wave : std::numeric_limits<float>::infinity();
}

}  // namespace

template <int D>
DfsphSolver<D>::DfsphSolver(const DfsphSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                            std::vector<Wall<D>> walls, const std::string& where)
    : m_s(s), m_r(particle_radius), m_wave_dt(wave_step(s.cfl, particle_radius, norm(gravity), fluid_height)),
      m_g(gravity), m_walls(std::move(walls)) {
    validate(s, dfsph_fields(), where);
    if (!(particle_radius > 0.0f)) throw InputError(fmt::format("{}: particle_radius must be > 0", where));
    if (s.dt_min > s.dt_max)
        throw InputError(fmt::format("{}: key 'dt_min' = {:g} is larger than 'dt_max' = {:g}", where, s.dt_min, s.dt_max));
    if (s.dt_growth > 0.0f && s.dt_growth < 1.0f)
        throw InputError(fmt::format("{}: key 'dt_growth' = {:g}: allowed: 0 (off) or 1 to 100 (a factor below 1 "
                                     "would shrink every step)", where, s.dt_growth));
    if (s.min_iterations > s.max_iterations)
        throw InputError(fmt::format("{}: key 'min_iterations' = {} is larger than 'max_iterations' = {}", where,
                                     s.min_iterations, s.max_iterations));
    if (s.density_error_max > 0.0f && s.density_error_max < s.density_error_target)
        throw InputError(fmt::format("{}: key 'density_error_max' = {:g} is below 'density_error_target' = {:g} (a "
                                     "particle's largest compression bounds the mean from above; 0 turns it off)",
                                     where, s.density_error_max, s.density_error_target));
    if (s.min_divergence_iterations > s.max_divergence_iterations)
        throw InputError(fmt::format("{}: key 'min_divergence_iterations' = {} is larger than "
                                     "'max_divergence_iterations' = {}",
                                     where, s.min_divergence_iterations, s.max_divergence_iterations));
    m_kernel = CubicSpline<D>(s.support_ratio * particle_radius);
    const float spacing = 2.0f * particle_radius;
    m_mass = lattice_mass(m_kernel, spacing, s.rest_density);
    // A particle inside a full lattice: its neighbour count and alpha's denominator (F = 0 there).
    double denom = 0.0;
    std::uint32_t full = 0;
    for_each_lattice_offset<D>(spacing, m_kernel.h, [&](const Vec<D>& x) {
        const float d2 = norm2(x);
        if (d2 > 0.0f && d2 < m_kernel.h * m_kernel.h) {
            ++full;
            denom += norm2(m_kernel.gradient(x) * m_mass);
        }
    });
    // Fewer than 3/4 of a full neighbourhood: a free-surface particle, whose density deficit is not
    // compression to undo (the divergence solver leaves it; Bender & Koschier 2017, section 4.2).
    m_min_neighbors = static_cast<std::uint32_t>(0.75 * full);
    m_full_neighbors = full;
    // The viscosity's lattice factor: the SPH Laplacian of the viscosity (dfsph_viscosity.cpp) applied
    // to the shear v = (y^2, 0) at a particle inside a full lattice gives C times the exact 2 (C = 0.649
    // in 2D, 0.698 in 3D at h = 4r: the support spans two spacings); the solver divides nu by C, so
    // that a shear wave decays at the rate nu k^2 (DfsphViscosity.ShearWaveDecaysAtTheAnalyticRate2D).
    double lap = 0.0;
    const float eps = 0.01f * m_kernel.h * m_kernel.h;
    for_each_lattice_offset<D>(spacing, m_kernel.h, [&](const Vec<D>& xj) {
        const float d2 = norm2(xj);
        if (d2 > 0.0f && d2 < m_kernel.h * m_kernel.h) {
            const float d = std::sqrt(d2);
            // m / rho0 as the solver weighs a pair; v_ij . x_ij = (0 - y_j^2) (0 - x_j),
            // grad W_ij = -x_j W'(d) / d (i at the origin)
            lap += double(m_mass / s.rest_density) * (double(xj[1]) * xj[1] * xj[0]) / (d2 + eps) *
                   (-double(xj[0]) * m_kernel.derivative(d) / d);
        }
    });
    m_viscosity_factor = static_cast<float>(2.0 * (D + 2) * lap / 2.0);
    m_alpha_floor = static_cast<float>(1e-6 * denom);
    m_neighbors.configure(m_kernel.h, s.sort_interval);
}

template <int D>
void DfsphSolver<D>::compute_wall_volumes(BoundarySet<D>& boundary, const ExecContext& exec) const {
    compute_boundary_psi(boundary, m_kernel, m_s.rest_density, exec, 2.0f * m_r);
}

template <int D>
void DfsphSolver<D>::init_walls(BoundarySet<D>& boundary, const ExecContext& exec) {
    compute_wall_volumes(boundary, exec);
    // Smooth walls for the closed analytic containers (eddy/smooth_walls.hpp); the extrapolated wall pressure
    // is defined on wall particles and keeps them.
    m_smooth.init(m_s.boundary_model == "smooth" && !m_s.extrapolated_wall_pressure, m_walls, boundary.motions.size(),
                  m_kernel, m_r, m_mass, m_s.rest_density, m_s.wall_law_viscosity, &exec);
}

template <int D>
void DfsphSolver<D>::init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec) {
    fluid.mass = m_mass;
    init_walls(boundary, exec);
    m_neighbors.init(fluid, boundary, exec);
    fluid.add_scalar(kPressureField);
    fluid.add_scalar(kDivergencePressureField);
    m_vmax = 0.0f;
    for (const auto& v : fluid.velocity) m_vmax = std::max(m_vmax, norm(v));
    m_last_dt = 0.0f;
}

template <int D>
float DfsphSolver<D>::suggest_dt(const ParticleSet<D>&) const {
    if (m_s.fixed_dt > 0.0f) return m_s.fixed_dt;
    // The speed the next step may reach: the largest speed now plus what gravity adds over a step.
    const float v = m_vmax + norm(m_g) * (m_last_dt > 0.0f ? m_last_dt : m_s.dt_max);
    float dt = m_s.dt_max;
    if (v > 0.0f) dt = std::min(dt, m_s.cfl * 2.0f * m_r / v);
    // Force limit: gravity moves a particle at most cfl/40 of a diameter from rest in one step,
    // g dt^2 <= (cfl / 40) 2r. Larger steps leave the Jacobi solvers too far to go (a deep column
    // needs many iterations to carry the weight down to the floor) and the tank at rest starts to
    // churn; 0.1 sqrt(2r / g) at the default cfl: 5 ms at r = 12.5 mm, 2.9 ms at r = 4 mm.
    const float g = norm(m_g);
    if (g > 0.0f) dt = std::min(dt, std::sqrt(m_s.cfl / 40.0f * 2.0f * m_r / g));
    dt = std::min(dt, m_wave_dt);  // the gravity waves' CFL (wave_step)
    // Ramp: a quarter of the limits at the first step (or after init(): the viewer's settings
    // changes), then at most dt_growth times the last step. Released at rest, the fluid has no
    // pressure yet; at full step its wall rows compress faster than the density solver builds the
    // column's pressure (docs/methods.md, "The cold start").
    if (m_s.dt_growth > 0.0f)
        dt = std::min(dt, std::max(m_s.dt_min, m_last_dt > 0.0f ? m_s.dt_growth * m_last_dt : 0.25f * dt));
    return dt;
}

template <int D>
void DfsphSolver<D>::apply_pressure(const float* dK, float* K, Vec<D>* v, float dt, bool with_moving_faces,
                                    const ExecContext& exec) const {
    const auto& fn = m_neighbors.fluid();
    const std::uint32_t* off = fn.offsets.data();
    const std::uint32_t* idx = fn.indices.data();
    const Vec<D>* grad = m_grad.data();
    const Vec<D> *F = m_F.data(), *Fb = m_Fb.data();
    const float *w = m_w.data(), *wself = m_wself.data();
    const bool extrapolated = m_s.extrapolated_wall_pressure;
    parallel_blocks(exec, m_alpha.size(), [&](std::size_t b0, std::size_t b1) {
        for (std::size_t i = b0; i < b1; ++i) {
            Vec<D> acc = F[i] * dK[i];  // the particle's own pressure, against fluid and walls
            if (extrapolated) {
                // and the walls' pressure: the Shepard average of the neighbourhood's (header, P_b)
                float avg = wself[i] * dK[i];
                for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) {
                    acc += grad[k] * dK[idx[k]];
                    avg += w[k] * dK[idx[k]];
                }
                acc += Fb[i] * avg;
            } else {
                for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) acc += grad[k] * dK[idx[k]];
                if (m_smooth.mirrored(i)) acc += m_smooth.cached_ghost_share(i, m_mass, dK, with_moving_faces);
            }
            v[i] -= acc * dt;
            if (K) K[i] += dK[i];
        }
    });
}

template <int D>
void DfsphSolver<D>::resize_buffers(std::size_t n) {
    const std::size_t pairs = m_neighbors.fluid().total();
    detail::resize_for_overwrite(m_grad, pairs);
    m_rate.resize(n);
    m_alpha.resize(n);
    m_dP.resize(n);
    m_wall_rate.resize(n);
    m_F.resize(n);
    m_Fb.resize(n);
    m_xsph.resize(n);
    m_wall_dv.resize(n);
    if (m_s.extrapolated_wall_pressure) {
        detail::resize_for_overwrite(m_w, pairs);
        m_wself.resize(n);
        m_wall_push.resize(n);
    }
    m_surface.resize(n);
}

template <int D>
void DfsphSolver<D>::update_neighbors(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                                      const ExecContext& exec) {
    const bool moved = move_walls(boundary, m_walls, t, dt, exec);
    if (!m_halo) m_neighbors.reorder_if_due(fluid, exec);  // ghosts stay behind the owned particles
    m_neighbors.update(fluid, boundary, walls_changed(m_halo, moved), exec);
    m_smooth.update(m_walls, boundary.motions, t, m_g, fluid.position.data(), fluid.size(), m_neighbors.boundary(),
                    boundary, exec);
    // The mirror share's pairs, summed in every Jacobi iteration of both solves at these positions.
    m_smooth.cache_ghost_pairs(fluid.position.data(), m_neighbors.fluid(), fluid.size(), exec);
}

template <int D>
void DfsphSolver<D>::set_smooth_wall_push(const float* rho, const Vec<D>* x, const Vec<D>* v, std::size_t n, float dt,
                                          const ExecContext& exec) {
    m_wall_push.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        m_wall_push[i] = m_smooth.push(i, rho[i]) + m_smooth.shear(i, x[i], v[i], dt) * (1.0f / dt);
    });
}

template <int D>
typename DfsphSolver<D>::StepView DfsphSolver<D>::step_view(ParticleSet<D>& fluid, const BoundarySet<D>& boundary,
                                                            std::size_t ip, std::size_t iq) const {
    StepView view;
    view.n = fluid.size();
    view.owned = owned_count(m_halo, view.n);
    // Over several processes the means divide by every process's owned particles (eddy/halo.hpp).
    view.count = m_halo ? m_halo->global_owned() : view.n;
    view.x = fluid.position.data();
    view.v = fluid.velocity.data();
    view.rho = fluid.density.data();
    view.P = fluid.scalars[ip].data.data();
    view.Pv = fluid.scalars[iq].data.data();
    view.xb = wall_set(boundary).position.data();
    view.vb = wall_set(boundary).velocity.data();
    view.psi = wall_set(boundary).psi.data();
    view.off = m_neighbors.fluid().offsets.data();
    view.idx = m_neighbors.fluid().indices.data();
    return view;
}

// Bender & Koschier 2017, Algorithm 1, as named passes over one StepView: each pass reads and writes the
// per-particle buffers the header lists (m_alpha, m_F, m_rate, ...).
template <int D>
StepStats DfsphSolver<D>::step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                               const ExecContext& exec) {
    StepStats out;
    out.dt = dt;
    detail::PassTimer timer;  // StepStats::passes: each pass's wall-clock time
    update_neighbors(fluid, boundary, t, dt, exec);
    const std::size_t ip = fluid.add_scalar(kPressureField), iq = fluid.add_scalar(kDivergencePressureField);
    if (fluid.size() == 0 && !m_halo) {  // an empty subdomain still takes part in the reductions
        boundary.load.assign(boundary.motions.size(), ObjectLoad{});
        return out;
    }
    resize_buffers(fluid.size());
    StepView view = step_view(fluid, boundary, ip, iq);
    timer.lap("neighbours");
    densities_and_factors(view, out, exec);  // 1. densities, alpha, the pair factors, the start's rates, XSPH
    view.bodies = begin_body_coupling(fluid, boundary, t, exec);  // bodies give way in the solves
    timer.lap("densities_and_factors");
    // 2. Divergence solver (2017 Algorithm 3) on the step's starting velocities (their rates in m_rate).
    const bool divergence = m_s.max_divergence_iterations > 0;
    if (divergence)
        out.divergence_iterations = solve_pressure(view, view.Pv, true, m_s.min_divergence_iterations,
                                                   m_s.max_divergence_iterations, m_s.divergence_error_target, 0.0f,
                                                   dt, false, exec).first;
    else
        std::fill(view.Pv, view.Pv + view.n, 0.0f);
    timer.lap("divergence_solve");
    const bool uneven = non_pressure_forces(view, fluid, boundary, t, dt, out, exec);  // 3. gravity, walls, viscosity
    timer.lap("non_pressure_forces");
    // 4. Density solver (2017 Algorithm 2), from fresh rates where step 3 changed the velocities unevenly.
    const auto [iters, predicted] = solve_pressure(view, view.P, false, m_s.min_iterations, m_s.max_iterations,
                                                   density_target(out.mean_density_error, dt), m_s.density_error_max,
                                                   dt, !divergence || uneven, exec);
    out.iterations = iters;
    m_last_predicted = static_cast<float>(predicted);
    add_pressure_wall_loads(fluid, view.P, view.Pv, wall_set(boundary), exec);  // both solves', at the start's x
    timer.lap("density_solve");
    // 5. Positions, the walls' guard, the fastest particle; the walls' impulses and loads (dfsph_loads.cpp).
    advance_positions(view, fluid, dt, out, exec);
    finish_wall_loads(fluid, boundary, dt, exec);
    m_last_dt = dt;
    return timer.finish("positions", out);
}

// 1. Density (Akinci 2012 eq. 6), alpha (2017 eq. 8), the per-pair kernel factors, F, the walls' share of
//    Drho/Dt, the XSPH smoothing of the velocities the step starts with; with the extrapolated wall
//    pressure, the Shepard weights and the walls' pressure-independent push. The statistics' density
//    errors are those of the positions the step starts from.
template <int D>
void DfsphSolver<D>::densities_and_factors(const StepView& view, StepStats& out, const ExecContext& exec) {
    const std::size_t n = view.n, owned = view.owned, count = view.count;
    const bool extrapolated = m_s.extrapolated_wall_pressure;
    const CubicSpline<D> W = m_kernel;
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density, w0 = W.value(0.0f);
    const Vec<D> grav = m_g;
    const float c = m_s.xsph * m * inv_rho0, c_wall = m_s.wall_xsph * inv_rho0;
    const Vec<D>* x = view.x;
    const Vec<D>* v = view.v;
    float* rho = view.rho;
    const Vec<D>* xb = view.xb;
    const Vec<D>* vb = view.vb;
    const float* psi = view.psi;
    const std::uint32_t* off = view.off;
    const std::uint32_t* idx = view.idx;
    const auto& bn = wall_lists();
    Stats dens = parallel_reduce_blocks(
        exec, n, Stats{},
        [&](std::size_t b0, std::size_t b1) {
            Stats s;
            Vec<D>* grad = m_grad.data();
            float* wk = extrapolated ? m_w.data() : nullptr;
            for (std::size_t i = b0; i < b1; ++i) {
                const Vec<D> xi = x[i], vi = v[i];
                float r = m * w0, sum2 = 0.0f, wall_rate = 0.0f, wsum = w0, lift = 0.0f;
                Vec<D> Ff = Vec<D>::zero(), Fb = Vec<D>::zero(), xs = Vec<D>::zero(), xw = Vec<D>::zero();
                Vec<D> hydro = Vec<D>::zero();
                for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) {
                    const std::uint32_t j = idx[k];
                    const Vec<D> d = xi - x[j];
                    const float len = norm(d);
                    float w, dw;
                    W.value_and_derivative(len, w, dw);
                    r += m * w;
                    if (wk) {
                        wk[k] = w;
                        wsum += w;
                        lift += w * dot(grav, d);  // g . (x_i - x_j): neighbour j's pressure carried to x_i
                    }
                    const Vec<D> g = d * (len > 0.0f ? m * dw / len : 0.0f);  // coincident: no direction
                    grad[k] = g;
                    Ff += g;
                    sum2 += norm2(g);
                    xs += (v[j] - vi) * w;
                }
                for (std::uint32_t k : bn[i]) {
                    const Vec<D> d = xi - xb[k];
                    const float len = norm(d);
                    float w, dw;
                    W.value_and_derivative(len, w, dw);
                    r += psi[k] * w;
                    if (len > 0.0f) {
                        const Vec<D> g = d * (psi[k] * dw / len);
                        Fb += g;
                        hydro -= g * dot(grav, d);  // g . (x_b - x_i), from x_i on to the wall particle
                        wall_rate += dot(g, vb[k]);
                    }
                    xw += (vb[k] - vi) * (psi[k] * w);
                }
                rho[i] = r;
                // Walls act with the particle's own pressure (Akinci et al. 2012), not a mirrored one
                // (as eddy's WCSPH): only then is the velocity update the transpose of the density rate
                // and a converged solve a projection (docs/methods.md).
                const Vec<D> F = Ff + Fb;
                m_F[i] = F;
                m_Fb[i] = Fb;
                float self_share = 0.0f;
                if (wk) {
                    // Shepard weights (equal masses); the bracket of P_b (dfsph.hpp), whose push on i,
                    // -sum_b psi_b [..] grad W_ib, is the same all step. The neighbourhood's pressure is
                    // carried down to x_i, never up (a particle at the free surface with fluid only
                    // below would otherwise pull itself into a side wall).
                    const float inv = 1.0f / wsum;
                    for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) wk[k] *= inv;
                    self_share = w0 * inv;
                    m_wself[i] = self_share;
                    m_wall_push[i] = (Fb * (std::max(lift * inv, 0.0f)) + hydro) * (-1.0f / r);
                }
                const float denom = dot(F, F + Fb * self_share) + sum2;
                m_alpha[i] = denom > m_alpha_floor ? 1.0f / denom : 0.0f;
                m_wall_rate[i] = wall_rate;
                m_xsph[i] = xs * c + xw * c_wall;
                m_wall_dv[i] = xw;  // times c_wall in step 5 (kept apart: the XSPH sum above rounds as before)
                m_surface[i] = (off[i + 1] - off[i]) + wall_neighbors(i) < m_min_neighbors;
                // Drho_i/Dt of the velocities the step starts with (2017 eq. 4), for the divergence
                // solver's start: the pair terms are still in cache here, which saves that solver a pass.
                float rate = dot(vi, F) - wall_rate;
                for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) rate -= dot(grad[k], v[idx[k]]);
                m_rate[i] = rate;
                if (i >= owned) continue;  // a ghost: its owner counts it
                const float e = std::max(0.0f, r * inv_rho0 - 1.0f);
                s.emax = std::max(s.emax, e);
                s.esum.add(e);
            }
            return s;
        },
        join);
    if (m_halo) {
        m_halo->max({&dens.emax, 1});
        m_halo->sum({&dens.esum, 1});
    }
    out.max_density_error = dens.emax;
    out.mean_density_error = count ? static_cast<float>(dens.esum.value() / double(count)) : 0.0f;
}

// One Jacobi iteration's residual: Drho_i/Dt of the current velocities (2017 eq. 4), turned into the pressure
// increment dP_i, and the solver's mean error and largest error (fractions of rho0). With `fresh` false the
// rates are m_rate's.
template <int D>
template <bool TrackMax>
typename DfsphSolver<D>::Residual DfsphSolver<D>::pressure_residual(const StepView& view, bool divergence, float h,
                                                                    bool fresh, const ExecContext& exec) {
    const std::size_t n = view.n, owned = view.owned, count = view.count;
    const float rho0 = m_s.rest_density, inv_rho0 = 1.0f / rho0;
    const Vec<D>* v = view.v;
    const float* rho = view.rho;
    const std::uint32_t* off = view.off;
    const std::uint32_t* idx = view.idx;
    const float inv_h = 1.0f / h, inv_h2 = inv_h * inv_h;
    const Vec<D>* F = m_F.data();
    const Vec<D>* grad = m_grad.data();
    float* rates = m_rate.data();
    const Stats s = parallel_reduce_blocks(
        exec, n, Stats{},
        [&](std::size_t b0, std::size_t b1) {
            Stats st;
            for (std::size_t i = b0; i < b1; ++i) {
                float rate;
                if (fresh) {
                    rate = dot(v[i], F[i]) - m_wall_rate[i];
                    for (std::uint32_t k = off[i]; k < off[i + 1]; ++k) rate -= dot(grad[k], v[idx[k]]);
                    rates[i] = rate;
                } else {
                    rate = rates[i];
                }
                // The Jacobi increment (2017 eq. 7 and 11 solved for P): only compression (or
                // compressing motion) adds pressure; nothing takes it back within a step.
                float e;
                if (divergence) {
                    const float d = m_surface[i] ? 0.0f : std::max(rate, 0.0f);
                    m_dP[i] = d * m_alpha[i] * inv_h;
                    e = d * h;
                } else {
                    e = std::max(rho[i] + h * rate - rho0, 0.0f);
                    m_dP[i] = e * m_alpha[i] * inv_h2;
                }
                if (i < owned) {
                    st.esum.add(e);
                    if constexpr (TrackMax) st.emax = std::max(st.emax, e);
                }
            }
            return st;
        },
        join);
    ExactSum total = s.esum;
    float emax = s.emax;
    if (m_halo) {
        m_halo->sum({&total, 1});
        if constexpr (TrackMax) m_halo->max({&emax, 1});  // every process stops together
    }
    return Residual{count ? total.value() * inv_rho0 / double(count) : 0.0, emax * inv_rho0};
}

// A pressure solver: warm start from a fraction of the previous step's pressures K (2017 section 4.3), then
// Jacobi iterations until the mean error is at most `target` and (if max_target > 0) every particle's at
// most max_target; K accumulates. fresh_rates false: m_rate holds the rates of the current velocities (used
// when there is no warm start to apply first). Returns the iterations and the last mean error.
template <int D>
std::pair<int, double> DfsphSolver<D>::solve_pressure(const StepView& view, float* K, bool divergence, int min_it,
                                                      int max_it, float target, float max_target, float h,
                                                      bool fresh_rates, const ExecContext& exec) {
    const std::size_t n = view.n;
    const float rho0 = m_s.rest_density;
    Vec<D>* v = view.v;
    const float warm = divergence ? m_s.divergence_warm_start : m_s.warm_start;
    if (divergence && warm > 0.0f) {
        // The divergence pressure is not warm-started where the fluid already moves apart (dt Drho/Dt
        // below -divergence_error_target rho0, beyond what the solver counts as converged): a
        // pressure that stopped a particle against a wall last step (a droplet, a sheet landing)
        // would otherwise push it off again this step and, only ever added to, throw it higher
        // than it fell (a sheet dropped 0.6 m rose to 0.73 m). Fluid at rest keeps its warm start.
        if (fresh_rates) pressure_residual<false>(view, true, h, true, exec);  // else m_rate holds them already
        const float* rates = m_rate.data();
        const float apart = -m_s.divergence_error_target * rho0 / h;
        parallel_for_each_index(exec, n, [&](std::size_t i) { K[i] = rates[i] < apart ? 0.0f : K[i] * warm; });
        if (m_halo) m_halo->refresh(std::span<float>(K, n));  // a ghost's rate is its cut-off neighbourhood's
    } else {
        parallel_for_each_index(exec, n, [&](std::size_t i) { K[i] *= warm; });
    }
    if (warm > 0.0f) {
        apply_pressure(K, nullptr, v, h, !divergence, exec);
        if (view.bodies) push_bodies(K, h, exec);
        if (m_halo) m_halo->refresh(std::span<Vec<D>>(v, n));
        fresh_rates = true;
    }
    int it = 0;
    double err = 0.0;
    for (;; ++it) {
        const bool fresh = fresh_rates || it > 0;
        const Residual res = max_target > 0.0f ? pressure_residual<true>(view, divergence, h, fresh, exec)
                                               : pressure_residual<false>(view, divergence, h, fresh, exec);
        err = res.mean;
        const bool converged = err <= target && (max_target <= 0.0f || res.max <= max_target);
        if ((it >= min_it && converged) || it >= max_it) break;
        if (m_halo) m_halo->refresh(m_dP);  // the update reads the neighbours' increments
        apply_pressure(m_dP.data(), K, v, h, !divergence, exec);
        if (view.bodies) push_bodies(m_dP.data(), h, exec);
        if (m_halo) m_halo->refresh(std::span<Vec<D>>(v, n));  // the next residual their velocities
    }
    return std::pair<int, double>(it, err);
}

// 3. Gravity. Adding the same dv to every fluid particle changes Drho_i/Dt only against the walls, by
//    dv . sum_b psi_b grad W_ib: the density solver starts from those rates without a pass over the
//    neighbours. (XSPH, the other non-pressure term, acts at the end.) Returns true when the velocities
//    changed unevenly (the walls' push, the viscosity): the density solver then starts from fresh rates.
template <int D>
bool DfsphSolver<D>::non_pressure_forces(const StepView& view, ParticleSet<D>& fluid, BoundarySet<D>& boundary,
                                         double t, float dt, StepStats& out, const ExecContext& exec) {
    const std::size_t n = view.n;
    const bool extrapolated = m_s.extrapolated_wall_pressure;
    const Vec<D>* x = view.x;
    Vec<D>* v = view.v;
    const float* rho = view.rho;
    const Vec<D> gdt = m_g * dt;
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        v[i] += gdt;
        m_rate[i] += dot(gdt, m_Fb[i]);
    });
    if (view.bodies) fall_bodies(gdt, exec);  // and the bodies with it
    // The walls' pressure-independent push (the extrapolated wall pressure's hydrostatic part; the smooth
    // walls' mirrored hydrostatic pressure, for particles at rest density) is uneven: the density solver
    // then starts from fresh rates.
    if (m_smooth.on() && !extrapolated) set_smooth_wall_push(rho, x, v, n, dt, exec);
    if (extrapolated || m_smooth.on()) parallel_for_each_index(exec, n, [&](std::size_t i) { v[i] += m_wall_push[i] * dt; });
    // The implicit viscosity changes the velocities unevenly: the density solver then starts from
    // fresh rates.
    const bool viscous = m_s.viscosity > 0.0f || m_s.wall_viscosity > 0.0f;
    if (viscous) out.viscosity_iterations = solve_viscosity(fluid, wall_set(boundary), dt, exec);
    // The walls' friction in their loads, with the velocities it left (dfsph_loads.cpp).
    begin_wall_loads(fluid, boundary, t, dt, exec);
    return viscous || extrapolated || m_smooth.on();
}

// 4. The density solver's target. Its prediction rho_i + dt Drho_i/Dt is linear in the motion; the kernel's
//    curvature adds compression to it, most of all for particles moving against the walls' steep kernel,
//    and grows as dt^2 (docs/methods.md: 3-12% of the target in a running dam break, 80% of the steps of
//    bench_dam_break_3d above the target). The last step's excess, measured now (this step's starting
//    compression against that step's prediction), is taken off the target, at most down to a quarter of it.
template <int D>
float DfsphSolver<D>::density_target(float start_error, float dt) const {
    float density_target = m_s.density_error_target;
    if (m_s.correct_prediction && m_last_predicted > 0.0f && m_last_dt > 0.0f) {
        const float excess = std::max(0.0f, start_error - m_last_predicted);
        const float scale = (dt / m_last_dt) * (dt / m_last_dt);
        density_target = std::max(0.25f * density_target, density_target - excess * scale);
    }
    return density_target;
}

// 5. Positions; the walls' shapes guard the boundary particles (see WcsphSolver::step); the pressure of the
//    outputs, p = (P + P^v) rho^2; the fastest particle over every process.
template <int D>
void DfsphSolver<D>::advance_positions(const StepView& view, ParticleSet<D>& fluid, float dt, StepStats& out,
                                       const ExecContext& exec) {
    const std::size_t n = view.n, owned = view.owned;
    const bool extrapolated = m_s.extrapolated_wall_pressure;
    const float c_wall = m_s.wall_xsph * (1.0f / m_s.rest_density);
    Vec<D>* x = view.x;
    Vec<D>* v = view.v;
    const float* rho = view.rho;
    const float* P = view.P;
    const float* Pv = view.Pv;
    const float guard_held = wall_contact_margin(m_r, true), guard_free = wall_contact_margin(m_r, false);
    float* p = fluid.pressure.data();
    Stats st = parallel_reduce_blocks(
        exec, n, Stats{},
        [&](std::size_t b0, std::size_t b1) {
            Stats s;
            for (std::size_t i = b0; i < b1; ++i) {
                Vec<D> vi = v[i];
                x[i] += vi * dt;
                vi += m_xsph[i];  // XSPH from the velocities the step started with
                // Held: a pressure from either solver pushes it off the walls (wall_contact_margin).
                const Vec<D> before = vi;
                guard_walls(x[i], vi, m_walls, P[i] + Pv[i] > 0.0f ? guard_held : guard_free);
                m_wall_dv[i] = m_wall_dv[i] * c_wall + (vi - before) + (m_smooth.on() && !extrapolated ? m_wall_push[i] * dt : Vec<D>::zero());
                v[i] = vi;
                p[i] = (P[i] + Pv[i]) * rho[i] * rho[i];
                if (i >= owned) continue;  // a ghost: its owner counts it
                const float sp = norm(vi);
                if (!std::isfinite(sp) || !is_finite(x[i])) s.bad = true;
                s.vmax = std::max(s.vmax, sp);
            }
            return s;
        },
        join);
    if (m_halo) {
        float mx[2] = {st.vmax, st.bad ? 1.0f : 0.0f};
        m_halo->max(mx);
        st.vmax = mx[0];
        st.bad = mx[1] > 0.0f;
    }
    m_vmax = st.vmax;
    out.max_speed = st.vmax;
    out.non_finite = st.bad || !std::isfinite(st.vmax);
}

template <int D>
nlohmann::json DfsphSolver<D>::describe() const {
    nlohmann::json s = to_json(m_s, dfsph_fields());
    s["derived_particle_mass"] = m_mass;
    s["derived_support_radius"] = m_kernel.h;
    s["derived_surface_neighbors"] = m_min_neighbors;
    s["derived_viscosity_lattice_factor"] = m_viscosity_factor;
    return s;
}

template <int D>
void DfsphSolver<D>::save_state(StateWriter& w) const {
    w.put(m_vmax);
    w.put(m_last_dt);
    w.put(m_last_predicted);
    w.put(m_neighbors.sort_phase());
}

template <int D>
void DfsphSolver<D>::load_state(StateReader& r) {
    m_vmax = r.get<float>();
    m_last_dt = r.get<float>();
    m_last_predicted = r.get<float>();
    m_neighbors.set_sort_phase(r.get<int>());
}

template <int D>
std::size_t DfsphSolver<D>::memory_bytes() const {
    return m_neighbors.memory_bytes() + m_smooth.memory_bytes() +
           (m_rate.capacity() + m_alpha.capacity() + m_dP.capacity() + m_wall_rate.capacity() + m_w.capacity() +
            m_wself.capacity()) *
               sizeof(float) +
           (m_grad.capacity() + m_F.capacity() + m_Fb.capacity() + m_xsph.capacity() + m_wall_push.capacity() +
            m_wall_dv.capacity()) *
               sizeof(Vec<D>) +
           m_surface.capacity() +
           (m_visc_pair.capacity() + m_visc_block.capacity()) * sizeof(float) +
           (m_visc_b.capacity() + m_visc_r.capacity() + m_visc_z.capacity() + m_visc_p.capacity() + m_visc_q.capacity()) *
               sizeof(Vec<D>);
}

template class DfsphSolver<2>;
template class DfsphSolver<3>;

}  // namespace eddy
