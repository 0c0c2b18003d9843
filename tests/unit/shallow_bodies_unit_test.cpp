// Floating bodies on shallow water: the scene key `bodies` (one-line errors naming bodies[i] and the key),
// mass and inertia from shape and density, the column a body occupies over a cell.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "shallow/bodies.hpp"

using namespace eddy;

namespace {

nlohmann::json pond(const nlohmann::json& bodies) {
    return {{"name", "pond"},
            {"method", "shallow_water"},
            {"grid", {{"cells", {40, 40}}, {"dx", 0.05}}},
            {"water", {{"surface", "0.3"}}},
            {"bodies", bodies}};
}

// The error make_shallow_water gives for `bodies`, or "" if none.
std::string error_of(const nlohmann::json& bodies) {
    try {
        make_shallow_water(parse_scene(pond(bodies), "pond.json"));
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(ShallowBodies, BadBodiesAreRefusedWithOneLineNamingTheKey) {
    const nlohmann::json box = {{"shape", "box"}, {"center", {1, 1, 0.3}}, {"size", {0.2, 0.2, 0.1}}, {"density", 500}};
    EXPECT_EQ(error_of(nlohmann::json::array({box})), "");
    struct Case {
        nlohmann::json body;
        const char* expect;
    };
    auto with = [&](const char* key, const nlohmann::json& v) {
        nlohmann::json b = box;
        if (v.is_null()) b.erase(key);
        else b[key] = v;
        return b;
    };
    const Case cases[] = {
        {with("shape", "cone"), "pond.json: bodies[0].shape = \"cone\": allowed: \"box\", \"sphere\", \"cylinder\""},
        {with("shape", nullptr), "pond.json: bodies[0].shape: missing"},
        {with("density", -5), "pond.json: bodies[0].density = -5: allowed: (0"},
        {with("density", 0), "pond.json: bodies[0].density = 0: allowed: (0"},
        {with("density", nullptr), "pond.json: bodies[0]: give either 'density' (kg/m^3) or 'mass' (kg)"},
        {with("mass", 3), "pond.json: bodies[0]: give either 'density' (kg/m^3) or 'mass' (kg)"},
        {with("size", {0.2, 0, 0.1}), "pond.json: bodies[0].size = [0.2,0,0.1]: each extent must be > 0"},
        {with("center", {5, 1, 0.3}), "pond.json: bodies[0].center = [5,1,0.3]: x must be in [0, 2]"},
        {with("center", {1, 1}), "pond.json: bodies[0].center: expected [x, y, z]"},
        {with("radius", 0.1), "pond.json: bodies[0]: unknown key 'radius'"},
        {with("drag", -1), "pond.json: bodies[0].drag = -1: allowed: [0, 1000]"},
        {with("velocity", "fast"), "pond.json: bodies[0].velocity: expected [x, y, z]"},
        {{{"shape", "sphere"}, {"center", {1, 1, 0.3}}, {"density", 500}}, "pond.json: bodies[0].radius: missing"},
        {{{"shape", "cylinder"}, {"center", {1, 1, 0.3}}, {"radius", 0.1}, {"length", 1}, {"axis", "w"}, {"density", 500}},
         "pond.json: bodies[0].axis = \"w\": allowed: \"x\", \"y\""},
        {{{"shape", "sphere"}, {"center", {1, 1, 0.3}}, {"radius", 0.1}, {"yaw", 3}, {"density", 500}},
         "pond.json: bodies[0]: unknown key 'yaw'"},
    };
    for (const Case& c : cases) {
        const std::string e = error_of(nlohmann::json::array({box, c.body}));
        const std::string want = std::string(c.expect).replace(std::string(c.expect).find("bodies[0]"), 9, "bodies[1]");
        EXPECT_EQ(e.find(want), 0u) << e << "\n  wanted: " << want;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
    EXPECT_NE(error_of("a box").find("pond.json: bodies: must be a list"), std::string::npos);
    // A typo in a setting of the coupling is refused as every setting is.
    nlohmann::json j = pond(nlohmann::json::array({box}));
    j["settings"] = {{"water_density", -1}};
    EXPECT_THROW(make_shallow_water(parse_scene(j, "pond.json")), InputError);
}

TEST(ShallowBodies, MassAndInertiaFromShapeAndDensity) {
    ShallowBodySpec s;
    s.shape = "box";
    s.size = {0.4, 0.2, 0.1};
    s.density = 500;
    ShallowBody b = make_shallow_body(s);
    EXPECT_DOUBLE_EQ(b.mass, 500 * 0.4 * 0.2 * 0.1);
    EXPECT_NEAR(b.inertia[0], b.mass * (0.2 * 0.2 + 0.1 * 0.1) / 12, 1e-15);
    EXPECT_NEAR(b.inertia[2], b.mass * (0.4 * 0.4 + 0.2 * 0.2) / 12, 1e-15);
    s = {};
    s.shape = "cylinder";
    s.radius = 0.1;
    s.length = 1.0;
    s.mass = 20;
    b = make_shallow_body(s);
    EXPECT_DOUBLE_EQ(b.mass, 20);
    EXPECT_NEAR(b.inertia[0], 0.5 * 20 * 0.01, 1e-15);
    EXPECT_NEAR(b.inertia[1], 20 * (3 * 0.01 + 1.0) / 12, 1e-15);
    s = {};
    s.shape = "sphere";
    s.radius = 0.2;
    s.density = 1000;
    b = make_shallow_body(s);
    EXPECT_NEAR(b.mass, 1000 * 4.0 / 3.0 * std::numbers::pi * 0.008, 1e-12);
    EXPECT_NEAR(b.inertia[1], 0.4 * b.mass * 0.04, 1e-12);
}

TEST(ShallowBodies, ColumnsOfTheShapes) {
    using shallow_detail::body_column;
    double lo = 0, hi = 0;
    // A box yawed by 90 degrees: its long side along y.
    ShallowBodySpec s;
    s.shape = "box";
    s.size = {1.0, 0.2, 0.1};
    s.center = {0, 0, 1};
    s.density = 1;
    s.yaw = 90;
    ShallowBody b = make_shallow_body(s);
    ASSERT_TRUE(body_column(b, 0.0, 0.45, lo, hi));
    EXPECT_NEAR(lo, 0.95, 1e-12);
    EXPECT_NEAR(hi, 1.05, 1e-12);
    EXPECT_FALSE(body_column(b, 0.45, 0.0, lo, hi));
    // A sphere: the chord at distance 0.6 r.
    s = {};
    s.shape = "sphere";
    s.radius = 0.5;
    s.center = {1, 1, 2};
    s.density = 1;
    b = make_shallow_body(s);
    ASSERT_TRUE(body_column(b, 1.3, 1.0, lo, hi));
    EXPECT_NEAR(hi - lo, 2 * 0.4, 1e-12);
    EXPECT_NEAR(0.5 * (hi + lo), 2.0, 1e-12);
    // A log along y (axis "y"): at its middle, the full diameter; past its end, nothing.
    s = {};
    s.shape = "cylinder";
    s.radius = 0.1;
    s.length = 2.0;
    s.axis = "y";
    s.center = {0, 0, 0.5};
    s.density = 1;
    b = make_shallow_body(s);
    ASSERT_TRUE(body_column(b, 0.0, 0.9, lo, hi));
    EXPECT_NEAR(hi - lo, 0.2, 1e-12);
    ASSERT_TRUE(body_column(b, 0.06, 0.0, lo, hi));
    EXPECT_NEAR(hi - lo, 2 * 0.08, 1e-12);
    EXPECT_FALSE(body_column(b, 0.0, 1.05, lo, hi));
    EXPECT_FALSE(body_column(b, 0.11, 0.0, lo, hi));
    // Upright (axis "z"): the full length over its disc.
    s.axis = "z";
    b = make_shallow_body(s);
    ASSERT_TRUE(body_column(b, 0.05, 0.05, lo, hi));
    EXPECT_NEAR(hi - lo, 2.0, 1e-12);
}
