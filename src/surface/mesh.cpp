// Stage 4: marching cubes (Lorensen & Cline 1987) in 3D, marching squares in 2D, at a level of a
// signed distance grid; then Taubin smoothing and removal of small pieces.
//
// Instead of a 256-case table, each cube's polygons are traced on its faces. On a face, walked
// counter-clockwise as seen from outside the cube, every crossing is either "inside -> outside" or
// "outside -> inside"; a surface segment joins each inside -> outside crossing to an outside -> inside
// one, the inside on its left. A face with four crossings (diagonal corners inside) is ambiguous and
// is resolved by the asymptotic decider (Nielson & Hamann 1991): with the face's bilinear interpolant,
// the inside corners are connected iff the product of the inside diagonal's values exceeds that of
// the outside diagonal's (equivalently the saddle value (ac - bd) / (a + c - b - d) is inside). The
// test reads the face's four values in the grid's own axis order, so the two cubes that share a face
// make the same choice. Every crossing has one segment in and one out on the cube's surface, so the
// segments form closed loops; each loop becomes a triangle fan whose diagonals cross the cube's
// interior (or a fan around a new centroid vertex when every start would put a diagonal on a face,
// which only happens next to ambiguous faces). Across cubes the face segments match and no diagonal
// can be drawn twice, so every mesh edge has exactly two triangles: closed, manifold, consistently
// oriented. (Interior ambiguity, MC33's tunnels, is not resolved: loops are triangulated one by one.)
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>


#include "eddy/error.hpp"
#include "eddy/surface.hpp"
#include "surface/block_access.hpp"

namespace eddy {

using namespace surface_detail;

namespace {

// A value that marks "no distance here" (unswept) counts as far, not as a number to difference.
inline bool usable(float v) { return std::abs(v) < 0.5f * FLT_MAX; }

template <int D>
Vec<D> gradient_at(const Around<D, const float>& g, const std::array<int, D>& c, float h) {
    Vec<D> grad;
    const float v0 = g.get(c);
    for (int a = 0; a < D; ++a) {
        const float m = g.step(c, a, -1), p = g.step(c, a, +1);
        if (usable(m) && usable(p)) grad[a] = (p - m) / (2.0f * h);
        else if (usable(p) && usable(v0)) grad[a] = (p - v0) / h;
        else if (usable(m) && usable(v0)) grad[a] = (v0 - m) / h;
        else grad[a] = 0.0f;
    }
    return grad;
}

template <int D>
Vec<D> normalized(Vec<D> v) {
    const float n = norm(v);
    return n > 0.0f ? v * (1.0f / n) : v;
}

// Faces of the unit cube, corners counter-clockwise seen from outside; corner k = x + 2y + 4z.
constexpr int kFaces[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
// The square, counter-clockwise seen from +z.
constexpr int kSquare[4] = {0, 1, 3, 2};

inline int axis_of(int p, int q) { return (p ^ q) == 1 ? 0 : ((p ^ q) == 2 ? 1 : 2); }

// The two cube faces holding cube edge e = min corner * 3 + axis, as bits 2 b + side (kFaces order).
inline int edge_faces(int e) {
    const int corner = e / 3, axis = e % 3;
    int mask = 0;
    for (int b = 0; b < 3; ++b)
        if (b != axis) mask |= 1 << (2 * b + ((corner >> b) & 1));
    return mask;
}

// The segments on one face (or the square): for each inside -> outside crossing i (0..3, the edge
// from corner i to i + 1), the crossing it connects to. f: the level-shifted values at the corners in
// walking order; fuv: the same values indexed by the face's own axes (u + 2 v) for the decider.
inline void face_segments(const float f[4], const float fuv[4], int out_to[4]) {
    bool in[4];
    int crossings = 0;
    for (int i = 0; i < 4; ++i) in[i] = f[i] < 0.0f;
    for (int i = 0; i < 4; ++i) {
        out_to[i] = -1;
        crossings += in[i] != in[(i + 1) & 3];
    }
    if (crossings == 2) {
        int from = -1, to = -1;
        for (int i = 0; i < 4; ++i) {
            if (in[i] && !in[(i + 1) & 3]) from = i;
            if (!in[i] && in[(i + 1) & 3]) to = i;
        }
        out_to[from] = to;
    } else if (crossings == 4) {
        const bool uv00_inside = fuv[0] < 0.0f;
        const float p00 = fuv[0] * fuv[3], p10 = fuv[1] * fuv[2];
        const bool connected = uv00_inside ? (p00 > p10) : (p10 > p00);
        for (int i = 0; i < 4; ++i)
            if (in[i]) out_to[i] = connected ? (i + 1) & 3 : (i + 3) & 3;
    }
}

struct EdgeTables {
    std::vector<std::vector<std::int32_t>> local;  // per block: B^D * D entries, -1 = no vertex (empty: none)
    std::vector<std::uint32_t> base;                // first vertex of each block
};

}  // namespace

template <int D>
Mesh<D> extract_mesh(const SparseGrid<D>& phi, float iso, const ExecContext& exec, float margin) {
    margin = std::clamp(margin, 0.0f, 0.25f);
    using Coord = std::array<int, D>;
    const auto& L = phi.layout;
    const std::size_t nb = L.size();
    const int B = L.block, nv = L.voxels_per_block();
    const float h = L.voxel;
    Mesh<D> mesh;
    if (nb == 0) return mesh;

    // Pass 1: a vertex on every crossed edge, owned by the edge's lower node.
    EdgeTables tables;
    tables.local.resize(nb);
    std::vector<std::vector<Vec<D>>> pos(nb), nrm(nb);
    // Blocks entirely on one side, like their upper face neighbours (absent ones read as outside),
    // own no crossed edge.
    const std::vector<std::int8_t> side = block_sides(phi, iso, exec);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        bool uniform = side[b] != 0;
        for (int a = 0; a < D && uniform; ++a) {
            const std::int32_t n = L.neighbors[b][2 * a + 1];
            uniform = (n < 0 ? std::int8_t(phi.background >= iso ? 1 : -1) : side[n]) == side[b];
        }
        if (uniform) return;
        const auto g = Around<D, const float>::make(phi, b);
        const float* self = phi.values.data() + b * nv;
        for (int l = 0; l < nv; ++l) {
            const Coord c = local_coords<D>(l, B);
            const float f0 = self[l] - iso;
            for (int a = 0; a < D; ++a) {
                const float f1 = g.step(c, a, +1) - iso;
                if ((f0 < 0.0f) == (f1 < 0.0f)) continue;
                if (tables.local[b].empty()) tables.local[b].assign(std::size_t(nv) * D, -1);
                const float t = std::clamp(f0 / (f0 - f1), margin, 1.0f - margin);
                Vec<D> x;
                for (int k = 0; k < D; ++k) x[k] = float(L.coords[b][k] * B + c[k]) * h;
                x[a] += t * h;
                Coord c1 = c;
                c1[a] += 1;
                const Vec<D> n = gradient_at<D>(g, c, h) * (1.0f - t) + gradient_at<D>(g, c1, h) * t;
                tables.local[b][std::size_t(l) * D + a] = static_cast<std::int32_t>(pos[b].size());
                pos[b].push_back(x);
                nrm[b].push_back(normalized(n));
            }
        }
    }, 1);
    tables.base.resize(nb + 1, 0);
    for (std::size_t b = 0; b < nb; ++b) tables.base[b + 1] = tables.base[b] + static_cast<std::uint32_t>(pos[b].size());
    mesh.vertices.resize(tables.base[nb]);
    mesh.normals.resize(tables.base[nb]);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        std::copy(pos[b].begin(), pos[b].end(), mesh.vertices.begin() + tables.base[b]);
        std::copy(nrm[b].begin(), nrm[b].end(), mesh.normals.begin() + tables.base[b]);
    }, 16);

    // Pass 2: cells of the cubes (squares) whose lowest corner is a node of block b. Loop centres added
    // here are numbered kExtra | (index in the block's list) until the lists are concatenated.
    constexpr std::uint32_t kExtra = 0x80000000u;
    std::vector<std::vector<Vec<D>>> extra_pos(nb), extra_nrm(nb);
    auto vertex_position = [&](std::uint32_t i) { return mesh.vertices[i]; };
    auto vertex_normal = [&](std::uint32_t i) { return mesh.normals[i]; };
    std::vector<std::vector<std::array<std::uint32_t, D>>> cells(nb);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        // The blocks holding the cube corners: b and its upper neighbours (slot bits x, y, z).
        constexpr int kUpper = 1 << D;
        std::int32_t up[kUpper];
        bool any = false;
        for (int k = 0; k < kUpper; ++k) {
            Coord c = L.coords[b];
            for (int a = 0; a < D; ++a) c[a] += (k >> a) & 1;
            up[k] = k == 0 ? std::int32_t(b) : L.find(c);
            any |= up[k] >= 0 && !tables.local[up[k]].empty();
        }
        if (!any) return;
        const float* vals[kUpper];
        for (int k = 0; k < kUpper; ++k) vals[k] = up[k] < 0 ? nullptr : phi.values.data() + std::size_t(up[k]) * nv;
        // Corner node -> (block slot, local index).
        auto locate = [&](Coord c, int& slot) {
            slot = 0;
            for (int a = 0; a < D; ++a)
                if (c[a] >= B) {
                    c[a] -= B;
                    slot |= 1 << a;
                }
            return local_index<D>(c, B);
        };
        auto vertex = [&](const Coord& node, int axis) -> std::uint32_t {
            int slot;
            const int l = locate(node, slot);
            const std::int32_t blk = up[slot];
            EDDY_ASSERT(blk >= 0 && !tables.local[blk].empty() && tables.local[blk][std::size_t(l) * D + axis] >= 0);
            return tables.base[blk] + static_cast<std::uint32_t>(tables.local[blk][std::size_t(l) * D + axis]);
        };
        auto& out = cells[b];
        for (int l = 0; l < nv; ++l) {
            const Coord c = local_coords<D>(l, B);
            constexpr int kCorners = 1 << D;
            float f[kCorners];
            Coord corner[kCorners];
            int inside = 0;
            for (int k = 0; k < kCorners; ++k) {
                Coord q = c;
                for (int a = 0; a < D; ++a) q[a] += (k >> a) & 1;
                corner[k] = q;
                int slot;
                const int ql = locate(q, slot);
                f[k] = (vals[slot] ? vals[slot][ql] : phi.background) - iso;
                inside += f[k] < 0.0f;
            }
            if (inside == 0 || inside == kCorners) continue;
            // Vertex on the cube edge between corners p and q.
            auto edge_vertex = [&](int p, int q) { return vertex(corner[std::min(p, q)], axis_of(p, q)); };
            if constexpr (D == 2) {
                float fw[4], fuv[4];
                for (int i = 0; i < 4; ++i) fw[i] = f[kSquare[i]];
                for (int i = 0; i < 4; ++i) fuv[i] = f[i];
                int to[4];
                face_segments(fw, fuv, to);
                for (int i = 0; i < 4; ++i)
                    if (to[i] >= 0)
                        out.push_back({edge_vertex(kSquare[i], kSquare[(i + 1) & 3]),
                                       edge_vertex(kSquare[to[i]], kSquare[(to[i] + 1) & 3])});
            } else {
                // next[e]: the loop successor of crossing e, e = min corner * 3 + axis.
                int next[24];
                std::fill(std::begin(next), std::end(next), -1);
                for (const auto& face : kFaces) {
                    float fw[4], fuv[4];
                    for (int i = 0; i < 4; ++i) fw[i] = f[face[i]];
                    // The face's own axes u < v: corners sorted by index are (0,0), (1,0), (0,1), (1,1).
                    int sorted[4] = {face[0], face[1], face[2], face[3]};
                    std::sort(sorted, sorted + 4);
                    for (int i = 0; i < 4; ++i) fuv[i] = f[sorted[i]];
                    int to[4];
                    face_segments(fw, fuv, to);
                    for (int i = 0; i < 4; ++i) {
                        if (to[i] < 0) continue;
                        const int p = face[i], q = face[(i + 1) & 3];
                        const int r = face[to[i]], s = face[(to[i] + 1) & 3];
                        next[std::min(p, q) * 3 + axis_of(p, q)] = std::min(r, s) * 3 + axis_of(r, s);
                    }
                }
                bool seen[24] = {};
                int loop[12];
                for (int e0 = 0; e0 < 24; ++e0) {
                    if (next[e0] < 0 || seen[e0]) continue;
                    int m = 0;
                    for (int e = e0; e >= 0 && !seen[e]; e = next[e]) {
                        seen[e] = true;
                        loop[m++] = e;
                    }
                    std::uint32_t v[12];
                    for (int i = 0; i < m; ++i) v[i] = vertex(corner[loop[i] / 3], loop[i] % 3);
                    // The loop runs counter-clockwise around the inside seen from outside the cube, so
                    // its right-hand normal points into the fluid: reverse it (normals point out).
                    // A fan from v[s] adds diagonals; one between two vertices on a common face of the
                    // cube could also be drawn by the neighbour across that face (an edge with four
                    // triangles), so pick a start whose diagonals all cross the cube's interior, and
                    // if there is none, fan around a new vertex at the loop's centroid.
                    int start = -1;
                    for (int s0 = 0; s0 < m && start < 0; ++s0) {
                        bool ok = true;
                        for (int i = 2; i + 1 < m && ok; ++i)
                            ok = (edge_faces(loop[s0]) & edge_faces(loop[(s0 + i) % m])) == 0;
                        if (ok) start = s0;
                    }
                    if (start >= 0) {
                        for (int i = 1; i + 1 < m; ++i)
                            out.push_back({v[start], v[(start + i + 1) % m], v[(start + i) % m]});
                    } else {
                        Vec<D> x = Vec<D>::zero(), nn = Vec<D>::zero();
                        for (int i = 0; i < m; ++i) {
                            x += vertex_position(v[i]);
                            nn += vertex_normal(v[i]);
                        }
                        const std::uint32_t centre = kExtra | static_cast<std::uint32_t>(extra_pos[b].size());
                        extra_pos[b].push_back(x * (1.0f / float(m)));
                        extra_nrm[b].push_back(normalized(nn));
                        for (int i = 0; i < m; ++i) out.push_back({centre, v[(i + 1) % m], v[i]});
                    }
                }
            }
        }
    }, 1);
    std::vector<std::size_t> cbase(nb + 1, 0);
    std::vector<std::uint32_t> xbase(nb + 1, static_cast<std::uint32_t>(mesh.vertices.size()));
    for (std::size_t b = 0; b < nb; ++b) {
        cbase[b + 1] = cbase[b] + cells[b].size();
        xbase[b + 1] = xbase[b] + static_cast<std::uint32_t>(extra_pos[b].size());
    }
    mesh.cells.resize(cbase[nb]);
    mesh.vertices.resize(xbase[nb]);
    mesh.normals.resize(xbase[nb]);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        std::copy(extra_pos[b].begin(), extra_pos[b].end(), mesh.vertices.begin() + xbase[b]);
        std::copy(extra_nrm[b].begin(), extra_nrm[b].end(), mesh.normals.begin() + xbase[b]);
        for (std::size_t k = 0; k < cells[b].size(); ++k) {
            auto c = cells[b][k];
            for (auto& i : c)
                if (i & kExtra) i = xbase[b] + (i & ~kExtra);
            mesh.cells[cbase[b] + k] = c;
        }
    }, 16);
    return mesh;
}

template <int D>
double enclosed_volume(const Mesh<D>& m) {
    double v = 0.0;
    for (const auto& c : m.cells) {
        const auto& a = m.vertices[c[0]];
        const auto& b = m.vertices[c[1]];
        if constexpr (D == 2) {
            v += 0.5 * (double(a[0]) * b[1] - double(b[0]) * a[1]);
        } else {
            const auto& d = m.vertices[c[2]];
            v += (double(a[0]) * (double(b[1]) * d[2] - double(b[2]) * d[1]) -
                  double(a[1]) * (double(b[0]) * d[2] - double(b[2]) * d[0]) +
                  double(a[2]) * (double(b[0]) * d[1] - double(b[1]) * d[0])) / 6.0;
        }
    }
    return v;
}

namespace {

// Area-weighted cell normals summed at the vertices, in cell order (deterministic).
template <int D>
void recompute_normals(Mesh<D>& m) {
    std::vector<Vec<D>> n(m.vertices.size(), Vec<D>::zero());
    for (const auto& c : m.cells) {
        Vec<D> fn;
        if constexpr (D == 2) {
            const Vec<D> d = m.vertices[c[1]] - m.vertices[c[0]];
            fn = Vec<D>{{d[1], -d[0]}};  // fluid on the left: outward is to the right
        } else {
            const Vec<D> e1 = m.vertices[c[1]] - m.vertices[c[0]], e2 = m.vertices[c[2]] - m.vertices[c[0]];
            fn = Vec<D>{{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]}};
        }
        for (int k = 0; k < D; ++k) n[c[k]] += fn;
    }
    for (auto& v : n) v = normalized(v);
    m.normals = std::move(n);
}

}  // namespace

template <int D>
void taubin_smooth(Mesh<D>& m, int iterations, const ExecContext& exec) {
    if (iterations <= 0 || m.vertices.empty()) return;
    // Neighbour lists (CSR) from the cells' edges, sorted: the same on any thread count.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    pairs.reserve(m.cells.size() * D * 2);
    for (const auto& c : m.cells)
        for (int i = 0; i < D; ++i)
            for (int j = i + 1; j < D; ++j) {
                pairs.emplace_back(c[i], c[j]);
                pairs.emplace_back(c[j], c[i]);
            }
    parallel_sort(exec, pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    const std::size_t n = m.vertices.size();
    std::vector<std::size_t> start(n + 1, 0);
    for (const auto& p : pairs) ++start[p.first + 1];
    for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
    std::vector<Vec<D>> tmp(n);
    // Taubin 1995, "A signal processing approach to fair surface design": x += k L(x), k = lambda, mu.
    auto pass = [&](float k) {
        parallel_for_each_index(exec, n, [&](std::size_t i) {
            const std::size_t b = start[i], e = start[i + 1];
            if (b == e) {
                tmp[i] = m.vertices[i];
                return;
            }
            Vec<D> mean = Vec<D>::zero();
            for (std::size_t j = b; j < e; ++j) mean += m.vertices[pairs[j].second];
            mean *= 1.0f / float(e - b);
            tmp[i] = m.vertices[i] + (mean - m.vertices[i]) * k;
        });
        m.vertices.swap(tmp);
    };
    for (int it = 0; it < iterations; ++it) {
        pass(0.5f);
        pass(-0.53f);
    }
    recompute_normals(m);
}

template <int D>
std::size_t remove_small_components(Mesh<D>& m, double min_volume) {
    if (min_volume <= 0.0 || m.cells.empty()) return 0;
    const std::size_t n = m.vertices.size();
    std::vector<std::uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](std::uint32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    };
    for (const auto& c : m.cells)
        for (int k = 1; k < D; ++k) {
            const std::uint32_t a = find(c[0]), b = find(c[k]);
            if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }
    std::vector<double> vol(n, 0.0);
    for (const auto& c : m.cells) {
        Mesh<D> one;
        one.vertices = {m.vertices[c[0]], m.vertices[c[1]]};
        if constexpr (D == 3) one.vertices.push_back(m.vertices[c[2]]);
        one.cells.push_back({});
        for (int k = 0; k < D; ++k) one.cells[0][k] = k;
        vol[find(c[0])] += enclosed_volume(one);
    }
    std::vector<std::int64_t> remap(n, -1);
    std::vector<std::array<std::uint32_t, D>> kept;
    std::vector<Vec<D>> verts, norms;
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (find(std::uint32_t(i)) == i && std::abs(vol[i]) < min_volume) ++dropped;
    for (const auto& c : m.cells) {
        if (std::abs(vol[find(c[0])]) < min_volume) continue;
        std::array<std::uint32_t, D> nc;
        for (int k = 0; k < D; ++k) {
            if (remap[c[k]] < 0) {
                remap[c[k]] = static_cast<std::int64_t>(verts.size());
                verts.push_back(m.vertices[c[k]]);
                norms.push_back(m.normals[c[k]]);
            }
            nc[k] = static_cast<std::uint32_t>(remap[c[k]]);
        }
        kept.push_back(nc);
    }
    m.vertices = std::move(verts);
    m.normals = std::move(norms);
    m.cells = std::move(kept);
    return dropped;
}

template Mesh<2> extract_mesh<2>(const SparseGrid<2>&, float, const ExecContext&, float);
template Mesh<3> extract_mesh<3>(const SparseGrid<3>&, float, const ExecContext&, float);
template double enclosed_volume<2>(const Mesh<2>&);
template double enclosed_volume<3>(const Mesh<3>&);
template void taubin_smooth<2>(Mesh<2>&, int, const ExecContext&);
template void taubin_smooth<3>(Mesh<3>&, int, const ExecContext&);
template std::size_t remove_small_components<2>(Mesh<2>&, double);
template std::size_t remove_small_components<3>(Mesh<3>&, double);

}  // namespace eddy

