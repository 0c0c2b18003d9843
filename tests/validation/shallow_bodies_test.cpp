// Floating bodies on shallow water (issue 30, item 4; docs/bodies.md, "Shallow water"): Archimedes' draft
// at two resolutions, a neutrally buoyant box that stays put, the water's volume kept while a dropped box
// displaces it, the waves it makes, and the same bits on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"

using namespace eddy;

namespace {

constexpr double g = 9.81;

// A square basin of side `side` (m), n x n cells, water 0.3 m deep, borders open (waves leave) or walls.
nlohmann::json basin(int n, double side, bool open, const nlohmann::json& bodies, const char* precision = "double") {
    nlohmann::json j = {{"name", "basin"},
                        {"method", "shallow_water"},
                        {"gravity", g},
                        {"grid", {{"cells", {n, n}}, {"dx", side / n}}},
                        {"water", {{"surface", "0.3"}}},
                        {"bodies", bodies},
                        {"settings", {{"precision", precision}}}};
    if (open) j["borders"] = {{"x", "open"}, {"y", "open"}};
    return j;
}

ShallowWaterSimulation make(nlohmann::json j) { return make_shallow_water(parse_scene(std::move(j), "test")); }

template <class F>
void run_to(ShallowWaterSimulation& sim, double t, const ExecContext& exec, F&& f) {
    std::visit(
        [&](auto& s) {
            while (s.time() < t - 1e-12) {
                double dt = s.suggest_dt();
                if (s.time() + dt > t) dt = t - s.time();
                const auto st = s.step(dt, exec);
                ASSERT_FALSE(st.non_finite);
                f(s);
            }
        },
        sim.solver);
}

// The mean water surface over the cells farther than `r` from (cx, cy) and 3 cells in from the borders.
template <class Grid>
double far_level(const Grid& gr, double cx, double cy, double r) {
    double sum = 0;
    int n = 0;
    const double dx = double(gr.dx);
    for (int j = 3; j < gr.ny - 3; ++j)
        for (int i = 3; i < gr.nx - 3; ++i) {
            const double x = (i + 0.5) * dx - cx, y = (j + 0.5) * dx - cy;
            if (x * x + y * y < r * r) continue;
            sum += double(gr.eta(gr.cell(i, j)));
            ++n;
        }
    return sum / n;
}

}  // namespace

// Archimedes: a box 0.3 x 0.3 x 0.1 m (20 and 40 cells across) dropped in at half its draft rests at
// draft = ratio x height (the level far from it minus its underside), within 2%, the mean over the
// last second of 4 s (open borders: its waves leave).
TEST(ShallowBodiesValidation, ArchimedesDraftAtTwoResolutions) {
    ExecContext exec(2);
    const double height = 0.1;
    for (int cells : {20, 40}) {
        for (double ratio : {0.3, 0.5, 0.8}) {
            const double draft = ratio * height;
            const int n = cells * 4;  // basin 1.2 m, box 0.3 m
            const nlohmann::json box = {{{"shape", "box"},
                                         {"center", {0.6, 0.6, 0.3 - 0.5 * draft + 0.5 * height}},
                                         {"size", {0.3, 0.3, height}},
                                         {"density", 1000.0 * ratio}}};
            ShallowWaterSimulation sim = make(basin(n, 1.2, true, box));
            double sum = 0, lo = 1e9, hi = -1e9;
            int samples = 0;
            run_to(sim, 4.0, exec, [&](const auto& s) {
                if (s.time() < 3.0) return;
                const auto& b = s.bodies()[0];
                const double d = far_level(s.grid(), 0.6, 0.6, 0.35) - (b.x[2] - 0.5 * height);
                sum += d;
                lo = std::min(lo, d);
                hi = std::max(hi, d);
                ++samples;
            });
            const double measured = sum / samples;
            std::printf("Archimedes: %d cells across, ratio %.1f: draft %.5f m (analytic %.5f, %+.2f%%), swing %.2e m\n", cells,
                        ratio, measured, draft, 100.0 * (measured - draft) / draft, hi - lo);
            EXPECT_NEAR(measured, draft, 0.02 * draft) << cells << " cells, ratio " << ratio;
        }
    }
}

// A box of the water's density, fully under water (0.1 m tall in 0.3 m, its faces on cell faces so that
// the heightfield's columns hold exactly its volume), neither sinks nor rises by more than a cell in 2 s,
// in still water and with drops making waves over it.
TEST(ShallowBodiesValidation, NeutralBoxStaysPut) {
    ExecContext exec(2);
    const int n = 80;
    const double dx = 1.2 / n;
    const nlohmann::json box = {{{"shape", "box"}, {"center", {0.6, 0.6, 0.2}}, {"size", {0.3, 0.3, 0.1}}, {"density", 1000.0}}};
    for (bool waves : {false, true}) {
        nlohmann::json j = basin(n, 1.2, false, box);
        if (waves) j["drops"] = {{"rate", 5}, {"radius", 0.08}, {"height", 0.03}, {"seed", 11}};
        ShallowWaterSimulation sim = make(j);
        double most = 0;
        run_to(sim, 2.0, exec, [&](const auto& s) { most = std::max(most, std::abs(s.bodies()[0].x[2] - 0.2)); });
        std::printf("Neutral box%s: largest |dz| over 2 s %.3e m (cell %.4f m)\n", waves ? " under waves" : "", most, dx);
        EXPECT_LT(most, dx) << (waves ? "waves" : "still");
    }
}

// A box dropped from 5 cm above the water into a closed basin: the water (depth minus the bodies'
// displaced depth) keeps its volume to rounding while the displaced volume goes from 0 to the box's.
TEST(ShallowBodiesValidation, DroppedBoxKeepsTheWatersVolume) {
    ExecContext exec(2);
    for (const char* precision : {"double", "float"}) {
        const nlohmann::json box = {{{"shape", "box"}, {"center", {0.6, 0.6, 0.4}}, {"size", {0.3, 0.3, 0.1}}, {"density", 600.0}}};
        ShallowWaterSimulation sim = make(basin(80, 1.2, false, box, precision));
        const double v0 = std::visit([](const auto& s) { return s.grid().volume(); }, sim.solver);
        double worst = 0, displaced = 0;
        run_to(sim, 2.0, exec, [&](const auto& s) {
            worst = std::max(worst, std::abs(s.grid().volume() - v0) / v0);
            displaced = std::max(displaced, s.grid().displaced_volume());
        });
        std::printf("Dropped box (%s): water volume drift %.2e relative; displaced volume up to %.5f m^3 (box under water at "
                    "rest: %.5f m^3)\n",
                    precision, worst, displaced, 0.3 * 0.3 * 0.06);
        EXPECT_LT(worst, std::string(precision) == "double" ? 1e-12 : 2e-6) << precision;
        EXPECT_GT(displaced, 0.5 * 0.3 * 0.3 * 0.06) << precision;  // it did displace water
    }
}

// The dropped box makes waves: the surface's largest deviation in a ring 0.25-0.35 m from its centre is
// 0 before it hits the water, grows to several millimetres, and spreads away (open borders) to less than
// a fifth of its peak at 3 s.
TEST(ShallowBodiesValidation, DroppedBoxMakesWaves) {
    ExecContext exec(2);
    const nlohmann::json box = {{{"shape", "box"}, {"center", {0.6, 0.6, 0.4}}, {"size", {0.3, 0.3, 0.1}}, {"density", 600.0}}};
    ShallowWaterSimulation sim = make(basin(80, 1.2, true, box));
    auto ring = [](const auto& gr) {
        double most = 0;
        const double dx = double(gr.dx);
        for (int j = 0; j < gr.ny; ++j)
            for (int i = 0; i < gr.nx; ++i) {
                const double x = (i + 0.5) * dx - 0.6, y = (j + 0.5) * dx - 0.6, r = std::sqrt(x * x + y * y);
                if (r > 0.25 && r < 0.35) most = std::max(most, std::abs(double(gr.eta(gr.cell(i, j))) - 0.3));
            }
        return most;
    };
    double peak = 0, peak_time = 0, before = 0;
    run_to(sim, 3.0, exec, [&](const auto& s) {
        const double d = ring(s.grid());
        if (s.time() < 0.05) before = std::max(before, d);
        if (d > peak) {
            peak = d;
            peak_time = s.time();
        }
    });
    const double end = std::visit([&](const auto& s) { return ring(s.grid()); }, sim.solver);
    std::printf("Waves: ring deviation %.2e m before impact, peak %.4f m at %.2f s, %.2e m at 3 s\n", before, peak, peak_time, end);
    EXPECT_LT(before, 1e-9);
    EXPECT_GT(peak, 0.003);
    EXPECT_LT(end, 0.2 * peak);
}

// Three bodies (box, sphere, a log) in a flow with drops: the same bits on 1 and 2 threads (grid and bodies).
TEST(ShallowBodiesValidation, SameBitsOnOneAndTwoThreads) {
    const nlohmann::json bodies = {
        {{"shape", "box"}, {"center", {0.4, 0.5, 0.32}}, {"size", {0.2, 0.12, 0.08}}, {"density", 400.0}, {"yaw", 30.0}},
        {{"shape", "sphere"}, {"center", {0.8, 0.7, 0.3}}, {"radius", 0.06}, {"density", 700.0}, {"velocity", {-0.2, 0.0, 0.0}}},
        {{"shape", "cylinder"}, {"center", {0.6, 0.3, 0.31}}, {"radius", 0.04}, {"length", 0.4}, {"axis", "y"}, {"yaw", 20.0},
         {"density", 600.0}, {"angular_velocity", {0.0, 0.0, 1.0}}}};
    std::uint64_t hashes[2];
    for (int threads : {1, 2}) {
        nlohmann::json j = basin(64, 1.2, false, bodies, "float");
        j["water"]["u"] = "0.3*sin(3.14159*y/Ly)";
        j["drops"] = {{"rate", 4}, {"radius", 0.06}, {"height", 0.02}, {"seed", 3}};
        j["settings"]["rows_per_task"] = 2;
        ShallowWaterSimulation sim = make(j);
        ExecContext exec(threads);
        run_to(sim, 1.5, exec, [](const auto&) {});
        hashes[threads - 1] = state_hash(sim);
    }
    EXPECT_EQ(hashes[0], hashes[1]);
}

// Light and heavy bodies (0.1 to 0.9 of the water's density; boxes, balls, logs) dropped into waves are
// stable at the grid's own fixed step (0.25 dx / sqrt(g h), the body step limit not used): every body
// ends afloat, its underside below the water and its top above it, moving slower than 1 m/s.
TEST(ShallowBodiesValidation, LightAndHeavyBodiesAreStableAtTheGridsStep) {
    ExecContext exec(2);
    nlohmann::json bodies = nlohmann::json::array();
    int k = 0;
    for (double ratio : {0.1, 0.3, 0.5, 0.7, 0.9}) {
        const double y = 0.2 + 0.2 * k++;
        bodies.push_back({{"shape", "box"}, {"center", {0.25, y, 0.36}}, {"size", {0.12, 0.12, 0.05}}, {"density", 1000 * ratio}});
        bodies.push_back({{"shape", "sphere"}, {"center", {0.6, y, 0.36}}, {"radius", 0.05}, {"density", 1000 * ratio}});
        bodies.push_back({{"shape", "cylinder"}, {"center", {0.95, y, 0.36}}, {"radius", 0.03}, {"length", 0.2}, {"axis", "x"},
                          {"yaw", 30}, {"density", 1000 * ratio}});
    }
    const int n = 80;
    const double dx = 1.2 / n, dt = 0.25 * dx / std::sqrt(g * 0.3);
    nlohmann::json j = basin(n, 1.2, true, bodies, "float");
    j["drops"] = {{"rate", 3}, {"radius", 0.08}, {"height", 0.02}, {"seed", 5}};
    j["settings"]["time_step"] = dt;
    ShallowWaterSimulation sim = make(j);
    run_to(sim, 4.0, exec, [](const auto&) {});
    std::visit(
        [&](const auto& s) {
            const auto& gr = s.grid();
            for (std::size_t b = 0; b < s.bodies().size(); ++b) {
                const auto& body = s.bodies()[b];
                const int i = int(body.x[0] / dx), jj = int(body.x[1] / dx);
                const double eta = double(gr.eta(gr.cell(i, jj)));
                const double speed = std::sqrt(body.v[0] * body.v[0] + body.v[1] * body.v[1] + body.v[2] * body.v[2]);
                SCOPED_TRACE(fmt::format("body {} (density ratio {:.1f})", b, 0.1 + 0.2 * double(b / 3)));
                EXPECT_TRUE(std::isfinite(body.x[2]));
                EXPECT_LT(body.x[2] - body.half[2] * (body.shape == 0 ? 1 : 0) - (body.shape == 0 ? 0 : body.half[1]), eta);
                EXPECT_GT(body.x[2] + (body.shape == 0 ? body.half[2] : body.half[1]), eta);
                EXPECT_LT(speed, 1.0);
            }
        },
        sim.solver);
    std::printf("Light and heavy bodies: 15 bodies, densities 0.1-0.9 of the water's, 4 s at the grid's step %.5f s: afloat\n", dt);
}

// Bodies thrown at the borders (5 m/s, spinning) stay on the grid and finite, and the water keeps its
// volume; a body dropped onto dry land (a shelf 0.5 m high) rests on the terrain.
TEST(ShallowBodiesValidation, BodiesStayOnTheGridAndOnTheTerrain) {
    ExecContext exec(2);
    const nlohmann::json thrown = {
        {{"shape", "box"}, {"center", {0.6, 0.6, 0.32}}, {"size", {0.2, 0.1, 0.06}}, {"density", 500.0}, {"velocity", {5.0, 1.0, 0.0}},
         {"angular_velocity", {0.0, 0.0, 8.0}}},
        {{"shape", "sphere"}, {"center", {0.3, 0.9, 0.3}}, {"radius", 0.05}, {"density", 300.0}, {"velocity", {-4.0, 3.0, 1.0}}},
        {{"shape", "cylinder"}, {"center", {0.9, 0.3, 0.31}}, {"radius", 0.03}, {"length", 0.3}, {"density", 700.0},
         {"velocity", {0.0, -5.0, 0.0}}}};
    ShallowWaterSimulation sim = make(basin(80, 1.2, false, thrown, "float"));
    const double v0 = std::visit([](const auto& s) { return s.grid().volume(); }, sim.solver);
    run_to(sim, 1.5, exec, [&](const auto& s) {
        for (const auto& b : s.bodies()) {
            ASSERT_TRUE(std::isfinite(b.x[0]) && std::isfinite(b.x[1]) && std::isfinite(b.x[2]));
            ASSERT_GE(b.x[0], 0.0);
            ASSERT_LE(b.x[0], 1.2);
            ASSERT_GE(b.x[1], 0.0);
            ASSERT_LE(b.x[1], 1.2);
        }
    });
    std::visit([&](const auto& s) { EXPECT_NEAR(s.grid().volume(), v0, 1e-5 * v0); }, sim.solver);

    const nlohmann::json shelf = {{{"shape", "box"}, {"center", {1.1, 0.6, 0.7}}, {"size", {0.1, 0.1, 0.05}}, {"density", 800.0}}};
    nlohmann::json j = basin(80, 1.2, false, shelf, "float");
    j["terrain"] = "x > 1.0 ? 0.5 : 0";
    j["water"]["surface"] = "x > 1.0 ? 0 : 0.3";
    ShallowWaterSimulation dry = make(j);
    run_to(dry, 1.0, exec, [](const auto&) {});
    std::visit(
        [&](const auto& s) {
            const auto& b = s.bodies()[0];
            std::printf("On the shelf: underside at %.6f m (terrain 0.5 m), vertical speed %.2e m/s\n", b.x[2] - 0.025, b.v[2]);
            EXPECT_NEAR(b.x[2] - 0.025, 0.5, 1e-9);
            EXPECT_EQ(b.v[2], 0.0);
        },
        dry.solver);
}
