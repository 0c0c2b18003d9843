// One clock for every front end (issue 41): `eddy run` lands a step on every frame time k / fps and on its
// end; the viewer and Python's step() step on the same clock (eddy::next_landing, eddy::FrameLanding). A
// scene stepped directly on next_landing, as the viewer's worker steps it (ViewerWorker.* compares the
// worker with this loop), and by `eddy run --steps N` gives the same state_hash, for every particle
// method, with bodies and emitters; the steps land on the frame times and on a duration between them.
// Python's loop is checked against `eddy run` by python/tests/test_one_clock.py.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

namespace {

class OneClock : public eddy::test::TempDirTest {};

struct Case {
    const char* scene;
    std::vector<std::string> sets;
    int steps;
};

TEST_F(OneClock, NextLandingStepsAreEddyRunsSteps) {
    const std::vector<Case> cases = {
        {"dfsph_dam_break_2d", {}, 120},
        {"pbf_dam_break_2d", {}, 60},
        {"clavet_dam_break_2d", {}, 200},
        {"floating_boxes_2d", {}, 60},
        {"river_channel_2d", {}, 100},
        {"dam_break_3d", {"particle_radius=0.02"}, 90},
    };
    for (const Case& c : cases) {
        std::string sets;
        for (const auto& s : c.sets) sets += " --set " + s;
        const auto out = dir / c.scene;
        const auto r = eddy::test::run_cli(fmt::format("run {}{} --steps {} --format csv -q -j 2 --out {}", c.scene, sets,
                                                       c.steps, out.string()));
        ASSERT_EQ(r.code, 0) << r.output;
        const auto summary = nlohmann::json::parse(std::ifstream(out / "summary.json"));

        eddy::ExecContext exec(1);
        const eddy::Scene scene = eddy::load_scene(eddy::resolve_scene(c.scene), c.sets);
        auto sim = eddy::make_simulation(scene, 5'000'000, exec);
        int landed = 0;
        for (int k = 0; k < c.steps; ++k) {
            const double target = eddy::next_landing(sim);
            eddy::step(sim, exec, target);
            const double t = std::visit([](const auto& s) { return s.time; }, sim);
            landed += t == target;
        }
        EXPECT_EQ(fmt::format("{:016x}", eddy::state_hash(sim)), summary["state_hash"].get<std::string>()) << c.scene;
        EXPECT_GE(landed, 2) << c.scene << ": the steps crossed too few frame times to show the landing";
        EXPECT_EQ(summary["steps"].get<int>(), c.steps) << c.scene;
    }
}

// The landing rule itself: the first frame time after the clock, k / fps rounded once (a typed 0.15 at
// 20 fps is frame 3's time), the end when it comes first, never a zero-length step.
TEST(FrameLanding, LandsOnFrameTimesAndTheEnd) {
    eddy::FrameLanding l{20.0, 0.0};
    EXPECT_EQ(l.target(0.0), 0.05);
    EXPECT_EQ(l.target(0.1), 0.15);  // at frame 2 exactly: the next one
    EXPECT_EQ(l.target(0.15), 0.2);
    EXPECT_EQ(l.target(0.149), 0.15);
    EXPECT_EQ(l.target(0.15 - 1e-12), 0.2);  // within 1e-9 of frame 3: that frame is reached
    l.end = 0.13;
    EXPECT_EQ(l.target(0.1), 0.13);
    EXPECT_FALSE(l.reached_end(0.12));
    EXPECT_TRUE(l.reached_end(0.13));
    EXPECT_EQ(eddy::frame_time(0.0, 20.0, 3.0), 0.15);
    for (double fps : {24.0, 25.0, 30.0, 60.0, 1000.0})
        for (int k = 0; k < 5000; ++k) {
            const double t = eddy::frame_time(0.0, fps, k);
            const eddy::FrameLanding each{fps, 0.0};
            EXPECT_EQ(each.target(t), eddy::frame_time(0.0, fps, k + 1)) << fps << " " << k;
        }
}

}  // namespace
