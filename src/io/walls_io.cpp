// The walls of a particle scene as a VTK PolyData file: piece 0 the boundary particles (vertices, with
// velocity, psi and object), piece 1 the models' surfaces at their current pose (triangles in 3D,
// lines in 2D), and with a run's --wall-pressure a "pressure" array. Both pieces carry the same point
// arrays: VTK's reader (ParaView's) reads a file whose pieces differ as 0 points (issue 31), so the
// models' vertices get their object's rigid velocity and psi 0. ParaView shows both beside the fluid's
// particles_*.vtp.
#include <array>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "eddy/io.hpp"
#include "io/vtk_xml.hpp"

namespace eddy::io {

namespace {

// The appended block of walls.vtp: 46 bytes a wall particle (50 with pressure), 34 a model vertex, 8 per
// cell corner and offset, 8 per array's length: a million wall particles add 46 MB once, not 3 times that.
template <int D>
std::uint64_t appended_bytes(const BoundarySet<D>& b, const std::vector<std::pair<std::uint16_t, Mesh<D>>>& models,
                             bool with_pressure) {
    std::uint64_t bytes = b.size() * (with_pressure ? 50 : 46) + 16 * 8;
    for (const auto& [obj, m] : models) bytes += m.vertices.size() * 34 + m.cells.size() * (D + 1) * 8;
    return bytes;
}

using detail::append_raw;

struct Array {
    const char* name;
    const char* type;
    int comps;
    std::uint64_t offset;
};

std::string data_array(const Array& a) {
    return fmt::format("        <DataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\" format=\"appended\" offset=\"{}\"/>\n",
                       a.type, a.name, a.comps, a.offset);
}

template <int D>
void append_points(std::string& data, const std::vector<Vec<D>>& v) {
    for (const auto& x : v) {
        const float c[3] = {x[0], x[1], D == 3 ? x[D - 1] : 0.0f};
        data.append(reinterpret_cast<const char*>(c), sizeof(c));
    }
}

/// The velocity of every model vertex: each object's wall particles move rigidly, so their velocity is
/// an affine field v(x) = vbar + A (x - xbar); A is its least-squares fit over the object's particles
/// (exact for a rigid motion sampled in D dimensions; in whatever axes `b` and the models are given, so
/// a file turned to --up z gets turned velocities). An object without particles or at rest: zero.
template <int D>
std::vector<Vec<D>> model_velocity(const BoundarySet<D>& b,
                                   const std::vector<std::pair<std::uint16_t, Mesh<D>>>& models) {
    std::vector<Vec<D>> out;
    for (const auto& [obj, m] : models) {
        std::array<double, D> xbar{}, vbar{};
        std::size_t n = 0;
        bool moving = false;
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (b.object[i] != obj) continue;
            ++n;
            for (int a = 0; a < D; ++a) {
                xbar[a] += b.position[i][a];
                vbar[a] += b.velocity[i][a];
                moving = moving || b.velocity[i][a] != 0.0f;
            }
        }
        if (!moving) {
            out.insert(out.end(), m.vertices.size(), Vec<D>::zero());
            continue;
        }
        for (int a = 0; a < D; ++a) xbar[a] /= double(n), vbar[a] /= double(n);
        // C = sum dx dx^T, V = sum dv dx^T; A = V C^-1 (C regularised by 1e-9 of its trace: a flat cloud).
        std::array<std::array<double, D>, D> C{}, V{};
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (b.object[i] != obj) continue;
            std::array<double, D> dx, dv;
            for (int a = 0; a < D; ++a) dx[a] = b.position[i][a] - xbar[a], dv[a] = b.velocity[i][a] - vbar[a];
            for (int r = 0; r < D; ++r)
                for (int c = 0; c < D; ++c) C[r][c] += dx[r] * dx[c], V[r][c] += dv[r] * dx[c];
        }
        double trace = 0.0;
        for (int a = 0; a < D; ++a) trace += C[a][a];
        for (int a = 0; a < D; ++a) C[a][a] += 1e-9 * trace + 1e-300;
        // A^T = C^-1 V^T (C symmetric): Gauss-Jordan on [C | V^T] with partial pivoting.
        std::array<std::array<double, 2 * D>, D> g{};
        for (int r = 0; r < D; ++r)
            for (int c = 0; c < D; ++c) g[r][c] = C[r][c], g[r][D + c] = V[c][r];
        for (int k = 0; k < D; ++k) {
            int piv = k;
            for (int r = k + 1; r < D; ++r)
                if (std::abs(g[r][k]) > std::abs(g[piv][k])) piv = r;
            std::swap(g[k], g[piv]);
            const double d = g[k][k];
            for (auto& x : g[k]) x /= d;
            for (int r = 0; r < D; ++r) {
                if (r == k) continue;
                const double f = g[r][k];
                for (int c = 0; c < 2 * D; ++c) g[r][c] -= f * g[k][c];
            }
        }
        for (const auto& x : m.vertices) {
            Vec<D> v;
            for (int a = 0; a < D; ++a) {
                double s = vbar[a];
                for (int c = 0; c < D; ++c) s += g[c][D + a] * (x[c] - xbar[c]);  // A[a][c] = (A^T)[c][a]
                v[a] = static_cast<float>(s);
            }
            out.push_back(v);
        }
    }
    return out;
}

}  // namespace

template <int D>
void write_walls_vtp(const std::filesystem::path& path, const BoundarySet<D>& b,
                     const std::vector<std::pair<std::uint16_t, Mesh<D>>>& models, std::span<const float> pressure,
                     std::span<const float> model_pressure) {
    const bool with_pressure = !pressure.empty();
    if (with_pressure && pressure.size() != b.size())
        throw std::invalid_argument("write_walls_vtp: one pressure per wall particle is needed");
    std::string data, xml;
    auto begin = [&](std::vector<Array>& arrays, const char* name, const char* type, int comps, std::uint64_t bytes) {
        arrays.push_back({name, type, comps, data.size()});
        append_raw(data, bytes);
    };
    // Piece 0: the particles (the binary block reserved at its size, written after the header, not copied).
    const std::uint64_t n = b.size();
    data.reserve(appended_bytes(b, models, with_pressure));
    std::vector<Array> p;
    begin(p, "Points", "Float32", 3, n * 12);
    append_points<D>(data, b.position);
    begin(p, "connectivity", "Int64", 1, n * 8);
    for (std::uint64_t i = 0; i < n; ++i) append_raw(data, static_cast<std::int64_t>(i));
    begin(p, "offsets", "Int64", 1, n * 8);
    for (std::uint64_t i = 0; i < n; ++i) append_raw(data, static_cast<std::int64_t>(i + 1));
    begin(p, "velocity", "Float32", 3, n * 12);
    append_points<D>(data, b.velocity);
    begin(p, "psi", "Float32", 1, n * 4);
    data.append(reinterpret_cast<const char*>(b.psi.data()), n * 4);
    begin(p, "object", "UInt16", 1, n * 2);
    data.append(reinterpret_cast<const char*>(b.object.data()), n * 2);
    if (with_pressure) {
        begin(p, "pressure", "Float32", 1, n * 4);
        data.append(reinterpret_cast<const char*>(pressure.data()), n * 4);
    }
    // Piece 1: the models, one mesh.
    std::vector<Vec<D>> verts;
    std::vector<std::uint16_t> vobject;
    std::vector<std::int64_t> conn;
    for (const auto& [obj, m] : models) {
        const auto base = static_cast<std::int64_t>(verts.size());
        verts.insert(verts.end(), m.vertices.begin(), m.vertices.end());
        vobject.insert(vobject.end(), m.vertices.size(), obj);
        for (const auto& c : m.cells)
            for (int k = 0; k < D; ++k) conn.push_back(base + c[k]);
    }
    const std::uint64_t nv = verts.size(), nc = conn.size() / D;
    // Every array of piece 0 on piece 1 too, in the same order, or VTK's reader reads the file as 0 points.
    std::vector<Array> q;
    begin(q, "Points", "Float32", 3, nv * 12);
    append_points<D>(data, verts);
    begin(q, "connectivity", "Int64", 1, conn.size() * 8);
    data.append(reinterpret_cast<const char*>(conn.data()), conn.size() * 8);
    begin(q, "offsets", "Int64", 1, nc * 8);
    for (std::uint64_t i = 0; i < nc; ++i) append_raw(data, static_cast<std::int64_t>((i + 1) * D));
    begin(q, "velocity", "Float32", 3, nv * 12);
    append_points<D>(data, model_velocity<D>(b, models));
    begin(q, "psi", "Float32", 1, nv * 4);  // not particles: no pseudo-mass
    data.append(nv * 4, '\0');
    begin(q, "object", "UInt16", 1, nv * 2);
    data.append(reinterpret_cast<const char*>(vobject.data()), nv * 2);
    if (with_pressure) {
        if (!model_pressure.empty() && model_pressure.size() != nv)
            throw std::invalid_argument("write_walls_vtp: one model pressure per model vertex is needed");
        begin(q, "pressure", "Float32", 1, nv * 4);
        if (model_pressure.empty())
            data.append(nv * 4, '\0');
        else
            data.append(reinterpret_cast<const char*>(model_pressure.data()), nv * 4);
    }

    xml += "<?xml version=\"1.0\"?>\n";
    xml += "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PolyData>\n";
    xml += fmt::format("    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"{}\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                       "NumberOfPolys=\"0\">\n",
                       n, n);
    xml += "      <PointData Vectors=\"velocity\">\n" + data_array(p[3]) + data_array(p[4]) + data_array(p[5]) +
           (with_pressure ? data_array(p[6]) : std::string()) + "      </PointData>\n";
    xml += "      <Points>\n" + data_array(p[0]) + "      </Points>\n";
    xml += "      <Verts>\n" + data_array(p[1]) + data_array(p[2]) + "      </Verts>\n    </Piece>\n";
    xml += fmt::format("    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"0\" NumberOfLines=\"{}\" NumberOfStrips=\"0\" "
                       "NumberOfPolys=\"{}\">\n",
                       nv, D == 2 ? nc : 0, D == 3 ? nc : 0);
    xml += "      <PointData Vectors=\"velocity\">\n" + data_array(q[3]) + data_array(q[4]) + data_array(q[5]) +
           (with_pressure ? data_array(q[6]) : std::string()) + "      </PointData>\n";
    xml += "      <Points>\n" + data_array(q[0]) + "      </Points>\n";
    const char* cells = D == 3 ? "Polys" : "Lines";
    xml += fmt::format("      <{}>\n", cells) + data_array(q[1]) + data_array(q[2]) + fmt::format("      </{}>\n", cells);
    xml += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
    const std::string_view parts[] = {xml, data, "\n  </AppendedData>\n</VTKFile>\n"};
    io::write_atomic_parts(path, parts);
}

template void write_walls_vtp<2>(const std::filesystem::path&, const BoundarySet<2>&,
                                 const std::vector<std::pair<std::uint16_t, Mesh<2>>>&, std::span<const float>,
                                 std::span<const float>);
template void write_walls_vtp<3>(const std::filesystem::path&, const BoundarySet<3>&,
                                 const std::vector<std::pair<std::uint16_t, Mesh<3>>>&, std::span<const float>,
                                 std::span<const float>);

}  // namespace eddy::io
