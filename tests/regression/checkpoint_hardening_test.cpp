// Issue 29 (items 2, 3, 8, 9, 10): output files cannot be redirected by links planted in a shared
// folder and killed writes leave nothing behind; a crafted checkpoint is refused field by field and
// never makes eddy write outside its run folder; --resume "" and a checkpoint copied into another
// run's folder are refused; a finished run extended with --until is bit for bit a straight run; a
// resumed run never reads its models again.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "eddy/checkpoint.hpp"
#include "eddy/io.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

using namespace eddy;
using eddy::test::run_cli;
using eddy::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string scene_path(const std::string& name) { return (fs::path(EDDY_SOURCE_DIR) / "scenes" / (name + ".json")).string(); }

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

// Every file below `root` (links as links), for "nothing was written there".
std::vector<std::string> listing(const fs::path& root) {
    std::vector<std::string> v;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it)
        v.push_back(fs::relative(it->path(), root).string());
    std::sort(v.begin(), v.end());
    return v;
}

// A small 2D run (a few steps) with a checkpoint, in `out`.
void small_run(const std::string& out, const std::string& extra = "") {
    const auto r = run_cli("run " + scene_path("dam_break_2d") + " --quiet --steps 4 --fps 400 --format csv --out " + out +
                           " " + extra);
    ASSERT_EQ(r.code, 0) << r.output;
}

}  // namespace

// ---- item 2: atomic writes ----

TEST(AtomicWrite, ReplacesALinkAtTheTargetInsteadOfFollowingIt) {
    TempDir dir("atomic_link");
    const fs::path victim = dir.path() / "victim.txt";
    write_bytes(victim, "precious");
    fs::create_directories(dir.path() / "shared");
    const fs::path target = dir.path() / "shared" / "summary.json";
    fs::create_symlink(victim, target);
    io::write_atomic(target, "new contents");
    EXPECT_EQ(read_bytes(victim), "precious") << "written through the link";
    EXPECT_FALSE(fs::is_symlink(fs::symlink_status(target)));
    EXPECT_EQ(read_bytes(target), "new contents");
}

TEST(AtomicWrite, PredictableTemporaryNamesArePlantedInVain) {
    // The attack of issue 29: links at "NAME.tmp-<pid>" for the pids to come. eddy's temporaries are
    // ".NAME.eddy-tmp-XXXXXX" with random letters, created with O_EXCL|O_NOFOLLOW.
    TempDir dir("atomic_planted");
    const fs::path victim = dir.path() / "victim.txt";
    write_bytes(victim, "precious");
    const fs::path target = dir.path() / "frame.csv";
    fs::create_symlink(victim, dir.path() / ("frame.csv.tmp-" + std::to_string(::getpid())));
    for (int i = 0; i < 50; ++i) io::write_atomic(target, "x,y\n" + std::to_string(i) + "\n");
    EXPECT_EQ(read_bytes(victim), "precious");
    EXPECT_EQ(read_bytes(target), "x,y\n49\n");
    // Nothing left behind but the target, the victim and the planted link.
    EXPECT_EQ(listing(dir.path()).size(), 3u);
}

TEST(AtomicWrite, TemporariesHaveARecognisablePatternAndStaleOnesAreRemovedSafely) {
    EXPECT_TRUE(io::is_temporary_name(".frame.csv.eddy-tmp-Ab3xZ9"));
    EXPECT_FALSE(io::is_temporary_name("frame.csv.eddy-tmp-Ab3xZ9"));   // not hidden: not ours
    EXPECT_FALSE(io::is_temporary_name(".frame.csv.eddy-tmp-Ab3x"));    // too short
    EXPECT_FALSE(io::is_temporary_name(".frame.csv.eddy-tmp-Ab3x/9"));
    EXPECT_FALSE(io::is_temporary_name("frame.csv.tmp-1234"));
    TempDir dir("atomic_stale");
    const fs::path victim = dir.path() / "victim.txt";
    write_bytes(victim, "precious");
    fs::create_directories(dir.path() / "run");
    write_bytes(dir.path() / "run" / ".summary.json.eddy-tmp-AAAAAA", "half");
    write_bytes(dir.path() / "run" / "keep.eddy-tmp-AAAAAA", "not ours");
    fs::create_symlink(victim, dir.path() / "run" / ".x.csv.eddy-tmp-BBBBBB");
    fs::create_directories(dir.path() / "run" / ".d.eddy-tmp-CCCCCC");
    EXPECT_EQ(io::remove_stale_temporaries(dir.path() / "run"), 1u);
    EXPECT_FALSE(fs::exists(dir.path() / "run" / ".summary.json.eddy-tmp-AAAAAA"));
    EXPECT_TRUE(fs::exists(dir.path() / "run" / "keep.eddy-tmp-AAAAAA"));
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir.path() / "run" / ".x.csv.eddy-tmp-BBBBBB")));
    EXPECT_TRUE(fs::is_directory(dir.path() / "run" / ".d.eddy-tmp-CCCCCC"));
    EXPECT_EQ(read_bytes(victim), "precious");
    // A folder that is a link is not cleaned (it is someone else's).
    fs::create_directories(dir.path() / "other");
    write_bytes(dir.path() / "other" / ".a.eddy-tmp-AAAAAA", "theirs");
    fs::create_directory_symlink(dir.path() / "other", dir.path() / "link");
    EXPECT_EQ(io::remove_stale_temporaries(dir.path() / "link"), 0u);
    EXPECT_TRUE(fs::exists(dir.path() / "other" / ".a.eddy-tmp-AAAAAA"));
}

TEST(AtomicWrite, RunStartRemovesStaleTemporariesAndRefusesAPlantedFramesLink) {
    TempDir dir("atomic_run");
    const std::string out = (dir.path() / "out").string();
    fs::create_directories(dir.path() / "out" / "frames");
    write_bytes(dir.path() / "out" / ".summary.json.eddy-tmp-QwErTy", "killed");
    write_bytes(dir.path() / "out" / "frames" / ".particles_00001.csv.eddy-tmp-Zx12Cv", "killed");
    small_run(out);
    EXPECT_FALSE(fs::exists(dir.path() / "out" / ".summary.json.eddy-tmp-QwErTy"));
    EXPECT_FALSE(fs::exists(dir.path() / "out" / "frames" / ".particles_00001.csv.eddy-tmp-Zx12Cv"));
    // Also on --resume.
    write_bytes(dir.path() / "out" / "frames" / ".particles_00009.csv.eddy-tmp-Zx12Cv", "killed");
    auto r = run_cli("run --resume " + out + " --quiet --steps 2");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_FALSE(fs::exists(dir.path() / "out" / "frames" / ".particles_00009.csv.eddy-tmp-Zx12Cv"));

    // A link planted where frames/ goes is refused, and nothing is written where it points.
    fs::create_directories(dir.path() / "elsewhere");
    fs::create_directories(dir.path() / "shared");
    fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "shared" / "frames");
    r = run_cli("run " + scene_path("dam_break_2d") + " --quiet --steps 2 --format csv --out " +
                (dir.path() / "shared").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
    EXPECT_EQ(count_lines(r.output), 1u) << r.output;
    EXPECT_TRUE(fs::is_empty(dir.path() / "elsewhere"));
}

// ---- item 3: crafted checkpoints ----

namespace {

// A checkpoint with its meta and state edited and its checksum recomputed (what anyone can do).
class CraftedCheckpoint : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = std::make_unique<TempDir>("crafted");
        out = (m_dir->path() / "run").string();
        small_run(out, "");
        file = m_dir->path() / "run" / kCheckpointFile;
        good = read_checkpoint_file(file);
        outside = m_dir->path() / "outside";
        fs::create_directories(outside);
    }
    void write(const nlohmann::json& meta, const std::string& state) {
        write_bytes(file, encode_checkpoint(meta, state));
    }
    // Resumes, expects exit 2 with one line naming the checkpoint and `words`, and nothing outside.
    void expect_refused(const std::string& words) {
        const auto before = listing(m_dir->path() / "run");
        const auto r = run_cli("run --resume " + out + " --quiet --until 0.05");
        EXPECT_EQ(r.code, 2) << r.output;
        EXPECT_EQ(count_lines(r.output), 1u) << r.output;
        EXPECT_NE(r.output.find(file.string()), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
        EXPECT_TRUE(fs::is_empty(outside));
        EXPECT_FALSE(fs::exists(m_dir->path() / "x"));
        // Refused before the folder is touched (frames and checkpoint as they were).
        EXPECT_EQ(listing(m_dir->path() / "run"), before);
    }
    // The state (2D, no model, no particle file): time, steps, 0 models, 0 particle files, then n
    // positions, velocities, ...
    static constexpr std::size_t kParticles = 32;
    std::size_t particles() const {
        std::uint64_t n;
        std::memcpy(&n, good.state.data() + kParticles, 8);
        return n;
    }

    std::unique_ptr<TempDir> m_dir;
    std::string out;
    fs::path file, outside;
    CheckpointFile good;
};

}  // namespace

TEST_F(CraftedCheckpoint, APathInTheRunRecordIsRefused) {
    const std::string escape = "obj/../../outside/OUTSIDE";
    auto edit = [&](auto&& f, const std::string& words) {
        nlohmann::json meta = good.meta;
        f(meta["run"]);
        write(meta, good.state);
        SCOPED_TRACE(words);
        expect_refused(words);
    };
    edit([&](auto& run) { run["mesh"] = true; run["mesh_format"] = escape; }, "mesh_format");
    edit([&](auto& run) { run["formats"] = {escape}; }, "formats");
    edit([&](auto& run) { run["frames"][0]["files"][0] = "frames/../../outside/x.csv"; }, "frames[0].files[0]");
    edit([&](auto& run) { run["frames"][0]["files"][0] = "/tmp/x.csv"; }, "frames[0].files[0]");
    edit([&](auto& run) { run["pvd"] = {{0.0, "../outside/a.vtp"}}; }, "pvd[0]");
    edit([&](auto& run) { run["up_axis"] = "../x"; }, "up_axis");
    edit([&](auto& run) { run["mesh_attributes"] = {"../x"}; }, "mesh_attributes");
    edit([&](auto& run) { run["run_id"] = "../x"; }, "run_id");
    // Wrong types and values: one line each, never the JSON library's own text.
    edit([&](auto& run) { run["frames"] = "many"; }, "'frames'");
    edit([&](auto& run) { run["frames"][0]["time"] = "soon"; }, "frames[0].time");
    edit([&](auto& run) { run["frames"][0]["time"] = 1e300; }, "frames[0].time");
    edit([&](auto& run) { run["frames"][0]["index"] = 7; }, "frames[0].index");
    edit([&](auto& run) { run["frames"].push_back(run["frames"][0]); }, "'frames'");  // more than the clock allows
    edit([&](auto& run) { run["fps"] = -1; }, "'fps'");
    edit([&](auto& run) { run["fps"] = nullptr; }, "'fps'");
    edit([&](auto& run) { run["end_time"] = "later"; }, "end_time");
    edit([&](auto& run) { run["next_frame"] = 1000000; }, "next_frame");
    edit([&](auto& run) { run["stats"] = {1, 2}; }, "stats");
    edit([&](auto& run) { run["stats"][6] = -3; }, "stats[6]");
    edit([&](auto& run) { run["frame_accumulators"][0] = 1e300; }, "frame_accumulators[0]");
    edit([&](auto& run) { run.erase("time0"); }, "time0");
    edit([&](auto& run) { run = 5; }, "'run'");
}

TEST_F(CraftedCheckpoint, BadMetaDataIsRefused) {
    auto edit = [&](auto&& f, const std::string& words) {
        nlohmann::json meta = good.meta;
        f(meta);
        write(meta, good.state);
        SCOPED_TRACE(words);
        expect_refused(words);
    };
    edit([](auto& m) { m["time"] = nullptr; }, "'time'");  // NaN is written as null by JSON
    edit([](auto& m) { m["time"] = -1.0; }, "'time'");
    edit([](auto& m) { m["time"] = 0.5; }, "clock");  // not the state's
    edit([](auto& m) { m["steps"] = "x"; }, "'steps'");
    edit([](auto& m) { m["dimension"] = 7; }, "'dimension'");
    edit([](auto& m) { m["method"] = 1; }, "'method'");
    edit([](auto& m) { m["method"] = "pbf"; }, "do not match");
    edit([](auto& m) { m["scene"]["particle_radius"] = -1; }, "particle_radius");
    edit([](auto& m) { m["scene_source"] = std::vector<int>{1}; }, "scene_source");
}

TEST_F(CraftedCheckpoint, BadParticlesAreRefused) {
    const std::size_t n = particles();
    ASSERT_GT(n, 2u);
    const std::size_t pos = kParticles + 8, vel = pos + 8 * n + 8, acc = vel + 8 * n + 8, den = acc + 8 * n + 8,
                      pre = den + 4 * n + 8, ids = pre + 4 * n + 8;
    auto edit = [&](auto&& f, const std::string& words) {
        std::string state = good.state;
        f(state);
        write(good.meta, state);
        SCOPED_TRACE(words);
        expect_refused(words);
    };
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    edit([&](std::string& s) { std::memcpy(&s[pos], &nan, 4); }, "position is not finite");
    edit([&](std::string& s) { std::memcpy(&s[vel + 4], &inf, 4); }, "velocity is not finite");
    edit([&](std::string& s) { std::memcpy(&s[den], &nan, 4); }, "not finite");
    edit([&](std::string& s) { std::memcpy(&s[ids + 4], &s[ids], 4); }, "same id");
    edit([&](std::string& s) {
        const double t = std::numeric_limits<double>::quiet_NaN();
        std::memcpy(&s[0], &t, 8);
    }, "clock");
    edit([&](std::string& s) { s = s.substr(0, kParticles) + std::string(8, '\0') + s.substr(kParticles); }, "no particle");
    edit([&](std::string& s) { s[16] = 1; }, "");  // a model that is not there: refused, whatever the words
}

TEST(Checkpoint, AFlippedBitIsCorruptNotAnotherVersion) {
    TempDir dir("flipped");
    const std::string out = (dir.path() / "out").string();
    small_run(out);
    const fs::path file = dir.path() / "out" / kCheckpointFile;
    const std::string good = read_bytes(file);
    // Every bit of the header (magic excepted): format, version length, version text.
    for (std::size_t byte = 8; byte < 21; ++byte)
        for (int bit = 0; bit < 8; ++bit) {
            std::string bad = good;
            bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
            write_bytes(file, bad);
            CheckpointFile ck;
            try {
                ck = read_checkpoint_file(file);
                ADD_FAILURE() << "accepted a flipped bit at byte " << byte;
            } catch (const InputError& e) {
                const std::string msg = e.what();
                EXPECT_NE(msg.find("corrupt checkpoint"), std::string::npos) << msg;
                EXPECT_EQ(msg.find("checkpoint written by eddy"), std::string::npos) << msg;
            }
        }
}

// ---- item 8: data loss ----

TEST(Checkpoint, EmptyResumeOrOutIsRefusedAndNothingIsWritten) {
    TempDir dir("empty_resume");
    for (const char* args : {"run --resume '' --quiet", "run --out '' --quiet --steps 1", "run dam_break_2d --out '' --quiet"}) {
        const std::string cmd = "cd " + dir.path().string() + " && " + std::string(EDDY_CLI) + " " + args + " 2>&1";
        FILE* p = popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string output;
        char buf[512];
        while (std::fgets(buf, sizeof buf, p)) output += buf;
        const int status = pclose(p);
        EXPECT_EQ(WEXITSTATUS(status), 2) << args << ": " << output;
        EXPECT_EQ(count_lines(output), 1u) << output;
        EXPECT_NE(output.find("''"), std::string::npos) << output;
        EXPECT_TRUE(fs::is_empty(dir.path())) << args << ": wrote into the working folder";
    }
    // The library itself (Python's run(out='') goes through it): refused before anything is written.
    ExecContext exec(1);
    Simulation sim = make_simulation(load_scene(scene_path("dam_break_2d")), 5'000'000, exec);
    RunOptions o;
    o.out_dir = "";
    o.max_steps = 1;
    eddy::test::expect_input_error([&] { run(sim, o, exec); }, {"''"});
}

TEST(Checkpoint, ACheckpointCopiedIntoAnotherRunsFolderIsRefused) {
    TempDir dir("copied");
    const std::string a = (dir.path() / "a").string(), b = (dir.path() / "b").string();
    small_run(a);
    small_run(b);
    const auto before = listing(dir.path() / "b");
    fs::copy_file(dir.path() / "a" / kCheckpointFile, dir.path() / "b" / kCheckpointFile,
                  fs::copy_options::overwrite_existing);
    const auto r = run_cli("run --resume " + b + " --quiet --steps 2");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_EQ(count_lines(r.output), 1u) << r.output;
    const nlohmann::json ida = nlohmann::json::parse(read_bytes(dir.path() / "a" / "run.json"))["run_id"];
    const nlohmann::json idb = nlohmann::json::parse(read_bytes(dir.path() / "b" / "run.json"))["run_id"];
    ASSERT_NE(ida, idb);
    EXPECT_NE(r.output.find(ida.get<std::string>()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(idb.get<std::string>()), std::string::npos) << r.output;
    EXPECT_EQ(listing(dir.path() / "b"), before);
    // A folder copied whole is the same run: it resumes.
    fs::copy(dir.path() / "a", dir.path() / "c", fs::copy_options::recursive);
    const auto rc = run_cli("run --resume " + (dir.path() / "c").string() + " --quiet --steps 2");
    EXPECT_EQ(rc.code, 0) << rc.output;
}

// ---- item 9: extending a finished run ----

namespace {

// A straight run to t = 0.1 s against a run to 0.05 s (between two frames at 50 fps) extended to 0.1 s
// from its checkpoint: the same frame times, files, steps and bits.
template <class Make, class Restore>
void expect_extension_is_seamless(Make make, Restore restore, const char* collection) {
    TempDir dir("extend");
    ExecContext exec(2);
    auto options = [&](const fs::path& out, double until) {
        RunOptions o;
        o.out_dir = out;
        o.until = until;
        o.fps = 50.0;
        o.checkpoint_at_end = true;
        return o;
    };
    auto straight = make(exec);
    const RunResult a = run(straight, options(dir.path() / "straight", 0.1), exec);
    ASSERT_EQ(a.exit_code, kExitOk) << a.message;
    {
        auto first = make(exec);
        const RunResult b = run(first, options(dir.path() / "extended", 0.05), exec);
        ASSERT_EQ(b.exit_code, kExitOk) << b.message;
        EXPECT_EQ(b.frames.back().time, 0.05);  // the first run ends where it was told to
    }
    nlohmann::json record;
    auto resumed = restore(read_checkpoint_file(dir.path() / "extended" / kCheckpointFile), exec, record);
    RunOptions o = options(dir.path() / "extended", 0.1);
    o.resume = &record;
    const RunResult c = run(resumed, o, exec);
    ASSERT_EQ(c.exit_code, kExitOk) << c.message;
    EXPECT_EQ(state_hash(straight), state_hash(resumed));
    ASSERT_EQ(a.frames.size(), c.frames.size());
    for (std::size_t k = 0; k < a.frames.size(); ++k) {
        EXPECT_EQ(a.frames[k].time, c.frames[k].time) << "frame " << k;
        EXPECT_EQ(a.frames[k].files, c.frames[k].files) << "frame " << k;
        for (const auto& f : a.frames[k].files)
            EXPECT_EQ(read_bytes(dir.path() / "straight" / f), read_bytes(dir.path() / "extended" / f)) << f;
    }
    EXPECT_EQ(read_bytes(dir.path() / "straight" / collection), read_bytes(dir.path() / "extended" / collection));
    EXPECT_EQ(a.summary["steps"], c.summary["steps"]);
    // No frame of the first run's end (t = 0.05 s) is left in the folder.
    EXPECT_EQ(listing(dir.path() / "straight" / "frames"), listing(dir.path() / "extended" / "frames"));
}

}  // namespace

TEST(Checkpoint, ExtendingAFinishedRunIsBitForBit) {
    expect_extension_is_seamless(
        [](const ExecContext& exec) {
            return make_simulation(load_scene(scene_path("dam_break_2d"), {"output.formats=[\"csv\",\"vtk\"]"}), 5'000'000,
                                   exec);
        },
        [](const CheckpointFile& ck, const ExecContext& exec, nlohmann::json& record) {
            return restore_simulation(ck, exec, record);
        },
        "particles.pvd");
}

TEST(Checkpoint, ExtendingAFinishedGridRunIsBitForBit) {
    expect_extension_is_seamless(
        [](const ExecContext&) { return make_shallow_water(load_scene(scene_path("shallow_dam_break_wet"))); },
        [](const CheckpointFile& ck, const ExecContext&, nlohmann::json& record) {
            return restore_shallow_water(ck, record);
        },
        "grid.pvd");
}

TEST(Checkpoint, ExtendingFromTheCliWritesTheStraightRunsFrames) {
    TempDir dir("extend_cli");
    const std::string straight = (dir.path() / "straight").string(), ext = (dir.path() / "ext").string();
    auto r = run_cli("run " + scene_path("dam_break_2d") + " --quiet --fps 50 --until 0.1 --format csv --out " + straight);
    ASSERT_EQ(r.code, 0) << r.output;
    r = run_cli("run " + scene_path("dam_break_2d") + " --quiet --fps 50 --until 0.05 --format csv --out " + ext);
    ASSERT_EQ(r.code, 0) << r.output;
    r = run_cli("run --resume " + ext + " --quiet --until 0.1");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto a = nlohmann::json::parse(read_bytes(dir.path() / "straight" / "summary.json"));
    const auto b = nlohmann::json::parse(read_bytes(dir.path() / "ext" / "summary.json"));
    EXPECT_EQ(a["steps"], b["steps"]);
    ASSERT_EQ(a["frames"].size(), b["frames"].size());
    for (std::size_t k = 0; k < a["frames"].size(); ++k) {
        EXPECT_EQ(a["frames"][k]["time"], b["frames"][k]["time"]) << k;
        const std::string f = a["frames"][k]["files"][0];
        EXPECT_EQ(read_bytes(dir.path() / "straight" / f), read_bytes(dir.path() / "ext" / f)) << f;
    }
}

// ---- item 10: a resumed run never reads its models again ----

namespace {

// Runs `eddy ARGS` from the folder `cwd`.
eddy::test::CommandResult run_cli_in(const fs::path& cwd, const std::string& args) {
    const std::string cmd = "cd " + cwd.string() + " && " + std::string(EDDY_CLI) + " " + args + " 2>&1";
    eddy::test::CommandResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) r.output += buf;
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// A scene with a model beside it (relative path), run 2n steps straight and n steps, then its folder
// moved away, the model overwritten, and resumed for n more steps from another working folder: the
// same frames, bit for bit.
void expect_resume_without_the_files(const std::string& scene, const std::vector<std::string>& files,
                                     const std::string& flags, int n) {
    SCOPED_TRACE(scene);
    TempDir dir("models");
    fs::create_directories(dir.path() / "scn" / "models");
    fs::copy_file(fs::path(EDDY_SOURCE_DIR) / "scenes" / (scene + ".json"), dir.path() / "scn" / "s.json");
    for (const auto& f : files) fs::copy_file(fs::path(EDDY_SOURCE_DIR) / "scenes" / f, dir.path() / "scn" / f);
    fs::create_directories(dir.path() / "elsewhere");
    const std::string common = " --quiet --threads 1 " + flags;
    auto r = run_cli_in(dir.path(), "run scn/s.json --steps " + std::to_string(2 * n) + common + " --out straight");
    ASSERT_EQ(r.code, 0) << r.output;
    r = run_cli_in(dir.path(), "run scn/s.json --steps " + std::to_string(n) + common + " --out resumed");
    ASSERT_EQ(r.code, 0) << r.output;
    // The model edited (garbage), then the scene's folder moved away altogether.
    for (const auto& f : files) write_bytes(dir.path() / "scn" / f, "solid garbage\n");
    fs::rename(dir.path() / "scn", dir.path() / "gone");
    r = run_cli_in(dir.path() / "elsewhere", "run --resume " + (dir.path() / "resumed").string() + " --quiet --threads 1 --steps " +
                                                 std::to_string(n));
    ASSERT_EQ(r.code, 0) << r.output;
    const auto a = nlohmann::json::parse(read_bytes(dir.path() / "straight" / "summary.json"));
    const auto b = nlohmann::json::parse(read_bytes(dir.path() / "resumed" / "summary.json"));
    EXPECT_EQ(a["steps"], b["steps"]);
    ASSERT_EQ(a["frames"].size(), b["frames"].size());
    for (std::size_t k = 0; k < a["frames"].size(); ++k)
        for (const auto& f : a["frames"][k]["files"])
            EXPECT_EQ(read_bytes(dir.path() / "straight" / f.get<std::string>()),
                      read_bytes(dir.path() / "resumed" / f.get<std::string>()))
                << f;
    EXPECT_TRUE(fs::is_empty(dir.path() / "elsewhere"));
}

// A 2D DFSPH dam break two steps in: its warm starts are particle fields by now.
Simulation stepped_dam_break_2d(const ExecContext& exec) {
    Simulation sim = make_simulation(load_scene(scene_path("dfsph_dam_break_2d")), 5'000'000, exec);
    step(sim, exec);
    step(sim, exec);
    return sim;
}

// Issue 44: the pieces of a checkpoint of `sim` as two processes write them, rank 0 the rows [0, cut), rank 1 the
// rows from cut + skip (skip > 0: a piece shorter than its index, which lists cut and n - cut), and the index.
void write_two_pieces(Simulation& sim, const fs::path& file, std::size_t cut, std::size_t skip = 0) {
    auto& ps = std::get<ParticleSimulation<2>>(sim);
    const ParticleSet<2> whole = ps.fluid;
    const std::size_t n = whole.size();
    for (int rank : {0, 1}) {
        std::vector<std::uint8_t> mine(n);
        for (std::size_t i = 0; i < n; ++i) mine[i] = rank == 0 ? i < cut : i >= cut + skip;
        ps.fluid = whole;
        ps.fluid.keep(mine);
        write_checkpoint_piece(file, sim, rank);
    }
    ps.fluid = whole;
    write_checkpoint_index(file, sim, nlohmann::json::object(), {cut, n - cut});
}

}  // namespace

TEST(Checkpoint, ResumeNeedsNoModelFile) {
    expect_resume_without_the_files("mesh_dam_break_3d", {"models/plate.stl"}, "--fps 500 --format csv", 4);
}

TEST(Checkpoint, ResumeNeedsNoHeightmap) {
    expect_resume_without_the_files("shallow_valley", {"valley.png"}, "--fps 200 --format csv", 3);
}

// Issue 44: a checkpoint in pieces, written here as two processes would (rows [0, n/3) and [n/3, n)), is
// read back whole on one process and as two shares that put together are the whole, each row once and in
// order; a piece of another rank or a missing one is refused in one line naming it.
TEST(CheckpointPieces, SharesPutTogetherAreTheWholeAndForeignPiecesAreRefused) {
    TempDir dir("pieces");
    ExecContext exec(1);
    Simulation sim = stepped_dam_break_2d(exec);
    auto& ps = std::get<ParticleSimulation<2>>(sim);
    const ParticleSet<2> whole = ps.fluid;
    const std::size_t n = whole.size(), cut = n / 3;
    ASSERT_FALSE(whole.scalars.empty());
    const fs::path file = dir.path() / kCheckpointFile;
    write_two_pieces(sim, file, cut);
    const CheckpointFile index = read_checkpoint_file(file);
    EXPECT_TRUE(index.meta.contains("pieces"));
    nlohmann::json record;
    const Simulation one = restore_simulation(index, exec, record);
    EXPECT_EQ(state_hash(one), state_hash(sim));
    std::vector<std::uint32_t> ids;
    for (int part : {0, 1}) {
        const Simulation s = restore_simulation(index, exec, record, {}, {part, 2});
        const auto& f = std::get<ParticleSimulation<2>>(s).fluid;
        EXPECT_EQ(f.size(), part == 0 ? n / 2 : n - n / 2);
        EXPECT_EQ(f.scalars.size(), whole.scalars.size());
        ids.insert(ids.end(), f.id.begin(), f.id.end());
    }
    EXPECT_EQ(ids, whole.id);
    auto refused = [&](const std::string& words) {
        try {
            restore_simulation(read_checkpoint_file(file), exec, record);
            ADD_FAILURE() << "not refused: " << words;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
    };
    const fs::path p0 = dir.path() / checkpoint_piece_name(ps.steps, 0), p1 = dir.path() / checkpoint_piece_name(ps.steps, 1);
    fs::copy_file(p1, dir.path() / "kept", fs::copy_options::overwrite_existing);
    fs::copy_file(p0, p1, fs::copy_options::overwrite_existing);
    refused("it is not piece 1");
    fs::remove(p1);
    refused("is missing");
}

// Issue 44: a whole checkpoint resumed on three processes: each keeps its run of the rows (n part / 3 to
// n (part + 1) / 3), every field of it as the checkpoint holds it, without holding the others; and a piece
// holding fewer particles than its index lists is refused in one line (its rows are never read past).
TEST(CheckpointPieces, AWholeCheckpointInSharesKeepsEachProcessItsRunAndShortPiecesAreRefused) {
    TempDir dir("whole_shares");
    ExecContext exec(1);
    Simulation sim = stepped_dam_break_2d(exec);
    auto& ps = std::get<ParticleSimulation<2>>(sim);
    const ParticleSet<2> whole = ps.fluid;
    const std::size_t n = whole.size();
    ASSERT_FALSE(whole.scalars.empty());
    const fs::path file = dir.path() / kCheckpointFile;
    write_checkpoint(file, sim, nlohmann::json::object());
    nlohmann::json record;
    for (int part : {0, 1, 2}) {
        const Simulation s = restore_simulation(read_checkpoint_file(file), exec, record, {}, {part, 3});
        const auto& f = std::get<ParticleSimulation<2>>(s).fluid;
        const std::size_t b = n * part / 3, e = n * (part + 1) / 3;
        ASSERT_EQ(f.size(), e - b);
        auto rows = [&](const auto& v) { return std::vector(v.begin() + std::ptrdiff_t(b), v.begin() + std::ptrdiff_t(e)); };
        EXPECT_EQ(f.position, rows(whole.position));
        EXPECT_EQ(f.velocity, rows(whole.velocity));
        EXPECT_EQ(f.acceleration, rows(whole.acceleration));
        EXPECT_EQ(f.density, rows(whole.density));
        EXPECT_EQ(f.pressure, rows(whole.pressure));
        EXPECT_EQ(f.id, rows(whole.id));
        ASSERT_EQ(f.scalars.size(), whole.scalars.size());
        for (std::size_t k = 0; k < f.scalars.size(); ++k) EXPECT_EQ(f.scalars[k].data, rows(whole.scalars[k].data));
        for (std::size_t k = 0; k < f.vectors.size(); ++k) EXPECT_EQ(f.vectors[k].data, rows(whole.vectors[k].data));
        EXPECT_EQ(f.mass, whole.mass);
        EXPECT_EQ(f.next_id, whole.next_id);
    }
    write_two_pieces(sim, file, n / 3, 5);  // rank 1's piece holds the last n - n/3 - 5 rows, its index lists n - n/3
    for (int parts : {1, 2}) {
        try {
            restore_simulation(read_checkpoint_file(file), exec, record, {}, {parts - 1, parts});
            ADD_FAILURE() << "a short piece was not refused";
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("are not those"), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
    }
}
