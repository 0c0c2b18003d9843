// Stage 1a (optional): the anisotropic kernels of Yu & Turk 2013 ("Reconstructing surfaces of
// particle-based fluids using anisotropic kernels", ACM TOG 32(1)); equations in eddy/surface.hpp.
//
// Each particle gathers its neighbours within r_c in the neighbour grid's fixed order and writes only
// its own kernel: the same bits on any number of threads.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/kernels.hpp"
#include "eddy/mass_properties.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/surface.hpp"

namespace eddy {

namespace {

constexpr float kIsolatedScale = 0.5f;  // k_n: an isolated particle's kernel radius, in h
constexpr float kMaxStretch = 2.0f;     // a kernel axis is at most this many h long (bounds the splat's reach)

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

}  // namespace

template <int D>
AnisotropicKernels<D> anisotropic_kernels(std::span<const Vec<D>> positions, const SurfaceSettings& s,
                                          const ExecContext& exec) {
    validate(s);
    const float rc = s.anisotropy_support(), h = s.support(), inv_rc = 1.0f / rc;
    const float lambda = s.anisotropy_smoothing, kr = s.anisotropy_ratio;
    const std::size_t n = positions.size();
    AnisotropicKernels<D> k;
    k.centers.resize(n);
    k.g.resize(n);
    k.det.resize(n);
    k.extent.resize(n);
    if (n == 0) return k;

    // k_s: the variance on one axis of a full lattice neighbourhood (spacing 2r) with the same weights,
    // so that an interior particle keeps the isotropic kernel (G = I / h).
    double lw = 0.0, lxx = 0.0;
    int full = 0;  // particles of a full lattice neighbourhood
    for_each_lattice_offset<D>(2.0f * s.particle_radius, rc, [&](const Vec<D>& x) {
        const double d = norm(x) / rc;
        if (d >= 1.0) return;
        ++full;
        const double w = 1.0 - d * d * d;
        lw += w;
        lxx += w * double(x[0]) * x[0];
    });
    const double sigma0 = lxx / lw;
    const int n_eps = s.anisotropy_neighbors > 0 ? s.anisotropy_neighbors : std::max(1, int(std::lround(0.1 * full)));

    NeighborGrid<D> grid;
    grid.set_cell_size(rc);
    grid.build(positions, exec);
    std::vector<std::uint8_t> isolated(n, 0);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const Vec<D> xi = positions[i];
        // One pass in coordinates relative to x_i: sum w, sum w d, sum w d d^T (d = x_j - x_i).
        // Float sums of at most a few hundred terms in coordinates relative to x_i (|d| < r_c): the
        // covariance's relative error stays near 1e-6, far below the clamp's factor k_r.
        float swf = 0.0f, mf[D] = {}, cf[D][D] = {};
        int count = 0;
        grid.for_each_neighbor(xi, rc, [&](std::uint32_t j) {
            const Vec<D> d = positions[j] - xi;
            const float q = norm(d) * inv_rc;
            const float w = 1.0f - q * q * q;  // eq. 11
            swf += w;
            for (int a = 0; a < D; ++a) {
                mf[a] += w * d[a];
                for (int b = a; b < D; ++b) cf[a][b] += w * d[a] * d[b];
            }
            ++count;
        });
        const double sw = swf;
        double m[D], c[D][D] = {};
        for (int a = 0; a < D; ++a) {
            m[a] = mf[a] / sw;  // x_w - x_i (eq. 10)
            for (int b = a; b < D; ++b) c[a][b] = cf[a][b];
        }
        Vec<D> center;
        for (int a = 0; a < D; ++a) center[a] = xi[a] + float(lambda * m[a]);  // eq. 6
        k.centers[i] = center;
        auto& g = k.g[i];
        double gm[D][D] = {};
        if (count < n_eps) {  // isolated: a round kernel of radius k_n h
            isolated[i] = 1;
            for (int a = 0; a < D; ++a) gm[a][a] = 1.0 / kIsolatedScale;
        } else {
            for (int a = 0; a < D; ++a)  // covariance about the weighted mean (eq. 9)
                for (int b = a; b < D; ++b) c[b][a] = c[a][b] = c[a][b] / sw - m[a] * m[b];
            double sigma[D], R[D][D];
            symmetric_eigen<D>(c, sigma, R);
            // h G = R diag(k_s / sigma~) R^T (eq. 16) with k_s = min(sigma~_min, sigma_0): no axis shorter
            // than the isotropic kernel's, the others stretched by sigma~_k / sigma~_min (at most k_r, and
            // at most kMaxStretch h long). See eddy/surface.hpp for why not the paper's fixed k_s.
            double scale[D];
            const double ks = std::min(std::max(sigma[D - 1], sigma[0] / kr), sigma0);
            for (int a = 0; a < D; ++a) {
                const double clamped = std::max(sigma[a], sigma[0] / kr);  // eq. 15
                scale[a] = std::max(ks / std::max(clamped, 1e-30), 1.0 / kMaxStretch);
            }
            for (int a = 0; a < D; ++a)
                for (int b = 0; b < D; ++b) {
                    double v = 0.0;
                    for (int e = 0; e < D; ++e) v += R[a][e] * scale[e] * R[b][e];
                    gm[a][b] = v;
                }
        }
        for (int a = 0; a < D; ++a)
            for (int b = 0; b < D; ++b) g[a * D + b] = float(gm[a][b]);
        // det and the ellipsoid's half-extents h sqrt((M^-2)_aa), from the inverse of M = h G.
        double inv[D][D];
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
        k.det[i] = float(det);
        for (int a = 0; a < D; ++a) {
            double e2 = 0.0;
            for (int e = 0; e < D; ++e) e2 += inv[a][e] * inv[a][e];
            k.extent[i][a] = float(h * std::sqrt(e2));
        }
    }, 256);
    // Taubin's (1995) step back: xbar_i += mu (sum_j w_ij xbar_j / sum_j w_ij - xbar_i), the same weights,
    // mu = 1 / (k_pb - 1 / lambda) with k_pb = 0.1. Eq. 6 alone pulls the layer under a flat free surface
    // down by 0.9 of its half-neighbourhood's offset (the tank at rest's surface sank by 1.5 r); the pair
    // keeps the damping of the particles' noise and cancels that shrinkage to first order.
    if (lambda > 0.0f) {
        const double mu = 1.0 / (0.1 - 1.0 / lambda);
        std::vector<Vec<D>> back(n);
        parallel_for_each_index(exec, n, [&](std::size_t i) {
            const Vec<D> xi = positions[i], ci = k.centers[i];
            float sw = 0.0f, m[D] = {};
            grid.for_each_neighbor(xi, rc, [&](std::uint32_t j) {
                const float q = norm(positions[j] - xi) * inv_rc;
                const float w = 1.0f - q * q * q;
                sw += w;
                const Vec<D> d = k.centers[j] - ci;
                for (int a = 0; a < D; ++a) m[a] += w * d[a];
            });
            Vec<D> c = ci;
            for (int a = 0; a < D; ++a) c[a] = ci[a] + float(mu * m[a] / sw);
            back[i] = c;
        }, 256);
        k.centers = std::move(back);
    }
    for (std::size_t i = 0; i < n; ++i) {
        k.isolated += isolated[i];
        for (int a = 0; a < D; ++a) k.max_extent = std::max(k.max_extent, k.extent[i][a]);
    }
    return k;
}

template AnisotropicKernels<2> anisotropic_kernels<2>(std::span<const Vec<2>>, const SurfaceSettings&, const ExecContext&);
template AnisotropicKernels<3> anisotropic_kernels<3>(std::span<const Vec<3>>, const SurfaceSettings&, const ExecContext&);

}  // namespace eddy
