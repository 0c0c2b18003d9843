// Sinks (issue 45; eddy/emitters.hpp): drains that remove and count the fluid entering them while open.
// draining_tank_2d empties through a slot in its floor into a sink below: its volume follows Torricelli's
// law, Q = Cd w sqrt(2 g h), so sqrt(V) falls linearly in time, with a discharge coefficient near
// Kirchhoff's free-streamline value for a sharp-edged 2D slot, Cd = pi / (pi + 2) = 0.611 (a contracted
// jet; Batchelor 1967, section 6.13). Also: every removed particle counted once and never back, a sink
// that opens and closes, the same bits on 1 and 2 threads and through a checkpoint, the scene's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"

using namespace eddy;

namespace {

std::filesystem::path scene_file(const char* name) {
    return std::filesystem::path(EDDY_SOURCE_DIR) / "scenes" / (std::string(name) + ".json");
}

// A 2D container with 12 cm of water and a circular sink on its floor, open from 0.2 to 0.4 s.
nlohmann::json tank_with_plug() {
    return {{"name", "plug"}, {"dimension", 2}, {"method", "dfsph"}, {"particle_radius", 0.004}, {"gravity", {0, -9.81}},
            {"duration", 0.8},
            {"boundaries", {{{"shape", "box"}, {"min", {0.0, 0.0}}, {"max", {0.3, 0.3}}}}},
            {"fluids", {{{"shape", "box"}, {"min", {0.0, 0.0}}, {"max", {0.3, 0.12}}}}},
            {"sinks", {{{"name", "plug"}, {"shape", "circle"}, {"center", {0.15, 0.0}}, {"radius", 0.03}, {"start", 0.2},
                        {"stop", 0.4}}}}};
}

}  // namespace

TEST(Sinks, DrainingTankFollowsTorricelli) {
    const Scene scene = load_scene(scene_file("draining_tank_2d"), {"particle_radius=0.001"});
    ExecContext exec(2);
    Simulation simulation = make_simulation(scene, 1'000'000, exec);
    auto& sim = std::get<ParticleSimulation<2>>(simulation);
    const double L = 0.3, w = 0.04, g = 9.81;
    const double volume = double(sim.fluid.mass) / 1000.0;  // m / rho0 (m^2 in 2D)
    const std::size_t n0 = sim.fluid.size();
    std::vector<double> ts, roots;  // sqrt(V) of the water in the tank while 4 cm < h < 16 cm
    std::set<std::uint32_t> gone;
    for (int frame = 1; frame <= 50; ++frame) {
        const double until = 0.05 * frame;
        std::set<std::uint32_t> before(sim.fluid.id.begin(), sim.fluid.id.end());
        while (sim.time < until - 1e-9) {
            const StepStats st = step(simulation, exec, until);
            ASSERT_FALSE(st.non_finite);
            ASSERT_TRUE(step_divergence(st, method_dt_min(sim.method)).empty());
        }
        std::set<std::uint32_t> after(sim.fluid.id.begin(), sim.fluid.id.end());
        for (std::uint32_t id : after) ASSERT_FALSE(gone.count(id)) << "a drained particle came back";
        for (std::uint32_t id : before)
            if (!after.count(id)) gone.insert(id);
        // Every particle is in the fluid or counted by the sink (none escaped, there is no domain).
        ASSERT_EQ(sim.fluid.size() + sim.flow.counts.drained[0], n0);
        ASSERT_EQ(gone.size(), sim.flow.counts.drained[0]);
        ASSERT_EQ(sim.flow.counts.removed_escaped + sim.flow.counts.removed_outflow, 0u);
        std::size_t in_tank = 0;
        for (const auto& x : sim.fluid.position) in_tank += x[1] > 0.0f ? 1 : 0;
        const double V = double(in_tank) * volume, h = V / L;
        if (sim.time > 0.3 && h > 0.04 && h < 0.16) {
            ts.push_back(sim.time);
            roots.push_back(std::sqrt(V));
        }
    }
    ASSERT_GE(ts.size(), 10u);
    // Least squares line through (t, sqrt V) and its coefficient of determination.
    const double n = double(ts.size());
    double st = 0, sr = 0, stt = 0, str = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) st += ts[i], sr += roots[i], stt += ts[i] * ts[i], str += ts[i] * roots[i];
    const double slope = (n * str - st * sr) / (n * stt - st * st), icept = (sr - slope * st) / n;
    double ss_res = 0, ss_tot = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) {
        ss_res += std::pow(roots[i] - (icept + slope * ts[i]), 2);
        ss_tot += std::pow(roots[i] - sr / n, 2);
    }
    const double r2 = 1.0 - ss_res / ss_tot;
    // dV/dt = -Cd w sqrt(2 g V / L)  =>  d sqrt(V)/dt = -Cd w sqrt(2 g / L) / 2.
    const double cd = -2.0 * slope / (w * std::sqrt(2.0 * g / L));
    const double kirchhoff = 3.14159265358979323846 / (3.14159265358979323846 + 2.0);
    RecordProperty("discharge_coefficient", std::to_string(cd));
    RecordProperty("r_squared", std::to_string(r2));
    std::printf("draining_tank_2d: Cd = %.3f (Kirchhoff %.3f, %+.1f%%), R^2 of sqrt(V) against t = %.5f over %zu frames\n",
                cd, kirchhoff, 100.0 * (cd / kirchhoff - 1.0), r2, ts.size());
    EXPECT_GE(r2, 0.995);
    // Cd at r = 4, 2, 1 mm (5, 10, 20 particles across the slot; 2026-12-03): -11.3, -3.8, +0.4% with the
    // floor's boxes drawn smooth, converging on Kirchhoff's; +2.7, +6.3, +6.4% with their Akinci particles
    // (converging 6% high). Run here at r = 1 mm, where the jet is resolved (the bundled scene keeps 4 mm).
    EXPECT_NEAR(cd / kirchhoff, 1.0, 0.03);
}

TEST(Sinks, OpenOnlyBetweenStartAndStop) {
    const Scene scene = parse_scene(tank_with_plug(), "plug.json");
    ExecContext exec(2);
    Simulation simulation = make_simulation(scene, 1'000'000, exec);
    auto& sim = std::get<ParticleSimulation<2>>(simulation);
    const std::size_t n0 = sim.fluid.size();
    auto run_to = [&](double until) {
        while (sim.time < until - 1e-9) ASSERT_FALSE(step(simulation, exec, until).non_finite);
    };
    run_to(0.19);  // (a step that ends at `start` or later drains, one that ends at `stop` or later does not)
    EXPECT_EQ(sim.flow.counts.drained[0], 0u) << "drained before it opened";
    run_to(0.4);
    const std::uint64_t drained = sim.flow.counts.drained[0];
    EXPECT_GT(drained, 20u);
    EXPECT_EQ(sim.fluid.size() + drained, n0);
    run_to(0.8);
    EXPECT_EQ(sim.flow.counts.drained[0], drained) << "drained after it closed";
    // Closed, the water flows back over it.
    std::size_t inside = 0;
    for (const auto& x : sim.fluid.position) inside += norm(x - Vec2{{0.15f, 0.0f}}) < 0.03f ? 1 : 0;
    EXPECT_GT(inside, 5u);
}

TEST(Sinks, SameBitsOn1And2ThreadsAndThroughACheckpoint) {
    const Scene scene = load_scene(scene_file("draining_tank_2d"), {"duration=1"});
    auto run = [&](int threads, int steps) {
        ExecContext exec(threads);
        Simulation sim = make_simulation(scene, 1'000'000, exec);
        for (int i = 0; i < steps; ++i) step(sim, exec);
        return std::make_pair(state_hash(sim), std::get<ParticleSimulation<2>>(sim).flow.counts.drained[0]);
    };
    const auto a = run(1, 400), b = run(2, 400);
    EXPECT_EQ(a.first, b.first);
    EXPECT_GT(a.second, 0u);
    EXPECT_EQ(a.second, b.second);
    ExecContext exec(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec);
    for (int i = 0; i < 200; ++i) step(sim, exec);
    const auto file = std::filesystem::temp_directory_path() / "eddy_sinks_test.eddy";
    write_checkpoint(file, sim, nlohmann::json::object());
    nlohmann::json record;
    Simulation resumed = read_checkpoint(file, exec, record);
    std::filesystem::remove(file);
    for (int i = 0; i < 200; ++i) step(resumed, exec);
    EXPECT_EQ(state_hash(resumed), a.first);
    EXPECT_EQ(std::get<ParticleSimulation<2>>(resumed).flow.counts.drained[0], a.second);
}

TEST(Sinks, SceneErrorsNameTheKey) {
    auto expect_error = [](const std::string& key, const nlohmann::json& value, const std::string& words) {
        nlohmann::json j = tank_with_plug();
        if (value.is_null()) j["sinks"][0].erase(key);
        else if (key.empty()) j["sinks"] = value;
        else j["sinks"][0][key] = value;
        try {
            parse_scene(j, "plug.json");
            ADD_FAILURE() << key << " = " << value.dump() << " was accepted";
        } catch (const InputError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(words), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    };
    expect_error("shape", "sphere", "sinks[0].shape: \"sphere\" is not allowed in 2D; allowed: box, circle");
    expect_error("radius", 0.001, "sinks[0].radius");
    expect_error("radius", -1.0, "sinks[0].radius");
    expect_error("stop", 0.1, "sinks[0].stop");
    expect_error("start", -1.0, "sinks[0].start");
    expect_error("raduis", 0.03, "did you mean 'radius'");
    expect_error("center", nullptr, "sinks[0].center: missing");
    expect_error("name", "", "sinks[0].name");
    expect_error("", nlohmann::json::object(), "sinks");
    nlohmann::json many = nlohmann::json::array();
    for (int i = 0; i < 257; ++i) many.push_back({{"min", {0, 0}}, {"max", {1, 1}}, {"name", std::to_string(i)}});
    expect_error("", many, "at most 256");
    nlohmann::json twice = nlohmann::json::array({{{"min", {0, 0}}, {"max", {1, 1}}}, {{"min", {0, 0}}, {"max", {1, 1}}, {"name", "sinks[0]"}}});
    expect_error("", twice, "sinks[1].name");
    nlohmann::json inverted = nlohmann::json::array({{{"min", {1, 0}}, {"max", {0, 1}}}});
    expect_error("", inverted, "sinks[0]: min.x");
}
