// The viewer's simulation thread, without a window: stepping through it gives the same state as
// stepping directly (drawing reads copies), settings and gravity apply live, bad settings leave the
// simulation as it was, the mouse's brush acts within its radius only, added blocks add particles, snapshots
// carry the walls' loads (issue 28) and the load arrow is drawn from the pivot along the force.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "eddy/error.hpp"
#include "eddy/load_display.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/wall_loads.hpp"
#include "camera.hpp"
#include "mesh.hpp"
#include "sim_worker.hpp"
#include "worker_support.hpp"

using namespace eddy::view;
using eddy::kArrowMaxWeights;
using eddy::load_arrow;
using eddy::RecentLoads;
using eddy::thick_lines_2d;
using eddy::view::test::step_and_wait;
using eddy::view::test::wait_until;

namespace {

WorkerConfig config(const char* scene) {
    WorkerConfig c;
    c.scene = scene;
    c.threads = 1;
    return c;
}

// The wall particles of a model's object, taken back to the model's rest frame by the drawn pose,
// lie at about r and 3r from the model on the wall's side (the layers of sample_wall): the model is
// drawn where the simulation has it.
template <int D>
void expect_walls_on_model(const eddy::BoundarySet<D>& b, const ModelView& m, const eddy::MeshShape<D>& shape, float r) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (b.object[i] != m.object) continue;
        ++n;
        V3 x{b.position[i][0], b.position[i][1], D == 3 ? b.position[i][D - 1] : 0.0f};
        const V3 t{m.pose(0, 3), m.pose(1, 3), m.pose(2, 3)};
        x = x - t;
        eddy::Vec<D> rest;  // R^T (x - t)
        for (int a = 0; a < D; ++a) rest[a] = m.pose(0, a) * x.x + m.pose(1, a) * x.y + m.pose(2, a) * x.z;
        // Signed distance on the wall's side: inside a solid, outside a container.
        const double d = (m.solid ? -1.0 : 1.0) * shape.signed_distance(rest);
        ASSERT_GT(d, 0.5 * r) << "wall particle " << i;
        ASSERT_LT(d, 3.5 * r) << "wall particle " << i;
    }
    EXPECT_GT(n, 20u);  // the object has wall particles to check
}

}  // namespace

TEST(ViewerWorker, SteppingMatchesDirectStepping) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    for (int i = 0; i < 5; ++i) w.request_step();
    auto s = wait_until(w, [](const Snapshot& s) { return s.steps == 5; });
    ASSERT_EQ(s->steps, 5u);

    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("dam_break_2d")), 5'000'000, exec);
    for (int i = 0; i < 5; ++i) eddy::step(sim, exec, eddy::next_landing(sim));
    const auto& f = std::get<eddy::ParticleSimulation<2>>(sim).fluid;
    ASSERT_EQ(s->fluid.size(), 4 * f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
        ASSERT_EQ(s->fluid[4 * i], f.position[i][0]);
        ASSERT_EQ(s->fluid[4 * i + 1], f.position[i][1]);
    }
}

// The panel's "Step passes" (issue 41): a batch's steps by named pass, as summary.json's "passes" says after a
// run: DFSPH's own passes in their order, each a share of the step's time.
TEST(ViewerWorker, SnapshotHoldsTheStepsPasses) {
    SimWorker w(config("dfsph_dam_break_2d"));
    w.playing = false;
    w.start();
    auto s = step_and_wait(w, 3);
    ASSERT_EQ(s->steps, 3u);
    std::vector<std::string> names;
    for (const auto& [name, ms] : s->pass_ms) {
        names.push_back(name);
        EXPECT_GE(ms, 0.0) << name;
    }
    for (const char* pass : {"neighbours", "densities_and_factors", "divergence_solve", "density_solve", "positions"})
        EXPECT_NE(std::find(names.begin(), names.end(), pass), names.end()) << pass;
}

// Across frame times (issue 41): the worker's steps land where eddy run's do (next_landing), so 60 PBF steps
// (two frame times at 50 fps) hold the same particles and clock as the direct loop OneClock.* checks against
// `eddy run --steps 60`.
TEST(ViewerWorker, SteppingLandsOnEddyRunsFrameTimes) {
    SimWorker w(config("pbf_dam_break_2d"));
    w.playing = false;
    w.start();
    constexpr int kSteps = 60;
    for (int i = 0; i < kSteps; ++i) w.request_step();
    auto s = wait_until(w, [](const Snapshot& s) { return s.steps == kSteps; });
    ASSERT_EQ(s->steps, std::uint64_t(kSteps));

    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("pbf_dam_break_2d")), 5'000'000, exec);
    int landed = 0;
    for (int i = 0; i < kSteps; ++i) {
        const double target = eddy::next_landing(sim);
        eddy::step(sim, exec, target);
        landed += std::get<eddy::ParticleSimulation<2>>(sim).time == target;
    }
    EXPECT_GE(landed, 2);  // 60 steps reach 0.052 s: frames 0.02 and 0.04 s (50 fps)
    const auto& p = std::get<eddy::ParticleSimulation<2>>(sim);
    EXPECT_EQ(s->time, p.time);
    ASSERT_EQ(s->fluid.size(), 4 * p.fluid.size());
    for (std::size_t i = 0; i < p.fluid.size(); ++i) {
        ASSERT_EQ(s->fluid[4 * i], p.fluid.position[i][0]) << i;
        ASSERT_EQ(s->fluid[4 * i + 1], p.fluid.position[i][1]) << i;
    }
}

// The live budget (issue 45: dam_break_3d played at 2-3 fps on 2 cores): its 27,000 fluid and 46,304 wall
// particles play at a coarser radius within the budget, with a warning; 0, or a radius the user set, keeps
// the scene's own.
TEST(ViewerWorker, LiveBudgetCoarsensLargeScenes) {
    WorkerConfig c = config("dam_break_3d");
    c.live_particles = 20'000;
    SimWorker w(c);
    const auto s = w.latest();
    ASSERT_TRUE(s);
    EXPECT_LT(s->particles, 20'000u);
    EXPECT_GT(s->particles, 2'000u);
    EXPECT_NE(s->status.find("--live-particles 0"), std::string::npos) << s->status;
    c.live_particles = 0;
    EXPECT_EQ(SimWorker(c).latest()->particles, 27'000u);
    c.live_particles = 20'000;
    c.sets = {"particle_radius=0.005"};
    const auto kept = SimWorker(c).latest();
    EXPECT_EQ(kept->particles, 27'000u);
    EXPECT_EQ(kept->status.find("live play"), std::string::npos) << kept->status;
    WorkerConfig small = config("dam_break_2d");
    small.live_particles = 20'000;
    EXPECT_TRUE(SimWorker(small).latest()->status.empty());
}

TEST(ViewerWorker, LiveSettingsAndGravity) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    nlohmann::json bad = {{"cfl", -1.0}};
    w.apply(bad, {0, -9.81, 0});
    auto s = wait_until(w, [](const Snapshot& s) { return !s.status.empty(); });
    EXPECT_NE(s->status.find("cfl"), std::string::npos) << s->status;
    w.apply(nlohmann::json{{"cfl", 0.2}}, {0, 9.81, 0});  // gravity upwards
    s = wait_until(w, [](const Snapshot& s) { return s.status.empty() && s.scene && s.scene->gravity[1] > 0; });
    EXPECT_EQ(s->scene->settings.at("cfl").get<double>(), 0.2);
    // Particles at rest accelerate upwards now: the mean height rises.
    for (int i = 0; i < 20; ++i) w.request_step();
    s = wait_until(w, [](const Snapshot& s) { return s.steps == 20; });
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
    m.radius = 2.0f * s0->kernel_h;
    m.rate = 200.0f;
    w.set_mouse(m);
    w.start();
    w.request_step();
    auto s = wait_until(w, [](const Snapshot& s) { return s.steps == 1; });
    const float R = m.radius;
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
    auto s = wait_until(w, [n0](const Snapshot& s) { return s.particles > n0; });
    EXPECT_GT(s->particles, n0);
    EXPECT_NE(s->status.find("added"), std::string::npos);
    for (int i = 0; i < 3; ++i) w.request_step();
    s = wait_until(w, [](const Snapshot& s) { return s.steps == 3; });
    for (float v : s->fluid) ASSERT_TRUE(std::isfinite(v));
}

TEST(ViewerWorker, AddBlockIn3D) {
    SimWorker w(config("dam_break_3d"));
    w.playing = false;
    const std::size_t n0 = w.latest()->particles;
    w.start();
    w.add_block();
    auto s = wait_until(w, [n0](const Snapshot& s) { return s.particles > n0; });
    EXPECT_GT(s->particles, n0 + 1000);  // a 12^3 block, minus what overlaps
    w.request_step();
    s = wait_until(w, [](const Snapshot& s) { return s.steps == 1; });
    for (float v : s->fluid) ASSERT_TRUE(std::isfinite(v));
}

TEST(ViewerWorker, ResetWithAnotherMethod) {
    SimWorker w(config("dam_break_2d"));
    w.playing = false;
    w.start();
    const auto g0 = w.latest()->generation;
    w.reset("dam_break_2d", "pbf");
    auto s = wait_until(w, [g0](const Snapshot& s) { return s.generation > g0; });
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
    s = wait_until(w, [](const Snapshot& s) { return s.time > 0.05; });
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
    s = wait_until(w, [](const Snapshot& s) { return s.steps == 3; });
    double ink1 = 0;
    for (float v : s->hf.ink) ink1 += v;
    EXPECT_GT(ink1, ink0);
    for (float h : s->hf.depth) ASSERT_TRUE(std::isfinite(h) && h >= 0.0f);
    // The panel's "Step passes" for a grid (issue 42): the grid's own passes, in the order a step runs them.
    std::vector<std::string> names;
    for (const auto& [name, ms] : s->pass_ms) {
        names.push_back(name);
        EXPECT_GE(ms, 0.0) << name;
    }
    const std::vector<std::string> grid_passes{"sources", "advect", "height", "overshooting", "velocity"};
    EXPECT_EQ(names, grid_passes);
}

// Live settings on a grid: applied in place (the clock goes on), checked, and a bad one changes nothing.
TEST(ViewerWorker, ShallowWaterLiveSettings) {
    if (!SimWorker::kHasShallowWater) GTEST_SKIP() << "eddy/shallow_water.hpp is not part of this build";
    SimWorker w(config("shallow_river_ink"));
    w.playing = false;
    w.start();
    for (int i = 0; i < 2; ++i) w.request_step();
    auto s = wait_until(w, [](const Snapshot& s) { return s.steps == 2; });
    const double t2 = s->time;
    w.apply({{"vorticity", 1.5}, {"advection", "upwind"}}, {0.0, 0.0, -5.0});
    w.request_step();
    s = wait_until(w, [](const Snapshot& s) { return s.steps == 3; });
    ASSERT_TRUE(s->scene);
    EXPECT_EQ(s->scene->settings.at("vorticity").get<double>(), 1.5);
    EXPECT_EQ(s->scene->settings.at("advection").get<std::string>(), "upwind");
    EXPECT_EQ(s->scene->gravity[2], -5.0);
    EXPECT_GT(s->time, t2);  // not restarted
    w.apply({{"precision", "double"}}, {0.0, 0.0, -5.0});  // cannot change while running
    w.request_step();
    s = wait_until(w, [](const Snapshot& s) { return s.steps == 4; });
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
    auto s = wait_until(w, [](const Snapshot& s) { return s.steps >= 1 && s.surface != nullptr; });
    ASSERT_TRUE(s->surface);
    EXPECT_GT(s->surface->triangles.size(), 3000u);
    EXPECT_EQ(s->surface->normals.size(), s->surface->xyz.size());
    EXPECT_TRUE(s->status.empty()) << s->status;
}

// The live surface with the panel's "anisotropic" box: the same state meshed with Yu & Turk's kernels
// gives another mesh (the worker passes the setting through), still closed (3 indices per triangle).
TEST(ViewerWorker, LiveSurfaceAnisotropic) {
    if (!SimWorker::kHasSurface) GTEST_SKIP() << "eddy/surface.hpp is not part of this build";
    SimWorker w(config("cube_3d"));
    w.playing = false;
    w.surface = true;
    w.start();
    w.request_step();
    const auto iso = wait_until(w, [](const Snapshot& s) { return s.steps >= 1 && s.surface != nullptr; });
    ASSERT_TRUE(iso->surface);
    w.surface_anisotropic = true;
    w.refresh();
    const auto an = wait_until(w, [&](const Snapshot& s) {
        return s.surface != nullptr && s.surface_version != iso->surface_version;
    });
    ASSERT_TRUE(an->surface);
    EXPECT_EQ(an->steps, iso->steps);  // the same state
    EXPECT_GT(an->surface->triangles.size(), 3000u);
    EXPECT_EQ(an->surface->triangles.size() % 3, 0u);
    EXPECT_NE(an->surface->xyz, iso->surface->xyz);
    EXPECT_TRUE(an->status.empty()) << an->status;
}

// Users' models: the snapshot carries each model's rest geometry (shared, copied once) and its pose
// at the snapshot's time. mixer_3d's paddle turns at 6 rad/s about y through the origin: between two
// snapshots every vertex turns by 6 (t1 - t0) about that axis.
TEST(ViewerModels, MixerPaddleTurnsWithItsMotion) {
    SimWorker w(config("mixer_3d"));
    w.playing = false;
    const auto s0 = w.latest();
    ASSERT_EQ(s0->models.size(), 1u);
    const ModelView& m0 = s0->models[0];
    EXPECT_EQ(m0.object, 1u);  // the second entry of "boundaries"
    EXPECT_TRUE(m0.solid);
    EXPECT_TRUE(m0.moving);
    EXPECT_TRUE(m0.closed);
    ASSERT_TRUE(m0.mesh);
    // The paddle's triangles, as the scene loaded them (three vertices each, with unit normals).
    const auto scene = eddy::load_scene(eddy::resolve_scene("mixer_3d"));
    const auto* shape = eddy::model_shape<3>(scene.boundaries[1].model);
    ASSERT_NE(shape, nullptr);
    ASSERT_EQ(m0.mesh->triangles.size(), 3 * shape->mesh().cells.size());
    ASSERT_EQ(m0.mesh->normals.size(), m0.mesh->xyz.size());
    for (std::size_t t = 0; t < shape->mesh().cells.size(); ++t)
        for (int k = 0; k < 3; ++k) {
            const auto& v = shape->mesh().vertices[shape->mesh().cells[t][k]];
            const V3 p = m0.apply({m0.mesh->xyz[9 * t + 3 * k], m0.mesh->xyz[9 * t + 3 * k + 1], m0.mesh->xyz[9 * t + 3 * k + 2]});
            ASSERT_NEAR(p.x, v[0], 1e-6f);  // t = 0: at rest
            ASSERT_NEAR(p.y, v[1], 1e-6f);
            ASSERT_NEAR(p.z, v[2], 1e-6f);
        }

    w.start();
    for (int i = 0; i < 30; ++i) w.request_step();
    const auto s1 = wait_until(w, [](const Snapshot& s) { return s.steps == 30; });
    ASSERT_EQ(s1->models.size(), 1u);
    const ModelView& m1 = s1->models[0];
    EXPECT_EQ(m1.mesh.get(), m0.mesh.get());  // the rest geometry is shared, not copied
    const double angle = 6.0 * (s1->time - s0->time);
    ASSERT_GT(angle, 1e-3);
    const float c = float(std::cos(angle)), sn = float(std::sin(angle));
    float moved = 0;
    const auto& xyz = m0.mesh->xyz;
    for (std::size_t i = 0; i + 2 < xyz.size(); i += 3) {
        const V3 rest{xyz[i], xyz[i + 1], xyz[i + 2]};
        const V3 p0 = m0.apply(rest), p1 = m1.apply(rest);
        // Counter-clockwise about +y: x' = x cos + z sin, z' = z cos - x sin.
        ASSERT_NEAR(p1.x, p0.x * c + p0.z * sn, 1e-5f);
        ASSERT_NEAR(p1.y, p0.y, 1e-6f);
        ASSERT_NEAR(p1.z, p0.z * c - p0.x * sn, 1e-5f);
        const V3 d = p1 - p0;
        moved = std::max(moved, std::sqrt(dot(d, d)));
    }
    EXPECT_GT(moved, 1e-4f);
    // The paddle's own wall particles are not drawn (3D draws no wall particles); the tank's edges are.
    EXPECT_TRUE(s1->boundary.empty());
    EXPECT_FALSE(s1->wall_lines.empty());
    // The drawn paddle is where the simulation's paddle is: its wall particles, stepped directly to the
    // same step, lie in their layers (r, 3r) beside the posed mesh.
    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(scene, 5'000'000, exec);
    for (int i = 0; i < 30; ++i) eddy::step(sim, exec, eddy::next_landing(sim));
    const auto& ps = std::get<eddy::ParticleSimulation<3>>(sim);
    ASSERT_EQ(ps.time, s1->time);
    expect_walls_on_model(ps.boundary, m1, *shape, float(scene.particle_radius));
}

// A static model: drawn at rest, the same geometry in every snapshot; the box around it keeps its edges.
TEST(ViewerModels, CupIsStatic) {
    SimWorker w(config("cup_pour_3d"));
    w.playing = false;
    const auto s0 = w.latest();
    ASSERT_EQ(s0->models.size(), 1u);
    EXPECT_FALSE(s0->models[0].moving);
    EXPECT_TRUE(s0->models[0].solid);
    ASSERT_TRUE(s0->models[0].mesh);
    EXPECT_GT(s0->models[0].mesh->triangles.size(), 300u);
    EXPECT_EQ(s0->wall_lines.size(), 12u * 6u);  // the box only: 12 edges
    w.start();
    for (int i = 0; i < 3; ++i) w.request_step();
    const auto s1 = wait_until(w, [](const Snapshot& s) { return s.steps == 3; });
    ASSERT_EQ(s1->models.size(), 1u);
    EXPECT_EQ(s1->models[0].mesh.get(), s0->models[0].mesh.get());
    EXPECT_EQ(s1->models[0].pose.m, Mat4::identity().m);
}

// 2D: hourglass_2d's polygon comes as an outline (its 12 corners), its wall particles are not drawn,
// and the band drawn along it lies outside the polygon (the wall's side of a container).
TEST(ViewerModels, HourglassPolygon) {
    SimWorker w(config("hourglass_2d"));
    const auto s = w.latest();
    ASSERT_EQ(s->models.size(), 1u);
    const ModelView& m = s->models[0];
    EXPECT_EQ(m.object, 0u);
    EXPECT_FALSE(m.solid);
    EXPECT_FALSE(m.moving);
    ASSERT_TRUE(m.outline);
    EXPECT_FALSE(m.mesh);
    ASSERT_EQ(m.outline->size(), 12u);
    const auto scene = eddy::load_scene(eddy::resolve_scene("hourglass_2d"));
    for (const auto& q : scene.boundaries[0].model.points) {
        bool found = false;
        for (std::size_t i = 0; i + 2 < m.outline->xyz.size(); i += 3)
            found = found || (std::abs(m.outline->xyz[i] - q[0]) < 1e-6 && std::abs(m.outline->xyz[i + 1] - q[1]) < 1e-6);
        EXPECT_TRUE(found) << "corner " << q[0] << ", " << q[1];
    }
    EXPECT_TRUE(s->boundary.empty()) << s->boundary.size() / 4 << " wall particles drawn";
    EXPECT_EQ(outline_lines(*m.outline, m.pose).size(), 12u * 6u);
    const auto band = outline_band(*m.outline, m.pose, m.solid, 0.006f);
    ASSERT_GE(band.size(), 12u * 2u * 9u);
    const auto* shape = eddy::model_shape<2>(scene.boundaries[0].model);
    ASSERT_NE(shape, nullptr);
    for (std::size_t i = 0; i + 8 < band.size(); i += 9) {
        const eddy::Vec2 centre{{(band[i] + band[i + 3] + band[i + 6]) / 3, (band[i + 1] + band[i + 4] + band[i + 7]) / 3}};
        ASSERT_FALSE(shape->inside(centre)) << "band triangle " << i / 9 << " inside the container";
    }
}

// Analytic walls that move (wave_maker_3d's piston) have their edges drawn where the motion puts them:
// keyframes 0 -> 8 cm along x in the first 0.5 s.
TEST(ViewerModels, MovingBoxEdgesFollowTheMotion) {
    SimWorker w(config("wave_maker_3d"));
    w.playing = false;
    const auto s0 = w.latest();
    ASSERT_EQ(s0->wall_lines.size(), 2u * 12u * 6u);  // the tank, then the piston
    w.start();
    for (int i = 0; i < 10; ++i) w.request_step();
    const auto s1 = wait_until(w, [](const Snapshot& s) { return s.steps == 10; });
    ASSERT_EQ(s1->wall_lines.size(), s0->wall_lines.size());
    const float shift = float(0.08 * s1->time / 0.5);
    ASSERT_GT(shift, 0.0f);
    for (std::size_t i = 0; i < s0->wall_lines.size(); i += 3) {
        const float expect = i < 72 ? 0.0f : shift;
        ASSERT_NEAR(s1->wall_lines[i] - s0->wall_lines[i], expect, 1e-5f) << "coordinate " << i;
        ASSERT_EQ(s1->wall_lines[i + 1], s0->wall_lines[i + 1]);
        ASSERT_EQ(s1->wall_lines[i + 2], s0->wall_lines[i + 2]);
    }
}

// A spinning polygon (2D): its outline turns with the motion, its wall particles are not drawn as
// particles (the box's are), and the drawn outline is where the simulation's wall particles are.
TEST(ViewerModels, SpinningPolygon) {
    const auto path = std::filesystem::temp_directory_path() / "eddy_view_spinner_2d.json";
    {
        std::ofstream f(path);
        f << R"({ "name": "spinner_2d", "dimension": 2, "method": "wcsph", "particle_radius": 0.004,
  "gravity": [0, -9.81], "duration": 1.0,
  "boundaries": [
    { "shape": "box", "min": [0, 0], "max": [0.4, 0.3] },
    { "shape": "polygon", "solid": true, "points": [[0.15, 0.08], [0.25, 0.08], [0.25, 0.12], [0.15, 0.12]],
      "motion": { "angular_velocity": 4 } } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.4, 0.06] } ] })";
    }
    SimWorker w(config(path.string().c_str()));
    w.playing = false;
    w.start();
    for (int i = 0; i < 40; ++i) w.request_step();
    const auto s = wait_until(w, [](const Snapshot& s) { return s.steps == 40; });
    ASSERT_EQ(s->models.size(), 1u);
    const ModelView& m = s->models[0];
    EXPECT_EQ(m.object, 1u);
    EXPECT_TRUE(m.moving);
    ASSERT_TRUE(m.outline);
    // About the polygon's centre (0.2, 0.1), counter-clockwise by 4 t.
    const double a = 4.0 * s->time;
    ASSERT_GT(a, 1e-3);
    const V3 p = m.apply({0.25f, 0.08f, 0.0f});
    EXPECT_NEAR(p.x, 0.2 + 0.05 * std::cos(a) + 0.02 * std::sin(a), 1e-5);
    EXPECT_NEAR(p.y, 0.1 + 0.05 * std::sin(a) - 0.02 * std::cos(a), 1e-5);

    const auto scene = eddy::load_scene(path);
    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(scene, 5'000'000, exec);
    for (int i = 0; i < 40; ++i) eddy::step(sim, exec, eddy::next_landing(sim));
    const auto& ps = std::get<eddy::ParticleSimulation<2>>(sim);
    ASSERT_EQ(ps.time, s->time);
    std::size_t box_walls = 0;
    for (auto o : ps.boundary.object) box_walls += o == 0;
    EXPECT_EQ(s->boundary.size(), 4 * box_walls);  // the box's wall particles only
    expect_walls_on_model(ps.boundary, m, *eddy::model_shape<2>(scene.boundaries[1].model), float(scene.particle_radius));
    std::filesystem::remove(path);
}

// ---- The walls' loads (issue 28) ----------------------------------------------------------------

// The arrow of a load: from the pivot along the force, a fluid weight `reference` long, capped at
// kArrowMaxWeights weights; a head of two strokes a fifth of the length long; nothing without a force or
// a weight to scale by.
TEST(ViewerLoads, ArrowFromPivotAlongTheForce) {
    const std::array<double, 3> pivot{0.2, 0.2, 0.0};
    const double W = 784.0, ref = 0.1;
    auto a = load_arrow(pivot, {0.0, -W, 0.0}, W, ref, 2);
    ASSERT_EQ(a.size(), 18u);  // shaft and two head strokes
    EXPECT_FLOAT_EQ(a[0], 0.2f);
    EXPECT_FLOAT_EQ(a[1], 0.2f);
    EXPECT_FLOAT_EQ(a[3], 0.2f);
    EXPECT_FLOAT_EQ(a[4], 0.1f);  // one weight down: ref below the pivot
    for (int s : {1, 2}) {  // the strokes start at the tip and go back up, one to each side
        EXPECT_FLOAT_EQ(a[6 * s], 0.2f);
        EXPECT_FLOAT_EQ(a[6 * s + 1], 0.1f);
        const float dx = a[6 * s + 3] - 0.2f, dy = a[6 * s + 4] - 0.1f;
        EXPECT_NEAR(std::hypot(dx, dy), 0.2 * ref, 1e-6);
        EXPECT_GT(dy, 0.0f);
        EXPECT_EQ(a[6 * s + 5], 0.0f);
    }
    EXPECT_LT((a[9] - 0.2f) * (a[15] - 0.2f), 0.0f);
    // Twice the weight, twice as long; ten weights: capped.
    EXPECT_FLOAT_EQ(load_arrow(pivot, {2 * W, 0.0, 0.0}, W, ref, 2)[3], float(0.2 + 2 * ref));
    EXPECT_FLOAT_EQ(load_arrow(pivot, {10 * W, 0.0, 0.0}, W, ref, 2)[3], float(0.2 + kArrowMaxWeights * ref));
    // 2D ignores a z component; nothing to draw without a force, a weight or a finite number.
    EXPECT_EQ(load_arrow(pivot, {0.0, 0.0, W}, W, ref, 2).size(), 0u);
    EXPECT_EQ(load_arrow(pivot, {0.0, -W, 0.0}, 0.0, ref, 2).size(), 0u);
    EXPECT_EQ(load_arrow(pivot, {std::nan(""), -W, 0.0}, W, ref, 2).size(), 0u);
    // 3D, along z: the head's strokes are as long and perpendicular to nothing in particular, but in a
    // plane with the shaft, symmetric about it.
    a = load_arrow({0, 0, 0}, {0.0, 0.0, 0.5 * W}, W, ref, 3);
    ASSERT_EQ(a.size(), 18u);
    EXPECT_FLOAT_EQ(a[5], float(0.5 * ref));
    EXPECT_NEAR(a[9] + a[15], 0.0, 1e-7);
    EXPECT_NEAR(a[10] + a[16], 0.0, 1e-7);
    EXPECT_NEAR(std::hypot(a[9], a[10], a[11] - a[5]), 0.2 * 0.5 * ref, 1e-6);
}

TEST(ViewerLoads, ThickLinesCoverTheSegment) {
    const std::vector<float> seg{0.0f, 0.0f, 0.0f, 0.3f, 0.4f, 0.0f};  // 0.5 long
    const auto t = thick_lines_2d(seg, 0.01f);
    ASSERT_EQ(t.size(), 18u);  // two triangles
    double area = 0;
    for (int k = 0; k < 2; ++k) {
        const float* p = &t[9 * k];
        area += 0.5 * std::abs((p[3] - p[0]) * (p[7] - p[1]) - (p[6] - p[0]) * (p[4] - p[1]));
    }
    EXPECT_NEAR(area, 0.5 * 0.01, 1e-7);
}

// The snapshot's mean keeps the steps covering the last kWindow seconds, weighted by dt.
TEST(ViewerLoads, RecentLoadsWindow) {
    RecentLoads r;
    EXPECT_TRUE(r.mean().empty());
    auto load = [](double fy) {
        std::vector<eddy::ObjectLoad> l(1);
        l[0].force[1] = fy;
        return l;
    };
    r.add(load(100.0), 0.06);  // leaves the window once the later steps cover 0.1 s
    r.add(load(1.0), 0.03);
    r.add(load(2.0), 0.03);
    r.add(load(4.0), 0.06);  // the last three cover 0.12 s, without the second 0.09 s: it stays
    EXPECT_EQ(r.steps(), 3u);
    EXPECT_NEAR(r.mean()[0].force[1], (1.0 * 0.03 + 2.0 * 0.03 + 4.0 * 0.06) / 0.12, 1e-12);
    r.add(std::vector<eddy::ObjectLoad>(2), 0.01);  // another count of objects: starts afresh
    EXPECT_EQ(r.steps(), 1u);
    EXPECT_EQ(r.mean().size(), 2u);
}

// The worker's snapshot carries the loads of the simulation it steps: the dt-weighted mean of each
// step's boundary.load over the last 0.1 s, as a direct stepping computes it, the same whatever steps
// each snapshot covered; the tank carries its water's weight, and the fluid's weight is n m g.
TEST(ViewerLoads, SnapshotCarriesTheTanksLoad) {
    WorkerConfig c = config("hydrostatic_2d");
    c.sets = {"particle_radius=0.005"};
    SimWorker w(c);
    w.playing = false;
    auto s0 = w.latest();
    EXPECT_TRUE(s0->loads.empty());  // no step yet
    ASSERT_EQ(s0->pivots.size(), 1u);
    EXPECT_FLOAT_EQ(s0->pivots[0][0], 0.25f);  // the box's centre
    EXPECT_FLOAT_EQ(s0->pivots[0][1], 0.25f);
    w.start();
    const int steps = 600;
    for (int i = 0; i < steps; ++i) w.request_step();
    const auto s = wait_until(w, [&](const Snapshot& s) { return s.steps == std::uint64_t(steps); });
    ASSERT_EQ(s->loads.size(), 1u);

    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(
        eddy::load_scene(eddy::resolve_scene("hydrostatic_2d"), {"particle_radius=0.005"}), 5'000'000, exec);
    auto& p = std::get<eddy::ParticleSimulation<2>>(sim);
    std::vector<std::pair<double, eddy::ObjectLoad>> per_step;
    for (int i = 0; i < steps; ++i) {
        const auto st = eddy::step(sim, exec, eddy::next_landing(sim));
        ASSERT_EQ(p.boundary.load.size(), 1u);
        per_step.emplace_back(st.dt, p.boundary.load[0]);
    }
    std::size_t first = per_step.size() - 1;  // the fewest last steps covering 0.1 s
    double covered = per_step[first].first;
    while (first > 0 && covered < RecentLoads::kWindow) covered += per_step[--first].first;
    eddy::LoadAverage avg;
    for (std::size_t k = first; k < per_step.size(); ++k) avg.add({per_step[k].second}, per_step[k].first);
    const auto expect = avg.mean(1)[0];
    for (int a = 0; a < 3; ++a) {
        EXPECT_EQ(s->loads[0].force[a], expect.force[a]) << a;
        EXPECT_EQ(s->loads[0].torque[a], expect.torque[a]) << a;
    }
    const double weight = double(p.fluid.size()) * p.fluid.mass * 9.81;
    EXPECT_NEAR(s->fluid_weight, weight, 1e-9 * weight);
    EXPECT_NEAR(s->loads[0].force[1], -weight, 0.01 * weight);
    EXPECT_LT(std::abs(s->loads[0].force[0]), 0.01 * weight);
    EXPECT_EQ(s->loads[0].force[2], 0.0);
}

// A moving object's pivot moves with it: wave_maker_3d's piston (keyframes, 8 cm along x in 0.5 s).
TEST(ViewerLoads, PivotFollowsTheMotion) {
    SimWorker w(config("wave_maker_3d"));
    w.playing = false;
    const auto s0 = w.latest();
    ASSERT_EQ(s0->pivots.size(), 2u);
    w.start();
    for (int i = 0; i < 10; ++i) w.request_step();
    const auto s1 = wait_until(w, [](const Snapshot& s) { return s.steps == 10; });
    ASSERT_EQ(s1->pivots.size(), 2u);
    const float shift = float(0.08 * s1->time / 0.5);
    ASSERT_GT(shift, 0.0f);
    EXPECT_EQ(s1->pivots[0], s0->pivots[0]);  // the tank stays
    EXPECT_NEAR(s1->pivots[1][0] - s0->pivots[1][0], shift, 1e-5f);
    EXPECT_EQ(s1->pivots[1][1], s0->pivots[1][1]);
    EXPECT_EQ(s1->pivots[1][2], s0->pivots[1][2]);
    // WCSPH gathers loads in 3D too: one per object, finite.
    ASSERT_EQ(s1->loads.size(), 2u);
    for (const auto& l : s1->loads)
        for (int a = 0; a < 3; ++a) EXPECT_TRUE(std::isfinite(l.force[a]) && std::isfinite(l.torque[a]));
}
