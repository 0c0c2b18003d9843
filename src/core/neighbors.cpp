#include "eddy/neighbors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include <tbb/parallel_sort.h>

#include "eddy/error.hpp"

namespace eddy {

template <int D>
void NeighborGrid<D>::set_cell_size(float cell_size) {
    EDDY_ASSERT(cell_size > 0.0f);
    m_cell_size = cell_size;
    m_inv_cell = 1.0f / cell_size;
}

template <int D>
void NeighborGrid<D>::build(std::span<const Vec<D>> points, const ExecContext& exec) {
    const std::size_t n = points.size();
    EDDY_ASSERT(n < 0xffffffffu);
    // About two buckets per point keeps collisions rare; memory is O(n) whatever the extent.
    const std::size_t buckets = std::bit_ceil(std::max<std::size_t>(16, 2 * n));
    m_mask = static_cast<std::uint32_t>(buckets - 1);

    m_point_bucket.resize(n);
    m_sorted_index.resize(n);
    m_sorted_pos.resize(n);
    m_sorted_cell.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) { m_point_bucket[i] = bucket_of(cell_of(points[i])); });

    // Stable counting sort. end[b] starts as the inclusive prefix sum of the counts; scattering
    // backwards with --end[b] keeps points of a bucket in index order and leaves end[b] = start of b.
    m_bucket_start.assign(buckets + 1, 0);
    std::uint32_t* start = m_bucket_start.data();
    for (std::size_t i = 0; i < n; ++i) ++start[m_point_bucket[i]];
    std::uint32_t acc = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
        acc += start[b];
        start[b] = acc;
    }
    start[buckets] = static_cast<std::uint32_t>(n);
    for (std::size_t i = n; i-- > 0;) m_sorted_index[--start[m_point_bucket[i]]] = static_cast<std::uint32_t>(i);

    parallel_for_each_index(exec, n, [&](std::size_t s) {
        const Vec<D> x = points[m_sorted_index[s]];
        m_sorted_pos[s] = x;
        m_sorted_cell[s] = cell_of(x);
    });
}

template <int D>
void NeighborGrid<D>::find_neighbors(std::span<const Vec<D>> queries, float radius, bool same_set, NeighborLists& out,
                                     const ExecContext& exec) const {
    EDDY_ASSERT(radius <= m_cell_size * (1.0f + 1e-6f));
    EDDY_ASSERT(!same_set || queries.size() == point_count());
    const std::size_t nq = queries.size();
    constexpr std::size_t block = 256;
    const std::size_t blocks = (nq + block - 1) / block;
    out.offsets.resize(nq + 1);
    out.offsets[0] = 0;
    if (out.block_scratch.size() < blocks) out.block_scratch.resize(blocks);

    // Pass 1: each block of queries collects its lists into its own buffer, counts per query.
    parallel_blocks(exec, nq, [&](std::size_t b0, std::size_t b1) {
        auto& buf = out.block_scratch[b0 / block];
        buf.clear();
        for (std::size_t i = b0; i < b1; ++i) {
            const std::size_t before = buf.size();
            const auto self = static_cast<std::uint32_t>(i);
            for_each_neighbor(queries[i], radius, [&](std::uint32_t j) {
                if (!same_set || j != self) buf.push_back(j);
            });
            out.offsets[i + 1] = static_cast<std::uint32_t>(buf.size() - before);
        }
    }, block);

    // Prefix sum of the counts (serial: one add per query), then blocks copy their lists in place.
    for (std::size_t i = 0; i < nq; ++i) out.offsets[i + 1] += out.offsets[i];
    out.indices.resize(out.offsets[nq]);
    parallel_blocks(exec, nq, [&](std::size_t b0, std::size_t) {
        const auto& buf = out.block_scratch[b0 / block];
        if (!buf.empty()) std::memcpy(out.indices.data() + out.offsets[b0], buf.data(), buf.size() * sizeof(std::uint32_t));
    }, block);
}

namespace {
// Spreads the low 21 (3D) or 32 (2D) bits of v so that two or three codes interleave.
inline std::uint64_t spread3(std::uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffull;
    v = (v | v << 16) & 0x1f0000ff0000ffull;
    v = (v | v << 8) & 0x100f00f00f00f00full;
    v = (v | v << 4) & 0x10c30c30c30c30c3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}
inline std::uint64_t spread2(std::uint64_t v) {
    v &= 0xffffffffull;
    v = (v | v << 16) & 0x0000ffff0000ffffull;
    v = (v | v << 8) & 0x00ff00ff00ff00ffull;
    v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full;
    v = (v | v << 2) & 0x3333333333333333ull;
    v = (v | v << 1) & 0x5555555555555555ull;
    return v;
}
}  // namespace

template <int D>
std::vector<std::uint32_t> NeighborGrid<D>::morton_order(std::span<const Vec<D>> points, const ExecContext& exec) const {
    const std::size_t n = points.size();
    using Cell3 = std::array<std::int64_t, D>;
    // Lowest cell over the points: codes are relative to it so that negative cells sort correctly.
    Cell3 init{};
    init.fill(std::numeric_limits<std::int64_t>::max());
    const Cell3 lo = parallel_reduce_blocks(
        exec, n, init,
        [&](std::size_t b, std::size_t e) {
            Cell3 m = init;
            for (std::size_t i = b; i < e; ++i) {
                const Cell c = cell_of(points[i]);
                for (int a = 0; a < D; ++a) m[a] = std::min<std::int64_t>(m[a], c[a]);
            }
            return m;
        },
        [](Cell3 a, const Cell3& b) {
            for (int k = 0; k < D; ++k) a[k] = std::min(a[k], b[k]);
            return a;
        });
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keys(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const Cell c = cell_of(points[i]);
        std::uint64_t code = 0;
        for (int a = 0; a < D; ++a) {
            // Points beyond 2^21 cells from the lowest one share the last code (still correct, less local).
            const std::uint64_t rel = std::min<std::uint64_t>(static_cast<std::uint64_t>(c[a] - lo[a]),
                                                              D == 3 ? 0x1fffff : 0xffffffffull);
            code |= (D == 3 ? spread3(rel) : spread2(rel)) << a;
        }
        keys[i] = {code, static_cast<std::uint32_t>(i)};
    });
    // Keys are unique (index breaks ties), so the parallel sort is deterministic.
    exec.run([&] { tbb::parallel_sort(keys.begin(), keys.end()); });
    std::vector<std::uint32_t> order(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) { order[i] = keys[i].second; });
    return order;
}

template <int D>
std::size_t NeighborGrid<D>::memory_bytes() const {
    return m_bucket_start.capacity() * sizeof(std::uint32_t) + m_sorted_index.capacity() * sizeof(std::uint32_t) +
           m_sorted_pos.capacity() * sizeof(Vec<D>) + m_sorted_cell.capacity() * sizeof(Cell) +
           m_point_bucket.capacity() * sizeof(std::uint32_t);
}

template class NeighborGrid<2>;
template class NeighborGrid<3>;

}  // namespace eddy
