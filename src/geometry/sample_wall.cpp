// sample_wall: wall particles of a model, layer l at distance (2l + 1) r on the wall's side, about 2r
// apart; and poisson_thin, the Poisson-disk thinning it uses.
//
// Layer l is the offset surface {x : dist(x, mesh) = d_l} on the wall's side. Its candidates:
// - random points of each cell moved by d_l along the cell's wall-side normal (flat parts);
// - around every sharp edge (normals turning by more than sharp_degrees) and open edge, rings of
//   radius d_l about points along the edge, and around every sharp corner a sphere (2D: a circle) of
//   radius d_l: the rounded parts of the offset surface, where offsetting the cells alone leaves a
//   hole along a convex edge;
// then a candidate with another part of the mesh nearer than 0.9 d_l is dropped (it is not on the
// offset surface: the far side of a thin wall, the inside of a concave crease), ring and sphere
// candidates on the wrong side too (winding number), and the rest are thinned to a Poisson-disk set.
// The thinned density of a flat wall is close to the lattice's 1 / (2r)^(D-1); Akinci's volumes
// (compute_boundary_psi) absorb the rest.
#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"

namespace eddy {

namespace {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
inline double uniform(std::uint64_t& state) {
    state = mix(state);
    return static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
}

// Outward unit normal and measure of a cell.
template <int D>
Vec<D> cell_normal(const Mesh<D>& m, std::uint32_t c, double& measure) {
    const auto& cell = m.cells[c];
    if constexpr (D == 3) {
        const Vec3 a = m.vertices[cell[1]] - m.vertices[cell[0]], b = m.vertices[cell[2]] - m.vertices[cell[0]];
        const Vec3 n = {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
        const float len = norm(n);
        measure = 0.5 * len;
        return len > 0 ? n * (1.0f / len) : Vec3::zero();
    } else {
        const Vec2 e = m.vertices[cell[1]] - m.vertices[cell[0]];
        const float len = norm(e);
        measure = len;
        return len > 0 ? Vec2{{e[1] / len, -e[0] / len}} : Vec2::zero();
    }
}

// Two unit vectors perpendicular to unit e.
void basis(const Vec3& e, Vec3& u, Vec3& v) {
    const Vec3 t = std::fabs(e[0]) < 0.9f ? Vec3{{1, 0, 0}} : Vec3{{0, 1, 0}};
    u = {{e[1] * t[2] - e[2] * t[1], e[2] * t[0] - e[0] * t[2], e[0] * t[1] - e[1] * t[0]}};
    u *= 1.0f / norm(u);
    v = {{e[1] * u[2] - e[2] * u[1], e[2] * u[0] - e[0] * u[2], e[0] * u[1] - e[1] * u[0]}};
}

// Points where the offset surface is rounded: rings about sharp and open edges, spheres (circles)
// about sharp corners, at radius d. `wall` holds the cells' wall-side normals.
template <int D>
void feature_candidates(const Mesh<D>& m, const std::vector<Vec<D>>& wall, float d, float spacing, float cos_sharp,
                        std::vector<Vec<D>>& out) {
    const float step = 0.5f * spacing;  // candidates twice as dense as the samples
    // Cells around each vertex, and (3D) cells along each edge.
    std::vector<std::vector<std::uint32_t>> at_vertex(m.vertices.size());
    for (std::uint32_t c = 0; c < m.cells.size(); ++c)
        for (int k = 0; k < D; ++k) at_vertex[m.cells[c][k]].push_back(c);
    auto sharp = [&](const std::vector<std::uint32_t>& cells) {
        if (cells.size() < 2) return true;  // open: the offset surface turns around it
        for (std::size_t i = 0; i < cells.size(); ++i)
            for (std::size_t j = i + 1; j < cells.size(); ++j)
                if (dot(wall[cells[i]], wall[cells[j]]) < cos_sharp) return true;
        return false;
    };
    for (std::uint32_t v = 0; v < m.vertices.size(); ++v) {
        if (at_vertex[v].empty() || !sharp(at_vertex[v])) continue;
        const Vec<D> c = m.vertices[v];
        if constexpr (D == 2) {
            const int n = std::max(8, static_cast<int>(std::ceil(2.0 * std::numbers::pi * d / step)));
            for (int i = 0; i < n; ++i) {
                const double a = 2.0 * std::numbers::pi * (i + 0.5) / n;
                out.push_back(c + Vec2{{float(d * std::cos(a)), float(d * std::sin(a))}});
            }
        } else {
            const int n = std::max(12, static_cast<int>(std::ceil(4.0 * std::numbers::pi * d * d / (step * step))));
            const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
            for (int i = 0; i < n; ++i) {
                const double y = 1.0 - 2.0 * (i + 0.5) / n, rr = std::sqrt(std::max(0.0, 1.0 - y * y)), phi = golden * i;
                out.push_back(c + Vec3{{float(d * rr * std::cos(phi)), float(d * y), float(d * rr * std::sin(phi))}});
            }
        }
    }
    if constexpr (D == 3) {
        // Edges: (smaller vertex, larger vertex, cell), sorted.
        std::vector<std::array<std::uint32_t, 3>> edges;
        edges.reserve(3 * m.cells.size());
        for (std::uint32_t c = 0; c < m.cells.size(); ++c)
            for (int k = 0; k < 3; ++k) {
                const std::uint32_t a = m.cells[c][k], b = m.cells[c][(k + 1) % 3];
                edges.push_back({std::min(a, b), std::max(a, b), c});
            }
        std::sort(edges.begin(), edges.end());
        std::vector<std::uint32_t> cells;
        for (std::size_t i = 0; i < edges.size();) {
            std::size_t j = i;
            cells.clear();
            while (j < edges.size() && edges[j][0] == edges[i][0] && edges[j][1] == edges[i][1]) cells.push_back(edges[j++][2]);
            if (sharp(cells)) {
                const Vec3 a = m.vertices[edges[i][0]], b = m.vertices[edges[i][1]];
                const float len = norm(b - a);
                if (len > 0.0f) {
                    const Vec3 e = (b - a) * (1.0f / len);
                    Vec3 u, v;
                    basis(e, u, v);
                    const int along = std::max(1, static_cast<int>(std::ceil(len / step)));
                    const int around = std::max(8, static_cast<int>(std::ceil(2.0 * std::numbers::pi * d / step)));
                    for (int s = 0; s < along; ++s) {
                        const Vec3 p = a + (b - a) * ((s + 0.5f) / along);
                        for (int k = 0; k < around; ++k) {
                            const double ang = 2.0 * std::numbers::pi * (k + 0.5) / around;
                            out.push_back(p + u * float(d * std::cos(ang)) + v * float(d * std::sin(ang)));
                        }
                    }
                }
            }
            i = j;
        }
    }
}

}  // namespace

template <int D>
std::vector<std::uint32_t> poisson_thin(const std::vector<Vec<D>>& points, float radius, const ExecContext& exec) {
    const std::size_t n = points.size();
    if (n == 0) return {};
    Vec<D> lo = points[0];
    for (const auto& p : points)
        for (int a = 0; a < D; ++a) lo[a] = std::min(lo[a], p[a]);
    // Cells of side `radius`, packed 21 bits per axis (x slowest). Sort by (cell, random priority):
    // the visiting order within a cell is a fixed random one.
    constexpr int kBits = 21;
    constexpr std::uint64_t kMask = (std::uint64_t{1} << kBits) - 1;
    auto coord = [&](const Vec<D>& p, int a) {
        const double c = std::floor((double(p[a]) - lo[a]) / radius) + 1.0;  // +1: room for the -1 neighbour
        return static_cast<std::uint64_t>(std::min(c, double(kMask - 1)));
    };
    struct Item {
        std::uint64_t cell, priority;
        std::uint32_t index;
        bool operator<(const Item& o) const {
            if (cell != o.cell) return cell < o.cell;
            return priority != o.priority ? priority < o.priority : index < o.index;
        }
    };
    std::vector<Item> items(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint64_t key = 0;
        for (int a = 0; a < D; ++a) key = (key << kBits) | coord(points[i], a);
        items[i] = {key, mix(i), static_cast<std::uint32_t>(i)};
    });
    parallel_sort(exec, items.begin(), items.end());
    std::vector<std::size_t> start;  // cell ranges in items
    for (std::size_t i = 0; i < n; ++i)
        if (i == 0 || items[i].cell != items[i - 1].cell) start.push_back(i);
    const std::size_t cells = start.size();
    start.push_back(n);
    // Columns: runs of cells that differ in the last coordinate only (consecutive in the sorted
    // order). An open-addressing table maps a column to its run; a cell's 3^D neighbours are then
    // 3^(D-1) table probes, each followed by a short search along the column.
    std::vector<std::uint32_t> column_first;
    for (std::size_t c = 0; c < cells; ++c)
        if (c == 0 || (items[start[c]].cell >> kBits) != (items[start[c - 1]].cell >> kBits))
            column_first.push_back(static_cast<std::uint32_t>(c));
    const std::size_t columns = column_first.size();
    column_first.push_back(static_cast<std::uint32_t>(cells));
    std::size_t size = 16;
    while (size < 2 * columns) size *= 2;
    struct Slot {
        std::uint64_t key = ~std::uint64_t{0};  // empty
        std::uint32_t column = 0;
    };
    std::vector<Slot> table(size);  // key and column side by side: one cache line per probe
    auto slot = [&](std::uint64_t key) { return (key * 0x9e3779b97f4a7c15ull) >> 20 & (size - 1); };
    for (std::size_t k = 0; k < columns; ++k) {
        const std::uint64_t key = items[start[column_first[k]]].cell >> kBits;
        std::size_t h = slot(key);
        while (table[h].key != ~std::uint64_t{0}) h = (h + 1) & (size - 1);
        table[h] = {key, static_cast<std::uint32_t>(k)};
    }
    auto find_column = [&](std::uint64_t key) -> long {
        for (std::size_t h = slot(key);; h = (h + 1) & (size - 1)) {
            if (table[h].key == key) return table[h].column;
            if (table[h].key == ~std::uint64_t{0}) return -1;
        }
    };
    // Cells of one colour (parity of each coordinate) never neighbour each other: each task reads
    // only cells of other colours and writes only its own. A cell of side `radius` holds at most 2^D
    // points that far apart (its corners), so its accepted points fit in a fixed array.
    std::vector<std::array<std::uint32_t, (1 << D)>> accepted(cells);
    std::vector<std::array<Vec<D>, (1 << D)>> accepted_at(cells);  // their positions, beside each other
    std::vector<std::uint8_t> accepted_count(cells, 0);
    std::vector<Vec<D>> sorted(n);  // positions in visiting order
    parallel_for_each_index(exec, n, [&](std::size_t i) { sorted[i] = points[items[i].index]; });
    std::vector<std::vector<std::uint32_t>> colour(1 << D);
    for (std::size_t c = 0; c < cells; ++c) {
        int k = 0;
        for (int a = 0; a < D; ++a) k |= int((items[start[c]].cell >> (kBits * (D - 1 - a))) & 1) << a;
        colour[k].push_back(static_cast<std::uint32_t>(c));
    }
    const float r2 = radius * radius;
    constexpr int kNeighbours = D == 2 ? 9 : 27;
    for (const auto& group : colour) {
        parallel_for_each_index(exec, group.size(), [&](std::size_t g) {
            const std::size_t c = group[g];
            const std::uint64_t key = items[start[c]].cell;
            long near[kNeighbours];
            int nn = 0;
            const std::uint64_t z = key & kMask;
            for (int o = 0; o < kNeighbours / 3; ++o) {
                std::uint64_t q = 0;
                int rest = o;
                for (int a = 0; a < D - 1; ++a) {
                    const std::uint64_t ca = (key >> (kBits * (D - 1 - a))) & kMask;
                    q = (q << kBits) | ((ca + std::uint64_t(rest % 3) - 1) & kMask);
                    rest /= 3;
                }
                const long col = q == (key >> kBits) ? -2 : find_column(q);
                std::uint32_t lo_c, hi_c;
                if (col == -2) {  // its own column: the cells beside c
                    lo_c = c > 0 ? static_cast<std::uint32_t>(c - 1) : 0;
                    hi_c = static_cast<std::uint32_t>(std::min(c + 2, cells));
                } else if (col >= 0) {
                    lo_c = column_first[col];
                    hi_c = column_first[col + 1];
                    // First cell of the column with last coordinate >= z - 1.
                    std::uint32_t l = lo_c, h = hi_c;
                    while (l < h) {
                        const std::uint32_t mid = (l + h) / 2;
                        if ((items[start[mid]].cell & kMask) + 1 < z) l = mid + 1;
                        else h = mid;
                    }
                    lo_c = l;
                    hi_c = std::min(hi_c, l + 3);
                } else {
                    continue;
                }
                for (std::uint32_t f = lo_c; f < hi_c; ++f) {
                    const std::uint64_t fz = items[start[f]].cell & kMask;
                    if ((items[start[f]].cell >> kBits) != (key >> kBits) && col == -2) continue;
                    if (fz + 1 < z || fz > z + 1) continue;
                    if (accepted_count[f] > 0 || f == c) near[nn++] = f;
                }
            }
            for (std::size_t i = start[c]; i < start[c + 1]; ++i) {
                const Vec<D> x = sorted[i];
                bool ok = true;
                for (int o = 0; o < nn && ok; ++o) {
                    const auto& at = accepted_at[near[o]];
                    for (int j = 0; j < accepted_count[near[o]] && ok; ++j)
                        if (norm2(at[j] - x) < r2) ok = false;
                }
                if (ok && accepted_count[c] < (1 << D)) {
                    accepted_at[c][accepted_count[c]] = x;
                    accepted[c][accepted_count[c]++] = items[i].index;
                }
            }
        }, 16);
    }
    std::vector<std::uint32_t> kept;
    for (std::size_t c = 0; c < cells; ++c) kept.insert(kept.end(), accepted[c].begin(), accepted[c].begin() + accepted_count[c]);
    std::sort(kept.begin(), kept.end());
    return kept;
}

template <int D>
std::vector<Vec<D>> sample_wall(const MeshShape<D>& shape, const WallSampling& s, const ExecContext& exec) {
    const Mesh<D>& m = shape.mesh();
    const float r = s.particle_radius, spacing = 2.0f * r;
    const std::size_t nc = m.cells.size();
    std::vector<Vec<D>> wall(nc);
    std::vector<double> measure(nc);
    std::vector<std::size_t> first(nc + 1, 0);  // candidates per cell, as a prefix sum
    const double unit = std::pow(double(spacing), D - 1);
    // Counts in double before an integer holds them: a model scaled far beyond the particle size (or a
    // tiny particle_radius) would overflow the casts below and the edges' int counts in
    // feature_candidates. Refused beyond the int range, as builders.cpp refuses analytic walls.
    double estimate = 0.0;
    for (std::size_t c = 0; c < nc; ++c) {
        const Vec<D> n = cell_normal(m, static_cast<std::uint32_t>(c), measure[c]);
        wall[c] = s.solid ? -n : n;
        estimate += std::ceil(s.candidates * measure[c] / unit);
        if constexpr (D == 3)  // sharp edges' rings along each edge (an edge is in two cells: an upper bound)
            for (int k = 0; k < 3; ++k)
                estimate += double(norm(m.vertices[m.cells[c][(k + 1) % 3]] - m.vertices[m.cells[c][k]])) / r;
    }
    constexpr double kMaxPoints = 2147483647.0;
    if (!(estimate <= kMaxPoints))
        throw InputError(fmt::format("{}: a wall of about {:.3g} sample points at particle radius {:g} m; allowed: at "
                                     "most {:.0f} (a smaller model or scale, or a larger particle_radius)",
                                     shape.where(), estimate, r, kMaxPoints));
    for (std::size_t c = 0; c < nc; ++c)
        first[c + 1] = first[c] + static_cast<std::size_t>(std::ceil(s.candidates * measure[c] / unit));
    const float cos_sharp = static_cast<float>(std::cos(s.sharp_degrees * std::numbers::pi / 180.0));
    std::vector<Vec<D>> out;
    for (int layer = 0; layer < s.layers; ++layer) {
        const float d = static_cast<float>(2 * layer + 1) * r;
        std::vector<Vec<D>> cand(first[nc]);
        parallel_for_each_index(exec, nc, [&](std::size_t c) {
            const auto& cell = m.cells[c];
            for (std::size_t k = first[c]; k < first[c + 1]; ++k) {
                std::uint64_t state = mix(k * 0x2545f4914f6cdd1dull + static_cast<std::uint64_t>(layer));
                Vec<D> p;
                if constexpr (D == 3) {
                    const double u = std::sqrt(uniform(state)), v = uniform(state);
                    p = m.vertices[cell[0]] * float(1.0 - u) + m.vertices[cell[1]] * float(u * (1.0 - v)) +
                        m.vertices[cell[2]] * float(u * v);
                } else {
                    const double t = uniform(state);
                    p = m.vertices[cell[0]] * float(1.0 - t) + m.vertices[cell[1]] * float(t);
                }
                cand[k] = p + wall[c] * d;
            }
        }, 64);
        const std::size_t flat = cand.size();
        feature_candidates<D>(m, wall, d, spacing, cos_sharp, cand);
        // Per cell first: a cell lying wholly below the height 0.1 d over cell c's plane (along c's
        // wall normal) is at least 0.9 d from every candidate of c, which sit at height d. When no other
        // cell within 0.9 d + (c's size) of c's offset centre rises above that, none of c's candidates
        // can be dropped and they skip the per-candidate query: on smooth surfaces, all of them.
        std::vector<std::uint8_t> clear(nc, 0);
        parallel_blocks(exec, nc, [&](std::size_t c0, std::size_t c1) {
            for (std::size_t c = c0; c < c1; ++c) {
                const auto& cell = m.cells[c];
                Vec<D> centre = Vec<D>::zero();
                for (int k = 0; k < D; ++k) centre += m.vertices[cell[k]] * (1.0f / D);
                float reach = 0.0f;
                for (int k = 0; k < D; ++k) reach = std::max(reach, norm(m.vertices[cell[k]] - centre));
                const Vec<D> n = wall[c];
                const float low = 0.1f * d;
                const std::function<bool(std::uint32_t)> below = [&](std::uint32_t o) {
                    for (int k = 0; k < D; ++k)
                        if (dot(m.vertices[m.cells[o][k]] - centre, n) > low) return false;
                    return true;
                };
                clear[c] = shape.any_within(centre + n * d, 0.9 * d + reach, &below) ? 0 : 1;
            }
        }, 256);
        std::vector<std::uint8_t> keep(cand.size(), 0);
        // Flat candidates are exactly d from their own cell; another one nearer than 0.9 d means a thin
        // wall or a crease. Ring and sphere candidates must be on the rounded offset surface itself
        // (0.99 d): those nearer to a face belong to the flat part, which its own candidates cover.
        parallel_for_each_index(exec, cand.size(), [&](std::size_t i) {
            if (i < flat) {
                const std::size_t c = std::upper_bound(first.begin(), first.end(), i) - first.begin() - 1;
                if (clear[c]) {
                    keep[i] = 1;
                    return;
                }
            }
            if (shape.any_within(cand[i], (i < flat ? 0.9 : 0.99) * d)) return;
            if (i >= flat && shape.inside(cand[i]) != s.solid) return;
            keep[i] = 1;
        }, 256);
        std::vector<Vec<D>> kept;
        kept.reserve(cand.size());
        for (std::size_t i = 0; i < cand.size(); ++i)
            if (keep[i]) kept.push_back(cand[i]);
        for (std::uint32_t i : poisson_thin<D>(kept, s.poisson * spacing, exec)) out.push_back(kept[i]);
    }
    return out;
}

template std::vector<std::uint32_t> poisson_thin<2>(const std::vector<Vec<2>>&, float, const ExecContext&);
template std::vector<std::uint32_t> poisson_thin<3>(const std::vector<Vec<3>>&, float, const ExecContext&);
template std::vector<Vec<2>> sample_wall<2>(const MeshShape<2>&, const WallSampling&, const ExecContext&);
template std::vector<Vec<3>> sample_wall<3>(const MeshShape<3>&, const WallSampling&, const ExecContext&);

}  // namespace eddy
