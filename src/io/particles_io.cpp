// Particle files: VTK XML PolyData (.vtp, binary appended), CSV, binary PLY, ParaView .pvd.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/io.hpp"

namespace eddy::io {

namespace {

template <class T>
void append_raw(std::string& s, const T& v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open file: {}", path.string(), std::strerror(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

template <int D>
void check_finite(const std::filesystem::path& path, const ParticleSet<D>& p, std::size_t i, const std::string& where) {
    if (!is_finite(p.position[i]))
        throw InputError(fmt::format("{}: {}: position is not finite", path.string(), where));
}

template <int D>
void finish(ParticleSet<D>& p, const std::filesystem::path& path) {
    if (p.empty()) throw InputError(fmt::format("{}: no particles", path.string()));
    std::uint32_t next = 0;
    for (auto id : p.id) next = std::max(next, id + 1);
    p.next_id = next;
}

// Sets particle i from a 3-component position, refusing z != 0 for 2D.
template <int D>
void set_position(ParticleSet<D>& p, std::size_t i, const float (&x)[3], const std::filesystem::path& path,
                  const std::string& where) {
    if (D == 2 && x[2] != 0.0f)
        throw InputError(fmt::format("{}: {}: z = {} but a 2D particle set was asked for", path.string(), where, x[2]));
    for (int a = 0; a < D; ++a) p.position[i][a] = x[a];
}

}  // namespace

// ---- VTK XML PolyData -------------------------------------------------------------------------

template <int D>
void write_vtp(const std::filesystem::path& path, const ParticleSet<D>& p) {
    const std::uint64_t n = p.size();
    // Appended arrays, each preceded by its byte count (UInt64 header).
    struct Array { const char* name; const char* type; int comps; std::uint64_t offset; };
    std::string data;
    std::vector<Array> arrays;
    auto begin_array = [&](const char* name, const char* type, int comps, std::uint64_t bytes) {
        arrays.push_back({name, type, comps, data.size()});
        append_raw(data, bytes);
    };
    auto vec3 = [&](const std::vector<Vec<D>>& v) {
        for (const auto& x : v) {
            const float c[3] = {x[0], x[1], D == 3 ? x[D - 1] : 0.0f};
            data.append(reinterpret_cast<const char*>(c), sizeof(c));
        }
    };
    begin_array("Points", "Float32", 3, n * 12);
    vec3(p.position);
    begin_array("connectivity", "Int64", 1, n * 8);
    for (std::uint64_t i = 0; i < n; ++i) append_raw(data, static_cast<std::int64_t>(i));
    begin_array("offsets", "Int64", 1, n * 8);
    for (std::uint64_t i = 0; i < n; ++i) append_raw(data, static_cast<std::int64_t>(i + 1));
    begin_array("velocity", "Float32", 3, n * 12);
    vec3(p.velocity);
    begin_array("density", "Float32", 1, n * 4);
    data.append(reinterpret_cast<const char*>(p.density.data()), n * 4);
    begin_array("pressure", "Float32", 1, n * 4);
    data.append(reinterpret_cast<const char*>(p.pressure.data()), n * 4);
    begin_array("id", "UInt32", 1, n * 4);
    data.append(reinterpret_cast<const char*>(p.id.data()), n * 4);

    auto da = [&](const Array& a) {
        return fmt::format("        <DataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\" format=\"appended\" "
                           "offset=\"{}\"/>\n",
                           a.type, a.name, a.comps, a.offset);
    };
    std::string xml;
    xml += "<?xml version=\"1.0\"?>\n";
    xml += "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n";
    xml += "  <PolyData>\n";
    xml += fmt::format("    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"{}\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                       "NumberOfPolys=\"0\">\n",
                       n, n);
    xml += "      <PointData Scalars=\"density\" Vectors=\"velocity\">\n";
    for (std::size_t k = 3; k < arrays.size(); ++k) xml += da(arrays[k]);
    xml += "      </PointData>\n      <Points>\n" + da(arrays[0]) + "      </Points>\n";
    xml += "      <Verts>\n" + da(arrays[1]) + da(arrays[2]) + "      </Verts>\n";
    xml += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
    xml += data;
    xml += "\n  </AppendedData>\n</VTKFile>\n";
    write_atomic(path, xml);
}

template <int D>
ParticleSet<D> read_vtp(const std::filesystem::path& path) {
    const std::string s = slurp(path);
    auto bad = [&](const std::string& what) { return InputError(fmt::format("{}: {}", path.string(), what)); };
    if (s.find("<VTKFile") == std::string::npos || s.find("type=\"PolyData\"") == std::string::npos)
        throw bad("not a VTK XML PolyData file");
    if (s.find("header_type=\"UInt64\"") == std::string::npos || s.find("encoding=\"raw\"") == std::string::npos ||
        s.find("compressor=") != std::string::npos)
        throw bad("only uncompressed raw appended data with UInt64 headers is read (as eddy writes it)");
    const auto app = s.find("<AppendedData");
    const auto underscore = app == std::string::npos ? app : s.find('_', s.find('>', app));
    if (underscore == std::string::npos) throw bad("no appended data");
    const std::size_t base = underscore + 1;
    auto attr = [&](std::size_t tag, const char* name) -> std::string {
        const auto end = s.find('>', tag);
        const std::string key = std::string(" ") + name + "=\"";
        const auto a = s.find(key, tag);
        if (a == std::string::npos || a > end) return {};
        const auto b = s.find('"', a + key.size());
        return s.substr(a + key.size(), b - a - key.size());
    };
    const auto piece = s.find("<Piece");
    if (piece == std::string::npos) throw bad("no <Piece>");
    const std::size_t n = std::stoull(attr(piece, "NumberOfPoints").empty() ? "0" : attr(piece, "NumberOfPoints"));
    ParticleSet<D> p;
    p.resize(n);
    p.next_id = 0;
    // Reads an appended array by its name (Points: the first array inside <Points>).
    auto read_array = [&](const std::string& name, int comps, const char* type, auto&& store) -> bool {
        std::size_t tag = std::string::npos;
        if (name == "Points") {
            const auto pts = s.find("<Points>");
            if (pts != std::string::npos) tag = s.find("<DataArray", pts);
        } else {
            for (auto t = s.find("<DataArray"); t != std::string::npos && t < app; t = s.find("<DataArray", t + 1))
                if (attr(t, "Name") == name) {
                    tag = t;
                    break;
                }
        }
        if (tag == std::string::npos || tag > app) return false;
        if (attr(tag, "type") != type || std::stoi(attr(tag, "NumberOfComponents").empty() ? "1" : attr(tag, "NumberOfComponents")) != comps)
            throw bad(fmt::format("array '{}' must be {} with {} components", name, type, comps));
        const std::size_t off = base + std::stoull(attr(tag, "offset"));
        std::uint64_t bytes = 0;
        if (off + 8 > s.size()) throw bad(fmt::format("array '{}' is truncated", name));
        std::memcpy(&bytes, s.data() + off, 8);
        const std::size_t elem = std::strcmp(type, "Float32") == 0 || std::strcmp(type, "UInt32") == 0 ? 4 : 8;
        if (bytes != n * comps * elem || off + 8 + bytes > s.size()) throw bad(fmt::format("array '{}' is truncated", name));
        store(s.data() + off + 8);
        return true;
    };
    if (!read_array("Points", 3, "Float32", [&](const char* d) {
            for (std::size_t i = 0; i < n; ++i) {
                float x[3];
                std::memcpy(x, d + 12 * i, 12);
                set_position(p, i, x, path, fmt::format("point {}", i));
                check_finite(path, p, i, fmt::format("point {}", i));
            }
        }))
        throw bad("no Points array");
    read_array("velocity", 3, "Float32", [&](const char* d) {
        for (std::size_t i = 0; i < n; ++i) {
            float v[3];
            std::memcpy(v, d + 12 * i, 12);
            for (int a = 0; a < D; ++a) p.velocity[i][a] = v[a];
        }
    });
    read_array("density", 1, "Float32", [&](const char* d) { std::memcpy(p.density.data(), d, 4 * n); });
    read_array("pressure", 1, "Float32", [&](const char* d) { std::memcpy(p.pressure.data(), d, 4 * n); });
    if (!read_array("id", 1, "UInt32", [&](const char* d) { std::memcpy(p.id.data(), d, 4 * n); }))
        for (std::size_t i = 0; i < n; ++i) p.id[i] = static_cast<std::uint32_t>(i);
    finish(p, path);
    return p;
}

// ---- CSV --------------------------------------------------------------------------------------

template <int D>
void write_csv(const std::filesystem::path& path, const ParticleSet<D>& p) {
    std::string s = D == 2 ? "id,x,y,vx,vy,density,pressure\n" : "id,x,y,z,vx,vy,vz,density,pressure\n";
    s.reserve(s.size() + p.size() * (D == 2 ? 80 : 110));
    fmt::memory_buffer buf;
    for (std::size_t i = 0; i < p.size(); ++i) {
        buf.clear();
        // %.9g: nine significant digits round-trip every float exactly.
        if constexpr (D == 2)
            fmt::format_to(std::back_inserter(buf), "{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", p.id[i],
                           p.position[i][0], p.position[i][1], p.velocity[i][0], p.velocity[i][1], p.density[i],
                           p.pressure[i]);
        else
            fmt::format_to(std::back_inserter(buf), "{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n",
                           p.id[i], p.position[i][0], p.position[i][1], p.position[i][2], p.velocity[i][0],
                           p.velocity[i][1], p.velocity[i][2], p.density[i], p.pressure[i]);
        s.append(buf.data(), buf.size());
    }
    write_atomic(path, s);
}

template <int D>
ParticleSet<D> read_csv(const std::filesystem::path& path) {
    const std::string s = slurp(path);
    std::istringstream in(s);
    std::string header;
    if (!std::getline(in, header)) throw InputError(fmt::format("{}: no particles", path.string()));
    if (!header.empty() && header.back() == '\r') header.pop_back();
    std::vector<std::string> cols;
    {
        std::stringstream hs(header);
        for (std::string c; std::getline(hs, c, ',');) cols.push_back(c);
    }
    auto col = [&](const char* name) {
        const auto it = std::find(cols.begin(), cols.end(), name);
        return it == cols.end() ? -1 : static_cast<int>(it - cols.begin());
    };
    const int cx = col("x"), cy = col("y"), cz = col("z");
    if (cx < 0 || cy < 0)
        throw InputError(fmt::format("{}: line 1: header must name the columns x and y (and z in 3D), got '{}'",
                                     path.string(), header));
    const int cvx = col("vx"), cvy = col("vy"), cvz = col("vz"), cd = col("density"), cp = col("pressure"), cid = col("id");
    ParticleSet<D> p;
    std::string line;
    std::size_t lineno = 1;
    std::vector<double> vals;
    while (std::getline(in, line)) {
        ++lineno;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        vals.clear();
        const char* c = line.c_str();
        while (true) {
            char* end = nullptr;
            const double v = std::strtod(c, &end);
            if (end == c) throw InputError(fmt::format("{}: line {}: not a number in '{}'", path.string(), lineno, line));
            vals.push_back(v);
            if (*end == ',') c = end + 1;
            else if (*end == 0) break;
            else throw InputError(fmt::format("{}: line {}: unexpected '{}'", path.string(), lineno, *end));
        }
        if (vals.size() != cols.size())
            throw InputError(fmt::format("{}: line {}: {} values for {} columns", path.string(), lineno, vals.size(), cols.size()));
        const std::size_t i = p.size();
        p.push_back(Vec<D>::zero(), Vec<D>::zero());
        const float x[3] = {float(vals[cx]), float(vals[cy]), cz >= 0 ? float(vals[cz]) : 0.0f};
        const std::string where = fmt::format("line {}", lineno);
        set_position(p, i, x, path, where);
        check_finite(path, p, i, where);
        const int vc[3] = {cvx, cvy, cvz};
        for (int a = 0; a < D; ++a)
            if (vc[a] >= 0) p.velocity[i][a] = float(vals[vc[a]]);
        if (cd >= 0) p.density[i] = float(vals[cd]);
        if (cp >= 0) p.pressure[i] = float(vals[cp]);
        p.id[i] = cid >= 0 ? static_cast<std::uint32_t>(vals[cid]) : static_cast<std::uint32_t>(i);
    }
    finish(p, path);
    return p;
}

// ---- PLY --------------------------------------------------------------------------------------

template <int D>
void write_ply(const std::filesystem::path& path, const ParticleSet<D>& p) {
    std::string s = fmt::format(
        "ply\nformat binary_little_endian 1.0\ncomment eddy particles\nelement vertex {}\n"
        "property float x\nproperty float y\nproperty float z\n"
        "property float vx\nproperty float vy\nproperty float vz\n"
        "property float density\nproperty float pressure\nproperty uint id\nend_header\n",
        p.size());
    s.reserve(s.size() + p.size() * 36);
    for (std::size_t i = 0; i < p.size(); ++i) {
        const float rec[8] = {p.position[i][0], p.position[i][1], D == 3 ? p.position[i][D - 1] : 0.0f,
                              p.velocity[i][0], p.velocity[i][1], D == 3 ? p.velocity[i][D - 1] : 0.0f,
                              p.density[i],     p.pressure[i]};
        s.append(reinterpret_cast<const char*>(rec), sizeof(rec));
        append_raw(s, p.id[i]);
    }
    write_atomic(path, s);
}

template <int D>
ParticleSet<D> read_ply(const std::filesystem::path& path) {
    const std::string s = slurp(path);
    auto bad = [&](const std::string& what) { return InputError(fmt::format("{}: {}", path.string(), what)); };
    if (s.rfind("ply", 0) != 0) throw bad("not a PLY file");
    const auto end = s.find("end_header\n");
    if (end == std::string::npos) throw bad("no end_header");
    std::istringstream hs(s.substr(0, end));
    std::string line, format;
    std::size_t n = 0;
    bool in_vertex = false;
    struct Prop { std::string name, type; std::size_t size; };
    std::vector<Prop> props;
    auto type_size = [&](const std::string& t) -> std::size_t {
        if (t == "float" || t == "float32" || t == "int" || t == "int32" || t == "uint" || t == "uint32") return 4;
        if (t == "double" || t == "float64") return 8;
        if (t == "uchar" || t == "uint8" || t == "char" || t == "int8") return 1;
        if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
        throw bad("unsupported property type '" + t + "'");
    };
    while (std::getline(hs, line)) {
        std::istringstream ls(line);
        std::string w;
        ls >> w;
        if (w == "format") ls >> format;
        else if (w == "element") {
            std::string name;
            ls >> name;
            in_vertex = name == "vertex";
            if (in_vertex) ls >> n;
        } else if (w == "property" && in_vertex) {
            std::string type, name;
            ls >> type;
            if (type == "list") throw bad("list properties in vertices are not supported");
            ls >> name;
            props.push_back({name, type, type_size(type)});
        }
    }
    if (format != "binary_little_endian" && format != "ascii") throw bad("format must be binary_little_endian or ascii");
    auto find = [&](const char* name) {
        for (std::size_t k = 0; k < props.size(); ++k)
            if (props[k].name == name) return static_cast<int>(k);
        return -1;
    };
    const int ix = find("x"), iy = find("y"), iz = find("z");
    if (ix < 0 || iy < 0) throw bad("vertices need x and y properties");
    ParticleSet<D> p;
    p.resize(n);
    std::vector<double> vals(props.size());
    const char* d = s.data() + end + 11;
    std::size_t stride = 0;
    for (const auto& pr : props) stride += pr.size;
    std::istringstream body(format == "ascii" ? s.substr(end + 11) : std::string());
    for (std::size_t i = 0; i < n; ++i) {
        if (format == "ascii") {
            for (auto& v : vals)
                if (!(body >> v)) throw bad(fmt::format("vertex {} is truncated", i));
        } else {
            if (d + stride > s.data() + s.size()) throw bad(fmt::format("vertex {} is truncated", i));
            for (std::size_t k = 0; k < props.size(); ++k) {
                const auto& t = props[k].type;
                if (t == "float" || t == "float32") { float f; std::memcpy(&f, d, 4); vals[k] = f; }
                else if (t == "double" || t == "float64") { double f; std::memcpy(&f, d, 8); vals[k] = f; }
                else if (t == "uint" || t == "uint32") { std::uint32_t f; std::memcpy(&f, d, 4); vals[k] = f; }
                else if (t == "int" || t == "int32") { std::int32_t f; std::memcpy(&f, d, 4); vals[k] = f; }
                else if (t == "short" || t == "int16") { std::int16_t f; std::memcpy(&f, d, 2); vals[k] = f; }
                else if (t == "ushort" || t == "uint16") { std::uint16_t f; std::memcpy(&f, d, 2); vals[k] = f; }
                else if (t == "char" || t == "int8") { std::int8_t f; std::memcpy(&f, d, 1); vals[k] = f; }
                else { std::uint8_t f; std::memcpy(&f, d, 1); vals[k] = f; }
                d += props[k].size;
            }
        }
        const float x[3] = {float(vals[ix]), float(vals[iy]), iz >= 0 ? float(vals[iz]) : 0.0f};
        const std::string where = fmt::format("vertex {}", i);
        set_position(p, i, x, path, where);
        check_finite(path, p, i, where);
        const int iv[3] = {find("vx"), find("vy"), find("vz")};
        for (int a = 0; a < D; ++a)
            if (iv[a] >= 0) p.velocity[i][a] = float(vals[iv[a]]);
        if (find("density") >= 0) p.density[i] = float(vals[find("density")]);
        if (find("pressure") >= 0) p.pressure[i] = float(vals[find("pressure")]);
        p.id[i] = find("id") >= 0 ? static_cast<std::uint32_t>(vals[find("id")]) : static_cast<std::uint32_t>(i);
    }
    finish(p, path);
    return p;
}

// ---- ParaView collection ----------------------------------------------------------------------

void write_pvd(const std::filesystem::path& path, const std::vector<std::pair<double, std::string>>& entries) {
    std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n";
    for (const auto& [t, file] : entries)
        s += fmt::format("    <DataSet timestep=\"{:.9g}\" group=\"\" part=\"0\" file=\"{}\"/>\n", t, file);
    s += "  </Collection>\n</VTKFile>\n";
    write_atomic(path, s);
}

template <int D>
ParticleSet<D> read_particles(const std::filesystem::path& path) {
    const std::string ext = path.extension().string();
    if (ext == ".csv") return read_csv<D>(path);
    if (ext == ".vtp") return read_vtp<D>(path);
    if (ext == ".ply") return read_ply<D>(path);
    throw InputError(fmt::format("{}: unknown particle file type '{}'; allowed: .csv, .vtp, .ply", path.string(), ext));
}

#define EDDY_IO_INSTANTIATE(D)                                                        \
    template void write_vtp<D>(const std::filesystem::path&, const ParticleSet<D>&); \
    template void write_csv<D>(const std::filesystem::path&, const ParticleSet<D>&); \
    template void write_ply<D>(const std::filesystem::path&, const ParticleSet<D>&); \
    template ParticleSet<D> read_vtp<D>(const std::filesystem::path&);               \
    template ParticleSet<D> read_csv<D>(const std::filesystem::path&);               \
    template ParticleSet<D> read_ply<D>(const std::filesystem::path&);               \
    template ParticleSet<D> read_particles<D>(const std::filesystem::path&);
EDDY_IO_INSTANTIATE(2)
EDDY_IO_INSTANTIATE(3)
#undef EDDY_IO_INSTANTIATE

}  // namespace eddy::io
