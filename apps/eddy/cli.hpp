// eddy's command line: what its commands share, and each command as its flags (a plain struct CLI11
// writes into), the function that declares them and the function that does the work.
//   main.cpp                 main(), run_main(): parse, dispatch, turn failures into one line and an exit code
//   cli.cpp                  flag checks, progress on stderr, the memory budget, the processes' threads
//   run_command.cpp          eddy run (and --resume): particles and grids, one process or mpirun's
//   mesh_command.cpp         eddy mesh: particle files to surface meshes
//   whitewater_command.cpp   eddy whitewater: spray, foam and bubbles of a finished run
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eddy/memory_budget.hpp"
#include "eddy/progress.hpp"
#include "eddy/surface.hpp"
#include "eddy/whitewater.hpp"

#ifdef EDDY_HAVE_MPI
#include "eddy/distributed.hpp"
#endif

namespace eddy::cli {

// The processes of this run: one, or those mpirun started (src/distributed/). Only rank 0 talks.
struct Processes {
    int rank = 0, size = 1;
    bool running_together = false;  // inside a distributed run: a failure there may be one process's only
#ifdef EDDY_HAVE_MPI
    eddy::dist::Comm* comm = nullptr;
#endif
};
extern Processes g_procs;  // set once in main, before anything runs

// Set by SIGINT/SIGTERM; the run loop stops after the current step and writes its summary.
extern std::atomic<bool> g_stop;
extern "C" void on_signal(int);

inline constexpr const char* kDefaultScene = "dam_break_3d";

// Checks of the number flags, run by CLI11 on the text before it converts it: "abc", "nan", "inf",
// "-1" and "1e999" each get one line naming the flag and what is allowed. (CLI11's own ranges print
// DBL_MAX in the message, and NaN passes them.) CLI11 prefixes the flag: "--fps: 'abc' is not ...".
// `key`: the settings key the flag sets (eddy mesh: surface_fields), named as in the library's messages.
CLI::Validator number_check(double lo, bool lo_open, double hi, bool hi_open, std::string allowed, std::string key = {});
CLI::Validator whole_check(long long lo, long long hi, std::string allowed);
extern const CLI::Validator kThreadsCheck;   // --threads: the range ExecContext accepts (0: every core)
extern const CLI::Validator kNonEmptyPath;   // --out '': no file or folder has an empty name

// What main was doing, for a failure that is not an InputError (those name their file and key).
std::string one_line(std::string s);

// Progress on a terminal: one line redrawn in place. Piped: a plain line every 10% of the run. The text
// is the library's (eddy/progress.hpp), as Python's Simulation.run writes it.
struct ProgressPrinter {
    bool tty = false;
    bool quiet = false;
    std::optional<eddy::ProgressText> text;
    void operator()(const eddy::Progress& p);
};

inline constexpr const char* kMaxMemoryHelp =
    "Refuse requests estimated to need more memory than this (particles, neighbour lists, springs, grid cells, "
    "voxels, images): bytes or 500M, 4G, 1.5GB, 512MiB; default: 90% of the available memory";

// --max-memory as given (a size), else the machine's: 90% of the memory available now.
/// --max-memory, or the machine's memory; under mpirun each process's (`pieces`: the frames in pieces).
eddy::MemoryBudget memory_budget(const std::string& max_memory, bool pieces = false);

// --threads, or by default this machine's cores shared by the processes mpirun started on it.
int threads_here(int threads);

// ---- eddy run [SCENE] / eddy run --resume DIR ----
struct RunCommand {
    CLI::App* cmd = nullptr;
    std::string scene_arg;
    std::string out_dir = "out";
    double until = 0.0, fps = 0.0;
    std::uint64_t steps = 0;
    int threads = 0;
    std::vector<std::string> formats, sets;
    bool render = false, quiet = false;
    std::size_t max_particles = 5'000'000;
    int rebalance_every = 50;
    bool run_pieces = false;
    std::string max_memory;
    bool run_mesh = false;
    bool run_anisotropic = false;
    std::string run_mesh_format = "obj";
    float run_decimate_error = 0.0f, run_decimate_ratio = 0.0f;
    bool run_wall_pressure = false;
    bool run_whitewater = false;
    int run_ww_substeps = 10;
    std::vector<std::string> run_ww_sets;
    std::vector<std::string> run_attributes;
    std::string run_up = "y";
    double checkpoint_every = 0.0;
    std::string resume_dir;
};
void add_run_command(CLI::App& app, RunCommand& c);
int run_command(const RunCommand& c, std::string& doing);  // `doing`: for main's failure messages

// ---- eddy mesh INPUT --out OUT ----
struct MeshCommand {
    CLI::App* cmd = nullptr;
    eddy::MeshFilesOptions mesh_opts;
    std::string mesh_in, mesh_out;
    std::string mesh_up;
    std::vector<std::string> mesh_sdf;
    int mesh_threads = 0;
    std::string mesh_max_memory;
};
void add_mesh_command(CLI::App& app, MeshCommand& c);
int mesh_command(MeshCommand& c, std::string& doing);

// ---- eddy whitewater RUN_DIR ----
struct WhitewaterCommand {
    CLI::App* cmd = nullptr;
    eddy::WhitewaterPostOptions ww_opts;
    std::string ww_dir;
    std::vector<std::string> ww_sets;
    int ww_threads = 0;
    std::string ww_max_memory;
};
void add_whitewater_command(CLI::App& app, WhitewaterCommand& c);
int whitewater_command(WhitewaterCommand& c, std::string& doing);

}  // namespace eddy::cli
