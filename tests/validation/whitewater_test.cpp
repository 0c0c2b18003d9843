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

namespace {

// Walls (eddy/boundary.hpp) as step_whitewater's: a container [0, 1]^3 and a solid ball in it.
std::vector<Wall<3>> tank_and_ball() {
    std::vector<Wall<3>> walls(2);
    walls[0].shape = Wall<3>::Shape::box;
    walls[0].lo = Vec3::zero();
    walls[0].hi = Vec3::filled(1.0f);
    walls[1].shape = Wall<3>::Shape::ball;
    walls[1].solid = true;
    walls[1].center = Vec3{{0.5f, 0.5f, 0.5f}};
    walls[1].radius = 0.1f;
    for (auto& w : walls) update_wall_reach(w);
    index_walls(walls, kR);
    return walls;
}

bool inside_tank_out_of_ball(const Vec3& x, float inset) {
    for (int a = 0; a < 3; ++a)
        if (x[a] < inset || x[a] > 1.0f - inset) return false;
    return norm(x - Vec3{{0.5f, 0.5f, 0.5f}}) >= 0.1f + inset;
}

}  // namespace

// Spray thrown in every direction at the walls of a tank with a ball in it, fast (3 to 15 m/s, up to
// 7.5 cm a step): after every step no particle is inside a wall or within r/2 of one (1e-5 m slack),
// and every one that reached a wall was dropped there (counts.walled), none escaped. Without the walls
// they fly out of the tank.
TEST(Whitewater, SprayThrownAtAWallNeverEndsInsideIt) {
    const auto fluid = block<3>(3);  // in a corner of the tank, at rest: nothing is generated
    const std::vector<Vec3> still(fluid.size(), Vec3::zero());
    const std::vector<Wall<3>> walls = tank_and_ball();
    WhitewaterSettings s;
    s.margin = 100.0f;
    const Vec3 g{{0.0f, -9.81f, 0.0f}};
    for (const bool with_walls : {true, false}) {
        for (const int threads : {1, 2}) {
            Whitewater<3> w;
            for (int k = 0; k < 400; ++k) {
                const float a = 0.61803f * k, b = 0.41421f * k;  // directions spread over the sphere
                const float cz = 1.0f - 2.0f * ((k + 0.5f) / 400.0f), sz = std::sqrt(1.0f - cz * cz);
                const Vec3 dir{{sz * std::cos(6.2832f * a), cz, sz * std::sin(6.2832f * a)}};
                const float speed = 3.0f + 12.0f * (b - std::floor(b));
                const Vec3 x0{{0.25f + 0.5f * ((k * 7) % 11) / 10.0f, 0.75f, 0.2f + 0.6f * ((k * 3) % 7) / 6.0f}};
                add<3>(w, x0, speed * dir, Diffuse::spray, 3.0f);
            }
            ExecContext exec(threads);
            std::size_t bad = 0;
            for (int step = 1; step <= 200; ++step) {
                step_whitewater<3>(w, fluid, still, kR, g, 0.005, step, s, exec, with_walls ? &walls : nullptr);
                for (const Vec3& x : w.position) bad += inside_tank_out_of_ball(x, 0.5f * kR - 1e-5f) ? 0 : 1;
            }
            if (with_walls) {
                EXPECT_EQ(bad, 0u) << threads << " threads";
                EXPECT_EQ(w.size(), 0u) << "after 1 s every spray particle has hit a wall";
                EXPECT_EQ(w.counts.walled, 400u);
                EXPECT_EQ(w.counts.escaped, 0u);
            } else {
                EXPECT_GT(bad, 1000u) << "without walls the spray leaves the tank";
                EXPECT_EQ(w.counts.walled, 0u);
            }
        }
    }
}

// Foam carried by fluid that runs into a wall (fluid at 2 m/s towards x = 1, as given: the fluid is not
// stepped) and bubbles rising under a lid stay in the tank, r/2 off the wall, and are kept (not dropped);
// their velocity into the wall is removed. The same bytes on 1 and 2 threads.
TEST(Whitewater, FoamAndBubblesStopAtTheWall) {
    std::vector<Wall<3>> walls(1);
    walls[0].shape = Wall<3>::Shape::box;
    walls[0].lo = Vec3::zero();
    walls[0].hi = Vec3{{0.2f, 0.2f, 0.2f}};
    update_wall_reach(walls[0]);
    // Fluid filling the tank (10^3 lattice, spacing 2r = 2 cm).
    auto fluid = block<3>(10);
    const std::vector<Vec3> towards(fluid.size(), Vec3{{2.0f, 0.0f, 0.0f}});
    WhitewaterSettings s;
    s.kinetic_min = 100.0f;  // nothing new: only the particles placed here
    s.kinetic_max = 200.0f;
    s.lifetime_min = s.lifetime_max = 100.0f;
    s.spray_neighbors = 1;  // spray only without fluid around: none here (spray at a wall is dropped)
    const Vec3 g{{0.0f, -9.81f, 0.0f}};
    Whitewater<3> out[2];
    for (const int threads : {1, 2}) {
        Whitewater<3>& w = out[threads - 1];
        for (int k = 0; k < 50; ++k) {
            // placed as foam and as bubbles (classified again by their neighbours at the first step)
            add<3>(w, Vec3{{0.05f + 0.002f * k, 0.15f, 0.1f}}, Vec3::zero(), Diffuse::foam, 100.0f);
            add<3>(w, Vec3{{0.1f, 0.1f + 0.001f * k, 0.1f}}, Vec3::zero(), Diffuse::bubble, 100.0f);
        }
        ExecContext exec(threads);
        for (int step = 1; step <= 100; ++step) {
            step_whitewater<3>(w, fluid, towards, kR, g, 0.005, step, s, exec, &walls);
            for (std::size_t d = 0; d < w.size(); ++d)
                for (int a = 0; a < 3; ++a) {
                    ASSERT_GE(w.position[d][a], 0.5f * kR - 1e-5f) << "step " << step;
                    ASSERT_LE(w.position[d][a], 0.2f - 0.5f * kR + 1e-5f) << "step " << step;
                }
        }
        EXPECT_EQ(w.size(), 100u) << "foam and bubbles at a wall are kept";
        EXPECT_EQ(w.counts.walled, 0u);
        std::size_t at_wall = 0;
        for (std::size_t d = 0; d < w.size(); ++d)
            if (w.position[d][0] > 0.2f - 0.5f * kR - 1e-4f) {
                ++at_wall;
                EXPECT_LE(w.velocity[d][0], 1e-6f) << "velocity into the wall removed";
            }
        EXPECT_GT(at_wall, 50u) << "the fluid carried them to the wall";
    }
    EXPECT_TRUE(same_bytes(out[0], out[1]));
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
// step, inside the scene's walls (scene_walls, as eddy run --whitewater): spray, foam and bubbles all
// appear; counts per frame (25 fps) printed; after every step every diffuse particle is inside the tank
// (r/2 off its walls). The whitewater is stepped twice from the same fluid, on 1 and on 2 threads: the
// same bytes at every frame.
TEST(Whitewater, DamBreakMakesAllThreeTypesOnAnyThreadCount) {
    const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/dam_break_3d.json",
                                   {"particle_radius=0.01"});
    ExecContext exec1(1), exec2(2);
    Simulation sim = make_simulation(scene, 1'000'000, exec2);
    auto& s = sim3(sim);
    const Vec3 g = from_array<3>(scene.gravity);
    const WhitewaterSettings ws;
    const std::vector<Wall<3>> walls = scene_walls<3>(scene, exec2);  // the tank, as eddy run passes it
    // The tank [0, 1] x [0, 0.6] x [0, 0.3]: every diffuse particle stays r/2 inside it (1e-5 m slack).
    const Vec3 lo = from_array<3>(scene.boundaries[0].min), hi = from_array<3>(scene.boundaries[0].max);
    const float inset = 0.5f * float(scene.particle_radius) - 1e-5f;
    std::size_t outside = 0;
    Whitewater<3> w1, w2;
    std::uint64_t most[3] = {0, 0, 0};
    int frame = 1;
    std::printf("frame,time,spray,foam,bubbles\n0,0,0,0,0\n");
    while (s.time < 0.6 - 1e-9) {
        const StepStats st = step(sim, exec2, std::min(0.6, frame * 0.04));
        ASSERT_FALSE(st.non_finite);
        step_whitewater<3>(w1, s.fluid.position, s.fluid.velocity, float(scene.particle_radius), g, st.dt, s.steps, ws, exec1,
                           &walls);
        step_whitewater<3>(w2, s.fluid.position, s.fluid.velocity, float(scene.particle_radius), g, st.dt, s.steps, ws, exec2,
                           &walls);
        for (const Vec3& x : w1.position)
            for (int a = 0; a < 3; ++a) outside += (x[a] < lo[a] + inset || x[a] > hi[a] - inset) ? 1 : 0;
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
    EXPECT_EQ(outside, 0u) << "diffuse particles outside the tank";
    std::printf("spray dropped at the walls: %llu, escaped: %llu\n", (unsigned long long)w1.counts.walled,
                (unsigned long long)w1.counts.escaped);
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

// The whitewater on the method's own lists (issue 42): two runs of the same 3D dam break (r = 1 cm, to
// 0.3 s), one whose whitewater takes the method's lists at the new positions after every step
// (fluid_lists_between_steps), one whose whitewater searches its own. Checked: the shared lists are the
// whitewater's radius over every particle (else the whitewater would quietly search its own); each step
// of the sharing run then kept them (one search per step, not two); the fluid is the same bits in both runs
// (the method's search moved, its lists did not change), and so is the whitewater at every step. PBF
// (which searches at predicted positions within its step) has none to share.
TEST(Whitewater, MethodListsSharedSameBits) {
    for (const char* method : {"dfsph", "wcsph"}) {
        const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/dam_break_3d.json",
                                       {"particle_radius=0.01", std::string("method=") + method});
        ExecContext exec(2);
        Simulation a = make_simulation(scene, 1'000'000, exec), b = make_simulation(scene, 1'000'000, exec);
        auto &sa = sim3(a), &sb = sim3(b);
        const Vec3 g = from_array<3>(scene.gravity);
        const float r = float(scene.particle_radius);
        const WhitewaterSettings ws;
        const std::vector<Wall<3>> walls = scene_walls<3>(scene, exec);
        auto neighborhood = [&](ParticleSimulation<3>& s) {
            return std::visit(
                [](auto& m) -> FluidNeighborhood<3>* {
                    if constexpr (requires { m.neighborhood_between_steps(); }) return m.neighborhood_between_steps();
                    return nullptr;
                },
                s.method);
        };
        ASSERT_NE(neighborhood(sa), nullptr) << method;
        Whitewater<3> wa, wb;
        int steps = 0;
        while (sa.time < 0.3 - 1e-9) {
            const std::uint64_t before = neighborhood(sa)->fluid_searches();
            const StepStats st = step(a, exec, 0.3);
            ASSERT_FALSE(st.non_finite) << method;
            // A step that reordered the fluid (its sort phase back at 0) searches again; the others keep the lists.
            const bool reordered = neighborhood(sa)->sort_phase() == 0;
            if (steps > 0) {
                ASSERT_EQ(neighborhood(sa)->fluid_searches(), before + (reordered ? 1 : 0))
                    << method << ": step " << steps << " did not keep the lists";
            }
            step(b, exec, 0.3);
            const FluidLists<3> lists = fluid_lists_between_steps(sa, exec);
            ASSERT_TRUE(lists.lists && lists.grid) << method;
            ASSERT_EQ(lists.radius, ws.support(r)) << method;
            ASSERT_EQ(lists.lists->size(), sa.fluid.size()) << method;
            step_whitewater_by_id<3>(wa, sa.fluid.position, sa.fluid.velocity, sa.fluid.id, r, g, st.dt, sa.steps, ws,
                                     exec, &walls, lists);
            step_whitewater_by_id<3>(wb, sb.fluid.position, sb.fluid.velocity, sb.fluid.id, r, g, st.dt, sb.steps, ws,
                                     exec, &walls);
            ASSERT_EQ(sa.fluid.size(), sb.fluid.size()) << method;
            ASSERT_EQ(0, std::memcmp(sa.fluid.position.data(), sb.fluid.position.data(), sa.fluid.size() * sizeof(Vec3)))
                << method << ": the fluid differs at step " << steps;
            ASSERT_TRUE(same_bytes(wa, wb)) << method << ": the whitewater differs at step " << steps;
            ++steps;
        }
        std::printf("%s: %d steps, %zu fluid, %llu diffuse generated, the same bits with and without shared lists\n",
                    method, steps, sa.fluid.size(), (unsigned long long)wa.counts.generated);
        EXPECT_GT(wa.counts.generated, 100u) << method;
    }
    const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/dam_break_3d.json",
                                   {"particle_radius=0.01", "method=pbf"});
    ExecContext exec(2);
    Simulation p = make_simulation(scene, 1'000'000, exec);
    EXPECT_EQ(fluid_lists_between_steps(sim3(p), exec).lists, nullptr);
}
