// The viewer's simulation thread, without a window: stepping through it gives the same state as
// stepping directly (drawing reads copies), settings and gravity apply live, bad settings leave the
// simulation as it was, the mouse force acts within k h only, added blocks add particles.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "camera.hpp"
#include "mesh.hpp"
#include "sim_worker.hpp"

using namespace eddy::view;

namespace {

// Waits until the worker has published a snapshot satisfying pred (or fails after 60 s).
template <class P>
std::shared_ptr<const Snapshot> wait_for(SimWorker& w, P pred) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        auto s = w.latest();
        if (s && pred(*s)) return s;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
            ADD_FAILURE() << "timed out";
            return s;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

WorkerConfig config(const char* scene) {
    WorkerConfig c;
    c.scene = scene;
    c.threads = 1;
    return c;
}

}  // namespace

TEST(ViewerWorker, SteppingMatchesDirectStepping) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    for (int i = 0; i < 5; ++i) w.request_step();
    auto s = wait_for(w, [](const Snapshot& s) { return s.steps == 5; });
    ASSERT_EQ(s->steps, 5u);

    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("dam_break_2d")), 5'000'000, exec);
    for (int i = 0; i < 5; ++i) eddy::step(sim, exec);
    const auto& f = std::get<eddy::ParticleSimulation<2>>(sim).fluid;
    ASSERT_EQ(s->fluid.size(), 4 * f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
        ASSERT_EQ(s->fluid[4 * i], f.position[i][0]);
        ASSERT_EQ(s->fluid[4 * i + 1], f.position[i][1]);
    }
}

TEST(ViewerWorker, LiveSettingsAndGravity) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    nlohmann::json bad = {{"cfl", -1.0}};
    w.apply(bad, {0, -9.81, 0});
    auto s = wait_for(w, [](const Snapshot& s) { return !s.status.empty(); });
    EXPECT_NE(s->status.find("cfl"), std::string::npos) << s->status;
    w.apply(nlohmann::json{{"cfl", 0.2}}, {0, 9.81, 0});  // gravity upwards
    s = wait_for(w, [](const Snapshot& s) { return s.status.empty() && s.scene && s.scene->gravity[1] > 0; });
    EXPECT_EQ(s->scene->settings.at("cfl").get<double>(), 0.2);
    // Particles at rest accelerate upwards now: the mean height rises.
    for (int i = 0; i < 20; ++i) w.request_step();
    s = wait_for(w, [](const Snapshot& s) { return s.steps == 20; });
    const std::size_t n = s->fluid.size() / 4;
    double y0 = 0, y1 = 0;
    for (std::size_t i = 0; i < n; ++i) y1 += s->fluid[4 * i + 1];
    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("dam_break_2d")), 5'000'000, exec);
    for (const auto& x : std::get<eddy::ParticleSimulation<2>>(sim).fluid.position) y0 += x[1];
    EXPECT_GT((y1 - y0) / double(n), 0.0);
}

TEST(ViewerWorker, MouseForceActsWithinRadius) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    auto s0 = w.latest();
    // A point inside the fluid block; the force pushes along +x.
    MouseForce m;
    m.active = true;
    m.point = {s0->centroid[0], s0->centroid[1], 0};
    m.velocity = {5.0f, 0, 0};
    m.radius_factor = 2.0f;
    m.strength = 200.0f;
    w.set_mouse(m);
    w.start();
    w.request_step();
    auto s = wait_for(w, [](const Snapshot& s) { return s.steps == 1; });
    const float R = m.radius_factor * s->kernel_h;
    std::size_t pushed = 0, inside = 0;
    for (std::size_t i = 0; i < s->fluid.size() / 4; ++i) {
        const float dx = s0->fluid[4 * i] - m.point[0], dy = s0->fluid[4 * i + 1] - m.point[1];
        const bool in = std::sqrt(dx * dx + dy * dy) < 0.8f * R;
        const bool far = std::sqrt(dx * dx + dy * dy) > 1.5f * R + 0.05f;
        const float moved = s->fluid[4 * i] - s0->fluid[4 * i];
        inside += in;
        if (in && moved > 0) ++pushed;
        if (far) EXPECT_LT(std::abs(moved), 1e-4f) << "particle " << i << " far from the mouse moved";
    }
    EXPECT_GT(inside, 10u);
    EXPECT_EQ(pushed, inside);
}

TEST(ViewerWorker, AddBlockAddsParticles) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    const std::size_t n0 = w.latest()->particles;
    w.start();
    w.add_block();
    auto s = wait_for(w, [n0](const Snapshot& s) { return s.particles > n0; });
    EXPECT_GT(s->particles, n0);
    EXPECT_NE(s->status.find("added"), std::string::npos);
    for (int i = 0; i < 3; ++i) w.request_step();
    s = wait_for(w, [](const Snapshot& s) { return s.steps == 3; });
    for (float v : s->fluid) ASSERT_TRUE(std::isfinite(v));
}

TEST(ViewerWorker, AddBlockIn3D) {
    SimWorker w(config("dam_break_3d"));
    w.playing = false;
    const std::size_t n0 = w.latest()->particles;
    w.start();
    w.add_block();
    auto s = wait_for(w, [n0](const Snapshot& s) { return s.particles > n0; });
    EXPECT_GT(s->particles, n0 + 1000);  // a 12^3 block, minus what overlaps
    w.request_step();
    s = wait_for(w, [](const Snapshot& s) { return s.steps == 1; });
    for (float v : s->fluid) ASSERT_TRUE(std::isfinite(v));
}

TEST(ViewerWorker, ResetWithAnotherMethod) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    const auto g0 = w.latest()->generation;
    w.reset("dam_break_2d", "pbf");
    auto s = wait_for(w, [g0](const Snapshot& s) { return s.generation > g0; });
    ASSERT_TRUE(s->scene);
    EXPECT_EQ(s->scene->method, "pbf");
}

TEST(ViewerWorker, DemoHeightfield) {
    WorkerConfig c;
    c.demo_heightfield = true;
    c.demo_cells = 32;
    SimWorker w(c);
    auto s = w.latest();
    ASSERT_TRUE(s->heightfield_mode);
    EXPECT_TRUE(s->hf.view().valid());
    w.start();
    w.drop(1.0, 1.0, true);
    s = wait_for(w, [](const Snapshot& s) { return s.time > 0.05; });
    for (float h : s->hf.depth) ASSERT_TRUE(std::isfinite(h) && h >= 0.0f);
}

// The 3D mouse: the ray through a pixel passes through the world point drawn at that pixel, and meets
// the plane facing the camera at that point.
TEST(ViewerCamera, RayThroughProjectedPoint) {
    Camera cam;
    cam.is_3d = true;
    cam.target = {0.5f, 0.3f, 0.2f};
    cam.distance = 2.0f;
    cam.yaw = 0.7f;
    cam.pitch = 0.4f;
    const int w = 800, h = 500;
    const Mat4 vp = cam.proj(float(w) / h) * cam.view();
    for (V3 p : {V3{0.5f, 0.3f, 0.2f}, V3{0.7f, 0.1f, 0.4f}, V3{0.2f, 0.6f, 0.0f}}) {
        const float x = vp(0, 0) * p.x + vp(0, 1) * p.y + vp(0, 2) * p.z + vp(0, 3);
        const float y = vp(1, 0) * p.x + vp(1, 1) * p.y + vp(1, 2) * p.z + vp(1, 3);
        const float wc = vp(3, 0) * p.x + vp(3, 1) * p.y + vp(3, 2) * p.z + vp(3, 3);
        const double px = (x / wc + 1.0) * 0.5 * w - 0.5, py = (1.0 - y / wc) * 0.5 * h - 0.5;
        V3 o, d;
        cam.ray(px, py, w, h, o, d);
        const V3 op = p - o;
        const V3 off = op - d * dot(op, d);  // distance from p to the ray
        EXPECT_LT(std::sqrt(dot(off, off)), 1e-4f);
        V3 hit;
        ASSERT_TRUE(intersect_plane(o, d, p, normalized(cam.eye() - cam.target), hit));
        EXPECT_NEAR(hit.x, p.x, 1e-4f);
        EXPECT_NEAR(hit.y, p.y, 1e-4f);
        EXPECT_NEAR(hit.z, p.z, 1e-4f);
    }
}

TEST(ViewerCamera, Ray2DIsTheWorldPoint) {
    Camera cam;
    cam.x0 = 0, cam.y0 = 0, cam.x1 = 2, cam.y1 = 1;
    V3 o, d;
    cam.ray(399.5, 199.5, 800, 400, o, d);  // the centre of an 800x400 view of a 2x1 rectangle
    EXPECT_NEAR(o.x, 1.0f, 1e-5f);
    EXPECT_NEAR(o.y, 0.5f, 1e-5f);
    cam.ray(-0.5, 399.5, 800, 400, o, d);  // bottom-left corner
    EXPECT_NEAR(o.x, 0.0f, 1e-5f);
    EXPECT_NEAR(o.y, 0.0f, 1e-5f);
}

TEST(ViewerMesh, ReadsObjWithNormals) {
    const SurfaceMesh m = read_obj(std::string(EDDY_SOURCE_DIR) + "/tests/viewer/sphere.obj");
    EXPECT_EQ(m.vertices(), 17u * 24u);
    EXPECT_EQ(m.triangles.size(), 3u * 16u * 24u * 2u);
    ASSERT_EQ(m.normals.size(), m.xyz.size());
    for (std::size_t i = 0; i < m.vertices(); ++i) {
        const float* p = &m.xyz[3 * i];
        const float* n = &m.normals[3 * i];
        // outward unit normals of a sphere of radius 0.3 about (0.5, 0.5, 0.5)
        EXPECT_NEAR(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0f, 1e-3f);
        EXPECT_NEAR((p[0] - 0.5f) / 0.3f, n[0], 1e-3f);
    }
}

TEST(ViewerMesh, BadObjNamesFileAndLine) {
    const auto path = std::filesystem::temp_directory_path() / "eddy_view_bad.obj";
    {
        std::ofstream f(path);
        f << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n";
    }
    try {
        read_obj(path);
        FAIL() << "expected an InputError";
    } catch (const eddy::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("line 4"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

// Shallow-water scenes (when eddy's solver is compiled in): drawn as a heightfield, stepped, and a
// click's ink lands in the grid.
TEST(ViewerWorker, ShallowWaterScene) {
    if (!SimWorker::kHasShallowWater) GTEST_SKIP() << "eddy/shallow_water.hpp is not part of this build";
    SimWorker w(config("shallow_drops"));
    w.playing = false;
    auto s = w.latest();
    ASSERT_TRUE(s->heightfield_mode);
    EXPECT_FALSE(s->synthetic);
    ASSERT_TRUE(s->hf.view().valid());
    double ink0 = 0;
    for (float v : s->hf.ink) ink0 += v;
    w.start();
    w.drop(0.5 * s->hf.dx * s->hf.nx, 0.5 * s->hf.dx * s->hf.ny, true);
    for (int i = 0; i < 3; ++i) w.request_step();
    s = wait_for(w, [](const Snapshot& s) { return s.steps == 3; });
    double ink1 = 0;
    for (float v : s->hf.ink) ink1 += v;
    EXPECT_GT(ink1, ink0);
    for (float h : s->hf.depth) ASSERT_TRUE(std::isfinite(h) && h >= 0.0f);
}

// Live settings on a grid: applied in place (the clock goes on), checked, and a bad one changes nothing.
TEST(ViewerWorker, ShallowWaterLiveSettings) {
    if (!SimWorker::kHasShallowWater) GTEST_SKIP() << "eddy/shallow_water.hpp is not part of this build";
    SimWorker w(config("shallow_river_ink"));
    w.playing = false;
    w.start();
    for (int i = 0; i < 2; ++i) w.request_step();
    auto s = wait_for(w, [](const Snapshot& s) { return s.steps == 2; });
    const double t2 = s->time;
    w.apply({{"vorticity", 1.5}, {"advection", "upwind"}}, {0.0, 0.0, -5.0});
    w.request_step();
    s = wait_for(w, [](const Snapshot& s) { return s.steps == 3; });
    ASSERT_TRUE(s->scene);
    EXPECT_EQ(s->scene->settings.at("vorticity").get<double>(), 1.5);
    EXPECT_EQ(s->scene->settings.at("advection").get<std::string>(), "upwind");
    EXPECT_EQ(s->scene->gravity[2], -5.0);
    EXPECT_GT(s->time, t2);  // not restarted
    w.apply({{"precision", "double"}}, {0.0, 0.0, -5.0});  // cannot change while running
    w.request_step();
    s = wait_for(w, [](const Snapshot& s) { return s.steps == 4; });
    EXPECT_EQ(s->scene->settings.at("precision").get<std::string>(), "float");
    EXPECT_NE(s->status.find("precision"), std::string::npos) << s->status;
}

// The live surface: reconstruct_surface on the simulation thread, published with the snapshot.
TEST(ViewerWorker, LiveSurface) {
    if (!SimWorker::kHasSurface) GTEST_SKIP() << "eddy/surface.hpp is not part of this build";
    SimWorker w(config("cube_3d"));
    w.playing = false;
    w.surface = true;
    w.start();
    w.request_step();
    auto s = wait_for(w, [](const Snapshot& s) { return s.steps >= 1 && s.surface != nullptr; });
    ASSERT_TRUE(s->surface);
    EXPECT_GT(s->surface->triangles.size(), 3000u);
    EXPECT_EQ(s->surface->normals.size(), s->surface->xyz.size());
    EXPECT_TRUE(s->status.empty()) << s->status;
}
