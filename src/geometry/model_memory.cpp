// What reading a model will cost, from its header and size alone (issue 29, item 5): a scene's model is
// read by parse_scene, before make_simulation counts anything, and a 200 MB binary STL took 1.1 GB there.
// estimate_model_memory() is called before the model is read; it reads at most the header (a binary STL's
// count, a PLY's element counts, a glTF's accessors) or, for the formats without counts (OBJ, ASCII
// STL), streams the file once through a 1 MB buffer counting lines: the time of a read, none of its memory.
//
// The model, per format (bytes; T triangles, V vertices the file declares, S the file's size), fitted to
// peak RSS measured with /usr/bin/time -v (docs/scenes.md, "Memory", has the commands and the table):
//   file     the model's bytes, held whole while assimp reads them:                S
//   assimp   binary STL 210 T (3 corners and 3 normals per triangle, faces);
//            ASCII STL 1.1 S + 200 T (its own copy of the text);
//            OBJ 240 T + 12 V; PLY, glTF, GLB 66 T + 24 V; others 10 S (not measured: a guess, generous
//            for the binary formats);
//   eddy     the corners copied out of assimp's meshes (12 each: 3 T for STL and OBJ, V for the indexed
//            formats), their sort and remap (8 each), the triangles (12 T), while assimp's scene lives;
//            then MeshShape's cleaning and hierarchy: 360 T at its peak (340 measured on a sphere of
//            1 M triangles, shared or separate corners).
// The peak is the larger of (file + assimp + eddy's copy) and (eddy's processing).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/memory_budget.hpp"

namespace eddy {

namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The first `n` bytes of the file (fewer if it is shorter).
std::string head_bytes(io::InputFile& f, std::size_t n) {
    std::string s(static_cast<std::size_t>(std::min<std::uint64_t>(n, f.size())), '\0');
    std::size_t got = 0;
    while (got < s.size()) {
        const std::size_t k = f.read(s.data() + got, s.size() - got);
        if (k == 0) break;
        got += k;
    }
    s.resize(got);
    return s;
}

// Counts of a text model, streamed: OBJ "v" lines and the triangles of its "f" lines (a face of k
// corners is k - 2 triangles), ASCII STL "vertex" lines.
struct TextCounts {
    double v_lines = 0, triangles = 0, stl_vertices = 0;
};

TextCounts count_text(io::InputFile& f) {
    TextCounts c;
    std::string buf(1 << 20, '\0');
    // Per line: the first word (up to 8 characters), then, on face lines, the words after it.
    enum { kStart, kWord, kRest } state = kStart;
    char word[9];
    int wlen = 0;
    bool face = false, in_token = false;
    double tokens = 0;
    auto end_line = [&] {
        if (face && tokens > 2) c.triangles += tokens - 2;
        state = kStart;
        wlen = 0;
        face = in_token = false;
        tokens = 0;
    };
    auto end_word = [&] {
        const std::string_view w(word, static_cast<std::size_t>(wlen));
        if (w == "v") c.v_lines += 1;
        else if (w == "vertex") c.stl_vertices += 1;
        face = w == "f";
        state = kRest;
    };
    while (const std::size_t n = f.read(buf.data(), buf.size())) {
        for (std::size_t i = 0; i < n; ++i) {
            const char ch = buf[i];
            if (ch == '\n' || ch == '\r') {
                if (state == kWord) end_word();
                end_line();
                continue;
            }
            const bool space = ch == ' ' || ch == '\t';
            if (state == kStart) {
                if (space) continue;
                state = kWord;
            }
            if (state == kWord) {
                if (space) end_word();
                else if (wlen < 8) word[wlen++] = ch;
                else wlen = 8, word[7] = '\0';  // longer than any keyword counted here
                continue;
            }
            if (face) {
                if (!space && !in_token) tokens += 1;
                in_token = !space;
            }
        }
    }
    if (state == kWord) end_word();
    end_line();
    return c;
}

// A PLY header's vertex and face counts (0 when absent).
void ply_counts(const std::string& head, double& vertices, double& faces) {
    std::size_t at = 0;
    while (at < head.size()) {
        const std::size_t nl = head.find('\n', at);
        const std::string_view line = std::string_view(head).substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? head.size() : nl + 1;
        if (line.starts_with("end_header")) break;
        if (!line.starts_with("element ")) continue;
        const std::string_view rest = line.substr(8);
        const std::size_t sp = rest.find(' ');
        if (sp == std::string_view::npos) continue;
        double n = 0;
        try {
            n = std::stod(std::string(rest.substr(sp + 1)));
        } catch (...) {
            continue;
        }
        if (rest.substr(0, sp) == "vertex") vertices = n;
        else if (rest.substr(0, sp) == "face" || rest.substr(0, sp) == "tristrips") faces = n;
    }
}

// A glTF document's triangles and vertices (its meshes' primitives: POSITION accessor counts, index
// accessor counts / 3) and the bytes of its buffers that live in other files.
void gltf_counts(const nlohmann::json& doc, double& vertices, double& triangles, double& external) {
    const auto accessors = doc.value("accessors", nlohmann::json::array());
    auto count = [&](const nlohmann::json& index) -> double {
        if (!index.is_number_unsigned() || index.get<std::size_t>() >= accessors.size()) return 0.0;
        const auto& a = accessors[index.get<std::size_t>()];
        return a.is_object() && a.contains("count") && a["count"].is_number() ? a["count"].get<double>() : 0.0;
    };
    for (const auto& m : doc.value("meshes", nlohmann::json::array())) {
        if (!m.is_object()) continue;
        for (const auto& p : m.value("primitives", nlohmann::json::array())) {
            if (!p.is_object()) continue;
            double v = 0.0;
            if (p.contains("attributes") && p["attributes"].is_object() && p["attributes"].contains("POSITION"))
                v = count(p["attributes"]["POSITION"]);
            vertices += v;
            triangles += (p.contains("indices") ? count(p["indices"]) : v) / 3.0;
        }
    }
    for (const auto& b : doc.value("buffers", nlohmann::json::array())) {
        if (!b.is_object() || !b.contains("byteLength") || !b["byteLength"].is_number()) continue;
        const std::string uri = b.contains("uri") && b["uri"].is_string() ? b["uri"].get<std::string>() : "";
        if (!uri.empty() && uri.rfind("data:", 0) != 0) external += b["byteLength"].get<double>();
    }
}

}  // namespace

MemoryEstimate estimate_model_memory(const fs::path& file) {
    io::InputFile f(file);  // a FIFO or a folder is refused here, before a byte is read
    const double size = double(f.size());
    const std::string ext = lower(file.extension().string());
    const std::string head = head_bytes(f, 1 << 16);

    enum class Kind { stl_binary, stl_ascii, obj, ply, gltf, other } kind = Kind::other;
    double T = 0.0, V = 0.0, extra_file = 0.0;
    if (ext == ".stl") {
        std::uint32_t count = 0;
        if (head.size() >= 84) std::memcpy(&count, head.data() + 80, 4);
        if (head.size() >= 84 && 84.0 + 50.0 * count == size) {
            kind = Kind::stl_binary;
            T = count;
        } else if (head.rfind("solid", 0) == 0) {
            kind = Kind::stl_ascii;
        } else {
            // read_triangle_mesh refuses it; what it could cost is the count the size can hold.
            kind = Kind::stl_binary;
            T = std::max(0.0, std::floor((size - 84.0) / 50.0));
        }
    } else if (ext == ".obj") {
        kind = Kind::obj;
    } else if (ext == ".ply" || head.rfind("ply", 0) == 0) {
        kind = Kind::ply;
        ply_counts(head, V, T);
        // A header claiming more than the file holds is refused by read_triangle_mesh before reading.
        T = std::min(T, size);
        V = std::min(V, size);
    } else if (ext == ".gltf" || ext == ".glb") {
        kind = Kind::gltf;
        // GLB: 12-byte header, then the JSON chunk (length, "JSON", text); glTF: the file is the JSON.
        std::string json_text;
        if (head.size() >= 20 && head.compare(0, 4, "glTF") == 0 && head.compare(16, 4, "JSON") == 0) {
            std::uint32_t len = 0;
            std::memcpy(&len, head.data() + 12, 4);
            if (20.0 + len <= size && len <= head.size() - 20) json_text = head.substr(20, len);
        } else if (ext == ".gltf" && size <= double(head.size())) {
            json_text = head;
        }
        bool counted = false;
        if (!json_text.empty()) {
            try {
                gltf_counts(nlohmann::json::parse(json_text), V, T, extra_file);
                counted = true;
            } catch (const nlohmann::json::exception&) {
            }
        }
        if (!counted) {
            // No document to count from (a JSON over 64 kB, or broken): at least one triangle per 6
            // bytes of buffer (16-bit indices), one vertex per 12.
            T = size / 6.0;
            V = size / 12.0;
        }
    }
    if (kind == Kind::stl_ascii || kind == Kind::obj) {
        if (lseek(f.fd(), 0, SEEK_SET) != 0)
            throw InputError(fmt::format("{}: cannot read the model: {}", file.string(), std::strerror(errno)));
        const TextCounts c = count_text(f);
        if (kind == Kind::obj) {
            T = c.triangles;
            V = c.v_lines;
        } else {
            T = std::floor(c.stl_vertices / 3.0);
        }
    }

    const double held = size + extra_file;
    double assimp = 0.0, corners = 0.0;
    switch (kind) {
        case Kind::stl_binary: assimp = 210.0 * T; corners = 3.0 * T; break;
        case Kind::stl_ascii: assimp = 1.1 * size + 200.0 * T; corners = 3.0 * T; break;
        case Kind::obj: assimp = 240.0 * T + 12.0 * V; corners = 3.0 * T; break;
        case Kind::ply:
        case Kind::gltf: assimp = 66.0 * T + 24.0 * V; corners = V; break;
        case Kind::other: assimp = 10.0 * size; break;
    }
    const double copy = 32.0 * corners + 12.0 * T;
    const double reading = held + assimp + copy;
    const double processing = 360.0 * T;

    MemoryEstimate e;
    const std::string counts = T > 0.0 ? fmt::format(" {} triangles", format_count(T)) : "";
    if (reading >= processing) {
        e.add("model file", held);
        e.add(fmt::format("reading the model{}", counts), assimp + copy, T);
    } else {
        e.add(fmt::format("model{} (its cleaning and hierarchy)", counts), processing, T);
    }
    return e;
}

}  // namespace eddy
