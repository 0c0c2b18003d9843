// Mass properties of rigid bodies (issue 30): the closed forms, the polygon and mesh integrals against them
// (meshes rotated, translated, wound inward, tessellated spheres and cylinders between their inscribed and
// circumscribed solids), closed_mesh_problem, principal_axes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>

#include "eddy/mass_properties.hpp"

using namespace eddy;

namespace {

using Mat3 = std::array<std::array<double, 3>, 3>;
using D3 = std::array<double, 3>;
constexpr double kPi = std::numbers::pi;

// Rotation by `angle` about the unit axis (Rodrigues).
Mat3 rotation(D3 axis, double angle) {
    const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    for (double& a : axis) a /= n;
    const double c = std::cos(angle), s = std::sin(angle), t = 1.0 - c;
    const double x = axis[0], y = axis[1], z = axis[2];
    return {{{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
             {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
             {t * x * z - s * y, t * y * z + s * x, t * z * z + c}}};
}

Mat3 mul(const Mat3& a, const Mat3& b) {
    Mat3 r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) r[i][j] += a[i][k] * b[k][j];
    return r;
}
Mat3 transpose(const Mat3& a) {
    Mat3 r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r[i][j] = a[j][i];
    return r;
}
D3 apply(const Mat3& a, const D3& v) {
    D3 r{0, 0, 0};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) r[i] += a[i][k] * v[k];
    return r;
}
double det(const Mat3& m) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}
Mat3 diag(double a, double b, double c) { return {{{a, 0, 0}, {0, b, 0}, {0, 0, c}}}; }

void expect_mat_near(const Mat3& got, const Mat3& want, double tol, const char* what) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(got[i][j], want[i][j], tol) << what << " [" << i << "][" << j << "]";
}
void expect_vec_near(const D3& got, const D3& want, double tol, const char* what) {
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

// An axis-aligned box of 12 outward triangles; corner i has bit 0 = x, bit 1 = y, bit 2 = z at max.
Mesh<3> box_mesh(const D3& lo, const D3& hi) {
    Mesh<3> m;
    for (int i = 0; i < 8; ++i)
        m.vertices.push_back({float(i & 1 ? hi[0] : lo[0]), float(i & 2 ? hi[1] : lo[1]), float(i & 4 ? hi[2] : lo[2])});
    m.cells = {{0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}, {0, 1, 5}, {0, 5, 4},
               {2, 6, 7}, {2, 7, 3}, {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}};
    return m;
}

// Each vertex v -> r v + t (in double, then stored as float).
Mesh<3> transformed(Mesh<3> m, const Mat3& r, const D3& t) {
    for (Vec3& v : m.vertices) {
        const D3 p = apply(r, {v[0], v[1], v[2]});
        v = {float(p[0] + t[0]), float(p[1] + t[1]), float(p[2] + t[2])};
    }
    return m;
}

// An icosahedron subdivided `level` times, its vertices pushed onto the sphere of `radius` about the origin.
Mesh<3> icosphere(int level, double radius) {
    const double g = (1.0 + std::sqrt(5.0)) / 2.0;
    std::vector<D3> p = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0}, {0, -1, g}, {0, 1, g},
                         {0, -1, -g}, {0, 1, -g}, {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    std::vector<std::array<std::uint32_t, 3>> tris = {
        {0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
        {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    auto push = [&](D3 v) {
        const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (double& x : v) x /= n;
        p.push_back(v);
        return std::uint32_t(p.size() - 1);
    };
    for (D3& v : p) {
        const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (double& x : v) x /= n;
    }
    for (int l = 0; l < level; ++l) {
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> mid;
        auto midpoint = [&](std::uint32_t a, std::uint32_t b) {
            const auto key = std::minmax(a, b);
            if (auto it = mid.find(key); it != mid.end()) return it->second;
            const std::uint32_t i = push({p[a][0] + p[b][0], p[a][1] + p[b][1], p[a][2] + p[b][2]});
            mid[key] = i;
            return i;
        };
        std::vector<std::array<std::uint32_t, 3>> next;
        for (const auto& t : tris) {
            const std::uint32_t a = midpoint(t[0], t[1]), b = midpoint(t[1], t[2]), c = midpoint(t[2], t[0]);
            next.insert(next.end(), {{t[0], a, c}, {t[1], b, a}, {t[2], c, b}, {a, b, c}});
        }
        tris = std::move(next);
    }
    Mesh<3> m;
    for (const D3& v : p) m.vertices.push_back({float(radius * v[0]), float(radius * v[1]), float(radius * v[2])});
    m.cells = tris;
    return m;
}

// A prism on a regular n-gon inscribed in the circle of `radius`, axis +y from `bottom`, outward triangles.
Mesh<3> cylinder_mesh(int n, const D3& bottom, double radius, double height) {
    Mesh<3> m;
    const auto un = std::uint32_t(n);
    for (int ring = 0; ring < 2; ++ring)
        for (int i = 0; i < n; ++i) {
            const double a = 2.0 * kPi * i / n;
            m.vertices.push_back({float(bottom[0] + radius * std::cos(a)), float(bottom[1] + ring * height),
                                  float(bottom[2] + radius * std::sin(a))});
        }
    m.vertices.push_back({float(bottom[0]), float(bottom[1]), float(bottom[2])});
    m.vertices.push_back({float(bottom[0]), float(bottom[1] + height), float(bottom[2])});
    const std::uint32_t bc = 2 * un, tc = 2 * un + 1;
    for (std::uint32_t i = 0; i < un; ++i) {
        const std::uint32_t j = (i + 1) % un;
        m.cells.push_back({bc, i, j});
        m.cells.push_back({tc, un + j, un + i});
        m.cells.push_back({i, un + j, j});
        m.cells.push_back({i, un + i, un + j});
    }
    return m;
}

// The smallest distance from `c` to the planes of the mesh's triangles: a convex mesh around c contains the
// ball of that radius.
double inscribed_radius(const Mesh<3>& m, const D3& c) {
    double r = HUGE_VAL;
    for (const auto& t : m.cells) {
        D3 p[3];
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k) p[i][k] = double(m.vertices[t[i]][k]) - c[k];
        const D3 e1{p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
        const D3 e2{p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
        const D3 n{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        r = std::min(r, std::abs(p[0][0] * n[0] + p[0][1] * n[1] + p[0][2] * n[2]) / len);
    }
    return r;
}
double circumscribed_radius(const Mesh<3>& m, const D3& c) {
    double r = 0.0;
    for (const Vec3& v : m.vertices) {
        const double x = v[0] - c[0], y = v[1] - c[1], z = v[2] - c[2];
        r = std::max(r, std::sqrt(x * x + y * y + z * z));
    }
    return r;
}

}  // namespace

TEST(MassProperties, BoxClosedForms) {
    const double a = 2.0, b = 1.0, c = 0.5, rho = 1000.0;
    const MassProperties p = box_mass_properties(3, {-1.0, 0.0, 2.0}, {-1.0 + a, b, 2.0 + c}, rho);
    const double m = rho * a * b * c;
    EXPECT_DOUBLE_EQ(p.volume, 1.0);
    EXPECT_DOUBLE_EQ(p.mass, m);
    expect_vec_near(p.center, {0.0, 0.5, 2.25}, 1e-15, "center");
    expect_mat_near(p.inertia, diag(m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12), 1e-12,
                    "inertia");
    // 2D: a rectangle of unit depth, z ignored, only Izz.
    const MassProperties q = box_mass_properties(2, {0.0, 0.0, 7.0}, {a, b, -3.0}, rho);
    EXPECT_DOUBLE_EQ(q.volume, a * b);
    EXPECT_DOUBLE_EQ(q.mass, rho * a * b);
    expect_vec_near(q.center, {1.0, 0.5, 0.0}, 1e-15, "2D center");
    expect_mat_near(q.inertia, diag(0, 0, rho * a * b * (a * a + b * b) / 12), 1e-12, "2D inertia");
}

TEST(MassProperties, BoxMeshMatchesClosedFormAndRotatesAsRIRt) {
    const D3 lo{-0.7, -0.7, -0.15}, hi{1.3, 0.3, 0.35};  // 2 x 1 x 0.5, centre (0.3, -0.2, 0.1)
    const double rho = 1000.0;
    const Mesh<3> box = box_mesh(lo, hi);
    EXPECT_EQ(closed_mesh_problem(box), "");
    const MassProperties want = box_mass_properties(3, lo, hi, rho);
    const MassProperties got = mesh_mass_properties(box, rho);
    EXPECT_NEAR(got.volume, 1.0, 1e-6);
    EXPECT_NEAR(got.mass, want.mass, 1e-3);
    expect_vec_near(got.center, want.center, 1e-6, "box center");
    expect_mat_near(got.inertia, want.inertia, 1e-3 * 1e-3 * want.mass, "box inertia");

    const Mat3 r = rotation({1.0, 2.0, -0.5}, 0.83);
    const MassProperties rot = mesh_mass_properties(transformed(box, r, {0, 0, 0}), rho);
    EXPECT_NEAR(rot.mass, want.mass, 1e-3);
    expect_vec_near(rot.center, apply(r, want.center), 1e-6, "rotated center");
    const Mat3 rirt = mul(mul(r, want.inertia), transpose(r));
    expect_mat_near(rot.inertia, rirt, 1e-5 * want.inertia[1][1], "R I R^T");
    // Off-diagonal terms appear under rotation: the comparison is not trivially diagonal.
    EXPECT_GT(std::abs(rirt[0][1]) + std::abs(rirt[0][2]) + std::abs(rirt[1][2]), 0.1 * want.inertia[0][0]);

    // Inward winding: the same body.
    Mesh<3> inward = box;
    for (auto& t : inward.cells) std::swap(t[1], t[2]);
    EXPECT_EQ(closed_mesh_problem(inward), "");
    const MassProperties in = mesh_mass_properties(inward, rho);
    EXPECT_NEAR(in.volume, got.volume, 1e-12);
    expect_vec_near(in.center, got.center, 1e-12, "inward center");
    expect_mat_near(in.inertia, got.inertia, 1e-9, "inward inertia");
}

TEST(MassProperties, TranslatedMeshMovesCentreNotInertia) {
    const double rho = 780.0;
    const Mesh<3> body = transformed(box_mesh({-1.0, -0.25, -0.5}, {1.0, 0.25, 0.5}), rotation({0.3, -1.0, 0.2}, 1.1),
                                     {0, 0, 0});
    const MassProperties at0 = mesh_mass_properties(body, rho);
    const D3 shift{100.0, -50.0, 20.0};
    const MassProperties far = mesh_mass_properties(transformed(body, diag(1, 1, 1), shift), rho);
    // Float vertices at 100 m are rounded to ~4e-6 m: a relative change of that order is all that is allowed.
    EXPECT_NEAR(far.mass, at0.mass, 2e-5 * at0.mass);
    expect_vec_near(far.center, {at0.center[0] + shift[0], at0.center[1] + shift[1], at0.center[2] + shift[2]}, 1e-5,
                    "translated center");
    expect_mat_near(far.inertia, at0.inertia, 5e-5 * at0.inertia[0][0], "translated inertia");
}

TEST(MassProperties, TessellatedSphereBetweenItsInscribedAndCircumscribedBalls) {
    const double radius = 0.8, rho = 1000.0;
    const MassProperties ball = ball_mass_properties(3, {0, 0, 0}, radius, rho);
    EXPECT_DOUBLE_EQ(ball.mass, rho * 4.0 / 3.0 * kPi * std::pow(radius, 3));
    EXPECT_DOUBLE_EQ(ball.inertia[1][1], 0.4 * ball.mass * radius * radius);
    double previous_error = HUGE_VAL;
    for (int level = 1; level <= 5; ++level) {
        const Mesh<3> s = icosphere(level, radius);
        ASSERT_EQ(closed_mesh_problem(s), "") << "level " << level;
        const MassProperties p = mesh_mass_properties(s, rho);
        // The convex polyhedron contains the ball of its faces' smallest distance and lies inside the ball of its
        // vertices' largest: mass and each diagonal moment (an integral of a non-negative function) are between.
        const double r_in = inscribed_radius(s, {0, 0, 0}), r_out = circumscribed_radius(s, {0, 0, 0});
        const MassProperties lo = ball_mass_properties(3, {0, 0, 0}, r_in, rho);
        const MassProperties hi = ball_mass_properties(3, {0, 0, 0}, r_out, rho);
        EXPECT_GT(p.mass, lo.mass) << "level " << level;
        EXPECT_LT(p.mass, hi.mass) << "level " << level;
        for (int k = 0; k < 3; ++k) {
            EXPECT_GT(p.inertia[k][k], lo.inertia[k][k]) << "level " << level << " axis " << k;
            EXPECT_LT(p.inertia[k][k], hi.inertia[k][k]) << "level " << level << " axis " << k;
        }
        expect_vec_near(p.center, {0, 0, 0}, 1e-6, "sphere center");
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                if (i != j) EXPECT_NEAR(p.inertia[i][j], 0.0, 1e-6 * ball.inertia[0][0]);
        // Against the ball's closed form: the error is within the sandwich and shrinks ~4x per level.
        const double error = std::abs(p.inertia[0][0] / ball.inertia[0][0] - 1.0);
        EXPECT_LE(error, (hi.inertia[0][0] - lo.inertia[0][0]) / ball.inertia[0][0]) << "level " << level;
        EXPECT_LT(error, 0.4 * previous_error) << "level " << level;
        std::printf("icosphere level %d: %zu triangles, |I/I_ball - 1| = %.3e, sandwich width %.3e\n", level,
                    s.cells.size(), error, (hi.inertia[0][0] - lo.inertia[0][0]) / ball.inertia[0][0]);
        previous_error = error;
        // 2/5 m R^2 with the polyhedron's own mass: (close to) the ball's shape factor.
        EXPECT_NEAR(p.inertia[2][2] / (p.mass * radius * radius), 0.4, 0.4 * 2.0 * (1.0 - r_in / radius));
    }
    EXPECT_LT(previous_error, 2e-3);  // level 5: 20480 triangles
}

TEST(MassProperties, CylinderClosedFormAndTessellatedPrism) {
    const double r = 0.5, h = 2.0, rho = 1000.0;
    const D3 bottom{1.0, -3.0, 2.0};
    const MassProperties c = cylinder_mass_properties(bottom, r, h, rho);
    const double m = rho * kPi * r * r * h;
    EXPECT_DOUBLE_EQ(c.mass, m);
    expect_vec_near(c.center, {1.0, -2.0, 2.0}, 1e-15, "cylinder center");
    const double across = m * (3 * r * r + h * h) / 12;
    expect_mat_near(c.inertia, diag(across, m * r * r / 2, across), 1e-9, "cylinder inertia");

    // A 256-sided prism lies between the cylinders of its apothem and of its corners (same axis, same centre).
    const int n = 256;
    const Mesh<3> prism = cylinder_mesh(n, bottom, r, h);
    ASSERT_EQ(closed_mesh_problem(prism), "");
    const MassProperties p = mesh_mass_properties(prism, rho);
    const MassProperties lo = cylinder_mass_properties(bottom, r * std::cos(kPi / n) * (1 - 1e-6), h, rho);
    const MassProperties hi = cylinder_mass_properties(bottom, r * (1 + 1e-6), h, rho);
    EXPECT_GT(p.mass, lo.mass);
    EXPECT_LT(p.mass, hi.mass);
    for (int k = 0; k < 3; ++k) {
        EXPECT_GT(p.inertia[k][k], lo.inertia[k][k]) << "axis " << k;
        EXPECT_LT(p.inertia[k][k], hi.inertia[k][k]) << "axis " << k;
    }
    expect_vec_near(p.center, c.center, 1e-5, "prism center");
}

TEST(MassProperties, PolygonSquareTriangleAndCircle) {
    const double rho = 500.0;
    // A 2 x 2 square at (5, 7), both windings.
    const std::vector<std::array<double, 2>> ccw = {{5, 7}, {7, 7}, {7, 9}, {5, 9}};
    const std::vector<std::array<double, 2>> cw(ccw.rbegin(), ccw.rend());
    for (const auto* sq : {&ccw, &cw}) {
        const MassProperties p = polygon_mass_properties(*sq, rho);
        EXPECT_NEAR(p.volume, 4.0, 1e-12);
        EXPECT_NEAR(p.mass, 4.0 * rho, 1e-9);
        expect_vec_near(p.center, {6.0, 8.0, 0.0}, 1e-12, "square center");
        expect_mat_near(p.inertia, diag(0, 0, p.mass * (4.0 + 4.0) / 12.0), 1e-9, "square inertia");
        const MassProperties box = box_mass_properties(2, {5, 7, 0}, {7, 9, 0}, rho);
        expect_mat_near(p.inertia, box.inertia, 1e-9, "square vs box");
    }
    // A scalene triangle: centroid the corners' mean, polar moment about it m (a^2 + b^2 + c^2) / 36.
    const std::vector<std::array<double, 2>> tri = {{0, 0}, {4, 0}, {1, 3}};
    const MassProperties t = polygon_mass_properties(tri, rho);
    EXPECT_NEAR(t.volume, 6.0, 1e-12);
    expect_vec_near(t.center, {5.0 / 3.0, 1.0, 0.0}, 1e-12, "triangle center");
    EXPECT_NEAR(t.inertia[2][2], t.mass * (16.0 + 18.0 + 10.0) / 36.0, 1e-9);
    const MassProperties t_cw = polygon_mass_properties({{0, 0}, {1, 3}, {4, 0}}, rho);
    EXPECT_NEAR(t_cw.inertia[2][2], t.inertia[2][2], 1e-9);
    // A right triangle far from the origin (cancellation): legs b, h give (b h^3 + h b^3) / 36 per density.
    const MassProperties rt = polygon_mass_properties({{1e4, -2e4}, {1e4 + 3, -2e4}, {1e4, -2e4 + 2}}, rho);
    EXPECT_NEAR(rt.inertia[2][2], rho * (3.0 * 8.0 + 2.0 * 27.0) / 36.0, 1e-6);
    expect_vec_near(rt.center, {1e4 + 1.0, -2e4 + 2.0 / 3.0, 0.0}, 1e-9, "right triangle center");

    // A regular 512-gon between the circles of its apothem and its corners.
    const int n = 512;
    const double radius = 0.3;
    std::vector<std::array<double, 2>> ngon;
    for (int i = 0; i < n; ++i) ngon.push_back({2.0 + radius * std::cos(2 * kPi * i / n), -1.0 + radius * std::sin(2 * kPi * i / n)});
    const MassProperties g = polygon_mass_properties(ngon, rho);
    const MassProperties lo = ball_mass_properties(2, {2.0, -1.0, 0}, radius * std::cos(kPi / n), rho);
    const MassProperties hi = ball_mass_properties(2, {2.0, -1.0, 0}, radius, rho);
    EXPECT_DOUBLE_EQ(hi.inertia[2][2], 0.5 * hi.mass * radius * radius);
    EXPECT_GT(g.mass, lo.mass);
    EXPECT_LT(g.mass, hi.mass);
    EXPECT_GT(g.inertia[2][2], lo.inertia[2][2]);
    EXPECT_LT(g.inertia[2][2], hi.inertia[2][2]);
    expect_vec_near(g.center, {2.0, -1.0, 0.0}, 1e-12, "n-gon center");
}

TEST(MassProperties, ClosedMeshProblem) {
    const Mesh<3> box = box_mesh({0, 0, 0}, {1, 2, 3});
    EXPECT_EQ(closed_mesh_problem(box), "");

    Mesh<3> open = box;
    open.cells.erase(open.cells.begin() + 5);
    const std::string hole = closed_mesh_problem(open);
    EXPECT_NE(hole.find("belongs to 1 triangle"), std::string::npos) << hole;

    Mesh<3> flipped = box;
    std::swap(flipped.cells[7][1], flipped.cells[7][2]);
    const std::string wound = closed_mesh_problem(flipped);
    EXPECT_NE(wound.find("wound in opposite directions"), std::string::npos) << wound;
    EXPECT_NE(wound.find("7"), std::string::npos) << wound;

    Mesh<3> extra = box;  // a fin: one edge shared by three triangles
    extra.vertices.push_back({0.5f, -1.0f, 0.0f});
    extra.cells.push_back({0, 1, 8});
    EXPECT_NE(closed_mesh_problem(extra).find("belongs to 3 triangles"), std::string::npos) << closed_mesh_problem(extra);

    Mesh<3> flat;  // two triangles back to back: closed and consistent, but no volume
    flat.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    flat.cells = {{0, 1, 2}, {0, 2, 1}};
    EXPECT_NE(closed_mesh_problem(flat).find("no volume"), std::string::npos) << closed_mesh_problem(flat);

    Mesh<3> bad_index = box;
    bad_index.cells[0][2] = 99;
    EXPECT_NE(closed_mesh_problem(bad_index).find("vertex 99"), std::string::npos);
    Mesh<3> repeated = box;
    repeated.cells[0][2] = repeated.cells[0][0];
    EXPECT_NE(closed_mesh_problem(repeated).find("twice"), std::string::npos);
    EXPECT_NE(closed_mesh_problem(Mesh<3>{}).find("no triangles"), std::string::npos);
}

TEST(MassProperties, PrincipalAxesOfRotatedBoxTensor) {
    // Body moments 3, 1, 2 (not sorted) turned by R: the moments come back ascending, the axes are R's columns
    // (1, 2, 0) up to sign, and the axes form a rotation.
    const Mat3 r = rotation({-0.4, 1.0, 0.7}, 2.1);
    const Mat3 tensor = mul(mul(r, diag(3.0, 1.0, 2.0)), transpose(r));
    const PrincipalAxes pa = principal_axes(tensor);
    EXPECT_NEAR(pa.moments[0], 1.0, 1e-12);
    EXPECT_NEAR(pa.moments[1], 2.0, 1e-12);
    EXPECT_NEAR(pa.moments[2], 3.0, 1e-12);
    const int from[3] = {1, 2, 0};
    for (int c = 0; c < 3; ++c) {
        double d = 0.0;
        for (int k = 0; k < 3; ++k) d += pa.axes[k][c] * r[k][from[c]];
        EXPECT_NEAR(std::abs(d), 1.0, 1e-12) << "axis " << c;
    }
    EXPECT_NEAR(det(pa.axes), 1.0, 1e-12);
    expect_mat_near(mul(mul(pa.axes, diag(pa.moments[0], pa.moments[1], pa.moments[2])), transpose(pa.axes)), tensor,
                    1e-12, "A diag A^T");

    // From a mesh: a rotated 2 x 1 x 0.5 box recovers the closed-form moments and the box's axes.
    const D3 lo{-1.0, -0.5, -0.25}, hi{1.0, 0.5, 0.25};
    const MassProperties body = mesh_mass_properties(transformed(box_mesh(lo, hi), r, {3, 4, 5}), 1000.0);
    const MassProperties want = box_mass_properties(3, lo, hi, 1000.0);
    const PrincipalAxes mp = principal_axes(body.inertia);
    // Ascending: about x (the long side) is smallest (b^2 + c^2), then y, then z.
    const double tol = 1e-5 * want.inertia[2][2];
    EXPECT_NEAR(mp.moments[0], want.inertia[0][0], tol);
    EXPECT_NEAR(mp.moments[1], want.inertia[1][1], tol);
    EXPECT_NEAR(mp.moments[2], want.inertia[2][2], tol);
    for (int c = 0; c < 3; ++c) {
        double d = 0.0;
        for (int k = 0; k < 3; ++k) d += mp.axes[k][c] * r[k][c];
        EXPECT_NEAR(std::abs(d), 1.0, 1e-6) << "box axis " << c;
    }
    EXPECT_NEAR(det(mp.axes), 1.0, 1e-12);

    // Isotropic and already-diagonal tensors: the axes stay a rotation.
    const PrincipalAxes iso = principal_axes(diag(2.0, 2.0, 2.0));
    EXPECT_NEAR(det(iso.axes), 1.0, 1e-15);
    for (double m : iso.moments) EXPECT_DOUBLE_EQ(m, 2.0);
    const PrincipalAxes sorted = principal_axes(diag(5.0, 4.0, 6.0));
    EXPECT_DOUBLE_EQ(sorted.moments[0], 4.0);
    EXPECT_DOUBLE_EQ(sorted.moments[2], 6.0);
    EXPECT_NEAR(det(sorted.axes), 1.0, 1e-15);
}
