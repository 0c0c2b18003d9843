// The smooth walls (eddy/smooth_walls.hpp) against the rest lattice they are calibrated on, and their
// virtual particles' bookkeeping: faces per shape, determinism over threads, a moving wall's velocity.
#include <bit>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "eddy/smooth_walls.hpp"
#include "eddy/wcsph.hpp"  // lattice_mass
#include "smooth_walls_support.hpp"

using namespace eddy;
using eddy::test::virtual_density;

namespace {

// The profile of water (rho0 = 1000) at radius r with the cubic spline of support 4r, as the solvers make it.
template <int D>
SmoothWallProfile<D> water_profile(float r) {
    const CubicSpline<D> W(4.0f * r);
    return make_smooth_wall_profile(W, r, lattice_mass(W, 2.0f * r, 1000.0f), 1000.0f);
}

// A particle of the bottom row of a rest lattice on the floor of a wide box (its row at y = r): its density
// (its half lattice plus the walls' virtual particles) is rho0, the walls' push per unit pressure is twice
// the rows above's, and the hydrostatic push is half of gravity. Independent sums: the lattice's here, the
// profile's from the kernel's plane integrals.
template <int D>
void expect_rest_lattice_is_exact(float r) {
    const CubicSpline<D> W(4.0f * r);
    const float rho0 = 1000.0f, spacing = 2.0f * r, mass = lattice_mass(W, spacing, rho0);
    const SmoothWallProfile<D> profile = water_profile<D>(r);
    Wall<D> tank;
    tank.lo = Vec<D>::filled(-1.0f);
    tank.lo[1] = 0.0f;
    tank.hi = Vec<D>::filled(1.0f);
    Vec<D> x = Vec<D>::zero();
    x[1] = r;
    Vec<D> g = Vec<D>::zero();
    g[1] = -9.81f;
    VirtualWalls<D> vw;
    ExecContext exec(1);
    build_virtual_walls<D>({tank}, {1}, {BoundaryMotion<D>{}}, 0.0, profile, g, &x, 1, vw, exec);
    ASSERT_EQ(vw.lists[0].size(), 1u);  // the floor alone: the other faces are a metre away
    double fluid = 0.0, up = 0.0;
    for_each_lattice_offset<D>(spacing, W.h, [&](const Vec<D>& p) {
        if (p[1] < 0.0f) return;
        fluid += mass * W.value(p);
        const float len = norm(p);
        if (len > 0.0f) up += mass * -W.derivative(len) * p[1] / len;
    });
    const std::uint32_t k = vw.lists[0][0];
    const Vec<D> d = x - vw.set.position[k];
    const float len = norm(d);
    const double wall = vw.set.psi[k] * W.value(len);
    const double push = vw.set.psi[k] * -W.derivative(len) * d[1] / len;
    EXPECT_NEAR((fluid + wall) / rho0, 1.0, 2e-4) << "fluid " << fluid << " wall " << wall;
    EXPECT_NEAR(push / (2.0 * up), 1.0, 2e-3);
    EXPECT_NEAR(vw.density[0], wall, 1e-3 * rho0);
    EXPECT_NEAR(vw.hold[0][1] / 9.81, 0.5, 2e-3);
    EXPECT_GT(profile.kappa, 1.0f);  // the lattice's rows push harder than the plane integral says
    // Denser, and pushed harder, nearer the wall; nothing at the reach.
    float last_rho = 1e30f;
    for (float dd = 0.0f; dd < profile.reach; dd += 0.05f * r) {
        const float rb = profile.density(dd);
        EXPECT_LT(rb, last_rho) << dd / r;
        last_rho = rb;
    }
    EXPECT_EQ(profile.density(profile.reach), 0.0f);
}

}  // namespace

TEST(SmoothWalls, RestLatticeOnAFloorReadsRestDensity2D) { expect_rest_lattice_is_exact<2>(0.004f); }
TEST(SmoothWalls, RestLatticeOnAFloorReadsRestDensity3D) { expect_rest_lattice_is_exact<3>(0.006f); }

// Faces: a box's corner gives two (three in 3D), a closed cylinder's floor edge two (side and floor), a
// solid ball one; beyond the reach none.
TEST(SmoothWalls, FacesPerShape) {
    const float r = 0.01f;
    const SmoothWallProfile<3> profile = water_profile<3>(r);
    Wall<3> box;
    box.hi = Vec3::filled(1.0f);
    Wall<3> cyl;
    cyl.shape = Wall<3>::Shape::cylinder;
    cyl.center = {{3.0f, 0.0f, 0.0f}};
    cyl.radius = 0.5f;
    cyl.height = 1.0f;
    Wall<3> ball;
    ball.shape = Wall<3>::Shape::ball;
    ball.solid = true;
    ball.center = {{0.5f, 0.5f, 0.5f}};
    ball.radius = 0.1f;
    const std::vector<Vec3> x = {{{r, r, r}},                   // box corner
                                 {{3.0f + 0.5f - r, r, 0.0f}},  // cylinder: side and floor
                                 {{0.5f, 0.6f + r, 0.5f}},      // on the ball
                                 {{0.3f, 0.3f, 0.3f}}};         // nothing near
    VirtualWalls<3> vw;
    ExecContext exec(1);
    std::vector<BoundaryMotion<3>> motions(3);
    box.owner = 0, cyl.owner = 1, ball.owner = 2;
    build_virtual_walls<3>({box, cyl, ball}, {1, 1, 1}, motions, 0.0, profile, Vec3{{0, -9.81f, 0}}, x.data(), x.size(), vw, exec);
    EXPECT_EQ(vw.lists[0].size(), 3u);
    EXPECT_EQ(vw.lists[1].size(), 2u);
    ASSERT_EQ(vw.lists[2].size(), 1u);
    EXPECT_EQ(vw.set.object[vw.lists[2][0]], 2u);
    EXPECT_EQ(vw.lists[3].size(), 0u);
    // The ball's virtual particle lies below the fluid particle, towards the ball's centre.
    EXPECT_LT(vw.set.position[vw.lists[2][0]][1], x[2][1]);
}

// The same virtual particles, bit for bit, on 1 and 2 threads; a wall moving at a constant velocity gives
// its faces that velocity.
TEST(SmoothWalls, SameBitsOnAnyThreadCountAndTheWallsVelocity) {
    const float r = 0.005f;
    const SmoothWallProfile<2> profile = water_profile<2>(r);
    Wall<2> tank;
    tank.hi = Vec2::filled(1.0f);
    tank.owner = 0;
    Wall<2> plate;
    plate.solid = true;
    plate.lo = {{0.4f, 0.0f}};
    plate.hi = {{0.45f, 0.5f}};
    plate.owner = 1;
    plate.object = 1;
    plate.moving = true;
    std::vector<BoundaryMotion<2>> motions(2);
    motions[1].velocity = {{0.3f, 0.0f}};
    plate.pose = motions[1].pose(0.0);
    update_wall_reach(plate);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<Vec2> x(20000);
    for (auto& p : x) p = {{u(rng), 0.6f * u(rng)}};
    VirtualWalls<2> a, b;
    build_virtual_walls<2>({tank, plate}, {1, 1}, motions, 0.0, profile, Vec2{{0, -9.81f}}, x.data(), x.size(), a, ExecContext(1));
    build_virtual_walls<2>({tank, plate}, {1, 1}, motions, 0.0, profile, Vec2{{0, -9.81f}}, x.data(), x.size(), b, ExecContext(2));
    ASSERT_EQ(a.lists.offsets, b.lists.offsets);
    ASSERT_GT(a.set.size(), 1000u);
    EXPECT_EQ(0, std::memcmp(a.set.position.data(), b.set.position.data(), a.set.size() * sizeof(Vec2)));
    EXPECT_EQ(0, std::memcmp(a.set.psi.data(), b.set.psi.data(), a.set.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(a.hold.data(), b.hold.data(), x.size() * sizeof(Vec2)));
    std::size_t on_plate = 0;
    for (std::size_t k = 0; k < a.set.size(); ++k) {
        if (a.set.object[k] != 1) continue;
        ++on_plate;
        EXPECT_NEAR(a.set.velocity[k][0], 0.3f, 1e-3f);
        EXPECT_NEAR(a.set.velocity[k][1], 0.0f, 1e-3f);
    }
    EXPECT_GT(on_plate, 100u);
}

// The law of the wall (Spalding 1961) against its own two limits, computed independently: the viscous
// sublayer, tau / rho = nu u / y (u+ = y+), and the log law, u+ = ln(y+) / 0.41 + 5.5, far from the wall.
TEST(SmoothWalls, WallShearStressMeetsTheLawOfTheWallsLimits) {
    const double nu = 1e-6;
    // Sublayer: y+ = 0.1 (Spalding's correction there is (kappa u+)^4 / 24 e^(-kappa B), 1e-7 of u+).
    const double u0 = 1e-3, y0 = 1e-4, tau0 = wall_shear_stress(u0, y0, nu);
    EXPECT_NEAR(tau0 / (nu * u0 / y0), 1.0, 1e-3);
    // Log region: y+ in the thousands.
    for (double u : {1.0, 3.0, 10.0}) {
        const double y = 0.05, tau = wall_shear_stress(u, y, nu), us = std::sqrt(tau);
        const double up = u / us, yp = y * us / nu;
        EXPECT_GT(yp, 1000.0) << u;
        EXPECT_NEAR(up, std::log(yp) / 0.41 + 5.5, 0.01 * up) << u;
    }
    // Faster slip, more stress; nothing without a slip, a distance or a viscosity.
    EXPECT_LT(wall_shear_stress(0.5, 1e-3, nu), wall_shear_stress(1.0, 1e-3, nu));
    EXPECT_EQ(wall_shear_stress(0.0, 1e-3, nu), 0.0);
    EXPECT_EQ(wall_shear_stress(1.0, 0.0, nu), 0.0);
    EXPECT_EQ(wall_shear_stress(1.0, 1e-3, 0.0), 0.0);
}

// A particle of the row at rest on a floor (d = r), sliding along it: the floor's shear slows it by
// (tau / rho) / (2r) dt against its slip, and not at all across the face (the normal part is the pressure's);
// over a long step it stops, never reverses. Off (nu = 0) nothing.
TEST(SmoothWalls, ShearSlowsTheSlipAlongAFaceAndNeverReversesIt) {
    const float r = 0.002f;
    const CubicSpline<2> W(4.0f * r);
    Wall<2> tank;
    tank.lo = {{-1.0f, 0.0f}};
    tank.hi = {{1.0f, 1.0f}};
    const Vec2 x{{0.0f, r}}, v{{0.5f, -0.1f}};
    ExecContext exec(1);
    auto shear = [&](float nu, float dt) {
        SmoothWalls<2> walls;
        walls.init(true, {tank}, 1, W, r, lattice_mass(W, 2.0f * r, 1000.0f), 1000.0f, nu);
        EXPECT_TRUE(walls.on());
        walls.update({tank}, {BoundaryMotion<2>{}}, 0.0, Vec2{{0.0f, -9.81f}}, &x, 1, NeighborLists{}, BoundarySet<2>{}, exec);
        return walls.shear(0, x, v, dt);
    };
    const float dt = 1e-4f;
    const Vec2 dv = shear(1e-6f, dt);
    const double expected = wall_shear_stress(0.5, r, 1e-6) / (2.0 * r) * dt;
    EXPECT_NEAR(-dv[0], expected, 1e-3 * expected);
    EXPECT_EQ(dv[1], 0.0f);
    const Vec2 stop = shear(1e-6f, 100.0f);
    EXPECT_FLOAT_EQ(stop[0], -0.5f);
    EXPECT_EQ(stop[1], 0.0f);
    EXPECT_EQ(norm(shear(0.0f, dt)), 0.0f);
}

// With edges (PBF's smooth walls), a box corner's faces count the region beyond two faces once: a particle
// of a rest lattice in a box's corner (its rows at r from each face) then reads the density its own mirror
// images give it, the lattice's sum over every point mirrored into the box's corner plus its own. Without
// the edge terms it reads that region twice. Measured: 2D 0.9932 rho0 with the edges, 1.0228 without; 3D
// 0.9797 and 1.0556 (the lattice's three points across the kernel against the tables' integrals).
template <int D>
void expect_corner_reads_its_mirror_images(float r) {
    const CubicSpline<D> W(4.0f * r);
    const float rho0 = 1000.0f, spacing = 2.0f * r, mass = lattice_mass(W, spacing, rho0);
    const SmoothWallProfile<D> plain = make_smooth_wall_profile(W, r, mass, rho0);
    const SmoothWallProfile<D> edged = make_smooth_wall_profile(W, r, mass, rho0, true);
    Wall<D> tank;
    tank.lo = Vec<D>::zero();
    tank.hi = Vec<D>::filled(1.0f);
    const Vec<D> x = Vec<D>::filled(r);
    VirtualWalls<D> vw;
    ExecContext exec(1);
    auto density = [&](const SmoothWallProfile<D>& profile) {
        build_virtual_walls<D>({tank}, {1}, {BoundaryMotion<D>{}}, 0.0, profile, Vec<D>::zero(), &x, 1, vw, exec, nullptr,
                               nullptr, nullptr, &W);
        double rho = 0.0;
        for (std::uint32_t k : vw.lists[0]) rho += vw.set.psi[k] * W.value(norm(x - vw.set.position[k]));
        return rho;
    };
    double fluid = 0.0, mirrored = 0.0;  // the lattice's points inside the box, and all of them (its mirror images)
    for_each_lattice_offset<D>(spacing, W.h, [&](const Vec<D>& p) {
        bool inside = true;
        for (int a = 0; a < D; ++a) inside = inside && p[a] >= 0.0f;
        (inside ? fluid : mirrored) += mass * W.value(p);
    });
    const double want = fluid + mirrored, with = fluid + density(edged), without = fluid + density(plain);
    std::printf("%dD corner: mirror images %.4f rho0, smooth walls with edges %.4f, without %.4f\n", D, want / rho0,
                with / rho0, without / rho0);
    EXPECT_LT(std::abs(with - want), 0.4 * std::abs(without - want));
    EXPECT_NEAR(with / want, 1.0, 0.025);
}

TEST(SmoothWalls, EdgesCountTheCornersRegionOnce2D) { expect_corner_reads_its_mirror_images<2>(0.004f); }
TEST(SmoothWalls, EdgesCountTheCornersRegionOnce3D) { expect_corner_reads_its_mirror_images<3>(0.006f); }

// A solid box drawn smooth (fluid outside): mid-face it is a container's face exactly; around its edges and
// corners its density is lambda rho0 times the kernel's mass over the orthant of its faces in the mapped
// distances s (header), summed here point by point, and the virtual particles' gradient is the density's
// (finite differences): the push is the transpose of the density.
template <int D>
void expect_solid_box_is_its_orthant(float r) {
    const CubicSpline<D> W(4.0f * r);
    const float rho0 = 1000.0f, mass = lattice_mass(W, 2.0f * r, rho0);
    const SmoothWallProfile<D> profile = make_smooth_wall_profile(W, r, mass, rho0, true);
    Wall<D> box;
    box.solid = true;
    box.lo = Vec<D>::zero();
    box.hi = Vec<D>::filled(0.2f);
    ExecContext exec(1);
    VirtualWalls<D> vw;
    auto density = [&](const Vec<D>& x, Vec<D>* grad = nullptr) {
        build_virtual_walls<D>({box}, {1}, {BoundaryMotion<D>{}}, 0.0, profile, Vec<D>::zero(), &x, 1, vw, exec, nullptr,
                               nullptr, nullptr, &W);
        return virtual_density(vw, W, x, grad);
    };
    // The kernel's mass beyond the mapped faces: a midpoint sum over a grid of h / 40.
    auto orthant = [&](const Vec<D>& x) {
        float s[D];
        for (int a = 0; a < D; ++a) {
            const bool high = x[a] >= 0.1f;
            const float d = high ? x[a] - box.hi[a] : box.lo[a] - x[a];
            s[a] = profile.mapped(a == 0 ? std::max(d, 0.0f) : d);
        }
        const int n = D == 2 ? 400 : 100;
        const float step = 2.0f * W.h / n;
        double sum = 0.0;
        int idx[3] = {0, 0, 0};
        const int total = D == 2 ? n * n : n * n * n;
        for (int c = 0; c < total; ++c) {
            idx[0] = c % n, idx[1] = (c / n) % n, idx[2] = c / (n * n);
            Vec<D> y;
            double part = 1.0;
            for (int a = 0; a < D; ++a) {
                y[a] = -W.h + (idx[a] + 0.5f) * step;
                part *= std::clamp((y[a] + 0.5f * step - s[a]) / step, 0.0f, 1.0f);
            }
            if (part > 0.0) sum += part * W.value(norm(y));
        }
        return profile.lambda * rho0 * sum * std::pow(step, D);
    };
    // Mid-face: the container's face.
    Vec<D> mid = Vec<D>::filled(0.1f);
    mid[0] = 0.2f + r;
    EXPECT_NEAR(density(mid), profile.density(r), 1e-5 * rho0);
    // Along a path over the edge at x = y = 0.2 (and, in 3D, past the corner): the orthant's density.
    for (float t : {-2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f}) {
        Vec<D> x = Vec<D>::filled(D == 3 ? 0.2f + 0.3f * t * r : 0.1f);
        x[0] = 0.2f + 1.1f * r;  // face 0 is the nearest outside
        x[1] = 0.2f + t * r;
        const double got = density(x), want = orthant(x);
        EXPECT_NEAR(got / rho0, want / rho0, 0.03 * profile.density(r) / rho0 + 0.05 * want / rho0) << "t " << t;
        Vec<D> grad;
        density(x, &grad);
        for (int a = 0; a < D; ++a) {
            Vec<D> e = Vec<D>::zero();
            e[a] = 3e-2f * r;
            const double fd = (density(x + e) - density(x - e)) / (6e-2 * r);
            EXPECT_NEAR(grad[a], fd, 0.03 * std::abs(profile.density(r)) / r) << "t " << t << " axis " << a;
        }
        std::printf("%dD solid box, t %+.1f: %.4f rho0 (orthant %.4f)\n", D, t, got / rho0, want / rho0);
    }
}

TEST(SmoothWalls, SolidBoxIsItsFacesOrthant2D) { expect_solid_box_is_its_orthant<2>(0.004f); }
TEST(SmoothWalls, SolidBoxIsItsFacesOrthant3D) { expect_solid_box_is_its_orthant<3>(0.006f); }

// A solid ball drawn from its volume map (BallMap): its density is lambda rho0 times the kernel's mass over
// the ball whose surface lies at the mapped distance s, summed here point by point (a grid of h / 80 in 2D,
// h / 60 in 3D), the virtual particle's gradient is the density's (finite differences), a large ball is
// the face, and a ball moved by its pose reads as the same ball at rest.
template <int D>
void expect_solid_ball_is_its_volume(float r) {
    const CubicSpline<D> W(4.0f * r);
    const float rho0 = 1000.0f, mass = lattice_mass(W, 2.0f * r, rho0);
    const SmoothWallProfile<D> profile = make_smooth_wall_profile(W, r, mass, rho0, true);
    const BallMap large = make_ball_map(profile, W, 1e4f * r);
    for (std::size_t k = 0; k < profile.rho.size(); k += 16) {
        EXPECT_NEAR(large.rho[k], profile.rho[k], 2e-3 * profile.density(r)) << "node " << k;
        if (profile.rho[k] > 1e-2f * profile.density(r)) EXPECT_NEAR(large.share[k], 1.0f, 3e-3f) << "node " << k;
    }
    Wall<D> ball;
    ball.solid = true;
    ball.shape = Wall<D>::Shape::ball;
    ball.center = Vec<D>::filled(0.3f);
    ball.radius = 3.0f * r;
    ExecContext exec(1);
    const std::vector<Wall<D>> one{ball};
    const BallMaps maps = make_ball_maps(one, {1}, profile, W, exec);
    ASSERT_EQ(maps.maps.size(), 1u);
    VirtualWalls<D> vw;
    auto density = [&](const std::vector<Wall<D>>& walls, const Vec<D>& x, Vec<D>* grad = nullptr) {
        build_virtual_walls<D>(walls, {1}, {BoundaryMotion<D>{}}, 0.0, profile, Vec<D>::zero(), &x, 1, vw, exec, nullptr,
                               nullptr, nullptr, &W, &maps);
        return virtual_density(vw, W, x, grad);
    };
    auto volume = [&](float d) {  // x on a diagonal at the mapped distance from the surface
        const float s = profile.mapped(std::max(d, 0.0f)), rho = ball.radius + s;
        const int n = D == 2 ? 160 : 120;
        const float step = 2.0f * W.h / n;
        double sum = 0.0;
        const int total = D == 2 ? n * n : n * n * n;
        for (int c = 0; c < total; ++c) {
            const int idx[3] = {c % n, (c / n) % n, c / (n * n)};
            Vec<D> y, z;
            for (int a = 0; a < D; ++a) {
                y[a] = -W.h + (idx[a] + 0.5f) * step;
                z[a] = y[a] + rho / std::sqrt(float(D));  // the centre at the origin
            }
            if (norm(z) < ball.radius) sum += W.value(norm(y));
        }
        return profile.lambda * rho0 * sum * std::pow(step, D);
    };
    for (float d : {0.1f * r, 0.5f * r, r, 1.5f * r, 2.0f * r}) {
        const Vec<D> x = ball.center + Vec<D>::filled((ball.radius + d) / std::sqrt(float(D)));
        const double got = density(one, x), want = volume(d);
        EXPECT_NEAR(got / rho0, want / rho0, 0.01 * profile.density(r) / rho0 + 0.01 * want / rho0) << "d " << d / r << " r";
        EXPECT_LT(got, profile.density(d) + 1e-3 * rho0);  // less than the tangent plane's half space
        Vec<D> grad;
        density(one, x, &grad);
        for (int a = 0; a < D; ++a) {
            Vec<D> e = Vec<D>::zero();
            e[a] = 2e-2f * r;
            const double fd = (density(one, x + e) - density(one, x - e)) / (4e-2 * r);
            EXPECT_NEAR(grad[a], fd, 0.02 * profile.density(r) / r) << "d " << d / r << " r, axis " << a;
        }
        // The same ball moved by its pose (a body's): its centre in its own frame at the origin.
        Wall<D> moved = ball;
        moved.moving = true;
        moved.center = Vec<D>::zero();
        for (int a = 0; a < D; ++a) {
            moved.pose.R[a][a] = 1.0;
            moved.pose.shift[a] = ball.center[a];
        }
        moved.pose.R[0][0] = moved.pose.R[1][1] = std::cos(0.5);  // turned by half a radian: a ball is a ball
        moved.pose.R[0][1] = -std::sin(0.5);
        moved.pose.R[1][0] = std::sin(0.5);
        EXPECT_NEAR(density({moved}, x), got, 1e-4 * rho0);
        std::printf("%dD solid ball of 3 r, d %.1f r: %.4f rho0 (volume %.4f, the face %.4f)\n", D, d / r, got / rho0,
                    want / rho0, profile.density(d) / rho0);
    }
}

TEST(SmoothWalls, SolidBallIsItsVolumeMap2D) { expect_solid_ball_is_its_volume<2>(0.004f); }
TEST(SmoothWalls, SolidBallIsItsVolumeMap3D) { expect_solid_ball_is_its_volume<3>(0.006f); }

namespace {

// A box container 2 m wide whose floor is at y = 0: near the origin only its floor is within reach.
template <int D>
Wall<D> floor_tank() {
    Wall<D> tank;
    tank.lo = Vec<D>::filled(-1.0f);
    tank.lo[1] = 0.0f;
    tank.hi = Vec<D>::filled(1.0f);
    return tank;
}

// A pressure term q = p / rho0^2: 3e5 Pa per metre along x, 1e5 along z (3D), 2e5 across the floor.
template <int D>
float linear_pressure_term(const Vec<D>& p, float rho0) {
    return (3e5f * p[0] + 2e5f * p[1] + (D == 3 ? 1e5f * p[D - 1] : 0.0f)) / (rho0 * rho0);
}

// SmoothWalls::ghost_share, the mirror images' share in the solvers' symmetric pair form (smooth_walls.hpp):
// (1) for a particle of the bottom row of a rest lattice on a floor, in a pressure term that changes along the
// floor and across it, its fluid half's sum_j m (q_i + q_j) grad W_ij plus the share is, along the floor, the
// whole lattice's; the share has no part along the normal. (2) Over a jittered patch of fluid on the floor,
// the shares of all particles cancel (the images of a pair, (i, j') and (j, i'), sit at the same distance
// with opposite offsets along the face): a frictionless wall carries no load along itself.
template <int D>
void expect_ghosts_complete_the_row_and_cancel(float r) {
    const CubicSpline<D> W(4.0f * r);
    const float rho0 = 1000.0f, spacing = 2.0f * r, mass = lattice_mass(W, spacing, rho0);
    const Wall<D> tank = floor_tank<D>();
    auto field = [&](const Vec<D>& p) { return linear_pressure_term<D>(p, rho0); };
    auto symmetric = [&](const std::vector<Vec<D>>& x, const std::vector<float>& q, std::size_t i,
                         const std::vector<std::uint32_t>& list) {
        Vec<D> s = Vec<D>::zero();
        for (std::uint32_t j : list) {
            const Vec<D> d = x[i] - x[j];
            const float len = norm(d);
            if (len > 0.0f) s += d * (mass * (q[i] + q[j]) * W.derivative(len) / len);
        }
        return s;
    };
    ExecContext exec(1);
    SmoothWalls<D> walls;
    walls.init(true, {tank}, 1, W, r, mass, rho0, 0.0f);
    {
        std::vector<Vec<D>> x(1, Vec<D>::zero()), bulk(1, Vec<D>::zero());
        x[0][1] = bulk[0][1] = r;
        std::vector<std::uint32_t> half, whole;
        for_each_lattice_offset<D>(spacing, W.h, [&](const Vec<D>& p) {
            if (norm(p) == 0.0f) return;
            whole.push_back(static_cast<std::uint32_t>(bulk.size()));
            bulk.push_back(bulk[0] + p);
            if (p[1] >= 0.0f) {
                half.push_back(static_cast<std::uint32_t>(x.size()));
                x.push_back(x[0] + p);
            }
        });
        std::vector<float> q(x.size()), qb(bulk.size());
        for (std::size_t j = 0; j < x.size(); ++j) q[j] = field(x[j]);
        for (std::size_t j = 0; j < bulk.size(); ++j) qb[j] = field(bulk[j]);
        walls.update({tank}, {BoundaryMotion<D>{}}, 0.0, Vec<D>::zero(), x.data(), x.size(), NeighborLists{},
                     BoundarySet<D>{}, exec);
        ASSERT_TRUE(walls.mirrored(0));
        const Vec<D> share = walls.ghost_share(0, x.data(), std::span<const std::uint32_t>(half), mass, q);
        const Vec<D> fluid = symmetric(x, q, 0, half), all = symmetric(bulk, qb, 0, whole);
        EXPECT_NEAR(share[1], 0.0f, 1e-6f * norm(share));
        for (int a = 0; a < D; a += (D == 3 ? 2 : 1)) {
            if (a == 1) continue;
            EXPECT_LT(std::abs(fluid[a]), 0.9 * std::abs(all[a])) << a;  // the half lattice lacks a share
            EXPECT_NEAR((fluid[a] + share[a]) / all[a], 1.0, 1e-4) << a;
        }
        // The same floor moving (sliding along x): its faces share unless the caller leaves moving faces out
        // (DFSPH's divergence solve).
        BoundaryMotion<D> slide;
        slide.velocity[0] = 0.1f;
        walls.update({tank}, {slide}, 0.0, Vec<D>::zero(), x.data(), x.size(), NeighborLists{}, BoundarySet<D>{}, exec);
        const auto span = std::span<const std::uint32_t>(half);
        EXPECT_EQ(norm(walls.ghost_share(0, x.data(), span, mass, q, true) - share), 0.0f);
        EXPECT_EQ(norm(walls.ghost_share(0, x.data(), span, mass, q, false)), 0.0f);
        // A boundary particle of another wall (not drawn smooth) in the particle's list: no mirror of a fluid
        // lattice there, no share.
        BoundarySet<D> plate;
        plate.push_back(x[0] + Vec<D>::filled(r), 1);
        NeighborLists beside;
        beside.offsets.assign(x.size() + 1, 1);
        beside.offsets[0] = 0;
        beside.indices = {0};
        walls.update({tank}, {BoundaryMotion<D>{}}, 0.0, Vec<D>::zero(), x.data(), x.size(), beside, plate, exec);
        EXPECT_TRUE(walls.near_face(0));
        EXPECT_FALSE(walls.mirrored(0));
        EXPECT_EQ(norm(walls.ghost_share(0, x.data(), std::span<const std::uint32_t>(half), mass, q)), 0.0f);
        // Beyond the reach: no share.
        std::vector<Vec<D>> far = x;
        for (auto& p : far) p[1] += 2.0f * r;
        walls.update({tank}, {BoundaryMotion<D>{}}, 0.0, Vec<D>::zero(), far.data(), far.size(), NeighborLists{},
                     BoundarySet<D>{}, exec);
        EXPECT_FALSE(walls.near_face(0));
        EXPECT_EQ(norm(walls.ghost_share(0, far.data(), std::span<const std::uint32_t>(half), mass, q)), 0.0f);
    }
    // A jittered patch, three rows 1.2 r apart, in a hydrostatic field plus a gradient along the floor.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> jitter(-0.2f * r, 0.2f * r);
    std::vector<Vec<D>> x;
    const int nx = 8, nz = D == 3 ? 6 : 1;
    for (int k = 0; k < nz; ++k)
        for (int row = 0; row < 3; ++row)
            for (int c = 0; c < nx; ++c) {
                Vec<D> p = Vec<D>::zero();
                p[0] = spacing * c + jitter(rng);
                p[1] = r + 1.2f * r * row + jitter(rng);  // the second row straddles the reach (2.2 r)
                if constexpr (D == 3) p[2] = spacing * k + jitter(rng);
                x.push_back(p);
            }
    std::vector<float> q(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) q[j] = field(x[j]) + 3e3f * (0.3f - x[j][1]) / rho0;
    walls.update({tank}, {BoundaryMotion<D>{}}, 0.0, Vec<D>::zero(), x.data(), x.size(), NeighborLists{},
                 BoundarySet<D>{}, exec);
    NeighborLists lists;
    lists.offsets.assign(1, 0);
    for (std::size_t i = 0; i < x.size(); ++i) {
        for (std::size_t j = 0; j < x.size(); ++j)
            if (j != i && norm(x[i] - x[j]) < W.h) lists.indices.push_back(static_cast<std::uint32_t>(j));
        lists.offsets.push_back(static_cast<std::uint32_t>(lists.indices.size()));
    }
    Vec<D> total = Vec<D>::zero();
    float size = 0.0f;
    int shared = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const Vec<D> s = walls.ghost_share(i, x.data(), lists[i], mass, q);
        total += s;
        size += norm(s);
        shared += norm(s) > 0.0f;
    }
    EXPECT_GT(shared, nx * nz);                            // the bottom row and some of the next
    EXPECT_LT(shared, 2 * nx * nz + 1);
    EXPECT_LT(norm(total), 1e-6f * size);  // each pair's two terms cancel to the bit; the sum's rounding is left
    // The pairs cached once (DFSPH's iterations) give the same bits as the share computed in full, on a floor
    // at rest and sliding, with and without its moving faces, for any thread count; a new pressure term
    // reads the same cache.
    for (const float slide : {0.0f, 0.1f}) {
        BoundaryMotion<D> motion;
        motion.velocity[0] = slide;
        walls.update({tank}, {motion}, 0.0, Vec<D>::zero(), x.data(), x.size(), NeighborLists{}, BoundarySet<D>{}, exec);
        for (const int threads : {1, 2}) {
            walls.cache_ghost_pairs(x.data(), lists, x.size(), ExecContext(threads));
            std::vector<float> q2(q);
            for (float& v : q2) v *= -0.5f;
            for (std::size_t i = 0; i < x.size(); ++i)
                for (const bool with_moving : {true, false})
                    for (const auto* qs : {&q, &q2}) {
                        const Vec<D> full = walls.ghost_share(i, x.data(), lists[i], mass, *qs, with_moving);
                        const Vec<D> cached = walls.cached_ghost_share(i, mass, *qs, with_moving);
                        for (int a = 0; a < D; ++a)
                            EXPECT_EQ(std::bit_cast<std::uint32_t>(full[a]), std::bit_cast<std::uint32_t>(cached[a]))
                                << i << " " << a << " " << slide << " " << threads;
                        if (slide > 0.0f && !with_moving) EXPECT_EQ(norm(cached), 0.0f);
                    }
        }
    }
}

}  // namespace

TEST(SmoothWalls, GhostsCompleteTheRowAndCancelOverTheFluid2D) { expect_ghosts_complete_the_row_and_cancel<2>(0.004f); }
TEST(SmoothWalls, GhostsCompleteTheRowAndCancelOverTheFluid3D) { expect_ghosts_complete_the_row_and_cancel<3>(0.006f); }
