// Whitewater (Ihmsen et al. 2012; eddy/whitewater.hpp): nothing from a tank at rest, spray on the exact
// parabola, bubbles rising, foam expiring, classification by neighbour count against a brute-force count,
// a 3D dam break making spray, foam and bubbles (counts per frame printed), the same bytes on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/whitewater.hpp"

using namespace eddy;

namespace {

constexpr float kR = 0.01f;  // particle radius (m)

// A block of fluid at rest on a lattice of spacing 2r: n x n x n (3D), corner at the origin.
template <int D>
std::vector<Vec<D>> block(int n) {
    std::vector<Vec<D>> x;
    for (int k = 0; k < (D == 3 ? n : 1); ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                Vec<D> p;
                p[0] = (2 * i + 1) * kR;
                p[1] = (2 * j + 1) * kR;
                if constexpr (D == 3) p[2] = (2 * k + 1) * kR;
                x.push_back(p);
            }
    return x;
}

template <int D>
void add(Whitewater<D>& w, Vec<D> x, Vec<D> u, Diffuse type, float lifetime) {
    w.position.push_back(x);
    w.velocity.push_back(u);
    w.type.push_back(static_cast<std::uint8_t>(type));
    w.lifetime.push_back(lifetime);
    w.id.push_back(w.next_id++);
}

template <int D>
bool same_bytes(const Whitewater<D>& a, const Whitewater<D>& b) {
    auto eq = [](const auto& u, const auto& v) {
        return u.size() == v.size() && (u.empty() || std::memcmp(u.data(), v.data(), u.size() * sizeof(u[0])) == 0);
    };
    return eq(a.position, b.position) && eq(a.velocity, b.velocity) && eq(a.type, b.type) && eq(a.lifetime, b.lifetime) &&
           eq(a.id, b.id);
}

ParticleSimulation<3>& sim3(Simulation& s) { return std::get<ParticleSimulation<3>>(s); }

}  // namespace

TEST(Whitewater, SettingsChecked) {
    WhitewaterSettings s;
    EXPECT_NO_THROW(validate(s));
    s.trapped_air_min = 9.0f;
    s.trapped_air_max = 8.0f;
    try {
        validate(s, "test");
        FAIL() << "min above max accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("trapped_air_min"), std::string::npos) << e.what();
    }
    s = WhitewaterSettings{};
    s.drag = 2.0f;
    EXPECT_THROW(validate(s), InputError);
}

// A tank settling under gravity (WCSPH, 0.2 s): its slow motions stay below every potential's lower
// limit, so not one diffuse particle is made.
TEST(Whitewater, TankAtRestMakesNothing) {
    const nlohmann::json j = {{"name", "ww_tank"}, {"dimension", 3}, {"method", "wcsph"}, {"particle_radius", kR},
                              {"gravity", {0, -9.81, 0}}, {"duration", 0.2},
                              {"boundaries", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.2, 0.2, 0.2}}}}},
                              {"fluids", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.2, 0.1, 0.2}}}}}};
    const Scene scene = parse_scene(j, "ww_tank");
    ExecContext exec(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec);
    auto& s = sim3(sim);
    Whitewater<3> w;
    const WhitewaterSettings ws;
    while (s.time < 0.2) {
        const StepStats st = step(sim, exec, 0.2);
        step_whitewater<3>(w, s.fluid.position, s.fluid.velocity, kR, Vec3{{0, -9.81f, 0}}, st.dt, s.steps, ws, exec);
    }
    EXPECT_EQ(w.counts.generated, 0u);
    EXPECT_TRUE(w.empty());
}

// Spray (no fluid within h) follows x0 + u0 t + g t^2 / 2 exactly, whatever the step.
TEST(Whitewater, SprayFollowsTheParabola) {
    const auto fluid = block<3>(4);  // far below: the spray never has a fluid neighbour
    const std::vector<Vec3> still(fluid.size(), Vec3::zero());
    WhitewaterSettings s;
    s.margin = 100.0f;
    Whitewater<3> w;
    const Vec3 x0{{0.0f, 5.0f, 0.0f}}, u0{{1.5f, 4.0f, -0.5f}}, g{{0.0f, -9.81f, 0.0f}};
    add<3>(w, x0, u0, Diffuse::spray, 1.0f);
    ExecContext exec(1);
    const double dt = 0.01;
    for (int k = 1; k <= 60; ++k) {
        step_whitewater<3>(w, fluid, still, kR, g, dt, k, s, exec);
        ASSERT_EQ(w.size(), 1u);
        ASSERT_EQ(w.type[0], std::uint8_t(Diffuse::spray));
        const float t = float(k * dt);
        for (int a = 0; a < 3; ++a) {
            EXPECT_NEAR(w.position[0][a], x0[a] + u0[a] * t + 0.5f * g[a] * t * t, 2e-5f) << "step " << k << " axis " << a;
            EXPECT_NEAR(w.velocity[0][a], u0[a] + g[a] * t, 2e-5f) << "step " << k << " axis " << a;
        }
    }
}

// A bubble deep in fluid at rest rises (buoyancy k_b against gravity, dragged toward the still fluid).
TEST(Whitewater, BubbleRises) {
    const auto fluid = block<3>(16);
    const std::vector<Vec3> still(fluid.size(), Vec3::zero());
    WhitewaterSettings s;
    Whitewater<3> w;
    const Vec3 x0{{16 * kR, 8 * kR, 16 * kR}};
    add<3>(w, x0, Vec3::zero(), Diffuse::bubble, 1.0f);
    ExecContext exec(1);
    float y = x0[1];
    for (int k = 1; k <= 20; ++k) {
        step_whitewater<3>(w, fluid, still, kR, Vec3{{0, -9.81f, 0}}, 0.002, k, s, exec);
        ASSERT_EQ(w.size(), 1u);
        EXPECT_EQ(w.type[0], std::uint8_t(Diffuse::bubble));
        EXPECT_GT(w.position[0][1], y) << "step " << k;
        EXPECT_GT(w.velocity[0][1], 0.0f);
        EXPECT_NEAR(w.position[0][0], x0[0], 1e-6f);
        y = w.position[0][1];
    }
    // Terminal velocity of u += dt k_b g' + k_d (0 - u): u = dt k_b g' / k_d = 0.002 * 2 * 9.81 / 0.5.
    EXPECT_NEAR(w.velocity[0][1], 0.002f * 2.0f * 9.81f / 0.5f, 1e-3f);
}

// Foam lives lifetime seconds (while foam), then is dropped and counted as expired.
TEST(Whitewater, FoamExpires) {
    const auto fluid = block<3>(8);
    const std::vector<Vec3> still(fluid.size(), Vec3::zero());
    WhitewaterSettings s;
    s.spray_neighbors = 1;      // within the fluid: foam
    s.bubble_neighbors = 1000;  // never a bubble
    Whitewater<3> w;
    add<3>(w, Vec3{{8 * kR, 8 * kR, 8 * kR}}, Vec3::zero(), Diffuse::foam, 0.045f);
    ExecContext exec(1);
    for (int k = 1; k <= 4; ++k) {
        step_whitewater<3>(w, fluid, still, kR, Vec3{{0, -9.81f, 0}}, 0.01, k, s, exec);
        ASSERT_EQ(w.size(), 1u) << "step " << k;
        EXPECT_EQ(w.type[0], std::uint8_t(Diffuse::foam));
        EXPECT_NEAR(w.lifetime[0], 0.045f - 0.01f * k, 1e-6f);
    }
    step_whitewater<3>(w, fluid, still, kR, Vec3{{0, -9.81f, 0}}, 0.01, 5, s, exec);
    EXPECT_EQ(w.size(), 0u);
    EXPECT_EQ(w.counts.expired, 1u);
}

// The type of each diffuse particle against a brute-force count of fluid particles within h = 4 r:
// spray < 6, foam 6..20, bubble > 20 (3D); 2D < 2, 2..8, > 8.
template <int D>
void classification() {
    const auto fluid = block<D>(D == 3 ? 10 : 24);
    const std::vector<Vec<D>> still(fluid.size(), Vec<D>::zero());
    WhitewaterSettings s;
    Whitewater<D> w;
    // A line of points from deep inside to well outside, through the face x = 0 of the block.
    for (int k = 0; k < 80; ++k) {
        Vec<D> x = Vec<D>::filled(D == 3 ? 10 * kR : 24 * kR);
        x[0] = 10 * kR - k * 0.2f * kR;
        add<D>(w, x, Vec<D>::zero(), Diffuse::spray, 1.0f);
    }
    const auto before = w.position;
    ExecContext exec(2);
    step_whitewater<D>(w, fluid, still, kR, Vec<D>::zero(), 0.0, 1, s, exec);  // dt 0: nothing moves
    ASSERT_EQ(w.size(), before.size());
    int seen[3] = {0, 0, 0};
    for (std::size_t d = 0; d < w.size(); ++d) {
        ASSERT_TRUE(w.position[d] == before[d]);
        int count = 0;
        for (const auto& f : fluid) count += norm2(f - before[d]) < (4 * kR) * (4 * kR);
        const int expect = count < s.spray_below(D) ? 0 : count > s.bubble_above(D) ? 2 : 1;
        EXPECT_EQ(int(w.type[d]), expect) << "point " << d << " with " << count << " neighbours";
        ++seen[expect];
    }
    EXPECT_GT(seen[0], 0);
    EXPECT_GT(seen[1], 0);
    EXPECT_GT(seen[2], 0);
    EXPECT_EQ(w.counts.spray + w.counts.foam + w.counts.bubbles, w.size());
}
TEST(Whitewater, ClassifiedByNeighbourCount3D) { classification<3>(); }
TEST(Whitewater, ClassifiedByNeighbourCount2D) { classification<2>(); }

// The bundled 3D dam break (r = 1 cm, 3,375 particles, WCSPH) to 0.6 s with whitewater after every
// step: spray, foam and bubbles all appear; counts per frame (25 fps) printed. The whitewater is stepped
// twice from the same fluid, on 1 and on 2 threads: the same bytes at every frame.
TEST(Whitewater, DamBreakMakesAllThreeTypesOnAnyThreadCount) {
    const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/dam_break_3d.json",
                                   {"particle_radius=0.01"});
    ExecContext exec1(1), exec2(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec2);
    auto& s = sim3(sim);
    const Vec3 g = from_array<3>(scene.gravity);
    const WhitewaterSettings ws;
    Whitewater<3> w1, w2;
    std::uint64_t most[3] = {0, 0, 0};
    int frame = 1;
    std::printf("frame,time,spray,foam,bubbles\n0,0,0,0,0\n");
    while (s.time < 0.6 - 1e-9) {
        const StepStats st = step(sim, exec2, std::min(0.6, frame * 0.04));
        ASSERT_FALSE(st.non_finite);
        step_whitewater<3>(w1, s.fluid.position, s.fluid.velocity, float(scene.particle_radius), g, st.dt, s.steps, ws, exec1);
        step_whitewater<3>(w2, s.fluid.position, s.fluid.velocity, float(scene.particle_radius), g, st.dt, s.steps, ws, exec2);
        if (s.time >= frame * 0.04 - 1e-9) {
            std::printf("%d,%.3f,%llu,%llu,%llu\n", frame, s.time, (unsigned long long)w1.counts.spray,
                        (unsigned long long)w1.counts.foam, (unsigned long long)w1.counts.bubbles);
            ASSERT_TRUE(same_bytes(w1, w2)) << "1 and 2 threads differ at frame " << frame;
            most[0] = std::max(most[0], w1.counts.spray);
            most[1] = std::max(most[1], w1.counts.foam);
            most[2] = std::max(most[2], w1.counts.bubbles);
            ++frame;
        }
    }
    EXPECT_TRUE(same_bytes(w1, w2));
    EXPECT_GT(most[0], 0u) << "no spray";
    EXPECT_GT(most[1], 0u) << "no foam";
    EXPECT_GT(most[2], 0u) << "no bubbles";
    EXPECT_GT(w1.counts.generated, 100u);
}

// Every particle method (the 2D dam break, each method's defaults, to 0.5 s): whitewater is made from the
// fluid alone, and is the same bytes on 1 and 2 threads.
TEST(Whitewater, EveryMethodIn2D) {
    for (const char* method : {"wcsph", "dfsph", "pbf", "clavet"}) {
        const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/dam_break_2d.json",
                                       {std::string("method=") + method});
        ExecContext exec1(1), exec2(2);
        Simulation sim = make_simulation(scene, 1'000'000, exec2);
        auto& s = std::get<ParticleSimulation<2>>(sim);
        const Vec2 g = from_array<2>(scene.gravity);
        const WhitewaterSettings ws;
        Whitewater<2> w1, w2;
        while (s.time < 0.5 - 1e-9) {
            const StepStats st = step(sim, exec2, 0.5);
            ASSERT_FALSE(st.non_finite) << method;
            const float r = float(scene.particle_radius);
            step_whitewater<2>(w1, s.fluid.position, s.fluid.velocity, r, g, st.dt, s.steps, ws, exec1);
            step_whitewater<2>(w2, s.fluid.position, s.fluid.velocity, r, g, st.dt, s.steps, ws, exec2);
        }
        std::printf("%s: %zu fluid, generated %llu; at 0.5 s %llu spray, %llu foam, %llu bubbles\n", method,
                    s.fluid.size(), (unsigned long long)w1.counts.generated, (unsigned long long)w1.counts.spray,
                    (unsigned long long)w1.counts.foam, (unsigned long long)w1.counts.bubbles);
        EXPECT_GT(w1.counts.generated, 0u) << method;
        EXPECT_TRUE(same_bytes(w1, w2)) << method;
    }
}
