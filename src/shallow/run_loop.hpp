// The grid run of a shallow-water simulation, shared by one process (src/shallow/run.cpp) and many
// (src/distributed/shallow_blocks.cpp): a task of the one frame loop (src/sim/frame_loop.hpp, which lands
// on frame times, checkpoints, stops), with its steps and their guard, frames (vti, csv, obj, ply),
// pictures, progress and summary.json with the water volume of every frame.
//
// The loop drives a Stepper, which has:
//   spec()                  the ShallowWaterScene (whole grid)      settings()   the solver's settings
//   time(), steps()         the clock (the same on every process)   root()       writes files
//   suggest_dt()            the next step (the whole grid's)        step(dt, exec) -> ShallowWaterStats of the whole grid
//   gather()                the whole grid on the root, nullptr on the others (every process calls it)
//   gathers()               is there a whole grid to gather into (the same answer on every process)?
//   refuse(message)         throws the InputError of a check every process makes alike (before the loop)
//   any(bool)               true on every process if true on one    on_root(f)   runs f on the root; its InputError on all
//   total_inflow(), total_outflow()                                 checkpoint(file, record)
//   describe(summary)       adds what the stepper knows (processes, blocks, communication)
//   write_pieces(out, name) every process writes its block's .vti piece, the root the .pvti `name` listing
//                           them all; returns the pieces' names      volume()  the whole grid's water volume
#pragma once
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "shallow/grid_outputs.hpp"
#include "sim/frame_loop.hpp"
#include "sim/run_support.hpp"

namespace eddy::detail {

// The .vti piece of process `rank` beside the .pvti `pvti` (frames/grid_00003.pvti -> frames/grid_00003_p0001.vti).
inline std::string grid_piece_name(const std::string& pvti, int rank) {
    return fmt::format("{}_p{:04d}.vti", pvti.substr(0, pvti.size() - 5), rank);
}

// A grid run (issue 41): the task the frame loop (src/sim/frame_loop.hpp) drives over a Stepper (above).
template <class Stepper>
class GridRun {
public:
    GridRun(Stepper& solver, const Scene& scene, const RunOptions& opts, const ExecContext& exec);
    RunResult go();

    // The frame loop's task.
    double time() const { return m_solver.time(); }
    std::uint64_t steps() const { return m_solver.steps(); }
    std::string advance(double target);
    void frame();
    void checkpoint() { m_solver.checkpoint(m_opts.out_dir / kCheckpointFile, record()); }
    bool any(bool v) { return m_solver.any(v); }
    void progress(bool finished);

private:
    using clock = std::chrono::steady_clock;
    // Floating bodies live on the whole grid only: a stepper over blocks (mpirun) has none.
    static constexpr bool kHasBodies = requires(const Stepper& st) { st.bodies(); };
    using Grid = std::remove_cvref_t<decltype(*std::declval<Stepper&>().gather())>;
    void configure();
    void make_outputs();
    void restore();
    template <class Grid>
    void render(const std::filesystem::path& file, const Grid& g) const {
        if constexpr (kHasBodies) render_grid_png(file, g, 1024, &m_solver.bodies());
        else render_grid_png(file, g);
    }
    nlohmann::json frames_json() const;
    nlohmann::json record() const;
    nlohmann::json summary(const std::string& picture) const;

    Stepper& m_solver;
    const Scene& m_scene;
    const RunOptions& m_opts;
    const ExecContext& m_exec;
    std::optional<GridRecord> m_gr;  // a resumed run: the checkpoint's record, every key checked
    std::vector<std::string> m_formats;
    std::string m_run_id;  // the root's id is the one written (run.json, checkpoints)
    bool m_render = false;
    UpAxis m_up = UpAxis::z;  // of the water surface's meshes (the grid's world is z up)
    bool m_pieces = false;  // .vti frames as every process's block, listed in a .pvti
    bool m_gather_frames = false;  // the whole grid gathered on the root for frames and pictures
    detail::FrameClock m_clock;
    RunResult m_result;
    std::vector<std::unique_ptr<GridOutput<Stepper, Grid>>> m_outputs;  // in the order their files are listed
    std::vector<double> m_volumes;  // per frame
    std::uint64_t m_steps0 = 0, m_steps_at_start = 0;
    double m_step_seconds = 0.0, m_max_speed = 0.0, m_max_depth = 0.0, m_wall_before = 0.0, m_volume0 = 0.0;
    std::size_t m_clamped = 0;
    PassTimes m_passes;  // the steps' named passes' seconds, summed over this invocation (summary.json "passes")
    clock::time_point m_t0;
};

template <class Stepper>
GridRun<Stepper>::GridRun(Stepper& solver, const Scene& scene, const RunOptions& opts, const ExecContext& exec)
    : m_solver(solver), m_scene(scene), m_opts(opts), m_exec(exec) {
    configure();
    make_outputs();
    m_steps0 = m_solver.steps(), m_clock.time0 = m_solver.time();
    if (opts.resume) restore();
    const auto& out = opts.out_dir;
    m_solver.on_root([&] {
        detail::open_run_folder(out, {"grid_", "surface_"}, static_cast<int>(m_result.frames.size()),
                                {{"scene", scene.name}, {"method", scene.method}}, opts.resume != nullptr, m_run_id);
        // An earlier run's bodies.csv in the folder is not this run's.
        if (!opts.resume) std::filesystem::remove(out / "bodies.csv");
    });
    m_gather_frames = !m_pieces || m_formats.size() > 1 || (!m_formats.empty() && m_formats[0] != "vti") || m_render;
    if (m_gather_frames && !m_solver.gathers())
        m_solver.refuse(fmt::format("{}: this run keeps no whole grid to gather frames and pictures into; allowed: "
                                    "--pieces with --format vti only and no --render", scene.where()));
    // The whole grid, on the root (every process takes part in gathering it; nullptr elsewhere).
    const auto* whole = m_gather_frames ? m_solver.gather() : nullptr;
    if (!opts.resume) m_volume0 = whole ? whole->volume() : m_gather_frames ? 0.0 : m_solver.volume();
    m_steps_at_start = m_solver.steps();
    m_t0 = clock::now();
}

// What the run writes and until when: the caller's options (and the scene's), or the checkpoint's record.
template <class Stepper>
void GridRun<Stepper>::configure() {
    const Scene& scene = m_scene;
    const RunOptions& opts = m_opts;
    const nlohmann::json* rec = opts.resume;
    if constexpr (!kHasBodies) {
        if (!m_solver.spec().bodies.empty())
            m_solver.refuse(fmt::format("{}: bodies: floating bodies run on one process only (the grid split over "
                                        "processes does not carry them); allowed: no 'bodies' under mpirun, or run "
                                        "without mpirun",
                                        scene.where()));
    }
    try {
        check_run_options(scene, m_solver.time(), opts);  // what the caller asks, as every front end checks it
    } catch (const InputError& e) {
        m_solver.refuse(e.what());  // every process alike
    }
    // The record comes from a checkpoint: untrusted, every key checked (read_grid_record) before the folder
    // is touched.
    if (rec) m_gr = read_grid_record(*rec, (opts.out_dir / kCheckpointFile).string(), m_solver.time(), m_solver.steps());
    const double end_time = opts.until > 0.0 ? opts.until : rec ? m_gr->end_time : scene.duration;
    const double fps = rec ? m_gr->fps : opts.fps > 0.0 ? opts.fps : scene.output.fps;
    m_formats = rec ? m_gr->formats : opts.formats.empty() ? scene.output.formats : opts.formats;
    m_run_id = rec ? m_gr->run_id : new_run_id();
    // The library's own guard (the CLI and the scene loader check first): a frame interval or an end the
    // clock cannot resolve would make a run that never ends.
    if (!(fps > 0.0 && fps <= kMaxFps) || !(end_time > 0.0 && end_time <= kMaxDuration))
        m_solver.refuse(fmt::format("{}: fps = {:g}, end time = {:g} s: allowed: 0 < fps <= {:g}, 0 < end <= {:g} s",
                                    scene.where(), fps, end_time, kMaxFps, kMaxDuration));
    if (rec && m_solver.time() > end_time + 1e-9 * std::max(1.0, end_time))
        m_solver.refuse(fmt::format("--until {:g}: the checkpoint is at t = {:.6g} s already; allowed: a later time",
                                    end_time, m_solver.time()));
    m_render = rec ? m_gr->render : opts.render || scene.output.render;
    // Checkpoints written before --up existed: z up, what those runs wrote.
    m_up = rec ? m_gr->up : opts.up;
    m_pieces = rec ? m_gr->pieces : opts.pieces;
    m_clock.fps = fps;
    m_clock.end_time = end_time;
}

// The record's counters, frames, bodies and statistics.
template <class Stepper>
void GridRun<Stepper>::restore() {
    const GridRecord& gr = *m_gr;
    m_clock.time0 = gr.time0;
    m_steps0 = gr.steps0;
    m_clock.next_frame = gr.next_frame;
    m_volume0 = gr.volume0;
    const GridResume resume{gr, *m_opts.resume, (m_opts.out_dir / kCheckpointFile).string(),
                            [&](const std::string& m) { m_solver.refuse(m); }};
    for (auto& o : m_outputs) o->restore(resume);
    for (const auto& f : gr.frames) {
        FrameRecord fr;
        fr.index = f.index;
        fr.time = f.time;
        fr.files = f.files;
        m_result.frames.push_back(std::move(fr));
        m_volumes.push_back(f.numbers[0]);
    }
    m_step_seconds = gr.step_seconds;
    m_max_speed = gr.max_speed;
    m_max_depth = gr.max_depth;
    m_clamped = gr.clamped;
    m_wall_before = gr.wall_before;
}

// The outputs, in the order their files are listed in a frame: the formats as given, then the picture and
// the bodies (src/shallow/grid_outputs.hpp).
template <class Stepper>
void GridRun<Stepper>::make_outputs() {
    for (const auto& f : m_formats) {
        if (f == "vti") m_outputs.push_back(std::make_unique<GridFieldFrames<Stepper, Grid>>(m_pieces));
        else if (f == "csv") m_outputs.push_back(std::make_unique<GridCellsCsv<Stepper, Grid>>());
        else m_outputs.push_back(std::make_unique<GridSurfaceFrames<Stepper, Grid>>(f, m_up));
    }
    if (m_render)
        m_outputs.push_back(std::make_unique<GridPictures<Stepper, Grid>>(
            [this](const std::filesystem::path& file, const Grid& g) { render(file, g); }));
    if (!m_solver.spec().bodies.empty())
        m_outputs.push_back(std::make_unique<GridBodiesCsv<Stepper, Grid>>([this] {
            typename GridBodiesCsv<Stepper, Grid>::Rows rows;
            if constexpr (kHasBodies)
                for (const auto& b : m_solver.bodies()) rows.push_back(body_row(b));
            return rows;
        }));
}

// A frame: every output's files, and the water's volume.
template <class Stepper>
void GridRun<Stepper>::frame() {
    const Grid* whole = m_gather_frames || m_render ? m_solver.gather() : nullptr;
    FrameRecord fr;
    fr.index = static_cast<int>(m_result.frames.size());
    fr.time = m_solver.time();
    const GridFrame<Grid> f{m_opts.out_dir, fr.index, fr.time, whole, m_solver.root(), m_result.frames};
    for (auto& o : m_outputs) o->write(f, m_solver, fr);
    // The volume of the gathered grid (the same bits as one process); else the blocks' sum.
    m_volumes.push_back(whole ? whole->volume() : (m_gather_frames || m_render) ? 0.0 : m_solver.volume());
    m_result.frames.push_back(std::move(fr));
}

template <class Stepper>
std::string GridRun<Stepper>::advance(double target) {
    const double suggested = m_solver.suggest_dt();
    const double dt = landing_dt(suggested, m_solver.time(), target);
    const auto s0 = clock::now();
    const ShallowWaterStats st = m_solver.step(dt, m_exec);  // statistics of the whole grid
    m_step_seconds += std::chrono::duration<double>(clock::now() - s0).count();
    m_max_speed = std::max(m_max_speed, st.max_speed);
    m_max_depth = std::max(m_max_depth, st.max_depth);
    m_clamped += st.clamped;
    m_passes.add_passes(st);
    return grid_step_divergence(st, suggested);  // the guard of every grid slice (step_slice)
}

template <class Stepper>
void GridRun<Stepper>::progress(bool finished) {
    if (!m_opts.on_progress || !m_solver.root()) return;
    const auto& spec = m_solver.spec();
    m_opts.on_progress(detail::make_progress(m_solver.time(), m_clock.time0, m_clock.end_time,
                                             m_solver.steps() - m_steps_at_start, m_opts.max_steps,
                                             std::size_t(spec.nx) * std::size_t(spec.ny), "cells",
                                             std::chrono::duration<double>(clock::now() - m_t0).count(),
                                             static_cast<int>(m_result.frames.size()), finished));
}

template <class Stepper>
nlohmann::json GridRun<Stepper>::frames_json() const {
    nlohmann::json frames = nlohmann::json::array();
    for (std::size_t k = 0; k < m_result.frames.size(); ++k) {
        const auto& f = m_result.frames[k];
        frames.push_back({{"index", f.index}, {"time", f.time}, {"files", f.files}, {"volume", m_volumes[k]}});
    }
    return frames;
}

// What the loop carries beyond the grid (as the particle run's, src/sim/run.cpp).
template <class Stepper>
nlohmann::json GridRun<Stepper>::record() const {
    nlohmann::json rj;
    rj["end_time"] = m_clock.end_time;
    rj["fps"] = m_clock.fps;
    rj["formats"] = m_formats;
    rj["render"] = m_render;
    rj["up_axis"] = name(m_up);
    rj["pieces"] = m_pieces;
    rj["run_id"] = m_run_id;
    rj["time0"] = m_clock.time0;
    rj["steps0"] = m_steps0;
    rj["next_frame"] = m_clock.next_frame;
    rj["volume0"] = m_volume0;
    rj["frames"] = frames_json();
    rj["pvd"] = nlohmann::json::array();  // the field frames' list (none without them)
    for (const auto& o : m_outputs) o->save(rj);
    rj["stats"] = {m_step_seconds, m_max_speed, m_max_depth, m_clamped,
                   m_wall_before + std::chrono::duration<double>(clock::now() - m_t0).count()};
    return rj;
}

// summary.json: the run's statistics, the water's volume balance, the frames, the bodies at the end.
template <class Stepper>
nlohmann::json GridRun<Stepper>::summary(const std::string& picture) const {
    const auto& spec = m_solver.spec();
    const double wall = m_wall_before + std::chrono::duration<double>(clock::now() - m_t0).count();
    const std::uint64_t nsteps = m_solver.steps() - m_steps0;
    nlohmann::json j;
    j["scene"] = m_scene.name;
    j["scene_file"] = m_scene.source_path();  // absolute: the add-on reads it from anywhere
    j["method"] = m_scene.method;
    j["dimension"] = 2;
    j["cells"] = {spec.nx, spec.ny};
    j["dx"] = spec.dx;
    j["up_axis"] = name(m_up);  // of the water surface meshes (eddy/up_axis.hpp)
    if (m_pieces) j["pieces"] = true;
    j["steps"] = nsteps;
    j["simulated_time"] = m_solver.time();
    j["wall_time"] = wall;
    j["threads"] = m_opts.threads > 0 ? m_opts.threads : m_exec.threads();
    j["mean_ms_per_step"] = nsteps ? 1e3 * m_step_seconds / double(nsteps) : 0.0;
    j["cell_updates_per_second"] =
        m_step_seconds > 0 ? double(spec.nx) * double(spec.ny) * double(nsteps) / m_step_seconds : 0.0;
    j["max_speed"] = m_max_speed;
    j["max_depth"] = m_max_depth;
    j["clamped_face_updates"] = m_clamped;
    j["passes"] = detail::passes_json(m_passes, m_solver.steps() - m_steps_at_start);  // this process's block
    j["volume_initial"] = m_volume0;
    const auto* last = m_solver.gathers() ? m_solver.gather() : nullptr;
    const double volume_final = last ? last->volume() : m_solver.gathers() ? 0.0 : m_solver.volume();
    const double inflow = m_solver.total_inflow(), outflow = m_solver.total_outflow();
    j["volume_final"] = volume_final;
    j["volume_added"] = inflow;
    j["volume_outflow"] = outflow;
    const double expected = m_volume0 + inflow - outflow;
    j["volume_balance_relative_error"] = expected > 0 ? (volume_final - expected) / expected : 0.0;
    j["status"] = m_result.status;
    j["message"] = m_result.message;
    j["run_id"] = m_run_id;
    j["settings"] = to_json(m_solver.settings(), shallow_water_fields());
    m_solver.describe(j);  // processes: ranks, blocks, time in communication
    j["frames"] = frames_json();
    if (!spec.bodies.empty()) {
        // The bodies at the end: pose, velocity and the water's last loads (bodies.csv has every frame).
        nlohmann::json bj = nlohmann::json::array();
        if constexpr (kHasBodies) {
            const auto& list = m_solver.bodies();
            for (std::size_t k = 0; k < list.size(); ++k) {
                const auto& b = list[k];
                bj.push_back({{"body", k}, {"shape", spec.bodies[k].shape}, {"mass", b.mass}, {"position", b.x},
                              {"orientation", b.q}, {"velocity", b.v}, {"angular_velocity", b.omega},
                              {"force", b.force}, {"torque", b.torque}});
            }
            if (last) j["volume_displaced_final"] = last->displaced_volume();
        }
        j["bodies"] = bj;
        j["bodies_file"] = "bodies.csv";
    }
    if (!picture.empty()) j["picture"] = picture;
    return j;
}

template <class Stepper>
RunResult GridRun<Stepper>::go() {
    detail::run_frames(*this, m_clock, m_opts, m_opts.resume != nullptr, m_result);
    std::string picture;
    if (m_result.exit_code != kExitDiverged && m_solver.gathers()) {  // no whole grid anywhere: no picture
        picture = "last_frame.png";
        if (const auto* gp = m_solver.gather()) render(m_opts.out_dir / picture, *gp);
    }
    detail::finish_message(m_result, m_solver.steps() - m_steps0, m_solver.time());
    progress(true);
    m_result.summary = summary(picture);
    if (m_solver.root()) io::write_json(m_opts.out_dir / "summary.json", m_result.summary);
    return std::move(m_result);
}

template <class Stepper>
RunResult run_grid_loop(Stepper& solver, const Scene& scene, const RunOptions& opts, const ExecContext& exec) {
    return GridRun<Stepper>(solver, scene, opts, exec).go();
}

}  // namespace eddy::detail
