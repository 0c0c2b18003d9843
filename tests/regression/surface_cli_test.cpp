// `eddy mesh` and `eddy run --mesh` as a user meets them: outputs on disk, one-line errors, exit code 2.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using eddy::test::run_cli;

class SurfaceCli : public eddy::test::TempDirTest {
protected:
    std::string q(const fs::path& p) const { return "'" + p.string() + "'"; }
};

std::size_t count_lines(const fs::path& p, char first) {
    std::ifstream in(p);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.size() > 1 && line[0] == first && line[1] == ' ';
    return n;
}

// A cube of 10^3 particles (r = 0.01, spacing 0.02) as csv.
std::string cube_csv(bool nan = false) {
    std::string s = "id,x,y,z\n";
    int id = 0;
    for (int k = 0; k < 10; ++k)
        for (int j = 0; j < 10; ++j)
            for (int i = 0; i < 10; ++i, ++id)
                s += std::to_string(id) + "," + std::to_string(0.02 * i) + "," +
                     (nan && id == 123 ? std::string("nan") : std::to_string(0.02 * j)) + "," + std::to_string(0.02 * k) + "\n";
    return s;
}

}  // namespace

TEST_F(SurfaceCli, MeshesAParticleFileWithGridsAndAFolderOfFrames) {
    const auto in = write("cube.csv", cube_csv());
    const auto r = run_cli("mesh " + q(in) + " --out " + q(dir / "cube.obj") + " --radius 0.01 --smooth 2 --sdf " +
                           q(dir / "cube.vti") + " --sdf " + q(dir / "cube.vdb"));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_GT(count_lines(dir / "cube.obj", 'f'), 1000u);
    // A closed genus-0 triangle mesh has V = F / 2 + 2.
    EXPECT_EQ(count_lines(dir / "cube.obj", 'v'), count_lines(dir / "cube.obj", 'f') / 2 + 2);
    EXPECT_GT(fs::file_size(dir / "cube.vti"), 10000u);
    EXPECT_GT(fs::file_size(dir / "cube.vdb"), 1000u);

    // A folder of frames: one mesh per frame, radius from the run's summary.json.
    const auto run = run_cli("run dam_break_2d --until 0.04 --fps 50 --format csv --quiet --out " + q(dir / "run"));
    ASSERT_EQ(run.code, 0) << run.output;
    const auto m = run_cli("mesh " + q(dir / "run" / "frames") + " --out " + q(dir / "meshes") + " --format ply");
    ASSERT_EQ(m.code, 0) << m.output;
    EXPECT_NE(m.output.find("3 frame(s), 2D"), std::string::npos) << m.output;
    for (const char* f : {"surface_00000.ply", "surface_00001.ply", "surface_00002.ply"})
        EXPECT_TRUE(fs::exists(dir / "meshes" / f)) << f;
}

TEST_F(SurfaceCli, RunWritesASurfaceBesideEachFrame) {
    const auto r = run_cli("run dam_break_3d --until 0.02 --fps 100 --quiet --mesh --out " + q(dir / "run"));
    ASSERT_EQ(r.code, 0) << r.output;
    for (const char* f : {"surface_00000.obj", "surface_00001.obj", "surface_00002.obj"}) {
        ASSERT_TRUE(fs::exists(dir / "run" / "frames" / f)) << f;
        EXPECT_GT(count_lines(dir / "run" / "frames" / f, 'f'), 1000u);
    }
    std::ifstream summary(dir / "run" / "summary.json");
    const std::string text((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("frames/surface_00002.obj"), std::string::npos);
    // PLY instead, and a rerun into the same folder replaces the old surfaces.
    const auto p = run_cli("run dam_break_2d --until 0.02 --fps 100 --quiet --mesh --mesh-format ply --out " + q(dir / "run"));
    ASSERT_EQ(p.code, 0) << p.output;
    EXPECT_TRUE(fs::exists(dir / "run" / "frames" / "surface_00002.ply"));
    EXPECT_FALSE(fs::exists(dir / "run" / "frames" / "surface_00002.obj"));
}

TEST_F(SurfaceCli, BadInputIsOneLineAndExitCode2) {
    const auto empty = write("empty.csv", "");
    const auto header = write("header.csv", "id,x,y,z\n");
    const auto nan = write("nan.csv", cube_csv(true));
    const auto good = write("good.csv", cube_csv());
    struct Case {
        std::string args, expect;
    } cases[] = {
        {"mesh " + q(empty) + " --out " + q(dir / "a.obj") + " --radius 0.01", "empty.csv: no particles"},
        {"mesh " + q(header) + " --out " + q(dir / "a.obj") + " --radius 0.01", "header.csv: no particles"},
        {"mesh " + q(nan) + " --out " + q(dir / "a.obj") + " --radius 0.01", "not finite"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj") + " --radius 0.01 --voxel 0", "key 'voxel' = 0: allowed"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj") + " --radius 0.01 --voxel -0.5", "key 'voxel' = -0.5"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj") + " --radius 0", "key 'radius' = 0"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj") + " --radius 0.01 --voxel 1e-6", "below 1/64 of the kernel radius"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj"), "key 'radius' is not given"},
        {"mesh " + q(dir / "missing.csv") + " --out " + q(dir / "a.obj") + " --radius 0.01", "missing.csv: no such file"},
        {"mesh " + q(good) + " --out " + q(dir / "a.stl") + " --radius 0.01", "allowed: a .obj, .ply or .vtp file"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj") + " --radius 0.01 --iso 1.5", "key 'iso' = 1.5"},
        {"mesh " + q(good) + " --out " + q(dir / "a.obj") + " --radius 0.01 --sdf " + q(dir / "a.nc"), "allowed: .vti, .vdb"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.args);
        const auto r = run_cli(c.args);
        EXPECT_EQ(r.code, 2) << r.output;
        EXPECT_NE(r.output.find(c.expect), std::string::npos) << r.output;
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
        EXPECT_FALSE(fs::exists(dir / "a.obj"));
    }
}
