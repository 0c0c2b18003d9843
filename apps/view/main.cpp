// eddy-view: the interactive viewer (`eddy view` runs it). GLFW window, OpenGL 3.3 core through
// libepoxy, Dear ImGui (Debian's libimgui, whose GLFW and OpenGL 3 backends are compiled in).
// The simulation runs on its own thread (SimWorker); this thread draws the latest snapshot, handles
// the mouse and the keys and builds the controls. See docs/viewer.md.
//
// Here: main and the frame loop. The command line is options.*, the window and ImGui window.*, the
// state app.*, the keys and the mouse input.*, the controls panels.*, the drawing scene_draw.*,
// screenshots and recording recording.*, the scripted test runs and --bench-render harness.*.
#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "app.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "options.hpp"
#include "panels.hpp"
#include "recording.hpp"
#include "scene_draw.hpp"
#include "window.hpp"

namespace {

using namespace eddy::view;

// Before the first frame: the renderer, the camera of --bench-render or of a mesh alone, the
// simulation thread started, --record and --screenshot (without --frames: of the first frame).
Bench start_frames(App& app) {
    const Options& opt = app.opt;
    app.gfx.init();
    Bench bench = make_bench(app);
    if (opt.mesh_only) {
        float lo[3], hi[3];
        app.file_mesh->bounds(lo, hi);
        fit_bounds(app.cam, lo, hi);
    }
    if (app.worker) app.worker->start();
    if (!opt.record.empty()) start_recording(app.rec, opt.record, app.message);
    if (!opt.screenshot.empty() && opt.frames == 0) app.rec.pending_screenshot = opt.screenshot;
    return bench;
}

// The frame's clock, and the simulation's latest snapshot (in lockstep: after this frame's steps).
// Returns the frame's wall-clock time (s).
double update_frame(App& app) {
    glfwPollEvents();
    const auto now = Clock::now();
    const double frame_dt = std::chrono::duration<double>(now - app.last_frame).count();
    app.last_frame = now;
    app.frame_ms = 0.9 * app.frame_ms + 0.1 * frame_dt * 1e3;
    app.fps = app.frame_ms > 0 ? 1e3 / app.frame_ms : 0;
    if (app.worker && app.opt.steps_per_frame > 0 && !app.opt.paused) lockstep(*app.worker, app.opt.steps_per_frame);
    if (app.worker) {
        app.snap = app.worker->latest();
        if (app.snap && app.snap->generation != app.seen_generation) on_new_generation(app);
    }
    return frame_dt;
}

// The mouse, then the controls.
void build_ui(App& app, double frame_dt) {
    begin_ui_frame();
    handle_mouse(app, frame_dt);
    draw_ui(app);
    ImGui::Render();
}

// The scene, the captures and the controls, and the swap. Returns true after the last frame of --frames.
bool render_frame(App& app, const Bench& bench) {
    int w, h;
    glfwGetFramebufferSize(app.win, &w, &h);
    if (app.opt.bench_render > 0) draw_bench(app, bench, w, h);
    else draw_scene(app, w, h);
    // The legend belongs to the scene: ImGui's background list (legend only) is drawn now, before
    // a screenshot, the windows (panel, overlay) after it.
    draw_ui_background();
    ++app.frame;
    const bool last = app.opt.frames > 0 && app.frame >= app.opt.frames;
    capture_scene(app.rec, app.message, app.win, app.opt, last);
    draw_ui_windows();
    capture_window(app.rec, app.win);
    if (app.opt.bench_render > 0) glFinish();
    glfwSwapBuffers(app.win);
    return last;
}

// Frames until the window closes, Q or Esc, the last of --frames, or the end of --bench-render.
void frame_loop(App& app, Bench& bench) {
    bench.start = Clock::now();
    while (!glfwWindowShouldClose(app.win) && !app.quit) {
        const double frame_dt = update_frame(app);
        press_test_keys(app);
        build_ui(app, frame_dt);
        if (render_frame(app, bench) || bench_done(app, bench)) break;
    }
}

// After the last frame: the reports of --bench-render and --frames, the recording's end. Returns the
// exit code.
int finish_frames(App& app, const Bench& bench) {
    const Options& opt = app.opt;
    if (opt.bench_render > 0) report_bench(app, bench);
    if (!opt.screenshot.empty() && opt.frames > 0) std::fprintf(stderr, "eddy-view: saved %s\n", opt.screenshot.c_str());
    if (opt.frames > 0 && app.worker) report_last_frame(*app.worker, app.frame);
    stop_recording(app.rec, app.message);
    return report_status(app);
}

// The frames, every failure one line on stderr and an exit code.
int run_frames(App& app) {
    try {
        Bench bench = start_frames(app);
        frame_loop(app, bench);
        return finish_frames(app, bench);
    } catch (const eddy::InputError& e) {  // a screenshot or recording path, a model: one line, exit 2
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "eddy-view: error: %s\n", eddy::text_excerpt(msg, 300).c_str());
        return eddy::kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "eddy-view: error: out of memory while running the viewer\n");
        return eddy::kExitFailure;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "eddy-view: error: while running the viewer: %s\n", eddy::text_excerpt(msg, 300).c_str());
        return eddy::kExitFailure;
    }
}

int run(const Options& opt) {
    App app;
    setup_app(app, opt);  // bad input throws here, before a window opens
    if (const int rc = open_window(app, opt); rc != eddy::kExitOk) return rc;
    const int rc = run_frames(app);
    if (app.worker) app.worker->stop();
    app.gfx.destroy();
    close_window(app);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    if (const auto rc = parse_options(argc, argv, opt)) return *rc;
    // Every failure is one line (a what() can hold newlines or a huge echoed value), with what was
    // being done when it is not an InputError (those name their file and key).
    auto one_line = [](std::string s) {
        std::replace(s.begin(), s.end(), '\n', ' ');
        return eddy::text_excerpt(s, 300);
    };
    const std::string doing = opt.scene.empty() ? std::string("starting the viewer")
                                                : "opening " + eddy::text_excerpt(opt.scene);
    try {
        return run(opt);
    } catch (const eddy::InputError& e) {
        std::fprintf(stderr, "eddy-view: error: %s\n", one_line(e.what()).c_str());
        return eddy::kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "eddy-view: error: out of memory while %s\n", doing.c_str());
        return eddy::kExitFailure;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eddy-view: error: while %s: %s\n", doing.c_str(), one_line(e.what()).c_str());
        return eddy::kExitFailure;
    }
}
