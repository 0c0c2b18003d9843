// Whitewater files: frames/whitewater_NNNNN.vtp (VTK XML PolyData, raw appended, as the particles' .vtp)
// and .ply (binary), whitewater.pvd and whitewater.csv. Every file is written atomically (io::write_atomic).
#include <fmt/format.h>

#include "eddy/io.hpp"
#include "eddy/whitewater.hpp"
#include "io/vtk_xml.hpp"

namespace eddy {

namespace {

using io::detail::append_raw;

// x in the file's axes as three floats (2D: z = 0).
template <int D>
std::array<float, 3> file_xyz(const Vec<D>& x, UpAxis up) {
    if constexpr (D == 2) {
        (void)up;
        return {x[0], x[1], 0.0f};
    } else {
        const Vec3 t = to_file_axes(x, UpAxis::y, up);
        return {t[0], t[1], t[2]};
    }
}

}  // namespace

template <int D>
void write_whitewater_vtp(const std::filesystem::path& path, const Whitewater<D>& w, UpAxis up) {
    auto xyz = [&](const std::vector<Vec<D>>& v) {
        std::string b;
        b.reserve(v.size() * 12);
        for (const auto& x : v) {
            const auto c = file_xyz<D>(x, up);
            b.append(reinterpret_cast<const char*>(c.data()), sizeof(float) * 3);
        }
        return b;
    };
    const std::string points = xyz(w.position), velocity = xyz(w.velocity);
    using io::detail::bytes_of;
    const io::detail::ImageArray fields[] = {
        {"type", "UInt8", 1, bytes_of(std::span<const std::uint8_t>(w.type))},
        {"velocity", "Float32", 3, velocity},
        {"lifetime", "Float32", 1, bytes_of(std::span<const float>(w.lifetime))},
        {"id", "UInt32", 1, bytes_of(std::span<const std::uint32_t>(w.id))},
    };
    io::write_atomic(path, io::detail::point_cloud(w.size(), points, fields, "type"));
}

template <int D>
void write_whitewater_ply(const std::filesystem::path& path, const Whitewater<D>& w, UpAxis up) {
    const std::size_t n = w.size();
    std::string s = fmt::format(
        "ply\nformat binary_little_endian 1.0\ncomment eddy whitewater (type: 0 spray, 1 foam, 2 bubble)\n"
        "element vertex {}\nproperty float x\nproperty float y\nproperty float z\nproperty float vx\nproperty float vy\n"
        "property float vz\nproperty float lifetime\nproperty uchar type\nproperty uint id\nend_header\n",
        n);
    s.reserve(s.size() + n * 33);
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = file_xyz<D>(w.position[i], up), v = file_xyz<D>(w.velocity[i], up);
        s.append(reinterpret_cast<const char*>(x.data()), 12);
        s.append(reinterpret_cast<const char*>(v.data()), 12);
        append_raw(s, w.lifetime[i]);
        append_raw(s, w.type[i]);
        append_raw(s, w.id[i]);
    }
    io::write_atomic(path, s);
}

template <int D>
std::vector<std::string> WhitewaterFiles::write_frame(int frame, double time, Whitewater<D>& w) {
    count_whitewater(w);
    const std::string stem = fmt::format("frames/whitewater_{:05d}", frame);
    write_whitewater_vtp<D>(m_out / (stem + ".vtp"), w, m_up);
    write_whitewater_ply<D>(m_out / (stem + ".ply"), w, m_up);
    // A frame written again (a run's last state between frames) replaces the row of the same number.
    while (!m_rows.empty() && m_rows.back().frame >= frame) {
        m_rows.pop_back();
        m_pvd.pop_back();
    }
    m_pvd.emplace_back(time, stem + ".vtp");
    m_rows.push_back({frame, time, w.counts.spray, w.counts.foam, w.counts.bubbles});
    io::write_pvd(m_out / "whitewater.pvd", m_pvd);
    std::string csv = "frame,time,spray,foam,bubbles\n";
    for (const Row& r : m_rows) csv += fmt::format("{},{:.9g},{},{},{}\n", r.frame, r.time, r.spray, r.foam, r.bubbles);
    io::write_atomic(m_out / "whitewater.csv", csv);
    return {stem + ".vtp", stem + ".ply"};
}

void WhitewaterFiles::restore(std::vector<Row> rows) {
    m_rows = std::move(rows);
    m_pvd.clear();
    for (const Row& r : m_rows) m_pvd.emplace_back(r.time, fmt::format("frames/whitewater_{:05d}.vtp", r.frame));
}

template void write_whitewater_vtp<2>(const std::filesystem::path&, const Whitewater<2>&, UpAxis);
template void write_whitewater_vtp<3>(const std::filesystem::path&, const Whitewater<3>&, UpAxis);
template void write_whitewater_ply<2>(const std::filesystem::path&, const Whitewater<2>&, UpAxis);
template void write_whitewater_ply<3>(const std::filesystem::path&, const Whitewater<3>&, UpAxis);
template std::vector<std::string> WhitewaterFiles::write_frame<2>(int, double, Whitewater<2>&);
template std::vector<std::string> WhitewaterFiles::write_frame<3>(int, double, Whitewater<3>&);

}  // namespace eddy
