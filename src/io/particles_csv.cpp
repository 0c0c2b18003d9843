// Particle files: CSV (id,x,y[,z],vx,vy[,vz],density,pressure).
#include "io/particle_files.hpp"

namespace eddy::io {

using namespace detail;

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
ParticleSet<D> read_csv(const std::filesystem::path& path, const ParticleReadOptions& options) {
    const std::string s = slurp(path, options.max_bytes, options.limit_origin);
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
    const RowColumns c = RowColumns::named(col);
    if (c.x < 0 || c.y < 0)
        throw input_error(path, "line 1: the header must name the columns x and y (and z in 3D), got '{}'", header);
    if (options.require_velocity && (c.v[0] < 0 || c.v[1] < 0))
        throw input_error(path, "line 1: no velocity columns vx, vy (and vz in 3D) in '{}'; they are needed here", header);

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
        set_row(p, i, vals, c, path, [&] { return fmt::format("line {}", lineno); });
    }
    finish(p, path);
    return p;
}

#define EDDY_IO_INSTANTIATE(D) \
    template void write_csv<D>(const std::filesystem::path&, const ParticleSet<D>&); \
    template ParticleSet<D> read_csv<D>(const std::filesystem::path&, const ParticleReadOptions&);
EDDY_IO_INSTANTIATE(2)
EDDY_IO_INSTANTIATE(3)
#undef EDDY_IO_INSTANTIATE

}  // namespace eddy::io
