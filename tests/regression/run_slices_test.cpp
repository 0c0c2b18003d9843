// Slices of the one run loop and its one check of options (issue 41): eddy::step_slice, for particles and
// grids, steps as `eddy run` does (the viewer, the page and Python's step() go through it), lands on and
// stops at an `until`, stops for the run's reasons with the run's message; eddy::check_run_options refuses
// what a run cannot do, in the words of the front end that asked (RunOptions::spelling).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

namespace {

class RunSlices : public eddy::test::TempDirTest {};

std::string hash_of_run(const std::filesystem::path& out, const std::string& scene, int steps) {
    const auto r = eddy::test::run_cli(fmt::format("run {} --steps {} --format csv -q -j 2 --out {}", scene, steps, out.string()));
    EXPECT_EQ(r.code, 0) << r.output;
    return nlohmann::json::parse(std::ifstream(out / "summary.json"))["state_hash"].get<std::string>();
}

// `steps` steps in slices of uneven sizes (as a viewer's frames or the page's budgets cut them).
template <class Sim>
void step_in_slices(Sim& sim, const eddy::ExecContext& exec, int steps) {
    int taken = 0, slice = 1;
    while (taken < steps) {
        eddy::SliceLimits l;
        l.max_steps = std::min(slice, steps - taken);
        const auto r = eddy::step_slice(sim, exec, l);
        ASSERT_TRUE(r.diverged.empty()) << r.diverged;
        ASSERT_EQ(r.steps, l.max_steps);
        taken += r.steps;
        slice = slice % 13 + 4;
    }
}

TEST_F(RunSlices, ParticleSlicesAreEddyRunsSteps) {
    const std::string expected = hash_of_run(dir / "run", "pbf_dam_break_2d", 90);
    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("pbf_dam_break_2d")), 5'000'000, exec);
    step_in_slices(sim, exec, 90);
    EXPECT_EQ(fmt::format("{:016x}", eddy::state_hash(sim)), expected);
}

TEST_F(RunSlices, GridSlicesAreEddyRunsSteps) {
    const std::string expected = hash_of_run(dir / "run", "shallow_dam_break_wet", 70);
    eddy::ExecContext exec(1);
    auto sim = eddy::make_shallow_water(eddy::load_scene(eddy::resolve_scene("shallow_dam_break_wet")));
    step_in_slices(sim, exec, 70);
    EXPECT_EQ(fmt::format("{:016x}", eddy::state_hash(sim)), expected);
}

// until: the slice lands on it exactly and stops there; the next slice takes no step.
TEST(RunSlice, LandsOnUntilAndStops) {
    eddy::ExecContext exec(1);
    auto sim = eddy::make_simulation(eddy::load_scene(eddy::resolve_scene("dfsph_dam_break_2d")), 5'000'000, exec);
    eddy::SliceLimits l;
    l.until = 0.0371;
    l.fps = 100.0;
    eddy::SliceResult r = eddy::step_slice(sim, exec, l);
    EXPECT_TRUE(r.reached_end);
    EXPECT_GT(r.steps, 3);
    EXPECT_EQ(std::visit([](const auto& s) { return s.time; }, sim), 0.0371);
    r = eddy::step_slice(sim, exec, l);
    EXPECT_TRUE(r.reached_end);
    EXPECT_EQ(r.steps, 0);

    auto grid = eddy::make_shallow_water(eddy::load_scene(eddy::resolve_scene("shallow_dam_break_wet")));
    const eddy::GridSliceResult g = eddy::step_slice(grid, exec, l);
    EXPECT_TRUE(g.reached_end);
    EXPECT_DOUBLE_EQ(std::visit([](const auto& s) { return s.time(); }, grid.solver), 0.0371);
}

// A grid that goes wrong stops the slice with the run's line, after the step that went wrong.
TEST(RunSlice, GridDivergenceReadsAsTheRunsLine) {
    eddy::ExecContext exec(1);
    auto grid = eddy::make_shallow_water(eddy::load_scene(eddy::resolve_scene("shallow_dam_break_wet")));
    eddy::step_slice(grid, exec, eddy::SliceLimits{.max_steps = 5});
    std::visit(
        [](auto& s) {
            auto& d = s.grid().depth;
            d[d.size() / 2] = std::numeric_limits<float>::quiet_NaN();
        },
        grid.solver);
    int seen = 0;
    const eddy::GridSliceResult r =
        eddy::step_slice(grid, exec, eddy::SliceLimits{.max_steps = 50}, [&](const eddy::ShallowWaterStats&) { ++seen; });
    EXPECT_EQ(r.steps, 1);
    EXPECT_EQ(seen, 1);
    EXPECT_EQ(r.diverged.rfind("diverged at step 6 (t = ", 0), 0u) << r.diverged;
    EXPECT_NE(r.diverged.find("a depth or velocity is not finite"), std::string::npos) << r.diverged;
}

std::string refusal(const eddy::Scene& scene, double time, const eddy::RunOptions& o) {
    try {
        eddy::check_run_options(scene, time, o);
    } catch (const eddy::InputError& e) {
        return e.what();
    }
    return "";
}

// One check, each front end's words: RunOptions' names by default, a caller's spelling when given.
TEST(RunOptionsCheck, RefusesInTheCallersWords) {
    const eddy::Scene particles2 = eddy::load_scene(eddy::resolve_scene("dfsph_dam_break_2d"));
    const eddy::Scene grid = eddy::load_scene(eddy::resolve_scene("shallow_dam_break_wet"));
    eddy::RunOptions o;
    EXPECT_EQ(refusal(particles2, 0.0, o), "");
    EXPECT_EQ(refusal(grid, 0.0, o), "");
    o.until = -1;
    EXPECT_EQ(refusal(particles2, 0.0, o), "until = -1: allowed: 0 (the scene's duration) or a time > 0 and <= 1e9 (s)");
    o.until = 0, o.fps = std::nan("");
    EXPECT_EQ(refusal(grid, 0.0, o), "fps = nan: allowed: 0 (the scene's output.fps) or frames per second > 0 and <= 1e6");
    o.fps = 0, o.formats = {"vti"};
    EXPECT_EQ(refusal(particles2, 0.0, o), "formats = vti is not a particle format; allowed: vtk, csv, ply");
    EXPECT_EQ(refusal(grid, 0.0, o), "");
    o.formats = {"vtk"};
    EXPECT_EQ(refusal(grid, 0.0, o), "formats = vtk is not a grid format; allowed: vti, csv, obj, ply");
    o.formats.clear(), o.mesh = true;
    EXPECT_NE(refusal(grid, 0.0, o).find("mesh: " + grid.where() + " is a grid"), std::string::npos);
    o.mesh = false, o.whitewater = true;
    EXPECT_NE(refusal(grid, 0.0, o).find("is a grid"), std::string::npos);
    o.whitewater = false, o.mesh_attributes = {"velocity"};
    EXPECT_EQ(refusal(particles2, 0.0, o).rfind("mesh_attributes = velocity: needs mesh with mesh_format = ply", 0), 0u);
    o.mesh_attributes.clear(), o.up = eddy::UpAxis::z;
    EXPECT_EQ(refusal(particles2, 0.0, o), "up = z: a 2D scene is written in the x-y plane (z = 0); allowed: y");
    o.up = eddy::UpAxis::y;
    EXPECT_NE(refusal(particles2, particles2.duration + 1.0, o).find("the simulation is at t = "), std::string::npos);
    o.until = particles2.duration + 2.0;
    EXPECT_EQ(refusal(particles2, particles2.duration + 1.0, o), "");

    // A front end's words: a context before every message, its names and its values.
    o.until = -2;
    o.spelling.context = "front: ";
    o.spelling.given = [](std::string_view k, std::string_view v) { return fmt::format("<{}:{}>", k, v); };
    o.spelling.name = [](std::string_view k) { return fmt::format("<{}>", k); };
    EXPECT_EQ(refusal(particles2, 0.0, o), "front: <until:-2>: allowed: 0 (the scene's duration) or a time > 0 and <= 1e9 (s)");
    o.until = 0, o.up = eddy::UpAxis::z;
    o.spelling.value = [](std::string_view k, std::string_view v) { return fmt::format("[{}={}]", k, v); };
    EXPECT_EQ(refusal(particles2, 0.0, o), "front: <up:z>: a 2D scene is written in the x-y plane (z = 0); allowed: [up=y]");
    o.up = eddy::UpAxis::y, o.mesh_attributes = {"velocity"};
    o.spelling.suggest = [](std::string_view k, std::string_view v) { return fmt::format("{{{}:{}}}", k, v); };
    EXPECT_EQ(refusal(particles2, 0.0, o), "front: <mesh_attributes:velocity>: needs {mesh:true} with {mesh_format:ply} or "
                                           "[mesh_format=vtp] (OBJ files have no per-vertex fields)");
}

// The command line and Python say the same thing in their own words (python/tests check Python's).
TEST_F(RunSlices, TheCommandLineRefusesInItsWords) {
    auto r = eddy::test::run_cli(fmt::format("run shallow_dam_break_wet --format vtk -q --out {}", (dir / "a").string()));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--format vtk is not a grid format; allowed: vti, csv, obj, ply"), std::string::npos) << r.output;
    r = eddy::test::run_cli(fmt::format("run dfsph_dam_break_2d --mesh --interpolate-attributes velocity -q --out {}",
                                        (dir / "b").string()));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--interpolate-attributes velocity: needs --mesh with --mesh-format ply or vtp"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "b")) << "refused before anything was written";
}

}  // namespace
