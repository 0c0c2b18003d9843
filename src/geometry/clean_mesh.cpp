// clean_mesh: drop degenerate cells, orient the rest consistently and outwards.
//
// An "edge" is where two cells meet: a pair of vertices in 3D (a triangle side), one vertex in 2D (a
// polygon corner). Each cell crosses each of its edges in a direction (+1 or -1); two neighbours
// agree when they cross their shared edge in opposite directions (a closed, outward mesh walks every
// edge once each way). A breadth-first walk over the manifold edges (exactly two cells) flips
// neighbours until they agree; then each connected piece is flipped as a whole when its signed volume
// (area) is negative, i.e. when it faced inwards. Pieces meeting at non-manifold edges are oriented
// on their own.
#include <algorithm>
#include <cmath>
#include <queue>

#include "eddy/geometry.hpp"

namespace eddy {

namespace {

struct EdgeUse {
    std::uint64_t key;   // the edge's vertices, smaller first
    std::uint32_t cell;
    std::int8_t dir;     // +1 or -1
    bool operator<(const EdgeUse& o) const { return key != o.key ? key < o.key : cell < o.cell; }
};

template <int D>
double measure(const Mesh<D>& m, const std::array<std::uint32_t, D>& c) {
    if constexpr (D == 2) {
        return norm(m.vertices[c[1]] - m.vertices[c[0]]);
    } else {
        const Vec3 a = m.vertices[c[1]] - m.vertices[c[0]], b = m.vertices[c[2]] - m.vertices[c[0]];
        const double x = double(a[1]) * b[2] - double(a[2]) * b[1], y = double(a[2]) * b[0] - double(a[0]) * b[2],
                     z = double(a[0]) * b[1] - double(a[1]) * b[0];
        return 0.5 * std::sqrt(x * x + y * y + z * z);
    }
}

template <int D>
void edge_uses(const std::array<std::uint32_t, D>& c, std::uint32_t cell, std::vector<EdgeUse>& out) {
    if constexpr (D == 2) {
        out.push_back({c[0], cell, +1});
        out.push_back({c[1], cell, -1});
    } else {
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t a = c[k], b = c[(k + 1) % 3];
            out.push_back({(std::uint64_t(std::min(a, b)) << 32) | std::max(a, b), cell, std::int8_t(a < b ? 1 : -1)});
        }
    }
}

}  // namespace

template <int D>
MeshReport clean_mesh(Mesh<D>& m) {
    MeshReport rep;
    m.normals.clear();
    // Degenerate cells: repeated vertices, or a measure below 1e-12 of the box's size (a sliver that
    // rounding turned into a line).
    Vec<D> lo = Vec<D>::filled(1e30f), hi = Vec<D>::filled(-1e30f);
    for (const auto& v : m.vertices)
        for (int a = 0; a < D; ++a) {
            lo[a] = std::min(lo[a], v[a]);
            hi[a] = std::max(hi[a], v[a]);
        }
    const double size = m.vertices.empty() ? 0.0 : norm(hi - lo);
    const double tiny = 1e-12 * std::pow(size, D - 1);
    std::vector<std::array<std::uint32_t, D>> kept;
    kept.reserve(m.cells.size());
    for (const auto& c : m.cells) {
        bool repeated = false;
        for (int i = 0; i < D; ++i)
            for (int j = i + 1; j < D; ++j) repeated = repeated || c[i] == c[j];
        if (repeated || !(measure<D>(m, c) > tiny)) ++rep.degenerate;
        else kept.push_back(c);
    }
    m.cells = std::move(kept);
    const auto n = static_cast<std::uint32_t>(m.cells.size());
    rep.cells = n;
    if (n == 0) return rep;

    std::vector<EdgeUse> uses;
    uses.reserve(std::size_t(n) * D);
    for (std::uint32_t c = 0; c < n; ++c) edge_uses<D>(m.cells[c], c, uses);
    std::sort(uses.begin(), uses.end());
    // Manifold neighbours: (cell, other cell, their directions on the shared edge).
    std::vector<std::vector<std::array<std::uint32_t, 3>>> adj(n);  // {other, same_dir(0/1), unused}
    for (std::size_t i = 0; i < uses.size();) {
        std::size_t j = i;
        while (j < uses.size() && uses[j].key == uses[i].key) ++j;
        if (j - i == 1) ++rep.boundary_edges;
        else if (j - i > 2) ++rep.non_manifold_edges;
        else {
            const EdgeUse& a = uses[i];
            const EdgeUse& b = uses[i + 1];
            const std::uint32_t same = a.dir == b.dir ? 1 : 0;
            adj[a.cell].push_back({b.cell, same, 0});
            adj[b.cell].push_back({a.cell, same, 0});
        }
        i = j;
    }
    // Breadth-first orientation, component by component.
    std::vector<std::int8_t> flip(n, -1);  // -1: not visited
    std::vector<std::uint32_t> component(n, 0);
    std::vector<double> volume;
    std::queue<std::uint32_t> queue;
    for (std::uint32_t seed = 0; seed < n; ++seed) {
        if (flip[seed] >= 0) continue;
        const auto comp = static_cast<std::uint32_t>(volume.size());
        volume.push_back(0.0);
        flip[seed] = 0;
        queue.push(seed);
        while (!queue.empty()) {
            const std::uint32_t c = queue.front();
            queue.pop();
            component[c] = comp;
            for (const auto& e : adj[c]) {
                // Neighbours agree when their directions differ after flipping.
                const std::int8_t want = static_cast<std::int8_t>(e[1] ? !flip[c] : flip[c]);
                if (flip[e[0]] < 0) {
                    flip[e[0]] = want;
                    queue.push(e[0]);
                }
            }
        }
    }
    for (std::uint32_t c = 0; c < n; ++c)
        if (flip[c]) std::swap(m.cells[c][0], m.cells[c][1]);
    // Signed volume of each piece, about the piece's first vertex (no cancellation far from the origin).
    std::vector<Vec<D>> origin(volume.size(), Vec<D>::zero());
    std::vector<std::uint8_t> has_origin(volume.size(), 0);
    for (std::uint32_t c = 0; c < n; ++c) {
        const std::uint32_t k = component[c];
        if (!has_origin[k]) {
            origin[k] = m.vertices[m.cells[c][0]];
            has_origin[k] = 1;
        }
        const auto& cell = m.cells[c];
        if constexpr (D == 2) {
            const Vec2 a = m.vertices[cell[0]] - origin[k], b = m.vertices[cell[1]] - origin[k];
            volume[k] += 0.5 * (double(a[0]) * b[1] - double(a[1]) * b[0]);
        } else {
            const Vec3 a = m.vertices[cell[0]] - origin[k], b = m.vertices[cell[1]] - origin[k],
                       d = m.vertices[cell[2]] - origin[k];
            volume[k] += (double(a[0]) * (double(b[1]) * d[2] - double(b[2]) * d[1]) -
                          double(a[1]) * (double(b[0]) * d[2] - double(b[2]) * d[0]) +
                          double(a[2]) * (double(b[0]) * d[1] - double(b[1]) * d[0])) /
                         6.0;
        }
    }
    for (std::uint32_t c = 0; c < n; ++c) {
        const bool inward = volume[component[c]] < 0.0;
        if (inward) std::swap(m.cells[c][0], m.cells[c][1]);
        if (bool(flip[c]) != inward) ++rep.flipped;
    }
    rep.components = volume.size();
    return rep;
}

template MeshReport clean_mesh<2>(Mesh<2>&);
template MeshReport clean_mesh<3>(Mesh<3>&);

}  // namespace eddy
