// eddy: the command line. `eddy scenes`, `eddy run [SCENE] ...`, `eddy mesh`, `eddy whitewater`, `eddy view`.
// Each command is a file of its own (cli.hpp lists them); this one parses, dispatches and turns a failure
// into one line and an exit code.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "eddy/scene.hpp"

namespace eddy::cli {
Processes g_procs;
}  // namespace eddy::cli

namespace {

using namespace eddy::cli;

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

// A CLI11 parse failure as one line, like every other input error (CLI11's own report adds a second),
// pointing at the help of the subcommand being parsed (`eddy mesh --bogus`: eddy mesh --help).
int parse_error(const CLI::ParseError& e, std::initializer_list<const CLI::App*> subs, bool mesh_parsed, int argc, char** argv) {
    std::string help = "eddy --help";
    for (const CLI::App* sub : subs)
        if (sub->parsed()) help = fmt::format("eddy {} --help", sub->get_name());
    std::string msg = e.what();
    // CLI11's "--voxel: key 'voxel' = 0: ..." -> "eddy mesh: key 'voxel' = 0: ...", as the library says it.
    if (const auto k = msg.find(": key '"); k != std::string::npos && dynamic_cast<const CLI::ValidationError*>(&e))
        msg = (mesh_parsed ? "eddy mesh: " : "") + msg.substr(k + 2);
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

int list_scenes() {
    for (const auto& s : eddy::list_bundled_scenes()) std::cout << fmt::format("{:<24} {}\n", s.name, s.description);
    return eddy::kExitOk;
}

}  // namespace

int run_main(int argc, char** argv) {
    CLI::App app{"eddy: fluid simulation toolkit (WCSPH, DFSPH, PBF, Clavet in 2D and 3D; shallow water over terrain)", "eddy"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "eddy 0.1.0");
    auto* scenes_cmd = app.add_subcommand("scenes", "List the bundled scenes with a one-line description each");
    // `eddy view ...` execs eddy-view from this executable's folder: the CLI itself never links OpenGL.
    auto* view_cmd = app.add_subcommand("view", "Open the interactive viewer (eddy view --help for its options)");
    view_cmd->prefix_command();
    view_cmd->set_help_flag();  // --help goes to eddy-view
    RunCommand run;
    add_run_command(app, run);
    MeshCommand mesh;
    add_mesh_command(app, mesh);
    WhitewaterCommand ww;
    add_whitewater_command(app, ww);

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
        return parse_error(e, {run.cmd, mesh.cmd, scenes_cmd, ww.cmd}, mesh.cmd->parsed(), argc, argv);
    }

    // Under mpirun only `eddy run` is shared by the processes; the other commands run once, on rank 0.
    if (g_procs.size > 1 && !*run.cmd && g_procs.rank != 0) return eddy::kExitOk;
    if (*view_cmd) return exec_viewer(view_cmd->remaining());

    std::string doing = "starting";  // for failures that are not InputErrors: "out of memory while ..."
    try {
        if (*scenes_cmd) {
            doing = "listing the bundled scenes";
            return list_scenes();
        }
        if (*mesh.cmd) return mesh_command(mesh, doing);
        if (*ww.cmd) return whitewater_command(ww, doing);
        return run_command(run, doing);
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
