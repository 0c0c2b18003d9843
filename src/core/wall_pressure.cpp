// The fluid's pressure on the walls' particles (eddy/wall_pressure.hpp): Adami et al. 2012, eq. 27.
#include "eddy/wall_pressure.hpp"

#include <stdexcept>
#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"

namespace eddy {

template <int D>
std::vector<float> wall_pressure(const BoundarySet<D>& walls, const ParticleSet<D>& fluid, const Vec<D>& gravity,
                                 float support, const ExecContext& exec) {
    std::vector<float> out(walls.size(), 0.0f);
    if (walls.empty() || fluid.empty() || !(support > 0.0f)) return out;
    const CubicSpline<D> kernel(support);
    // Keys = ids: every wall particle's list in (cell, id) order, whatever order the fluid is stored in.
    NeighborGrid<D> grid(support);
    grid.build(std::span<const Vec<D>>(fluid.position.data(), fluid.size()), exec,
               std::span<const std::uint32_t>(fluid.id.data(), fluid.id.size()));
    parallel_for_each_index(exec, walls.size(), [&](std::size_t b) {
        const Vec<D> xb = walls.position[b];
        // Double sums: a floor particle has tens to a hundred neighbours whose terms differ by orders of
        // magnitude near the free surface; the order is fixed anyway.
        double sum_w = 0.0, sum_p = 0.0;
        double sum_rx[D] = {};
        grid.for_each_neighbor(xb, support, [&](std::uint32_t f) {
            const Vec<D> d = xb - fluid.position[f];
            const double w = kernel.value(d);
            sum_w += w;
            sum_p += double(fluid.pressure[f]) * w;
            for (int a = 0; a < D; ++a) sum_rx[a] += double(fluid.density[f]) * double(d[a]) * w;
        });
        if (!(sum_w > 0.0)) return;  // no fluid within h (pairs at exactly h weigh 0)
        double head = 0.0;
        for (int a = 0; a < D; ++a) head += double(gravity[a]) * sum_rx[a];
        out[b] = static_cast<float>((sum_p + head) / sum_w);
    });
    return out;
}

template <int D>
std::vector<float> wall_pressure_at(std::span<const Vec<D>> points, const BoundarySet<D>& walls,
                                    std::span<const float> pressure, float support, const ExecContext& exec) {
    if (pressure.size() != walls.size())
        throw std::invalid_argument("wall_pressure_at: one pressure per wall particle is needed");
    std::vector<float> out(points.size(), 0.0f);
    if (points.empty() || walls.empty() || !(support > 0.0f)) return out;
    const CubicSpline<D> kernel(support);
    NeighborGrid<D> grid(support);  // wall particles in (cell, index) order: they are never reordered
    grid.build(std::span<const Vec<D>>(walls.position.data(), walls.size()), exec);
    parallel_for_each_index(exec, points.size(), [&](std::size_t i) {
        double sum_w = 0.0, sum_p = 0.0;
        grid.for_each_neighbor(points[i], support, [&](std::uint32_t b) {
            const double w = kernel.value(points[i] - walls.position[b]);
            sum_w += w;
            sum_p += double(pressure[b]) * w;
        });
        if (sum_w > 0.0) out[i] = static_cast<float>(sum_p / sum_w);
    });
    return out;
}

template std::vector<float> wall_pressure<2>(const BoundarySet<2>&, const ParticleSet<2>&, const Vec<2>&, float,
                                             const ExecContext&);
template std::vector<float> wall_pressure<3>(const BoundarySet<3>&, const ParticleSet<3>&, const Vec<3>&, float,
                                             const ExecContext&);
template std::vector<float> wall_pressure_at<2>(std::span<const Vec<2>>, const BoundarySet<2>&, std::span<const float>,
                                                float, const ExecContext&);
template std::vector<float> wall_pressure_at<3>(std::span<const Vec<3>>, const BoundarySet<3>&, std::span<const float>,
                                                float, const ExecContext&);

}  // namespace eddy
