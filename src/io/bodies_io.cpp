// The rigid bodies in files (issue 30; eddy/bodies_io.hpp): their surfaces at rest (bodies/body_KK.obj,
// relative to the centre of mass, for tools that animate objects: Blender) and at their pose every frame
// (frames/bodies_NNNNN.vtp, for ParaView). The pose maps a rest point r (relative to the centre of mass
// c0) to x = position + R(q) r, as the bodies' boundary motion does (src/bodies/bodies.cpp).
#include "eddy/bodies_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "eddy/io.hpp"
#include "eddy/scene.hpp"
#include "io/vtk_xml.hpp"

namespace eddy::io {

namespace {

using detail::append_raw;
using Tri = std::array<std::uint32_t, 3>;

void add_vertex(Mesh<3>& m, double x, double y, double z, const std::array<double, 3>& c) {
    m.vertices.push_back(Vec3{{static_cast<float>(x - c[0]), static_cast<float>(y - c[1]), static_cast<float>(z - c[2])}});
}

// A box from its corners: 8 corners, 12 triangles (two per face), normals out.
Mesh<3> box_mesh(const std::array<double, 3>& lo, const std::array<double, 3>& hi, const std::array<double, 3>& c) {
    Mesh<3> m;
    for (int k = 0; k < 8; ++k)  // corner k: bit 0 x, bit 1 y, bit 2 z
        add_vertex(m, k & 1 ? hi[0] : lo[0], k & 2 ? hi[1] : lo[1], k & 4 ? hi[2] : lo[2], c);
    // Each face as a quad (a, b, c, d) counter-clockwise seen from outside.
    const std::uint32_t quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5},   // -x, +x
                                       {0, 1, 5, 4}, {2, 6, 7, 3},   // -y, +y
                                       {0, 2, 3, 1}, {4, 5, 7, 6}};  // -z, +z
    for (const auto& q : quads) {
        m.cells.push_back({q[0], q[1], q[2]});
        m.cells.push_back({q[0], q[2], q[3]});
    }
    return m;
}

// A UV sphere: `slices` around y, `stacks` from pole to pole (poles on y, as eddy's world is y up).
Mesh<3> sphere_mesh(const std::array<double, 3>& center, double radius, const std::array<double, 3>& c, int slices = 32,
                    int stacks = 16) {
    Mesh<3> m;
    const double pi = std::numbers::pi;
    add_vertex(m, center[0], center[1] + radius, center[2], c);  // 0: north pole
    for (int i = 1; i < stacks; ++i) {
        const double theta = pi * i / stacks;
        for (int j = 0; j < slices; ++j) {
            const double phi = 2.0 * pi * j / slices;
            add_vertex(m, center[0] + radius * std::sin(theta) * std::cos(phi), center[1] + radius * std::cos(theta),
                       center[2] - radius * std::sin(theta) * std::sin(phi), c);
        }
    }
    const auto south = static_cast<std::uint32_t>(m.vertices.size());
    add_vertex(m, center[0], center[1] - radius, center[2], c);
    auto ring = [&](int i, int j) { return static_cast<std::uint32_t>(1 + (i - 1) * slices + (j % slices)); };
    // phi grows counter-clockwise seen from +y (x -> -z), so (pole, j, j+1) faces out at the north.
    for (int j = 0; j < slices; ++j) m.cells.push_back({0, ring(1, j), ring(1, j + 1)});
    for (int i = 1; i + 1 < stacks; ++i)
        for (int j = 0; j < slices; ++j) {
            m.cells.push_back({ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)});
            m.cells.push_back({ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)});
        }
    for (int j = 0; j < slices; ++j) m.cells.push_back({south, ring(stacks - 1, j + 1), ring(stacks - 1, j)});
    return m;
}

double cross2(const std::array<double, 2>& o, const std::array<double, 2>& a, const std::array<double, 2>& b) {
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

// Triangles covering a simple polygon given counter-clockwise (ear clipping: a corner whose triangle is
// convex and holds no other corner is cut off, until three are left). Indices into `p`.
std::vector<Tri> ear_clip(const std::vector<std::array<double, 2>>& p) {
    std::vector<std::uint32_t> left(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) left[i] = static_cast<std::uint32_t>(i);
    std::vector<Tri> out;
    while (left.size() > 3) {
        const std::size_t n = left.size();
        bool cut = false;
        for (std::size_t i = 0; i < n && !cut; ++i) {
            const std::uint32_t a = left[(i + n - 1) % n], b = left[i], c = left[(i + 1) % n];
            if (cross2(p[a], p[b], p[c]) <= 0.0) continue;  // reflex or flat corner
            bool empty = true;
            for (std::uint32_t k : left) {
                if (k == a || k == b || k == c) continue;
                if (cross2(p[a], p[b], p[k]) >= 0.0 && cross2(p[b], p[c], p[k]) >= 0.0 && cross2(p[c], p[a], p[k]) >= 0.0) {
                    empty = false;
                    break;
                }
            }
            if (!empty) continue;
            out.push_back({a, b, c});
            left.erase(left.begin() + static_cast<std::ptrdiff_t>(i));
            cut = true;
        }
        // A polygon with collinear runs or touching corners can leave no clean ear: fan out the rest
        // (the caps are drawn, not measured).
        if (!cut) {
            for (std::size_t i = 1; i + 1 < left.size(); ++i) out.push_back({left[0], left[i], left[i + 1]});
            return out;
        }
    }
    if (left.size() == 3) out.push_back({left[0], left[1], left[2]});
    return out;
}

// A 2D outline (counter-clockwise corners, relative to the centre of mass) as a prism from z = -depth/2
// to +depth/2: side quads and two ear-clipped caps, normals out.
Mesh<3> prism_mesh(std::vector<std::array<double, 2>> p, double depth) {
    double area2 = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const auto& a = p[i];
        const auto& b = p[(i + 1) % p.size()];
        area2 += a[0] * b[1] - a[1] * b[0];
    }
    if (area2 < 0.0) std::reverse(p.begin(), p.end());
    const auto n = static_cast<std::uint32_t>(p.size());
    Mesh<3> m;
    const std::array<double, 3> zero{0, 0, 0};
    for (const auto& x : p) add_vertex(m, x[0], x[1], -0.5 * depth, zero);  // 0..n-1: back
    for (const auto& x : p) add_vertex(m, x[0], x[1], 0.5 * depth, zero);   // n..2n-1: front
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t j = (i + 1) % n;
        m.cells.push_back({i, j, n + j});
        m.cells.push_back({i, n + j, n + i});
    }
    for (const Tri& t : ear_clip(p)) {
        m.cells.push_back({n + t[0], n + t[1], n + t[2]});  // front (+z): counter-clockwise
        m.cells.push_back({t[0], t[2], t[1]});              // back (-z): reversed
    }
    return m;
}

Mesh<3> model_mesh(const MeshShape<3>& shape, const std::array<double, 3>& c) {
    Mesh<3> m;
    for (const auto& v : shape.mesh().vertices) add_vertex(m, v[0], v[1], v[2], c);
    m.cells = shape.mesh().cells;
    return m;
}

}  // namespace

template <int D>
std::vector<Mesh<3>> body_rest_meshes(const RigidBodies<D>& bodies, double depth) {
    std::vector<Mesh<3>> out;
    for (std::size_t k = 0; k < bodies.shapes.size() && k < bodies.specs.size(); ++k) {
        const BoundarySpec& s = bodies.shapes[k];
        const std::array<double, 3>& c = bodies.specs[k].mass.center;
        if constexpr (D == 3) {
            if (s.shape == "box") out.push_back(box_mesh(s.min, s.max, c));
            else if (s.shape == "sphere") out.push_back(sphere_mesh(s.center, s.radius, c));
            else if (const MeshShape<3>* m = model_shape<3>(s.model)) out.push_back(model_mesh(*m, c));  // cylinder, mesh
            else throw std::invalid_argument(fmt::format("body_rest_meshes: body {} has no surface ('{}')", k, s.shape));
        } else {
            std::vector<std::array<double, 2>> p;
            if (s.shape == "box") {
                p = {{s.min[0], s.min[1]}, {s.max[0], s.min[1]}, {s.max[0], s.max[1]}, {s.min[0], s.max[1]}};
            } else if (s.shape == "circle") {
                constexpr int kSides = 48;
                for (int i = 0; i < kSides; ++i) {
                    const double a = 2.0 * std::numbers::pi * i / kSides;
                    p.push_back({s.center[0] + s.radius * std::cos(a), s.center[1] + s.radius * std::sin(a)});
                }
            } else if (!s.model.points.empty()) {
                p = s.model.points;  // polygon: its corners as given
            } else {
                throw std::invalid_argument(fmt::format("body_rest_meshes: body {} has no outline ('{}')", k, s.shape));
            }
            for (auto& x : p) {
                x[0] -= c[0];
                x[1] -= c[1];
            }
            out.push_back(prism_mesh(std::move(p), depth));
        }
    }
    return out;
}

std::vector<std::string> write_body_meshes(const std::filesystem::path& folder, const std::vector<Mesh<3>>& rest,
                                           UpAxis up) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // An earlier run's bodies beyond this one's would be imported as bodies that are not there.
    if (fs::is_directory(fs::symlink_status(folder, ec)))
        for (const auto& e : fs::directory_iterator(folder, ec)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("body_", 0) != 0 || e.path().extension() != ".obj") continue;
            const std::string num = name.substr(5, name.size() - 9);
            const bool ours = !num.empty() && std::all_of(num.begin(), num.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
            if (ours && (num.size() > 9 || std::stoul(num) >= rest.size()) && !fs::is_directory(e.symlink_status(ec)))
                fs::remove(e.path(), ec);
        }
    std::vector<std::string> names;
    if (rest.empty()) return names;
    // bodies/ is eddy's own, as frames/ is: a link planted there would send the files elsewhere.
    if (fs::is_symlink(fs::symlink_status(folder, ec)))
        throw InputError(fmt::format("{}: is a symbolic link; allowed: a folder eddy creates (remove the link)",
                                     folder.string()));
    fs::create_directories(folder, ec);
    if (ec || !fs::is_directory(fs::symlink_status(folder)))
        throw InputError(fmt::format("{}: cannot create the bodies' folder: {}", folder.string(),
                                     ec ? ec.message() : "a file is in the way"));
    for (std::size_t k = 0; k < rest.size(); ++k) {
        const Mesh<3>& m = rest[k];
        std::string s = fmt::format("# eddy body {}: its surface at rest, relative to its centre of mass ({} up); "
                                    "bodies.csv gives its pose: position, orientation (w, x, y, z)\n",
                                    k, name(up));
        s += fmt::format("o body_{:02d}\n", k);
        for (const auto& v : m.vertices) {
            const Vec3 x = to_file_axes(v, UpAxis::y, up);
            s += fmt::format("v {:.7g} {:.7g} {:.7g}\n", x[0], x[1], x[2]);
        }
        for (const auto& c : m.cells) s += fmt::format("f {} {} {}\n", c[0] + 1, c[1] + 1, c[2] + 1);
        names.push_back(fmt::format("body_{:02d}.obj", k));
        write_atomic(folder / names.back(), s);
    }
    return names;
}

void write_bodies_vtp(const std::filesystem::path& path, const std::vector<Mesh<3>>& rest,
                      const std::vector<BodyState>& state, UpAxis up) {
    if (rest.size() != state.size()) throw std::invalid_argument("write_bodies_vtp: one rest mesh per body state is needed");
    std::vector<float> points, velocity;
    std::vector<std::int64_t> conn;
    std::vector<std::int32_t> body;
    for (std::size_t k = 0; k < rest.size(); ++k) {
        const BodyState& s = state[k];
        const auto R = quaternion_matrix(s.orientation);
        const auto& w = s.angular_velocity;
        const auto base = static_cast<std::int64_t>(points.size() / 3);
        for (const auto& v : rest[k].vertices) {
            double r[3], x[3], u[3];
            for (int a = 0; a < 3; ++a) r[a] = R[a][0] * v[0] + R[a][1] * v[1] + R[a][2] * v[2];
            for (int a = 0; a < 3; ++a) x[a] = s.position[a] + r[a];
            u[0] = s.velocity[0] + w[1] * r[2] - w[2] * r[1];
            u[1] = s.velocity[1] + w[2] * r[0] - w[0] * r[2];
            u[2] = s.velocity[2] + w[0] * r[1] - w[1] * r[0];
            const Vec3 xf = to_file_axes(Vec3{{float(x[0]), float(x[1]), float(x[2])}}, UpAxis::y, up);
            const Vec3 uf = to_file_axes(Vec3{{float(u[0]), float(u[1]), float(u[2])}}, UpAxis::y, up);
            points.insert(points.end(), {xf[0], xf[1], xf[2]});
            velocity.insert(velocity.end(), {uf[0], uf[1], uf[2]});
        }
        for (const auto& c : rest[k].cells) {
            for (int a = 0; a < 3; ++a) conn.push_back(base + c[a]);
            body.push_back(static_cast<std::int32_t>(k));
        }
    }
    const std::uint64_t np = points.size() / 3, nc = body.size();
    std::string data;
    std::vector<std::uint64_t> offset;
    auto block = [&](const void* p, std::uint64_t bytes) {
        offset.push_back(data.size());
        append_raw(data, bytes);
        data.append(static_cast<const char*>(p), bytes);
    };
    std::vector<std::int64_t> ends(nc);
    for (std::uint64_t i = 0; i < nc; ++i) ends[i] = static_cast<std::int64_t>(3 * (i + 1));
    block(points.data(), points.size() * 4);
    block(conn.data(), conn.size() * 8);
    block(ends.data(), ends.size() * 8);
    block(velocity.data(), velocity.size() * 4);
    block(body.data(), body.size() * 4);
    auto array = [&](const char* type, const char* name, int comps, int i) {
        return fmt::format("        <DataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\" format=\"appended\" "
                           "offset=\"{}\"/>\n",
                           type, name, comps, offset[i]);
    };
    std::string xml = "<?xml version=\"1.0\"?>\n";
    xml += "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PolyData>\n";
    xml += fmt::format("    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"0\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                       "NumberOfPolys=\"{}\">\n",
                       np, nc);
    xml += "      <PointData Vectors=\"velocity\">\n" + array("Float32", "velocity", 3, 3) + "      </PointData>\n";
    xml += "      <CellData Scalars=\"body\">\n" + array("Int32", "body", 1, 4) + "      </CellData>\n";
    xml += "      <Points>\n" + array("Float32", "Points", 3, 0) + "      </Points>\n";
    xml += "      <Polys>\n" + array("Int64", "connectivity", 1, 1) + array("Int64", "offsets", 1, 2) + "      </Polys>\n";
    xml += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
    xml += data;
    xml += "\n  </AppendedData>\n</VTKFile>\n";
    write_atomic(path, xml);
}

template std::vector<Mesh<3>> body_rest_meshes<2>(const RigidBodies<2>&, double);
template std::vector<Mesh<3>> body_rest_meshes<3>(const RigidBodies<3>&, double);

}  // namespace eddy::io
