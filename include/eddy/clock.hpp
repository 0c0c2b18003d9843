// eddy: the run's clock and its slices, shared by particles and grids (issue 41). `eddy run` lands a step on
// every frame time; the front ends that step by themselves between other work (Python's step(), the
// viewer's simulation thread, the page) take slices of the same loop (step_slice in eddy/simulation.hpp for
// particles, eddy/shallow_water.hpp for grids) on the same clock and stop for the same reasons, so that a
// scene stepped to the same time holds the same state, bit for bit, whichever front end stepped it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace eddy {

/// Frame k's time in a run from time0 at fps frames a second: time0 + k / fps, the quotient rounded once, so
/// that a frame time typed as a number (--until 0.15 at 20 fps) is the time the frame lands on, and a run
/// stopped there and resumed carries on from the uninterrupted run's clock.
inline double frame_time(double time0, double fps, double k) { return time0 + k / fps; }

/// `eddy run`'s clock for the front ends that step by themselves (Python's step(), the viewer, the page):
/// each step lands on the next frame time k / fps (frame_time from 0) and on `end` when that comes first,
/// so that a scene stepped to a step or a time holds `eddy run`'s state there, bit for bit (landing_step
/// spreads a landing over the steps before it, so where the frames fall changes the steps).
struct FrameLanding {
    double fps = 25.0;  ///< frames per simulated second, > 0
    double end = 0.0;   ///< landed on too, and never passed (s); 0: none
    /// Where a step from `time` lands (eddy::step's `until`): the first frame time more than 1e-9
    /// (relative) after `time`, or the end when it comes first.
    double target(double time) const;
    /// Whether `time` has reached the end (within 1e-9, relative); never without one.
    bool reached_end(double time) const;
};

/// run()'s one line for a run that diverged at step `steps` (the simulation's count), time `t` (s):
/// "diverged at step N (t = T s): why".
std::string divergence_message(std::uint64_t steps, double t, const std::string& why);

/// How far a slice of steps goes (step_slice) and on which clock.
struct SliceLimits {
    int max_steps = std::numeric_limits<int>::max();  ///< at most this many steps
    /// No further step once this much wall time has passed (ms); 0: no limit. The first step is always taken.
    double wall_ms = 0.0;
    /// Land on this time (s) and stop there (SliceOf::reached_end); 0: none, the scene's clock (its frame
    /// times and its duration while ahead; past it the frames go on), as `eddy run` steps.
    double until = 0.0;
    double fps = 0.0;  ///< the frame times to land on (frames per second); 0: the scene's output.fps

    /// The clock of a step from `time` in a scene of frame rate `scene_fps` and duration `duration` (s).
    FrameLanding landing(double scene_fps, double duration, double time) const {
        if (until <= 0.0 && fps <= 0.0) {
            FrameLanding l{scene_fps, duration};
            if (l.reached_end(time)) l.end = 0.0;  // past the duration the frames go on
            return l;
        }
        return {fps > 0.0 ? fps : scene_fps, until};
    }
};

/// What a slice of steps did (step_slice); `Stats` is the step's statistics (StepStats, ShallowWaterStats).
template <class Stats>
struct SliceOf {
    int steps = 0;             ///< steps taken
    double seconds = 0.0;      ///< their wall time (s)
    Stats last{};              ///< the last step's statistics
    std::string diverged;      ///< divergence_message() of the step that diverged (the slice stopped after it), or ""
    bool reached_end = false;  ///< the slice stopped at SliceLimits::until
};

}  // namespace eddy
