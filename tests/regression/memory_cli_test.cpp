// What a request costs (issue 12): `eddy run` and `eddy mesh` estimate the memory of a scene, a grid, a
// heightmap or a surface reconstruction before allocating it, and refuse one that does not fit with
// exit code 2 and one line naming the key, the estimate and the limit - at once, not after minutes of
// swapping or a std::bad_alloc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using eddy::test::CommandResult;
using eddy::test::run_cli;

class MemoryCli : public eddy::test::TempDirTest {
protected:
    std::string q(const fs::path& p) const { return "'" + p.string() + "'"; }
    // Runs the CLI and checks it refused quickly: exit 2, one "eddy: error:" line holding every needle,
    // within a few CPU seconds (typically a tenth; CPU time, not the wall clock, which a busy machine
    // stretches). Returns what the command cost.
    CommandResult expect_refused(const std::string& args, std::initializer_list<std::string> needles) {
        const CommandResult r = run_cli(args);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
        EXPECT_LT(r.cpu_seconds, 5.0) << args;
        const auto at = r.output.find("eddy: error: ");
        if (at == std::string::npos) {
            ADD_FAILURE() << "no 'eddy: error:' line: " << r.output;
            return r;
        }
        const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
        EXPECT_EQ(r.output.find("eddy: error: ", at + 1), std::string::npos) << "one error line: " << r.output;
        for (const auto& n : needles) EXPECT_NE(line.find(n), std::string::npos) << "'" << n << "' not in: " << line;
        EXPECT_NE(line.find("needs about"), std::string::npos) << line;
        EXPECT_NE(line.find("more than the limit"), std::string::npos) << line;
        return r;
    }
};

// A PNG that is only its header (IHDR: width x height, 8-bit grey) and IEND: what stbi_info reads.
std::string png_header_only(std::uint32_t width, std::uint32_t height) {
    auto crc = [](const std::string& bytes) {
        std::uint32_t c = 0xffffffffu;
        for (unsigned char b : bytes) {
            c ^= b;
            for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
        }
        return c ^ 0xffffffffu;
    };
    auto be32 = [](std::uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; };
    auto chunk = [&](const std::string& type, const std::string& data) {
        return be32(std::uint32_t(data.size())) + type + data + be32(crc(type + data));
    };
    const std::string ihdr = be32(width) + be32(height) + std::string{char(8), char(0), char(0), char(0), char(0)};
    return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IEND", "");
}

// n^3 particles (spacing 0.02 m) at `offset`, as csv rows.
std::string cube_rows(int n, double offset, int& id) {
    std::string s;
    for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                s += std::to_string(id++) + "," + std::to_string(offset + 0.02 * i) + "," + std::to_string(offset + 0.02 * j) +
                     "," + std::to_string(offset + 0.02 * k) + "\n";
    return s;
}

}  // namespace

// `boundaries.0.max=[10000,10000]` used to hang in the loader: 16 M wall particles are counted (not
// sampled) and refused under a limit they exceed.
TEST_F(MemoryCli, HugeWallIsRefusedAtOnce) {
    expect_refused("run dam_break_2d --set 'boundaries.0.max=[10000,10000]' --max-memory 200M --out " + q(dir / "out"),
                   {"dam_break_2d.json: boundaries[0]:", "walls 16 M particles", "the limit 200 MB (--max-memory)"});
    // In 3D the same tank needs terabytes: refused under the machine's own memory, whatever it has.
    expect_refused("run dam_break_3d --set 'boundaries.0.max=[10000,10000,10000]' --out " + q(dir / "out"),
                   {"boundaries[0]:", "walls", "available memory"});
    EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
}

// A 2^28-cell grid was accepted and would have needed ~26 GB.
TEST_F(MemoryCli, HugeShallowGridIsRefused) {
    const auto scene = write("huge.json", R"({
      "name": "huge", "dimension": 2, "method": "shallow_water", "gravity": 9.81, "duration": 1,
      "grid": { "cells": [16384, 16384], "dx": 0.1 },
      "water": { "depth": "1" },
      "output": { "fps": 4, "formats": ["vti"] } })");
    expect_refused("run " + q(scene) + " --max-memory 16G --out " + q(dir / "out"),
                   {"huge.json: grid.cells:", "grid 16384 x 16384", "the limit 16.0 GB (--max-memory)"});
}

// A heightmap of a few dozen bytes that claims 24000 x 24000 pixels (1.15 GB decoded): refused from its
// header, before stb_image decodes anything.
TEST_F(MemoryCli, HugeHeightmapIsRefusedFromItsHeader) {
    std::ofstream(dir / "big.png", std::ios::binary) << png_header_only(24000, 24000);
    const auto scene = write("valley.json", R"({
      "name": "valley", "dimension": 2, "method": "shallow_water", "gravity": 9.81, "duration": 1,
      "grid": { "cells": [64, 64], "dx": 0.1 },
      "terrain": { "heightmap": "big.png", "scale": 2.0 },
      "water": { "depth": "0.1" },
      "output": { "fps": 4, "formats": ["vti"] } })");
    expect_refused("run " + q(scene) + " --max-memory 1G --out " + q(dir / "out"),
                   {"valley.json: terrain.heightmap:", "heightmap 24000 x 24000", "the limit 1.00 GB (--max-memory)"});
}

// Clavet 3D with springs at support 12 under the default --max-particles: 2.9 M particles, ~450 springs
// each (the issue's ~133 GB).
TEST_F(MemoryCli, ClavetSpringsAreRefused) {
    expect_refused("run clavet_dam_break_3d --set particle_radius=0.0007 --set settings.spring_stiffness=100 "
                   "--set settings.support_ratio=12 --max-memory 32G --out " + q(dir / "out"),
                   {"clavet_dam_break_3d.json: settings.spring_stiffness:", "springs", "fluid 2.86 M particles",
                    "the limit 32.0 GB (--max-memory)"});
}

// `eddy mesh --radius 1e-7`: every particle gets its own 27 blocks of 8^3 voxels.
TEST_F(MemoryCli, MeshAtATinyVoxelIsRefused) {
    int id = 0;
    const auto in = write("cube.csv", "id,x,y,z\n" + cube_rows(10, 0.0, id));
    expect_refused("mesh " + q(in) + " --out " + q(dir / "cube.obj") + " --radius 1e-7 --max-memory 50M",
                   {"cube.csv: --radius:", "grids of 27 k blocks", "the limit 50.0 MB (--max-memory)"});
    EXPECT_FALSE(fs::exists(dir / "cube.obj"));
    // The same file at its own radius fits easily.
    const CommandResult ok = run_cli("mesh " + q(in) + " --out " + q(dir / "cube.obj") + " --radius 0.01 --max-memory 50M");
    EXPECT_EQ(ok.code, 0) << ok.output;
}

// Two clusters 100 m apart along every axis: the sparse grid is small, the dense .vti over their box
// is not (it died of std::bad_alloc).
TEST_F(MemoryCli, DenseSdfOverFarApartClustersIsRefused) {
    int id = 0;
    const auto in = write("two.csv", "id,x,y,z\n" + cube_rows(6, 0.0, id) + cube_rows(6, 100.0, id));
    expect_refused("mesh " + q(in) + " --out " + q(dir / "two.obj") + " --radius 0.01 --sdf " + q(dir / "two.vti"),
                   {"two.csv: --sdf:", "dense .vti grid", "available memory"});
    // Without the dense grid it meshes.
    const CommandResult ok = run_cli("mesh " + q(in) + " --out " + q(dir / "two.obj") + " --radius 0.01");
    EXPECT_EQ(ok.code, 0) << ok.output;
}

// --max-memory itself: a tiny limit refuses a normal scene, a generous one runs it, a bad size is a
// one-line input error; both subcommands document it.
TEST_F(MemoryCli, MaxMemoryRefusesOrAccepts) {
    // dam_break_3d: 27,000 fluid and 46,304 wall particles, about 17 MB.
    expect_refused("run dam_break_3d --max-memory 1M --out " + q(dir / "out"),
                   {"dam_break_3d.json: fluids[0]:", "fluid 27 k particles", "walls 46.3 k particles",
                    "the limit 1.00 MB (--max-memory)"});
    const CommandResult ok = run_cli("run dam_break_3d --max-memory 4G --steps 2 --quiet --out " + q(dir / "out"));
    EXPECT_EQ(ok.code, 0) << ok.output;
    EXPECT_TRUE(fs::exists(dir / "out" / "summary.json"));
    for (const char* bad : {"lots", "0", "-5G"}) {
        const CommandResult r = run_cli(std::string("run dam_break_2d --max-memory ") + bad + " --out " + q(dir / "bad"));
        EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
        EXPECT_NE(r.output.find("--max-memory"), std::string::npos) << r.output;
    }
    EXPECT_NE(run_cli("run --help").output.find("--max-memory"), std::string::npos);
    EXPECT_NE(run_cli("mesh --help").output.find("--max-memory"), std::string::npos);
}

// A resumed run is held to the same budget as a fresh one (particles and grids alike).
TEST_F(MemoryCli, ResumeChecksTheBudget) {
    for (const char* name : {"dam_break_2d", "shallow_dam_break_wet"}) {
        const fs::path out = dir / name;
        const CommandResult first = run_cli(std::string("run ") + name + " --steps 2 -q --out " + q(out));
        ASSERT_EQ(first.code, 0) << first.output;
        expect_refused("run --resume " + q(out) + " --max-memory 1k --until 1", {"--max-memory"});
        const CommandResult ok = run_cli("run --resume " + q(out) + " --max-memory 8G --steps 2 -q");
        EXPECT_EQ(ok.code, 0) << ok.output;
    }
}

// --mesh: the surface reconstruction's grids are counted on top of the simulation (dam_break_3d: about
// 21 MB without, 33 MB with).
TEST_F(MemoryCli, RunWithMeshCountsTheSurface) {
    const CommandResult plain = run_cli("run dam_break_3d --steps 1 -q --max-memory 28M --out " + q(dir / "plain"));
    ASSERT_EQ(plain.code, 0) << plain.output;
    expect_refused("run dam_break_3d --steps 1 -q --mesh --max-memory 28M --out " + q(dir / "mesh"), {"--mesh", "--mesh: grids"});
}

// ---- Models and particle files (issue 29, item 5) ---------------------------------------------------

namespace {

// "x,y,z[,vx,vy,vz]" rows of n particles on a cube lattice of the given spacing from `origin`, with the
// velocity `inward` (m/s) towards the cube's centre when it is not 0.
std::string lattice_csv(int side, double spacing, double origin, double inward = 0.0) {
    std::string s = inward != 0.0 ? "x,y,z,vx,vy,vz\n" : "x,y,z\n";
    const double c = origin + 0.5 * spacing * (side - 1);
    for (int k = 0; k < side; ++k)
        for (int j = 0; j < side; ++j)
            for (int i = 0; i < side; ++i) {
                const double p[3] = {origin + spacing * i, origin + spacing * j, origin + spacing * k};
                s += std::to_string(p[0]) + "," + std::to_string(p[1]) + "," + std::to_string(p[2]);
                if (inward != 0.0) {
                    const double d[3] = {c - p[0], c - p[1], c - p[2]};
                    const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-12;
                    for (double v : d) s += "," + std::to_string(inward * v / n);
                }
                s += "\n";
            }
    return s;
}

}  // namespace

// A 200 MB binary STL (its header claims 4 M triangles; the rest is a hole, no disk and no time) under
// --max-memory 100M: refused from its header, before assimp reads a byte. It used to be read first:
// 7.5 s and 834 MB before anything was counted, 1,132 MB at its peak.
TEST_F(MemoryCli, HugeBinaryStlIsRefusedBeforeReading) {
    const fs::path stl = dir / "big.stl";
    {
        std::string head(84, '\0');
        const std::uint32_t n = 4'000'000;
        std::memcpy(head.data() + 80, &n, 4);
        std::ofstream(stl, std::ios::binary) << head;
    }
    fs::resize_file(stl, 84 + 50ull * 4'000'000);
    const auto scene = write("stl.json", R"({"name": "stl", "dimension": 3, "particle_radius": 0.02,
      "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [1, 1, 1]},
                     {"shape": "mesh", "file": "big.stl", "solid": true}],
      "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.5, 0.5, 0.5]}]})");
    const CommandResult r = expect_refused("run " + q(scene) + " --max-memory 100M --out " + q(dir / "out"),
                                           {"stl.json: boundaries[1].file (", "big.stl)", "reading the model 4 M triangles",
                                            "the limit 100 MB (--max-memory)"});
    // Its header only: the bytes the run read (its scene, a few kB), not the model's 200 MB.
    EXPECT_LT(r.bytes_read, 2'000'000u);
}

// Particles of a file clustered far closer than the lattice: 27,000 of them within one support radius
// would need 27,000 neighbours each (7 GB of lists); the estimate counts them on the positions and
// refuses, where the same number on the lattice runs under the same limit.
TEST_F(MemoryCli, ClusteredParticleFileIsRefusedWhereALatticeRuns) {
    const std::string scene_text = R"({"name": "file", "dimension": 3, "particle_radius": 0.01,
      "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [1, 1, 1]}],
      "fluids": [{"shape": "file", "file": "p.csv"}]})";
    write("p.csv", lattice_csv(30, 0.02, 0.1));
    const auto scene = write("s.json", scene_text);
    const CommandResult ok = run_cli("run " + q(scene) + " --max-memory 200M --steps 1 -q --out " + q(dir / "ok"));
    EXPECT_EQ(ok.code, 0) << ok.output;
    write("p.csv", lattice_csv(30, 0.001, 0.5));  // a cube of 3 cm: all within h = 4 cm of each other
    expect_refused("run " + q(scene) + " --max-memory 200M --steps 1 -q --out " + q(dir / "cluster"),
                   {"s.json: fluids[0]", "neighbour lists (", "neighbours a particle, ", "the limit 200 MB (--max-memory)"});
}

// A particle file whose bytes alone exceed the limit is refused from its size, before it is read.
TEST_F(MemoryCli, ParticleFileLargerThanTheLimitIsRefusedUnread) {
    const fs::path csv = dir / "p.csv";
    std::ofstream(csv) << "x,y,z\n";
    fs::resize_file(csv, 3'000'000'000ull);  // a hole: no disk
    const auto scene = write("s.json", R"({"name": "file", "dimension": 3, "particle_radius": 0.01,
      "fluids": [{"shape": "file", "file": "p.csv"}]})");
    const CommandResult r = expect_refused("run " + q(scene) + " --max-memory 1G --out " + q(dir / "out"),
                                           {"s.json: fluids[0].file (", "particle file 3.00 GB", "the limit 1.00 GB (--max-memory)"});
    EXPECT_LT(r.bytes_read, 2'000'000u);  // its size, not its 3 GB
}

// Clustering that develops during a run: 3,600 particles 4.5 r apart (no neighbour within the support
// at the start) fall and settle, and their neighbour lists grow past what --max-memory leaves the
// simulation. The running guard stops the run there (exit 3, one line naming the limit), the frames so
// far kept; before the lists grow, the same limit lets it run.
TEST_F(MemoryCli, ClusteringDuringTheRunStopsAtTheBudget) {
    std::string rows = "x,y\n";
    for (int j = 0; j < 60; ++j)
        for (int i = 0; i < 60; ++i) rows += std::to_string(0.02 + 0.0225 * i) + "," + std::to_string(0.02 + 0.0225 * j) + "\n";
    write("sparse.csv", rows);
    // On Akinci's wall particles (WCSPH's default before issue 40): on the smooth walls this fluid's lists stay
    // under 900 kB, and this test is about the check during the run, not the walls.
    const auto scene = write("sparse.json", R"({"name": "sparse", "dimension": 2, "particle_radius": 0.005,
      "settings": {"boundary_model": "particles"},
      "boundaries": [{"shape": "box", "min": [0, 0], "max": [1.4, 2.0]}],
      "fluids": [{"shape": "file", "file": "sparse.csv"}]})");
    const CommandResult early = run_cli("run " + q(scene) + " --max-memory 700k --until 0.1 -q --out " + q(dir / "early"));
    EXPECT_EQ(early.code, 0) << early.output;
    const CommandResult r = run_cli("run " + q(scene) + " --max-memory 700k -q --out " + q(dir / "out"));
    EXPECT_EQ(r.code, 3) << r.output;
    const auto at = r.output.find("eddy: error: ");
    ASSERT_NE(at, std::string::npos) << r.output;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    for (const char* needle : {"sparse.json: diverged at step", "the simulation holds", "the memory limit 700 kB (--max-memory)",
                               "clustered", "frame(s) written so far are valid"})
        EXPECT_NE(line.find(needle), std::string::npos) << needle << " not in: " << line;
    EXPECT_TRUE(fs::exists(dir / "out" / "frames" / "particles_00001.vtp"));
    std::ifstream summary(dir / "out" / "summary.json");
    const std::string text((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"status\": \"diverged\""), std::string::npos) << text.substr(0, 400);
}

// Issue 45: a 2D emitter 1e15 m wide (in a 1 m tank) was not refused under --max-memory 1G and ran out of
// memory building its nozzle; under 200M the line blamed boundaries[0]. Now the emitter is named: by the
// estimate (what it adds, at most --max-particles) or, under a larger budget, by its nozzle's size.
TEST_F(MemoryCli, WideEmitterIsRefusedNamingIt) {
    const auto scene = write("wide.json", R"({
      "name": "wide", "dimension": 2, "method": "dfsph", "particle_radius": 0.005, "duration": 1,
      "boundaries": [ { "shape": "box", "min": [0, 0], "max": [1, 1] } ],
      "emitters": [ { "center": [0.5, 0.5], "direction": [0, -1], "speed": 1, "width": 1e15 } ] })");
    for (const char* limit : {"200M", "1G"})
        expect_refused("run " + q(scene) + " --max-memory " + limit + " --out " + q(dir / "out"),
                       {"wide.json: emitters[0]:", "from emitters, at --max-particles"});
    const CommandResult r = run_cli("run " + q(scene) + " --max-memory 20G --out " + q(dir / "out"));
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_LT(r.cpu_seconds, 5.0);
    EXPECT_NE(r.output.find("wide.json: emitters[0]: width = 1e+15 m makes a nozzle"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("more than --max-particles 5000000"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
}
