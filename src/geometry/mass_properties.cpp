// mass_properties: mass, centre of mass and inertia tensor of uniform rigid bodies (issue 30).
//
// Closed forms for boxes, balls and cylinders; the shoelace sums for polygons; for triangle meshes, the
// divergence theorem: the solid is the signed sum of the tetrahedra joining a reference point to each
// triangle, and each tetrahedron's second moments have a closed form (Tonon 2004). Everything is
// accumulated in double, relative to a reference point inside the body's bounds, so that a model far from
// the origin does not lose its inertia to cancellation (the parallel-axis shift is done once, at the end).
#include "eddy/mass_properties.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "eddy/error.hpp"

namespace eddy {

namespace {

using Mat3 = std::array<std::array<double, 3>, 3>;
using D3 = std::array<double, 3>;

// The inertia tensor from the second-moment (covariance) matrix C = integral of rho x x^T about the same
// point: I = trace(C) Id - C.
Mat3 inertia_from_covariance(const Mat3& c) {
    const double tr = c[0][0] + c[1][1] + c[2][2];
    Mat3 in{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) in[i][j] = (i == j ? tr : 0.0) - c[i][j];
    return in;
}

MassProperties diagonal(double volume, double density, const D3& center, double ixx, double iyy, double izz) {
    MassProperties p;
    p.volume = volume;
    p.mass = volume * density;
    p.center = center;
    p.inertia[0][0] = ixx;
    p.inertia[1][1] = iyy;
    p.inertia[2][2] = izz;
    return p;
}

[[maybe_unused]] bool finite3(const D3& a) { return std::isfinite(a[0]) && std::isfinite(a[1]) && std::isfinite(a[2]); }

}  // namespace

MassProperties box_mass_properties(int dim, const D3& min, const D3& max, double density) {
    EDDY_ASSERT(dim == 2 || dim == 3);
    EDDY_ASSERT(std::isfinite(density) && density > 0.0);
    EDDY_ASSERT(finite3(min) && finite3(max));
    const double a = max[0] - min[0], b = max[1] - min[1];
    EDDY_ASSERT(a > 0.0 && b > 0.0);
    if (dim == 2) {
        const double area = a * b, m = area * density;
        return diagonal(area, density, {0.5 * (min[0] + max[0]), 0.5 * (min[1] + max[1]), 0.0}, 0.0, 0.0,
                        m * (a * a + b * b) / 12.0);
    }
    const double c = max[2] - min[2];
    EDDY_ASSERT(c > 0.0);
    const double vol = a * b * c, m = vol * density;
    return diagonal(vol, density, {0.5 * (min[0] + max[0]), 0.5 * (min[1] + max[1]), 0.5 * (min[2] + max[2])},
                    m * (b * b + c * c) / 12.0, m * (a * a + c * c) / 12.0, m * (a * a + b * b) / 12.0);
}

MassProperties ball_mass_properties(int dim, const D3& center, double radius, double density) {
    EDDY_ASSERT(dim == 2 || dim == 3);
    EDDY_ASSERT(std::isfinite(density) && density > 0.0);
    EDDY_ASSERT(std::isfinite(radius) && radius > 0.0 && finite3(center));
    constexpr double pi = std::numbers::pi;
    const double r2 = radius * radius;
    if (dim == 2) {
        const double area = pi * r2, m = area * density;
        return diagonal(area, density, {center[0], center[1], 0.0}, 0.0, 0.0, 0.5 * m * r2);
    }
    const double vol = 4.0 / 3.0 * pi * r2 * radius, i = 0.4 * vol * density * r2;
    return diagonal(vol, density, center, i, i, i);
}

MassProperties cylinder_mass_properties(const D3& bottom_center, double radius, double height, double density) {
    EDDY_ASSERT(std::isfinite(density) && density > 0.0);
    EDDY_ASSERT(std::isfinite(radius) && radius > 0.0 && std::isfinite(height) && height > 0.0);
    EDDY_ASSERT(finite3(bottom_center));
    const double r2 = radius * radius, vol = std::numbers::pi * r2 * height, m = vol * density;
    const double across = m * (3.0 * r2 + height * height) / 12.0;  // about a diameter through the centre
    return diagonal(vol, density, {bottom_center[0], bottom_center[1] + 0.5 * height, bottom_center[2]}, across,
                    0.5 * m * r2, across);
}

MassProperties polygon_mass_properties(const std::vector<std::array<double, 2>>& corners, double density) {
    EDDY_ASSERT(std::isfinite(density) && density > 0.0);
    const std::size_t n = corners.size();
    EDDY_ASSERT(n >= 3);
    // Reference point: the corners' mean (inside the bounds), against cancellation far from the origin.
    double ox = 0.0, oy = 0.0;
    for (const auto& c : corners) {
        EDDY_ASSERT(std::isfinite(c[0]) && std::isfinite(c[1]));
        ox += c[0];
        oy += c[1];
    }
    ox /= double(n);
    oy /= double(n);
    // Green's theorem over the edges, each edge with the reference point a signed triangle:
    // area, first moments and the polar second moment about the reference point.
    double area2 = 0.0, sx = 0.0, sy = 0.0, jz = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double x0 = corners[i][0] - ox, y0 = corners[i][1] - oy;
        const double x1 = corners[(i + 1) % n][0] - ox, y1 = corners[(i + 1) % n][1] - oy;
        const double cr = x0 * y1 - x1 * y0;
        area2 += cr;
        sx += (x0 + x1) * cr;
        sy += (y0 + y1) * cr;
        jz += (x0 * x0 + x0 * x1 + x1 * x1 + y0 * y0 + y0 * y1 + y1 * y1) * cr;
    }
    const double signed_area = 0.5 * area2;
    EDDY_ASSERT(signed_area != 0.0 && std::isfinite(signed_area));
    // Clockwise corners give every sum the opposite sign; the ratios (centroid) do not change.
    const double cx = sx / (3.0 * area2), cy = sy / (3.0 * area2);
    const double area = std::abs(signed_area);
    const double j_ref = std::abs(jz / 12.0);  // the polar moment per unit density about the reference point
    MassProperties p;
    p.volume = area;
    p.mass = area * density;
    p.center = {ox + cx, oy + cy, 0.0};
    p.inertia[2][2] = density * (j_ref - area * (cx * cx + cy * cy));  // parallel axes to the centroid
    return p;
}

MassProperties mesh_mass_properties(const Mesh<3>& mesh, double density) {
    EDDY_ASSERT(std::isfinite(density) && density > 0.0);
    EDDY_ASSERT(!mesh.cells.empty());
    // Reference point: the centre of the vertices' bounds.
    D3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (const Vec3& v : mesh.vertices)
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], double(v[k]));
            hi[k] = std::max(hi[k], double(v[k]));
        }
    const D3 ref{0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};

    // Per tetrahedron (ref, a, b, c) with d = a . (b x c) relative to ref: volume d/6, first moment
    // d/24 (a+b+c), second moments (covariance) d/120 (a a^T + b b^T + c c^T + s s^T), s = a+b+c.
    double vol6 = 0.0;
    D3 first24{0, 0, 0};
    Mat3 cov120{};
    for (const auto& t : mesh.cells) {
        D3 p[3];
        for (int i = 0; i < 3; ++i) {
            EDDY_ASSERT(t[i] < mesh.vertices.size());
            for (int k = 0; k < 3; ++k) p[i][k] = double(mesh.vertices[t[i]][k]) - ref[k];
        }
        const double d = p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) -
                         p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
                         p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0]);
        const D3 s{p[0][0] + p[1][0] + p[2][0], p[0][1] + p[1][1] + p[2][1], p[0][2] + p[1][2] + p[2][2]};
        vol6 += d;
        for (int k = 0; k < 3; ++k) first24[k] += d * s[k];
        for (int i = 0; i < 3; ++i)
            for (int j = i; j < 3; ++j)
                cov120[i][j] += d * (p[0][i] * p[0][j] + p[1][i] * p[1][j] + p[2][i] * p[2][j] + s[i] * s[j]);
    }
    // Inward winding negates every sum; the sign of the volume undoes it.
    const double sign = vol6 < 0.0 ? -1.0 : 1.0;
    const double vol = sign * vol6 / 6.0;
    EDDY_ASSERT(vol > 0.0 && std::isfinite(vol));
    const D3 c{sign * first24[0] / 24.0 / vol, sign * first24[1] / 24.0 / vol, sign * first24[2] / 24.0 / vol};
    Mat3 cov{};  // per unit density, about the centre of mass
    for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) {
            cov[i][j] = sign * cov120[i][j] / 120.0 - vol * c[i] * c[j];
            cov[j][i] = cov[i][j];
        }
    const Mat3 in = inertia_from_covariance(cov);
    MassProperties out;
    out.volume = vol;
    out.mass = vol * density;
    out.center = {ref[0] + c[0], ref[1] + c[1], ref[2] + c[2]};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out.inertia[i][j] = density * in[i][j];
    return out;
}

std::string closed_mesh_problem(const Mesh<3>& mesh) {
    if (mesh.cells.empty()) return "it has no triangles";
    const std::size_t nv = mesh.vertices.size();
    for (std::size_t i = 0; i < nv; ++i)
        if (!is_finite(mesh.vertices[i])) return fmt::format("vertex {} is not a finite point", i);
    // Every directed side of every triangle, sorted by its undirected edge, then by triangle: a closed,
    // consistently wound surface has each edge exactly twice, walked once each way.
    struct Side {
        std::uint64_t key;
        std::uint32_t tri;
        int dir;  // +1 when walked from the smaller vertex to the larger
    };
    std::vector<Side> sides;
    sides.reserve(3 * mesh.cells.size());
    for (std::size_t t = 0; t < mesh.cells.size(); ++t) {
        const auto& c = mesh.cells[t];
        for (int i = 0; i < 3; ++i) {
            if (c[i] >= nv) return fmt::format("triangle {} refers to vertex {} of {}", t, c[i], nv);
            const std::uint32_t a = c[i], b = c[(i + 1) % 3];
            if (a == b) return fmt::format("triangle {} uses vertex {} twice", t, a);
            sides.push_back({(std::uint64_t(std::min(a, b)) << 32) | std::max(a, b), std::uint32_t(t), a < b ? 1 : -1});
        }
    }
    std::sort(sides.begin(), sides.end(),
              [](const Side& x, const Side& y) { return x.key != y.key ? x.key < y.key : x.tri < y.tri; });
    for (std::size_t i = 0; i < sides.size();) {
        std::size_t j = i;
        while (j < sides.size() && sides[j].key == sides[i].key) ++j;
        const auto lo = std::uint32_t(sides[i].key >> 32), hi = std::uint32_t(sides[i].key & 0xffffffffu);
        if (j - i != 2)
            return fmt::format("the edge between vertices {} and {} belongs to {} triangle{} (every edge of a closed "
                               "surface belongs to exactly 2)",
                               lo, hi, j - i, j - i == 1 ? "" : "s");
        if (sides[i].dir == sides[i + 1].dir)
            return fmt::format("triangles {} and {} are wound in opposite directions (one faces in, the other out) "
                               "across the edge between vertices {} and {}",
                               sides[i].tri, sides[i + 1].tri, lo, hi);
        i = j;
    }
    // Near zero volume (a flat or collapsed surface): relative to the surface's area A, |V| below
    // 1e-6 A^(3/2) is within a few float roundings of the vertices (a plate thinner than about 3e-6 of
    // its side). The volume is taken about the first vertex, against cancellation far from the origin.
    double area = 0.0, vol6 = 0.0;
    const Vec3 o = mesh.vertices[mesh.cells[0][0]];
    for (const auto& c : mesh.cells) {
        D3 p[3];
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k) p[i][k] = double(mesh.vertices[c[i]][k]) - double(o[k]);
        const D3 e1{p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
        const D3 e2{p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
        const D3 n{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        area += 0.5 * std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        vol6 += p[0][0] * n[0] + p[0][1] * n[1] + p[0][2] * n[2];  // a . ((b - a) x (c - a)) = a . (b x c)
    }
    const double vol = std::abs(vol6) / 6.0;
    if (!(vol > 1e-6 * area * std::sqrt(area)))
        return fmt::format("it encloses (almost) no volume ({:.3g} m^3 inside {:.3g} m^2 of surface)", vol, area);
    return "";
}

PrincipalAxes principal_axes(const Mat3& inertia) {
    Mat3 a = inertia;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EDDY_ASSERT(std::isfinite(a[i][j]));
    // Symmetrise (the caller's tensor may carry rounding asymmetry).
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j) a[i][j] = a[j][i] = 0.5 * (a[i][j] + a[j][i]);
    Mat3 v{};
    for (int i = 0; i < 3; ++i) v[i][i] = 1.0;
    double scale = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) scale += a[i][j] * a[i][j];
    // Cyclic Jacobi: each rotation zeroes one off-diagonal pair; convergence is quadratic, a 3x3 tensor
    // needs a handful of sweeps. Deterministic (fixed order), no allocation.
    for (int sweep = 0; sweep < 64; ++sweep) {
        const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        if (off == 0.0 || off <= 1e-32 * scale) break;
        for (const auto& [p, q] : {std::pair{0, 1}, std::pair{0, 2}, std::pair{1, 2}}) {
            if (a[p][q] == 0.0) continue;
            const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            const double t = (theta >= 0.0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
            const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
            // a <- J^T a J, v <- v J, with J the identity but J[p][p] = J[q][q] = c, J[p][q] = s, J[q][p] = -s.
            for (int k = 0; k < 3; ++k) {  // columns p and q
                const double akp = a[k][p], akq = a[k][q];
                a[k][p] = c * akp - s * akq;
                a[k][q] = s * akp + c * akq;
                const double vkp = v[k][p], vkq = v[k][q];
                v[k][p] = c * vkp - s * vkq;
                v[k][q] = s * vkp + c * vkq;
            }
            for (int k = 0; k < 3; ++k) {  // rows p and q
                const double apk = a[p][k], aqk = a[q][k];
                a[p][k] = c * apk - s * aqk;
                a[q][k] = s * apk + c * aqk;
            }
            a[p][q] = a[q][p] = 0.0;
        }
    }
    // Ascending moments, columns following (a stable order for ties keeps the result deterministic).
    std::array<int, 3> order{0, 1, 2};
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return a[x][x] < a[y][y]; });
    PrincipalAxes out;
    for (int c = 0; c < 3; ++c) {
        out.moments[c] = a[order[c]][order[c]];
        for (int r = 0; r < 3; ++r) out.axes[r][c] = v[r][order[c]];
    }
    const auto& m = out.axes;
    const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if (det < 0.0)  // a reflection: flip the last axis to make the rotation right-handed
        for (int r = 0; r < 3; ++r) out.axes[r][2] = -out.axes[r][2];
    return out;
}

}  // namespace eddy
