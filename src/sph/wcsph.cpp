#include "eddy/wcsph.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

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
        {"viscosity", &S::viscosity, "1/s", 0, kInf,
         "seed viscosity nu: a_i += nu sum_j m 2/(rho_i+rho_j) (v_j - v_i) W_ij"},
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
void WcsphSolver<D>::init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec) {
    fluid.mass = m_mass;
    compute_boundary_psi(boundary, m_kernel, m_s.rest_density, exec, 2.0f * m_r);
    m_neighbors.init(fluid, boundary, exec);
    if (m_s.hydrostatic_start && norm(m_g) > 0.0f && start_hydrostatic(fluid, boundary, exec) > 0) {
        // The first frame shows the hydrostatic density and pressure.
        m_neighbors.update(fluid, boundary, false, exec);
        update_density(fluid, boundary, exec);
    }
    m_vmax = 0.0f;
    for (const auto& v : fluid.velocity) m_vmax = std::max(m_vmax, norm(v));
    m_amax = norm(m_g);
}

template <int D>
std::size_t WcsphSolver<D>::start_hydrostatic(ParticleSet<D>& fluid, const BoundarySet<D>& boundary,
                                              const ExecContext& exec) {
    const std::size_t n = fluid.size();
    if (n == 0) return 0;
    const double r = m_r, spacing = 2.0 * r;
    const Vec<D> down = m_g * (1.0f / norm(m_g));
    // Axes across gravity (orthonormal, with `down` a basis).
    Vec<D> across[D - 1];
    if constexpr (D == 2) {
        across[0] = Vec2{{-down[1], down[0]}};
    } else {
        int a = 0;
        for (int k = 1; k < 3; ++k)
            if (std::fabs(down[k]) < std::fabs(down[a])) a = k;
        Vec3 e = Vec3::zero();
        e[a] = 1.0f;
        e -= down * down[a];
        e *= 1.0f / norm(e);
        across[0] = e;
        across[1] = Vec3{{down[1] * e[2] - down[2] * e[1], down[2] * e[0] - down[0] * e[2], down[0] * e[1] - down[1] * e[0]}};
    }
    // Height along -g, and the column (bin of width 2r across gravity) of every particle.
    auto& xs = fluid.position;
    std::vector<double> height(n), cross_pos(n * (D - 1));
    double lo[D - 1];
    for (int a = 0; a < D - 1; ++a) lo[a] = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        height[i] = -double(dot(down, xs[i]));
        for (int a = 0; a < D - 1; ++a) {
            cross_pos[i * (D - 1) + a] = dot(across[a], xs[i]);
            lo[a] = std::min(lo[a], cross_pos[i * (D - 1) + a]);
        }
    }
    std::vector<std::uint64_t> column(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t key = 0;
        for (int a = 0; a < D - 1; ++a)
            key = (key << 32) | static_cast<std::uint64_t>(std::llround((cross_pos[i * (D - 1) + a] - lo[a]) / spacing));
        column[i] = key;
    }
    // Column by column, top first; ties by index: the order (and so the result) is unique.
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t i, std::uint32_t j) {
        if (column[i] != column[j]) return column[i] < column[j];
        if (height[i] != height[j]) return height[i] > height[j];
        return i < j;
    });
    // Runs: consecutive particles of a column at most 3r apart along gravity. A run is moved when it is
    // a lattice column at rest: every particle still, spaced at least 1.5r, aligned within r/4.
    std::vector<std::size_t> runs;  // starts, then n
    for (std::size_t k = 0; k < n; ++k)
        if (k == 0 || column[order[k]] != column[order[k - 1]] || height[order[k - 1]] - height[order[k]] > 1.5 * spacing)
            runs.push_back(k);
    runs.push_back(n);
    const auto& v = fluid.velocity;
    std::vector<std::uint8_t> movable(runs.size() - 1, 0);
    std::size_t moved = 0;
    for (std::size_t run = 0; run + 1 < runs.size(); ++run) {
        const std::size_t first = runs[run], last = runs[run + 1];
        bool ok = last - first >= 2;
        for (std::size_t k = first; k < last && ok; ++k) {
            const std::uint32_t i = order[k];
            ok = v[i] == Vec<D>::zero() && (k == first || height[order[k - 1]] - height[i] >= 0.75 * spacing);
            for (int a = 0; a < D - 1; ++a)
                ok = ok && std::fabs(cross_pos[i * (D - 1) + a] - cross_pos[order[first] * (D - 1) + a]) <= 0.25 * r;
        }
        movable[run] = ok;
        if (ok) moved += last - first;
    }
    if (moved == 0) return 0;

    // 0. A row of particles across gravity that ends short of a wall, by less than one particle (a
    //    box side not a multiple of 2r leaves a slot up to 2r wide), would start with a vertical free
    //    surface: it falls into the slot and the whole tank rings (a 4 mm slot beside 24 cm of water
    //    swings the pressure by +-50%). Such rows are stretched along their axis until their end
    //    particles sit r from the wall, as fluid resting on a wall does; the density lost (a stretch of
    //    at most 5%: rows of 21 particles or more for a slot of 2r) is made up along gravity in step 1.
    //    Rows: the particles of movable columns at the same rank from the bottom (in 3D, and in the
    //    same bin of the other axis across gravity), spaced 1.5r .. 3r along the row, within r of each
    //    other in height.
    std::vector<double> widened(n, 1.0);  // area across gravity of a particle's cell, relative to (2r)^(D-1)
    if (!m_walls.empty()) {
        const float margin = 0.9f * m_r;  // "free": at least 0.9r inside the containers, outside the solids
        auto free_at = [&](Vec<D> p) { return !keep_inside(p, m_walls, margin); };
        // Level of a particle: its rank from the bottom of its movable column (compression, by an
        // earlier init(), moves heights off the lattice; ranks stay), -1 elsewhere.
        std::vector<std::int64_t> level(n, -1);
        for (std::size_t run = 0; run + 1 < runs.size(); ++run)
            if (movable[run])
                for (std::size_t k = runs[run]; k < runs[run + 1]; ++k)
                    level[order[k]] = static_cast<std::int64_t>(runs[run + 1] - 1 - k);
        std::vector<std::uint32_t> along;
        along.reserve(n);
        for (int axis = 0; axis < D - 1; ++axis) {
            // Row key: level and the other axis' bin; sorted along the axis. A row breaks where the
            // particles are more than 3r apart along it or r apart in height.
            std::vector<std::uint64_t> row(n);
            along.clear();
            for (std::size_t i = 0; i < n; ++i) {
                if (level[i] < 0) continue;
                std::uint64_t key = static_cast<std::uint64_t>(level[i]);
                for (int a = 0; a < D - 1; ++a)
                    if (a != axis)
                        key = (key << 32) |
                              static_cast<std::uint64_t>(std::llround((cross_pos[i * (D - 1) + a] - lo[a]) / spacing));
                row[i] = key;
                along.push_back(static_cast<std::uint32_t>(i));
            }
            auto coord = [&](std::uint32_t i) { return cross_pos[i * (D - 1) + axis]; };
            std::sort(along.begin(), along.end(), [&](std::uint32_t i, std::uint32_t j) {
                if (row[i] != row[j]) return row[i] < row[j];
                if (coord(i) != coord(j)) return coord(i) < coord(j);
                return i < j;
            });
            const std::size_t m_along = along.size();
            std::vector<std::size_t> row_runs;
            for (std::size_t k = 0; k < m_along; ++k)
                if (k == 0 || row[along[k]] != row[along[k - 1]] || coord(along[k]) - coord(along[k - 1]) > 1.5 * spacing ||
                    std::fabs(height[along[k]] - height[along[k - 1]]) > r)
                    row_runs.push_back(k);
            row_runs.push_back(m_along);
            const Vec<D> dir = across[axis];
            parallel_blocks(exec, row_runs.size() - 1, [&](std::size_t b0, std::size_t b1) {
                for (std::size_t rr = b0; rr < b1; ++rr) {
                    const std::size_t first = row_runs[rr], last = row_runs[rr + 1];
                    if (last - first < 2) continue;
                    bool ok = true;
                    for (std::size_t k = first; k < last && ok; ++k)
                        ok = v[along[k]] == Vec<D>::zero() &&
                             (k == first || coord(along[k]) - coord(along[k - 1]) >= 0.75 * spacing);
                    if (!ok) continue;
                    // The row's spacing relative to 2r (1 on the lattice; more if stretched before, when
                    // init() runs again): the cells' widening, measured, so that a second init agrees.
                    const double measured = (coord(along[last - 1]) - coord(along[first])) /
                                            (static_cast<double>(last - first - 1) * spacing);
                    for (std::size_t k = first; k < last; ++k) widened[along[k]] *= measured;
                    // How far each end may move along the axis: a wall within one particle (free at 0,
                    // not at 2r) is found by bisection; its surface is then r beyond the new end.
                    auto reach = [&](std::uint32_t end, float sign) {
                        const Vec<D> x0 = xs[end];  // this row's own particle
                        if (!free_at(x0) || free_at(x0 + dir * (sign * float(spacing)))) return 0.0;
                        double a = 0.0, b = spacing;
                        for (int it = 0; it < 24; ++it) {
                            const double c = 0.5 * (a + b);
                            (free_at(x0 + dir * float(sign * c)) ? a : b) = c;
                        }
                        return std::max(0.0, a - 0.1 * r);
                    };
                    const double lo_end = coord(along[first]), hi_end = coord(along[last - 1]);
                    const double ext_lo = reach(along[first], -1.0f), ext_hi = reach(along[last - 1], 1.0f);
                    if (ext_lo + ext_hi < 0.05 * r || ext_lo + ext_hi > 0.05 * (hi_end - lo_end)) continue;
                    // Affine: [lo_end, hi_end] -> [lo_end - ext_lo, hi_end + ext_hi].
                    const double scale = (hi_end - lo_end + ext_lo + ext_hi) / (hi_end - lo_end);
                    for (std::size_t k = first; k < last; ++k) {
                        const std::uint32_t i = along[k];
                        const double c = lo_end - ext_lo + (coord(i) - lo_end) * scale;
                        xs[i] += dir * static_cast<float>(c - coord(i));
                        widened[i] *= scale;  // on top of the measured spacing
                    }
                }
            }, 64);
        }
    }

    // The hydrostatic profile (see the top of wcsph.hpp) at mass depth d:
    // p(d) = rho0 g d / C, rho(d) = rho0 (1 + p/B)^(1/gamma), lambda(d) = 1 / (1 + (rho(d)/rho0 - 1) / C).
    const double rho0 = m_s.rest_density, g = norm(m_g), C = m_grad_factor, B = m_B, inv_gamma = 1.0 / m_s.exponent;
    auto target_density = [&](double d) { return rho0 * std::pow(1.0 + rho0 * g * d / (C * B), inv_gamma); };
    auto lambda = [&](double d) { return 1.0 / (1.0 + (target_density(d) / rho0 - 1.0) / C); };
    const std::size_t n_runs = runs.size() - 1;
    auto move_to = [&](std::uint32_t i, double h) {  // height h along -g
        xs[i] -= down * static_cast<float>(h - height[i]);
        height[i] = h;
    };
    // Mass depth of every particle of a movable run: the weight above it per unit area over rho0 g, each
    // particle above adding 2r / widening, itself half of that.
    std::vector<double> depth(n, 0.0);
    for (std::size_t run = 0; run < n_runs; ++run) {
        if (!movable[run]) continue;
        double above = 0.0;
        for (std::size_t k = runs[run]; k < runs[run + 1]; ++k) {
            const double cell = spacing / widened[order[k]];
            depth[order[k]] = above + 0.5 * cell;
            above += cell;
        }
    }

    // 1. Lattice spacing: from the bottom up, the gap between two particles, at mass depths (2k+1) r and
    //    (2k+3) r on the lattice (k = 0 at the top), is 2r lambda((2k+2) r); the lowest particle stays
    //    where it is. A row widened by step 0 is made up for along gravity (the cell keeps its volume):
    //    the gap is divided by the widening.
    parallel_blocks(exec, n_runs, [&](std::size_t b0, std::size_t b1) {
        for (std::size_t run = b0; run < b1; ++run) {
            if (!movable[run]) continue;
            const std::size_t first = runs[run], last = runs[run + 1];
            double y = height[order[last - 1]];
            for (std::size_t k = last - 1; k-- > first;) {
                y += spacing * lambda(0.5 * (depth[order[k]] + depth[order[k + 1]])) /
                     (0.5 * (widened[order[k]] + widened[order[k + 1]]));
                move_to(order[k], y);
            }
        }
    }, 64);

    // 2. Density by summation, walls included: particles next to a wall take part of their density
    //    from the wall's particles, which do not compress, so they need more compression than the
    //    lattice's (the lowest row had half its hydrostatic pressure after step 1 alone). A gap strain s
    //    between two particles raises the density of each by C s / 2 (rho0 units; the lattice sum's
    //    derivative shared by the two), so a particle short of density by e = rho(d)/rho_i - 1 is
    //    corrected by compressing the gaps on its two sides by e / (2C) each, except the lowest particle
    //    of a run, which takes its whole correction from the gap below it (to the wall): it moves
    //    down by 2r * 2e/C and every particle above by as much, so that no other density changes.
    //    Summing the gaps from the bottom up gives each particle's move. Particles lacking neighbours
    //    (rho_i below 0.95 rho0: the free surface, or a run's lowest particle with no wall under it)
    //    are left to step 1. Rounds (Jacobi: every run reads the densities of the round before) until
    //    |e| < 1e-5 (5 Pa at c0 = 22 m/s), at most 20: the density cannot see a zigzag of the gaps, so
    //    the smoothed correction leaves one where its model is rough (the top of a run beside a wall:
    //    |e| ~ 6e-5 after 20 rounds in the 30 cm tank, 1e-5 elsewhere).
    const auto& rho = fluid.density;
    for (int round = 0; round < 20; ++round) {
        m_neighbors.update(fluid, boundary, false, exec);
        update_density(fluid, boundary, exec);
        const double worst = parallel_reduce_blocks(
            exec, n_runs, 0.0,
            [&](std::size_t b0, std::size_t b1) {
                double w = 0.0;
                for (std::size_t run = b0; run < b1; ++run) {
                    if (!movable[run]) continue;
                    const std::size_t first = runs[run], last = runs[run + 1];
                    auto error = [&](std::size_t k) {
                        const double rho_k = rho[order[k]];
                        if (rho_k < 0.95 * rho0) return 0.0;
                        return target_density(depth[order[k]]) / rho_k - 1.0;
                    };
                    const double e_low = error(last - 1);
                    double shift = 2.0 * spacing * e_low / C;  // the gap to the wall
                    w = std::max(w, std::fabs(e_low));
                    move_to(order[last - 1], height[order[last - 1]] - shift);
                    double e_below = 0.0;  // the lowest particle's share is in the wall gap already
                    for (std::size_t k = last - 1; k-- > first;) {
                        const double e = error(k);
                        w = std::max(w, std::fabs(e));
                        shift += spacing * (e + e_below) / (2.0 * C);
                        e_below = e;
                        move_to(order[k], height[order[k]] - shift);
                    }
                }
                return w;
            },
            [](double a, double b) { return std::max(a, b); }, 64);
        if (worst < 1e-5) break;
    }
    return moved;
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
    double esum = 0.0;
    bool bad = false;
};
}  // namespace

template <int D>
void WcsphSolver<D>::update_density(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const ExecContext& exec) {
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density, B = m_B, gamma = m_s.exponent;
    const bool tait7 = gamma == 7.0f, clamp = m_s.clamp_pressure;
    const CubicSpline<D> W = m_kernel;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = m_neighbors.boundary();
    const auto& x = fluid.position;
    auto& rho = fluid.density;
    auto& p = fluid.pressure;
    const auto& xb = boundary.position;
    const auto& psi = boundary.psi;
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

template <int D>
StepStats WcsphSolver<D>::step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                               const ExecContext& exec) {
    const bool moved = boundary.any_moving();
    if (moved) {
        update_boundary_motion(boundary, t, exec);
        update_wall_poses(m_walls, boundary.motions, t + dt);
    }
    m_neighbors.reorder_if_due(fluid, exec);
    m_neighbors.update(fluid, boundary, moved, exec);

    const std::size_t n = fluid.size();
    const float m = m_mass, inv_rho0 = 1.0f / m_s.rest_density;
    const CubicSpline<D> W = m_kernel;
    const auto& fn = m_neighbors.fluid();
    const auto& bn = m_neighbors.boundary();
    auto& x = fluid.position;
    auto& v = fluid.velocity;
    auto& a = fluid.acceleration;
    auto& rho = fluid.density;
    auto& p = fluid.pressure;
    const auto& xb = boundary.position;
    const auto& vb = boundary.velocity;
    const auto& psi = boundary.psi;

    update_density(fluid, boundary, exec);

    // Accelerations: symmetric pressure force (seed eq. f), the wall particles' pressure (the particle's
    // own, plus the hydrostatic increment with hydrostatic_walls), Monaghan artificial viscosity, the
    // seed's viscosity, gravity. Each particle gathers its own.
    const float alpha_c_h = m_s.artificial_viscosity * m_c0 * W.h;
    const float wall_alpha_c_h = m_s.boundary_viscosity * m_c0 * W.h;
    const float eps_h2 = 0.01f * W.h * W.h;
    const float nu = m_s.viscosity;
    const Vec<D> g = m_g;
    const bool wall_gradient = m_s.hydrostatic_walls, clamp = m_s.clamp_pressure;
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
            for (std::uint32_t k : bn[i]) {
                const Vec<D> r = xi - xb[k];
                const float d2 = norm2(r);
                if (d2 == 0.0f) continue;
                const float d = std::sqrt(d2);
                const float dw = W.derivative(d) / d;
                // Pressure mirrored onto the wall particle, plus the hydrostatic increment from the fluid
                // particle to it: p_b = p_i + rho_i g . (x_b - x_i) (Adami et al. 2012, eq. 27, with the
                // particle itself as the one fluid neighbour); p_b = p_i without it.
                float s = 2.0f * pi_term;
                if (wall_gradient) {
                    const float pb = p[i] - rhoi * dot(g, r);
                    s = pi_term + (clamp ? std::max(pb, 0.0f) : pb) / (rhoi * rhoi);
                }
                const float vr = dot(vi - vb[k], r);
                // Artificial viscosity against the wall's own velocity (Akinci et al. 2012, eq. 11, with
                // Monaghan's form), with its own coefficient.
                if (vr < 0.0f && wall_alpha_c_h > 0.0f) s += -wall_alpha_c_h * vr / ((d2 + eps_h2) * rhoi);
                acc -= r * (psi[k] * s * dw);
            }
            a[i] = acc;
        }
    });

    // Symplectic Euler, and the statistics for the next time step. The walls' shapes guard the
    // boundary particles: a particle whose centre came within r/4 of a wall's surface (a splash
    // against a thin plate, a lone droplet the wall's pressure does not hold) is put back there and
    // loses the velocity that carried it in. Fluid resting on a wall sits r from it, untouched.
    const float guard = 0.25f * m_r;
    const Stats st = parallel_reduce_blocks(
        exec, n, Stats{},
        [&](std::size_t b0, std::size_t b1) {
            Stats s;
            for (std::size_t i = b0; i < b1; ++i) {
                Vec<D> vi = v[i] + a[i] * dt;
                x[i] += vi * dt;
                guard_walls(x[i], vi, m_walls, guard);
                v[i] = vi;
                const float sp = norm(vi), ac = norm(a[i]);
                if (!std::isfinite(sp) || !is_finite(x[i])) s.bad = true;
                s.vmax = std::max(s.vmax, sp);
                s.amax = std::max(s.amax, ac);
                const float e = std::max(0.0f, rho[i] * inv_rho0 - 1.0f);
                s.emax = std::max(s.emax, e);
                s.esum += e;
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
    m_vmax = st.vmax;
    m_amax = st.amax;
    StepStats out;
    out.dt = dt;
    out.max_speed = st.vmax;
    out.max_density_error = st.emax;
    out.mean_density_error = n ? static_cast<float>(st.esum / static_cast<double>(n)) : 0.0f;
    out.non_finite = st.bad || !std::isfinite(st.vmax) || !std::isfinite(st.amax);
    out.speed_limit = m_c0;
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
std::size_t WcsphSolver<D>::memory_bytes() const {
    return m_neighbors.memory_bytes();
}

template class WcsphSolver<2>;
template class WcsphSolver<3>;
template float lattice_mass<2>(const CubicSpline<2>&, float, float);
template float lattice_mass<3>(const CubicSpline<3>&, float, float);

}  // namespace eddy
