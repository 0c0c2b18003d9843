#include "eddy/wcsph.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/pass_timer.hpp"
#include "eddy/error.hpp"

namespace eddy {

std::span<const Field<WcsphSettings>> wcsph_fields() {
    using S = WcsphSettings;
    static const Field<S> table[] = {
        {"rest_density", &S::rest_density, "kg/m^3", 0, kInf, "rest density rho0 (kg/m^2 in 2D)", {}, true},
        {"speed_of_sound", &S::speed_of_sound, "m/s", 0, kInf,
         "numerical speed of sound c0; 0: 10 sqrt(2 g H), H the initial fluid height (Mach <= 0.1)"},
        {"stiffness", &S::stiffness, "Pa", 0, kInf,
         "Tait stiffness B; 0: rho0 c0^2 / gamma; when set, c0 = sqrt(gamma B / rho0)"},
        {"exponent", &S::exponent, "", 1, 15, "Tait exponent gamma"},
        {"clamp_pressure", &S::clamp_pressure, "", 0, 1, "clamp negative pressures to 0 (free-surface stability)"},
        {"seed_viscosity", &S::viscosity, "1/s", 0, kInf,
         "the seed's velocity smoothing nu: a_i += nu sum_j m 2/(rho_i+rho_j) (v_j - v_i) W_ij (a rate, not "
         "DFSPH's kinematic viscosity in m^2/s)", {}, false, "viscosity"},
        {"artificial_viscosity", &S::artificial_viscosity, "", 0, 10, "Monaghan artificial viscosity alpha"},
        {"boundary_viscosity", &S::boundary_viscosity, "", 0, 10,
         "artificial viscosity alpha between fluid and walls (damps motion towards them)"},
        {"cfl", &S::cfl, "", 0, 1, "CFL number lambda: dt <= lambda 2r / v_max and <= lambda h / (c0 + v_max)", {}, true},
        {"dt_min", &S::dt_min, "s", 0, kInf, "smallest time step; needing less means the run diverged", {}, true},
        {"dt_max", &S::dt_max, "s", 0, kInf, "largest time step", {}, true},
        {"fixed_dt", &S::fixed_dt, "s", 0, kInf, "fixed time step; 0: adaptive (CFL)"},
        {"support_ratio", &S::support_ratio, "", 2, 8, "kernel support radius h in particle radii r"},
        {"sort_interval", &S::sort_interval, "steps", 0, 1e6, "steps between Morton reorderings (0: never)"},
        {"hydrostatic_walls", &S::hydrostatic_walls, "", 0, 1,
         "wall particles take the fluid particle's pressure plus rho g . (x_b - x_i) (Adami et al. 2012), so "
         "walls hold a hydrostatic gradient; off: the mirrored pressure p_b = p_i"},
        {"boundary_model", &S::boundary_model, "", 0, 0,
         "smooth (default): walls act through their shapes, each face as the fluid's mirror image (a smooth "
         "density and push, the law of the wall's shear), balls, cylinders and closed models through volume maps; "
         "particles: Akinci et al. 2012 boundary particles everywhere (seed 003's walls)",
         {"smooth", "particles"}},
        {"wall_law_viscosity", &S::wall_law_viscosity, "m^2/s", 0, 1e3, kWallLawViscosityHelp},
        {"hydrostatic_start", &S::hydrostatic_start, "", 0, 1,
         "start fluid at rest compressed along gravity to hydrostatic equilibrium, p = rho0 g d / C (no initial "
         "ringing); off: every particle starts at rho0, p = 0"},
    };
    return table;
}

template <int D>
float lattice_mass(const CubicSpline<D>& kernel, float spacing, float rest_density) {
    // Sum of W over a full lattice around one point (itself included).
    double sum = 0.0;
    for_each_lattice_offset<D>(spacing, kernel.h, [&](const Vec<D>& x) { sum += kernel.value(x); });
    return static_cast<float>(rest_density / sum);
}

template <int D>
WcsphSolver<D>::WcsphSolver(const WcsphSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                            std::vector<Wall<D>> walls,
                            const std::string& where)
    : m_s(s), m_r(particle_radius), m_g(gravity), m_walls(std::move(walls)) {
    validate(s, wcsph_fields(), where);
    if (!(particle_radius > 0.0f)) throw InputError(fmt::format("{}: particle_radius must be > 0", where));
    if (s.dt_min > s.dt_max)
        throw InputError(fmt::format("{}: key 'dt_min' = {:g} is larger than 'dt_max' = {:g}", where, s.dt_min, s.dt_max));
    m_kernel = CubicSpline<D>(s.support_ratio * particle_radius);
    m_mass = lattice_mass(m_kernel, 2.0f * particle_radius, s.rest_density);
    const float g = norm(gravity);
    if (s.stiffness > 0.0f) {
        m_B = s.stiffness;
        m_c0 = std::sqrt(s.exponent * m_B / s.rest_density);
    } else {
        m_c0 = s.speed_of_sound > 0.0f ? s.speed_of_sound : 10.0f * std::sqrt(2.0f * g * std::max(fluid_height, 0.0f));
        if (!(m_c0 > 0.0f))
            throw InputError(fmt::format(
                "{}: cannot derive the speed of sound without gravity or fluid height; set 'speed_of_sound' or 'stiffness'",
                where));
        m_B = s.rest_density * m_c0 * m_c0 / s.exponent;
    }
    // C = (m/rho0) sum_lattice (e_g . x)^2 / |x| |W'(|x|)|, e_g the direction of gravity (y without gravity).
    Vec<D> eg = Vec<D>::zero();
    if (g > 0.0f) eg = gravity * (1.0f / g);
    else eg[1] = -1.0f;
    double grad_sum = 0.0;
    for_each_lattice_offset<D>(2.0f * particle_radius, m_kernel.h, [&](const Vec<D>& x) {
        const float d = norm(x);
        if (d > 0.0f) grad_sum += double(dot(eg, x)) * dot(eg, x) / d * -m_kernel.derivative(d);
    });
    m_grad_factor = static_cast<float>(m_mass / s.rest_density * grad_sum);
    m_neighbors.configure(m_kernel.h, s.sort_interval);
}

template <int D>
void WcsphSolver<D>::compute_wall_volumes(BoundarySet<D>& boundary, const ExecContext& exec) const {
    compute_boundary_psi(boundary, m_kernel, m_s.rest_density, exec, 2.0f * m_r);
}

template <int D>
void WcsphSolver<D>::init_walls(BoundarySet<D>& boundary, const ExecContext& exec) {
    compute_wall_volumes(boundary, exec);
    // Smooth walls for the closed analytic containers (eddy/smooth_walls.hpp), as DFSPH's.
    m_smooth.init(m_s.boundary_model == "smooth", m_walls, boundary.motions.size(), m_kernel, m_r, m_mass,
                  m_s.rest_density, m_s.wall_law_viscosity, &exec);
}

template <int D>
void WcsphSolver<D>::init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec, bool start) {
    fluid.mass = m_mass;
    init_walls(boundary, exec);
    m_neighbors.init(fluid, boundary, exec);
    if (start && m_s.hydrostatic_start && norm(m_g) > 0.0f && start_hydrostatic(fluid, boundary, exec) > 0) {
        // The first frame shows the hydrostatic density and pressure (the faces' velocities do not enter it).
        update_neighbors(fluid, boundary, false, 0.0, exec);
        update_density(fluid, boundary, exec);
    }
    m_vmax = 0.0f;
    for (const auto& v : fluid.velocity) m_vmax = std::max(m_vmax, norm(v));
    m_amax = norm(m_g);
}

template <int D>
void WcsphSolver<D>::update_neighbors(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, bool walls_changed,
                                      double t, const ExecContext& exec) {
    m_neighbors.update(fluid, boundary, walls_changed, exec);
    m_smooth.update(m_walls, boundary.motions, t, m_g, fluid.position.data(), fluid.size(), m_neighbors.boundary(),
                    boundary, exec);
}

template <int D>
float WcsphSolver<D>::suggest_dt(const ParticleSet<D>&) const {
    if (m_s.fixed_dt > 0.0f) return m_s.fixed_dt;
    const float h = m_kernel.h;
    float dt = m_s.cfl * h / (m_c0 + m_vmax);                                  // acoustic limit
    if (m_vmax > 0.0f) dt = std::min(dt, m_s.cfl * 2.0f * m_r / m_vmax);       // CFL (seed)
    if (m_amax > 0.0f) dt = std::min(dt, 0.25f * std::sqrt(h / m_amax));       // force limit (Monaghan 1992)
    return std::min(dt, m_s.dt_max);
}

namespace {
// Per-block statistics, combined in block order.
struct Stats {
    float vmax = 0.0f, amax = 0.0f, emax = 0.0f;
    ExactSum esum;  // order-independent (ExactSum): the same on any number of processes
    bool bad = false;
};

// The step's statistics over every process (halo; null: one process), st reduced in place.
template <int D>
StepStats step_stats(Stats& st, Halo<D>* halo, std::size_t n, float dt, float c0) {
    std::size_t count = n;
    if (halo) {
        float mx[4] = {st.vmax, st.amax, st.emax, st.bad ? 1.0f : 0.0f};
        halo->max(mx);
        st.vmax = mx[0];
        st.amax = mx[1];
        st.emax = mx[2];
        st.bad = mx[3] > 0.0f;
        halo->sum({&st.esum, 1});
        count = halo->global_owned();
    }
    StepStats out;
    out.dt = dt;
    out.max_speed = st.vmax;
    out.max_density_error = st.emax;
    out.mean_density_error = count ? static_cast<float>(st.esum.value() / static_cast<double>(count)) : 0.0f;
    out.non_finite = st.bad || !std::isfinite(st.vmax) || !std::isfinite(st.amax);
    out.speed_limit = c0;
    return out;
}
}  // namespace

template <int D>
void WcsphSolver<D>::update_density(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const ExecContext& exec) {
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density, B = m_B, gamma = m_s.exponent;
    const bool tait7 = gamma == 7.0f, clamp = m_s.clamp_pressure;
    const CubicSpline<D> W = m_kernel;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = wall_lists();
    const auto& x = fluid.position;
    auto& rho = fluid.density;
    auto& p = fluid.pressure;
    const auto& xb = wall_set(boundary).position;
    const auto& psi = wall_set(boundary).psi;
    // Density (seed eq. d, Akinci 2012 eq. 6) and Tait pressure (seed eq. h).
    const float w0 = W.value(0.0f);
    parallel_blocks(exec, fluid.size(), [&](std::size_t b0, std::size_t b1) {
        for (std::size_t i = b0; i < b1; ++i) {
            const Vec<D> xi = x[i];
            float sf = w0;
            for (std::uint32_t j : fn[i]) sf += W.value(norm(xi - x[j]));
            float sb = 0.0f;
            for (std::uint32_t k : bn[i]) sb += psi[k] * W.value(norm(xi - xb[k]));
            const float r = m * sf + sb;
            rho[i] = r;
            const float q = r * inv_rho0;
            float pr;
            if (tait7) {
                const float q2 = q * q, q4 = q2 * q2;
                pr = B * (q4 * q2 * q - 1.0f);
            } else {
                pr = B * (std::pow(q, gamma) - 1.0f);
            }
            p[i] = clamp ? std::max(pr, 0.0f) : pr;
        }
    });
}

// Wall particle k's acceleration of fluid particle i (Akinci et al. 2012, eq. 10 and 11): its pressure mirrored
// onto the wall particle, plus the hydrostatic increment from the fluid particle to it:
// p_b = p_i + rho_i g . (x_b - x_i) (Adami et al. 2012, eq. 27, with the particle itself as the one fluid
// neighbour); p_b = p_i without it. Artificial viscosity against the wall's own velocity (Monaghan's form),
// with its own coefficient. The walls' loads (m_loads) are the same terms times m, so what the fluid feels
// and what the walls report cannot drift apart. The particle's own values (xi, vi, rhoi, pi = p_i,
// pi_term = p_i / rho_i^2) come from the caller, once per particle. A smooth wall's face (face: its virtual
// particle, header) is the mirror image itself: p_i / rho_i^2 against its doubled gradient, its hydrostatic
// part in m_wall_push.
template <int D>
struct WcsphSolver<D>::WallTerm {
    CubicSpline<D> W;
    const Vec<D>* xb;
    const Vec<D>* vb;
    const float* psi;
    Vec<D> g;
    bool wall_gradient, clamp;
    float wall_alpha_c_h, eps_h2;

    Vec<D> operator()(const Vec<D>& xi, const Vec<D>& vi, float rhoi, float pi, float pi_term, std::uint32_t k,
                      bool face) const {
        const Vec<D> r = xi - xb[k];
        const float d2 = norm2(r);
        if (d2 == 0.0f) return Vec<D>::zero();
        const float d = std::sqrt(d2);
        const float dw = W.derivative(d) / d;
        float s = 2.0f * pi_term;
        if (face) {
            s = pi_term;
        } else if (wall_gradient) {
            const float pb = pi - rhoi * dot(g, r);
            s = pi_term + (clamp ? std::max(pb, 0.0f) : pb) / (rhoi * rhoi);
        }
        const float vr = dot(vi - vb[k], r);
        if (vr < 0.0f && wall_alpha_c_h > 0.0f) s += -wall_alpha_c_h * vr / ((d2 + eps_h2) * rhoi);
        return r * -(psi[k] * s * dw);
    }
};

// Seed 004's step (symplectic Euler): densities and Tait pressures, accelerations, positions.
template <int D>
StepStats WcsphSolver<D>::step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                               const ExecContext& exec) {
    detail::PassTimer timer;  // StepStats::passes: each pass's wall-clock time
    const bool moved = move_walls(boundary, m_walls, t, dt, exec);
    if (!m_halo) m_neighbors.reorder_if_due(fluid, exec);  // ghosts stay behind the owned particles
    update_neighbors(fluid, boundary, walls_changed(m_halo, moved), t, exec);
    timer.lap("neighbours");
    update_density(fluid, boundary, exec);
    if (m_halo) {  // the forces read the neighbours' density and pressure
        m_halo->refresh(fluid.density);
        m_halo->refresh(fluid.pressure);
    }
    timer.lap("density");
    const BoundarySet<D>& walls = wall_set(boundary);
    const WallTerm wall{m_kernel, walls.position.data(), walls.velocity.data(), walls.psi.data(), m_g,
                        m_s.hydrostatic_walls, m_s.clamp_pressure, m_s.boundary_viscosity * m_c0 * m_kernel.h,
                        0.01f * m_kernel.h * m_kernel.h};
    compute_accelerations(fluid, wall, dt, exec);
    timer.lap("accelerations");
    return timer.finish("advance", advance(fluid, boundary, wall, t, dt, exec));
}

// Accelerations: symmetric pressure force (seed eq. f), the wall particles' pressure (the particle's own,
// plus the hydrostatic increment with hydrostatic_walls), Monaghan artificial viscosity, the seed's
// viscosity, gravity; the smooth faces' push and shear. Each particle gathers its own.
template <int D>
void WcsphSolver<D>::compute_accelerations(ParticleSet<D>& fluid, const WallTerm& wall, float dt,
                                           const ExecContext& exec) {
    const std::size_t n = fluid.size();
    const float m = m_mass;
    const CubicSpline<D> W = m_kernel;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = wall_lists();
    const auto& x = fluid.position;
    const auto& v = fluid.velocity;
    auto& a = fluid.acceleration;
    const auto& rho = fluid.density;
    const auto& p = fluid.pressure;
    const float alpha_c_h = m_s.artificial_viscosity * m_c0 * W.h;
    const float eps_h2 = 0.01f * W.h * W.h;
    const float nu = m_s.viscosity;
    const Vec<D> g = m_g;
    m_wall_push.resize(m_smooth.on() ? n : 0);
    parallel_blocks(exec, n, [&](std::size_t b0, std::size_t b1) {
        for (std::size_t i = b0; i < b1; ++i) {
            const Vec<D> xi = x[i], vi = v[i];
            const float rhoi = rho[i];
            const float pi_term = p[i] / (rhoi * rhoi);
            Vec<D> acc = g;
            for (std::uint32_t j : fn[i]) {
                const Vec<D> r = xi - x[j];
                const float d2 = norm2(r);
                if (d2 == 0.0f) continue;  // coincident particles: no direction, no force
                const float d = std::sqrt(d2);
                const float dw = W.derivative(d) / d;  // grad W = r * dw
                const float rhoj = rho[j];
                float s = pi_term + p[j] / (rhoj * rhoj);
                const Vec<D> vij = vi - v[j];
                const float vr = dot(vij, r);
                if (vr < 0.0f && alpha_c_h > 0.0f) s += -alpha_c_h * vr / ((d2 + eps_h2) * 0.5f * (rhoi + rhoj));
                acc -= r * (m * s * dw);
                if (nu > 0.0f) acc -= vij * (nu * m * 2.0f / (rhoi + rhoj) * W.value(d));
            }
            const std::uint32_t faces = m_smooth.first_face(i);
            for (std::uint32_t k : bn[i]) acc += wall(xi, vi, rhoi, p[i], pi_term, k, k >= faces);
            if (m_smooth.on()) acc += smooth_wall_terms(fluid, i, dt);  // push, shear, the mirror's share
            a[i] = acc;
        }
    });

}

namespace {
// The pair force's pressure term p_j / rho_j^2 of particle j, by index (ghost_share's q).
struct PressureTerm {
    const float* p;
    const float* rho;
    float operator[](std::size_t j) const { return p[j] / (rho[j] * rho[j]); }
};
}  // namespace

template <int D>
Vec<D> WcsphSolver<D>::smooth_wall_terms(const ParticleSet<D>& fluid, std::size_t i, float dt) {
    const Vec<D> xi = fluid.position[i];
    const float rhoi = fluid.density[i];
    const Vec<D> hydrostatic = m_s.hydrostatic_walls ? m_smooth.push(i, rhoi) : Vec<D>::zero();
    m_wall_push[i] = hydrostatic + m_smooth.shear(i, xi, fluid.velocity[i], dt) * (1.0f / dt);
    if (!m_smooth.mirrored(i)) return m_wall_push[i];
    // The mirror images' share of the pairs' pressure force along i's faces (smooth_walls.hpp, ghost_share):
    // the images of a pair cancel over the fluid, so the faces carry no load of it.
    const PressureTerm q{fluid.pressure.data(), fluid.density.data()};
    return m_wall_push[i] - m_smooth.ghost_share(i, fluid.position.data(), m_neighbors.fluid()[i], m_mass, q);
}

// Symplectic Euler, and the statistics for the next time step. The walls' shapes guard the
// boundary particles (see wall_contact_margin in boundary.hpp): a particle with pressure is held by
// the wall particles and only guarded within r/4 of the surface (a splash against a thin plate);
// a particle without (p <= 0: a droplet, spray, a thin sheet, whose density stays below rho0 even
// against the wall, so the Akinci wall term exerts nothing) touches the wall as a ball of radius r.
// Either is put back and loses the velocity that carried it in. Then the walls' loads over every process.
template <int D>
StepStats WcsphSolver<D>::advance(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const WallTerm& wall, double t,
                                  float dt, const ExecContext& exec) {
    const std::size_t n = fluid.size(), owned = owned_count(m_halo, n);
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density;
    const auto& bn = wall_lists();
    auto& x = fluid.position;
    auto& v = fluid.velocity;
    const auto& a = fluid.acceleration;
    const auto& rho = fluid.density;
    const auto& p = fluid.pressure;
    const BoundarySet<D>& walls = wall_set(boundary);
    m_loads.begin(boundary, t);
    m_loads.add_pairs(exec, owned, bn, walls, [&](std::size_t i, std::uint32_t k) {
        return wall(x[i], v[i], rho[i], p[i], p[i] / (rho[i] * rho[i]), k, k >= m_smooth.first_face(i)) * m;
    });
    m_guard_dv.resize(n);
    const float guard_held = wall_contact_margin(m_r, true), guard_free = wall_contact_margin(m_r, false);
    const Stats local = parallel_reduce_blocks(
        exec, n, Stats{},
        [&](std::size_t b0, std::size_t b1) {
            Stats s;
            for (std::size_t i = b0; i < b1; ++i) {
                Vec<D> vi = v[i] + a[i] * dt;
                x[i] += vi * dt;
                const Vec<D> before = vi;
                guard_walls(x[i], vi, m_walls, p[i] > 0.0f ? guard_held : guard_free);
                m_guard_dv[i] = vi - before;
                if (m_smooth.on()) m_guard_dv[i] += m_wall_push[i] * dt;  // the faces' push and shear, loads too
                v[i] = vi;
                if (i >= owned) continue;  // a ghost: its owner counts it
                const float sp = norm(vi), ac = norm(a[i]);
                if (!std::isfinite(sp) || !is_finite(x[i])) s.bad = true;
                s.vmax = std::max(s.vmax, sp);
                s.amax = std::max(s.amax, ac);
                const float e = std::max(0.0f, rho[i] * inv_rho0 - 1.0f);
                s.emax = std::max(s.emax, e);
                s.esum.add(e);
            }
            return s;
        },
        [](Stats l, const Stats& r) {
            l.vmax = std::max(l.vmax, r.vmax);
            l.amax = std::max(l.amax, r.amax);
            l.emax = std::max(l.emax, r.emax);
            l.esum += r.esum;
            l.bad = l.bad || r.bad;
            return l;
        });
    // The guard's impulses, at the particles where it left them, to the object of the nearest wall
    // particle; then the loads over every process.
    m_loads.add_impulses(exec, owned, bn, walls, x.data(), m_guard_dv.data(), m, dt);
    m_loads.finish(boundary, m_halo);
    Stats st = local;
    const StepStats out = step_stats(st, m_halo, n, dt, m_c0);
    m_vmax = st.vmax;
    m_amax = st.amax;
    return out;
}

template <int D>
nlohmann::json WcsphSolver<D>::describe() const {
    nlohmann::json s = to_json(m_s, wcsph_fields());
    s["derived_speed_of_sound"] = m_c0;
    s["derived_stiffness"] = m_B;
    s["derived_particle_mass"] = m_mass;
    s["derived_support_radius"] = m_kernel.h;
    s["derived_gradient_factor"] = m_grad_factor;
    return s;
}

template <int D>
void WcsphSolver<D>::save_state(StateWriter& w) const {
    w.put(m_vmax);
    w.put(m_amax);
    w.put(m_neighbors.sort_phase());
}

template <int D>
void WcsphSolver<D>::load_state(StateReader& r) {
    m_vmax = r.get<float>();
    m_amax = r.get<float>();
    m_neighbors.set_sort_phase(r.get<int>());
}

template <int D>
std::size_t WcsphSolver<D>::memory_bytes() const {
    return m_neighbors.memory_bytes() + m_smooth.memory_bytes() +
           (m_guard_dv.capacity() + m_wall_push.capacity()) * sizeof(Vec<D>);
}

template class WcsphSolver<2>;
template class WcsphSolver<3>;
template float lattice_mass<2>(const CubicSpline<2>&, float, float);
template float lattice_mass<3>(const CubicSpline<3>&, float, float);

}  // namespace eddy
