// eddy: the command line. `eddy scenes`, `eddy run [SCENE] ...`.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "eddy/settings.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "eddy/surface.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/wcsph.hpp"

namespace {

// Set by SIGINT/SIGTERM; the run loop stops after the current step and writes its summary.
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

constexpr const char* kDefaultScene = "dam_break_3d";

std::string format_duration(double s) {
    if (!(s >= 0) || s > 1e7) return "--";
    const int t = static_cast<int>(s + 0.5);
    if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t / 60) % 60);
    if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
    return fmt::format("{}s", t);
}

// Progress on a terminal: one line redrawn in place. Piped: a plain line every 10% of the run.
struct ProgressPrinter {
    bool tty = false;
    bool quiet = false;
    int last_decile = 0;

    void operator()(const eddy::Progress& p) {
        if (quiet) return;
        double frac = p.end_time > 0 ? p.time / p.end_time : 0.0;
        if (p.max_steps > 0) frac = std::max(frac, double(p.steps) / double(p.max_steps));
        frac = std::clamp(frac, 0.0, 1.0);
        const std::string line =
            fmt::format("t = {:.4f}/{:.4g} s  step {}  {:.0f} steps/s  {} {}  {} frames  ETA {}", p.time,
                        p.end_time, p.steps, p.steps_per_second, p.particles, p.counted, p.frames_written,
                        p.finished ? "0s" : format_duration(p.eta_seconds));
        if (tty) {
            const int width = 24;
            const int filled = static_cast<int>(frac * width);
            std::fprintf(stderr, "\r\033[2K[%s%s] %3d%% %s", std::string(filled, '#').c_str(),
                         std::string(width - filled, '.').c_str(), static_cast<int>(frac * 100), line.c_str());
            if (p.finished) std::fputc('\n', stderr);
        } else {
            const int decile = static_cast<int>(frac * 10.0);
            if (decile > last_decile || (p.finished && last_decile < 10)) {
                last_decile = decile;
                std::fprintf(stderr, "progress %3d%%: %s\n", static_cast<int>(frac * 100), line.c_str());
            }
        }
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
    opts.stop = &g_stop;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    printer.tty = isatty(STDERR_FILENO) != 0;
    printer.quiet = a.quiet;
    opts.on_progress = std::ref(printer);
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

// `eddy run` for a shallow-water scene: the same options, output and exit codes as for particles.
int run_grid(const eddy::Scene& scene, const eddy::ExecContext& exec, const RunArgs& a) {
    for (const auto& f : a.formats)
        if (f == "vtk")
            throw eddy::InputError(fmt::format("--format vtk: {} is a grid; allowed: vti, csv, obj, ply", scene.where()));
    eddy::ShallowWaterSimulation sim = eddy::make_shallow_water(scene);
    ProgressPrinter printer;
    const eddy::RunOptions opts = run_options(a, exec, printer);
    const auto& spec = sim.spec;
    if (!a.quiet)
        std::fprintf(stderr, "eddy: %s (shallow_water, %s), %d x %d cells of %g m, %d threads -> %s\n", scene.name.c_str(),
                     spec.settings.precision.c_str(), spec.nx, spec.ny, spec.dx, exec.threads(), a.out_dir.c_str());
    return report(eddy::run(sim, opts, exec), scene, a);
}

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

int main(int argc, char** argv) {
    CLI::App app{"eddy: fluid simulation toolkit (WCSPH, PBF, Clavet in 2D and 3D; shallow water over terrain)", "eddy"};
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
        ->capture_default_str();
    run_cmd->add_option("--until", until, "Stop at this simulated time (s); default: the scene's duration")
        ->check(CLI::PositiveNumber);
    run_cmd->add_option("--steps", steps, "Stop after this many steps")->check(CLI::PositiveNumber);
    run_cmd->add_option("--threads,-j", threads, "Worker threads (default: all cores); results do not depend on it")
        ->check(CLI::PositiveNumber);
    run_cmd->add_option("--fps", fps, "Frames per simulated second; default: the scene's output.fps")
        ->check(CLI::PositiveNumber);
    run_cmd->add_option("--format", formats,
                        "Frame formats, comma separated: particles vtk (.vtp), csv, ply; shallow water vti, csv, obj, ply; "
                        "default: the scene's")
        ->delimiter(',')
        ->check(CLI::IsMember({"vtk", "csv", "ply", "vti", "obj"}));
    run_cmd->add_option("--set", sets, "Override a scene key: KEY.PATH=VALUE, e.g. settings.cfl=0.3 (repeatable)");
    run_cmd->add_flag("--render", render, "Write a PNG picture of every frame (the last frame is always rendered)");
    run_cmd->add_option("--max-particles", max_particles, "Refuse scenes with more fluid particles than this")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    run_cmd->add_flag("--quiet,-q", quiet, "No progress output");
    run_cmd->footer(run_help_footer());
    bool run_mesh = false;
    run_cmd->add_flag("--mesh", run_mesh, "Also write a surface mesh per frame: frames/surface_NNNNN.obj (see eddy mesh)");
    std::string run_mesh_format = "obj";
    run_cmd->add_option("--mesh-format", run_mesh_format, "Surface mesh format with --mesh: obj, ply")
        ->check(CLI::IsMember({"obj", "ply"}))
        ->capture_default_str();

    // ---- eddy mesh: particle files to surface meshes (issue 5) ----
    auto* mesh_cmd = app.add_subcommand("mesh", "Reconstruct the fluid surface of particle files: a mesh (.obj/.ply) "
                                                "and optionally the signed distance grid (.vti/.vdb)");
    eddy::MeshFilesOptions mesh_opts;
    std::string mesh_in, mesh_out;
    mesh_cmd->add_option("input", mesh_in, "Particle file (.csv, .vtp, .ply) or a folder of frames")->required();
    mesh_cmd->add_option("--out,-o", mesh_out, "Mesh file (.obj, .ply); for a folder: the output folder")->required();
    mesh_cmd->add_option("--radius", mesh_opts.settings.particle_radius,
                         "Particle radius r (m); default: particle_radius from the run's summary.json");
    mesh_cmd->add_option("--voxel", mesh_opts.settings.voxel_size, "Grid spacing (m, > 0); default: 1.0 r");
    mesh_cmd->add_option("--kernel-radius", mesh_opts.settings.kernel_radius, "Splatting support radius (m); default: 4 r");
    mesh_cmd->add_option("--iso", mesh_opts.settings.iso, "Iso level of the volume fraction, 0 < T < 1")->capture_default_str();
    mesh_cmd->add_option("--smooth", mesh_opts.settings.smooth_iterations, "Taubin smoothing iterations")->capture_default_str();
    mesh_cmd->add_option("--min-volume", mesh_opts.settings.min_volume, "Drop pieces enclosing less (m^3; m^2 in 2D)");
    mesh_cmd->add_option("--block-size", mesh_opts.settings.block_size, "Voxels per block edge (4..32)")->capture_default_str();
    mesh_cmd->add_option("--format", mesh_opts.format, "Mesh format for a folder of frames: obj, ply")->capture_default_str();
    std::vector<std::string> mesh_sdf;
    mesh_cmd->add_option("--sdf", mesh_sdf, "Also write the signed distance grid: FILE.vti (VTK) or FILE.vdb (OpenVDB level set)");
    mesh_cmd->footer("\nSettings (flags above; ranges as checked):\n" +
                     eddy::describe(eddy::surface_fields(), eddy::SurfaceSettings{}) +
                     "\nINPUT a folder: every particle file in it (one per frame), meshed in parallel into --out (a folder).\n"
                     "See docs/surface.md. Exit codes: 0 done, 1 failure, 2 bad input.\n");
    int mesh_threads = 0;
    mesh_cmd->add_option("--threads,-j", mesh_threads, "Worker threads (default: all cores); results do not depend on it")
        ->check(CLI::PositiveNumber);

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
        // One line, like every other input error (CLI11's own report adds a second).
        std::fprintf(stderr, "eddy: error: %s (see eddy --help, eddy run --help)\n", e.what());
        return eddy::kExitBadInput;
    }

    if (*view_cmd) return exec_viewer(view_cmd->remaining());

    try {
        if (*scenes_cmd) {
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
            mesh_opts.input = mesh_in;
            mesh_opts.out = mesh_out;
            for (const auto& f : mesh_sdf) mesh_opts.sdf_out.emplace_back(f);
            eddy::ExecContext exec(mesh_threads);
            const auto rep = eddy::mesh_particle_files(mesh_opts, exec);
            std::fprintf(stderr, "eddy: %zu frame(s), %dD, r = %g m: %zu vertices, %zu %s -> %s\n", rep.frames,
                         rep.dimension, rep.particle_radius, rep.vertices, rep.cells,
                         rep.dimension == 3 ? "triangles" : "segments", mesh_out.c_str());
            return eddy::kExitOk;
        }
        const auto file = eddy::resolve_scene(scene_arg.empty() ? kDefaultScene : scene_arg);
        const eddy::Scene scene = eddy::load_scene(file, sets);
        for (const auto& w : scene.warnings) std::fprintf(stderr, "eddy: %s\n", w.c_str());
        eddy::ExecContext exec(threads);
        const RunArgs args{out_dir, until, fps, steps, formats, render, quiet};
        if (scene.method == "shallow_water") {
            if (run_mesh)
                throw eddy::InputError(fmt::format("--mesh: {} is a grid; its water surface is written with --format obj or ply",
                                                   scene.where()));
            return run_grid(scene, exec, args);
        }
        for (const auto& f : formats)
            if (f == "vti" || f == "obj")
                throw eddy::InputError(fmt::format("--format {}: {} is a particle scene; allowed: vtk, csv, ply", f, scene.where()));
        eddy::Simulation sim = eddy::make_simulation(scene, max_particles, exec);
        ProgressPrinter printer;
        eddy::RunOptions opts = run_options(args, exec, printer);
        opts.mesh = run_mesh;
        opts.mesh_format = run_mesh_format;
        if (!quiet)
            std::fprintf(stderr, "eddy: %s (%s, %dD), %zu particles, %d threads -> %s\n", scene.name.c_str(),
                         scene.method.c_str(), scene.dimension,
                         std::visit([](const auto& s) { return s.fluid.size(); }, sim), exec.threads(), out_dir.c_str());
        return report(eddy::run(sim, opts, exec), scene, args);
    } catch (const eddy::InputError& e) {
        std::fprintf(stderr, "eddy: error: %s\n", e.what());
        return eddy::kExitBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eddy: error: %s\n", e.what());
        return eddy::kExitFailure;
    }
}
