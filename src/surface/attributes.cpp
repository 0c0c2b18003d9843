// interpolate_attributes: particle fields (velocity, density, ...) at a mesh's vertices, for motion blur
// and foam in renderers (Blender, Houdini). Shepard-normalised cubic-spline average over the particles
// within the kernel support, gathered per vertex.
#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/surface.hpp"

namespace eddy {

template <int D>
void interpolate_attributes(Mesh<D>& mesh, std::span<const Vec<D>> positions, std::span<const ParticleField> fields,
                            float support, const ExecContext& exec) {
    if (!(support > 0.0f))
        throw InputError(fmt::format("interpolate_attributes: support = {}: allowed: a radius > 0 (m)", support));
    for (const auto& f : fields)
        if (f.components < 1 || f.values.size() != positions.size() * std::size_t(f.components))
            throw InputError(fmt::format("interpolate_attributes: field '{}' has {} values for {} particles of {} "
                                         "component(s)", f.name, f.values.size(), positions.size(), f.components));
    const std::size_t nv = mesh.vertices.size();
    const std::size_t first = mesh.attributes.size();
    for (const auto& f : fields) mesh.attributes.push_back({f.name, f.components, std::vector<float>(nv * f.components, 0.0f)});
    if (nv == 0 || positions.empty() || fields.empty()) return;

    NeighborGrid<D> grid(support);
    grid.build(positions, exec);
    const CubicSpline<D> W(support);
    std::size_t width = 0;  // floats per vertex over all fields
    for (const auto& f : fields) width += std::size_t(f.components);
    parallel_blocks(exec, nv, [&](std::size_t begin, std::size_t end) {
        std::vector<double> sum(width);
        for (std::size_t v = begin; v < end; ++v) {
            const Vec<D> x = mesh.vertices[v];
            std::fill(sum.begin(), sum.end(), 0.0);
            double wsum = 0.0;
            grid.for_each_neighbor(x, support, [&](std::uint32_t p) {
                const double w = W.value(x - positions[p]);
                wsum += w;
                std::size_t k = 0;
                for (const auto& f : fields)
                    for (int c = 0; c < f.components; ++c) sum[k++] += w * f.values[std::size_t(p) * f.components + c];
            });
            if (wsum <= 0.0) continue;
            std::size_t k = 0;
            for (std::size_t a = 0; a < fields.size(); ++a) {
                auto& out = mesh.attributes[first + a];
                for (int c = 0; c < out.components; ++c) out.values[v * out.components + c] = float(sum[k++] / wsum);
            }
        }
    });
}

template <int D>
std::vector<ParticleField> particle_fields(const ParticleSet<D>& p, std::span<const std::string> names) {
    static_assert(sizeof(Vec<D>) == D * sizeof(float));
    std::vector<ParticleField> fields;
    for (const auto& n : names) {
        if (n == "velocity")
            fields.push_back({n, D, {reinterpret_cast<const float*>(p.velocity.data()), p.velocity.size() * D}});
        else if (n == "density")
            fields.push_back({n, 1, p.density});
        else if (n == "pressure")
            fields.push_back({n, 1, p.pressure});
        else
            throw InputError(fmt::format("attribute '{}': allowed: velocity, density, pressure", n));
    }
    return fields;
}

template std::vector<ParticleField> particle_fields<2>(const ParticleSet<2>&, std::span<const std::string>);
template std::vector<ParticleField> particle_fields<3>(const ParticleSet<3>&, std::span<const std::string>);
template void interpolate_attributes<2>(Mesh<2>&, std::span<const Vec<2>>, std::span<const ParticleField>, float,
                                        const ExecContext&);
template void interpolate_attributes<3>(Mesh<3>&, std::span<const Vec<3>>, std::span<const ParticleField>, float,
                                        const ExecContext&);

}  // namespace eddy
