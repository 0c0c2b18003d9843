// Model files as untrusted input (issue 29): PLY face indices and truncation checked before assimp
// sees the file, nothing assimp returns trusted, side files (OBJ mtllib, glTF buffers) read through
// eddy's confined, non-blocking I/O system, placement beyond float range, mirrored scales.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"
#include "eddy/scene.hpp"
#include "test_support.hpp"

using namespace eddy;
using eddy::test::expect_input_error;
namespace fs = std::filesystem;

namespace {

using eddy::test::HangGuard;  // a FIFO opened the blocking way would hang the test

const float kTetra[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
const int kFaces[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};

template <class T>
void put(std::string& s, T v, bool big_endian = false) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (big_endian) std::reverse(b, b + sizeof(T));
    s.append(b, sizeof(T));
}

// A tetrahedron as binary PLY; `last` replaces the last face's third index.
std::string binary_ply(int last = 3, bool big_endian = false) {
    std::string s = std::string("ply\nformat ") + (big_endian ? "binary_big_endian" : "binary_little_endian") +
                    " 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                    "element face 4\nproperty list uchar int vertex_indices\nend_header\n";
    for (const auto& v : kTetra)
        for (float c : v) put(s, c, big_endian);
    for (int f = 0; f < 4; ++f) {
        put<std::uint8_t>(s, 3);
        for (int k = 0; k < 3; ++k) put<std::int32_t>(s, f == 3 && k == 2 ? last : kFaces[f][k], big_endian);
    }
    return s;
}

std::string ascii_ply(const std::string& last_face = "3 1 2 3") {
    std::string s = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                    "element face 4\nproperty list uchar int vertex_indices\nend_header\n"
                    "0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n";
    return s + last_face + "\n";
}

const std::string kTetraObj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

class ModelFiles : public eddy::test::TempDirTest {
protected:
    fs::path write(const std::string& name, const std::string& bytes) {
        const fs::path p = dir / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }
};

}  // namespace

TEST_F(ModelFiles, ValidPlyLoadsInBothByteOrdersAndAscii) {
    EXPECT_EQ(read_triangle_mesh(write("le.ply", binary_ply())).cells.size(), 4u);
    EXPECT_EQ(read_triangle_mesh(write("be.ply", binary_ply(3, true))).cells.size(), 4u);
    EXPECT_EQ(read_triangle_mesh(write("a.ply", ascii_ply())).cells.size(), 4u);
}

// Issue 29 item 1: these crashed eddy run with exit 139.
TEST_F(ModelFiles, PlyFaceIndexBeyondTheVerticesIsRefused) {
    expect_input_error([&] { (void)read_triangle_mesh(write("big.ply", binary_ply(100000))); },
                       {"big.ply", "face 3 uses vertex 100000", "4 vertices"});
    expect_input_error([&] { (void)read_triangle_mesh(write("be.ply", binary_ply(4, true))); }, {"uses vertex 4"});
    expect_input_error([&] { (void)read_triangle_mesh(write("neg.ply", ascii_ply("3 1 2 -5"))); },
                       {"neg.ply", "face 3 uses vertex -5"});
    expect_input_error([&] { (void)read_triangle_mesh(write("over.ply", ascii_ply("3 1 2 4"))); }, {"uses vertex 4"});
    expect_input_error([&] { (void)read_triangle_mesh(write("frac.ply", ascii_ply("3 1 2 2.5"))); }, {"not a whole number"});
}

TEST_F(ModelFiles, TruncatedOrPaddedBinaryPlyIsRefusedBeforeAssimp) {
    const std::string good = binary_ply();
    for (std::size_t cut : {1u, 13u, 30u, 52u}) {
        SCOPED_TRACE(cut);
        expect_input_error([&] { (void)read_triangle_mesh(write("cut.ply", good.substr(0, good.size() - cut))); },
                           {"cut.ply", "truncated"});
    }
    expect_input_error([&] { (void)read_triangle_mesh(write("pad.ply", good + "junk")); }, {"pad.ply", "must end"});
    // A list claiming more items than the file holds.
    std::string huge_list = good;
    huge_list[huge_list.size() - 13] = char(200);
    expect_input_error([&] { (void)read_triangle_mesh(write("list.ply", huge_list)); }, {"truncated"});
    // ASCII: a missing line, a short line.
    std::string a = ascii_ply();
    expect_input_error([&] { (void)read_triangle_mesh(write("a.ply", a.substr(0, a.rfind("3 1")))); }, {"truncated"});
    expect_input_error([&] { (void)read_triangle_mesh(write("b.ply", ascii_ply("3 1 2"))); }, {"lists 3 items"});
}

TEST_F(ModelFiles, PlyHeadersEddyCannotFollowAreRefused) {
    std::string unknown = binary_ply();
    unknown.replace(unknown.find("property float x"), 16, "property half  x");
    expect_input_error([&] { (void)read_triangle_mesh(write("t.ply", unknown)); }, {"unknown type 'half'"});
    std::string odd = binary_ply();
    odd.replace(odd.find("element face"), 0, "bogus line\n");
    expect_input_error([&] { (void)read_triangle_mesh(write("o.ply", odd)); }, {"unexpected 'bogus'"});
    expect_input_error([&] { (void)read_triangle_mesh(write("n.ply", "ply\nformat ascii 1.0\nelement vertex 4\n")); },
                       {"no end_header"});
    expect_input_error(
        [&] { (void)read_triangle_mesh(write("e.ply", "ply\nformat binary_little_endian 1.0\nelement x 99999999999999\nend_header\n")); },
        {"no property"});
}

// Found by fuzz_model_ply and fuzz_model_gltf (docs/fuzzing.md): layouts assimp reads its own way.
TEST_F(ModelFiles, HeadersAssimpWouldMisreadAreRefused) {
    std::string twice = ascii_ply();
    twice.replace(twice.find("element face"), 0, "element vertex 1\nproperty float x\n");
    expect_input_error([&] { (void)read_triangle_mesh(write("twice.ply", twice)); }, {"element 'vertex' is declared twice"});
    std::string digits = ascii_ply();
    digits.replace(digits.find("element face 4"), 14, "element 9999face 4");
    expect_input_error([&] { (void)read_triangle_mesh(write("digits.ply", digits)); }, {"element name '9999face'"});
    std::string formats = ascii_ply();
    formats.replace(formats.find("element vertex"), 0, "format binary_big_endian 1.0\n");
    expect_input_error([&] { (void)read_triangle_mesh(write("formats.ply", formats)); }, {"only 'format' line"});
    // A GLB's JSON chunk claiming 2 GB in a 40-byte file.
    std::string glb = "glTF";
    put<std::uint32_t>(glb, 2);
    put<std::uint32_t>(glb, 40);
    put<std::uint32_t>(glb, 0x80000000u);
    put<std::uint32_t>(glb, 0x4E4F534Au);
    glb += std::string(20, ' ');
    expect_input_error([&] { (void)read_triangle_mesh(write("big.glb", glb)); }, {"big.glb", "claims 2147483648 bytes"});
    glb.resize(30);
    expect_input_error([&] { (void)read_triangle_mesh(write("cut.glb", glb)); }, {"the header claims 40 bytes, the file has 30"});
}

TEST_F(ModelFiles, AnObjMtllibThatIsAFifoIsRefusedWithinASecond) {
    const fs::path model = write("m/a.obj", "mtllib pipe.mtl\n" + kTetraObj);
    ASSERT_EQ(::mkfifo((dir / "m" / "pipe.mtl").c_str(), 0600), 0);
    HangGuard guard;  // refused, not waited on: a blocking open never returns, and the guard fails the test
    expect_input_error([&] { (void)read_triangle_mesh(model); }, {"a.obj", "pipe.mtl", "FIFO"});
}

TEST_F(ModelFiles, SideFilesOutsideTheModelsFolderAreRefusedUnlessAllowed) {
    write("outside.mtl", "newmtl x\n");
    write("out.bin", "x");
    const fs::path up = write("m/up.obj", "mtllib ../outside.mtl\n" + kTetraObj);
    expect_input_error([&] { (void)read_triangle_mesh(up); }, {"up.obj", "'../outside.mtl'", "'..'"});
    const fs::path abs = write("m/abs.obj", "mtllib " + (dir / "outside.mtl").string() + "\n" + kTetraObj);
    expect_input_error([&] { (void)read_triangle_mesh(abs); }, {"abs.obj", "absolute path"});
    ModelFileOptions allow;
    allow.allow_outside_references = true;
    EXPECT_EQ(read_triangle_mesh(up, {}, allow).cells.size(), 4u);
    // A missing material library is harmless, as assimp treats it; one inside the folder is read.
    EXPECT_EQ(read_triangle_mesh(write("m/missing.obj", "mtllib nope.mtl\n" + kTetraObj)).cells.size(), 4u);
    write("m/here.mtl", "newmtl x\nKd 1 0 0\n");
    EXPECT_EQ(read_triangle_mesh(write("m/here.obj", "mtllib here.mtl\nusemtl x\n" + kTetraObj)).cells.size(), 4u);
    // A side file over the size limit is refused from its size.
    ModelFileOptions small;
    small.max_file_bytes = 200;
    write("m/big.mtl", std::string(1000, '#'));
    expect_input_error([&] { (void)read_triangle_mesh(write("m/big.obj", "mtllib big.mtl\n" + kTetraObj), {}, small); },
                       {"big.mtl", "1000 bytes, more than the 200"});
    small.max_file_bytes = 20;
    expect_input_error([&] { (void)read_triangle_mesh(dir / "m/big.obj", {}, small); }, {"big.obj", "the model is"});
}

namespace {

// A tetrahedron as glTF 2.0 with its buffer at `uri` (12 floats then 12 uint16 indices).
std::string gltf(const std::string& uri) {
    return R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
           R"("meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],)"
           R"("buffers":[{"byteLength":72,"uri":")" + uri + R"("}],)"
           R"("bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":48},{"buffer":0,"byteOffset":48,"byteLength":24}],)"
           R"("accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,1]},)"
           R"({"bufferView":1,"componentType":5123,"count":12,"type":"SCALAR"}]})";
}

std::string gltf_buffer() {
    std::string b;
    for (const auto& v : kTetra)
        for (float c : v) put(b, c);
    for (const auto& f : kFaces)
        for (int i : f) put<std::uint16_t>(b, std::uint16_t(i));
    return b;
}

}  // namespace

TEST_F(ModelFiles, GltfBufferUrisAreConfinedAndNeverBlock) {
    write("m/t.bin", gltf_buffer());
    EXPECT_EQ(read_triangle_mesh(write("m/t.gltf", gltf("t.bin"))).cells.size(), 4u);
    ASSERT_EQ(::mkfifo((dir / "m" / "pipe.bin").c_str(), 0600), 0);
    {
        HangGuard guard;
        expect_input_error([&] { (void)read_triangle_mesh(write("m/fifo.gltf", gltf("pipe.bin"))); },
                           {"fifo.gltf", "pipe.bin", "FIFO"});
    }
    write("t.bin", gltf_buffer());
    expect_input_error([&] { (void)read_triangle_mesh(write("m/up.gltf", gltf("../t.bin"))); }, {"up.gltf", "'../t.bin'"});
    expect_input_error([&] { (void)read_triangle_mesh(write("m/abs.gltf", gltf((dir / "t.bin").string()))); },
                       {"abs.gltf", "absolute path"});
}

TEST_F(ModelFiles, FromMemoryNoFileIsOpened) {
    EXPECT_EQ(read_triangle_mesh_from_memory(kTetraObj, "x.obj").cells.size(), 4u);
    EXPECT_EQ(read_triangle_mesh_from_memory(binary_ply(), "x.ply").cells.size(), 4u);
    // The side file exists beside the working directory's x.gltf name, but memory reads never open files.
    write("t.bin", gltf_buffer());
    expect_input_error([&] { (void)read_triangle_mesh_from_memory(gltf((dir / "t.bin").string()), dir / "x.gltf"); },
                       {"x.gltf", "cannot read the model"});
    expect_input_error([&] { (void)read_triangle_mesh_from_memory("", "x.obj"); }, {"x.obj", "empty"});
}

// Issue 29 item 13: "no triangle left after dropping 12 degenerate one(s)" for a float overflow.
TEST_F(ModelFiles, APlacementBeyondFloatRangeNamesTheKey) {
    const fs::path f = write("t.obj", kTetraObj);
    Placement p;
    p.scale = {1e17, 1e17, 1e17};
    EXPECT_EQ(MeshShape<3>(read_triangle_mesh(f, p), "t").mesh().cells.size(), 4u);  // large, still fine
    // 1e30 m is a float, but its square is not: every triangle read as degenerate.
    p.scale = {1e30, 1e30, 1e30};
    expect_input_error([&] { (void)read_triangle_mesh(f, p); }, {"t.obj", "scale 1e+30 puts vertices beyond float range"});
    const fs::path far = write("far.obj", "v 0 0 0\nv 1e9 0 0\nv 0 1 0\nf 1 2 3\n");
    p.scale = {1e10, 1e10, 1e10};
    expect_input_error([&] { (void)read_triangle_mesh(far, p); }, {"scale 1e+10 puts vertices beyond float range"});
    p.scale = {-1e30, 1, 1};
    expect_input_error([&] { (void)read_triangle_mesh(far, p); }, {"scale [-1e+30, 1, 1] puts vertices beyond"});
    p.scale = {1, 1, 1};
    p.translate = {3e38, 0, 0};
    expect_input_error([&] { (void)read_triangle_mesh(far, p); }, {"translate [3e+38, 0, 0] puts vertices beyond float range"});
}

TEST_F(ModelFiles, ANegativeScaleMirrorsInEitherForm) {
    // The scalar form was refused ("must be > 0") while the 3-number form mirrored.
    write("models/t.obj", kTetraObj);
    auto scene = [&](const std::string& scale) {
        return nlohmann::json::parse(R"({"name":"m","dimension":3,"particle_radius":0.02,
            "boundaries":[{"shape":"box","min":[-1,-1,-1],"max":[1,1,1]},
                          {"shape":"mesh","file":"models/t.obj","scale":)" + scale + R"(}],
            "fluids":[{"shape":"box","min":[0.5,0.5,0.5],"max":[0.9,0.9,0.9]}]})");
    };
    const fs::path where = write("s.json", "{}");
    for (const char* s : {"-0.1", "[-0.1, -0.1, -0.1]"}) {
        SCOPED_TRACE(s);
        const Scene sc = parse_scene(scene(s), where.string());
        const auto& mesh = *sc.boundaries[1].model.mesh;
        // Mirrored through the origin: inside near (-0.02, -0.02, -0.02), outside at +0.02; outward.
        EXPECT_TRUE(mesh.inside(Vec3{{-0.02f, -0.02f, -0.02f}}));
        EXPECT_FALSE(mesh.inside(Vec3{{0.02f, 0.02f, 0.02f}}));
        EXPECT_EQ(mesh.report().boundary_edges, 0u);
        EXPECT_NEAR(mesh.lo()[0], -0.1f, 1e-6f);
    }
    expect_input_error([&] { (void)parse_scene(scene("0"), where.string()); }, {"scale", "must not be zero"});
    expect_input_error([&] { (void)parse_scene(scene("1e39"), where.string()); }, {"scale"});
}

TEST_F(ModelFiles, ANulByteInAModelOrParticleFileNameIsRefusedNamingTheKey) {
    write("models/t.obj", kTetraObj);
    const fs::path where = write("s.json", "{}");
    nlohmann::json j = nlohmann::json::parse(R"({"name":"m","dimension":3,"particle_radius":0.02,
        "boundaries":[{"shape":"box","min":[-1,-1,-1],"max":[1,1,1]},{"shape":"mesh","file":"x"}],
        "fluids":[{"shape":"box","min":[0.5,0.5,0.5],"max":[0.9,0.9,0.9]}]})");
    j["boundaries"][1]["file"] = std::string("models/t.obj\0.stl", 17);
    expect_input_error([&] { (void)parse_scene(j, where.string()); }, {"boundaries[1].file", "NUL byte"});
    j["boundaries"][1]["file"] = "models/t.obj";
    j["fluids"][0] = {{"shape", "file"}, {"file", std::string("p.csv\0x", 7)}};
    expect_input_error([&] { (void)parse_scene(j, where.string()); }, {"fluids[0].file", "NUL byte"});
}

TEST_F(ModelFiles, ASymlinkLoopReadsAsALoop) {
    fs::create_symlink(dir / "b.obj", dir / "a.obj");
    fs::create_symlink(dir / "a.obj", dir / "b.obj");
    expect_input_error([&] { (void)read_triangle_mesh(dir / "a.obj"); }, {"a.obj", "loop of symbolic links"});
}
