#include <gtest/gtest.h>

#include <fstream>

#include "eddy/error.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/scene.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

fs::path scenes_dir() { return fs::path(EDDY_SOURCE_DIR) / "scenes"; }

// Expects an InputError whose message contains every one of `needles`.
template <class F>
void expect_input_error(F&& f, std::initializer_list<std::string> needles) {
    try {
        f();
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
        for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
    }
}

nlohmann::json base2d() {
    return {{"name", "t"}, {"dimension", 2}, {"method", "wcsph"}, {"particle_radius", 0.01},
            {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 1}}}}},
            {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {0.2, 0.2}}}}}};
}

template <int D>
float closest_fluid_boundary(const ParticleSet<D>& f, const BoundarySet<D>& b) {
    ExecContext exec(2);
    NeighborGrid<D> g(0.2f);
    g.build(b.position, exec);
    float best = 1e30f;
    for (const auto& x : f.position) {
        g.for_each_neighbor(x, 0.2f, [&](std::uint32_t j) { best = std::min(best, norm(x - b.position[j])); });
    }
    return best;
}

}  // namespace

TEST(Scene, EveryBundledSceneLoadsAndBuilds) {
    std::size_t count = 0;
    for (const auto& e : fs::directory_iterator(scenes_dir())) {
        if (e.path().extension() != ".json") continue;
        ++count;
        SCOPED_TRACE(e.path().string());
        const Scene s = load_scene(e.path());
        EXPECT_FALSE(s.description.empty());
        const float r = static_cast<float>(s.particle_radius);
        if (s.dimension == 2) {
            const auto f = build_fluid<2>(s, 5'000'000);
            const auto b = build_boundary<2>(s);
            EXPECT_GT(f.size(), 100u);
            EXPECT_GT(b.size(), 100u);
            EXPECT_GE(closest_fluid_boundary(f, b), 0.95f * r);
        } else {
            const auto f = build_fluid<3>(s, 5'000'000);
            const auto b = build_boundary<3>(s);
            EXPECT_GT(f.size(), 1000u);
            EXPECT_GT(b.size(), 1000u);
            EXPECT_GE(closest_fluid_boundary(f, b), 0.95f * r);
        }
    }
    EXPECT_GE(count, 10u);
}

TEST(Scene, ParticleCountsFollowTheLatticeRule) {
    EXPECT_EQ(build_fluid<3>(load_scene(scenes_dir() / "dam_break_3d.json"), 5'000'000).size(), 27000u);
    EXPECT_EQ(build_fluid<3>(load_scene(scenes_dir() / "bench_dam_break_3d.json"), 5'000'000).size(), 64000u);
    EXPECT_EQ(build_fluid<2>(parse_scene(base2d(), "t"), 5'000'000).size(), 100u);
}

TEST(Scene, BoxContainerWallsHaveNoGaps) {
    const Scene s = parse_scene(base2d(), "t");
    const auto b = build_boundary<2>(s);
    // Every point on the inner wall line and around the corners has a wall particle within 1.5 r.
    const float r = 0.01f;
    auto covered = [&](Vec2 p) {
        for (const auto& x : b.position)
            if (norm(x - p) <= 1.5f * r) return true;
        return false;
    };
    for (float t = -0.02f; t <= 1.02f; t += 0.002f) {
        EXPECT_TRUE(covered(Vec2{{t, -r}})) << t;
        EXPECT_TRUE(covered(Vec2{{t, 1.0f + r}})) << t;
        EXPECT_TRUE(covered(Vec2{{-r, t}})) << t;
        EXPECT_TRUE(covered(Vec2{{1.0f + r, t}})) << t;
    }
    // Two layers: at r and 3r outside the floor, none inside the box.
    for (const auto& x : b.position) EXPECT_FALSE(x[0] > 0 && x[0] < 1 && x[1] > 0 && x[1] < 1);
}

TEST(Scene, CurvedContainersStayOutsideTheFluid) {
    nlohmann::json j = {{"name", "c"}, {"dimension", 3}, {"particle_radius", 0.02},
                        {"boundaries", {{{"shape", "cylinder"}, {"center", {0, 0, 0}}, {"radius", 0.3}, {"height", 0.5}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {-0.2, 0, -0.2}}, {"max", {0.2, 0.3, 0.2}}}}}};
    const Scene s = parse_scene(j, "c");
    const auto b = build_boundary<3>(s);
    for (const auto& x : b.position) {
        const float rad = std::hypot(x[0], x[2]);
        EXPECT_TRUE(rad > 0.3f || x[1] < 0.0f || x[1] > 0.5f) << x[0] << " " << x[1] << " " << x[2];
    }
    nlohmann::json k = {{"name", "s"}, {"dimension", 3}, {"particle_radius", 0.02},
                        {"boundaries", {{{"shape", "sphere"}, {"center", {0, 0, 0}}, {"radius", 0.3}}}},
                        {"fluids", {{{"shape", "sphere"}, {"center", {0, 0, 0}}, {"radius", 0.2}}}}};
    const auto bs = build_boundary<3>(parse_scene(k, "s"));
    for (const auto& x : bs.position) EXPECT_GT(norm(x), 0.3f);
}

TEST(Scene, OverridesApplyBeforeValidation) {
    const Scene s = parse_scene(base2d(), "t", {"settings.cfl=0.3", "particle_radius=0.02", "boundaries.0.max=[2,1]",
                                                "description=hello world"});
    EXPECT_EQ(s.settings["cfl"], 0.3);
    EXPECT_EQ(s.particle_radius, 0.02);
    EXPECT_EQ(s.boundaries[0].max[0], 2.0);
    EXPECT_EQ(s.description, "hello world");
    expect_input_error([] { parse_scene(base2d(), "t", {"settings.cfl"}); }, {"settings.cfl", "KEY.PATH=VALUE"});
    expect_input_error([] { parse_scene(base2d(), "t", {"boundaries.5.max=[1,1]"}); }, {"boundaries.5.max"});
    expect_input_error([] { parse_scene(base2d(), "t", {"fluid.min=[0,0]"}); }, {"unknown key 'fluid'"});
}

TEST(Scene, BadScenesNameTheFileAndTheKey) {
    const fs::path dir = fs::temp_directory_path() / "eddy_scene_test";
    fs::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return dir / name;
    };
    expect_input_error([&] { load_scene(dir / "missing.json"); }, {"missing.json", "cannot open"});
    const auto broken = write("broken.json", "{\n  \"name\": \"x\",\n  \"dimension\": 2,,\n}");
    expect_input_error([&] { load_scene(broken); }, {"broken.json", "line 3", "JSON syntax error"});
    struct Case { std::function<void(nlohmann::json&)> edit; std::vector<std::string> needles; };
    const std::vector<Case> cases = {
        {[](auto& j) { j["durration"] = 1; }, {"unknown key 'durration'", "duration"}},
        {[](auto& j) { j["fluids"][0]["velocty"] = {0, 0}; }, {"fluids[0]", "unknown key 'velocty'"}},
        {[](auto& j) { j["particle_radius"] = -0.01; }, {"particle_radius", "> 0"}},
        {[](auto& j) { j["particle_radius"] = "big"; }, {"particle_radius", "number"}},
        {[](auto& j) { j["dimension"] = 4; }, {"dimension", "2, 3"}},
        {[](auto& j) { j["method"] = "sph2"; }, {"method", "wcsph"}},
        {[](auto& j) { j["fluids"][0]["min"] = {0, 0, 0}; }, {"fluids[0].min", "expected 2 numbers"}},
        {[](auto& j) { j["boundaries"][0]["max"] = {0, 1}; }, {"boundaries[0]", "min.x"}},
        {[](auto& j) { j["boundaries"][0]["shape"] = "sphere"; }, {"boundaries[0].shape", "2D"}},
        {[](auto& j) { j["boundaries"].push_back({{"shape", "circle"}, {"center", {0, 0}}, {"radius", -1}}); },
         {"boundaries[1].radius", "> 0"}},
        {[](auto& j) { j["output"] = {{"formats", {"obj"}}}; }, {"output.formats", "vtk, csv, ply"}},
        {[](auto& j) { j["output"] = {{"fps", 0}}; }, {"output.fps", "> 0"}},
        {[](auto& j) { j.erase("fluids"); }, {"fluids", "required"}},
        {[](auto& j) { j["gravity"] = {0, "down"}; }, {"gravity"}},
    };
    for (const auto& c : cases) {
        nlohmann::json j = base2d();
        c.edit(j);
        const auto file = write("bad.json", j.dump(2));
        try {
            load_scene(file);
            ADD_FAILURE() << "no error for " << j.dump();
        } catch (const InputError& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
            for (const auto& n : c.needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
        }
    }
    fs::remove_all(dir);
}

TEST(Scene, FluidOutsideEveryContainerOrTooManyParticles) {
    nlohmann::json j = base2d();
    j["fluids"][0]["min"] = {2, 2};
    j["fluids"][0]["max"] = {2.5, 2.5};
    expect_input_error([&] { build_fluid<2>(parse_scene(j, "out.json"), 1000); }, {"out.json", "fluids[0]", "outside every container"});
    expect_input_error([&] { build_fluid<2>(parse_scene(base2d(), "many.json"), 50); }, {"many.json", "fluids[0]", "max-particles 50"});
    nlohmann::json k = base2d();
    k["fluids"][0]["max"] = {0.005, 0.2};
    expect_input_error([&] { build_fluid<2>(parse_scene(k, "tiny.json"), 1000); }, {"tiny.json", "fluids[0]", "smaller than one particle"});
}

TEST(Scene, SolidObstaclesAndOverlappingFluids) {
    nlohmann::json j = base2d();
    j["boundaries"].push_back({{"shape", "circle"}, {"solid", true}, {"center", {0.1, 0.1}}, {"radius", 0.05}});
    j["fluids"].push_back({{"shape", "box"}, {"min", {0.1, 0}}, {"max", {0.3, 0.2}}});
    const Scene s = parse_scene(j, "t");
    const auto f = build_fluid<2>(s, 100000);
    for (const auto& x : f.position) EXPECT_GT(norm(x - Vec2{{0.1f, 0.1f}}), 0.05f);
    // No two fluid particles closer than r (the second block's overlap is dropped).
    for (std::size_t a = 0; a < f.size(); ++a)
        for (std::size_t b = a + 1; b < f.size(); ++b) ASSERT_GE(norm(f.position[a] - f.position[b]), 0.01f);
    const auto b = build_boundary<2>(s);
    EXPECT_EQ(b.motions.size(), 2u);
    std::size_t obstacle = 0;
    for (auto o : b.object) obstacle += o == 1;
    EXPECT_GT(obstacle, 10u);
}

TEST(Scene, BundledScenesResolveByName) {
    EXPECT_EQ(resolve_scene("dam_break_2d").filename(), "dam_break_2d.json");
    EXPECT_EQ(resolve_scene("dam_break_2d.json").filename(), "dam_break_2d.json");
    expect_input_error([] { resolve_scene("no_such_scene"); }, {"no_such_scene", "dam_break_3d"});
    const auto list = list_bundled_scenes();
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
    EXPECT_FALSE(scene_keys_help().empty());
}

TEST(Scene, ABlockReachingPastAWallIsClipped) {
    nlohmann::json j = {{"name", "half"}, {"dimension", 2}, {"particle_radius", 0.01},
                        {"boundaries", {{{"shape", "circle"}, {"center", {0.5, 0.5}}, {"radius", 0.5}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 0.5}}}}}};
    const auto f = build_fluid<2>(parse_scene(j, "half"), 100000);
    EXPECT_GT(f.size(), 800u);  // about half the disc: pi 0.49^2 / 2 / 0.02^2 = 943
    EXPECT_LT(f.size(), 1000u);
    for (const auto& x : f.position) EXPECT_LE(norm(x - Vec2{{0.5f, 0.5f}}), 0.5f - 0.0099f);
}
