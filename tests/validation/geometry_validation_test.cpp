// Geometry against data (issue 10): a mesh box tank gives the analytic box's dam-break front; no fluid
// leaks into a mesh obstacle or out of a mesh cup for WCSPH, PBF and Clavet; a piston makes a wave
// that reaches the far wall; a rotating paddle stirs the water.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "figures.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = EDDY_SOURCE_DIR;

template <int D>
ParticleSimulation<D>& particles(Simulation& s) { return std::get<ParticleSimulation<D>>(s); }

template <int D>
void advance_to(Simulation& sim, double t, const ExecContext& exec) {
    while (particles<D>(sim).time < t - 1e-12) {
        const StepStats st = step(sim, exec, t);
        ASSERT_FALSE(st.non_finite) << "diverged at t = " << particles<D>(sim).time;
    }
}

// The dam-break front Z = x_front / a at the experiments' times T = t sqrt(2 g / a).
std::vector<double> fronts(const nlohmann::json& container) {
    // a / r = 40 in a slice 12 r deep (both runs have the same side walls): the front is quantised by
    // the particle spacing, 5% of a at this resolution. The comparison is of walls, so the artificial
    // viscosity stays at the alpha its margins were measured with, 0.05: with WCSPH's default 0.1 (the
    // still-tank fix) this six-particle-thick slice runs slower, Z/a = 3.23 (box) and 3.15 (mesh) at
    // T = 2.95 instead of 3.30 and 3.29, 13-16% behind Martin & Moyce. Both tanks are drawn with Akinci's
    // particles (boundary_model "particles"): the test compares a mesh's sampling with the box's. With the
    // default smooth walls the box is drawn from its shape and the mesh, which has no smooth model yet
    // (issue 40), still from particles, and this slice's mesh front read -14.3% of the box's at T = 2.95.
    const double a = 0.1, r = 0.0025, g = 9.81;
    nlohmann::json j = {{"name", "mesh_dam_break"}, {"dimension", 3}, {"method", "wcsph"}, {"particle_radius", r},
                        {"gravity", {0, -g, 0}},
                        {"settings", {{"rest_density", 1000.0}, {"artificial_viscosity", 0.05}, {"boundary_model", "particles"}}},
                        {"boundaries", {container}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {a, 2 * a, 0.03}}}}}};
    const Scene scene = parse_scene(j, "mesh_dam_break");
    ExecContext exec(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec);
    std::vector<double> z;
    for (double T : {0.849, 1.212, 1.602, 2.283, 2.950}) {
        advance_to<3>(sim, T / std::sqrt(2.0 * g / a), exec);
        // The front of the water body: the most advanced particle at half the rest density or more. A
        // lone droplet ahead of it (density near 0.3 rho0) is spray, and whether one is flung ahead
        // at a given instant is chaotic: the last bit of a sum moves it by more than the walls do.
        double front = 0.0;
        const auto& f = particles<3>(sim).fluid;
        for (std::size_t i = 0; i < f.size(); ++i)
            if (f.density[i] >= 500.0f) front = std::max(front, double(f.position[i][0]) + r);
        z.push_back(front / a);
    }
    return z;
}

}  // namespace

TEST(GeometryValidation, MeshBoxTankGivesTheAnalyticBoxDamBreakFrontWithin2Percent) {
    const auto analytic = fronts({{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.6, 0.3, 0.03}}});
    const auto mesh = fronts({{"shape", "mesh"}, {"file", (kSource / "scenes/models/box.obj").string()},
                              {"scale", {0.6, 0.3, 0.03}}});
    const double T[] = {0.849, 1.212, 1.602, 2.283, 2.950}, martin_moyce[] = {1.245, 1.443, 1.884, 2.689, 3.728};
    for (std::size_t k = 0; k < mesh.size(); ++k) {
        std::printf("T = %.3f: Z/a mesh %.3f, analytic box %.3f (%+.2f%%), Martin & Moyce %.3f\n", T[k], mesh[k],
                    analytic[k], 100.0 * (mesh[k] / analytic[k] - 1.0), martin_moyce[k]);
        test::report_figure("geometry.mesh_box_dam_break.front_vs_box_percent_t" +
                                std::to_string(std::lround(1000 * T[k])),
                            100.0 * (mesh[k] / analytic[k] - 1.0));
        if (T[k] < 1.0) continue;  // the first surge is a few particles in the corner
        EXPECT_NEAR(mesh[k] / analytic[k], 1.0, 0.02) << "T = " << T[k];
        EXPECT_NEAR(mesh[k], martin_moyce[k], 0.15 * martin_moyce[k]) << "T = " << T[k];
    }
}

namespace {

// Runs a bundled scene with `method` to `until`, checking every 0.1 s that no fluid particle is inside
// a solid model (winding number) or outside every container (the analytic box tanks of these scenes).
void expect_no_leaks(const char* name, const char* method, double until) {
    SCOPED_TRACE(std::string(name) + " with " + method);
    const Scene scene = load_scene(kSource / "scenes" / (std::string(name) + ".json"), {std::string("method=") + method, "settings={}"});
    ExecContext exec(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec);
    auto& s = particles<3>(sim);
    std::size_t worst_inside = 0, worst_outside = 0;
    for (double t = 0.1; t <= until + 1e-9; t += 0.1) {
        advance_to<3>(sim, t, exec);
        std::size_t inside = 0, outside = 0;
        for (const auto& x : s.fluid.position) {
            bool in_container = false, any_container = false;
            for (const auto& b : scene.boundaries) {
                if (b.solid && b.model.mesh && b.model.mesh->inside(x)) ++inside;
                if (!b.solid && b.shape == "box") {
                    any_container = true;
                    bool in = true;
                    for (int a = 0; a < 3; ++a) in = in && x[a] >= b.min[a] && x[a] <= b.max[a];
                    in_container = in_container || in;
                }
            }
            if (any_container && !in_container) ++outside;
        }
        worst_inside = std::max(worst_inside, inside);
        worst_outside = std::max(worst_outside, outside);
    }
    std::printf("%s, %s, %zu particles, %g s: at most %zu inside a solid mesh, %zu outside the tank\n", name, method,
                s.fluid.size(), until, worst_inside, worst_outside);
    EXPECT_EQ(worst_inside, 0u);
    EXPECT_EQ(worst_outside, 0u);
}

}  // namespace

TEST(GeometryValidation, NoLeaksThroughAThinMeshPlateWcsph) { expect_no_leaks("mesh_dam_break_3d", "wcsph", 2.0); }
TEST(GeometryValidation, NoLeaksThroughAThinMeshPlatePbf) { expect_no_leaks("mesh_dam_break_3d", "pbf", 2.0); }
TEST(GeometryValidation, NoLeaksThroughAThinMeshPlateClavet) { expect_no_leaks("mesh_dam_break_3d", "clavet", 2.0); }
TEST(GeometryValidation, NoLeaksIntoTheWallsOfAMeshCupWcsph) { expect_no_leaks("cup_pour_3d", "wcsph", 2.0); }
TEST(GeometryValidation, NoLeaksIntoTheWallsOfAMeshCupPbf) { expect_no_leaks("cup_pour_3d", "pbf", 2.0); }
TEST(GeometryValidation, NoLeaksIntoTheWallsOfAMeshCupClavet) { expect_no_leaks("cup_pour_3d", "clavet", 2.0); }

TEST(GeometryValidation, PistonWaveReachesTheFarWall) {
    const Scene scene = load_scene(kSource / "scenes/wave_maker_3d.json");
    ExecContext exec(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec);
    auto level_at_far_wall = [&] {
        double top = 0.0;
        for (const auto& x : particles<3>(sim).fluid.position)
            if (x[0] > 1.1) top = std::max(top, double(x[1]));
        return top;
    };
    const double still = level_at_far_wall();
    double highest = still, when = 0.0;
    for (double t = 0.05; t <= 1.5 + 1e-9; t += 0.05) {
        advance_to<3>(sim, t, exec);
        if (level_at_far_wall() > highest) {
            highest = level_at_far_wall();
            when = t;
        }
    }
    // Long-wave speed sqrt(g h) = 1.25 m/s: the crest needs about 0.9 s for the 1.1 m.
    std::printf("far wall: still water %.4f m, highest %.4f m at t = %.2f s (+%.1f mm)\n", still, highest, when,
                1e3 * (highest - still));
    test::report_figure("geometry.piston.crest_mm", 1e3 * (highest - still));
    test::report_figure("geometry.piston.crest_time_s", when);
    EXPECT_GT(highest - still, 0.02);
    EXPECT_GT(when, 0.6);
}

TEST(GeometryValidation, RotatingMeshPaddleRaisesTheAngularMomentum) {
    for (const char* method : {"wcsph", "pbf"}) {
        SCOPED_TRACE(method);
        const Scene scene = load_scene(kSource / "scenes/mixer_3d.json", {std::string("method=") + method, "settings={}"});
        ExecContext exec(2);
        Simulation sim = make_simulation(scene, 1'000'000, exec);
        auto& s = particles<3>(sim);
        auto angular_momentum = [&] {  // about the y axis through the pivot, per unit mass
            double L = 0.0;
            for (std::size_t i = 0; i < s.fluid.size(); ++i) {
                const auto& x = s.fluid.position[i];
                const auto& v = s.fluid.velocity[i];
                L += double(x[2]) * v[0] - double(x[0]) * v[2];  // (x cross v)_y
            }
            return L / double(s.fluid.size());
        };
        const double L0 = angular_momentum();
        advance_to<3>(sim, 1.0, exec);
        const double L1 = angular_momentum();
        // The paddle turns at +6 rad/s about +y; rigid rotation of the whole tank at that rate would
        // give about omega R^2 / 2 = 0.03 m^2/s.
        std::printf("%s: angular momentum per mass %.2e -> %.2e m^2/s after 1 s\n", method, L0, L1);
        test::report_figure(std::string("geometry.paddle.angular_momentum_m2_s_") + method, L1);
        EXPECT_NEAR(L0, 0.0, 1e-6);
        EXPECT_GT(L1, 2e-3);
    }
}
