// The run loop of a shallow-water simulation, shared by one process (src/shallow/run.cpp) and many
// (src/distributed/shallow_blocks.cpp): steps to frame times exactly, frames (vti, csv, obj, ply),
// pictures, progress, divergence and interrupts, checkpoints, summary.json with the water volume of
// every frame.
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
#include <optional>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "sim/run_support.hpp"

namespace eddy::detail {

// One row of bodies.csv: time, body, pose, velocity, the water's force and torque (20 numbers after time).
inline std::array<double, 19> body_row(const ShallowBody& b) {
    return {b.x[0], b.x[1], b.x[2], b.q[0], b.q[1], b.q[2], b.q[3], b.v[0], b.v[1], b.v[2],
            b.omega[0], b.omega[1], b.omega[2], b.force[0], b.force[1], b.force[2], b.torque[0], b.torque[1], b.torque[2]};
}

// out/bodies.csv: every frame's bodies, rewritten whole (atomically) at each frame.
inline void write_bodies_csv(const std::filesystem::path& file, const std::vector<double>& times,
                             const std::vector<std::vector<std::array<double, 19>>>& rows) {
    std::string text = "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz\n";
    for (std::size_t f = 0; f < rows.size(); ++f)
        for (std::size_t k = 0; k < rows[f].size(); ++k) {
            fmt::format_to(std::back_inserter(text), "{:.17g},{}", times[f], k);
            for (double v : rows[f][k]) fmt::format_to(std::back_inserter(text), ",{:.17g}", v);
            text += '\n';
        }
    io::write_atomic(file, text);
}

inline std::string grid_frame_name(int index, const char* stem, const char* ext) {
    return fmt::format("frames/{}_{:05d}.{}", stem, index, ext);
}

// The .vti piece of process `rank` beside the .pvti `pvti` (frames/grid_00003.pvti -> frames/grid_00003_p0001.vti).
inline std::string grid_piece_name(const std::string& pvti, int rank) {
    return fmt::format("{}_p{:04d}.vti", pvti.substr(0, pvti.size() - 5), rank);
}

template <class Stepper>
RunResult run_grid_loop(Stepper& solver, const Scene& scene, const RunOptions& opts, const ExecContext& exec) {

        const auto& spec = solver.spec();
        const nlohmann::json* rec = opts.resume;  // a resumed run: the checkpoint's record
        // Floating bodies live on the whole grid only: a stepper over blocks (mpirun) has none.
        constexpr bool has_bodies = requires(const Stepper& st) { st.bodies(); };
        if constexpr (!has_bodies) {
            if (!spec.bodies.empty())
                solver.refuse(fmt::format("{}: bodies: floating bodies run on one process only (the grid split over "
                                          "processes does not carry them); allowed: no 'bodies' under mpirun, or run "
                                          "without mpirun",
                                          scene.where()));
        }
        auto bodies_now = [&]() {
            std::vector<std::array<double, 19>> rows;
            if constexpr (has_bodies)
                for (const auto& b : solver.bodies()) rows.push_back(body_row(b));
            return rows;
        };
        const bool with_bodies = !spec.bodies.empty();
        std::vector<std::vector<std::array<double, 19>>> body_rows;  // per frame
        // The record comes from a checkpoint: untrusted, every key checked (read_grid_record) before the
        // folder is touched.
        std::optional<GridRecord> gr;
        if (rec) gr = read_grid_record(*rec, (opts.out_dir / kCheckpointFile).string(), solver.time(), solver.steps());
        const double end_time = opts.until > 0.0 ? opts.until : rec ? gr->end_time : scene.duration;
        const double fps = rec ? gr->fps : opts.fps > 0.0 ? opts.fps : scene.output.fps;
        const std::vector<std::string> formats =
            rec ? gr->formats : opts.formats.empty() ? scene.output.formats : opts.formats;
        // The root's id is the one written (run.json, checkpoints).
        const std::string run_id = rec ? gr->run_id : new_run_id();
        // The library's own guard (the CLI and the scene loader check first): a frame interval or an
        // end the clock cannot resolve would make a run that never ends.
        if (!(fps > 0.0 && fps <= kMaxFps) || !(end_time > 0.0 && end_time <= kMaxDuration))
            solver.refuse(fmt::format("{}: fps = {:g}, end time = {:g} s: allowed: 0 < fps <= {:g}, 0 < end <= {:g} s",
                                         scene.where(), fps, end_time, kMaxFps, kMaxDuration));
        if (rec && solver.time() > end_time + 1e-9 * std::max(1.0, end_time))
            solver.refuse(fmt::format("--until {:g}: the checkpoint is at t = {:.6g} s already; allowed: a later time",
                                         end_time, solver.time()));
        for (const auto& f : formats)
            if (f != "vti" && f != "csv" && f != "obj" && f != "ply")
                solver.refuse(fmt::format("{}: format '{}' is not a grid format; allowed: vti, csv, obj, ply",
                                             scene.where(), f));
        const bool render_all = rec ? gr->render : opts.render || scene.output.render;
        // The water surface's meshes in the axes --up asks for (the grid's world is z up); checkpoints
        // written before the option existed: z up, what those runs wrote.
        const UpAxis up = rec ? gr->up : opts.up;
        if (!opts.mesh_attributes.empty())
            solver.refuse(fmt::format("{}: --interpolate-attributes is for particle scenes' --mesh", scene.where()));
        const auto& out = opts.out_dir;
        RunResult result;
        std::vector<std::pair<double, std::string>> pvd;
        std::vector<double> volumes;
        // With pieces, .vti frames are written by every process (its block) and listed in a .pvti; the
        // whole grid is gathered on the root only for the other formats and pictures.
        const bool pieces = rec ? gr->pieces : opts.pieces;
        // The record's counters and frames.
        std::uint64_t steps0 = solver.steps();
        double time0 = solver.time();
        double step_seconds = 0.0, max_speed = 0.0, max_depth = 0.0, wall_before = 0.0;
        std::size_t clamped = 0;
        int next_frame = 1;
        double volume0 = 0.0;
        if (rec) {
            time0 = gr->time0;
            steps0 = gr->steps0;
            next_frame = gr->next_frame;
            volume0 = gr->volume0;
            // The bodies' rows of the frames written so far (the record's "bodies": per frame, per body 19
            // numbers), checked: a checkpoint is untrusted.
            if (with_bodies) {
                const auto& rb = rec->contains("bodies") ? (*rec)["bodies"] : nlohmann::json();
                const std::string where = (opts.out_dir / kCheckpointFile).string();
                if (!rb.is_array() || rb.size() != gr->frames.size())
                    solver.refuse(fmt::format("{}: corrupt checkpoint: record key 'bodies' is not one list of bodies per frame", where));
                for (const auto& f : rb) {
                    if (!f.is_array() || f.size() != spec.bodies.size())
                        solver.refuse(fmt::format("{}: corrupt checkpoint: record key 'bodies' has a frame without its {} bodies",
                                                  where, spec.bodies.size()));
                    std::vector<std::array<double, 19>> rows;
                    for (const auto& b : f) {
                        if (!b.is_array() || b.size() != 19)
                            solver.refuse(fmt::format("{}: corrupt checkpoint: record key 'bodies' has a body that is not 19 numbers", where));
                        std::array<double, 19> r{};
                        for (std::size_t k = 0; k < 19; ++k) {
                            if (!b[k].is_number() || !std::isfinite(b[k].get<double>()))
                                solver.refuse(fmt::format("{}: corrupt checkpoint: record key 'bodies' holds a value that is not a finite number", where));
                            r[k] = b[k].get<double>();
                        }
                        rows.push_back(r);
                    }
                    body_rows.push_back(std::move(rows));
                }
            }
            for (const auto& f : gr->frames) {
                FrameRecord fr;
                fr.index = f.index;
                fr.time = f.time;
                fr.files = f.files;
                result.frames.push_back(std::move(fr));
                volumes.push_back(f.numbers[0]);
            }
            pvd = gr->pvd;
            step_seconds = gr->step_seconds;
            max_speed = gr->max_speed;
            max_depth = gr->max_depth;
            clamped = gr->clamped;
            wall_before = gr->wall_before;
        }
        solver.on_root([&] {
            detail::open_run_folder(out, {"grid_", "surface_"}, static_cast<int>(result.frames.size()),
                                    {{"scene", scene.name}, {"method", scene.method}}, rec != nullptr, run_id);
            // An earlier run's bodies.csv in the folder is not this run's.
            if (!rec) std::filesystem::remove(out / "bodies.csv");
        });
        const bool gather_frames = !pieces || formats.size() > 1 || (!formats.empty() && formats[0] != "vti") || render_all;
        if (gather_frames && !solver.gathers())
            solver.refuse(fmt::format("{}: this run keeps no whole grid to gather frames and pictures into; allowed: "
                                         "--pieces with --format vti only and no --render", scene.where()));
        // The whole grid, on the root (every process takes part in gathering it; nullptr elsewhere).
        const auto* whole = gather_frames ? solver.gather() : nullptr;
        if (!rec) volume0 = whole ? whole->volume() : gather_frames ? 0.0 : solver.volume();
        auto write_frame = [&](bool render) {
            const auto* gp = gather_frames || render ? solver.gather() : nullptr;
            const bool here = solver.root();
            FrameRecord fr;
            fr.index = static_cast<int>(result.frames.size());
            fr.time = solver.time();
            for (const auto& f : formats) {
                std::string name;
                if (f == "vti" && pieces) {
                    name = grid_frame_name(fr.index, "grid", "pvti");
                    for (auto& piece : solver.write_pieces(out, name)) fr.files.push_back(std::move(piece));
                    pvd.emplace_back(solver.time(), name);
                } else if (!here) {  // not the root: the names only
                    name = f == "vti" || f == "csv" ? grid_frame_name(fr.index, "grid", f.c_str()) : grid_frame_name(fr.index, "surface", f.c_str());
                    if (f == "vti") pvd.emplace_back(solver.time(), name);
                } else if (f == "vti") {
                    name = grid_frame_name(fr.index, "grid", "vti");
                    io::write_vti(out / name, *gp);
                    pvd.emplace_back(solver.time(), name);
                } else if (f == "csv") {
                    name = grid_frame_name(fr.index, "grid", "csv");
                    io::write_grid_csv(out / name, *gp);
                } else {
                    name = grid_frame_name(fr.index, "surface", f.c_str());
                    io::write_water_mesh(out / name, *gp, up);
                }
                fr.files.push_back(name);
            }
            if (render) {
                const std::string name = grid_frame_name(fr.index, "grid", "png");
                if (gp) {
                    if constexpr (has_bodies) render_grid_png(out / name, *gp, 1024, &solver.bodies());
                    else render_grid_png(out / name, *gp);
                }
                fr.files.push_back(name);
            }
            if (with_bodies) {
                body_rows.push_back(bodies_now());
                if (here) {
                    std::vector<double> times;
                    for (const auto& f : result.frames) times.push_back(f.time);
                    times.push_back(fr.time);
                    write_bodies_csv(out / "bodies.csv", times, body_rows);
                }
            }
            if (here && !pvd.empty()) io::write_pvd(out / "grid.pvd", pvd);
            // The volume of the gathered grid (the same bits as one process); else the blocks' sum.
            const double volume = gp ? gp->volume() : (gather_frames || render) ? 0.0 : solver.volume();
            volumes.push_back(volume);
            result.frames.push_back(std::move(fr));
        };

        using clock = std::chrono::steady_clock;
        const auto t0 = clock::now();
        auto last_report = t0;
        // What the loop carries beyond the grid (see the particle run in src/sim/run.cpp).
        auto record = [&]() {
            nlohmann::json rj;
            rj["end_time"] = end_time;
            rj["fps"] = fps;
            rj["formats"] = formats;
            rj["render"] = render_all;
            rj["up_axis"] = name(up);
            rj["pieces"] = pieces;
            rj["run_id"] = run_id;
            rj["time0"] = time0;
            rj["steps0"] = steps0;
            rj["next_frame"] = next_frame;
            rj["volume0"] = volume0;
            nlohmann::json frames = nlohmann::json::array();
            for (std::size_t k = 0; k < result.frames.size(); ++k)
                frames.push_back({{"index", result.frames[k].index}, {"time", result.frames[k].time},
                                  {"files", result.frames[k].files}, {"volume", volumes[k]}});
            rj["frames"] = frames;
            if (with_bodies) rj["bodies"] = body_rows;
            nlohmann::json p = nlohmann::json::array();
            for (const auto& [t, name] : pvd) p.push_back({t, name});
            rj["pvd"] = p;
            rj["stats"] = {step_seconds, max_speed, max_depth, clamped,
                           wall_before + std::chrono::duration<double>(clock::now() - t0).count()};
            return rj;
        };
        const std::uint64_t steps_at_start = solver.steps();
        double next_checkpoint = opts.checkpoint_every > 0.0
                                     ? time0 + opts.checkpoint_every *
                                                   (std::floor((solver.time() - time0) / opts.checkpoint_every) + 1.0)
                                     : std::numeric_limits<double>::infinity();
        auto checkpoint = [&]() { solver.checkpoint(out / kCheckpointFile, record()); };
        auto progress = [&](bool finished) {
            if (!opts.on_progress) return;
            if (!solver.root()) return;
            opts.on_progress(detail::make_progress(solver.time(), time0, end_time, solver.steps() - steps_at_start, opts.max_steps,
                                                   std::size_t(spec.nx) * std::size_t(spec.ny), "cells",
                                                   std::chrono::duration<double>(clock::now() - t0).count(),
                                                   static_cast<int>(result.frames.size()), finished));
        };

        // The stretch from the last frame to an end that is not a frame time cuts its steps to land on
        // the end, off the path a longer run takes: the checkpoint that lets a finished run be extended
        // is the one taken where that stretch begins, and none is taken on it (as the particle run).
        bool checkpoints_held = false;
        auto hold_checkpoints_if_off_frame = [&]() {
            if (checkpoints_held || !lands_off_frame(time0, fps, next_frame, end_time)) return;
            if (opts.checkpoint_at_end || opts.checkpoint_every > 0.0) checkpoint();
            checkpoints_held = true;
        };
        if (!rec) write_frame(render_all);
        hold_checkpoints_if_off_frame();
        const double frame_dt = 1.0 / fps;
        result.status = "completed";
        result.exit_code = kExitOk;
        const double eps = 1e-9 * std::max(1.0, end_time);
        const double dt_min = 1e-9;
        while (solver.time() < end_time - eps && (opts.max_steps == 0 || solver.steps() - steps_at_start < opts.max_steps)) {
            const double target = std::min(time0 + next_frame * frame_dt, end_time);
            const double suggested = solver.suggest_dt();
            const bool underflow = suggested < dt_min;
            const double dt = landing_dt(suggested, solver.time(), target);
            const auto s0 = clock::now();
            const ShallowWaterStats st = solver.step(dt, exec);  // statistics of the whole grid
            step_seconds += std::chrono::duration<double>(clock::now() - s0).count();
            max_speed = std::max(max_speed, st.max_speed);
            max_depth = std::max(max_depth, st.max_depth);
            clamped += st.clamped;
            std::string problem;
            if (st.non_finite) problem = "a depth or velocity is not finite (NaN or infinite)";
            else if (st.halo_overrun)
                problem = fmt::format("{} cells traced back past their block's halo (a back-trace longer than the halo "
                                      "is wide: lower advection_step or the time step, or run on fewer processes)",
                                      st.halo_overrun);
            else if (underflow) problem = fmt::format("the time step fell below {:g} s", dt_min);
            if (!problem.empty()) {
                result.status = "diverged";
                result.exit_code = kExitDiverged;
                result.message = fmt::format("diverged at step {} (t = {:.6g} s): {}; the {} frame(s) written so far are valid",
                                             solver.steps(), solver.time(), problem, result.frames.size());
                break;
            }
            // Land exactly on the frame time (the last step was cut to reach it).
            if (solver.time() >= target - eps) {
                write_frame(render_all);
                ++next_frame;
                hold_checkpoints_if_off_frame();
            }
            if (solver.time() >= next_checkpoint - eps) {
                if (!checkpoints_held) checkpoint();
                next_checkpoint += opts.checkpoint_every;
            }
            if (solver.any(opts.stop && opts.stop->load())) {
                result.status = "interrupted";
                result.exit_code = kExitInterrupted;
                result.message = fmt::format("interrupted at step {} (t = {:.6g} s)", solver.steps(), solver.time());
                break;
            }
            const auto now = clock::now();
            if (std::chrono::duration<double>(now - last_report).count() >= opts.progress_interval) {
                last_report = now;
                progress(false);
            }
        }
        // Before the off-grid frame; a run that ended off the frame times has its checkpoint already.
        if (result.exit_code != kExitDiverged && opts.checkpoint_at_end && !checkpoints_held) checkpoint();
        if (result.exit_code != kExitDiverged && result.frames.back().time < solver.time()) write_frame(render_all);
        std::string picture;
        if (result.exit_code != kExitDiverged && solver.gathers()) {  // no whole grid anywhere: no picture
            picture = "last_frame.png";
            if (const auto* gp = solver.gather()) {
                if constexpr (has_bodies) render_grid_png(out / picture, *gp, 1024, &solver.bodies());
                else render_grid_png(out / picture, *gp);
            }
        }
        if (result.message.empty())
            result.message = fmt::format("completed {} steps to t = {:.6g} s", solver.steps() - steps0, solver.time());
        progress(true);

        const double wall = wall_before + std::chrono::duration<double>(clock::now() - t0).count();
        const std::uint64_t nsteps = solver.steps() - steps0;
        nlohmann::json j;
        j["scene"] = scene.name;
        j["scene_file"] = scene.source_path();  // absolute: the add-on reads it from anywhere
        j["method"] = scene.method;
        j["dimension"] = 2;
        j["cells"] = {spec.nx, spec.ny};
        j["dx"] = spec.dx;
        j["up_axis"] = name(up);  // of the water surface meshes (eddy/up_axis.hpp)
        if (pieces) j["pieces"] = true;
        j["steps"] = nsteps;
        j["simulated_time"] = solver.time();
        j["wall_time"] = wall;
        j["threads"] = opts.threads > 0 ? opts.threads : exec.threads();
        j["mean_ms_per_step"] = nsteps ? 1e3 * step_seconds / double(nsteps) : 0.0;
        j["cell_updates_per_second"] = step_seconds > 0 ? double(spec.nx) * double(spec.ny) * double(nsteps) / step_seconds : 0.0;
        j["max_speed"] = max_speed;
        j["max_depth"] = max_depth;
        j["clamped_face_updates"] = clamped;
        j["volume_initial"] = volume0;
        const auto* last = solver.gathers() ? solver.gather() : nullptr;
        const double volume_final = last ? last->volume() : solver.gathers() ? 0.0 : solver.volume();
        const double inflow = solver.total_inflow(), outflow = solver.total_outflow();
        j["volume_final"] = volume_final;
        j["volume_added"] = inflow;
        j["volume_outflow"] = outflow;
        const double expected = volume0 + inflow - outflow;
        j["volume_balance_relative_error"] = expected > 0 ? (volume_final - expected) / expected : 0.0;
        j["status"] = result.status;
        j["message"] = result.message;
        j["run_id"] = run_id;
        j["settings"] = to_json(solver.settings(), shallow_water_fields());
        solver.describe(j);  // processes: ranks, blocks, time in communication
        nlohmann::json frames = nlohmann::json::array();
        for (std::size_t k = 0; k < result.frames.size(); ++k) {
            const auto& f = result.frames[k];
            frames.push_back({{"index", f.index}, {"time", f.time}, {"files", f.files}, {"volume", volumes[k]}});
        }
        j["frames"] = frames;
        if (with_bodies) {
            // The bodies at the end: pose, velocity and the water's last loads (bodies.csv has every frame).
            nlohmann::json bj = nlohmann::json::array();
            if constexpr (has_bodies) {
                const auto& list = solver.bodies();
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
        result.summary = j;
        if (solver.root()) io::write_json(out / "summary.json", j);
        return result;
}

}  // namespace eddy::detail
