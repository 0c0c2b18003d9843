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
                const float q = std::min(std::sqrt(u0 * u0 + u1 * u1 + u2 * u2), 1.0f);
                const float tq = 1.0f - q;
                const float inner = 6.0f * (q * q * q - q * q) + 1.0f, outer = 2.0f * tq * tq * tq;
                dst[k] += scale * (q <= 0.5f ? inner : outer);
            }
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
    using Coord = std::array<int, D>;
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
    {
        double far = 0.0;
        for (const auto& p : positions)
            for (int a = 0; a < D; ++a) far = std::max(far, std::abs(double(p[a])));
        if ((far + reach) / block_extent > double(1 << 19))
            throw InputError(fmt::format("particles reach |x| = {:g} m, over 2^19 blocks of {:g} m: allowed: a larger "
                                         "voxel size or coordinates closer to the origin", far, block_extent));
    }
    auto home_of = [&](const Vec<D>& x) {
        Coord c;
        for (int a = 0; a < D; ++a) c[a] = floor_div(static_cast<int>(std::floor(x[a] * inv_voxel)), B);
        return c;
    };

    // Bin particles by home block: sort (key, index) pairs.
    const std::size_t n = positions.size();
    std::vector<std::pair<std::uint64_t, std::uint32_t>> bins(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        bins[i] = {BlockLayout<D>::key(home_of(positions[i])), static_cast<std::uint32_t>(i)};
    });
    parallel_sort(exec, bins.begin(), bins.end());
    std::vector<std::uint64_t> home_keys;
    std::vector<std::size_t> home_begin;
    for (std::size_t i = 0; i < n; ++i)
        if (i == 0 || bins[i].first != bins[i - 1].first) {
            home_keys.push_back(bins[i].first);
            home_begin.push_back(i);
        }
    home_begin.push_back(n);
    // The particles in bin order, each with its box of nodes within the support (global indices):
    // a block then tests a particle with integer compares only.
    struct Splat {
        Vec<D> x;
        Coord i0, i1;
        std::uint32_t id;  // the particle (its anisotropic kernel)
    };
    std::vector<Splat> sorted(n);
    parallel_for_each_index(exec, n, [&](std::size_t k) {
        Splat& sp = sorted[k];
        sp.id = bins[k].second;
        sp.x = positions[sp.id];
        for (int a = 0; a < D; ++a) {
            const float e = s.anisotropic ? aniso.extent[sp.id][a] : h;
            sp.i0[a] = static_cast<int>(std::ceil((sp.x[a] - e) * inv_voxel));
            sp.i1[a] = static_cast<int>(std::floor((sp.x[a] + e) * inv_voxel));
        }
    });
    std::unordered_map<std::uint64_t, std::uint32_t> home_index;
    home_index.reserve(home_keys.size() * 2);
    for (std::size_t k = 0; k < home_keys.size(); ++k) home_index.emplace(home_keys[k], std::uint32_t(k));

    // Active blocks: every block a home block's particles can reach (reach R blocks on each side).
    const int R = static_cast<int>(std::floor(reach / block_extent)) + 1;
    auto unpack = [](std::uint64_t k) {
        Coord c;
        for (int a = 0; a < D; ++a) c[a] = int((k >> (21 * a)) & 0x1fffff) - (1 << 20);
        return c;
    };
    int around = 1;
    for (int a = 0; a < D; ++a) around *= 2 * R + 1;
    // Anisotropic kernels reach up to 2 h but most reach h: only the blocks that the union of a home
    // block's kernel boxes overlaps (the others would hold zeros and cost the later stages their time).
    constexpr std::uint64_t kNone = ~std::uint64_t(0);
    std::vector<std::uint64_t> active(home_keys.size() * around);
    parallel_for_each_index(exec, home_keys.size(), [&](std::size_t k) {
        const Coord c = unpack(home_keys[k]);
        Coord blo, bhi;
        for (int a = 0; a < D; ++a) {
            blo[a] = c[a] - R;
            bhi[a] = c[a] + R;
        }
        if (s.anisotropic) {
            Coord nlo = sorted[home_begin[k]].i0, nhi = sorted[home_begin[k]].i1;
            for (std::size_t q = home_begin[k]; q < home_begin[k + 1]; ++q)
                for (int a = 0; a < D; ++a) {
                    nlo[a] = std::min(nlo[a], sorted[q].i0[a]);
                    nhi[a] = std::max(nhi[a], sorted[q].i1[a]);
                }
            for (int a = 0; a < D; ++a) {
                blo[a] = std::max(blo[a], floor_div(nlo[a], B));
                bhi[a] = std::min(bhi[a], floor_div(nhi[a], B));
            }
        }
        for (int o = 0; o < around; ++o) {
            Coord d = c;
            int t = o;
            bool inside = true;
            for (int a = 0; a < D; ++a) {
                d[a] += t % (2 * R + 1) - R;
                t /= 2 * R + 1;
                inside &= d[a] >= blo[a] && d[a] <= bhi[a];
            }
            active[k * around + o] = inside ? BlockLayout<D>::key(d) : kNone;
        }
    }, 64);
    parallel_sort(exec, active.begin(), active.end());
    active.erase(std::unique(active.begin(), active.end()), active.end());
    if (!active.empty() && active.back() == kNone) active.pop_back();
    // 2^31 nodes (8 GB per grid) is far beyond any fluid this toolkit simulates: a voxel that small
    // is a mistake, and says so instead of failing to allocate.
    if (double(active.size()) * g.layout.voxels_per_block() > double(1u << 31))
        throw InputError(fmt::format("key 'voxel' = {:g} m gives {} blocks of {}^{} nodes ({:.0f} GB per grid): allowed: "
                                     "a larger voxel size", voxel, active.size(), B, D,
                                     double(active.size()) * g.layout.voxels_per_block() * 4e-9));
    g.layout.coords.resize(active.size());
    for (std::size_t b = 0; b < active.size(); ++b) g.layout.coords[b] = unpack(active[b]);
    g.layout.finalize();

    // V such that a lattice of spacing 2r sums to exactly 1 (seed 003 calibrates rest density alike).
    const CubicSpline<D> W(h);
    double lattice = 0.0;
    for_each_lattice_offset<D>(2.0f * s.particle_radius, h, [&](const Vec<D>& x) { lattice += W.value(x); });
    const float scale = static_cast<float>(W.sigma / lattice);  // V sigma
    const float inv_h = 1.0f / h, h2 = h * h;

    const int nv = g.layout.voxels_per_block();
    g.values.assign(g.layout.size() * std::size_t(nv), 0.0f);
    parallel_for_each_index(exec, g.layout.size(), [&](std::size_t b) {
        float* out = g.values.data() + b * nv;
        // Local copies: the compiler cannot prove the grid writes leave captured values alone.
        const float kv = voxel, kinv_h = inv_h, kscale = scale, kh2 = h2;
        const Coord c0 = g.layout.coords[b];
        Coord lo, hi;  // global nodes of this block
        for (int a = 0; a < D; ++a) {
            lo[a] = c0[a] * B;
            hi[a] = lo[a] + B - 1;
        }
        for (int o = 0; o < around; ++o) {
            Coord d = c0;
            int t = o;
            for (int a = 0; a < D; ++a) {
                d[a] += t % (2 * R + 1) - R;
                t /= 2 * R + 1;
            }
            const auto it = home_index.find(BlockLayout<D>::key(d));
            if (it == home_index.end()) continue;
            for (std::size_t k = home_begin[it->second]; k < home_begin[it->second + 1]; ++k) {
                const Splat& sp = sorted[k];
                const Vec<D> x = sp.x;
                Coord i0, i1;
                bool empty = false;
                for (int a = 0; a < D; ++a) {
                    i0[a] = std::max(lo[a], sp.i0[a]);
                    i1[a] = std::min(hi[a], sp.i1[a]);
                    empty |= i0[a] > i1[a];
                }
                if (empty) continue;
                if (s.anisotropic && !aniso.round[sp.id]) {
                    splat_ellipsoid<D>(out, sp.x, aniso.g[sp.id].data(), kscale * aniso.det[sp.id], kinv_h, kv, i0, i1,
                                       lo, B);
                    continue;
                }
                // W(q) = sigma f(q), q = |x_i - x_p| / h (seed 003, kernels.hpp); rows along x.
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
                            const float q = std::min(std::sqrt(r2) * kinv_h, 1.0f);
                            const float tq = 1.0f - q;
                            const float inner = 6.0f * (q * q * q - q * q) + 1.0f, outer = 2.0f * tq * tq * tq;
                            const float f = q <= 0.5f ? inner : outer;
                            dst[k] += kscale * f;
                        }
                    }
                }
            }
        }
    }, 1);
    return g;
}

template SparseGrid<2> splat_density<2>(std::span<const Vec<2>>, const SurfaceSettings&, const ExecContext&);
template SparseGrid<3> splat_density<3>(std::span<const Vec<3>>, const SurfaceSettings&, const ExecContext&);

}  // namespace eddy
