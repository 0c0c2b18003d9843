// Model files -> Mesh<3> through assimp (2D polygons: polygon_mesh.cpp).
//
// A model is untrusted input (issue 29). eddy reads the file itself, without ever blocking
// (eddy/input_file.hpp: non-blocking open, fstat, a regular file only, its size checked first), and
// checks what a reader could be fooled by before assimp sees a byte: an empty file, header counts the
// file cannot hold (a binary STL or PLY claiming 10^12 triangles), and for PLY - whose reader in
// assimp 5.2 trusts its input - the whole body: every binary element walked to the exact end of the
// file, every ASCII line counted, every face index checked against the vertex count. assimp then
// reads from memory through ConfinedIO, an Assimp::IOSystem that serves the model's bytes and opens
// the side files a model names (an OBJ's mtllib, a glTF's buffer uris) through the same checks,
// confined to the model's folder (io::referenced_path). Nothing assimp returns is trusted either:
// counts, pointers and indices are checked again before use. Placement (scale, rotate x-y-z,
// translate) is done in double precision; a vertex placed beyond float range is an error naming the
// key that put it there.
#include <assimp/BaseImporter.h>
#include <assimp/IOStream.hpp>
#include <assimp/importerdesc.h>
#include <assimp/IOSystem.hpp>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"
#include "eddy/input_file.hpp"
#include "io/number_text.hpp"

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
void check_stl(const fs::path& file, std::string_view bytes) {
    const std::uintmax_t size = bytes.size();
    if (size < 84) {
        if (bytes.substr(0, 5) == "solid") return;  // a tiny ASCII STL: assimp reports what is wrong
        fail(file, fmt::format("truncated STL: {} bytes, less than the 84-byte header of a binary STL", size));
    }
    std::uint32_t count = 0;
    std::memcpy(&count, bytes.data() + 80, 4);
    const std::uintmax_t expect = 84 + 50 * std::uintmax_t(count);
    if (expect == size) return;
    if (bytes.substr(0, 5) == "solid") return;  // ASCII
    fail(file, fmt::format("truncated or corrupt binary STL: the header claims {} triangles ({} bytes), the file has {} bytes",
                           count, expect, size));
}

// ---- PLY --------------------------------------------------------------------------------------------
//
// The header is parsed strictly (a line eddy does not understand is refused, so that eddy and assimp
// never disagree on the layout), then the body is walked: binary elements exactly to the end of the
// file, ASCII elements one line each (as assimp reads them). Face indices (a face's or tristrip's
// vertex_indices / vertex_index list) must name a vertex: assimp 5.2 does not check them, and one
// beyond the vertices crashed its post-processing and eddy's welding.

enum class PlyType { i8, u8, i16, u16, i32, u32, f32, f64, invalid };

PlyType ply_type(std::string_view t) {
    if (t == "char" || t == "int8") return PlyType::i8;
    if (t == "uchar" || t == "uint8") return PlyType::u8;
    if (t == "short" || t == "int16") return PlyType::i16;
    if (t == "ushort" || t == "uint16") return PlyType::u16;
    if (t == "int" || t == "int32") return PlyType::i32;
    if (t == "uint" || t == "uint32") return PlyType::u32;
    if (t == "float" || t == "float32") return PlyType::f32;
    if (t == "double" || t == "float64") return PlyType::f64;
    return PlyType::invalid;
}

std::size_t ply_size(PlyType t) {
    switch (t) {
        case PlyType::i8: case PlyType::u8: return 1;
        case PlyType::i16: case PlyType::u16: return 2;
        case PlyType::f64: return 8;
        default: return 4;
    }
}

bool ply_integer(PlyType t) { return t != PlyType::f32 && t != PlyType::f64; }

template <class T>
double ply_load_as(const char* p, bool big_endian) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, p, sizeof(T));
    if (big_endian) std::reverse(b, b + sizeof(T));
    T v;
    std::memcpy(&v, b, sizeof(T));
    return static_cast<double>(v);
}

double ply_load(PlyType t, const char* p, bool big_endian) {
    switch (t) {
        case PlyType::i8: return ply_load_as<std::int8_t>(p, big_endian);
        case PlyType::u8: return ply_load_as<std::uint8_t>(p, big_endian);
        case PlyType::i16: return ply_load_as<std::int16_t>(p, big_endian);
        case PlyType::u16: return ply_load_as<std::uint16_t>(p, big_endian);
        case PlyType::i32: return ply_load_as<std::int32_t>(p, big_endian);
        case PlyType::u32: return ply_load_as<std::uint32_t>(p, big_endian);
        case PlyType::f32: return ply_load_as<float>(p, big_endian);
        default: return ply_load_as<double>(p, big_endian);
    }
}

struct PlyProperty {
    std::string name;
    PlyType type = PlyType::invalid;        // a list's item type
    PlyType count_type = PlyType::invalid;  // lists only
    bool list = false;
};

struct PlyElement {
    std::string name;
    std::uint64_t count = 0;
    std::vector<PlyProperty> properties;
    // Least bytes of one element in a binary body (lists of no item).
    std::uint64_t min_bytes() const {
        std::uint64_t b = 0;
        for (const auto& p : properties) b += ply_size(p.list ? p.count_type : p.type);
        return b;
    }
    bool has_faces() const { return name == "face" || name == "tristrips"; }
};

// Element and property names as assimp reads them: a letter or '_' first (it read
// "99999999999999999999999999face 24" as an element of 10^26 entries), then letters, digits, '_', '-'.
bool ply_name(std::string_view n) {
    if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> w;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        const std::size_t b = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
        if (i > b) w.push_back(line.substr(b, i - b));
    }
    return w;
}

class PlyCheck {
public:
    PlyCheck(const fs::path& file, std::string_view bytes) : m_file(file), m_bytes(bytes) {}

    void run() {
        parse_header();
        const std::uint64_t body = m_bytes.size() - m_body;
        // Every count times the least one element takes must fit (before walking anything).
        long double need = 0.0L;
        const PlyElement* largest = nullptr;
        for (const auto& e : m_elements) {
            need += static_cast<long double>(e.count) * (m_binary ? static_cast<long double>(e.min_bytes()) : 2.0L);
            if (!largest || e.count > largest->count) largest = &e;
        }
        if (need > static_cast<long double>(body))
            fail(m_file, fmt::format("truncated or corrupt PLY: the header claims {} '{}' elements; its counts need at "
                                     "least {:.0Lf} bytes, the file has {}",
                                     largest->count, largest->name, need, body));
        if (m_binary) walk_binary();
        else walk_ascii();
    }

private:
    [[noreturn]] void corrupt(const std::string& what) const { fail(m_file, "corrupt PLY: " + what); }

    void parse_header() {
        std::size_t at = 0;
        int line_no = 0;
        bool format = false;
        for (;;) {
            const std::size_t nl = m_bytes.find('\n', at);
            if (nl == std::string_view::npos || ++line_no > 10000) corrupt("no end_header");
            const std::string_view line = m_bytes.substr(at, nl - at);
            at = nl + 1;
            const auto w = words(line);
            if (line_no == 1) {
                if (w.size() != 1 || lower(std::string(w[0])) != "ply") corrupt("the first line is not 'ply'");
                continue;
            }
            if (w.empty()) {
                if (line_no == 2) corrupt("the second line must be the only 'format' line");
                continue;
            }
            if (w[0] == "comment" || w[0] == "obj_info") {
                if (line_no == 2) corrupt("the second line must be the only 'format' line");
                continue;
            }
            // assimp reads the format from the second line alone (a second 'format' line, ASCII after
            // binary, made it read list counts of gigabytes from text).
            if ((line_no == 2) != (w[0] == "format")) corrupt("the second line must be the only 'format' line");
            if (w[0] == "format") {
                if (w.size() != 3) corrupt("expected 'format ascii|binary_little_endian|binary_big_endian 1.0'");
                if (w[1] == "ascii") m_binary = false;
                else if (w[1] == "binary_little_endian") m_binary = true, m_big_endian = false;
                else if (w[1] == "binary_big_endian") m_binary = true, m_big_endian = true;
                else corrupt(fmt::format("format '{}'; allowed: ascii, binary_little_endian, binary_big_endian", excerpt(w[1])));
                format = true;
            } else if (w[0] == "element") {
                if (w.size() != 3) corrupt(fmt::format("line {}: expected 'element NAME COUNT'", line_no));
                if (!ply_name(w[1])) corrupt(fmt::format("line {}: element name '{}'; allowed: a letter, then letters, digits, '_'", line_no, excerpt(w[1])));
                PlyElement e;
                e.name = std::string(w[1]);
                const auto [end, ec] = std::from_chars(w[2].data(), w[2].data() + w[2].size(), e.count);
                if (ec != std::errc() || end != w[2].data() + w[2].size())
                    fail(m_file, fmt::format("corrupt PLY header: 'element {} {}'", excerpt(w[1]), excerpt(w[2])));
                m_elements.push_back(std::move(e));
            } else if (w[0] == "property") {
                if (m_elements.empty()) corrupt(fmt::format("line {}: a property before any element", line_no));
                PlyProperty p;
                if (w.size() >= 2 && w[1] == "list") {
                    if (w.size() != 5) corrupt(fmt::format("line {}: expected 'property list COUNT_TYPE TYPE NAME'", line_no));
                    p.list = true;
                    p.count_type = ply_type(w[2]);
                    p.type = ply_type(w[3]);
                    p.name = std::string(w[4]);
                    if (p.count_type == PlyType::invalid || !ply_integer(p.count_type))
                        corrupt(fmt::format("line {}: list count type '{}'; allowed: an integer type", line_no, excerpt(w[2])));
                    if (p.type == PlyType::invalid) corrupt(fmt::format("line {}: unknown type '{}'", line_no, excerpt(w[3])));
                } else {
                    if (w.size() != 3) corrupt(fmt::format("line {}: expected 'property TYPE NAME'", line_no));
                    p.type = ply_type(w[1]);
                    p.name = std::string(w[2]);
                    if (p.type == PlyType::invalid) corrupt(fmt::format("line {}: unknown type '{}'", line_no, excerpt(w[1])));
                }
                if (!ply_name(p.name))
                    corrupt(fmt::format("line {}: property name '{}'; allowed: a letter, then letters, digits, '_'", line_no,
                                        excerpt(p.name)));
                m_elements.back().properties.push_back(std::move(p));
            } else if (w[0] == "end_header") {
                if (!format) corrupt("no 'format' line");
                m_body = at;
                break;
            } else {
                corrupt(fmt::format("line {}: unexpected '{}' in the header", line_no, excerpt(w[0])));
            }
        }
        // assimp's PLY reader sizes its arrays from the first element of a name and fills them from
        // every one (two 'vertex' elements wrote past its vertex array), and reads coordinates and
        // indices with no regard for their shape: only the layouts it handles pass.
        for (std::size_t i = 0; i < m_elements.size(); ++i) {
            const PlyElement& e = m_elements[i];
            for (std::size_t j = 0; j < i; ++j)
                if (m_elements[j].name == e.name) corrupt(fmt::format("element '{}' is declared twice", excerpt(e.name)));
            if (e.name == "vertex") m_vertices = e.count;
            if (e.count > 0 && e.properties.empty())
                corrupt(fmt::format("element '{}' has {} entries but no property", excerpt(e.name), e.count));
            for (std::size_t k = 0; k < e.properties.size(); ++k) {
                const PlyProperty& p = e.properties[k];
                for (std::size_t q = 0; q < k; ++q)
                    if (e.properties[q].name == p.name)
                        corrupt(fmt::format("property '{}' of element '{}' is declared twice", excerpt(p.name), excerpt(e.name)));
                if (e.name == "vertex" && p.list)
                    corrupt(fmt::format("vertex property '{}' is a list; allowed: numbers", excerpt(p.name)));
                if (e.has_faces() && (p.name == "vertex_indices" || p.name == "vertex_index") && !p.list)
                    corrupt(fmt::format("{} property '{}' is not a list", e.name, p.name));
            }
        }
    }

    static std::string excerpt(std::string_view s) {
        std::string t(s.substr(0, 40));
        for (char& c : t)
            if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
        return t;
    }

    static bool is_index(const PlyElement& e, const PlyProperty& p) {
        return e.has_faces() && p.list && (p.name == "vertex_indices" || p.name == "vertex_index");
    }

    void check_index(const PlyElement& e, std::uint64_t i, double v) const {
        // A tristrip's -1 restarts the strip.
        if (e.name == "tristrips" && v == -1.0) return;
        if (!(v >= 0.0 && v < static_cast<double>(m_vertices) && v == std::floor(v)))
            fail(m_file, fmt::format("corrupt PLY: {} {} uses vertex {}, but the file has {} vertices (0 to {})", e.name, i,
                                     v, m_vertices, m_vertices == 0 ? 0 : m_vertices - 1));
    }

    void walk_binary() const {
        const char* d = m_bytes.data();
        std::uint64_t pos = m_body;
        const std::uint64_t n = m_bytes.size();
        auto truncated = [&](const PlyElement& e, std::uint64_t i) {
            fail(m_file, fmt::format("truncated or corrupt PLY: the file ends in {} {} of {} ({} bytes)", e.name, i, e.count, n));
        };
        for (const auto& e : m_elements) {
            // Elements without lists have one size: check them at once.
            bool fixed = true;
            for (const auto& p : e.properties) fixed = fixed && !p.list;
            if (fixed) {
                const std::uint64_t bytes = e.count * e.min_bytes();  // the need check above bounds it
                if (bytes > n - pos) truncated(e, (n - pos) / e.min_bytes());
                pos += bytes;
                continue;
            }
            for (std::uint64_t i = 0; i < e.count; ++i) {
                for (const auto& p : e.properties) {
                    if (!p.list) {
                        const std::size_t s = ply_size(p.type);
                        if (s > n - pos) truncated(e, i);
                        pos += s;
                        continue;
                    }
                    const std::size_t cs = ply_size(p.count_type), is = ply_size(p.type);
                    if (cs > n - pos) truncated(e, i);
                    const double c = ply_load(p.count_type, d + pos, m_big_endian);
                    pos += cs;
                    if (c < 0) corrupt(fmt::format("{} {}: a list of {} items", e.name, i, c));
                    const auto items = static_cast<std::uint64_t>(c);
                    if (items > (n - pos) / is) truncated(e, i);
                    if (is_index(e, p))
                        for (std::uint64_t k = 0; k < items; ++k) check_index(e, i, ply_load(p.type, d + pos + k * is, m_big_endian));
                    pos += items * is;
                }
            }
        }
        if (pos != n)
            fail(m_file, fmt::format("corrupt PLY: its elements end at byte {}, but the file has {} bytes (a binary PLY must end "
                                     "with its last element)",
                                     pos, n));
    }

    void walk_ascii() const {
        std::size_t at = m_body;
        std::uint64_t line_no = 0;
        const std::size_t n = m_bytes.size();
        for (const auto& e : m_elements) {
            for (std::uint64_t i = 0; i < e.count; ++i) {
                // The next non-empty line (assimp skips empty ones).
                std::vector<std::string_view> w;
                while (w.empty()) {
                    if (at >= n)
                        fail(m_file, fmt::format("truncated PLY: the file ends before {} {} of {}", e.name, i, e.count));
                    std::size_t nl = m_bytes.find('\n', at);
                    if (nl == std::string_view::npos) nl = n;
                    w = words(m_bytes.substr(at, nl - at));
                    at = nl + 1;
                    ++line_no;
                }
                std::size_t k = 0;
                auto value = [&](bool integer) -> double {
                    if (k >= w.size())
                        fail(m_file, fmt::format("truncated or corrupt PLY: {} {} (body line {}) has too few values", e.name,
                                                 i, line_no));
                    std::string_view t = w[k++];
                    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
                    double v = 0;
                    if (integer) {
                        long long q = 0;
                        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), q);
                        if (ec != std::errc() || end != t.data() + t.size())
                            corrupt(fmt::format("{} {} (body line {}): '{}' is not a whole number", e.name, i, line_no, excerpt(t)));
                        v = static_cast<double>(q);
                    } else {
                        const auto [end, ec] = io::from_chars_double(t.data(), t.data() + t.size(), v);
                        if ((ec != std::errc() && ec != std::errc::result_out_of_range) || end != t.data() + t.size())
                            corrupt(fmt::format("{} {} (body line {}): '{}' is not a number", e.name, i, line_no, excerpt(t)));
                    }
                    return v;
                };
                for (const auto& p : e.properties) {
                    if (!p.list) {
                        (void)value(false);
                        continue;
                    }
                    const double c = value(true);
                    if (c < 0) corrupt(fmt::format("{} {}: a list of {} items", e.name, i, c));
                    if (c > static_cast<double>(w.size() - k))
                        fail(m_file, fmt::format("truncated or corrupt PLY: {} {} (body line {}) lists {} items, the line has {}",
                                                 e.name, i, line_no, c, w.size() - k));
                    for (std::uint64_t q = 0; q < static_cast<std::uint64_t>(c); ++q) {
                        const double v = value(is_index(e, p));
                        if (is_index(e, p)) check_index(e, i, v);
                    }
                }
            }
        }
    }

    fs::path m_file;
    std::string_view m_bytes;
    std::vector<PlyElement> m_elements;
    std::size_t m_body = 0;
    std::uint64_t m_vertices = 0;
    bool m_binary = false, m_big_endian = false;
};

// Binary glTF (GLB): assimp allocates the chunk lengths its header claims before reading them (a
// 600-byte file claiming a 2 GB JSON chunk). The declared length must be the file's, and every
// chunk must fit in it (glTF 2: 12-byte header, then length + type + data chunks; glTF 1: a 20-byte
// header with the content's length).
void check_glb(const fs::path& file, std::string_view bytes) {
    auto u32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, 4);
        return v;
    };
    const std::uint64_t size = bytes.size();
    if (size < 20) fail(file, fmt::format("truncated GLB: {} bytes, less than its header", size));
    const std::uint32_t version = u32(4), length = u32(8);
    if (length != size)
        fail(file, fmt::format("truncated or corrupt GLB: the header claims {} bytes, the file has {}", length, size));
    if (version == 1) {
        if (u32(12) > size - 20)
            fail(file, fmt::format("truncated or corrupt GLB: the header claims {} bytes of content, the file has {}", u32(12),
                                   size - 20));
        return;
    }
    for (std::uint64_t at = 12; at < size;) {
        if (size - at < 8) fail(file, fmt::format("truncated GLB: a chunk header at byte {} is cut off", at));
        const std::uint32_t chunk = u32(at);
        if (chunk > size - at - 8)
            fail(file, fmt::format("truncated or corrupt GLB: the chunk at byte {} claims {} bytes, {} are left", at, chunk,
                                   size - at - 8));
        at += 8 + std::uint64_t(chunk);
    }
}

void check_header(const fs::path& file, std::string_view bytes) {
    if (bytes.empty()) fail(file, "the file is empty");
    const std::string ext = lower(file.extension().string());
    if (ext == ".stl") check_stl(file, bytes);
    if (ext == ".ply" || lower(std::string(bytes.substr(0, 3))) == "ply") PlyCheck(file, bytes).run();
    if (ext == ".glb" || bytes.substr(0, 4) == "glTF") check_glb(file, bytes);
}

// ---- assimp's view of the files -------------------------------------------------------------------

// Bytes in memory as an assimp stream (shared: assimp may open the model more than once).
class MemoryStream final : public Assimp::IOStream {
public:
    explicit MemoryStream(std::shared_ptr<const std::string> bytes) : m_bytes(std::move(bytes)) {}
    size_t Read(void* buffer, size_t size, size_t count) override {
        if (size == 0 || count == 0) return 0;
        const size_t n = std::min(count, (m_bytes->size() - m_pos) / size);
        if (n) std::memcpy(buffer, m_bytes->data() + m_pos, n * size);
        m_pos += n * size;
        return n;
    }
    size_t Write(const void*, size_t, size_t) override { return 0; }
    aiReturn Seek(size_t offset, aiOrigin origin) override {
        size_t to;
        if (origin == aiOrigin_SET) to = offset;
        else if (origin == aiOrigin_CUR) to = m_pos + offset;
        else if (origin == aiOrigin_END) to = m_bytes->size() - offset;
        else return aiReturn_FAILURE;
        if (to > m_bytes->size() || (origin == aiOrigin_END && offset > m_bytes->size())) return aiReturn_FAILURE;
        m_pos = to;
        return aiReturn_SUCCESS;
    }
    size_t Tell() const override { return m_pos; }
    size_t FileSize() const override { return m_bytes->size(); }
    void Flush() override {}

private:
    std::shared_ptr<const std::string> m_bytes;
    size_t m_pos = 0;
};

// What ConfinedIO serves and what it refused. Outlives the importer (which owns the IOSystem).
struct ModelSource {
    fs::path model;                              // the model's path as given (names it in messages)
    std::shared_ptr<const std::string> bytes;    // the model, read already
    bool side_files = true;                      // false: from memory, side files are not found
    ModelFileOptions options;
    std::string refusal;                         // the first side file refused (an InputError's text)
};

// The model's bytes, and its side files through InputFile and referenced_path: never a FIFO, a
// device or a folder, never outside the model's folder unless allowed, never larger than allowed. A
// side file that does not exist is "not found" for assimp (it warns about a missing .mtl and goes on);
// one that is refused is recorded and reported after the import, as one line naming both files.
class ConfinedIO final : public Assimp::IOSystem {
public:
    explicit ConfinedIO(ModelSource& src) : m_src(src), m_name(src.model.string()) {}

    // Importers probe candidate names with Exists (assimp's OBJ reader tries "m/m/x.mtl" and "m//x.mtl"
    // for "m/x.mtl"): a name outside the folder is quietly "not there"; only opening one is refused.
    bool Exists(const char* file) const override {
        if (!file) return false;
        if (m_name == file) return true;
        const auto path = resolve(file, false);
        std::error_code ec;
        return path && fs::exists(*path, ec);
    }
    char getOsSeparator() const override { return '/'; }
    Assimp::IOStream* Open(const char* file, const char* mode) override {
        if (!file || (mode && (std::strchr(mode, 'w') || std::strchr(mode, 'a') || std::strchr(mode, '+'))))
            return nullptr;
        if (m_name == file) return new MemoryStream(m_src.bytes);
        const auto path = resolve(file, true);
        if (!path) return nullptr;
        try {
            auto f = io::InputFile::open_existing(*path);
            if (!f) return nullptr;
            return new MemoryStream(std::make_shared<const std::string>(f->read_all(m_src.options.max_file_bytes, "the side file")));
        } catch (const InputError& e) {
            refuse(fmt::format("{}: the file it names, {}", m_src.model.string(), e.what()));
            return nullptr;
        }
    }
    void Close(Assimp::IOStream* stream) override { delete stream; }
    bool ComparePaths(const char* a, const char* b) const override { return a && b && std::strcmp(a, b) == 0; }

private:
    // assimp names a side file by the model's folder joined with the reference as written in the
    // model ("models/" + "cup.mtl"); the reference is what is confined.
    std::optional<fs::path> resolve(const char* file, bool record) const {
        if (!m_src.side_files) return std::nullopt;
        std::string ref(file);
        const std::string folder = m_src.model.parent_path().string();
        if (!folder.empty() && ref.size() > folder.size() && ref.compare(0, folder.size(), folder) == 0 &&
            (ref[folder.size()] == '/' || folder.back() == '/'))
            ref.erase(0, folder.size() + (folder.back() == '/' ? 0 : 1));
        try {
            return io::referenced_path(m_src.model, ref, m_src.options.allow_outside_references);
        } catch (const InputError& e) {
            if (record) refuse(e.what());
            return std::nullopt;
        }
    }
    void refuse(const std::string& why) const {
        if (m_src.refusal.empty()) m_src.refusal = why;
    }

    ModelSource& m_src;
    std::string m_name;
};

// Only the importers that claim the file's extension stay: when they all decline a file, assimp would
// otherwise try every importer it has on the bytes (a 22-byte ".gltf" of text went to a reader of
// another format that read past its buffer). A model is read as what its name says it is.
void keep_importers_of(Assimp::Importer& importer, const fs::path& file) {
    const std::string ext = lower(file.extension().string());
    const std::string want = ext.empty() ? std::string() : ext.substr(1);
    std::vector<Assimp::BaseImporter*> others;
    bool any = false;
    for (std::size_t i = 0; i < importer.GetImporterCount(); ++i) {
        const aiImporterDesc* d = importer.GetImporterInfo(i);
        bool claims = false;
        if (d && d->mFileExtensions && !want.empty()) {
            const std::string list = d->mFileExtensions;
            std::size_t at = 0;
            while (at < list.size()) {
                const std::size_t end = std::min(list.find(' ', at), list.size());
                claims = claims || lower(list.substr(at, end - at)) == want;
                at = end + 1;
            }
        }
        if (claims) any = true;
        else others.push_back(importer.GetImporter(i));
    }
    if (!any)
        fail(file, fmt::format("'{}' is not a model format eddy reads; allowed: .obj, .stl, .ply, .gltf, .glb, .fbx, .dae "
                               "and the other extensions of assimp's importers",
                               ext.empty() ? std::string("(no extension)") : ext));
    for (Assimp::BaseImporter* imp : others)
        if (imp && importer.UnregisterLoader(imp) == aiReturn_SUCCESS) delete imp;  // no longer the importer's
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

// What an importer made, before any post-processing step follows it: every pointer and count a step
// reads, every face index below its mesh's vertex count, and the primitive types as the faces are.
void check_imported(const fs::path& file, aiScene* sc) {
    if (sc->mNumMeshes && !sc->mMeshes) fail(file, "the model's meshes are missing");
    for (unsigned mi = 0; mi < sc->mNumMeshes; ++mi) {
        aiMesh* am = sc->mMeshes[mi];
        if (!am || (am->mNumVertices && !am->mVertices) || (am->mNumFaces && !am->mFaces))
            fail(file, fmt::format("mesh {} of the model is incomplete", mi));
        unsigned types = 0;
        for (unsigned f = 0; f < am->mNumFaces; ++f) {
            const aiFace& face = am->mFaces[f];
            if (face.mNumIndices == 0 || !face.mIndices) fail(file, fmt::format("face {} of mesh {} has no vertices", f, mi));
            for (unsigned k = 0; k < face.mNumIndices; ++k)
                if (face.mIndices[k] >= am->mNumVertices)
                    fail(file, fmt::format("face {} of mesh {} uses vertex {}, but the mesh has {} vertices", f, mi,
                                           face.mIndices[k], am->mNumVertices));
            types |= face.mNumIndices == 1   ? aiPrimitiveType_POINT
                     : face.mNumIndices == 2 ? aiPrimitiveType_LINE
                     : face.mNumIndices == 3 ? aiPrimitiveType_TRIANGLE
                                             : aiPrimitiveType_POLYGON;
        }
        am->mPrimitiveTypes = types | (am->mPrimitiveTypes & aiPrimitiveType_NGONEncodingFlag);
    }
}

std::string show(const std::array<double, 3>& v) {
    if (v[0] == v[1] && v[1] == v[2]) return fmt::format("{:g}", v[0]);
    return fmt::format("[{:g}, {:g}, {:g}]", v[0], v[1], v[2]);
}

Mesh<3> import(ModelSource& src, const Placement& where_to) {
    const fs::path& file = src.model;
    check_header(file, *src.bytes);
    Assimp::Importer importer;
    importer.SetIOHandler(new ConfinedIO(src));  // the importer owns it
    keep_importers_of(importer, file);
    // Points and lines are dropped (SortByPType + the removal flag); polygons become triangles; all
    // meshes land in one frame with their node transforms applied.
    importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    // Two passes. The import alone first, with assimp's ValidateDataStructure, then eddy's own checks
    // of what the importer made (pointers, counts, every face index, each mesh's primitive types
    // recomputed from its faces): assimp's post-processing trusts all of it (a PLY whose vertices
    // lack y reported polygons with only triangles, and Triangulate's assert aborted eddy). Only then
    // the post-processing.
    const aiScene* sc = importer.ReadFile(file.string(), aiProcess_ValidateDataStructure);
    if (!src.refusal.empty()) throw InputError(src.refusal);
    auto failed = [&] {
        std::string why = importer.GetErrorString();
        std::replace(why.begin(), why.end(), '\n', ' ');
        std::replace(why.begin(), why.end(), '\r', ' ');
        if (why.size() > 300) why = why.substr(0, 300) + "...";
        if (why.find("No output meshes") != std::string::npos || why.find("no meshes") != std::string::npos ||
            why.find("contains no faces") != std::string::npos)
            fail(file, fmt::format("the model has no triangles ({})", why));
        fail(file, fmt::format("cannot read the model: {}", why.empty() ? "unknown format" : why));
    };
    if (!sc) failed();
    check_imported(file, const_cast<aiScene*>(sc));
    // Vertices are joined below by position: assimp's own joining also compares normals (an STL's
    // corners would stay apart) and lets a NaN vertex vanish into another.
    sc = importer.ApplyPostProcessing(aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_PreTransformVertices);
    if (!sc) failed();
    Mesh<3> m;
    const auto R = rotation(where_to.rotate_deg);
    std::uint64_t faces = 0, vertices = 0;
    if (sc->mNumMeshes && !sc->mMeshes) fail(file, "the model's meshes are missing");
    for (unsigned mi = 0; mi < sc->mNumMeshes; ++mi) {
        const aiMesh* am = sc->mMeshes[mi];
        if (!am || (am->mNumVertices && !am->mVertices) || (am->mNumFaces && !am->mFaces))
            fail(file, fmt::format("mesh {} of the model is incomplete", mi));
        faces += am->mNumFaces;
        vertices += am->mNumVertices;
    }
    if (vertices >= std::numeric_limits<std::uint32_t>::max())
        fail(file, fmt::format("{} vertices; allowed: fewer than 2^32", vertices));
    m.cells.reserve(faces);
    m.vertices.reserve(vertices);
    // Placed coordinates stay within +-1e18 m: geometry is float, and edge lengths, areas and the
    // cleaning's box diagonal square them (1e30 m vertices are floats, but their squares are not: every
    // triangle then read as degenerate, "no triangle left").
    constexpr double kMax = 1e18;
    for (unsigned mi = 0; mi < sc->mNumMeshes; ++mi) {
        const aiMesh* am = sc->mMeshes[mi];
        const auto base = static_cast<std::uint32_t>(m.vertices.size());
        for (unsigned v = 0; v < am->mNumVertices; ++v) {
            const aiVector3D& p = am->mVertices[v];
            if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
                fail(file, fmt::format("vertex {} of mesh {} is not finite ({} {} {})", v, mi, p.x, p.y, p.z));
            const double q[3] = {p.x * where_to.scale[0], p.y * where_to.scale[1], p.z * where_to.scale[2]};
            double w[3];
            for (int a = 0; a < 3; ++a) {
                const double turned = R[a][0] * q[0] + R[a][1] * q[1] + R[a][2] * q[2];
                w[a] = turned + where_to.translate[a];
                if (!(std::fabs(w[a]) <= kMax)) {
                    // The key that put it there: the scale when the turned model alone is out of range.
                    const bool scaled = !(std::fabs(turned) <= kMax);
                    fail(file, fmt::format("{} {} puts vertices beyond float range (vertex {} of mesh {}, ({:g} {:g} {:g}) "
                                           "in the file, lands at {:g} on axis {}); allowed: a placement that keeps the "
                                           "model within +-{:g} m (distances and areas are squared in float)",
                                           scaled ? "scale" : "translate", show(scaled ? where_to.scale : where_to.translate),
                                           v, mi, p.x, p.y, p.z, w[a], "xyz"[a], kMax));
                }
            }
            m.vertices.push_back(Vec3{{static_cast<float>(w[0]), static_cast<float>(w[1]), static_cast<float>(w[2])}});
        }
        for (unsigned f = 0; f < am->mNumFaces; ++f) {
            const aiFace& face = am->mFaces[f];
            if (face.mNumIndices != 3) continue;
            if (!face.mIndices) fail(file, fmt::format("face {} of mesh {} has no indices", f, mi));
            for (int k = 0; k < 3; ++k)
                if (face.mIndices[k] >= am->mNumVertices)
                    fail(file, fmt::format("face {} of mesh {} uses vertex {}, but the mesh has {} vertices", f, mi,
                                           face.mIndices[k], am->mNumVertices));
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

}  // namespace

Mesh<3> read_triangle_mesh(const fs::path& file, const Placement& where_to, const ModelFileOptions& options) {
    ModelSource src;
    src.model = file;
    src.options = options;
    src.bytes = std::make_shared<const std::string>(io::read_regular_file(file, options.max_file_bytes, "the model"));
    return import(src, where_to);
}

Mesh<3> read_triangle_mesh_from_memory(std::string bytes, const fs::path& name, const Placement& where_to) {
    ModelSource src;
    src.model = name;
    src.side_files = false;
    src.bytes = std::make_shared<const std::string>(std::move(bytes));
    return import(src, where_to);
}

}  // namespace eddy
