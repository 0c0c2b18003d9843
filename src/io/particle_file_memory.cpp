// What reading a particle file (a fluid of "shape": "file") will cost, before it is read (issue 29,
// item 5): its size, and the particles it holds counted without holding them - a PLY's header count, a
// .vtp's NumberOfPoints, a CSV's lines, streamed through a 1 MB buffer. The file's bytes alone already
// exceeding the budget is decided from its size, before the count streams anything.
//
// The model, per particle (bytes; D the dimension): the reader's ParticleSet (position, velocity,
// acceleration, density, pressure, id: 12 D + 12) grown by push_back up to twice that, and the scene's
// copy of positions and velocities (2 D doubles: 16 D); a 2D scene reading a 3D file (.vtp, .ply) first
// holds the 3D set (96 with its slack). Plus the file's bytes, read whole (twice for .vtp: the base64
// or appended data decoded next to the text). The simulation built from the particles is counted by
// estimate_memory(scene) with the actual neighbour counts of the positions (memory_estimate.cpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "eddy/input_file.hpp"
#include "io/number_text.hpp"
#include "eddy/memory_budget.hpp"

namespace eddy {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Lines of a text file (a last line without '\n' counts), streamed.
double count_lines(io::InputFile& f) {
    std::string buf(1 << 20, '\0');
    double lines = 0;
    char last = '\n';
    while (const std::size_t n = f.read(buf.data(), buf.size())) {
        lines += double(std::count(buf.data(), buf.data() + n, '\n'));
        last = buf[n - 1];
    }
    return lines + (last != '\n' ? 1.0 : 0.0);
}

// The sum of the NumberOfPoints="N" attributes of a file, streamed (chunks overlap by 64 bytes so a
// match across a boundary is seen once).
double count_vtp_points(io::InputFile& f) {
    constexpr std::string_view key = "NumberOfPoints=\"";
    constexpr std::size_t overlap = 64;
    std::string buf(1 << 20, '\0'), carry;
    double total = 0;
    bool more = true;
    while (more) {
        const std::size_t n = f.read(buf.data(), buf.size());
        more = n > 0;
        const std::string text = carry + buf.substr(0, n);
        const std::size_t limit = more && text.size() > overlap ? text.size() - overlap : (more ? 0 : text.size());
        for (std::size_t at = text.find(key); at != std::string::npos && at < limit; at = text.find(key, at + 1)) {
            double v = 0;
            const char* p = text.data() + at + key.size();
            io::from_chars_double(p, text.data() + text.size(), v);
            total += std::max(0.0, v);
        }
        carry = text.substr(std::min(limit, text.size()));
    }
    return total;
}

// A PLY header's vertex count, or -1 when the first 64 kB hold no "element vertex N".
double ply_vertices(const std::string& head) {
    const std::size_t at = head.find("\nelement vertex ");
    if (at == std::string::npos) return -1.0;
    double v = -1.0;
    const char* p = head.data() + at + 16;
    io::from_chars_double(p, head.data() + head.size(), v);
    return v;
}

}  // namespace

MemoryEstimate estimate_particle_file_memory(const std::filesystem::path& file, int dimension,
                                             const MemoryBudget& budget) {
    io::InputFile f(file);  // a FIFO or a folder is refused here, before a byte is read
    const double size = double(f.size());
    const std::string ext = lower(file.extension().string());
    MemoryEstimate e;
    const double text_copies = ext == ".vtp" ? 2.0 : 1.0;
    e.add(text_copies > 1.0 ? "particle file (twice: text and decoded)" : "particle file", text_copies * size);
    // The bytes alone do not fit: refused from the size, nothing streamed.
    if (!budget.unlimited() && text_copies * size > double(budget.limit_bytes)) return e;

    double n = 0.0;
    if (ext == ".csv") {
        n = std::max(0.0, count_lines(f) - 1.0);  // the header
    } else if (ext == ".ply") {
        std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(1 << 16, f.size())), '\0');
        std::size_t got = 0;
        while (got < head.size())
            if (const std::size_t k = f.read(head.data() + got, head.size() - got)) got += k;
            else break;
        head.resize(got);
        const double v = ply_vertices(head);
        // A count the file cannot hold is refused by the reader; at most one particle per byte is read.
        n = v >= 0.0 ? std::min(v, size) : size / 12.0;
    } else if (ext == ".vtp") {
        n = count_vtp_points(f);
    } else {
        return e;  // .pvtp: its pieces are bounded by their sizes when read, the particles counted after
    }
    const double D = dimension;
    double per = 2.0 * (12.0 * D + 12.0) + 16.0 * D;
    if (dimension == 2 && ext != ".csv") per += 96.0;
    e.add(fmt::format("reading {} particles", format_count(n)), n * per, n);
    return e;
}

}  // namespace eddy
