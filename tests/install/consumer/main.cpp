// Builds a tiny 2D scene in code, steps it, and checks that the fluid fell.
#include <cstdio>

#include <eddy/scene.hpp>
#include <eddy/simulation.hpp>

int main() {
    nlohmann::json j = {{"name", "consumer"}, {"dimension", 2}, {"method", "wcsph"}, {"particle_radius", 0.01},
                        {"gravity", {0, -9.81}}, {"duration", 0.05},
                        {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 1}}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0.5}}, {"max", {0.2, 0.7}}}}}};
    eddy::ExecContext exec(2);
    eddy::Simulation sim = eddy::make_simulation(eddy::parse_scene(j, "consumer"), 100000, exec);
    for (int i = 0; i < 50; ++i) eddy::step(sim, exec);
    const auto& s = std::get<eddy::ParticleSimulation<2>>(sim);
    std::printf("%zu particles, t = %g s, v_y[0] = %g m/s\n", s.fluid.size(), s.time, s.fluid.velocity[0][1]);
    return s.fluid.velocity[0][1] < 0.0f ? 0 : 1;
}
