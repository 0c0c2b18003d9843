// `eddy mesh FOLDER` as a sequence (issue 32 part 4): surface.pvd at the particles' own times (from
// particles.pvd, else summary.json's fps, else the frame numbers), .vtp beside obj/ply for ParaView,
// --format vtp, and the decimation flags (issue 32 part 2) on eddy mesh and eddy run --mesh.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "eddy/io.hpp"
#include "eddy/surface.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using eddy::test::run_cli;

class MeshSequenceCli : public eddy::test::TempDirTest {
protected:
    std::string q(const fs::path& p) const { return "'" + p.string() + "'"; }
    // Frames particles_00003.vtp, particles_00007.vtp, particles_00010.vtp in dir/run/frames: a ball of
    // lattice particles (r = 0.01) moving along x.
    fs::path frames() const {
        const fs::path f = dir / "run" / "frames";
        fs::create_directories(f);
        for (int n : {3, 7, 10}) {
            eddy::ParticleSet<3> p;
            for (int k = -6; k <= 6; ++k)
                for (int j = -6; j <= 6; ++j)
                    for (int i = -6; i <= 6; ++i)
                        if (i * i + j * j + k * k < 36)
                            p.push_back(eddy::Vec3{{0.02f * i + 0.01f * n, 0.02f * j, 0.02f * k}}, eddy::Vec3{{0.1f, 0, 0}});
            eddy::io::write_vtp<3>(f / fmt::format("particles_{:05d}.vtp", n), p);
        }
        return f;
    }
    static std::string read(const fs::path& p) {
        std::ifstream in(p);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
};

std::size_t count_lines(const fs::path& p, char first) {
    std::ifstream in(p);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.size() > 1 && line[0] == first && line[1] == ' ';
    return n;
}

}  // namespace

TEST_F(MeshSequenceCli, SurfacePvdAtTheParticlesTimes) {
    const fs::path f = frames();
    // eddy run's particles.pvd in the run folder (the parent of frames/): its times, whatever the fps says.
    eddy::io::write_pvd(dir / "run" / "particles.pvd", {{0.125, "frames/particles_00003.vtp"},
                                                        {0.375, "frames/particles_00007.vtp"},
                                                        {2.5, "frames/particles_00010.vtp"}});
    std::ofstream(dir / "run" / "summary.json") << R"({"particle_radius": 0.01, "fps": 1000})";
    const auto r = run_cli("mesh " + q(f) + " --out " + q(dir / "obj") + " --threads 2");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("times from particles.pvd"), std::string::npos) << r.output;
    const std::string pvd = read(dir / "obj" / "surface.pvd");
    for (const char* entry : {R"(timestep="0.125" group="" part="0" file="surface_00003.vtp")",
                              R"(timestep="0.375" group="" part="0" file="surface_00007.vtp")",
                              R"(timestep="2.5" group="" part="0" file="surface_00010.vtp")"})
        EXPECT_NE(pvd.find(entry), std::string::npos) << entry << " not in " << pvd;
    for (const char* name : {"surface_00003", "surface_00007", "surface_00010"}) {
        EXPECT_GT(count_lines(dir / "obj" / (std::string(name) + ".obj"), 'f'), 500u) << name;
        const std::string vtp = read(dir / "obj" / (std::string(name) + ".vtp"));
        EXPECT_NE(vtp.find("<Polys>"), std::string::npos) << name;  // the same surface, as VTK PolyData
    }

    // No particles.pvd: summary.json's fps (frame number / fps).
    fs::remove(dir / "run" / "particles.pvd");
    std::ofstream(dir / "run" / "summary.json") << R"({"particle_radius": 0.01, "fps": 4})";
    const auto v = run_cli("mesh " + q(f) + " --out " + q(dir / "vtp") + " --format vtp");
    ASSERT_EQ(v.code, 0) << v.output;
    EXPECT_NE(v.output.find("times from summary.json fps"), std::string::npos) << v.output;
    const std::string pvd2 = read(dir / "vtp" / "surface.pvd");
    EXPECT_NE(pvd2.find(R"(timestep="0.75" group="" part="0" file="surface_00003.vtp")"), std::string::npos) << pvd2;
    EXPECT_NE(pvd2.find(R"(timestep="2.5" group="" part="0" file="surface_00010.vtp")"), std::string::npos) << pvd2;
    EXPECT_FALSE(fs::exists(dir / "vtp" / "surface_00003.obj"));

    // Neither: the frame numbers, and the message says so.
    fs::remove(dir / "run" / "summary.json");
    const auto n = run_cli("mesh " + q(f) + " --out " + q(dir / "ply") + " --format ply --radius 0.01");
    ASSERT_EQ(n.code, 0) << n.output;
    EXPECT_NE(n.output.find("times from frame numbers"), std::string::npos) << n.output;
    EXPECT_NE(read(dir / "ply" / "surface.pvd").find(R"(timestep="7" group="" part="0" file="surface_00007.vtp")"),
              std::string::npos);
    // Piped (not a terminal): one line, no throughput line.
    EXPECT_EQ(std::count(n.output.begin(), n.output.end(), '\n'), 1) << n.output;
}

TEST_F(MeshSequenceCli, DecimationFlags) {
    const fs::path f = frames();
    const auto full = run_cli("mesh " + q(f / "particles_00003.vtp") + " --out " + q(dir / "full.obj") + " --radius 0.01");
    ASSERT_EQ(full.code, 0) << full.output;
    const auto bad = run_cli("mesh " + q(f / "particles_00003.vtp") + " --out " + q(dir / "bad.obj") + " --radius 0.01 "
                             "--decimate-ratio 2");
    EXPECT_EQ(bad.code, 2) << bad.output;
    EXPECT_NE(bad.output.find("key 'decimate_ratio' = 2"), std::string::npos) << bad.output;
    const auto half = run_cli("mesh " + q(f / "particles_00003.vtp") + " --out " + q(dir / "half.obj") + " --radius 0.01 "
                              "--decimate-ratio 0.5 --decimate-error 1");
    if (!eddy::decimation_available()) {
        EXPECT_EQ(half.code, 2) << half.output;
        EXPECT_NE(half.output.find("meshoptimizer"), std::string::npos) << half.output;
        GTEST_SKIP() << "eddy was built without meshoptimizer (libmeshoptimizer-dev)";
    }
    ASSERT_EQ(half.code, 0) << half.output;
    const std::size_t f_full = count_lines(dir / "full.obj", 'f'), f_half = count_lines(dir / "half.obj", 'f');
    EXPECT_LE(f_half, f_full / 2);
    EXPECT_GT(f_half, f_full / 10);
    EXPECT_EQ(count_lines(dir / "half.obj", 'v'), f_half / 2 + 2);  // still closed, genus 0: V = F / 2 + 2

    // eddy run --mesh --mesh-decimate-error: fewer triangles than without; refused without --mesh.
    const auto run = run_cli("run dam_break_3d --until 0.01 --fps 100 --quiet --mesh --mesh-decimate-error 0.5 --out " +
                             q(dir / "dec"));
    ASSERT_EQ(run.code, 0) << run.output;
    const auto plain = run_cli("run dam_break_3d --until 0.01 --fps 100 --quiet --mesh --out " + q(dir / "plain"));
    ASSERT_EQ(plain.code, 0) << plain.output;
    const std::size_t a = count_lines(dir / "dec" / "frames" / "surface_00001.obj", 'f'),
                      b = count_lines(dir / "plain" / "frames" / "surface_00001.obj", 'f');
    EXPECT_GT(a, 0u);
    EXPECT_LE(a, b / 4);
    // A resumed run decimates as the original did (the checkpoint keeps the settings).
    const auto resumed = run_cli("run --resume " + q(dir / "dec") + " --until 0.02 --quiet");
    ASSERT_EQ(resumed.code, 0) << resumed.output;
    const std::size_t c = count_lines(dir / "dec" / "frames" / "surface_00002.obj", 'f');
    EXPECT_GT(c, 0u);
    EXPECT_LE(c, b / 4);
    const auto no_mesh = run_cli("run dam_break_3d --until 0.01 --quiet --mesh-decimate-ratio 0.25 --out " + q(dir / "x"));
    EXPECT_EQ(no_mesh.code, 2) << no_mesh.output;
    EXPECT_NE(no_mesh.output.find("allowed: with --mesh"), std::string::npos) << no_mesh.output;
}
