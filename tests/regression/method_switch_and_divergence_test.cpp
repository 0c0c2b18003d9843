// Issue 12: position-based methods report divergence as WCSPH does (a speed no motion of the scene can
// produce: SpeedBound), a scene switched to another method drops the settings that mean something
// else there, and a rotating stirrer acts on Clavet and PBF.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

using namespace eddy;
using eddy::test::TempDirTest;

namespace {

std::filesystem::path scene_file(const char* name) {
    return std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / (std::string(name) + ".json");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class Divergence : public TempDirTest {
protected:
    // Runs `name` with the overrides to `until` into dir; the run must diverge at its `step`-th step or later.
    RunResult diverges(const char* name, const std::vector<std::string>& sets, double until) {
        ExecContext exec(2);
        Simulation sim = make_simulation(load_scene(scene_file(name), sets), 1'000'000, exec);
        RunOptions opts;
        opts.out_dir = dir;
        opts.until = until;
        opts.formats = {"csv"};
        const RunResult res = run(sim, opts, exec);
        EXPECT_EQ(res.status, "diverged") << name << ": " << res.message;
        EXPECT_EQ(res.exit_code, kExitDiverged);
        // The message says when and why; the summary agrees, and the frames it lists are there.
        EXPECT_TRUE(contains(res.message, "diverged at step ")) << res.message;
        EXPECT_TRUE(contains(res.message, "(t = ")) << res.message;
        // A position-based method may be caught by its collapse check first (issue 29).
        EXPECT_TRUE(contains(res.message, "faster than any motion of the scene") ||
                    contains(res.message, "the fluid collapsed"))
            << res.message;
        std::ifstream in(dir / "summary.json");
        const nlohmann::json summary = nlohmann::json::parse(in);
        EXPECT_EQ(summary["status"], "diverged");
        EXPECT_FALSE(res.frames.empty());
        for (const auto& f : res.frames)
            for (const auto& file : f.files) EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
        return res;
    }
};

// The seed's 1/60 s step with the automatic stiffness: Clavet's relaxation throws the fluid at 50 m/s
// in its first step, in a 1 m container (free fall over it: 4.4 m/s). It used to finish "completed".
TEST_F(Divergence, ClavetAtTheSeedsFrameStepIsCaught) {
    const RunResult res = diverges("clavet_circle_2d", {"settings.time_step=0.0166667"}, 2.0);
    std::printf("%s\n", res.message.c_str());
    EXPECT_TRUE(contains(res.message, "10 times 4.43 m/s")) << res.message;
}

// PBF at 50 ms steps (its automatic step is 5 ms here) blows up within a few steps.
TEST_F(Divergence, PbfWithTenTimesItsStepIsCaught) {
    const RunResult res = diverges("pbf_dam_break_2d", {"settings.time_step=0.05"}, 2.0);
    std::printf("%s\n", res.message.c_str());
}

// The bound: free fall over the scene's height plus twice the walls' fastest point (the stirrer's tip
// turns at 2 rad/s, 0.35 m from its pivot) plus the initial velocities; none without a container.
TEST(SpeedBound, FromTheScenesHeightWallsAndInitialVelocities) {
    ExecContext exec(1);
    {
        Simulation sim = make_simulation(load_scene(scene_file("rotating_circle_2d")), 1'000'000, exec);
        const SpeedBound b = std::get<ParticleSimulation<2>>(sim).speed_bound;
        EXPECT_NEAR(b.free_fall, std::sqrt(2.0 * 9.81 * 1.0), 1e-3);
        EXPECT_NEAR(b.walls, 2.0 * std::hypot(0.35, 0.03), 0.02);  // the bar's corners (wall particles inside it)
        EXPECT_EQ(b.initial, 0.0f);
        EXPECT_NEAR(b.limit(), kSpeedBoundFactor * (b.free_fall + 2.0f * b.walls), 1e-4);
    }
    {
        nlohmann::json j = {{"name", "thrown"}, {"dimension", 2}, {"particle_radius", 0.01}, {"gravity", {0, 0}},
                            {"settings", {{"speed_of_sound", 20}}},
                            {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 1}}}}},
                            {"fluids", {{{"shape", "box"}, {"min", {0.4, 0.4}}, {"max", {0.6, 0.6}}, {"velocity", {3, 4}}}}}};
        Simulation sim = make_simulation(parse_scene(j, "thrown"), 1'000'000, exec);
        const SpeedBound b = std::get<ParticleSimulation<2>>(sim).speed_bound;
        EXPECT_EQ(b.free_fall, 0.0f);  // no gravity
        EXPECT_NEAR(b.initial, 5.0f, 1e-5);
        j["boundaries"] = nlohmann::json::array();  // nothing to land on: no bound
        j["gravity"] = {0, -9.81};
        Simulation open = make_simulation(parse_scene(j, "thrown"), 1'000'000, exec);
        EXPECT_EQ(std::get<ParticleSimulation<2>>(open).speed_bound.limit(), 0.0f);
    }
}

// `--set method=clavet` on a WCSPH scene: rest_density (kg/m^3 to WCSPH, a neighbour count to Clavet)
// is dropped with a warning, speed_of_sound (m/s in both) kept; what --set gives is the new method's.
TEST(MethodSwitch, DropsSettingsThatMeanSomethingElse) {
    const Scene s = load_scene(scene_file("rotating_circle_2d"), {"method=clavet"});
    EXPECT_EQ(s.method, "clavet");
    EXPECT_FALSE(s.settings.contains("rest_density"));
    EXPECT_EQ(s.settings.value("speed_of_sound", 0.0), 25.0);
    ASSERT_EQ(s.warnings.size(), 1u);
    EXPECT_TRUE(contains(s.warnings[0], "dropped the scene's wcsph setting(s) rest_density")) << s.warnings[0];
    EXPECT_TRUE(contains(s.warnings[0], "kept speed_of_sound")) << s.warnings[0];

    // Given on the command line (before or after the method): kept, and it is Clavet's.
    const Scene given = load_scene(scene_file("rotating_circle_2d"), {"settings.rest_density=30", "method=clavet"});
    EXPECT_EQ(given.settings.value("rest_density", 0.0), 30.0);
    EXPECT_TRUE(given.warnings.empty());

    // The same unit in both tables: nothing dropped (WCSPH -> DFSPH keeps rest_density and cfl).
    const Scene same = load_scene(scene_file("dam_break_2d"), {"method=dfsph"});
    EXPECT_EQ(same.settings.value("rest_density", 0.0), 1000.0);
    EXPECT_EQ(same.settings.value("cfl", 0.0), 0.4);
    EXPECT_TRUE(same.warnings.empty());

    // A key the new method does not have, given on the command line: an error naming it.
    ExecContext exec(1);
    eddy::test::expect_input_error(
        [&] {
            make_simulation(load_scene(scene_file("rotating_circle_2d"), {"method=pbf", "settings.speed_of_sound=20"}),
                            1'000'000, exec);
        },
        {"speed_of_sound", "allowed keys"});
}

TEST(MethodSwitch, TheCliSaysWhatWasDropped) {
    eddy::test::TempDir tmp("method_switch_cli");
    const auto r = eddy::test::run_cli("run rotating_circle_2d --set method=clavet --until 0.01 -q --out " +
                                       (tmp.path() / "out").string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "rest_density")) << r.output;
}

// The stirrer of rotating_circle_2d (a bar turning at 2 rad/s) acts on Clavet and PBF run with
// `--set method=...`: no particle ever inside the bar, the fluid turned with it (its angular momentum
// about the pivot, zero by symmetry with the bar at rest), nothing diverges. Before the method switch
// dropped WCSPH's rest_density, Clavet took 1000 as its neighbour count and reached 2,870 m/s.
TEST(MovingWalls, StirrerBlocksAndTurnsClavetAndPbf) {
    for (const char* method : {"clavet", "pbf"}) {
        auto turn = [&](double omega) {
            ExecContext exec(2);
            Simulation sim = make_simulation(
                load_scene(scene_file("rotating_circle_2d"),
                           {std::string("method=") + method, "boundaries.1.angular_velocity=" + std::to_string(omega)}),
                1'000'000, exec);
            auto& s = std::get<ParticleSimulation<2>>(sim);
            const float dt_min = std::visit([](const auto& m) { return m.min_dt(); }, s.method);
            int inside = 0;
            while (s.time < 0.4) {
                const StepStats st = step(sim, exec, 0.4);
                EXPECT_EQ(step_divergence(st, dt_min), "") << method;
                // The bar in its own frame: |x| < 0.35, |y| < 0.03 about the pivot (0.5, 0.5).
                const double a = omega * s.time, c = std::cos(a), sn = std::sin(a);
                for (const auto& x : s.fluid.position) {
                    const double px = x[0] - 0.5, py = x[1] - 0.5, bx = c * px + sn * py, by = -sn * px + c * py;
                    inside += std::abs(bx) < 0.35 && std::abs(by) < 0.03;
                }
            }
            double L = 0.0;  // angular momentum per particle mass about the pivot (m^2/s)
            for (std::size_t i = 0; i < s.fluid.size(); ++i) {
                const auto& x = s.fluid.position[i];
                const auto& v = s.fluid.velocity[i];
                L += (x[0] - 0.5) * v[1] - (x[1] - 0.5) * v[0];
            }
            return std::pair<int, double>(inside, L / double(s.fluid.size()));
        };
        const auto [inside, L] = turn(2.0);
        const auto [inside_still, L_still] = turn(0.0);
        std::printf("%s: stirred: %d particle-steps inside the bar, L = %.4f m^2/s; bar at rest: L = %.4f m^2/s\n", method,
                    inside, L, L_still);
        EXPECT_EQ(inside, 0) << method;
        EXPECT_EQ(inside_still, 0) << method;
        EXPECT_GT(L, 0.01) << method;
        EXPECT_LT(std::abs(L_still), 0.2 * L) << method;
    }
}
