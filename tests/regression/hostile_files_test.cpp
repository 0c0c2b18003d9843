// Hostile input files through the command line (issue 29: items 1, 4, 12, 13's model parts): every one
// ends in exit 2 with one line naming the file, quickly; none crashes, hangs or reads what it should not.
// Every command runs under `timeout`, so a regression to a blocking open fails instead of hanging.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "eddy/io.hpp"
#include "eddy/particles.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using Timed = eddy::test::CommandResult;

// `eddy ARGS` under timeout -s KILL (exit 137 if it blocks: the hang guard, generous for a loaded machine).
Timed run_eddy(const std::string& args, int limit_s = 60) {
    return eddy::test::run_shell("timeout -s KILL " + std::to_string(limit_s) + " " + std::string(EDDY_CLI) + " " + args +
                                 " 2>&1");
}

// Refused quickly: by the CPU time it cost (the same on a busy machine), not the wall clock. A command
// that blocks costs no CPU: run_eddy's timeout fails it (exit 137) instead.
void expect_refused(const Timed& r, std::initializer_list<std::string> needles, double max_cpu_seconds = 5.0) {
    EXPECT_EQ(r.code, 2) << r.output.substr(0, 600);
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output.substr(0, 600);
    for (const auto& n : needles) EXPECT_NE(r.output.find(n), std::string::npos) << "'" << n << "' not in: " << r.output;
    EXPECT_LT(r.cpu_seconds, max_cpu_seconds) << r.output;
}

template <class T>
void put(std::string& s, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    s.append(b, sizeof(T));
}

// A tetrahedron (the unit corner) as binary PLY, the last face's third index replaced by `last`.
std::string binary_ply(int last) {
    std::string s = "ply\nformat binary_little_endian 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
                    "property float z\nelement face 4\nproperty list uchar int vertex_indices\nend_header\n";
    const float v[4][3] = {{0, 0, 0}, {0.3f, 0, 0}, {0, 0.3f, 0}, {0, 0, 0.3f}};
    const int f[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, last}};
    for (const auto& p : v)
        for (float c : p) put(s, c);
    for (const auto& t : f) {
        put<std::uint8_t>(s, 3);
        for (int i : t) put<std::int32_t>(s, i);
    }
    return s;
}

const std::string kTetraObj = "v 0 0 0\nv 0.3 0 0\nv 0 0.3 0\nv 0 0 0.3\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

class HostileFiles : public eddy::test::TempDirTest {
protected:
    fs::path write(const std::string& name, const std::string& bytes) {
        const fs::path p = dir / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }
    // A small 3D scene whose fluid is a box, and a model in `role`: "obstacle", "container" or "fluid".
    fs::path scene(const std::string& role, const std::string& model, const std::string& extra = "") {
        const std::string mesh = "{\"shape\": \"mesh\", \"file\": \"" + model + "\"" + extra;
        std::string b = "{\"shape\": \"box\", \"min\": [-0.5, -0.5, -0.5], \"max\": [0.5, 0.5, 0.5]}";
        std::string f = "{\"shape\": \"box\", \"min\": [0.1, 0.1, 0.1], \"max\": [0.2, 0.2, 0.2]}";
        if (role == "obstacle") b += ", " + mesh + ", \"solid\": true}";
        if (role == "container") b = mesh + "}";
        if (role == "fluid") f = mesh + "}";
        return write(role + ".json", "{\"name\": \"h\", \"dimension\": 3, \"method\": \"wcsph\", \"particle_radius\": 0.025,"
                                     " \"duration\": 0.01, \"output\": {\"fps\": 100, \"formats\": [\"vtk\"]},"
                                     " \"boundaries\": [" + b + "], \"fluids\": [" + f + "]}");
    }
    std::string out() const { return " --quiet --threads 1 --out " + (dir / "out").string(); }
};

}  // namespace

// Item 1: each crashed eddy run with exit 139, as obstacle, container and fluid.
TEST_F(HostileFiles, BadPlyModelsAreRefusedInEveryRole) {
    const std::string good = binary_ply(3);
    write("m/index_binary.ply", binary_ply(100000));
    std::string ascii = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                        "element face 4\nproperty list uchar int vertex_indices\nend_header\n"
                        "0 0 0\n0.3 0 0\n0 0.3 0\n0 0 0.3\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 -5\n";
    write("m/index_ascii.ply", ascii);
    write("m/truncated.ply", good.substr(0, good.size() - 30));
    const std::pair<const char*, const char*> files[] = {
        {"m/index_binary.ply", "uses vertex 100000"}, {"m/index_ascii.ply", "uses vertex -5"}, {"m/truncated.ply", "truncated"}};
    for (const char* role : {"obstacle", "container", "fluid"})
        for (const auto& [file, what] : files) {
            SCOPED_TRACE(std::string(role) + " " + file);
            expect_refused(run_eddy("run " + scene(role, file).string() + out()), {file, what});
        }
}

// Item 4: these blocked forever in open().
TEST_F(HostileFiles, AFifoBehindAnMtllibIsRefusedWithinASecond) {
    write("m/a.obj", "mtllib pipe.mtl\n" + kTetraObj);
    ASSERT_EQ(::mkfifo((dir / "m/pipe.mtl").c_str(), 0600), 0);
    expect_refused(run_eddy("run " + scene("obstacle", "m/a.obj").string() + out()), {"a.obj", "pipe.mtl", "FIFO"}, 1.0);
}

TEST_F(HostileFiles, AFifoGltfBufferIsRefused) {
    write("m/t.gltf", R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
                      R"("meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],"buffers":[{"byteLength":36,"uri":"pipe.bin"}],)"
                      R"("bufferViews":[{"buffer":0,"byteLength":36}],)"
                      R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}]})");
    ASSERT_EQ(::mkfifo((dir / "m/pipe.bin").c_str(), 0600), 0);
    expect_refused(run_eddy("run " + scene("obstacle", "m/t.gltf").string() + out()), {"t.gltf", "pipe.bin", "FIFO"}, 1.0);
}

TEST_F(HostileFiles, AModelsSideFileOutsideItsFolderIsRefused) {
    write("secret.mtl", "newmtl x\n");
    write("m/up.obj", "mtllib ../secret.mtl\n" + kTetraObj);
    expect_refused(run_eddy("run " + scene("obstacle", "m/up.obj").string() + out()), {"up.obj", "'../secret.mtl'"});
}

TEST_F(HostileFiles, AFifoFluidCsvIsRefusedBeforeItsHeaderIsRead) {
    ASSERT_EQ(::mkfifo((dir / "pipe.csv").c_str(), 0600), 0);
    const fs::path s = write("s.json", R"({"name": "h", "dimension": 3, "particle_radius": 0.025, "duration": 0.01,
        "boundaries": [{"shape": "box", "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]}],
        "fluids": [{"shape": "file", "file": "pipe.csv"}]})");
    expect_refused(run_eddy("run " + s.string() + out()), {"pipe.csv", "FIFO"}, 1.0);
}

namespace {

// A .pvtp listing `sources`, and a valid piece p0.vtp of 27 particles beside it.
void pieces(const fs::path& dir, const std::vector<std::string>& sources) {
    eddy::ParticleSet<3> p;
    for (int i = 0; i < 27; ++i)
        p.push_back(eddy::Vec3{{0.02f * (i % 3), 0.02f * ((i / 3) % 3), 0.02f * (i / 9)}}, eddy::Vec3::zero());
    eddy::io::write_vtp<3>(dir / "p0.vtp", p);
    eddy::io::write_pvtp(dir / "f.pvtp", sources);
}

}  // namespace

// Items 4 and 12: `eddy mesh` opened any piece, blocking on a FIFO.
TEST_F(HostileFiles, PvtpPiecesAreConfinedAndNeverBlock) {
    fs::create_directories(dir / "run");
    ASSERT_EQ(::mkfifo((dir / "run/pipe.vtp").c_str(), 0600), 0);
    const std::string mesh = " --radius 0.01 --threads 1 --out " + (dir / "s.obj").string();
    pieces(dir / "run", {"p0.vtp", "pipe.vtp"});
    expect_refused(run_eddy("mesh " + (dir / "run/f.pvtp").string() + mesh), {"pipe.vtp", "FIFO"}, 1.0);
    // Out of the folder: '..', an absolute path; allowed with --allow-outside-references.
    fs::create_directories(dir / "elsewhere");
    pieces(dir / "elsewhere", {"p0.vtp"});
    pieces(dir / "run", {"../elsewhere/p0.vtp"});
    expect_refused(run_eddy("mesh " + (dir / "run/f.pvtp").string() + mesh), {"f.pvtp", "'../elsewhere/p0.vtp'", "'..'"});
    pieces(dir / "run", {"/etc/passwd"});
    expect_refused(run_eddy("mesh " + (dir / "run/f.pvtp").string() + mesh), {"f.pvtp", "'/etc/passwd'", "absolute path"});
    pieces(dir / "run", {(dir / "elsewhere/p0.vtp").string()});
    const Timed ok = run_eddy("mesh " + (dir / "run/f.pvtp").string() + mesh + " --allow-outside-references");
    EXPECT_EQ(ok.code, 0) << ok.output;
    EXPECT_TRUE(fs::exists(dir / "s.obj"));
    // eddy.read_particles' reader refuses the same pieces.
    EXPECT_THROW((void)eddy::io::read_particles<3>(dir / "run/f.pvtp"), eddy::InputError);
    eddy::io::ParticleReadOptions allow;
    allow.allow_outside_references = true;
    EXPECT_EQ(eddy::io::read_particles<3>(dir / "run/f.pvtp", allow).size(), 27u);
}

// Item 12: a 10 GB sparse piece took 13.7 s and 4.1 GB before failing under --max-memory 200M.
TEST_F(HostileFiles, ALargePieceIsRefusedFromItsSizeBeforeReading) {
    pieces(dir, {"p0.vtp", "big.vtp"});
    const int fd = ::open((dir / "big.vtp").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t(10) << 30), 0);  // sparse: no disk
    ::close(fd);
    expect_refused(run_eddy("mesh " + (dir / "f.pvtp").string() + " --radius 0.01 --threads 1 --max-memory 200M --out " +
                            (dir / "s.obj").string()),
                   {"big.vtp", "10737418240 bytes", "--max-memory"}, 1.0);
}

// Item 13: scale messages, NUL bytes, symbolic link loops.
TEST_F(HostileFiles, ScaleOverflowNegativeScaleNulAndLinkLoops) {
    write("m/t.obj", kTetraObj);
    expect_refused(run_eddy("run " + scene("obstacle", "m/t.obj", ", \"scale\": 1e30").string() + out()),
                   {"t.obj", "scale 1e+30 puts vertices beyond float range"});
    // Negative mirrors, as the docs say (the 3-number form did already).
    const Timed mirrored = run_eddy("run " + scene("obstacle", "m/t.obj", ", \"scale\": -0.1").string() + out() + " --steps 1");
    EXPECT_EQ(mirrored.code, 0) << mirrored.output;
    const fs::path nul = write("nul.json", std::string(R"({"name": "h", "dimension": 3, "particle_radius": 0.025,
        "boundaries": [{"shape": "box", "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]},
                       {"shape": "mesh", "file": "m/t.obj\u0000.stl"}],
        "fluids": [{"shape": "box", "min": [0.1, 0.1, 0.1], "max": [0.2, 0.2, 0.2]}]})"));
    expect_refused(run_eddy("run " + nul.string() + out()), {"boundaries[1].file", "NUL byte"});
    fs::create_symlink(dir / "m/b.obj", dir / "m/a.obj");
    fs::create_symlink(dir / "m/a.obj", dir / "m/b.obj");
    expect_refused(run_eddy("run " + scene("obstacle", "m/a.obj").string() + out()), {"a.obj", "loop of symbolic links"});
}
