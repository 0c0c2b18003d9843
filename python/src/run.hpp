// The Python side of eddy's run loop, shared by eddy.Simulation.run and eddy.ShallowWater.run: the
// library's run() with the GIL released, the progress callback and Ctrl-C checked between steps.
#pragma once
#include <atomic>
#include <optional>
#include <stdexcept>

#include "bindings.hpp"
#include "eddy/simulation.hpp"
#include "views.hpp"

namespace eddy::python {

/// Raised (as eddy.DivergenceError) when a step or a run diverges.
class DivergenceError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

template <class Sim>
py::dict run_from_python(Sim& sim, const ExecContext& exec, const py::object& out, double until, std::uint64_t steps,
                         double fps, std::vector<std::string> formats, bool render, const py::object& progress,
                         double checkpoint_every) {
    RunOptions opts;
    opts.out_dir = py::str(py::module_::import("os").attr("fspath")(out)).cast<std::string>();
    opts.until = until;
    opts.max_steps = steps;
    opts.fps = fps;
    opts.formats = std::move(formats);
    opts.render = render;
    opts.threads = exec.threads();
    opts.checkpoint_every = checkpoint_every;
    opts.checkpoint_at_end = true;
    std::atomic<bool> stop{false};
    std::optional<py::error_already_set> error;  // from the callback or Ctrl-C, raised after the run
    opts.stop = &stop;
    // Called by run() between steps (every 0.25 s of wall time and at the end), on this
    // thread: take the GIL, call the user's callback, look for Ctrl-C. Either stops the run
    // after its current step, as the command line's Ctrl-C does.
    opts.on_progress = [&](const Progress& p) {
        py::gil_scoped_acquire acquire;
        if (error) return;
        try {
            if (!progress.is_none()) {
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
    return d;
}

/// The `run` method of a Python class holding `sim` and `exec` and calling before_change() and
/// after_change() around anything that changes the simulation (eddy.Simulation, eddy.ShallowWater);
/// bound with RUN_ARGS.
template <class Holder>
py::dict run_method(Holder& h, const py::object& out, double until, std::uint64_t steps, double fps,
                    std::vector<std::string> formats, bool render, const py::object& progress, double checkpoint_every) {
    Busy busy(h.busy);  // declared first: released last, after after_change()
    h.before_change();  // views still alive keep their buffers (views.hpp)
    struct After {
        Holder& h;
        ~After() { h.after_change(); }
    } after{h};
    return run_from_python(h.sim, *h.exec, out, until, steps, fps, std::move(formats), render, progress,
                           checkpoint_every);
}
#define RUN_ARGS                                                                                                      \
    py::arg("out") = "out", py::arg("until") = 0.0, py::arg("steps") = std::uint64_t(0), py::arg("fps") = 0.0,       \
        py::arg("formats") = std::vector<std::string>{}, py::arg("render") = false, py::arg("progress") = py::none(), \
        py::arg("checkpoint_every") = 0.0

inline constexpr const char* kRunDoc =
    "run(out='out', until=0, steps=0, fps=0, formats=[], render=False, progress=None,\n"
    "    checkpoint_every=0) -> dict\n\n"
    "Runs as `eddy run` does, writing frames, summary.json and a checkpoint into `out`: until a\n"
    "simulated time (0: the scene's duration) or a number of steps. formats: particles 'vtk', 'csv',\n"
    "'ply'; grids 'vti', 'csv', 'obj', 'ply' (default: the scene's). progress(dict) is called about every\n"
    "0.25 s with time, end_time, steps, steps_per_second, eta_seconds, ... Returns {status, message,\n"
    "frames, summary}. Ctrl-C stops the run after its current step, writes the last frame and the\n"
    "summary, and raises KeyboardInterrupt; a divergence raises eddy.DivergenceError (frames so far\n"
    "are kept).";

}  // namespace eddy::python
