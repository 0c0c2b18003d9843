// Checkpoint and resume (issue 12): a run stopped and resumed ends in the same bits as one that never
// stopped, for every method; a run killed with SIGKILL resumes from its last checkpoint; a foreign,
// torn or corrupt checkpoint is refused with one line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <fstream>
#include <iterator>

#include "eddy/checkpoint.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

using namespace eddy;
using eddy::test::run_cli;
using eddy::test::TempDir;

namespace {

std::string read_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Scene bundled(const std::string& name, std::vector<std::string> sets = {}) {
    return load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / (name + ".json"), sets);
}

RunOptions options(const std::filesystem::path& out, std::uint64_t steps) {
    RunOptions o;
    o.out_dir = out;
    o.max_steps = steps;
    o.fps = 400.0;  // frames every few steps: frame numbering and .pvd collections must carry on too
    o.formats = {"csv", "vtk"};
    o.checkpoint_at_end = true;
    return o;
}

// 2n steps straight, against n steps, a checkpoint, a fresh simulation read from it and n more steps:
// the same particle bits, the same last frame file, the same frame list.
void expect_resume_is_seamless(const Scene& scene, std::uint64_t n) {
    SCOPED_TRACE(scene.name + " (" + scene.method + ")");
    TempDir dir("checkpoint");
    ExecContext exec(2);
    Simulation straight = make_simulation(scene, 5'000'000, exec);
    const RunResult a = run(straight, options(dir.path() / "straight", 2 * n), exec);
    ASSERT_EQ(a.exit_code, kExitOk) << a.message;

    {
        Simulation first = make_simulation(scene, 5'000'000, exec);
        const RunResult b = run(first, options(dir.path() / "resumed", n), exec);
        ASSERT_EQ(b.exit_code, kExitOk) << b.message;
    }  // the first process is gone: only the folder remains
    nlohmann::json record;
    Simulation resumed = read_checkpoint(dir.path() / "resumed" / kCheckpointFile, exec, record);
    RunOptions o = options(dir.path() / "resumed", n);
    o.resume = &record;
    const RunResult c = run(resumed, o, exec);
    ASSERT_EQ(c.exit_code, kExitOk) << c.message;

    EXPECT_EQ(state_hash(straight), state_hash(resumed));
    ASSERT_EQ(a.frames.size(), c.frames.size());
    for (std::size_t k = 0; k < a.frames.size(); ++k) {
        EXPECT_EQ(a.frames[k].time, c.frames[k].time) << "frame " << k;
        EXPECT_EQ(a.frames[k].files, c.frames[k].files) << "frame " << k;
    }
    const std::string last = a.frames.back().files.front();
    EXPECT_EQ(read_bytes(dir.path() / "straight" / last), read_bytes(dir.path() / "resumed" / last)) << last;
    EXPECT_EQ(read_bytes(dir.path() / "straight" / "particles.pvd"), read_bytes(dir.path() / "resumed" / "particles.pvd"));
    // The walls' loads of every frame, the frame cut by the checkpoint included (its accumulator is in
    // the record).
    if (!scene.boundaries.empty()) {
        EXPECT_TRUE(std::filesystem::exists(dir.path() / "straight" / "forces.csv"));
        EXPECT_EQ(read_bytes(dir.path() / "straight" / "forces.csv"), read_bytes(dir.path() / "resumed" / "forces.csv"));
    }
    // The bodies of every frame (their engine's world is rebuilt from their state each step).
    if (!scene.bodies.empty()) {
        EXPECT_TRUE(std::filesystem::exists(dir.path() / "straight" / "bodies.csv"));
        EXPECT_EQ(read_bytes(dir.path() / "straight" / "bodies.csv"), read_bytes(dir.path() / "resumed" / "bodies.csv"));
    }
    EXPECT_EQ(a.summary["steps"], c.summary["steps"]);
    EXPECT_EQ(a.summary["mean_density_error"], c.summary["mean_density_error"]);
}

}  // namespace

TEST(Checkpoint, ResumeIsSeamlessWcsph) {
    // A reordering (every 8 steps) falls after the checkpoint: its phase is part of the state.
    expect_resume_is_seamless(bundled("dam_break_2d", {"settings.sort_interval=8"}), 100);
}

TEST(Checkpoint, ResumeIsSeamlessWcsphMovingWalls) { expect_resume_is_seamless(bundled("rotating_circle_2d"), 60); }

TEST(Checkpoint, ResumeIsSeamlessDfsph) {
    expect_resume_is_seamless(bundled("dfsph_dam_break_2d", {"settings.sort_interval=8"}), 40);
    expect_resume_is_seamless(bundled("dfsph_dam_break_3d", {"settings.sort_interval=8"}), 10);
    // The implicit viscosity's warm start (the last correction, a particle field) is part of the state.
    expect_resume_is_seamless(bundled("dfsph_syrup_2d", {"settings.sort_interval=8"}), 40);
}

TEST(Checkpoint, ResumeIsSeamlessPbf) {
    expect_resume_is_seamless(bundled("pbf_dam_break_2d", {"settings.sort_interval=8"}), 40);
    expect_resume_is_seamless(bundled("pbf_drop_3d"), 10);
}

TEST(Checkpoint, ResumeIsSeamlessClavet) {
    // Springs (plasticity) are state the particles do not carry; both modes.
    expect_resume_is_seamless(bundled("clavet_slime_2d"), 40);
    expect_resume_is_seamless(bundled("clavet_drop_2d", {"settings.mode=sequential"}), 40);
}

TEST(Checkpoint, ResumeIsSeamless3D) { expect_resume_is_seamless(bundled("dam_break_3d"), 10); }

// The CLI: a run killed with SIGKILL in the middle resumes from its last periodic checkpoint and ends
// with the same last frame as a run never killed; --resume of a finished run takes it further.
TEST(Checkpoint, KilledRunResumesFromTheCli) {
    TempDir dir("checkpoint_cli");
    const std::string scene = (std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / "dam_break_2d.json").string();
    const std::string straight = (dir.path() / "straight").string(), killed = (dir.path() / "killed").string();
    auto r = run_cli("run " + scene + " --quiet --until 0.3 --fps 20 --format csv --out " + straight);
    ASSERT_EQ(r.code, 0) << r.output;
    // Killed as soon as its first periodic checkpoint (t = 0.05 s) is there, well before t = 0.3 s.
    const std::string cmd = "( " + std::string(EDDY_CLI) + " run " + scene +
                            " --quiet --until 0.3 --fps 20 --format csv --checkpoint-every 0.05 --out " + killed +
                            " & pid=$!; for i in $(seq 1 3000); do [ -f " + killed +
                            "/checkpoint.eddy ] && break; sleep 0.01; done; kill -KILL $pid; wait $pid; echo killed=$? )";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    ASSERT_NE(out.find("killed=137"), std::string::npos) << "the run was not killed mid-way: " << out;
    const auto killed_summary = nlohmann::json::parse(read_bytes(dir.path() / "killed" / "summary.json"));
    EXPECT_EQ(killed_summary["status"], "running") << "a killed run's folder must not claim it completed";

    r = run_cli("run --resume " + killed + " --quiet");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto a = nlohmann::json::parse(read_bytes(dir.path() / "straight" / "summary.json"));
    const auto b = nlohmann::json::parse(read_bytes(dir.path() / "killed" / "summary.json"));
    EXPECT_EQ(b["status"], "completed");
    EXPECT_EQ(a["steps"], b["steps"]);
    ASSERT_EQ(a["frames"].size(), b["frames"].size());
    for (std::size_t k = 0; k < a["frames"].size(); ++k) {
        const std::string f = a["frames"][k]["files"][0];
        EXPECT_EQ(read_bytes(dir.path() / "straight" / f), read_bytes(dir.path() / "killed" / f)) << f;
    }

    // A finished run goes further; --resume does not take a scene or change the output.
    r = run_cli("run --resume " + killed + " --quiet --until 0.35");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(nlohmann::json::parse(read_bytes(dir.path() / "killed" / "summary.json"))["simulated_time"], 0.35);
    r = run_cli("run dam_break_2d --resume " + killed);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("cannot change a run being resumed"), std::string::npos) << r.output;
    r = run_cli("run --resume " + killed + " --until 0.1");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("already"), std::string::npos) << r.output;
}

// A fresh run into a folder that held another run: no stale checkpoint or .pvd survives.
TEST(Checkpoint, FreshRunClearsTheFolder) {
    TempDir dir("checkpoint_fresh");
    const std::string out = (dir.path() / "out").string();
    const std::string scene = (std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / "dam_break_2d.json").string();
    auto r = run_cli("run " + scene + " --quiet --steps 3 --format vtk --out " + out);
    ASSERT_EQ(r.code, 0) << r.output;
    ASSERT_TRUE(std::filesystem::exists(dir.path() / "out" / "particles.pvd"));
    ASSERT_TRUE(std::filesystem::exists(dir.path() / "out" / kCheckpointFile));
    r = run_cli("run " + scene + " --quiet --steps 3 --format csv --out " + out);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "particles.pvd")) << "a stale collection of deleted frames";
}

TEST(Checkpoint, ForeignTornOrCorruptCheckpointsAreRefused) {
    TempDir dir("checkpoint_bad");
    const std::string out = (dir.path() / "out").string();
    const std::string scene = (std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / "dam_break_2d.json").string();
    auto r = run_cli("run " + scene + " --quiet --steps 3 --format csv --out " + out);
    ASSERT_EQ(r.code, 0) << r.output;
    const auto file = dir.path() / "out" / kCheckpointFile;
    const std::string good = read_bytes(file);
    auto expect_refused = [&](const std::string& bytes, const std::string& words) {
        std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
        const auto res = run_cli("run --resume " + out + " --quiet");
        EXPECT_EQ(res.code, 2) << res.output;
        EXPECT_NE(res.output.find(words), std::string::npos) << res.output;
        EXPECT_NE(res.output.find(file.string()), std::string::npos) << "the message names the file: " << res.output;
        EXPECT_EQ(std::count(res.output.begin(), res.output.end(), '\n'), 1) << "one line: " << res.output;
    };
    std::string flipped = good;
    flipped[flipped.size() / 2] ^= 0x40;
    expect_refused(flipped, "corrupt checkpoint");
    expect_refused(good.substr(0, good.size() / 3), "corrupt checkpoint");
    expect_refused(good.substr(0, 5), "not an eddy checkpoint");
    // Another version's checkpoint is whole (its checksum matches): the version message. A damaged
    // version field is "corrupt" (the checksum is checked first; AFlippedBitIsCorruptNotAnotherVersion).
    const CheckpointFile whole = read_checkpoint_bytes(good, file);
    std::string other = encode_checkpoint(whole.meta, whole.state);
    other[16] = other[16] == '9' ? '8' : '9';  // the version text starts at byte 16
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i + 8 < other.size(); ++i) {
        h ^= static_cast<unsigned char>(other[i]);
        h *= 1099511628211ull;
    }
    std::memcpy(&other[other.size() - 8], &h, 8);
    expect_refused(other, "written by eddy");
    expect_refused("", "not an eddy checkpoint");
    std::filesystem::remove(file);
    r = run_cli("run --resume " + out + " --quiet");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("no checkpoint there"), std::string::npos) << r.output;
}

// Grids: the same for shallow water (sources and drops carry on too; river_logs: floating bodies, their
// bodies.csv and summary entry too).
TEST(Checkpoint, ResumeIsSeamlessShallowWater) {
    for (const char* name : {"shallow_dam_break_wet", "shallow_drops", "river_logs"}) {
        SCOPED_TRACE(name);
        TempDir dir("checkpoint_grid");
        ExecContext exec(2);
        const Scene scene = bundled(name);
        RunOptions o;
        o.fps = 200.0;
        o.formats = {"vti"};
        o.checkpoint_at_end = true;
        ShallowWaterSimulation straight = make_shallow_water(scene);
        o.out_dir = dir.path() / "straight";
        o.max_steps = 80;
        ASSERT_EQ(run(straight, o, exec).exit_code, kExitOk);
        {
            ShallowWaterSimulation first = make_shallow_water(scene);
            o.out_dir = dir.path() / "resumed";
            o.max_steps = 40;
            ASSERT_EQ(run(first, o, exec).exit_code, kExitOk);
        }
        nlohmann::json record;
        ShallowWaterSimulation resumed =
            restore_shallow_water(read_checkpoint_file(dir.path() / "resumed" / kCheckpointFile), record);
        o.resume = &record;
        const RunResult c = run(resumed, o, exec);
        ASSERT_EQ(c.exit_code, kExitOk) << c.message;
        EXPECT_EQ(state_hash(straight), state_hash(resumed));
        EXPECT_EQ(read_bytes(dir.path() / "straight" / "grid.pvd"), read_bytes(dir.path() / "resumed" / "grid.pvd"));
        const auto a = nlohmann::json::parse(read_bytes(dir.path() / "straight" / "summary.json"));
        EXPECT_EQ(a["frames"], c.summary["frames"]);
        EXPECT_EQ(a["volume_final"], c.summary["volume_final"]);
        if (std::string(name) == "river_logs") {
            ASSERT_TRUE(a.contains("bodies"));
            EXPECT_EQ(a["bodies"], c.summary["bodies"]);
            EXPECT_EQ(a["volume_displaced_final"], c.summary["volume_displaced_final"]);
            const std::string csv = read_bytes(dir.path() / "straight" / "bodies.csv");
            EXPECT_GT(std::count(csv.begin(), csv.end(), '\n'), 4 * 20);  // header + 4 bodies x 21 frames
            EXPECT_EQ(csv, read_bytes(dir.path() / "resumed" / "bodies.csv"));
        }
    }
}

// "fluids": [{"shape": "file"}] starts a scene from a frame of an earlier run: the particles and their
// velocities as written (csv and vtp), in 2D and 3D; a 3D file in a 2D scene is refused.
TEST(Checkpoint, SceneStartsFromAParticleFile) {
    TempDir dir("fluid_file");
    ExecContext exec(2);
    for (const char* name : {"dam_break_2d", "dam_break_3d"}) {
        SCOPED_TRACE(name);
        const Scene scene = bundled(name);
        Simulation sim = make_simulation(scene, 5'000'000, exec);
        RunOptions o;
        o.out_dir = dir.path() / name;
        o.max_steps = 5;
        o.fps = 1e5;
        o.formats = {"csv", "vtk"};
        ASSERT_EQ(run(sim, o, exec).exit_code, kExitOk);
        const std::string last = read_bytes(dir.path() / name / "frames" / "particles_00005.csv");
        for (const char* ext : {"csv", "vtp"}) {
            nlohmann::json j = nlohmann::json::parse(read_bytes(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / (std::string(name) + ".json")));
            j["fluids"] = {{{"shape", "file"}, {"file", (dir.path() / name / "frames" / (std::string("particles_00005.") + ext)).string()}}};
            const Scene from_file = parse_scene(j, (dir.path() / "from_file.json").string());
            Simulation s2 = make_simulation(from_file, 5'000'000, exec);
            std::visit(
                [&](const auto& a) {
                    const auto& b = std::get<std::remove_cvref_t<decltype(a)>>(s2);
                    ASSERT_EQ(a.fluid.size(), b.fluid.size());
                    // The same particles (ids and order may differ: compare sorted positions and velocities).
                    auto rows = [](const auto& f) {
                        std::vector<std::vector<float>> r;
                        for (std::size_t k = 0; k < f.size(); ++k) {
                            std::vector<float> row;
                            for (int d = 0; d < std::remove_cvref_t<decltype(a)>::kDimension; ++d) row.push_back(f.position[k][d]);
                            for (int d = 0; d < std::remove_cvref_t<decltype(a)>::kDimension; ++d) row.push_back(f.velocity[k][d]);
                            r.push_back(row);
                        }
                        std::sort(r.begin(), r.end());
                        return r;
                    };
                    EXPECT_EQ(rows(a.fluid), rows(b.fluid)) << ext;
                },
                sim);
        }
        (void)last;
    }
    nlohmann::json j = nlohmann::json::parse(read_bytes(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / "dam_break_2d.json"));
    j["fluids"] = {{{"shape", "file"}, {"file", (dir.path() / "dam_break_3d" / "frames" / "particles_00005.csv").string()}}};
    try {
        parse_scene(j, "from_file.json");
        ADD_FAILURE() << "a 3D file in a 2D scene was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("3D particle file in a 2D scene"), std::string::npos) << e.what();
    }
}

TEST(Checkpoint, ResumeIsSeamlessBodies) {
    // Five bodies falling into a tank (Box2D: contacts with the floor and the fluid), and debris in a 3D
    // dam break (Bullet).
    expect_resume_is_seamless(bundled("floating_boxes_2d"), 40);
    expect_resume_is_seamless(bundled("dam_break_debris_3d", {"particle_radius=0.02"}), 10);
}
