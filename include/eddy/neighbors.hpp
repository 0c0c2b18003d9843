// eddy: neighbour search on a hashed uniform grid.
//
// Cells have the size of the search radius. Two layouts, chosen at each build from the points alone:
// - dense: when the points' bounding box holds at most about 4 cells per point (a fluid), a bucket per
//   cell in row-major order, so the 3^D cells around a query form 3^(D-1) contiguous runs;
// - hashed: otherwise (a splash flung far away, a huge domain), cell (i, j, k) goes to bucket
//   (i*p1 XOR j*p2 XOR k*p3) mod M (seed 003, after Teschner et al. 2003), M a power of two about
//   twice the point count; candidates from a colliding cell are rejected by their stored cells.
// Either way memory is proportional to the points, never to the extent of the domain. Buckets are
// filled by a stable counting sort into CSR arrays. The result equals a brute-force search exactly:
// j is a neighbour of i iff |x_i - x_j|^2 < r^2, summed axis by axis without fused multiply-adds
// (pairs at exactly r are not neighbours; their kernel weight is zero anyway).
//
// Neighbour lists are CSR (offsets + indices), each list in a deterministic order (neighbouring cells in
// a fixed order, points in a cell by index, or by a key such as the particle id when build() is given
// one), built in parallel over fixed blocks of query points.
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/math.hpp"

namespace eddy {

/// Neighbour lists in compressed sparse row form: the neighbours of query i are
/// indices[offsets[i] .. offsets[i+1]).
struct NeighborLists {
    std::vector<std::uint32_t> offsets;  ///< size = queries + 1
    std::vector<std::uint32_t> indices;  ///< neighbour indices into the grid's points

    std::size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
    std::span<const std::uint32_t> operator[](std::size_t i) const {
        return {indices.data() + offsets[i], indices.data() + offsets[i + 1]};
    }
    std::size_t total() const { return indices.size(); }
    /// find_neighbors with a candidate limit: how many queries had more candidates than the limit (their
    /// lists were left empty), and the first of them (lowest index) with its candidate count.
    std::size_t crowded = 0;
    std::uint32_t crowded_query = 0;
    std::uint32_t crowded_candidates = 0;
    std::size_t memory_bytes() const {
        return offsets.capacity() * sizeof(std::uint32_t) + indices.capacity() * sizeof(std::uint32_t) +
               scratch_bytes();
    }

    // Per-block scratch kept between builds so that rebuilding allocates nothing.
    std::vector<std::vector<std::uint32_t>> block_scratch;
    std::size_t scratch_bytes() const {
        std::size_t b = 0;
        for (const auto& s : block_scratch) b += s.capacity() * sizeof(std::uint32_t);
        return b;
    }
};

template <int D>
class NeighborGrid {
public:
    using Cell = std::array<std::int32_t, D>;

    NeighborGrid() = default;
    /// cell_size (m): the largest radius that queries may use.
    explicit NeighborGrid(float cell_size) { set_cell_size(cell_size); }
    void set_cell_size(float cell_size);
    float cell_size() const { return m_cell_size; }

    /// Sorts the points into buckets (stable counting sort). Keeps a copy of the positions in bucket
    /// order, so the caller may change its own array afterwards. With keys (one per point, e.g. the
    /// particles' ids), the points of a bucket are in key order instead of index order, so every
    /// neighbour list is in (cell, key) order whatever order the points are stored in: a particle's
    /// sums then take the same bits on any number of processes, each holding a different subset.
    void build(std::span<const Vec<D>> points, const ExecContext& exec, std::span<const std::uint32_t> keys = {});

    /// Neighbour lists of `queries` among the built points within `radius` (<= cell size).
    /// With same_set, the queries are the built points themselves and i is not its own neighbour.
    /// max_candidates > 0: a query with more points than this in its 3^D cells is not searched (its list
    /// stays empty, out.crowded counts it). Collapsed particles (thousands in a few cells) would otherwise
    /// cost time and memory quadratic in their number; the count is known before any distance is computed.
    void find_neighbors(std::span<const Vec<D>> queries, float radius, bool same_set, NeighborLists& out,
                        const ExecContext& exec, std::size_t max_candidates = 0) const;

    /// Calls f(i, list, d2) for each query i with its neighbour list among the built points within `radius`
    /// (the list find_neighbors gives: the same points in the same order) and beside each neighbour j its
    /// squared distance |x_i - x_j|^2 (the float the search compared with radius^2, summed axis by axis),
    /// both held in buffers of the block's and valid during the call only. Queries in fixed parallel
    /// blocks, so f runs concurrently for different i. For a pass that reads each list once: no CSR lists
    /// are assembled or kept, and a kernel weight needs no second look at the neighbours' positions.
    void for_each_list(std::span<const Vec<D>> queries, float radius, const ExecContext& exec,
                       const std::function<void(std::size_t, std::span<const std::uint32_t>, std::span<const float>)>& f) const;

    /// Calls f(j) for every built point j with |x - x_j|^2 < radius^2 (radius <= cell size), in the
    /// same order as find_neighbors.
    template <class F>
    void for_each_neighbor(const Vec<D>& x, float radius, F&& f) const;

    /// A permutation that orders the points along a Z-order (Morton) curve of their cells; apply it
    /// with ParticleSet::reorder for cache locality. Deterministic (ties broken by index).
    std::vector<std::uint32_t> morton_order(std::span<const Vec<D>> points, const ExecContext& exec) const;

    /// The fullest bucket of the last build: its point count, and (point) its first point's index. In
    /// the dense layout a bucket is one cell; hashed, a bucket may hold a few cells (an upper bound).
    std::uint32_t fullest_bucket(std::uint32_t& point) const;

    std::size_t point_count() const { return m_sorted_index.size(); }
    std::size_t bucket_count() const { return m_bucket_start.empty() ? 0 : m_bucket_start.size() - 1; }
    /// True when the last build used the dense layout, false when it hashed.
    bool dense() const { return m_dense; }
    std::size_t memory_bytes() const;

    Cell cell_of(const Vec<D>& x) const;
    static bool same_cell(const Cell& a, const Cell& b) {
        bool eq = a[0] == b[0] && a[1] == b[1];
        if constexpr (D == 3) eq = eq && a[2] == b[2];
        return eq;
    }
    std::uint32_t bucket_of(const Cell& c) const;
    /// Calls f(s0, s1, cell) for runs [s0, s1) of sorted points that cover the 3^D cells around c, in a
    /// fixed order; cell is null when every point of the run is in one of those cells (dense layout),
    /// else the one cell the run's points must match (hashed layout: buckets may be shared).
    template <class F>
    void for_each_candidate_run(const Cell& c, F&& f) const;
    /// Calls f(cell) for the 3^D cells around c (c included), in a fixed order.
    template <class F>
    static void for_each_cell_around(const Cell& c, F&& f);

private:
    struct CellBox { std::int64_t lo[D], hi[D]; };
    // One block's scratch for the hashed layout: consecutive queries in the same cell share one gathered
    // candidate set.
    struct Candidates {
        std::vector<float> x[D];
        std::vector<std::uint32_t> index;
        Cell cell{};
        bool have = false;
    };
    // The neighbours of query x (not `self`) within r2 written to buf from `at` on (buf grows, its size its
    // capacity), in the fixed candidate order; returns how many. More than max_candidates (> 0) candidates:
    // nothing written, `crowded` set to their count. With d2buf, their squared distances beside them.
    std::size_t filter_query(const Vec<D>& x, std::uint32_t self, float r2, std::size_t max_candidates,
                             Candidates& cand, std::vector<std::uint32_t>& buf, std::size_t at,
                             std::size_t& crowded, std::vector<float>* d2buf = nullptr) const;
    // Lowest and highest cell over the points (deterministic reduction).
    CellBox cell_box(std::span<const Vec<D>> points, const ExecContext& exec) const;

    float m_cell_size = 1.0f;
    float m_inv_cell = 1.0f;
    bool m_dense = false;                       // dense row-major cells, else hashed buckets
    std::int64_t m_origin[D] = {};              // dense: lowest cell
    std::int64_t m_dims[D] = {};                // dense: cells per axis
    std::uint32_t m_mask = 0;                   // hashed: M - 1
    std::vector<std::uint32_t> m_bucket_start;  // buckets + 1 offsets into the sorted arrays
    std::vector<std::uint32_t> m_sorted_index;  // point index, in bucket order
    std::vector<float> m_sorted_x[D];           // coordinates, in bucket order (one array per axis)
    std::vector<Cell> m_sorted_cell;            // hashed: cells, in bucket order
    std::vector<std::uint32_t> m_point_bucket;  // scratch: bucket of each point
};

// ---- inline implementation of the visitor ----

template <int D>
inline typename NeighborGrid<D>::Cell NeighborGrid<D>::cell_of(const Vec<D>& x) const {
    Cell c{};
    for (int a = 0; a < D; ++a) {
        float f = std::floor(x[a] * m_inv_cell);
        // Clamp: far-away (or non-finite) points share an extreme cell instead of overflowing.
        if (!(f > -1.0e9f)) f = -1.0e9f;
        if (f > 1.0e9f) f = 1.0e9f;
        c[a] = static_cast<std::int32_t>(f);
    }
    return c;
}

template <int D>
inline std::uint32_t NeighborGrid<D>::bucket_of(const Cell& c) const {
    // Large primes of Teschner et al. 2003, as the seed uses.
    std::uint32_t h = static_cast<std::uint32_t>(c[0]) * 73856093u ^ static_cast<std::uint32_t>(c[1]) * 19349663u;
    if constexpr (D == 3) h ^= static_cast<std::uint32_t>(c[2]) * 83492791u;
    // Mix the high bits down: M is a power of two, so only the low bits would be used otherwise.
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    return h & m_mask;
}

template <int D>
template <class F>
inline void NeighborGrid<D>::for_each_neighbor(const Vec<D>& x, float radius, F&& f) const {
    if (m_sorted_index.empty()) return;
    const float r2 = radius * radius;
    for_each_candidate_run(cell_of(x), [&](std::uint32_t s0, std::uint32_t s1, const Cell* cell) {
        for (std::uint32_t s = s0; s < s1; ++s) {
            if (cell && !same_cell(m_sorted_cell[s], *cell)) continue;
            float d2 = 0.0f;
            for (int a = 0; a < D; ++a) {
                const float d = x[a] - m_sorted_x[a][s];
                d2 = d2 + d * d;
            }
            if (d2 < r2) f(m_sorted_index[s]);
        }
    });
}

template <int D>
template <class F>
inline void NeighborGrid<D>::for_each_candidate_run(const Cell& c, F&& f) const {
    if (m_dense) {
        // Runs along x of up to three cells, clipped to the grid; cells outside it are empty.
        std::int64_t lo[D], hi[D];
        for (int a = 0; a < D; ++a) {
            const std::int64_t rel = std::int64_t(c[a]) - m_origin[a];
            lo[a] = std::max<std::int64_t>(rel - 1, 0);
            hi[a] = std::min<std::int64_t>(rel + 1, m_dims[a] - 1);
            if (lo[a] > hi[a]) return;
        }
        const std::int64_t z0 = D == 3 ? lo[D - 1] : 0, z1 = D == 3 ? hi[D - 1] : 0;
        for (std::int64_t z = z0; z <= z1; ++z)
            for (std::int64_t y = lo[1]; y <= hi[1]; ++y) {
                const std::int64_t row = (z * m_dims[1] + y) * m_dims[0];
                f(m_bucket_start[row + lo[0]], m_bucket_start[row + hi[0] + 1], nullptr);
            }
        return;
    }
    for_each_cell_around(c, [&](const Cell& cc) {
        const std::uint32_t b = bucket_of(cc);
        f(m_bucket_start[b], m_bucket_start[b + 1], &cc);
    });
}

template <int D>
template <class F>
inline void NeighborGrid<D>::for_each_cell_around(const Cell& c, F&& f) {
    Cell n{};
    if constexpr (D == 2) {
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                n[0] = c[0] + dx;
                n[1] = c[1] + dy;
                f(n);
            }
    } else {
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    n[0] = c[0] + dx;
                    n[1] = c[1] + dy;
                    n[2] = c[2] + dz;
                    f(n);
                }
    }
}

extern template class NeighborGrid<2>;
extern template class NeighborGrid<3>;

}  // namespace eddy
