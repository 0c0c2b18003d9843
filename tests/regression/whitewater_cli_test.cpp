// `eddy run --whitewater` and `eddy whitewater RUN_DIR` as a user meets them: the files with their
// "type" attribute, counts per frame in whitewater.csv, the same bytes on 1 and 2 threads, one-line
// errors with exit code 2 for bad input.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using Result = eddy::test::CommandResult;
using eddy::test::run_cli;

class WhitewaterCli : public eddy::test::TempDirTest {};

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// The bundled 3D dam break, coarse (r = 1 cm, 3,375 particles), to 0.5 s at 10 frames per second.
const std::string kBase = "run dam_break_3d --set particle_radius=0.01 --fps 10 --quiet";
const std::string kRun = kBase + " --until 0.5";

bool one_line(const std::string& s) { return s.find('\n') == s.size() - 1; }

std::string fmt_frame(int k) {
    char b[64];
    std::snprintf(b, sizeof b, "whitewater_%05d.vtp", k);
    return b;
}

std::string fmt_ply(int k) {
    char b[64];
    std::snprintf(b, sizeof b, "whitewater_%05d.ply", k);
    return b;
}

// Positions of a whitewater .ply (binary little-endian: x y z vx vy vz lifetime float, type uchar, id uint).
std::vector<std::array<float, 3>> ply_positions(const fs::path& p) {
    const std::string s = slurp(p);
    const auto at = s.find("element vertex ");
    const auto end = s.find("end_header\n");
    std::vector<std::array<float, 3>> x;
    if (at == std::string::npos || end == std::string::npos) return x;
    const std::size_t n = std::stoul(s.substr(at + 15));
    const std::size_t stride = 7 * 4 + 1 + 4;
    const char* data = s.data() + end + 11;
    if (s.size() < end + 11 + n * stride) return x;
    for (std::size_t i = 0; i < n; ++i) {
        std::array<float, 3> v;
        std::memcpy(v.data(), data + i * stride, 12);
        x.push_back(v);
    }
    return x;
}

// Particles outside the dam break's tank [0, 1] x [0, 0.6] x [0, 0.3] (1e-4 m slack), over frames 0..5.
std::size_t outside_tank(const fs::path& run) {
    std::size_t out = 0;
    for (int k = 0; k <= 5; ++k)
        for (const auto& x : ply_positions(run / "frames" / fmt_ply(k))) {
            const float hi[3] = {1.0f, 0.6f, 0.3f};
            for (int a = 0; a < 3; ++a) out += (x[a] < -1e-4f || x[a] > hi[a] + 1e-4f) ? 1 : 0;
        }
    return out;
}

}  // namespace

TEST_F(WhitewaterCli, LiveAndPostProcessWriteTheFiles) {
    const fs::path live = dir / "live";
    const Result r = run_cli(kRun + " --whitewater --threads 2 -o " + live.string());
    ASSERT_EQ(r.code, 0) << r.output;
    for (int k = 0; k <= 5; ++k) {
        const fs::path vtp = live / "frames" / fmt_frame(k);
        ASSERT_TRUE(fs::exists(vtp)) << vtp;
    }
    const std::string vtp = slurp(live / "frames/whitewater_00005.vtp");
    EXPECT_NE(vtp.find("Name=\"type\""), std::string::npos);
    EXPECT_NE(vtp.find("type=\"UInt8\""), std::string::npos);
    const std::string ply = slurp(live / "frames/whitewater_00005.ply");
    EXPECT_NE(ply.find("property uchar type"), std::string::npos);
    const std::string csv = slurp(live / "whitewater.csv");
    EXPECT_EQ(csv.rfind("frame,time,spray,foam,bubbles\n0,0,0,0,0\n", 0), 0u) << csv;
    EXPECT_NE(slurp(live / "whitewater.pvd").find("frames/whitewater_00005.vtp"), std::string::npos);
    std::printf("live whitewater.csv:\n%s", csv.c_str());

    // The post-process over the same run's frames, on 1 and on 2 threads: the same bytes.
    const fs::path copy = dir / "copy";
    fs::copy(live, copy, fs::copy_options::recursive);
    Result p1 = run_cli("whitewater " + live.string() + " --threads 1 --substeps 4");
    ASSERT_EQ(p1.code, 0) << p1.output;
    Result p2 = run_cli("whitewater " + copy.string() + " --threads 2 --substeps 4");
    ASSERT_EQ(p2.code, 0) << p2.output;
    const std::string post = slurp(live / "whitewater.csv");
    std::printf("post-process whitewater.csv:\n%s", post.c_str());
    EXPECT_EQ(post, slurp(copy / "whitewater.csv"));
    for (int k = 0; k <= 5; ++k) {
        const std::string name = "frames/" + fmt_frame(k);
        EXPECT_EQ(slurp(live / name), slurp(copy / name)) << name;
    }
    // Some whitewater by the end (the column has hit the far wall at 0.5 s).
    const auto last = post.substr(post.rfind('\n', post.size() - 2) + 1);
    EXPECT_NE(last, "5,0.5,0,0,0\n") << post;
    // Live and post-processed, inside the tank: the post-process rebuilt the walls from summary.json's
    // scene_document without a warning.
    EXPECT_EQ(p1.output.find("warning"), std::string::npos) << p1.output;
    EXPECT_GT(ply_positions(live / "frames" / fmt_ply(5)).size(), 0u);
    EXPECT_EQ(outside_tank(live), 0u);
    EXPECT_EQ(outside_tank(copy), 0u);

    // A run whose scene cannot be reloaded (no scene_document, scene_file gone): one warning line, no
    // walls, the files written all the same.
    const fs::path lost = dir / "lost";
    fs::copy(live, lost, fs::copy_options::recursive);
    nlohmann::json summary = nlohmann::json::parse(slurp(lost / "summary.json"));
    ASSERT_TRUE(summary.contains("scene_document"));
    summary.erase("scene_document");
    summary["scene_file"] = (dir / "gone.json").string();
    std::ofstream(lost / "summary.json") << summary.dump();
    const Result p3 = run_cli("whitewater " + lost.string() + " --threads 2 --substeps 4");
    ASSERT_EQ(p3.code, 0) << p3.output;
    EXPECT_NE(p3.output.find("eddy: warning: the run's scene cannot be reloaded"), std::string::npos) << p3.output;
    EXPECT_NE(p3.output.find("whitewater without walls"), std::string::npos) << p3.output;
    EXPECT_TRUE(fs::exists(lost / "frames" / fmt_frame(5)));
}

TEST_F(WhitewaterCli, BadInputIsOneLineAndCode2) {
    Result r = run_cli("whitewater " + (dir / "nowhere").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_TRUE(one_line(r.output)) << r.output;
    EXPECT_NE(r.output.find("no such folder"), std::string::npos) << r.output;

    r = run_cli("whitewater " + dir.string());  // a folder without summary.json
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_TRUE(one_line(r.output)) << r.output;
    EXPECT_NE(r.output.find("summary.json"), std::string::npos) << r.output;

    const fs::path run = dir / "run";
    ASSERT_EQ(run_cli(kBase + " --until 0.1 -o " + run.string()).code, 0);
    r = run_cli("whitewater " + run.string() + " --set bogus=1");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_TRUE(one_line(r.output)) << r.output;
    EXPECT_NE(r.output.find("bogus"), std::string::npos) << r.output;
    r = run_cli("whitewater " + run.string() + " --set kinetic_min=9 --set kinetic_max=2");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("kinetic_min"), std::string::npos) << r.output;
    r = run_cli("whitewater " + run.string() + " --substeps 0");
    EXPECT_EQ(r.code, 2) << r.output;

    r = run_cli(kBase + " --until 0.1 --ww-set seed=3 -o " + (dir / "r2").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--whitewater"), std::string::npos) << r.output;
    r = run_cli("run --resume " + run.string() + " --whitewater");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_TRUE(one_line(r.output)) << r.output;
    EXPECT_NE(r.output.find("--whitewater"), std::string::npos) << r.output;
}

// A run whose first frames hold no particles (an emitter yet to pour) is post-processed: those frames have
// no whitewater, and the files are written.
TEST_F(WhitewaterCli, FramesWithoutParticles) {
    const fs::path run = dir / "tap";
    Result r = run_cli("run tap_into_bowl_3d --set particle_radius=0.01 --until 0.1 --quiet -o " + run.string());
    ASSERT_EQ(r.code, 0) << r.output;
    r = run_cli("whitewater " + run.string());
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(slurp(run / "whitewater.csv").rfind("frame,time,spray,foam,bubbles\n0,0,0,0,0\n", 0), 0u);
    EXPECT_TRUE(fs::exists(run / "frames/whitewater_00000.vtp"));
}
