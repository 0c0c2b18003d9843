// Shallow-water files and pictures: VTK ImageData (.vti), CSV, the water surface as a mesh (.obj, .ply)
// and a shaded PNG. Every file is written atomically (io::write_atomic).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "eddy/io.hpp"
#include "eddy/render.hpp"
#include "eddy/shallow_water.hpp"
#include "io/vtk_xml.hpp"
#include "shallow/bodies.hpp"

namespace eddy {

namespace io {

using detail::append_raw;

template <class Real>
void write_vti(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g) {
    write_vti_piece(path, g, whole_grid(g.nx, g.ny));
}

template <class Real>
void write_vti_piece(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g, const GridBlock& b) {
    const int i0 = b.own_i0, i1 = b.own_i1, j0 = b.own_j0, j1 = b.own_j1;
    const std::size_t n = std::size_t(std::max(0, i1 - i0)) * std::size_t(std::max(0, j1 - j0));
    const char* type = std::is_same_v<Real, float> ? "Float32" : "Float64";
    std::string terrain, depth, eta, velocity, ink, solid;
    for (std::string* a : {&terrain, &depth, &eta, &ink, &solid}) a->reserve(n * sizeof(Real));
    velocity.reserve(3 * n * sizeof(Real));
    for (int j = j0; j < j1; ++j)
        for (int i = i0; i < i1; ++i) {
            const std::size_t c = g.cell(i, j);
            append_raw(terrain, g.terrain[c]);
            append_raw(depth, g.depth[c]);
            append_raw(eta, Real(g.terrain[c] + g.depth[c]));
            append_raw(velocity, g.uc(i, j));
            append_raw(velocity, g.wc(i, j));
            append_raw(velocity, Real(0));
            append_raw(ink, g.ink[c]);
            append_raw(solid, Real(g.solid[c]));
        }
    std::vector<detail::ImageArray> arrays = {{"terrain", type, 1, terrain}, {"depth", type, 1, depth},
                                              {"eta", type, 1, eta},         {"velocity", type, 3, velocity},
                                              {"ink", type, 1, ink},         {"solid", type, 1, solid}};
    // With floating bodies: their displaced depth b (depth = water + b; docs/bodies.md, "Shallow water").
    std::string displaced;
    if (!g.displaced.empty()) {
        displaced.reserve(n * sizeof(Real));
        for (int j = j0; j < j1; ++j)
            for (int i = i0; i < i1; ++i) append_raw(displaced, g.displaced[g.cell(i, j)]);
        arrays.push_back({"displaced", type, 1, displaced});
    }
    // Cells are the grid's cells: nodes i0..i1 along x, j0..j1 along y, in the whole grid's indices.
    write_atomic(path, detail::image_data({b.i0 + i0, b.j0 + j0, 0}, {b.i0 + i1, b.j0 + j1, 0}, double(g.dx), true, arrays));
}

void write_pvti(const std::filesystem::path& path, int nx, int ny, double dx, bool double_precision,
                std::span<const GridPiece> pieces, bool displaced) {
    const char* type = double_precision ? "Float64" : "Float32";
    std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                    "header_type=\"UInt64\">\n";
    s += fmt::format("  <PImageData WholeExtent=\"0 {} 0 {} 0 0\" GhostLevel=\"0\" Origin=\"0 0 0\" Spacing=\"{:.9g} {:.9g} {:.9g}\">\n",
                     nx, ny, dx, dx, dx);
    s += "    <PCellData Scalars=\"terrain\" Vectors=\"velocity\">\n";
    for (const auto& [name, components] : {std::pair<const char*, int>{"terrain", 1}, {"depth", 1}, {"eta", 1}, {"velocity", 3},
                                           {"ink", 1}, {"solid", 1}})
        s += fmt::format("      <PDataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\"/>\n", type, name, components);
    if (displaced) s += fmt::format("      <PDataArray type=\"{}\" Name=\"displaced\" NumberOfComponents=\"1\"/>\n", type);
    s += "    </PCellData>\n";
    for (const auto& p : pieces)
        s += fmt::format("    <Piece Extent=\"{} {} {} {} 0 0\" Source=\"{}\"/>\n", p.x0, p.x1, p.y0, p.y1, p.source);
    s += "  </PImageData>\n</VTKFile>\n";
    write_atomic(path, s);
}

template <class Real>
void write_grid_csv(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g) {
    std::string s = "i,j,x,y,terrain,depth,u,v,ink\n";
    s.reserve(s.size() + g.cells() * 96);
    const double dx = double(g.dx);
    for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) {
            const std::size_t c = g.cell(i, j);
            fmt::format_to(std::back_inserter(s), "{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", i, j, (i + 0.5) * dx,
                           (j + 0.5) * dx, double(g.terrain[c]), double(g.depth[c]), double(g.uc(i, j)), double(g.wc(i, j)),
                           double(g.ink[c]));
        }
    write_atomic(path, s);
}

template <class Real>
void write_water_mesh(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g, UpAxis up) {
    // Vertices at the centres of wet cells (x, y, eta); two triangles per 2x2 block of wet cells, one
    // where exactly three are wet, counter-clockwise seen from above (normals up).
    const Real dry = Real(1e-4) * g.dx;
    std::vector<std::int32_t> index(g.cells(), -1);
    std::vector<std::array<float, 3>> verts;
    for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) {
            const std::size_t c = g.cell(i, j);
            if (g.depth[c] > dry) {
                index[c] = std::int32_t(verts.size());
                const Vec3 x = to_file_axes(Vec3{{float((i + 0.5) * double(g.dx)), float((j + 0.5) * double(g.dx)),
                                                  float(g.eta(c))}}, UpAxis::z, up);
                verts.push_back({x[0], x[1], x[2]});
            }
        }
    std::vector<std::array<std::int32_t, 3>> tris;
    for (int j = 0; j + 1 < g.ny; ++j)
        for (int i = 0; i + 1 < g.nx; ++i) {
            const std::int32_t a = index[g.cell(i, j)], b = index[g.cell(i + 1, j)], c = index[g.cell(i + 1, j + 1)],
                               d = index[g.cell(i, j + 1)];
            const int wet = (a >= 0) + (b >= 0) + (c >= 0) + (d >= 0);
            if (wet == 4) {
                tris.push_back({a, b, c});
                tris.push_back({a, c, d});
            } else if (wet == 3) {
                if (a < 0) tris.push_back({b, c, d});
                else if (b < 0) tris.push_back({a, c, d});
                else if (c < 0) tris.push_back({a, b, d});
                else tris.push_back({a, b, c});
            }
        }
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    std::string s;
    if (ext == ".ply") {
        s = fmt::format("ply\nformat binary_little_endian 1.0\ncomment eddy shallow-water surface ({} up)\nelement vertex {}\n"
                        "property float x\nproperty float y\nproperty float z\nelement face {}\n"
                        "property list uchar int vertex_indices\nend_header\n",
                        name(up), verts.size(), tris.size());
        for (const auto& v : verts) s.append(reinterpret_cast<const char*>(v.data()), 12);
        for (const auto& t : tris) {
            s.push_back(char(3));
            s.append(reinterpret_cast<const char*>(t.data()), 12);
        }
    } else {
        s = up == UpAxis::z ? "# eddy shallow-water surface: vertices at wet cell centres (x, y, eta), z up\n"
                            : "# eddy shallow-water surface: vertices at wet cell centres (x, eta, -y), y up\n";
        for (const auto& v : verts) fmt::format_to(std::back_inserter(s), "v {:.7g} {:.7g} {:.7g}\n", v[0], v[1], v[2]);
        for (const auto& t : tris) fmt::format_to(std::back_inserter(s), "f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    write_atomic(path, s);
}

}  // namespace io

namespace {

Vec3 mix(const Vec3& a, const Vec3& b, float t) { return a * (1.0f - t) + b * t; }
Vec3 normalize(const Vec3& v) { return v * (1.0f / norm(v)); }

// Terrain colour by relative height: green lowland, brown slopes, light grey tops.
Vec3 terrain_color(float t) {
    const Vec3 low{{0.36f, 0.55f, 0.30f}}, mid{{0.55f, 0.45f, 0.32f}}, high{{0.85f, 0.84f, 0.80f}};
    return t < 0.6f ? mix(low, mid, t / 0.6f) : mix(mid, high, (t - 0.6f) / 0.4f);
}

}  // namespace

template <class Real>
void render_grid_png(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g, int max_size,
                     const std::vector<ShallowBody>* bodies) {
    const int nx = g.nx, ny = g.ny;
    // The bodies' columns per cell (top view: the highest; side view: each body's own), over their rectangles.
    struct Column {
        float lo, hi;
    };
    std::vector<Column> cover;
    const Vec3 wood{{0.55f, 0.36f, 0.18f}};
    auto column_at = [&](int i, int j) -> const Column* {
        if (cover.empty()) return nullptr;
        const Column& c = cover[g.cell(i, j)];
        return c.hi > c.lo ? &c : nullptr;
    };
    if (bodies && !bodies->empty()) {
        cover.assign(g.cells(), Column{0.0f, 0.0f});
        for (const ShallowBody& b : *bodies) {
            int i0, i1, j0, j1;
            shallow_detail::body_rect(b, g, i0, i1, j0, j1);
            for (int j = j0; j < j1; ++j)
                for (int i = i0; i < i1; ++i) {
                    double lo, hi;
                    if (!shallow_detail::body_column(b, (i + 0.5) * double(g.dx), (j + 0.5) * double(g.dx), lo, hi)) continue;
                    Column& c = cover[g.cell(i, j)];
                    if (c.hi > c.lo) c = {std::min(c.lo, float(lo)), std::max(c.hi, float(hi))};
                    else c = {float(lo), float(hi)};
                }
        }
    }
    const Real dry = Real(1e-4) * g.dx;
    float hmin = 1e30f, hmax = -1e30f, dmax = 0.0f, imax = 0.0f, emin = 1e30f, emax = -1e30f;
    for (std::size_t c = 0; c < g.cells(); ++c) {
        hmin = std::min(hmin, float(g.terrain[c]));
        hmax = std::max(hmax, float(g.terrain[c]));
        dmax = std::max(dmax, float(g.depth[c]));
        imax = std::max(imax, float(g.ink[c]));
        if (g.depth[c] > dry) {
            emin = std::min(emin, float(g.eta(c)));
            emax = std::max(emax, float(g.eta(c)));
        }
    }
    const Vec3 water_shallow{{0.55f, 0.80f, 0.92f}}, water_deep{{0.05f, 0.20f, 0.50f}}, ink_color{{0.85f, 0.10f, 0.45f}};
    const Vec3 sky{{0.96f, 0.97f, 0.99f}}, solid_color{{0.25f, 0.25f, 0.27f}};
    const float depth_scale = std::max(dmax * 0.5f, 1e-6f), ink_scale = std::max(imax * 0.3f, 1e-6f);

    if (ny <= 8) {
        // Side view of the middle row: terrain and water along x.
        const int W = std::clamp(nx, 400, std::max(400, max_size)), Hpx = std::max(200, W / 3);
        const int j = ny / 2;
        float lo = hmin, hi = std::max(hmax, emax);
        if (!(hi > lo)) hi = lo + 1.0f;
        const float pad = 0.08f * (hi - lo);
        lo -= pad;
        hi += pad;
        std::vector<Vec3> img(std::size_t(W) * Hpx, sky);
        for (int x = 0; x < W; ++x) {
            const int i = std::min(nx - 1, int((x + 0.5f) / W * nx));
            const std::size_t c = g.cell(i, j);
            const float H = float(g.terrain[c]), e = float(g.eta(c));
            const float tint = g.ink[c] > 0 ? 1.0f - std::exp(-float(g.ink[c]) / ink_scale) : 0.0f;
            for (int y = 0; y < Hpx; ++y) {
                const float z = hi - (y + 0.5f) / Hpx * (hi - lo);
                Vec3& p = img[std::size_t(y) * W + x];
                const Column* body = column_at(i, j);
                if (g.solid[c]) p = solid_color;
                else if (body && z >= body->lo && z <= body->hi) p = z <= e ? wood * 0.7f : wood;
                else if (z <= H) p = terrain_color((H - hmin) / std::max(hmax - hmin, 1e-6f)) * 0.85f;
                else if (z <= e && g.depth[c] > dry) p = mix(mix(water_shallow, water_deep, std::min(1.0f, (e - z) / (2 * depth_scale))), ink_color, 0.8f * tint);
            }
        }
        write_png(path, W, Hpx, img);
        return;
    }

    // Top view, north (y = Ly) up; light from the north-west.
    const int cellpx = std::max(1, max_size / std::max(nx, ny));
    const double scale = double(std::max(nx, ny)) / std::min(max_size, std::max(nx, ny) * cellpx);
    const int W = std::max(1, int(nx / scale)), Hpx = std::max(1, int(ny / scale));
    std::vector<Vec3> img(std::size_t(W) * Hpx);
    const Vec3 light = normalize(Vec3{{-0.5f, 0.6f, 1.0f}});
    const float dxf = float(g.dx);
    auto shade = [&](auto&& height, int i, int j) {
        const int il = std::max(i - 1, 0), ir = std::min(i + 1, nx - 1), jl = std::max(j - 1, 0), jr = std::min(j + 1, ny - 1);
        const float gx = (height(ir, j) - height(il, j)) / (std::max(ir - il, 1) * dxf);
        const float gy = (height(i, jr) - height(i, jl)) / (std::max(jr - jl, 1) * dxf);
        const Vec3 nrm = normalize(Vec3{{-gx, -gy, 1.0f}});
        return std::max(0.0f, dot(nrm, light));
    };
    auto H = [&](int i, int j) { return float(g.terrain[g.cell(i, j)]); };
    auto E = [&](int i, int j) {
        const std::size_t c = g.cell(i, j);
        return g.depth[c] > dry ? float(g.eta(c)) : float(g.terrain[c]);
    };
    for (int y = 0; y < Hpx; ++y)
        for (int x = 0; x < W; ++x) {
            const int i = std::min(nx - 1, int((x + 0.5) * scale)), j = std::min(ny - 1, int((Hpx - 1 - y + 0.5) * scale));
            const std::size_t c = g.cell(i, j);
            Vec3 p;
            if (g.solid[c]) {
                p = solid_color;
            } else {
                p = terrain_color((H(i, j) - hmin) / std::max(hmax - hmin, 1e-6f)) * (0.35f + 0.65f * shade(H, i, j));
                const float d = float(g.depth[c]);
                if (d > float(dry)) {
                    const float t = 1.0f - std::exp(-d / depth_scale);
                    Vec3 wc = mix(water_shallow, water_deep, t) * (0.75f + 0.25f * shade(E, i, j));
                    if (g.ink[c] > 0) wc = mix(wc, ink_color, 0.85f * (1.0f - std::exp(-float(g.ink[c]) / ink_scale)));
                    p = mix(p, wc, std::min(1.0f, 0.45f + 0.55f * t));
                }
                // A body: wood, lit by its top's height, darker where its top is under water.
                if (const Column* body = column_at(i, j)) p = body->hi > E(i, j) ? wood * (0.8f + 0.2f * shade(H, i, j)) : mix(p, wood, 0.5f);
            }
            img[std::size_t(y) * W + x] = p;
        }
    write_png(path, W, Hpx, img);
}

#define EDDY_SW_OUTPUT(Real)                                                                        \
    template void io::write_vti<Real>(const std::filesystem::path&, const ShallowWaterGrid<Real>&); \
    template void io::write_vti_piece<Real>(const std::filesystem::path&, const ShallowWaterGrid<Real>&, const GridBlock&); \
    template void io::write_grid_csv<Real>(const std::filesystem::path&, const ShallowWaterGrid<Real>&); \
    template void io::write_water_mesh<Real>(const std::filesystem::path&, const ShallowWaterGrid<Real>&, UpAxis); \
    template void render_grid_png<Real>(const std::filesystem::path&, const ShallowWaterGrid<Real>&, int, \
                                        const std::vector<ShallowBody>*);
EDDY_SW_OUTPUT(float)
EDDY_SW_OUTPUT(double)

}  // namespace eddy
