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

}  // namespace eddy::io::detail
