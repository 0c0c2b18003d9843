// Surface reconstruction benchmarks (issue 5): each stage and the whole pipeline at 10^5 and 10^6
// particles on 1 and 2 threads, and OpenVDB's particlesToSdf + volumeToMesh on the same particles and
// voxel size, in the same run.
//   build/bin/eddy-bench --benchmark_filter=Surface --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <random>

#include "eddy/surface.hpp"

using namespace eddy;

namespace {

constexpr float kR = 0.0125f;  // particle radius (m), as the other benchmarks

// A block of fluid: n particles on a lattice of spacing 2r (about 2:1:1, like a dam-break column),
// jittered by +-0.25 r so that nothing is aligned with the grid.
std::vector<Vec3> fluid_block(std::size_t n) {
    const int side = static_cast<int>(std::ceil(std::cbrt(double(n) / 2.0)));
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> j(-0.25f * kR, 0.25f * kR);
    std::vector<Vec3> p;
    p.reserve(n);
    for (int k = 0; k < side && p.size() < n; ++k)
        for (int y = 0; y < 2 * side && p.size() < n; ++y)
            for (int i = 0; i < side && p.size() < n; ++i)
                p.push_back(Vec3{{(2 * i + 1) * kR + j(rng), (2 * y + 1) * kR + j(rng), (2 * k + 1) * kR + j(rng)}});
    return p;
}

const std::vector<Vec3>& input(std::size_t n) {
    static std::vector<Vec3> small = fluid_block(100'000), large = fluid_block(1'000'000);
    return n <= 100'000 ? small : large;
}

SurfaceSettings settings() {
    SurfaceSettings s;
    s.particle_radius = kR;
    return s;
}

void counters(benchmark::State& state, std::size_t n, double seconds) {
    state.counters["ns_per_particle"] = 1e9 * seconds / (double(n) * double(state.iterations()));
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void BM_SurfaceSplat(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    double t = 0;
    std::size_t blocks = 0, bytes = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        auto g = splat_density<3>(p, settings(), exec);
        t += since(t0);
        blocks = g.layout.size();
        bytes = g.memory_bytes();
        benchmark::DoNotOptimize(g.values.data());
    }
    counters(state, p.size(), t);
    state.counters["blocks"] = double(blocks);
    state.counters["grid_MB"] = double(bytes) / 1e6;
}

void BM_SurfacePin(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    const auto rho = splat_density<3>(p, settings(), exec);
    double t = 0;
    for (auto _ : state) {
        std::vector<std::uint8_t> pinned;
        const auto t0 = Clock::now();
        auto phi = pin_distances<3>(rho, 0.5f, pinned, exec);
        t += since(t0);
        benchmark::DoNotOptimize(phi.values.data());
    }
    counters(state, p.size(), t);
}

// Args: particles, threads, wavefront (1) or serial (0).
void BM_SurfaceSweep(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    const auto rho = splat_density<3>(p, settings(), exec);
    std::vector<std::uint8_t> pinned;
    const auto phi0 = pin_distances<3>(rho, 0.5f, pinned, exec);
    double t = 0;
    for (auto _ : state) {
        state.PauseTiming();
        auto phi = phi0;
        state.ResumeTiming();
        const auto t0 = Clock::now();
        if (state.range(2)) sweep_wavefront<3>(phi, pinned, exec);
        else sweep_serial<3>(phi, pinned);
        t += since(t0);
        benchmark::DoNotOptimize(phi.values.data());
    }
    counters(state, p.size(), t);
    state.counters["blocks"] = double(phi0.layout.size());
}

void BM_SurfaceMesh(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    std::vector<std::uint8_t> pinned;
    auto phi = pin_distances<3>(splat_density<3>(p, settings(), exec), 0.5f, pinned, exec);
    sweep_wavefront<3>(phi, pinned, exec);
    double t = 0;
    std::size_t tris = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const auto m = extract_mesh<3>(phi, 0.0f, exec);
        t += since(t0);
        tris = m.cells.size();
    }
    counters(state, p.size(), t);
    state.counters["triangles"] = double(tris);
}

void BM_SurfacePipeline(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    double t = 0, stage[5] = {}, blocks = 0;
    std::size_t tris = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const auto r = reconstruct_surface<3>(p, settings(), exec);
        t += since(t0);
        tris = r.mesh.cells.size();
        blocks = double(r.blocks);
        for (int k = 0; k < 5; ++k) stage[k] += r.seconds[k];
    }
    counters(state, p.size(), t);
    state.counters["triangles"] = double(tris);
    const double it = double(state.iterations());
    state.counters["splat_ms"] = 1e3 * stage[0] / it;
    state.counters["mesh_ms"] = 1e3 * stage[3] / it;
    state.counters["blocks"] = blocks;
}

// The pipeline with Yu & Turk's anisotropic kernels (issue 32: at most 2x the isotropic time); the
// kernels' own time is in splat_ms.
void BM_SurfacePipelineAnisotropic(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    SurfaceSettings s = settings();
    s.anisotropic = true;
    double t = 0, splat = 0;
    std::size_t tris = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const auto r = reconstruct_surface<3>(p, s, exec);
        t += since(t0);
        tris = r.mesh.cells.size();
        splat += r.seconds[0];
    }
    counters(state, p.size(), t);
    state.counters["triangles"] = double(tris);
    state.counters["splat_ms"] = 1e3 * splat / double(state.iterations());
}

// Yu & Turk's kernels alone (the anisotropic pipeline's two neighbour passes and eigen-decompositions).
void BM_SurfaceAnisotropicKernels(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    SurfaceSettings s = settings();
    s.anisotropic = true;
    double t = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        benchmark::DoNotOptimize(anisotropic_kernels<3>(p, s, exec));
        t += since(t0);
    }
    counters(state, p.size(), t);
}

// OpenVDB 10: tools::ParticlesToLevelSet (spheres of radius 2r, the lattice spacing, so that they
// overlap into one body; narrow band 3 voxels) + tools::volumeToMesh, same particles, voxel r.
void BM_SurfaceOpenVdbPeer(benchmark::State& state) {
    const auto& p = input(state.range(0));
    ExecContext exec(static_cast<int>(state.range(1)));
    double t = 0, part[2] = {}, sdf = 0, mesh = 0;
    std::size_t tris = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        tris = exec.run([&] { return vdb::particles_to_mesh(p, 2.0f * kR, settings().voxel(), part); });
        t += since(t0);
        sdf += part[0];
        mesh += part[1];
    }
    counters(state, p.size(), t);
    state.counters["triangles"] = double(tris);
    state.counters["sdf_ms"] = 1e3 * sdf / double(state.iterations());
    state.counters["mesh_ms"] = 1e3 * mesh / double(state.iterations());
}

}  // namespace

BENCHMARK(BM_SurfaceSplat)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfacePin)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfaceSweep)->Args({100'000, 1, 0})->Args({100'000, 1, 1})->Args({100'000, 2, 1})
    ->Args({1'000'000, 1, 0})->Args({1'000'000, 1, 1})->Args({1'000'000, 2, 1})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfaceMesh)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfacePipeline)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfacePipelineAnisotropic)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfaceAnisotropicKernels)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SurfaceOpenVdbPeer)->ArgsProduct({{100'000, 1'000'000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
