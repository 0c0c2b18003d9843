// Stage 1: particles -> volume-fraction density on a sparse block grid (seed 004: "transfer the
// density to a uniform grid"), by splatting the cubic spline of seed 003.
//
// Gather, don't scatter: particles are binned by home block (a sort of (block key, particle index),
// so the bins do not depend on the thread count); each block then sums, in a fixed order, the
// particles of the home blocks within reach of its nodes. No block is written by two tasks and no
// float is added atomically, so the grid is the same bits on any number of threads.
#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/kernels.hpp"
#include "eddy/surface.hpp"
#include "surface/block_access.hpp"
#include "core/branchless.hpp"
#include "core/buffers.hpp"

namespace eddy {

namespace {

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

template <int D>
void check_positions(std::span<const Vec<D>> positions, const ExecContext& exec) {
    const std::size_t bad = parallel_reduce_blocks(
        exec, positions.size(), positions.size(),
        [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
                if (!is_finite(positions[i])) return i;
            return positions.size();
        },
        [](std::size_t a, std::size_t b) { return std::min(a, b); });
    if (bad < positions.size())
        throw InputError(fmt::format("particle {}: position is not finite (NaN or infinite); allowed: finite coordinates", bad));
    // Block keys pack 21 bits per axis: keep coordinates within +-2^20 blocks.
}

// One anisotropic kernel, det(M) P(|M (x - c)| / h) with M = h G symmetric (Yu & Turk eq. 8), over
// the nodes i0..i1 (global) of the block whose first node is lo. Along a row M (x - c) = a + dx M e_x:
// the row's a is computed once, the inner loop is branch-free and vectorises like the isotropic one.
template <int D>
void splat_ellipsoid(float* out, const Vec<D>& c, const float* M, float scale, float inv_h, float voxel,
                     const std::array<int, D>& i0, const std::array<int, D>& i1, const std::array<int, D>& lo, int B) {
    const int zb = D == 3 ? i0[D - 1] : 0, ze = D == 3 ? i1[D - 1] : 0;
    const float mx[3] = {M[0] * inv_h, M[D] * inv_h, D == 3 ? M[2 * D] * inv_h : 0.0f};  // column x of G
    const float A = mx[0] * mx[0] + mx[1] * mx[1] + mx[2] * mx[2];  // |G e_x|^2, the same for every row
    for (int z = zb; z <= ze; ++z) {
        const float dz = D == 3 ? float(z) * voxel - c[D - 1] : 0.0f;
        for (int y = i0[1]; y <= i1[1]; ++y) {
            const float dy = float(y) * voxel - c[1];
            float a[3] = {0.0f, 0.0f, 0.0f};
            for (int r = 0; r < D; ++r) a[r] = (M[r * D + 1] * dy + (D == 3 ? M[r * D + D - 1] * dz : 0.0f)) * inv_h;
            // Does the row meet the ellipsoid? |a + t mx|^2 < 1 for some t = x - c_x: a quadratic in t.
            const float Bh = a[0] * mx[0] + a[1] * mx[1] + a[2] * mx[2];
            const float C = a[0] * a[0] + a[1] * a[1] + a[2] * a[2] - 1.0f;
            const float disc = Bh * Bh - A * C;
            if (disc <= 0.0f) continue;
            const float x0 = c[0];
            // The whole row of the block, branch-free as the isotropic splat (nodes outside get q = 1,
            // f = 0): a fixed-length row vectorises; clipping it to the chord left short scalar loops.
            float* __restrict dst = out + (D == 3 ? ((z - lo[2]) * B + (y - lo[1])) * B : (y - lo[1]) * B);
            for (int k = 0; k < B; ++k) {
                const float dx = float(lo[0] + k) * voxel - x0;
                const float u0 = a[0] + mx[0] * dx, u1 = a[1] + mx[1] * dx, u2 = D == 3 ? a[2] + mx[2] * dx : 0.0f;
                const float q = min_of(std::sqrt(u0 * u0 + u1 * u1 + u2 * u2), 1.0f);
                const float tq = 1.0f - q;
                const float inner = 6.0f * (q * q * q - q * q) + 1.0f, outer = 2.0f * tq * tq * tq;
                dst[k] += scale * pick(q <= 0.5f, inner, outer);
            }
        }
    }
}

// Particles beyond 2^19 blocks from the origin (with their reach) would overflow the block keys.
template <int D>
void check_reach(std::span<const Vec<D>> positions, float reach, double block_extent) {
    double far = 0.0;
    for (const auto& p : positions)
        for (int a = 0; a < D; ++a) far = std::max(far, std::abs(double(p[a])));
    if ((far + reach) / block_extent > double(1 << 19))
        throw InputError(fmt::format("particles reach |x| = {:g} m, over 2^19 blocks of {:g} m: allowed: a larger "
                                     "voxel size or coordinates closer to the origin", far, block_extent));
}

template <int D>
std::array<int, D> unpack(std::uint64_t k) {
    std::array<int, D> c;
    for (int a = 0; a < D; ++a) c[a] = int((k >> (21 * a)) & 0x1fffff) - (1 << 20);
    return c;
}

// The particles in bin order, each with its box of nodes within the support (global indices):
// a block then tests a particle with integer compares only.
template <int D>
struct Splat {
    Vec<D> x;
    std::array<int, D> i0, i1;
    std::uint32_t id;  // the particle (its anisotropic kernel)
};

// The particles binned by home block.
template <int D>
struct HomeBins {
    std::vector<std::uint64_t> keys;     // the home blocks' keys, ascending
    std::vector<std::size_t> begin;      // per home block, its first splat (+ the end)
    std::vector<Splat<D>> sorted;        // the particles in bin order
    std::unordered_map<std::uint64_t, std::uint32_t> index;  // key -> home block
    std::vector<std::array<int, D>> lo, hi;  // per home block, the union of its particles' node boxes
};

// The node box [i0, i1] of a particle within the nodes [lo, hi]: false when they do not meet.
template <int D>
bool clip_box(const std::array<int, D>& plo, const std::array<int, D>& phi, const std::array<int, D>& lo,
              const std::array<int, D>& hi, std::array<int, D>& i0, std::array<int, D>& i1) {
    bool empty = false;
    for (int a = 0; a < D; ++a) {
        i0[a] = std::max(lo[a], plo[a]);
        i1[a] = std::min(hi[a], phi[a]);
        empty |= i0[a] > i1[a];
    }
    return !empty;
}

// The bins' index by key and each bin's union of node boxes (a block skips the bins that cannot reach it:
// anisotropic kernels reach 2 h, 5^3 home blocks around a block, and most of their particles only h).
template <int D>
void index_bins(HomeBins<D>& hb, const ExecContext& exec) {
    hb.index.reserve(hb.keys.size() * 2);
    for (std::size_t k = 0; k < hb.keys.size(); ++k) hb.index.emplace(hb.keys[k], std::uint32_t(k));
    hb.lo.resize(hb.keys.size());
    hb.hi.resize(hb.keys.size());
    parallel_for_each_index(exec, hb.keys.size(), [&](std::size_t k) {
        hb.lo[k] = hb.sorted[hb.begin[k]].i0, hb.hi[k] = hb.sorted[hb.begin[k]].i1;
        for (std::size_t q = hb.begin[k]; q < hb.begin[k + 1]; ++q)
            for (int a = 0; a < D; ++a) {
                hb.lo[k][a] = std::min(hb.lo[k][a], hb.sorted[q].i0[a]);
                hb.hi[k][a] = std::max(hb.hi[k][a], hb.sorted[q].i1[a]);
            }
    }, 64);
}

// Bin particles by home block: sort (key, index) pairs. aniso: the kernels (null: isotropic, reach h).
template <int D>
HomeBins<D> bin_particles(std::span<const Vec<D>> positions, const AnisotropicKernels<D>* aniso, float h,
                          float inv_voxel, int B, const ExecContext& exec) {
    using Coord = std::array<int, D>;
    auto home_of = [&](const Vec<D>& x) {
        Coord c;
        for (int a = 0; a < D; ++a) c[a] = floor_div(static_cast<int>(std::floor(x[a] * inv_voxel)), B);
        return c;
    };
    const std::size_t n = positions.size();
    std::vector<std::pair<std::uint64_t, std::uint32_t>> bins(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        bins[i] = {BlockLayout<D>::key(home_of(positions[i])), static_cast<std::uint32_t>(i)};
    });
    parallel_sort(exec, bins.begin(), bins.end());
    HomeBins<D> hb;
    for (std::size_t i = 0; i < n; ++i)
        if (i == 0 || bins[i].first != bins[i - 1].first) {
            hb.keys.push_back(bins[i].first);
            hb.begin.push_back(i);
        }
    hb.begin.push_back(n);
    detail::resize_huge(hb.sorted, n);
    parallel_for_each_index(exec, n, [&](std::size_t k) {
        Splat<D>& sp = hb.sorted[k];
        sp.id = bins[k].second;
        sp.x = positions[sp.id];
        for (int a = 0; a < D; ++a) {
            const float e = aniso ? aniso->extent[sp.id][a] : h;
            sp.i0[a] = static_cast<int>(std::ceil((sp.x[a] - e) * inv_voxel));
            sp.i1[a] = static_cast<int>(std::floor((sp.x[a] + e) * inv_voxel));
        }
    });
    index_bins(hb, exec);
    return hb;
}

// The blocks within R blocks of block c on each axis: offset o in [0, (2R + 1)^D) -> block o around c.
template <int D>
std::array<int, D> block_around(const std::array<int, D>& c, int o, int R) {
    std::array<int, D> d = c;
    int t = o;
    for (int a = 0; a < D; ++a) {
        d[a] += t % (2 * R + 1) - R;
        t /= 2 * R + 1;
    }
    return d;
}

// Active blocks: every block a home block's particles can reach (reach R blocks on each side), as
// sorted unique keys. clip: anisotropic kernels reach up to 2 h but most reach h: only the blocks
// that the union of a home block's kernel boxes overlaps (the others would hold zeros and cost the
// later stages their time).
template <int D>
std::vector<std::uint64_t> active_blocks(const HomeBins<D>& hb, int R, int around, int B, bool clip,
                                         const ExecContext& exec) {
    using Coord = std::array<int, D>;
    constexpr std::uint64_t kNone = ~std::uint64_t(0);
    std::vector<std::uint64_t> active(hb.keys.size() * around);
    parallel_for_each_index(exec, hb.keys.size(), [&](std::size_t k) {
        const Coord c = unpack<D>(hb.keys[k]);
        Coord blo, bhi;
        for (int a = 0; a < D; ++a) {
            blo[a] = c[a] - R;
            bhi[a] = c[a] + R;
        }
        if (clip)
            for (int a = 0; a < D; ++a) {
                blo[a] = std::max(blo[a], floor_div(hb.lo[k][a], B));
                bhi[a] = std::min(bhi[a], floor_div(hb.hi[k][a], B));
            }
        for (int o = 0; o < around; ++o) {
            const Coord d = block_around<D>(c, o, R);
            bool inside = true;
            for (int a = 0; a < D; ++a) inside &= d[a] >= blo[a] && d[a] <= bhi[a];
            active[k * around + o] = inside ? BlockLayout<D>::key(d) : kNone;
        }
    }, 64);
    parallel_sort(exec, active.begin(), active.end());
    active.erase(std::unique(active.begin(), active.end()), active.end());
    if (!active.empty() && active.back() == kNone) active.pop_back();
    return active;
}

// The grid's blocks (keys sorted and unique), with their values still unset.
template <int D>
void allocate_blocks(SparseGrid<D>& g, const std::vector<std::uint64_t>& active) {
    // 2^31 nodes (8 GB per grid) is far beyond any fluid this toolkit simulates: a voxel that small
    // is a mistake, and says so instead of failing to allocate.
    if (double(active.size()) * g.layout.voxels_per_block() > double(1u << 31))
        throw InputError(fmt::format("key 'voxel' = {:g} m gives {} blocks of {}^{} nodes ({:.0f} GB per grid): allowed: "
                                     "a larger voxel size", g.layout.voxel, active.size(), g.layout.block, D,
                                     double(active.size()) * g.layout.voxels_per_block() * 4e-9));
    g.layout.coords.resize(active.size());
    for (std::size_t b = 0; b < active.size(); ++b) g.layout.coords[b] = unpack<D>(active[b]);
    g.layout.finalize();
}

// V such that a lattice of spacing 2r sums to exactly 1 (seed 003 calibrates rest density alike);
// returns V sigma.
template <int D>
float lattice_scale(float particle_radius, float h) {
    const CubicSpline<D> W(h);
    double lattice = 0.0;
    for_each_lattice_offset<D>(2.0f * particle_radius, h, [&](const Vec<D>& x) { lattice += W.value(x); });
    return static_cast<float>(W.sigma / lattice);  // V sigma
}

// One isotropic kernel, W(q) = sigma f(q), q = |x_i - x_p| / h (seed 003, kernels.hpp), over the
// nodes i0..i1 (global) of the block whose first node is lo; rows along x.
template <int D>
void splat_sphere(float* out, const Vec<D> x, float kscale, float kinv_h, float kh2, float kv,
                  const std::array<int, D>& i0, const std::array<int, D>& i1, const std::array<int, D>& lo, int B) {
    const int zb = D == 3 ? i0[D - 1] : 0, ze = D == 3 ? i1[D - 1] : 0;
    for (int z = zb; z <= ze; ++z) {
        const float dz = D == 3 ? float(z) * kv - x[D - 1] : 0.0f;
        for (int y = i0[1]; y <= i1[1]; ++y) {
            const float dy = float(y) * kv - x[1];
            const float dyz = dy * dy + dz * dz;
            if (dyz >= kh2) continue;
            float* row = out + (D == 3 ? ((z - lo[2]) * B + (y - lo[1])) * B : (y - lo[1]) * B) - lo[0];
            // The whole row of the block, branch-free: nodes beyond the support get q = 1,
            // f = 0, and adding 0 changes nothing. A fixed-length row vectorises (8 lanes for
            // the default 8-voxel blocks); clipping it first left a short scalar loop.
            float* __restrict dst = row + lo[0];
            const float x0 = x[0];
            for (int k = 0; k < B; ++k) {
                const float dx = float(lo[0] + k) * kv - x0;
                const float r2 = dx * dx + dyz;
                const float q = min_of(std::sqrt(r2) * kinv_h, 1.0f);
                const float tq = 1.0f - q;
                const float inner = 6.0f * (q * q * q - q * q) + 1.0f, outer = 2.0f * tq * tq * tq;
                const float f = pick(q <= 0.5f, inner, outer);
                dst[k] += kscale * f;
            }
        }
    }
}

// What splatting a block reads: the particles, their kernels, the reach and the constants.
template <int D>
struct SplatInputs {
    const HomeBins<D>* bins;
    const AnisotropicKernels<D>* aniso;  // null: isotropic
    int R, around, B;
    float voxel, inv_h, scale, h2;
};

// The values of the block at block coordinates c0: the sum, in a fixed order (home blocks around it,
// then bin order), of the kernels of the particles whose node boxes meet the block.
template <int D>
void splat_block(const SplatInputs<D>& in, const std::array<int, D> c0, float* out) {
    using Coord = std::array<int, D>;
    const HomeBins<D>& hb = *in.bins;
    const AnisotropicKernels<D>* aniso = in.aniso;
    // Local copies: the compiler cannot prove the grid writes leave captured values alone.
    const float kv = in.voxel, kinv_h = in.inv_h, kscale = in.scale, kh2 = in.h2;
    const int B = in.B;
    Coord lo, hi;  // global nodes of this block
    for (int a = 0; a < D; ++a) {
        lo[a] = c0[a] * B;
        hi[a] = lo[a] + B - 1;
    }
    for (int o = 0; o < in.around; ++o) {
        const auto it = hb.index.find(BlockLayout<D>::key(block_around<D>(c0, o, in.R)));
        Coord i0, i1;
        if (it == hb.index.end() || !clip_box<D>(hb.lo[it->second], hb.hi[it->second], lo, hi, i0, i1)) continue;
        for (std::size_t k = hb.begin[it->second]; k < hb.begin[it->second + 1]; ++k) {
            const Splat<D>& sp = hb.sorted[k];
            if (!clip_box<D>(sp.i0, sp.i1, lo, hi, i0, i1)) continue;
            if (aniso && !aniso->round[sp.id])
                splat_ellipsoid<D>(out, sp.x, aniso->g[sp.id].data(), kscale * aniso->det[sp.id], kinv_h, kv, i0, i1,
                                   lo, B);
            else
                splat_sphere<D>(out, sp.x, kscale, kinv_h, kh2, kv, i0, i1, lo, B);
        }
    }
}

}  // namespace

template <int D>
SparseGrid<D> splat_density(std::span<const Vec<D>> input, const SurfaceSettings& s, const ExecContext& exec) {
    validate(s);
    check_positions<D>(input, exec);
    // Anisotropic: every particle splats its own ellipsoid around its smoothed centre (anisotropy.cpp).
    AnisotropicKernels<D> aniso;
    if (s.anisotropic) aniso = anisotropic_kernels<D>(input, s, exec);
    const std::span<const Vec<D>> positions = s.anisotropic ? std::span<const Vec<D>>(aniso.centers) : input;
    const AnisotropicKernels<D>* kernels = s.anisotropic ? &aniso : nullptr;
    SparseGrid<D> g;
    g.background = 0.0f;
    g.layout.voxel = s.voxel();
    g.layout.block = s.block_size;
    if (positions.empty()) {
        g.layout.finalize();
        return g;
    }
    const float voxel = s.voxel(), h = s.support(), inv_voxel = 1.0f / voxel;
    const float reach = s.anisotropic ? std::max(h, aniso.max_extent) : h;  // farthest a particle splats (m)
    const int B = s.block_size;
    const double block_extent = double(B) * voxel;
    check_reach<D>(positions, reach, block_extent);
    const HomeBins<D> bins = bin_particles<D>(positions, kernels, h, inv_voxel, B, exec);

    // Active blocks: every block a home block's particles can reach (reach R blocks on each side).
    const int R = static_cast<int>(std::floor(reach / block_extent)) + 1;
    int around = 1;
    for (int a = 0; a < D; ++a) around *= 2 * R + 1;
    allocate_blocks(g, active_blocks<D>(bins, R, around, B, s.anisotropic, exec));

    const float scale = lattice_scale<D>(s.particle_radius, h);
    const float inv_h = 1.0f / h, h2 = h * h;
    const SplatInputs<D> in{&bins, kernels, R, around, B, voxel, inv_h, scale, h2};
    const int nv = g.layout.voxels_per_block();
    detail::assign_huge(g.values, g.layout.size() * std::size_t(nv), 0.0f);
    parallel_for_each_index(exec, g.layout.size(), [&](std::size_t b) {
        splat_block<D>(in, g.layout.coords[b], g.values.data() + b * nv);
    }, 1);
    return g;
}

template SparseGrid<2> splat_density<2>(std::span<const Vec<2>>, const SurfaceSettings&, const ExecContext&);
template SparseGrid<3> splat_density<3>(std::span<const Vec<3>>, const SurfaceSettings&, const ExecContext&);

}  // namespace eddy
