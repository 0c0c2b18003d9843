// Walls hold sparse fluid (issue 12): a lone particle and a sheet one particle thick, dropped 0.6 m
// onto the floor of a box, for every particle method in 2D and 3D. Such fluid has no pressure (its
// density stays below rho0 even against a wall), so the Akinci wall term alone exerts nothing on it:
// before the walls' guard it went through the floor ("1 particle left every boundary"). Every step:
// no divergence, every particle inside the box, no energy gained in the impact: the lone particle
// never above the height it fell from, the sheet's total energy (potential and kinetic) from the first
// contact on never above what it was then, to 0.1% (Clavet's relaxation spreads a sheet in flight: +2% in 2D,
// +5% in 3D before it lands), and at most half of the initial once the whole sheet has landed (0.45 s;
// free fall takes 0.35 s); at the end (2 s) everything rests on the floor.
// Measured: every method's lone particle and WCSPH's, PBF's and Clavet's sheets stop at the impact and
// rest at r/2 from the floor (the guard's contact margin, wall_contact_margin); DFSPH's sheet splashes
// (its pressure at the impact spreads it), keeps 16-20% of its energy after 0.45 s, runs up the side
// walls and lies within 1 cm of the floor at 2 s. How high its single highest particle runs up is not
// an energy measure: the splash focuses energy into a few particles (in 3D into the box's corners),
// and that height changes with the time steps alone: 0.27-0.99 m in 3D and 0.39-0.53 m in 2D with
// dt_growth between 0 and 2, while the sheet's total energy after 0.45 s stays at 16-20% of the
// initial (it was checked against the 0.6 m drop until dt_growth, measured 0.52 m; 0.73 m before the
// divergence warm start was limited to compressing motion).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"

using namespace eddy;

namespace {

constexpr double kR = 0.01, kWidth = 0.5, kHeight = 1.0, kDrop = 0.6, kG = 9.81;

// A box 0.5 x 1 (x 0.5) m; the fluid: one particle at the middle, or a sheet one particle thick
// across most of the box, its centres at kDrop.
nlohmann::json sparse_scene(int dim, const std::string& method, bool sheet) {
    const double lo = sheet ? (dim == 2 ? 0.05 : 0.1) : kWidth / 2 - kR, hi = sheet ? kWidth - lo : kWidth / 2 + kR;
    nlohmann::json box = {{"shape", "box"}}, fluid = {{"shape", "box"}};
    if (dim == 2) {
        box["min"] = {0, 0};
        box["max"] = {kWidth, kHeight};
        fluid["min"] = {lo, kDrop - kR};
        fluid["max"] = {hi, kDrop + kR};
    } else {
        box["min"] = {0, 0, 0};
        box["max"] = {kWidth, kHeight, kWidth};
        fluid["min"] = {lo, kDrop - kR, lo};
        fluid["max"] = {hi, kDrop + kR, hi};
    }
    return {{"name", sheet ? "sheet" : "lone"}, {"dimension", dim}, {"method", method}, {"particle_radius", kR},
            {"gravity", dim == 2 ? nlohmann::json{0, -kG} : nlohmann::json{0, -kG, 0}},
            {"boundaries", {box}}, {"fluids", {fluid}}};
}

template <int D>
void drop_onto_the_floor(const std::string& method, bool sheet) {
    const std::string what = method + (sheet ? " sheet " : " lone particle ") + std::to_string(D) + "D";
    ExecContext exec(2);
    Simulation sim = make_simulation(parse_scene(sparse_scene(D, method, sheet), what), 100000, exec);
    auto& s = std::get<ParticleSimulation<D>>(sim);
    ASSERT_EQ(s.fluid.size(), sheet ? (D == 2 ? 20u : 225u) : 1u) << what;
    const float dt_min = std::visit([](const auto& m) { return m.min_dt(); }, s.method);
    double highest_after_impact = 0.0, energy_after_landing = 0.0;
    bool landed = false;
    // Mechanical energy per unit particle mass, the floor at y = 0.
    auto energy = [&] {
        double e = 0.0;
        for (std::size_t i = 0; i < s.fluid.size(); ++i)
            e += kG * s.fluid.position[i][1] + 0.5 * double(norm2(s.fluid.velocity[i]));
        return e;
    };
    const double e0 = energy();
    double e_contact = 0.0;  // at the step the first particle reaches the floor
    while (s.time < 2.0) {
        const StepStats st = step(sim, exec, 2.0);
        ASSERT_EQ(step_divergence(st, dt_min), "") << what << " at t = " << s.time;
        for (const auto& x : s.fluid.position) {
            for (int a = 0; a < D; ++a) {
                ASSERT_GT(x[a], 0.0f) << what << " left the box at t = " << s.time;
                ASSERT_LT(x[a], a == 1 ? kHeight : kWidth) << what << " left the box at t = " << s.time;
            }
            if (!sheet) ASSERT_LE(x[1], kDrop + kR) << what << " rose above the height it fell from at t = " << s.time;
            landed = landed || x[1] < 4 * kR;
            if (landed) highest_after_impact = std::max(highest_after_impact, double(x[1]));
        }
        const double e = energy();
        if (landed && e_contact == 0.0) e_contact = e;
        if (landed) ASSERT_LE(e, e_contact * (1.0 + 1e-3)) << what << " gained energy in the impact at t = " << s.time;
        if (s.time >= 0.45) energy_after_landing = std::max(energy_after_landing, e);
    }
    EXPECT_LE(energy_after_landing, 0.5 * e0) << what << ": the landing kept more than half the energy";
    // At rest on the floor: within two diameters of it (a lone particle rests at r/2), slow.
    float top = 0.0f, low = 1.0f, fastest = 0.0f;
    for (std::size_t i = 0; i < s.fluid.size(); ++i) {
        top = std::max(top, s.fluid.position[i][1]);
        low = std::min(low, s.fluid.position[i][1]);
        fastest = std::max(fastest, norm(s.fluid.velocity[i]));
    }
    const double impact = std::sqrt(2.0 * kG * kDrop);
    std::printf("%s: after the impact up to %.3f m, energy after 0.45 s at most %.1f%% of the initial; at 2 s y in "
                "[%.2f r, %.2f r], fastest %.3f m/s\n",
                what.c_str(), highest_after_impact, 100.0 * energy_after_landing / e0, low / kR, top / kR, fastest);
    EXPECT_LT(top, 4 * kR) << what;
    // Not sunk into the wall layers: a particle without pressure touches the wall at its contact margin
    // (r/2; it sat at r/4 before), one pressed by others may be guarded nearer (r/4).
    // DFSPH's smooth walls (issue 40) hold a lone particle by its own pressure where its density reaches
    // rho0: 0.41 r.
    EXPECT_GE(low, (sheet ? 0.2 : 0.4) * kR) << what;
    EXPECT_LT(fastest, 0.2 * impact) << what;
}

template <int D>
void walls_hold(const std::string& method) {
    drop_onto_the_floor<D>(method, false);
    drop_onto_the_floor<D>(method, true);
}

}  // namespace

TEST(WallsHoldSparseFluid, Wcsph2D) { walls_hold<2>("wcsph"); }
TEST(WallsHoldSparseFluid, Wcsph3D) { walls_hold<3>("wcsph"); }
TEST(WallsHoldSparseFluid, Dfsph2D) { walls_hold<2>("dfsph"); }
TEST(WallsHoldSparseFluid, Dfsph3D) { walls_hold<3>("dfsph"); }
TEST(WallsHoldSparseFluid, Pbf2D) { walls_hold<2>("pbf"); }
TEST(WallsHoldSparseFluid, Pbf3D) { walls_hold<3>("pbf"); }
TEST(WallsHoldSparseFluid, Clavet2D) { walls_hold<2>("clavet"); }
TEST(WallsHoldSparseFluid, Clavet3D) { walls_hold<3>("clavet"); }
