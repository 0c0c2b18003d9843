// The fluid at points (a scene's "probes", probes.csv; Python's Simulation.probe): the surface module's
// attribute interpolation (eddy/surface.hpp) at the points instead of a mesh's vertices.
#include <string>
#include <variant>

#include "eddy/simulation.hpp"
#include "eddy/surface.hpp"

namespace eddy {

template <int D>
std::vector<ProbeReading> read_probes(const ParticleSimulation<D>& sim, const ParticleSet<D>& fluid,
                                      std::span<const Vec<D>> points, const ExecContext& exec) {
    Mesh<D> at;  // the points as a mesh's vertices, without cells
    at.vertices.assign(points.begin(), points.end());
    const std::string names[] = {"pressure", "velocity"};
    const float h = std::visit([](const auto& m) { return m.neighbor_radius(); }, sim.method);
    interpolate_attributes<D>(at, fluid.position, particle_fields(fluid, names), h, exec);
    std::vector<ProbeReading> out(points.size());
    const auto& pressure = at.attributes[0].values;
    const auto& velocity = at.attributes[1].values;
    for (std::size_t k = 0; k < out.size(); ++k) {
        out[k].pressure = pressure[k];
        for (int a = 0; a < D; ++a) out[k].velocity[a] = velocity[k * D + a];
    }
    return out;
}

template <int D>
std::vector<Vec<D>> probe_points(const Scene& scene) {
    std::vector<Vec<D>> points;
    for (const auto& p : scene.probes) points.push_back(from_array<D>(p.position));
    return points;
}

template std::vector<ProbeReading> read_probes<2>(const ParticleSimulation<2>&, const ParticleSet<2>&,
                                                  std::span<const Vec<2>>, const ExecContext&);
template std::vector<ProbeReading> read_probes<3>(const ParticleSimulation<3>&, const ParticleSet<3>&,
                                                  std::span<const Vec<3>>, const ExecContext&);
template std::vector<Vec<2>> probe_points<2>(const Scene&);
template std::vector<Vec<3>> probe_points<3>(const Scene&);

}  // namespace eddy
