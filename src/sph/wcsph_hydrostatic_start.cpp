// eddy: WCSPH's hydrostatic start (issue 11), one stage of WcsphSolver::init in its own file: fluid at
// rest is compressed along gravity into its discrete hydrostatic state, from the positions alone
// (the equations are in include/eddy/wcsph.hpp, hydrostatic_start).
#include "eddy/wcsph.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace eddy {

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
    //    On a smooth wall's face (eddy/smooth_walls.hpp) the gap below is the fluid's mirror image's, which
    //    closes twice as fast (the image comes up as the particle goes down): the lowest particle moves
    //    by half as much, 2r e/C (with the Akinci walls' move the rounds swung by +-e and never settled).
    const auto& rho = fluid.density;
    const std::vector<Vec<D>> before_density = fluid.position;  // for the walls' check after the rounds
    auto wall_gap_factor = [&](std::uint32_t i) {  // 2 over wall particles, 1 over a face below i
        const auto& faces = wall_lists();
        for (std::uint32_t k = m_smooth.first_face(i); k < faces.offsets[i + 1]; ++k) {
            const Vec<D> up = xs[i] - m_smooth.virtual_walls().set.position[k];  // along the face's normal, into the fluid
            if (dot(up, down) < -0.5f * norm(up)) return 1.0;
        }
        return 2.0;
    };
    for (int round = 0; round < 20; ++round) {
        update_neighbors(fluid, boundary, false, 0.0, exec);  // the faces' velocities do not enter the density
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
                    double shift = wall_gap_factor(order[last - 1]) * spacing * e_low / C;  // the gap to the wall
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
    // A run's lowest particle takes its density from the wall below it, and over a sparsely sampled
    // patch of a model's wall it is moved down towards the wall's particles, up to through the
    // surface: an open model (a shell, boundary.hpp) then keeps it on the far side (a tank without a
    // lid lost two particles through its floor this way). A particle the rounds took within the walls'
    // guard (half a radius) goes back to where it was before them, as step 1 would put it.
    if (!m_walls.empty()) {
        const float guard = 0.5f * m_r;
        parallel_for_each_index(exec, n, [&](std::size_t i) {
            Vec<D> p = xs[i];
            if (keep_inside(p, m_walls, guard)) xs[i] = before_density[i];
        });
    }
    return moved;
}

template std::size_t WcsphSolver<2>::start_hydrostatic(ParticleSet<2>&, const BoundarySet<2>&, const ExecContext&);
template std::size_t WcsphSolver<3>::start_hydrostatic(ParticleSet<3>&, const BoundarySet<3>&, const ExecContext&);

}  // namespace eddy
