// Geometry (issue 10): model files, cleaning, winding numbers, distances, wall sampling, the
// signed-distance grid, motions, and mesh and polygon shapes in scenes.
#include <gtest/gtest.h>

#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <cmath>
#include <numbers>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"
#include "eddy/kernels.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "figures.hpp"
#include "test_support.hpp"

using namespace eddy;
using eddy::test::expect_input_error;
namespace fs = std::filesystem;

namespace {

const fs::path kModels = fs::path(EDDY_SOURCE_DIR) / "scenes/models";
const fs::path kBad = fs::path(EDDY_SOURCE_DIR) / "tests/data/meshes";

MeshShape<3> load(const fs::path& file, const Placement& p = {}) { return MeshShape<3>(read_triangle_mesh(file, p), file.string()); }

}  // namespace

// ---- reading ---------------------------------------------------------------------------------------

TEST(GeometryRead, EveryBundledFormatLoads) {
    // OBJ (mm), binary STL, ASCII STL, ASCII PLY with two overlapping parts.
    for (const char* f : {"cup.obj", "bowl.stl", "plate.stl", "paddle.ply", "box.obj", "sphere.obj"}) {
        SCOPED_TRACE(f);
        const MeshShape<3> m = load(kModels / f);
        EXPECT_GT(m.mesh().cells.size(), 0u);
        EXPECT_EQ(m.report().boundary_edges, 0u);
    }
    EXPECT_EQ(load(kModels / "sphere.obj").mesh().cells.size(), 5120u);
}

TEST(GeometryRead, GltfFbxAndBinaryPlyLoadToo) {
    // The bundled box, written by assimp's own exporters in the other formats users bring. (FBX as
    // ASCII: assimp 5.2 cannot read back the binary FBX its own exporter writes.)
    eddy::test::TempDir tmp("geometry_formats");
    Assimp::Importer importer;
    const aiScene* box = importer.ReadFile((kModels / "box.obj").string(), aiProcess_Triangulate);
    ASSERT_NE(box, nullptr);
    Assimp::Exporter exporter;
    for (const auto& [id, ext] : {std::pair{"glb2", ".glb"}, std::pair{"gltf2", ".gltf"}, std::pair{"fbxa", ".fbx"},
                                  std::pair{"plyb", ".ply"}, std::pair{"stlb", ".stl"}}) {
        SCOPED_TRACE(id);
        const fs::path file = tmp.path() / (std::string("box") + ext);
        ASSERT_EQ(exporter.Export(box, id, file.string()), AI_SUCCESS) << exporter.GetErrorString();
        const MeshShape<3> m = load(file);
        EXPECT_EQ(m.mesh().cells.size(), 192u);
        EXPECT_EQ(m.report().boundary_edges, 0u);
        EXPECT_TRUE(m.inside(Vec3{{0.5f, 0.5f, 0.5f}}));
        EXPECT_FALSE(m.inside(Vec3{{1.5f, 0.5f, 0.5f}}));
    }
}

TEST(GeometryRead, MalformedFilesAreOneLineInputErrors) {
    const std::pair<const char*, const char*> cases[] = {
        {"empty.obj", "empty"},
        {"no_triangles.obj", "no triangles"},
        {"nan_vertex.obj", "not finite"},
        {"truncated.stl", "1000 triangles"},
        {"huge_count.ply", "1000000000000"},
        {"garbage.stl", "binary STL"},
        {"no_such_file.obj", "No such file"},
    };
    for (const auto& [file, what] : cases) {
        SCOPED_TRACE(file);
        expect_input_error([&] { (void)read_triangle_mesh(kBad / file); }, {file, what});
    }
    expect_input_error([&] { (void)read_triangle_mesh(kBad); }, {"not a regular file"});
}

TEST(GeometryRead, PlacementScalesRotatesAndTranslatesInDouble) {
    // A 100 mm cube 100 m from the origin, in millimetres: back to [0, 0.1]^3 m without rounding loss.
    Placement p;
    p.scale = {0.001, 0.001, 0.001};
    p.translate = {-100.0, -100.0, -100.0};
    const MeshShape<3> m = load(kBad / "mm_far_box.stl", p);
    for (int a = 0; a < 3; ++a) {
        EXPECT_NEAR(m.lo()[a], 0.0f, 1e-6f);
        EXPECT_NEAR(m.hi()[a], 0.1f, 1e-6f);
    }
    // rotate [0, 0, 90]: x -> y.
    Placement q;
    q.rotate_deg = {0, 0, 90};
    const MeshShape<3> r = load(kModels / "box.obj", q);
    EXPECT_NEAR(r.lo()[0], -1.0f, 1e-5f);
    EXPECT_NEAR(r.hi()[0], 0.0f, 1e-5f);
    EXPECT_NEAR(r.lo()[1], 0.0f, 1e-5f);
    EXPECT_NEAR(r.hi()[1], 1.0f, 1e-5f);
}

// ---- cleaning and inside/outside -----------------------------------------------------------------

TEST(GeometryInside, WindingNumberOfClosedOpenFlippedAndOverlappingMeshes) {
    const MeshShape<3> box = load(kModels / "box.obj");
    // The far field (dipoles for nodes seen from farther than 3 radii) is approximate: a few 0.1%.
    EXPECT_NEAR(box.winding_number(Vec3{{0.5f, 0.5f, 0.5f}}), 1.0, 1e-2);
    EXPECT_NEAR(box.winding_number(Vec3{{0.99f, 0.01f, 0.5f}}), 1.0, 1e-2);
    EXPECT_NEAR(box.winding_number(Vec3{{1.5f, 0.5f, 0.5f}}), 0.0, 1e-2);
    EXPECT_NEAR(box.winding_number(Vec3{{30.0f, -20.0f, 5.0f}}), 0.0, 1e-4);
    // Three triangles wound the wrong way: re-oriented, the same answers.
    const MeshShape<3> flipped = load(kBad / "flipped_box.obj");
    EXPECT_EQ(flipped.report().flipped, 3u);
    EXPECT_NEAR(flipped.winding_number(Vec3{{0.5f, 0.5f, 0.9f}}), 1.0, 1e-2);
    EXPECT_NEAR(flipped.winding_number(Vec3{{0.5f, 0.5f, 1.1f}}), 0.0, 1e-2);
    // Open at the top: 4 boundary edges, still inside at the centre, outside beside it.
    const MeshShape<3> open = load(kBad / "open_box.obj");
    EXPECT_EQ(open.report().boundary_edges, 4u);
    EXPECT_TRUE(open.inside(Vec3{{0.5f, 0.5f, 0.5f}}));
    EXPECT_FALSE(open.inside(Vec3{{1.5f, 0.5f, 0.5f}}));
    // Two overlapping blades: 2 where they cross, 1 in one blade, 0 outside.
    const MeshShape<3> paddle = load(kModels / "paddle.ply");
    EXPECT_NEAR(paddle.winding_number(Vec3{{0.0f, 0.06f, 0.0f}}), 2.0, 1e-2);
    EXPECT_NEAR(paddle.winding_number(Vec3{{0.05f, 0.06f, 0.0f}}), 1.0, 1e-2);
    EXPECT_NEAR(paddle.winding_number(Vec3{{0.05f, 0.06f, 0.05f}}), 0.0, 1e-2);
}

TEST(GeometryInside, MillionQueriesAgreeWithTheExactSumOnASphere) {
    // The far-field approximation must not change the inside test: points at 0.9 R and 1.1 R.
    const MeshShape<3> s = load(kModels / "sphere.obj");
    for (int i = 0; i < 2000; ++i) {
        const double y = 1.0 - 2.0 * (i + 0.5) / 2000, rr = std::sqrt(1.0 - y * y), phi = 2.39996 * i;
        const Vec3 d = {{float(rr * std::cos(phi)), float(y), float(rr * std::sin(phi))}};
        EXPECT_TRUE(s.inside(d * 0.95f));
        EXPECT_FALSE(s.inside(d * 1.05f));
    }
}

TEST(GeometryInside, DistancesToTheSphereAndPolygon) {
    const MeshShape<3> s = load(kModels / "sphere.obj");
    // An icosphere of 5120 faces sits within 0.2% inside the unit sphere.
    EXPECT_NEAR(s.distance(Vec3{{0, 0, 0}}), 1.0, 2e-3);
    EXPECT_NEAR(s.distance(Vec3{{0, 3, 0}}), 2.0, 2e-3);
    EXPECT_NEAR(s.signed_distance(Vec3{{0.5f, 0, 0}}), -0.5, 2e-3);
    EXPECT_EQ(s.distance(Vec3{{0, 3, 0}}, 0.5), 0.5);  // beyond the limit
    EXPECT_TRUE(s.any_within(Vec3{{0, 1.1f, 0}}, 0.2));
    EXPECT_FALSE(s.any_within(Vec3{{0, 1.3f, 0}}, 0.2));
    // A clockwise square is turned counter-clockwise: inside is inside.
    const MeshShape<2> sq(polygon_mesh({{0, 0}, {0, 1}, {1, 1}, {1, 0}}, "square"), "square");
    EXPECT_EQ(sq.report().flipped, 4u);
    EXPECT_NEAR(sq.winding_number(Vec2{{0.5f, 0.5f}}), 1.0, 1e-9);
    EXPECT_NEAR(sq.winding_number(Vec2{{1.5f, 0.5f}}), 0.0, 1e-9);
    EXPECT_NEAR(sq.signed_distance(Vec2{{0.25f, 0.5f}}), -0.25, 1e-6);
    expect_input_error([] { (void)polygon_mesh({{0, 0}, {1, 1}}, "scene.json: boundaries[0].points"); },
                       {"boundaries[0].points", "at least 3"});
}

TEST(GeometryInside, SdfGridMatchesTheShape) {
    const MeshShape<3> s = load(kModels / "sphere.obj");
    const ExecContext exec(2);
    const SdfGrid<3> g = make_sdf_grid(s, 0.05f, 0.3f, exec);
    for (float x : {0.0f, 0.5f, 0.8f, 0.95f, 1.05f, 1.2f}) {
        Vec3 grad;
        const float phi = g.sample(Vec3{{x, 0.013f, 0.007f}}, &grad);
        const float want = std::clamp(std::sqrt(x * x + 0.013f * 0.013f + 0.007f * 0.007f) - 1.0f, -0.3f, 0.3f);
        EXPECT_NEAR(phi, want, 0.01f) << x;
        if (std::fabs(want) < 0.25f) EXPECT_NEAR(grad[0], 1.0f, 0.05f) << x;
    }
    EXPECT_EQ(g.sample(Vec3{{5, 0, 0}}), 0.3f);  // outside the grid: far outside
}

// ---- wall sampling ---------------------------------------------------------------------------------

namespace {

// Boundary density at height r above the floor of a box tank [0, 0.6] x [0, 0.3] x [0, 0.6], mean over
// probes away from the side walls, as WCSPH computes it (psi with the double-layer correction).
double floor_density(const nlohmann::json& container, double r, const ExecContext& exec) {
    nlohmann::json j = {{"name", "t"}, {"dimension", 3}, {"particle_radius", r},
                        {"boundaries", {container}},
                        {"fluids", {{{"shape", "box"}, {"min", {0.1, 0, 0.1}}, {"max", {0.2, 0.1, 0.2}}}}}};
    const Scene sc = parse_scene(j, "t");
    BoundarySet<3> b = build_boundary<3>(sc, 2, &exec);
    const CubicSpline<3> W(4.0f * float(r));
    compute_boundary_psi(b, W, 1000.0f, exec, 2.0f * float(r));
    double sum = 0.0;
    int n = 0;
    for (double x = 0.1; x <= 0.5; x += 0.37 * r)
        for (double z = 0.1; z <= 0.5; z += 0.41 * r) {
            const Vec3 p = {{float(x), float(r), float(z)}};
            double rho = 0.0;
            for (std::size_t i = 0; i < b.size(); ++i) rho += b.psi[i] * W.value(p - b.position[i]);
            sum += rho;
            ++n;
        }
    return sum / n;
}

}  // namespace

TEST(GeometryWalls, FlatMeshWallGivesTheAnalyticBoxWallsDensityWithin1Percent) {
    const ExecContext exec(2);
    const double r = 0.01;
    const double analytic = floor_density({{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.6, 0.3, 0.6}}}, r, exec);
    const double mesh = floor_density({{"shape", "mesh"}, {"file", (kModels / "box.obj").string()},
                                       {"scale", {0.6, 0.3, 0.6}}},
                                      r, exec);
    std::printf("boundary density at r above the floor: analytic %.2f, mesh %.2f kg/m^3 (%+.2f%%)\n", analytic, mesh,
                100.0 * (mesh / analytic - 1.0));
    test::report_figure("geometry.flat_mesh_floor.density_percent_of_box", 100.0 * mesh / analytic);
    EXPECT_NEAR(mesh / analytic, 1.0, 0.01);
}

TEST(GeometryWalls, SamplesAreAbout2rApartWithoutHolesAndDeterministic) {
    // A box as a container: every point of the offset surface at r (flat faces, rounded edges and
    // corners) has a layer-0 sample nearer than 2r (a missing particle of a 2r lattice would leave a
    // gap of 2r), and no two samples of a layer are closer than the Poisson radius.
    Placement p;
    p.scale = {0.2, 0.1, 0.15};
    const MeshShape<3> box = load(kModels / "box.obj", p);
    const float r = 0.005f;
    WallSampling ws;
    ws.particle_radius = r;
    ws.layers = 1;
    const ExecContext one(1), two(2);
    const std::vector<Vec3> a = sample_wall(box, ws, one), b = sample_wall(box, ws, two);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(a[i] == b[i]);
    // Spacing.
    double min_d = 1e9;
    for (std::size_t i = 0; i < a.size(); ++i)
        for (std::size_t j = i + 1; j < a.size(); ++j) min_d = std::min(min_d, double(norm(a[i] - a[j])));
    EXPECT_GE(min_d, ws.poisson * 2 * r * 0.999);
    // Every sample is at distance r outside.
    for (const auto& x : a) {
        EXPECT_NEAR(box.distance(x), r, 0.02 * r);
        EXPECT_FALSE(box.inside(x));
    }
    // Coverage: probes on the offset surface (projected from random directions around the box).
    std::uint64_t state = 12345;
    auto rnd = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return double(state >> 11) / 9007199254740992.0;
    };
    double worst = 0.0;
    for (int k = 0; k < 4000; ++k) {
        Vec3 q = {{float(-0.05 + 0.3 * rnd()), float(-0.05 + 0.2 * rnd()), float(-0.05 + 0.25 * rnd())}};
        Vec3 c;
        const double d = box.distance(q, 1e9, &c);
        if (box.inside(q) || d < 1e-6) continue;
        const Vec3 on = c + (q - c) * float(r / d);  // on the offset surface
        double best = 1e9;
        for (const auto& x : a) best = std::min(best, double(norm(x - on)));
        worst = std::max(worst, best);
    }
    std::printf("layer 0: %zu samples, nearest pair %.3f r, largest gap to a probe %.3f r\n", a.size(), min_d / r,
                worst / r);
    EXPECT_LT(worst, 2.0 * r);  // a lattice of spacing 2r has probes up to 1.41 r from a sample
}

TEST(GeometryWalls, ThinSolidWallsGetOneSheetNotTwo) {
    // The plate is 2 cm thick; at r = 8 mm the two faces' inner layers meet in the middle and the second
    // layer would come out of the far side: neither may clump or leak.
    const MeshShape<3> plate = load(kModels / "plate.stl");
    WallSampling ws;
    ws.particle_radius = 0.008f;
    ws.layers = 2;
    ws.solid = true;
    const std::vector<Vec3> pts = sample_wall(plate, ws, ExecContext(2));
    ASSERT_FALSE(pts.empty());
    for (const auto& x : pts) EXPECT_TRUE(plate.inside(x));
    double min_d = 1e9;
    for (std::size_t i = 0; i < pts.size(); ++i)
        for (std::size_t j = i + 1; j < pts.size(); ++j) min_d = std::min(min_d, double(norm(pts[i] - pts[j])));
    EXPECT_GE(min_d, ws.poisson * 0.016 * 0.999);
}

// ---- scenes ----------------------------------------------------------------------------------------

TEST(GeometryScene, MeshSphereIsFilledWithItsVolumeOverTheLatticeCell) {
    const Scene s = load_scene(fs::path(EDDY_SOURCE_DIR) / "tests/data/scenes/sphere_fill_3d.json");
    const ParticleSet<3> f = build_fluid<3>(s, 1'000'000);
    const double R = 0.1, r = s.particle_radius;
    const double want = 4.0 / 3.0 * std::numbers::pi * R * R * R / std::pow(2 * r, 3);
    std::printf("sphere R = %.2f m, r = %.4f m: %zu particles, (4/3 pi R^3)/(2r)^3 = %.0f (%+.2f%%)\n", R, r, f.size(),
                want, 100.0 * (f.size() / want - 1.0));
    test::report_figure("geometry.mesh_sphere_fill.count_percent", 100.0 * (f.size() / want - 1.0));
    EXPECT_NEAR(f.size() / want, 1.0, 0.03);
}

TEST(GeometryScene, PolygonContainerHoldsItsFluid) {
    const Scene s = load_scene(fs::path(EDDY_SOURCE_DIR) / "scenes/hourglass_2d.json");
    const ParticleSet<2> f = build_fluid<2>(s, 1'000'000);
    const BoundarySet<2> b = build_boundary<2>(s, 2);
    ASSERT_GT(f.size(), 100u);
    const MeshShape<2>& hourglass = *s.boundaries[0].model.polygon;
    for (const auto& x : f.position) EXPECT_LE(hourglass.signed_distance(x), -0.999 * s.particle_radius);
    for (const auto& x : b.position) EXPECT_FALSE(hourglass.inside(x));
}

TEST(GeometryScene, RelativeModelPathsResolveAgainstTheSceneFolder) {
    eddy::test::TempDir tmp("geometry_relative");
    fs::create_directories(tmp.path() / "sub/models");
    fs::copy_file(kModels / "box.obj", tmp.path() / "sub/models/box.obj");
    const fs::path scene = tmp.write("sub/s.json", R"({"name": "s", "dimension": 3, "particle_radius": 0.05,
        "boundaries": [{"shape": "mesh", "file": "models/box.obj"}],
        "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.5, 0.5, 0.5]}]})");
    const Scene s = load_scene(scene);
    EXPECT_EQ(s.boundaries[0].model.file, (tmp.path() / "sub/models/box.obj").lexically_normal());
    EXPECT_EQ(build_fluid<3>(s, 1'000'000).size(), 125u);
}

TEST(GeometryScene, BadModelKeysAndFilesNameTheKey) {
    auto scene = [](nlohmann::json boundary) {
        return nlohmann::json{{"name", "t"}, {"dimension", 3}, {"particle_radius", 0.05}, {"boundaries", {boundary}},
                              {"fluids", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.5, 0.5, 0.5}}}}}};
    };
    const std::string box = (kModels / "box.obj").string();
    expect_input_error([&] { parse_scene(scene({{"shape", "mesh"}}), "t.json"); }, {"t.json", "boundaries[0].file", "required"});
    expect_input_error([&] { parse_scene(scene({{"shape", "mesh"}, {"file", box}, {"radius", 1}}), "t.json"); },
                       {"boundaries[0].radius", "a mesh has no"});
    expect_input_error([&] { parse_scene(scene({{"shape", "mesh"}, {"file", box}, {"scale", -0.0}}), "t.json"); },
                       {"boundaries[0].scale"});
    expect_input_error([&] { parse_scene(scene({{"shape", "mesh"}, {"file", (kBad / "truncated.stl").string()}}), "t.json"); },
                       {"truncated.stl", "1000 triangles"});
    expect_input_error([&] { parse_scene(scene({{"shape", "polygon"}, {"points", {{0, 0}, {1, 0}, {0, 1}}}}), "t.json"); },
                       {"boundaries[0].shape", "\"polygon\" is not allowed in 3D"});
    expect_input_error(
        [&] {
            parse_scene(scene({{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {1, 1, 1}},
                               {"motion", {{"keyframes", {{{"time", 1}}, {{"time", 0.5}}}}}}}),
                        "t.json");
        },
        {"boundaries[0].motion.keyframes[1].time", "increase"});
    expect_input_error(
        [&] {
            parse_scene(scene({{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {1, 1, 1}}, {"angular_velocity", 1},
                               {"motion", {{"velocity", {1, 0, 0}}}}}),
                        "t.json");
        },
        {"boundaries[0].angular_velocity", "not both"});
    // A fluid outside every mesh container: the message gives the mesh's box in scene units.
    nlohmann::json j = scene({{"shape", "mesh"}, {"file", box}, {"scale", 0.001}});
    expect_input_error([&] { build_fluid<3>(parse_scene(j, "t.json"), 1000); },
                       {"outside every container", "box.obj", "[0, 0, 0] to [0.001, 0.001, 0.001]"});
}

TEST(GeometryScene, OpenMeshesWarnWithTheirBoundaryEdges) {
    nlohmann::json j = {{"name", "t"}, {"dimension", 3}, {"particle_radius", 0.05},
                        {"boundaries", {{{"shape", "mesh"}, {"file", (kBad / "open_box.obj").string()}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {0.5, 0.5, 0.5}}}}}};
    const Scene s = parse_scene(j, "t.json");
    ASSERT_EQ(s.warnings.size(), 1u);
    EXPECT_NE(s.warnings[0].find("open_box.obj"), std::string::npos);
    EXPECT_NE(s.warnings[0].find("4 boundary edge"), std::string::npos);
}

// ---- motion ----------------------------------------------------------------------------------------

TEST(GeometryMotion, KeyframesInterpolateAndHoldAndSpinsComposeWithThem) {
    BoundaryMotion<3> m;
    m.pivot = Vec3{{1, 0, 0}};
    m.keyframes = {{0.0, {0, 0, 0}, {0, 0, 0}}, {1.0, {0.2, 0, 0}, {0, 0, 90}}, {2.0, {0, 0, 0}, {0, 0, 0}}};
    const Vec3 x0 = {{2, 0, 0}};
    auto at = [&](double t) { return m.pose(t).apply(x0); };
    EXPECT_NEAR(at(0.5)[0], 1.0f + 0.1f + std::cos(std::numbers::pi / 4), 1e-5f);
    EXPECT_NEAR(at(0.5)[1], std::sin(std::numbers::pi / 4), 1e-5f);
    EXPECT_NEAR(at(1.0)[0], 1.2f, 1e-5f);
    EXPECT_NEAR(at(1.0)[1], 1.0f, 1e-5f);
    EXPECT_NEAR(at(5.0)[0], 2.0f, 1e-6f);  // the last holds
    EXPECT_NEAR(at(-1.0)[0], 2.0f, 1e-6f);
    const Vec3 back = m.pose(0.7).inverse(m.pose(0.7).apply(x0));
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(back[a], x0[a], 1e-6f);
    // Boundary particles follow, with the velocity of the motion.
    BoundarySet<3> b;
    b.push_back(x0, 0);
    BoundaryMotion<3> spin;
    spin.axis = Vec3{{0, 1, 0}};
    spin.angular_velocity = 2.0f;
    spin.velocity = Vec3{{0, 0.5f, 0}};
    b.motions.push_back(spin);
    update_boundary_motion(b, 0.0, ExecContext(1));
    EXPECT_NEAR(b.velocity[0][1], 0.5f, 1e-4f);   // translation
    EXPECT_NEAR(b.velocity[0][2], -4.0f, 1e-3f);  // omega x r = (0,2,0) x (2,0,0) = (0,0,-4)
}
