// eddy run [SCENE] and eddy run --resume DIR: a particle or shallow-water scene on this process or on
// every process mpirun started (src/distributed/); its frames, pictures, checkpoints and summary.json.
#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/checkpoint.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/scene.hpp"
#include "eddy/settings.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "eddy/up_axis.hpp"
#include "eddy/wcsph.hpp"

namespace eddy::cli {
namespace {

// Particle runs over several processes larger than this write their .vtp frames in pieces even without
// --pieces: gathered, a frame of 2^26 particles is about 2.5 GB on rank 0.
constexpr double kPiecesAboveParticles = double(1 << 26);

std::string run_help_footer() {
    std::string s = "\nSCENE is a bundled scene name (see `eddy scenes`) or a path to a .json scene file;\n"
                    "without one, the default scene (" + std::string(kDefaultScene) + ") runs.\n\n";
    s += "Exit codes: 0 done, 1 failure, 2 bad input (scene, flag, setting), 3 the simulation diverged,\n"
         "130 interrupted (Ctrl-C: the run stops after the current step, writes a last frame and the summary).\n\n";
    s += eddy::scene_keys_help();
    s += "\nMethod \"wcsph\" settings (scene key \"settings\", or --set settings.KEY=VALUE):\n";
    s += eddy::describe(eddy::wcsph_fields(), eddy::WcsphSettings{});
    s += "\nMethod \"dfsph\" settings (divergence-free SPH, Bender & Koschier 2017):\n";
    s += eddy::describe(eddy::dfsph_fields(), eddy::DfsphSettings{});
    s += "\nMethod \"pbf\" settings (Position Based Fluids):\n";
    s += eddy::describe(eddy::pbf_fields(), eddy::PbfSettings{});
    s += "\nMethod \"clavet\" settings (Clavet et al. 2005 viscoelastic fluid):\n";
    s += eddy::describe(eddy::clavet_fields(), eddy::ClavetSettings{});
    s += "\nMethod \"shallow_water\" settings (heightfield water over terrain; grid keys in docs/scenes.md):\n";
    s += eddy::describe(eddy::shallow_water_fields(), eddy::ShallowWaterSettings{});
    return s;
}

// What `eddy run` was asked, shared by the particle and the grid runs.
struct RunArgs {
    std::string out_dir;
    double until = 0.0, fps = 0.0;
    std::uint64_t steps = 0;
    std::vector<std::string> formats;
    bool render = false, quiet = false;
    double checkpoint_every = 0.0;  // simulated seconds; 0: a checkpoint at the end only
    std::string up = "y";           // the files' up axis (eddy/up_axis.hpp)
    bool pieces = false;            // one .vti/.vtp piece per process and a .pvti/.pvtp
    int rebalance_every = 50;       // particles under mpirun: steps between new cuts of the boxes
};

// The run options as `eddy run`'s flags: the messages of eddy::check_run_options in the CLI's words ("--until 2",
// "--format vti", "--mesh").
eddy::OptionSpelling cli_spelling() {
    eddy::OptionSpelling s;
    s.name = [](std::string_view key) {
        std::string flag = key == "formats" ? "format" : key == "mesh_attributes" ? "interpolate-attributes" : std::string(key);
        std::replace(flag.begin(), flag.end(), '_', '-');
        return "--" + flag;
    };
    s.given = [name = s.name](std::string_view key, std::string_view value) {
        return value == "true" ? name(key) : fmt::format("{} {}", name(key), value);
    };
    s.suggest = s.given;  // values alone as typed: "--up z: ...; allowed: y"
    return s;
}

// The run options both kinds of run take; progress through `printer`, Ctrl-C through g_stop.
eddy::RunOptions run_options(const RunArgs& a, const eddy::ExecContext& exec, ProgressPrinter& printer) {
    eddy::RunOptions opts;
    opts.spelling = cli_spelling();
    opts.out_dir = a.out_dir;
    opts.until = a.until;
    opts.max_steps = a.steps;
    opts.fps = a.fps;
    opts.formats = a.formats;
    opts.render = a.render;
    opts.threads = exec.threads();
    opts.checkpoint_every = a.checkpoint_every;
    opts.checkpoint_at_end = true;  // any run can be taken further with --resume
    opts.up = eddy::parse_up_axis(a.up, "--up");
    opts.pieces = a.pieces;
    opts.rebalance_every = a.rebalance_every;
    opts.stop = &g_stop;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    printer.tty = isatty(STDERR_FILENO) != 0;
    printer.quiet = a.quiet;
    opts.on_progress = std::ref(printer);
    // Warnings during the run (particles that left every container, removed): one line on stderr, on
    // a line of its own after the progress line.
    opts.on_warning = [tty = printer.tty](const std::string& w) { std::fprintf(stderr, "%seddy: warning: %s\n", tty ? "\n" : "", w.c_str()); };
    return opts;
}

// The last line of a run and its exit code.
int report(const eddy::RunResult& r, const eddy::Scene& scene, const RunArgs& a) {
    if (r.exit_code == eddy::kExitInterrupted) {
        std::fprintf(stderr, "eddy: %s; %zu frames and the summary are in %s\n", r.message.c_str(), r.frames.size(),
                     a.out_dir.c_str());
        return r.exit_code;
    }
    if (r.exit_code != eddy::kExitOk) {
        std::fprintf(stderr, "eddy: error: %s: %s\n", scene.where().c_str(), r.message.c_str());
        return r.exit_code;
    }
    if (!a.quiet)
        std::fprintf(stderr, "eddy: %s; %zu frames, summary in %s/summary.json\n", r.message.c_str(), r.frames.size(),
                     a.out_dir.c_str());
    return eddy::kExitOk;
}

// A run on this process (`alone`), or on every process mpirun started (`together`, src/distributed/).
template <class Sim, class Together>
eddy::RunResult run_here(Sim& sim, const eddy::RunOptions& opts, const eddy::ExecContext& exec, [[maybe_unused]] Together&& together) {
#ifdef EDDY_HAVE_MPI
    if (g_procs.size > 1) {
        g_procs.running_together = true;
        try {
            eddy::RunResult r = together(sim, opts, exec, *g_procs.comm);
            g_procs.running_together = false;
            return r;
        } catch (const eddy::dist::AgreedError&) {
            g_procs.running_together = false;  // every process stops here with the same message
            throw;
        }
    }
#endif
    return eddy::run(sim, opts, exec);
}

#ifdef EDDY_HAVE_MPI
#define EDDY_TOGETHER(fn) [](auto& s, const auto& o, const auto& e, auto& c) { return fn(s, o, e, c); }
#else
#define EDDY_TOGETHER(fn) 0
#endif

eddy::RunResult run_grid_here(eddy::ShallowWaterSimulation& sim, const eddy::RunOptions& opts, const eddy::ExecContext& exec) {
    return run_here(sim, opts, exec, EDDY_TOGETHER(eddy::dist::run_shallow_water));
}

eddy::RunResult run_particles_here(eddy::Simulation& sim, const eddy::RunOptions& opts, const eddy::ExecContext& exec) {
    return run_here(sim, opts, exec, EDDY_TOGETHER(eddy::dist::run_particles));
}

// `eddy run` for a shallow-water scene: the same options, output and exit codes as for particles.
int run_grid(const eddy::Scene& scene, const eddy::ExecContext& exec, const RunArgs& a, const eddy::MemoryBudget& budget) {
    ProgressPrinter printer;
    auto banner = [&](const eddy::ShallowWaterScene& spec) {
        if (!a.quiet)
            std::fprintf(stderr, "eddy: %s (shallow_water, %s), %d x %d cells of %g m, %d threads%s -> %s\n", scene.name.c_str(),
                         spec.settings.precision.c_str(), spec.nx, spec.ny, spec.dx, exec.threads(),
                         g_procs.size > 1 ? fmt::format(" x {} processes", g_procs.size).c_str() : "", a.out_dir.c_str());
    };
#ifdef EDDY_HAVE_MPI
    if (g_procs.size > 1) {
        // Each process builds its block of the grid only (the root also the whole, to gather frames into).
        eddy::RunOptions opts = run_options(a, exec, printer);
        const eddy::ShallowWaterScene spec = eddy::parse_shallow_water(scene);
        banner(spec);
        if (!opts.pieces && double(spec.nx) * double(spec.ny) > eddy::dist::kPiecesAboveCells) {
            opts.pieces = true;
            if (!a.quiet)
                std::fprintf(stderr, "eddy: %d x %d cells: .vti frames are written in pieces, one per process, with a .pvti "
                                     "listing them (as --pieces)\n", spec.nx, spec.ny);
        }
        g_procs.running_together = true;
        try {
            const eddy::RunResult r = eddy::dist::run_shallow_water(scene, budget, a.formats, opts, exec, *g_procs.comm);
            g_procs.running_together = false;
            return report(r, scene, a);
        } catch (const eddy::dist::AgreedError&) {
            g_procs.running_together = false;  // every process stops here with the same message
            throw;
        }
    }
#endif
    eddy::ShallowWaterSimulation sim = eddy::make_shallow_water(scene, budget, a.formats);
    const eddy::RunOptions opts = run_options(a, exec, printer);
    banner(sim.spec);
    return report(run_grid_here(sim, opts, exec), scene, a);
}

// --resume of a shallow-water run written in pieces by several processes: each reads its own.
int resume_grid_pieces([[maybe_unused]] const eddy::CheckpointFile& ck, [[maybe_unused]] const RunCommand& c,
                       [[maybe_unused]] const eddy::MemoryBudget& budget, [[maybe_unused]] const RunArgs& args,
                       [[maybe_unused]] const eddy::ExecContext& exec) {
#ifdef EDDY_HAVE_MPI
    // On any number of processes, one included.
    ProgressPrinter printer;
    eddy::RunOptions opts = run_options(args, exec, printer);
    if (!c.quiet)
        std::fprintf(stderr, "eddy: resuming %s (shallow_water, in pieces) at t = %.6g s on %d processes -> %s\n",
                     ck.meta.value("scene_source", std::string("?")).c_str(), ck.meta.value("time", 0.0),
                     g_procs.size, c.resume_dir.c_str());
    g_procs.running_together = true;
    try {
        const eddy::RunResult r = eddy::dist::resume_shallow_water_pieces(ck, budget, opts, exec, *g_procs.comm);
        g_procs.running_together = false;
        const eddy::Scene scene = eddy::parse_scene(ck.meta["scene"], ck.meta["scene_source"].get<std::string>());
        return report(r, scene, args);
    } catch (const eddy::dist::AgreedError&) {
        g_procs.running_together = false;
        throw;
    }
#else
    throw eddy::InputError(fmt::format("--resume {}: written in pieces by {} processes with mpirun; this eddy "
                                       "was built without MPI (see docs/distributed.md)", c.resume_dir,
                                       ck.meta.value("ranks", 0)));
#endif
}

void resume_banner(const eddy::Simulation& sim, const RunCommand& c, const eddy::ExecContext& exec, bool share);

// --resume: everything but the end, the threads and the output's verbosity is the original run's.
int resume_run(const RunCommand& c, std::string& doing) {
    for (const char* flag : {"scene", "--out", "--fps", "--format", "--set", "--render", "--pieces", "--mesh", "--mesh-format", "--anisotropic",
                             "--max-particles", "--up", "--interpolate-attributes", "--wall-pressure", "--mesh-decimate-error", "--mesh-decimate-ratio", "--whitewater",
                             "--whitewater-substeps", "--ww-set"})
        if (c.cmd->count(flag))
            throw eddy::InputError(fmt::format("--resume {}: {} cannot change a run being resumed; allowed with "
                                               "--resume: --until, --steps, --threads, --checkpoint-every, --rebalance-every, --max-memory, --quiet",
                                               c.resume_dir, std::string(flag) == "scene" ? "a scene" : flag));
    doing = fmt::format("resuming {}", c.resume_dir);
    eddy::MemoryBudget budget = memory_budget(c.max_memory);
    budget.resumed = true;  // the running guard's estimate too: no start, no whole WCSPH fluid (restore_simulation)
    eddy::ExecContext exec(threads_here(c.threads));
    nlohmann::json record;
    const eddy::CheckpointFile ck = eddy::read_checkpoint_file(std::filesystem::path(c.resume_dir) / eddy::kCheckpointFile);
    const RunArgs args{c.resume_dir, c.until, 0.0, c.steps, {}, false, c.quiet, c.checkpoint_every, "y", false, c.rebalance_every};
    ProgressPrinter printer;
    if (ck.meta.value("kind", "") == "grid_pieces") return resume_grid_pieces(ck, c, budget, args, exec);
    if (ck.meta.value("kind", "") == "grid") {
        eddy::ShallowWaterSimulation grid = eddy::restore_shallow_water(ck, record, budget);
        eddy::RunOptions opts = run_options(args, exec, printer);
        opts.resume = &record;
        if (!c.quiet)
            std::fprintf(stderr, "eddy: resuming %s (shallow_water) at t = %.6g s -> %s\n", grid.scene.name.c_str(),
                         std::visit([](const auto& s) { return s.time(); }, grid.solver), c.resume_dir.c_str());
        return report(run_grid_here(grid, opts, exec), grid.scene, args);
    }
    // Over several processes (issue 44) each builds and keeps its share of the particles (of pieces, reads only it).
    const bool share = g_procs.size > 1;
    eddy::Simulation sim = eddy::restore_simulation(ck, exec, record, budget, {share ? g_procs.rank : 0, share ? g_procs.size : 1});
    const eddy::Scene scene = std::visit([](const auto& s) { return s.scene; }, sim);
    eddy::RunOptions opts = run_options(args, exec, printer);
    opts.resume = &record;
    opts.budget = budget;  // the running memory guard
    opts.fluid_is_share = share;
    if (!c.quiet) resume_banner(sim, c, exec, share);
    return report(run_particles_here(sim, opts, exec), scene, args);
}

void resume_banner(const eddy::Simulation& sim, const RunCommand& c, const eddy::ExecContext& exec, bool share) {
    std::visit(
        [&](const auto& s) {
            const std::string count = share ? "a share of the checkpoint's particles" : fmt::format("{} particles", s.fluid.size());
            std::fprintf(stderr, "eddy: resuming %s (%s, %dD) at t = %.6g s, step %llu, %s, %d threads -> %s\n",
                         s.scene.name.c_str(), s.scene.method.c_str(), s.scene.dimension, s.time,
                         static_cast<unsigned long long>(s.steps), count.c_str(), exec.threads(), c.resume_dir.c_str());
        },
        sim);
}

// The particle run's own flags: surface meshes, wall pressure, whitewater.
void set_particle_outputs(const RunCommand& c, eddy::RunOptions& opts) {
    opts.mesh = c.run_mesh;
    if ((c.run_decimate_error > 0.0f || c.run_decimate_ratio > 0.0f) && !c.run_mesh)
        throw eddy::InputError("--mesh-decimate-error, --mesh-decimate-ratio: decimate the surface meshes of --mesh; "
                               "allowed: with --mesh");
    opts.mesh_settings.decimate_error = c.run_decimate_error;
    opts.mesh_settings.decimate_ratio = c.run_decimate_ratio;
    if (c.run_anisotropic && !c.run_mesh)
        throw eddy::InputError("--anisotropic: shapes the surface meshes of --mesh; allowed: with --mesh");
    opts.mesh_settings.anisotropic = c.run_anisotropic;
    opts.mesh_format = c.run_mesh_format;
    opts.mesh_attributes = c.run_attributes;
    opts.wall_pressure = c.run_wall_pressure;
    if (!c.run_whitewater && (c.cmd->count("--whitewater-substeps") || !c.run_ww_sets.empty()))
        throw eddy::InputError("--whitewater-substeps, --ww-set: settings of --whitewater; allowed: with --whitewater");
    opts.whitewater = c.run_whitewater;
    opts.whitewater_substeps = c.run_ww_substeps;
    if (c.run_whitewater) opts.whitewater_settings = eddy::whitewater_settings_from(c.run_ww_sets, "--ww-set");
}

// eddy run [SCENE]: the scene read (and its --set keys), then run as particles or as a grid.
int run_scene(const RunCommand& c, std::string& doing) {
    const eddy::MemoryBudget budget = memory_budget(c.max_memory, c.run_pieces);  // a bad size before the scene is read
    const auto file = eddy::resolve_scene(c.scene_arg.empty() ? kDefaultScene : c.scene_arg);
    doing = fmt::format("reading {}", file.string());
    const eddy::Scene scene = eddy::load_scene(file, c.sets, budget);  // models, particle files: checked before read
    doing = fmt::format("running {}", scene.where());
    for (const auto& w : scene.warnings) std::fprintf(stderr, "eddy: %s\n", w.c_str());
    eddy::ExecContext exec(threads_here(c.threads));
    const RunArgs args{c.out_dir,          c.until, c.fps,    c.steps,      c.formats,        c.render, c.quiet,
                       c.checkpoint_every, c.run_up, c.run_pieces, c.rebalance_every};
    ProgressPrinter printer;
    eddy::RunOptions opts = run_options(args, exec, printer);
    set_particle_outputs(c, opts);
    eddy::check_run_options(scene, 0.0, opts);  // every flag, as the library checks them, before any work
    if (scene.method == "shallow_water") return run_grid(scene, exec, args, budget);
    opts.fluid_is_share = g_procs.size > 1 && !eddy::fluid_built_whole(scene);  // each builds its share (issue 44)
    eddy::Simulation sim = eddy::make_simulation(scene, c.max_particles, exec, budget, {g_procs.rank, g_procs.size});
    opts.budget = budget;
    const std::size_t particles = std::visit([](const auto& s) { return std::size_t(s.fluid.next_id); }, sim);
    if (g_procs.size > 1 && !opts.pieces && double(particles) > kPiecesAboveParticles) {
        opts.pieces = true;
        if (!c.quiet)
            std::fprintf(stderr, "eddy: %zu particles: .vtp frames in pieces, one per process (a .pvtp lists them)\n",
                         particles);
    }
    if (!c.quiet)
        std::fprintf(stderr, "eddy: %s (%s, %dD), %zu particles, %d threads%s -> %s\n", scene.name.c_str(),
                     scene.method.c_str(), scene.dimension, particles, exec.threads(),
                     g_procs.size > 1 ? fmt::format(" x {} processes", g_procs.size).c_str() : "", c.out_dir.c_str());
    return report(run_particles_here(sim, opts, exec), scene, args);
}

}  // namespace

void add_run_command(CLI::App& app, RunCommand& c) {
    auto* run_cmd = c.cmd = app.add_subcommand("run", "Run a scene and write its frames, pictures and summary.json");
    run_cmd->add_option("scene", c.scene_arg, "Bundled scene name or scene file (default: " + std::string(kDefaultScene) + ")");
    run_cmd->add_option("--out,-o", c.out_dir, "Output directory (frames/, summary.json, last_frame.png)")
        ->capture_default_str()
        ->check(kNonEmptyPath);
    run_cmd->add_option("--until", c.until, "Stop at this simulated time (s, > 0, at most 1e9); default: the scene's duration")
        ->check(number_check(0, true, eddy::kMaxDuration, false, "a time > 0 and <= 1e9 (s)"));
    run_cmd->add_option("--steps", c.steps, "Stop after this many steps")
        ->check(whole_check(1, LLONG_MAX, "a whole number >= 1"));
    run_cmd->add_option("--threads,-j", c.threads, "Worker threads, at most 4096 (default and 0: all cores); results do not depend on it")
        ->check(kThreadsCheck);
    run_cmd->add_option("--fps", c.fps,
                        "Frames per simulated second (> 0, at most 1e6: a frame at least every 1 us); default: the "
                        "scene's output.fps")
        ->check(number_check(0, true, eddy::kMaxFps, false, "frames per second > 0 and <= 1e6 (a frame at least every 1 us)"));
    run_cmd->add_option("--format", c.formats,
                        "Frame formats, comma separated: particles vtk (.vtp), csv, ply; shallow water vti, csv, obj, ply; "
                        "default: the scene's")
        ->delimiter(',')
        ->check(CLI::IsMember({"vtk", "csv", "ply", "vti", "obj"}));
    run_cmd->add_option("--set", c.sets, "Override a scene key: KEY.PATH=VALUE, e.g. settings.cfl=0.3 (repeatable)");
    run_cmd->add_flag("--render", c.render, "Write a PNG picture of every frame (the last frame is always rendered)");
    run_cmd->add_option("--rebalance-every", c.rebalance_every,
                        "Particles under mpirun: steps between new cuts of the processes' boxes at equal particle "
                        "counts (docs/distributed.md)")
        ->capture_default_str()
        ->check(whole_check(1, 1000000000LL, "a whole number from 1 to 1000000000"));
    run_cmd->add_flag("--pieces", c.run_pieces,
                      "Write each frame as one piece per process and a parallel VTK file listing them, which ParaView "
                      "opens as one data set: shallow water .vti (frames/grid_NNNNN_pRRRR.vti, .pvti), particles .vtp "
                      "(frames/particles_NNNNN_pRRRR.vtp, .pvtp; eddy mesh reads it); for runs too large to gather on "
                      "one process (mpirun; docs/distributed.md)");
    run_cmd->add_option("--max-particles", c.max_particles, "Refuse scenes with more fluid particles than this")
        ->capture_default_str()
        ->check(whole_check(1, 4294967295LL, "a whole number from 1 to 4294967295 (particle ids are 32-bit)"));
    run_cmd->add_option("--max-memory", c.max_memory, kMaxMemoryHelp);
    run_cmd->add_flag("--quiet,-q", c.quiet, "No progress output");
    run_cmd->footer(run_help_footer());
    run_cmd->add_flag("--mesh", c.run_mesh,
                      "Also write a surface mesh per frame: frames/surface_NNNNN.obj (see eddy mesh); with the vtk "
                      "format also surface_NNNNN.vtp, listed with the particles' times in surface.pvd (ParaView)");
    run_cmd->add_flag("--anisotropic", c.run_anisotropic,
                      "With --mesh: anisotropic kernels (Yu & Turk 2013): flat surfaces flat, thin sheets kept (eddy mesh "
                      "--anisotropic)");
    run_cmd->add_option("--mesh-format", c.run_mesh_format, "Surface mesh format with --mesh: obj, ply, vtp")
        ->check(CLI::IsMember({"obj", "ply", "vtp"}))
        ->capture_default_str();
    run_cmd->add_option("--mesh-decimate-error", c.run_decimate_error,
                        "With --mesh: decimate the surfaces, moving them at most this many voxels (as eddy mesh "
                        "--decimate-error; 0: no bound)")
        ->check(number_check(0, false, 1000, false, "a distance from 0 to 1000 voxels"));
    run_cmd->add_option("--mesh-decimate-ratio", c.run_decimate_ratio,
                        "With --mesh: decimate the surfaces to at most this fraction of their triangles (as eddy mesh "
                        "--decimate-ratio; 0: as few as --mesh-decimate-error allows)")
        ->check(number_check(0, false, 1, false, "a fraction from 0 to 1"));
    run_cmd->add_flag("--wall-pressure", c.run_wall_pressure,
                      "Particle scenes: write the walls every frame (frames/walls_NNNNN.vtp, walls.pvd) with a point "
                      "array 'pressure', the fluid's pressure on each wall particle (Pa; N/m in 2D), extrapolated from "
                      "the fluid within the kernel's support (Adami et al. 2012); as the scene's output.wall_pressure");
    run_cmd->add_flag("--whitewater", c.run_whitewater,
                      "Particle scenes: spray, foam and bubbles (Ihmsen et al. 2012) stepped with the fluid and written "
                      "every frame: frames/whitewater_NNNNN.vtp/.ply (point array 'type': 0 spray, 1 foam, 2 bubble), "
                      "whitewater.pvd, whitewater.csv (docs/whitewater.md); kept in checkpoints: --resume carries it on");
    run_cmd->add_option("--whitewater-substeps", c.run_ww_substeps,
                        "With --whitewater: whitewater steps per frame interval (0: after every fluid step)")
        ->capture_default_str()
        ->check(whole_check(0, 100000, "a whole number from 0 to 100000"));
    run_cmd->add_option("--ww-set", c.run_ww_sets, "With --whitewater: a whitewater setting KEY=VALUE (eddy whitewater --help)");
    run_cmd->add_option("--interpolate-attributes", c.run_attributes,
                        "With --mesh --mesh-format ply or vtp: particle fields carried onto the surface's vertices, comma "
                        "separated: velocity, density, pressure (motion blur, foam)")
        ->delimiter(',')
        ->check(CLI::IsMember({"velocity", "density", "pressure"}));
    run_cmd->add_option("--up", c.run_up,
                        "Up axis of every geometry file written (particles, walls, surfaces): y (OBJ, Houdini, "
                        "ParaView; Blender's OBJ importer) or z (Blender's PLY importer and Python); 3D only")
        ->check(CLI::IsMember({"y", "z"}))
        ->capture_default_str();
    run_cmd->add_option("--checkpoint-every", c.checkpoint_every,
                        "Also write OUT/checkpoint.eddy every this many simulated seconds (every run writes one at "
                        "its end); a killed run continues from the last one with --resume")
        ->check(number_check(0, false, eddy::kMaxDuration, false, "a time >= 0 and <= 1e9 (s); 0: at the end only"));
    run_cmd->add_option("--resume", c.resume_dir,
                        "Continue the run whose output folder is DIR from its checkpoint.eddy, in that folder, bit for "
                        "bit as if it had never stopped; --until takes it further than it was going")
        ->check(kNonEmptyPath);  // --resume "" (an unset variable) must not start the default scene in ./out
}

int run_command(const RunCommand& c, std::string& doing) {
    return c.resume_dir.empty() ? run_scene(c, doing) : resume_run(c, doing);
}

}  // namespace eddy::cli
