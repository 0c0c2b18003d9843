// Particle files: VTK XML PolyData (.vtp, binary appended), CSV, binary PLY, ParaView .pvd.
//
// Writers build the whole file in memory and hand it to write_atomic. Readers load the whole file,
// then check everything a user could get wrong (missing columns, truncated data, non-finite
// positions, 3D data asked for as 2D) and report it as one InputError line "<file>: <problem>".
#include <algorithm>
#include <bit>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "io/vtk_xml.hpp"

namespace eddy::io {

// The binary formats are written by copying memory; both declare little-endian data.

namespace {

template <class... Args>
InputError input_error(const std::filesystem::path& path, fmt::format_string<Args...> f, Args&&... args) {
    return InputError(path.string() + ": " + fmt::format(f, std::forward<Args>(args)...));
}

using detail::append_raw;

std::string slurp(const std::filesystem::path& path) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st)) throw input_error(path, "no such file");
    if (std::filesystem::is_directory(st)) throw input_error(path, "is a folder, not a particle file");
    // A device or a pipe (/dev/zero) would be read forever: only regular files.
    if (!std::filesystem::is_regular_file(st)) throw input_error(path, "not a regular file; allowed: a particle file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error(path, "cannot open: {}", std::strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    if (s.empty()) throw input_error(path, "no particles (the file is empty)");
    return s;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// A number in C locale; "nan" and "inf" parse (and are caught later where they matter).
std::optional<double> parse_double(std::string_view s) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// double -> float without the undefined behaviour of out-of-range conversions: values that would
// round past the largest float become +-inf (and are then caught where finiteness matters).
float narrow(double v) {
    constexpr double overflow = 0x1.ffffffp127;  // halfway between FLT_MAX and the next power of two
    if (v >= overflow) return std::numeric_limits<float>::infinity();
    if (v <= -overflow) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(v);
}

// Ids are stored as uint32; anything else in an id column is a user error, not a cast.
std::optional<std::uint32_t> to_id(double v) {
    if (!(v >= 0.0 && v <= double(std::numeric_limits<std::uint32_t>::max()) && v == std::floor(v))) return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

template <int D>
void finish(ParticleSet<D>& p, const std::filesystem::path& path) {
    if (p.empty()) throw input_error(path, "no particles");
    // Ids must stay unique: they are how particles are followed across frames and reorderings.
    std::vector<std::uint32_t> ids = p.id;
    std::sort(ids.begin(), ids.end());
    if (const auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
        throw input_error(path, "id {} is used by more than one particle", *dup);
    if (ids.back() == std::numeric_limits<std::uint32_t>::max())
        throw input_error(path, "id {} leaves no id for new particles", ids.back());
    p.next_id = ids.back() + 1;
}

// Particle i from a 3-component position; a 2D set only accepts z = 0. `where` names the line or
// vertex in messages and is only called on error.
template <int D, class Where>
void set_position(ParticleSet<D>& p, std::size_t i, const double (&x)[3], const std::filesystem::path& path,
                  Where&& where) {
    const float f[3] = {narrow(x[0]), narrow(x[1]), narrow(x[2])};
    if (!std::isfinite(f[0]) || !std::isfinite(f[1]) || !std::isfinite(f[2]))
        throw input_error(path, "{}: position is not finite", where());
    if (D == 2 && f[2] != 0.0f)
        throw input_error(path, "{}: z = {} but a 2D particle set was asked for (the file holds 3D particles)",
                          where(), f[2]);
    for (int a = 0; a < D; ++a) p.position[i][a] = f[a];
}

template <int D>
void set_velocity(ParticleSet<D>& p, std::size_t i, const double (&v)[3]) {
    for (int a = 0; a < D; ++a) p.velocity[i][a] = narrow(v[a]);
}

// ---- a very small XML tag reader, enough for VTK headers ----

struct Tag {
    std::size_t begin = std::string::npos;  // position of '<'
    std::size_t end = std::string::npos;    // position after '>'
    explicit operator bool() const { return begin != std::string::npos; }
};

Tag find_tag(std::string_view s, std::string_view name, std::size_t from = 0, std::size_t until = std::string::npos) {
    std::string open(1, '<');
    open += name;
    for (std::size_t t = s.find(open, from); t != std::string::npos && t < until; t = s.find(open, t + 1)) {
        const char c = t + open.size() < s.size() ? s[t + open.size()] : '\0';
        if (c != ' ' && c != '>' && c != '/' && c != '\n' && c != '\t' && c != '\r') continue;  // <Points vs <PointData
        const auto e = s.find('>', t);
        if (e == std::string::npos) return {};
        return {t, e + 1};
    }
    return {};
}

std::optional<std::string> attribute(std::string_view s, const Tag& tag, std::string_view name) {
    const std::string_view text = s.substr(tag.begin, tag.end - tag.begin);
    for (std::size_t a = text.find(name); a != std::string::npos; a = text.find(name, a + 1)) {
        const char before = a > 0 ? text[a - 1] : '<';
        std::size_t q = a + name.size();
        while (q < text.size() && text[q] == ' ') ++q;
        if ((before != ' ' && before != '\n' && before != '\t') || q >= text.size() || text[q] != '=') continue;
        ++q;
        while (q < text.size() && text[q] == ' ') ++q;
        if (q >= text.size() || (text[q] != '"' && text[q] != '\'')) return std::nullopt;
        const auto close = text.find(text[q], q + 1);
        if (close == std::string::npos) return std::nullopt;
        return std::string(text.substr(q + 1, close - q - 1));
    }
    return std::nullopt;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
    s = trim(s);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// Size in bytes of a VTK or PLY scalar type (0 if unknown).
std::size_t scalar_size(std::string_view t) {
    if (t == "Int8" || t == "UInt8" || t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
    if (t == "Int16" || t == "UInt16" || t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
    if (t == "Int32" || t == "UInt32" || t == "Float32" || t == "int" || t == "uint" || t == "int32" || t == "uint32" ||
        t == "float" || t == "float32")
        return 4;
    if (t == "Int64" || t == "UInt64" || t == "Float64" || t == "double" || t == "float64") return 8;
    return 0;
}

enum class Scalar { i8, u8, i16, u16, i32, u32, i64, u64, f32, f64 };

Scalar scalar_kind(std::string_view t) {
    if (t == "Int8" || t == "char" || t == "int8") return Scalar::i8;
    if (t == "UInt8" || t == "uchar" || t == "uint8") return Scalar::u8;
    if (t == "Int16" || t == "short" || t == "int16") return Scalar::i16;
    if (t == "UInt16" || t == "ushort" || t == "uint16") return Scalar::u16;
    if (t == "Int32" || t == "int" || t == "int32") return Scalar::i32;
    if (t == "UInt32" || t == "uint" || t == "uint32") return Scalar::u32;
    if (t == "Int64") return Scalar::i64;
    if (t == "UInt64") return Scalar::u64;
    if (t == "Float64" || t == "double" || t == "float64") return Scalar::f64;
    return Scalar::f32;
}

template <class T>
double load_as_double(const char* d) {
    T v;
    std::memcpy(&v, d, sizeof(T));
    return static_cast<double>(v);
}

double load_scalar(Scalar k, const char* d) {
    switch (k) {
        case Scalar::i8: return load_as_double<std::int8_t>(d);
        case Scalar::u8: return load_as_double<std::uint8_t>(d);
        case Scalar::i16: return load_as_double<std::int16_t>(d);
        case Scalar::u16: return load_as_double<std::uint16_t>(d);
        case Scalar::i32: return load_as_double<std::int32_t>(d);
        case Scalar::u32: return load_as_double<std::uint32_t>(d);
        case Scalar::i64: return load_as_double<std::int64_t>(d);
        case Scalar::u64: return load_as_double<std::uint64_t>(d);
        case Scalar::f32: return load_as_double<float>(d);
        case Scalar::f64: return load_as_double<double>(d);
    }
    return 0.0;
}

}  // namespace

// ---- VTK XML PolyData -------------------------------------------------------------------------

template <int D>
void write_vtp(const std::filesystem::path& path, const ParticleSet<D>& p) {
    const std::uint64_t n = p.size();
    // Appended arrays, each preceded by its byte count (the UInt64 header); offsets count from the '_'.
    struct Array { const char* name; const char* type; int comps; std::uint64_t offset; };
    std::string data;
    data.reserve(7 * 8 + n * (12 + 8 + 8 + 12 + 4 + 4 + 4));
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
    // One vertex cell per point, so that ParaView shows the points without a Glyph filter.
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
    xml.reserve(2048 + data.size());
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
    const std::string_view sv = s;
    // The XML part ends at the '_' that starts the raw data: never search the binary bytes for tags.
    const Tag file = find_tag(sv, "VTKFile");
    if (!file) throw input_error(path, "not a VTK XML file (no <VTKFile> tag)");
    if (attribute(sv, file, "type").value_or("") != "PolyData")
        throw input_error(path, "not VTK PolyData (type=\"{}\")", attribute(sv, file, "type").value_or(""));
    if (attribute(sv, file, "compressor"))
        throw input_error(path, "compressed VTK data ({}) is not read; save uncompressed raw appended data",
                          *attribute(sv, file, "compressor"));
    if (const auto bo = attribute(sv, file, "byte_order"); bo && *bo != "LittleEndian")
        throw input_error(path, "byte_order=\"{}\" is not read; only LittleEndian", *bo);
    const std::string header_type = attribute(sv, file, "header_type").value_or("UInt32");
    if (header_type != "UInt64")
        throw input_error(path, "header_type=\"{}\" is not read; only UInt64 (as eddy writes it)", header_type);
    const Tag appended = find_tag(sv, "AppendedData", file.end);
    const std::size_t head_end = appended ? appended.end : s.size();
    const Tag piece = find_tag(sv, "Piece", file.end, head_end);
    if (!piece) throw input_error(path, "no <Piece> in the PolyData");
    if (find_tag(sv, "Piece", piece.end, head_end)) throw input_error(path, "more than one <Piece> is not read");
    const auto n_attr = attribute(sv, piece, "NumberOfPoints");
    const auto n64 = n_attr ? parse_u64(*n_attr) : std::nullopt;
    if (!n64) throw input_error(path, "<Piece> has no valid NumberOfPoints");
    if (*n64 == 0) throw input_error(path, "no particles");
    // Every point needs at least 3 bytes of appended data (3 one-byte coordinates): a count the file
    // cannot hold is refused here, before any product with it can wrap around 2^64 (2^61 points of
    // 24 bytes "need" 0 bytes) and before anything is allocated for it.
    if (*n64 > s.size() / 3)
        throw input_error(path, "NumberOfPoints = {} is more than the file's {} bytes can hold; allowed: at most {}", *n64,
                          s.size(), s.size() / 3);
    const std::size_t n = *n64;

    struct ArrayInfo { Tag tag; std::string name, type, format; int comps; };
    auto info = [&](const Tag& t) {
        ArrayInfo a{t, attribute(sv, t, "Name").value_or(""), attribute(sv, t, "type").value_or(""),
                    attribute(sv, t, "format").value_or("ascii"), 1};
        if (const auto c = attribute(sv, t, "NumberOfComponents")) {
            const auto v = parse_u64(*c);
            if (!v || *v == 0 || *v > 16) throw input_error(path, "array '{}': bad NumberOfComponents=\"{}\"", a.name, *c);
            a.comps = static_cast<int>(*v);
        }
        return a;
    };
    std::optional<ArrayInfo> points;
    if (const Tag pts = find_tag(sv, "Points", piece.end, head_end))
        if (const Tag t = find_tag(sv, "DataArray", pts.end, sv.find("</Points>", pts.end))) points = info(t);
    if (!points) throw input_error(path, "no <Points> array");
    std::vector<ArrayInfo> point_data;
    if (const Tag pd = find_tag(sv, "PointData", piece.end, head_end); pd && sv[pd.end - 2] != '/') {
        const auto close = sv.find("</PointData>", pd.end);
        for (Tag t = find_tag(sv, "DataArray", pd.end, close); t; t = find_tag(sv, "DataArray", t.end, close))
            point_data.push_back(info(t));
    }
    auto named = [&](std::string_view name) -> const ArrayInfo* {
        for (const auto& a : point_data)
            if (a.name == name) return &a;
        return nullptr;
    };

    if (points->format != "appended")
        throw input_error(path, "format=\"{}\" data arrays are not read; only raw appended data (as eddy writes it)",
                          points->format);
    if (!appended) throw input_error(path, "no <AppendedData> block");
    if (const auto enc = attribute(sv, appended, "encoding"); enc.value_or("") != "raw")
        throw input_error(path, "<AppendedData encoding=\"{}\"> is not read; only raw", enc.value_or(""));
    const std::size_t underscore = s.find('_', appended.end);
    if (underscore == std::string::npos) throw input_error(path, "<AppendedData> has no '_' marker");
    const std::size_t base = underscore + 1;

    // Returns the first byte of the array's values after checking type, size and bounds.
    auto array_data = [&](const ArrayInfo& a, int comps) -> const char* {
        const std::string label = a.name.empty() ? std::string("Points") : a.name;
        if (a.format != "appended")
            throw input_error(path, "array '{}': format=\"{}\" is not read; only raw appended data", label, a.format);
        const std::size_t elem = scalar_size(a.type);
        if (elem == 0) throw input_error(path, "array '{}': unsupported type \"{}\"", label, a.type);
        if (a.comps != comps)
            throw input_error(path, "array '{}' has {} components, {} expected", label, a.comps, comps);
        const auto off = parse_u64(attribute(sv, a.tag, "offset").value_or(""));
        if (!off) throw input_error(path, "array '{}' has no valid offset", label);
        if (*off > s.size() - base || s.size() - base - *off < 8) throw input_error(path, "array '{}' is truncated", label);
        std::uint64_t bytes = 0;
        std::memcpy(&bytes, s.data() + base + *off, 8);
        if (n > s.size() / (std::size_t(comps) * elem))  // checked before the product, which could wrap
            throw input_error(path, "array '{}' is truncated: {} points of {} bytes are more than the file's {} bytes",
                              label, n, std::size_t(comps) * elem, s.size());
        const std::uint64_t want = std::uint64_t(n) * std::uint64_t(comps) * elem;
        if (bytes != want)
            throw input_error(path, "array '{}' holds {} bytes, {} expected for {} points", label, bytes, want, n);
        if (s.size() - base - *off - 8 < want) throw input_error(path, "array '{}' is truncated", label);
        return s.data() + base + *off + 8;
    };
    // Checked before allocating: a corrupt NumberOfPoints must not become a huge allocation.
    const char* pts_data = array_data(*points, 3);

    ParticleSet<D> p;
    p.resize(n);
    {
        const Scalar k = scalar_kind(points->type);
        const std::size_t e = scalar_size(points->type);
        for (std::size_t i = 0; i < n; ++i) {
            const char* d = pts_data + 3 * e * i;
            const double x[3] = {load_scalar(k, d), load_scalar(k, d + e), load_scalar(k, d + 2 * e)};
            set_position(p, i, x, path, [&] { return fmt::format("point {}", i); });
        }
    }
    if (const ArrayInfo* a = named("velocity")) {
        const char* d = array_data(*a, 3);
        const Scalar k = scalar_kind(a->type);
        const std::size_t e = scalar_size(a->type);
        for (std::size_t i = 0; i < n; ++i, d += 3 * e) {
            const double v[3] = {load_scalar(k, d), load_scalar(k, d + e), load_scalar(k, d + 2 * e)};
            set_velocity(p, i, v);
        }
    }
    auto scalar = [&](const char* name, auto&& store) {
        if (const ArrayInfo* a = named(name)) {
            const char* d = array_data(*a, 1);
            const Scalar k = scalar_kind(a->type);
            const std::size_t e = scalar_size(a->type);
            for (std::size_t i = 0; i < n; ++i) store(i, load_scalar(k, d + e * i));
            return true;
        }
        return false;
    };
    scalar("density", [&](std::size_t i, double v) { p.density[i] = narrow(v); });
    scalar("pressure", [&](std::size_t i, double v) { p.pressure[i] = narrow(v); });
    const bool has_id = scalar("id", [&](std::size_t i, double v) {
        const auto id = to_id(v);
        if (!id) throw input_error(path, "point {}: id {} is not a whole number in [0, 2^32)", i, v);
        p.id[i] = *id;
    });
    if (!has_id)
        for (std::size_t i = 0; i < n; ++i) p.id[i] = static_cast<std::uint32_t>(i);
    finish(p, path);
    return p;
}

// ---- CSV --------------------------------------------------------------------------------------

template <int D>
void write_csv(const std::filesystem::path& path, const ParticleSet<D>& p) {
    fmt::memory_buffer buf;
    buf.reserve(64 + p.size() * (D == 2 ? 90 : 125));
    fmt::format_to(std::back_inserter(buf), "{}",
                   D == 2 ? "id,x,y,vx,vy,density,pressure\n" : "id,x,y,z,vx,vy,vz,density,pressure\n");
    for (std::size_t i = 0; i < p.size(); ++i) {
        // %.9g: nine significant digits read back to the same float, every time.
        if constexpr (D == 2)
            fmt::format_to(std::back_inserter(buf), "{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", p.id[i],
                           p.position[i][0], p.position[i][1], p.velocity[i][0], p.velocity[i][1], p.density[i],
                           p.pressure[i]);
        else
            fmt::format_to(std::back_inserter(buf), "{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n",
                           p.id[i], p.position[i][0], p.position[i][1], p.position[i][2], p.velocity[i][0],
                           p.velocity[i][1], p.velocity[i][2], p.density[i], p.pressure[i]);
    }
    write_atomic(path, std::string_view(buf.data(), buf.size()));
}

template <int D>
ParticleSet<D> read_csv(const std::filesystem::path& path) {
    const std::string s = slurp(path);
    std::string_view rest = s;
    if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);  // spreadsheets like to add a UTF-8 BOM
    auto next_line = [&]() -> std::string_view {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return line;
    };
    const std::string_view header = next_line();
    std::vector<std::string_view> cols;
    for (std::size_t a = 0;;) {
        const auto c = header.find(',', a);
        cols.push_back(trim(header.substr(a, c == std::string_view::npos ? std::string_view::npos : c - a)));
        if (c == std::string_view::npos) break;
        a = c + 1;
    }
    auto col = [&](std::string_view name) {
        const auto it = std::find(cols.begin(), cols.end(), name);
        return it == cols.end() ? -1 : static_cast<int>(it - cols.begin());
    };
    const int cx = col("x"), cy = col("y"), cz = col("z");
    if (cx < 0 || cy < 0)
        throw input_error(path, "line 1: the header must name the columns x and y (and z in 3D), got '{}'", header);
    const int cv[3] = {col("vx"), col("vy"), col("vz")};
    const int cd = col("density"), cp = col("pressure"), cid = col("id");

    ParticleSet<D> p;
    std::vector<double> vals(cols.size());
    std::size_t lineno = 1;
    while (!rest.empty()) {
        const std::string_view line = next_line();
        ++lineno;
        if (trim(line).empty()) continue;
        std::size_t k = 0;
        for (std::size_t a = 0;; ++k) {
            const auto c = line.find(',', a);
            const std::string_view field = line.substr(a, c == std::string_view::npos ? std::string_view::npos : c - a);
            if (k >= vals.size())
                throw input_error(path, "line {}: more than the {} values the header names", lineno, cols.size());
            const auto v = parse_double(field);
            if (!v) throw input_error(path, "line {}: '{}' is not a number (column {})", lineno, trim(field), cols[k]);
            vals[k] = *v;
            if (c == std::string_view::npos) break;
            a = c + 1;
        }
        if (k + 1 != vals.size())
            throw input_error(path, "line {}: {} values for the {} columns of the header", lineno, k + 1, cols.size());
        const std::size_t i = p.size();
        p.push_back(Vec<D>::zero(), Vec<D>::zero());
        const double x[3] = {vals[cx], vals[cy], cz >= 0 ? vals[cz] : 0.0};
        set_position(p, i, x, path, [&] { return fmt::format("line {}", lineno); });
        const double v[3] = {cv[0] >= 0 ? vals[cv[0]] : 0.0, cv[1] >= 0 ? vals[cv[1]] : 0.0, cv[2] >= 0 ? vals[cv[2]] : 0.0};
        set_velocity(p, i, v);
        if (cd >= 0) p.density[i] = narrow(vals[cd]);
        if (cp >= 0) p.pressure[i] = narrow(vals[cp]);
        if (cid >= 0) {
            const auto id = to_id(vals[cid]);
            if (!id) throw input_error(path, "line {}: id {} is not a whole number in [0, 2^32)", lineno, vals[cid]);
            p.id[i] = *id;
        } else {
            p.id[i] = static_cast<std::uint32_t>(i);
        }
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
    const std::string_view sv = s;
    if (!sv.starts_with("ply\n") && !sv.starts_with("ply\r\n")) throw input_error(path, "not a PLY file (no 'ply' line)");
    // Header lines up to end_header.
    std::size_t pos = 0, body = std::string::npos, lineno = 0;
    std::string format;
    struct Prop { std::string name, type; std::size_t size; Scalar kind; };
    std::vector<Prop> props;
    std::size_t n = 0;
    bool seen_vertex = false, in_vertex = false;
    while (pos < s.size()) {
        const auto nl = sv.find('\n', pos);
        if (nl == std::string_view::npos) break;
        const std::string_view line = trim(sv.substr(pos, nl - pos));
        pos = nl + 1;
        ++lineno;
        std::istringstream ls{std::string(line)};
        std::string w;
        ls >> w;
        if (w == "end_header") {
            body = pos;
            break;
        }
        if (w == "format") {
            ls >> format;
        } else if (w == "element") {
            std::string name;
            std::string count;
            ls >> name >> count;
            const auto c = parse_u64(count);
            if (!c) throw input_error(path, "line {}: bad element count '{}'", lineno, count);
            in_vertex = name == "vertex";
            if (in_vertex) {
                n = *c;
                seen_vertex = true;
            } else if (!seen_vertex && *c > 0) {
                // Data comes element by element: anything before the vertices would have to be skipped.
                throw input_error(path, "line {}: element '{}' comes before 'vertex'; vertices must come first", lineno, name);
            }
        } else if (w == "property" && in_vertex) {
            std::string type, name;
            ls >> type >> name;
            if (type == "list") throw input_error(path, "line {}: list properties in vertices are not read", lineno);
            const std::size_t size = scalar_size(type);
            // PLY type names are lower case; scalar_size also knows VTK's (Float32, ...), which PLY has not.
            if (size == 0 || !std::islower(static_cast<unsigned char>(type[0])))
                throw input_error(path, "line {}: unknown property type '{}'", lineno, type);
            props.push_back({name, type, size, scalar_kind(type)});
        }
    }
    if (body == std::string::npos) throw input_error(path, "no end_header line");
    if (format != "binary_little_endian" && format != "ascii")
        throw input_error(path, "format '{}' is not read; only binary_little_endian and ascii", format);
    if (!seen_vertex) throw input_error(path, "no vertex element");
    if (n == 0) throw input_error(path, "no particles");
    auto find = [&](std::string_view name) {
        for (std::size_t k = 0; k < props.size(); ++k)
            if (props[k].name == name) return static_cast<int>(k);
        return -1;
    };
    const int ix = find("x"), iy = find("y"), iz = find("z");
    if (ix < 0 || iy < 0) throw input_error(path, "vertices need x and y properties (and z in 3D)");
    const int iv[3] = {find("vx"), find("vy"), find("vz")};
    const int id_density = find("density"), id_pressure = find("pressure"), id_id = find("id");

    std::size_t stride = 0;
    for (const auto& pr : props) stride += pr.size;
    const bool binary = format == "binary_little_endian";
    // Checked before allocating: a corrupt vertex count must not become a huge allocation.
    if (binary && (s.size() - body) / stride < n)
        throw input_error(path, "vertex data is truncated: {} vertices announced, {} bytes for them", n, s.size() - body);
    if (!binary && (s.size() - body + 1) / (2 * props.size()) < n)
        throw input_error(path, "vertex data is truncated: {} vertices announced", n);

    ParticleSet<D> p;
    p.resize(n);
    std::vector<double> vals(props.size());
    const char* d = s.data() + body;
    std::size_t apos = body;
    std::size_t aline = lineno + 1;
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t where_line = aline;
        if (binary) {
            for (std::size_t k = 0; k < props.size(); ++k) {
                vals[k] = load_scalar(props[k].kind, d);
                d += props[k].size;
            }
        } else {
            // One token per property, whitespace separated; lines only matter for messages.
            for (std::size_t k = 0; k < props.size(); ++k) {
                while (apos < s.size() && std::isspace(static_cast<unsigned char>(s[apos]))) {
                    if (s[apos] == '\n') ++aline;
                    ++apos;
                }
                if (k == 0) where_line = aline;
                if (apos >= s.size()) throw input_error(path, "vertex data is truncated at vertex {}", i);
                std::size_t e = apos;
                while (e < s.size() && !std::isspace(static_cast<unsigned char>(s[e]))) ++e;
                const auto v = parse_double(sv.substr(apos, e - apos));
                if (!v) throw input_error(path, "line {}: '{}' is not a number", aline, sv.substr(apos, e - apos));
                vals[k] = *v;
                apos = e;
            }
        }
        const double x[3] = {vals[ix], vals[iy], iz >= 0 ? vals[iz] : 0.0};
        set_position(p, i, x, path, [&] {
            return binary ? fmt::format("vertex {}", i) : fmt::format("line {}", where_line);
        });
        const double v[3] = {iv[0] >= 0 ? vals[iv[0]] : 0.0, iv[1] >= 0 ? vals[iv[1]] : 0.0, iv[2] >= 0 ? vals[iv[2]] : 0.0};
        set_velocity(p, i, v);
        if (id_density >= 0) p.density[i] = narrow(vals[id_density]);
        if (id_pressure >= 0) p.pressure[i] = narrow(vals[id_pressure]);
        if (id_id >= 0) {
            const auto id = to_id(vals[id_id]);
            if (!id) throw input_error(path, "vertex {}: id {} is not a whole number in [0, 2^32)", i, vals[id_id]);
            p.id[i] = *id;
        } else {
            p.id[i] = static_cast<std::uint32_t>(i);
        }
    }
    finish(p, path);
    return p;
}

// ---- ParaView collection ----------------------------------------------------------------------

namespace {
std::string xml_escape(std::string_view s) {
    std::string r;
    for (const char c : s) {
        switch (c) {
            case '&': r += "&amp;"; break;
            case '<': r += "&lt;"; break;
            case '>': r += "&gt;"; break;
            case '"': r += "&quot;"; break;
            default: r += c;
        }
    }
    return r;
}
}  // namespace

void write_pvd(const std::filesystem::path& path, const std::vector<std::pair<double, std::string>>& entries) {
    std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n";
    // "{}" is the shortest text that reads back as the same double: frame times stay exact.
    for (const auto& [t, file] : entries)
        s += fmt::format("    <DataSet timestep=\"{}\" group=\"\" part=\"0\" file=\"{}\"/>\n", t, xml_escape(file));
    s += "  </Collection>\n</VTKFile>\n";
    write_atomic(path, s);
}

template <int D>
ParticleSet<D> read_particles(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".csv") return read_csv<D>(path);
    if (ext == ".vtp") return read_vtp<D>(path);
    if (ext == ".ply") return read_ply<D>(path);
    throw input_error(path, "unknown particle file type '{}'; allowed: .csv, .vtp, .ply", ext);
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
