// eddy-view: scripted runs and --bench-render (harness.hpp).
#include "harness.hpp"

#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eddy/error.hpp"

namespace eddy::view {
namespace {

// Random particles in a unit cube, for --bench-render.
std::vector<float> bench_particles(std::size_t n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> p(4 * n);
    for (std::size_t i = 0; i < n; ++i) {
        p[4 * i] = u(rng), p[4 * i + 1] = u(rng), p[4 * i + 2] = u(rng);
        p[4 * i + 3] = 2.0f * p[4 * i + 1];  // "speed": a gradient over height
    }
    return p;
}

}  // namespace

bool scripted_drag(const Options& opt, int frame, int ww, int wh, double& mx, double& my) {
    if (opt.test_drag.empty() || !(opt.frames > 0)) return false;
    const int first = 2, last = std::max(first + 1, opt.frames - 3);
    if (!(frame >= first && frame <= last)) return false;
    const double f = double(frame - first) / double(last - first);
    mx = ww * (opt.drag[0] + f * (opt.drag[2] - opt.drag[0]));
    my = wh * (opt.drag[1] + f * (opt.drag[3] - opt.drag[1]));
    return true;
}

void press_test_keys(App& app) {
    for (const auto& [at, k] : app.opt.keys)  // --test-keys: through the key handler, as a press would
        if (at == app.frame) on_key(app, k);
}

void lockstep(SimWorker& worker, int steps) {
    // Lockstep: exactly steps_per_frame steps per drawn frame, so a --frames run shows the same
    // state (and saves the same picture) every time, a note in the status or not (halted: failed).
    const std::uint64_t target = worker.latest()->steps + std::uint64_t(steps);
    for (int k = 0; k < steps; ++k) worker.request_step();
    const auto t0 = Clock::now();
    while (worker.latest()->steps < target && !worker.latest()->halted) {
        if (Clock::now() - t0 > std::chrono::seconds(120))
            throw std::runtime_error("--steps-per-frame: the simulation thread did not answer in 120 s");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

namespace {

// The probes, as eddy run's probes.csv writes a frame's rows (pressure, vx, vy, vz), and the state's hash
// as its summary.json does: the same scene stepped as far gives the same lines.
void report_probes_and_hash(const Snapshot& s) {
    for (std::size_t k = 0; k < s.probes.size(); ++k) {
        const auto& r = s.probes[k].reading;
        std::fprintf(stderr, "%s", fmt::format("eddy-view: probe {},{}: {:.9g},{:.9g},{:.9g},{:.9g}\n", k, s.probes[k].name,
                                               r.pressure, r.velocity[0], r.velocity[1], r.velocity[2]).c_str());
    }
    if (s.state_hash) std::fprintf(stderr, "eddy-view: state_hash %016llx\n", static_cast<unsigned long long>(*s.state_hash));
}

}  // namespace

void report_last_frame(SimWorker& worker, int frames) {
    {  // the state the last frame showed, for scripts and tests
        const auto s = worker.latest();
        const bool grid = s->heightfield_mode;
        std::fprintf(stderr, "eddy-view: %d frames, t = %.4f s, %llu steps, %zu %s, max speed %.4g m/s\n", frames, s->time,
                     static_cast<unsigned long long>(s->steps),
                     grid ? std::size_t(s->hf.nx) * std::size_t(s->hf.ny) : s->particles, grid ? "cells" : "particles",
                     s->max_speed);
        report_probes_and_hash(*s);
    }
    {  // the walls' loads the last frame showed (issue 28)
        const auto s = worker.latest();
        const char* fu = s->dimension == 2 ? "N/m" : "N";
        const char* tu = s->dimension == 2 ? "N m/m" : "N m";
        for (std::size_t o = 0; o < s->loads.size(); ++o) {
            const eddy::ObjectLoad& l = s->loads[o];
            std::fprintf(stderr, "eddy-view: load on object %zu: force %.6g %.6g %.6g %s, torque %.6g %.6g %.6g %s, "
                         "fluid weight %.6g %s\n", o, l.force[0], l.force[1], l.force[2], fu, l.torque[0], l.torque[1],
                         l.torque[2], tu, s->fluid_weight, fu);
        }
    }
    {  // the bodies the last frame showed (issue 30), for scripts and tests
        const auto s = worker.latest();
        for (const BodyView& b : s->bodies)
            std::fprintf(stderr, "eddy-view: body %zu: position %.6g %.6g %.6g m, velocity %.6g %.6g %.6g m/s\n", b.index,
                         b.state.position[0], b.state.position[1], b.state.position[2], b.state.velocity[0],
                         b.state.velocity[1], b.state.velocity[2]);
    }
}

int report_status(const App& app) {
    if (app.snap && !app.snap->status.empty() && app.opt.frames > 0) {
        std::fprintf(stderr, "eddy-view: %s\n", app.snap->status.c_str());
        if (app.snap->status.rfind("diverged", 0) == 0) return eddy::kExitDiverged;  // as `eddy run`
    }
    return eddy::kExitOk;
}

Bench make_bench(App& app) {
    Bench bench;
    if (app.opt.bench_render > 0) {
        bench.particles = bench_particles(app.opt.bench_render);
        app.cam.is_3d = true;
        app.cam.target = {0.5f, 0.5f, 0.5f};
        app.cam.distance = 2.6f;
    }
    bench.radius = 0.5f * std::cbrt(1.0f / float(std::max<std::size_t>(app.opt.bench_render, 1)));
    return bench;
}

void draw_bench(App& app, const Bench& bench, int w, int h) {
    app.cam.yaw += 0.01f;  // a slowly turning view: nothing cached between frames
    glViewport(0, 0, w, h);
    glClearColor(0.13f, 0.14f, 0.16f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    ColorRange cr;
    cr.lo = 0.0f, cr.hi = 2.0f;
    app.gfx.draw_particles(bench.particles, bench.radius, true, app.cam.view(), app.cam.proj(float(w) / float(std::max(h, 1))), cr);
}

bool bench_done(const App& app, const Bench& bench) {
    if (!(app.opt.bench_render > 0 && app.opt.frames == 0)) return false;
    const double el = std::chrono::duration<double>(Clock::now() - bench.start).count();
    return el >= app.opt.bench_seconds && app.frame >= 3;
}

void report_bench(const App& app, const Bench& bench) {
    const double el = std::chrono::duration<double>(Clock::now() - bench.start).count();
    int w, h;
    glfwGetFramebufferSize(app.win, &w, &h);
    const int frame = app.frame;
    std::printf("bench-render: %zu particles (3D impostors), %dx%d, %d frames in %.2f s: %.2f fps (%s)\n",
                app.opt.bench_render, w, h, frame, el, frame / el, reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
}

}  // namespace eddy::view
