#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/io.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

class Io : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("eddy_io_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
    fs::path dir;
};

template <int D>
ParticleSet<D> sample(std::size_t n) {
    ParticleSet<D> p;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (std::size_t i = 0; i < n; ++i) {
        Vec<D> x, v;
        for (int a = 0; a < D; ++a) {
            x[a] = u(rng) * 1e-3f + u(rng);  // awkward decimals: exercises round-tripping
            v[a] = u(rng);
        }
        p.push_back(x, v);
        p.density.back() = 1000.0f + u(rng);
        p.pressure.back() = 1e4f * u(rng);
    }
    return p;
}

template <int D>
void expect_same(const ParticleSet<D>& a, const ParticleSet<D>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(a.position[i] == b.position[i]) << i;
        EXPECT_TRUE(a.velocity[i] == b.velocity[i]) << i;
        EXPECT_EQ(a.density[i], b.density[i]);
        EXPECT_EQ(a.pressure[i], b.pressure[i]);
        EXPECT_EQ(a.id[i], b.id[i]);
    }
    EXPECT_EQ(b.next_id, a.size());
}

std::string slurp(const fs::path& p) {
    std::stringstream ss;
    ss << std::ifstream(p, std::ios::binary).rdbuf();
    return ss.str();
}

}  // namespace

TEST_F(Io, RoundTripsAreBitExact) {
    const auto p2 = sample<2>(500);
    const auto p3 = sample<3>(700);
    io::write_csv(dir / "a.csv", p2);
    io::write_vtp(dir / "a.vtp", p2);
    io::write_ply(dir / "a.ply", p2);
    io::write_csv(dir / "b.csv", p3);
    io::write_vtp(dir / "b.vtp", p3);
    io::write_ply(dir / "b.ply", p3);
    expect_same(p2, io::read_csv<2>(dir / "a.csv"));
    expect_same(p2, io::read_vtp<2>(dir / "a.vtp"));
    expect_same(p2, io::read_ply<2>(dir / "a.ply"));
    expect_same(p3, io::read_csv<3>(dir / "b.csv"));
    expect_same(p3, io::read_vtp<3>(dir / "b.vtp"));
    expect_same(p3, io::read_particles<3>(dir / "b.ply"));
    // A 2D file reads as 3D with z = 0; a 3D one is refused as 2D.
    EXPECT_EQ(io::read_csv<3>(dir / "a.csv").position[0][2], 0.0f);
    EXPECT_THROW(io::read_vtp<2>(dir / "b.vtp"), InputError);
}

TEST_F(Io, CsvHeaderAndVtpStructure) {
    const auto p3 = sample<3>(10);
    io::write_csv(dir / "p.csv", p3);
    EXPECT_EQ(slurp(dir / "p.csv").substr(0, 35), "id,x,y,z,vx,vy,vz,density,pressure\n");
    io::write_csv(dir / "q.csv", sample<2>(3));
    EXPECT_EQ(slurp(dir / "q.csv").substr(0, 30), "id,x,y,vx,vy,density,pressure\n");
    io::write_vtp(dir / "p.vtp", p3);
    const std::string v = slurp(dir / "p.vtp");
    EXPECT_NE(v.find("type=\"PolyData\""), std::string::npos);
    EXPECT_NE(v.find("header_type=\"UInt64\""), std::string::npos);
    EXPECT_NE(v.find("NumberOfPoints=\"10\""), std::string::npos);
    for (const char* name : {"velocity", "density", "pressure", "id", "connectivity", "offsets"})
        EXPECT_NE(v.find(std::string("Name=\"") + name + "\""), std::string::npos) << name;
    // Appended block: '_' then 7 arrays, each an 8-byte size followed by its data.
    const std::size_t start = v.find('_', v.find("<AppendedData")) + 1;
    const std::size_t expect = (8 + 120) + (8 + 80) + (8 + 80) + (8 + 120) + (8 + 40) + (8 + 40) + (8 + 40);
    EXPECT_EQ(v.substr(start + expect, 17), "\n  </AppendedData");
}

TEST_F(Io, PvdListsTheFrames) {
    io::write_pvd(dir / "s.pvd", {{0.0, "frames/a.vtp"}, {0.02, "frames/b.vtp"}});
    const std::string s = slurp(dir / "s.pvd");
    EXPECT_NE(s.find("type=\"Collection\""), std::string::npos);
    EXPECT_NE(s.find("timestep=\"0.02\" group=\"\" part=\"0\" file=\"frames/b.vtp\""), std::string::npos);
}

TEST_F(Io, AtomicWritesLeaveNoTemporaryFile) {
    io::write_atomic(dir / "x/y/file.txt", "hello");
    EXPECT_EQ(slurp(dir / "x/y/file.txt"), "hello");
    io::write_atomic(dir / "x/y/file.txt", "replaced");
    EXPECT_EQ(slurp(dir / "x/y/file.txt"), "replaced");
    for (const auto& e : fs::recursive_directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos);
    io::write_json(dir / "j.json", nlohmann::json{{"a", 1}});
    EXPECT_EQ(nlohmann::json::parse(slurp(dir / "j.json"))["a"], 1);
    // A folder in the way of the file: an error naming the path, and the folder is untouched.
    fs::create_directories(dir / "blocked");
    try {
        io::write_atomic(dir / "blocked", "x");
        ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("blocked"), std::string::npos);
    }
    EXPECT_TRUE(fs::is_directory(dir / "blocked"));
    for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos);
}

TEST_F(Io, ReadersRejectBadFilesWithTheirName) {
    auto expect_error = [](auto&& f, const std::string& needle) {
        try {
            f();
            ADD_FAILURE() << "no error";
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_error([&] { io::read_csv<3>(dir / "nope.csv"); }, "nope.csv");
    std::ofstream(dir / "empty.csv") << "id,x,y,z\n";
    expect_error([&] { io::read_csv<3>(dir / "empty.csv"); }, "no particles");
    std::ofstream(dir / "nan.csv") << "x,y,z\n1,2,3\nnan,0,0\n";
    expect_error([&] { io::read_csv<3>(dir / "nan.csv"); }, "line 3: position is not finite");
    std::ofstream(dir / "short.csv") << "x,y,z\n1,2\n";
    expect_error([&] { io::read_csv<3>(dir / "short.csv"); }, "line 2");
    std::ofstream(dir / "noxy.csv") << "a,b\n1,2\n";
    expect_error([&] { io::read_csv<2>(dir / "noxy.csv"); }, "header");
    std::ofstream(dir / "p.xyz") << "1 2 3\n";
    expect_error([&] { io::read_particles<3>(dir / "p.xyz"); }, ".csv, .vtp, .ply");
    io::write_ply(dir / "t.ply", sample<3>(20));
    const std::string ply = slurp(dir / "t.ply");
    std::ofstream(dir / "trunc.ply", std::ios::binary) << ply.substr(0, ply.size() - 10);
    expect_error([&] { io::read_ply<3>(dir / "trunc.ply"); }, "truncated");
    std::ofstream(dir / "ascii.ply") << "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                                        "property float z\nend_header\n0 0 0\n1 2 3\n";
    EXPECT_EQ(io::read_ply<3>(dir / "ascii.ply").position[1][2], 3.0f);
}
