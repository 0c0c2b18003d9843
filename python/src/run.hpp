// The Python side of eddy's run loop, shared by eddy.Simulation.run and eddy.ShallowWater.run: the
// library's run() with the GIL released, the progress callback and Ctrl-C checked between steps.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.hpp"
#include "eddy/json_text.hpp"
#include "eddy/progress.hpp"
#include "eddy/simulation.hpp"
#include "eddy/up_axis.hpp"
#include "views.hpp"

namespace eddy::python {

/// The walls' loads as numpy (issue 28): (objects, 6) float64, per boundary object (the scene's
/// `boundaries` in order) fx, fy, fz (N) and tx, ty, tz (N m, about the object's pivot where it is now);
/// in 2D per metre of depth (N/m, N m/m) with fz = tx = ty = 0. `loads` empty (no step taken yet, or a
/// method that gathers none) gives rows of NaN: unknown, not zero.
inline py::array_t<double> loads_array(const std::vector<ObjectLoad>& loads, std::size_t objects) {
    py::array_t<double> a({py::ssize_t(objects), py::ssize_t(6)});
    auto w = a.mutable_unchecked<2>();
    const bool known = loads.size() == objects;
    for (std::size_t o = 0; o < objects; ++o)
        for (int c = 0; c < 3; ++c) {
            w(o, c) = known ? loads[o].force[c] : std::nan("");
            w(o, 3 + c) = known ? loads[o].torque[c] : std::nan("");
        }
    return a;
}

/// Raised (as eddy.DivergenceError) when a step or a run diverges.
class DivergenceError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// What run() is asked beyond the end (Python's keyword arguments, the command line's flags).
struct RunRequest {
    py::object out;
    double until = 0.0;
    std::uint64_t steps = 0;
    double fps = 0.0;
    std::vector<std::string> formats;
    bool render = false;
    py::object progress;  ///< None (a bar on a terminal), True, False or a callable(dict)
    double checkpoint_every = 0.0;
    bool mesh = false;  ///< --mesh: a surface per frame
    std::string mesh_format = "obj";
    std::vector<std::string> interpolate_attributes;
    std::string up = "y";
};

/// Where run() writes its progress text (eddy/progress.hpp, the command line's): sys.stderr, as a bar
/// redrawn in place when it is a terminal, as a line every 10% of the run when asked to (progress=True)
/// while it is not; nothing with progress=False or a callback. ValueError for anything else.
struct ProgressOutput {
    py::object stream;  ///< None: nothing written
    std::optional<ProgressText> text;

    explicit ProgressOutput(const py::object& progress) {
        const bool callback = !progress.is_none() && !py::isinstance<py::bool_>(progress) && PyCallable_Check(progress.ptr());
        if (!progress.is_none() && !py::isinstance<py::bool_>(progress) && !callback)
            throw InputError("run: progress = " + text_excerpt(py::repr(progress).cast<std::string>(), 40) +
                             ": allowed: None (a progress bar when sys.stderr is a terminal), True (always: a bar on "
                             "a terminal, else a line every 10%), False (none) or a callable(dict)");
        if (callback || (py::isinstance<py::bool_>(progress) && !progress.cast<bool>())) return;
        py::object err = py::module_::import("sys").attr("stderr");
        if (err.is_none()) return;  // pythonw: no stream
        bool terminal = false;
        try {
            terminal = err.attr("isatty")().cast<bool>();
        } catch (const py::error_already_set&) {  // a stream without isatty: not a terminal
        }
        if (progress.is_none() && !terminal) return;  // piped, a log, a notebook: quiet unless asked
        stream = err;
        text.emplace(terminal);
    }
    void write(const Progress& p) {
        if (!text) return;
        const std::string s = (*text)(p);
        if (s.empty()) return;
        stream.attr("write")(s);
        stream.attr("flush")();
    }
    /// After a run that stopped by an exception: end a bar left open.
    void close() {
        if (text && text->line_open()) {
            stream.attr("write")("\n");
            stream.attr("flush")();
        }
    }
};

/// run()'s keywords in eddy::check_run_options' messages: "run: until = -1", "run: formats: 'bogus'", a
/// suggestion as a call's keyword ("mesh_format='ply'", "formats=['obj']"), values quoted ("allowed: 'y'").
inline OptionSpelling python_spelling() {
    OptionSpelling s;
    s.context = "run: ";
    s.name = [](std::string_view key) { return std::string(key == "mesh_attributes" ? "interpolate_attributes" : key); };
    const auto list = [](std::string_view key) { return key == "formats" || key == "mesh_attributes"; };
    s.value = [list](std::string_view key, std::string_view v) {
        if (v == "true") return std::string("True");
        return list(key) || key == "mesh_format" || key == "up" ? fmt::format("'{}'", v) : std::string(v);
    };
    s.given = [name = s.name, list](std::string_view key, std::string_view v) {
        if (list(key)) return fmt::format("{}: '{}'", name(key), v);
        if (key == "mesh_format" || key == "up") return fmt::format("{} = '{}'", name(key), v);
        return fmt::format("{} = {}", name(key), v == "true" ? "True" : v);
    };
    s.suggest = [name = s.name, value = s.value, list](std::string_view key, std::string_view v) {
        if (list(key)) return fmt::format("{}=[{}]", name(key), value(key, v));
        return fmt::format("{}={}", name(key), value(key, v));
    };
    return s;
}

template <class Sim>
py::dict run_from_python(Sim& sim, const ExecContext& exec, const RunRequest& q) {
    RunOptions opts;
    opts.out_dir = py::str(py::module_::import("os").attr("fspath")(q.out)).cast<std::string>();
    opts.until = q.until;
    opts.max_steps = q.steps;
    opts.fps = q.fps;
    opts.formats = q.formats;
    opts.render = q.render;
    opts.threads = exec.threads();
    opts.checkpoint_every = q.checkpoint_every;
    opts.checkpoint_at_end = true;
    opts.mesh = q.mesh;
    opts.mesh_format = q.mesh_format;
    opts.mesh_attributes = q.interpolate_attributes;
    opts.up = parse_up_axis(q.up, "run: up");
    opts.spelling = python_spelling();
    std::atomic<bool> stop{false};
    std::optional<py::error_already_set> error;  // from the callback or Ctrl-C, raised after the run
    opts.stop = &stop;
    ProgressOutput printer(q.progress);
    const py::object& progress = q.progress;
    const bool callback = !progress.is_none() && !py::isinstance<py::bool_>(progress);
    // Called by run() between steps (every 0.25 s of wall time and at the end), on this
    // thread: take the GIL, write the bar or call the user's callback, look for Ctrl-C. Either
    // stops the run after its current step, as the command line's Ctrl-C does.
    opts.on_progress = [&](const Progress& p) {
        py::gil_scoped_acquire acquire;
        if (error) return;
        try {
            printer.write(p);
            if (callback) {
                py::dict d;
                d["time"] = p.time;
                d["end_time"] = p.end_time;
                d["steps"] = p.steps;
                d["particles"] = p.particles;
                d["wall_seconds"] = p.wall_seconds;
                d["steps_per_second"] = p.steps_per_second;
                d["eta_seconds"] = p.eta_seconds;
                d["frames_written"] = p.frames_written;
                d["finished"] = p.finished;
                progress(d);
            }
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        } catch (py::error_already_set& e) {
            error = std::move(e);
            stop = true;
        }
    };
    struct CloseLine {
        ProgressOutput& p;
        ~CloseLine() {
            try {
                p.close();
            } catch (...) {  // a broken stream must not hide the run's own error
            }
        }
    } close_line{printer};
    RunResult r;
    {
        py::gil_scoped_release release;
        r = run(sim, opts, exec);
    }
    if (error) throw std::move(*error);
    if (r.status == "diverged") throw DivergenceError(r.message);
    py::dict d;
    d["status"] = r.status;
    d["message"] = r.message;
    d["frames"] = r.frames.size();
    d["summary"] = to_python(r.summary);
    if constexpr (std::is_same_v<Sim, Simulation>) {
        // Each frame's mean load over the steps since the previous frame (FrameRecord::loads, the rows
        // of out/forces.csv): (frames, objects, 6); the first frame (no step before it) is NaN.
        const std::size_t objects = std::visit([](const auto& p) { return p.boundary.motions.size(); }, sim);
        py::array_t<double> loads({py::ssize_t(r.frames.size()), py::ssize_t(objects), py::ssize_t(6)});
        py::array_t<double> times(py::ssize_t(r.frames.size()));
        auto l = loads.mutable_unchecked<3>();
        auto t = times.mutable_unchecked<1>();
        for (std::size_t f = 0; f < r.frames.size(); ++f) {
            t(f) = r.frames[f].time;
            const auto one = loads_array(r.frames[f].loads, objects).unchecked<2>();
            for (std::size_t o = 0; o < objects; ++o)
                for (int c = 0; c < 6; ++c) l(f, o, c) = one(o, c);
        }
        d["frame_times"] = times;
        d["loads"] = loads;
        // Each frame's bodies (FrameRecord::bodies, out/bodies.csv): (frames, bodies, 13) float64, a row
        // per body: position (3), orientation w, x, y, z (4), velocity (3), angular_velocity (3).
        const std::size_t nb = std::visit([](const auto& p) { return p.bodies.size(); }, sim);
        py::array_t<double> bodies({py::ssize_t(r.frames.size()), py::ssize_t(nb), py::ssize_t(13)});
        auto b = bodies.mutable_unchecked<3>();
        for (std::size_t f = 0; f < r.frames.size(); ++f)
            for (std::size_t k = 0; k < nb; ++k) {
                const bool has = k < r.frames[f].bodies.size();
                const BodyState s = has ? r.frames[f].bodies[k] : BodyState{};
                const double* v[4] = {s.position.data(), s.orientation.data(), s.velocity.data(), s.angular_velocity.data()};
                const int w[4] = {3, 4, 3, 3};
                int c = 0;
                for (int part = 0; part < 4; ++part)
                    for (int i = 0; i < w[part]; ++i) b(f, k, c++) = has ? v[part][i] : std::nan("");
            }
        d["bodies"] = bodies;
    }
    return d;
}

/// What run() is asked, checked before anything is written (eddy::check_run_options, as the command line's
/// flags and the library's run() are): the library's run() would otherwise meet them only after the views
/// were let go. `time` is the simulation's current time (s).
inline void check_run_request(const Scene& scene, double time, const RunRequest& q) {
    if (q.up != "y" && q.up != "z")
        throw InputError(fmt::format("run: up = '{}': allowed: 'y', 'z' (the up axis of every geometry file written)",
                                     text_excerpt(q.up, 40)));
    RunOptions opts;
    opts.until = q.until, opts.fps = q.fps, opts.checkpoint_every = q.checkpoint_every;
    opts.formats = q.formats;
    opts.mesh = q.mesh, opts.mesh_format = q.mesh_format, opts.mesh_attributes = q.interpolate_attributes;
    opts.up = parse_up_axis(q.up, "run: up");
    opts.spelling = python_spelling();
    check_run_options(scene, time, opts);
}

/// The `run` method of a Python class holding `sim` and `exec` and calling before_change() and
/// after_change() around anything that changes the simulation (eddy.Simulation, eddy.ShallowWater);
/// bound with RUN_ARGS.
template <class Holder>
py::dict run_method(Holder& h, const py::object& out, double until, const py::object& steps, double fps,
                    std::vector<std::string> formats, bool render, const py::object& progress, double checkpoint_every,
                    bool mesh, std::string mesh_format, std::vector<std::string> interpolate_attributes, std::string up) {
    RunRequest q{out,    until,           count_arg(steps, "run: steps", 0, kMaxCount, "0 (no limit) or a whole number of steps"),
                 fps,    std::move(formats), render, progress, checkpoint_every, mesh, std::move(mesh_format),
                 std::move(interpolate_attributes), std::move(up)};
    Busy busy(h.busy);  // declared first: released last, after after_change()
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(h.sim)>, Simulation>)
        std::visit([&](auto& p) { check_run_request(p.scene, p.time, q); }, h.sim);
    else
        h.visit([&](auto& g) { check_run_request(h.sim.scene, g.time(), q); });
    static_cast<void>(ProgressOutput(q.progress));  // a bad progress= before anything is written
    h.before_change();  // views still alive keep their buffers (views.hpp)
    struct After {
        Holder& h;
        ~After() { h.after_change(); }
    } after{h};
    return run_from_python(h.sim, *h.exec, q);
}
#define RUN_ARGS                                                                                                       \
    py::arg("out") = "out", py::arg("until") = 0.0, py::arg("steps") = 0, py::arg("fps") = 0.0,                        \
        py::arg("formats") = std::vector<std::string>{}, py::arg("render") = false, py::arg("progress") = py::none(),  \
        py::arg("checkpoint_every") = 0.0, py::arg("mesh") = false, py::arg("mesh_format") = "obj",                    \
        py::arg("interpolate_attributes") = std::vector<std::string>{}, py::arg("up") = "y"

inline constexpr const char* kRunDoc =
    "run(out='out', until=0, steps=0, fps=0, formats=[], render=False, progress=None,\n"
    "    checkpoint_every=0, mesh=False, mesh_format='obj', interpolate_attributes=[], up='y') -> dict\n\n"
    "Runs as `eddy run` does, writing frames, summary.json and a checkpoint into `out`: until a\n"
    "simulated time (0: the scene's duration) or a number of steps. formats: particles 'vtk', 'csv',\n"
    "'ply'; grids 'vti', 'csv', 'obj', 'ply' (default: the scene's). mesh=True (particles; `eddy run\n"
    "--mesh`): also a surface per frame, frames/surface_NNNNN.<mesh_format> ('obj' or 'ply');\n"
    "interpolate_attributes (with mesh_format='ply'): 'velocity', 'density', 'pressure' carried onto\n"
    "its vertices. up: 'y' or 'z' (3D and grids), the up axis of every geometry file written (--up).\n"
    "A negative or NaN until, fps or checkpoint_every, steps not a whole number >= 0, an unknown\n"
    "format, mesh option or up axis, or an end before the simulation's time raise ValueError before\n"
    "anything is written, as the command line refuses them.\n"
    "progress: None (default) draws the command line's progress line on sys.stderr when it is a\n"
    "terminal and is quiet otherwise; True always writes it (a line every 10% when sys.stderr is not a\n"
    "terminal: logs, notebooks); False never; a callable(dict) is called instead about every 0.25 s\n"
    "with time, end_time, steps, steps_per_second, eta_seconds, ... Returns {status, message,\n"
    "frames, summary}; eddy.Simulation's also frame_times (frames,) and loads (frames, objects, 6):\n"
    "each frame's mean wall loads since the previous frame (as boundary_forces(); out/forces.csv),\n"
    "and bodies (frames, bodies, 13): each frame's body states, position (3), orientation w, x, y, z\n"
    "(4), velocity (3), angular_velocity (3) (out/bodies.csv).\n"
    "Ctrl-C stops the run after its current step, writes the last frame and the\n"
    "summary, and raises KeyboardInterrupt; a divergence raises eddy.DivergenceError (frames so far\n"
    "are kept).";

}  // namespace eddy::python
