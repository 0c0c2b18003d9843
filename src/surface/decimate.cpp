// decimate: edge-collapse decimation of closed surfaces (issue 32 part 2) by meshoptimizer's simplifier
// (meshopt_simplify: Garland & Heckbert 1997 quadric error metric, collapses onto existing vertices),
// with the closed-manifold and distance guarantees checked after it.
//
// meshoptimizer does not check the link condition of a collapse, so on thin parts of a fluid surface
// (sheets, necks) it now and then makes a non-manifold edge or vertex (measured: a dam break frame at
// 1 voxel, or at ratio 0.1). Instead of giving up on the whole mesh, the input's triangles around each
// defect are frozen (kept as they were) and the rest is decimated again with the frozen triangles'
// border locked (meshopt_SimplifyLockBorder: the border of a part of a larger mesh, its documented use),
// until the result passes: the defects end up inside small patches at the original resolution.
//
// The surface is decimated in patches (cubes of DecimateSettings::patch_edges mean edges), each on its own
// and in parallel with the band along its seams held, then the seams in one pass checked against the
// original input: a failing place costs a round of its patch, not of the whole mesh (issue 42).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <iterator>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>

#ifdef EDDY_HAVE_MESHOPTIMIZER
#include <meshoptimizer.h>
#endif

#include "eddy/error.hpp"
#include "eddy/surface.hpp"

namespace eddy {
namespace {

#ifdef EDDY_HAVE_MESHOPTIMIZER
using Tri = std::array<std::uint32_t, 3>;

// meshoptimizer bounds a collapse by its quadric error, the area-weighted mean squared distance to the
// planes of the triangles merged into a vertex, not the largest distance. It is asked for this share of
// max_error at first (halved while the distance check fails widely); the sampled distance decides.
constexpr float kErrorShare = 0.5f;
// The samples are held to this share of max_error: between them the distance can be a little larger
// (a denser independent sampling found up to 10% more on a dam break frame at 0.1 voxel).
constexpr float kSampleMargin = 0.85f;

// Keys (high word, low word) already in ascending order of their low words, sorted by their high words:
// least significant 11 bits first, each pass stable, so ties keep their low words' order and the result is
// the keys' full 64-bit order (what std::sort gives) in O(n), passes only over the bits the high words use.
void sort_by_high_word(std::vector<std::uint64_t>& keys) {
    constexpr int kBits = 11;
    constexpr std::uint64_t kMask = (std::uint64_t(1) << kBits) - 1;
    std::uint64_t used = 0;
    for (const std::uint64_t k : keys) used |= k >> 32;
    std::vector<std::uint64_t> out(used != 0 ? keys.size() : 0);
    std::vector<std::size_t> start;
    for (int shift = 32; (used >> (shift - 32)) != 0; shift += kBits) {
        start.assign((std::size_t(1) << kBits) + 1, 0);
        for (const std::uint64_t k : keys) ++start[((k >> shift) & kMask) + 1];
        std::partial_sum(start.begin(), start.end(), start.begin());
        for (const std::uint64_t k : keys) out[start[(k >> shift) & kMask]++] = k;
        keys.swap(out);
    }
}

// Triangles by the cells of side `cell` their bounding boxes overlap (a uniform grid over their bounding box):
// one sorted array of (cell, triangle) and an open-addressing table from a cell to its run, so a query
// reads each cell with one probe or two. Counted and filled in parallel on fixed blocks, sorted by radix
// (sort_by_high_word): the same arrays on any thread count. Exact distances: the answers do not depend on the cells.
class TriangleGrid {
public:
    TriangleGrid(const std::vector<Vec3>& xyz, const std::vector<Tri>& tris, float cell, const ExecContext& exec)
        : xyz_(xyz), tris_(tris), cell_(cell) {
        if (tris.empty()) return;
        Vec3 lo = xyz[tris[0][0]], hi = lo;
        for (const auto& t : tris)
            for (auto v : t)
                for (int a = 0; a < 3; ++a) {
                    lo[a] = std::min(lo[a], xyz[v][a]);
                    hi[a] = std::max(hi[a], xyz[v][a]);
                }
        // Cell indices fit 32 bits (a sorted entry is cell << 32 | triangle): a grid too fine for that
        // gets coarser cells, which costs speed only.
        for (;;) {
            std::uint64_t cells = 1;
            for (int a = 0; a < 3; ++a) {
                dims_[a] = int(std::floor((hi[a] - lo[a]) / cell_)) + 1;
                cells *= std::uint64_t(dims_[a]);
            }
            if (cells < (std::uint64_t(1) << 31)) break;
            cell_ *= 2.0f;
        }
        lo_ = lo;
        const std::size_t n = tris.size();
        std::vector<std::uint32_t> first(n + 1, 0);
        parallel_blocks(exec, n, [&](std::size_t b0, std::size_t b1) {
            for (std::size_t t = b0; t < b1; ++t) {
                const auto [l, h] = box(t);
                first[t + 1] = std::uint32_t((h[0] - l[0] + 1) * (h[1] - l[1] + 1) * (h[2] - l[2] + 1));
            }
        });
        std::partial_sum(first.begin(), first.end(), first.begin());
        entries_.resize(first[n]);
        parallel_blocks(exec, n, [&](std::size_t b0, std::size_t b1) {
            for (std::size_t t = b0; t < b1; ++t) {
                const auto [l, h] = box(t);
                std::uint64_t* e = &entries_[first[t]];
                for (int z = l[2]; z <= h[2]; ++z)
                    for (int y = l[1]; y <= h[1]; ++y)
                        for (int x = l[0]; x <= h[0]; ++x) *e++ = (std::uint64_t(index(x, y, z)) << 32) | std::uint64_t(t);
            }
        });
        sort_by_high_word(entries_);  // written in triangle order
        // The table: each occupied cell's first entry, by linear probing from a hash of the cell.
        std::size_t runs = 0;
        for (std::size_t i = 0; i < entries_.size(); ++i) runs += (i == 0 || (entries_[i] >> 32) != (entries_[i - 1] >> 32));
        std::size_t cap = 16;
        while (cap < 2 * runs) cap *= 2;
        mask_ = cap - 1;
        slots_.assign(cap, Slot{kEmpty, 0});
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            const std::uint32_t c = std::uint32_t(entries_[i] >> 32);
            if (i > 0 && std::uint32_t(entries_[i - 1] >> 32) == c) continue;
            std::size_t k = hash(c);
            while (slots_[k].cell != kEmpty) k = (k + 1) & mask_;
            slots_[k] = Slot{c, std::uint32_t(i)};
        }
    }
    /// Whether p lies within `limit` of a triangle (exact distances; stops at the first one close enough).
    /// `hint`: a triangle to try first (a nearby sample's), set to the one found; the answer is the same.
    bool within(const Vec3& p, float limit, std::uint32_t* hint = nullptr) const {
        if (entries_.empty()) return false;
        if (hint && *hint < tris_.size()) {
            const Tri& t = tris_[*hint];
            if (point_triangle(p, xyz_[t[0]], xyz_[t[1]], xyz_[t[2]]) <= limit) return true;
        }
        std::array<int, 3> c;
        for (int a = 0; a < 3; ++a) c[a] = int(std::floor((p[a] - lo_[a]) / cell_));
        const int rings = int(std::ceil(limit / cell_)) + 1;
        float best = FLT_MAX;
        for (int ring = 0; ring <= rings; ++ring) {
            for (int z = c[2] - ring; z <= c[2] + ring; ++z) {
                if (z < 0 || z >= dims_[2]) continue;
                for (int y = c[1] - ring; y <= c[1] + ring; ++y) {
                    if (y < 0 || y >= dims_[1]) continue;
                    const bool face = std::abs(z - c[2]) == ring || std::abs(y - c[1]) == ring;
                    for (int x = c[0] - ring; x <= c[0] + ring; x += (face || ring == 0) ? 1 : 2 * ring) {
                        if (x < 0 || x >= dims_[0]) continue;
                        const std::uint32_t cell = index(x, y, z);
                        for (std::size_t i = find(cell); i < entries_.size() && std::uint32_t(entries_[i] >> 32) == cell; ++i) {
                            const std::uint32_t ti = std::uint32_t(entries_[i]);
                            const Tri& t = tris_[ti];
                            // The triangle's box first: beyond the limit by a margin, the triangle is too (the
                            // answer is the exact test's); its gap, a lower bound, still ends the rings early.
                            const float gap = box_gap(p, xyz_[t[0]], xyz_[t[1]], xyz_[t[2]]);
                            if (gap > 1.01f * limit) {
                                best = std::min(best, gap);
                                continue;
                            }
                            best = std::min(best, point_triangle(p, xyz_[t[0]], xyz_[t[1]], xyz_[t[2]]));
                            if (best <= limit) {
                                if (hint) *hint = ti;
                                return true;
                            }
                        }
                    }
                }
            }
            if (best <= float(ring) * cell_) break;  // every cell not visited yet is farther
        }
        return best <= limit;
    }
    /// Triangle i of the set the grid was built on (within's hint indexes these).
    const Tri& triangle(std::uint32_t i) const { return tris_[i]; }

private:
    struct Slot {
        std::uint32_t cell, first;
    };
    static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
    std::size_t hash(std::uint32_t c) const { return std::size_t((std::uint64_t(c) * 0x9E3779B97F4A7C15ull) >> 20) & mask_; }
    // The first entry of `cell`, or past the end when it has none.
    std::size_t find(std::uint32_t cell) const {
        for (std::size_t k = hash(cell);; k = (k + 1) & mask_) {
            if (slots_[k].cell == cell) return slots_[k].first;
            if (slots_[k].cell == kEmpty) return entries_.size();
        }
    }
    std::uint32_t index(int x, int y, int z) const {
        return std::uint32_t((std::uint64_t(z) * std::uint64_t(dims_[1]) + std::uint64_t(y)) * std::uint64_t(dims_[0]) + std::uint64_t(x));
    }
    // The cells triangle t's bounding box overlaps, lowest and highest.
    std::pair<std::array<int, 3>, std::array<int, 3>> box(std::size_t t) const {
        std::array<int, 3> l, h;
        for (int a = 0; a < 3; ++a) {
            float mn = xyz_[tris_[t][0]][a], mx = mn;
            for (int k = 1; k < 3; ++k) {
                mn = std::min(mn, xyz_[tris_[t][k]][a]);
                mx = std::max(mx, xyz_[tris_[t][k]][a]);
            }
            l[a] = std::clamp(int(std::floor((mn - lo_[a]) / cell_)), 0, dims_[a] - 1);
            h[a] = std::clamp(int(std::floor((mx - lo_[a]) / cell_)), 0, dims_[a] - 1);
        }
        return {l, h};
    }
    // Distance from p to the box around a, b, c: at most the distance to the triangle.
    static float box_gap(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
        float g2 = 0.0f;
        for (int k = 0; k < 3; ++k) {
            const float lo = std::min(a[k], std::min(b[k], c[k])), hi = std::max(a[k], std::max(b[k], c[k]));
            const float d = std::max(lo - p[k], std::max(p[k] - hi, 0.0f));
            g2 += d * d;
        }
        return std::sqrt(g2);
    }
    // Closest point on a triangle (Ericson, Real-Time Collision Detection, 5.1.5), its distance.
    static float point_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
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
    const std::vector<Vec3>& xyz_;
    const std::vector<Tri>& tris_;
    float cell_;
    Vec3 lo_{};
    std::array<int, 3> dims_{1, 1, 1};
    std::vector<std::uint64_t> entries_;  // cell << 32 | triangle, sorted
    std::vector<Slot> slots_;
    std::size_t mask_ = 0;
};


float mean_edge(const std::vector<Vec3>& xyz, const std::vector<Tri>& tris) {
    double sum = 0.0;
    for (const auto& t : tris)
        for (int k = 0; k < 3; ++k) sum += norm(xyz[t[k]] - xyz[t[(k + 1) % 3]]);
    return tris.empty() ? 0.0f : float(sum / double(3 * tris.size()));
}

// A triangle by its three vertices (their indices in the whole mesh), as a key.
struct TriHash {
    std::size_t operator()(const Tri& t) const {
        std::uint64_t h = t[0];
        h = h * 0x9E3779B97F4A7C15ull ^ t[1];
        h = h * 0x9E3779B97F4A7C15ull ^ t[2];
        return std::size_t(h ^ (h >> 29));
    }
};
using TriSet = std::unordered_set<Tri, TriHash>;

// A triangle before whose four samples (centroid, edge midpoints) each lay within the limit of these
// result triangles (the whole mesh's indices), in an earlier round of the same part.
struct Cover {
    std::array<Tri, 4> near;
    bool known = false;
};

// What the earlier rounds of one part's distance check found (issue 42). A round decimates the whole part
// again to mend a few places, and about half of its triangles come out as they were (the same three
// vertices). A result triangle whose inner points all lay near the input lies near it again (the input is the
// same in every round, the samples and their exact distances too), so it is not sampled again; a triangle
// before whose samples each lay within the limit of a result triangle still in the new result lies within it
// again, so it is not measured again (Cover). Every answer, and so the failing samples and their order, is
// the full check's.
struct CheckMemo {
    TriSet passed;              // result triangles (the whole mesh's indices) whose inner points all passed
    std::vector<Cover> covers;  // the seams' check: its input's triangles' (a part's own: in its rounds, RoundPart)
};

// Triangle t (on local vertices) in the whole mesh's indices (`g`: local -> whole; nullptr: the same).
Tri whole_tri(const Tri& t, const std::uint32_t* g) { return g ? Tri{g[t[0]], g[t[1]], g[t[2]]} : t; }

// Samples 0..n-1 in parallel on fixed blocks, one(i, out, hint) appending the failing ones; each block's
// failures gathered in block order.
template <class One>
void far_samples(std::size_t n, const ExecContext& exec, std::vector<std::pair<Vec3, float>>& fails, One&& one) {
    constexpr std::size_t kB = 1024;
    std::vector<std::vector<Vec3>> out((n + kB - 1) / kB);
    parallel_blocks(exec, n, [&](std::size_t b0, std::size_t e0) {
        std::uint32_t near = ~std::uint32_t{0};  // the last sample's triangle, tried first (within's hint)
        for (std::size_t i = b0; i < e0; ++i) one(i, out[b0 / kB], near);
    }, kB);
    for (const auto& o : out)
        for (const auto& x : o) fails.emplace_back(x, 0.0f);
}

// An earlier round's covers of a triangle before, all still in the result `now` (sorted)?
bool still_covered(const Cover& c, const std::vector<Tri>& now) {
    if (!c.known) return false;
    for (int k = 0; k < 4; ++k)
        if ((k == 0 || c.near[k] != c.near[k - 1]) && !std::binary_search(now.begin(), now.end(), c.near[k])) return false;
    return true;
}

// What a check remembers of the triangles before (CheckMemo): their covers (none: nothing remembered) by a's
// triangles' indices there (`cells`), the result's triangles in the whole mesh's indices (`now`, sorted) and
// the part's vertices' (`g`).
struct CoverMemo {
    std::vector<Cover>* covers = nullptr;
    const std::uint32_t* cells = nullptr;
    std::vector<Tri> now;
    const std::uint32_t* g = nullptr;
};

// The memo of a check whose result is `result` (on local vertices, `g`: local -> whole); `covers` grows to
// the largest of `cells` (increasing).
CoverMemo cover_memo(std::vector<Cover>& covers, const std::vector<std::uint32_t>& cells, const std::vector<Tri>& result,
                     const std::uint32_t* g) {
    if (!cells.empty() && covers.size() <= cells.back()) covers.resize(std::size_t(cells.back()) + 1);
    CoverMemo m{&covers, cells.data(), {}, g};
    m.now.reserve(result.size());
    for (const auto& t : result) m.now.push_back(whole_tri(t, g));
    std::sort(m.now.begin(), m.now.end());
    return m;
}

// The centroid and the edge midpoints of triangle (p0, p1, p2), in that order, against `to`: the first one
// farther than `limit` into `out` (false), or, all within, the result triangles they lay near into `found`.
bool samples_near(const Vec3& p0, const Vec3& p1, const Vec3& p2, const TriangleGrid& to, float limit,
                  std::uint32_t& near, std::vector<Vec3>& out, std::array<Tri, 4>& found, const std::uint32_t* g) {
    const Vec3 p[3] = {p0, p1, p2};
    for (int k = -1; k < 3; ++k) {
        const Vec3 x = k < 0 ? (p0 + p1 + p2) * (1.0f / 3.0f) : (p[k] + p[(k + 1) % 3]) * 0.5f;
        if (!to.within(x, limit, &near)) return out.push_back(x), false;
        found[k + 1] = whole_tri(to.triangle(near), g);
    }
    return true;
}

// The vertices `dropped` and the centroids and edge midpoints of triangles `a` farther than `limit` from
// the set behind `to` (one failing sample per triangle at most). With a memo, a's triangles whose samples lay
// near result triangles still in the result are not measured again, and the covers of those measured are kept.
void points_far(const std::vector<Vec3>& xyz, const std::vector<std::uint32_t>& dropped, const std::vector<Tri>& a,
                const TriangleGrid& to, float limit, std::vector<std::pair<Vec3, float>>& fails, const ExecContext& exec,
                const CoverMemo& memo = {}) {
    far_samples(dropped.size(), exec, fails, [&](std::size_t i, std::vector<Vec3>& out, std::uint32_t& near) {
        if (!to.within(xyz[dropped[i]], limit, &near)) out.push_back(xyz[dropped[i]]);
    });
    far_samples(a.size(), exec, fails, [&](std::size_t i, std::vector<Vec3>& out, std::uint32_t& near) {
        Cover* cover = memo.covers ? &(*memo.covers)[memo.cells[i]] : nullptr;  // a's triangle i's alone: no race
        if (cover && still_covered(*cover, memo.now)) return;
        Cover found;
        found.known = samples_near(xyz[a[i][0]], xyz[a[i][1]], xyz[a[i][2]], to, limit, near, out, found.near, memo.g);
        if (cover) *cover = found;
    });
}

// Whether the points (i, j, k) / n, i + j + k = n, of triangle t (n such that they lie no farther apart than
// `edge_to`, the other set's mean edge; at most 16) all lie within `limit` of the set behind `to`; the first
// one that does not into `out`.
bool inner_points_near(const std::vector<Vec3>& xyz, const Tri& t, const TriangleGrid& to, float edge_to, float limit,
                       std::uint32_t& near, std::vector<Vec3>& out) {
    float longest = 0.0f;
    for (int k = 0; k < 3; ++k) longest = std::max(longest, norm(xyz[t[k]] - xyz[t[(k + 1) % 3]]));
    const int n = std::clamp(int(std::ceil(longest / std::max(edge_to, 1e-30f))), 2, 16);
    for (int i = 0; i <= n; ++i)
        for (int j = 0; i + j <= n; ++j) {
            const int k = n - i - j;
            if (i == n || j == n || k == n) continue;  // a corner: a vertex of the other set
            const Vec3 p = (xyz[t[0]] * float(i) + xyz[t[1]] * float(j) + xyz[t[2]] * float(k)) * (1.0f / float(n));
            if (!to.within(p, limit, &near)) return out.push_back(p), false;  // one per triangle is enough
        }
    return true;
}

// The inner points of triangles `b` farther than `limit` from the set behind `to` (inner_points_near), one per
// triangle at most. With a memo (`g`: b's local vertices -> the whole mesh's; the set behind `to` the same in
// every round), the triangles whose inner points all passed before are not sampled again, and those that pass
// are remembered.
void inner_points_far(const std::vector<Vec3>& xyz, const std::vector<Tri>& b, const TriangleGrid& to, float edge_to,
                      float limit, std::vector<std::pair<Vec3, float>>& fails, const ExecContext& exec,
                      CheckMemo* memo = nullptr, const std::uint32_t* g = nullptr) {
    std::vector<std::uint8_t> ok(b.size(), 0);
    far_samples(b.size(), exec, fails, [&](std::size_t ti, std::vector<Vec3>& out, std::uint32_t& near) {
        if (memo && memo->passed.count(whole_tri(b[ti], g))) return;
        ok[ti] = inner_points_near(xyz, b[ti], to, edge_to, limit, near, out);
    });
    for (std::size_t ti = 0; memo && ti < b.size(); ++ti)
        if (ok[ti]) memo->passed.insert(whole_tri(b[ti], g));
}

// One round's part, as simplify_unfrozen makes it and its distance check reads it: its own vertices (xyz;
// `global`: their indices in the mesh) and triangles before (`before`: the mesh's triangles `cells`), and the
// covers of the mesh's triangles from the part's earlier rounds (Cover, by index in the mesh).
struct RoundPart {
    std::vector<std::uint32_t> global, cells;
    std::vector<Vec3> xyz;
    std::vector<Tri> before;
    std::vector<Cover> covers;
};

// Where a part of a mesh before (r.before) and after (`b`, on the same vertices r.xyz) is farther than `limit`
// from the other, sampled (each sample's distance to the other set is exact): the vertices before that `b`
// dropped and the centroids and edge midpoints of the triangles before, against `b`; the inner points of b's
// triangles against the whole mesh before (`input`, its grid built once; `edge`: its mean edge). Appends each
// failing sample (one per triangle at most; the radius is the caller's to set). `memo` and r's covers: what
// the earlier rounds of the same part found (CheckMemo).
void distance_failures(RoundPart& r, const std::vector<Tri>& b, const TriangleGrid& input, float edge, float limit,
                       CheckMemo& memo, std::vector<std::pair<Vec3, float>>& fails, const ExecContext& exec) {
    {
        const TriangleGrid to_b(r.xyz, b, std::max(limit, mean_edge(r.xyz, b)), exec);
        std::vector<std::uint8_t> seen(r.xyz.size(), 0);
        for (const auto& t : b)
            for (auto v : t) seen[v] = 1;  // b's vertices are a's: distance 0
        std::vector<std::uint32_t> dropped;
        for (const auto& t : r.before)
            for (auto v : t)
                if (!seen[v]) {
                    seen[v] = 1;
                    dropped.push_back(v);
                }
        points_far(r.xyz, dropped, r.before, to_b, limit, fails, exec, cover_memo(r.covers, r.cells, b, r.global.data()));
    }
    inner_points_far(r.xyz, b, input, edge, limit, fails, exec, &memo, r.global.data());
}

// Vertices where a triangle set is not closed, manifold and consistently oriented: those of degenerate
// triangles, of directed edges a -> b that occur twice or lack their twin b -> a, and vertices whose
// triangles do not form one single fan (a disc). `nv`: size of the index space. Sorted, unique.
//
// The edges need no check of their own: the fan test finds both ends of such an edge. Around v, its
// triangles (v, b, c) give the pairs (b, c): b an edge v -> b leaving v, c one c -> v arriving. One cycle
// through all pairs (b -> the pair whose first is c) makes c -> first a permutation: the firsts distinct
// (no edge v -> b twice) and the arriving ends the leaving ones (every v -> b has its twin b -> v, every
// c -> v its twin v -> c). So an edge a -> b twice or without its twin fails the fans of a and of b.
std::vector<std::uint32_t> defect_vertices(const std::vector<Tri>& tris, std::size_t nv) {
    std::vector<std::uint32_t> bad;
    for (const auto& t : tris)
        if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) bad.insert(bad.end(), t.begin(), t.end());
    // Around v, the opposite edges b -> c of its triangles (v, b, c) must form one cycle.
    std::vector<std::uint32_t> start(nv + 1, 0);
    for (const auto& t : tris)
        for (int k = 0; k < 3; ++k) ++start[t[k] + 1];
    for (std::size_t i = 0; i < nv; ++i) start[i + 1] += start[i];
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ring(start[nv]);
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (const auto& t : tris)
        for (int k = 0; k < 3; ++k) ring[fill[t[k]]++] = {t[(k + 1) % 3], t[(k + 2) % 3]};
    for (std::size_t v = 0; v < nv; ++v) {
        const auto b = ring.begin() + start[v], e = ring.begin() + start[v + 1];
        if (b == e) continue;
        std::sort(b, e);
        std::size_t steps = 0;
        std::uint32_t at = b->first;
        bool ok = true;
        do {
            const auto it = std::lower_bound(b, e, std::make_pair(at, 0u));
            if (it == e || it->first != at) {
                ok = false;
                break;
            }
            at = it->second;
            ++steps;
        } while (at != b->first && steps <= std::size_t(e - b));
        if (!ok || steps != std::size_t(e - b) || at != b->first) bad.push_back(std::uint32_t(v));
    }
    std::sort(bad.begin(), bad.end());
    bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
    return bad;
}

// V - E + F of a triangle set per piece (piece[global[v]] of its vertices v), added into `chi` (indexed by
// piece); `nv`: size of the set's index space.
void add_euler(const std::vector<Tri>& tris, std::size_t nv, const std::vector<std::uint32_t>& global,
               const std::vector<std::uint32_t>& piece, std::vector<long>& chi) {
    // Each edge {a, b} counted once, at its smaller end a: the larger ends bucketed by a (counted, filled),
    // each bucket's distinct ones counted (small sorts instead of one over all edges).
    std::vector<std::uint32_t> start(nv + 1, 0);
    std::vector<std::uint8_t> used(nv, 0);
    for (const auto& t : tris) {
        chi[piece[global[t[0]]]] += 1;
        for (int k = 0; k < 3; ++k) {
            used[t[k]] = 1;
            ++start[std::min(t[k], t[(k + 1) % 3]) + 1];
        }
    }
    for (std::size_t v = 0; v < nv; ++v) {
        chi[piece[global[v]]] += used[v];
        start[v + 1] += start[v];
    }
    std::vector<std::uint32_t> larger(start[nv]), fill(start.begin(), start.end() - 1);
    for (const auto& t : tris)
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t a = t[k], b = t[(k + 1) % 3];
            larger[fill[std::min(a, b)]++] = std::max(a, b);
        }
    for (std::size_t v = 0; v < nv; ++v) {
        const auto b = larger.begin() + start[v], e = larger.begin() + start[v + 1];
        if (b == e) continue;
        std::sort(b, e);
        chi[piece[global[v]]] -= long(std::unique(b, e) - b);
    }
}

// The pieces (sorted) whose Euler characteristic differs between the triangle sets `a` (before) and `b`
// (after) on the same `nv` vertices (`global`: their indices in the mesh the pieces are of).
std::vector<std::uint32_t> changed_pieces(const std::vector<Tri>& a, const std::vector<Tri>& b, std::size_t nv,
                                          const std::vector<std::uint32_t>& global, const std::vector<std::uint32_t>& piece) {
    std::vector<long> chi_a(piece.size(), 0), chi_b(piece.size(), 0);
    add_euler(a, nv, global, piece, chi_a);
    add_euler(b, nv, global, piece, chi_b);
    std::vector<std::uint32_t> changed;
    std::vector<std::uint8_t> seen(piece.size(), 0);
    for (const auto& t : a) {
        const std::uint32_t p = piece[global[t[0]]];
        if (!seen[p] && chi_a[p] != chi_b[p]) changed.push_back(p);
        seen[p] = 1;
    }
    std::sort(changed.begin(), changed.end());
    return changed;
}

// Marks every triangle with a vertex within a sphere (centre, radius) of `spheres`. The spheres are hashed
// into every cell (of three times their mean radius, at least a sixteenth of the largest) their bounding box
// overlaps, so that a vertex reads its own cell only: a few large spheres (a decimated part's triangles'
// reach) neither make every cell large nor every vertex test them all. (Cells of the mean radius put a sphere
// in up to 27 of them: the seams' 10^5 spheres a round made an index whose sort was two thirds of the time;
// at three times, a sphere is in one to eight and a vertex tests a few more; the marks are exact either way.)
// Only the triangles' own vertices are tested: a part's mesh carries the whole input's vertices.
void mark_near(const Mesh<3>& m, const std::vector<std::pair<Vec3, float>>& spheres, std::vector<std::uint8_t>& mark) {
    if (spheres.empty()) return;
    double mean = 0.0;
    float largest = 0.0f;
    for (const auto& sp : spheres) {
        mean += sp.second;
        largest = std::max(largest, sp.second);
    }
    const float cell = std::max({3.0f * float(mean / double(spheres.size())), largest / 16.0f, 1e-30f});
    auto coord = [&](float x) { return int(std::floor(x / cell)); };
    auto key = [](int x, int y, int z) {
        const int c[3] = {x, y, z};
        std::uint64_t k = 0;
        for (int a = 0; a < 3; ++a) k |= (std::uint64_t(std::uint32_t(c[a] + (1 << 20))) & 0x1fffff) << (21 * a);
        return k;
    };
    std::vector<std::pair<std::uint64_t, std::uint32_t>> index;
    for (std::size_t i = 0; i < spheres.size(); ++i) {
        const Vec3& c = spheres[i].first;
        const float r = spheres[i].second;
        for (int z = coord(c[2] - r); z <= coord(c[2] + r); ++z)
            for (int y = coord(c[1] - r); y <= coord(c[1] + r); ++y)
                for (int x = coord(c[0] - r); x <= coord(c[0] + r); ++x) index.emplace_back(key(x, y, z), std::uint32_t(i));
    }
    std::sort(index.begin(), index.end());
    auto is_near = [&](const Vec3& x) {
        const std::uint64_t k = key(coord(x[0]), coord(x[1]), coord(x[2]));
        for (auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(k, 0u)); it != index.end() && it->first == k;
             ++it) {
            const auto& sp = spheres[it->second];
            if (norm(x - sp.first) <= sp.second) return true;
        }
        return false;
    };
    std::vector<std::uint8_t> near(m.vertices.size(), 0);  // 0: not yet tested, 1: near, 2: not
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
        bool any = false;
        for (auto v : m.cells[c]) {
            if (!near[v]) near[v] = is_near(m.vertices[v]) ? 1 : 2;
            any |= near[v] == 1;
        }
        if (any) mark[c] = 1;
    }
}

// Connected pieces of the triangles (union-find over their vertices): a piece index per vertex.
std::vector<std::uint32_t> pieces_of(const Mesh<3>& m) {
    std::vector<std::uint32_t> parent(m.vertices.size());
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](std::uint32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    };
    for (const auto& c : m.cells)
        for (int k = 1; k < 3; ++k) {
            const std::uint32_t a = find(c[0]), b = find(c[k]);
            if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }
    for (std::size_t v = 0; v < parent.size(); ++v) parent[v] = find(std::uint32_t(v));
    return parent;
}

// The triangles `cells` of m on their own vertices: `verts` (increasing) holds each one's index in m.
Mesh<3> part_of(const Mesh<3>& m, const std::vector<std::uint32_t>& cells, std::vector<std::uint32_t>& verts) {
    constexpr std::uint32_t kUnused = ~std::uint32_t{0};
    std::vector<std::uint32_t> place(m.vertices.size(), kUnused);  // m's vertex -> its index in the part
    for (auto c : cells)
        for (auto v : m.cells[c]) place[v] = 0;
    verts.clear();
    for (std::size_t v = 0; v < place.size(); ++v)
        if (place[v] != kUnused) {
            place[v] = std::uint32_t(verts.size());
            verts.push_back(std::uint32_t(v));
        }
    Mesh<3> part;
    part.vertices.reserve(verts.size());
    for (auto v : verts) part.vertices.push_back(m.vertices[v]);
    part.cells.reserve(cells.size());
    for (auto c : cells) part.cells.push_back({place[m.cells[c][0]], place[m.cells[c][1]], place[m.cells[c][2]]});
    return part;
}

// One meshopt_simplify pass over the triangles not frozen, on their own vertices (meshoptimizer's
// relative error is relative to their extent), with their border locked: the border of the holes the
// frozen triangles leave, and an open mesh's own. Returns the triangles (on the part's own vertices, p.xyz).
std::vector<Tri> simplify_unfrozen(const Mesh<3>& m, const std::vector<std::uint8_t>& frozen, const DecimateSettings& s,
                                   std::size_t whole_count, float share, RoundPart& p) {
    // The unfrozen triangles (p.cells: their indices in m) on their own vertices (p.global: their indices in m).
    p.cells.clear();
    for (std::size_t c = 0; c < m.cells.size(); ++c)
        if (!frozen[c]) p.cells.push_back(std::uint32_t(c));
    Mesh<3> part = part_of(m, p.cells, p.global);
    p.xyz = std::move(part.vertices);
    p.before = std::move(part.cells);
    if (p.before.empty()) return {};
    std::vector<unsigned int> in(p.before.size() * 3), out(in.size());
    for (std::size_t t = 0; t < p.before.size(); ++t)
        for (int k = 0; k < 3; ++k) in[3 * t + k] = p.before[t][k];
    static_assert(sizeof(Vec3) == 3 * sizeof(float));
    const float* flat = &p.xyz[0][0];
    const float scale = meshopt_simplifyScale(flat, p.xyz.size(), sizeof(Vec3));  // absolute error / scale = relative
    // The count target of the whole mesh, less the frozen triangles, and never below the ratio of the
    // unfrozen ones: frozen patches that ate the budget left a target of 0, meshoptimizer's "as few as
    // you can", which closed the rest's handles and froze it whole (a dam break frame at ratio 0.1 came
    // back undecimated).
    const std::size_t whole = std::size_t(double(s.target_ratio) * double(whole_count)), kept = m.cells.size() - p.before.size();
    const std::size_t own = std::size_t(double(s.target_ratio) * double(p.before.size()));
    const std::size_t target = s.target_ratio > 0.0f ? std::min(std::max(whole > kept ? whole - kept : 0, own), p.before.size()) * 3 : 0;
    const float error = s.max_error > 0.0f && scale > 0.0f ? share * s.max_error / scale : FLT_MAX;
    const std::size_t got = meshopt_simplify(out.data(), in.data(), in.size(), flat, p.xyz.size(), sizeof(Vec3), target,
                                             error, meshopt_SimplifyLockBorder, nullptr);
    std::vector<Tri> tris(got / 3);
    for (std::size_t t = 0; t < tris.size(); ++t) tris[t] = {out[3 * t], out[3 * t + 1], out[3 * t + 2]};
    return tris;  // local indices
}
// A round's distance check: the round's part (RoundPart) and its triangles after (on the part's vertices), and
// the whole result on the mesh's vertices (all: the decimated ones first); appends the failing samples.
using DistanceCheck = std::function<void(RoundPart&, const std::vector<Tri>&, const std::vector<Tri>&,
                                         std::vector<std::pair<Vec3, float>>&)>;

// Rounds of simplify_unfrozen over `m` with `frozen` (updated): check the whole result; freeze the
// input's triangles around every sample farther than max_error (within 3 mean input edges; when they
// are many, meshoptimizer's error is halved instead) and every new defect vertex (within 3 mean input
// edges, doubling by round), and every piece whose Euler characteristic changed without a
// defect (one that vanished whole); again until nothing is found. Returns the result's triangles (the
// decimated ones, then the frozen ones as they were). `whole_count`: the triangles the ratio is of.
// `check` (part, tris, all, fails): the distance check of a round (distance_failures by default).
std::vector<Tri> freeze_rounds(const Mesh<3>& m, std::vector<std::uint8_t>& frozen, const DecimateSettings& s,
                               std::size_t whole_count, DecimateReport& rep, const DistanceCheck& check) {
    // Defects the input has already are not the decimation's (an open mesh's border, say): not counted.
    const std::vector<std::uint32_t> before = defect_vertices(m.cells, m.vertices.size());
    const std::vector<std::uint32_t> piece = pieces_of(m);
    const float input_edge = mean_edge(m.vertices, m.cells);
    std::vector<Tri> all;
    RoundPart part;
    float share = kErrorShare;
    int halvings = 0;
    for (int round = 1;; ++round) {
        std::vector<Tri> tris = simplify_unfrozen(m, frozen, s, whole_count, share, part);
        ++rep.passes;
        rep.rounds = std::max(rep.rounds, std::size_t(round));
        std::vector<std::uint32_t> changed = changed_pieces(part.before, tris, part.xyz.size(), part.global, piece);
        all.clear();
        for (const auto& t : tris) all.push_back(whole_tri(t, part.global.data()));
        for (std::size_t c = 0; c < m.cells.size(); ++c)
            if (frozen[c]) all.push_back(m.cells[c]);
        std::vector<std::pair<Vec3, float>> spheres;
        if (s.max_error > 0.0f) check(part, tris, all, spheres);
        const std::vector<std::uint32_t> defects = defect_vertices(all, m.vertices.size());
        std::vector<std::uint32_t> fresh;
        std::set_difference(defects.begin(), defects.end(), before.begin(), before.end(), std::back_inserter(fresh));
        if (fresh.empty() && spheres.empty() && changed.empty()) break;
        if (round >= 16) {  // never seen; the mesh as it was rather than a loop without end
            all = m.cells;
            std::fill(frozen.begin(), frozen.end(), 1);
            break;
        }
        // Far samples at more than 1% of the result's triangles: meshoptimizer's error is too loose here;
        // half of it next round (at most 4 times), nothing frozen for them.
        if (spheres.size() * 100 > tris.size() && halvings < 4) {
            share *= 0.5f;
            ++halvings;
            spheres.clear();
            if (fresh.empty()) continue;
        }
        // Around each far sample the input's triangles within 3 mean input edges; around each defect
        // vertex within 3 doubling by round (a defect can move to the edge of what was frozen).
        for (auto& sp : spheres) sp.second = 3.0f * input_edge;
        const float radius = 3.0f * input_edge * float(1 << std::min(round - 1, 20));
        for (auto v : fresh) spheres.emplace_back(m.vertices[v], radius);
        const bool local = !spheres.empty();
        const std::size_t was = std::size_t(std::count(frozen.begin(), frozen.end(), 1));
        mark_near(m, spheres, frozen);
        // A piece whose characteristic changed without a defect (one that vanished whole): frozen whole.
        // With defects the characteristic changes too: those are frozen around them first.
        std::sort(changed.begin(), changed.end());
        if (fresh.empty() && spheres.empty())
            for (std::size_t c = 0; c < m.cells.size(); ++c)
                if (std::binary_search(changed.begin(), changed.end(), piece[m.cells[c][0]])) frozen[c] = 1;
        if (local && std::size_t(std::count(frozen.begin(), frozen.end(), 1)) == was) {  // nothing new: the defects' pieces
            std::vector<std::uint32_t> bad;
            for (auto v : fresh) bad.push_back(piece[v]);
            std::sort(bad.begin(), bad.end());
            for (std::size_t c = 0; c < m.cells.size(); ++c)
                if (std::binary_search(bad.begin(), bad.end(), piece[m.cells[c][0]])) frozen[c] = 1;
        }
    }
    return all;
}

// Stage 1: the part's triangles not `fixed`, frozen around whatever fails. Stage 2: the triangles frozen
// there alone, less aggressively by construction (their own small extent, the rest held fixed around
// them), frozen again around what fails there: what stays at the original resolution is small. The fixed
// triangles stay as they are. Returns the result's triangles (on m's vertices); adds to rep.
std::vector<Tri> decimate_part(const Mesh<3>& m, const std::vector<std::uint8_t>& fixed, const DecimateSettings& s,
                               std::size_t whole_count, DecimateReport& rep, const DistanceCheck& check) {
    std::vector<std::uint8_t> frozen = fixed;
    std::vector<Tri> all = freeze_rounds(m, frozen, s, whole_count, rep, check);
    const std::size_t held = std::size_t(std::count(fixed.begin(), fixed.end(), 1));
    const std::size_t stuck = std::size_t(std::count(frozen.begin(), frozen.end(), 1)) - held;
    if (stuck == 0 || stuck + held >= m.cells.size()) {
        rep.frozen += stuck;
        return all;
    }
    Mesh<3> again;
    again.vertices = m.vertices;
    again.cells = all;  // the decimated triangles first, then the frozen ones in m's order
    std::vector<std::uint8_t> frozen2(all.size(), 1);
    std::vector<std::size_t> redo;  // the frozen ones that are not fixed
    for (std::size_t c = 0, at = all.size() - (stuck + held); c < m.cells.size(); ++c)
        if (frozen[c]) {
            if (!fixed[c]) redo.push_back(at), frozen2[at] = 0;
            ++at;
        }
    all = freeze_rounds(again, frozen2, s, whole_count, rep, check);
    for (auto t : redo) rep.frozen += frozen2[t];
    return all;
}

// The input cut into patches (its triangles by the cell of side `side` their centroid lies in; the
// patches in the cells' order) and the band along their seams: the triangles with a vertex that
// triangles of two patches share.
struct Patches {
    std::vector<std::vector<std::uint32_t>> tris;  // per patch its triangles, increasing
    std::vector<std::uint8_t> band;                // per triangle
};

Patches cut_patches(const Mesh<3>& m, float side, const ExecContext& exec) {
    Vec3 lo = m.vertices[m.cells[0][0]];
    for (const auto& t : m.cells)
        for (auto v : t)
            for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], m.vertices[v][a]);
    std::vector<std::uint64_t> key(m.cells.size());
    parallel_blocks(exec, m.cells.size(), [&](std::size_t b0, std::size_t b1) {
        for (std::size_t c = b0; c < b1; ++c) {
            const Tri& t = m.cells[c];
            std::uint64_t k = 0;
            for (int a = 0; a < 3; ++a) {
                const float x = (m.vertices[t[0]][a] + m.vertices[t[1]][a] + m.vertices[t[2]][a]) * (1.0f / 3.0f);
                k = k << 10 | std::uint64_t(std::clamp(int((x - lo[a]) / side), 0, 1023));
            }
            key[c] = k << 32 | std::uint64_t(c);
        }
    });
    sort_by_high_word(key);  // written in triangle order
    Patches P;
    std::vector<std::uint32_t> patch(m.cells.size());
    for (std::size_t i = 0; i < key.size(); ++i) {
        if (i == 0 || (key[i] >> 32) != (key[i - 1] >> 32)) P.tris.emplace_back();
        P.tris.back().push_back(std::uint32_t(key[i]));
        patch[std::uint32_t(key[i])] = std::uint32_t(P.tris.size() - 1);
    }
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::vector<std::uint32_t> owner(m.vertices.size(), kNone);
    std::vector<std::uint8_t> seam(m.vertices.size(), 0);
    for (std::size_t c = 0; c < m.cells.size(); ++c)
        for (auto v : m.cells[c]) {
            if (owner[v] == kNone) owner[v] = patch[c];
            seam[v] |= owner[v] != patch[c];
        }
    P.band.resize(m.cells.size());
    for (std::size_t c = 0; c < m.cells.size(); ++c) P.band[c] = seam[m.cells[c][0]] | seam[m.cells[c][1]] | seam[m.cells[c][2]];
    return P;
}

// Patch p of m on its own vertices (increasing), decimated with its band fixed; the result on m's vertices.
std::vector<Tri> decimate_patch(const Mesh<3>& m, const Patches& P, std::size_t p, const DecimateSettings& s,
                                DecimateReport& rep, const ExecContext& exec) {
    std::vector<std::uint32_t> verts;
    const Mesh<3> sub = part_of(m, P.tris[p], verts);
    std::vector<std::uint8_t> fixed;
    for (auto c : P.tris[p]) fixed.push_back(P.band[c]);
    // The ratio over the patch but its band, which the seams' pass decimates (W: ratio W less the band is
    // the ratio of the rest).
    const std::size_t band = std::size_t(std::count(fixed.begin(), fixed.end(), 1));
    const std::size_t whole = sub.cells.size() - band + (s.target_ratio > 0.0f ? std::size_t(double(band) / double(s.target_ratio)) : 0);
    const float limit = kSampleMargin * s.max_error, edge = mean_edge(sub.vertices, sub.cells);
    const TriangleGrid input(sub.vertices, sub.cells, std::max(limit, edge), exec);
    const DistanceCheck own = [&, memo = CheckMemo{}](RoundPart& r, const std::vector<Tri>& tris, const std::vector<Tri>&,
                                                      std::vector<std::pair<Vec3, float>>& fails) mutable {
        distance_failures(r, tris, input, edge, limit, memo, fails, exec);  // memo: the rounds' (both stages')
    };
    std::vector<Tri> out = decimate_part(sub, fixed, s, whole, rep, own);
    for (auto& t : out)
        for (auto& v : t) v = verts[v];
    return out;
}

// The input's triangles under `tris` (on xyz): those with a vertex within `margin` beyond the sphere about
// a triangle's centroid through its corners.
std::vector<std::uint8_t> under(const Mesh<3>& input, const std::vector<Vec3>& xyz, const std::vector<Tri>& tris, float margin) {
    std::vector<std::pair<Vec3, float>> reach;
    for (const auto& t : tris) {
        const Vec3 c = (xyz[t[0]] + xyz[t[1]] + xyz[t[2]]) * (1.0f / 3.0f);
        float r = 0.0f;
        for (auto v : t) r = std::max(r, norm(xyz[v] - c));
        reach.emplace_back(c, r + margin);
    }
    std::vector<std::uint8_t> flags(input.cells.size(), 0);
    mark_near(input, reach, flags);
    return flags;
}

// The input under the seams' region, found once: its triangles on the input's vertices (`tris`) and on their
// own vertices (`local`: a round finds the ones under its part among these alone).
struct SeamInput {
    std::vector<Tri> tris;
    Mesh<3> local;
};

SeamInput seam_input(const Mesh<3>& m, const std::vector<Tri>& region, float margin) {
    const std::vector<std::uint8_t> flags = under(m, m.vertices, region, margin);
    std::vector<std::uint32_t> cells, verts;
    for (std::size_t c = 0; c < m.cells.size(); ++c)
        if (flags[c]) cells.push_back(std::uint32_t(c));
    SeamInput in;
    in.local = part_of(m, cells, verts);
    for (auto c : cells) in.tris.push_back(m.cells[c]);
    return in;
}

// The seams' input under `part` (on xyz; under()): its triangles in `a` and their indices in in.tris in `cells`.
void input_under(const SeamInput& in, const std::vector<Vec3>& xyz, const std::vector<Tri>& part, float margin,
                 std::vector<Tri>& a, std::vector<std::uint32_t>& cells) {
    const std::vector<std::uint8_t> flags = under(in.local, xyz, part, margin);
    for (std::size_t c = 0; c < in.tris.size(); ++c)
        if (flags[c]) a.push_back(in.tris[c]), cells.push_back(std::uint32_t(c));
}

// The seams' check: against the original input, not the part's own triangles (part of which an earlier
// pass made). The part's new triangles against the input under the region (its grid built once); the
// input's triangles under the part against the whole result.
// It remembers what its earlier rounds found (CheckMemo; the triangles here are on the mesh's own vertices).
DistanceCheck input_check(const std::vector<Vec3>& vertices, const SeamInput& in, const TriangleGrid& grid, float edge,
                          float limit, const ExecContext& exec) {
    return [&vertices, &in, &grid, edge, limit, &exec, memo = CheckMemo{}](
               RoundPart& r, const std::vector<Tri>& tris, const std::vector<Tri>& all,
               std::vector<std::pair<Vec3, float>>& fails) mutable {
        const std::vector<Tri> made(all.begin(), all.begin() + std::ptrdiff_t(tris.size()));
        inner_points_far(vertices, made, grid, edge, limit, fails, exec, &memo);
        std::vector<Tri> a;
        std::vector<std::uint32_t> cells;  // a's triangles' indices in in.tris (the memo's covers')
        input_under(in, r.xyz, r.before, edge + limit, a, cells);
        std::vector<std::uint8_t> seen(vertices.size(), 0);
        for (const auto& t : all)
            for (auto v : t) seen[v] = 1;
        std::vector<std::uint32_t> dropped;
        for (const auto& t : a)
            for (auto v : t)
                if (!seen[v]) seen[v] = 1, dropped.push_back(v);
        const TriangleGrid to_all(vertices, all, std::max(limit, mean_edge(vertices, all)), exec);
        points_far(vertices, dropped, a, to_all, limit, fails, exec, cover_memo(memo.covers, cells, all, nullptr));
    };
}

// The triangles of the patches' result `joined` off the seams (fixed in the seams' pass): those that touch no
// vertex of the band or of an input triangle a patch kept as it was (frozen there around what failed; with
// the seams' pass it may pass).
std::vector<std::uint8_t> off_seams(const Mesh<3>& m, const Patches& P, const Mesh<3>& joined) {
    std::vector<std::uint8_t> near_seam(m.vertices.size(), 0), fixed(joined.cells.size(), 0);
    for (std::size_t c = 0; c < m.cells.size(); ++c)
        if (P.band[c])
            for (auto v : m.cells[c]) near_seam[v] = 1;
    std::vector<std::uint32_t> first(m.vertices.size() + 1, 0), around(3 * m.cells.size());
    for (const auto& t : m.cells) ++first[t[0] + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    for (std::size_t c = 0; c < m.cells.size(); ++c) around[first[m.cells[c][0]]++] = std::uint32_t(c);
    std::rotate(first.begin(), first.end() - 1, first.end()), first[0] = 0;  // back to each vertex's start
    for (const auto& t : joined.cells)
        for (std::uint32_t i = first[t[0]]; i < first[t[0] + 1]; ++i)
            if (m.cells[around[i]] == t)
                for (auto v : t) near_seam[v] = 1;
    for (std::size_t c = 0; c < joined.cells.size(); ++c) {
        const Tri& t = joined.cells[c];
        fixed[c] = !(near_seam[t[0]] | near_seam[t[1]] | near_seam[t[2]]);
    }
    return fixed;
}

// The whole decimation: each patch with its band fixed, the patches in parallel (each on its own: the same
// result on any thread count); then the seams: the bands and the patches' triangles that touch them,
// decimated together with the rest fixed and checked against the input. One patch: no seams.
std::vector<Tri> decimate_patches(const Mesh<3>& m, const DecimateSettings& s, DecimateReport& rep, const ExecContext& exec) {
    const float edge = mean_edge(m.vertices, m.cells), limit = kSampleMargin * s.max_error;
    // 128 mean edges (the default): a frame of 10^6 particles gives about 15 patches of 60,000 triangles,
    // whose bands are 2% of the surface.
    const Patches P = cut_patches(m, std::max(s.patch_edges * edge, 1e-30f), exec);
    rep.patches = P.tris.size();
    if (P.tris.size() == 1) return decimate_patch(m, P, 0, s, rep, exec);
    std::vector<std::size_t> order(P.tris.size());  // the largest first, for the threads' balance
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return P.tris[a].size() > P.tris[b].size(); });
    std::vector<std::vector<Tri>> out(P.tris.size());
    std::vector<DecimateReport> reps(P.tris.size());
    parallel_blocks(exec, order.size(), [&](std::size_t b0, std::size_t b1) {
        for (std::size_t i = b0; i < b1; ++i) out[order[i]] = decimate_patch(m, P, order[i], s, reps[order[i]], exec);
    }, 1);
    Mesh<3> joined;
    joined.vertices = m.vertices;
    for (std::size_t p = 0; p < out.size(); ++p) {
        joined.cells.insert(joined.cells.end(), out[p].begin(), out[p].end());
        rep.passes += reps[p].passes;
        rep.rounds = std::max(rep.rounds, reps[p].rounds);
    }
    const std::vector<std::uint8_t> fixed = off_seams(m, P, joined);
    std::vector<Tri> region;
    for (std::size_t c = 0; c < joined.cells.size(); ++c)
        if (!fixed[c]) region.push_back(joined.cells[c]);
    const SeamInput in = seam_input(m, region, edge + limit);
    const TriangleGrid grid(m.vertices, in.tris, std::max(limit, edge), exec);
    return decimate_part(joined, fixed, s, m.cells.size(), rep, input_check(m.vertices, in, grid, edge, limit, exec));
}
#endif

}  // namespace

bool decimation_available() {
#ifdef EDDY_HAVE_MESHOPTIMIZER
    return true;
#else
    return false;
#endif
}

void validate(const DecimateSettings& s, const std::string& where) {
    if (!(s.max_error >= 0.0f) || !std::isfinite(s.max_error))
        throw InputError(fmt::format("{}: key 'max_error' = {}: allowed: a length >= 0 (m; 0: no bound)", where, s.max_error));
    if (!(s.target_ratio >= 0.0f && s.target_ratio <= 1.0f))
        throw InputError(fmt::format("{}: key 'target_ratio' = {}: allowed: 0 to 1 (0: as few as max_error allows)", where,
                                     s.target_ratio));
    if (!(s.patch_edges >= 8.0f) || !std::isfinite(s.patch_edges))
        throw InputError(fmt::format("{}: key 'patch_edges' = {}: allowed: 8 or more (mean input edges)", where, s.patch_edges));
    if ((s.max_error > 0.0f || s.target_ratio > 0.0f) && !decimation_available())
        throw InputError(fmt::format("{}: decimation needs meshoptimizer, which this eddy was built without (Debian "
                                     "libmeshoptimizer-dev, then rebuild); allowed: no decimation", where));
}

DecimateReport decimate(Mesh<3>& m, const DecimateSettings& s, const ExecContext& exec) {
    validate(s, "decimate");
    DecimateReport rep;
    rep.triangles_before = rep.triangles_after = m.cells.size();
    rep.vertices_before = rep.vertices_after = m.vertices.size();
    if ((s.max_error <= 0.0f && s.target_ratio <= 0.0f) || s.target_ratio >= 1.0f || m.cells.empty()) return rep;
    if (!m.normals.empty() && m.normals.size() != m.vertices.size())
        throw InputError(fmt::format("decimate: {} normals for {} vertices: allowed: one per vertex or none",
                                     m.normals.size(), m.vertices.size()));
    for (const auto& a : m.attributes)
        if (a.components < 1 || a.values.size() != m.vertices.size() * std::size_t(a.components))
            throw InputError(fmt::format("decimate: attribute '{}' has {} values for {} vertices of {} components", a.name,
                                         a.values.size(), m.vertices.size(), a.components));
    for (const auto& c : m.cells)
        for (auto v : c)
            if (v >= m.vertices.size())
                throw InputError(fmt::format("decimate: a triangle refers to vertex {} of {}", v, m.vertices.size()));
#ifdef EDDY_HAVE_MESHOPTIMIZER
    const std::vector<Tri> all = decimate_patches(m, s, rep, exec);
    // The kept vertices are a subset of the original ones: positions, normals and attributes carry
    // exactly. New vertex order: increasing original index; triangles in region order.
    std::vector<std::int64_t> remap(m.vertices.size(), -1);
    for (const auto& t : all)
        for (auto v : t) remap[v] = 0;
    std::vector<std::uint32_t> order;
    for (std::size_t v = 0; v < m.vertices.size(); ++v)
        if (remap[v] == 0) {
            remap[v] = std::int64_t(order.size());
            order.push_back(std::uint32_t(v));
        }
    Mesh<3> out;
    out.vertices.reserve(order.size());
    for (auto v : order) out.vertices.push_back(m.vertices[v]);
    if (!m.normals.empty())
        for (auto v : order) out.normals.push_back(m.normals[v]);
    for (const auto& a : m.attributes) {
        VertexAttribute b{a.name, a.components, {}};
        b.values.reserve(order.size() * std::size_t(a.components));
        for (auto v : order)
            for (int c = 0; c < a.components; ++c) b.values.push_back(a.values[std::size_t(v) * a.components + c]);
        out.attributes.push_back(std::move(b));
    }
    out.cells.reserve(all.size());
    for (const auto& t : all) out.cells.push_back({std::uint32_t(remap[t[0]]), std::uint32_t(remap[t[1]]), std::uint32_t(remap[t[2]])});
    m = std::move(out);
    rep.triangles_after = m.cells.size();
    rep.vertices_after = m.vertices.size();
#else
    (void)exec;
#endif
    return rep;
}

}  // namespace eddy
