// eddy-view: the scripted runs the tests drive headless (under Xvfb): --frames with --test-keys,
// --test-drag and --steps-per-frame (lockstep: the same state, and picture, every time), the state the
// last frame showed printed for scripts and tests, and --bench-render (random particles, frames per
// second).
#pragma once
#include <cstddef>
#include <vector>

#include "app.hpp"

namespace eddy::view {

/// --test-drag: during a --frames run, the left button held from the 3rd frame to the 3rd last, the
/// pointer (mx, my: px in a ww x wh window) moving along the line. False on other frames (mx, my kept).
bool scripted_drag(const Options& opt, int frame, int ww, int wh, double& mx, double& my);

/// --test-keys: the keys due at this frame, through the key handler, as a press would.
void press_test_keys(App& app);

/// --steps-per-frame: asks for exactly `steps` steps and waits (at most 120 s, else throws) until they
/// are taken or the simulation halted.
void lockstep(SimWorker& worker, int steps);

/// The end of a --frames run (stderr): the state the last frame showed, the walls' loads and the bodies.
void report_last_frame(SimWorker& worker, int frames);
/// The end of a --frames run: the status, if any (stderr); kExitDiverged when it says so, as `eddy run`.
int report_status(const App& app);

/// --bench-render: random particles in a unit cube, drawn from a slowly turning view.
struct Bench {
    std::vector<float> particles;
    float radius = 0.0f;
    Clock::time_point start;  // when the frames began
};
/// The particles, and the camera on them (when --bench-render).
Bench make_bench(App& app);
/// One frame of the benchmark into a w x h framebuffer.
void draw_bench(App& app, const Bench& bench, int w, int h);
/// Without --frames: true once --bench-seconds have passed (and 3 frames were drawn).
bool bench_done(const App& app, const Bench& bench);
/// The frames per second (stdout).
void report_bench(const App& app, const Bench& bench);

}  // namespace eddy::view
