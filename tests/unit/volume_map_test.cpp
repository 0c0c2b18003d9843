// Volume maps (eddy/volume_map.hpp) against the kernel's own integral over the wall, the ball's radial map,
// the flat face, and themselves on other thread counts; thin walls refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "eddy/smooth_walls.hpp"
#include "eddy/wcsph.hpp"  // lattice_mass
#include "smooth_walls_support.hpp"

using namespace eddy;

namespace {

template <int D>
SmoothWallProfile<D> water_profile(const CubicSpline<D>& W, float r) {
    return make_smooth_wall_profile(W, r, lattice_mass(W, 2.0f * r, 1000.0f), 1000.0f, true);
}

// The walls' density at x and its gradient (the virtual particles' sums).
template <int D>
double density_at(const std::vector<Wall<D>>& walls, const SmoothWallProfile<D>& profile, const CubicSpline<D>& W,
                  const VolumeMaps<D>& maps, const Vec<D>& x, Vec<D>* grad = nullptr) {
    VirtualWalls<D> vw;
    const std::vector<std::uint8_t> mask(walls.size(), 1);
    std::vector<BoundaryMotion<D>> motions(1);
    build_virtual_walls<D>(walls, mask, motions, 0.0, profile, Vec<D>::zero(), &x, 1, vw, ExecContext(1), nullptr, nullptr,
                           nullptr, &W, nullptr, &maps);
    return test::virtual_density(vw, W, x, grad);
}

// A 2D model wall from a polygon (solid, or a container), its distance grid at voxel r as eddy run makes it.
Wall<2> polygon_wall(const std::vector<std::array<double, 2>>& points, float r, bool solid) {
    const ExecContext exec(1);
    const MeshShape<2> shape(polygon_mesh(points, "test polygon"), "test polygon");
    Wall<2> w;
    w.shape = Wall<2>::Shape::sdf;
    w.solid = solid;
    w.sdf = std::make_shared<const SdfGrid<2>>(make_sdf_grid(shape, r, 4.0f * r, exec));
    update_wall_reach(w);
    return w;
}

std::vector<std::array<double, 2>> circle_points(double cx, double cy, double R, int n) {
    std::vector<std::array<double, 2>> p;
    for (int k = 0; k < n; ++k) {
        const double a = 2.0 * std::numbers::pi * k / n;
        p.push_back({cx + R * std::cos(a), cy + R * std::sin(a)});
    }
    return p;
}

// A solid star-shaped polygon (convex and concave corners, arms a few r wide).
Wall<2> star_wall(float r) {
    return polygon_wall({{0.2, 0.1}, {0.24, 0.1}, {0.24, 0.2}, {0.34, 0.2}, {0.34, 0.24}, {0.24, 0.24}, {0.22, 0.3},
                         {0.2, 0.24}, {0.1, 0.24}, {0.1, 0.2}, {0.2, 0.2}}, r, true);
}
}  // namespace

// A circle given as a 256-gon model reads as the circle grown by d - s (the radial BallMap, an independent
// integral) and, far from any corner, a square model's face reads the profile's flat face.
TEST(VolumeMaps, PolygonCircleReadsItsBallMapAndASquareItsFace2D) {
    const float r = 0.004f, R = 6.0f * r;
    const CubicSpline<2> W(4.0f * r);
    const SmoothWallProfile<2> profile = water_profile(W, r);
    const std::vector<Wall<2>> circle{polygon_wall(circle_points(0.3, 0.3, R, 256), r, true)};
    Wall<2> ball;
    ball.solid = true;
    ball.shape = Wall<2>::Shape::ball;
    ball.center = Vec2{{0.3f, 0.3f}};
    ball.radius = R;
    const VolumeMaps<2> maps = make_volume_maps(circle, {1}, profile, W, ExecContext(2));
    ASSERT_EQ(maps.maps.size(), 1u);
    const float rho_r = profile.density(r);
    // The wall is where the model's distance grid says (voxel r, multilinear: 0.01-0.02 r outside this
    // circle, where the profile's density falls 0.6 rho0 per r): the circle is read at that distance, as the
    // circle grown by d - s, a ball map of radius R + d - s at distance d (its surface at the mapped s).
    for (float d : {0.1f, 0.5f, 1.0f, 1.5f, 2.0f}) {
        for (float angle : {0.1f, 0.7f, 2.0f}) {
            const Vec2 e{{std::cos(angle), std::sin(angle)}}, x = ball.center + e * (R + d * r);
            Vec2 towards;
            const float dw = distance_to_wall(circle[0], x, towards), grown = dw - profile.mapped(dw);
            Wall<2> grown_ball = ball;
            grown_ball.radius = R + grown;
            const BallMaps balls = make_ball_maps<2>({grown_ball}, {1}, profile, W, ExecContext(1));
            const Vec2 xb = ball.center + e * (grown_ball.radius + dw);  // the ball map reads V(R' + mapped(dw))
            VirtualWalls<2> vw;
            build_virtual_walls<2>({grown_ball}, {1}, {BoundaryMotion<2>{}}, 0.0, profile, Vec2::zero(), &xb, 1, vw,
                                   ExecContext(1), nullptr, nullptr, nullptr, &W, &balls);
            const double want = test::virtual_density(vw, W, xb);
            const double got = density_at(circle, profile, W, maps, x);
            EXPECT_NEAR(got, want, 0.01 * rho_r) << "d " << d << " r, angle " << angle;
            if (angle == 0.1f)
                std::printf("2D circle of 6 r, d %.1f r: map %.4f rho0, the grown circle's %.4f, the face %.4f\n", d,
                            got / 1000.0, want / 1000.0, profile.density(dw) / 1000.0);
        }
    }
    const std::vector<Wall<2>> square{polygon_wall({{0.1, 0.1}, {0.5, 0.1}, {0.5, 0.5}, {0.1, 0.5}}, r, true)};
    const VolumeMaps<2> smaps = make_volume_maps(square, {1}, profile, W, ExecContext(1));
    ASSERT_EQ(smaps.maps.size(), 1u);
    for (float d : {0.0f, 0.5f, 1.0f, 1.7f}) {
        const Vec2 x{{0.3f, 0.5f + d * r}};
        Vec2 grad;
        const double got = density_at(square, profile, W, smaps, x, &grad);
        EXPECT_NEAR(got, profile.density(d * r), 2e-3 * rho_r) << "d " << d << " r";
        float delta, psi;
        profile.at(d * r, delta, psi);
        EXPECT_NEAR(grad[1], psi * W.derivative(delta), 5e-3 * std::abs(psi * W.derivative(delta)) + 1e-3 * rho_r / r);
        EXPECT_NEAR(grad[0], 0.0, 1e-3 * rho_r / r);
    }
}

// A solid cylinder (3D): its density at x is lambda rho0 times the kernel's mass over the cylinder grown by
// d - s (x at the mapped distance s from the grown surface), summed point by point (a grid of h / 40), on
// its side and around its rim; its push is the density's gradient (finite differences).
TEST(VolumeMaps, SolidCylinderIsItsVolume3D) {
    const float r = 0.006f;
    const CubicSpline<3> W(4.0f * r);
    const SmoothWallProfile<3> profile = water_profile(W, r);
    Wall<3> cyl;
    cyl.solid = true;
    cyl.shape = Wall<3>::Shape::cylinder;
    cyl.center = Vec3{{0.2f, 0.1f, 0.2f}};
    cyl.radius = 5.0f * r;
    cyl.height = 10.0f * r;
    update_wall_reach(cyl);
    const std::vector<Wall<3>> one{cyl};
    const VolumeMaps<3> maps = make_volume_maps(one, {1}, profile, W, ExecContext(2));
    ASSERT_EQ(maps.maps.size(), 1u);
    auto distance = [&](const Vec3& z) {  // signed, positive outside
        const float qr = std::hypot(z[0] - cyl.center[0], z[2] - cyl.center[2]) - cyl.radius;
        const float qy = std::max(cyl.center[1] - z[1], z[1] - cyl.center[1] - cyl.height);
        const float out = std::hypot(std::max(qr, 0.0f), std::max(qy, 0.0f));
        return out > 0.0f ? out : std::max(qr, qy);
    };
    auto volume = [&](const Vec3& p, float grown) {  // the cylinder grown by `grown`, seen from p
        const int n = 80;
        const float step = 2.0f * W.h / n;
        double sum = 0.0;
        for (int c = 0; c < n * n * n; ++c) {
            const Vec3 y{{-W.h + (c % n + 0.5f) * step, -W.h + ((c / n) % n + 0.5f) * step, -W.h + (c / (n * n) + 0.5f) * step}};
            if (distance(p + y) < grown) sum += W.value(norm(y));
        }
        return profile.lambda * 1000.0 * sum * std::pow(step, 3);
    };
    const float rho_r = profile.density(r);
    // On the side at mid-height (normal radial), and off the top rim (normal along the diagonal).
    const Vec3 side_n{{std::cos(0.3f), 0.0f, std::sin(0.3f)}}, rim_n{{std::sqrt(0.5f), std::sqrt(0.5f), 0.0f}};
    const Vec3 side_at = cyl.center + Vec3{{0.0f, 5.0f * r, 0.0f}} + side_n * cyl.radius;
    const Vec3 rim_at = cyl.center + Vec3{{cyl.radius, cyl.height, 0.0f}};
    for (int where = 0; where < 2; ++where)
        for (float d : {0.25f, 0.5f, 1.0f, 1.5f}) {
            const Vec3 n = where ? rim_n : side_n, x = (where ? rim_at : side_at) + n * (d * r);
            const double want = volume(x, d * r - profile.mapped(d * r));
            Vec3 grad;
            const double got = density_at(one, profile, W, maps, x, &grad);
            // On the side within 2% of rho_B(r); off the rim (where the map's share falls fastest with d, over
            // its nodes r/2 apart) within 5% of its own value (measured 4.0% at 0.25 r, 2.2% at 0.5 r).
            EXPECT_NEAR(got, want, where ? 0.05 * want + 0.01 * rho_r : 0.02 * rho_r) << (where ? "rim" : "side") << ", d " << d << " r";
            Vec3 fd;
            for (int a = 0; a < 3; ++a) {
                Vec3 e = Vec3::zero();
                e[a] = 0.05f * r;
                fd[a] = static_cast<float>((density_at(one, profile, W, maps, x + e) - density_at(one, profile, W, maps, x - e)) / (0.1 * r));
            }
            // The push is the density's gradient: within 3% on the side, 15% off the rim.
            const double miss = norm(grad - fd) / norm(fd);
            EXPECT_LT(miss, where ? 0.15 : 0.03) << (where ? "rim" : "side") << ", d " << d << " r";
            std::printf("3D cylinder %s, d %.2f r: map %.4f rho0, the kernel over the grown cylinder %.4f, the face %.4f; "
                        "push against the gradient %.1f%%\n",
                        where ? "rim" : "side", d, got / 1000.0, want / 1000.0, profile.density(d * r) / 1000.0, 100 * miss);
        }
}

// The map is the same, bit for bit, on one thread and two; a plate thinner than r is refused (it keeps
// its particles), one of 3 r is not, nor a cross with a sharp tip.
TEST(VolumeMaps, SameBitsOnAnyThreadCountAndThinWallsRefused2D) {
    const float r = 0.004f;
    const CubicSpline<2> W(4.0f * r);
    const SmoothWallProfile<2> profile = water_profile(W, r);
    // A cross: convex and concave corners, and a 60 degree tip.
    const std::vector<Wall<2>> star{star_wall(r)};
    const VolumeMaps<2> a = make_volume_maps(star, {1}, profile, W, ExecContext(1));
    const VolumeMaps<2> b = make_volume_maps(star, {1}, profile, W, ExecContext(2));
    ASSERT_EQ(a.maps.size(), 1u);
    ASSERT_EQ(b.maps.size(), 1u);
    ASSERT_EQ(a.maps[0].share.size(), b.maps[0].share.size());
    EXPECT_EQ(std::memcmp(a.maps[0].share.data(), b.maps[0].share.data(), a.maps[0].share.size() * 4), 0);
    EXPECT_EQ(std::memcmp(a.maps[0].push.data(), b.maps[0].push.data(), a.maps[0].push.size() * sizeof(Vec2)), 0);
    const std::vector<Wall<2>> thin{polygon_wall({{0.1, 0.1}, {0.3, 0.1}, {0.3, 0.1 + 0.8 * r}, {0.1, 0.1 + 0.8 * r}}, r, true)};
    const VolumeMaps<2> t = make_volume_maps(thin, {1}, profile, W, ExecContext(1));
    EXPECT_TRUE(t.maps.empty());
    ASSERT_EQ(t.refused.size(), 1u);
    EXPECT_NE(t.refused[0].find("thinner than"), std::string::npos) << t.refused[0];
    const std::vector<Wall<2>> thick{polygon_wall({{0.1, 0.1}, {0.3, 0.1}, {0.3, 0.1 + 3 * r}, {0.1, 0.1 + 3 * r}}, r, true)};
    EXPECT_EQ(make_volume_maps(thick, {1}, profile, W, ExecContext(1)).maps.size(), 1u);
}

// A map filled on demand (issue 44: a process fills the blocks around its box) reads, wherever it is filled,
// exactly what the whole map reads; a read in a block not filled yet throws rather than read 0; filled
// everywhere it holds the whole map's nodes.
TEST(VolumeMaps, FilledOnDemandReadsTheWholeMapsBits2D) {
    const float r = 0.004f;
    const CubicSpline<2> W(4.0f * r);
    const SmoothWallProfile<2> profile = water_profile(W, r);
    const std::vector<Wall<2>> star{star_wall(r)};
    const ExecContext exec(2);
    const VolumeMaps<2> whole = make_volume_maps(star, {1}, profile, W, exec);
    VolumeMaps<2> lazy = make_volume_maps(star, {1}, profile, W, exec, MapFill::on_demand);
    ASSERT_EQ(whole.maps.size(), 1u);
    ASSERT_EQ(lazy.maps.size(), 1u);
    VolumeMap<2>& m = lazy.maps[0];
    EXPECT_TRUE(m.share.empty());
    auto same_at = [&](const Vec2& x) {
        float s0 = 0, s1 = 0;
        Vec2 p0 = Vec2::zero(), p1 = Vec2::zero();
        const bool in0 = whole.maps[0].sample(x, s0, p0), in1 = m.sample(x, s1, p1);
        return in0 == in1 && std::memcmp(&s0, &s1, 4) == 0 && std::memcmp(&p0, &p1, sizeof(Vec2)) == 0;
    };
    // The left part (x < 0.2) filled: every point there reads the whole map's bits, and some point on the
    // right, near the surface, throws.
    const Vec2 lo{{0.0f, 0.0f}}, hi{{0.2f, 0.4f}};
    const std::size_t filled = fill_volume_map(star[0], profile, W, lo, hi, exec, m);
    EXPECT_GT(filled, 0u);
    EXPECT_LT(m.share.size(), whole.maps[0].share.size());
    EXPECT_EQ(fill_volume_map(star[0], profile, W, lo, hi, exec, m), 0u);  // nothing left to fill there
    int checked = 0, thrown = 0;
    for (int i = 0; i <= 200; ++i)
        for (int j = 0; j <= 200; ++j) {
            const Vec2 x{{0.05f + 0.0015f * float(i), 0.05f + 0.0015f * float(j)}};
            if (x[0] <= 0.2f) {
                EXPECT_TRUE(same_at(x)) << x[0] << ", " << x[1];
                ++checked;
                continue;
            }
            float s;
            Vec2 p;
            try {
                m.sample(x, s, p);
            } catch (const std::logic_error&) {
                ++thrown;
            }
        }
    EXPECT_GT(checked, 10000);
    EXPECT_GT(thrown, 100);
    // Filled everywhere: the whole map's node count, and every point reads its bits.
    fill_volume_map(star[0], profile, W, Vec2{{-1.0f, -1.0f}}, Vec2{{1.0f, 1.0f}}, exec, m);
    EXPECT_EQ(m.share.size(), whole.maps[0].share.size());
    for (int i = 0; i <= 200; ++i)
        for (int j = 0; j <= 200; ++j) EXPECT_TRUE(same_at(Vec2{{0.05f + 0.0015f * float(i), 0.05f + 0.0015f * float(j)}}));
}

// Blocks released when the fluid's box leaves them (issue 44: a process's box moves) become not filled again,
// reading them throws, and refilled they read the whole map's bits; few released leave their slots spare for
// the next fill (share does not grow), many released give their memory back.
TEST(VolumeMaps, ReleasedBlocksRefillWithTheWholeMapsBits2D) {
    const float r = 0.004f;
    const CubicSpline<2> W(4.0f * r);
    const SmoothWallProfile<2> profile = water_profile(W, r);
    const std::vector<Wall<2>> star{star_wall(r)};
    const ExecContext exec(2);
    const VolumeMaps<2> whole = make_volume_maps(star, {1}, profile, W, exec);
    VolumeMaps<2> lazy = make_volume_maps(star, {1}, profile, W, exec, MapFill::on_demand);
    ASSERT_EQ(lazy.maps.size(), 1u);
    VolumeMap<2>& m = lazy.maps[0];
    const std::size_t all = whole.maps[0].share.size();
    auto same_everywhere = [&](float x_max) {
        int checked = 0, thrown = 0, wrong = 0;
        for (int i = 0; i <= 200; ++i)
            for (int j = 0; j <= 200; ++j) {
                const Vec2 x{{0.05f + 0.0015f * float(i), 0.05f + 0.0015f * float(j)}};
                float s0 = 0, s1 = 0;
                Vec2 p0 = Vec2::zero(), p1 = Vec2::zero();
                bool in1 = false;
                try {
                    in1 = m.sample(x, s1, p1);
                } catch (const std::logic_error&) {
                    ++thrown;
                    continue;
                }
                const bool in0 = whole.maps[0].sample(x, s0, p0);
                wrong += !(in0 == in1 && std::memcmp(&s0, &s1, 4) == 0 && std::memcmp(&p0, &p1, sizeof(Vec2)) == 0);
                checked += x[0] <= x_max;
            }
        EXPECT_EQ(wrong, 0);
        return std::array<int, 2>{checked, thrown};
    };
    fill_volume_map(star[0], profile, W, Vec2{{-1.0f, -1.0f}}, Vec2{{1.0f, 1.0f}}, exec, m);
    EXPECT_EQ(m.filled(), all);
    EXPECT_EQ(release_volume_map(Vec2{{-1.0f, -1.0f}}, Vec2{{1.0f, 1.0f}}, m), 0u);  // every block near the box: kept
    // A box on the left (x < 0.2) keeps the blocks there; the rest, most of the map, released and their memory
    // returned; the left still reads the whole map's bits, the right throws.
    const std::size_t bytes = m.memory_bytes();
    const std::size_t released = release_volume_map(Vec2{{0.0f, 0.0f}}, Vec2{{0.2f, 0.4f}}, m);
    EXPECT_GT(released, 0u);
    EXPECT_EQ(m.filled() + released * VolumeMap<2>::kBlockNodes, all);
    EXPECT_TRUE(m.spare.empty());
    EXPECT_EQ(m.share.size(), m.filled());
    EXPECT_LT(m.memory_bytes(), bytes);
    auto [left, thrown] = same_everywhere(0.2f);
    EXPECT_GT(left, 10000);
    EXPECT_GT(thrown, 100);
    // Refilled: the whole map again, bit for bit.
    fill_volume_map(star[0], profile, W, Vec2{{-1.0f, -1.0f}}, Vec2{{1.0f, 1.0f}}, exec, m);
    EXPECT_EQ(m.filled(), all);
    EXPECT_EQ(same_everywhere(1.0f)[1], 0);
    // A few blocks released (a box missing only the star's right arm): their slots wait, spare, and the next
    // fill takes them instead of growing share.
    const std::size_t few = release_volume_map(Vec2{{-1.0f, -1.0f}}, Vec2{{0.3f, 1.0f}}, m);
    EXPECT_GT(few, 0u);
    EXPECT_EQ(m.spare.size(), few);
    EXPECT_EQ(m.share.size(), all);
    EXPECT_EQ(fill_volume_map(star[0], profile, W, Vec2{{-1.0f, -1.0f}}, Vec2{{1.0f, 1.0f}}, exec, m), few);
    EXPECT_TRUE(m.spare.empty());
    EXPECT_EQ(m.share.size(), all);
    EXPECT_EQ(same_everywhere(1.0f)[1], 0);
    EXPECT_EQ(m.peak_filled, all);
    EXPECT_EQ(lazy.nodes_peak(), all);
}
