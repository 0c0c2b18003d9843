// The command line as a user meets it: exit codes, one-line errors, outputs on disk.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using Result = eddy::test::CommandResult;
using eddy::test::run_cli;

class Cli : public eddy::test::TempDirTest {};

const char* kSmallScene = R"({
  "name": "small", "dimension": 2, "method": "wcsph", "particle_radius": 0.01,
  "gravity": [0, -9.81], "duration": 0.1,
  "output": { "fps": 50, "formats": ["vtk"] },
  "settings": { "rest_density": 1000 },
  "boundaries": [ { "shape": "box", "min": [0, 0], "max": [1, 0.5] } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.2] } ] })";

}  // namespace

TEST_F(Cli, ScenesListsTheBundledScenes) {
    const Result r = run_cli("scenes");
    EXPECT_EQ(r.code, 0) << r.output;
    for (const char* s : {"dam_break_2d", "dam_break_3d", "bench_dam_break_3d", "rotating_circle_2d", "cylinder_3d"})
        EXPECT_NE(r.output.find(s), std::string::npos) << s;
}

TEST_F(Cli, RunWritesFramesSummaryAndPictures) {
    const fs::path scene = write("small.json", kSmallScene);
    const Result r = run_cli("run " + scene.string() + " --out " + (dir / "out").string() + " --format vtk,csv,ply --render");
    ASSERT_EQ(r.code, 0) << r.output;
    // Piped: plain progress lines, no terminal control codes.
    EXPECT_NE(r.output.find("progress"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find('\r'), std::string::npos);
    const fs::path out = dir / "out";
    for (const char* f : {"summary.json", "particles.pvd", "last_frame.png", "frames/particles_00000.vtp",
                          "frames/particles_00005.csv", "frames/particles_00005.ply", "frames/particles_00005.png"})
        EXPECT_TRUE(fs::exists(out / f)) << f;
    nlohmann::json s = nlohmann::json::parse(std::ifstream(out / "summary.json"));
    EXPECT_EQ(s["status"], "completed");
    EXPECT_EQ(s["scene"], "small");
    EXPECT_EQ(s["method"], "wcsph");
    EXPECT_EQ(s["dimension"], 2);
    EXPECT_EQ(s["particles"], 100);  // 0.2 m / 2r = 10 per axis
    EXPECT_NEAR(s["simulated_time"].get<double>(), 0.1, 1e-9);
    EXPECT_EQ(s["frames"].size(), 6u);  // t = 0, 0.02, ..., 0.1
    EXPECT_NEAR(s["frames"][5]["time"].get<double>(), 0.1, 1e-9);
    for (const auto& f : s["frames"]) {
        for (const auto& file : f["files"]) EXPECT_TRUE(fs::exists(out / file.get<std::string>())) << file;
        EXPECT_TRUE(f.contains("max_density_error") && f.contains("mean_density_error"));
    }
    EXPECT_GT(s["frames"][5]["max_density_error"].get<double>(), 0.0);
    for (const char* k : {"steps", "wall_time", "mean_ms_per_step", "max_density_error", "mean_density_error", "max_speed"})
        EXPECT_TRUE(s.contains(k)) << k;
    // No temporary file is left behind.
    for (const auto& e : fs::recursive_directory_iterator(out))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(Cli, StepsAndUntilStopTheRun) {
    const fs::path scene = write("small.json", kSmallScene);
    Result r = run_cli("run " + scene.string() + " --quiet --steps 7 --out " + (dir / "a").string());
    ASSERT_EQ(r.code, 0) << r.output;
    nlohmann::json s = nlohmann::json::parse(std::ifstream(dir / "a/summary.json"));
    EXPECT_EQ(s["steps"], 7);
    r = run_cli("run " + scene.string() + " --quiet --until 0.03 --fps 100 --out " + (dir / "b").string());
    ASSERT_EQ(r.code, 0) << r.output;
    s = nlohmann::json::parse(std::ifstream(dir / "b/summary.json"));
    EXPECT_NEAR(s["simulated_time"].get<double>(), 0.03, 1e-9);
    EXPECT_EQ(s["frames"].size(), 4u);
}

TEST_F(Cli, SameOutputWhateverTheThreadCount) {
    const fs::path scene = write("small.json", kSmallScene);
    ASSERT_EQ(run_cli("run " + scene.string() + " --quiet --threads 1 --format csv --out " + (dir / "t1").string()).code, 0);
    ASSERT_EQ(run_cli("run " + scene.string() + " --quiet --threads 2 --format csv --out " + (dir / "t2").string()).code, 0);
    auto slurp = [](const fs::path& p) {
        std::stringstream ss;
        ss << std::ifstream(p).rdbuf();
        return ss.str();
    };
    const std::string a = slurp(dir / "t1/frames/particles_00005.csv"), b = slurp(dir / "t2/frames/particles_00005.csv");
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
}

TEST_F(Cli, BadInputGivesOneLineAndExitCode2) {
    struct Case { std::string args, expect; };
    const fs::path good = write("good.json", kSmallScene);
    std::string bad_key = kSmallScene;
    bad_key.replace(bad_key.find("\"duration\""), 10, "\"durration\"");
    const fs::path unknown = write("unknown_key.json", bad_key);
    const fs::path broken = write("broken.json", "{ \"name\": \"x\", ");
    std::string neg = kSmallScene;
    neg.replace(neg.find("0.01"), 4, "-0.01");
    const fs::path negative = write("negative.json", neg);
    const std::vector<Case> cases = {
        {(dir / "missing.json").string(), "missing.json"},
        {unknown.string(), "durration"},
        {broken.string(), "broken.json"},
        {negative.string(), "particle_radius"},
        {good.string() + " --set settings.cfl=-1", "cfl"},
        {good.string() + " --set settings.stiffnes=5", "stiffnes"},
        {good.string() + " --max-particles 10", "max-particles"},
        {good.string() + " --format obj", "obj"},
        {"no_such_scene", "no_such_scene"},
        {dir.string(), "is a folder"},
    };
    for (const auto& c : cases) {
        const Result r = run_cli("run " + c.args + " --quiet --out " + (dir / "o").string());
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
        EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
        EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
    }
}

TEST_F(Cli, AnUnwritableOutputFolderIsBadInput) {
    const fs::path scene = write("small.json", kSmallScene);
    std::ofstream(dir / "afile") << "x";
    const Result r = run_cli("run " + scene.string() + " --quiet --out " + (dir / "afile").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("cannot create the output folder"), std::string::npos) << r.output;
}

TEST_F(Cli, DivergenceStopsWithExitCode3AndKeepsFrames) {
    const fs::path scene = write("small.json", kSmallScene);
    // A fixed step far above the acoustic limit makes the weakly compressible fluid blow up.
    const Result r = run_cli("run " + scene.string() + " --quiet --set settings.fixed_dt=0.01 --fps 20 --out " +
                             (dir / "d").string());
    EXPECT_EQ(r.code, 3) << r.output;
    EXPECT_NE(r.output.find("diverged at step"), std::string::npos) << r.output;
    nlohmann::json s = nlohmann::json::parse(std::ifstream(dir / "d/summary.json"));
    EXPECT_EQ(s["status"], "diverged");
    ASSERT_GE(s["frames"].size(), 1u);
    for (const auto& f : s["frames"])
        for (const auto& file : f["files"]) EXPECT_TRUE(fs::exists(dir / "d" / file.get<std::string>()));
}

TEST_F(Cli, InterruptStopsCleanlyWithSummaryAndExitCode130) {
    const std::string out = (dir / "i").string();
    // Interrupt a long run after a second: it finishes the step, writes a frame and the summary.
    const std::string cmd = "sh -c '" + std::string(EDDY_CLI) + " run dam_break_2d --quiet --until 100 --out " + out +
                            " & pid=$!; sleep 1.5; kill -INT $pid; wait $pid; echo exit=$?'";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string text;
    std::array<char, 256> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) text += buf.data();
    pclose(p);
    EXPECT_NE(text.find("exit=130"), std::string::npos) << text;
    nlohmann::json s = nlohmann::json::parse(std::ifstream(dir / "i/summary.json"));
    EXPECT_EQ(s["status"], "interrupted");
    EXPECT_GT(s["steps"].get<int>(), 0);
    EXPECT_TRUE(fs::exists(dir / "i/last_frame.png"));
    for (const auto& f : s["frames"])
        for (const auto& file : f["files"]) EXPECT_TRUE(fs::exists(dir / "i" / file.get<std::string>()));
}

TEST_F(Cli, ARerunReplacesTheFramesOfTheLastRun) {
    const fs::path scene = write("small.json", kSmallScene);
    ASSERT_EQ(run_cli("run " + scene.string() + " --quiet --out " + (dir / "r").string()).code, 0);
    ASSERT_TRUE(fs::exists(dir / "r/frames/particles_00005.vtp"));
    ASSERT_EQ(run_cli("run " + scene.string() + " --quiet --until 0.02 --out " + (dir / "r").string()).code, 0);
    EXPECT_TRUE(fs::exists(dir / "r/frames/particles_00001.vtp"));
    EXPECT_FALSE(fs::exists(dir / "r/frames/particles_00005.vtp"));
}

// Issue 10: a scene with a model. Bad model files are one line, exit 2; a good one runs and writes the
// walls (particles and the model) beside the fluid, per frame when the model moves.
TEST_F(Cli, ModelScenesWriteTheirWallsAndBadModelsExit2) {
    const std::string bad = (fs::path(EDDY_SOURCE_DIR) / "tests/data/meshes").string();
    const char* scene = R"({"name": "m", "dimension": 3, "particle_radius": 0.02, "duration": 0.02,
        "output": {"fps": 100},
        "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.6, 0.4, 0.4]},
                       {"shape": "mesh", "file": "MODEL", "scale": 0.1, "translate": [0.3, 0, 0.2], "solid": true,
                        "motion": {"angular_velocity": 3, "axis": [0, 1, 0]}}],
        "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.2, 0.2, 0.4]}]})";
    for (const char* f : {"empty.obj", "truncated.stl", "huge_count.ply", "garbage.stl", "nan_vertex.obj", "nope.obj"}) {
        std::string text = scene;
        text.replace(text.find("MODEL"), 5, bad + "/" + f);
        const fs::path file = write(std::string("bad_") + f + ".json", text);
        const Result r = run_cli("run " + file.string() + " --quiet --out " + (dir / "bad").string());
        EXPECT_EQ(r.code, 2) << f << ": " << r.output;
        EXPECT_NE(r.output.find(f), std::string::npos) << r.output;
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
    std::string text = scene;
    text.replace(text.find("MODEL"), 5, (fs::path(EDDY_SOURCE_DIR) / "scenes/models/paddle.ply").string());
    text.replace(text.find("\"scale\": 0.1"), 12, "\"scale\": 1");
    const fs::path file = write("paddle.json", text);
    const Result r = run_cli("run " + file.string() + " --quiet --out " + (dir / "ok").string());
    ASSERT_EQ(r.code, 0) << r.output;
    for (const char* f : {"frames/walls_00000.vtp", "frames/walls_00002.vtp", "frames/walls_00002.obj", "walls.pvd"})
        EXPECT_TRUE(fs::exists(dir / "ok" / f)) << f;
}
