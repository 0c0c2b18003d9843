// Shallow water: cell updates per second for 256^2 .. 2048^2 grids on 1 and 2 threads, beside a
// STREAM-style triad over arrays of the grid's size on the same threads, so that a step's speed reads
// as a fraction of the memory-bandwidth bound.
// Counters pass_<name>_ms: each of the step's named passes (ShallowWaterStats::passes), mean ms per step.
//   step traffic (bytes per cell, float): the sum over the step's passes of the arrays each reads and
//   writes once (counters "bytes_per_cell"); bound = triad bandwidth / traffic.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"

using namespace eddy;

namespace {

// A wavy basin over hills, water moving everywhere (no dry cells, the worst case for bandwidth).
ShallowWaterSimulation make_basin(int n, const char* precision) {
    nlohmann::json j = {{"name", "bench"},
                        {"method", "shallow_water"},
                        {"grid", {{"cells", {n, n}}, {"dx", 0.05}}},
                        {"terrain", "0.1*sin(x)*cos(y)"},
                        {"water", {{"surface", "0.6 + 0.05*sin(2*x + y)"}, {"u", "0.2"}}},
                        {"settings", {{"precision", precision}}}};
    return make_shallow_water(parse_scene(j, "bench"));
}

// Bytes each pass reads and writes per cell (faces ~ cells): the default step on calm-enough water
// (conservative advection; the one-pass height update, the depth limiter being idle; the overshooting
// reduction's steepness check finding no wave edge; no vorticity confinement). solid is one byte.
double step_bytes_per_cell(std::size_t real) {
    const double r = double(real);
    const double advect = 3 * r + 2 * r + r;    // h, u, w -> u', w', and the ink read once (none: not advected)
    const double height = 3 * r + r;            // h, u, w -> h'
    const double overshoot = 2 * r;             // H, h (the check)
    const double velocity = 4 * r + 1 + 2 * r;  // h, H, u, w, solid -> u, w
    return advect + height + overshoot + velocity;
}

template <class Real>
void sw_step(benchmark::State& state, const char* precision) {
    const int n = int(state.range(0));
    const int threads = int(state.range(1));
    ExecContext exec(threads);
    ShallowWaterSimulation sim = make_basin(n, precision);
    auto& solver = std::get<ShallowWaterSolver<Real>>(sim.solver);
    for (int k = 0; k < 3; ++k) solver.step(solver.suggest_dt(), exec);  // warm: pages touched, caches filled
    PassTimes passes;  // the timed steps' named passes (pass_<name>_ms: mean ms per step)
    for (auto _ : state) passes.add_passes(solver.step(solver.suggest_dt(), exec));
    for (int k = 0; k < passes.pass_count; ++k)
        state.counters[std::string("pass_") + passes.passes[k].name + "_ms"] =
            1e3 * passes.passes[k].seconds / double(std::max<benchmark::IterationCount>(state.iterations(), 1));
    const double cells = double(n) * n;
    state.counters["cells_per_s"] = benchmark::Counter(cells, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["steps_per_s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
    const double bytes = step_bytes_per_cell(sizeof(Real));
    state.counters["bytes_per_cell"] = bytes;
    state.counters["GB_per_s"] = benchmark::Counter(cells * bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ShallowWaterStep(benchmark::State& state) { sw_step<float>(state, "float"); }
void BM_ShallowWaterStepDouble(benchmark::State& state) { sw_step<double>(state, "double"); }

// STREAM triad a = b + s c over float arrays of n^2 elements, split in fixed blocks on `threads` threads.
void BM_StreamTriad(benchmark::State& state) {
    const std::size_t n = std::size_t(state.range(0)) * std::size_t(state.range(0));
    ExecContext exec(int(state.range(1)));
    std::vector<float> a(n, 0.0f), b(n, 1.0f), c(n, 2.0f);
    const float s = 0.5f;
    auto triad = [&] {
        parallel_blocks(exec, n, [&](std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
        }, 1 << 16);
    };
    triad();
    for (auto _ : state) {
        triad();
        benchmark::DoNotOptimize(a.data());
        benchmark::ClobberMemory();
    }
    state.counters["GB_per_s"] = benchmark::Counter(double(n) * 12 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_StreamTriad)->ArgsProduct({{256, 512, 1024, 2048, 4096}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ShallowWaterStep)->ArgsProduct({{256, 512, 1024, 2048}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ShallowWaterStepDouble)->ArgsProduct({{1024}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
