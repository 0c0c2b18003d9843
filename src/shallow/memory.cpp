// What a shallow-water scene will allocate, from its grid keys and its heightmap's header (issue 12:
// a 2^28-cell grid was accepted and would have needed ~26 GB; a 389 kB PNG decoded to 1.18 GB).
//
// Per cell, in the scene's precision (4 or 8 bytes): terrain, depth, ink and three cell-sized scratch
// arrays, two face arrays and their scratch copies (about one face per cell each): 10 numbers, plus
// the solid flag. A frame is built in memory before it is written: .vti 13 numbers per cell (its
// fields and the file image), .csv about 120 bytes, the water surface .obj 180 and .ply 115 (index,
// vertices, triangles and text). The heightmap: stb_image keeps the inflated and the unfiltered image
// at once (2 x width x height x channels x bytes per sample), then the terrain in double per cell.
// Floating bodies add three numbers per cell: the displaced depth and their drag on the water (x, y).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "eddy/memory_budget.hpp"
#include "eddy/shallow_water.hpp"
#include "shallow/heightmap.hpp"

namespace eddy {

MemoryEstimate estimate_memory(const ShallowWaterScene& s, std::span<const std::string> formats) {
    MemoryEstimate e;
    const double cells = double(s.nx) * double(s.ny);
    const double real = s.settings.precision == "double" ? 8.0 : 4.0;
    const double grid = cells * (10.0 * real + 1.0);
    e.add(fmt::format("grid {} x {} = {} cells", s.nx, s.ny, format_count(cells)), grid, cells);
    e.key = "grid.cells";
    double frame = 0.0;
    for (const auto& f : formats) {
        const double per_cell = f == "vti" ? 13.0 * real : f == "csv" ? 120.0 : f == "obj" ? 180.0 : f == "ply" ? 115.0 : 0.0;
        frame = std::max(frame, cells * per_cell);
    }
    if (frame > 0.0) e.add("frame files", frame);
    if (!s.bodies.empty()) e.add(fmt::format("{} floating bodies' fields", s.bodies.size()), cells * 3.0 * real);
    int w = 0, h = 0, channels = 0, bits = 8;
    if (!s.heightmap.empty() && detail::png_header(s.heightmap, w, h, channels, bits)) {
        const double image = 2.0 * double(w) * double(h) * channels * (bits / 8) + double(w) * double(h) * 2.0;
        e.add(fmt::format("heightmap {} x {} decoded", w, h), image + cells * 8.0, double(w) * double(h));
        if (image > grid) e.key = "terrain.heightmap";
    }
    return e;
}

}  // namespace eddy
