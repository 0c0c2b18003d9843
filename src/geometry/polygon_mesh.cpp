// 2D polygons (a scene's "polygon" and "polyline" walls) -> Mesh<2>.
#include <cmath>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"

namespace eddy {

Mesh<2> polygon_mesh(const std::vector<std::array<double, 2>>& points, const std::string& where, bool closed) {
    if (points.size() < (closed ? 3u : 2u))
        throw InputError(fmt::format("{}: a {} needs at least {} points, got {}", where, closed ? "polygon" : "polyline",
                                     closed ? 3 : 2, points.size()));
    Mesh<2> m;
    for (const auto& p : points) {
        if (!std::isfinite(p[0]) || !std::isfinite(p[1]))
            throw InputError(fmt::format("{}: polygon points must be finite", where));
        m.vertices.push_back(Vec2{{static_cast<float>(p[0]), static_cast<float>(p[1])}});
    }
    const auto n = static_cast<std::uint32_t>(points.size());
    for (std::uint32_t i = 0; i + (closed ? 0 : 1) < n; ++i) m.cells.push_back({i, (i + 1) % n});
    return m;
}

}  // namespace eddy
