// The particle files' shared reading helpers (one format per file: particles_vtp.cpp, particles_csv.cpp,
// particles_ply.cpp; particles_io.cpp dispatches by extension). Internal to src/io/.
//
// Writers build the whole file in memory and hand it to write_atomic. Readers load the whole file,
// then check everything a user could get wrong (missing columns, truncated data, non-finite
// positions, 3D data asked for as 2D) and report it as one InputError line "<file>: <problem>".
#pragma once
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
#include "eddy/input_file.hpp"
#include "eddy/io.hpp"
#include "io/number_text.hpp"
#include "io/vtk_xml.hpp"


namespace eddy::io {

// The binary formats are written by copying memory; both declare little-endian data.

namespace detail {

template <class... Args>
InputError input_error(const std::filesystem::path& path, fmt::format_string<Args...> f, Args&&... args) {
    return InputError(path.string() + ": " + fmt::format(f, std::forward<Args>(args)...));
}


// The whole file, opened without blocking (a FIFO, a device such as /dev/zero or a folder is refused
// before a byte is read: eddy/input_file.hpp) and refused from its size when larger than max_bytes.
inline std::string slurp(const std::filesystem::path& path, std::uint64_t max_bytes = kNoSizeLimit,
                         std::string_view limit_origin = "the limit") {
    auto f = InputFile::open_existing(path);
    if (!f) throw input_error(path, "no such file");
    const std::string what = fmt::format("the particle file (limit: {})", limit_origin);
    std::string s = f->read_all(max_bytes, what);
    if (s.empty()) throw input_error(path, "no particles (the file is empty)");
    return s;
}

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// A number in C locale; "nan" and "inf" parse (and are caught later where they matter).
inline std::optional<double> parse_double(std::string_view s) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double v = 0.0;
    const auto [end, ec] = from_chars_double(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// double -> float without the undefined behaviour of out-of-range conversions: values that would
// round past the largest float become +-inf (and are then caught where finiteness matters).
inline float narrow(double v) {
    constexpr double overflow = 0x1.ffffffp127;  // halfway between FLT_MAX and the next power of two
    if (v >= overflow) return std::numeric_limits<float>::infinity();
    if (v <= -overflow) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(v);
}

// Ids are stored as uint32; anything else in an id column is a user error, not a cast.
inline std::optional<std::uint32_t> to_id(double v) {
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

// Where each field sits in a row of values (a CSV line, a PLY vertex); -1: not in the file.
struct RowColumns {
    int x = -1, y = -1, z = -1;
    int v[3] = {-1, -1, -1};
    int density = -1, pressure = -1, id = -1;
    // find(name): the index of the column or property called name, -1 if there is none.
    template <class Find>
    static RowColumns named(Find&& find) {
        RowColumns c;
        c.x = find("x");
        c.y = find("y");
        c.z = find("z");
        c.v[0] = find("vx");
        c.v[1] = find("vy");
        c.v[2] = find("vz");
        c.density = find("density");
        c.pressure = find("pressure");
        c.id = find("id");
        return c;
    }
};

// Particle i from a row of values; `where` names the row in messages. Without an id column the id is i.
template <int D, class Where>
void set_row(ParticleSet<D>& p, std::size_t i, const std::vector<double>& vals, const RowColumns& c,
             const std::filesystem::path& path, Where&& where) {
    auto at = [&](int k) { return k >= 0 ? vals[std::size_t(k)] : 0.0; };
    const double x[3] = {at(c.x), at(c.y), at(c.z)};
    set_position(p, i, x, path, where);
    const double v[3] = {at(c.v[0]), at(c.v[1]), at(c.v[2])};
    set_velocity(p, i, v);
    if (c.density >= 0) p.density[i] = narrow(at(c.density));
    if (c.pressure >= 0) p.pressure[i] = narrow(at(c.pressure));
    if (c.id >= 0) {
        const auto id = to_id(at(c.id));
        if (!id) throw input_error(path, "{}: id {} is not a whole number in [0, 2^32)", where(), at(c.id));
        p.id[i] = *id;
    } else {
        p.id[i] = static_cast<std::uint32_t>(i);
    }
}

// ---- a very small XML tag reader, enough for VTK headers ----

struct Tag {
    std::size_t begin = std::string::npos;  // position of '<'
    std::size_t end = std::string::npos;    // position after '>'
    explicit operator bool() const { return begin != std::string::npos; }
};

inline Tag find_tag(std::string_view s, std::string_view name, std::size_t from = 0, std::size_t until = std::string::npos) {
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

inline std::optional<std::string> attribute(std::string_view s, const Tag& tag, std::string_view name) {
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

inline std::optional<std::uint64_t> parse_u64(std::string_view s) {
    s = trim(s);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// Size in bytes of a VTK or PLY scalar type (0 if unknown).
inline std::size_t scalar_size(std::string_view t) {
    if (t == "Int8" || t == "UInt8" || t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
    if (t == "Int16" || t == "UInt16" || t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
    if (t == "Int32" || t == "UInt32" || t == "Float32" || t == "int" || t == "uint" || t == "int32" || t == "uint32" ||
        t == "float" || t == "float32")
        return 4;
    if (t == "Int64" || t == "UInt64" || t == "Float64" || t == "double" || t == "float64") return 8;
    return 0;
}

enum class Scalar { i8, u8, i16, u16, i32, u32, i64, u64, f32, f64 };

inline Scalar scalar_kind(std::string_view t) {
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

inline double load_scalar(Scalar k, const char* d) {
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

inline std::string xml_escape(std::string_view s) {
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

}  // namespace detail

}  // namespace eddy::io
