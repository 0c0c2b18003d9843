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

#include <tbb/parallel_for_each.h>

#include "eddy/surface.hpp"
#include "surface/block_access.hpp"

namespace eddy {

using namespace surface_detail;

namespace {

// Zhao 2005, eq. 2.4 (2D) and its 3D form (REFERENCES.md, "Surface").
template <int D>
inline float godunov(float a[D], float h) {
    if constexpr (D == 2) {
        if (a[0] > a[1]) std::swap(a[0], a[1]);
    } else {
        if (a[0] > a[1]) std::swap(a[0], a[1]);
        if (a[1] > a[2]) std::swap(a[1], a[2]);
        if (a[0] > a[1]) std::swap(a[0], a[1]);
    }
    if (a[0] >= FLT_MAX) return FLT_MAX;
    float u = a[0] + h;
    if (u <= a[1]) return u;
    const float d = a[0] - a[1];
    u = 0.5f * (a[0] + a[1] + std::sqrt(2.0f * h * h - d * d));
    if constexpr (D == 2) return u;
    else {
        if (u <= a[2]) return u;
        const float S = a[0] + a[1] + a[2];
        const float Q = a[0] * a[0] + a[1] * a[1] + a[2] * a[2] - h * h;
        return (S + std::sqrt(std::max(0.0f, S * S - 3.0f * Q))) / 3.0f;
    }
}

// Sweeps one block in the order given by the signs s (+1: increasing index).
template <int D>
void sweep_block(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, std::size_t b,
                 const std::array<int, D>& s) {
    const int B = phi.layout.block, nv = phi.layout.voxels_per_block();
    const float h = phi.layout.voxel;
    const auto& nb = phi.layout.neighbors[b];
    float* self = phi.values.data() + b * nv;
    const std::uint8_t* pin = pinned.data() + b * nv;
    const float* side[2 * D];
    for (int k = 0; k < 2 * D; ++k) side[k] = nb[k] < 0 ? nullptr : phi.values.data() + std::size_t(nb[k]) * nv;
    const int stride[3] = {1, B, B * B};
    auto value = [&](const std::array<int, D>& c, int l, int a, int dir) -> float {
        const int x = c[a] + dir;
        if (x >= 0 && x < B) return self[l + dir * stride[a]];
        const float* p = side[2 * a + (dir > 0 ? 1 : 0)];
        if (!p) return FLT_MAX;
        return p[l + (dir > 0 ? -(B - 1) : (B - 1)) * stride[a]];
    };
    std::array<int, D> c;
    const int zb = D == 3 ? (s[D - 1] > 0 ? 0 : B - 1) : 0;
    const int nz = D == 3 ? B : 1;
    for (int kz = 0; kz < nz; ++kz) {
        if constexpr (D == 3) c[2] = zb + (s[2] > 0 ? kz : -kz);
        for (int ky = 0; ky < B; ++ky) {
            c[1] = s[1] > 0 ? ky : B - 1 - ky;
            for (int kx = 0; kx < B; ++kx) {
                c[0] = s[0] > 0 ? kx : B - 1 - kx;
                const int l = local_index<D>(c, B);
                if (pin[l]) continue;
                float a[D];
                for (int ax = 0; ax < D; ++ax)
                    a[ax] = std::min(std::abs(value(c, l, ax, -1)), std::abs(value(c, l, ax, +1)));
                const float u = godunov<D>(a, h);
                const float old = self[l];
                if (u < std::abs(old)) self[l] = std::copysign(u, old);
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
    for (int round = 0; round < rounds; ++round)
        for (int o = 0; o < (1 << D); ++o) {
            const auto s = sweep_signs<D>(o);
            for (std::size_t b = 0; b < n; ++b) {
                key[b] = 0;
                for (int a = 0; a < D; ++a) key[b] += static_cast<long long>(s[a]) * phi.layout.coords[b][a];
            }
            std::iota(order.begin(), order.end(), 0u);
            std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return key[x] < key[y]; });
            for (const std::uint32_t b : order) sweep_block<D>(phi, pinned, b, s);
        }
}

template <int D>
void sweep_wavefront(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, const ExecContext& exec, int rounds) {
    const std::size_t n = phi.layout.size();
    const auto& nbs = phi.layout.neighbors;
    std::unique_ptr<std::atomic<int>[]> pending(new std::atomic<int>[n]);
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
                    sweep_block<D>(phi, pinned, b, s);
                    for (int a = 0; a < D; ++a) {
                        const std::int32_t next = nbs[b][2 * a + (s[a] > 0 ? 1 : 0)];
                        // The last predecessor to finish hands the block to the loop (seed 004, FeedBlockToLoop).
                        if (next >= 0 && pending[next].fetch_sub(1, std::memory_order_acq_rel) == 1)
                            feeder.add(static_cast<std::uint32_t>(next));
                    }
                });
            });
        }
}

template void sweep_serial<2>(SparseGrid<2>&, const std::vector<std::uint8_t>&, int);
template void sweep_serial<3>(SparseGrid<3>&, const std::vector<std::uint8_t>&, int);
template void sweep_wavefront<2>(SparseGrid<2>&, const std::vector<std::uint8_t>&, const ExecContext&, int);
template void sweep_wavefront<3>(SparseGrid<3>&, const std::vector<std::uint8_t>&, const ExecContext&, int);

}  // namespace eddy
