// Mesh and grid files: Wavefront OBJ, binary PLY, VTK ImageData (.vti). Every file goes through
// io::write_atomic (built in memory, temporary name, fsync, rename).
#include <bit>
#include <cfloat>
#include <cstring>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "eddy/surface.hpp"
#include "io/vtk_xml.hpp"

namespace eddy {

using io::detail::append_raw;

template <int D>
void write_obj(const std::filesystem::path& path, const Mesh<D>& m) {
    std::string s;
    s.reserve(m.vertices.size() * 80 + m.cells.size() * 40);
    s += fmt::format("# eddy surface: {} vertices, {} {}\n", m.vertices.size(), m.cells.size(),
                     D == 3 ? "triangles" : "segments");
    for (const auto& v : m.vertices) s += fmt::format("v {:.7g} {:.7g} {:.7g}\n", v[0], v[1], D == 3 ? v[D - 1] : 0.0f);
    for (const auto& n : m.normals) s += fmt::format("vn {:.5g} {:.5g} {:.5g}\n", n[0], n[1], D == 3 ? n[D - 1] : 0.0f);
    for (const auto& c : m.cells) {
        if constexpr (D == 3) s += fmt::format("f {0}//{0} {1}//{1} {2}//{2}\n", c[0] + 1, c[1] + 1, c[2] + 1);
        else s += fmt::format("l {} {}\n", c[0] + 1, c[1] + 1);
    }
    io::write_atomic(path, s);
}

namespace {

// Vertex attributes as PLY properties: velocity (D components) as vx vy vz, as in eddy's particle
// files; other D-vectors as name_x name_y name_z; scalars by name. 2D vectors get a zero z.
template <int D>
int ply_width(const VertexAttribute& a) {
    return a.components == D ? 3 : a.components;
}
template <int D>
std::string ply_properties(const VertexAttribute& a) {
    std::string s;
    if (a.components == 1) return fmt::format("property float {}\n", a.name);
    for (int c = 0; c < ply_width<D>(a); ++c) {
        if (a.components == D && a.name == "velocity") s += fmt::format("property float v{}\n", "xyz"[c]);
        else if (a.components == D) s += fmt::format("property float {}_{}\n", a.name, "xyz"[c]);
        else s += fmt::format("property float {}_{}\n", a.name, c);
    }
    return s;
}

}  // namespace

template <int D>
void write_mesh_ply(const std::filesystem::path& path, const Mesh<D>& m) {
    std::string s = "ply\nformat binary_little_endian 1.0\ncomment eddy surface\n";
    s += fmt::format("element vertex {}\nproperty float x\nproperty float y\nproperty float z\n"
                     "property float nx\nproperty float ny\nproperty float nz\n", m.vertices.size());
    for (const auto& a : m.attributes) s += ply_properties<D>(a);
    if constexpr (D == 3) s += fmt::format("element face {}\nproperty list uchar int vertex_indices\n", m.cells.size());
    else s += fmt::format("element edge {}\nproperty int vertex1\nproperty int vertex2\n", m.cells.size());
    s += "end_header\n";
    for (std::size_t i = 0; i < m.vertices.size(); ++i) {
        for (int a = 0; a < 3; ++a) append_raw(s, a < D ? m.vertices[i][a] : 0.0f);
        for (int a = 0; a < 3; ++a) append_raw(s, a < D && i < m.normals.size() ? m.normals[i][a] : 0.0f);
        for (const auto& at : m.attributes)
            for (int c = 0; c < ply_width<D>(at); ++c)
                append_raw(s, c < at.components ? at.values[i * at.components + c] : 0.0f);
    }
    for (const auto& c : m.cells) {
        if constexpr (D == 3) append_raw(s, std::uint8_t(3));
        for (int k = 0; k < D; ++k) append_raw(s, std::int32_t(c[k]));
    }
    io::write_atomic(path, s);
}

template <int D>
void write_mesh_vtp(const std::filesystem::path& path, const Mesh<D>& m) {
    // VTK XML PolyData, appended raw with UInt64 headers: points (z = 0 in 2D), Normals and the vertex
    // attributes as point data, triangles as Polys (3D) or segments as Lines (2D).
    std::string data;
    std::vector<std::uint64_t> offset;
    auto begin_block = [&](std::uint64_t bytes) {
        offset.push_back(data.size());
        append_raw(data, bytes);
    };
    const std::uint64_t np = m.vertices.size(), nc = m.cells.size();
    begin_block(np * 12);
    for (const auto& v : m.vertices)
        for (int a = 0; a < 3; ++a) append_raw(data, a < D ? v[a] : 0.0f);
    begin_block(nc * D * 8);
    for (const auto& c : m.cells)
        for (int k = 0; k < D; ++k) append_raw(data, std::int64_t(c[k]));
    begin_block(nc * 8);
    for (std::uint64_t i = 0; i < nc; ++i) append_raw(data, std::int64_t(D * (i + 1)));
    const bool normals = m.normals.size() == np;
    if (normals) {
        begin_block(np * 12);
        for (const auto& n : m.normals)
            for (int a = 0; a < 3; ++a) append_raw(data, a < D ? n[a] : 0.0f);
    }
    for (const auto& at : m.attributes) {
        const int w = ply_width<D>(at);
        begin_block(np * w * 4);
        for (std::uint64_t i = 0; i < np; ++i)
            for (int c = 0; c < w; ++c) append_raw(data, c < at.components ? at.values[i * at.components + c] : 0.0f);
    }
    auto array = [&](const char* type, const std::string& name, int comps, std::size_t i) {
        return fmt::format("        <DataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\" format=\"appended\" "
                           "offset=\"{}\"/>\n",
                           type, name, comps, offset[i]);
    };
    std::string xml = "<?xml version=\"1.0\"?>\n";
    xml += "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PolyData>\n";
    xml += fmt::format("    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"0\" NumberOfLines=\"{}\" NumberOfStrips=\"0\" "
                       "NumberOfPolys=\"{}\">\n",
                       np, D == 2 ? nc : 0, D == 3 ? nc : 0);
    xml += normals ? "      <PointData Normals=\"Normals\">\n" : "      <PointData>\n";
    std::size_t next = 3;
    if (normals) xml += array("Float32", "Normals", 3, next++);
    for (const auto& at : m.attributes) xml += array("Float32", at.name, ply_width<D>(at), next++);
    xml += "      </PointData>\n";
    xml += "      <Points>\n" + array("Float32", "Points", 3, 0) + "      </Points>\n";
    const char* cells = D == 3 ? "Polys" : "Lines";
    xml += fmt::format("      <{}>\n", cells) + array("Int64", "connectivity", 1, 1) + array("Int64", "offsets", 1, 2) +
           fmt::format("      </{}>\n", cells);
    xml += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
    xml += data;
    xml += "\n  </AppendedData>\n</VTKFile>\n";
    io::write_atomic(path, xml);
}

template <int D>
void write_mesh(const std::filesystem::path& path, const Mesh<D>& m) {
    const auto ext = path.extension().string();
    if (ext == ".obj") return write_obj(path, m);
    if (ext == ".ply") return write_mesh_ply(path, m);
    if (ext == ".vtp") return write_mesh_vtp(path, m);
    throw InputError(fmt::format("{}: mesh format '{}' is not written; allowed: .obj, .ply, .vtp", path.string(), ext));
}

template <int D>
void write_vti(const std::filesystem::path& path, const SparseGrid<D>& g, const char* name) {
    const auto& L = g.layout;
    std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
    for (std::size_t b = 0; b < L.size(); ++b)
        for (int a = 0; a < D; ++a) {
            const int c0 = L.coords[b][a] * L.block, c1 = c0 + L.block - 1;
            lo[a] = b == 0 ? c0 : std::min(lo[a], c0);
            hi[a] = b == 0 ? c1 : std::max(hi[a], c1);
        }
    const std::size_t nx = std::size_t(hi[0] - lo[0] + 1), ny = std::size_t(hi[1] - lo[1] + 1),
                      nz = std::size_t(hi[2] - lo[2] + 1);
    std::vector<float> dense(L.size() ? nx * ny * nz : 0, g.background);
    g.for_each_node([&](const std::array<int, D>& i, float v) {
        std::size_t k = std::size_t(i[0] - lo[0]) + nx * std::size_t(i[1] - lo[1]);
        if constexpr (D == 3) k += nx * ny * std::size_t(i[2] - lo[2]);
        dense[k] = v;
    });
    const io::detail::ImageArray arrays[] = {
        {name, "Float32", 1, std::string_view(reinterpret_cast<const char*>(dense.data()), dense.size() * sizeof(float))}};
    const std::string s = io::detail::image_data(lo, hi, L.voxel, false, arrays);
    io::write_atomic(path, s);
}

#define EDDY_MESH_IO(D)                                                                  \
    template void write_obj<D>(const std::filesystem::path&, const Mesh<D>&);           \
    template void write_mesh_ply<D>(const std::filesystem::path&, const Mesh<D>&);      \
    template void write_mesh_vtp<D>(const std::filesystem::path&, const Mesh<D>&);      \
    template void write_mesh<D>(const std::filesystem::path&, const Mesh<D>&);          \
    template void write_vti<D>(const std::filesystem::path&, const SparseGrid<D>&, const char*);
EDDY_MESH_IO(2)
EDDY_MESH_IO(3)

}  // namespace eddy
