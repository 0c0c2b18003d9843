#include "eddy/neighbors.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/buffers.hpp"
#include "eddy/error.hpp"

namespace eddy {

template <int D>
void NeighborGrid<D>::set_cell_size(float cell_size) {
    EDDY_ASSERT(cell_size > 0.0f);
    m_cell_size = cell_size;
    m_inv_cell = 1.0f / cell_size;
}

template <int D>
typename NeighborGrid<D>::CellBox NeighborGrid<D>::cell_box(std::span<const Vec<D>> points, const ExecContext& exec) const {
    CellBox init;
    for (int a = 0; a < D; ++a) {
        init.lo[a] = std::numeric_limits<std::int64_t>::max();
        init.hi[a] = std::numeric_limits<std::int64_t>::min();
    }
    return parallel_reduce_blocks(
        exec, points.size(), init,
        [&](std::size_t b, std::size_t e) {
            CellBox m = init;
            for (std::size_t i = b; i < e; ++i) {
                const Cell c = cell_of(points[i]);
                for (int a = 0; a < D; ++a) {
                    m.lo[a] = std::min<std::int64_t>(m.lo[a], c[a]);
                    m.hi[a] = std::max<std::int64_t>(m.hi[a], c[a]);
                }
            }
            return m;
        },
        [](CellBox l, const CellBox& r) {
            for (int a = 0; a < D; ++a) {
                l.lo[a] = std::min(l.lo[a], r.lo[a]);
                l.hi[a] = std::max(l.hi[a], r.hi[a]);
            }
            return l;
        });
}

template <int D>
void NeighborGrid<D>::build(std::span<const Vec<D>> points, const ExecContext& exec,
                            std::span<const std::uint32_t> keys) {
    const std::size_t n = points.size();
    EDDY_ASSERT(n < 0xffffffffu);
    EDDY_ASSERT(keys.empty() || keys.size() == n);

    // Bounding box of the cells: dense layout when it holds at most about 4 cells per point.
    const CellBox box = cell_box(points, exec);
    const double limit = 4.0 * double(n) + 64.0;
    double cells = n ? 1.0 : limit + 1.0;
    for (int a = 0; a < D && n; ++a) cells *= double(box.hi[a] - box.lo[a] + 1);
    m_dense = cells <= limit;
    std::size_t buckets;
    if (m_dense) {
        for (int a = 0; a < D; ++a) {
            m_origin[a] = box.lo[a];
            m_dims[a] = box.hi[a] - box.lo[a] + 1;
        }
        buckets = static_cast<std::size_t>(cells);
    } else {
        buckets = std::bit_ceil(std::max<std::size_t>(16, 2 * n));
        m_mask = static_cast<std::uint32_t>(buckets - 1);
    }

    m_point_bucket.resize(n);
    m_sorted_index.resize(n);
    for (int a = 0; a < D; ++a) m_sorted_x[a].resize(n);
    m_sorted_cell.resize(m_dense ? 0 : n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const Cell c = cell_of(points[i]);
        if (m_dense) {
            std::int64_t lin = 0;
            for (int a = D - 1; a >= 0; --a) lin = lin * m_dims[a] + (c[a] - m_origin[a]);
            m_point_bucket[i] = static_cast<std::uint32_t>(lin);
        } else {
            m_point_bucket[i] = bucket_of(c);
        }
    });

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
    if (!keys.empty()) {
        // Each bucket in key order (insertion sort: a bucket holds a few points).
        const std::uint32_t* key = keys.data();
        parallel_blocks(exec, buckets, [&](std::size_t b0, std::size_t b1) {
            for (std::size_t b = b0; b < b1; ++b) {
                std::uint32_t* first = m_sorted_index.data() + start[b];
                const std::size_t count = start[b + 1] - start[b];
                for (std::size_t k = 1; k < count; ++k) {
                    const std::uint32_t v = first[k];
                    std::size_t m = k;
                    for (; m > 0 && key[first[m - 1]] > key[v]; --m) first[m] = first[m - 1];
                    first[m] = v;
                }
            }
        }, 4096);
    }

    parallel_for_each_index(exec, n, [&](std::size_t s) {
        const Vec<D> x = points[m_sorted_index[s]];
        for (int a = 0; a < D; ++a) m_sorted_x[a][s] = x[a];
        if (!m_dense) m_sorted_cell[s] = cell_of(x);
    });
}

namespace {

// Writes to dst the candidates k with |x - c_k|^2 < r2 and index != self, in candidate order; returns
// how many. d^2 is summed axis by axis without fused multiply-adds (this file is compiled with
// -ffp-contract=off), so every code path, and a brute-force check, decide borderline pairs alike.
// With d2dst (not null), each survivor's d^2 is written beside it (dst and d2dst have the same spare slots).
template <int D>
std::size_t filter_within(const Vec<D>& x, const float* const (&cx)[D], const std::uint32_t* ci, std::size_t nc,
                          float r2, std::uint32_t self, std::uint32_t* dst, float* d2dst = nullptr) {
    std::size_t count = 0;
    std::size_t k = 0;
#if defined(__AVX2__)
    // 8 candidates at a time. The survivors are packed by a permutation looked up from their 8-bit
    // mask, then stored whole (dst has spare slots). Measured on AMD Zen 4 this is as fast as a
    // 16-wide AVX-512 compress (which must not be a compress-store to memory: that one is microcoded
    // there and was 45% slower), and it runs on every x86-64 processor of the last ten years.
    static constexpr auto kPack = [] {
        std::array<std::array<std::uint8_t, 8>, 256> t{};
        for (int m = 0; m < 256; ++m) {
            int n = 0;
            for (int b = 0; b < 8; ++b)
                if (m & (1 << b)) t[m][n++] = static_cast<std::uint8_t>(b);
        }
        return t;
    }();
    __m256 q[D];
    for (int a = 0; a < D; ++a) q[a] = _mm256_set1_ps(x[a]);
    const __m256 vr2 = _mm256_set1_ps(r2);
    const __m256i vself = _mm256_set1_epi32(static_cast<int>(self));
    for (; k < nc; k += 8) {
        // The last, partial vector loads with a mask (lanes past nc read nothing and are dropped).
        const bool full = k + 8 <= nc;
        const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nc - k)),
                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 d2 = _mm256_setzero_ps();
        for (int a = 0; a < D; ++a) {
            const __m256 c = full ? _mm256_loadu_ps(cx[a] + k) : _mm256_maskload_ps(cx[a] + k, live);
            const __m256 d = _mm256_sub_ps(q[a], c);
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(d, d));
        }
        const __m256i idx = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ci + k))
                                 : _mm256_maskload_epi32(reinterpret_cast<const int*>(ci + k), live);
        const int near = _mm256_movemask_ps(_mm256_cmp_ps(d2, vr2, _CMP_LT_OQ));
        const int self_lane = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(idx, vself)));
        const int m = near & ~self_lane & _mm256_movemask_ps(_mm256_castsi256_ps(live));
        std::uint64_t lanes;
        std::memcpy(&lanes, kPack[m].data(), 8);
        const __m256i perm = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(lanes)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + count), _mm256_permutevar8x32_epi32(idx, perm));
        if (d2dst) _mm256_storeu_ps(d2dst + count, _mm256_permutevar8x32_ps(d2, perm));
        count += static_cast<std::size_t>(__builtin_popcount(m));
    }
#endif
    for (; k < nc; ++k) {
        float d2 = 0.0f;
        for (int a = 0; a < D; ++a) {
            const float d = x[a] - cx[a][k];
            d2 = d2 + d * d;
        }
        dst[count] = ci[k];
        if (d2dst) d2dst[count] = d2;
        count += (d2 < r2) & (ci[k] != self);
    }
    return count;
}

}  // namespace

template <int D>
void NeighborGrid<D>::find_neighbors(std::span<const Vec<D>> queries, float radius, bool same_set, NeighborLists& out,
                                     const ExecContext& exec, std::size_t max_candidates) const {
    EDDY_ASSERT(radius <= m_cell_size * (1.0f + 1e-6f));
    EDDY_ASSERT(!same_set || queries.size() == point_count());
    const std::size_t nq = queries.size();
    constexpr std::size_t block = 256;
    const std::size_t blocks = (nq + block - 1) / block;
    out.offsets.resize(nq + 1);
    out.offsets[0] = 0;
    if (out.block_scratch.size() < blocks) out.block_scratch.resize(blocks);
    // Crowded queries per block: how many, and the first one (index, candidates). Blocks write their own.
    struct Crowd {
        std::size_t count = 0;
        std::uint32_t first = 0, candidates = 0;
    };
    std::vector<Crowd> crowd(max_candidates > 0 ? blocks : 0);

    // Pass 1: each block of queries collects its lists into its own buffer, counts per query.
    const float r2 = radius * radius;
    parallel_blocks(exec, nq, [&](std::size_t b0, std::size_t b1) {
        auto& buf = out.block_scratch[b0 / block];
        std::size_t used = 0;  // buf's size is its capacity: growing never zero-fills per query
        Candidates cand;
        for (std::size_t i = b0; i < b1; ++i) {
            const auto self = same_set ? static_cast<std::uint32_t>(i) : 0xffffffffu;
            std::size_t crowded = 0;
            const std::size_t count = filter_query(queries[i], self, r2, max_candidates, cand, buf, used, crowded);
            if (crowded > 0) {  // the candidate limit: this query's list stays empty
                Crowd& k = crowd[b0 / block];
                if (k.count++ == 0) {
                    k.first = static_cast<std::uint32_t>(i);
                    k.candidates = static_cast<std::uint32_t>(std::min<std::size_t>(crowded, 0xffffffffu));
                }
            }
            used += count;
            out.offsets[i + 1] = static_cast<std::uint32_t>(count);
        }
    }, block);

    out.crowded = 0;
    for (const Crowd& k : crowd)
        if (k.count > 0) {
            if (out.crowded == 0) {  // blocks in query order: the first crowded block has the lowest query
                out.crowded_query = k.first;
                out.crowded_candidates = k.candidates;
            }
            out.crowded += k.count;
        }
    // Prefix sum of the counts (serial: one add per query), then blocks copy their lists in place.
    for (std::size_t i = 0; i < nq; ++i) out.offsets[i + 1] += out.offsets[i];
    detail::resize_for_overwrite(out.indices, out.offsets[nq]);  // every list copied in below
    parallel_blocks(exec, nq, [&](std::size_t b0, std::size_t) {
        const auto& buf = out.block_scratch[b0 / block];
        const std::size_t used = out.offsets[std::min(nq, b0 + block)] - out.offsets[b0];
        if (used) std::memcpy(out.indices.data() + out.offsets[b0], buf.data(), used * sizeof(std::uint32_t));
    }, block);
}

template <int D>
std::size_t NeighborGrid<D>::filter_query(const Vec<D>& x, std::uint32_t self, float r2, std::size_t max_candidates,
                                          Candidates& cand, std::vector<std::uint32_t>& buf, std::size_t at,
                                          std::size_t& crowded, std::vector<float>* d2buf) const {
    const Cell c = cell_of(x);
    std::size_t count = 0;
    auto filter = [&](const float* const (&cx)[D], const std::uint32_t* ci, std::size_t nc) {
        if (buf.size() < at + count + nc + 16) buf.resize(std::max(2 * buf.size(), at + count + nc + 16));
        if (d2buf && d2buf->size() < buf.size()) d2buf->resize(buf.size());
        float* d2 = d2buf ? d2buf->data() + at + count : nullptr;
        count += filter_within(x, cx, ci, nc, r2, self, buf.data() + at + count, d2);
    };
    // The candidate limit: counted from the runs (dense) or the gathered cell set (hashed) before any
    // distance is computed.
    auto too_many = [&](std::size_t nc) {
        if (max_candidates == 0 || nc <= max_candidates) return false;
        crowded = nc;
        return true;
    };
    if (m_dense) {
        if (max_candidates > 0) {
            std::size_t nc = 0;
            for_each_candidate_run(c, [&](std::uint32_t s0, std::uint32_t s1, const Cell*) { nc += s1 - s0; });
            if (too_many(nc)) return 0;
        }
        for_each_candidate_run(c, [&](std::uint32_t s0, std::uint32_t s1, const Cell*) {
            const float* cx[D];
            for (int a = 0; a < D; ++a) cx[a] = m_sorted_x[a].data() + s0;
            filter(cx, m_sorted_index.data() + s0, s1 - s0);
        });
        return count;
    }
    // Hashed: consecutive queries in the same cell (the common case once particles are in Morton order)
    // share one gathered candidate set.
    if (!cand.have || !same_cell(c, cand.cell)) {
        cand.cell = c;
        cand.have = true;
        for (int a = 0; a < D; ++a) cand.x[a].clear();
        cand.index.clear();
        for_each_candidate_run(c, [&](std::uint32_t s0, std::uint32_t s1, const Cell* cell) {
            for (std::uint32_t s = s0; s < s1; ++s) {
                if (!same_cell(m_sorted_cell[s], *cell)) continue;
                for (int a = 0; a < D; ++a) cand.x[a].push_back(m_sorted_x[a][s]);
                cand.index.push_back(m_sorted_index[s]);
            }
        });
    }
    if (too_many(cand.index.size())) return 0;
    const float* cx[D];
    for (int a = 0; a < D; ++a) cx[a] = cand.x[a].data();
    filter(cx, cand.index.data(), cand.index.size());
    return count;
}

template <int D>
void NeighborGrid<D>::for_each_list(std::span<const Vec<D>> queries, float radius, const ExecContext& exec,
                                    const std::function<void(std::size_t, std::span<const std::uint32_t>,
                                                             std::span<const float>)>& f) const {
    EDDY_ASSERT(radius <= m_cell_size * (1.0f + 1e-6f));
    const float r2 = radius * radius;
    parallel_blocks(exec, queries.size(), [&](std::size_t b0, std::size_t b1) {
        std::vector<std::uint32_t> buf;
        std::vector<float> d2;
        Candidates cand;
        for (std::size_t i = b0; i < b1; ++i) {
            std::size_t crowded = 0;
            const std::size_t count = filter_query(queries[i], 0xffffffffu, r2, 0, cand, buf, 0, crowded, &d2);
            f(i, std::span<const std::uint32_t>(buf.data(), count), std::span<const float>(d2.data(), count));
        }
    }, 256);
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
    // Codes are relative to the lowest cell, so that negative cells sort correctly.
    const CellBox box = cell_box(points, exec);
    const std::int64_t* lo = box.lo;
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
    parallel_sort(exec, keys.begin(), keys.end());
    std::vector<std::uint32_t> order(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) { order[i] = keys[i].second; });
    return order;
}

template <int D>
std::uint32_t NeighborGrid<D>::fullest_bucket(std::uint32_t& point) const {
    std::uint32_t most = 0;
    point = 0;
    for (std::size_t b = 0; b + 1 < m_bucket_start.size(); ++b) {
        const std::uint32_t count = m_bucket_start[b + 1] - m_bucket_start[b];
        if (count > most) {
            most = count;
            point = m_sorted_index[m_bucket_start[b]];
        }
    }
    return most;
}

template <int D>
std::size_t NeighborGrid<D>::memory_bytes() const {
    return m_bucket_start.capacity() * sizeof(std::uint32_t) + m_sorted_index.capacity() * sizeof(std::uint32_t) +
           m_sorted_x[0].capacity() * sizeof(float) * D + m_sorted_cell.capacity() * sizeof(Cell) +
           m_point_bucket.capacity() * sizeof(std::uint32_t);
}

template class NeighborGrid<2>;
template class NeighborGrid<3>;

}  // namespace eddy
