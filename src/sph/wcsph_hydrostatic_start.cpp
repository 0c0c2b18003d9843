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

namespace {

// `down` along gravity and the axes across it.
template <int D>
struct GravityFrame {
    Vec<D> down;
    Vec<D> across[D - 1];
};

template <int D>
GravityFrame<D> gravity_frame(const Vec<D>& g) {
    GravityFrame<D> f;
    f.down = g * (1.0f / norm(g));
    const Vec<D> down = f.down;
    // Axes across gravity (orthonormal, with `down` a basis).
    if constexpr (D == 2) {
        f.across[0] = Vec2{{-down[1], down[0]}};
    } else {
        int a = 0;
        for (int k = 1; k < 3; ++k)
            if (std::fabs(down[k]) < std::fabs(down[a])) a = k;
        Vec3 e = Vec3::zero();
        e[a] = 1.0f;
        e -= down * down[a];
        e *= 1.0f / norm(e);
        f.across[0] = e;
        f.across[1] = Vec3{{down[1] * e[2] - down[2] * e[1], down[2] * e[0] - down[0] * e[2], down[0] * e[1] - down[1] * e[0]}};
    }
    return f;
}

// The particles in their columns: every particle's height along -g, its coordinates across gravity and
// its column; the particles sorted column by column, the runs of the columns and which of them move.
template <int D>
struct Columns {
    std::vector<double> height, cross_pos;  // cross_pos: D - 1 per particle
    double lo[D - 1];                       // the smallest coordinate along each axis across gravity
    std::vector<std::uint64_t> column;
    std::vector<std::uint32_t> order;
    std::vector<std::size_t> runs;  // starts, then n
    std::vector<std::uint8_t> movable;
};

template <int D>
void bin_columns(Columns<D>& c, const std::vector<Vec<D>>& xs, std::size_t n, const GravityFrame<D>& f,
                 double spacing) {
    // Height along -g, and the column (bin of width 2r across gravity) of every particle.
    std::vector<double>& height = c.height;
    std::vector<double>& cross_pos = c.cross_pos;
    double* lo = c.lo;
    height.assign(n, 0.0);
    cross_pos.assign(n * (D - 1), 0.0);
    for (int a = 0; a < D - 1; ++a) lo[a] = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        height[i] = -double(dot(f.down, xs[i]));
        for (int a = 0; a < D - 1; ++a) {
            cross_pos[i * (D - 1) + a] = dot(f.across[a], xs[i]);
            lo[a] = std::min(lo[a], cross_pos[i * (D - 1) + a]);
        }
    }
    c.column.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t key = 0;
        for (int a = 0; a < D - 1; ++a)
            key = (key << 32) | static_cast<std::uint64_t>(std::llround((cross_pos[i * (D - 1) + a] - lo[a]) / spacing));
        c.column[i] = key;
    }
}

template <int D>
void sort_columns(Columns<D>& c, std::size_t n) {
    // Column by column, top first; ties by index: the order (and so the result) is unique.
    const std::vector<std::uint64_t>& column = c.column;
    const std::vector<double>& height = c.height;
    c.order.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) c.order[i] = static_cast<std::uint32_t>(i);
    std::sort(c.order.begin(), c.order.end(), [&](std::uint32_t i, std::uint32_t j) {
        if (column[i] != column[j]) return column[i] < column[j];
        if (height[i] != height[j]) return height[i] > height[j];
        return i < j;
    });
}

// Splits the sorted columns into runs and marks the runs that move; returns the number of particles in
// them.
template <int D>
std::size_t find_movable_runs(Columns<D>& c, const std::vector<Vec<D>>& v, std::size_t n, double r,
                              double spacing) {
    const std::vector<std::uint64_t>& column = c.column;
    const std::vector<std::uint32_t>& order = c.order;
    const std::vector<double>& height = c.height;
    const std::vector<double>& cross_pos = c.cross_pos;
    std::vector<std::size_t>& runs = c.runs;
    // Runs: consecutive particles of a column at most 3r apart along gravity. A run is moved when it is
    // a lattice column at rest: every particle still, spaced at least 1.5r, aligned within r/4.
    for (std::size_t k = 0; k < n; ++k)
        if (k == 0 || column[order[k]] != column[order[k - 1]] || height[order[k - 1]] - height[order[k]] > 1.5 * spacing)
            runs.push_back(k);
    runs.push_back(n);
    c.movable.assign(runs.size() - 1, 0);
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
        c.movable[run] = ok;
        if (ok) moved += last - first;
    }
    return moved;
}

// Level of a particle: its rank from the bottom of its movable column (compression, by an earlier
// init(), moves heights off the lattice; ranks stay), -1 elsewhere.
template <int D>
std::vector<std::int64_t> column_levels(const Columns<D>& c, std::size_t n) {
    const std::vector<std::size_t>& runs = c.runs;
    std::vector<std::int64_t> level(n, -1);
    for (std::size_t run = 0; run + 1 < runs.size(); ++run)
        if (c.movable[run])
            for (std::size_t k = runs[run]; k < runs[run + 1]; ++k)
                level[c.order[k]] = static_cast<std::int64_t>(runs[run + 1] - 1 - k);
    return level;
}

// Step 0's working data along one axis across gravity: the rows and what stretching them moves.
template <int D>
struct RowStretch {
    std::vector<Vec<D>>& xs;
    const std::vector<Vec<D>>& v;
    const std::vector<Wall<D>>& walls;
    const Columns<D>& c;
    std::vector<double>& widened;
    float margin;  // "free": at least 0.9r inside the containers, outside the solids
    double r, spacing;
    int axis;
    Vec<D> dir;                          // the axis
    std::vector<std::uint64_t> row;      // per particle: its row's key
    std::vector<std::uint32_t> along;    // the particles of the rows, sorted along the axis
    std::vector<std::size_t> row_runs;   // starts, then along.size()

    double coord(std::uint32_t i) const { return c.cross_pos[i * (D - 1) + axis]; }
    bool free_at(Vec<D> p) const { return !keep_inside(p, walls, margin); }
};

template <int D>
void collect_rows(RowStretch<D>& s, const std::vector<std::int64_t>& level, std::size_t n) {
    const Columns<D>& c = s.c;
    const double spacing = s.spacing, r = s.r;
    const int axis = s.axis;
    std::vector<std::uint64_t>& row = s.row;
    std::vector<std::uint32_t>& along = s.along;
    // Row key: level and the other axis' bin; sorted along the axis. A row breaks where the
    // particles are more than 3r apart along it or r apart in height.
    row.assign(n, 0);
    along.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (level[i] < 0) continue;
        std::uint64_t key = static_cast<std::uint64_t>(level[i]);
        for (int a = 0; a < D - 1; ++a)
            if (a != axis)
                key = (key << 32) |
                      static_cast<std::uint64_t>(std::llround((c.cross_pos[i * (D - 1) + a] - c.lo[a]) / spacing));
        row[i] = key;
        along.push_back(static_cast<std::uint32_t>(i));
    }
    auto coord = [&](std::uint32_t i) { return s.coord(i); };
    std::sort(along.begin(), along.end(), [&](std::uint32_t i, std::uint32_t j) {
        if (row[i] != row[j]) return row[i] < row[j];
        if (coord(i) != coord(j)) return coord(i) < coord(j);
        return i < j;
    });
    const std::size_t m_along = along.size();
    for (std::size_t k = 0; k < m_along; ++k)
        if (k == 0 || row[along[k]] != row[along[k - 1]] || coord(along[k]) - coord(along[k - 1]) > 1.5 * spacing ||
            std::fabs(c.height[along[k]] - c.height[along[k - 1]]) > r)
            s.row_runs.push_back(k);
    s.row_runs.push_back(m_along);
}

// How far a row's end may move along the axis: a wall within one particle (free at 0, not at 2r) is
// found by bisection; its surface is then r beyond the new end.
template <int D>
double wall_reach(const RowStretch<D>& s, std::uint32_t end, float sign) {
    const Vec<D> x0 = s.xs[end];  // this row's own particle
    const Vec<D> dir = s.dir;
    const double spacing = s.spacing;
    if (!s.free_at(x0) || s.free_at(x0 + dir * (sign * float(spacing)))) return 0.0;
    double a = 0.0, b = spacing;
    for (int it = 0; it < 24; ++it) {
        const double c = 0.5 * (a + b);
        (s.free_at(x0 + dir * float(sign * c)) ? a : b) = c;
    }
    return std::max(0.0, a - 0.1 * s.r);
}

// One row [first, last) of s.along: measured, then stretched to the walls at its ends.
template <int D>
void stretch_row(const RowStretch<D>& s, std::size_t first, std::size_t last) {
    const std::vector<std::uint32_t>& along = s.along;
    const double spacing = s.spacing, r = s.r;
    auto coord = [&](std::uint32_t i) { return s.coord(i); };
    if (last - first < 2) return;
    bool ok = true;
    for (std::size_t k = first; k < last && ok; ++k)
        ok = s.v[along[k]] == Vec<D>::zero() &&
             (k == first || coord(along[k]) - coord(along[k - 1]) >= 0.75 * spacing);
    if (!ok) return;
    // The row's spacing relative to 2r (1 on the lattice; more if stretched before, when
    // init() runs again): the cells' widening, measured, so that a second init agrees.
    const double measured = (coord(along[last - 1]) - coord(along[first])) /
                            (static_cast<double>(last - first - 1) * spacing);
    for (std::size_t k = first; k < last; ++k) s.widened[along[k]] *= measured;
    const double lo_end = coord(along[first]), hi_end = coord(along[last - 1]);
    const double ext_lo = wall_reach(s, along[first], -1.0f), ext_hi = wall_reach(s, along[last - 1], 1.0f);
    if (ext_lo + ext_hi < 0.05 * r || ext_lo + ext_hi > 0.05 * (hi_end - lo_end)) return;
    // Affine: [lo_end, hi_end] -> [lo_end - ext_lo, hi_end + ext_hi].
    const double scale = (hi_end - lo_end + ext_lo + ext_hi) / (hi_end - lo_end);
    for (std::size_t k = first; k < last; ++k) {
        const std::uint32_t i = along[k];
        const double c = lo_end - ext_lo + (coord(i) - lo_end) * scale;
        s.xs[i] += s.dir * static_cast<float>(c - coord(i));
        s.widened[i] *= scale;  // on top of the measured spacing
    }
}

// 0. A row of particles across gravity that ends short of a wall, by less than one particle (a
//    box side not a multiple of 2r leaves a slot up to 2r wide), would start with a vertical free
//    surface: it falls into the slot and the whole tank rings (a 4 mm slot beside 24 cm of water
//    swings the pressure by +-50%). Such rows are stretched along their axis until their end
//    particles sit r from the wall, as fluid resting on a wall does; the density lost (a stretch of
//    at most 5%: rows of 21 particles or more for a slot of 2r) is made up along gravity in step 1.
//    Rows: the particles of movable columns at the same rank from the bottom (in 3D, and in the
//    same bin of the other axis across gravity), spaced 1.5r .. 3r along the row, within r of each
//    other in height.
// widened: area across gravity of a particle's cell, relative to (2r)^(D-1).
template <int D>
void stretch_rows_to_walls(ParticleSet<D>& fluid, const std::vector<Wall<D>>& walls, const Columns<D>& c,
                           const GravityFrame<D>& f, std::vector<double>& widened, float margin, double r,
                           double spacing, const ExecContext& exec) {
    const std::size_t n = fluid.size();
    const std::vector<std::int64_t> level = column_levels(c, n);
    for (int axis = 0; axis < D - 1; ++axis) {
        RowStretch<D> s{fluid.position, fluid.velocity, walls, c, widened, margin, r, spacing, axis,
                        f.across[axis], {}, {}, {}};
        collect_rows(s, level, n);
        parallel_blocks(exec, s.row_runs.size() - 1, [&](std::size_t b0, std::size_t b1) {
            for (std::size_t rr = b0; rr < b1; ++rr) stretch_row(s, s.row_runs[rr], s.row_runs[rr + 1]);
        }, 64);
    }
}

// Mass depth of every particle of a movable run: the weight above it per unit area over rho0 g, each
// particle above adding 2r / widening, itself half of that.
template <int D>
std::vector<double> mass_depths(const Columns<D>& c, const std::vector<double>& widened, std::size_t n,
                                double spacing) {
    const std::vector<std::size_t>& runs = c.runs;
    const std::vector<std::uint32_t>& order = c.order;
    const std::size_t n_runs = runs.size() - 1;
    std::vector<double> depth(n, 0.0);
    for (std::size_t run = 0; run < n_runs; ++run) {
        if (!c.movable[run]) continue;
        double above = 0.0;
        for (std::size_t k = runs[run]; k < runs[run + 1]; ++k) {
            const double cell = spacing / widened[order[k]];
            depth[order[k]] = above + 0.5 * cell;
            above += cell;
        }
    }
    return depth;
}

// The hydrostatic profile (see the top of wcsph.hpp) at mass depth d:
// p(d) = rho0 g d / C, rho(d) = rho0 (1 + p/B)^(1/gamma), lambda(d) = 1 / (1 + (rho(d)/rho0 - 1) / C).
struct HydrostaticProfile {
    double rho0, g, C, B, inv_gamma;

    double target_density(double d) const { return rho0 * std::pow(1.0 + rho0 * g * d / (C * B), inv_gamma); }
    double lambda(double d) const { return 1.0 / (1.0 + (target_density(d) / rho0 - 1.0) / C); }
};

// Steps 1 and 2's working data: the movable runs, their particles' mass depths and widening, and the
// positions they move.
template <int D>
struct Compression {
    std::vector<Vec<D>>& xs;
    Columns<D>& c;
    Vec<D> down;
    const std::vector<double>& widened;
    const std::vector<double>& depth;
    HydrostaticProfile profile;
    double spacing;

    void move_to(std::uint32_t i, double h) {  // height h along -g
        xs[i] -= down * static_cast<float>(h - c.height[i]);
        c.height[i] = h;
    }
};

// 1. Lattice spacing: from the bottom up, the gap between two particles, at mass depths (2k+1) r and
//    (2k+3) r on the lattice (k = 0 at the top), is 2r lambda((2k+2) r); the lowest particle stays
//    where it is. A row widened by step 0 is made up for along gravity (the cell keeps its volume):
//    the gap is divided by the widening.
template <int D>
void space_lattice(Compression<D>& s, const ExecContext& exec) {
    const std::vector<std::size_t>& runs = s.c.runs;
    const std::vector<std::uint32_t>& order = s.c.order;
    const std::vector<double>& depth = s.depth;
    const std::vector<double>& widened = s.widened;
    const double spacing = s.spacing;
    parallel_blocks(exec, runs.size() - 1, [&](std::size_t b0, std::size_t b1) {
        for (std::size_t run = b0; run < b1; ++run) {
            if (!s.c.movable[run]) continue;
            const std::size_t first = runs[run], last = runs[run + 1];
            double y = s.c.height[order[last - 1]];
            for (std::size_t k = last - 1; k-- > first;) {
                y += spacing * s.profile.lambda(0.5 * (depth[order[k]] + depth[order[k + 1]])) /
                     (0.5 * (widened[order[k]] + widened[order[k + 1]]));
                s.move_to(order[k], y);
            }
        }
    }, 64);
}

// The gap below particle i, relative to the lattice's: 2 over wall particles, 1 over a face below i
// (faces: the walls' lists).
template <int D>
double wall_gap_factor(const SmoothWalls<D>& smooth, const NeighborLists& faces, const std::vector<Vec<D>>& xs,
                       const Vec<D>& down, std::uint32_t i) {
    for (std::uint32_t k = smooth.first_face(i); k < faces.offsets[i + 1]; ++k) {
        const Vec<D> up = xs[i] - smooth.virtual_walls().set.position[k];  // along the face's normal, into the fluid
        if (dot(up, down) < -0.5f * norm(up)) return 1.0;
    }
    return 2.0;
}

// One round of step 2 on one movable run; returns the largest |e| so far, w included.
template <int D>
double correct_run(Compression<D>& s, const std::vector<float>& rho, const SmoothWalls<D>& smooth,
                   const NeighborLists& faces, std::size_t run, double w) {
    const std::vector<std::uint32_t>& order = s.c.order;
    const std::vector<double>& height = s.c.height;
    const double rho0 = s.profile.rho0, C = s.profile.C, spacing = s.spacing;
    const std::size_t first = s.c.runs[run], last = s.c.runs[run + 1];
    auto error = [&](std::size_t k) {
        const double rho_k = rho[order[k]];
        if (rho_k < 0.95 * rho0) return 0.0;
        return s.profile.target_density(s.depth[order[k]]) / rho_k - 1.0;
    };
    const double e_low = error(last - 1);
    // The gap to the wall.
    double shift = wall_gap_factor(smooth, faces, s.xs, s.down, order[last - 1]) * spacing * e_low / C;
    w = std::max(w, std::fabs(e_low));
    s.move_to(order[last - 1], height[order[last - 1]] - shift);
    double e_below = 0.0;  // the lowest particle's share is in the wall gap already
    for (std::size_t k = last - 1; k-- > first;) {
        const double e = error(k);
        w = std::max(w, std::fabs(e));
        shift += spacing * (e + e_below) / (2.0 * C);
        e_below = e;
        s.move_to(order[k], height[order[k]] - shift);
    }
    return w;
}

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
// One round, from the densities rho of the current positions; returns the largest |e|.
template <int D>
double compress_round(Compression<D>& s, const std::vector<float>& rho, const SmoothWalls<D>& smooth,
                      const NeighborLists& faces, const ExecContext& exec) {
    return parallel_reduce_blocks(
        exec, s.c.runs.size() - 1, 0.0,
        [&](std::size_t b0, std::size_t b1) {
            double w = 0.0;
            for (std::size_t run = b0; run < b1; ++run) {
                if (!s.c.movable[run]) continue;
                w = correct_run(s, rho, smooth, faces, run, w);
            }
            return w;
        },
        [](double a, double b) { return std::max(a, b); }, 64);
}

// A run's lowest particle takes its density from the wall below it, and over a sparsely sampled
// patch of a model's wall it is moved down towards the wall's particles, up to through the
// surface: an open model (a shell, boundary.hpp) then keeps it on the far side (a tank without a
// lid lost two particles through its floor this way). A particle the rounds took within the walls'
// guard (half a radius) goes back to where it was before them, as step 1 would put it.
template <int D>
void restore_guarded(std::vector<Vec<D>>& xs, const std::vector<Vec<D>>& before_density, std::size_t n,
                     const std::vector<Wall<D>>& walls, float guard, const ExecContext& exec) {
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        Vec<D> p = xs[i];
        if (keep_inside(p, walls, guard)) xs[i] = before_density[i];
    });
}

}  // namespace

template <int D>
std::size_t WcsphSolver<D>::start_hydrostatic(ParticleSet<D>& fluid, const BoundarySet<D>& boundary,
                                              const ExecContext& exec) {
    const std::size_t n = fluid.size();
    if (n == 0) return 0;
    const double r = m_r, spacing = 2.0 * r;
    const GravityFrame<D> frame = gravity_frame<D>(m_g);
    auto& xs = fluid.position;
    Columns<D> columns;
    bin_columns(columns, xs, n, frame, spacing);
    sort_columns(columns, n);
    const std::size_t moved = find_movable_runs(columns, fluid.velocity, n, r, spacing);
    if (moved == 0) return 0;

    // 0. Rows ending short of a wall stretched to it.
    std::vector<double> widened(n, 1.0);  // area across gravity of a particle's cell, relative to (2r)^(D-1)
    if (!m_walls.empty()) stretch_rows_to_walls(fluid, m_walls, columns, frame, widened, 0.9f * m_r, r, spacing, exec);

    const HydrostaticProfile profile{m_s.rest_density, norm(m_g), m_grad_factor, m_B, 1.0 / m_s.exponent};
    const std::vector<double> depth = mass_depths(columns, widened, n, spacing);
    Compression<D> s{xs, columns, frame.down, widened, depth, profile, spacing};
    // 1. Lattice spacing.
    space_lattice(s, exec);

    // 2. Density by summation, walls included, in rounds.
    const auto& rho = fluid.density;
    const std::vector<Vec<D>> before_density = fluid.position;  // for the walls' check after the rounds
    for (int round = 0; round < 20; ++round) {
        update_neighbors(fluid, boundary, false, 0.0, exec);  // the faces' velocities do not enter the density
        update_density(fluid, boundary, exec);
        const double worst = compress_round(s, rho, m_smooth, wall_lists(), exec);
        if (worst < 1e-5) break;
    }
    // The walls' guard.
    if (!m_walls.empty()) restore_guarded(xs, before_density, n, m_walls, 0.5f * m_r, exec);
    return moved;
}

template std::size_t WcsphSolver<2>::start_hydrostatic(ParticleSet<2>&, const BoundarySet<2>&, const ExecContext&);
template std::size_t WcsphSolver<3>::start_hydrostatic(ParticleSet<3>&, const BoundarySet<3>&, const ExecContext&);

}  // namespace eddy
