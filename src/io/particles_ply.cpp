// Particle files: binary little-endian PLY point clouds.
#include "io/particle_files.hpp"

namespace eddy::io {

using namespace detail;

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
ParticleSet<D> read_ply(const std::filesystem::path& path, const ParticleReadOptions& options) {
    const std::string s = slurp(path, options.max_bytes, options.limit_origin);
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
    const RowColumns c = RowColumns::named(find);
    if (c.x < 0 || c.y < 0) throw input_error(path, "vertices need x and y properties (and z in 3D)");
    if (options.require_velocity && (c.v[0] < 0 || c.v[1] < 0))
        throw input_error(path, "vertices have no velocity properties vx, vy (and vz in 3D); they are needed here");

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
        set_row(p, i, vals, c, path, [&] { return binary ? fmt::format("vertex {}", i) : fmt::format("line {}", where_line); });
    }
    finish(p, path);
    return p;
}

#define EDDY_IO_INSTANTIATE(D) \
    template void write_ply<D>(const std::filesystem::path&, const ParticleSet<D>&); \
    template ParticleSet<D> read_ply<D>(const std::filesystem::path&, const ParticleReadOptions&);
EDDY_IO_INSTANTIATE(2)
EDDY_IO_INSTANTIATE(3)
#undef EDDY_IO_INSTANTIATE

}  // namespace eddy::io
