// `eddy run --wall-pressure` and the scene's output.wall_pressure (issue 28): the walls every frame
// (frames/walls_NNNNN.vtp, walls.pvd) with a point array "pressure" on every piece; a resumed run keeps
// the option; a bad value or a grid scene is one line, exit 2. When VTK's Python module is installed
// (python3-vtk9), VTK's own reader opens the file: the wall particles and the array must be there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using Result = eddy::test::CommandResult;
using eddy::test::run_cli;
using eddy::test::run_shell;

class WallPressureCli : public eddy::test::TempDirTest {};

// A 2D tank with 0.1 m of water, r = 5 mm; 5 frames (fps 50) up to 0.08 s.
const char* kTank = R"({
  "name": "wp_tank", "dimension": 2, "method": "wcsph", "particle_radius": 0.005,
  "gravity": [0, -9.81], "duration": 0.08, "output": { "fps": 50 OUTPUT },
  "boundaries": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.2] } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.1] } ] })";

std::string tank(const std::string& output_extra) {
    std::string s = kTank;
    s.replace(s.find("OUTPUT"), 6, output_extra);
    return s;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The n-th (0-based) "pressure" array of a walls .vtp written by eddy (appended raw, UInt64 headers).
std::vector<float> pressure_array(const std::string& vtp, int which) {
    std::size_t at = 0;
    for (int k = 0; k <= which; ++k) {
        at = vtp.find("Name=\"pressure\"", at + (k ? 1 : 0));
        if (at == std::string::npos) return {};
    }
    const std::size_t off = vtp.find("offset=\"", at) + 8;
    const std::uint64_t offset = std::stoull(vtp.substr(off, vtp.find('"', off) - off));
    const std::size_t base = vtp.find("<AppendedData encoding=\"raw\">");
    const std::size_t data = vtp.find('_', base) + 1 + offset;
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, vtp.data() + data, 8);
    std::vector<float> v(bytes / 4);
    std::memcpy(v.data(), vtp.data() + data + 8, bytes);
    return v;
}

std::size_t boundary_particles(const fs::path& out) {
    return nlohmann::json::parse(std::ifstream(out / "summary.json"))["boundary_particles"].get<std::size_t>();
}

}  // namespace

TEST_F(WallPressureCli, FlagWritesTheWallsEveryFrameWithPressure) {
    const fs::path scene = write("tank.json", tank(""));
    const fs::path out = dir / "out";
    const Result r = run_cli("run " + scene.string() + " --quiet --wall-pressure --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.output;
    for (const char* f : {"frames/walls_00000.vtp", "frames/walls_00001.vtp", "frames/walls_00004.vtp", "walls.pvd"})
        EXPECT_TRUE(fs::exists(out / f)) << f;
    EXPECT_FALSE(fs::exists(out / "frames/walls.vtp"));
    const std::string pvd = slurp(out / "walls.pvd");
    EXPECT_NE(pvd.find("frames/walls_00004.vtp"), std::string::npos) << pvd;
    const std::string vtp = slurp(out / "frames/walls_00004.vtp");
    // Both pieces (particles, models) carry the array, or ParaView drops the data (issue 31).
    std::size_t pieces = 0, arrays = 0;
    for (std::size_t at = vtp.find("<Piece "); at != std::string::npos; at = vtp.find("<Piece ", at + 1)) ++pieces;
    for (std::size_t at = vtp.find("Name=\"pressure\""); at != std::string::npos; at = vtp.find("Name=\"pressure\"", at + 1))
        ++arrays;
    EXPECT_EQ(arrays, pieces);
    const std::vector<float> p = pressure_array(vtp, 0);
    ASSERT_EQ(p.size(), boundary_particles(out));
    // The floor under 0.1 m of water reads about rho0 g H = 981 N/m; the lid, far above the water, 0.
    const float top = *std::max_element(p.begin(), p.end());
    EXPECT_GT(top, 700.0f);
    EXPECT_LT(top, 1500.0f);
    EXPECT_GT(std::count(p.begin(), p.end(), 0.0f), 20);
    // Without the flag the walls are written once, as before, with no pressure.
    const Result plain = run_cli("run " + scene.string() + " --quiet --out " + (dir / "plain").string());
    ASSERT_EQ(plain.code, 0) << plain.output;
    EXPECT_TRUE(fs::exists(dir / "plain/frames/walls.vtp"));
    EXPECT_FALSE(fs::exists(dir / "plain/frames/walls_00001.vtp"));
    EXPECT_EQ(slurp(dir / "plain/frames/walls.vtp").find("pressure"), std::string::npos);
}

TEST_F(WallPressureCli, SceneKeyAndResumeKeepIt) {
    const fs::path scene = write("tank.json", tank(", \"wall_pressure\": true"));
    const fs::path out = dir / "out";
    const Result r = run_cli("run " + scene.string() + " --quiet --until 0.04 --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(fs::exists(out / "frames/walls_00002.vtp"));
    const Result again = run_cli("run --resume " + out.string() + " --quiet --until 0.08");
    ASSERT_EQ(again.code, 0) << again.output;
    EXPECT_TRUE(fs::exists(out / "frames/walls_00004.vtp"));
    EXPECT_EQ(pressure_array(slurp(out / "frames/walls_00004.vtp"), 0).size(), boundary_particles(out));
    const std::string pvd = slurp(out / "walls.pvd");
    EXPECT_NE(pvd.find("frames/walls_00001.vtp"), std::string::npos) << pvd;  // the first run's, kept
    EXPECT_NE(pvd.find("frames/walls_00004.vtp"), std::string::npos) << pvd;
    // --wall-pressure cannot change a run being resumed.
    const Result change = run_cli("run --resume " + out.string() + " --quiet --until 0.1 --wall-pressure");
    EXPECT_EQ(change.code, 2) << change.output;
    EXPECT_NE(change.output.find("--wall-pressure"), std::string::npos) << change.output;
}

TEST_F(WallPressureCli, BadValuesAndGridScenesExit2) {
    const fs::path bad = write("bad.json", tank(", \"wall_pressure\": 1"));
    const Result r = run_cli("run " + bad.string() + " --quiet --out " + (dir / "bad").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("output.wall_pressure"), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    const char* grid = R"({"name": "g", "method": "shallow_water", "grid": {"cells": [8, 8], "dx": 0.1},
                           "water": {"depth": "0.1"}, "duration": 0.01, OUTPUT})";
    std::string g = grid;
    g.replace(g.find("OUTPUT"), 6, "\"output\": {\"wall_pressure\": true}");
    const Result gk = run_cli("run " + write("g1.json", g).string() + " --quiet --out " + (dir / "g1").string());
    EXPECT_EQ(gk.code, 2) << gk.output;
    EXPECT_NE(gk.output.find("wall_pressure"), std::string::npos) << gk.output;
    g = grid;
    g.replace(g.find(", OUTPUT"), 8, "");
    const Result gf =
        run_cli("run " + write("g2.json", g).string() + " --quiet --wall-pressure --out " + (dir / "g2").string());
    EXPECT_EQ(gf.code, 2) << gf.output;
    EXPECT_NE(gf.output.find("--wall-pressure"), std::string::npos) << gf.output;
}

// VTK's own reader (not eddy's): the file a ParaView user opens.
TEST_F(WallPressureCli, VtkReadsTheWallsAndTheirPressure) {
    if (run_shell("/usr/bin/python3 -c 'import vtk' 2>&1").code != 0)
        GTEST_SKIP() << "VTK's Python module is not installed (apt install python3-vtk9); the file was checked by "
                        "eddy's own parse in FlagWritesTheWallsEveryFrameWithPressure only";
    const fs::path scene = write("tank.json", tank(""));
    const fs::path out = dir / "out";
    const Result r = run_cli("run " + scene.string() + " --quiet --wall-pressure --until 0.04 --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.output;
    const fs::path py = write("read.py", R"(import sys, vtk
r = vtk.vtkXMLPolyDataReader()
r.SetFileName(sys.argv[1])
r.Update()
o = r.GetOutput()
a = o.GetPointData().GetArray("pressure")
print(o.GetNumberOfPoints(), -1 if a is None else a.GetNumberOfTuples(), -1 if a is None else a.GetRange()[1])
)");
    const Result v = run_shell("/usr/bin/python3 " + py.string() + " " + (out / "frames/walls_00001.vtp").string() + " 2>&1");
    ASSERT_EQ(v.code, 0) << v.output;
    std::istringstream in(v.output);
    long long points = 0, tuples = 0;
    double top = 0.0;
    in >> points >> tuples >> top;
    const long long n = static_cast<long long>(boundary_particles(out));  // a box: no model vertices
    EXPECT_EQ(points, n) << v.output;
    EXPECT_EQ(tuples, n) << v.output;
    EXPECT_GT(top, 500.0) << v.output;
}
