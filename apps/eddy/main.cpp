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
    s += "\nMethod \"pbf\" settings (Position Based Fluids):\n";
    s += eddy::describe(eddy::pbf_fields(), eddy::PbfSettings{});
    s += "\nMethod \"clavet\" settings (Clavet et al. 2005 viscoelastic fluid):\n";
    s += eddy::describe(eddy::clavet_fields(), eddy::ClavetSettings{});
    s += "\nMethod \"shallow_water\" settings (heightfield water over terrain; grid keys in docs/scenes.md):\n";
    s += eddy::describe(eddy::shallow_water_fields(), eddy::ShallowWaterSettings{});
    return s;
}

// `eddy run` for a shallow-water scene: the same options, output and exit codes as for particles.
int run_grid(const eddy::Scene& scene, const eddy::ExecContext& exec, const std::string& out_dir, double until,
             std::uint64_t steps, double fps, const std::vector<std::string>& formats, bool render, bool quiet) {
    for (const auto& f : formats)
        if (f == "vtk")
            throw eddy::InputError(fmt::format("--format vtk: {} is a grid; allowed: vti, csv, obj, ply", scene.where()));
    eddy::ShallowWaterSimulation sim = eddy::make_shallow_water(scene);
    eddy::RunOptions opts;
    opts.out_dir = out_dir;
    opts.until = until;
    opts.max_steps = steps;
    opts.fps = fps;
    opts.formats = formats;
    opts.render = render;
    opts.threads = exec.threads();
    opts.stop = &g_stop;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    ProgressPrinter printer;
    printer.tty = isatty(STDERR_FILENO) != 0;
    printer.quiet = quiet;
    opts.on_progress = std::ref(printer);
    const auto& spec = sim.spec;
    if (!quiet)
        std::fprintf(stderr, "eddy: %s (shallow_water, %s), %d x %d cells of %g m, %d threads -> %s\n", scene.name.c_str(),
                     spec.settings.precision.c_str(), spec.nx, spec.ny, spec.dx, exec.threads(), out_dir.c_str());
    const eddy::RunResult r = eddy::run(sim, opts, exec);
    if (r.exit_code == eddy::kExitInterrupted) {
        std::fprintf(stderr, "eddy: %s; %zu frames and the summary are in %s\n", r.message.c_str(), r.frames.size(),
                     out_dir.c_str());
        return r.exit_code;
    }
    if (r.exit_code != eddy::kExitOk) {
        std::fprintf(stderr, "eddy: error: %s: %s\n", scene.where().c_str(), r.message.c_str());
        return r.exit_code;
    }
    if (!quiet)
        std::fprintf(stderr, "eddy: %s; %zu frames, summary in %s/summary.json\n", r.message.c_str(), r.frames.size(),
                     out_dir.c_str());
    return eddy::kExitOk;
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
        const auto file = eddy::resolve_scene(scene_arg.empty() ? kDefaultScene : scene_arg);
        const eddy::Scene scene = eddy::load_scene(file, sets);
        eddy::ExecContext exec(threads);
        if (scene.method == "shallow_water") return run_grid(scene, exec, out_dir, until, steps, fps, formats, render, quiet);
        for (const auto& f : formats)
            if (f == "vti" || f == "obj")
                throw eddy::InputError(fmt::format("--format {}: {} is a particle scene; allowed: vtk, csv, ply", f, scene.where()));
        eddy::Simulation sim = eddy::make_simulation(scene, max_particles, exec);

        eddy::RunOptions opts;
        opts.out_dir = out_dir;
        opts.until = until;
        opts.max_steps = steps;
        opts.fps = fps;
        opts.formats = formats;
        opts.render = render;
        opts.threads = exec.threads();
        opts.stop = &g_stop;
        std::signal(SIGINT, on_signal);
        std::signal(SIGTERM, on_signal);
        ProgressPrinter printer;
        printer.tty = isatty(STDERR_FILENO) != 0;
        printer.quiet = quiet;
        opts.on_progress = std::ref(printer);
        if (!quiet)
            std::fprintf(stderr, "eddy: %s (%s, %dD), %zu particles, %d threads -> %s\n", scene.name.c_str(),
                         scene.method.c_str(), scene.dimension,
                         std::visit([](const auto& s) { return s.fluid.size(); }, sim), exec.threads(), out_dir.c_str());
        const eddy::RunResult r = eddy::run(sim, opts, exec);
        if (r.exit_code == eddy::kExitInterrupted) {
            std::fprintf(stderr, "eddy: %s; %zu frames and the summary are in %s\n", r.message.c_str(), r.frames.size(),
                         out_dir.c_str());
            return r.exit_code;
        }
        if (r.exit_code != eddy::kExitOk) {
            std::fprintf(stderr, "eddy: error: %s: %s\n", scene.where().c_str(), r.message.c_str());
            return r.exit_code;
        }
        if (!quiet)
            std::fprintf(stderr, "eddy: %s; %zu frames, summary in %s/summary.json\n", r.message.c_str(),
                         r.frames.size(), out_dir.c_str());
        return eddy::kExitOk;
    } catch (const eddy::InputError& e) {
        std::fprintf(stderr, "eddy: error: %s\n", e.what());
        return eddy::kExitBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eddy: error: %s\n", e.what());
        return eddy::kExitFailure;
    }
}
