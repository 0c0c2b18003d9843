// The loop of a slice of steps (issue 41), written once for particles (step_slice in src/sim/run.cpp) and
// grids (src/shallow/run.cpp): the steps SliceLimits allows, each landing on its clock, stopping at `until`
// and after a step that diverged.
#pragma once
#include <chrono>
#include <string>

#include "eddy/clock.hpp"

namespace eddy::detail {

// `now()` is the simulation's time (s), `landing(time)` the clock of a step from it, and `step(target, last)`
// takes one step landing on `target`, keeps its statistics in `last` and returns why it diverged, or "".
template <class Stats, class Now, class Landing, class Step>
SliceOf<Stats> slice_loop(const SliceLimits& limits, Now&& now, Landing&& landing, Step&& step) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    auto elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
    SliceOf<Stats> r;
    while (r.steps < limits.max_steps && (r.steps == 0 || limits.wall_ms <= 0.0 || elapsed_ms() < limits.wall_ms)) {
        const double time = now();
        const FrameLanding clock = landing(time);
        if (limits.until > 0.0 && clock.reached_end(time)) {
            r.reached_end = true;
            break;
        }
        ++r.steps;
        r.diverged = step(clock.target(time), r.last);
        if (!r.diverged.empty()) break;
    }
    r.seconds = elapsed_ms() / 1000.0;
    return r;
}

}  // namespace eddy::detail
