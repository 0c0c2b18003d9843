// Model files -> Mesh<3> through assimp, and 2D polygons -> Mesh<2>.
//
// assimp parses; eddy only checks first what a reader could be fooled by: an empty or missing file,
// and header counts the file cannot hold (a binary STL or PLY claiming 10^12 triangles), so that a
// hostile header never reaches an allocation. Placement (scale, rotate x-y-z, translate) is done in
// double precision on assimp's vertices.
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numbers>
#include <sstream>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"

namespace eddy {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
    throw InputError(fmt::format("{}: {}", file.string(), what));
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Binary STL: 80-byte header, uint32 count, 50 bytes per triangle. An ASCII STL starts with "solid"
// (so can a binary one's header: the size decides).
void check_stl(const fs::path& file, const std::string& head, std::uintmax_t size) {
    if (size < 84) {
        if (head.rfind("solid", 0) == 0) return;  // a tiny ASCII STL: assimp reports what is wrong
        fail(file, fmt::format("truncated STL: {} bytes, less than the 84-byte header of a binary STL", size));
    }
    std::uint32_t count = 0;
    std::memcpy(&count, head.data() + 80, 4);
    const std::uintmax_t expect = 84 + 50 * std::uintmax_t(count);
    if (expect == size) return;
    if (head.rfind("solid", 0) == 0) return;  // ASCII
    fail(file, fmt::format("truncated or corrupt binary STL: the header claims {} triangles ({} bytes), the file has {} bytes",
                           count, expect, size));
}

// PLY: every element count times the least bytes one element can take must fit in the file.
void check_ply(const fs::path& file, std::ifstream& in, std::uintmax_t size) {
    in.seekg(0);
    std::string line;
    bool binary = false;
    long double need = 0.0L;  // least bytes of the body
    long double count = 0.0L, largest = 0.0L;
    std::string element, largest_name;
    std::size_t element_bytes = 0;
    auto close_element = [&] {
        need += count * static_cast<long double>(binary ? element_bytes : 2);
        if (count > largest) {
            largest = count;
            largest_name = element;
        }
    };
    auto type_bytes = [](const std::string& t) -> std::size_t {
        if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
        if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
        if (t == "double" || t == "float64" || t == "int64" || t == "uint64") return 8;
        return 4;
    };
    int lines = 0;
    while (std::getline(in, line) && ++lines < 10000) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::istringstream ls(line);
        std::string word;
        ls >> word;
        if (word == "format") {
            std::string fmt_name;
            ls >> fmt_name;
            binary = fmt_name.rfind("binary", 0) == 0;
        } else if (word == "element") {
            close_element();
            std::string name, n;
            ls >> name >> n;
            element = name;
            char* end = nullptr;
            count = std::strtold(n.c_str(), &end);
            if (n.empty() || *end || !(count >= 0)) fail(file, fmt::format("corrupt PLY header: 'element {} {}'", name, n));
            element_bytes = 0;
        } else if (word == "property") {
            std::string type;
            ls >> type;
            element_bytes += type == "list" ? [&] { std::string ct; ls >> ct; return type_bytes(ct); }() : type_bytes(type);
        } else if (word == "end_header") {
            close_element();
            if (need > static_cast<long double>(size))
                fail(file, fmt::format("truncated or corrupt PLY: the header claims {:.0Lf} '{}' elements; its counts need "
                                       "at least {:.0Lf} bytes, the file has {}",
                                       largest, largest_name, need, size));
            return;
        }
    }
    fail(file, "corrupt PLY: no end_header");
}

void check_header(const fs::path& file) {
    std::error_code ec;
    if (!fs::exists(file, ec)) fail(file, "cannot open file: No such file or directory");
    if (!fs::is_regular_file(file, ec)) fail(file, "is not a regular file");
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec) fail(file, fmt::format("cannot read file: {}", ec.message()));
    if (size == 0) fail(file, "the file is empty");
    std::ifstream in(file, std::ios::binary);
    if (!in) fail(file, fmt::format("cannot open file: {}", std::strerror(errno)));
    std::string head(std::min<std::uintmax_t>(size, 84), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    const std::string ext = lower(file.extension().string());
    if (ext == ".stl") check_stl(file, head, size);
    if (ext == ".ply" || head.rfind("ply", 0) == 0) check_ply(file, in, size);
}

// R = Rz Ry Rx (rotate about x first).
std::array<std::array<double, 3>, 3> rotation(const std::array<double, 3>& deg) {
    const double k = std::numbers::pi / 180.0;
    const double cx = std::cos(deg[0] * k), sx = std::sin(deg[0] * k), cy = std::cos(deg[1] * k),
                 sy = std::sin(deg[1] * k), cz = std::cos(deg[2] * k), sz = std::sin(deg[2] * k);
    return {{{cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx},
             {sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx},
             {-sy, cy * sx, cy * cx}}};
}

}  // namespace

Mesh<3> read_triangle_mesh(const fs::path& file, const Placement& where_to) {
    check_header(file);
    Assimp::Importer importer;
    // Points and lines are dropped (SortByPType + the removal flag); polygons become triangles; all
    // meshes land in one frame with their node transforms applied.
    importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    // Vertices are joined below by position: assimp's own joining also compares normals (an STL's
    // corners would stay apart) and lets a NaN vertex vanish into another.
    const aiScene* sc = importer.ReadFile(file.string(), aiProcess_Triangulate | aiProcess_SortByPType |
                                                             aiProcess_PreTransformVertices);
    if (!sc) {
        std::string why = importer.GetErrorString();
        std::replace(why.begin(), why.end(), '\n', ' ');
        if (why.find("No output meshes") != std::string::npos || why.find("no meshes") != std::string::npos)
            fail(file, fmt::format("the model has no triangles ({})", why));
        fail(file, fmt::format("cannot read the model: {}", why.empty() ? "unknown format" : why));
    }
    Mesh<3> m;
    const auto R = rotation(where_to.rotate_deg);
    std::size_t faces = 0;
    for (unsigned mi = 0; mi < sc->mNumMeshes; ++mi) faces += sc->mMeshes[mi]->mNumFaces;
    m.cells.reserve(faces);
    for (unsigned mi = 0; mi < sc->mNumMeshes; ++mi) {
        const aiMesh* am = sc->mMeshes[mi];
        const auto base = static_cast<std::uint32_t>(m.vertices.size());
        for (unsigned v = 0; v < am->mNumVertices; ++v) {
            const aiVector3D& p = am->mVertices[v];
            const double q[3] = {p.x * where_to.scale[0], p.y * where_to.scale[1], p.z * where_to.scale[2]};
            Vec3 w;
            for (int a = 0; a < 3; ++a) {
                if (!std::isfinite(p[a]))
                    fail(file, fmt::format("vertex {} of mesh {} is not finite ({} {} {})", v, mi, p.x, p.y, p.z));
                w[a] = static_cast<float>(R[a][0] * q[0] + R[a][1] * q[1] + R[a][2] * q[2] + where_to.translate[a]);
            }
            m.vertices.push_back(w);
        }
        for (unsigned f = 0; f < am->mNumFaces; ++f) {
            const aiFace& face = am->mFaces[f];
            if (face.mNumIndices != 3) continue;
            m.cells.push_back({base + face.mIndices[0], base + face.mIndices[1], base + face.mIndices[2]});
        }
    }
    if (m.cells.empty()) fail(file, "the model has no triangles");
    // Join vertices at the same position (exactly, after placement).
    std::vector<std::uint32_t> order(m.vertices.size()), remap(m.vertices.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    auto less = [&](std::uint32_t a, std::uint32_t b) {
        const Vec3 &p = m.vertices[a], &q = m.vertices[b];
        return p[0] != q[0] ? p[0] < q[0] : (p[1] != q[1] ? p[1] < q[1] : (p[2] != q[2] ? p[2] < q[2] : a < b));
    };
    std::sort(order.begin(), order.end(), less);
    std::vector<Vec3> joined;
    for (std::size_t k = 0; k < order.size(); ++k) {
        if (k == 0 || !(m.vertices[order[k]] == m.vertices[order[k - 1]])) joined.push_back(m.vertices[order[k]]);
        remap[order[k]] = static_cast<std::uint32_t>(joined.size() - 1);
    }
    for (auto& c : m.cells)
        for (auto& v : c) v = remap[v];
    m.vertices = std::move(joined);
    return m;
}

Mesh<2> polygon_mesh(const std::vector<std::array<double, 2>>& points, const std::string& where) {
    if (points.size() < 3) throw InputError(fmt::format("{}: a polygon needs at least 3 points, got {}", where, points.size()));
    Mesh<2> m;
    for (const auto& p : points) {
        if (!std::isfinite(p[0]) || !std::isfinite(p[1]))
            throw InputError(fmt::format("{}: polygon points must be finite", where));
        m.vertices.push_back(Vec2{{static_cast<float>(p[0]), static_cast<float>(p[1])}});
    }
    const auto n = static_cast<std::uint32_t>(points.size());
    for (std::uint32_t i = 0; i < n; ++i) m.cells.push_back({i, (i + 1) % n});
    return m;
}

}  // namespace eddy
