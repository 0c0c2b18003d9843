// eddy benchmarks (Google Benchmark). Not part of the test suite: speed is measured, never asserted.
//   build/bin/eddy-bench --benchmark_counters_tabular=true
// Counters: ns_per_particle (per step or per search), bytes_per_particle (all per-particle arrays,
// the grid and the neighbour lists); for the solvers' steps, pass_<name>_ms: each named pass's mean
// wall-clock time per step (StepStats::passes, as summary.json's "passes"), where a step's time goes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

#if __has_include(<nanoflann.hpp>)
#include <nanoflann.hpp>
#define EDDY_HAVE_NANOFLANN 1
#endif

#include "eddy/clavet.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/pbf.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/wcsph.hpp"

using namespace eddy;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr float kRadius = 0.0125f;  // particle radius r (m), as in bench_dam_break_3d

// Each named pass's mean time per step (ms) over the timed steps, whose passes `sum` gathered.
void report_passes(benchmark::State& state, const StepStats& sum) {
    const double steps = double(std::max<benchmark::IterationCount>(state.iterations(), 1));
    for (int k = 0; k < sum.pass_count; ++k)
        state.counters[std::string("pass_") + sum.passes[k].name + "_ms"] = 1e3 * sum.passes[k].seconds / steps;
}
constexpr float kSupport = 4.0f * kRadius;

// A cube of n particles on a lattice of spacing 2r (fluid at rest density).
std::vector<Vec3> lattice_cube(std::size_t n) {
    const int side = static_cast<int>(std::ceil(std::cbrt(double(n))));
    std::vector<Vec3> p;
    p.reserve(n);
    for (int k = 0; k < side && p.size() < n; ++k)
        for (int j = 0; j < side && p.size() < n; ++j)
            for (int i = 0; i < side && p.size() < n; ++i)
                p.push_back(Vec3{{(2 * i + 1) * kRadius, (2 * j + 1) * kRadius, (2 * k + 1) * kRadius}});
    return p;
}

// n uniformly random particles at the same mean density as the lattice.
std::vector<Vec3> random_cube(std::size_t n) {
    const float side = 2.0f * kRadius * static_cast<float>(std::cbrt(double(n)));
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(0.0f, side);
    std::vector<Vec3> p(n);
    for (auto& x : p) x = Vec3{{u(rng), u(rng), u(rng)}};
    return p;
}

void neighbor_search(benchmark::State& state, std::vector<Vec3> pts, bool morton) {
    ExecContext exec(static_cast<int>(state.range(1)));
    NeighborGrid<3> grid(kSupport);
    NeighborLists lists;
    if (morton) {
        // As in a simulation: particles kept in Z-order (the solver reorders them periodically).
        grid.build(pts, exec);
        const auto order = grid.morton_order(pts, exec);
        std::vector<Vec3> sorted(pts.size());
        for (std::size_t i = 0; i < pts.size(); ++i) sorted[i] = pts[order[i]];
        pts.swap(sorted);
    }
    const auto t0 = Clock::now();
    for (auto _ : state) {
        grid.build(pts, exec);
        grid.find_neighbors(pts, kSupport, true, lists, exec);
        benchmark::DoNotOptimize(lists.indices.data());
    }
    const double n = double(pts.size());
    state.counters["ns_per_particle"] = 1e9 * seconds_since(t0) / (n * double(state.iterations()));
    state.counters["neighbors"] = double(lists.total()) / n;
    state.counters["bytes_per_particle"] = double(grid.memory_bytes() + lists.memory_bytes()) / n;
}

void BM_NeighborSearchLattice(benchmark::State& state) {
    neighbor_search(state, lattice_cube(static_cast<std::size_t>(state.range(0))), true);
}
void BM_NeighborSearchRandom(benchmark::State& state) {
    neighbor_search(state, random_cube(static_cast<std::size_t>(state.range(0))), false);
}
void BM_NeighborSearchRandomMorton(benchmark::State& state) {
    neighbor_search(state, random_cube(static_cast<std::size_t>(state.range(0))), true);
}

#ifdef EDDY_HAVE_NANOFLANN
// Peer: nanoflann (Debian's libnanoflann-dev), a widely used k-d tree. Build + a radius search per
// particle, in parallel over the same fixed blocks; results counted into CSR-sized arrays.
struct Cloud {
    const std::vector<Vec3>* p;
    std::size_t kdtree_get_point_count() const { return p->size(); }
    float kdtree_get_pt(std::size_t i, std::size_t d) const { return (*p)[i][static_cast<int>(d)]; }
    template <class B>
    bool kdtree_get_bbox(B&) const { return false; }
};
using KdTree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, Cloud>, Cloud, 3, std::uint32_t>;

void BM_PeerNanoflannRadiusSearch(benchmark::State& state) {
    std::vector<Vec3> pts = state.range(2) ? random_cube(static_cast<std::size_t>(state.range(0)))
                                           : lattice_cube(static_cast<std::size_t>(state.range(0)));
    ExecContext exec(static_cast<int>(state.range(1)));
    Cloud cloud{&pts};
    std::vector<std::uint32_t> counts(pts.size());
    std::size_t total = 0;
    const auto t0 = Clock::now();
    for (auto _ : state) {
        KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(10));
        tree.buildIndex();
        parallel_blocks(exec, pts.size(), [&](std::size_t b, std::size_t e) {
            std::vector<std::pair<std::uint32_t, float>> hits;
            nanoflann::SearchParams params;
            params.sorted = false;
            for (std::size_t i = b; i < e; ++i) {
                tree.radiusSearch(pts[i].v, kSupport * kSupport, hits, params);
                counts[i] = static_cast<std::uint32_t>(hits.size());
            }
        });
        total = 0;
        for (auto c : counts) total += c;
        benchmark::DoNotOptimize(total);
    }
    const double n = double(pts.size());
    state.counters["ns_per_particle"] = 1e9 * seconds_since(t0) / (n * double(state.iterations()));
    state.counters["neighbors"] = double(total) / n - 1.0;  // nanoflann counts the point itself
}
#endif

void BM_WcsphStep(benchmark::State& state) {
    ExecContext exec(static_cast<int>(state.range(1)));
    ParticleSet<3> fluid;
    for (const auto& x : lattice_cube(static_cast<std::size_t>(state.range(0)))) fluid.push_back(x, Vec3::zero());
    BoundarySet<3> boundary;
    WcsphSettings s;
    s.speed_of_sound = 30.0f;
    WcsphSolver<3> solver(s, kRadius, Vec3{{0.0f, 0.0f, 0.0f}}, 1.0f);
    solver.init(fluid, boundary, exec);
    double t = 0.0;
    StepStats passes;
    const auto t0 = Clock::now();
    for (auto _ : state) {
        const float dt = solver.suggest_dt(fluid);
        passes.add_passes(solver.step(fluid, boundary, t, dt, exec));
        t += dt;
    }
    const double n = double(fluid.size());
    state.counters["ns_per_particle"] = 1e9 * seconds_since(t0) / (n * double(state.iterations()));
    state.counters["bytes_per_particle"] = double(fluid.memory_bytes() + solver.memory_bytes()) / n;
    report_passes(state, passes);
}

// PBF step (4 iterations) on the same cube of fluid at rest density, no walls, no gravity. Fixed
// iterations (the default iterates down to 0.5% mean compression, which a cube at rest meets after the
// minimum 2): the cost of 4 iterations, comparable with docs/performance.md.
void BM_PbfStep(benchmark::State& state) {
    ExecContext exec(static_cast<int>(state.range(1)));
    ParticleSet<3> fluid;
    for (const auto& x : lattice_cube(static_cast<std::size_t>(state.range(0)))) fluid.push_back(x, Vec3::zero());
    BoundarySet<3> boundary;
    PbfSettings s;
    s.time_step = 0.002f;
    s.iterations = 4;
    s.density_error_target = 0.0f;
    PbfSolver<3> solver(s, kRadius, Vec3{{0.0f, 0.0f, 0.0f}}, 1.0f);
    solver.init(fluid, boundary, exec);
    double t = 0.0;
    StepStats passes;
    const auto t0 = Clock::now();
    for (auto _ : state) {
        passes.add_passes(solver.step(fluid, boundary, t, solver.suggest_dt(fluid), exec));
        t += solver.suggest_dt(fluid);
    }
    const double n = double(fluid.size());
    state.counters["ns_per_particle"] = 1e9 * seconds_since(t0) / (n * double(state.iterations()));
    state.counters["bytes_per_particle"] = double(fluid.memory_bytes() + solver.memory_bytes()) / n;
    report_passes(state, passes);
}

// Clavet double density relaxation, parallel (Jacobi) mode, quadratic viscosity on, no springs: a
// block of fluid at rest without gravity or walls, in 2D (the target: 10^5 particles at 30
// steps/s) and 3D. Counter steps_per_second as well as ns per particle.
template <int D>
void clavet_step(benchmark::State& state) {
    ExecContext exec(static_cast<int>(state.range(1)));
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    ParticleSet<D> fluid;
    const int side = static_cast<int>(std::ceil(std::pow(double(n), 1.0 / D)));
    for (int i = 0; i < side && fluid.size() < n; ++i)
        for (int j = 0; j < side && fluid.size() < n; ++j)
            for (int k = 0; k < (D == 3 ? side : 1) && fluid.size() < n; ++k) {
                Vec<D> x;
                x[0] = (2 * i + 1) * kRadius;
                x[1] = (2 * j + 1) * kRadius;
                if constexpr (D == 3) x[2] = (2 * k + 1) * kRadius;
                fluid.push_back(x, Vec<D>::zero());
            }
    BoundarySet<D> boundary;
    ClavetSettings s;
    s.speed_of_sound = 10.0f;
    ClavetSolver<D> solver(s, kRadius, Vec<D>::zero(), 1.0f);
    solver.init(fluid, boundary, exec);
    StepStats passes;
    const auto t0 = Clock::now();
    for (auto _ : state) passes.add_passes(solver.step(fluid, boundary, 0.0, solver.suggest_dt(fluid), exec));
    const double secs = seconds_since(t0), it = double(state.iterations());
    state.counters["ns_per_particle"] = 1e9 * secs / (double(fluid.size()) * it);
    state.counters["steps_per_second"] = it / secs;
    state.counters["bytes_per_particle"] = double(fluid.memory_bytes() + solver.memory_bytes()) / double(fluid.size());
    report_passes(state, passes);
}
void BM_ClavetStep2D(benchmark::State& state) { clavet_step<2>(state); }
void BM_ClavetStep3D(benchmark::State& state) { clavet_step<3>(state); }

// The peer-comparison scene: bench_dam_break_3d, stepped from its initial state; range(1) = 1 runs
// it with PBF (4 fixed iterations, as in docs/performance.md; PBF's default iterates down to 0.5% mean
// compression instead) in place of WCSPH, 2 with DFSPH (its default targets).
void BM_SceneBenchDamBreak3D(benchmark::State& state) {
    ExecContext exec(static_cast<int>(state.range(0)));
    std::vector<std::string> sets;
    if (state.range(1) == 1)
        sets = {"method=pbf", "settings.time_step=0.002", "settings.iterations=4", "settings.density_error_target=0"};
    if (state.range(1) == 2) sets = {"method=dfsph"};
    const Scene scene = load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/bench_dam_break_3d.json", sets);
    Simulation sim = make_simulation(scene, 5'000'000, exec);
    const std::size_t n = std::visit([](const auto& s) { return s.fluid.size(); }, sim);
    // Skip the first instants (the column starts at rest) so that steps see a moving fluid.
    for (int i = 0; i < 20; ++i) step(sim, exec);
    StepStats passes;
    const auto t0 = Clock::now();
    for (auto _ : state) passes.add_passes(step(sim, exec));
    const double secs = seconds_since(t0);
    state.counters["particles"] = double(n);
    state.counters["ms_per_step"] = 1e3 * secs / double(state.iterations());
    state.counters["ns_per_particle"] = 1e9 * secs / (double(n) * double(state.iterations()));
    report_passes(state, passes);
}

}  // namespace

BENCHMARK(BM_NeighborSearchLattice)->ArgsProduct({{10'000, 100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NeighborSearchRandom)->ArgsProduct({{1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NeighborSearchRandomMorton)->ArgsProduct({{1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef EDDY_HAVE_NANOFLANN
// Args: particles, threads, random (1) or lattice (0).
BENCHMARK(BM_PeerNanoflannRadiusSearch)->Args({1'000'000, 2, 0})->Args({1'000'000, 2, 1})->Args({100'000, 2, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
BENCHMARK(BM_WcsphStep)->ArgsProduct({{10'000, 100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PbfStep)->ArgsProduct({{10'000, 100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ClavetStep2D)->ArgsProduct({{10'000, 100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ClavetStep3D)->ArgsProduct({{10'000, 100'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
// Args: threads, method (0 WCSPH, 1 PBF).
BENCHMARK(BM_SceneBenchDamBreak3D)->ArgsProduct({{1, 2}, {0, 1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
