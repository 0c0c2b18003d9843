// eddy: neighbour search on a hashed uniform grid.
//
// Cells have the size of the search radius. Cell (i, j, k) goes to bucket
// (i*p1 XOR j*p2 XOR k*p3) mod M (seed 003, after Teschner et al. 2003), M a power of two about twice
// the point count, so memory is proportional to the points, never to the extent of the domain: a
// particle far away cannot blow up memory. Buckets are filled by a stable counting sort into CSR
// arrays; candidates from a colliding cell are rejected by their stored cell coordinates, so the result
// equals a brute-force search exactly: j is a neighbour of i iff |x_i - x_j|^2 < r^2 (pairs at exactly
// r are not neighbours; their kernel weight is zero anyway).
//
// Neighbour lists are CSR (offsets + indices), each list in a deterministic order (neighbouring cells in
// a fixed order, points in a cell by index), built in parallel over fixed blocks of query points.
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
    /// order, so the caller may change its own array afterwards.
    void build(std::span<const Vec<D>> points, const ExecContext& exec);

    /// Neighbour lists of `queries` among the built points within `radius` (<= cell size).
    /// With same_set, the queries are the built points themselves and i is not its own neighbour.
    void find_neighbors(std::span<const Vec<D>> queries, float radius, bool same_set, NeighborLists& out,
                        const ExecContext& exec) const;

    /// Calls f(j) for every built point j with |x - x_j|^2 < radius^2 (radius <= cell size), in the
    /// same order as find_neighbors.
    template <class F>
    void for_each_neighbor(const Vec<D>& x, float radius, F&& f) const;

    /// A permutation that orders the points along a Z-order (Morton) curve of their cells; apply it
    /// with ParticleSet::reorder for cache locality. Deterministic (ties broken by index).
    std::vector<std::uint32_t> morton_order(std::span<const Vec<D>> points, const ExecContext& exec) const;

    std::size_t point_count() const { return m_sorted_index.size(); }
    std::size_t bucket_count() const { return m_bucket_start.empty() ? 0 : m_bucket_start.size() - 1; }
    std::size_t memory_bytes() const;

    Cell cell_of(const Vec<D>& x) const;
    std::uint32_t bucket_of(const Cell& c) const;

private:
    float m_cell_size = 1.0f;
    float m_inv_cell = 1.0f;
    std::uint32_t m_mask = 0;                   // M - 1
    std::vector<std::uint32_t> m_bucket_start;  // M + 1 offsets into the sorted arrays
    std::vector<std::uint32_t> m_sorted_index;  // point index, in bucket order
    std::vector<Vec<D>> m_sorted_pos;           // positions, in bucket order
    std::vector<Cell> m_sorted_cell;            // cells, in bucket order
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
    const Cell c = cell_of(x);
    Cell n{};
    auto visit_cell = [&](const Cell& cc) {
        const std::uint32_t b = bucket_of(cc);
        const std::uint32_t end = m_bucket_start[b + 1];
        for (std::uint32_t s = m_bucket_start[b]; s < end; ++s) {
            if (m_sorted_cell[s] != cc) continue;
            const Vec<D> d = x - m_sorted_pos[s];
            if (norm2(d) < r2) f(m_sorted_index[s]);
        }
    };
    if constexpr (D == 2) {
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                n[0] = c[0] + dx;
                n[1] = c[1] + dy;
                visit_cell(n);
            }
    } else {
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    n[0] = c[0] + dx;
                    n[1] = c[1] + dy;
                    n[2] = c[2] + dz;
                    visit_cell(n);
                }
    }
}

extern template class NeighborGrid<2>;
extern template class NeighborGrid<3>;

}  // namespace eddy
