// Internal pieces of eddy's binary file writers: raw little-endian values, and VTK XML ImageData with
// appended raw arrays (the shallow-water grid and the surface's signed distance share it).
#pragma once
#include <array>
#include <bit>
#include <span>
#include <string>
#include <string_view>

namespace eddy::io::detail {

static_assert(std::endian::native == std::endian::little, "eddy's binary writers assume a little-endian machine");

/// Appends the bytes of v (a trivially copyable value) to s.
template <class T>
void append_raw(std::string& s, const T& v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

/// One array of an ImageData file: its VTK type ("Float32", "Float64"), components and raw bytes.
struct ImageArray {
    std::string_view name;
    const char* type;
    int components;
    std::string_view bytes;
};

/// A VTK XML ImageData file (.vti): nodes lo..hi (inclusive) per axis at `spacing` from the origin,
/// the arrays as point data or as cell data, appended raw with UInt64 size headers.
std::string image_data(const std::array<int, 3>& lo, const std::array<int, 3>& hi, double spacing, bool cell_data,
                       std::span<const ImageArray> arrays);

/// A VTK XML PolyData file (.vtp) of n points with one vertex cell each (ParaView shows them without a
/// Glyph filter): `points` the n x 3 Float32 coordinates' bytes, the arrays as point data (`scalars`
/// names the active scalars, the first 3-component array is the active vectors), appended raw with
/// UInt64 size headers. The particles' and the whitewater's frames share it.
std::string point_cloud(std::size_t n, std::string_view points, std::span<const ImageArray> point_data,
                        std::string_view scalars);

/// The bytes of a contiguous array, as an ImageArray's view (no copy).
template <class T>
std::string_view bytes_of(std::span<const T> v) {
    return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

}  // namespace eddy::io::detail
