#include <gtest/gtest.h>

#include "eddy/kernels.hpp"

using namespace eddy;

namespace {
// Midpoint quadrature over [-h, h]^D.
template <int D, class F>
double integrate(float h, int n, F&& f) {
    const double dx = 2.0 * h / n;
    double sum = 0.0;
    if constexpr (D == 2) {
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) sum += f(Vec2{{float(-h + (i + 0.5) * dx), float(-h + (j + 0.5) * dx)}});
        return sum * dx * dx;
    } else {
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int k = 0; k < n; ++k)
                    sum += f(Vec3{{float(-h + (i + 0.5) * dx), float(-h + (j + 0.5) * dx), float(-h + (k + 0.5) * dx)}});
        return sum * dx * dx * dx;
    }
}
}  // namespace

TEST(Kernels, CubicSplineIntegratesToOne1D) {
    // The 1D normalisation of the seed (sigma_1 = 4 / (3h)), with the same kernel shape.
    for (double h : {0.01, 1.0, 3.0}) {
        const int n = 100000;
        double sum = 0.0;
        for (int i = 0; i < n; ++i) {
            const double x = -h + (i + 0.5) * 2.0 * h / n;
            sum += cubic_spline_sigma(1, h) * cubic_spline_shape(std::abs(x) / h) * 2.0 * h / n;
        }
        EXPECT_NEAR(sum, 1.0, 1e-6) << "h = " << h;
    }
}

TEST(Kernels, CubicSplineIntegratesToOne2D) {
    for (float h : {0.01f, 0.5f, 2.0f}) {
        CubicSpline<2> W(h);
        EXPECT_NEAR(integrate<2>(h, 800, [&](const Vec2& r) { return W.value(r); }), 1.0, 1e-4) << "h = " << h;
    }
}

TEST(Kernels, CubicSplineIntegratesToOne3D) {
    for (float h : {0.02f, 1.0f}) {
        CubicSpline<3> W(h);
        EXPECT_NEAR(integrate<3>(h, 160, [&](const Vec3& r) { return W.value(r); }), 1.0, 1e-3) << "h = " << h;
    }
}

TEST(Kernels, GradientIntegratesToZeroAndIsAntisymmetric) {
    CubicSpline<3> W(0.1f);
    for (int a = 0; a < 3; ++a) {
        const double g = integrate<3>(0.1f, 80, [&](const Vec3& r) { return W.gradient(r)[a]; });
        EXPECT_NEAR(g, 0.0, 1e-6);
    }
    const Vec3 r{{0.013f, -0.021f, 0.04f}};
    const Vec3 g1 = W.gradient(r), g2 = W.gradient(-r);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(g1[a], -g2[a]);
    // Points from the neighbour towards the particle with a negative slope: grad W . r < 0.
    EXPECT_LT(dot(g1, r), 0.0f);
}

TEST(Kernels, CompactSupportAndContinuity) {
    CubicSpline<2> W(1.0f);
    EXPECT_EQ(W.value(1.0f), 0.0f);
    EXPECT_EQ(W.value(1.5f), 0.0f);
    EXPECT_EQ(W.derivative(1.0f), 0.0f);
    EXPECT_NEAR(W.value(0.5f - 1e-6f), W.value(0.5f + 1e-6f), 1e-5);
    EXPECT_NEAR(W.derivative(0.5f - 1e-6f), W.derivative(0.5f + 1e-6f), 1e-4);
    EXPECT_FLOAT_EQ(W.value(0.0f), W.sigma);
    // The derivative matches a central difference.
    for (float r : {0.1f, 0.3f, 0.6f, 0.9f}) {
        const float e = 1e-3f;
        EXPECT_NEAR(W.derivative(r), (W.value(r + e) - W.value(r - e)) / (2 * e), 2e-3) << r;
    }
}
