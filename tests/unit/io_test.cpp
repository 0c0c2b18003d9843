// Particle files (csv, vtp, ply, pvd) and atomic writes: bit-exact round trips, the structure of what
// is written, and one-line InputErrors naming the file for everything a user can get wrong.
#include <gtest/gtest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "test_support.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

// Each test gets its own folder, unique across concurrent runs of the test binary.
class Io : public test::TempDirTest {};

// Awkward floats (not short decimals, tiny, huge, negative zero) and non-consecutive ids.
template <int D>
ParticleSet<D> sample(std::size_t n) {
    ParticleSet<D> p;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (std::size_t i = 0; i < n; ++i) {
        Vec<D> x, v;
        for (int a = 0; a < D; ++a) {
            x[a] = u(rng) * 1e-3f + u(rng);
            v[a] = u(rng);
        }
        p.push_back(x, v);
        p.density.back() = 1000.0f + u(rng);
        p.pressure.back() = 1e4f * u(rng);
        p.id.back() = static_cast<std::uint32_t>(3 * (n - i) + 7);
    }
    if (n > 3) {
        p.position[0][0] = -0.0f;
        p.position[1][D - 1] = 1.17549435e-38f;  // smallest normal float
        p.velocity[2][0] = 3.40282347e+38f;      // largest float
        p.pressure[3] = std::numeric_limits<float>::denorm_min();
    }
    return p;
}

template <int D>
std::uint32_t max_id_plus_one(const ParticleSet<D>& p) {
    std::uint32_t m = 0;
    for (auto id : p.id) m = std::max(m, id + 1);
    return m;
}

template <int D>
void expect_same(const ParticleSet<D>& a, const ParticleSet<D>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        for (int k = 0; k < D; ++k) {
            // Compare bits, so that -0 and 0 differ.
            EXPECT_EQ(std::bit_cast<std::uint32_t>(a.position[i][k]), std::bit_cast<std::uint32_t>(b.position[i][k]))
                << "particle " << i << " axis " << k;
            EXPECT_EQ(a.velocity[i][k], b.velocity[i][k]) << "particle " << i << " axis " << k;
        }
        EXPECT_EQ(a.density[i], b.density[i]) << i;
        EXPECT_EQ(a.pressure[i], b.pressure[i]) << i;
        EXPECT_EQ(a.id[i], b.id[i]) << i;
    }
    EXPECT_EQ(b.next_id, max_id_plus_one(a));
}

std::string slurp(const fs::path& p) {
    std::stringstream ss;
    ss << std::ifstream(p, std::ios::binary).rdbuf();
    return ss.str();
}

void put(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// Expects an InputError whose one-line message starts with "<file>: " and contains `needle`.
template <class F>
void expect_input_error(F&& f, const fs::path& file, const std::string& needle) {
    try {
        f();
        ADD_FAILURE() << "no error for " << file;
    } catch (const InputError& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind(file.string() + ": ", 0), 0u) << m;
        EXPECT_NE(m.find(needle), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not an InputError: " << e.what();
    }
}

template <class T>
T load(const std::string& s, std::size_t at) {
    T v;
    std::memcpy(&v, s.data() + at, sizeof(T));
    return v;
}

// Attribute of the first tag after `from` that contains `key`: enough for our own headers.
std::string attr(const std::string& s, std::size_t tag, const std::string& name) {
    const auto end = s.find('>', tag);
    const auto a = s.find(" " + name + "=\"", tag);
    if (a == std::string::npos || a > end) return {};
    const auto b = a + name.size() + 3;
    return s.substr(b, s.find('"', b) - b);
}

}  // namespace

TEST_F(Io, RoundTripsAreBitExactIn2D) {
    const auto p = sample<2>(500);
    io::write_csv(dir / "a.csv", p);
    io::write_vtp(dir / "a.vtp", p);
    io::write_ply(dir / "a.ply", p);
    expect_same(p, io::read_csv<2>(dir / "a.csv"));
    expect_same(p, io::read_vtp<2>(dir / "a.vtp"));
    expect_same(p, io::read_ply<2>(dir / "a.ply"));
    for (const char* f : {"a.csv", "a.vtp", "a.ply"}) expect_same(p, io::read_particles<2>(dir / f));
}

TEST_F(Io, RoundTripsAreBitExactIn3D) {
    const auto p = sample<3>(700);
    io::write_csv(dir / "b.csv", p);
    io::write_vtp(dir / "b.vtp", p);
    io::write_ply(dir / "b.ply", p);
    expect_same(p, io::read_csv<3>(dir / "b.csv"));
    expect_same(p, io::read_vtp<3>(dir / "b.vtp"));
    expect_same(p, io::read_ply<3>(dir / "b.ply"));
    for (const char* f : {"b.csv", "b.vtp", "b.PLY"}) {
        if (!fs::exists(dir / f)) fs::copy_file(dir / "b.ply", dir / f);
        expect_same(p, io::read_particles<3>(dir / f));
    }
}

TEST_F(Io, DimensionsMixOnlyWhenZIsZero) {
    const auto p2 = sample<2>(20);
    auto p3 = sample<3>(20);
    // 2D files read as 3D with z = 0.
    for (const char* f : {"a.csv", "a.vtp", "a.ply"}) {
        if (std::string(f).ends_with("csv")) io::write_csv(dir / f, p2);
        else if (std::string(f).ends_with("vtp")) io::write_vtp(dir / f, p2);
        else io::write_ply(dir / f, p2);
        const auto q = io::read_particles<3>(dir / f);
        ASSERT_EQ(q.size(), p2.size());
        for (std::size_t i = 0; i < q.size(); ++i) {
            EXPECT_EQ(q.position[i][0], p2.position[i][0]);
            EXPECT_EQ(q.position[i][2], 0.0f);
        }
    }
    // 3D files read as 2D only when every z is 0.
    for (const char* f : {"b.csv", "b.vtp", "b.ply"}) {
        const std::string ext = fs::path(f).extension().string();
        auto write = [&](const fs::path& path, const ParticleSet<3>& p) {
            if (ext == ".csv") io::write_csv(path, p);
            else if (ext == ".vtp") io::write_vtp(path, p);
            else io::write_ply(path, p);
        };
        write(dir / f, p3);
        expect_input_error([&] { io::read_particles<2>(dir / f); }, dir / f, "2D");
        auto flat = p3;
        for (auto& x : flat.position) x[2] = 0.0f;
        const fs::path g = dir / ("flat" + ext);
        write(g, flat);
        const auto q = io::read_particles<2>(g);
        ASSERT_EQ(q.size(), flat.size());
        EXPECT_EQ(q.position[5][1], flat.position[5][1]);
        EXPECT_EQ(q.velocity[5][1], flat.velocity[5][1]);
    }
}

TEST_F(Io, CsvHeaderAndNumbers) {
    io::write_csv(dir / "p.csv", sample<3>(10));
    EXPECT_TRUE(slurp(dir / "p.csv").starts_with("id,x,y,z,vx,vy,vz,density,pressure\n"));
    ParticleSet<2> q;
    q.push_back(Vec2{{0.1f, -2.5f}}, Vec2{{0.0f, 1e-7f}});
    q.density[0] = 1000.0f;
    io::write_csv(dir / "q.csv", q);
    // %.9g: nine significant digits, no trailing zeros, exponent for small numbers.
    EXPECT_EQ(slurp(dir / "q.csv"), "id,x,y,vx,vy,density,pressure\n0,0.100000001,-2.5,0,1.00000001e-07,1000,0\n");
    // Columns may come in any order, with spaces and CRLF; missing ones read as zero, ids as the row.
    put(dir / "r.csv", "z, y ,x,vx\r\n3,2,1,0.5\r\n\r\n6,5,4,1.5\r\n");
    const auto r = io::read_csv<3>(dir / "r.csv");
    ASSERT_EQ(r.size(), 2u);
    EXPECT_TRUE(r.position[1] == (Vec3{{4, 5, 6}}));
    EXPECT_EQ(r.velocity[1][0], 1.5f);
    EXPECT_EQ(r.id[1], 1u);
    EXPECT_EQ(r.next_id, 2u);
}

TEST_F(Io, VtpHeaderAndAppendedBlocks) {
    const std::size_t n = 10;
    const auto p = sample<3>(n);
    io::write_vtp(dir / "p.vtp", p);
    const std::string v = slurp(dir / "p.vtp");
    const auto file = v.find("<VTKFile");
    ASSERT_NE(file, std::string::npos);
    EXPECT_EQ(attr(v, file, "type"), "PolyData");
    EXPECT_EQ(attr(v, file, "byte_order"), "LittleEndian");
    EXPECT_EQ(attr(v, file, "header_type"), "UInt64");
    const auto piece = v.find("<Piece");
    EXPECT_EQ(attr(v, piece, "NumberOfPoints"), "10");
    EXPECT_EQ(attr(v, piece, "NumberOfVerts"), "10");
    const auto app = v.find("<AppendedData");
    ASSERT_NE(app, std::string::npos);
    EXPECT_EQ(attr(v, app, "encoding"), "raw");
    const std::size_t base = v.find('_', app) + 1;

    // Every array: appended, its UInt64 byte count matches type x components x points, and the
    // blocks follow each other with no gap up to the end of the appended data.
    struct Expect { const char* name; const char* type; int comps; std::size_t elem; };
    const Expect arrays[] = {{"Points", "Float32", 3, 4},   {"connectivity", "Int64", 1, 8}, {"offsets", "Int64", 1, 8},
                             {"velocity", "Float32", 3, 4}, {"density", "Float32", 1, 4},    {"pressure", "Float32", 1, 4},
                             {"id", "UInt32", 1, 4}};
    std::vector<std::pair<std::size_t, std::size_t>> blocks;  // (offset, bytes)
    for (const auto& e : arrays) {
        const auto tag = v.find(std::string("Name=\"") + e.name + "\"");
        ASSERT_NE(tag, std::string::npos) << e.name;
        const auto open = v.rfind("<DataArray", tag);
        EXPECT_EQ(attr(v, open, "type"), e.type) << e.name;
        EXPECT_EQ(attr(v, open, "NumberOfComponents"), std::to_string(e.comps)) << e.name;
        EXPECT_EQ(attr(v, open, "format"), "appended") << e.name;
        const std::size_t off = std::stoull(attr(v, open, "offset"));
        const auto bytes = load<std::uint64_t>(v, base + off);
        EXPECT_EQ(bytes, n * e.comps * e.elem) << e.name;
        blocks.emplace_back(off, bytes);
    }
    std::sort(blocks.begin(), blocks.end());
    std::size_t at = 0;
    for (const auto& [off, bytes] : blocks) {
        EXPECT_EQ(off, at);
        at = off + 8 + bytes;
    }
    EXPECT_EQ(v.substr(base + at), "\n  </AppendedData>\n</VTKFile>\n");
    // Points are inside <Points>, the cells inside <Verts>: one vertex per point.
    EXPECT_LT(v.find("<Points>"), v.find("Name=\"Points\""));
    EXPECT_LT(v.find("<Verts>"), v.find("Name=\"connectivity\""));
    const std::size_t conn = base + blocks[1].first + 8, offs = base + blocks[2].first + 8;
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(load<std::int64_t>(v, conn + 8 * i), std::int64_t(i));
        EXPECT_EQ(load<std::int64_t>(v, offs + 8 * i), std::int64_t(i + 1));
    }
    EXPECT_EQ(load<float>(v, base + 8 + 12 * 4 + 8), p.position[4][2]);
    // 2D: z = 0.
    io::write_vtp(dir / "q.vtp", sample<2>(n));
    const std::string w = slurp(dir / "q.vtp");
    const std::size_t wb = w.find('_', w.find("<AppendedData")) + 1;
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(load<float>(w, wb + 8 + 12 * i + 8), 0.0f);
}

TEST_F(Io, PlyIsBinaryLittleEndianAndReadsAscii) {
    const std::size_t n = 12;
    io::write_ply(dir / "p.ply", sample<3>(n));
    const std::string s = slurp(dir / "p.ply");
    const std::string header_end = "end_header\n";
    const auto body = s.find(header_end) + header_end.size();
    const std::string header = s.substr(0, body);
    EXPECT_TRUE(header.starts_with("ply\nformat binary_little_endian 1.0\n"));
    EXPECT_NE(header.find("element vertex 12\n"), std::string::npos);
    EXPECT_NE(header.find("property float x\nproperty float y\nproperty float z\nproperty float vx\nproperty float vy\n"
                          "property float vz\nproperty float density\nproperty float pressure\nproperty uint id\n"),
              std::string::npos);
    EXPECT_EQ(s.size() - body, n * (8 * 4 + 4));

    // ASCII with only positions, CRLF lines, an extra property and a face element after the vertices.
    put(dir / "a.ply",
        "ply\r\nformat ascii 1.0\r\ncomment hand made\r\nelement vertex 2\r\nproperty double x\r\nproperty float y\r\n"
        "property float z\r\nproperty uchar red\r\nelement face 0\r\nproperty list uchar int vertex_indices\r\n"
        "end_header\r\n0 0 0 255\r\n1.5 2 -3 7\r\n");
    const auto a = io::read_ply<3>(dir / "a.ply");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_TRUE(a.position[1] == (Vec3{{1.5f, 2.0f, -3.0f}}));
    EXPECT_EQ(a.id[1], 1u);
    EXPECT_EQ(a.next_id, 2u);
    // ASCII with every optional field.
    put(dir / "b.ply",
        "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
        "property float vx\nproperty float vy\nproperty float vz\nproperty float density\nproperty float pressure\n"
        "property uint id\nend_header\n1 2 3 4 5 6 998.5 -12 41\n");
    const auto b = io::read_ply<3>(dir / "b.ply");
    EXPECT_TRUE(b.velocity[0] == (Vec3{{4, 5, 6}}));
    EXPECT_EQ(b.density[0], 998.5f);
    EXPECT_EQ(b.pressure[0], -12.0f);
    EXPECT_EQ(b.id[0], 41u);
    EXPECT_EQ(b.next_id, 42u);
}

// A --pieces frame (one .vtp per process, listed by a .pvtp) reads back as the whole set; an empty
// piece (a process that held nothing) is skipped; a missing piece or an id in two pieces is named.
TEST_F(Io, PvtpPiecesReadBackAsTheWhole) {
    ParticleSet<3> a, b;
    for (int i = 0; i < 5; ++i) a.push_back(Vec3{{0.1f * i, 0.2f, 0.3f}}, Vec3{{1.0f, 0.0f, float(i)}});
    for (int i = 0; i < 3; ++i) b.push_back(Vec3{{0.5f, 0.1f * i, 0.0f}}, Vec3::zero());
    for (std::size_t i = 0; i < b.size(); ++i) b.id[i] = 10 + std::uint32_t(i);
    io::write_vtp(dir / "f_p0000.vtp", a);
    io::write_vtp(dir / "f_p0001.vtp", ParticleSet<3>{});
    io::write_vtp(dir / "f_p0002.vtp", b);
    io::write_pvtp(dir / "f.pvtp", {"f_p0000.vtp", "f_p0001.vtp", "f_p0002.vtp"});
    const ParticleSet<3> all = io::read_particles<3>(dir / "f.pvtp");
    ASSERT_EQ(all.size(), 8u);
    EXPECT_EQ(all.id[4], 4u);
    EXPECT_EQ(all.id[5], 10u);
    EXPECT_EQ(all.position[7][1], b.position[2][1]);
    EXPECT_EQ(all.velocity[3][2], 3.0f);
    EXPECT_EQ(all.next_id, 13u);
    io::write_pvtp(dir / "missing.pvtp", {"f_p0000.vtp", "gone.vtp"});
    expect_input_error([&] { io::read_pvtp<3>(dir / "missing.pvtp"); }, dir / "gone.vtp", "no such file");
    io::write_pvtp(dir / "twice.pvtp", {"f_p0000.vtp", "f_p0000.vtp"});
    expect_input_error([&] { io::read_pvtp<3>(dir / "twice.pvtp"); }, dir / "twice.pvtp", "listed before");
    fs::copy_file(dir / "f_p0000.vtp", dir / "copy.vtp");  // another file with the same particles
    io::write_pvtp(dir / "copied.pvtp", {"f_p0000.vtp", "copy.vtp"});
    expect_input_error([&] { io::read_pvtp<3>(dir / "copied.pvtp"); }, dir / "copied.pvtp", "more than one particle");
    io::write_pvtp(dir / "none.pvtp", {});
    expect_input_error([&] { io::read_pvtp<3>(dir / "none.pvtp"); }, dir / "none.pvtp", "no <Piece>");
}

TEST_F(Io, PvdListsTheFrames) {
    io::write_pvd(dir / "s.pvd", {{0.0, "frames/a.vtp"}, {0.02, "frames/b.vtp"}, {1.0 / 3.0, "x&y.vtp"}});
    const std::string s = slurp(dir / "s.pvd");
    EXPECT_TRUE(s.starts_with("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\""));
    EXPECT_NE(s.find("<DataSet timestep=\"0\" group=\"\" part=\"0\" file=\"frames/a.vtp\"/>"), std::string::npos);
    EXPECT_NE(s.find("<DataSet timestep=\"0.02\" group=\"\" part=\"0\" file=\"frames/b.vtp\"/>"), std::string::npos);
    // Times keep every digit; file names are escaped for XML.
    const auto t = s.find("timestep=\"0.333");
    ASSERT_NE(t, std::string::npos);
    EXPECT_EQ(std::stod(s.substr(t + 10)), 1.0 / 3.0);
    EXPECT_NE(s.find("file=\"x&amp;y.vtp\""), std::string::npos);
    EXPECT_TRUE(s.ends_with("  </Collection>\n</VTKFile>\n"));
    std::size_t datasets = 0;
    for (auto at = s.find("<DataSet"); at != std::string::npos; at = s.find("<DataSet", at + 1)) ++datasets;
    EXPECT_EQ(datasets, 3u);
}

TEST_F(Io, AtomicWritesAreCompleteAndLeaveNoTemporaryFile) {
    io::write_atomic(dir / "x/y/file.txt", "hello");
    EXPECT_EQ(slurp(dir / "x/y/file.txt"), "hello");
    std::string big(5 << 20, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + (i >> 11));
    io::write_atomic(dir / "x/y/file.txt", big);
    EXPECT_EQ(slurp(dir / "x/y/file.txt"), big);
    io::write_atomic(dir / "x/y/empty.txt", "");
    EXPECT_TRUE(fs::exists(dir / "x/y/empty.txt"));
    EXPECT_EQ(fs::file_size(dir / "x/y/empty.txt"), 0u);
    const nlohmann::json j = {{"a", 1}, {"b", {1, 2}}};
    io::write_json(dir / "j.json", j);
    EXPECT_EQ(slurp(dir / "j.json"), j.dump(2) + "\n");
    for (const auto& e : fs::recursive_directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(Io, AtomicWritesIntoUnwritablePlacesThrow) {
    auto expect_error = [&](const fs::path& target) {
        try {
            io::write_atomic(target, "x");
            ADD_FAILURE() << "no error for " << target;
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
        }
    };
    // A folder in the way of the file: the folder is untouched and the temporary file removed.
    fs::create_directories(dir / "blocked");
    expect_error(dir / "blocked");
    EXPECT_TRUE(fs::is_directory(dir / "blocked"));
    // A file in the way of a folder (this fails even for root, unlike a read-only folder).
    put(dir / "plain", "data");
    expect_error(dir / "plain/sub/file.txt");
    expect_error(dir / "plain/file.txt");
    EXPECT_EQ(slurp(dir / "plain"), "data");
    // A read-only folder (not for root, who may write anywhere).
    if (::geteuid() != 0) {
        fs::create_directories(dir / "ro");
        fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
        expect_error(dir / "ro/file.txt");
        fs::permissions(dir / "ro", fs::perms::owner_all);
    }
    for (const auto& e : fs::recursive_directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(Io, ReadersNameTheFileAndTheProblem) {
    // Missing, empty, folder.
    for (const char* f : {"nope.csv", "nope.vtp", "nope.ply"})
        expect_input_error([&] { io::read_particles<3>(dir / f); }, dir / f, "no such file");
    for (const char* f : {"empty.csv", "empty.vtp", "empty.ply"}) {
        put(dir / f, "");
        expect_input_error([&] { io::read_particles<3>(dir / f); }, dir / f, "no particles");
    }
    fs::create_directories(dir / "folder.csv");
    expect_input_error([&] { io::read_csv<3>(dir / "folder.csv"); }, dir / "folder.csv", "folder");
    // Zero particles in an otherwise good file.
    put(dir / "header.csv", "id,x,y,z\n");
    expect_input_error([&] { io::read_csv<3>(dir / "header.csv"); }, dir / "header.csv", "no particles");
    io::write_vtp(dir / "zero.vtp", ParticleSet<3>{});
    expect_input_error([&] { io::read_vtp<3>(dir / "zero.vtp"); }, dir / "zero.vtp", "no particles");
    io::write_ply(dir / "zero.ply", ParticleSet<2>{});
    expect_input_error([&] { io::read_ply<2>(dir / "zero.ply"); }, dir / "zero.ply", "no particles");
    // Unknown extension.
    put(dir / "p.xyz", "1 2 3\n");
    expect_input_error([&] { io::read_particles<3>(dir / "p.xyz"); }, dir / "p.xyz", ".csv, .vtp, .pvtp, .ply");
}

TEST_F(Io, CsvReaderRejectsBadContent) {
    auto check = [&](const char* name, const std::string& text, const std::string& needle) {
        put(dir / name, text);
        expect_input_error([&] { io::read_csv<3>(dir / name); }, dir / name, needle);
    };
    check("nan.csv", "x,y,z\n1,2,3\nnan,0,0\n", "line 3: position is not finite");
    check("inf.csv", "x,y,z\n1,2,3\n\n0,-inf,0\n", "line 4: position is not finite");
    check("huge.csv", "x,y,z\n1e39,2,3\n", "line 2: position is not finite");  // overflows a float
    check("short.csv", "x,y,z\n1,2\n", "line 2");
    check("long.csv", "x,y,z\n1,2,3,4\n", "line 2");
    check("word.csv", "x,y,z\n1,two,3\n", "line 2: 'two' is not a number");
    check("noxy.csv", "a,b\n1,2\n", "header");
    check("negid.csv", "id,x,y,z\n-1,0,0,0\n", "line 2: id");
    check("fracid.csv", "id,x,y,z\n1.5,0,0,0\n", "line 2: id");
    check("dupid.csv", "id,x,y,z\n4,0,0,0\n5,1,0,0\n4,2,0,0\n", "id 4 is used by more than one particle");
    put(dir / "ok.csv", "x,y\n1,2\n");
    EXPECT_EQ(io::read_csv<2>(dir / "ok.csv").position[0][1], 2.0f);
}

TEST_F(Io, BinaryReadersRejectBadContent) {
    io::write_ply(dir / "t.ply", sample<3>(20));
    const std::string ply = slurp(dir / "t.ply");
    put(dir / "trunc.ply", ply.substr(0, ply.size() - 10));
    expect_input_error([&] { io::read_ply<3>(dir / "trunc.ply"); }, dir / "trunc.ply", "truncated");
    std::string big_endian = ply;
    big_endian.replace(big_endian.find("binary_little_endian"), 20, "binary_big_endian   ");
    put(dir / "be.ply", big_endian);
    expect_input_error([&] { io::read_ply<3>(dir / "be.ply"); }, dir / "be.ply", "binary_big_endian");
    put(dir / "nohead.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n");
    expect_input_error([&] { io::read_ply<3>(dir / "nohead.ply"); }, dir / "nohead.ply", "end_header");
    put(dir / "notply.ply", "solid cube\n");
    expect_input_error([&] { io::read_ply<3>(dir / "notply.ply"); }, dir / "notply.ply", "not a PLY file");
    put(dir / "nan.ply", "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                         "property float z\nend_header\n0 0 0\n1 nan 3\n");
    expect_input_error([&] { io::read_ply<3>(dir / "nan.ply"); }, dir / "nan.ply", "line 9: position is not finite");
    auto bad = sample<3>(5);
    bad.position[3][1] = std::numeric_limits<float>::infinity();
    io::write_ply(dir / "inf.ply", bad);
    expect_input_error([&] { io::read_ply<3>(dir / "inf.ply"); }, dir / "inf.ply", "vertex 3: position is not finite");
    io::write_vtp(dir / "inf.vtp", bad);
    expect_input_error([&] { io::read_vtp<3>(dir / "inf.vtp"); }, dir / "inf.vtp", "point 3: position is not finite");

    io::write_vtp(dir / "t.vtp", sample<3>(20));
    const std::string vtp = slurp(dir / "t.vtp");
    put(dir / "trunc.vtp", vtp.substr(0, vtp.find("<AppendedData") + 200));
    expect_input_error([&] { io::read_vtp<3>(dir / "trunc.vtp"); }, dir / "trunc.vtp", "truncated");
    std::string compressed = vtp;
    compressed.replace(compressed.find("header_type"), 0, "compressor=\"vtkZLibDataCompressor\" ");
    put(dir / "zlib.vtp", compressed);
    expect_input_error([&] { io::read_vtp<3>(dir / "zlib.vtp"); }, dir / "zlib.vtp", "compressed");
    put(dir / "ascii.vtp",
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
        "header_type=\"UInt64\">\n<PolyData>\n<Piece NumberOfPoints=\"1\">\n<Points>\n"
        "<DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0</DataArray>\n</Points>\n"
        "</Piece>\n</PolyData>\n</VTKFile>\n");
    expect_input_error([&] { io::read_vtp<3>(dir / "ascii.vtp"); }, dir / "ascii.vtp", "format=\"ascii\"");
    put(dir / "grid.vtp", "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" header_type=\"UInt64\">\n</VTKFile>\n");
    expect_input_error([&] { io::read_vtp<3>(dir / "grid.vtp"); }, dir / "grid.vtp", "PolyData");
    put(dir / "text.vtp", "hello\n");
    expect_input_error([&] { io::read_vtp<3>(dir / "text.vtp"); }, dir / "text.vtp", "VTKFile");
    // A corrupt point count must be an error, not an attempt to allocate it.
    std::string huge = vtp;
    huge.replace(huge.find("NumberOfPoints=\"20\""), 19, "NumberOfPoints=\"2000000000000\"");
    put(dir / "huge.vtp", huge);
    expect_input_error([&] { io::read_vtp<3>(dir / "huge.vtp"); }, dir / "huge.vtp", "Points");
}

// Issue 12: a .vtp whose header claimed 2^61 points passed every check (2^61 points of 24 bytes "need"
// 0 bytes once the product wraps around 2^64) and then asked for 2^61 particles: exit 1 with
// "vector::_M_fill_insert". Every header count is now checked against the file's size first.
TEST_F(Io, HeaderCountsAreCheckedAgainstTheFileSizeFirst) {
    io::write_vtp(dir / "t.vtp", sample<3>(20));
    std::string vtp = slurp(dir / "t.vtp");
    vtp.replace(vtp.find("NumberOfPoints=\"20\""), 19, "NumberOfPoints=\"2305843009213693952\"");
    // The Points array's byte count (offset 0) set to what the wrapped product gives: 0.
    const std::size_t data = vtp.find('_', vtp.find("<AppendedData")) + 1;
    vtp.replace(data, 8, std::string(8, '\0'));
    put(dir / "wrap.vtp", vtp);
    expect_input_error([&] { io::read_vtp<3>(dir / "wrap.vtp"); }, dir / "wrap.vtp",
                       "NumberOfPoints = 2305843009213693952 is more than the file's");
    // A count the file could hold as bytes but not as Float32 triples.
    vtp = slurp(dir / "t.vtp");
    const std::string n = std::to_string(vtp.size() / 4);
    vtp.replace(vtp.find("NumberOfPoints=\"20\""), 19, "NumberOfPoints=\"" + n + "\"");
    put(dir / "many.vtp", vtp);
    expect_input_error([&] { io::read_vtp<3>(dir / "many.vtp"); }, dir / "many.vtp", "truncated");
    // PLY, binary and ASCII.
    io::write_ply(dir / "t.ply", sample<3>(20));
    std::string ply = slurp(dir / "t.ply");
    ply.replace(ply.find("element vertex 20"), 17, "element vertex 2305843009213693952");
    put(dir / "wrap.ply", ply);
    expect_input_error([&] { io::read_ply<3>(dir / "wrap.ply"); }, dir / "wrap.ply", "truncated");
    put(dir / "wrap_ascii.ply", "ply\nformat ascii 1.0\nelement vertex 18446744073709551615\nproperty float x\n"
                                "property float y\nproperty float z\nend_header\n0 0 0\n");
    expect_input_error([&] { io::read_ply<3>(dir / "wrap_ascii.ply"); }, dir / "wrap_ascii.ply", "truncated");
    // Devices are not particle files (/dev/zero would be read forever).
    expect_input_error([&] { io::read_csv<3>("/dev/zero"); }, "/dev/zero", "not a regular file");
}
