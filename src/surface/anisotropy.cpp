// Stage 1a (optional): the anisotropic kernels of Yu & Turk 2013 ("Reconstructing surfaces of
// particle-based fluids using anisotropic kernels", ACM TOG 32(1)); equations in eddy/surface.hpp.
//
// Each particle gathers its neighbours within r_c in the neighbour grid's fixed order and writes only
// its own kernel: the same bits on any number of threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/kernels.hpp"
#include "eddy/mass_properties.hpp"
#include "eddy/surface.hpp"
#include "core/branchless.hpp"
#include "core/buffers.hpp"

namespace eddy {

namespace {

constexpr float kIsolatedScale = 0.5f;  // k_n: an isolated particle's kernel radius, in h
constexpr float kMaxStretch = 2.0f;     // a kernel axis is at most this many h long (bounds the splat's reach)
constexpr double kRoundEnough = 0.9;    // a kernel that would stretch by less than 1 / 0.9 stays isotropic

/// Eigen-decomposition of a symmetric D x D matrix: values descending, vectors as columns of R.
template <int D>
void symmetric_eigen(const double (&c)[D][D], double (&sigma)[D], double (&R)[D][D]) {
    if constexpr (D == 2) {
        // Closed form: the rotation angle that diagonalises [[a, b], [b, d]].
        const double a = c[0][0], b = c[0][1], d = c[1][1];
        const double mean = 0.5 * (a + d), diff = 0.5 * (a - d);
        const double rad = std::sqrt(diff * diff + b * b);
        sigma[0] = mean + rad;
        sigma[1] = mean - rad;
        const double theta = 0.5 * std::atan2(2.0 * b, a - d);
        R[0][0] = std::cos(theta);
        R[1][0] = std::sin(theta);
        R[0][1] = -R[1][0];
        R[1][1] = R[0][0];
    } else {
        std::array<std::array<double, 3>, 3> m;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) m[i][j] = c[i][j];
        const PrincipalAxes pa = principal_axes(m);  // ascending
        for (int k = 0; k < 3; ++k) {
            sigma[k] = pa.moments[2 - k];
            for (int i = 0; i < 3; ++i) R[i][k] = pa.axes[i][2 - k];
        }
    }
}

constexpr int kLanes = 16;  // sums in 16 lanes: one AVX-512 register (two AVX2) per term
constexpr std::uint32_t kLanes_u = kLanes;

// A coordinate array in the cells' order with kLanes copies of its last value after it: a lane loop may
// then read a whole run of kLanes from any start (the lanes past a run's end are masked: their weight is
// 0, and adding w x = +-0 to a sum that started at +0 leaves its bits), in contiguous vector loads.
inline void pad_lanes(std::vector<float>& v) {
    const float last = v.empty() ? 0.0f : v.back();
    v.insert(v.end(), kLanes, last);
}

// The points' coordinates as D arrays, each padded by pad_lanes.
template <int D>
std::array<std::vector<float>, D> lane_columns(const std::vector<Vec<D>>& points) {
    std::array<std::vector<float>, D> c;
    for (int a = 0; a < D; ++a) {
        c[a].resize(points.size());
        for (std::size_t i = 0; i < points.size(); ++i) c[a][i] = points[i][a];
        pad_lanes(c[a]);
    }
    return c;
}

// A cell's particles sort by x, ties by index: x's bits made to order as unsigned integers, then i.
inline std::uint64_t x_then_index(float x, std::size_t i) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);  // std::bit_cast, which the page's libc++ lacks
    b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return (std::uint64_t(b) << 32) | std::uint32_t(i);
}

// The particles binned in cells of side r_c, sorted by cell key (z, y, x lexicographic), within a
// cell by x (ties by index), as a structure of arrays; for each cell the 3^(D-1) runs of the sorted
// arrays that hold its 3^D neighbour cells (the three cells along x of a row are adjacent in key
// order, so a run is sorted by x). A particle's neighbour sums then read contiguous memory, sixteen
// lanes at a time, over each run trimmed to its reach (row_window).
template <int D>
struct CellRuns {
    static constexpr int kRows = D == 3 ? 9 : 3;
    float side, inv;                                   // the cells' side r_c and 1 / r_c
    std::vector<std::uint32_t> order;                  // sorted position -> input index
    std::array<std::vector<float>, D> x;               // coordinates in sorted order (pad_lanes)
    std::vector<std::uint32_t> cell_begin;             // per cell, first sorted position (+ end)
    std::vector<std::array<std::uint32_t, 2 * kRows>> runs;  // per cell: [begin, end) per row

    CellRuns(std::span<const Vec<D>> p, float cell, const ExecContext& exec) : side(cell), inv(1.0f / cell) {
        const std::size_t n = p.size();
        auto key_of = [](const std::array<std::int64_t, D>& c) {
            std::uint64_t k = 0;
            for (int a = D - 1; a >= 0; --a) k = (k << 21) | std::uint64_t((c[a] + (1 << 20)) & 0x1fffff);
            return k;
        };
        std::vector<std::pair<std::uint64_t, std::uint64_t>> keyed(n);  // (cell, x then index)
        parallel_for_each_index(exec, n, [&](std::size_t i) {
            std::array<std::int64_t, D> c;
            for (int a = 0; a < D; ++a) c[a] = std::int64_t(std::floor(p[i][a] * inv));
            keyed[i] = {key_of(c), x_then_index(p[i][0], i)};
        });
        parallel_sort(exec, keyed.begin(), keyed.end());
        order.resize(n);
        for (int a = 0; a < D; ++a) x[a].resize(n);
        parallel_for_each_index(exec, n, [&](std::size_t k) {
            order[k] = std::uint32_t(keyed[k].second);
            for (int a = 0; a < D; ++a) x[a][k] = p[order[k]][a];
        });
        for (int a = 0; a < D; ++a) pad_lanes(x[a]);
        std::vector<std::uint64_t> keys;
        for (std::size_t k = 0; k < n; ++k)
            if (k == 0 || keyed[k].first != keyed[k - 1].first) {
                keys.push_back(keyed[k].first);
                cell_begin.push_back(std::uint32_t(k));
            }
        cell_begin.push_back(std::uint32_t(n));
        runs.resize(keys.size());
        parallel_for_each_index(exec, keys.size(), [&](std::size_t c) {
            std::array<std::int64_t, D> cc;
            for (int a = 0; a < D; ++a) cc[a] = std::int64_t((keys[c] >> (21 * a)) & 0x1fffff) - (1 << 20);
            for (int row = 0; row < kRows; ++row) {
                std::array<std::int64_t, D> lo = cc, hi = cc;
                lo[0] -= 1;
                hi[0] += 1;
                for (int a = 1; a < D; ++a) {
                    const int off = (a == 1 ? row % 3 : row / 3) - 1;
                    lo[a] += off;
                    hi[a] += off;
                }
                const auto b = std::lower_bound(keys.begin(), keys.end(), key_of(lo)) - keys.begin();
                const auto e = std::upper_bound(keys.begin(), keys.end(), key_of(hi)) - keys.begin();
                runs[c][2 * row] = cell_begin[b];
                runs[c][2 * row + 1] = cell_begin[std::max(b, e)];
            }
        }, 64);
    }
    std::size_t cells() const { return runs.size(); }
};

// One chunk of kLanes particles of a run, from sorted position j0 (len of them before the run's end):
// d = x_j - x_i and the weight w = 1 - (|d| / r_c)^3 (eq. 11), in = 1 within r_c; lanes past the
// run's end read pad_lanes' copies and get w = in = 0. Read through pointers from j0: (j0 + l) in 32
// bits might wrap, and then the compiler would not load the lanes contiguously.
struct Chunk {
    float dx[kLanes], dy[kLanes], dz[kLanes], w[kLanes], in[kLanes];
};

template <int D>
inline void chunk_weights(const CellRuns<D>& cr, std::uint32_t j0, std::uint32_t len, const float* xi, float rc,
                          Chunk& k) {
    const float rc2 = rc * rc, inv_rc = 1.0f / rc;
    const float *px = cr.x[0].data() + j0, *py = cr.x[1].data() + j0, *pz = cr.x[D - 1].data() + j0;
    for (int l = 0; l < kLanes; ++l) {
        k.dx[l] = px[l] - xi[0];
        k.dy[l] = py[l] - xi[1];
        k.dz[l] = D == 3 ? pz[l] - xi[D - 1] : 0.0f;
        const float d2 = k.dx[l] * k.dx[l] + k.dy[l] * k.dy[l] + k.dz[l] * k.dz[l];
        const float q = std::sqrt(d2) * inv_rc;
        k.in[l] = (d2 < rc2 && std::uint32_t(l) < len) ? 1.0f : 0.0f;
        k.w[l] = k.in[l] * (1.0f - q * q * q);
    }
}

// How far xi lies above its cell's lower faces and below its upper ones across x, less a slack against
// the rounding of the faces and of the coordinates (what the slack lets in is masked, as every lane, by
// its distance): once a particle, read by each of its rows (row_window).
template <int D>
struct FaceGaps {
    double below[D], above[D];
    double slack;
};

template <int D>
inline FaceGaps<D> face_gaps(const CellRuns<D>& cr, const float* xi, float rc) {
    FaceGaps<D> g{};
    g.slack = 1e-3 * rc;
    for (int a = 0; a < D; ++a) g.slack += 1e-6 * std::abs(xi[a]);
    for (int a = 1; a < D; ++a) {
        const double face = double(std::floor(xi[a] * cr.inv)) * cr.side;  // the lower face of xi's cell
        g.below[a] = std::max(0.0, xi[a] - face - g.slack);
        g.above[a] = std::max(0.0, face + cr.side - xi[a] - g.slack);
    }
    return g;
}

// The part of row `row` around cell c that can hold a neighbour of xi (in cell c): the row's cells lie at
// distance d from xi across x, and eq. 11's weight is 0 beyond r_c, so only the row's particles within
// sqrt(r_c^2 - d^2) of xi along x count, none when d >= r_c. The run is sorted by x: the chunks of kLanes
// wholly below that reach are stepped over here (from b), and the first chunk that starts above hi ends
// the row (for_each_chunk).
struct RowWindow {
    std::uint32_t b, e;  // sorted positions: the first chunk's start and the run's end
    float hi;            // the largest x within reach
};

template <int D>
inline RowWindow row_window(const CellRuns<D>& cr, std::size_t c, int row, const FaceGaps<D>& g, const float* xi,
                            float rc) {
    double d2 = 0.0;
    for (int a = 1; a < D; ++a) {
        const int off = (a == 1 ? row % 3 : row / 3) - 1;
        const double d = off < 0 ? g.below[a] : off > 0 ? g.above[a] : 0.0;
        d2 += d * d;
    }
    const double rc2 = double(rc) * rc;
    RowWindow w{cr.runs[c][2 * row], cr.runs[c][2 * row + 1], 0.0f};
    if (d2 >= rc2) return {w.b, w.b, 0.0f};
    const float reach = float(std::sqrt(rc2 - d2) + g.slack), lo = xi[0] - reach;
    w.hi = xi[0] + reach;
    while (w.b + kLanes <= w.e && cr.x[0][w.b + kLanes - 1] < lo) w.b += kLanes;
    return w;
}

// f(j0, len) for every chunk of the runs around cell c within reach of xi (row_window), in order.
template <int D, class F>
inline void for_each_chunk(const CellRuns<D>& cr, std::size_t c, const float* xi, float rc, F&& f) {
    const FaceGaps<D> g = face_gaps<D>(cr, xi, rc);
    for (int row = 0; row < CellRuns<D>::kRows; ++row)
        for (RowWindow w = row_window<D>(cr, c, row, g, xi, rc); w.b < w.e && cr.x[0][w.b] <= w.hi; w.b += kLanes)
            f(w.b, std::min(kLanes_u, w.e - w.b));
}

// out[k] = the sum of acc[k]'s lanes, in order: the same bits on any thread count.
template <int S>
inline void add_lanes(const float (&acc)[S][kLanes], double* out) {
    for (int k = 0; k < S; ++k) {
        float t = 0.0f;
        for (int l = 0; l < kLanes; ++l) t += acc[k][l];
        out[k] = t;
    }
}

// The first pass's sums for particle xi over the runs around cell c, lane by lane: sum w, count,
// sum w d (D), sum w d d^T (upper triangle); written out explicitly (one array per sum) so that the
// lane loop vectorises. out: [sw, count, m_0..m_D-1, c_00, c_01, .., c_D-1D-1].
template <int D>
inline void covariance_sums(const CellRuns<D>& cr, std::size_t c, const float* xi, float rc, double* out) {
    constexpr int kC = D * (D + 1) / 2, kS = 2 + D + kC;
    alignas(64) float acc[kS][kLanes] = {};
    Chunk k;
    for_each_chunk<D>(cr, c, xi, rc, [&](std::uint32_t j0, std::uint32_t len) {
        chunk_weights<D>(cr, j0, len, xi, rc, k);
        const float *w = k.w, *dx = k.dx, *dy = k.dy, *dz = k.dz;
        for (int l = 0; l < kLanes; ++l) {
            acc[0][l] += w[l];
            acc[1][l] += k.in[l];
            acc[2][l] += w[l] * dx[l];
            acc[3][l] += w[l] * dy[l];
            if constexpr (D == 3) {
                acc[4][l] += w[l] * dz[l];
                acc[5][l] += w[l] * dx[l] * dx[l];
                acc[6][l] += w[l] * dx[l] * dy[l];
                acc[7][l] += w[l] * dx[l] * dz[l];
                acc[8][l] += w[l] * dy[l] * dy[l];
                acc[9][l] += w[l] * dy[l] * dz[l];
                acc[10][l] += w[l] * dz[l] * dz[l];
            } else {
                acc[4][l] += w[l] * dx[l] * dx[l];
                acc[5][l] += w[l] * dx[l] * dy[l];
                acc[6][l] += w[l] * dy[l] * dy[l];
            }
        }
    });
    add_lanes<kS>(acc, out);
}

// The second pass's sums for particle xi (centre ci) over the runs around cell c: sum w and
// sum w (c_j - c_i), with the first pass's weights. out: [sw, m_0..m_D-1].
template <int D>
inline void centre_sums(const CellRuns<D>& cr, const std::array<std::vector<float>, D>& cx, std::size_t c,
                        const float* xi, const float* ci, float rc, double* out) {
    alignas(64) float acc[1 + D][kLanes] = {};
    Chunk k;
    for_each_chunk<D>(cr, c, xi, rc, [&](std::uint32_t j0, std::uint32_t len) {
        chunk_weights<D>(cr, j0, len, xi, rc, k);
        const float *qx = cx[0].data() + j0, *qy = cx[1].data() + j0, *qz = cx[D - 1].data() + j0;
        for (int l = 0; l < kLanes; ++l) {
            acc[0][l] += k.w[l];
            acc[1][l] += k.w[l] * (qx[l] - ci[0]);
            acc[2][l] += k.w[l] * (qy[l] - ci[1]);
            if constexpr (D == 3) acc[3][l] += k.w[l] * (qz[l] - ci[D - 1]);
        }
    });
    add_lanes<1 + D>(acc, out);
}

// The constants every particle's kernel uses.
struct KernelParams {
    float rc, h;          // r_c (the neighbourhood's radius) and the isotropic kernel's support
    float lambda, kr;     // the centres' smoothing (eq. 6) and the clamp's factor k_r (eq. 15)
    double sigma0;        // k_s: see lattice_variance
    int n_eps;            // fewer neighbours than this: isolated
};

// k_s: the variance on one axis of a full lattice neighbourhood (spacing 2r) with the same weights,
// so that an interior particle keeps the isotropic kernel (G = I / h); full: its particles.
template <int D>
double lattice_variance(float particle_radius, float rc, int& full) {
    double lw = 0.0, lxx = 0.0;
    full = 0;  // particles of a full lattice neighbourhood
    for_each_lattice_offset<D>(2.0f * particle_radius, rc, [&](const Vec<D>& x) {
        const double d = norm(x) / rc;
        if (d >= 1.0) return;
        ++full;
        const double w = 1.0 - d * d * d;
        lw += w;
        lxx += w * double(x[0]) * x[0];
    });
    return lxx / lw;
}

template <int D>
void resize_kernels(AnisotropicKernels<D>& k, std::size_t n) {  // all but the centres (made whole at the end)
    detail::resize_huge(k.g, n);
    k.det.resize(n);
    k.extent.resize(n);
    k.round.resize(n);
}

// The weighted mean's offset m = x_w - x_i (eq. 10) and the covariance about it (eq. 9), from the
// sums of covariance_sums (sw = sum w).
template <int D>
void weighted_covariance(const double* sums, double sw, double (&m)[D], double (&c)[D][D]) {
    int t = 2 + D;
    for (int a = 0; a < D; ++a) {
        m[a] = sums[2 + a] / sw;  // x_w - x_i (eq. 10)
        for (int b = a; b < D; ++b) c[a][b] = sums[t++];
    }
    // Covariance about the weighted mean (eq. 9).
    for (int a = 0; a < D; ++a)
        for (int b = a; b < D; ++b) c[b][a] = c[a][b] = c[a][b] / sw - m[a] * m[b];
}

// Gershgorin's interval [lo, hi] around the eigenvalues of c.
template <int D>
void gershgorin_interval(const double (&c)[D][D], double& lo, double& hi) {
    lo = std::numeric_limits<double>::max();
    hi = 0.0;
    for (int a = 0; a < D; ++a) {
        double off = 0.0;
        for (int b = 0; b < D; ++b) off += b == a ? 0.0 : std::abs(c[a][b]);
        lo = std::min(lo, c[a][a] - off);
        hi = std::max(hi, c[a][a] + off);
    }
}

// The stretched kernel of covariance c: h G into gm.
template <int D>
void stretched_kernel(const double (&c)[D][D], const KernelParams& p, double (&gm)[D][D]) {
    double sigma[D], R[D][D];
    symmetric_eigen<D>(c, sigma, R);
    // h G = R diag(k_s / sigma~) R^T (eq. 16) with k_s = min(sigma~_min, sigma_0): no axis shorter
    // than the isotropic kernel's, the others stretched by sigma~_k / sigma~_min (at most k_r, and
    // at most kMaxStretch h long). See eddy/surface.hpp for why not the paper's fixed k_s.
    double scale[D];
    const double ks = std::min(std::max(sigma[D - 1], sigma[0] / p.kr), p.sigma0);
    for (int a = 0; a < D; ++a) {
        const double clamped = std::max(sigma[a], sigma[0] / p.kr);  // eq. 15
        scale[a] = std::max(ks / std::max(clamped, 1e-30), 1.0 / kMaxStretch);
    }
    for (int a = 0; a < D; ++a)
        for (int b = 0; b < D; ++b) {
            double v = 0.0;
            for (int e = 0; e < D; ++e) v += R[a][e] * scale[e] * R[b][e];
            gm[a][b] = v;
        }
}

// The inverse of M = h G into inv; returns det(M).
template <int D>
double invert_kernel(const double (&gm)[D][D], double (&inv)[D][D]) {
    double det;
    if constexpr (D == 2) {
        det = gm[0][0] * gm[1][1] - gm[0][1] * gm[1][0];
        inv[0][0] = gm[1][1] / det;
        inv[1][1] = gm[0][0] / det;
        inv[0][1] = -gm[0][1] / det;
        inv[1][0] = -gm[1][0] / det;
    } else {
        const double(&a)[3][3] = gm;
        const double c00 = a[1][1] * a[2][2] - a[1][2] * a[2][1], c01 = a[1][2] * a[2][0] - a[1][0] * a[2][2],
                     c02 = a[1][0] * a[2][1] - a[1][1] * a[2][0];
        det = a[0][0] * c00 + a[0][1] * c01 + a[0][2] * c02;
        inv[0][0] = c00 / det;
        inv[1][0] = c01 / det;
        inv[2][0] = c02 / det;
        inv[0][1] = (a[0][2] * a[2][1] - a[0][1] * a[2][2]) / det;
        inv[1][1] = (a[0][0] * a[2][2] - a[0][2] * a[2][0]) / det;
        inv[2][1] = (a[0][1] * a[2][0] - a[0][0] * a[2][1]) / det;
        inv[0][2] = (a[0][1] * a[1][2] - a[0][2] * a[1][1]) / det;
        inv[1][2] = (a[0][2] * a[1][0] - a[0][0] * a[1][2]) / det;
        inv[2][2] = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) / det;
    }
    return det;
}

// Stores h G = gm as particle i's kernel, with det and the ellipsoid's half-extents.
template <int D>
void store_kernel(const double (&gm)[D][D], float h, std::size_t i, AnisotropicKernels<D>& k) {
    auto& g = k.g[i];
    for (int a = 0; a < D; ++a)
        for (int b = 0; b < D; ++b) g[a * D + b] = float(gm[a][b]);
    // det and the ellipsoid's half-extents h sqrt((M^-2)_aa), from the inverse of M = h G.
    double inv[D][D];
    const double det = invert_kernel<D>(gm, inv);
    k.det[i] = float(det);
    for (int a = 0; a < D; ++a) {
        double e2 = 0.0;
        for (int e = 0; e < D; ++e) e2 += inv[a][e] * inv[a][e];
        k.extent[i][a] = float(h * std::sqrt(e2));
    }
}

// The kernel of the particle at sorted position i (in cell `cell`): its smoothed centre (eq. 6) into
// centre, h G at its input index in k (written there at once: no second copy of the kernels to reorder).
template <int D>
void particle_kernel(const CellRuns<D>& cr, std::size_t cell, std::size_t i, const KernelParams& p,
                     AnisotropicKernels<D>& k, Vec<D>& centre, std::uint8_t& isolated) {
    const std::size_t j = cr.order[i];
    float xi[D];
    for (int a = 0; a < D; ++a) xi[a] = cr.x[a][i];
    // One pass in coordinates relative to x_i: sum w, sum w d, sum w d d^T (d = x_j - x_i), in
    // sixteen lanes. Float sums of at most a few hundred terms with |d| < r_c: the covariance's
    // relative error stays near 1e-6, far below the clamp's factor k_r.
    double sums[2 + D + D * (D + 1) / 2];
    covariance_sums<D>(cr, cell, xi, p.rc, sums);
    const double sw = sums[0];
    const int count = int(sums[1]);
    double m[D], c[D][D] = {};
    weighted_covariance<D>(sums, sw, m, c);
    for (int a = 0; a < D; ++a) centre[a] = xi[a] + float(p.lambda * m[a]);  // eq. 6
    double gm[D][D] = {};
    double lo, hi;
    gershgorin_interval<D>(c, lo, hi);
    k.round[j] = 0;
    if (count < p.n_eps) {  // isolated: a round kernel of radius k_n h
        isolated = 1;
        for (int a = 0; a < D; ++a) gm[a][a] = 1.0 / kIsolatedScale;
    } else if (lo > 0.0 && std::min(lo, p.sigma0) >= kRoundEnough * hi) {
        // Every scale k_s / sigma~ below would lie in [kRoundEnough, 1]: the isotropic kernel.
        k.round[j] = 1;
        for (int a = 0; a < D; ++a) gm[a][a] = 1.0;
    } else {
        stretched_kernel<D>(c, p, gm);
    }
    store_kernel<D>(gm, p.h, j, k);
}

// Taubin's (1995) step back: xbar_i += mu (sum_j w_ij xbar_j / sum_j w_ij - xbar_i), the same weights,
// mu = 1 / (k_pb - 1 / lambda) with k_pb = 0.1. Eq. 6 alone pulls the layer under a flat free surface
// down by 0.9 of its half-neighbourhood's offset (the tank at rest's surface sank by 1.5 r); the pair
// keeps the damping of the particles' noise and cancels that shrinkage to first order. centers in the
// cells' order; the result in the input's (cr.order).
template <int D>
std::vector<Vec<D>> step_back_centres(const CellRuns<D>& cr, const std::vector<Vec<D>>& centers, float lambda, float rc,
                                      const ExecContext& exec) {
    const std::size_t n = centers.size();
    const double mu = 1.0 / (0.1 - 1.0 / lambda);
    const std::array<std::vector<float>, D> cx = lane_columns<D>(centers);  // the centres in the cells' order
    std::vector<Vec<D>> back(n);
    parallel_for_each_index(exec, cr.cells(), [&](std::size_t cell) {
        for (std::size_t i = cr.cell_begin[cell]; i < cr.cell_begin[cell + 1]; ++i) {
            float xi[D], ci[D];
            for (int a = 0; a < D; ++a) {
                xi[a] = cr.x[a][i];
                ci[a] = cx[a][i];
            }
            double sums[1 + D];
            centre_sums<D>(cr, cx, cell, xi, ci, rc, sums);
            Vec<D> c;
            for (int a = 0; a < D; ++a) c[a] = ci[a] + float(mu * sums[1 + a] / sums[0]);
            back[cr.order[i]] = c;
        }
    }, 4);
    return back;
}

// The centres moved from the cells' order (sorted position i) to the input's (cr.order[i]).
template <int D>
std::vector<Vec<D>> in_input_order(const CellRuns<D>& cr, const std::vector<Vec<D>>& centres, const ExecContext& exec) {
    std::vector<Vec<D>> out(centres.size());
    parallel_for_each_index(exec, centres.size(), [&](std::size_t i) { out[cr.order[i]] = centres[i]; });
    return out;
}

// The counts of isolated and round kernels, and the largest extent (isolated in the cells' order, the
// kernels in the input's: sums and a maximum, the same in any order).
template <int D>
void count_kernels(const std::vector<std::uint8_t>& isolated, AnisotropicKernels<D>& k) {
    for (std::size_t i = 0; i < isolated.size(); ++i) {
        k.isolated += isolated[i];
        k.rounded += k.round[i];
        for (int a = 0; a < D; ++a) k.max_extent = std::max(k.max_extent, k.extent[i][a]);
    }
}

}  // namespace

template <int D>
AnisotropicKernels<D> anisotropic_kernels(std::span<const Vec<D>> input, const SurfaceSettings& s,
                                          const ExecContext& exec) {
    validate(s);
    const float rc = s.anisotropy_support(), h = s.support();
    const float lambda = s.anisotropy_smoothing, kr = s.anisotropy_ratio;
    const std::size_t n = input.size();
    AnisotropicKernels<D> k;
    resize_kernels(k, n);
    if (n == 0) return k;

    int full = 0;  // particles of a full lattice neighbourhood
    const double sigma0 = lattice_variance<D>(s.particle_radius, rc, full);
    const int n_eps = s.anisotropy_neighbors > 0 ? s.anisotropy_neighbors : std::max(1, int(std::lround(0.1 * full)));
    const KernelParams p{rc, h, lambda, kr, sigma0, n_eps};

    // Computed in the cells' order (sorted position i, input index cr.order[i]), stored in the input's.
    const CellRuns<D> cr(input, rc, exec);
    std::vector<std::uint8_t> isolated(n, 0);
    std::vector<Vec<D>> centres(n);  // eq. 6's, in the cells' order
    parallel_for_each_index(exec, cr.cells(), [&](std::size_t cell) {
        for (std::size_t i = cr.cell_begin[cell]; i < cr.cell_begin[cell + 1]; ++i)
            particle_kernel<D>(cr, cell, i, p, k, centres[i], isolated[i]);
    }, 4);
    k.centers = lambda > 0.0f ? step_back_centres<D>(cr, centres, lambda, rc, exec) : in_input_order<D>(cr, centres, exec);
    count_kernels<D>(isolated, k);
    return k;
}

template AnisotropicKernels<2> anisotropic_kernels<2>(std::span<const Vec<2>>, const SurfaceSettings&, const ExecContext&);
template AnisotropicKernels<3> anisotropic_kernels<3>(std::span<const Vec<3>>, const SurfaceSettings&, const ExecContext&);

}  // namespace eddy
