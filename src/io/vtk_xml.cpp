#include "io/vtk_xml.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace eddy::io::detail {

std::string image_data(const std::array<int, 3>& lo, const std::array<int, 3>& hi, double spacing, bool cell_data,
                       std::span<const ImageArray> arrays) {
    std::size_t bytes = 0;
    for (const auto& a : arrays) bytes += a.bytes.size() + 8;
    const std::string extent = fmt::format("{} {} {} {} {} {}", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
    const char* data = cell_data ? "CellData" : "PointData";
    std::string s;
    s.reserve(1024 + 160 * arrays.size() + bytes);
    s += "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n";
    s += fmt::format("  <ImageData WholeExtent=\"{}\" Origin=\"0 0 0\" Spacing=\"{:.9g} {:.9g} {:.9g}\">\n", extent, spacing,
                     spacing, spacing);
    s += fmt::format("    <Piece Extent=\"{}\">\n      <{}", extent, data);
    if (!arrays.empty()) s += fmt::format(" Scalars=\"{}\"", arrays[0].name);
    for (const auto& a : arrays)
        if (a.components == 3) {
            s += fmt::format(" Vectors=\"{}\"", a.name);
            break;
        }
    s += ">\n";
    std::size_t offset = 0;
    for (const auto& a : arrays) {
        s += fmt::format("        <DataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\" format=\"appended\" offset=\"{}\"/>\n",
                         a.type, a.name, a.components, offset);
        offset += a.bytes.size() + 8;
    }
    s += fmt::format("      </{}>\n    </Piece>\n  </ImageData>\n  <AppendedData encoding=\"raw\">\n   _", data);
    for (const auto& a : arrays) {
        append_raw(s, std::uint64_t(a.bytes.size()));
        s += a.bytes;
    }
    s += "\n  </AppendedData>\n</VTKFile>\n";
    return s;
}

std::string point_cloud(std::size_t n, std::string_view points, std::span<const ImageArray> point_data,
                        std::string_view scalars) {
    // Appended in the order Points, connectivity, offsets, then the point data; offsets count from '_'.
    std::string cells;
    cells.reserve(n * 8);
    for (std::uint64_t i = 0; i < n; ++i) append_raw(cells, static_cast<std::int64_t>(i));
    const std::string_view connectivity(cells);
    std::string offsets;
    offsets.reserve(n * 8);
    for (std::uint64_t i = 0; i < n; ++i) append_raw(offsets, static_cast<std::int64_t>(i + 1));
    std::size_t bytes = points.size() + connectivity.size() + offsets.size() + 24;
    for (const auto& a : point_data) bytes += a.bytes.size() + 8;
    std::size_t offset = 0;
    auto da = [&](std::string_view name, const char* type, int components, std::size_t size) {
        std::string s = fmt::format("        <DataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\" "
                                    "format=\"appended\" offset=\"{}\"/>\n",
                                    type, name, components, offset);
        offset += size + 8;
        return s;
    };
    const std::string p = da("Points", "Float32", 3, points.size());
    const std::string c = da("connectivity", "Int64", 1, connectivity.size());
    const std::string o = da("offsets", "Int64", 1, offsets.size());
    std::string s;
    s.reserve(2048 + 160 * point_data.size() + bytes);
    s += "<?xml version=\"1.0\"?>\n";
    s += "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n";
    s += "  <PolyData>\n";
    s += fmt::format("    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"{}\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                     "NumberOfPolys=\"0\">\n",
                     n, n);
    s += fmt::format("      <PointData Scalars=\"{}\"", scalars);
    for (const auto& a : point_data)
        if (a.components == 3) {
            s += fmt::format(" Vectors=\"{}\"", a.name);
            break;
        }
    s += ">\n";
    for (const auto& a : point_data) s += da(a.name, a.type, a.components, a.bytes.size());
    s += "      </PointData>\n      <Points>\n" + p + "      </Points>\n";
    s += "      <Verts>\n" + c + o + "      </Verts>\n";
    s += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
    for (const std::string_view b : {points, connectivity, std::string_view(offsets)}) {
        append_raw(s, std::uint64_t(b.size()));
        s += b;
    }
    for (const auto& a : point_data) {
        append_raw(s, std::uint64_t(a.bytes.size()));
        s += a.bytes;
    }
    s += "\n  </AppendedData>\n</VTKFile>\n";
    return s;
}

}  // namespace eddy::io::detail
