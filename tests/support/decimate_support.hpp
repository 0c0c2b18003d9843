// Helpers of the decimation tests: two-sided Hausdorff distance between triangle meshes (sampled), and
// lattice particle sets of a torus.
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "eddy/surface.hpp"

namespace eddy::test {

/// Closest distance from p to triangle abc (Ericson, Real-Time Collision Detection, 5.1.5).
inline float point_triangle_distance(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 ab = b - a, ac = c - a, ap = p - a;
    const float d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) return norm(p - a);
    const Vec3 bp = p - b;
    const float d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return norm(p - b);
    const float vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return norm(p - (a + ab * (d1 / (d1 - d3))));
    const Vec3 cp = p - c;
    const float d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return norm(p - c);
    const float vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return norm(p - (a + ac * (d2 / (d2 - d6))));
    const float va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
        return norm(p - (b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))));
    const float denom = 1.0f / (va + vb + vc);
    return norm(p - (a + ab * (vb * denom) + ac * (vc * denom)));
}

/// Distance queries to a triangle mesh through a uniform grid of the triangles' bounding boxes.
class TriangleGrid {
public:
    TriangleGrid(const Mesh<3>& m, float cell) : m_(m), cell_(cell) {
        for (std::size_t t = 0; t < m.cells.size(); ++t) {
            Vec3 lo = m.vertices[m.cells[t][0]], hi = lo;
            for (int k = 1; k < 3; ++k)
                for (int a = 0; a < 3; ++a) {
                    lo[a] = std::min(lo[a], m.vertices[m.cells[t][k]][a]);
                    hi[a] = std::max(hi[a], m.vertices[m.cells[t][k]][a]);
                }
            const auto l = coord(lo), h = coord(hi);
            for (int z = l[2]; z <= h[2]; ++z)
                for (int y = l[1]; y <= h[1]; ++y)
                    for (int x = l[0]; x <= h[0]; ++x) cells_[key({x, y, z})].push_back(std::uint32_t(t));
        }
    }
    /// Distance from p to the mesh (exact, by growing shells of cells until no nearer triangle can exist).
    float distance(const Vec3& p) const {
        const auto c = coord(p);
        float best = FLT_MAX;
        for (int ring = 0; ring < 1024; ++ring) {
            for (int z = c[2] - ring; z <= c[2] + ring; ++z)
                for (int y = c[1] - ring; y <= c[1] + ring; ++y)
                    for (int x = c[0] - ring; x <= c[0] + ring; ++x) {
                        if (std::max({std::abs(x - c[0]), std::abs(y - c[1]), std::abs(z - c[2])}) != ring) continue;
                        const auto it = cells_.find(key({x, y, z}));
                        if (it == cells_.end()) continue;
                        for (auto t : it->second) {
                            const auto& tri = m_.cells[t];
                            best = std::min(best, point_triangle_distance(p, m_.vertices[tri[0]], m_.vertices[tri[1]],
                                                                          m_.vertices[tri[2]]));
                        }
                    }
            if (best <= float(ring) * cell_) break;  // every unvisited cell is farther than ring cells
        }
        return best;
    }

private:
    std::array<int, 3> coord(const Vec3& p) const {
        return {int(std::floor(p[0] / cell_)), int(std::floor(p[1] / cell_)), int(std::floor(p[2] / cell_))};
    }
    static std::uint64_t key(const std::array<int, 3>& c) {
        std::uint64_t k = 0;
        for (int a = 0; a < 3; ++a) k |= (std::uint64_t(std::uint32_t(c[a] + (1 << 20))) & 0x1fffff) << (21 * a);
        return k;
    }
    const Mesh<3>& m_;
    float cell_;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> cells_;
};

/// The largest distance from points sampled on `from` (its vertices and, per triangle, the barycentric
/// points (i, j, k) / n with i + j + k = n) to the surface of `to`.
inline float one_sided_distance(const Mesh<3>& from, const Mesh<3>& to, float cell, int n = 4) {
    const TriangleGrid g(to, cell);
    float worst = 0.0f;
    for (const auto& t : from.cells)
        for (int i = 0; i <= n; ++i)
            for (int j = 0; i + j <= n; ++j) {
                const int k = n - i - j;
                const Vec3 p = (from.vertices[t[0]] * float(i) + from.vertices[t[1]] * float(j) + from.vertices[t[2]] * float(k)) *
                               (1.0f / float(n));
                worst = std::max(worst, g.distance(p));
            }
    return worst;
}

/// Two-sided (symmetric) Hausdorff distance, sampled as one_sided_distance both ways.
inline float hausdorff(const Mesh<3>& a, const Mesh<3>& b, float cell, int n = 4) {
    return std::max(one_sided_distance(a, b, cell, n), one_sided_distance(b, a, cell, n));
}

/// Particles of radius r on a lattice of spacing 2r inside the torus of radii R (ring) and a (tube)
/// around the z axis through `center`.
inline std::vector<Vec3> lattice_torus(float r, float R, float a, Vec3 center) {
    std::vector<Vec3> p;
    const int n = static_cast<int>(std::ceil((R + a) / (2 * r))) + 1, nz = static_cast<int>(std::ceil(a / (2 * r))) + 1;
    for (int k = -nz; k <= nz; ++k)
        for (int j = -n; j <= n; ++j)
            for (int i = -n; i <= n; ++i) {
                const Vec3 x{{2 * r * i, 2 * r * j, 2 * r * k}};
                const float ring = std::sqrt(x[0] * x[0] + x[1] * x[1]) - R;
                if (ring * ring + x[2] * x[2] < a * a) p.push_back(center + x);
            }
    return p;
}

}  // namespace eddy::test
