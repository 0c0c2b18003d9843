// The viewer's look and feel without a window (issue 31, item 3): colour maps, units and ranges
// (coloring.hpp), the camera framing the scene's bounds beside the panel (camera.hpp frame_box), the
// overlay's short lines (status_text.hpp), the mouse's brush as a velocity target felt alike at any
// particle count, a block of fluid added where the cursor points, and a change of colour field shown
// while paused (a snapshot without a step).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <gtest/gtest.h>

#include "camera.hpp"
#include "coloring.hpp"
#include "sim_worker.hpp"
#include "worker_support.hpp"
#include "status_text.hpp"

using namespace eddy::view;
using eddy::view::test::wait_until;

namespace {

WorkerConfig config(const char* scene, std::vector<std::string> sets = {}) {
    WorkerConfig c;
    c.scene = scene;
    c.threads = 1;
    c.sets = std::move(sets);
    return c;
}

}  // namespace

TEST(ViewerColoring, MapsEndsUnitsAndNames) {
    // Each map's ends are its table's first and last stops; viridis runs dark purple -> yellow,
    // coolwarm blue -> red through grey, speed deep blue -> white, classic blue -> red (seed 003).
    const auto v0 = colormap_rgb(Colormap::viridis, 0.0f), v1 = colormap_rgb(Colormap::viridis, 1.0f);
    EXPECT_NEAR(v0[0], 0.267f, 1e-3f);
    EXPECT_NEAR(v1[1], 0.906f, 1e-3f);
    const auto c5 = colormap_rgb(Colormap::coolwarm, 0.5f);
    EXPECT_NEAR(c5[0], c5[2], 0.01f);  // the diverging map's middle is neutral
    const auto s1 = colormap_rgb(Colormap::speed, 1.0f), s0 = colormap_rgb(Colormap::speed, 0.0f);
    EXPECT_EQ(s1[0], 1.0f);
    EXPECT_EQ(s1[2], 1.0f);
    EXPECT_GT(s0[2], 3.0f * s0[0]);
    const auto k0 = colormap_rgb(Colormap::classic, 0.0f), k5 = colormap_rgb(Colormap::classic, 0.5f);
    EXPECT_NEAR(k0[2], 0.90f, 1e-6f);
    EXPECT_NEAR(k5[1], 0.85f, 1e-6f);
    // Linear between stops, clamped outside, NaN at the top end (as the shader).
    const auto a = colormap_rgb(Colormap::viridis, 1.0f / 32.0f);
    EXPECT_NEAR(a[1], 0.5f * (0.0049f + 0.0950f), 1e-5f);
    EXPECT_EQ(colormap_rgb(Colormap::viridis, -3.0f), v0);
    EXPECT_EQ(colormap_rgb(Colormap::viridis, NAN), v1);
    Colormap m = Colormap::classic;
    EXPECT_TRUE(parse_colormap("coolwarm", m));
    EXPECT_EQ(m, Colormap::coolwarm);
    EXPECT_FALSE(parse_colormap("jet", m));
    EXPECT_STREQ(field_unit(ColorField::density, 3), "kg/m^3");
    EXPECT_STREQ(field_unit(ColorField::density, 2), "kg/m^2");
    EXPECT_STREQ(field_unit(ColorField::pressure, 3), "Pa");
    EXPECT_STREQ(field_unit(ColorField::pressure, 2), "N/m");
    EXPECT_STREQ(field_unit(ColorField::speed, 2), "m/s");
}

TEST(ViewerColoring, AutomaticRanges) {
    EXPECT_EQ(auto_range(ColorField::speed, 1.5f, 0.2f, 9.0f), (std::array<float, 2>{0.0f, 3.0f}));
    EXPECT_EQ(auto_range(ColorField::density, 1.0f, 990.0f, 1010.0f), (std::array<float, 2>{990.0f, 1010.0f}));
    const auto flat = auto_range(ColorField::density, 1.0f, 1000.0f, 1000.0f);  // a constant field
    EXPECT_LT(flat[0], 1000.0f);
    EXPECT_GT(flat[1], 1000.0f);
    const auto none = auto_range(ColorField::pressure, 1.0f, INFINITY, -INFINITY);  // no particles
    EXPECT_LT(none[0], none[1]);
    // With the scene's rho0 and rho0 g H (issue 45: the frame's min..max saturated the whole fluid, the
    // free surface's deficit stretching the range): density rho0 +-2%, pressure 0..rho0 g H.
    EXPECT_EQ(auto_range(ColorField::density, 1.0f, 600.0f, 1010.0f, 1000.0f, 2000.0f),
              (std::array<float, 2>{980.0f, 1020.0f}));
    EXPECT_EQ(auto_range(ColorField::pressure, 1.0f, -50.0f, 900.0f, 1000.0f, 2000.0f), (std::array<float, 2>{0.0f, 2000.0f}));
    EXPECT_EQ(auto_range(ColorField::speed, 1.5f, 0.2f, 9.0f, 1000.0f, 2000.0f), (std::array<float, 2>{0.0f, 3.0f}));
}

// The default 3D camera shows the whole of the scene's bounds: every corner inside the view, the
// tighter side at the margin, centred, from any yaw and pitch, for wide and narrow views; with the
// lens shift the box is centred where the shift says (right of the panel).
TEST(ViewerFraming, FrameBoxShowsTheWholeBox) {
    const V3 lo{0.0f, 0.0f, 0.0f}, hi{1.6f, 0.6f, 0.6f};  // dam_break_3d's tank
    for (float aspect : {0.6f, 1.0f, 1.78f, 2.4f})
        for (float yaw : {0.0f, 0.6f, 2.0f})
            for (float pitch : {0.1f, 0.45f, 1.2f}) {
                Camera cam;
                cam.yaw = yaw, cam.pitch = pitch;
                frame_box(cam, lo, hi, aspect, 0.06f);
                const auto r = projected_box(cam.view(), cam.proj(aspect), lo, hi);
                SCOPED_TRACE(testing::Message() << "aspect " << aspect << " yaw " << yaw << " pitch " << pitch);
                EXPECT_GE(r[0], -0.95f);
                EXPECT_LE(r[2], 0.95f);
                EXPECT_GE(r[1], -0.95f);
                EXPECT_LE(r[3], 0.95f);
                EXPECT_NEAR(std::max(r[2] - r[0], r[3] - r[1]), 2.0f * 0.94f, 0.01f);  // the tighter side at the margin
                EXPECT_NEAR(r[0] + r[2], 0.0f, 0.01f);  // centred
                EXPECT_NEAR(r[1] + r[3], 0.0f, 0.01f);
            }
    // A 1280 x 720 window with the panel's 360 px at the left: the box fills the 920 px right of it.
    const float ww = 1280.0f, wh = 720.0f, panel = 360.0f;
    Camera cam;
    frame_box(cam, lo, hi, (ww - panel) / wh, 0.06f);
    cam.shift_x = panel / ww;
    const auto r = projected_box(cam.view(), cam.proj(ww / wh), lo, hi);
    const float left_px = 0.5f * (r[0] + 1.0f) * ww, right_px = 0.5f * (r[2] + 1.0f) * ww;
    EXPECT_GT(left_px, panel);
    EXPECT_LT(right_px, ww);
    EXPECT_NEAR(0.5f * (left_px + right_px), 0.5f * (panel + ww), 2.0f);
    // The mouse's ray goes through the shifted picture: the pixel where the box's centre is drawn.
    V3 o, d;
    const V3 c = (lo + hi) * 0.5f;
    const auto pc = projected_box(cam.view(), cam.proj(ww / wh), c, c);
    cam.ray(0.5 * (pc[0] + 1.0) * ww - 0.5, 0.5 * (1.0 - pc[1]) * wh - 0.5, int(ww), int(wh), o, d);
    const V3 to = c - o;
    const float along = dot(to, d);
    const V3 off = to - d * along;
    EXPECT_LT(std::sqrt(dot(off, off)), 1e-3f * along);
}

// 2D: the scene's rectangle is fitted in the part of the window right of the panel (free_frac), the
// view extended left over the panel; the mouse's point under a pixel is the world point drawn there.
TEST(ViewerFraming, Rect2DRightOfThePanel) {
    Camera cam;
    cam.x0 = -0.04f, cam.y0 = -0.04f, cam.x1 = 4.04f, cam.y1 = 2.04f;  // a 4 m x 2 m tank with its margin
    const float ww = 1280.0f, wh = 720.0f, panel = 360.0f;
    cam.free_frac = (ww - panel) / ww;
    const auto r = cam.rect(ww / wh);
    auto px = [&](float x) { return (x - r[0]) / (r[2] - r[0]) * ww; };
    EXPECT_NEAR(px(cam.x0), panel, 0.5f);  // the wider side fills the free part exactly
    EXPECT_NEAR(px(cam.x1), ww, 0.5f);
    EXPECT_NEAR((r[3] - r[1]) / (r[2] - r[0]), wh / ww, 1e-5f);  // square pixels
    EXPECT_LE(r[1], cam.y0);
    EXPECT_GE(r[3], cam.y1);
    V3 o, d;
    cam.ray(px(2.0f) - 0.5, 0.5 * wh - 0.5, int(ww), int(wh), o, d);
    EXPECT_NEAR(o.x, 2.0f, 1e-4f);
    cam.free_frac = 1.0f;  // the panel hidden: the whole window
    const auto f = cam.rect(ww / wh);
    EXPECT_NEAR(0.5f * (f[0] + f[2]), 2.0f, 1e-5f);
}

TEST(ViewerStatus, ShortLines) {
    Snapshot s;
    auto sc = std::make_shared<eddy::Scene>();
    sc->name = "a_scene_with_a_very_long_name_that_would_overflow_the_overlay_3d";
    s.scene = sc;
    s.dimension = 3;
    s.particles = 27000;
    s.time = 12.3456;
    s.steps = 123456789;
    s.ms_per_step = 139.24;
    s.dt = 0.00206f;
    const auto lines = status_lines(s, "wcsph", 80.0);
    ASSERT_GE(lines.size(), 5u);
    for (const auto& l : lines) EXPECT_LE(l.size(), kStatusWidth) << l;
    EXPECT_NE(lines[1].find("27000 particles"), std::string::npos);
    EXPECT_NE(lines[2].find("t 12.346 s"), std::string::npos);
    EXPECT_NE(lines[3].find("7.18 steps/s"), std::string::npos);
    EXPECT_EQ(one_line("a\nb"), "a b");
    EXPECT_EQ(one_line(std::string(60, 'x'), 10), "xxxxxxx...");
}

// Paused, a change of colour field shows at once: refresh() publishes a snapshot of the new field
// without a step (the window's C key and panel do this).
TEST(ViewerWorker, RecolourWhilePaused) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    auto s = w.latest();
    EXPECT_EQ(s->field, ColorField::speed);
    EXPECT_EQ(s->scalar_max, 0.0f);  // at rest
    w.color_field = int(ColorField::density);
    w.refresh();
    s = wait_until(w, [](const Snapshot& s) { return s.field == ColorField::density; });
    EXPECT_EQ(s->steps, 0u);
    EXPECT_GT(s->scalar_min, 100.0f);  // densities (kg/m^2), not speeds
    w.color_field = int(ColorField::pressure);
    w.refresh();
    s = wait_until(w, [](const Snapshot& s) { return s.field == ColorField::pressure; });
    EXPECT_EQ(s->steps, 0u);
}

// The brush is a velocity target: particles in it take the mouse's velocity at its rate whatever
// their mass, so the same drag moves the fluid alike at 1,600 and 6,400 particles (square_2d at r and
// r/2). The old force (an acceleration per unit of mouse speed within k h) shrank with the resolution.
TEST(ViewerWorker, BrushFeltAtAnyParticleCount) {
    double mean_vx[2] = {0, 0}, shift[2] = {0, 0};
    std::size_t counts[2] = {0, 0};
    const char* radii[2] = {"particle_radius=0.005", "particle_radius=0.0025"};
    for (int k = 0; k < 2; ++k) {
        SimWorker w(config("square_2d", {radii[k], "gravity=[0,0]", "settings.speed_of_sound=20"}));
        w.playing = false;
        MouseForce m;
        m.active = true;
        m.point = {0.5f, 0.6f, 0.0f};
        m.velocity = {1.0f, 0.0f, 0.0f};
        m.radius = 0.1f;
        m.rate = 20.0f;
        w.set_mouse(m);
        auto s0 = w.latest();
        counts[k] = s0->particles;
        w.start();
        auto s = s0;
        while (s->time < 0.05) {
            const auto n = s->steps;
            w.request_step();
            s = wait_until(w, [n](const Snapshot& x) { return x.steps > n; });
            ASSERT_TRUE(s->status.empty()) << s->status;
        }
        // The particles that started in the middle of the brush: their mean x displacement over the run.
        double dx = 0, dx_all = 0;
        std::size_t in = 0;
        for (std::size_t i = 0; i < s0->particles; ++i) {
            dx_all += s->fluid[4 * i] - s0->fluid[4 * i];
            const float x = s0->fluid[4 * i] - m.point[0], y = s0->fluid[4 * i + 1] - m.point[1];
            if (x * x + y * y > 0.05f * 0.05f) continue;
            dx += s->fluid[4 * i] - s0->fluid[4 * i];
            ++in;
        }
        ASSERT_GT(in, 20u);
        mean_vx[k] = dx / double(in) / s->time;  // the mean velocity over the run (m/s)
        shift[k] = dx_all / double(s0->particles);  // the fluid's centre of mass moved this far (m)
    }
    EXPECT_EQ(counts[1], 4 * counts[0]);
    std::printf("brush: mean speed over 0.05 s of the particles in its middle: %.4f m/s at %zu particles, %.4f m/s at %zu; "
                "the fluid's centre of mass moved %.4g mm and %.4g mm\n",
                mean_vx[0], counts[0], mean_vx[1], counts[1], 1e3 * shift[0], 1e3 * shift[1]);
    // A lone particle at the centre would reach 1 - e^-1 = 0.63 m/s after 0.05 s; in the fluid the
    // pressure shares the push with the neighbours (measured: 0.16-0.21 m/s over the run).
    EXPECT_GT(mean_vx[0], 0.1);
    EXPECT_GT(mean_vx[1], 0.1);
    // The push itself, compared: the momentum the brush gave the fluid, as the shift of its centre of mass
    // (internal forces keep momentum, and the block floats clear of the walls). The middle's mean speed is
    // not a figure to compare: at 1,600 particles it reads 0.168 or 0.208 m/s for a CFL number of 0.40 or
    // 0.39 (the same with steps landing on frame times), while the momentum moves by 0.2%.
    EXPECT_NEAR(shift[1] / shift[0], 1.0, 0.05) << shift[0] << " vs " << shift[1] << " m";
}

// B adds a block where the cursor points: its particles are centred at the point (within a spacing),
// kept inside the scene's bounds, 2D and 3D.
TEST(ViewerWorker, AddBlockAtThePoint) {
    for (const char* scene : {"dam_break_2d", "dam_break_3d"}) {
        SCOPED_TRACE(scene);
        SimWorker w(config(scene));
        w.playing = false;
        auto s0 = w.latest();
        const int D = s0->dimension;
        // Right part of the tank, free of water (dam_break: the water is on the left).
        std::array<double, 3> p{s0->lo[0] + 0.75 * (s0->hi[0] - s0->lo[0]), s0->lo[1] + 0.5 * (s0->hi[1] - s0->lo[1]),
                                D == 3 ? s0->lo[2] + 0.5 * (s0->hi[2] - s0->lo[2]) : 0.0};
        w.start();
        w.add_block(p);
        const std::size_t n0 = s0->particles;
        auto s = wait_until(w, [n0](const Snapshot& x) { return x.particles > n0; });
        double c[3] = {0, 0, 0};
        const std::size_t added = s->particles - n0;
        EXPECT_EQ(added, D == 2 ? 400u : 1728u);
        for (std::size_t i = n0; i < s->particles; ++i)
            for (int a = 0; a < 3; ++a) c[a] += s->fluid[4 * i + a];
        for (int a = 0; a < D; ++a) EXPECT_NEAR(c[a] / double(added), p[a], 2.0 * s->particle_radius) << "axis " << a;
        // A point beyond the walls: the block stays inside.
        w.add_block(std::array<double, 3>{s0->hi[0] + 1.0, s0->lo[1] - 1.0, 0.0});
        const std::size_t n1 = s->particles;
        s = wait_until(w, [n1](const Snapshot& x) { return x.particles > n1 || x.status.find("no room") != std::string::npos; });
        for (std::size_t i = n1; i < s->particles; ++i)
            for (int a = 0; a < D; ++a) {
                EXPECT_GT(s->fluid[4 * i + a], s0->lo[a]);
                EXPECT_LT(s->fluid[4 * i + a], s0->hi[a]);
            }
    }
}

// The viewer's emitter (issue 31): E puts a nozzle at the cursor pointing along gravity; it pours at
// its rate while the simulation runs, the snapshot reports it, and Shift+E stops it.
TEST(ViewerWorker, EmitterAtThePointPoursUntilStopped) {
    for (const char* scene : {"dam_break_2d", "dam_break_3d"}) {
        SCOPED_TRACE(scene);
        SimWorker w(config(scene));
        auto s0 = w.latest();
        const int D = s0->dimension;
        std::array<double, 3> p{s0->lo[0] + 0.75 * (s0->hi[0] - s0->lo[0]), s0->lo[1] + 0.7 * (s0->hi[1] - s0->lo[1]),
                                D == 3 ? s0->lo[2] + 0.5 * (s0->hi[2] - s0->lo[2]) : 0.0};
        w.start();
        w.add_emitter(p, 1.0, 8.0);
        auto s = wait_until(w, [](const Snapshot& x) { return !x.emitters.empty() && x.emitters[0].emitted > 20; });
        ASSERT_EQ(s->emitters.size(), 1u);
        const auto& e = s->emitters[0];
        EXPECT_TRUE(e.on);
        EXPECT_GT(e.rate, 0.0);
        EXPECT_LT(e.direction[1], -0.99f);  // along gravity
        for (int a = 0; a < D; ++a) EXPECT_NEAR(e.center[a], p[a], 1e-6) << "axis " << a;
        EXPECT_GE(s->particles, s0->particles + 20);
        w.stop_emitter(-1);
        s = wait_until(w, [](const Snapshot& x) { return !x.emitters.empty() && !x.emitters[0].on; });
        const std::uint64_t n = s->emitters[0].emitted;
        const double t = s->time;
        s = wait_until(w, [t](const Snapshot& x) { return x.time > t + 0.02; });
        EXPECT_EQ(s->emitters[0].emitted, n);
        // A point beyond the walls: the nozzle is kept inside the scene's bounds (as a block), so it is
        // either added there or, if that is in a wall, refused with the reason in the status.
        w.add_emitter(std::array<double, 3>{s0->lo[0] - 1.0, s0->lo[1] - 1.0, 0.0}, 1.0, 8.0);
        s = wait_until(w, [](const Snapshot& x) {
            return x.emitters.size() == 2 || x.status.find("cannot put an emitter") != std::string::npos;
        });
        if (s->emitters.size() == 2)
            for (int a = 0; a < D; ++a) {
                EXPECT_GT(s->emitters[1].center[a], s0->lo[a]);
                EXPECT_LT(s->emitters[1].center[a], s0->hi[a]);
            }
    }
}
