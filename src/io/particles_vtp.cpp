// Particle files: VTK XML PolyData (.vtp, binary appended).
#include <sys/stat.h>

#include <set>

#include "io/particle_files.hpp"

namespace eddy::io {

using namespace detail;

// ---- VTK XML PolyData -------------------------------------------------------------------------

template <int D>
void write_vtp(const std::filesystem::path& path, const ParticleSet<D>& p) {
    // Positions and velocities as three floats (2D: z = 0); the other fields as they are stored.
    auto xyz = [](const std::vector<Vec<D>>& v) {
        std::string b;
        b.reserve(v.size() * 12);
        for (const auto& x : v) {
            const float c[3] = {x[0], x[1], D == 3 ? x[D - 1] : 0.0f};
            b.append(reinterpret_cast<const char*>(c), sizeof(c));
        }
        return b;
    };
    const std::string points = xyz(p.position), velocity = xyz(p.velocity);
    const ImageArray fields[] = {
        {"velocity", "Float32", 3, velocity},
        {"density", "Float32", 1, bytes_of(std::span<const float>(p.density))},
        {"pressure", "Float32", 1, bytes_of(std::span<const float>(p.pressure))},
        {"id", "UInt32", 1, bytes_of(std::span<const std::uint32_t>(p.id))},
    };
    write_atomic(path, point_cloud(p.size(), points, fields, "density"));
}

namespace {

// A .vtp's bytes (read already: read_vtp, or a .pvtp's piece) to particles; `path` names it.
template <int D>
ParticleSet<D> parse_vtp(const std::string& s, const std::filesystem::path& path, bool require_velocity = false) {
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
    if (require_velocity && !named("velocity"))
        throw input_error(path, "no point array 'velocity' (3 components); it is needed here");
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

}  // namespace

template <int D>
ParticleSet<D> read_vtp(const std::filesystem::path& path, const ParticleReadOptions& options) {
    return parse_vtp<D>(slurp(path, options.max_bytes, options.limit_origin), path, options.require_velocity);
}

// ---- parallel VTK PolyData: one .vtp piece per process, listed by a .pvtp ---------------------

void write_pvtp(const std::filesystem::path& path, const std::vector<std::string>& pieces) {
    // The arrays as write_vtp declares them: ParaView checks the pieces against this list.
    std::string s = "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
                    "  <PPolyData GhostLevel=\"0\">\n"
                    "    <PPointData Scalars=\"density\" Vectors=\"velocity\">\n"
                    "      <PDataArray type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\"/>\n"
                    "      <PDataArray type=\"Float32\" Name=\"density\" NumberOfComponents=\"1\"/>\n"
                    "      <PDataArray type=\"Float32\" Name=\"pressure\" NumberOfComponents=\"1\"/>\n"
                    "      <PDataArray type=\"UInt32\" Name=\"id\" NumberOfComponents=\"1\"/>\n"
                    "    </PPointData>\n"
                    "    <PPoints>\n"
                    "      <PDataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\"/>\n"
                    "    </PPoints>\n";
    for (const auto& piece : pieces) s += fmt::format("    <Piece Source=\"{}\"/>\n", xml_escape(piece));
    s += "  </PPolyData>\n</VTKFile>\n";
    write_atomic(path, s);
}

template <int D>
ParticleSet<D> read_pvtp(const std::filesystem::path& path, const ParticleReadOptions& options) {
    const std::string s = slurp(path, options.max_bytes, options.limit_origin);
    const std::string_view sv = s;
    const Tag file = find_tag(sv, "VTKFile");
    if (!file || attribute(sv, file, "type").value_or("") != "PPolyData")
        throw input_error(path, "not a parallel VTK PolyData file (<VTKFile type=\"PPolyData\">)");
    // The pieces share the limit with the .pvtp: each is refused from its size, before it is read,
    // when it would take the files read so far beyond it (a 10 GB sparse piece costs no time).
    std::uint64_t left = options.max_bytes - std::min<std::uint64_t>(options.max_bytes, s.size());
    ParticleSet<D> all;
    int listed = 0;
    // Each piece once (by device and inode, so links to one file count as one): 100,000 <Piece>s naming
    // one 6 kB file read 650 MB before the duplicate ids were seen at the end.
    std::set<std::pair<dev_t, ino_t>> seen;
    for (Tag piece = find_tag(sv, "Piece", file.end); piece; piece = find_tag(sv, "Piece", piece.end)) {
        const auto source = attribute(sv, piece, "Source");
        if (!source || source->empty()) throw input_error(path, "a <Piece> without Source");
        ++listed;
        // Relative to the .pvtp's folder and confined to it (no absolute path, no '..', no link
        // leading out) unless allowed; opened without blocking, like every file from users.
        const std::filesystem::path f = referenced_path(path, *source, options.allow_outside_references);
        auto in = InputFile::open_existing(f);
        if (!in) throw input_error(f, "no such file (a piece of {})", path.string());
        struct stat st {};
        if (::fstat(in->fd(), &st) == 0 && !seen.emplace(st.st_dev, st.st_ino).second)
            throw input_error(path, "the piece '{}' is listed before (or is a link to a piece listed before); allowed: "
                                    "each piece once",
                              *source);
        const std::string bytes =
            in->read_all(left, fmt::format("the piece (with {} and the pieces before it; limit: {})", path.string(),
                                           options.limit_origin));
        left -= std::min<std::uint64_t>(left, bytes.size());
        // A process that held no particle wrote an empty piece.
        const Tag p = find_tag(std::string_view(bytes).substr(0, 4096), "Piece");
        if (p && attribute(bytes, p, "NumberOfPoints").value_or("") == "0") continue;
        const ParticleSet<D> part = parse_vtp<D>(bytes, f, options.require_velocity);
        const std::size_t at = all.size();
        all.resize(at + part.size());
        std::copy(part.position.begin(), part.position.end(), all.position.begin() + std::ptrdiff_t(at));
        std::copy(part.velocity.begin(), part.velocity.end(), all.velocity.begin() + std::ptrdiff_t(at));
        std::copy(part.density.begin(), part.density.end(), all.density.begin() + std::ptrdiff_t(at));
        std::copy(part.pressure.begin(), part.pressure.end(), all.pressure.begin() + std::ptrdiff_t(at));
        std::copy(part.id.begin(), part.id.end(), all.id.begin() + std::ptrdiff_t(at));
    }
    if (listed == 0) throw input_error(path, "no <Piece> listed");
    finish(all, path);  // ids unique across the pieces
    return all;
}

#define EDDY_IO_INSTANTIATE(D) \
    template void write_vtp<D>(const std::filesystem::path&, const ParticleSet<D>&); \
    template ParticleSet<D> read_vtp<D>(const std::filesystem::path&, const ParticleReadOptions&); \
    template ParticleSet<D> read_pvtp<D>(const std::filesystem::path&, const ParticleReadOptions&);
EDDY_IO_INSTANTIATE(2)
EDDY_IO_INSTANTIATE(3)
#undef EDDY_IO_INSTANTIATE

}  // namespace eddy::io
