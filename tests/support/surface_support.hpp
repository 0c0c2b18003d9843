// Helpers shared by the surface tests: dense test grids, lattice particle sets, mesh topology.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unistd.h>
#include <utility>
#include <vector>

#include "eddy/surface.hpp"

namespace eddy::test {

/// blocks^D blocks of B^D nodes at block coordinates 0..blocks-1; value f(node position).
template <int D, class F>
SparseGrid<D> box_grid(int blocks, int B, float voxel, F&& f) {
    SparseGrid<D> g;
    g.layout.voxel = voxel;
    g.layout.block = B;
    g.background = FLT_MAX;
    const int nb = D == 2 ? blocks * blocks : blocks * blocks * blocks;
    for (int k = 0; k < nb; ++k) {  // key order: x fastest
        std::array<int, D> c;
        int t = k;
        for (int a = 0; a < D; ++a) {
            c[a] = t % blocks;
            t /= blocks;
        }
        g.layout.coords.push_back(c);
    }
    g.layout.finalize();
    g.values.resize(std::size_t(nb) * g.layout.voxels_per_block());
    std::size_t i = 0;
    g.for_each_node([&](const std::array<int, D>& n, float) { g.values[i++] = f(g.position(n)); });
    return g;
}

template <int D, class F>
void for_each_node_mut(SparseGrid<D>& g, F&& f) {
    std::vector<std::array<int, D>> nodes;
    g.for_each_node([&](const std::array<int, D>& n, float) { nodes.push_back(n); });
    for (std::size_t i = 0; i < nodes.size(); ++i) f(nodes[i], g.values[i]);
}

inline SurfaceSettings sphere_settings() {
    SurfaceSettings s;
    s.particle_radius = 0.01f;
    return s;
}

/// Particles of radius r on a lattice of spacing 2r (as eddy's scenes build fluid), every lattice
/// point within R of the centre. Radius convention: the ball of radius R holds about
/// (4/3 pi R^3) / (2r)^3 particles, each standing for a cube of side 2r.
inline std::vector<Vec3> lattice_ball(float r, float R, Vec3 center) {
    std::vector<Vec3> p;
    const int n = static_cast<int>(std::ceil(R / (2 * r))) + 1;
    for (int k = -n; k <= n; ++k)
        for (int j = -n; j <= n; ++j)
            for (int i = -n; i <= n; ++i) {
                const Vec3 x{{2 * r * i, 2 * r * j, 2 * r * k}};
                if (norm(x) < R) p.push_back(center + x);
            }
    return p;
}
inline std::vector<Vec2> lattice_disc(float r, float R) {
    std::vector<Vec2> p;
    const int n = static_cast<int>(std::ceil(R / (2 * r))) + 1;
    for (int j = -n; j <= n; ++j)
        for (int i = -n; i <= n; ++i) {
            const Vec2 x{{2 * r * i, 2 * r * j}};
            if (norm(x) < R) p.push_back(x);
        }
    return p;
}

struct Topology {
    std::size_t vertices = 0, edges = 0, faces = 0;
    long euler = 0;
    std::size_t unmatched_directed_edges = 0;  ///< a->b without b->a: a hole or a flipped triangle
    std::size_t repeated_directed_edges = 0;   ///< a->b twice: non-manifold or flipped
    std::size_t degenerate_cells = 0;
    std::size_t non_manifold_vertices = 0;     ///< triangles around a vertex not one single fan (disc)
};

inline Topology topology(const Mesh<3>& m) {
    Topology t;
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> directed;
    for (const auto& c : m.cells) {
        if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) ++t.degenerate_cells;
        for (int k = 0; k < 3; ++k) ++directed[{c[k], c[(k + 1) % 3]}];
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> undirected;
    for (const auto& [e, n] : directed) {
        if (n > 1) ++t.repeated_directed_edges;
        if (!directed.count({e.second, e.first})) ++t.unmatched_directed_edges;
        undirected.insert({std::min(e.first, e.second), std::max(e.first, e.second)});
    }
    // Around each vertex, the edges opposite to it (b -> c for triangle v, b, c) must chain into one cycle.
    std::map<std::uint32_t, std::map<std::uint32_t, std::uint32_t>> ring;
    for (const auto& c : m.cells)
        for (int k = 0; k < 3; ++k) ring[c[k]][c[(k + 1) % 3]] = c[(k + 2) % 3];
    for (const auto& [v, next] : ring) {
        std::size_t steps = 0;
        std::uint32_t at = next.begin()->first;
        do {
            const auto it = next.find(at);
            if (it == next.end()) break;
            at = it->second;
            ++steps;
        } while (at != next.begin()->first && steps <= next.size());
        if (steps != next.size() || at != next.begin()->first) ++t.non_manifold_vertices;
    }
    std::set<std::uint32_t> used;
    for (const auto& c : m.cells) used.insert(c.begin(), c.end());
    t.vertices = used.size();
    t.edges = undirected.size();
    t.faces = m.cells.size();
    t.euler = long(t.vertices) - long(t.edges) + long(t.faces);
    return t;
}

}  // namespace eddy::test
