// eddy: a scene turned into a running simulation, and the run loop shared by the CLI, the tests and
// the benchmarks: steps to frame times exactly, writes frames atomically, watches for divergence,
// reports progress through a callback and writes summary.json.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/bodies.hpp"
#include "eddy/boundary.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/clavet.hpp"
#include "eddy/clock.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/emitters.hpp"
#include "eddy/exec.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/particles.hpp"
#include "eddy/pbf.hpp"
#include "eddy/render.hpp"
#include "eddy/scene.hpp"
#include "eddy/surface.hpp"
#include "eddy/up_axis.hpp"
#include "eddy/wcsph.hpp"
#include "eddy/whitewater.hpp"

namespace eddy {

/// The closed set of particle methods (std::variant, not a virtual base): one alternative per method.
template <int D>
using ParticleMethod = std::variant<WcsphSolver<D>, PbfSolver<D>, ClavetSolver<D>, DfsphSolver<D>>;

/// How far above the fastest physical motion of a scene a particle may go before the run counts as
/// diverged. Jets concentrate energy on a few particles: fluid meeting a curved wall at a shallow angle
/// squirts along it, and the bundled scenes, run with every method, reach up to 5.1 times
/// SpeedBound::natural() (a block falling into a round container, docs/methods.md). 10 is WCSPH's own
/// margin (its automatic speed of sound is 10 sqrt(2 g H) over the fluid's height) and still catches
/// a blow-up within a few steps (they reach 10 to 1000 times).
inline constexpr float kSpeedBoundFactor = 10.0f;

/// The fastest a particle of a scene can move by its physics (m/s), from energy: fluid falling over the
/// scene's whole height H gains sqrt(2 g H); a particle bouncing off a moving wall gains at most twice
/// the wall's speed; the initial velocities add theirs; `added` counts energy put in from outside (the
/// viewer's mouse force). A speed above kSpeedBoundFactor times their sum is no physics of the scene:
/// the run has diverged (every particle method; step_divergence()).
struct SpeedBound {
    float free_fall = 0.0f;  ///< sqrt(2 |g| H), H the scene bounds' extent along gravity (m/s)
    float walls = 0.0f;      ///< Fastest point of any moving wall over the scene's duration (m/s)
    float initial = 0.0f;    ///< Fastest initial fluid velocity (m/s)
    float added = 0.0f;      ///< Speed put in from outside since the start (m/s)
    float natural() const { return free_fall + 2.0f * walls + initial + added; }
    /// The divergence threshold (m/s); 0 when the scene has no motion to bound (no gravity, walls at
    /// rest, fluid at rest): then only the method's own limits apply.
    float limit() const { return natural() > 0.0f ? kSpeedBoundFactor * natural() : 0.0f; }
};

/// The state of a particle simulation: the fluid, the walls, the method, the clock.
template <int D>
struct ParticleSimulation {
    static constexpr int kDimension = D;
    Scene scene;
    ParticleSet<D> fluid;
    BoundarySet<D> boundary;
    ParticleMethod<D> method;
    Aabb<D> bounds;           ///< Scene bounds; a particle beyond them (plus a margin) has escaped
    double time = 0.0;        ///< Simulated time (s)
    std::uint64_t steps = 0;  ///< Steps taken
    SpeedBound speed_bound;   ///< The fastest physical motion of the scene (set by make_simulation)
    RigidBodies<D> bodies;    ///< The scene's bodies (eddy/bodies.hpp): moved by the fluid after each step
    /// The scene's emitters and outflow (eddy/emitters.hpp): step() puts their particles in before the
    /// method's step and removes those outside the domain, or beyond `bounds`, after it.
    Flow<D> flow;
};

using Simulation = std::variant<ParticleSimulation<2>, ParticleSimulation<3>>;

/// Builds the particles, the boundary and the method of a validated scene. Throws InputError (bad
/// method settings, too many particles, fluid outside every container, more memory than `budget`
/// allows: estimate_memory() is checked before any particle is built; the default is no limit).
/// share: under mpirun, this process's part (issue 44): its fluid is then only the particles build_fluid
/// gives it with that share, unless the scene's start needs the whole fluid (fluid_built_whole); the
/// first process builds every wall, the others only the moving walls and bodies (the fixed ones near their
/// boxes follow in the distributed layer; a resume in pieces builds them so too).
Simulation make_simulation(const Scene& scene, std::size_t max_particles, const ExecContext& exec,
                           const MemoryBudget& budget = {}, ProcessShare share = {});

/// Whether make_simulation builds every process's fluid whole whatever its share: WCSPH's hydrostatic
/// start (its default) compresses each column of the fluid from the column's whole height.
bool fluid_built_whole(const Scene& scene);

/// Rebuilds the method of a running simulation from `scene`'s settings and gravity, keeping the
/// particles, the boundary and the clock, and re-initialises it on them (e.g. after particles were
/// added, or a setting changed in the viewer). The dimension, method and particle radius must be the
/// simulation's. Throws InputError (bad settings) and leaves `sim` unchanged then. State a method
/// keeps between steps (Clavet's springs) starts afresh.
void rebuild_method(Simulation& sim, const Scene& scene, const ExecContext& exec);

/// The running method's settings: every key of its settings table (the one scene files, --set and --help
/// use) with its value now, defaults included.
nlohmann::json method_settings(const Simulation& sim);

/// Adds a body to a running particle simulation (the viewer's drop, Python's add_body; eddy/bodies.hpp):
/// `body` is one entry of a scene's "bodies" list, checked as a scene's (InputError naming bodies[i]; a
/// body overlapping a wall or another body is refused). Fluid particles inside the new body are removed;
/// the method is rebuilt on the new walls (rebuild_method); the other bodies keep their state. Returns the
/// number of fluid particles removed. src/bodies/add_body.cpp.
std::size_t add_body(Simulation& sim, const nlohmann::json& body, const ExecContext& exec);

/// The emitters and outflow of `scene` for a simulation's method and fluid (make_flow with the
/// method's particle mass and rest density, the scene's walls); the counts start at zero. InputError
/// naming emitters[i] for a nozzle in a wall or outside the domain.
template <int D>
Flow<D> scene_flow(const Scene& scene, const ParticleSimulation<D>& sim, const ExecContext& exec);

/// The walls of `scene` as shapes (eddy/boundary.hpp: analytic shapes, models as signed-distance grids),
/// moving ones following their boundary object (update_wall_poses), indexed (index_walls, pad r): the
/// particle methods' collision and guard, the emitters', and the whitewater's (step_whitewater).
template <int D>
std::vector<Wall<D>> scene_walls(const Scene& scene, const ExecContext& exec);

/// Adds an emitter to a running particle simulation (the viewer's key, Python's add_emitter): `emitter`
/// is one entry of a scene's "emitters" list, checked as a scene's (InputError naming emitters[i]); it
/// starts now (or at its later `start`) and, without a `stop`, runs until stop_emitter. The scene keeps
/// it (checkpoints hold it); the other emitters keep their counts. Returns its index.
/// src/emitters/add_emitter.cpp.
std::size_t add_emitter(Simulation& sim, const nlohmann::json& emitter, const ExecContext& exec);
/// Stops emitter k from the simulation's time on (its `stop` becomes now). InputError for no such one.
void stop_emitter(Simulation& sim, std::size_t k, const ExecContext& exec);

/// One step of whatever the simulation holds: the emitters' particles due at the step's start put in,
/// the method's step, the bodies moved, the particles outside the domain or beyond the scene's bounds
/// removed, and those in an open sink (StepStats::emitted, removed_outflow, removed_escaped, removed_drained). The time step comes from the method,
/// at most the emitters' (a new particle moves 0.4 of a spacing at most), and is cut so that the clock
/// lands exactly on `until` when it is > 0.
StepStats step(Simulation& sim, const ExecContext& exec, double until = 0.0);

/// The time step below which a run of this method has diverged (0: it has no adaptive step).
template <int D>
float method_dt_min(const ParticleMethod<D>& m) {
    return std::visit([](const auto& s) { return s.min_dt(); }, m);
}

/// The method's fluid neighbour lists at the fluid's current positions, for a reader between two steps
/// (the whitewater, eddy/whitewater.hpp): searched now, and the method's next step keeps them instead of
/// searching again (FluidNeighborhood::refresh_fluid; the same bits). WCSPH and DFSPH on one process;
/// empty for PBF and Clavet (they search at predicted positions within their step) and over several
/// processes (their lists hold ghosts).
template <int D>
FluidLists<D> fluid_lists_between_steps(ParticleSimulation<D>& sim, const ExecContext& exec) {
    return std::visit(
        [&](auto& m) -> FluidLists<D> {
            if constexpr (requires { m.neighborhood_between_steps(); }) {
                if (FluidNeighborhood<D>* nb = m.neighborhood_between_steps()) return nb->refresh_fluid(sim.fluid, exec);
            }
            return {};
        },
        sim.method);
}

/// The step a run takes from `time` towards `until` (> 0) when the method suggests `dt`: dt, until at
/// most 8 steps of dt are left; then the remaining time split into the fewest equal steps no longer than
/// dt, so that the run lands exactly on `until` (lands: this step does) without a short step before it.
float landing_step(float dt, double time, double until, bool& lands);

/// Where `eddy run`'s next step from the simulation's clock lands: the scene's frame times (output.fps)
/// and its duration while that is ahead (past it, the frames go on). The viewer and the page step on it.
double next_landing(const Simulation& sim);

/// Why a step means the run has diverged, in words, or "" when it does not: a position or velocity
/// not finite, a time step below the method's dt_min, a speed above the method's limit (WCSPH: the
/// speed of sound), a speed above the scene's SpeedBound (any method). Particles beyond the scene's
/// bounds are the caller's check (it knows the bounds).
/// Shared by run() and the viewer, so both stop for the same reasons.
std::string step_divergence(const StepStats& st, float dt_min);

/// What a slice of particle steps did (step_slice).
using SliceResult = SliceOf<StepStats>;

/// A slice of `eddy run`'s loop for the front ends that step by themselves between other work (Python's
/// step(), the viewer's simulation thread, the page): the steps `limits` allows, each landing on its clock
/// (SliceLimits::landing; by default next_landing(sim)) and checked by run()'s guard (step_divergence against
/// the method's dt_min), so that a scene stepped this way holds eddy run's state and stops for eddy run's
/// reasons. `before_step` (the user's hands: mouse forces, dragged bodies) and `after_step` (what the front
/// end keeps of each step: loads, whitewater; called before the guard, so also for the step that diverged)
/// run around every step when given. Exceptions (a body whose state is not finite, out of memory) pass
/// through.
SliceResult step_slice(Simulation& sim, const ExecContext& exec, const SliceLimits& limits,
                       const std::function<void()>& before_step = {},
                       const std::function<void(const StepStats&)>& after_step = {});

/// Progress of a run, reported to RunOptions::on_progress.
struct Progress {
    double time = 0.0, end_time = 0.0;  ///< Simulated time and the time the run stops at (s)
    std::uint64_t steps = 0;
    std::uint64_t max_steps = 0;        ///< 0: no step limit
    std::size_t particles = 0;          ///< Particles, or cells for a grid
    const char* counted = "particles";  ///< What `particles` counts: "particles" | "cells"
    double wall_seconds = 0.0;          ///< Since the run started
    double steps_per_second = 0.0;
    double eta_seconds = 0.0;           ///< Estimated wall time left (s)
    int frames_written = 0;
    bool finished = false;
};

/// A particle run spread over several processes (src/distributed/particle_boxes.cpp): run() steps
/// through it, reduces what it decides on (escaped particles, a stop request) and writes frames from
/// the whole fluid it gathers; only the writing process touches the output folder. Every process runs
/// the same loop, so each call below is collective. Null in RunOptions: one process.
class RunHooks {
public:
    virtual ~RunHooks() = default;
    /// One step of every process's part (the time step and statistics agreed by all).
    virtual StepStats step(Simulation& sim, const ExecContext& exec, double until) = 0;
    /// Does this process write the files (the root)?
    virtual bool writes() const = 0;
    /// This process's number and how many run (the pieces of a --pieces frame).
    virtual int rank() const = 0;
    virtual int processes() const = 0;
    /// The fluid of every process, on the writer, as one set ordered by id; others get an empty set.
    virtual void gather(const ParticleSet<2>& mine, ParticleSet<2>& whole) = 0;
    virtual void gather(const ParticleSet<3>& mine, ParticleSet<3>& whole) = 0;
    virtual std::uint64_t sum(std::uint64_t v) = 0;
    /// Every process's `v`, in rank order, on every process.
    virtual std::vector<std::uint64_t> all_values(std::uint64_t v) = 0;
    virtual bool any(bool v) = 0;
    /// Adds the run's distribution to summary.json (processes, their particles, imbalance, communication).
    virtual void summarize(nlohmann::json& summary) = 0;
    /// The writer needs the walls for the first frame only (frames in pieces, no pictures, no wall pressure,
    /// no moving wall): after it, it may keep only those near its box, as the other processes do.
    virtual void walls_written_once() {}
};

/// How a front end writes a run option in its messages, so that the one check of a run's options
/// (check_run_options) speaks each front end's language. `key` is RunOptions' field name ("until", "fps",
/// "formats", "checkpoint_every", "mesh", "mesh_format", "mesh_attributes", "up", "whitewater",
/// "wall_pressure", "mesh_decimate_error", "mesh_decimate_ratio"). Unset members write RunOptions' names.
struct OptionSpelling {
    std::string context;  ///< before every message (Python: "run: ")
    /// The option as given, with its value as text ("true" for a switch): "until = -1" (the CLI: "--until -1").
    std::function<std::string(std::string_view key, std::string_view value)> given;
    /// The option's name alone: "until" (the CLI: "--until").
    std::function<std::string(std::string_view key)> name;
    /// The option as the user would write it, suggested: "mesh_format = ply" (Python: "mesh_format='ply'", the
    /// CLI: "--mesh-format ply").
    std::function<std::string(std::string_view key, std::string_view value)> suggest;
    /// A value alone, in a list of those allowed: "y" (Python: "'y'").
    std::function<std::string(std::string_view key, std::string_view value)> value;
};

struct RunOptions {
    std::filesystem::path out_dir = "out";  ///< Output directory (created)
    double until = 0.0;                     ///< Stop at this simulated time (s); 0: the scene's duration
    std::uint64_t max_steps = 0;            ///< Stop after this many steps; 0: no limit
    double fps = 0.0;                       ///< Frames per simulated second; 0: the scene's
    std::vector<std::string> formats;       ///< "vtk", "csv", "ply"; empty: the scene's
    bool render = false;                    ///< A PNG per frame (the last frame is always rendered)
    RenderSettings render_settings;
    double progress_interval = 0.25;        ///< Seconds of wall time between progress reports
    std::function<void(const Progress&)> on_progress;  ///< Called periodically and at the end
    int threads = 0;                        ///< Only recorded in the summary
    /// When set and true, the run stops after the current step (e.g. from a SIGINT handler), writes a
    /// frame of that state and the summary, and returns status "interrupted".
    const std::atomic<bool>* stop = nullptr;
    /// A surface mesh per frame, frames/surface_NNNNN.<mesh_format> (issue 5); particle_radius 0 in
    /// mesh_settings means the scene's.
    bool mesh = false;
    std::string mesh_format = "obj";
    SurfaceSettings mesh_settings;
    /// With mesh: particle fields interpolated onto the surface's vertices (interpolate_attributes:
    /// "velocity", "density", "pressure"); PLY meshes carry them, OBJ cannot (InputError).
    std::vector<std::string> mesh_attributes;
    /// The up axis of every geometry file written (eddy/up_axis.hpp); recorded in summary.json.
    UpAxis up = UpAxis::y;
    /// With mesh: the simulation's memory plus the surface reconstruction's for the fluid as it is at
    /// the start must fit (InputError before the first step, as make_simulation). Default: no limit.
    MemoryBudget budget;
    /// Checkpoints (out_dir/checkpoint.eddy, atomic; issue 12): every `checkpoint_every` simulated
    /// seconds (0: none on the way), and at the end of a run that did not diverge if checkpoint_at_end.
    double checkpoint_every = 0.0;
    bool checkpoint_at_end = false;
    /// Continues a run from its checkpoint: the record read_checkpoint() returned. Frames, their
    /// numbering, the .pvd collections and the statistics carry on from it; the frame rate, formats,
    /// pictures and meshes are the original run's (fps, formats, render, mesh above are ignored).
    const nlohmann::json* resume = nullptr;
    /// Frames as one piece per process and a parallel VTK file that lists them (ParaView opens it as one
    /// data set), instead of one file gathered on the first process: grids' .vti
    /// (frames/grid_NNNNN_pRRRR.vti and .pvti), particles' .vtp (frames/particles_NNNNN_pRRRR.vtp and
    /// .pvtp; CSV and PLY frames stay whole).
    bool pieces = false;
    /// Particles over several processes (RunHooks); null: this process alone.
    RunHooks* hooks = nullptr;
    /// Over several processes: each process's fluid is already its share of the whole (built as one,
    /// make_simulation with a ProcessShare, or resumed from a checkpoint: restore_simulation with one), not
    /// the whole scene's.
    bool fluid_is_share = false;
    /// Particles over several processes: steps between new cuts of the processes' boxes by particle counts.
    int rebalance_every = 50;
    /// The walls every frame (frames/walls_NNNNN.vtp, walls.pvd) with a point array "pressure": the
    /// fluid's pressure on each wall particle (eddy/wall_pressure.hpp); also on with the scene's
    /// output.wall_pressure. A resumed run keeps its checkpoint's choice.
    bool wall_pressure = false;
    /// Called with one line when something worth knowing happens during the run that is not an error
    /// (particles that left every container were removed); also listed in summary.json "warnings".
    std::function<void(const std::string&)> on_warning;
    /// Whitewater (issue 32; eddy/whitewater.hpp): spray, foam and bubbles stepped along with the fluid,
    /// every 1/(fps whitewater_substeps) s of simulated time (0 substeps: after every fluid step), written
    /// every frame (frames/whitewater_NNNNN.vtp/.ply, whitewater.pvd, whitewater.csv). In checkpoints: a
    /// resumed run carries on bit for bit (src/sim/whitewater_output.hpp); over several processes the fluid is
    /// gathered on the first at every whitewater step and the whitewater stepped there (docs/whitewater.md).
    bool whitewater = false;
    WhitewaterSettings whitewater_settings;
    int whitewater_substeps = 10;
    /// How the caller writes these options in the messages of check_run_options (the CLI's flags, Python's
    /// keywords); unset: RunOptions' own names.
    OptionSpelling spelling;
};

/// The one check of what a run is asked (issue 41; run() makes it before it writes anything, and a front
/// end may make it earlier, before its banner): until, fps and checkpoint_every finite and in range (0: the
/// scene's), the formats of the scene's kind (particles: vtk, csv, ply; grids: vti, csv, obj, ply), the
/// surface's format and its attributes (which need a PLY or VTP surface), the up axis (2D scenes: y), no
/// surface, attributes, whitewater or wall pressure for a grid, no decimated 2D contours, and an end not
/// behind the simulation's `time` (s). A resumed run (opts.resume) keeps its checkpoint's outputs, so only its
/// until, fps and checkpoint_every are checked here. Throws InputError naming the option as
/// opts.spelling writes it.
void check_run_options(const Scene& scene, double time, const RunOptions& opts);

struct FrameRecord {
    int index = 0;
    double time = 0.0;
    std::vector<std::string> files;   ///< Relative to the output directory
    float max_density_error = 0.0f;   ///< Largest compression over the steps since the previous frame
    float mean_density_error = 0.0f;  ///< Mean over those steps of the mean compression
    /// Per boundary object: the fluid's force and torque, the mean over the steps since the previous
    /// frame (eddy/wall_loads.hpp; out/forces.csv); empty for a scene without walls.
    std::vector<ObjectLoad> loads;
    /// The bodies' state at the frame (eddy/bodies.hpp; out/bodies.csv); empty for a scene without bodies.
    std::vector<BodyState> bodies;
    /// Particles at the frame, and since the start: emitted, removed outside the domain, removed beyond
    /// every container, drained by the sinks (eddy/emitters.hpp; summary.json's frames).
    std::uint64_t particles = 0, emitted = 0, removed_outflow = 0, removed_escaped = 0, drained = 0;
};

struct RunResult {
    int exit_code = kExitOk;        ///< kExitOk, kExitDiverged or kExitInterrupted
    std::string status;             ///< "completed" | "diverged" | "interrupted"
    std::string message;            ///< What happened, one line
    nlohmann::json summary;         ///< As written to summary.json
    std::vector<FrameRecord> frames;
};

/// Runs the simulation to the end (or until it diverges), writing frames, pictures and summary.json
/// into opts.out_dir. Frame files of an earlier run in the same folder (frames/particles_*) are
/// removed first, so the folder never mixes two runs. Divergence (NaN, a particle beyond the scene bounds, a time step below dt_min)
/// stops the run at once; frames written so far stay valid and the summary says what happened.
RunResult run(Simulation& sim, const RunOptions& opts, const ExecContext& exec);

/// Writes the complete state of a simulation and `record` (the run loop's: frames so far, statistics)
/// to a checkpoint file, atomically (include/eddy/checkpoint.hpp).
void write_checkpoint(const std::filesystem::path& file, const Simulation& sim, const nlohmann::json& record);

/// Over several processes with pieces (issue 44): each process writes its own particles,
/// `checkpoint_sSTEP_pRANK.eddy` beside `file` (kind "particle_piece"), then the first process writes
/// `file`, the index: a particle checkpoint without particles whose meta "pieces" names them and their
/// counts (`counts`, in rank order). Each call writes one file; the caller orders them (pieces first).
void write_checkpoint_piece(const std::filesystem::path& file, const Simulation& sim, int rank);
void write_checkpoint_index(const std::filesystem::path& file, const Simulation& sim, const nlohmann::json& record,
                            const std::vector<std::uint64_t>& counts);
/// A piece's file name: checkpoint_sSTEP_pRANK.eddy (the step in 12 digits, the rank in 4).
std::string checkpoint_piece_name(std::uint64_t steps, int rank);

/// Rebuilds a simulation from a checkpoint, exactly as it was when written; `record` gets the run
/// loop's record. InputError (one line naming the file) for a missing, foreign-version or corrupt one,
/// or for a scene whose memory estimate exceeds `budget` (as make_simulation; default: no limit).
Simulation read_checkpoint(const std::filesystem::path& file, const ExecContext& exec, nlohmann::json& record,
                           const MemoryBudget& budget = {});
/// The same from a checkpoint already read (read_checkpoint_file), e.g. after looking at its kind.
/// share: which particles a process takes: the contiguous share [n * part / parts, n * (part + 1) / parts)
/// of its n particles (the pieces in rank order; a checkpoint not in pieces is read whole, then cut); {0, 1}:
/// all. With parts > 1 the walls are built as at a start on shares (make_simulation). No start runs on a
/// resume (WCSPH's hydrostatic start neither): the checkpoint's particles replace the built ones.
Simulation restore_simulation(const CheckpointFile& ck, const ExecContext& exec, nlohmann::json& record,
                              const MemoryBudget& budget = {}, ProcessShare share = {});

/// A 64-bit hash (FNV-1a) of the particle state: positions, velocities, ids, bit for bit.
std::uint64_t state_hash(const Simulation& sim);

/// The fluid at a point: pressure (Pa) and velocity (m/s; z = 0 in 2D).
struct ProbeReading {
    float pressure = 0.0f;
    std::array<float, 3> velocity{};
};

/// The fluid `fluid` (the simulation's own, or every process's gathered) at each of `points` (a scene's
/// "probes"): the Shepard-normalised cubic-spline averages over the particles within the method's kernel
/// support h, as interpolate_attributes computes them at a surface's vertices (eddy/surface.hpp); zeros
/// where no particle is within h (a dry probe). The same bits for any thread count.
template <int D>
std::vector<ProbeReading> read_probes(const ParticleSimulation<D>& sim, const ParticleSet<D>& fluid,
                                      std::span<const Vec<D>> points, const ExecContext& exec);
/// The scene's "probes" as points.
template <int D>
std::vector<Vec<D>> probe_points(const Scene& scene);

}  // namespace eddy
