// The viewer's rigid bodies (issue 30) without a window: snapshots carry every body at its state's
// pose (and not as walls), picking hits what is drawn, a drag request pulls a body to the cursor
// through the simulation thread, a drop request adds a body, and the drag's spring feels the same for
// light and heavy bodies, and the filled 2D shapes (a concave polygon too) cover their area.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <thread>

#include <gtest/gtest.h>

#include "bodies_view.hpp"
#include "sim_worker.hpp"
#include "worker_support.hpp"

using namespace eddy::view;
using eddy::view::test::step_and_wait;
using eddy::view::test::wait_until;

namespace {

WorkerConfig config(const std::string& scene, std::vector<std::string> sets = {}) {
    WorkerConfig c;
    c.scene = scene;
    c.sets = std::move(sets);
    c.threads = 1;
    return c;
}

std::string scene_file(const char* name) { return (std::filesystem::path(EDDY_SOURCE_DIR) / "tests/viewer" / name).string(); }

double dist(const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

// The centre of the box around a body's drawn (posed) vertices: for a box or a ball (symmetric about
// their centre of mass), the centre of mass where the window draws it.
V3 drawn_center(const BodyView& b) {
    const auto& xyz = b.geometry->mesh.xyz;
    V3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
    for (std::size_t i = 0; i + 2 < xyz.size(); i += 3) {
        const V3 p = posed(b, {xyz[i], xyz[i + 1], xyz[i + 2]});
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    return (lo + hi) * 0.5f;
}

}  // namespace

TEST(ViewerBodies, SnapshotsDrawEveryBodyAtItsPoseNotAsWalls) {
    for (const char* file : {"bodies_2d.json", "bodies_3d.json"}) {
        SimWorker w(config(scene_file(file)));
        w.playing = false;
        w.start();
        const auto s0 = w.latest();
        ASSERT_EQ(s0->bodies.size(), 2u) << file;
        // 2D: the wall particles drawn are the tank's only (a 0.6 x 0.4 box at r = 5 mm has no more than
        // 2 (0.6 + 0.4) / 2r layers x 3 of them); the bodies' own are not drawn as walls.
        if (s0->dimension == 2) EXPECT_LT(s0->boundary.size() / 4, std::size_t(3 * 2 * (0.6 + 0.4) / 0.01 + 64)) << file;
        EXPECT_TRUE(s0->models.empty()) << file;  // a box and a ball: no models
        const auto s = step_and_wait(w, 200);
        ASSERT_TRUE(s->status.empty()) << s->status;
        ASSERT_EQ(s->bodies.size(), 2u);
        for (const BodyView& b : s->bodies) {
            ASSERT_TRUE(b.geometry);
            EXPECT_FALSE(b.geometry->mesh.empty());
            if (s->dimension == 3) EXPECT_EQ(b.geometry->mesh.normals.size(), b.geometry->mesh.xyz.size());
            else EXPECT_FALSE(b.geometry->outline.empty());
            EXPECT_GT(b.mass, 0.0);
            // The bodies fell into the water and moved: the drawn shape is centred on the state's centre
            // of mass (a box's and a ball's centroid is their centre), not at rest.
            EXPECT_GT(dist(b.state.position, b.rest_center), 1e-4) << file << " body " << b.index;
            const V3 c = drawn_center(b);
            EXPECT_NEAR(c.x, b.state.position[0], 2e-3) << file;
            EXPECT_NEAR(c.y, b.state.position[1], 2e-3) << file;
            EXPECT_NEAR(c.z, b.state.position[2], 2e-3) << file;
        }
        EXPECT_NE(body_color(0), body_color(1));
        w.stop();
    }
}

TEST(ViewerBodies, PickHitsTheDrawnBody) {
    for (const char* file : {"bodies_2d.json", "bodies_3d.json"}) {
        SimWorker w(config(scene_file(file)));
        const auto s = w.latest();
        const bool d3 = s->dimension == 3;
        for (const BodyView& b : s->bodies) {
            const V3 c{float(b.state.position[0]), float(b.state.position[1]), float(b.state.position[2])};
            // 3D: a ray from above, straight down through the centre; 2D: the centre itself.
            // (a little off the centre: a ray exactly through a sphere's pole vertex would test only edges)
            const V3 o = c + V3{0.004f, d3 ? 1.0f : 0.0f, d3 ? 0.003f : 0.0f}, d{0, -1, 0};
            const auto hit = pick_body(s->bodies, o, d, d3);
            ASSERT_TRUE(hit) << file;
            EXPECT_EQ(s->bodies[hit->body].index, b.index) << file;
            // The grabbed point, back through the body's frame, is where the ray entered (the top face).
            EXPECT_NEAR(hit->local[0], 0.004, 1e-4);
            if (d3) EXPECT_GT(hit->local[1], 0.03);
        }
        // Beside every body: nothing.
        const auto miss = pick_body(s->bodies, d3 ? V3{0.45f, 1.0f, 0.05f} : V3{0.3f, 0.35f, 0.0f}, V3{0, -1, 0}, d3);
        EXPECT_FALSE(miss) << file;
    }
}

TEST(ViewerBodies, DragLoadIsASpringDamperScaledByMass) {
    BodyDrag d;
    d.active = true;
    d.local = {0.1, 0.0, 0.0};
    d.target = {0.5, 1.0, 0.0};
    eddy::BodyState s;
    s.position = {0.0, 1.0, 0.0};
    const auto light = drag_load(d, s, 1.0, 2), heavy = drag_load(d, s, 10.0, 2);
    // Target 0.4 m to the right of the grabbed point (0.1, 1): F = m w^2 0.4, at the same acceleration.
    EXPECT_NEAR(light.force[0], 1.0 * 900.0 * 0.4, 1e-9);
    EXPECT_NEAR(heavy.force[0], 10.0 * 900.0 * 0.4, 1e-9);
    EXPECT_NEAR(light.force[1], 0.0, 1e-12);
    EXPECT_NEAR(light.torque[2], 0.0, 1e-12);  // pulled along its lever arm: no torque
    // Turned a quarter about z, the grabbed point is above the centre: the same pull turns it back.
    s.orientation = {std::cos(std::numbers::pi / 4), 0, 0, std::sin(std::numbers::pi / 4)};
    const auto turned = drag_load(d, s, 1.0, 2);
    EXPECT_LT(turned.torque[2], 0.0);
    // Moving: damping against the grabbed point's velocity (v + omega x r).
    s.orientation = {1, 0, 0, 0};
    d.target = {0.1, 1.0, 0.0};
    s.velocity = {0.0, 0.5, 0.0};
    s.angular_velocity = {0.0, 0.0, 2.0};  // the point at r = (0.1, 0) moves at (0, 0.2)
    const auto damped = drag_load(d, s, 2.0, 2);
    EXPECT_NEAR(damped.force[1], -2.0 * 2.0 * 30.0 * 0.7, 1e-9);
    EXPECT_NEAR(damped.force[0], 0.0, 1e-9);
}

TEST(ViewerBodies, DragRequestPullsABodyToTheCursor) {
    // The floating box, pulled 10 cm up by a point 3 cm right of its centre: it leaves the water and
    // hangs from the cursor (g / w^2 = 1.1 cm below it, tilted by its weight about the grabbed point).
    SimWorker w(config(scene_file("bodies_2d.json")));
    w.playing = false;
    w.start();
    auto s = step_and_wait(w, 5);
    ASSERT_EQ(s->bodies.size(), 2u);
    const BodyView b0 = s->bodies[0];
    const V3 c{float(b0.state.position[0]), float(b0.state.position[1]), 0.0f};
    auto hit = pick_body(s->bodies, c + V3{0.03f, 0.0f, 0.0f}, V3{0, 0, -1}, false);
    ASSERT_TRUE(hit);
    ASSERT_EQ(hit->body, 0u);
    BodyDrag d;
    d.active = true;
    d.body = 0;
    d.local = hit->local;
    d.target = {hit->point.x, hit->point.y + 0.1, 0.0};  // 10 cm up, out of the water
    w.set_body_drag(d);
    s = step_and_wait(w, 1500);
    ASSERT_TRUE(s->status.empty()) << s->status;
    EXPECT_TRUE(s->bodies[0].dragged);
    const BodyView& b = s->bodies[0];
    const V3 grabbed = posed(b, {float(b.rest_center[0] + d.local[0]), float(b.rest_center[1] + d.local[1]), 0.0f});
    std::printf("dragged body: from (%.4f, %.4f) to (%.4f, %.4f) at t = %.3f s; grabbed point %.4f m from the cursor\n",
                b0.state.position[0], b0.state.position[1], b.state.position[0], b.state.position[1], s->time,
                std::hypot(grabbed.x - d.target[0], grabbed.y - d.target[1]));
    EXPECT_GT(b.state.position[1] - b0.state.position[1], 0.05);  // its centre: less, as it tilts
    EXPECT_LT(std::hypot(grabbed.x - d.target[0], grabbed.y - d.target[1]), 0.02);  // from 0.1 m
    // The other body was not dragged.
    EXPECT_FALSE(s->bodies[1].dragged);
    // Released: no load from the drag any more; the body keeps (about) where it is, no longer pulled.
    d.active = false;
    w.set_body_drag(d);
    s = step_and_wait(w, 5);
    EXPECT_FALSE(s->bodies[0].dragged);
    w.stop();
}

TEST(ViewerBodies, DropRequestAddsABody) {
    for (const char* file : {"bodies_2d.json", "bodies_3d.json"}) {
        SimWorker w(config(scene_file(file)));
        w.playing = false;
        w.start();
        const auto s0 = w.latest();
        const bool d3 = s0->dimension == 3;
        const double r = s0->particle_radius;
        const std::size_t particles = s0->particles;
        // A ball into the water, away from the other bodies.
        w.drop_body(true, {d3 ? 0.25 : 0.32, d3 ? 0.06 : 0.07, d3 ? 0.4 : 0.0});
        auto s = wait_until(w, [&](const Snapshot& x) { return x.bodies.size() == 3 || !x.status.empty(); });
        ASSERT_EQ(s->bodies.size(), 3u) << file << ": " << s->status;
        EXPECT_NE(s->status.find("dropped body 2"), std::string::npos) << s->status;
        const BodyView& b = s->bodies[2];
        ASSERT_TRUE(b.geometry);
        EXPECT_EQ(b.geometry->shape, d3 ? "sphere" : "circle");
        const double R = 0.5 * SimWorker::kDropSizeRadii * r;
        const double volume = d3 ? 4.0 / 3.0 * std::numbers::pi * R * R * R : std::numbers::pi * R * R;
        EXPECT_NEAR(b.mass, SimWorker::kDropDensity * volume, 1e-3 * SimWorker::kDropDensity * volume) << file;
        EXPECT_LT(s->particles, particles) << file;  // the water inside it was taken out
        // It moves with the others.
        s = step_and_wait(w, 50);
        EXPECT_EQ(s->status.find("diverged"), std::string::npos) << s->status;
        EXPECT_EQ(s->steps, 50u);
        ASSERT_EQ(s->bodies.size(), 3u);
        // A box right on the first body: refused, said in the status, nothing added.
        const auto on = s->bodies[0].state.position;
        w.drop_body(false, on);
        s = wait_until(w, [&](const Snapshot& x) { return x.status.find("cannot drop") != std::string::npos || x.bodies.size() != 3; });
        EXPECT_EQ(s->bodies.size(), 3u) << file;
        EXPECT_NE(s->status.find("cannot drop a box"), std::string::npos) << s->status;
        w.stop();
    }
}

TEST(ViewerBodies, FilledShapesCoverTheirArea) {
    // A concave polygon (a U: its notch must stay empty), a box and a circle: the drawn triangles'
    // area is the shape's (the circle's: its 48-gon's).
    const auto file = std::filesystem::temp_directory_path() / "eddy_viewer_bodies_u.json";
    {
        std::ofstream f(file);
        f << R"({ "name": "u", "dimension": 2, "method": "wcsph", "particle_radius": 0.005, "gravity": [0, -9.81],
  "boundaries": [ { "shape": "box", "min": [0, 0], "max": [0.6, 0.4] } ],
  "bodies": [ { "shape": "polygon", "points": [[0.1,0.2],[0.25,0.2],[0.25,0.3],[0.2,0.3],[0.2,0.25],[0.15,0.25],[0.15,0.3],[0.1,0.3]],
                "density": 500 },
              { "shape": "box", "min": [0.35, 0.2], "max": [0.45, 0.26], "density": 300 },
              { "shape": "circle", "center": [0.5, 0.3], "radius": 0.04, "density": 300 } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.6, 0.1] } ] })";
    }
    SimWorker w(config(file.string()));
    const auto s = w.latest();
    ASSERT_EQ(s->bodies.size(), 3u);
    auto area = [](const BodyGeometry& g) {
        double a = 0.0;
        const auto& x = g.mesh.xyz;
        for (std::size_t t = 0; t + 2 < g.mesh.triangles.size(); t += 3) {
            const auto i = 3 * g.mesh.triangles[t], j = 3 * g.mesh.triangles[t + 1], k = 3 * g.mesh.triangles[t + 2];
            a += 0.5 * std::fabs(double(x[j] - x[i]) * (x[k + 1] - x[i + 1]) - double(x[k] - x[i]) * (x[j + 1] - x[i + 1]));
        }
        return a;
    };
    EXPECT_NEAR(area(*s->bodies[0].geometry), 0.15 * 0.1 - 0.05 * 0.05, 1e-6);
    EXPECT_NEAR(area(*s->bodies[1].geometry), 0.1 * 0.06, 1e-6);
    EXPECT_NEAR(area(*s->bodies[2].geometry), 0.5 * 48 * 0.04 * 0.04 * std::sin(2 * std::numbers::pi / 48), 1e-6);
    // The notch is not the body's: a press there grabs nothing; on an arm of the U, the U.
    EXPECT_FALSE(pick_body(s->bodies, {0.175f, 0.28f, 0.0f}, {0, 0, -1}, false));
    const auto arm = pick_body(s->bodies, {0.125f, 0.28f, 0.0f}, {0, 0, -1}, false);
    ASSERT_TRUE(arm);
    EXPECT_EQ(arm->body, 0u);
    std::filesystem::remove(file);
}
