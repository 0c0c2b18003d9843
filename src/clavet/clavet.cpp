#include "eddy/clavet.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/collapse.hpp"
#include "core/pass_timer.hpp"
#include "eddy/error.hpp"

namespace eddy {

std::span<const Field<ClavetSettings>> clavet_fields() {
    using S = ClavetSettings;
    static const Field<S> table[] = {
        {"mode", &S::mode, "", 0, 0, "parallel (Jacobi gather, deterministic) or sequential (the seed's Gauss-Seidel)",
         {"parallel", "sequential"}},
        {"rest_density", &S::rest_density, "", 0, kInf, "rho0 (dimensionless neighbour sum); 0: the initial lattice's"},
        {"speed_of_sound", &S::speed_of_sound, "m/s", 0, kInf, "c0 giving k when stiffness = 0; 0: 10 sqrt(2 g H)"},
        {"stiffness", &S::stiffness, "m/s^2", 0, kInf, "pressure stiffness k; 0: c0^2 / B"},
        {"near_stiffness", &S::near_stiffness, "m/s^2", 0, kInf, "near-pressure stiffness k_near; 0: k"},
        {"linear_viscosity", &S::linear_viscosity, "1/s", 0, kInf, "viscosity impulse sigma (linear in u)"},
        {"quadratic_viscosity", &S::quadratic_viscosity, "1/m", 0, kInf, "viscosity impulse beta (quadratic in u)"},
        {"spring_stiffness", &S::spring_stiffness, "1/s^2", 0, kInf, "elastic springs k_spring; 0: no springs"},
        {"yield_ratio", &S::yield_ratio, "", 0, 1, "gamma: deformation ratio beyond which springs yield"},
        {"plasticity", &S::plasticity, "1/s", 0, kInf, "alpha: rate of plastic rest-length change"},
        {"stickiness", &S::stickiness, "1/s^2", 0, kInf, "k_stick: attraction to walls; 0: none"},
        {"stick_distance", &S::stick_distance, "", 0, 1, "d_stick as a fraction of h", {}, true},
        {"anti_stick", &S::anti_stick, "m/s", 0, kInf, "push off walls after a collision; 0: h per second (the seed)"},
        {"time_step", &S::time_step, "s", 0, kInf, "fixed step; 0: 0.4 h / c0"},
        {"support_ratio", &S::support_ratio, "", 2, 12, "interaction radius h in particle radii r"},
        {"sort_interval", &S::sort_interval, "steps", 0, 1e6, "steps between Morton reorderings (0: never)"},
        {"density", &S::density, "kg/m^3", 0, kInf,
         "mass density the particles stand for (kg/m^2 in 2D), for the walls' loads only", {}, true},
    };
    return table;
}

template <int D>
ClavetSolver<D>::ClavetSolver(const ClavetSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                              std::vector<Wall<D>> walls, const std::string& where)
    : m_s(s), m_r(particle_radius), m_g(gravity), m_walls(std::move(walls)) {
    validate(s, clavet_fields(), where);
    if (!(particle_radius > 0.0f)) throw InputError(fmt::format("{}: particle_radius must be > 0", where));
    m_parallel = s.mode == "parallel";
    m_h = s.support_ratio * particle_radius;
    const float spacing = 2.0f * particle_radius;
    m_mass = s.density * std::pow(spacing, static_cast<float>(D));
    // The initial lattice: rho0, and the geometric factor B of the sound speed c^2 = k B (the double
    // density relaxation linearised about a uniform lattice: B = (1/D^2) sum (1-q)|x| * sum (1-q) q).
    double rho = 0.0, s1 = 0.0, s2 = 0.0;
    for_each_lattice_offset<D>(spacing, m_h, [&](const Vec<D>& x) {
        const double len = norm(x), q = len / m_h;
        if (len == 0.0 || q >= 1.0) return;
        rho += (1.0 - q) * (1.0 - q);
        s1 += (1.0 - q) * len;
        s2 += (1.0 - q) * q;
    });
    m_rho0 = s.rest_density > 0.0f ? s.rest_density : static_cast<float>(rho);
    const double B = s1 * s2 / (D * D);
    const float g = norm(gravity);
    m_c0 = s.speed_of_sound > 0.0f ? s.speed_of_sound : 10.0f * std::sqrt(2.0f * g * std::max(fluid_height, 0.0f));
    if (s.stiffness > 0.0f) {
        m_k = s.stiffness;
        m_c0 = static_cast<float>(std::sqrt(m_k * B));
    } else {
        if (!(m_c0 > 0.0f))
            throw InputError(fmt::format(
                "{}: cannot derive the stiffness without gravity or fluid height; set 'stiffness' or 'speed_of_sound'",
                where));
        m_k = static_cast<float>(m_c0 * m_c0 / B);
    }
    // k_near = k by default. The near pressure is what stops particles clustering: a small drop is all
    // surface (rho below rho0 everywhere, P = k (rho - rho0) pulls it together), and with k_near = k/4
    // (the former default) it collapsed in its first step faster than the near pressure could hold it
    // and evaporated into a cloud whose shape was set by round-off (FMA contraction: aspect 1.07-1.42
    // across -O0..-O3 in ClavetValidation.FreeBlobRelaxesToASphere3D). With k_near = k it stays a
    // drop and rounds (1.00-1.02 for every build and seed tried). The paper's k_near = 2.5 k is
    // unstable with the Jacobi mode at the automatic step (a 2D dam break reaches 400 m/s).
    m_k_near = s.near_stiffness > 0.0f ? s.near_stiffness : m_k;
    m_dt = s.time_step > 0.0f ? s.time_step : 0.4f * m_h / m_c0;
    m_anti_stick = s.anti_stick > 0.0f ? s.anti_stick : m_h;
    m_neighbors.configure(m_h, s.sort_interval);
    m_neighbors.set_candidate_limit(crowded_candidate_limit<D>(m_h, particle_radius));
}

template <int D>
void ClavetSolver<D>::init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec) {
    fluid.mass = 0.0f;  // the method has no mass: rho is a neighbour sum
    m_neighbors.init(fluid, boundary, exec);
}

template <int D>
void ClavetSolver<D>::viscosity(ParticleSet<D>& fluid, float dt, const ExecContext& exec) {
    const auto& fn = m_neighbors.fluid();
    auto& x = fluid.position;
    auto& v = fluid.velocity;
    const float sigma = m_s.linear_viscosity, beta = m_s.quadratic_viscosity, inv_h = 1.0f / m_h;
    if (sigma == 0.0f && beta == 0.0f) return;
    auto impulse = [&](std::size_t i, std::uint32_t j, Vec<D>& rhat) -> float {
        const Vec<D> d = x[j] - x[i];
        const float len = norm(d);
        if (len == 0.0f) return 0.0f;
        rhat = d * (1.0f / len);
        const float u = dot(v[i] - v[j], rhat);  // inward radial speed
        if (u <= 0.0f) return 0.0f;
        return dt * (1.0f - len * inv_h) * (sigma * u + beta * u * u);
    };
    if (m_parallel) {
        m_dx.resize(x.size());
        parallel_for_each_index(exec, x.size(), [&](std::size_t i) {
            Vec<D> dv = Vec<D>::zero();
            for (std::uint32_t j : fn[i]) {
                Vec<D> rhat = Vec<D>::zero();
                const float I = impulse(i, j, rhat);
                dv -= rhat * (0.5f * I);
            }
            m_dx[i] = dv;
        });
        parallel_for_each_index(exec, x.size(), [&](std::size_t i) { v[i] += m_dx[i]; });
        if (m_halo) m_halo->refresh(v);
    } else {
        for (std::size_t i = 0; i < x.size(); ++i)
            for (std::uint32_t j : fn[i]) {
                if (j < i) continue;  // each pair once, as the paper's loop
                Vec<D> rhat = Vec<D>::zero();
                const float I = impulse(i, j, rhat);
                v[i] -= rhat * (0.5f * I);
                v[j] += rhat * (0.5f * I);
            }
    }
}

template <int D>
void ClavetSolver<D>::springs(ParticleSet<D>& fluid, float dt) {
    const auto& fn = m_neighbors.fluid();
    auto& x = fluid.position;
    const std::size_t n = x.size();
    m_index_of_id.assign(fluid.next_id, 0xffffffffu);
    for (std::size_t i = 0; i < n; ++i) m_index_of_id[fluid.id[i]] = static_cast<std::uint32_t>(i);
    auto key = [&](std::uint32_t a, std::uint32_t b) {
        const std::uint32_t ia = fluid.id[a], ib = fluid.id[b];
        return ia < ib ? (std::uint64_t(ia) << 32 | ib) : (std::uint64_t(ib) << 32 | ia);
    };
    // New springs between neighbours (rest length: their distance now).
    for (std::size_t i = 0; i < n; ++i)
        for (std::uint32_t j : fn[i])
            if (j > i) m_springs.try_emplace(key(static_cast<std::uint32_t>(i), j), norm(x[j] - x[i]));
    // Plasticity (Algorithm 3) and removal, then the spring displacements (Algorithm 2), in key order.
    const float gamma = m_s.yield_ratio, alpha = m_s.plasticity, ks = m_s.spring_stiffness;
    for (auto it = m_springs.begin(); it != m_springs.end();) {
        const std::uint32_t a = m_index_of_id[it->first >> 32], b = m_index_of_id[it->first & 0xffffffffu];
        if (a == 0xffffffffu || b == 0xffffffffu) {
            it = m_springs.erase(it);
            continue;
        }
        float& L = it->second;
        const Vec<D> d = x[b] - x[a];
        const float r = norm(d), tol = gamma * L;
        if (r > L + tol) L += dt * alpha * (r - L - tol);
        else if (r < L - tol) L -= dt * alpha * (L - tol - r);
        if (L > m_h || r == 0.0f) {
            it = m_springs.erase(it);
            continue;
        }
        const Vec<D> D2 = d * (dt * dt * ks * (1.0f - L / m_h) * (L - r) / r * 0.5f);
        x[a] -= D2;
        x[b] += D2;
        ++it;
    }
}

namespace {
// rho = sum (1-q)^2 and rho_near = sum (1-q)^3 over the neighbours of i (Clavet et al. 2005, eq. 1, 4).
template <int D>
void double_density(const std::vector<Vec<D>>& x, std::span<const std::uint32_t> nbrs, std::size_t i, float inv_h,
                    float& rho, float& rho_near) {
    rho = 0.0f;
    rho_near = 0.0f;
    for (std::uint32_t j : nbrs) {
        const float q = norm(x[j] - x[i]) * inv_h;
        if (q >= 1.0f) continue;
        const float t = 1.0f - q;
        rho += t * t;
        rho_near += t * t * t;
    }
}
}  // namespace

template <int D>
void ClavetSolver<D>::relax_parallel(ParticleSet<D>& fluid, float dt, const ExecContext& exec) {
    const auto& fn = m_neighbors.fluid();
    auto& x = fluid.position;
    const std::size_t n = x.size();
    const float inv_h = 1.0f / m_h, k = m_k, kn = m_k_near, rho0 = m_rho0;
    m_p.resize(n);
    m_p_near.resize(n);
    m_dx.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        float rho, rho_near;
        double_density(x, fn[i], i, inv_h, rho, rho_near);
        fluid.density[i] = rho;
        m_p[i] = k * (rho - rho0);
        m_p_near[i] = kn * rho_near;
        fluid.pressure[i] = m_p[i];
    });
    if (m_halo) {  // the displacements read the neighbours' pressures
        m_halo->refresh(m_p);
        m_halo->refresh(m_p_near);
    }
    const float half_dt2 = 0.5f * dt * dt;
    m_pair_len.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        Vec<D> dx = Vec<D>::zero();
        float pair_len = 0.0f;  // sum of the pair terms' lengths: the scale of dx_i's round-off
        for (std::uint32_t j : fn[i]) {
            const Vec<D> d = x[j] - x[i];
            const float len = norm(d), q = len * inv_h;
            if (len == 0.0f || q >= 1.0f) continue;
            const float t = 1.0f - q;
            const float s = half_dt2 * ((m_p[i] + m_p[j]) * t + (m_p_near[i] + m_p_near[j]) * t * t);
            dx -= d * (s / len);
            pair_len += std::abs(s);
        }
        m_dx[i] = dx;
        m_pair_len[i] = pair_len;
    });
    // Newton's third law check (serial, fixed order; owned particles) and application.
    double sum[D] = {}, abs_sum = 0.0;
    for (std::size_t i = 0; i < owned_count(m_halo, n); ++i) {
        for (int a = 0; a < D; ++a) sum[a] += m_dx[i][a];
        abs_sum += m_pair_len[i];
    }
    for (int a = 0; a < D; ++a) m_disp_sum[a] = static_cast<float>(sum[a]);
    m_disp_abs = abs_sum;
    parallel_for_each_index(exec, n, [&](std::size_t i) { x[i] += m_dx[i]; });
}

template <int D>
void ClavetSolver<D>::relax_sequential(ParticleSet<D>& fluid, float dt) {
    // The seed's loop, exactly: densities from the current (partly relaxed) positions, displacements
    // applied at once, half to each particle of a pair.
    const auto& fn = m_neighbors.fluid();
    auto& x = fluid.position;
    const float inv_h = 1.0f / m_h, dt2 = dt * dt;
    double sum[D] = {}, abs_sum = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        float rho, rho_near;
        double_density(x, fn[i], i, inv_h, rho, rho_near);
        const float P = m_k * (rho - m_rho0), Pn = m_k_near * rho_near;
        fluid.density[i] = rho;
        fluid.pressure[i] = P;
        Vec<D> dx = Vec<D>::zero();
        for (std::uint32_t j : fn[i]) {
            const Vec<D> d = x[j] - x[i];
            const float len = norm(d), q = len * inv_h;
            if (len == 0.0f || q >= 1.0f) continue;
            const float t = 1.0f - q;
            const Vec<D> Dv = d * (dt2 * (P * t + Pn * t * t) / len);
            x[j] += Dv * 0.5f;
            dx -= Dv * 0.5f;
            for (int a = 0; a < D; ++a) sum[a] += 0.5 * Dv[a];
            abs_sum += norm(Dv);
        }
        x[i] += dx;
        for (int a = 0; a < D; ++a) sum[a] += dx[a];
    }
    for (int a = 0; a < D; ++a) m_disp_sum[a] = static_cast<float>(sum[a]);
    m_disp_abs = abs_sum;
}


template <int D>
void ClavetSolver<D>::walls(ParticleSet<D>& fluid, float dt, const ExecContext& exec) {
    auto& x = fluid.position;
    m_wall_dv.assign(x.size(), Vec<D>::zero());
    if (m_walls.empty()) return;
    const float d_stick = m_s.stick_distance * m_h, k_stick = m_s.stickiness, margin = 0.5f * m_r;
    const float inv_dt = 1.0f / dt;
    parallel_for_each_index(exec, x.size(), [&](std::size_t i) {
        const Vec<D> x0 = x[i], prev0 = m_prev[i];
        // Stickiness (section 6.1), as a displacement: dt * (dt k_stick d (1 - d/d_stick)) towards the wall.
        if (k_stick > 0.0f)
            for (const auto& w : m_walls) {
                Vec<D> n;
                const float d = distance_to_wall(w, x[i], n);
                if (d > 0.0f && d < d_stick) x[i] += n * (dt * dt * k_stick * d * (1.0f - d / d_stick));
            }
        // Containment with the seed's anti-stick: after projecting back, the previous position is moved
        // outwards, so that the new velocity points away from the wall.
        const Vec<D> before = x[i];
        if (keep_inside(x[i], m_walls, margin)) {
            const Vec<D> push = x[i] - before;
            const float len = norm(push);
            if (len > 0.0f) m_prev[i] -= push * (m_anti_stick * dt / len);
        }
        // The pass's change of v = (x - x_prev) / dt; each difference of two nearby floats is exactly
        // the change the pass made.
        m_wall_dv[i] = ((x[i] - x0) - (m_prev[i] - prev0)) * inv_dt;
    });
}

template <int D>
StepStats ClavetSolver<D>::step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                                const ExecContext& exec) {
    detail::PassTimer timer;  // StepStats::passes: each pass's wall-clock time
    if (boundary.any_moving()) {  // walls drawn where they are, collisions where they will be at the step's end
        update_boundary_motion(boundary, t + dt, exec);
        update_wall_poses(m_walls, boundary.motions, t + dt);
    }
    if (!m_halo) m_neighbors.reorder_if_due(fluid, exec);  // ghosts stay behind the owned particles
    const std::size_t n = fluid.size(), owned = owned_count(m_halo, n);
    auto& x = fluid.position;
    auto& v = fluid.velocity;
    const Vec<D> g = m_g;
    m_loads.begin(boundary, t + dt);  // the wall particles' pose, as drawn: the step's end
    m_prev.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        v[i] += g * dt;
        m_prev[i] = x[i];
        x[i] += v[i] * dt;
    });
    timer.lap("predict");
    // One neighbour search, on the predicted positions, serves the viscosity, the springs and the
    // relaxation (the paper searches before its viscosity step; the impulses then redo the prediction).
    m_neighbors.update(fluid, boundary, walls_changed(m_halo, boundary.any_moving()), exec);
    timer.lap("neighbours");
    // A collapse crowds thousands of particles into a few cells: the search refused their lists (its
    // candidate limit), and the step ends here; run() reports it (step_divergence). On several
    // processes every one stops with the others.
    if (StepStats st; crowded_search(m_neighbors, fluid, m_halo, st)) {
        m_loads.finish(boundary, m_halo);  // zero: the step did not finish
        st.dt = dt;
        st.density_ratio_limit = kCollapseDensityRatio;
        return st;
    }
    if (m_s.linear_viscosity > 0.0f || m_s.quadratic_viscosity > 0.0f) {
        viscosity(fluid, dt, exec);
        parallel_for_each_index(exec, n, [&](std::size_t i) { x[i] = m_prev[i] + v[i] * dt; });
        timer.lap("viscosity");
    }
    if (m_s.spring_stiffness > 0.0f) {
        springs(fluid, dt);
        timer.lap("springs");
    }
    if (m_parallel) relax_parallel(fluid, dt, exec);
    else relax_sequential(fluid, dt);
    timer.lap("relaxation");
    walls(fluid, dt, exec);
    m_loads.add_impulses(exec, owned, m_neighbors.boundary(), boundary, x.data(), m_wall_dv.data(), m_mass, dt);
    m_loads.finish(boundary, m_halo);
    timer.lap("walls");
    struct Acc {
        float vmax = 0.0f, emax = 0.0f;
        std::uint32_t densest = 0;  // index of the (first) particle at emax
        ExactSum esum;  // order-independent (ExactSum): the same on any number of processes
        bool bad = false;
    };
    const float inv_dt = 1.0f / dt, inv_rho0 = 1.0f / m_rho0;
    Acc a = parallel_reduce_blocks(
        exec, n, Acc{},
        [&](std::size_t b0, std::size_t b1) {
            Acc s;
            for (std::size_t i = b0; i < b1; ++i) {
                v[i] = (x[i] - m_prev[i]) * inv_dt;
                if (i >= owned) continue;  // a ghost: its owner counts it
                const float sp = norm(v[i]);
                if (!std::isfinite(sp) || !is_finite(x[i])) s.bad = true;
                s.vmax = std::max(s.vmax, sp);
                const float e = std::max(0.0f, fluid.density[i] * inv_rho0 - 1.0f);
                if (e > s.emax) {
                    s.emax = e;
                    s.densest = static_cast<std::uint32_t>(i);
                }
                s.esum.add(e);
            }
            return s;
        },
        [](Acc l, const Acc& r) {
            l.vmax = std::max(l.vmax, r.vmax);
            if (r.emax > l.emax) {  // ties: the earlier block's particle
                l.emax = r.emax;
                l.densest = r.densest;
            }
            l.esum += r.esum;
            l.bad = l.bad || r.bad;
            return l;
        });
    std::size_t count = n;
    const float local_emax = a.emax;  // this process's part (the particle named is one of its own)
    if (m_halo) {
        float mx[3] = {a.vmax, a.emax, a.bad ? 1.0f : 0.0f};
        m_halo->max(mx);
        a.vmax = mx[0];
        a.emax = mx[1];
        a.bad = mx[2] > 0.0f;
        m_halo->sum({&a.esum, 1});
        count = m_halo->global_owned();
    }
    StepStats st;
    st.dt = dt;
    st.max_speed = a.vmax;
    st.max_density_error = a.emax;
    st.mean_density_error = count ? static_cast<float>(a.esum.value() / double(count)) : 0.0f;
    st.non_finite = a.bad;
    // Collapse: the fullest cell where the step left the fluid (the walls' pass comes after the
    // density's), and the densities of this step's relaxation (measured there, on the predicted
    // positions), the ratio to rho0 with the particle where it ended.
    check_crowded_cells(m_neighbors, fluid, m_halo, m_h, m_r, st, exec);
    st.density_ratio_limit = kCollapseDensityRatio;
    if (a.emax > 0.0f) {
        st.max_density_ratio = 1.0f + a.emax;
        if (!st.crowded && local_emax == a.emax && a.densest < owned) {
            st.where_id = fluid.id[a.densest];
            for (int k = 0; k < D; ++k) st.where[k] = x[a.densest][k];
            st.where_dimension = D;
        }
    }
    return timer.finish("velocities", st);
}

template <int D>
nlohmann::json ClavetSolver<D>::describe() const {
    nlohmann::json s = to_json(m_s, clavet_fields());
    s["derived_rest_density"] = m_rho0;
    s["derived_stiffness"] = m_k;
    s["derived_near_stiffness"] = m_k_near;
    s["derived_speed_of_sound"] = m_c0;
    s["derived_time_step"] = m_dt;
    s["derived_interaction_radius"] = m_h;
    s["derived_particle_mass"] = m_mass;
    s["springs"] = m_springs.size();
    return s;
}

template <int D>
void ClavetSolver<D>::save_state(StateWriter& w) const {
    std::vector<std::uint64_t> keys;
    std::vector<float> lengths;
    keys.reserve(m_springs.size());
    lengths.reserve(m_springs.size());
    for (const auto& [k, len] : m_springs) {
        keys.push_back(k);
        lengths.push_back(len);
    }
    w.put_vector(keys);
    w.put_vector(lengths);
    w.put(m_disp_sum);
    w.put(m_disp_abs);
    w.put(m_neighbors.sort_phase());
}

template <int D>
void ClavetSolver<D>::load_state(StateReader& r) {
    std::vector<std::uint64_t> keys;
    std::vector<float> lengths;
    r.get_vector(keys);
    r.get_vector(lengths, keys.size());
    m_springs.clear();
    for (std::size_t i = 0; i < keys.size(); ++i) m_springs.emplace_hint(m_springs.end(), keys[i], lengths[i]);
    m_disp_sum = r.get<Vec<D>>();
    m_disp_abs = r.get<double>();
    m_neighbors.set_sort_phase(r.get<int>());
}

template <int D>
std::size_t ClavetSolver<D>::memory_bytes() const {
    return m_neighbors.memory_bytes() + (m_prev.capacity() + m_dx.capacity() + m_wall_dv.capacity()) * sizeof(Vec<D>) +
           (m_p.capacity() + m_p_near.capacity()) * sizeof(float) + m_springs.size() * 48 +
           m_index_of_id.capacity() * sizeof(std::uint32_t);
}

template class ClavetSolver<2>;
template class ClavetSolver<3>;

}  // namespace eddy
