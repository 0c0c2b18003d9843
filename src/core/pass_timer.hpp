// Per-pass timings of a solver's step (PassTimes, eddy/pass_times.hpp: StepStats, ShallowWaterStats): a lap
// timer that adds the wall-clock seconds since its last lap to the named pass, and hands them to the step's
// statistics at the end. Timings are read, never acted on: no result depends on them.
#pragma once
#include <chrono>

#include "eddy/pass_times.hpp"

namespace eddy::detail {

class PassTimer {
public:
    PassTimer() : m_last(Clock::now()) {}
    /// The time since the timer started or its last lap, added to pass `name` (a static string).
    void lap(const char* name) {
        const Clock::time_point now = Clock::now();
        m_times.add_pass(name, std::chrono::duration<double>(now - m_last).count());
        m_last = now;
    }
    /// A last lap, then `stats` (StepStats, ShallowWaterStats) with the passes timed so far added to its own.
    template <class Stats>
    Stats finish(const char* name, Stats stats) {
        lap(name);
        stats.add_passes(m_times);
        return stats;
    }

private:
    using Clock = std::chrono::steady_clock;
    PassTimes m_times;
    Clock::time_point m_last;
};

}  // namespace eddy::detail
