// eddy: the command line. `eddy scenes`, `eddy run [SCENE] ...`.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <climits>
#include <cmath>
#include <new>
#include <optional>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#ifdef EDDY_HAVE_MPI
#include "eddy/distributed.hpp"
#endif
#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/progress.hpp"
#include "eddy/scene.hpp"
#include "eddy/settings.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "eddy/surface.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/wcsph.hpp"

namespace {

// The processes of this run: one, or those mpirun started (src/distributed/). Only rank 0 talks.
struct Processes {
    int rank = 0, size = 1;
    bool running_together = false;  // inside a distributed run: a failure there may be one process's only
#ifdef EDDY_HAVE_MPI
    eddy::dist::Comm* comm = nullptr;
#endif
};
Processes g_procs;  // set once in main, before anything runs


// Set by SIGINT/SIGTERM; the run loop stops after the current step and writes its summary.
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

constexpr const char* kDefaultScene = "dam_break_3d";
// Particle runs over several processes larger than this write their .vtp frames in pieces even without
// --pieces: gathered, a frame of 2^26 particles is about 2.5 GB on rank 0.
constexpr double kPiecesAboveParticles = double(1 << 26);

// Checks of the number flags, run by CLI11 on the text before it converts it: "abc", "nan", "inf",
// "-1" and "1e999" each get one line naming the flag and what is allowed. (CLI11's own ranges print
// DBL_MAX in the message, and NaN passes them.) CLI11 prefixes the flag: "--fps: 'abc' is not ...".
// `key`: the settings key the flag sets (eddy mesh: surface_fields), named as in the library's messages.
CLI::Validator number_check(double lo, bool lo_open, double hi, bool hi_open, std::string allowed, std::string key = {}) {
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            const char* begin = text.c_str();
            char* end = nullptr;
            const double d = std::strtod(begin, &end);
            const bool number = !text.empty() && end == begin + text.size() && !std::isspace(static_cast<unsigned char>(text[0]));
            if (number && std::isfinite(d) && (lo_open ? d > lo : d >= lo) && (hi_open ? d < hi : d <= hi)) return {};
            if (!key.empty()) return fmt::format("key '{}' = {}: allowed: {}", key, eddy::text_excerpt(text, 40), allowed);
            return fmt::format("'{}' is not allowed; allowed: {}", eddy::text_excerpt(text, 40), allowed);
        },
        "");
}

CLI::Validator whole_check(long long lo, long long hi, std::string allowed) {
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            long long v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc() && end == text.data() + text.size() && v >= lo && v <= hi) return {};
            return fmt::format("'{}' is not allowed; allowed: {}", eddy::text_excerpt(text, 40), allowed);
        },
        "");
}

// --threads: the range ExecContext accepts (0 is every core, as without the flag).
const CLI::Validator kThreadsCheck =
    whole_check(0, eddy::kMaxThreads, fmt::format("0 (every core) or a whole number from 1 to {}", eddy::kMaxThreads));

// --out '': no file or folder has an empty name.
const CLI::Validator kNonEmptyPath(
    [](std::string& text) -> std::string { return text.empty() ? "'' is not allowed; allowed: a path" : ""; }, "");

// What main was doing, for a failure that is not an InputError (those name their file and key).
std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return eddy::text_excerpt(s, 300);
}

// Progress on a terminal: one line redrawn in place. Piped: a plain line every 10% of the run. The text
// is the library's (eddy/progress.hpp), as Python's Simulation.run writes it.
struct ProgressPrinter {
    bool tty = false;
    bool quiet = false;
    std::optional<eddy::ProgressText> text;

    void operator()(const eddy::Progress& p) {
        if (quiet) return;
        if (!text) text.emplace(tty);
        const std::string s = (*text)(p);
        if (s.empty()) return;
        std::fputs(s.c_str(), stderr);
        std::fflush(stderr);
    }
};

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

// The run options both kinds of run take; progress through `printer`, Ctrl-C through g_stop.
eddy::RunOptions run_options(const RunArgs& a, const eddy::ExecContext& exec, ProgressPrinter& printer) {
    eddy::RunOptions opts;
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

// --threads, or by default this machine's cores shared by the processes mpirun started on it.
int threads_here(int threads) {
    if (threads > 0 || g_procs.size == 1) return threads;
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int here = local ? std::max(1, std::atoi(local)) : 1;
    return std::max(1, int(std::thread::hardware_concurrency()) / here);
}

// `eddy run` for a shallow-water scene: the same options, output and exit codes as for particles.
int run_grid(const eddy::Scene& scene, const eddy::ExecContext& exec, const RunArgs& a, const eddy::MemoryBudget& budget) {
    for (const auto& f : a.formats)
        if (f == "vtk")
            throw eddy::InputError(fmt::format("--format vtk: {} is a grid; allowed: vti, csv, obj, ply", scene.where()));
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

// --max-memory as given (a size), else the machine's: 90% of the memory available now.
eddy::MemoryBudget memory_budget(const std::string& max_memory) {
    if (max_memory.empty()) return eddy::machine_memory_budget();
    eddy::MemoryBudget b;
    b.limit_bytes = eddy::parse_memory_size(max_memory, "--max-memory");
    b.origin = "--max-memory";
    return b;
}

constexpr const char* kMaxMemoryHelp =
    "Refuse requests estimated to need more memory than this (particles, neighbour lists, springs, grid cells, "
    "voxels, images): bytes or 500M, 4G, 1.5GB, 512MiB; default: 90% of the available memory";

// Replaces this process with eddy-view (next to this executable), passing the arguments on.
int exec_viewer(const std::vector<std::string>& args) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path viewer = (ec ? std::filesystem::path(".") : self.parent_path()) / "eddy-view";
    if (access(viewer.c_str(), X_OK) != 0) {
        std::fprintf(stderr,
                     "eddy: error: the viewer was not built: %s not found (it needs GLFW, libepoxy and Dear ImGui; "
                     "configure with -DEDDY_BUILD_VIEWER=ON, see docs/viewer.md)\n",
                     viewer.c_str());
        return eddy::kExitFailure;
    }
    std::vector<std::string> owned{"eddy-view"};
    owned.insert(owned.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : owned) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(viewer.c_str(), argv.data());
    std::fprintf(stderr, "eddy: error: cannot start %s: %s\n", viewer.c_str(), std::strerror(errno));
    return eddy::kExitFailure;
}

}  // namespace

int run_main(int argc, char** argv);

int main(int argc, char** argv) {
#ifdef EDDY_HAVE_MPI
    eddy::dist::MpiSession mpi(argc, argv);
    g_procs.rank = mpi.world().rank();
    g_procs.size = mpi.world().size();
    g_procs.comm = &mpi.world();
#else
    if (const char* n = std::getenv("OMPI_COMM_WORLD_SIZE"); n && std::atoi(n) > 1) {
        if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK"); r && std::atoi(r) == 0)
            std::fprintf(stderr, "eddy: error: this eddy was built without MPI (Open MPI's libopenmpi-dev was not found when "
                                 "it was configured); run it without mpirun, or install it and rebuild\n");
        return eddy::kExitBadInput;
    }
#endif
    if (g_procs.rank != 0) {
        // Rank 0 speaks for every process: the others write no messages.
        if (!std::freopen("/dev/null", "w", stderr) || !std::freopen("/dev/null", "w", stdout)) return eddy::kExitFailure;
    }
    const int code = run_main(argc, argv);
#ifdef EDDY_HAVE_MPI
    // A failure inside a distributed run may be one process's alone (a file the root could not write):
    // the others would wait for it forever, so it stops them all; mpirun exits with this code.
    if (g_procs.running_together && g_procs.size > 1) mpi.abort(code == eddy::kExitOk ? eddy::kExitFailure : code);
#endif
    return code;
}

int run_main(int argc, char** argv) {
    CLI::App app{"eddy: fluid simulation toolkit (WCSPH, DFSPH, PBF, Clavet in 2D and 3D; shallow water over terrain)", "eddy"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "eddy 0.1.0");

    auto* scenes_cmd = app.add_subcommand("scenes", "List the bundled scenes with a one-line description each");

    // `eddy view ...` execs eddy-view from this executable's folder: the CLI itself never links OpenGL.
    auto* view_cmd = app.add_subcommand("view", "Open the interactive viewer (eddy view --help for its options)");
    view_cmd->prefix_command();
    view_cmd->set_help_flag();  // --help goes to eddy-view

    auto* run_cmd = app.add_subcommand("run", "Run a scene and write its frames, pictures and summary.json");
    std::string scene_arg;
    std::string out_dir = "out";
    double until = 0.0, fps = 0.0;
    std::uint64_t steps = 0;
    int threads = 0;
    std::vector<std::string> formats, sets;
    bool render = false, quiet = false;
    std::size_t max_particles = 5'000'000;
    run_cmd->add_option("scene", scene_arg, "Bundled scene name or scene file (default: " + std::string(kDefaultScene) + ")");
    run_cmd->add_option("--out,-o", out_dir, "Output directory (frames/, summary.json, last_frame.png)")
        ->capture_default_str()
        ->check(kNonEmptyPath);
    run_cmd->add_option("--until", until, "Stop at this simulated time (s, > 0, at most 1e9); default: the scene's duration")
        ->check(number_check(0, true, eddy::kMaxDuration, false, "a time > 0 and <= 1e9 (s)"));
    run_cmd->add_option("--steps", steps, "Stop after this many steps")
        ->check(whole_check(1, LLONG_MAX, "a whole number >= 1"));
    run_cmd->add_option("--threads,-j", threads, "Worker threads, at most 4096 (default and 0: all cores); results do not depend on it")
        ->check(kThreadsCheck);
    run_cmd->add_option("--fps", fps,
                        "Frames per simulated second (> 0, at most 1e6: a frame at least every 1 us); default: the "
                        "scene's output.fps")
        ->check(number_check(0, true, eddy::kMaxFps, false, "frames per second > 0 and <= 1e6 (a frame at least every 1 us)"));
    run_cmd->add_option("--format", formats,
                        "Frame formats, comma separated: particles vtk (.vtp), csv, ply; shallow water vti, csv, obj, ply; "
                        "default: the scene's")
        ->delimiter(',')
        ->check(CLI::IsMember({"vtk", "csv", "ply", "vti", "obj"}));
    run_cmd->add_option("--set", sets, "Override a scene key: KEY.PATH=VALUE, e.g. settings.cfl=0.3 (repeatable)");
    run_cmd->add_flag("--render", render, "Write a PNG picture of every frame (the last frame is always rendered)");
    int rebalance_every = 50;
    run_cmd->add_option("--rebalance-every", rebalance_every,
                        "Particles under mpirun: steps between new cuts of the processes' boxes at equal particle "
                        "counts (docs/distributed.md)")
        ->capture_default_str()
        ->check(whole_check(1, 1000000000LL, "a whole number from 1 to 1000000000"));
    bool run_pieces = false;
    run_cmd->add_flag("--pieces", run_pieces,
                      "Write each frame as one piece per process and a parallel VTK file listing them, which ParaView "
                      "opens as one data set: shallow water .vti (frames/grid_NNNNN_pRRRR.vti, .pvti), particles .vtp "
                      "(frames/particles_NNNNN_pRRRR.vtp, .pvtp; eddy mesh reads it); for runs too large to gather on "
                      "one process (mpirun; docs/distributed.md)");
    run_cmd->add_option("--max-particles", max_particles, "Refuse scenes with more fluid particles than this")
        ->capture_default_str()
        ->check(whole_check(1, 4294967295LL, "a whole number from 1 to 4294967295 (particle ids are 32-bit)"));
    std::string max_memory;
    run_cmd->add_option("--max-memory", max_memory, kMaxMemoryHelp);
    run_cmd->add_flag("--quiet,-q", quiet, "No progress output");
    run_cmd->footer(run_help_footer());
    bool run_mesh = false;
    run_cmd->add_flag("--mesh", run_mesh,
                      "Also write a surface mesh per frame: frames/surface_NNNNN.obj (see eddy mesh); with the vtk "
                      "format also surface_NNNNN.vtp, listed with the particles' times in surface.pvd (ParaView)");
    bool run_anisotropic = false;
    run_cmd->add_flag("--anisotropic", run_anisotropic,
                      "With --mesh: anisotropic kernels (Yu & Turk 2013): flat surfaces flat, thin sheets kept (eddy mesh "
                      "--anisotropic)");
    std::string run_mesh_format = "obj";
    run_cmd->add_option("--mesh-format", run_mesh_format, "Surface mesh format with --mesh: obj, ply, vtp")
        ->check(CLI::IsMember({"obj", "ply", "vtp"}))
        ->capture_default_str();
    float run_decimate_error = 0.0f, run_decimate_ratio = 0.0f;
    run_cmd->add_option("--mesh-decimate-error", run_decimate_error,
                        "With --mesh: decimate the surfaces, moving them at most this many voxels (as eddy mesh "
                        "--decimate-error; 0: no bound)")
        ->check(number_check(0, false, 1000, false, "a distance from 0 to 1000 voxels"));
    run_cmd->add_option("--mesh-decimate-ratio", run_decimate_ratio,
                        "With --mesh: decimate the surfaces to at most this fraction of their triangles (as eddy mesh "
                        "--decimate-ratio; 0: as few as --mesh-decimate-error allows)")
        ->check(number_check(0, false, 1, false, "a fraction from 0 to 1"));
    bool run_wall_pressure = false;
    run_cmd->add_flag("--wall-pressure", run_wall_pressure,
                      "Particle scenes: write the walls every frame (frames/walls_NNNNN.vtp, walls.pvd) with a point "
                      "array 'pressure', the fluid's pressure on each wall particle (Pa; N/m in 2D), extrapolated from "
                      "the fluid within the kernel's support (Adami et al. 2012); as the scene's output.wall_pressure");
    bool run_whitewater = false;
    run_cmd->add_flag("--whitewater", run_whitewater,
                      "Particle scenes: spray, foam and bubbles (Ihmsen et al. 2012) stepped with the fluid and written "
                      "every frame: frames/whitewater_NNNNN.vtp/.ply (point array 'type': 0 spray, 1 foam, 2 bubble), "
                      "whitewater.pvd, whitewater.csv (docs/whitewater.md); kept in checkpoints: --resume carries it on");
    int run_ww_substeps = 10;
    run_cmd->add_option("--whitewater-substeps", run_ww_substeps,
                        "With --whitewater: whitewater steps per frame interval (0: after every fluid step)")
        ->capture_default_str()
        ->check(whole_check(0, 100000, "a whole number from 0 to 100000"));
    std::vector<std::string> run_ww_sets;
    run_cmd->add_option("--ww-set", run_ww_sets, "With --whitewater: a whitewater setting KEY=VALUE (eddy whitewater --help)");
    std::vector<std::string> run_attributes;
    run_cmd->add_option("--interpolate-attributes", run_attributes,
                        "With --mesh --mesh-format ply or vtp: particle fields carried onto the surface's vertices, comma "
                        "separated: velocity, density, pressure (motion blur, foam)")
        ->delimiter(',')
        ->check(CLI::IsMember({"velocity", "density", "pressure"}));
    std::string run_up = "y";
    run_cmd->add_option("--up", run_up,
                        "Up axis of every geometry file written (particles, walls, surfaces): y (OBJ, Houdini, "
                        "ParaView; Blender's OBJ importer) or z (Blender's PLY importer and Python); 3D only")
        ->check(CLI::IsMember({"y", "z"}))
        ->capture_default_str();
    double checkpoint_every = 0.0;
    run_cmd->add_option("--checkpoint-every", checkpoint_every,
                        "Also write OUT/checkpoint.eddy every this many simulated seconds (every run writes one at "
                        "its end); a killed run continues from the last one with --resume")
        ->check(number_check(0, false, eddy::kMaxDuration, false, "a time >= 0 and <= 1e9 (s); 0: at the end only"));
    std::string resume_dir;
    run_cmd->add_option("--resume", resume_dir,
                        "Continue the run whose output folder is DIR from its checkpoint.eddy, in that folder, bit for "
                        "bit as if it had never stopped; --until takes it further than it was going")
        ->check(kNonEmptyPath);  // --resume "" (an unset variable) must not start the default scene in ./out

    // ---- eddy mesh: particle files to surface meshes (issue 5) ----
    auto* mesh_cmd = app.add_subcommand("mesh", "Reconstruct the fluid surface of particle files: a mesh (.obj/.ply) "
                                                "and optionally the signed distance grid (.vti/.vdb)");
    eddy::MeshFilesOptions mesh_opts;
    std::string mesh_in, mesh_out;
    mesh_cmd->add_option("input", mesh_in, "Particle file (.csv, .vtp, .pvtp, .ply) or a folder of frames")->required();
    mesh_cmd->add_option("--out,-o", mesh_out, "Mesh file (.obj, .ply); for a folder: the output folder")
        ->required()
        ->check(kNonEmptyPath);
    // Lengths are floats in the library: finite and within a float's range.
    mesh_cmd->add_option("--radius", mesh_opts.settings.particle_radius,
                         "Particle radius r (m); default: particle_radius from the run's summary.json")
        ->check(number_check(0, true, FLT_MAX, false, "a length > 0 (m)", "radius"));
    mesh_cmd->add_option("--voxel", mesh_opts.settings.voxel_size, "Grid spacing (m, > 0); default: 1.0 r")
        ->check(number_check(0, true, FLT_MAX, false, "a length > 0 (m)", "voxel"));
    mesh_cmd->add_option("--kernel-radius", mesh_opts.settings.kernel_radius, "Splatting support radius (m); default: 4 r")
        ->check(number_check(0, false, FLT_MAX, false, "a length >= 0 (m); 0: 4 r", "kernel_radius"));
    mesh_cmd->add_option("--iso", mesh_opts.settings.iso, "Iso level of the volume fraction, 0 < T < 1")
        ->capture_default_str()
        ->check(number_check(0, true, 1, true, "0 < iso < 1 (volume fraction)", "iso"));
    mesh_cmd->add_option("--smooth", mesh_opts.settings.smooth_iterations, "Taubin smoothing iterations")
        ->capture_default_str()
        ->check(whole_check(0, 1000, "a whole number from 0 to 1000"));
    mesh_cmd->add_flag("--anisotropic", mesh_opts.settings.anisotropic,
                       "Anisotropic kernels (Yu & Turk 2013): positions smoothed, kernels stretched along the surface; "
                       "flat surfaces flat, thin sheets kept (docs/surface.md)");
    mesh_cmd->add_option("--min-volume", mesh_opts.settings.min_volume, "Drop pieces enclosing less (m^3; m^2 in 2D)")
        ->check(number_check(0, false, FLT_MAX, false, "a volume >= 0 (m^3; m^2 in 2D)", "min_volume"));
    mesh_cmd->add_option("--vertex-margin", mesh_opts.settings.vertex_margin,
                         "Keep every vertex this fraction of a voxel from grid nodes (no slivers; 0: plain marching cubes)")
        ->capture_default_str()
        ->check(number_check(0, false, 0.25, false, "a fraction of a voxel from 0 to 0.25", "vertex_margin"));
    mesh_cmd->add_option("--decimate-error", mesh_opts.settings.decimate_error,
                         "Decimate the meshes (edge collapse, meshoptimizer), moving the surface at most this many "
                         "voxels (two-sided Hausdorff); 0: no bound")
        ->check(number_check(0, false, 1000, false, "a distance from 0 to 1000 voxels", "decimate_error"));
    mesh_cmd->add_option("--decimate-ratio", mesh_opts.settings.decimate_ratio,
                         "Decimate the meshes to at most this fraction of their triangles; 0: as few as --decimate-error "
                         "allows")
        ->check(number_check(0, false, 1, false, "a fraction from 0 to 1", "decimate_ratio"));
    mesh_cmd->add_option("--block-size", mesh_opts.settings.block_size, "Voxels per block edge (4..32)")
        ->capture_default_str()
        ->check(whole_check(4, 32, "a whole number from 4 to 32"));
    mesh_cmd->add_option("--format", mesh_opts.format,
                         "Mesh format for a folder of frames: obj, ply, vtp (surface.pvd lists .vtp files: with obj or "
                         "ply a .vtp is written beside each)")
        ->capture_default_str()
        ->check(CLI::IsMember({"obj", "ply", "vtp"}));
    mesh_cmd->add_option("--interpolate-attributes", mesh_opts.attributes,
                         "PLY meshes: particle fields carried onto the vertices, comma separated: velocity, density, "
                         "pressure (as in the particle files)")
        ->delimiter(',')
        ->check(CLI::IsMember({"velocity", "density", "pressure"}));
    std::string mesh_up;
    mesh_cmd->add_option("--up", mesh_up,
                         "Up axis of the meshes: y or z; default: the particles' (up_axis in the run's summary.json, y "
                         "without one)")
        ->check(CLI::IsMember({"y", "z"}));
    std::vector<std::string> mesh_sdf;
    mesh_cmd->add_option("--sdf", mesh_sdf, "Also write the signed distance grid: FILE.vti (VTK) or FILE.vdb (OpenVDB level set)");
    mesh_cmd->footer("\nSettings (flags above; ranges as checked):\n" +
                     eddy::describe(eddy::surface_fields(), eddy::SurfaceSettings{}) +
                     "\nINPUT a folder: every particle file in it (one per frame), meshed in parallel into --out (a folder).\n"
                     "See docs/surface.md. Exit codes: 0 done, 1 failure, 2 bad input.\n");
    int mesh_threads = 0;
    mesh_cmd->add_option("--threads,-j", mesh_threads, "Worker threads, at most 4096 (default and 0: all cores); results do not depend on it")
        ->check(kThreadsCheck);
    std::string mesh_max_memory;
    mesh_cmd->add_option("--max-memory", mesh_max_memory, kMaxMemoryHelp);
    mesh_cmd->add_flag("--allow-outside-references", mesh_opts.allow_outside_references,
                       "Let a .pvtp's <Piece Source> name files outside its folder (absolute, '..'); default: refused");

    // ---- eddy whitewater: spray, foam and bubbles of a finished run (issue 32) ----
    auto* ww_cmd = app.add_subcommand("whitewater", "Spray, foam and bubbles (Ihmsen et al. 2012) of a finished particle "
                                                    "run, from its frames, written into its folder");
    eddy::WhitewaterPostOptions ww_opts;
    std::string ww_dir;
    std::vector<std::string> ww_sets;
    ww_cmd->add_option("run_dir", ww_dir, "The output folder of `eddy run` (frames/, summary.json)")->required()->check(kNonEmptyPath);
    ww_cmd->add_option("--substeps", ww_opts.substeps, "Whitewater steps between two frames (fluid interpolated linearly)")
        ->capture_default_str()
        ->check(whole_check(1, 100000, "a whole number from 1 to 100000"));
    ww_cmd->add_option("--set", ww_sets, "A whitewater setting KEY=VALUE (repeatable; keys below)");
    ww_cmd->add_option("--radius", ww_opts.particle_radius, "Particle radius r (m); default: summary.json's")
        ->check(number_check(0, true, FLT_MAX, false, "a length > 0 (m)", "radius"));
    int ww_threads = 0;
    ww_cmd->add_option("--threads,-j", ww_threads, "Worker threads, at most 4096 (default and 0: all cores); results do not depend on it")
        ->check(kThreadsCheck);
    ww_cmd->add_flag("--allow-outside-references", ww_opts.allow_outside_references,
                     "Let frames (symbolic links) and a .pvtp's <Piece Source> lead outside the run folder; default: refused");
    std::string ww_max_memory;
    ww_cmd->add_option("--max-memory", ww_max_memory, kMaxMemoryHelp);
    ww_cmd->footer("\nSettings (--set KEY=VALUE; ranges as checked):\n" +
                   eddy::describe(eddy::whitewater_fields(), eddy::WhitewaterSettings{}) +
                   "\nWrites frames/whitewater_NNNNN.vtp/.ply, whitewater.pvd, whitewater.csv into RUN_DIR (docs/whitewater.md).\n"
                   "Exit codes: 0 done, 1 failure, 2 bad input.\n");

    if (argc == 1) {  // a newcomer typing `eddy`: the overview, not an error
        std::cout << app.help();
        return eddy::kExitOk;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // One line, like every other input error (CLI11's own report adds a second), pointing at the
        // help of the subcommand being parsed (`eddy mesh --bogus`: eddy mesh --help).
        std::string help = "eddy --help";
        for (const CLI::App* sub : {run_cmd, mesh_cmd, scenes_cmd, ww_cmd})
            if (sub->parsed()) help = fmt::format("eddy {} --help", sub->get_name());
        std::string msg = e.what();
        // CLI11's "--voxel: key 'voxel' = 0: ..." -> "eddy mesh: key 'voxel' = 0: ...", as the library says it.
        if (const auto k = msg.find(": key '"); k != std::string::npos && dynamic_cast<const CLI::ValidationError*>(&e))
            msg = (mesh_cmd->parsed() ? "eddy mesh: " : "") + msg.substr(k + 2);
        if (help == "eddy --help" && argc > 1)  // CLI11: "A subcommand is required"
            msg = fmt::format("'{}' is not a command; allowed: scenes, run, mesh, whitewater, view", eddy::text_excerpt(argv[1], 40));
        if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
            // "The following argument was not expected: --bogus" -> what and where.
            if (const auto colon = msg.find(": "); colon != std::string::npos)
                msg = fmt::format("unknown option or extra argument {}", msg.substr(colon + 2));
        }
        std::fprintf(stderr, "eddy: error: %s (see %s)\n", one_line(msg).c_str(), help.c_str());
        return eddy::kExitBadInput;
    }

    // Under mpirun only `eddy run` is shared by the processes; the other commands run once, on rank 0.
    if (g_procs.size > 1 && !*run_cmd && g_procs.rank != 0) return eddy::kExitOk;
    if (*view_cmd) return exec_viewer(view_cmd->remaining());

    std::string doing = "starting";  // for failures that are not InputErrors: "out of memory while ..."
    try {
        if (*scenes_cmd) {
            doing = "listing the bundled scenes";
            for (const auto& s : eddy::list_bundled_scenes())
                std::cout << fmt::format("{:<24} {}\n", s.name, s.description);
            return eddy::kExitOk;
        }
        if (*mesh_cmd) {
            // --voxel 0 would mean "default" in the library; on the command line it is a mistake.
            if (mesh_cmd->count("--voxel") && !(mesh_opts.settings.voxel_size > 0.0f))
                throw eddy::InputError(fmt::format("eddy mesh: key 'voxel' = {}: allowed: a length > 0 (m)",
                                                   mesh_opts.settings.voxel_size));
            if (mesh_cmd->count("--radius") && !(mesh_opts.settings.particle_radius > 0.0f))
                throw eddy::InputError(fmt::format("eddy mesh: key 'radius' = {}: allowed: a length > 0 (m)",
                                                   mesh_opts.settings.particle_radius));
            doing = fmt::format("meshing {}", mesh_in);
            mesh_opts.input = mesh_in;
            mesh_opts.out = mesh_out;
            for (const auto& f : mesh_sdf) mesh_opts.sdf_out.emplace_back(f);
            mesh_opts.budget = memory_budget(mesh_max_memory);
            if (!mesh_up.empty()) mesh_opts.up = eddy::parse_up_axis(mesh_up, "--up");
            eddy::ExecContext exec(mesh_threads);
            const auto rep = eddy::mesh_particle_files(mesh_opts, exec);
            std::fprintf(stderr, "eddy: %zu frame(s), %dD, r = %g m: %zu vertices, %zu %s -> %s%s\n", rep.frames,
                         rep.dimension, rep.particle_radius, rep.vertices, rep.cells,
                         rep.dimension == 3 ? "triangles" : "segments", mesh_out.c_str(),
                         rep.times_from.empty() ? "" : fmt::format(" (surface.pvd, times from {})", rep.times_from).c_str());
            // Throughput on a terminal, as the run's progress (piped output stays one line).
            if (rep.frames > 1 && isatty(STDERR_FILENO) && rep.seconds > 0.0)
                std::fprintf(stderr, "eddy: %zu frames in %.1f s: %.1f frames per minute\n", rep.frames, rep.seconds,
                             60.0 * double(rep.frames) / rep.seconds);
            return eddy::kExitOk;
        }
        if (*ww_cmd) {
            doing = fmt::format("making the whitewater of {}", ww_dir);
            ww_opts.run_dir = ww_dir;
            ww_opts.settings = eddy::whitewater_settings_from(ww_sets, "eddy whitewater --set");
            ww_opts.budget = memory_budget(ww_max_memory);
            eddy::ExecContext exec(ww_threads);
            const auto rep = eddy::whitewater_post_process(ww_opts, exec);
            for (const auto& w : rep.warnings) std::fprintf(stderr, "eddy: warning: %s\n", w.c_str());
            const auto last = rep.rows.empty() ? eddy::WhitewaterFiles::Row{} : rep.rows.back();
            std::fprintf(stderr, "eddy: %d frame(s), %dD: last frame %llu spray, %llu foam, %llu bubbles -> %s/whitewater.csv\n",
                         rep.frames, rep.dimension, (unsigned long long)last.spray, (unsigned long long)last.foam,
                         (unsigned long long)last.bubbles, ww_dir.c_str());
            return eddy::kExitOk;
        }
        if (!resume_dir.empty()) {
            // Everything but the end, the threads and the output's verbosity is the original run's.
            for (const char* flag : {"scene", "--out", "--fps", "--format", "--set", "--render", "--pieces", "--mesh", "--mesh-format", "--anisotropic",
                                     "--max-particles", "--up", "--interpolate-attributes", "--wall-pressure", "--mesh-decimate-error", "--mesh-decimate-ratio", "--whitewater",
                                     "--whitewater-substeps", "--ww-set"})
                if (run_cmd->count(flag))
                    throw eddy::InputError(fmt::format("--resume {}: {} cannot change a run being resumed; allowed with "
                                                       "--resume: --until, --steps, --threads, --checkpoint-every, --rebalance-every, --max-memory, --quiet",
                                                       resume_dir, std::string(flag) == "scene" ? "a scene" : flag));
            doing = fmt::format("resuming {}", resume_dir);
            const eddy::MemoryBudget budget = memory_budget(max_memory);
            eddy::ExecContext exec(threads_here(threads));
            nlohmann::json record;
            const eddy::CheckpointFile ck =
                eddy::read_checkpoint_file(std::filesystem::path(resume_dir) / eddy::kCheckpointFile);
            const RunArgs args{resume_dir, until, 0.0, steps, {}, false, quiet, checkpoint_every, "y", false, rebalance_every};
            ProgressPrinter printer;
            if (ck.meta.value("kind", "") == "grid_pieces") {
                // Written in pieces by several processes: each reads its own.
#ifdef EDDY_HAVE_MPI
                {  // on any number of processes, one included
                    eddy::RunOptions opts = run_options(args, exec, printer);
                    if (!quiet)
                        std::fprintf(stderr, "eddy: resuming %s (shallow_water, in pieces) at t = %.6g s on %d processes -> %s\n",
                                     ck.meta.value("scene_source", std::string("?")).c_str(), ck.meta.value("time", 0.0),
                                     g_procs.size, resume_dir.c_str());
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
                }
#else
                throw eddy::InputError(fmt::format("--resume {}: written in pieces by {} processes with mpirun; this eddy "
                                                   "was built without MPI (see docs/distributed.md)", resume_dir,
                                                   ck.meta.value("ranks", 0)));
#endif
            }
            if (ck.meta.value("kind", "") == "grid") {
                eddy::ShallowWaterSimulation grid = eddy::restore_shallow_water(ck, record, budget);
                eddy::RunOptions opts = run_options(args, exec, printer);
                opts.resume = &record;
                if (!quiet)
                    std::fprintf(stderr, "eddy: resuming %s (shallow_water) at t = %.6g s -> %s\n", grid.scene.name.c_str(),
                                 std::visit([](const auto& s) { return s.time(); }, grid.solver), resume_dir.c_str());
                return report(run_grid_here(grid, opts, exec), grid.scene, args);
            }
            eddy::Simulation sim = eddy::restore_simulation(ck, exec, record, budget);
            const eddy::Scene scene = std::visit([](const auto& s) { return s.scene; }, sim);
            eddy::RunOptions opts = run_options(args, exec, printer);
            opts.resume = &record;
            opts.budget = budget;  // the running memory guard
            if (!quiet)
                std::fprintf(stderr, "eddy: resuming %s (%s, %dD) at t = %.6g s, step %llu, %zu particles, %d threads -> %s\n",
                             scene.name.c_str(), scene.method.c_str(), scene.dimension,
                             std::visit([](const auto& s) { return s.time; }, sim),
                             static_cast<unsigned long long>(std::visit([](const auto& s) { return s.steps; }, sim)),
                             std::visit([](const auto& s) { return s.fluid.size(); }, sim), exec.threads(),
                             resume_dir.c_str());
            return report(run_particles_here(sim, opts, exec), scene, args);
        }
        const eddy::MemoryBudget budget = memory_budget(max_memory);  // a bad size before the scene is read
        const auto file = eddy::resolve_scene(scene_arg.empty() ? kDefaultScene : scene_arg);
        doing = fmt::format("reading {}", file.string());
        const eddy::Scene scene = eddy::load_scene(file, sets, budget);  // models, particle files: checked before read
        doing = fmt::format("running {}", scene.where());
        for (const auto& w : scene.warnings) std::fprintf(stderr, "eddy: %s\n", w.c_str());
        eddy::ExecContext exec(threads_here(threads));
        const RunArgs args{out_dir,          until, fps,    steps,      formats,        render, quiet,
                           checkpoint_every, run_up, run_pieces, rebalance_every};
        if (scene.method == "shallow_water") {
            if (!run_attributes.empty())
                throw eddy::InputError(fmt::format("--interpolate-attributes: {} is a grid; allowed with particle scenes' "
                                                   "--mesh", scene.where()));
            if (run_mesh)
                throw eddy::InputError(fmt::format("--mesh: {} is a grid; its water surface is written with --format obj or ply",
                                                   scene.where()));
            if (run_whitewater)
                throw eddy::InputError(fmt::format("--whitewater: {} is a grid; allowed with particle scenes", scene.where()));
            if (run_wall_pressure)
                throw eddy::InputError(fmt::format("--wall-pressure: {} is a grid (its walls are cells, not particles); "
                                                   "allowed with particle scenes", scene.where()));
            return run_grid(scene, exec, args, budget);
        }
        for (const auto& f : formats)
            if (f == "vti" || f == "obj")
                throw eddy::InputError(fmt::format("--format {}: {} is a particle scene; allowed: vtk, csv, ply", f, scene.where()));
        eddy::Simulation sim = eddy::make_simulation(scene, max_particles, exec, budget);
        ProgressPrinter printer;
        eddy::RunOptions opts = run_options(args, exec, printer);
        opts.mesh = run_mesh;
        if ((run_decimate_error > 0.0f || run_decimate_ratio > 0.0f) && !run_mesh)
            throw eddy::InputError("--mesh-decimate-error, --mesh-decimate-ratio: decimate the surface meshes of --mesh; "
                                   "allowed: with --mesh");
        opts.mesh_settings.decimate_error = run_decimate_error;
        opts.mesh_settings.decimate_ratio = run_decimate_ratio;
        if (run_anisotropic && !run_mesh)
            throw eddy::InputError("--anisotropic: shapes the surface meshes of --mesh; allowed: with --mesh");
        opts.mesh_settings.anisotropic = run_anisotropic;
        opts.mesh_format = run_mesh_format;
        opts.mesh_attributes = run_attributes;
        opts.wall_pressure = run_wall_pressure;
        if (!run_whitewater && (run_cmd->count("--whitewater-substeps") || !run_ww_sets.empty()))
            throw eddy::InputError("--whitewater-substeps, --ww-set: settings of --whitewater; allowed: with --whitewater");
        opts.whitewater = run_whitewater;
        opts.whitewater_substeps = run_ww_substeps;
        if (run_whitewater) opts.whitewater_settings = eddy::whitewater_settings_from(run_ww_sets, "--ww-set");
        opts.budget = budget;
        const std::size_t particles = std::visit([](const auto& s) { return s.fluid.size(); }, sim);
        if (g_procs.size > 1 && !opts.pieces && double(particles) > kPiecesAboveParticles) {
            opts.pieces = true;
            if (!quiet)
                std::fprintf(stderr, "eddy: %zu particles: .vtp frames in pieces, one per process (a .pvtp lists them)\n",
                             particles);
        }
        if (!quiet)
            std::fprintf(stderr, "eddy: %s (%s, %dD), %zu particles, %d threads%s -> %s\n", scene.name.c_str(),
                         scene.method.c_str(), scene.dimension,
                         std::visit([](const auto& s) { return s.fluid.size(); }, sim), exec.threads(),
                         g_procs.size > 1 ? fmt::format(" x {} processes", g_procs.size).c_str() : "", out_dir.c_str());
        return report(run_particles_here(sim, opts, exec), scene, args);
    } catch (const eddy::InputError& e) {
        std::fprintf(stderr, "eddy: error: %s\n", one_line(e.what()).c_str());
        return eddy::kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "eddy: error: out of memory while %s (see --max-memory)\n", one_line(doing).c_str());
        return eddy::kExitFailure;
    } catch (const nlohmann::json::parse_error& e) {  // JSON text eddy did not write itself
        std::fprintf(stderr, "eddy: error: while %s: bad JSON: %s\n", one_line(doing).c_str(), one_line(e.what()).c_str());
        return eddy::kExitBadInput;
    } catch (const std::exception& e) {
        // Never a bare what() ("vector::_M_fill_insert"): say what was being done.
        std::fprintf(stderr, "eddy: error: while %s: %s\n", one_line(doing).c_str(), one_line(e.what()).c_str());
        return eddy::kExitFailure;
    } catch (...) {
        std::fprintf(stderr, "eddy: error: while %s: an unknown failure\n", one_line(doing).c_str());
        return eddy::kExitFailure;
    }
}
