// Issue 29, items 11 and 13 (part): thread counts, file and model fluids that no method can start
// from, closed polygons, keyframes. Each is bad input (one line naming the fluid or flag, exit 2) or
// works; none may surface later as a divergence (exit 3), a crash or a misleading message.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using Result = eddy::test::CommandResult;
using eddy::test::run_cli;

class InputChecks : public eddy::test::TempDirTest {
protected:
    // A 2D tank [0, 1] x [0, 1] with `fluid` as its only fluid entry.
    fs::path scene_2d(const std::string& name, const std::string& fluid, const std::string& extra_boundary = "") {
        return write(name, R"({"name": "t", "dimension": 2, "particle_radius": 0.01, "duration": 0.02,
            "output": {"fps": 50, "formats": ["csv"]},
            "boundaries": [{"shape": "box", "min": [0, 0], "max": [1, 1]})" +
                               extra_boundary + R"(],
            "fluids": [)" + fluid + "]}");
    }
    // `eddy run` in the test's folder, on the scene's name: messages name the files as given (the
    // command line cuts an error at 300 characters, and the test folders' names are long).
    Result run(const fs::path& scene, const std::string& more = "") {
        const std::string cmd = "cd '" + dir.string() + "' && " + EDDY_CLI + " run " + scene.filename().string() +
                                " --quiet --threads 1 --out out " + more + " 2>&1";
        return eddy::test::run_shell(cmd);
    }
};

// One line, exit code 2, naming every needle.
void expect_bad_input(const Result& r, std::initializer_list<std::string> needles) {
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    for (const auto& n : needles) EXPECT_NE(r.output.find(n), std::string::npos) << "'" << n << "' not in: " << r.output;
}

}  // namespace

// ---- item 11: thread counts --------------------------------------------------------------------

// ExecContext, the last line of defence behind every caller: 1e5 threads crashed in the arena's
// teardown, -5 was taken as "every core".
TEST(ThreadCount, ExecContextTakesZeroToTheMaximumAndRefusesTheRest) {
    eddy::test::expect_input_error([] { eddy::ExecContext e(100000); }, {"threads = 100000", "0 (every core) or 1 to 4096"});
    eddy::test::expect_input_error([] { eddy::ExecContext e(-5); }, {"threads = -5", "allowed"});
    eddy::test::expect_input_error([] { (void)eddy::checked_threads(1000000000LL, "--threads"); },
                                   {"--threads = 1000000000", "1 to 4096"});
    EXPECT_GE(eddy::ExecContext(0).threads(), 1);
    EXPECT_EQ(eddy::ExecContext(eddy::kMaxThreads).threads(), eddy::kMaxThreads);
    EXPECT_EQ(eddy::ExecContext(3).threads(), 3);
}

TEST_F(InputChecks, ThreadsFlagTakesZeroToTheMaximum) {
    for (const char* bad : {"5000", "-5", "100000", "1.5"})
        expect_bad_input(run_cli(std::string("run dam_break_2d --quiet --steps 1 --out ") + (dir / "o").string() +
                                 " --threads " + bad),
                         {std::string("--threads: '") + bad + "' is not allowed",
                          "allowed: 0 (every core) or a whole number from 1 to 4096"});
    expect_bad_input(run_cli("mesh x.csv --out m.obj --threads 100000"), {"--threads: '100000'", "1 to 4096"});
    const Result r = run_cli("run dam_break_2d --quiet --steps 1 --threads 0 --format csv --out " + (dir / "o").string());
    EXPECT_EQ(r.code, 0) << r.output;
    // More threads than the machine has: the arena gets the machine's (oneTBB printed a warning).
    const Result most = run_cli("run dam_break_2d --quiet --steps 1 --threads 4096 --format csv --out " + (dir / "m").string());
    EXPECT_EQ(most.code, 0) << most.output;
    EXPECT_EQ(most.output, "");
}

// ---- item 13: fluids read from particle files --------------------------------------------------

// A single particle, or two at one point, gave "cannot derive the speed of sound".
TEST_F(InputChecks, AFileFluidOfOneParticleOrCoincidentParticlesIsNamed) {
    write("one.csv", "x,y,vx,vy\n0.5,0.5,0,0\n");
    expect_bad_input(run(scene_2d("one.json", R"({"shape": "file", "file": "one.csv"})")),
                     {"one.json: fluids[0] (one.csv): holds only 1 particle; allowed: at least 2 particles"});
    write("same.csv", "x,y,vx,vy\n0.5,0.5,0,0\n0.3,0.5,0,0\n0.5,0.5,1,0\n");
    expect_bad_input(run(scene_2d("same.json", R"({"shape": "file", "file": "same.csv"})")),
                     {"same.json: fluids[0] (same.csv): particles 0 and 2 are both at (0.5, 0.5)"});
}

// A NaN velocity in a particle file ran and diverged (exit 3).
TEST_F(InputChecks, ANonFiniteVelocityInAFileFluidIsBadInput) {
    write("nan.csv", "x,y,vx,vy\n0.5,0.5,0,0\n0.3,0.5,nan,0\n");
    expect_bad_input(run(scene_2d("nan.json", R"({"shape": "file", "file": "nan.csv"})")),
                     {"nan.json: fluids[0] (nan.csv): particle 1 has velocity (nan, 0); allowed: finite numbers"});
    write("inf.csv", "x,y,vx,vy\n0.5,0.5,0,1e39\n0.3,0.5,0,0\n");
    expect_bad_input(run(scene_2d("inf.json", R"({"shape": "file", "file": "inf.csv"})")),
                     {"inf.csv): particle 0 has velocity (0, inf)"});
    write("fast.csv", "x,y,vx,vy\n0.5,0.5,0,0\n0.3,0.5,0,-1e15\n");
    expect_bad_input(run(scene_2d("fast.json", R"({"shape": "file", "file": "fast.csv"})")),
                     {"fast.csv): particle 1 has velocity (0, -1e+15)", "a speed of at most 3e8 m/s"});
    // In the scene itself (and through --set) a velocity is checked as every vector is, and one whose
    // first step overflows floats (NaN from 1e15 m/s: exit 3) is refused with the other speeds above c.
    const fs::path block = scene_2d("v.json", R"({"shape": "box", "min": [0, 0], "max": [0.2, 0.2]})");
    expect_bad_input(run(block, "--set 'fluids.0.velocity=[1e400, 0]'"), {"--set", "out of range"});
    expect_bad_input(run(block, "--set 'fluids.0.velocity=[1e15, 0]'"),
                     {"v.json: fluids[0].velocity: a speed of 1e+15 m/s; allowed: at most 3e8 m/s"});
}

// All outside the tank: ran and diverged at once ("faster than the speed of sound", exit 3). Some
// outside, or inside an obstacle: dropped, as a block is clipped, and said so.
TEST_F(InputChecks, FileFluidsAreClippedAgainstContainersAndSolids) {
    write("far.csv", "x,y,vx,vy\n5.5,0.5,0,0\n5.3,0.5,0,0\n5.3,0.7,0,0\n");
    expect_bad_input(run(scene_2d("far.json", R"({"shape": "file", "file": "far.csv"})")),
                     {"far.json: fluids[0] (far.csv): all 3 particles lie outside every container",
                      "the particles span [5.3, 0.5] to [5.5, 0.7] m", "boundaries[0] (box) spans [0, 0] to [1, 1] m"});
    // Two outside the tank, one inside the obstacle [0.6, 0.8]^2: three of six dropped.
    write("some.csv", "x,y,vx,vy\n0.1,0.1,0,0\n0.12,0.1,0,0\n0.14,0.12,0,0\n-0.5,0.1,0,0\n0.1,1.5,0,0\n0.7,0.7,0,0\n");
    const fs::path some = scene_2d("some.json", R"({"shape": "file", "file": "some.csv"})",
                                   R"(, {"shape": "box", "solid": true, "min": [0.6, 0.6], "max": [0.8, 0.8]})");
    Result r = run(some, "--steps 1");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("some.csv): warning: 3 of its 6 particles dropped: 2 outside every container, 1 inside solid "
                            "obstacles"),
              std::string::npos)
        << r.output;
    const eddy::Scene s = eddy::load_scene(some);
    ASSERT_EQ(s.fluids.size(), 1u);
    EXPECT_EQ(s.fluids[0].file_particles->size(), 3u * 4u);
    EXPECT_NEAR(s.fluids[0].min[0], 0.1, 1e-7);
    EXPECT_NEAR(s.fluids[0].max[0], 0.14, 1e-7);
    EXPECT_NEAR(s.fluids[0].max[1], 0.12, 1e-7);
    // Particles at the wall itself (closer than r, as in a frame of a run) stay: only the surface clips.
    write("wall.csv", "x,y,vx,vy\n0.001,0.5,0,0\n0.5,0.999,0,0\n0.5,0.5,0,0\n");
    r = run(scene_2d("wall.json", R"({"shape": "file", "file": "wall.csv"})"), "--steps 1");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
    // Only one particle left inside: as for a file of one particle.
    write("lone.csv", "x,y,vx,vy\n0.5,0.5,0,0\n3,3,0,0\n");
    expect_bad_input(run(scene_2d("lone.json", R"({"shape": "file", "file": "lone.csv"})")),
                     {"lone.csv): only 1 of its 2 particles lies inside the containers"});
}

// ---- item 13: flat models as fluids ------------------------------------------------------------

TEST_F(InputChecks, AFlatMeshOrPolygonFluidEnclosesNothing) {
    // A square sheet in the plane y = 0.5 (two triangles), and the same sheet tilted.
    write("sheet.obj", "v 0.2 0.5 0.2\nv 0.8 0.5 0.2\nv 0.8 0.5 0.8\nv 0.2 0.5 0.8\nf 1 2 3\nf 1 3 4\n");
    write("tilted.obj", "v 0.2 0.2 0.2\nv 0.8 0.2 0.2\nv 0.8 0.8 0.8\nv 0.2 0.8 0.8\nf 1 2 3\nf 1 3 4\n");
    for (const char* model : {"sheet.obj", "tilted.obj"}) {
        const fs::path scene = write("flat.json", std::string(R"({"name": "t", "dimension": 3, "particle_radius": 0.02,
            "duration": 0.02, "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [1, 1, 1]}],
            "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.1, 0.1, 0.1]}, {"shape": "mesh", "file": ")") +
                                                     model + R"("}]})");
        expect_bad_input(run(scene), {"flat.json: fluids[1] (" + std::string(model) + "): the mesh encloses no volume: its vertices lie "
                                                                          "in one plane"});
    }
    expect_bad_input(run(scene_2d("line.json", R"({"shape": "polygon", "points": [[0.1, 0.1], [0.5, 0.5], [0.9, 0.9]]})")),
                     {"fluids[0]: the polygon encloses no area: its corners lie on one line"});
    // A closed model with an inside still fills.
    const Result r = run(scene_2d("tri.json", R"({"shape": "polygon", "points": [[0.1, 0.1], [0.5, 0.1], [0.1, 0.5]]})"),
                         "--steps 1");
    EXPECT_EQ(r.code, 0) << r.output;
}

// ---- item 13: a closed polygon listed with its first corner repeated -----------------------------

TEST_F(InputChecks, APolygonRepeatingItsFirstCornerIsClosedWithoutAWarning) {
    const std::string tank = R"(, {"shape": "polygon", "solid": true,
        "points": [[0.6, 0.6], [0.8, 0.6], [0.8, 0.8], [0.6, 0.8], [0.6, 0.6]]})";
    const fs::path scene = scene_2d("closed.json", R"({"shape": "box", "min": [0, 0], "max": [0.3, 0.3]})", tank);
    const eddy::Scene s = eddy::load_scene(scene);
    EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
    ASSERT_EQ(s.boundaries.size(), 2u);
    EXPECT_EQ(s.boundaries[1].model.points.size(), 4u);
    EXPECT_EQ(s.boundaries[1].model.polygon->report().boundary_edges, 0u);
    EXPECT_EQ(s.boundaries[1].model.polygon->report().degenerate, 0u);
    const Result r = run(scene, "--steps 1");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
    // Three corners and the first again: a triangle. Two and the first again: too few.
    EXPECT_EQ(run(scene_2d("tri.json", R"({"shape": "box", "min": [0, 0], "max": [0.3, 0.3]})",
                           R"(, {"shape": "polygon", "solid": true, "points": [[0.6, 0.6], [0.8, 0.6], [0.7, 0.8], [0.6, 0.6]]})"),
                  "--steps 1")
                  .code,
              0);
    expect_bad_input(run(scene_2d("two.json", R"({"shape": "box", "min": [0, 0], "max": [0.3, 0.3]})",
                                  R"(, {"shape": "polygon", "solid": true, "points": [[0.6, 0.6], [0.8, 0.6], [0.6, 0.6]]})")),
                     {"boundaries[1].points: must be a list of at least 3 [x, y] corners"});
}

// ---- item 13: keyframes ------------------------------------------------------------------------

// pose() found its interval by a linear scan; the start's speed bound samples every interval, so
// 200k keyframes took 22.8 s (45 s on this machine) before the first step.
TEST(Keyframes, PoseFindsTheIntervalAroundT) {
    eddy::BoundaryMotion<2> m;
    for (int k = 0; k < 5; ++k) {
        eddy::Keyframe kf;
        kf.time = 1.0 + k;
        kf.translate = {10.0 * k * k, 0, 0};
        m.keyframes.push_back(kf);
    }
    auto x = [&](double t) { return m.pose(t).shift[0]; };
    EXPECT_EQ(x(0.0), 0.0);    // before the first: the first
    EXPECT_EQ(x(1.0), 0.0);
    EXPECT_EQ(x(2.0), 10.0);   // at a keyframe: it
    EXPECT_EQ(x(2.5), 25.0);   // between 2 and 3 s: 10 -> 40
    EXPECT_EQ(x(4.75), 142.5); // 90 -> 160
    EXPECT_EQ(x(5.0), 160.0);
    EXPECT_EQ(x(9.0), 160.0);  // after the last: the last
    m.keyframes.resize(1);
    EXPECT_EQ(x(3.0), 0.0);
}

TEST_F(InputChecks, ManyKeyframesStartInLinearTime) {
    nlohmann::json kf = nlohmann::json::array();
    for (int i = 0; i < 200000; ++i)
        kf.push_back({{"time", i * 1e-5}, {"translate", {0.0, 1e-7 * (i % 7)}}, {"rotate", 0.0}});
    nlohmann::json scene = nlohmann::json::parse(R"({"name": "kf", "dimension": 2, "particle_radius": 0.05, "duration": 0.01,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [1, 1]},
                       {"shape": "box", "solid": true, "min": [0.4, 0.6], "max": [0.6, 0.7]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [1, 0.3]}]})");
    scene["boundaries"][1]["motion"] = {{"keyframes", kf}};
    const fs::path file = write("kf.json", scene.dump());
    const Result r = run(file, "--steps 1");
    EXPECT_EQ(r.code, 0) << r.output;
    // About 1 CPU second here (13 MB of JSON); 45 s with the linear scan. CPU time, which a busy machine
    // does not stretch; generous for sanitizers.
    std::printf("200,000 keyframes: %.1f CPU s, %.1f s of wall time\n", r.cpu_seconds, r.seconds);
    EXPECT_LT(r.cpu_seconds, 15.0);
}
