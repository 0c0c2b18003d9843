// Geometry benchmarks (issue 10): sampling a 1M-triangle mesh into wall particles, the same mesh's distance
// grid and volume map (issue 40), and the cost of a step with a mesh tank against the same tank as an analytic box.
//   build/bin/eddy-bench --benchmark_filter='Geometry|MeshWalls|VolumeMap' --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>

#include "eddy/geometry.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/smooth_walls.hpp"

using namespace eddy;

namespace {

using Clock = std::chrono::steady_clock;

// A UV sphere of radius 1 with 2 n^2 triangles (n rings, 2n segments... about 1M for n = 708).
Mesh<3> uv_sphere(int n) {
    Mesh<3> m;
    const int rings = n, segs = n;
    m.vertices.push_back(Vec3{{0, 1, 0}});
    for (int i = 1; i < rings; ++i) {
        const double th = M_PI * i / rings;
        for (int j = 0; j < segs; ++j) {
            const double ph = 2 * M_PI * j / segs;
            m.vertices.push_back(Vec3{{float(std::sin(th) * std::cos(ph)), float(std::cos(th)), float(std::sin(th) * std::sin(ph))}});
        }
    }
    m.vertices.push_back(Vec3{{0, -1, 0}});
    const auto south = static_cast<std::uint32_t>(m.vertices.size() - 1);
    auto at = [&](int i, int j) { return static_cast<std::uint32_t>(1 + (i - 1) * segs + (j % segs)); };
    for (int j = 0; j < segs; ++j) m.cells.push_back({0, at(1, j + 1), at(1, j)});
    for (int i = 1; i + 1 < rings; ++i)
        for (int j = 0; j < segs; ++j) {
            m.cells.push_back({at(i, j), at(i, j + 1), at(i + 1, j + 1)});
            m.cells.push_back({at(i, j), at(i + 1, j + 1), at(i + 1, j)});
        }
    for (int j = 0; j < segs; ++j) m.cells.push_back({south, at(rings - 1, j), at(rings - 1, j + 1)});
    return m;
}

// A 1M-triangle sphere (size 2 m) sampled at a spacing 2r of 1/500 of its size; range(0) threads,
// range(1) layers. Reports the hierarchy's build and the sampling separately.
void BM_GeometrySample1MTriangles(benchmark::State& state) {
    const ExecContext exec(static_cast<int>(state.range(0)));
    const Mesh<3> mesh = uv_sphere(708);
    const auto t0 = Clock::now();
    const MeshShape<3> shape(mesh, "sphere");
    const double build = std::chrono::duration<double>(Clock::now() - t0).count();
    WallSampling ws;
    ws.particle_radius = 2.0f / 500.0f / 2.0f;
    ws.layers = static_cast<int>(state.range(1));
    std::size_t samples = 0;
    for (auto _ : state) samples = sample_wall(shape, ws, exec).size();
    state.counters["triangles"] = double(shape.mesh().cells.size());
    state.counters["samples"] = double(samples);
    state.counters["bvh_s"] = build;
}

// bench_dam_break_3d's tank as an analytic box (range(1) = 0) or as scenes/models/box.obj scaled to
// the same box (1); range(2): 0 WCSPH, 1 PBF. Per particle and step, after 20 steps.
void BM_MeshWallsStep(benchmark::State& state) {
    const ExecContext exec(static_cast<int>(state.range(0)));
    std::vector<std::string> sets;
    if (state.range(1) == 1) {
        const std::string box = (std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/models/box.obj").string();
        sets.push_back("boundaries.0={\"shape\": \"mesh\", \"file\": \"" + box +
                       "\", \"scale\": [4, 3, 1.5], \"translate\": [-2, 0, -0.75]}");
    }
    if (state.range(2) == 1) {
        sets.push_back("method=pbf");
        sets.push_back("settings={\"time_step\": 0.002}");
    }
    const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/bench_dam_break_3d.json", sets);
    Simulation sim = make_simulation(scene, 5'000'000, exec);
    const std::size_t n = std::visit([](const auto& s) { return s.fluid.size(); }, sim);
    const std::size_t nb = std::visit([](const auto& s) { return s.boundary.size(); }, sim);
    for (int i = 0; i < 20; ++i) step(sim, exec);
    const auto t0 = Clock::now();
    for (auto _ : state) step(sim, exec);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    state.counters["particles"] = double(n);
    state.counters["wall_particles"] = double(nb);
    state.counters["ns_per_particle"] = 1e9 * secs / (double(n) * double(state.iterations()));
}

// The same 1M-triangle sphere as a solid model of radius range(0) particle radii (r = 1 cm) on 2 threads: its
// distance grid (make_sdf_grid, voxel r, as eddy run makes it) and its volume map (eddy/volume_map.hpp), each
// timed once. The map's cost follows the surface in r^2 (its held nodes), not the triangles.
void BM_VolumeMap1MTriangles(benchmark::State& state) {
    const ExecContext exec(2);
    const float r = 0.01f, R = static_cast<float>(state.range(0)) * r;
    Mesh<3> mesh = uv_sphere(708);
    for (auto& v : mesh.vertices) v = v * R;
    const MeshShape<3> shape(mesh, "sphere");
    const CubicSpline<3> W(4.0f * r);
    const float mass = lattice_mass(W, 2.0f * r, 1000.0f);
    const SmoothWallProfile<3> profile = make_smooth_wall_profile(W, r, mass, 1000.0f, true);
    double sdf_s = 0.0, map_s = 0.0, held = 0.0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        Wall<3> w;
        w.shape = Wall<3>::Shape::sdf;
        w.solid = true;
        w.sdf = std::make_shared<const SdfGrid<3>>(make_sdf_grid(shape, r, 4.0f * r, exec));
        const auto t1 = Clock::now();
        const VolumeMaps<3> maps = make_volume_maps<3>({w}, {1}, profile, W, exec);
        map_s = std::chrono::duration<double>(Clock::now() - t1).count();
        sdf_s = std::chrono::duration<double>(t1 - t0).count();
        held = maps.maps.empty() ? 0.0 : double(maps.maps[0].share.size());
    }
    state.counters["triangles"] = double(shape.mesh().cells.size());
    state.counters["held_nodes"] = held;
    state.counters["sdf_s"] = sdf_s;
    state.counters["map_s"] = map_s;
    state.counters["us_per_node"] = 1e6 * map_s / std::max(held, 1.0);
}

}  // namespace

BENCHMARK(BM_VolumeMap1MTriangles)->Arg(25)->Arg(50)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_GeometrySample1MTriangles)->ArgsProduct({{1, 2}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_MeshWallsStep)->ArgsProduct({{2}, {0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);
