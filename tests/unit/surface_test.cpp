// Surface reconstruction, the parts that are quick to check: settings and bad input, the Godunov
// update, marching cubes/squares topology on random fields (every ambiguous case), wavefront == serial,
// the same bits on 1 and 2 threads, writers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include "eddy/error.hpp"
#include "eddy/surface.hpp"
#include "surface_support.hpp"

using namespace eddy;
using namespace eddy::test;

TEST(Surface, BadSettingsAreInputErrors) {
    const std::vector<Vec3> p = {Vec3{{0, 0, 0}}};
    ExecContext exec(1);
    SurfaceSettings s;
    EXPECT_THROW(reconstruct_surface<3>(p, s, exec), InputError);  // no radius
    s.particle_radius = 0.01f;
    s.voxel_size = -1.0f;
    try {
        reconstruct_surface<3>(p, s, exec);
        FAIL() << "negative voxel accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("'voxel'"), std::string::npos) << e.what();
    }
    s.voxel_size = std::nanf("");
    EXPECT_THROW(reconstruct_surface<3>(p, s, exec), InputError);
    s.voxel_size = 0.0f;
    s.iso = 1.5f;
    EXPECT_THROW(reconstruct_surface<3>(p, s, exec), InputError);
    s.iso = 0.5f;
    s.block_size = 2;
    EXPECT_THROW(reconstruct_surface<3>(p, s, exec), InputError);
}

TEST(Surface, NanPositionsAndNoParticlesAreInputErrors) {
    ExecContext exec(2);
    SurfaceSettings s;
    s.particle_radius = 0.01f;
    std::vector<Vec3> p(100, Vec3{{0.1f, 0.1f, 0.1f}});
    p[57][1] = std::nanf("");
    try {
        reconstruct_surface<3>(p, s, exec);
        FAIL() << "NaN accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("particle 57"), std::string::npos) << e.what();
    }
    EXPECT_THROW(reconstruct_surface<3>(std::vector<Vec3>{}, s, exec), InputError);
    EXPECT_THROW(reconstruct_surface<2>(std::vector<Vec2>{}, s, exec), InputError);
}

// Godunov update (Zhao 2005): from one known neighbour at distance 0 the next node is at h; from a
// corner, the 2D and 3D diagonal solutions.
TEST(Surface, GodunovUpdateMatchesClosedForm) {
    // A 1-block 3D grid with one pinned node at the origin of value 0.
    SparseGrid<3> g = box_grid<3>(1, 8, 1.0f, [](const Vec3&) { return FLT_MAX; });
    std::vector<std::uint8_t> pinned(g.values.size(), 0);
    g.values[0] = 0.0f;
    pinned[0] = 1;
    sweep_serial<3>(g, pinned);
    EXPECT_FLOAT_EQ(g.at({1, 0, 0}), 1.0f);
    EXPECT_FLOAT_EQ(g.at({0, 0, 5}), 5.0f);
    // Two axis minima 1, 1: (1 + 1 + sqrt(2 - 0)) / 2.
    EXPECT_FLOAT_EQ(g.at({1, 1, 0}), 1.0f + std::sqrt(2.0f) / 2.0f);
    // Along the diagonal from a point source (the first-order scheme's worst case) it overestimates,
    // by 1.29 voxels at 7 sqrt(3); from a surface (many pinned nodes) errors stay below a voxel
    // (SurfaceValidation.AnalyticSignedDistance*).
    EXPECT_GT(g.at({7, 7, 7}), 7.0f * std::sqrt(3.0f));
    EXPECT_LT(g.at({7, 7, 7}), 7.0f * std::sqrt(3.0f) + 1.5f);
}

// Random fields give every marching-cubes case, the ambiguous ones included: the mesh must be closed,
// manifold and consistently oriented (every directed edge once, its reverse once), enclose a positive
// volume, and every vertex must lie on a grid edge between nodes of opposite sign.
TEST(Surface, MarchingCubesClosedManifoldOnRandomFields) {
    ExecContext exec(2);
    for (unsigned seed = 1; seed <= 4; ++seed) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        SparseGrid<3> g = box_grid<3>(2, 8, 0.1f, [&](const Vec3&) { return u(rng); });
        // Outer layer outside so the surface closes inside the box.
        for_each_node_mut(g, [&](const std::array<int, 3>& i, float& v) {
            for (int a = 0; a < 3; ++a)
                if (i[a] == 0 || i[a] == 15) v = 1.0f;
        });
        const Mesh<3> m = extract_mesh<3>(g, 0.0f, exec);
        ASSERT_GT(m.cells.size(), 1000u);
        const Topology t = topology(m);
        EXPECT_EQ(t.unmatched_directed_edges, 0u) << "seed " << seed;
        EXPECT_EQ(t.repeated_directed_edges, 0u) << "seed " << seed;
        EXPECT_EQ(t.degenerate_cells, 0u);
        EXPECT_EQ(t.non_manifold_vertices, 0u) << "seed " << seed;
        EXPECT_GT(enclosed_volume(m), 0.0);
        EXPECT_EQ(m.normals.size(), m.vertices.size());
    }
}

// Nodes whose value is nearly the iso level put marching cubes' vertices within 1e-7 of the node: the
// slivers strict checkers reject. vertex_margin keeps every vertex 1% of a voxel from every node and
// changes nothing else: the same cells, each vertex within that 1% of plain marching cubes'.
TEST(Surface, VertexMarginRemovesSliversAndKeepsTheConnectivity) {
    ExecContext exec(2);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const float voxel = 0.1f;
    SparseGrid<3> g = box_grid<3>(2, 8, voxel, [&](const Vec3&) {
        const float v = u(rng);
        return std::abs(v) < 0.3f ? v * 1e-6f : v;  // a third of the nodes just off the iso level
    });
    for_each_node_mut(g, [&](const std::array<int, 3>& i, float& v) {
        for (int a = 0; a < 3; ++a)
            if (i[a] == 0 || i[a] == 15) v = 1.0f;
    });
    const auto shortest_and_smallest = [&](const Mesh<3>& m) {
        double edge = DBL_MAX, area = DBL_MAX;
        for (const auto& c : m.cells) {
            const Vec3 a = m.vertices[c[0]], b = m.vertices[c[1]], d = m.vertices[c[2]];
            edge = std::min({edge, double(norm(b - a)), double(norm(d - b)), double(norm(a - d))});
            const Vec3 u = b - a, w = d - a;
            const Vec3 n{{u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]}};
            area = std::min(area, 0.5 * double(norm(n)));
        }
        return std::pair{edge / voxel, area / (voxel * voxel)};
    };
    const Mesh<3> plain = extract_mesh<3>(g, 0.0f, exec, 0.0f);
    const Mesh<3> kept = extract_mesh<3>(g, 0.0f, exec, 0.01f);
    const auto [e0, a0] = shortest_and_smallest(plain);
    const auto [e1, a1] = shortest_and_smallest(kept);
    EXPECT_LT(e0, 1e-4) << "the field should make slivers in plain marching cubes";
    EXPECT_LT(a0, 1e-8);
    EXPECT_GE(e1, 0.01 * std::sqrt(2.0) * 0.999) << "two vertices around one node, each 1% of a voxel from it";
    EXPECT_GE(a1, 0.5 * std::sqrt(3.0) * 1e-4 * 0.99) << "three such vertices";
    ASSERT_EQ(kept.cells, plain.cells);
    ASSERT_EQ(kept.vertices.size(), plain.vertices.size());
    double moved = 0.0;
    for (std::size_t i = 0; i < kept.vertices.size(); ++i) moved = std::max(moved, double(norm(kept.vertices[i] - plain.vertices[i])));
    EXPECT_LE(moved, 0.01 * voxel * 1.0001);
    const Topology t = topology(kept);
    EXPECT_EQ(t.unmatched_directed_edges + t.repeated_directed_edges + t.degenerate_cells + t.non_manifold_vertices, 0u);
}

TEST(Surface, MarchingSquaresClosedOrientedOnRandomFields) {
    ExecContext exec(2);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    SparseGrid<2> g = box_grid<2>(3, 8, 0.1f, [&](const Vec2&) { return u(rng); });
    for_each_node_mut(g, [&](const std::array<int, 2>& i, float& v) {
        for (int a = 0; a < 2; ++a)
            if (i[a] == 0 || i[a] == 23) v = 1.0f;
    });
    const Mesh<2> m = extract_mesh<2>(g, 0.0f, exec);
    ASSERT_GT(m.cells.size(), 100u);
    // Every vertex starts exactly one segment and ends exactly one: closed, oriented contours.
    std::vector<int> starts(m.vertices.size(), 0), ends(m.vertices.size(), 0);
    for (const auto& c : m.cells) {
        ++starts[c[0]];
        ++ends[c[1]];
    }
    for (std::size_t i = 0; i < m.vertices.size(); ++i) {
        ASSERT_EQ(starts[i], 1) << i;
        ASSERT_EQ(ends[i], 1) << i;
    }
    EXPECT_GT(enclosed_volume(m), 0.0);
}

// The sign of the orientation: a single inside node gives a small closed octahedron-like surface with
// outward normals and positive volume.
TEST(Surface, SingleInsideNodeGivesOutwardClosedSurface) {
    ExecContext exec(1);
    SparseGrid<3> g = box_grid<3>(1, 8, 1.0f, [](const Vec3& x) {
        const float d = norm(x - Vec3{{4, 4, 4}});
        return d < 0.5f ? -0.5f : 0.5f;
    });
    const Mesh<3> m = extract_mesh<3>(g, 0.0f, exec);
    EXPECT_EQ(m.vertices.size(), 6u);
    EXPECT_EQ(m.cells.size(), 8u);
    EXPECT_NEAR(enclosed_volume(m), 4.0 / 3.0 * 0.125, 1e-6);  // octahedron with half-diagonal 0.5
    for (std::size_t i = 0; i < m.vertices.size(); ++i)
        EXPECT_GT(dot(m.normals[i], m.vertices[i] - Vec3{{4, 4, 4}}), 0.0f);
    const Topology t = topology(m);
    EXPECT_EQ(t.euler, 2);
}

TEST(Surface, WavefrontEqualsSerialSweep) {
    for (int block : {4, 8}) {
        SurfaceSettings s = sphere_settings();
        s.block_size = block;
        const auto p = lattice_ball(s.particle_radius, 10.0f * s.particle_radius, Vec3{{0.013f, -0.02f, 0.3f}});
        ExecContext exec(2);
        const SparseGrid<3> rho = splat_density<3>(p, s, exec);
        std::vector<std::uint8_t> pinned;
        SparseGrid<3> a = pin_distances<3>(rho, s.iso, pinned, exec);
        SparseGrid<3> b = a;
        sweep_serial<3>(a, pinned);
        sweep_wavefront<3>(b, pinned, exec);
        ASSERT_EQ(a.values.size(), b.values.size());
        EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)), 0) << block;
        // And the sweep did something: no FLT_MAX left inside the blocks near the ball.
        std::size_t far = 0;
        for (float v : a.values) far += std::abs(v) >= FLT_MAX;
        EXPECT_EQ(far, 0u);
    }
    // 2D too.
    SurfaceSettings s = sphere_settings();
    s.block_size = 4;
    const auto p2 = lattice_disc(s.particle_radius, 12.0f * s.particle_radius);
    ExecContext exec(2);
    std::vector<std::uint8_t> pinned;
    SparseGrid<2> a = pin_distances<2>(splat_density<2>(p2, s, exec), s.iso, pinned, exec);
    SparseGrid<2> b = a;
    sweep_serial<2>(a, pinned);
    sweep_wavefront<2>(b, pinned, exec);
    EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)), 0);
}

// The whole pipeline, smoothing and blob removal included, gives the same bits on 1 and 2 threads,
// with isotropic and with anisotropic kernels.
TEST(Surface, SameBitsOn1And2Threads) {
  for (const bool anisotropic : {false, true}) {
    SCOPED_TRACE(anisotropic ? "anisotropic" : "isotropic");
    SurfaceSettings s = sphere_settings();
    s.anisotropic = anisotropic;
    s.smooth_iterations = 3;
    s.min_volume = 1e-9f;
    s.keep_grids = true;
    auto p = lattice_ball(s.particle_radius, 9.0f * s.particle_radius, Vec3{{0, 0, 0}});
    // Jitter, so that sums depend on their order if anything were unordered.
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-0.3f * s.particle_radius, 0.3f * s.particle_radius);
    for (auto& x : p)
        for (int a = 0; a < 3; ++a) x[a] += u(rng);
    auto run = [&](int threads) { ExecContext exec(threads); return reconstruct_surface<3>(p, s, exec); };
    const auto r1 = run(1), r2 = run(2);
    ASSERT_EQ(r1.mesh.vertices.size(), r2.mesh.vertices.size());
    ASSERT_EQ(r1.mesh.cells.size(), r2.mesh.cells.size());
    EXPECT_EQ(std::memcmp(r1.mesh.vertices.data(), r2.mesh.vertices.data(), r1.mesh.vertices.size() * sizeof(Vec3)), 0);
    EXPECT_EQ(std::memcmp(r1.mesh.normals.data(), r2.mesh.normals.data(), r1.mesh.normals.size() * sizeof(Vec3)), 0);
    EXPECT_EQ(r1.mesh.cells, r2.mesh.cells);
    EXPECT_EQ(std::memcmp(r1.density.values.data(), r2.density.values.data(), r1.density.values.size() * 4), 0);
    EXPECT_EQ(std::memcmp(r1.signed_distance.values.data(), r2.signed_distance.values.data(),
                          r1.signed_distance.values.size() * 4), 0);
  }
}

// Yu & Turk's kernels on a lattice (spacing 2r): a particle deep inside keeps the isotropic kernel
// (h G = I), one on a flat face keeps h along the face's normal and is stretched along the face (no
// axis shorter than h, eddy/surface.hpp), and a lone particle gets the round kernel of radius h / 2.
TEST(Surface, AnisotropicKernelsOnALattice) {
    SurfaceSettings s = sphere_settings();
    s.anisotropic = true;
    const float r = s.particle_radius;
    std::vector<Vec3> p;
    for (int k = 0; k < 12; ++k)
        for (int j = 0; j < 12; ++j)
            for (int i = 0; i < 12; ++i) p.push_back(Vec3{{2 * r * i, 2 * r * j, 2 * r * k}});
    p.push_back(Vec3{{1.0f, 1.0f, 1.0f}});  // alone
    ExecContext exec(2);
    const auto k = anisotropic_kernels<3>(p, s, exec);
    auto at = [&](int i, int j, int l) { return std::size_t(i + 12 * (j + 12 * l)); };
    const std::size_t inner = at(6, 6, 6), top = at(6, 11, 6), lone = p.size() - 1;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) EXPECT_NEAR(k.g[inner][a * 3 + b], a == b ? 1.0f : 0.0f, 1e-4f) << a << b;
    EXPECT_NEAR(k.det[inner], 1.0f, 1e-4f);
    EXPECT_NEAR(norm(k.centers[inner] - p[inner]), 0.0f, 1e-6f);  // symmetric neighbourhood: no shift
    // Top face: the y axis (the normal) keeps h; x and z stretch (h G < 1 there).
    EXPECT_NEAR(k.g[top][4], 1.0f, 1e-4f);
    EXPECT_LT(k.g[top][0], 0.95f);
    EXPECT_LT(k.g[top][8], 0.95f);
    EXPECT_GE(k.g[top][0], 0.5f - 1e-6f);  // stretched at most 2x
    EXPECT_GT(k.extent[top][0], s.support());
    EXPECT_NEAR(k.extent[top][1], s.support(), 1e-3f * s.support());
    EXPECT_EQ(k.isolated, 1u);
    EXPECT_NEAR(k.g[lone][0], 2.0f, 1e-6f);
    EXPECT_NEAR(k.det[lone], 8.0f, 1e-5f);
    EXPECT_EQ(k.centers[lone], p[lone]);
    // A lone particle, invisible to the isotropic kernel (density 0.32 at its centre), is a droplet.
    const auto drop = reconstruct_surface<3>(std::vector<Vec3>{p[lone]}, s, exec);
    EXPECT_GT(enclosed_volume(drop.mesh), 0.0);
}

// The kernels' neighbour passes read a row of cells only within a particle's reach along x (the run sorted
// by x, the rows beyond r_c skipped): no neighbour within r_c may be left out, wherever the cells' faces
// fall. Shifting the particles by a fraction of a cell and shuffling them moves every face; each kernel's
// centre and h G stay put (one neighbour left out would move a centre by about a hundredth of r_c, here
// 6e-4 m; the sums' rounding moves it by less than 1e-7 m near the origin and 1e-6 m at 5 m).
template <int D>
void expect_kernels_independent_of_the_cells(std::vector<Vec<D>> p, const Vec<D>& far) {
    SurfaceSettings s = sphere_settings();
    s.anisotropic = true;
    const float r = s.particle_radius;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-0.45f * r, 0.45f * r);
    const std::size_t near = p.size();
    for (std::size_t i = 0; i < near; ++i) p.push_back(p[i] + far);  // a second blob far from the origin
    for (auto& x : p)
        for (int a = 0; a < D; ++a) x[a] += u(rng);
    Vec<D> shift;
    for (int a = 0; a < D; ++a) shift[a] = (0.37f + 0.21f * a) * s.anisotropy_support();
    std::vector<std::size_t> perm(p.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<Vec<D>> q(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) q[perm[i]] = p[i] + shift;
    ExecContext exec(2);
    const auto k1 = anisotropic_kernels<D>(p, s, exec), k2 = anisotropic_kernels<D>(q, s, exec);
    EXPECT_EQ(k1.isolated, k2.isolated);
    EXPECT_EQ(k1.rounded, k2.rounded);
    double worst_centre = 0.0, worst_g = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const std::size_t j = perm[i];
        worst_centre = std::max(worst_centre, double(norm(k2.centers[j] - shift - k1.centers[i])));
        for (int e = 0; e < D * D; ++e) worst_g = std::max(worst_g, double(std::abs(k2.g[j][e] - k1.g[i][e])));
    }
    EXPECT_LT(worst_centre, 1e-5);
    EXPECT_LT(worst_g, 1e-3);
}

TEST(Surface, AnisotropicKernelsDoNotDependOnWhereTheCellsFall) {
    const float r = sphere_settings().particle_radius;
    expect_kernels_independent_of_the_cells<3>(lattice_ball(r, 9.0f * r, Vec3{{0, 0, 0}}), Vec3{{5.0f, -3.0f, 2.0f}});
    expect_kernels_independent_of_the_cells<2>(lattice_disc(r, 20.0f * r), Vec2{{5.0f, -3.0f}});
}

// Memory follows the fluid: two small drops 100 m apart need no more blocks than twice one drop.
TEST(Surface, SparseBlocksFollowTheFluid) {
    SurfaceSettings s = sphere_settings();
    ExecContext exec(2);
    auto one = lattice_ball(s.particle_radius, 5.0f * s.particle_radius, Vec3{{0, 0, 0}});
    auto two = one;
    for (const auto& x : one) two.push_back(x + Vec3{{100.0f, 37.0f, -50.0f}});
    const auto g1 = splat_density<3>(one, s, exec);
    const auto g2 = splat_density<3>(two, s, exec);
    EXPECT_GT(g1.layout.size(), 0u);
    EXPECT_LE(g2.layout.size(), 2 * g1.layout.size());
    const auto r = reconstruct_surface<3>(two, s, exec);
    EXPECT_NEAR(enclosed_volume(r.mesh), 2.0 * enclosed_volume(reconstruct_surface<3>(one, s, exec).mesh),
                1e-3 * enclosed_volume(r.mesh));
}

TEST(Surface, SmallBlobsAreRemoved) {
    SurfaceSettings s = sphere_settings();
    ExecContext exec(2);
    auto p = lattice_ball(s.particle_radius, 8.0f * s.particle_radius, Vec3{{0, 0, 0}});
    const auto small = lattice_ball(s.particle_radius, 3.0f * s.particle_radius, Vec3{{1.0f, 0, 0}});
    p.insert(p.end(), small.begin(), small.end());
    const auto both = reconstruct_surface<3>(p, s, exec);
    s.min_volume = 0.5f * float(4.0 / 3.0 * M_PI * std::pow(8.0 * s.particle_radius, 3.0));
    const auto big = reconstruct_surface<3>(p, s, exec);
    EXPECT_LT(big.mesh.cells.size(), both.mesh.cells.size());
    EXPECT_EQ(topology(big.mesh).euler, 2);
    EXPECT_EQ(topology(both.mesh).euler, 4);
    for (const auto& c : big.mesh.cells) ASSERT_LT(c[0], big.mesh.vertices.size());
}

TEST(Surface, TaubinSmoothingKeepsVolumeAndTopology) {
    SurfaceSettings s = sphere_settings();
    ExecContext exec(2);
    const auto p = lattice_ball(s.particle_radius, 10.0f * s.particle_radius, Vec3{{0, 0, 0}});
    const auto raw = reconstruct_surface<3>(p, s, exec);
    s.smooth_iterations = 10;
    const auto smooth = reconstruct_surface<3>(p, s, exec);
    EXPECT_EQ(smooth.mesh.cells, raw.mesh.cells);
    EXPECT_NEAR(enclosed_volume(smooth.mesh), enclosed_volume(raw.mesh), 0.03 * enclosed_volume(raw.mesh));
    // Smoother: the spread of vertex radii shrinks.
    auto spread = [](const Mesh<3>& m) {
        double s1 = 0, s2 = 0;
        for (const auto& v : m.vertices) {
            const double r = norm(v);
            s1 += r;
            s2 += r * r;
        }
        const double n = double(m.vertices.size());
        return std::sqrt(std::max(0.0, s2 / n - (s1 / n) * (s1 / n)));
    };
    EXPECT_LT(spread(smooth.mesh), spread(raw.mesh));
}

TEST(Surface, WritersProduceReadableFiles) {
    SurfaceSettings s = sphere_settings();
    s.keep_grids = true;
    ExecContext exec(2);
    const auto r = reconstruct_surface<3>(lattice_ball(s.particle_radius, 5.0f * s.particle_radius, Vec3{{0, 0, 0}}), s, exec);
    const auto dir = std::filesystem::temp_directory_path() / ("eddy_surface_writers_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    write_mesh<3>(dir / "a.obj", r.mesh);
    write_mesh<3>(dir / "a.ply", r.mesh);
    write_vti<3>(dir / "a.vti", r.signed_distance);
    vdb::write_level_set<3>(dir / "a.vdb", r.signed_distance);
    vdb::write_level_set<3>(dir / "b.vdb", r.signed_distance, 3.0f, &r.density);
    EXPECT_THROW(write_mesh<3>(dir / "a.stl", r.mesh), InputError);
    std::ifstream obj(dir / "a.obj");
    std::map<char, std::size_t> count;
    for (std::string line; std::getline(obj, line);)
        if (line.size() > 2 && line[1] == ' ') ++count[line[0]];
    EXPECT_EQ(count['v'], r.mesh.vertices.size());
    EXPECT_EQ(count['f'], r.mesh.cells.size());
    EXPECT_GT(std::filesystem::file_size(dir / "a.ply"), r.mesh.vertices.size() * 24);
    EXPECT_GT(std::filesystem::file_size(dir / "a.vti"), r.signed_distance.values.size() * 4 / 2);
    // OpenVDB reads its file back: a level set with eddy's voxel size, negative inside the drop,
    // the narrow band active, the far inside at -band after the signed flood fill.
    const vdb::FileInfo info = vdb::read_info(dir / "a.vdb", Vec3{{0, 0, 0}});
    EXPECT_EQ(info.name, "surface");
    EXPECT_EQ(info.grid_class, "level set");
    EXPECT_EQ(info.grids, std::vector<std::string>{"surface"});
    // With the density: Blender's default grid name ("density", a fog volume) beside the level set.
    EXPECT_EQ(vdb::read_info(dir / "b.vdb", Vec3{{0, 0, 0}}).grids, (std::vector<std::string>{"surface", "density"}));
    EXPECT_NEAR(info.voxel, s.voxel(), 1e-9);
    EXPECT_GT(info.active, 1000u);
    EXPECT_LT(info.value_at_probe, 0.0f);
    EXPECT_NEAR(info.value_at_probe, r.signed_distance.at({0, 0, 0}) < -3.0f * s.voxel() ? -3.0f * s.voxel()
                                                                                          : r.signed_distance.at({0, 0, 0}),
                1e-6f);
    std::filesystem::remove_all(dir);
}

// Guards the guard: the topology check used above does see holes, flips and pinched vertices.
TEST(Surface, TopologyCheckSeesDefects) {
    Mesh<3> tet;
    tet.vertices = {Vec3{{0, 0, 0}}, Vec3{{1, 0, 0}}, Vec3{{0, 1, 0}}, Vec3{{0, 0, 1}}};
    tet.cells = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
    Topology t = topology(tet);
    EXPECT_EQ(t.unmatched_directed_edges + t.repeated_directed_edges + t.non_manifold_vertices, 0u);
    EXPECT_EQ(t.euler, 2);
    EXPECT_GT(enclosed_volume(tet), 0.0);
    Mesh<3> flipped = tet;
    std::swap(flipped.cells[3][1], flipped.cells[3][2]);
    EXPECT_GT(topology(flipped).unmatched_directed_edges, 0u);
    Mesh<3> hole = tet;
    hole.cells.pop_back();
    EXPECT_GT(topology(hole).unmatched_directed_edges, 0u);
    // Two tetrahedra touching at vertex 0: every edge has two triangles, but vertex 0 is pinched.
    Mesh<3> pinched = tet;
    pinched.vertices.push_back(Vec3{{-1, 0, 0}});
    pinched.vertices.push_back(Vec3{{0, -1, 0}});
    pinched.vertices.push_back(Vec3{{0, 0, -1}});
    for (auto c : tet.cells) {
        for (auto& i : c) i = i == 0 ? 0 : i + 3;
        pinched.cells.push_back({c[0], c[2], c[1]});  // mirrored: flip to keep it outward
    }
    t = topology(pinched);
    EXPECT_EQ(t.unmatched_directed_edges, 0u);
    EXPECT_EQ(t.non_manifold_vertices, 1u);
}

// The mesh comes from the density alone: with the distance computed (keep_grids) it is the same mesh, bit for
// bit (cells, vertices, normals); every vertex lies on a grid edge at the density's linear crossing of the iso
// level (the grids kept give the density at the edge's two nodes); normals point out of the fluid.
TEST(Surface, MeshComesFromTheDensityWithOrWithoutTheDistance) {
    SurfaceSettings s = sphere_settings();
    s.vertex_margin = 0.0f;  // the crossing itself, unclamped
    const Vec3 c{{0.01f, -0.02f, 0.03f}};
    auto p = lattice_ball(s.particle_radius, 20.0f * s.particle_radius, c);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-0.3f * s.particle_radius, 0.3f * s.particle_radius);
    for (auto& x : p)
        for (int a = 0; a < 3; ++a) x[a] += u(rng);
    ExecContext exec(2);
    const auto alone = reconstruct_surface<3>(p, s, exec);
    s.keep_grids = true;
    const auto kept = reconstruct_surface<3>(p, s, exec);
    EXPECT_EQ(alone.seconds[2], 0.0);  // no sweep without keep_grids
    ASSERT_GT(alone.mesh.cells.size(), 1000u);
    ASSERT_EQ(alone.mesh.cells, kept.mesh.cells);
    ASSERT_EQ(alone.mesh.vertices.size(), kept.mesh.vertices.size());
    EXPECT_EQ(std::memcmp(alone.mesh.vertices.data(), kept.mesh.vertices.data(), alone.mesh.vertices.size() * sizeof(Vec3)), 0);
    EXPECT_EQ(std::memcmp(alone.mesh.normals.data(), kept.mesh.normals.data(), alone.mesh.normals.size() * sizeof(Vec3)), 0);
    // Each vertex: the edge it lies on (two coordinates on grid nodes), the density at its ends, the crossing.
    const SparseGrid<3>& rho = kept.density;
    const float h = rho.layout.voxel;
    double worst = 0.0;
    std::size_t outward = 0, checked = 0;
    for (std::size_t i = 0; i < alone.mesh.vertices.size(); ++i) {
        const Vec3& x = alone.mesh.vertices[i];
        std::array<int, 3> q;
        int along = -1;
        for (int a = 0; a < 3; ++a) {
            const float g = x[a] / h;
            q[a] = int(std::floor(g));
            if (std::abs(g - std::round(g)) < 1e-3f) q[a] = int(std::round(g));
            else along = a;
        }
        if (along < 0) continue;  // on a node (cannot tell the edge)
        std::array<int, 3> q1 = q;
        ++q1[along];
        const float r0 = rho.at(q), r1 = rho.at(q1);
        ASSERT_TRUE((r0 >= s.iso) != (r1 >= s.iso)) << "vertex " << i << " is not on a crossed edge";
        const double t = double(x[along] / h - float(q[along]));
        worst = std::max(worst, std::abs(t - double(r0 - s.iso) / double(r0 - r1)));
        ++checked;
        outward += dot(alone.mesh.normals[i], x - c) > 0.0f;
    }
    EXPECT_GT(checked, alone.mesh.vertices.size() * 9 / 10);
    EXPECT_LT(worst, 1e-4);  // of a voxel: the float rounding of the positions (2.3e-6 measured)
    EXPECT_EQ(outward, checked);
    std::printf("%zu vertices: %zu on an edge, farthest from the density's linear crossing %.2g voxel\n",
                alone.mesh.vertices.size(), checked, worst);
}
