// What reconstruct_surface() will allocate for a set of particles, found before it allocates
// (issue 12: `eddy mesh --radius 1e-7` grew past 2.7 GB; two clusters 100 m apart with a .vti
// output died of std::bad_alloc).
//
// The sparse grid has blocks wherever a particle's home block reaches within the kernel radius: the
// home blocks grown by R = floor(h / block extent) + 1 blocks on each side. That union is counted
// exactly by growing the set of home keys one axis at a time (sort, unique), which needs a few
// vectors of block keys, never a grid; past 2^23 blocks (far more than any machine could hold as
// grids) it falls back to the bound min(home blocks x (2R + 1)^D, the grown box).
//
// Bytes per voxel of the active blocks: the density grid (4) for a mesh alone; with the grids kept (an SDF
// output) also the distance grid (4), the pinned flags (1) and the mesh's negated copy of the density (4),
// 13 in all, alive while the mesh is traced; the marching tables (4 D per voxel) of the blocks the surface
// crosses, counted as two per home block on the rim of the home set. A .vti output adds
// a dense float grid over the blocks' box and its file image (8 per node); a .vdb output an OpenVDB
// copy of the active voxels (4 per voxel).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "eddy/memory_budget.hpp"
#include "eddy/surface.hpp"

namespace eddy {

namespace {

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

template <int D>
std::array<int, D> unpack(std::uint64_t k) {
    std::array<int, D> c;
    for (int a = 0; a < D; ++a) c[a] = int((k >> (21 * a)) & 0x1fffff) - (1 << 20);
    return c;
}

}  // namespace

template <int D>
MemoryEstimate estimate_surface_memory(std::span<const Vec<D>> positions, const SurfaceSettings& s, bool dense_sdf,
                                       bool vdb_sdf) {
    MemoryEstimate e;
    const double n = double(positions.size());
    if (positions.empty()) return e;
    const float voxel = s.voxel(), h = s.support(), inv_voxel = 1.0f / voxel;
    const int B = s.block_size;
    const double block_extent = double(B) * voxel;
    if (!(voxel > 0.0f) || !(h >= voxel) || B < 1) return e;  // validate() says what is wrong
    for (const auto& p : positions)
        for (int a = 0; a < D; ++a)
            // Non-finite or beyond the block keys' range: splat_density refuses these with its own message.
            if (!std::isfinite(p[a]) || std::abs(double(p[a])) / block_extent > double(1 << 19)) return e;

    // Home blocks, exactly as splat_density bins the particles.
    std::vector<std::uint64_t> keys(positions.size());
    for (std::size_t i = 0; i < positions.size(); ++i) {
        std::array<int, D> c;
        for (int a = 0; a < D; ++a) c[a] = floor_div(static_cast<int>(std::floor(positions[i][a] * inv_voxel)), B);
        keys[i] = BlockLayout<D>::key(c);
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const double home = double(keys.size());
    int lo[D], hi[D];
    for (int a = 0; a < D; ++a) {
        lo[a] = INT32_MAX;
        hi[a] = INT32_MIN;
    }
    for (std::uint64_t k : keys) {
        const auto c = unpack<D>(k);
        for (int a = 0; a < D; ++a) {
            lo[a] = std::min(lo[a], c[a]);
            hi[a] = std::max(hi[a], c[a]);
        }
    }

    // Anisotropic kernels reach up to 2 h along the surface (anisotropy.cpp): the active set may grow as far.
    const int R = static_cast<int>(std::floor((s.anisotropic ? 2.0f * h : h) / block_extent)) + 1;
    double around = 1.0, box_blocks = 1.0, dense_nodes = 1.0;
    for (int a = 0; a < D; ++a) {
        around *= 2 * R + 1;
        box_blocks *= double(hi[a]) - lo[a] + 1 + 2 * R;
        dense_nodes *= (double(hi[a]) - lo[a] + 1 + 2 * R) * B;
    }
    // Active blocks: grow the home set by R along each axis in turn (a box dilation is separable).
    double active = std::min(home * around, box_blocks);
    {
        constexpr std::size_t kCap = std::size_t{1} << 23;
        std::vector<std::uint64_t> cur = keys, next;
        bool exact = true;
        for (int a = 0; a < D && exact; ++a) {
            if (cur.size() * std::size_t(2 * R + 1) > kCap) {
                exact = false;
                break;
            }
            next.clear();
            next.reserve(cur.size() * std::size_t(2 * R + 1));
            for (std::uint64_t k : cur) {
                auto c = unpack<D>(k);
                const int c0 = c[a];
                for (int d = -R; d <= R; ++d) {
                    c[a] = c0 + d;
                    next.push_back(BlockLayout<D>::key(c));
                }
            }
            std::sort(next.begin(), next.end());
            next.erase(std::unique(next.begin(), next.end()), next.end());
            cur.swap(next);
        }
        if (exact) active = double(cur.size());
    }

    const double V = std::pow(double(B), D);
    // Blocks the surface crosses: about two per home block with a face neighbour that is not a home
    // block (the surface lies within a particle radius or so of the outermost particles).
    double rim = 0.0;
    for (std::uint64_t k : keys) {
        const auto c = unpack<D>(k);
        bool open = false;
        for (int a = 0; a < D && !open; ++a)
            for (int d : {-1, 1}) {
                auto n = c;
                n[a] += d;
                open = open || !std::binary_search(keys.begin(), keys.end(), BlockLayout<D>::key(n));
            }
        rim += open ? 1.0 : 0.0;
    }
    const double crossed = std::min(active, 2.0 * rim);
    // The particles (as read, as positions, binned, with their splat boxes) and the active key list.
    e.add(fmt::format("{} particles", format_count(n)), n * (48.0 + 16.0 * D + 16.0 + 12.0 * D) + home * around * 8.0, n);
    e.add(fmt::format("grids of {} blocks of {}^{} voxels", format_count(active), B, D),
          active * (V * (s.keep_grids || dense_sdf || vdb_sdf ? 13.0 : 4.0) + 12.0 * D + 48.0), active);
    e.add("marching tables", crossed * V * 4.0 * D);
    // Anisotropic kernels: each particle's centre, h G, det, extent (twice: computed in the cells' order,
    // then put back), its cell-sorted copy and sort keys, and the smoothed centres' second pass.
    if (s.anisotropic) e.add("anisotropic kernels", n * (2.0 * (8.0 * D + 4.0 * D * D + 4.0) + 20.0 + 4.0 * D + 8.0 * D), n);
    if (dense_sdf) e.add(fmt::format("dense .vti grid of {} nodes", format_count(dense_nodes)), dense_nodes * 8.0, dense_nodes);
    if (vdb_sdf) e.add("OpenVDB grid", active * V * 4.0);
    e.key = dense_sdf && dense_nodes * 8.0 > 0.5 * e.total() ? "--sdf" : (s.voxel_size > 0.0f ? "--voxel" : "--radius");
    return e;
}

template MemoryEstimate estimate_surface_memory<2>(std::span<const Vec<2>>, const SurfaceSettings&, bool, bool);
template MemoryEstimate estimate_surface_memory<3>(std::span<const Vec<3>>, const SurfaceSettings&, bool, bool);

}  // namespace eddy
