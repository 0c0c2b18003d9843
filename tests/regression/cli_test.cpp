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
    // Interrupt a long run once it has written its second frame (it has stepped, whatever the machine's
    // load; 120 s at most): it finishes the step, writes a frame and the summary.
    const std::string cmd = "sh -c '" + std::string(EDDY_CLI) + " run dam_break_2d --quiet --until 100 --format csv --out " +
                            out + " & pid=$!; i=0; while [ ! -e " + out + "/frames/particles_00001.csv ] && [ $i -lt 1200 ]; " +
                            "do sleep 0.1; i=$((i+1)); done; kill -INT $pid; wait $pid; echo exit=$?'";
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

// ---- hostile input (issue 12): every bad input one line and exit code 2, never a crash -------------

namespace {

// One line, exit code 2, naming `needle`, no raw library text.
void expect_bad_input(const Result& r, const std::string& what, const std::string& needle) {
    EXPECT_EQ(r.code, 2) << what << "\n" << r.output.substr(0, 500);
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << what << "\n" << r.output.substr(0, 500);
    EXPECT_LT(r.output.size(), 600u) << what << "\n" << r.output.substr(0, 600);
    EXPECT_NE(r.output.find(needle), std::string::npos) << what << "\n" << r.output.substr(0, 500);
    for (const char* raw : {"json.exception", "not in range", "1797693", "Could not convert", "terminate", "_M_"})
        EXPECT_EQ(r.output.find(raw), std::string::npos) << what << "\n" << r.output.substr(0, 500);
}

}  // namespace

// 100,000 levels of nesting (or 65,000 brackets in --set) segfaulted eddy run and eddy view: stack
// overflow in json::dump while the validator echoed the value.
TEST_F(Cli, DeeplyNestedJsonIsBadInputNotACrash) {
    std::string text = kSmallScene;
    text.replace(text.find("[0, -9.81]"), 10, std::string(100000, '[') + std::string(100000, ']'));
    const fs::path gravity = write("deep_gravity.json", text);
    expect_bad_input(run_cli("run " + gravity.string() + " --quiet --out " + (dir / "o").string()), "gravity",
                     "deep_gravity.json: line 3 column");
    std::string objects;
    for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
    text = kSmallScene;
    text.replace(text.find("\"small\","), 8, "\"small\", \"description\": " + objects + "1" + std::string(100000, '}') + ",");
    const fs::path description = write("deep_description.json", text);
    expect_bad_input(run_cli("run " + description.string() + " --quiet --out " + (dir / "o").string()), "description",
                     "deep_description.json: line 2 column");
    const fs::path good = write("good.json", kSmallScene);
    expect_bad_input(run_cli("run " + good.string() + " --quiet --set 'gravity=" + std::string(65000, '[') + "' --out " +
                             (dir / "o").string()),
                     "--set", "nested deeper than 64 levels");
    // A huge flat value is echoed cut short, not as one 8 MB line.
    std::string wide = kSmallScene;
    std::string numbers = "[0";
    for (int i = 0; i < 200000; ++i) numbers += ",1";
    wide.replace(wide.find("[0, -9.81]"), 10, numbers + "]");
    const fs::path flat = write("wide.json", wide);
    expect_bad_input(run_cli("run " + flat.string() + " --quiet --out " + (dir / "o").string()), "wide",
                     "wide.json: gravity: expected 2 numbers, got 200001 ([0,1,1,");
}

TEST_F(Cli, NumbersOutOfRangeNameTheFile) {
    std::string text = kSmallScene;
    text.replace(text.find("0.01"), 4, "-1e309");
    const fs::path file = write("overflow.json", text);
    expect_bad_input(run_cli("run " + file.string() + " --quiet --out " + (dir / "o").string()), "-1e309",
                     "overflow.json: line 2 column");
    expect_bad_input(run_cli("run circle_2d --quiet --set particle_radius=1e-300 --out " + (dir / "o").string()),
                     "1e-300", "particle_radius = 1e-300: below the smallest allowed radius");
    // The run "completed" with 6 wall particles instead of 641 (the count wrapped through an int).
    expect_bad_input(run_cli("run circle_2d --quiet --set boundaries.0.radius=1e308 --out " + (dir / "o").string()),
                     "radius", "boundaries[0].radius");
    expect_bad_input(run_cli("run /dev/null --quiet --out " + (dir / "o").string()), "/dev/null",
                     "/dev/null: not a regular file");
}

// --fps 1e308 never finished (time stopped advancing); nan and inf were accepted; CLI11's range text
// printed DBL_MAX. Each flag now says what is allowed, on one line, before the scene is even read.
TEST_F(Cli, FlagValuesAreCheckedWithOneLineEach) {
    const std::string out = " --quiet --out " + (dir / "o").string();
    struct Case { std::string args, expect; };
    const std::vector<Case> cases = {
        {"run dam_break_2d --fps 1e308" + out, "--fps: '1e308' is not allowed; allowed: frames per second > 0 and <= 1e6"},
        {"run dam_break_2d --fps nan" + out, "--fps: 'nan'"},
        {"run dam_break_2d --fps abc" + out, "--fps: 'abc'"},
        {"run dam_break_2d --until nan" + out, "--until: 'nan' is not allowed; allowed: a time > 0"},
        {"run dam_break_2d --until -1" + out, "--until: '-1'"},
        {"run dam_break_2d --until inf" + out, "--until: 'inf'"},
        {"run dam_break_2d --threads 4097" + out, "--threads: '4097' is not allowed; allowed: 0 (every core) or a whole number from 1 to 4096"},
        {"run dam_break_2d --steps 1.5" + out, "--steps: '1.5'"},
        {"run dam_break_2d --checkpoint-every nan" + out, "--checkpoint-every: 'nan'"},
        {"run dam_break_2d --quiet --out ''", "--out: '' is not allowed"},
        {"run dam_break_2d --set output.fps=1e7" + out, "output.fps = 1e+07"},
        {"mesh x.csv --out m.obj --radius inf", "eddy mesh: key 'radius' = inf: allowed: a length > 0 (m)"},
        {"mesh x.csv --out m.obj --voxel nan", "key 'voxel' = nan"},
        {"mesh x.csv --out ''", "--out: '' is not allowed"},
        {"mesh x.csv --out m.obj --bogus", "(see eddy mesh --help)"},
        {"run dam_break_2d --bogus", "unknown option or extra argument --bogus (see eddy run --help)"},
        {"bogus", "'bogus' is not a command; allowed: scenes, run, mesh, whitewater, view"},
        {"run dam_brake_2d" + out, "did you mean dam_break_2d?"},
    };
    for (const auto& c : cases) expect_bad_input(run_cli(c.args), c.args, c.expect);
    // The largest frame rate allowed still advances the clock.
    const Result r = run_cli("run dam_break_2d --fps 1e6 --until 0.00001 --format csv" + out);
    EXPECT_EQ(r.code, 0) << r.output;
}

// eddy mesh on a .vtp claiming 2^61 points: exit 1 with "vector::_M_fill_insert".
TEST_F(Cli, MeshRefusesHeaderCountsBeyondTheFile) {
    const fs::path csv = write("p.csv", "x,y,z\n0,0,0\n0.02,0,0\n");
    ASSERT_EQ(run_cli("mesh " + csv.string() + " --radius 0.01 --out " + (dir / "ok.obj").string()).code, 0);
    std::string xml = "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                      "header_type=\"UInt64\">\n<PolyData>\n<Piece NumberOfPoints=\"2305843009213693952\" NumberOfVerts=\"0\">\n"
                      "<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"appended\" offset=\"0\"/>\n"
                      "</Points>\n</Piece>\n</PolyData>\n<AppendedData encoding=\"raw\">\n_";
    xml += std::string(8, '\0') + "\n</AppendedData>\n</VTKFile>\n";
    const fs::path vtp = write("huge.vtp", xml);
    expect_bad_input(run_cli("mesh " + vtp.string() + " --radius 0.01 --out " + (dir / "m.obj").string()), "huge.vtp",
                     "huge.vtp: NumberOfPoints = 2305843009213693952 is more than the file's");
}
