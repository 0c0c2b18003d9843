// Scenes: loading and validation (every error one line naming the file and the key), overrides, the
// bundled scenes, and the particles the builders make from them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

fs::path scenes_dir() { return fs::path(EDDY_SOURCE_DIR) / "scenes"; }


using test::expect_input_error;
using test::TempDir;

// A 1 x 1 m tank with a 0.2 x 0.2 m block (r = 0.01: 10 x 10 particles).
nlohmann::json base2d() {
    return {{"name", "t"}, {"dimension", 2}, {"method", "wcsph"}, {"particle_radius", 0.01},
            {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 1}}}}},
            {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {0.2, 0.2}}}}}};
}

nlohmann::json base3d() {
    return {{"name", "t3"}, {"dimension", 3}, {"particle_radius", 0.02},
            {"boundaries", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.6, 0.4, 0.4}}}}},
            {"fluids", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.2, 0.2, 0.2}}}}}};
}

// Smallest distance between a fluid particle and a boundary particle (searched up to 8r).
template <int D>
float closest_fluid_boundary(const ParticleSet<D>& f, const BoundarySet<D>& b, float r) {
    ExecContext exec(2);
    NeighborGrid<D> g(8.0f * r);
    g.build(b.position, exec);
    float best = 1e30f;
    for (const auto& x : f.position)
        g.for_each_neighbor(x, 8.0f * r, [&](std::uint32_t j) { best = std::min(best, norm(x - b.position[j])); });
    return best;
}

// Distance from p to the nearest boundary particle (brute force: small test scenes only).
template <int D>
float nearest(const BoundarySet<D>& b, const Vec<D>& p) {
    float best = 1e30f;
    for (const auto& x : b.position) best = std::min(best, norm(x - p));
    return best;
}

// Is x inside the container b (shrunk by `inset`)? Written independently of the builders.
template <int D>
bool inside_container(const BoundarySpec& b, const Vec<D>& x, double inset) {
    if (const MeshShape<D>* m = model_shape<D>(b.model)) return m->signed_distance(x) <= -inset;
    if (b.shape == "box") {
        for (int a = 0; a < D; ++a)
            if (x[a] < b.min[a] + inset || x[a] > b.max[a] - inset) return false;
        return true;
    }
    if (b.shape == "cylinder") {
        const double dx = x[0] - b.center[0], dz = x[D - 1] - b.center[2];
        return std::hypot(dx, dz) <= b.radius - inset && x[1] >= b.center[1] + inset &&
               x[1] <= b.center[1] + b.height - inset;
    }
    double d2 = 0.0;
    for (int a = 0; a < D; ++a) d2 += (x[a] - b.center[a]) * (x[a] - b.center[a]);
    return std::sqrt(d2) <= b.radius - inset;
}

template <int D>
void check_bundled(const Scene& s) {
    const float r = static_cast<float>(s.particle_radius);
    const auto f = build_fluid<D>(s, 5'000'000);
    const auto b = build_boundary<D>(s);
    if (s.emitters.empty()) EXPECT_GT(f.size(), 100u);  // emitter scenes may start empty
    EXPECT_GT(b.size(), 100u);
    EXPECT_EQ(b.motions.size(), s.boundaries.size());
    for (auto o : b.object) ASSERT_LT(o, s.boundaries.size());
    // Fluid resting on a wall is 2r from its first layer; nothing starts closer than that.
    EXPECT_GE(closest_fluid_boundary(f, b, r), 1.9f * r);
    // Every particle starts at least r (to rounding) inside some container.
    bool any_container = false;
    for (const auto& c : s.boundaries) any_container = any_container || !c.solid;
    if (any_container) {
        for (const auto& x : f.position) {
            bool in = false;
            for (const auto& c : s.boundaries) in = in || (!c.solid && inside_container<D>(c, x, 0.99 * r));
            ASSERT_TRUE(in) << "a fluid particle outside every container at " << x[0] << " " << x[1];
        }
    }
    // A description that states a particle count states the right one.
    static const std::regex count_re("([0-9][0-9,]*) particles");
    std::smatch m;
    if (std::regex_search(s.description, m, count_re)) {
        std::string digits = m[1];
        digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
        EXPECT_EQ(f.size(), std::stoul(digits)) << s.description;
    }
}

// Sets an environment variable for the lifetime of the object, then restores it.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name)) m_old = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (m_old) ::setenv(m_name, m_old->c_str(), 1);
        else ::unsetenv(m_name);
    }

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

}  // namespace

// ---- bundled scenes -------------------------------------------------------------------------------

TEST(SceneBundled, EveryBundledSceneLoadsAndBuilds) {
    std::size_t count = 0;
    for (const auto& e : fs::directory_iterator(scenes_dir())) {
        if (e.path().extension() != ".json") continue;
        ++count;
        SCOPED_TRACE(e.path().string());
        const Scene s = load_scene(e.path());
        EXPECT_FALSE(s.description.empty());
        EXPECT_EQ(s.name, e.path().stem().string());
        if (s.method == "shallow_water") {
            const ShallowWaterSimulation sim = make_shallow_water(s);
            std::visit([](const auto& sw) { EXPECT_GT(sw.grid().volume(), 0.0); }, sim.solver);
            continue;
        }
        if (s.dimension == 2) check_bundled<2>(s);
        else check_bundled<3>(s);
    }
    EXPECT_GE(count, 10u);
}

// Under mpirun each process builds its share of the fluid (issue 44): the shares put together by id
// are the whole build, bit for bit (positions, velocities, ids, next_id), and none holds the whole.
template <int D>
void expect_shares_make_the_whole(const Scene& s, int parts, bool even = false) {
    const ParticleSet<D> whole = build_fluid<D>(s, 5'000'000);
    std::vector<int> seen(whole.size(), 0);
    std::size_t total = 0;
    for (int part = 0; part < parts; ++part) {
        const ParticleSet<D> mine = build_fluid<D>(s, 5'000'000, nullptr, {part, parts});
        EXPECT_EQ(mine.next_id, whole.next_id);
        // Cut by the points before any is dropped: as even as the blocks are full (the boxes are cut by counts after).
        std::printf("%s: part %d of %d holds %zu of %zu particles (%.3f)\n", s.name.c_str(), part, parts, mine.size(),
                    whole.size(), double(mine.size()) / double(whole.size()));
        if (even) EXPECT_LE(mine.size(), whole.size() / std::size_t(parts) + 1) << part;  // one full block
        else if (parts > 1) EXPECT_LT(mine.size(), whole.size()) << part;  // clipped: fewer where clipped
        total += mine.size();
        for (std::size_t i = 0; i < mine.size(); ++i) {
            const std::uint32_t id = mine.id[i];
            ASSERT_LT(id, whole.size());
            ++seen[id];
            ASSERT_EQ(whole.id[id], id);
            for (int a = 0; a < D; ++a) {
                EXPECT_EQ(mine.position[i][a], whole.position[id][a]) << id;
                EXPECT_EQ(mine.velocity[i][a], whole.velocity[id][a]) << id;
            }
        }
    }
    EXPECT_EQ(total, whole.size());
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), std::ptrdiff_t(whole.size()));
}

TEST(SceneBuild, EachProcessBuildsItsShareAndTheSharesAreTheWhole) {
    // Overlapping blocks (a later block drops points near an earlier one's, across the shares' cuts), a
    // round block, a solid obstacle, a block clipped by the container.
    nlohmann::json j = base2d();
    j["fluids"] = {{{"shape", "box"}, {"min", {0, 0}}, {"max", {0.4, 0.3}}, {"velocity", {0.5, 0}}},
                   {{"shape", "circle"}, {"center", {0.35, 0.3}}, {"radius", 0.15}},
                   {{"shape", "box"}, {"min", {0.3, -0.1}}, {"max", {1.2, 0.15}}, {"velocity", {-1, 0}}}};
    j["boundaries"].push_back({{"shape", "circle"}, {"center", {0.6, 0.1}}, {"radius", 0.05}, {"solid", true}});
    const Scene s = parse_scene(j, "t");
    for (int parts : {1, 2, 3, 4, 7}) expect_shares_make_the_whole<2>(s, parts);
    nlohmann::json k = base3d();
    k["fluids"].push_back({{"shape", "sphere"}, {"center", {0.2, 0.2, 0.2}}, {"radius", 0.1}});
    for (int parts : {2, 3}) expect_shares_make_the_whole<3>(parse_scene(k, "t3"), parts);
    for (const char* name : {"dam_break_3d", "dam_break_debris_3d", "cup_pour_3d", "mesh_dam_break_3d", "hourglass_2d", "bench_dam_break_3d"}) {
        SCOPED_TRACE(name);
        const Scene b = load_scene(scenes_dir() / (std::string(name) + ".json"));
        const bool even = b.fluids.size() == 1 && b.fluids[0].shape == "box";
        if (b.dimension == 2) expect_shares_make_the_whole<2>(b, 3, even);
        else expect_shares_make_the_whole<3>(b, 3, even);
    }
}

// Under mpirun every process but the first builds only the walls near its box (issue 44): build_boundary
// with a region keeps the whole set's particles within it and every moving wall's and body's, in the whole
// set's order with their indices, and Akinci's psi of those within the region by less than the kernel's
// reach has the whole set's bits (its neighbour sum sees the same neighbours in the same order).
template <int D>
void expect_walls_near_are_the_whole(const Scene& s, int layers) {
    const ExecContext exec(2);
    const float r = static_cast<float>(s.particle_radius);
    const CubicSpline<D> kernel(4.0f * r);
    BoundarySet<D> whole = build_boundary<D>(s, layers, &exec);
    compute_boundary_psi(whole, kernel, 1000.0f, exec, 2.0f * r, layers);
    auto moving = [&](std::uint16_t o) { return s.boundaries[o].body >= 0 || whole.motions[o].moving(); };
    Aabb<D> all{Vec<D>::filled(1e30f), Vec<D>::filled(-1e30f)};
    for (const auto& x : whole.position)
        for (int a = 0; a < D; ++a) all.lo[a] = std::min(all.lo[a], x[a]), all.hi[a] = std::max(all.hi[a], x[a]);
    // Three boxes: the lower half along x, a middle slab along x (both open on the other axes), the upper corner.
    const float fractions[3][2] = {{-1.0f, 0.5f}, {0.3f, 0.6f}, {0.7f, 2.0f}};
    for (const auto& f : fractions) {
        Aabb<D> box;
        for (int a = 0; a < D; ++a) {
            const bool cut = a == 0 || f[0] > 0.5f;
            box.lo[a] = all.lo[a] + (cut ? f[0] : -1.0f) * (all.hi[a] - all.lo[a]);
            box.hi[a] = all.lo[a] + (cut ? f[1] : 2.0f) * (all.hi[a] - all.lo[a]);
        }
        WallsNear<D> near{{box.lo - Vec<D>::filled(kernel.h), box.hi + Vec<D>::filled(kernel.h)}};
        BoundarySet<D> part = build_boundary<D>(s, layers, &exec, &near);
        compute_boundary_psi(part, kernel, 1000.0f, exec, 2.0f * r, layers);
        EXPECT_EQ(near.whole, whole.size());
        ASSERT_EQ(near.ids.size(), part.size());
        std::size_t expected = 0, inside = 0;
        for (std::size_t k = 0; k < whole.size(); ++k)
            expected += moving(whole.object[k]) || near.region.contains(whole.position[k]) ? 1 : 0;
        EXPECT_EQ(part.size(), expected);
        for (std::size_t i = 0; i < part.size(); ++i) {
            const std::uint32_t id = near.ids[i];
            ASSERT_LT(id, whole.size());
            if (i > 0) ASSERT_LT(near.ids[i - 1], id);
            ASSERT_EQ(part.object[i], whole.object[id]);
            for (int a = 0; a < D; ++a) ASSERT_EQ(part.position[i][a], whole.position[id][a]) << id;
            if (!box.contains(part.position[i])) continue;
            ++inside;
            EXPECT_EQ(part.psi[i], whole.psi[id]) << id;  // bit for bit
        }
        std::printf("%s: box %.1f-%.1f holds %zu of %zu wall particles (%zu within the box)\n", s.name.c_str(), f[0],
                    f[1], part.size(), whole.size(), inside);
        EXPECT_GT(inside, 0u);
    }
}

TEST(SceneBuild, WallsNearABoxAreTheWholeSetsWithTheirIds) {
    // A tank with a solid circle and a turning box (every process holds it whole); bundled scenes with bodies,
    // moving meshes, models and 2 or 1 layers.
    nlohmann::json j = base2d();
    j["boundaries"].push_back({{"shape", "circle"}, {"center", {0.6, 0.1}}, {"radius", 0.05}, {"solid", true}});
    j["boundaries"].push_back({{"shape", "box"}, {"min", {0.2, 0.3}}, {"max", {0.3, 0.35}}, {"solid", true},
                               {"angular_velocity", 1.0}});
    for (int layers : {1, 2}) expect_walls_near_are_the_whole<2>(parse_scene(j, "t"), layers);
    for (const char* name : {"dam_break_debris_3d", "mixer_3d", "hourglass_2d", "bench_dam_break_3d", "cup_pour_3d"}) {
        SCOPED_TRACE(name);
        const Scene b = load_scene(scenes_dir() / (std::string(name) + ".json"));
        if (b.dimension == 2) expect_walls_near_are_the_whole<2>(b, 2);
        else expect_walls_near_are_the_whole<3>(b, 2);
    }
}

TEST(SceneBundled, ParticleCountsFollowTheLatticeRule) {
    // 0.3 m / 2r = 30 per axis; the benchmark block is 1 m / 2.5 cm = 40 per axis.
    EXPECT_EQ(build_fluid<3>(load_scene(scenes_dir() / "dam_break_3d.json"), 5'000'000).size(), 27000u);
    EXPECT_EQ(build_fluid<3>(load_scene(scenes_dir() / "bench_dam_break_3d.json"), 5'000'000).size(), 64000u);
    EXPECT_EQ(build_fluid<2>(load_scene(scenes_dir() / "dam_break_2d.json"), 5'000'000).size(), 3200u);
    EXPECT_EQ(build_fluid<2>(parse_scene(base2d(), "t"), 5'000'000).size(), 100u);
    // A side that is not a multiple of 2r: 0.01 + 0.02 k <= 0.24 (k = 0..11).
    nlohmann::json j = base2d();
    j["fluids"][0]["max"] = {0.25, 0.2};
    const auto f = build_fluid<2>(parse_scene(j, "t"), 1000);
    EXPECT_EQ(f.size(), 120u);
    float xmax = 0.0f;
    for (const auto& x : f.position) xmax = std::max(xmax, x[0]);
    EXPECT_NEAR(xmax, 0.23f, 1e-6f);
}

TEST(SceneBundled, BundledScenesResolveByName) {
    EXPECT_EQ(resolve_scene("dam_break_2d").filename(), "dam_break_2d.json");
    EXPECT_EQ(resolve_scene("dam_break_2d.json").filename(), "dam_break_2d.json");
    const fs::path file = scenes_dir() / "square_2d.json";
    EXPECT_EQ(resolve_scene(file.string()), file);  // an existing file as is
    expect_input_error([] { resolve_scene("no_such_scene"); }, {"no_such_scene", "dam_break_3d", "square_2d"});
    expect_input_error([] { resolve_scene("nowhere/x.json"); }, {"nowhere/x.json", "cannot open"});
    const auto list = list_bundled_scenes();
    EXPECT_GE(list.size(), 10u);
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
    for (const auto& e : list) EXPECT_FALSE(e.description.empty()) << e.name;
    EXPECT_FALSE(scene_keys_help().empty());
    for (const char* key : {"particle_radius", "open_top", "angular_velocity", "formats", "fov", "velocity"})
        EXPECT_NE(scene_keys_help().find(key), std::string::npos) << key;
}

TEST(SceneBundled, ScenesFolderFromTheEnvironment) {
    const TempDir dir("env");
    nlohmann::json j = base2d();
    j["name"] = "mine";
    j["description"] = "a test scene";
    dir.write("mine.json", j.dump());
    const ScopedEnv env("EDDY_SCENES_DIR", dir.path().string());
    EXPECT_EQ(bundled_scenes_dir(), dir.path());
    EXPECT_EQ(resolve_scene("mine"), dir.path() / "mine.json");
    auto list = list_bundled_scenes();
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].name, "mine");
    EXPECT_EQ(list[0].description, "a test scene");
    // A broken bundled scene is a bug: reported, not skipped.
    dir.write("broken.json", "{ \"name\": ");
    expect_input_error([] { list_bundled_scenes(); }, {"broken.json", "JSON syntax error"});
}

// ---- validation -------------------------------------------------------------------------------------

TEST(SceneErrors, MessagesAsDocumented) {
    const TempDir dir("messages");
    expect_input_error([&] { load_scene(dir.path() / "missing.json"); },
                       {"missing.json: cannot open file: No such file or directory"});
    // Line and column of the offending character.
    const auto broken = dir.write("broken.json", "{\n  \"name\": \"x\",\n  \"dimension\": 2,\n  \"a\": ,\n}");
    expect_input_error([&] { load_scene(broken); }, {"broken.json: line 4 column 8: JSON syntax error:", "','"});

    nlohmann::json j = base2d();
    j["boundaries"].push_back({{"shape", "circle"}, {"center", {0.5, 0.5}}, {"radius", -0.2}});
    expect_input_error([&] { load_scene(dir.write("x.json", j.dump(2))); },
                       {"x.json: boundaries[1].radius = -0.2: must be > 0"});
    j = base2d();
    j["fluid"] = nlohmann::json::array();
    expect_input_error([&] { load_scene(dir.write("x.json", j.dump(2))); },
                       {"x.json: unknown key 'fluid'; did you mean 'fluids'? allowed: name, description, dimension, "
                        "method, particle_radius, gravity, duration, output, camera, settings, boundaries, bodies, fluids"});
    // A typo in a nested key gets the closest key too (issue 45), and a key far from all gets none.
    j = base2d();
    j["boundaries"][0]["soild"] = true;
    expect_input_error([&] { load_scene(dir.write("x.json", j.dump(2))); },
                       {"x.json: boundaries[0]: unknown key 'soild'; did you mean 'solid'? allowed: shape,"});
    j = base2d();
    j["boundaries"][0]["zzzzzz"] = true;
    expect_input_error([&] { load_scene(dir.write("x.json", j.dump(2))); },
                       {"x.json: boundaries[0]: unknown key 'zzzzzz'; allowed: shape,"});
    j = base2d();
    j["fluids"][0]["min"] = {0, 0, 0};
    expect_input_error([&] { load_scene(dir.write("x.json", j.dump(2))); },
                       {"x.json: fluids[0].min: expected 2 numbers, got 3"});
}

TEST(SceneErrors, BadScenesNameTheFileAndTheKey) {
    const TempDir dir("bad");
    struct Case {
        std::function<void(nlohmann::json&)> edit;
        std::vector<std::string> needles;
    };
    const std::vector<Case> cases = {
        // unknown keys at every level
        {[](auto& j) { j["durration"] = 1; }, {"unknown key 'durration'", "duration"}},
        {[](auto& j) { j["fluids"][0]["velocty"] = {0, 0}; }, {"fluids[0]", "unknown key 'velocty'", "velocity"}},
        {[](auto& j) { j["boundaries"][0]["radiuss"] = 1; }, {"boundaries[0]", "unknown key 'radiuss'", "open_top"}},
        {[](auto& j) { j["output"] = {{"fsp", 10}}; }, {"output", "unknown key 'fsp'", "fps"}},
        {[](auto& j) { j["camera"] = {{"eye", {1, 1, 1}}, {"target", {0, 0, 0}}, {"zoom", 2}}; },
         {"camera", "unknown key 'zoom'", "fov"}},
        // missing required keys
        {[](auto& j) { j.erase("name"); }, {"name", "required"}},
        {[](auto& j) { j.erase("dimension"); }, {"dimension", "required"}},
        {[](auto& j) { j.erase("particle_radius"); }, {"particle_radius", "required"}},
        {[](auto& j) { j.erase("fluids"); }, {"fluids", "required"}},
        {[](auto& j) { j["fluids"] = nlohmann::json::array(); }, {"fluids", "non-empty"}},
        {[](auto& j) { j["boundaries"][0].erase("max"); }, {"boundaries[0].max", "required"}},
        {[](auto& j) { j["fluids"][0].erase("shape"); }, {"fluids[0].shape", "required"}},
        // wrong types
        {[](auto& j) { j["particle_radius"] = "big"; }, {"particle_radius", "number"}},
        {[](auto& j) { j["name"] = 3; }, {"name", "string"}},
        {[](auto& j) { j["dimension"] = 2.5; }, {"dimension", "2, 3"}},
        {[](auto& j) { j["gravity"] = {0, "down"}; }, {"gravity", "numbers"}},
        {[](auto& j) { j["gravity"] = -9.81; }, {"gravity", "2 numbers"}},
        {[](auto& j) { j["settings"] = {1, 2}; }, {"settings", "object"}},
        {[](auto& j) { j["boundaries"] = {{"shape", "box"}}; }, {"boundaries"}},
        {[](auto& j) { j["boundaries"] = 1; }, {"boundaries", "list"}},
        {[](auto& j) { j["boundaries"][0]["solid"] = "yes"; }, {"boundaries[0].solid", "true or false"}},
        {[](auto& j) { j["output"] = {{"render", 1}}; }, {"output.render", "true or false"}},
        {[](auto& j) { j["output"] = {{"formats", "vtk"}}; }, {"output.formats", "list"}},
        // values out of range
        {[](auto& j) { j["particle_radius"] = -0.01; }, {"particle_radius = -0.01", "> 0"}},
        {[](auto& j) { j["particle_radius"] = 0; }, {"particle_radius = 0", "> 0"}},
        {[](auto& j) { j["duration"] = 0; }, {"duration = 0", "> 0"}},
        {[](auto& j) { j["output"] = {{"fps", 0}}; }, {"output.fps", "> 0"}},
        {[](auto& j) { j["output"] = {{"formats", {"vtk", "obj"}}}; }, {"output.formats", "vtk, csv, ply"}},
        {[](auto& j) { j["camera"] = {{"eye", {1, 1, 1}}, {"target", {0, 0, 0}}, {"fov", 180}}; }, {"camera.fov", "180"}},
        {[](auto& j) { j["camera"] = {{"eye", {1, 1}}, {"target", {0, 0, 0}}}; }, {"camera.eye", "3 numbers"}},
        {[](auto& j) { j["dimension"] = 4; }, {"dimension = 4", "2, 3"}},
        {[](auto& j) { j["method"] = "sph2"; }, {"method", "wcsph"}},
        {[](auto& j) { j["fluids"][0]["min"] = {0, 0, 0}; }, {"fluids[0].min", "expected 2 numbers"}},
        {[](auto& j) { j["boundaries"][0]["max"] = {0, 1}; }, {"boundaries[0]", "min.x", "below max.x"}},
        {[](auto& j) { j["fluids"][0]["max"] = {0.2, 0}; }, {"fluids[0]", "min.y", "below max.y"}},
        {[](auto& j) { j["boundaries"].push_back({{"shape", "circle"}, {"center", {0, 0}}, {"radius", -1}}); },
         {"boundaries[1].radius = -1", "> 0"}},
        {[](auto& j) { j["boundaries"][0]["open_top"] = "no"; }, {"boundaries[0].open_top"}},
        {[](auto& j) { j["boundaries"][0]["axis"] = {0, 0, 1}; }, {"boundaries[0].axis", "2D"}},
        {[](auto& j) { j["boundaries"].push_back({{"shape", "circle"}, {"center", {0, 0}}, {"radius", 1}, {"open_top", true}}); },
         {"boundaries[1].open_top", "a circle has no 'open_top'"}},
        {[](auto& j) { j["boundaries"][0]["solid"] = true; j["boundaries"][0]["open_top"] = true; }, {"boundaries[0].open_top", "solid"}},
        {[](auto& j) { j["boundaries"][0]["radius"] = 0.3; }, {"boundaries[0].radius", "a box has no 'radius'"}},
        {[](auto& j) { j["fluids"][0]["center"] = {0.1, 0.1}; }, {"fluids[0].center", "a box has no 'center'", "min, max"}},
        // shapes not allowed in this dimension
        {[](auto& j) { j["boundaries"][0]["shape"] = "sphere"; }, {"boundaries[0].shape", "2D", "box, circle"}},
        {[](auto& j) { j["boundaries"][0]["shape"] = "cylinder"; }, {"boundaries[0].shape", "2D"}},
        {[](auto& j) { j["boundaries"][0]["shape"] = "triangle"; }, {"boundaries[0].shape", "triangle"}},
        {[](auto& j) { j["fluids"][0] = {{"shape", "sphere"}, {"center", {0.5, 0.5}}, {"radius", 0.1}}; },
         {"fluids[0].shape", "2D", "box, circle"}},
    };
    for (const auto& c : cases) {
        nlohmann::json j = base2d();
        c.edit(j);
        const auto file = dir.write("bad.json", j.dump(2));
        try {
            load_scene(file);
            ADD_FAILURE() << "no error for " << j.dump();
        } catch (const InputError& e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
            EXPECT_EQ(msg.rfind(file.string() + ": ", 0), 0u) << msg;
            for (const auto& n : c.needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
        }
    }
    // 3D-only and 2D-only shapes the other way round.
    nlohmann::json j = base3d();
    j["boundaries"][0] = {{"shape", "circle"}, {"center", {0, 0, 0}}, {"radius", 1}};
    expect_input_error([&] { parse_scene(j, "d3.json"); }, {"d3.json", "boundaries[0].shape", "3D", "box, sphere, cylinder"});
    j = base3d();
    j["fluids"][0] = {{"shape", "cylinder"}, {"center", {0, 0, 0}}, {"radius", 1}};
    expect_input_error([&] { parse_scene(j, "d3.json"); }, {"d3.json", "fluids[0].shape", "box, sphere"});
    j = base3d();
    j["boundaries"][0] = {{"shape", "cylinder"}, {"center", {0, 0, 0}}, {"radius", 1}, {"height", -1}};
    expect_input_error([&] { parse_scene(j, "d3.json"); }, {"d3.json", "boundaries[0].height = -1", "> 0"});
    j = base3d();
    j["boundaries"][0]["axis"] = {0, 0, 0};
    expect_input_error([&] { parse_scene(j, "d3.json"); }, {"d3.json", "boundaries[0].axis"});
    expect_input_error([&] { parse_scene(nlohmann::json::array(), "arr.json"); }, {"arr.json", "object"});
}

TEST(SceneErrors, FluidOutsideEveryContainerOrTooManyParticles) {
    nlohmann::json j = base2d();
    j["fluids"][0]["min"] = {2, 2};
    j["fluids"][0]["max"] = {2.5, 2.5};
    expect_input_error([&] { build_fluid<2>(parse_scene(j, "out.json"), 1000); },
                       {"out.json: fluids[0]", "outside every container"});
    // Without containers a block may be anywhere.
    j["boundaries"] = nlohmann::json::array();
    EXPECT_EQ(build_fluid<2>(parse_scene(j, "free.json"), 10000).size(), 625u);
    expect_input_error([&] { build_fluid<2>(parse_scene(base2d(), "many.json"), 50); },
                       {"many.json: fluids[0]", "would create 100 particles", "more than --max-particles 50"});
    nlohmann::json k = base2d();
    k["fluids"][0]["max"] = {0.015, 0.2};
    expect_input_error([&] { build_fluid<2>(parse_scene(k, "tiny.json"), 1000); },
                       {"tiny.json: fluids[0]", "smaller than one particle (2r = 0.02"});
    // The limit counts the particles made, not the lattice of a block's bounding box: a box clipped to
    // the lower half of a round tank has 1250 lattice points but fewer than 1000 particles.
    nlohmann::json h = {{"name", "half"}, {"dimension", 2}, {"particle_radius", 0.01},
                        {"boundaries", {{{"shape", "circle"}, {"center", {0.5, 0.5}}, {"radius", 0.5}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 0.5}}}}}};
    EXPECT_LT(build_fluid<2>(parse_scene(h, "half"), 1000).size(), 1000u);
    // A particle radius typo is refused at once, not after visiting 10^12 lattice points.
    h["particle_radius"] = 1e-7;
    expect_input_error([&] { build_fluid<2>(parse_scene(h, "typo.json"), 5'000'000); },
                       {"typo.json: fluids[0]", "more than --max-particles 5000000"});
}

// ---- overrides -------------------------------------------------------------------------------------

TEST(SceneOverrides, ApplyBeforeValidation) {
    const Scene s = parse_scene(base2d(), "t", {"settings.cfl=0.3", "particle_radius=0.02", "boundaries.0.max=[2,1]",
                                                "description=hello world", "output.formats=[\"csv\"]",
                                                "fluids.0.velocity=[1,0]"});
    EXPECT_EQ(s.settings["cfl"], 0.3);
    EXPECT_EQ(s.particle_radius, 0.02);
    EXPECT_EQ(s.boundaries[0].max[0], 2.0);
    EXPECT_EQ(s.boundaries[0].max[1], 1.0);
    EXPECT_EQ(s.description, "hello world");
    ASSERT_EQ(s.output.formats.size(), 1u);
    EXPECT_EQ(s.output.formats[0], "csv");
    EXPECT_EQ(s.fluids[0].velocity[0], 1.0);
    // Later overrides win; a value that is not JSON is a string.
    EXPECT_EQ(parse_scene(base2d(), "t", {"name=a", "name=b"}).name, "b");
    EXPECT_EQ(parse_scene(base2d(), "t", {"name=[oops"}).name, "[oops");
    // load_scene applies them too.
    const Scene d = load_scene(scenes_dir() / "dam_break_2d.json", {"settings.cfl=0.3", "duration=0.1"});
    EXPECT_EQ(d.settings["cfl"], 0.3);
    EXPECT_EQ(d.duration, 0.1);
}

TEST(SceneOverrides, BadOverridesAreReported) {
    expect_input_error([] { parse_scene(base2d(), "t.json", {"settings.cfl"}); }, {"t.json", "settings.cfl", "KEY.PATH=VALUE"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"=3"}); }, {"t.json", "'=3'"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"boundaries.5.max=[1,1]"}); }, {"boundaries.5.max"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"boundaries.x.max=[1,1]"}); }, {"boundaries.x.max"});
    // A path that does not exist is created, so the validator names it.
    expect_input_error([] { parse_scene(base2d(), "t.json", {"fluid.min=[0,0]"}); }, {"t.json", "unknown key 'fluid'"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"boundaries.0.radiuss=0.3"}); },
                       {"t.json", "boundaries[0]", "unknown key 'radiuss'"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"boundaries.0.radius=0.3"}); },
                       {"t.json", "boundaries[0].radius", "a box has no 'radius'"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"particle_radius=-1"}); }, {"particle_radius = -1"});
}

// ---- builders ---------------------------------------------------------------------------------------

TEST(SceneBuild, BoxContainerWallsHaveNoGaps) {
    // Sides that are multiples of 2r and sides that are not (1.03 = 51.5 spacings).
    for (const auto& hi : {std::array<double, 2>{1.0, 1.0}, std::array<double, 2>{1.03, 0.97}}) {
        nlohmann::json j = base2d();
        j["boundaries"][0]["max"] = hi;
        const Scene s = parse_scene(j, "t");
        const auto b = build_boundary<2>(s);
        const float r = 0.01f, X = static_cast<float>(hi[0]), Y = static_cast<float>(hi[1]);
        // Every point of both layer lines, corners included, has a wall particle within 1.5 r... and
        // within r along the line itself (spacing at most 2r).
        for (float layer : {r, 3.0f * r}) {
            for (float t = -layer; t <= X + layer; t += 0.002f) {
                EXPECT_LE(nearest(b, Vec2{{t, -layer}}), 1.01f * r) << t;
                EXPECT_LE(nearest(b, Vec2{{t, Y + layer}}), 1.01f * r) << t;
            }
            for (float t = -layer; t <= Y + layer; t += 0.002f) {
                EXPECT_LE(nearest(b, Vec2{{-layer, t}}), 1.01f * r) << t;
                EXPECT_LE(nearest(b, Vec2{{X + layer, t}}), 1.01f * r) << t;
            }
        }
        // None inside the box, none beyond the second layer.
        for (const auto& x : b.position) {
            EXPECT_FALSE(x[0] > 0 && x[0] < X && x[1] > 0 && x[1] < Y) << x[0] << " " << x[1];
            EXPECT_TRUE(x[0] > -3.01f * r && x[0] < X + 3.01f * r && x[1] > -3.01f * r && x[1] < Y + 3.01f * r);
        }
    }
    // Open top: no lid, walls up to the top.
    nlohmann::json j = base2d();
    j["boundaries"][0]["open_top"] = true;
    const auto b = build_boundary<2>(parse_scene(j, "t"));
    float top = -1.0f;
    for (const auto& x : b.position) top = std::max(top, x[1]);
    EXPECT_LT(top, 1.0f);
    EXPECT_GT(top, 0.98f);
    // One layer when asked (position-based methods).
    const auto one = build_boundary<2>(parse_scene(base2d(), "t"), 1);
    for (const auto& x : one.position) EXPECT_TRUE(x[0] > -0.011f && x[1] > -0.011f && x[0] < 1.011f && x[1] < 1.011f);
    EXPECT_LT(one.size(), b.size());
}

TEST(SceneBuild, BoxContainerEdgesAndCornersIn3D) {
    const Scene s = parse_scene(base3d(), "t3");
    const auto b = build_boundary<3>(s);
    const float r = 0.02f;
    // The edge lines of the outer layer at the origin corner, and a fine grid across the floor.
    for (float t = -3 * r; t <= 0.4f + 3 * r; t += 0.005f) {
        EXPECT_LE(nearest(b, Vec3{{-3 * r, -3 * r, t}}), 1.01f * r) << t;
        EXPECT_LE(nearest(b, Vec3{{-r, t, -r}}), 1.01f * r) << t;
    }
    for (float x = -3 * r; x <= 0.6f + 3 * r; x += 0.01f)
        for (float z = -3 * r; z <= 0.4f + 3 * r; z += 0.01f) EXPECT_LE(nearest(b, Vec3{{x, -r, z}}), 1.42f * r);
    for (const auto& x : b.position) EXPECT_FALSE(x[0] > 0 && x[0] < 0.6f && x[1] > 0 && x[1] < 0.4f && x[2] > 0 && x[2] < 0.4f);
}

TEST(SceneBuild, CurvedContainersStayOutsideTheFluid) {
    const double R = 0.3, H = 0.5, r = 0.02;
    nlohmann::json j = {{"name", "c"}, {"dimension", 3}, {"particle_radius", r},
                        {"boundaries", {{{"shape", "cylinder"}, {"center", {0, 0, 0}}, {"radius", R}, {"height", H}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {-0.2, 0, -0.2}}, {"max", {0.2, 0.3, 0.2}}}}}};
    const Scene s = parse_scene(j, "c");
    const auto b = build_boundary<3>(s);
    for (const auto& x : b.position) {
        const double rad = std::hypot(x[0], x[2]);
        EXPECT_TRUE(rad >= R + 0.99 * r || x[1] <= -0.99 * r || x[1] >= H + 0.99 * r) << x[0] << " " << x[1] << " " << x[2];
        EXPECT_LE(rad, R + 3.01 * r);
    }
    // Side wall and caps: the first-layer cylinder and the first-layer bottom disc are covered out to
    // the rim; the caps reach the outer layer's radius.
    const float fr = static_cast<float>(r);
    for (double a = 0.0; a < 6.283; a += 0.05)
        for (double y = -3 * r; y <= H + 3 * r; y += 0.01)
            EXPECT_LE(nearest(b, Vec3{{float((R + r) * std::cos(a)), float(y), float((R + r) * std::sin(a))}}), 1.5f * fr);
    for (double a = 0.0; a < 6.283; a += 0.1)
        for (double rho = 0.0; rho <= R + 3 * r; rho += 0.01)
            for (double y : {-r, H + r})
                EXPECT_LE(nearest(b, Vec3{{float(rho * std::cos(a)), float(y), float(rho * std::sin(a))}}), 1.5f * fr);
    const auto f = build_fluid<3>(s, 100000);
    EXPECT_GE(closest_fluid_boundary(f, b, fr), 1.99f * fr);

    nlohmann::json k = {{"name", "s"}, {"dimension", 3}, {"particle_radius", r},
                        {"boundaries", {{{"shape", "sphere"}, {"center", {0, 0, 0}}, {"radius", R}}}},
                        {"fluids", {{{"shape", "sphere"}, {"center", {0, 0, 0}}, {"radius", 0.2}}}}};
    const auto bs = build_boundary<3>(parse_scene(k, "s"));
    for (const auto& x : bs.position) {
        EXPECT_NEAR(std::min(std::abs(norm(x) - (R + r)), std::abs(norm(x) - (R + 3 * r))), 0.0, 1e-5);
    }
    // Shell counts: 4 pi R^2 / (2r)^2 for each layer.
    const auto shell = [&](double Rs) { return std::lround(4.0 * 3.14159265358979 * Rs * Rs / (4 * r * r)); };
    EXPECT_EQ(static_cast<long>(bs.size()), shell(R + r) + shell(R + 3 * r));

    nlohmann::json c = base2d();
    c["boundaries"][0] = {{"shape", "circle"}, {"center", {0.5, 0.5}}, {"radius", 0.5}};
    c["fluids"][0] = {{"shape", "box"}, {"min", {0.3, 0.1}}, {"max", {0.7, 0.5}}};
    const auto bc = build_boundary<2>(parse_scene(c, "c"));
    for (const auto& x : bc.position) EXPECT_GT(norm(x - Vec2{{0.5f, 0.5f}}), 0.5f);
    for (double a = 0.0; a < 6.283; a += 0.01)
        EXPECT_LE(nearest(bc, Vec2{{float(0.5 + 0.51 * std::cos(a)), float(0.5 + 0.51 * std::sin(a))}}), 1.01f * 0.01f);
}

TEST(SceneBuild, SolidObstaclesAndOverlappingFluids) {
    nlohmann::json j = base2d();
    j["boundaries"].push_back({{"shape", "circle"}, {"solid", true}, {"center", {0.1, 0.1}}, {"radius", 0.05}});
    j["fluids"].push_back({{"shape", "box"}, {"min", {0.1, 0}}, {"max", {0.3, 0.2}}});
    const Scene s = parse_scene(j, "t");
    const auto f = build_fluid<2>(s, 100000);
    // Points within r of the obstacle are dropped.
    for (const auto& x : f.position) EXPECT_GT(norm(x - Vec2{{0.1f, 0.1f}}), 0.06f);
    // No two fluid particles closer than r (the second block's overlap is dropped).
    for (std::size_t a = 0; a < f.size(); ++a)
        for (std::size_t b = a + 1; b < f.size(); ++b) ASSERT_GE(norm(f.position[a] - f.position[b]), 0.01f);
    // 150 distinct lattice points (the second block's 5 overlapping columns are dropped), minus the 32
    // at odd multiples of 0.01 from (0.1, 0.1) within R + r = 0.06 of it.
    EXPECT_EQ(f.size(), 150u - 32u);
    const auto b = build_boundary<2>(s);
    EXPECT_EQ(b.motions.size(), 2u);
    std::size_t obstacle = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (b.object[i] != 1) continue;
        ++obstacle;
        const float d = norm(b.position[i] - Vec2{{0.1f, 0.1f}});
        EXPECT_TRUE(std::abs(d - 0.04f) < 1e-5f || std::abs(d - 0.02f) < 1e-5f) << d;  // R - r, R - 3r
    }
    EXPECT_EQ(obstacle, static_cast<std::size_t>(std::lround(2 * 3.14159265 * 0.04 / 0.02) + std::lround(2 * 3.14159265 * 0.02 / 0.02)));
    EXPECT_GE(closest_fluid_boundary(f, b, 0.01f), 1.99f * 0.01f);
}

TEST(SceneBuild, SolidBoxIsAHollowShellOfTwoLayers) {
    nlohmann::json j = base2d();
    j["boundaries"].push_back({{"shape", "box"}, {"solid", true}, {"min", {0.4, 0.4}}, {"max", {0.6, 0.6}}});
    j["boundaries"].push_back({{"shape", "box"}, {"solid", true}, {"min", {0.7, 0.1}}, {"max", {0.9, 0.115}}});  // thinner than 2r
    j["boundaries"].push_back({{"shape", "circle"}, {"solid", true}, {"center", {0.2, 0.8}}, {"radius", 0.005}});  // tiny
    const auto b = build_boundary<2>(parse_scene(j, "t"));
    std::size_t shell = 0, plate = 0, tiny = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const Vec2 x = b.position[i];
        if (b.object[i] == 1) {
            ++shell;
            const float depth = std::min({x[0] - 0.4f, 0.6f - x[0], x[1] - 0.4f, 0.6f - x[1]});
            EXPECT_TRUE(std::abs(depth - 0.01f) < 1e-5f || std::abs(depth - 0.03f) < 1e-5f) << depth;
        } else if (b.object[i] == 2) {
            ++plate;
            EXPECT_NEAR(x[1], 0.1075f, 1e-5f);
        } else if (b.object[i] == 3) {
            ++tiny;
            EXPECT_NEAR(x[0], 0.2f, 1e-6f);
        }
    }
    EXPECT_EQ(shell, 10u * 10u - 6u * 6u);  // the 10 x 10 lattice minus its 6 x 6 core
    EXPECT_EQ(plate, 10u);
    EXPECT_EQ(tiny, 1u);
}

TEST(SceneBuild, RoundFluidsSitOnALatticeThroughTheirCentre) {
    // R - r = 2 spacings: the points (i, j) with i^2 + j^2 <= 4, 13 of them, symmetric about the centre.
    nlohmann::json j = base2d();
    j["fluids"][0] = {{"shape", "circle"}, {"center", {0.5, 0.5}}, {"radius", 0.05}, {"velocity", {0, -1}}};
    const auto f = build_fluid<2>(parse_scene(j, "c"), 1000);
    EXPECT_EQ(f.size(), 13u);
    Vec2 sum = Vec2::zero();
    for (std::size_t i = 0; i < f.size(); ++i) {
        sum += f.position[i] - Vec2{{0.5f, 0.5f}};
        EXPECT_EQ(f.velocity[i][1], -1.0f);
    }
    EXPECT_NEAR(sum[0], 0.0f, 1e-5f);
    EXPECT_NEAR(sum[1], 0.0f, 1e-5f);
    nlohmann::json k = base3d();
    k["fluids"][0] = {{"shape", "sphere"}, {"center", {0.3, 0.2, 0.2}}, {"radius", 0.07}};  // R - r = 1.25 spacings
    EXPECT_EQ(build_fluid<3>(parse_scene(k, "s"), 1000).size(), 7u);
}

TEST(SceneBuild, ABlockReachingPastAWallIsClipped) {
    nlohmann::json j = {{"name", "half"}, {"dimension", 2}, {"particle_radius", 0.01},
                        {"boundaries", {{{"shape", "circle"}, {"center", {0.5, 0.5}}, {"radius", 0.5}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 0.5}}}}}};
    const auto f = build_fluid<2>(parse_scene(j, "half"), 100000);
    EXPECT_GT(f.size(), 800u);  // about half the disc: pi 0.49^2 / 2 / 0.02^2 = 943
    EXPECT_LT(f.size(), 1000u);
    for (const auto& x : f.position) EXPECT_LE(norm(x - Vec2{{0.5f, 0.5f}}), 0.5f - 0.0099f);
}

TEST(SceneBuild, MotionsOnePerBoundaryWithDefaultPivots) {
    const Scene rc = load_scene(scenes_dir() / "rotating_circle_2d.json");
    const auto b = build_boundary<2>(rc);
    ASSERT_EQ(b.motions.size(), 2u);
    EXPECT_FALSE(b.motions[0].moving());
    EXPECT_FLOAT_EQ(b.motions[1].angular_velocity, 2.0f);
    EXPECT_FLOAT_EQ(b.motions[1].pivot[0], 0.5f);
    EXPECT_FLOAT_EQ(b.motions[1].pivot[1], 0.5f);
    EXPECT_TRUE(b.any_moving());
    for (float p : b.psi) EXPECT_EQ(p, 0.0f);  // left to the solver

    nlohmann::json j = base3d();
    j["boundaries"].push_back({{"shape", "box"}, {"solid", true}, {"min", {0.3, 0.1, 0.1}}, {"max", {0.5, 0.2, 0.3}},
                               {"angular_velocity", 1.5}, {"axis", {0, 2, 0}}});
    j["boundaries"].push_back({{"shape", "cylinder"}, {"center", {1, 0, 1}}, {"radius", 0.2}, {"height", 0.4}});
    j["boundaries"].push_back({{"shape", "sphere"}, {"solid", true}, {"center", {0.1, 0.3, 0.3}}, {"radius", 0.05},
                               {"pivot", {0, 0, 0}}});
    const auto m = build_boundary<3>(parse_scene(j, "t3")).motions;
    ASSERT_EQ(m.size(), 4u);
    EXPECT_FLOAT_EQ(m[1].pivot[0], 0.4f);  // box centre
    EXPECT_FLOAT_EQ(m[1].pivot[1], 0.15f);
    EXPECT_FLOAT_EQ(m[1].pivot[2], 0.2f);
    EXPECT_FLOAT_EQ(m[1].axis[1], 1.0f);  // normalised
    EXPECT_FLOAT_EQ(m[1].angular_velocity, 1.5f);
    EXPECT_FLOAT_EQ(m[2].pivot[1], 0.2f);  // cylinder: middle of its axis
    EXPECT_FLOAT_EQ(m[3].pivot[0], 0.0f);  // given
}

// ---- derived quantities -----------------------------------------------------------------------------

TEST(SceneGeometry, FluidHeightAlongGravity) {
    EXPECT_NEAR(fluid_height(load_scene(scenes_dir() / "dam_break_3d.json")), 0.3, 1e-6);
    EXPECT_NEAR(fluid_height(load_scene(scenes_dir() / "pool_2d.json")), 0.65, 1e-6);  // floor to the dropped block's top
    nlohmann::json j = base2d();
    j["fluids"][0]["max"] = {0.3, 0.2};
    EXPECT_NEAR(fluid_height(parse_scene(j, "t")), 0.2, 1e-6);
    j["gravity"] = {-9.81, 0};
    EXPECT_NEAR(fluid_height(parse_scene(j, "t")), 0.3, 1e-6);
    j["gravity"] = {0, 0};
    EXPECT_NEAR(fluid_height(parse_scene(j, "t")), 0.2, 1e-6);
    j["gravity"] = {-1, -1};  // diagonal: the box's extent along (1, 1)/sqrt(2)
    EXPECT_NEAR(fluid_height(parse_scene(j, "t")), 0.5 / std::sqrt(2.0), 1e-6);
    j["gravity"] = {0, -9.81};
    j["fluids"].push_back({{"shape", "circle"}, {"center", {0.5, 0.7}}, {"radius", 0.1}});
    EXPECT_NEAR(fluid_height(parse_scene(j, "t")), 0.8, 1e-6);
}

TEST(SceneGeometry, BoundsCoverEveryShape) {
    const auto b = scene_bounds<3>(load_scene(scenes_dir() / "cylinder_3d.json"));
    EXPECT_FLOAT_EQ(b.lo[0], -0.4f);
    EXPECT_FLOAT_EQ(b.lo[1], 0.0f);
    EXPECT_FLOAT_EQ(b.hi[1], 0.8f);
    EXPECT_FLOAT_EQ(b.hi[2], 0.4f);
    nlohmann::json j = base2d();
    j["boundaries"].push_back({{"shape", "circle"}, {"solid", true}, {"center", {1.0, 0.5}}, {"radius", 0.2}});
    j["fluids"].push_back({{"shape", "box"}, {"min", {-0.5, 0.1}}, {"max", {0.1, 0.2}}});
    const auto c = scene_bounds<2>(parse_scene(j, "t"));
    EXPECT_FLOAT_EQ(c.lo[0], -0.5f);
    EXPECT_FLOAT_EQ(c.lo[1], 0.0f);
    EXPECT_FLOAT_EQ(c.hi[0], 1.2f);
    EXPECT_FLOAT_EQ(c.hi[1], 1.0f);
}

// ---- hostile input (issue 12) -----------------------------------------------------------------------

// Nesting 100,000 levels deep overflowed the stack (json::dump echoing the value): the depth is now
// bounded before anything is parsed, in files and in --set values and key paths alike.
TEST(SceneHostile, DeepNestingIsRefusedBeforeParsing) {
    const TempDir dir("deep");
    nlohmann::json j = base2d();
    j["gravity"] = "GRAVITY";
    std::string text = j.dump();
    text.replace(text.find("\"GRAVITY\""), 9, std::string(100000, '[') + std::string(100000, ']'));
    expect_input_error([&] { load_scene(dir.write("deep_gravity.json", text)); },
                       {"deep_gravity.json: line 1 column", "nested deeper than 64 levels"});
    std::string objects;
    for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
    objects += "1" + std::string(100000, '}');
    expect_input_error([&] { load_scene(dir.write("deep_description.json", "{\"description\": " + objects + "}")); },
                       {"deep_description.json", "nested deeper than 64 levels"});
    // Brackets inside strings are text, not nesting.
    j = base2d();
    j["description"] = std::string(1000, '[');
    EXPECT_EQ(load_scene(dir.write("brackets_in_text.json", j.dump())).description, std::string(1000, '['));
    // 64 levels are fine (the scene's object and 63 more; then an ordinary type error).
    j = base2d();
    j["gravity"] = "GRAVITY";
    text = j.dump();
    text.replace(text.find("\"GRAVITY\""), 9, std::string(63, '[') + std::string(63, ']'));
    expect_input_error([&] { load_scene(dir.write("deep64.json", text)); }, {"deep64.json: gravity: expected 2 numbers"});
    // --set: the value's nesting and the key path's depth.
    expect_input_error([] { parse_scene(base2d(), "t.json", {"gravity=" + std::string(65000, '[')}); },
                       {"t.json: --set 'gravity=[[[", "...'", "nested deeper than 64 levels"});
    std::string path;
    for (int i = 0; i < 100; ++i) path += "a.";
    expect_input_error([&] { parse_scene(base2d(), "t.json", {path + "b=1"}); }, {"t.json: --set", "nested deeper"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"settings.x=" + std::string(63, '[')}); },
                       {"t.json: --set", "nested deeper"});
}

// Every value a message echoes is cut to about 80 characters (one was a single 8 MB line).
TEST(SceneHostile, EchoedValuesAreCutShort) {
    nlohmann::json j = base2d();
    j["gravity"] = nlohmann::json::array();
    for (int i = 0; i < 100000; ++i) j["gravity"].push_back(i);
    try {
        parse_scene(j, "long.json");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_LT(msg.size(), 250u) << msg;
        EXPECT_NE(msg.find("long.json: gravity: expected 2 numbers, got 100000 ([0,1,2,"), std::string::npos) << msg;
        EXPECT_NE(msg.find("...)"), std::string::npos) << msg;
    }
    for (const auto& edit : std::vector<std::function<void(nlohmann::json&)>>{
             [](auto& x) { x["method"] = std::string(1'000'000, 'w'); },
             [](auto& x) { x[std::string(1'000'000, 'k')] = 1; },
             [](auto& x) {
                 x["method"] = "clavet";
                 x["settings"]["mode"] = std::string(1'000'000, 'm');
             },
             [](auto& x) { x["name"] = nlohmann::json::array({std::string(1'000'000, 'n')}); },
             [](auto& x) { x["fluids"][0]["shape"] = std::string(1'000'000, 's') + "\n"; }}) {
        nlohmann::json k = base2d();
        edit(k);
        try {
            const Scene s = parse_scene(k, "huge.json");
            build_fluid<2>(s, 1000);
            (void)make_simulation(s, 1000, ExecContext(1));
            ADD_FAILURE() << "no error";
        } catch (const InputError& e) {
            const std::string msg = e.what();
            EXPECT_LT(msg.size(), 400u) << msg.substr(0, 400);
            EXPECT_EQ(msg.find('\n'), std::string::npos);
            EXPECT_NE(msg.find("huge.json"), std::string::npos) << msg;
        }
    }
    // Short values are shown exactly as JSON; deep values built in code and stray bytes do not throw.
    EXPECT_EQ(json_excerpt(nlohmann::json::parse(R"([1,2.5,"a",{"b":null}])")), R"([1,2.5,"a",{"b":null}])");
    nlohmann::json deep = 1;
    for (int i = 0; i < 10000; ++i) deep = nlohmann::json::array({std::move(deep)});
    const std::string shown = json_excerpt(deep);
    EXPECT_LE(shown.size(), 80u);
    EXPECT_TRUE(shown.ends_with("...")) << shown;
    EXPECT_NO_THROW(json_excerpt(nlohmann::json(std::string("\xff\xfe"))));
    expect_input_error([] { parse_scene(base2d(), "t.json", {"name=\xff"}); }, {"t.json: --set", "UTF-8"});
}

// -1e309 was exit 1 with nlohmann's raw "[json.exception.out_of_range.406]".
TEST(SceneHostile, NumbersBeyondADoubleOrAFloat) {
    const TempDir dir("range");
    const auto file = dir.write("overflow.json", "{\"name\": \"x\", \"dimension\": 2,\n  \"particle_radius\": -1e309}");
    expect_input_error([&] { load_scene(file); },
                       {"overflow.json: line 2 column 22: number -1e309 is out of range; allowed: numbers within"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"particle_radius=1e400"}); },
                       {"t.json: --set 'particle_radius=1e400': number 1e400 is out of range"});
    // Beyond a float: named at the key, not "smaller than one particle" later.
    expect_input_error([] { parse_scene(base2d(), "t.json", {"fluids.0.max=[1e308,1]"}); },
                       {"t.json: fluids[0].max[0] = 1e+308: beyond the largest value"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"boundaries.0.max=[1,1e39]"}); },
                       {"t.json: boundaries[0].max[1] = 1e+39"});
    // Settings whose table allows any size still fit a float (a cast would make 1e300 infinite).
    expect_input_error([] { make_simulation(parse_scene(base2d(), "t.json", {"settings.speed_of_sound=1e300"}), 1000,
                                            ExecContext(1)); },
                       {"t.json", "'speed_of_sound' = 1e+300 is out of range; allowed: numbers within +-3.4e38"});
    // particle_radius: below the smallest allowed value, not "must be > 0".
    expect_input_error([] { parse_scene(base2d(), "t.json", {"particle_radius=1e-300"}); },
                       {"t.json: particle_radius = 1e-300: below the smallest allowed radius 1e-09 m"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"particle_radius=1e30"}); },
                       {"t.json: particle_radius = 1e+30: above the largest allowed radius"});
    // The clock: a frame interval too short to advance it, or an end too far for it.
    expect_input_error([] { parse_scene(base2d(), "t.json", {"output.fps=1e7"}); },
                       {"t.json: output.fps = 1e+07", "allowed: 0 < fps <= 1e+06"});
    expect_input_error([] { parse_scene(base2d(), "t.json", {"duration=1e10"}); }, {"t.json: duration = 1e+10"});
    EXPECT_EQ(parse_scene(base2d(), "t", {"output.fps=1e6", "duration=1e9"}).output.fps, 1e6);
    // A block far beyond --max-particles says how many, not "smaller than one particle".
    expect_input_error([] { build_fluid<2>(parse_scene(base2d(), "big.json", {"fluids.0.min=[-3e38,-3e38]",
                                                                              "fluids.0.max=[3e38,3e38]",
                                                                              "boundaries=[]"}), 1000); },
                       {"big.json: fluids[0] would create about 9e+80 particles"});
}

TEST(SceneHostile, DevicesAndFoldersAreNotSceneFiles) {
    expect_input_error([] { resolve_scene("/dev/null"); }, {"/dev/null: not a regular file"});
    expect_input_error([] { load_scene("/dev/null"); }, {"/dev/null: not a regular file"});
    expect_input_error([] { load_scene("/dev/zero"); }, {"/dev/zero: not a regular file"});  // would never end
    expect_input_error([] { load_scene("/tmp"); }, {"/tmp: is a folder"});
    // A name longer than the file system allows is "not found", not a filesystem_error.
    expect_input_error([] { resolve_scene(std::string(5000, 'x')); }, {"xxx...: no such scene"});
}

TEST(SceneHostile, UnknownScenesAreListedSortedWithASuggestion) {
    try {
        resolve_scene("dam_brake_2d");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("dam_brake_2d: no such scene file or bundled scene; did you mean dam_break_2d? bundled: "),
                  std::string::npos) << msg;
        const std::string list = msg.substr(msg.find("bundled: ") + 9);
        std::vector<std::string> names;
        for (std::size_t a = 0;;) {
            const auto c = list.find(", ", a);
            names.push_back(list.substr(a, c == std::string::npos ? std::string::npos : c - a));
            if (c == std::string::npos) break;
            a = c + 2;
        }
        EXPECT_GT(names.size(), 20u);
        EXPECT_TRUE(std::is_sorted(names.begin(), names.end())) << list;
    }
    // Nothing close: no guess.
    try {
        resolve_scene("xyzzy");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
    }
}

// Wall counts went through an int: a radius of 1e30 m made 3 points per ring, and the run "completed"
// with 6 wall particles. Counts are computed in double and refused beyond the int range.
TEST(SceneHostile, WallCountsAreComputedInDoubleAndRefusedWhenAbsurd) {
    EXPECT_EQ(build_boundary<2>(load_scene(scenes_dir() / "circle_2d.json")).size(), 641u);  // rings of 317 and 324
    expect_input_error([] { build_boundary<2>(load_scene(scenes_dir() / "circle_2d.json", {"boundaries.0.radius=1e30"})); },
                       {"circle_2d.json: boundaries[0].radius: a circle wall of about", "e+32 particles", "allowed: at most"});
    nlohmann::json j = base3d();
    j["boundaries"][0] = {{"shape", "sphere"}, {"center", {0, 0, 0}}, {"radius", 1e25}};
    expect_input_error([&] { build_boundary<3>(parse_scene(j, "s.json")); }, {"s.json: boundaries[0].radius: a sphere wall"});
    j["boundaries"][0] = {{"shape", "cylinder"}, {"center", {0, 0, 0}}, {"radius", 1e25}, {"height", 1}};
    expect_input_error([&] { build_boundary<3>(parse_scene(j, "c.json")); }, {"c.json: boundaries[0].radius/height: a cylinder"});
    expect_input_error([] { build_boundary<2>(parse_scene(base2d(), "b.json", {"boundaries.0.max=[1e30,1]"})); },
                       {"b.json: boundaries[0].min/max: a box wall of about"});
    expect_input_error([] { build_boundary<2>(parse_scene(base2d(), "o.json", {"boundaries.0.max=[1e30,1]",
                                                                               "boundaries.0.solid=true"})); },
                       {"o.json: boundaries[0].min/max"});
    // A large container costs its frame, not its volume: 1 km at r = 1 cm is 50,000 spacings a side,
    // 2.5e9 lattice points inside (minutes to visit) but 8 * 50,000 + 16 wall points.
    const auto big = build_boundary<2>(parse_scene(base2d(), "km.json", {"boundaries.0.max=[1000,1000]"}));
    EXPECT_EQ(big.size(), 400016u);
}
