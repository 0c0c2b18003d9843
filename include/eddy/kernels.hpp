// eddy: SPH smoothing kernels.
//
// Cubic spline kernel with compact support radius h (seed 003; Monaghan 1992, in the form of
// Koschier et al. 2019, "Smoothed Particle Hydrodynamics Techniques for the Physics Based Simulation
// of Fluids and Solids", eq. 4):
//   W(r, h) = sigma_d * { 6 (q^3 - q^2) + 1      0 <= q <= 1/2
//                        { 2 (1 - q)^3            1/2 < q <= 1
//                        { 0                      otherwise,        q = |r| / h,
//   sigma_1 = 4 / (3 h), sigma_2 = 40 / (7 pi h^2), sigma_3 = 8 / (pi h^3).
// (The seed's text prints the middle branch as 2(1 - q^3); the kernel is 2(1 - q)^3, which is C^2
// and integrates to 1 - see tests/unit/kernels_test.cpp.)
#pragma once
#include <algorithm>
#include <cmath>
#include <numbers>

#include "eddy/math.hpp"

namespace eddy {

/// sigma_d of the cubic spline for support radius h in d = 1, 2 or 3 dimensions (1/m^d).
inline double cubic_spline_sigma(int d, double h) {
    if (d == 1) return 4.0 / (3.0 * h);
    if (d == 2) return 40.0 / (7.0 * std::numbers::pi * h * h);
    return 8.0 / (std::numbers::pi * h * h * h);
}

/// The kernel's shape without normalisation: f(q) = 6 (q^3 - q^2) + 1 (q <= 1/2), 2 (1 - q)^3 (q < 1).
inline double cubic_spline_shape(double q) {
    if (q <= 0.5) return 6.0 * (q * q * q - q * q) + 1.0;
    if (q < 1.0) return 2.0 * (1.0 - q) * (1.0 - q) * (1.0 - q);
    return 0.0;
}

template <int D>
struct CubicSpline {
    float h = 1.0f;      ///< Support radius (m): W = 0 for |r| >= h
    float inv_h = 1.0f;  ///< 1 / h (1/m)
    float sigma = 0.0f;  ///< Normalisation sigma_d (1/m^D)

    CubicSpline() = default;
    explicit CubicSpline(float support)
        : h(support), inv_h(1.0f / support), sigma(static_cast<float>(cubic_spline_sigma(D, support))) {}

    /// W(r) from the distance r (m). Returns 0 for r >= h.
    float value(float r) const {
        const float q = r * inv_h;
        if (q <= 0.5f) return sigma * (6.0f * (q * q * q - q * q) + 1.0f);
        if (q < 1.0f) {
            const float t = 1.0f - q;
            return sigma * 2.0f * t * t * t;
        }
        return 0.0f;
    }
    float value(const Vec<D>& r) const { return value(norm(r)); }

    /// dW/dr (1/m^(D+1)), a function of the distance r; <= 0 everywhere.
    float derivative(float r) const {
        const float q = r * inv_h;
        if (q <= 0.5f) return sigma * inv_h * 6.0f * (3.0f * q * q - 2.0f * q);
        if (q < 1.0f) {
            const float t = 1.0f - q;
            return -sigma * inv_h * 6.0f * t * t;
        }
        return 0.0f;
    }

    /// W(r) and dW/dr together, without branches (both pieces computed, then selected): neighbour
    /// distances are random, and a mispredicted q <= 1/2 test costs more than the arithmetic.
    void value_and_derivative(float r, float& w, float& dw) const {
        const float q = r * inv_h;
        const float t = std::max(1.0f - q, 0.0f);
        const bool inner = q <= 0.5f;
        const float w_in = 6.0f * (q * q * q - q * q) + 1.0f, w_out = 2.0f * t * t * t;
        const float d_in = 6.0f * (3.0f * q * q - 2.0f * q), d_out = -6.0f * t * t;
        w = sigma * (inner ? w_in : w_out);
        dw = sigma * inv_h * (inner ? d_in : d_out);
    }

    /// grad W(r) = dW/dr * r / |r| (1/m^(D+1)); zero at r = 0 and for |r| >= h. Antisymmetric.
    Vec<D> gradient(const Vec<D>& r) const {
        const float d = norm(r);
        if (d <= 1e-12f * h || d >= h) return Vec<D>::zero();
        return r * (derivative(d) / d);
    }
    /// The same when the caller already has the distance d = |r| > 0.
    Vec<D> gradient(const Vec<D>& r, float d) const { return r * (derivative(d) / d); }
};

/// Calls f(offset) for every point of a square (cubic) lattice of spacing `spacing` around the origin
/// that may lie within `radius` of it (the origin included). Lattice sums of kernel quantities (rest
/// masses, boundary volume corrections, PBF's constraint scale) all go through it.
template <int D, class F>
void for_each_lattice_offset(float spacing, float radius, F&& f) {
    const int n = static_cast<int>(std::ceil(radius / spacing)) + 1;
    for (int i = -n; i <= n; ++i)
        for (int j = -n; j <= n; ++j)
            for (int k = (D == 3 ? -n : 0); k <= (D == 3 ? n : 0); ++k) {
                Vec<D> x;
                x[0] = i * spacing;
                x[1] = j * spacing;
                if constexpr (D == 3) x[2] = k * spacing;
                f(x);
            }
}

}  // namespace eddy
