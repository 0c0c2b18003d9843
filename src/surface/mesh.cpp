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
#include "core/buffers.hpp"

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

// Per block: the vertices (and their normals) it adds, in the order made; concatenated in block order.
template <int D>
struct BlockVertices {
    std::vector<std::vector<Vec<D>>> pos, nrm;
    explicit BlockVertices(std::size_t nb) : pos(nb), nrm(nb) {}
};

template <int D>
using Cell = std::array<std::uint32_t, D>;

// What pass 2 makes of one block: its cells, and the loop centres they add. Centres are numbered
// kExtra | (index in the block's list) until the lists are concatenated.
constexpr std::uint32_t kExtra = 0x80000000u;
template <int D>
struct BlockCells {
    std::vector<Cell<D>> cells;
    std::vector<Vec<D>> extra_pos, extra_nrm;
};

// Blocks entirely on one side, like their upper face neighbours (absent ones read as outside),
// own no crossed edge.
template <int D>
bool owns_no_crossing(const SparseGrid<D>& phi, float iso, const std::vector<std::int8_t>& side, std::size_t b) {
    bool uniform = side[b] != 0;
    for (int a = 0; a < D && uniform; ++a) {
        const std::int32_t n = phi.layout.neighbors[b][2 * a + 1];
        uniform = (n < 0 ? std::int8_t(phi.background >= iso ? 1 : -1) : side[n]) == side[b];
    }
    return uniform;
}

// The vertices on the crossed edges from the nodes of block b towards +x, +y (+z), with the normals
// interpolated from the gradients at the edge's ends; local: block b's edge table.
template <int D>
void block_edge_vertices(const SparseGrid<D>& phi, float iso, float margin, std::size_t b,
                         std::vector<std::int32_t>& local, std::vector<Vec<D>>& pos, std::vector<Vec<D>>& nrm) {
    using Coord = std::array<int, D>;
    const auto& L = phi.layout;
    const int B = L.block, nv = L.voxels_per_block();
    const float h = L.voxel;
    const auto g = Around<D, const float>::make(phi, b);
    const float* self = phi.values.data() + b * nv;
    for (int l = 0; l < nv; ++l) {
        const Coord c = local_coords<D>(l, B);
        const float f0 = self[l] - iso;
        for (int a = 0; a < D; ++a) {
            const float f1 = g.step(c, a, +1) - iso;
            if ((f0 < 0.0f) == (f1 < 0.0f)) continue;
            if (local.empty()) local.assign(std::size_t(nv) * D, -1);
            const float t = std::clamp(f0 / (f0 - f1), margin, 1.0f - margin);
            Vec<D> x;
            for (int k = 0; k < D; ++k) x[k] = float(L.coords[b][k] * B + c[k]) * h;
            x[a] += t * h;
            Coord c1 = c;
            c1[a] += 1;
            const Vec<D> n = gradient_at<D>(g, c, h) * (1.0f - t) + gradient_at<D>(g, c1, h) * t;
            local[std::size_t(l) * D + a] = static_cast<std::int32_t>(pos.size());
            pos.push_back(x);
            nrm.push_back(normalized(n));
        }
    }
}

// Pass 1: a vertex on every crossed edge, owned by the edge's lower node. Fills verts and the tables'
// local part.
template <int D>
EdgeTables place_edge_vertices(const SparseGrid<D>& phi, float iso, float margin, const ExecContext& exec,
                               BlockVertices<D>& verts) {
    const std::size_t nb = phi.layout.size();
    EdgeTables tables;
    tables.local.resize(nb);
    const std::vector<std::int8_t> side = block_sides(phi, iso, exec);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        if (owns_no_crossing(phi, iso, side, b)) return;
        block_edge_vertices(phi, iso, margin, b, tables.local[b], verts.pos[b], verts.nrm[b]);
    }, 1);
    return tables;
}

// Numbers pass 1's vertices block after block (tables.base) and copies them into the mesh.
template <int D>
void gather_edge_vertices(const BlockVertices<D>& verts, const ExecContext& exec, EdgeTables& tables,
                          Mesh<D>& mesh) {
    const std::size_t nb = verts.pos.size();
    tables.base.resize(nb + 1, 0);
    for (std::size_t b = 0; b < nb; ++b)
        tables.base[b + 1] = tables.base[b] + static_cast<std::uint32_t>(verts.pos[b].size());
    mesh.vertices.resize(tables.base[nb]);
    mesh.normals.resize(tables.base[nb]);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        std::copy(verts.pos[b].begin(), verts.pos[b].end(), mesh.vertices.begin() + tables.base[b]);
        std::copy(verts.nrm[b].begin(), verts.nrm[b].end(), mesh.normals.begin() + tables.base[b]);
    }, 16);
}

// The blocks holding the corners of the cubes (squares) whose lowest corner is a node of block b:
// b and its upper neighbours (slot bits x, y, z), with pass 1's edge tables to find their vertices.
template <int D>
struct CornerBlocks {
    static constexpr int kUpper = 1 << D;
    const EdgeTables* tables = nullptr;
    int B = 0;
    std::int32_t up[kUpper];    // block index, -1 where absent
    const float* vals[kUpper];  // its values, nullptr where absent
};

// Block b's corner blocks; false when none of them owns a crossed edge (then b's cubes have no cells).
template <int D>
bool find_corner_blocks(const SparseGrid<D>& phi, const EdgeTables& tables, std::size_t b, CornerBlocks<D>& cb) {
    constexpr int kUpper = CornerBlocks<D>::kUpper;
    const auto& L = phi.layout;
    const int nv = L.voxels_per_block();
    cb.tables = &tables;
    cb.B = L.block;
    bool any = false;
    for (int k = 0; k < kUpper; ++k) {
        std::array<int, D> c = L.coords[b];
        for (int a = 0; a < D; ++a) c[a] += (k >> a) & 1;
        cb.up[k] = k == 0 ? std::int32_t(b) : L.find(c);
        any |= cb.up[k] >= 0 && !tables.local[cb.up[k]].empty();
    }
    if (!any) return false;
    for (int k = 0; k < kUpper; ++k)
        cb.vals[k] = cb.up[k] < 0 ? nullptr : phi.values.data() + std::size_t(cb.up[k]) * nv;
    return true;
}

// Corner node (local to block b, each coordinate in [0, 2B)) -> (block slot, local index).
template <int D>
int locate(std::array<int, D> c, int B, int& slot) {
    slot = 0;
    for (int a = 0; a < D; ++a)
        if (c[a] >= B) {
            c[a] -= B;
            slot |= 1 << a;
        }
    return local_index<D>(c, B);
}

// The vertex on the crossed edge from corner node `node` along `axis`.
template <int D>
std::uint32_t node_edge_vertex(const CornerBlocks<D>& cb, const std::array<int, D>& node, int axis) {
    const EdgeTables& tables = *cb.tables;
    int slot;
    const int l = locate<D>(node, cb.B, slot);
    const std::int32_t blk = cb.up[slot];
    EDDY_ASSERT(blk >= 0 && !tables.local[blk].empty() && tables.local[blk][std::size_t(l) * D + axis] >= 0);
    return tables.base[blk] + static_cast<std::uint32_t>(tables.local[blk][std::size_t(l) * D + axis]);
}

// One cube (square) of block b: its corner nodes (k = x + 2y + 4z) and their level-shifted values.
template <int D>
struct Cube {
    static constexpr int kCorners = 1 << D;
    float f[kCorners];
    std::array<int, D> corner[kCorners];
};

// Reads the cube whose lowest corner is node c of block b; false when no edge of it is crossed.
template <int D>
bool load_cube(const CornerBlocks<D>& cb, float background, float iso, const std::array<int, D>& c, Cube<D>& cube) {
    constexpr int kCorners = Cube<D>::kCorners;
    int inside = 0;
    for (int k = 0; k < kCorners; ++k) {
        std::array<int, D> q = c;
        for (int a = 0; a < D; ++a) q[a] += (k >> a) & 1;
        cube.corner[k] = q;
        int slot;
        const int ql = locate<D>(q, cb.B, slot);
        cube.f[k] = (cb.vals[slot] ? cb.vals[slot][ql] : background) - iso;
        inside += cube.f[k] < 0.0f;
    }
    return !(inside == 0 || inside == kCorners);
}

// Vertex on the cube edge between corners p and q.
template <int D>
std::uint32_t cube_edge_vertex(const CornerBlocks<D>& cb, const Cube<D>& cube, int p, int q) {
    return node_edge_vertex<D>(cb, cube.corner[std::min(p, q)], axis_of(p, q));
}

// Marching squares: the square's segments, each from an inside -> outside crossing to the
// outside -> inside one it connects to.
void square_cells(const CornerBlocks<2>& cb, const Cube<2>& sq, std::vector<Cell<2>>& out) {
    float fw[4], fuv[4];
    for (int i = 0; i < 4; ++i) fw[i] = sq.f[kSquare[i]];
    for (int i = 0; i < 4; ++i) fuv[i] = sq.f[i];
    int to[4];
    face_segments(fw, fuv, to);
    for (int i = 0; i < 4; ++i)
        if (to[i] >= 0)
            out.push_back({cube_edge_vertex(cb, sq, kSquare[i], kSquare[(i + 1) & 3]),
                           cube_edge_vertex(cb, sq, kSquare[to[i]], kSquare[(to[i] + 1) & 3])});
}

// The segments on the cube's six faces as next[e]: the loop successor of crossing e, e = min corner
// * 3 + axis (-1: not crossed).
void link_cube_crossings(const float (&f)[8], int (&next)[24]) {
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
}

// The triangles of one loop of m crossings (cube edges loop[i], vertices v[i]).
void triangulate_loop(const int* loop, int m, const std::uint32_t* v, const Mesh<3>& mesh, BlockCells<3>& out) {
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
            out.cells.push_back({v[start], v[(start + i + 1) % m], v[(start + i) % m]});
    } else {
        Vec<3> x = Vec<3>::zero(), nn = Vec<3>::zero();
        for (int i = 0; i < m; ++i) {
            x += mesh.vertices[v[i]];
            nn += mesh.normals[v[i]];
        }
        const std::uint32_t centre = kExtra | static_cast<std::uint32_t>(out.extra_pos.size());
        out.extra_pos.push_back(x * (1.0f / float(m)));
        out.extra_nrm.push_back(normalized(nn));
        for (int i = 0; i < m; ++i) out.cells.push_back({centre, v[(i + 1) % m], v[i]});
    }
}

// Marching cubes: the cube's crossings, linked into loops by the segments on its faces, and each
// loop's triangles.
void cube_cells(const CornerBlocks<3>& cb, const Cube<3>& cube, const Mesh<3>& mesh, BlockCells<3>& out) {
    int next[24];
    link_cube_crossings(cube.f, next);
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
        for (int i = 0; i < m; ++i) v[i] = node_edge_vertex<3>(cb, cube.corner[loop[i] / 3], loop[i] % 3);
        triangulate_loop(loop, m, v, mesh, out);
    }
}

// Pass 2 for block b: the cells of the cubes (squares) whose lowest corner is a node of block b.
// mesh: pass 1's vertices (loop centres are averaged from them).
template <int D>
void march_block(const SparseGrid<D>& phi, float iso, const EdgeTables& tables, const Mesh<D>& mesh, std::size_t b,
                 BlockCells<D>& out) {
    CornerBlocks<D> cb;
    if (!find_corner_blocks(phi, tables, b, cb)) return;
    const int B = phi.layout.block, nv = phi.layout.voxels_per_block();
    for (int l = 0; l < nv; ++l) {
        Cube<D> cube;
        if (!load_cube<D>(cb, phi.background, iso, local_coords<D>(l, B), cube)) continue;
        if constexpr (D == 2) square_cells(cb, cube, out.cells);
        else cube_cells(cb, cube, mesh, out);
    }
}

// Concatenates the blocks' cells in block order, and their loop centres after pass 1's vertices,
// renumbering the centres.
template <int D>
void stitch_cells(const std::vector<BlockCells<D>>& blocks, const ExecContext& exec, Mesh<D>& mesh) {
    const std::size_t nb = blocks.size();
    std::vector<std::size_t> cbase(nb + 1, 0);
    std::vector<std::uint32_t> xbase(nb + 1, static_cast<std::uint32_t>(mesh.vertices.size()));
    for (std::size_t b = 0; b < nb; ++b) {
        cbase[b + 1] = cbase[b] + blocks[b].cells.size();
        xbase[b + 1] = xbase[b] + static_cast<std::uint32_t>(blocks[b].extra_pos.size());
    }
    detail::resize_huge(mesh.cells, cbase[nb]);
    detail::resize_huge(mesh.vertices, xbase[nb]);
    detail::resize_huge(mesh.normals, xbase[nb]);
    parallel_for_each_index(exec, nb, [&](std::size_t b) {
        const BlockCells<D>& in = blocks[b];
        std::copy(in.extra_pos.begin(), in.extra_pos.end(), mesh.vertices.begin() + xbase[b]);
        std::copy(in.extra_nrm.begin(), in.extra_nrm.end(), mesh.normals.begin() + xbase[b]);
        for (std::size_t k = 0; k < in.cells.size(); ++k) {
            auto c = in.cells[k];
            for (auto& i : c)
                if (i & kExtra) i = xbase[b] + (i & ~kExtra);
            mesh.cells[cbase[b] + k] = c;
        }
    }, 16);
}

}  // namespace

template <int D>
Mesh<D> extract_mesh(const SparseGrid<D>& phi, float iso, const ExecContext& exec, float margin) {
    margin = std::clamp(margin, 0.0f, 0.25f);
    const std::size_t nb = phi.layout.size();
    Mesh<D> mesh;
    if (nb == 0) return mesh;

    // Pass 1: a vertex on every crossed edge, owned by the edge's lower node.
    BlockVertices<D> verts(nb);
    EdgeTables tables = place_edge_vertices(phi, iso, margin, exec, verts);
    gather_edge_vertices(verts, exec, tables, mesh);

    // Pass 2: cells of the cubes (squares) whose lowest corner is a node of block b; loop centres
    // are added per block, then the blocks' lists are concatenated.
    std::vector<BlockCells<D>> blocks(nb);
    parallel_for_each_index(exec, nb, [&](std::size_t b) { march_block(phi, iso, tables, mesh, b, blocks[b]); }, 1);
    stitch_cells(blocks, exec, mesh);
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

