// Stage 3: filling the signed distance away from the surface by solving the Eikonal equation
// |grad u| = 1 with fast sweeping (Zhao 2005, "A fast sweeping method for Eikonal equations",
// Math. Comp. 74(250), eqs. 2.4-2.5; seed 004, ComputeRemainingSDFFromImmediateSDF_Nearest).
//
// Godunov upwind update at a node with spacing h, from the axis minima a_k = min(|u_k-1|, |u_k+1|)
// sorted a1 <= a2 <= a3:
//   u' = a1 + h                                          if a1 + h <= a2
//   u' = (a1 + a2 + sqrt(2 h^2 - (a1 - a2)^2)) / 2        else, if that is <= a3 (or D = 2)
//   u' = (S + sqrt(S^2 - 3 (a1^2 + a2^2 + a3^2 - h^2))) / 3, S = a1 + a2 + a3, otherwise;
//   |u| <- min(|u|, u'), keeping the sign of the node's side. Pinned nodes never change.
// Gauss-Seidel in the 2^D sweep orders (+-x, +-y[, +-z]).
//
// The result of one sweep only depends on, for each node, which of its axis neighbours were updated
// before it; any order that visits a node after its upwind neighbours gives the same bits. The serial
// reference visits blocks in order of sum_a s_a c_a (a topological order of the upwind relation); the
// wavefront visits a block once its upwind face neighbours are done (the seed's predecessor counts and
// feeder, with tbb::parallel_for_each, the successor of tbb::parallel_do). Blocks that run at the same
// time are never face neighbours, and a node only reads its face neighbours: parallel == serial.
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <memory>
#include <numeric>

#include "eddy/exec.hpp"  // first: EDDY_NO_TBB
#include "eddy/surface.hpp"
#include "surface/block_access.hpp"

#ifndef EDDY_NO_TBB
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for_each.h>
#endif

namespace eddy {

using namespace surface_detail;

namespace {

// Zhao 2005, eq. 2.4 (2D) and its 3D form (REFERENCES.md, "Surface").
template <int D>
inline float godunov(float a[D], float h) {
    // Sorting network and all candidates computed, then selected: which case applies is data
    // dependent, and mispredicted branches cost more than a second square root. Far values (FLT_MAX)
    // give FLT_MAX (a1 + h rounds to FLT_MAX) and never select the overflowing candidates. A
    // discriminant is only negative where its candidate is not selected (2h^2 - d^2 < 0 means
    // a1 - a0 > h, so u1 wins; u3 is chosen only when the two-axis solution passes a3, and then the
    // three-axis quadratic has a root above a3); |.| instead of max(0, .) keeps the compiler from
    // branching around the square root.
    if constexpr (D == 2) {
        const float a0 = std::min(a[0], a[1]), a1 = std::max(a[0], a[1]);
        const float u1 = a0 + h;
        const float d = a0 - a1;
        const float u2 = 0.5f * (a0 + a1 + std::sqrt(std::abs(2.0f * h * h - d * d)));
        return u1 <= a1 ? u1 : u2;
    } else {
        float a0 = std::min(a[0], a[1]), a1 = std::max(a[0], a[1]);
        const float a2 = std::max(a1, a[2]);
        a1 = std::min(a1, a[2]);
        const float t = std::min(a0, a1);
        a1 = std::max(a0, a1);
        a0 = t;
        const float u1 = a0 + h;
        const float d = a0 - a1;
        const float u2 = 0.5f * (a0 + a1 + std::sqrt(std::abs(2.0f * h * h - d * d)));
        const float S = a0 + a1 + a2;
        const float Q = a0 * a0 + a1 * a1 + a2 * a2 - h * h;
        const float u3 = (S + std::sqrt(std::abs(S * S - 3.0f * Q))) * (1.0f / 3.0f);
        return u1 <= a1 ? u1 : (u2 <= a2 ? u2 : u3);
    }
}

// Sweeps one block in the order given by the signs s (+1: increasing index). The block's |u| and the
// facing layers of its 2 D face neighbours are copied into a padded scratch of (B + 2)^D values, so the
// stencil needs no bounds tests; updates go to both the scratch and the grid (with the node's sign).
// Neighbours never change while this block runs (they are not face-adjacent in time), so reading
// copies gives the same bits as reading the grid.
template <int D>
void sweep_block(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, std::size_t b,
                 const std::array<int, D>& s, std::vector<float>& pad) {
    const int B = phi.layout.block, nv = phi.layout.voxels_per_block(), P = B + 2;
    const float h = phi.layout.voxel;
    const auto& nb = phi.layout.neighbors[b];
    float* self = phi.values.data() + b * nv;
    const std::uint8_t* pin = pinned.data() + b * nv;
    const int pstride[3] = {1, P, P * P};
    const std::size_t npad = D == 2 ? std::size_t(P) * P : std::size_t(P) * P * P;
    pad.assign(npad, FLT_MAX);
    auto pidx = [&](int x, int y, int z) { return (x + 1) + P * ((y + 1) + P * (D == 3 ? z + 1 : 0)); };
    const int nz = D == 3 ? B : 1;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y) {
            float* __restrict dst = pad.data() + pidx(0, y, z);
            const float* __restrict src = self + B * (y + B * z);
            for (int x = 0; x < B; ++x) dst[x] = std::abs(src[x]);
        }
    // Face layers: for axis a and side, the neighbour's plane adjacent to this block.
    for (int a = 0; a < D; ++a)
        for (int side = 0; side < 2; ++side) {
            const std::int32_t n = nb[2 * a + side];
            if (n < 0) continue;
            const float* src = phi.values.data() + std::size_t(n) * nv;
            const int src_plane = side ? 0 : B - 1, dst_plane = side ? B : -1;
            const int u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;  // the other axes (v unused in 2D)
            const int nvv = D == 3 ? B : 1;
            for (int j = 0; j < nvv; ++j)
                for (int i = 0; i < B; ++i) {
                    int c[3] = {0, 0, 0}, d[3] = {0, 0, 0};
                    c[a] = src_plane;
                    d[a] = dst_plane;
                    c[u] = d[u] = i;
                    if (D == 3) c[v] = d[v] = j;
                    pad[pidx(d[0], d[1], d[2])] = std::abs(src[c[0] + B * (c[1] + B * c[2])]);
                }
        }
    // Within a plane, nodes go by anti-diagonals kx + ky = t of the sweep's own coordinates: a node
    // only waits for (kx - 1, ky) and (kx, ky - 1), both on diagonal t - 1, so the nodes of one
    // diagonal are independent and the processor overlaps their updates (a row-by-row Gauss-Seidel is
    // one long chain of dependent square roots). Any order that visits a node after its upwind
    // neighbours gives the same result as the lexicographic sweep, bit for bit.
    const int zb = D == 3 ? (s[D - 1] > 0 ? 0 : B - 1) : 0;
    for (int kz = 0; kz < nz; ++kz) {
        const int z = D == 3 ? zb + (s[2] > 0 ? kz : -kz) : 0;
        // Along a diagonal, ky + 1 and kx - 1: fixed index steps in the grid block and the scratch.
        const int sx = s[0] > 0 ? 1 : -1, sy = s[1] > 0 ? 1 : -1;
        const int dl = sy * B - sx, dq = sy * P - sx;
        const float* __restrict pd = pad.data();
        for (int t = 0; t <= 2 * B - 2; ++t) {
            const int ky0 = std::max(0, t - (B - 1)), ky1 = std::min(B - 1, t);
            const int x0 = sx > 0 ? t - ky0 : B - 1 - (t - ky0), y0 = sy > 0 ? ky0 : B - 1 - ky0;
            int l = x0 + B * (y0 + B * z), q = pidx(x0, y0, z);
            for (int ky = ky0; ky <= ky1; ++ky, l += dl, q += dq) {
                float a[D];
                for (int ax = 0; ax < D; ++ax) a[ax] = std::min(pd[q - pstride[ax]], pd[q + pstride[ax]]);
                // |u| <- min(|u|, u'), pinned nodes kept; as selects (pad[q] is exactly |self[l]|, so
                // an unchanged node is rewritten with its own bits).
                const float u = pin[l] ? pd[q] : std::min(godunov<D>(a, h), pd[q]);
                pad[q] = u;
                self[l] = std::copysign(u, self[l]);
            }
        }
    }
}

template <int D>
std::array<int, D> sweep_signs(int order) {
    std::array<int, D> s;
    for (int a = 0; a < D; ++a) s[a] = (order >> a) & 1 ? 1 : -1;
    return s;
}

}  // namespace

template <int D>
void sweep_serial(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, int rounds) {
    const std::size_t n = phi.layout.size();
    std::vector<std::uint32_t> order(n);
    std::vector<long long> key(n);
    std::vector<float> pad;
    for (int round = 0; round < rounds; ++round)
        for (int o = 0; o < (1 << D); ++o) {
            const auto s = sweep_signs<D>(o);
            for (std::size_t b = 0; b < n; ++b) {
                key[b] = 0;
                for (int a = 0; a < D; ++a) key[b] += static_cast<long long>(s[a]) * phi.layout.coords[b][a];
            }
            std::iota(order.begin(), order.end(), 0u);
            std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return key[x] < key[y]; });
            for (const std::uint32_t b : order) sweep_block<D>(phi, pinned, b, s, pad);
        }
}

template <int D>
void sweep_wavefront(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, const ExecContext& exec, int rounds) {
#ifdef EDDY_NO_TBB
    // No oneTBB (the web builds): the serial reference, which gives the same result (tested natively).
    (void)exec;
    sweep_serial<D>(phi, pinned, rounds);
#else
    const std::size_t n = phi.layout.size();
    const auto& nbs = phi.layout.neighbors;
    std::unique_ptr<std::atomic<int>[]> pending(new std::atomic<int>[n]);
    // One padded scratch per worker thread, owned by this call (every block overwrites all of it).
    tbb::enumerable_thread_specific<std::vector<float>> pads;
    std::vector<std::uint32_t> roots;
    for (int round = 0; round < rounds; ++round)
        for (int o = 0; o < (1 << D); ++o) {
            const auto s = sweep_signs<D>(o);
            // Predecessors: the face neighbours upwind (on the -s_a side of each axis a).
            roots.clear();
            for (std::size_t b = 0; b < n; ++b) {
                int c = 0;
                for (int a = 0; a < D; ++a) c += nbs[b][2 * a + (s[a] > 0 ? 0 : 1)] >= 0;
                pending[b].store(c, std::memory_order_relaxed);
                if (c == 0) roots.push_back(static_cast<std::uint32_t>(b));
            }
            exec.run([&] {
                tbb::parallel_for_each(roots.begin(), roots.end(), [&](std::uint32_t b, tbb::feeder<std::uint32_t>& feeder) {
                    sweep_block<D>(phi, pinned, b, s, pads.local());
                    for (int a = 0; a < D; ++a) {
                        const std::int32_t next = nbs[b][2 * a + (s[a] > 0 ? 1 : 0)];
                        // The last predecessor to finish hands the block to the loop (seed 004, FeedBlockToLoop).
                        if (next >= 0 && pending[next].fetch_sub(1, std::memory_order_acq_rel) == 1)
                            feeder.add(static_cast<std::uint32_t>(next));
                    }
                });
            });
        }
#endif
}

template void sweep_serial<2>(SparseGrid<2>&, const std::vector<std::uint8_t>&, int);
template void sweep_serial<3>(SparseGrid<3>&, const std::vector<std::uint8_t>&, int);
template void sweep_wavefront<2>(SparseGrid<2>&, const std::vector<std::uint8_t>&, const ExecContext&, int);
template void sweep_wavefront<3>(SparseGrid<3>&, const std::vector<std::uint8_t>&, const ExecContext&, int);

}  // namespace eddy
