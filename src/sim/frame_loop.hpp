// The one frame loop (issue 41): the clock that lands on frame times, checkpoints (every interval, held
// on a stretch that lands off the frame times), interrupts, progress, and the end (the last checkpoint,
// the frame of a run stopped between frames). The particle run (src/sim/run.cpp) and the grid run
// (src/shallow/run_loop.hpp), on one process or many, drive their simulation through it; what differs
// between them (a step and its guard, a frame's files, a checkpoint's record) is the task's.
//
// A task has:
//   time(), steps()       the simulation's clock (the same on every process)
//   advance(target)       one step towards `target` (landing on it); its statistics kept; returns what went
//                         wrong ("" when nothing did: divergence and the memory guard are the task's)
//   frame()               writes a frame of the state as it is (every process calls it)
//   checkpoint()          writes the checkpoint (every process calls it)
//   any(v)                true on every process if v is true on one
//   progress(finished)    reports progress (the writer only)
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "eddy/simulation.hpp"
#include "sim/run_support.hpp"

namespace eddy::detail {

/// The frame clock: frame k of a run from time0 at fps is at time0 + k / fps; the run ends at end_time.
struct FrameClock {
    double time0 = 0.0, fps = 0.0, end_time = 0.0;
    int next_frame = 1;  // the frame the loop steps towards
    double eps() const { return 1e-9 * std::max(1.0, end_time); }
    /// Where the steps land next: the next frame time or the end, whichever comes first.
    double target() const { return std::min(frame_time(time0, fps, next_frame), end_time); }
    bool off_frame() const { return lands_off_frame(time0, fps, next_frame, end_time); }
};

/// Runs `task` from its clock to clock.end_time (or opts.max_steps steps), writing a frame at every frame
/// time (and first, unless `resumed`), a checkpoint every opts.checkpoint_every s and at the end
/// (opts.checkpoint_at_end), stopping on opts.stop or when a step goes wrong. Sets result's status,
/// exit code and message (diverged, interrupted; a completed run's message is finish_run's). The frames
/// written so far are result.frames (the task's frame() appends to it).
template <class Task>
void run_frames(Task& task, FrameClock& clock, const RunOptions& opts, bool resumed, RunResult& result) {
    using steady = std::chrono::steady_clock;
    auto last_report = steady::now();
    const std::uint64_t steps_at_start = task.steps();  // of this invocation (--steps counts from here)
    const double every = opts.checkpoint_every;
    double next_checkpoint = every > 0.0
                                 ? clock.time0 + every * (std::floor((task.time() - clock.time0) / every) + 1.0)
                                 : std::numeric_limits<double>::infinity();
    // The stretch from the last frame to an end that is not a frame time lands its steps on the end, off
    // the path a longer run takes (landing_step): the checkpoint that lets a finished run be extended is
    // the one taken where that stretch begins, and none is taken on it.
    bool held = false;
    auto hold_checkpoints_if_off_frame = [&]() {
        if (held || !clock.off_frame()) return;
        if (opts.checkpoint_at_end || every > 0.0) task.checkpoint();
        held = true;
    };
    if (!resumed) task.frame();
    hold_checkpoints_if_off_frame();
    result.status = "completed";
    result.exit_code = kExitOk;
    const double eps = clock.eps();
    while (task.time() < clock.end_time - eps && (opts.max_steps == 0 || task.steps() - steps_at_start < opts.max_steps)) {
        const double target = clock.target();
        const std::string problem = task.advance(target);
        if (!problem.empty()) {
            result.status = "diverged";
            result.exit_code = kExitDiverged;
            result.message = fmt::format("{}; the {} frame(s) written so far are valid",
                                         divergence_message(task.steps(), task.time(), problem), result.frames.size());
            break;
        }
        if (task.time() >= target - eps) {  // landed on the frame time (the last steps were cut to reach it)
            task.frame();
            ++clock.next_frame;
            hold_checkpoints_if_off_frame();
        }
        if (task.time() >= next_checkpoint - eps) {
            if (!held) task.checkpoint();
            next_checkpoint += every;
        }
        if (task.any(opts.stop && opts.stop->load())) {  // the same decision on every process
            result.status = "interrupted";
            result.exit_code = kExitInterrupted;
            result.message = fmt::format("interrupted at step {} (t = {:.6g} s)", task.steps(), task.time());
            break;
        }
        const auto now = steady::now();
        if (std::chrono::duration<double>(now - last_report).count() >= opts.progress_interval) {
            last_report = now;
            task.progress(false);
        }
    }
    // The final checkpoint, before the frame below (a frame off the frame times, which a resumed run
    // rewrites under the same number at its proper time). A run that ended off the frame times has its
    // checkpoint already: the state at its last frame.
    if (result.exit_code != kExitDiverged && opts.checkpoint_at_end && !held) task.checkpoint();
    // A run stopped by --steps (or interrupted) between frames still ends with a frame of its last state.
    if (result.exit_code != kExitDiverged && result.frames.back().time < task.time()) task.frame();
}

/// A run's closing words: "completed N steps to t = T s" unless the loop said why it stopped.
inline void finish_message(RunResult& result, std::uint64_t steps, double time) {
    if (result.message.empty()) result.message = fmt::format("completed {} steps to t = {:.6g} s", steps, time);
}

}  // namespace eddy::detail
