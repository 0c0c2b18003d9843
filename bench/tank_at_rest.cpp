// eddy-tank-at-rest: issue 11's tank at rest (r = 4 mm, water 24 cm deep), any particle method and
// settings, every frame (0.05 s) to T: the pressure at 6, 12 and 18 cm depth against rho0 g d, averaged
// over a band away from the side walls, with depth by mass as in the validation tests; the kinetic energy
// and the steps' density error and iterations. The tables of docs/methods.md ("the tank at rest") were
// measured with it.
//
// Usage: eddy-tank-at-rest [settings JSON] [tank width, m] [T, s] [method]
//   eddy-tank-at-rest '{"xsph": 0.05}' 0.3 3 dfsph
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "tank_support.hpp"

using namespace eddy;

int main(int argc, char** argv) try {
    const nlohmann::json settings = argc > 1 ? nlohmann::json::parse(argv[1]) : nlohmann::json::object();
    const double r = 0.004, width = argc > 2 ? std::atof(argv[2]) : 0.3, depth = 0.24, g = 9.81, rho0 = 1000.0;
    const double T = argc > 3 ? std::atof(argv[3]) : 3.0;
    const char* method = argc > 4 ? argv[4] : "dfsph";
    const nlohmann::json j = {{"name", "tank_at_rest"}, {"dimension", 2}, {"method", method}, {"particle_radius", r},
                              {"gravity", {0, -g}}, {"settings", settings},
                              {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {width, depth + 0.1}}}}},
                              {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {width, depth}}}}}};
    ExecContext exec(2);
    Simulation sim = make_simulation(parse_scene(j, "tank_at_rest"), 1'000'000, exec);
    auto& s = std::get<ParticleSimulation<2>>(sim);
    const double bands[] = {0.06, 0.12, 0.18};
    double worst_early = 0.0, worst_late = 0.0;
    float worst_error = 0.0f;
    long iterations = 0, steps = 0;
    std::printf("    t   p/(rho0 g d) - 1 at 6, 12, 18 cm   kinetic energy   mean compression   iterations\n");
    for (int frame = 1; frame <= int(T / 0.05 + 0.5); ++frame) {
        const double t = 0.05 * frame;
        float error = 0.0f;
        long frame_iterations = 0, frame_steps = 0;
        while (s.time < t - 1e-12) {
            const StepStats st = step(sim, exec, t);
            if (st.non_finite) {
                std::printf("diverged at t = %.4f s\n", s.time);
                return 3;
            }
            error = std::max(error, st.mean_density_error);
            frame_iterations += st.iterations;
            ++frame_steps;
        }
        iterations += frame_iterations;
        steps += frame_steps;
        if (t > 0.5) worst_error = std::max(worst_error, error);
        const auto& f = s.fluid;
        double kinetic = 0.0;
        for (std::size_t i = 0; i < f.size(); ++i) kinetic += 0.5 * norm2(f.velocity[i]);
        std::printf("%5.2f", t);
        for (const auto& band : test::band_pressures(f, width, r, rho0, g, bands)) {
            std::printf(" %+7.1f%%", 100.0 * band.deviation);
            if (t >= 2.0 - 1e-9) worst_late = std::max(worst_late, std::abs(band.deviation));
            else if (t >= 0.5 - 1e-9) worst_early = std::max(worst_early, std::abs(band.deviation));
        }
        std::printf("   %.2e m^2/s^2   %.4f%%   %.1f\n", kinetic / double(f.size()), 100.0 * error,
                    double(frame_iterations) / double(std::max(frame_steps, 1L)));
    }
    std::printf("worst frame %.1f%% from 0.5 to 2 s, %.1f%% from 2 s; worst mean compression of a step after 0.5 s "
                "%.4f%%; %.1f iterations a step, %ld steps\n",
                100.0 * worst_early, 100.0 * worst_late, 100.0 * worst_error,
                double(iterations) / double(std::max(steps, 1L)), steps);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "eddy-tank-at-rest: %s\n", e.what());
    return 2;
}
