// Software pictures: PNG of the right size, showing the fluid in its colours, identical bytes for the
// same input, the 2D view the right way up and the default 3D camera framing the whole box.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/render.hpp"
#include "test_support.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

class Render : public test::TempDirTest {};

struct Picture {
    int w = 0, h = 0;
    std::vector<unsigned char> rgb;
    std::string bytes;
    const unsigned char* at(int x, int y) const { return &rgb[3 * (std::size_t(y) * w + x)]; }
};

Picture load(const fs::path& p) {
    Picture pic;
    std::stringstream ss;
    ss << std::ifstream(p, std::ios::binary).rdbuf();
    pic.bytes = ss.str();
    int n = 0;
    unsigned char* d = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(pic.bytes.data()),
                                             static_cast<int>(pic.bytes.size()), &pic.w, &pic.h, &n, 3);
    if (d) pic.rgb.assign(d, d + std::size_t(pic.w) * pic.h * 3);
    stbi_image_free(d);
    return pic;
}

// Clearly fluid-coloured (blue to red, saturated): not the background, not grey walls.
bool fluid_pixel(const unsigned char* p) {
    const int mx = std::max({p[0], p[1], p[2]}), mn = std::min({p[0], p[1], p[2]});
    return mx > 90 && mx - mn > 60;
}
bool reddish(const unsigned char* p) { return p[0] > 150 && p[1] < 110 && p[2] < 110; }
bool bluish(const unsigned char* p) { return p[2] > 150 && p[0] < 110; }
bool greyish(const unsigned char* p) {
    const int mx = std::max({p[0], p[1], p[2]}), mn = std::min({p[0], p[1], p[2]});
    return mx > 70 && mx - mn < 30;
}

double fraction(const Picture& p, bool (*pred)(const unsigned char*)) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < p.rgb.size(); i += 3) n += pred(&p.rgb[i]);
    return double(n) / double(p.rgb.size() / 3);
}

// Pixels that differ from the background colour (the top-left corner is always background here).
std::size_t non_background(const Picture& p) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < p.rgb.size(); i += 3)
        n += !std::equal(&p.rgb[i], &p.rgb[i] + 3, p.rgb.data());
    return n;
}

// A block of side^D particles of radius r, speed rising with x from 0 to `speed`.
template <int D>
ParticleSet<D> block(int side, float r, float speed, Vec<D> origin = Vec<D>::zero()) {
    ParticleSet<D> p;
    for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j)
            for (int k = 0; k < (D == 3 ? side : 1); ++k) {
                Vec<D> x, v = Vec<D>::zero();
                x[0] = (2 * i + 1) * r;
                x[1] = (2 * j + 1) * r;
                if constexpr (D == 3) x[2] = (2 * k + 1) * r;
                v[0] = speed * float(i) / float(side);
                p.push_back(x + origin, v);
            }
    return p;
}

// Walls of particles (spacing 2r) on the six faces of a box: a closed tank.
BoundarySet<3> tank(const Aabb<3>& box, float r) {
    BoundarySet<3> b;
    const float s = 2 * r;
    for (float x = box.lo[0]; x <= box.hi[0] + 1e-6f; x += s)
        for (float y = box.lo[1]; y <= box.hi[1] + 1e-6f; y += s)
            for (float z = box.lo[2]; z <= box.hi[2] + 1e-6f; z += s) {
                const bool face = x - box.lo[0] < s / 2 || box.hi[0] - x < s / 2 || y - box.lo[1] < s / 2 ||
                                  box.hi[1] - y < s / 2 || z - box.lo[2] < s / 2 || box.hi[2] - z < s / 2;
                if (face) b.push_back(Vec3{{x, y, z}}, 0);
            }
    return b;
}

}  // namespace

TEST_F(Render, SpeedColourGoesBlueYellowRed) {
    const Vec3 slow = speed_color(0.0f, 1.0f), mid = speed_color(1.0f, 1.0f), fast = speed_color(5.0f, 1.0f);
    EXPECT_GT(slow[2], 0.8f);
    EXPECT_LT(slow[0], 0.2f);
    EXPECT_NEAR(mid[0], 1.0f, 1e-5f);  // the sigmoid's centre is exactly yellow
    EXPECT_NEAR(mid[1], 0.85f, 1e-5f);
    EXPECT_NEAR(mid[2], 0.10f, 1e-5f);
    EXPECT_GT(fast[0], 0.85f);
    EXPECT_LT(fast[1], 0.15f);
    // The scale moves the centre; green fades out monotonically past it; NaN speed shows as fast.
    EXPECT_NEAR(speed_color(2.0f, 2.0f)[1], 0.85f, 1e-5f);
    float prev = 1.0f;
    for (float s = 1.0f; s < 4.0f; s += 0.25f) {
        const float g = speed_color(s, 1.0f)[1];
        EXPECT_LE(g, prev);
        prev = g;
    }
    const Vec3 nan = speed_color(std::numeric_limits<float>::quiet_NaN(), 1.0f);
    EXPECT_TRUE(is_finite(nan));
    EXPECT_GT(nan[0], 0.85f);
}

TEST_F(Render, Picture2DShowsFluidAndWallsAndIsDeterministic) {
    const float r = 0.01f;
    const auto p = block<2>(40, r, 2.0f);
    BoundarySet<2> b;
    for (int i = -2; i < 90; ++i) b.push_back(Vec2{{i * 2 * r, -r}}, 0);
    const Aabb<2> box{Vec2{{0, 0}}, Vec2{{1.6f, 0.9f}}};
    RenderSettings rs;
    rs.width = 320;
    rs.height = 180;
    render_png(dir / "a.png", p, &b, box, r, rs);
    render_png(dir / "b.png", p, &b, box, r, rs);
    const Picture a = load(dir / "a.png"), c = load(dir / "b.png");
    ASSERT_EQ(a.w, 320);
    ASSERT_EQ(a.h, 180);
    EXPECT_EQ(a.bytes, c.bytes);
    EXPECT_GT(non_background(a), 3000u);
    EXPECT_GT(fraction(a, fluid_pixel), 0.05);
    EXPECT_GT(fraction(a, bluish), 0.01);
    // Without the boundary the grey floor goes (the colour map itself passes through greyish
    // tones between blue and yellow), and the fluid is all there either way.
    RenderSettings no_walls = rs;
    no_walls.draw_boundary = false;
    render_png(dir / "n.png", p, &b, box, r, no_walls);
    const Picture n = load(dir / "n.png");
    EXPECT_GT(fraction(a, greyish), fraction(n, greyish) + 0.005);
    EXPECT_NEAR(fraction(n, fluid_pixel), fraction(a, fluid_pixel), 0.01);
}

TEST_F(Render, Picture2DHasYUpAndKeepsTheAspectRatio) {
    // One slow particle at the top-left corner, one fast at the bottom-right of a square box drawn
    // into a wide picture: the square stays square and centred.
    ParticleSet<2> p;
    p.push_back(Vec2{{0.0f, 1.0f}}, Vec2{{0.0f, 0.0f}});
    p.push_back(Vec2{{1.0f, 0.0f}}, Vec2{{10.0f, 0.0f}});
    RenderSettings rs;
    rs.width = 400;
    rs.height = 200;
    render_png(dir / "c.png", p, static_cast<const BoundarySet<2>*>(nullptr), Aabb<2>{Vec2{{0, 0}}, Vec2{{1, 1}}}, 0.02f,
               rs);
    const Picture a = load(dir / "c.png");
    ASSERT_EQ(a.w, 400);
    double bx = 0, by = 0, rx = 0, ry = 0, nb = 0, nr = 0;
    for (int y = 0; y < a.h; ++y)
        for (int x = 0; x < a.w; ++x) {
            if (bluish(a.at(x, y))) bx += x, by += y, nb += 1;
            if (reddish(a.at(x, y))) rx += x, ry += y, nr += 1;
        }
    ASSERT_GT(nb, 0);
    ASSERT_GT(nr, 0);
    bx /= nb, by /= nb, rx /= nr, ry /= nr;
    EXPECT_LT(by, 0.2 * a.h);  // y up: the particle at y = 1 is near the top
    EXPECT_GT(ry, 0.8 * a.h);
    EXPECT_LT(bx, rx);
    EXPECT_NEAR(rx - bx, ry - by, 2.0);  // square stays square
    EXPECT_NEAR(0.5 * (bx + rx), 0.5 * a.w, 2.0);
}

TEST_F(Render, Picture3DIsShadedDeterministicAndSeesThroughTheTank) {
    const float r = 0.01f;
    const Aabb<3> box{Vec3{{0, 0, 0}}, Vec3{{0.8f, 0.5f, 0.4f}}};
    const auto p = block<3>(16, r, 2.0f, Vec3{{0.04f, 0.0f, 0.04f}});
    const BoundarySet<3> walls = tank(box, r);
    RenderSettings rs;
    rs.width = 320;
    rs.height = 240;
    render_png(dir / "fluid.png", p, static_cast<const BoundarySet<3>*>(nullptr), box, r, rs);
    render_png(dir / "tank.png", p, &walls, box, r, rs);
    render_png(dir / "tank2.png", p, &walls, box, r, rs);
    const Picture f = load(dir / "fluid.png"), t = load(dir / "tank.png"), t2 = load(dir / "tank2.png");
    ASSERT_EQ(f.w, 320);
    ASSERT_EQ(f.h, 240);
    EXPECT_EQ(t.bytes, t2.bytes);
    EXPECT_GT(fraction(f, fluid_pixel), 0.03);
    // Shaded: the fluid is not one flat colour.
    std::set<int> shades;
    for (std::size_t i = 0; i < f.rgb.size(); i += 3)
        if (fluid_pixel(&f.rgb[i])) shades.insert(f.rgb[i] * 65536 + f.rgb[i + 1] * 256 + f.rgb[i + 2]);
    EXPECT_GT(shades.size(), 100u);
    // The closed tank around the fluid hides none of it, and its walls show.
    EXPECT_GT(fraction(t, fluid_pixel), 0.95 * fraction(f, fluid_pixel));
    EXPECT_GT(fraction(t, greyish), 0.1);
}

TEST_F(Render, DefaultCameraFramesTheWholeBox) {
    // A tank filling the bounds: with eye == target, none of it may touch the picture's border,
    // in a wide and in a tall picture.
    const float r = 0.02f;
    const Aabb<3> box{Vec3{{-1.0f, 0.0f, -0.5f}}, Vec3{{1.0f, 1.0f, 0.5f}}};
    const BoundarySet<3> walls = tank(box, r);
    const auto p = block<3>(4, r, 0.0f);
    for (const auto [w, h] : {std::pair{320, 180}, std::pair{180, 320}}) {
        RenderSettings rs;
        rs.width = w;
        rs.height = h;
        const fs::path file = dir / fmt::format("frame_{}x{}.png", w, h);
        render_png(file, p, &walls, box, r, rs);
        const Picture a = load(file);
        ASSERT_EQ(a.w, w);
        ASSERT_EQ(a.h, h);
        int x0 = w, x1 = -1, y0 = h, y1 = -1;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                if (!std::equal(a.at(x, y), a.at(x, y) + 3, a.rgb.data())) {
                    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
                }
        EXPECT_GT(x0, 0) << w << "x" << h;
        EXPECT_LT(x1, w - 1) << w << "x" << h;
        EXPECT_GT(y0, 0) << w << "x" << h;
        EXPECT_LT(y1, h - 1) << w << "x" << h;
        // ... and it is not lost in the middle either.
        EXPECT_GT(std::max(x1 - x0, y1 - y0), std::max(w, h) / 3);
    }
}

TEST_F(Render, ExplicitCameraLooksWhereItIsTold) {
    const float r = 0.01f;
    const Aabb<3> box{Vec3{{0, 0, 0}}, Vec3{{1, 1, 1}}};
    ParticleSet<3> p = block<3>(6, r, 0.0f, Vec3{{0.44f, 0.44f, 0.44f}});
    RenderSettings rs;
    rs.width = 200;
    rs.height = 200;
    rs.target = Vec3{{0.5f, 0.5f, 0.5f}};
    for (const Vec3 eye : {Vec3{{0.5f, 0.5f, 3.0f}}, Vec3{{0.5f, 4.0f, 0.5f}}, Vec3{{-2.0f, 0.5f, 0.5f}}}) {
        rs.eye = eye;
        render_png(dir / "cam.png", p, static_cast<const BoundarySet<3>*>(nullptr), box, r, rs);
        const Picture a = load(dir / "cam.png");
        EXPECT_TRUE(fluid_pixel(a.at(100, 100))) << eye[0] << " " << eye[1] << " " << eye[2];
        EXPECT_FALSE(fluid_pixel(a.at(10, 10)));
    }
    // Looking away from the particles: an empty picture.
    rs.eye = Vec3{{0.5f, 0.5f, 3.0f}};
    rs.target = Vec3{{0.5f, 0.5f, 4.0f}};
    render_png(dir / "away.png", p, static_cast<const BoundarySet<3>*>(nullptr), box, r, rs);
    EXPECT_EQ(non_background(load(dir / "away.png")), 0u);
}

TEST_F(Render, OddInputsDoNotBreakThePicture) {
    // Diverged particles (NaN, inf, far away) are skipped or clipped; the rest still shows.
    auto p3 = block<3>(5, 0.02f, 1.0f);
    p3.position[0][0] = std::numeric_limits<float>::quiet_NaN();
    p3.position[1][1] = std::numeric_limits<float>::infinity();
    p3.position[2] = Vec3{{1e30f, -1e30f, 1e30f}};
    p3.velocity[3][0] = std::numeric_limits<float>::quiet_NaN();
    RenderSettings rs;
    rs.width = 64;
    rs.height = 48;
    render_png(dir / "odd3.png", p3, static_cast<const BoundarySet<3>*>(nullptr),
               Aabb<3>{Vec3{{0, 0, 0}}, Vec3{{0.2f, 0.2f, 0.2f}}}, 0.02f, rs);
    EXPECT_GT(fraction(load(dir / "odd3.png"), fluid_pixel), 0.01);
    auto p2 = block<2>(5, 0.02f, 1.0f);
    p2.position[0][0] = std::numeric_limits<float>::quiet_NaN();
    p2.position[1] = Vec2{{-1e30f, 1e30f}};
    render_png(dir / "odd2.png", p2, static_cast<const BoundarySet<2>*>(nullptr),
               Aabb<2>{Vec2::filled(0.0f), Vec2::filled(0.2f)}, 0.02f, rs);
    EXPECT_GT(fraction(load(dir / "odd2.png"), fluid_pixel), 0.01);
    // Unusable bounds: the picture frames the particles instead; a zero radius still draws 1-pixel dots.
    const auto q2 = block<2>(5, 0.02f, 1.0f);
    render_png(dir / "nobounds.png", q2, static_cast<const BoundarySet<2>*>(nullptr),
               Aabb<2>{Vec2::filled(std::numeric_limits<float>::quiet_NaN()), Vec2::filled(0.0f)}, 0.0f, rs);
    EXPECT_GE(non_background(load(dir / "nobounds.png")), 25u);
    // No bounds at all (a default, empty box) and a single particle: it still shows, in the middle.
    ParticleSet<3> one;
    one.push_back(Vec3{{5.0f, -3.0f, 2.0f}}, Vec3::zero());
    render_png(dir / "one.png", one, static_cast<const BoundarySet<3>*>(nullptr), Aabb<3>{}, 0.05f, rs);
    const Picture single = load(dir / "one.png");
    EXPECT_GE(non_background(single), 4u);
    std::size_t near_centre = 0;
    for (int y = rs.height / 2 - 2; y <= rs.height / 2 + 2; ++y)
        for (int x = rs.width / 2 - 2; x <= rs.width / 2 + 2; ++x)
            near_centre += !std::equal(single.at(x, y), single.at(x, y) + 3, single.rgb.data());
    EXPECT_EQ(near_centre, non_background(single));
    // A picture size of zero is bad input.
    rs.width = 0;
    EXPECT_THROW(render_png(dir / "zero.png", p2, static_cast<const BoundarySet<2>*>(nullptr),
                            Aabb<2>{Vec2::filled(0.0f), Vec2::filled(1.0f)}, 0.01f, rs),
                 InputError);
    EXPECT_FALSE(fs::exists(dir / "zero.png"));
}
