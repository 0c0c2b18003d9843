// Whitewater's cost (issue 32: at most 25% of a DFSPH step of bench_dam_break_3d). The scene runs with
// DFSPH and whitewater after every step up to t = range(1) ms (the diffuse particles accumulate as
// they would in a run), then each iteration times one DFSPH step and one whitewater step on its result.
//   build/bin/eddy-bench --benchmark_filter=Whitewater --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/whitewater.hpp"

using namespace eddy;

namespace {

using Clock = std::chrono::steady_clock;

void BM_WhitewaterBenchDamBreak3D(benchmark::State& state) {
    ExecContext exec(static_cast<int>(state.range(0)));
    const double t_start = double(state.range(1)) * 1e-3;
    const Scene scene =
        load_scene(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes/bench_dam_break_3d.json", {"method=dfsph"});
    Simulation simulation = make_simulation(scene, 5'000'000, exec);
    auto& sim = std::get<ParticleSimulation<3>>(simulation);
    const Vec3 g = from_array<3>(scene.gravity);
    const float r = static_cast<float>(scene.particle_radius);
    const WhitewaterSettings ws;
    const std::vector<Wall<3>> walls = scene_walls<3>(scene, exec);  // the tank, as a live run passes it
    const bool shared = state.range(2) != 0;
    // As `eddy run --whitewater` steps it: the fluid in id order, with DFSPH's own lists (shared) or a
    // search of the whitewater's own (the same bits).
    auto lists_now = [&]() { return shared ? fluid_lists_between_steps(sim, exec) : FluidLists<3>{}; };
    Whitewater<3> w;
    while (sim.time < t_start) {
        const StepStats st = step(simulation, exec);
        step_whitewater_by_id<3>(w, sim.fluid.position, sim.fluid.velocity, sim.fluid.id, r, g, st.dt, sim.steps, ws,
                                 exec, &walls, lists_now());
    }
    double fluid_s = 0.0, white_s = 0.0, fluid_dt = 0.0, lists_s = 0.0;
    WhitewaterTimes ww_passes;  // the whitewater step's passes, summed
    StepStats passes;  // the DFSPH step's named passes (ms per step below)
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const StepStats st = step(simulation, exec);
        passes.add_passes(st);
        const auto t1 = Clock::now();
        // Shared: DFSPH's search at the new positions, which its next step keeps (its neighbours pass then
        // skips the search): DFSPH's time, not the whitewater's.
        const FluidLists<3> lists = lists_now();
        const auto t2 = Clock::now();
        step_whitewater_by_id<3>(w, sim.fluid.position, sim.fluid.velocity, sim.fluid.id, r, g, st.dt, sim.steps, ws,
                                 exec, &walls, lists);
        const auto t3 = Clock::now();
        ww_passes.advect += w.times.advect;
        ww_passes.potentials += w.times.potentials;
        ww_passes.generate += w.times.generate;
        fluid_s += std::chrono::duration<double>(t2 - t0).count();
        lists_s += std::chrono::duration<double>(t2 - t1).count();
        fluid_dt += st.dt;
        white_s += std::chrono::duration<double>(t3 - t2).count();
    }
    const double it = double(state.iterations());
    state.counters["particles"] = double(sim.fluid.size());
    state.counters["diffuse"] = double(w.size());
    state.counters["dfsph_ms"] = 1e3 * fluid_s / it;
    state.counters["whitewater_ms"] = 1e3 * white_s / it;
    state.counters["shared_lists_ms"] = 1e3 * lists_s / it;  // within dfsph_ms
    state.counters["ww_advect_ms"] = 1e3 * ww_passes.advect / it;
    state.counters["ww_potentials_ms"] = 1e3 * ww_passes.potentials / it;
    state.counters["ww_generate_ms"] = 1e3 * ww_passes.generate / it;
    state.counters["ratio"] = white_s / fluid_s;
    // `eddy run --whitewater` steps the whitewater every 1/(fps K) s (K = 10 substeps, the scene's 25 fps:
    // 4 ms), not after every fluid step: its cost per fluid step is the ratio times dt / 4 ms (at most 1).
    const double interval = 1.0 / (25.0 * 10.0);
    state.counters["fluid_dt_ms"] = 1e3 * fluid_dt / it;
    state.counters["ratio_live"] = white_s / fluid_s * std::min(1.0, fluid_dt / it / interval);
    for (int k = 0; k < passes.pass_count; ++k)
        state.counters[std::string("dfsph_") + passes.passes[k].name + "_ms"] = 1e3 * passes.passes[k].seconds / it;
}

}  // namespace

// Args: threads, simulated milliseconds before timing (the column's collapse: 0.3 s, its splash at the
// far wall: 0.6 s), DFSPH's lists shared (1) or the whitewater's own search (0).
BENCHMARK(BM_WhitewaterBenchDamBreak3D)->ArgsProduct({{2}, {300, 600}, {0, 1}})->Iterations(10)->Unit(benchmark::kMillisecond)->UseRealTime();
