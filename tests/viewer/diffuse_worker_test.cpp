// The viewer's whitewater (issue 32) without a window: switched on, the simulation thread steps a
// Whitewater after every fluid step of a small 3D dam break and publishes its diffuse particles; the
// snapshot's counts match the types it carries, the particles are those eddy::step_whitewater_by_id gives
// when stepped beside the same simulation directly (step index = the simulation's step count, the
// scene's gravity), and switching it off drops them. whitewater_view's split by type is checked too.
#include <chrono>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/whitewater.hpp"
#include "sim_worker.hpp"
#include "worker_support.hpp"
#include "whitewater_view.hpp"

using namespace eddy::view;
using eddy::view::test::wait_until;

namespace {

// dam_break_3d at r = 0.01 m (3,375 particles): the falling column's front makes foam and bubbles
// from about step 150 (t = 0.1 s) on.
const std::vector<std::string> kSmall = {"particle_radius=0.01"};
constexpr int kSteps = 260;

}  // namespace

TEST(ViewerWhitewater, DiffuseParticlesAppearWithCountsMatchingTheirTypes) {
    WorkerConfig c;
    c.scene = "dam_break_3d";
    c.threads = 1;
    c.sets = kSmall;
    SimWorker w(c);
    w.playing = false;
    w.whitewater = true;
    w.start();
    for (int i = 0; i < kSteps; ++i) w.request_step();
    auto s = wait_until(w, [](const Snapshot& x) { return x.steps == std::uint64_t(kSteps); });
    ASSERT_EQ(s->steps, std::uint64_t(kSteps));
    ASSERT_TRUE(s->whitewater);
    ASSERT_EQ(s->diffuse.size() % 4, 0u);
    const std::size_t n = s->diffuse.size() / 4;
    EXPECT_GT(n, 10u) << "no whitewater after " << kSteps << " steps of a dam break";
    std::uint64_t by_type[3] = {0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
        const float t = s->diffuse[4 * i + 3];
        ASSERT_TRUE(t == 0.0f || t == 1.0f || t == 2.0f) << "particle " << i << " type " << t;
        ++by_type[int(t)];
        for (int a = 0; a < 3; ++a) {  // inside the tank: the scene's walls stop diffuse particles
            EXPECT_GT(s->diffuse[4 * i + a], s->lo[a] - 1e-4f);
            EXPECT_LT(s->diffuse[4 * i + a], s->hi[a] + 1e-4f);
        }
    }
    EXPECT_EQ(by_type[0], s->whitewater_counts.spray);
    EXPECT_EQ(by_type[1], s->whitewater_counts.foam);
    EXPECT_EQ(by_type[2], s->whitewater_counts.bubbles);
    EXPECT_GT(by_type[1] + by_type[2], 0u);
    // What the window draws: every particle once, in its type's colour group, at its place.
    const auto drawn = diffuse_by_type(s->diffuse);
    for (int t = 0; t < 3; ++t) EXPECT_EQ(drawn[std::size_t(t)].size(), 4 * by_type[t]) << "type " << t;
    std::size_t seen[3] = {0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t t = std::size_t(s->diffuse[4 * i + 3]);
        const float* d = &drawn[t][4 * seen[t]++];
        for (int a = 0; a < 3; ++a) ASSERT_EQ(d[a], s->diffuse[4 * i + a]) << "particle " << i;
    }
    EXPECT_GE(s->whitewater_counts.generated, n);

    // The same whitewater stepped beside the same simulation directly, bit for bit.
    eddy::ExecContext exec(2);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("dam_break_3d"), kSmall), 5'000'000, exec);
    auto& p = std::get<eddy::ParticleSimulation<3>>(sim);
    eddy::Whitewater<3> ww;
    const auto walls = eddy::scene_walls<3>(p.scene, exec);  // as the viewer passes them
    const eddy::Vec3 g{{float(p.scene.gravity[0]), float(p.scene.gravity[1]), float(p.scene.gravity[2])}};
    for (int k = 0; k < kSteps; ++k) {
        const eddy::StepStats st = eddy::step(sim, exec, eddy::next_landing(sim));
        eddy::step_whitewater_by_id<3>(ww, p.fluid.position, p.fluid.velocity, p.fluid.id, float(p.scene.particle_radius),
                                       g, st.dt, p.steps, eddy::WhitewaterSettings{}, exec, &walls);
    }
    ASSERT_EQ(ww.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        for (int a = 0; a < 3; ++a) ASSERT_EQ(s->diffuse[4 * i + a], ww.position[i][a]) << "particle " << i;
        ASSERT_EQ(s->diffuse[4 * i + 3], float(ww.type[i])) << "particle " << i;
    }

    // Off: the next snapshot has none, and stepping on makes none.
    w.whitewater = false;
    w.request_step();
    s = wait_until(w, [](const Snapshot& x) { return x.steps == std::uint64_t(kSteps + 1); });
    EXPECT_FALSE(s->whitewater);
    EXPECT_TRUE(s->diffuse.empty());
}

TEST(ViewerWhitewater, ResetStartsAfresh) {
    WorkerConfig c;
    c.scene = "dam_break_3d";
    c.threads = 1;
    c.sets = kSmall;
    SimWorker w(c);
    w.playing = false;
    w.whitewater = true;
    w.start();
    for (int i = 0; i < kSteps; ++i) w.request_step();
    auto s = wait_until(w, [](const Snapshot& x) { return x.steps == std::uint64_t(kSteps); });
    ASSERT_GT(s->diffuse.size(), 0u);
    const std::uint64_t gen = s->generation;
    w.reset("dam_break_3d", "");
    s = wait_until(w, [gen](const Snapshot& x) { return x.generation != gen; });
    EXPECT_TRUE(s->whitewater);  // still on
    EXPECT_TRUE(s->diffuse.empty());
    EXPECT_EQ(s->whitewater_counts.generated, 0u);
}
