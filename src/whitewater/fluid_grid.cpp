// The whitewater's fluid grid (fluid_grid.hpp): the fluid sorted by cell, (z, y, x) order, stable.
// A counting sort over the box of cells when it holds not many more cells than particles, else a sort
// of the cells' keys: the same order either way.
#include "whitewater/fluid_grid.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace eddy::ww {

namespace {
constexpr std::int32_t kCellLimit = (1 << 20) - 2;  // |cell| <= this: cell +- 1 packs into 21 bits
}  // namespace

template <int D>
typename FluidGrid<D>::Cell FluidGrid<D>::cell_of(const Vec<D>& p) const {
    Cell c{};
    for (int a = 0; a < D; ++a) {
        float f = std::floor(p[a] * inv_h);
        if (!(f > -float(kCellLimit))) f = -float(kCellLimit);  // far or non-finite: an extreme cell
        if (f > float(kCellLimit)) f = float(kCellLimit);
        c[a] = static_cast<std::int32_t>(f);
    }
    return c;
}

template <int D>
std::uint64_t FluidGrid<D>::key(const Cell& c) {
    std::uint64_t k = 0;
    for (int a = D - 1; a >= 0; --a) k = (k << 21) | std::uint64_t(std::uint32_t(c[a] + (1 << 20)) & 0x1fffffu);
    return k;
}

template <int D>
void FluidGrid<D>::build(std::span<const Vec<D>> pos, std::span<const Vec<D>> vel, float support, const ExecContext& exec) {
    h = support;
    inv_h = 1.0f / support;
    const std::size_t n = pos.size();
    std::vector<Cell> cell(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) { cell[i] = cell_of(pos[i]); });
    order.resize(n);
    keys.clear();
    starts.clear();
    dense.clear();
    for (int a = 0; a < D; ++a) {  // padded: kLanes far away, at rest
        x[a].assign(n + kLanes, kFar);
        v[a].assign(n + kLanes, 0.0f);
    }
    cell_begin.resize(n);
    if (n == 0) return;
    std::array<std::int64_t, 3> hi{0, 0, 0};
    for (int a = 0; a < D; ++a) lo[a] = hi[a] = cell[0][a];
    for (const Cell& c : cell)
        for (int a = 0; a < D; ++a) {
            lo[a] = std::min<std::int64_t>(lo[a], c[a]);
            hi[a] = std::max<std::int64_t>(hi[a], c[a]);
        }
    double cells = 1.0;
    for (int a = 0; a < D; ++a) {
        dims[a] = hi[a] - lo[a] + 1;
        cells *= double(dims[a]);
    }
    for (int a = D; a < 3; ++a) {
        lo[a] = 0;
        dims[a] = 1;
    }
    if (cells <= 4.0 * double(n) + 4096.0) {
        // Counting sort over the box: particles of a cell in index order.
        const std::size_t nc = static_cast<std::size_t>(cells);
        dense.assign(nc + 1, 0);
        std::vector<std::uint32_t> lin(n);
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t l = 0;
            for (int a = D - 1; a >= 0; --a) l = l * dims[a] + (cell[i][a] - lo[a]);
            lin[i] = static_cast<std::uint32_t>(l);
            ++dense[lin[i] + 1];
        }
        for (std::size_t c = 0; c < nc; ++c) dense[c + 1] += dense[c];
        std::vector<std::uint32_t> fill(dense.begin(), dense.end() - 1);
        for (std::size_t i = 0; i < n; ++i) order[fill[lin[i]]++] = static_cast<std::uint32_t>(i);
    } else {
        std::vector<std::pair<std::uint64_t, std::uint32_t>> kv(n);
        for (std::size_t i = 0; i < n; ++i) kv[i] = {key(cell[i]), static_cast<std::uint32_t>(i)};
        std::sort(kv.begin(), kv.end());
        for (std::size_t s = 0; s < n; ++s) order[s] = kv[s].second;
    }
    // The occupied cells and each particle's cell start.
    std::uint64_t prev = 0;
    for (std::size_t s = 0; s < n; ++s) {
        const std::uint64_t k = key(cell[order[s]]);
        if (s == 0 || k != prev) {
            keys.push_back(k);
            starts.push_back(static_cast<std::uint32_t>(s));
            prev = k;
        }
        cell_begin[s] = starts.back();
    }
    starts.push_back(static_cast<std::uint32_t>(n));
    parallel_for_each_index(exec, n, [&](std::size_t s) {
        const std::uint32_t i = order[s];
        for (int a = 0; a < D; ++a) {
            x[a][s] = pos[i][a];
            v[a][s] = vel[i][a];
        }
    });
}

template <int D>
int FluidGrid<D>::runs(const Cell& c, std::array<std::array<std::uint32_t, 2>, kRuns>& out) const {
    int m = 0;
    if (order.empty()) return 0;
    const int z0 = D == 3 ? -1 : 0, z1 = D == 3 ? 1 : 0;
    for (int dz = z0; dz <= z1; ++dz)
        for (int dy = -1; dy <= 1; ++dy) {
            std::uint32_t s0 = 0, s1 = 0;
            if (!dense.empty()) {
                const std::int64_t ry = std::int64_t(c[1]) + dy - lo[1];
                const std::int64_t rz = D == 3 ? std::int64_t(c[D - 1]) + dz - lo[2] : 0;
                if (ry < 0 || ry >= dims[1] || rz < 0 || rz >= dims[2]) continue;
                const std::int64_t x0 = std::max<std::int64_t>(std::int64_t(c[0]) - 1 - lo[0], 0);
                const std::int64_t x1 = std::min<std::int64_t>(std::int64_t(c[0]) + 1 - lo[0], dims[0] - 1);
                if (x0 > x1) continue;
                const std::int64_t row = (rz * dims[1] + ry) * dims[0];
                s0 = dense[std::size_t(row + x0)];
                s1 = dense[std::size_t(row + x1 + 1)];
            } else {
                Cell a = c, b = c;
                a[0] -= 1;
                b[0] += 1;
                a[1] = b[1] = c[1] + dy;
                if constexpr (D == 3) a[2] = b[2] = c[2] + dz;
                const auto first = std::lower_bound(keys.begin(), keys.end(), key(a));
                const auto last = std::upper_bound(first, keys.end(), key(b));
                s0 = starts[std::size_t(first - keys.begin())];
                s1 = starts[std::size_t(last - keys.begin())];
            }
            if (s1 > s0) out[m++] = {s0, s1};
        }
    return m;
}

template struct FluidGrid<2>;
template struct FluidGrid<3>;

}  // namespace eddy::ww
