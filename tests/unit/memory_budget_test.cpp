// Memory estimates (issue 12): sizes as users write them, the one-line refusal, and the estimators
// against what the library actually allocates (memory_bytes()) for small scenes and particle sets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "eddy/memory_budget.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "eddy/surface.hpp"
#include "test_support.hpp"

using namespace eddy;

namespace {

// The memory a running simulation holds, as its parts report it (vector capacities, Clavet's springs).
// What the simulation holds between steps, its volume maps' blocks not filled yet counted as filled: the
// estimate is the run's, and a map fills as the fluid comes near (issue 44).
std::size_t actual_bytes(const Simulation& sim) {
    return std::visit(
        [](const auto& s) {
            return s.fluid.memory_bytes() + s.boundary.memory_bytes() +
                   std::visit([](const auto& m) -> std::size_t {
                       std::size_t unfilled = 0;
                       if constexpr (requires { m.smooth_walls(); }) {
                           const auto& v = m.smooth_walls().volume_maps();
                           using Push = typename decltype(v.maps.front().push)::value_type;
                           unfilled = (v.nodes_held() - v.nodes_filled()) * (sizeof(float) + sizeof(Push));
                       }
                       return m.memory_bytes() + unfilled;
                   }, s.method);
        },
        sim);
}

std::size_t fluid_size(const Simulation& sim) {
    return std::visit([](const auto& s) { return s.fluid.size(); }, sim);
}
std::size_t wall_size(const Simulation& sim) {
    return std::visit([](const auto& s) { return s.boundary.position.size(); }, sim);
}

// A PNG that is only a header: IHDR claiming width x height, then IEND. stbi_info reads it; decoding it
// would fail, so a test that gets past the memory check notices.
std::string png_header_only(std::uint32_t width, std::uint32_t height) {
    auto crc = [](const std::string& bytes) {
        std::uint32_t c = 0xffffffffu;
        for (unsigned char b : bytes) {
            c ^= b;
            for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
        }
        return c ^ 0xffffffffu;
    };
    auto be32 = [](std::uint32_t v) {
        return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    };
    auto chunk = [&](const std::string& type, const std::string& data) {
        return be32(std::uint32_t(data.size())) + type + data + be32(crc(type + data));
    };
    std::string ihdr = be32(width) + be32(height);
    ihdr += std::string{char(8), char(0), char(0), char(0), char(0)};  // 8-bit grey, deflate, no interlace
    return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IEND", "");
}

}  // namespace

TEST(MemoryBudget, ParsesSizesAsUsersWriteThem) {
    EXPECT_EQ(parse_memory_size("1000000"), 1000000u);
    EXPECT_EQ(parse_memory_size("500M"), 500000000u);
    EXPECT_EQ(parse_memory_size("4G"), 4000000000u);
    EXPECT_EQ(parse_memory_size("1.5GB"), 1500000000u);
    EXPECT_EQ(parse_memory_size("512MiB"), 512u * 1024u * 1024u);
    EXPECT_EQ(parse_memory_size("2 gib"), 2ull * 1024u * 1024u * 1024u);
    EXPECT_EQ(parse_memory_size("64k"), 64000u);
    for (const char* bad : {"", "abc", "0", "-1G", "5X", "1e400", "nan", "G"})
        test::expect_input_error([&] { parse_memory_size(bad, "--max-memory"); }, {"--max-memory", "allowed"});
}

TEST(MemoryBudget, FormatsSizesAndCounts) {
    EXPECT_EQ(format_bytes(26.3e9), "26.3 GB");
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(1.18e9), "1.18 GB");
    EXPECT_EQ(format_bytes(133e9), "133 GB");
    EXPECT_EQ(format_count(1.2e6), "1.2 M");
    EXPECT_EQ(format_count(512), "512");
    EXPECT_EQ(format_count(80e6), "80 M");
}

TEST(MemoryBudget, KnowsTheMachinesMemory) {
    const std::size_t avail = available_memory_bytes();
    EXPECT_GT(avail, std::size_t{16} << 20);  // any machine that runs the tests
    const MemoryBudget b = machine_memory_budget();
    EXPECT_FALSE(b.unlimited());
    EXPECT_LE(b.limit_bytes, avail);
    EXPECT_TRUE(MemoryBudget{}.unlimited());
}

TEST(MemoryBudget, RefusesInOneLineNamingKeyEstimateAndLimit) {
    MemoryEstimate e;
    e.key = "boundaries[0]";
    e.add("fluid 1.2 M particles", 96e6);
    e.add("walls 80 M particles", 4.1e9);
    MemoryBudget b;
    check_memory(e, b, "x.json");  // no limit: nothing to say
    b.limit_bytes = 1'000'000'000;
    test::expect_input_error([&] { check_memory(e, b, "x.json"); },
                             {"x.json: boundaries[0]: needs about 4.20 GB", "walls 80 M particles 4.10 GB",
                              "more than the limit 1.00 GB (--max-memory)"});
    b.limit_bytes = 5'000'000'000;
    check_memory(e, b, "x.json");
}

// The estimate of every small bundled particle scene, against memory_bytes() after two steps (the
// neighbour lists and springs exist then): within a factor 1.5, and the particle counts close.
TEST(MemoryEstimate, ParticleScenesWithinAFactorOfWhatTheyAllocate) {
    ExecContext exec(2);
    int checked = 0;
    for (const auto& entry : list_bundled_scenes()) {
        Scene scene = load_scene(entry.file);
        if (scene.method == "shallow_water") continue;
        if (!scene.emitters.empty()) continue;  // they start empty; the estimate does not count what they emit
        const MemoryEstimate e = estimate_memory(scene, 5'000'000);
        ASSERT_NE(e.find("fluid"), nullptr) << entry.name;
        if (e.find("fluid")->count > 30000) continue;  // the big 3D scenes: the same model, slower
        Simulation sim = make_simulation(scene, 5'000'000, exec);
        for (int i = 0; i < 2; ++i) step(sim, exec);
        // memory_bytes() is what the simulation holds between steps; the frame being written is not in it.
        const double actual = double(actual_bytes(sim)), estimate = e.total() - e.find("frame files")->bytes;
        const double fluid = double(fluid_size(sim)), walls = double(wall_size(sim));
        std::printf("%-22s %-7s fluid %7.0f (est %7.0f)  walls %7.0f (est %7.0f)  bytes %9.0f  est %9.0f  ratio %.2f\n",
                    entry.name.c_str(), scene.method.c_str(), fluid, e.find("fluid")->count, walls,
                    e.find("walls") ? e.find("walls")->count : 0.0, actual, estimate, estimate / actual);
        EXPECT_GT(estimate, actual / 1.5) << entry.name;
        EXPECT_LT(estimate, actual * 1.5) << entry.name;
        EXPECT_NEAR(e.find("fluid")->count, fluid, 0.1 * fluid + 10) << entry.name;
        if (walls > 0) {
            ASSERT_NE(e.find("walls"), nullptr) << entry.name;
            EXPECT_NEAR(e.find("walls")->count, walls, 0.25 * walls + 10) << entry.name;  // models: Poisson disks
        }
        ++checked;
    }
    EXPECT_GE(checked, 15);
}

TEST(MemoryEstimate, ClavetSpringsAreCounted) {
    ExecContext exec(2);
    Scene scene = load_scene(resolve_scene("clavet_dam_break_2d"), {"settings.spring_stiffness=50"});
    const MemoryEstimate e = estimate_memory(scene, 5'000'000);
    ASSERT_NE(e.find("springs"), nullptr);
    Simulation sim = make_simulation(scene, 5'000'000, exec);
    step(sim, exec);
    const auto& clavet = std::get<ClavetSolver<2>>(std::get<ParticleSimulation<2>>(sim).method);
    const double springs = double(clavet.spring_count());
    std::printf("springs %.0f (est %.0f), bytes %zu (est %.0f)\n", springs, e.find("springs")->count, actual_bytes(sim),
                e.total());
    EXPECT_NEAR(e.find("springs")->count, springs, 0.25 * springs);
    const double held = e.total() - e.find("frame files")->bytes;
    EXPECT_GT(held, actual_bytes(sim) / 1.5);
    EXPECT_LT(held, actual_bytes(sim) * 1.5);
}

// Under mpirun (issue 44) each process builds its share of the fluid and holds its share of the neighbour lists:
// 1.25 / N with its ghosts; the frame files too with pieces; WCSPH's hydrostatic start keeps the lists whole
// (not on a resume, which starts nothing).
TEST(MemoryEstimate, EachProcessHoldsItsShareOfTheNeighbourLists) {
    const Scene dfsph = load_scene(resolve_scene("bench_dam_break_3d"), {"method=dfsph"});
    const MemoryEstimate whole = estimate_memory(dfsph, 5'000'000);
    MemoryBudget budget;
    EXPECT_EQ(estimate_process_memory(dfsph, 5'000'000, budget).total(), whole.total());  // one process
    budget.processes = 4;
    const MemoryEstimate four = estimate_process_memory(dfsph, 5'000'000, budget);
    const double lists = whole.find("neighbour lists")->bytes, share = four.find("neighbour lists")->bytes / lists;
    EXPECT_GT(share, 1.25 / 4);  // never less than the imbalance allows
    EXPECT_LT(share, 0.6);      // 64,000 particles: boxes of 25 spacings, 60% ghosts counted
    EXPECT_NE(four.find("neighbour lists")->what.find("a process's share of 4"), std::string::npos);
    EXPECT_NEAR(four.find("fluid")->bytes, share * whole.find("fluid")->bytes, 1.0);  // each builds its share
    EXPECT_EQ(four.find("walls")->bytes, whole.find("walls")->bytes);
    EXPECT_EQ(four.find("frame files")->bytes, whole.find("frame files")->bytes);  // gathered on the first
    budget.pieces = true;
    EXPECT_NEAR(estimate_process_memory(dfsph, 5'000'000, budget).find("frame files")->bytes,
                share * whole.find("frame files")->bytes, 1.0);
    const Scene wcsph = load_scene(resolve_scene("bench_dam_break_3d"));
    EXPECT_EQ(estimate_process_memory(wcsph, 5'000'000, budget).find("neighbour lists")->bytes,
              estimate_memory(wcsph, 5'000'000).find("neighbour lists")->bytes);  // the hydrostatic start's search
    EXPECT_EQ(estimate_process_memory(wcsph, 5'000'000, budget).find("fluid")->bytes,
              estimate_memory(wcsph, 5'000'000).find("fluid")->bytes);  // and its whole columns
    const Scene cold = load_scene(resolve_scene("bench_dam_break_3d"), {"settings.hydrostatic_start=false"});
    EXPECT_LT(estimate_process_memory(cold, 5'000'000, budget).find("neighbour lists")->bytes,
              0.6 * estimate_memory(cold, 5'000'000).find("neighbour lists")->bytes);
    // A resumed run starts nothing: WCSPH's scene is built in shares, as the cold one (restore_simulation).
    budget.resumed = true;
    EXPECT_EQ(estimate_process_memory(wcsph, 5'000'000, budget).find("fluid")->bytes,
              estimate_process_memory(cold, 5'000'000, budget).find("fluid")->bytes);
    EXPECT_LT(estimate_process_memory(wcsph, 5'000'000, budget).find("neighbour lists")->bytes,
              0.6 * estimate_memory(wcsph, 5'000'000).find("neighbour lists")->bytes);
}

// A wall 10 km long (2D) or a tank 10 km wide (3D) is counted, not visited: the estimate is instant,
// and make_simulation refuses it before sampling a single wall particle.
TEST(MemoryEstimate, HugeWallsAreCountedInstantlyAndRefused) {
    ExecContext exec(1);
    const double cpu0 = test::cpu_seconds();
    const Scene s2 = load_scene(resolve_scene("dam_break_2d"), {"boundaries.0.max=[10000,10000]"});
    const MemoryEstimate e2 = estimate_memory(s2, 5'000'000);
    EXPECT_NEAR(e2.find("walls")->count, 2 * 4 * 10000 / 0.005, 0.01 * 2 * 4 * 10000 / 0.005);
    EXPECT_EQ(e2.key, "boundaries[0]");
    const Scene s3 = load_scene(resolve_scene("dam_break_3d"), {"boundaries.0.max=[10000,10000,10000]"});
    const MemoryEstimate e3 = estimate_memory(s3, 5'000'000);
    EXPECT_GT(e3.total(), 1e13);
    MemoryBudget b;
    b.limit_bytes = 100'000'000;
    test::expect_input_error([&] { make_simulation(s2, 5'000'000, exec, b); },
                             {"boundaries[0]: needs about", "walls 16 M particles", "more than the limit 100 MB"});
    test::expect_input_error([&] { make_simulation(s3, 5'000'000, exec, machine_memory_budget()); },
                             {"boundaries[0]: needs about", "more than the limit"});
    // Milliseconds of CPU (the clock would stretch on a busy machine); sampling the 3D walls would never end.
    EXPECT_LT(test::cpu_seconds() - cpu0, 5.0);
}

TEST(MemoryEstimate, ShallowWaterGridAndHeightmapHeader) {
    test::TempDir tmp("memory_shallow");
    // 24000 x 24000 8-bit grey: 576 MB of pixels from a file of a few dozen bytes.
    std::ofstream(tmp.path() / "big.png", std::ios::binary) << png_header_only(24000, 24000);
    nlohmann::json j = {{"name", "big"},
                        {"dimension", 2},
                        {"method", "shallow_water"},
                        {"gravity", 9.81},
                        {"duration", 1.0},
                        {"grid", {{"cells", {64, 32}}, {"dx", 0.1}}},
                        {"terrain", {{"heightmap", "big.png"}}},
                        {"output", {{"fps", 4}, {"formats", {"vti"}}}}};
    const Scene scene = parse_scene(j, (tmp.path() / "big.json").string());
    const ShallowWaterScene spec = parse_shallow_water(scene);
    const std::vector<std::string> vti{"vti"};
    const MemoryEstimate e = estimate_memory(spec, vti);
    EXPECT_EQ(e.key, "terrain.heightmap");
    ASSERT_NE(e.find("heightmap"), nullptr);
    EXPECT_GT(e.total(), 1.1e9);
    MemoryBudget b;
    b.limit_bytes = 500'000'000;
    test::expect_input_error([&] { make_shallow_water(scene, b); },
                             {"big.json: terrain.heightmap: needs about", "heightmap 24000 x 24000", "more than the limit 500 MB"});

    // The grid itself: 10 numbers and a flag per cell, as the solver's arrays hold them.
    nlohmann::json g = j;
    g.erase("terrain");
    g["grid"]["cells"] = {200, 100};
    const Scene gs = parse_scene(g, "grid.json");
    const ShallowWaterSimulation sim = make_shallow_water(gs);
    const auto& grid = std::get<ShallowWaterSolver<float>>(sim.solver).grid();
    const double fields = double(grid.terrain.capacity() + grid.depth.capacity() + grid.ink.capacity() +
                                 grid.u.capacity() + grid.w.capacity()) * sizeof(float) + double(grid.solid.capacity());
    const MemoryEstimate eg = estimate_memory(parse_shallow_water(gs), {});
    // The solver holds as much again in scratch (three cell and two face arrays) as the grid's fields.
    const double actual = fields + double(3 * grid.cells() + grid.u.size() + grid.w.size()) * sizeof(float);
    EXPECT_NEAR(eg.total(), actual, 0.05 * actual);
    // The 2^28-cell grid of the issue: about 11 GB in float before any frame is written.
    g["grid"]["cells"] = {16384, 16384};
    const MemoryEstimate huge = estimate_memory(parse_shallow_water(parse_scene(g, "huge.json")), vti);
    EXPECT_GT(huge.total(), 2.4e10);
    EXPECT_EQ(huge.key, "grid.cells");
}

// Surface reconstruction: the blocks counted exactly, the bytes within a factor of what is allocated.
TEST(MemoryEstimate, SurfaceBlocksAndBytes) {
    ExecContext exec(2);
    // A ball of particles (spacing 2r), then the same particles at a voxel far too small for them.
    std::vector<Vec3> ball;
    const float r = 0.01f;
    for (int i = -10; i <= 10; ++i)
        for (int j = -10; j <= 10; ++j)
            for (int k = -10; k <= 10; ++k)
                if (i * i + j * j + k * k <= 100) ball.push_back(Vec3{{2 * r * i, 2 * r * j, 2 * r * k}});
    std::vector<Vec3> sparse_ball;  // every 8th: isolated particles at the tiny voxel, 27 blocks each
    for (std::size_t i = 0; i < ball.size(); i += 8) sparse_ball.push_back(ball[i]);
    for (float radius : {r, 0.001f * r})
        for (bool keep : {true, false}) {
            const std::vector<Vec3>& pts = radius == r ? ball : sparse_ball;
            SurfaceSettings s;
            s.particle_radius = radius;
            s.keep_grids = keep;
            const MemoryEstimate e = estimate_surface_memory<3>(pts, s, false, false);
            const auto res = reconstruct_surface<3>(pts, s, exec);
            EXPECT_EQ(e.find("grids")->count, double(res.blocks)) << radius;
            const double voxels = double(res.blocks) * 512.0;
            // The grids kept: density, distance, pinned flags (a byte per voxel) and the mesh's negated density;
            // a mesh alone: the density (grid_bytes).
            const double grids = keep ? double(2 * res.density.memory_bytes() + res.signed_distance.memory_bytes()) + voxels
                                      : double(res.grid_bytes);
            const double actual =
                grids + double(res.mesh.vertices.capacity() * 2 * sizeof(Vec3) + res.mesh.cells.capacity() * 12);
            std::printf("surface r = %g, %s: %zu blocks, bytes %.0f, est %.0f (ratio %.2f)\n", radius,
                        keep ? "grids kept" : "mesh alone", res.blocks, actual, e.total(), e.total() / actual);
            EXPECT_GT(e.total(), actual / 1.5) << radius << keep;
            // The marching tables are a bound, freed before the end: beside one grid they weigh (mesh alone, r = 0.01:
            // 1.98; grids kept 1.37).
            EXPECT_LT(e.total(), actual * 2.0) << radius << keep;
        }
    // Two clusters far apart: sparse blocks stay few, a dense .vti grid over their box does not.
    std::vector<Vec3> two(ball);
    for (const auto& p : ball) two.push_back(p + Vec3{{100.0f, 100.0f, 100.0f}});
    SurfaceSettings s;
    s.particle_radius = r;
    const MemoryEstimate sparse = estimate_surface_memory<3>(two, s, false, false);
    const MemoryEstimate dense = estimate_surface_memory<3>(two, s, true, false);
    EXPECT_LT(sparse.total(), 1e8);
    EXPECT_GT(dense.total(), 1e12);
    EXPECT_EQ(dense.key, "--sdf");
}

// ---- Models and particle files (issue 29, item 5) ---------------------------------------------------

namespace {

// Rows "x,y,z" of n particles: a lattice of spacing 2r, or clusters (Gaussian blobs of deviation r,
// a blob every 0.1 m, distinct positions), fixed seed.
std::string particle_rows(int n, double r, bool clustered) {
    std::string s = "x,y,z\n";
    std::mt19937 rng(29);
    std::normal_distribution<double> g(0.0, r);
    const int side = static_cast<int>(std::ceil(std::cbrt(double(n))));
    for (int i = 0; i < n; ++i) {
        double p[3];
        if (clustered) {
            const int blob = i % 8;
            for (int a = 0; a < 3; ++a) p[a] = 0.2 + 0.1 * ((blob >> a) & 1) + g(rng);
        } else {
            p[0] = 0.1 + 2 * r * (i % side);
            p[1] = 0.1 + 2 * r * ((i / side) % side);
            p[2] = 0.1 + 2 * r * (i / side / side);
        }
        s += fmt::format("{:.7f},{:.7f},{:.7f}\n", p[0], p[1], p[2]);
    }
    return s;
}

std::string file_fluid_scene(const std::string& file) {
    return R"({"name": "file", "dimension": 3, "particle_radius": 0.01,
      "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.6, 0.6, 0.6]}],
      "fluids": [{"shape": "file", "file": ")" + file + R"("}]})";
}

}  // namespace

// A model's cost from its header or its lines, nothing of it held: the counts drive the estimate.
TEST(ModelMemory, CountsFromHeadersAndLines) {
    test::TempDir dir("model_memory");
    // Binary STL: the header's count, the size agreeing; the triangles are a hole (never read).
    const auto stl = dir.path() / "big.stl";
    {
        std::string head(84, '\0');
        const std::uint32_t n = 4'000'000;
        std::memcpy(head.data() + 80, &n, 4);
        std::ofstream(stl, std::ios::binary) << head;
    }
    std::filesystem::resize_file(stl, 84 + 50ull * 4'000'000);
    const std::uint64_t read0 = test::bytes_read();
    const MemoryEstimate big = estimate_model_memory(stl);
    EXPECT_LT(test::bytes_read() - read0, 1u << 20);  // its header, not its 200 MB
    // Measured on a real 4 M-triangle STL of this size: 1,260 MB above the process at rest (docs/scenes.md).
    EXPECT_GE(big.total(), 1.26e9) << big.describe();
    EXPECT_LE(big.total(), 4e6 * 450.0) << big.describe();
    EXPECT_NE(big.describe().find("4 M triangles"), std::string::npos) << big.describe();

    // PLY: the header's element counts (a face list of 1000, 500 vertices).
    const auto ply = dir.write("m.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 500\nproperty float x\n"
                                        "property float y\nproperty float z\nelement face 1000\nproperty list uchar int "
                                        "vertex_indices\nend_header\n");
    std::filesystem::resize_file(ply, 20000);  // room for them: counts the file cannot hold are capped
    const MemoryEstimate p = estimate_model_memory(ply);
    EXPECT_NEAR(p.total(), 360.0 * 1000, 1.0) << p.describe();  // the processing dominates here

    // OBJ: its "v" lines and the triangles of its faces (a quad is two), ASCII STL: its vertex lines / 3.
    const auto obj = dir.write("m.obj", "# c\nv 0 0 0\nv 1 0 0\n  v 1 1 0\nv 0 1 0\nf 1 2 3 4\nf 1 2 3\nvn 0 0 1\n");
    const MemoryEstimate o = estimate_model_memory(obj);
    ASSERT_FALSE(o.parts.empty());
    EXPECT_EQ(o.parts.back().count, 3.0) << o.describe();
    std::string facets = "solid s\n";
    for (int i = 0; i < 5; ++i)
        facets += "facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n endloop\nendfacet\n";
    const MemoryEstimate a = estimate_model_memory(dir.write("a.stl", facets + "endsolid s\n"));
    ASSERT_FALSE(a.parts.empty());
    EXPECT_EQ(a.parts.back().count, 5.0) << a.describe();

    // A missing model is named.
    test::expect_input_error([&] { estimate_model_memory(dir.path() / "missing.obj"); }, {"missing.obj"});
}

// A particle file's reading: the bytes alone over the budget are refused from the size; else the rows.
TEST(ParticleFileMemory, FromSizeAndRows) {
    test::TempDir dir("particle_file_memory");
    const auto csv = dir.write("p.csv", particle_rows(1000, 0.01, false));
    MemoryBudget small;
    small.limit_bytes = 1000;
    const MemoryEstimate e0 = estimate_particle_file_memory(csv, 3, small);
    EXPECT_EQ(e0.parts.size(), 1u);  // the file's bytes: nothing counted
    test::expect_input_error([&] { check_memory(e0, small, "x.json"); }, {"particle file"});
    const MemoryEstimate e = estimate_particle_file_memory(csv, 3, {});
    ASSERT_NE(e.find("reading"), nullptr) << e.describe();
    EXPECT_EQ(e.find("reading")->count, 1000.0);
    const auto ply = dir.write("p.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 70000\nproperty float x\nend_header\n");
    // A header count the file cannot hold: at most one particle a byte (the reader refuses it anyway).
    EXPECT_EQ(estimate_particle_file_memory(ply, 3, {}).find("reading")->count, double(std::filesystem::file_size(ply)));
}

// A file fluid's neighbour lists are counted on its positions: clustered particles (Gaussian blobs) have
// far more neighbours than a lattice, and the estimate follows what the simulation allocates.
TEST(MemoryEstimate, FileFluidsCountTheirActualNeighbours) {
    test::TempDir dir("file_fluid_memory");
    ExecContext exec(2);
    double per_particle[2] = {0, 0};
    for (const bool clustered : {false, true}) {
        dir.write("p.csv", particle_rows(8000, 0.01, clustered));
        const auto file = dir.write("s.json", file_fluid_scene("p.csv"));
        const Scene scene = load_scene(file);
        const MemoryEstimate e = estimate_memory(scene, 5'000'000);
        ASSERT_NE(e.find("neighbour lists"), nullptr);
        Simulation sim = make_simulation(scene, 5'000'000, exec);
        step(sim, exec);
        const double actual = double(actual_bytes(sim)), estimate = e.total() - e.find("frame files")->bytes;
        per_particle[clustered] = e.find("neighbour lists")->count / 8000.0;
        std::printf("%s: %.0f neighbours a particle, bytes %.0f, estimate %.0f, ratio %.2f\n",
                    clustered ? "clustered" : "lattice", per_particle[clustered], actual, estimate, estimate / actual);
        EXPECT_GT(estimate, actual / 1.5) << clustered;
        EXPECT_LT(estimate, actual * 1.5) << clustered;
    }
    EXPECT_GT(per_particle[1], 5.0 * per_particle[0]);
}

// A fluid ball smaller than one lattice spacing holds no point: its estimate ends at once with none
// (in 2D it read as one point whose sub-lattice never ended: `--set particle_radius=0.64` hung).
TEST(MemoryEstimate, FluidSmallerThanOneSpacingCountsNothingAndEnds) {
    for (const char* name : {"clavet_slime_2d", "dam_break_3d"}) {
        Scene scene = load_scene(resolve_scene(name), {"particle_radius=0.64"});
        const MemoryEstimate e = estimate_memory(scene, 5'000'000);
        const auto* fluid = e.find("fluid");
        ASSERT_NE(fluid, nullptr) << name;
        EXPECT_GE(fluid->count, 0.0) << name;
    }
}
