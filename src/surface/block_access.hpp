// Internal: reading a block and its 3^D surrounding blocks of a SparseGrid with local coordinates
// in [-B, 2B) on each axis; absent blocks read as the grid's background.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "eddy/surface.hpp"

namespace eddy::surface_detail {

template <int D>
constexpr int kAround = D == 2 ? 9 : 27;

/// Local node index x + B (y + B z).
template <int D>
inline int local_index(const std::array<int, D>& l, int B) {
    return D == 2 ? l[0] + B * l[1] : l[0] + B * (l[1] + B * l[2]);
}
template <int D>
inline std::array<int, D> local_coords(int l, int B) {
    std::array<int, D> c;
    for (int a = 0; a < D; ++a) {
        c[a] = l % B;
        l /= B;
    }
    return c;
}

/// Pointers to the values of block b and the blocks around it (nullptr where absent).
template <int D, class T>
struct Around {
    std::array<T*, kAround<D>> block{};
    int B = 8;
    float background = 0.0f;

    static int slot(const std::array<int, D>& d) {
        return D == 2 ? (d[0] + 1) + 3 * (d[1] + 1) : (d[0] + 1) + 3 * (d[1] + 1) + 9 * (d[2] + 1);
    }
    template <class Grid>
    static Around make(Grid& g, std::size_t b) {
        Around r;
        r.B = g.layout.block;
        r.background = g.background;
        const int n = g.layout.voxels_per_block();
        const auto& c0 = g.layout.coords[b];
        for (int s = 0; s < kAround<D>; ++s) {
            std::array<int, D> c = c0;
            int t = s;
            for (int a = 0; a < D; ++a) {
                c[a] += t % 3 - 1;
                t /= 3;
            }
            const std::int32_t nb = (s == kAround<D> / 2) ? std::int32_t(b) : g.layout.find(c);
            r.block[s] = nb < 0 ? nullptr : g.values.data() + std::size_t(nb) * n;
        }
        return r;
    }
    /// Value at local coordinates l (each in [-B, 2B)).
    float get(std::array<int, D> l) const {
        std::array<int, D> d;
        for (int a = 0; a < D; ++a) {
            d[a] = l[a] < 0 ? -1 : (l[a] >= B ? 1 : 0);
            l[a] -= d[a] * B;
        }
        const T* p = block[slot(d)];
        return p ? p[local_index<D>(l, B)] : background;
    }
    /// Value one step along axis a (dir = -1 or +1) from local node l of the centre block.
    float step(std::array<int, D> l, int a, int dir) const {
        l[a] += dir;
        return get(l);
    }
};

/// Per block: +1 when every value is >= t, -1 when every value is < t, 0 when mixed. Blocks that are
/// uniform and agree with their face neighbours hold no crossing and can be skipped whole.
template <int D>
std::vector<std::int8_t> block_sides(const SparseGrid<D>& g, float t, const ExecContext& exec) {
    const int nv = g.layout.voxels_per_block();
    std::vector<std::int8_t> side(g.layout.size());
    parallel_for_each_index(exec, g.layout.size(), [&](std::size_t b) {
        const float* v = g.values.data() + b * nv;
        int above = 0;
        for (int l = 0; l < nv; ++l) above += v[l] >= t;
        side[b] = above == nv ? 1 : (above == 0 ? -1 : 0);
    }, 16);
    return side;
}

}  // namespace eddy::surface_detail
