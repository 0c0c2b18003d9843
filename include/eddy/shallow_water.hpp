// eddy: heightfield shallow water over terrain on a staggered (MAC) grid, seed 001 after
// Chentanez & Mueller 2010, "Real-time Simulation of Large Bodies of Water with Small Scale Details".
//
// Unknowns: terrain (bed) height H and water depth h at cell centres, surface eta = H + h; velocity u on
// the x-faces, w on the y-faces; cell size dx. One step of length dt (the seed's order: advection first,
// boundary conditions last, so that advection sees zero velocity where there is no water):
//   sources        h += rate dt (water sources, drops), ink += rate dt (ink sources)
//   advection      (u, w, ink) by the seed's semi-Lagrangian "gather" or its direct upwind scheme
//   vorticity      v += dt eps dx (N x omega), N = grad|omega| / |grad|omega||   (Fedkiw et al. 2001)
//   height         h_ij -= dt/dx [ (hbar u)_{i+1/2} - (hbar u)_{i-1/2} + (hbar w)_{j+1/2} - (hbar w)_{j-1/2} ]
//                  hbar the upwind face depth (paper eq. 6), lowered by the depth limiter (sec. 2.1.5)
//                  h_adj = max(0, mean of the cell's 4 hbar - beta dx / (g dt)); outflow scaled so that
//                  no cell gives more than it holds (h >= 0 without a clamp that would create water)
//   overshooting   wave edges (eta_C - eta_L > lambda_edge dx and eta_C > eta_R) pass a part alpha_edge of
//                  their excess over the lower neighbour to it (sec. 2.2; as a transfer, so volume is kept)
//   velocity       u_{i+1/2} += -g dt/dx (eta_{i+1} - eta_i) + a_x dt   (paper eq. 7), likewise w
//                  |u| <= alpha dx / dt   (sec. 2.1.5)
//   boundaries     walls: zero normal velocity on the border and on obstacle faces; open borders:
//                  radiation condition u_t + sqrt(g h) u_n = 0 on the border faces, ghost depth = border
//                  cell's (waves leave, a river flows through); shore rule: u_{i+1/2} = 0 when
//                  (h_i <= eps and H_i > eta_{i+1}) or (h_{i+1} <= eps and H_{i+1} > eta_i), eps = 1e-4 dx
// Floating bodies (scene key "bodies"; docs/bodies.md, "Shallow water") add three passes: their loads and
// motion first (buoyancy rho g s A from the submerged column under eta, implicit drag, semi-implicit
// Euler), their bounds (grid borders, terrain), and after the height pass (and the overshooting reduction,
// which leaves their cells alone) their displacement: depth = water + b, b = k (H + w - z_bottom) per
// sample of the cells under them, the water itself untouched.
// Every pass is a gather over rows of cells: each thread writes only its own cells, so the result has
// the same bits on any number of threads (the bodies' passes are serial over their few cells).
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/checkpoint.hpp"
#include "eddy/pass_times.hpp"
#include "eddy/clock.hpp"
#include "eddy/exec.hpp"
#include "eddy/up_axis.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/scene.hpp"
#include "eddy/settings.hpp"

namespace eddy {

struct ShallowWaterSettings {
    /// "semi_lagrangian" (the seed's gather) | "upwind" (the seed's direct scheme) | "conservative"
    /// (momentum conservative, Stelling & Duinmeijer 2003: right shock speeds and dry fronts) | "none"
    std::string advection = "conservative";
    float advection_step = 1.0f;   ///< Back-trace length as a fraction of dt (the seed shortens it to 0.5)
    float advection_blend = 1.0f;  ///< Fraction of the advected value blended in (the seed uses 0.5)
    int advection_iterations = 1;  ///< Advection passes per step (the seed: 2 with a 0.5 step)
    float alpha = 0.5f;            ///< Velocity clamp |u| <= alpha dx / dt (sec. 2.1.5)
    float beta = 2.0f;             ///< Depth limiter: face depths above beta dx / (g dt) are lowered (sec. 2.1.5)
    float edge_threshold = 2.0f;   ///< lambda_edge of the overshooting reduction, in cells (sec. 2.2)
    float edge_alpha = 0.3f;       ///< alpha_edge: share of a wave edge's excess passed on (0: off)
    float dry_depth = 1e-4f;       ///< eps of the shore rule, as a fraction of dx
    float vorticity = 0.0f;        ///< Vorticity confinement eps (1/s): dv = dt eps dx (N x omega)
    float acceleration_x = 0.0f;   ///< External horizontal acceleration along x (m/s^2)
    float acceleration_y = 0.0f;   ///< External horizontal acceleration along y (m/s^2)
    float time_step = 0.0f;        ///< Fixed time step (s); 0: adaptive from the wave speed
    float cfl = 0.25f;             ///< Adaptive step: dt = cfl dx / max(sqrt(g h) + |v|)
    float max_time_step = 0.02f;   ///< Upper bound of the adaptive step (s)
    std::string precision = "float";  ///< "float" | "double": the grid's number type
    int rows_per_task = 8;         ///< Rows of cells per parallel task (results do not depend on it)
    // Floating bodies (scene key "bodies"; docs/bodies.md, "Shallow water").
    float water_density = 1000.0f;        ///< rho of the water (kg/m^3): buoyancy rho g V_sub, drag
    float displacement_stiffness = 3.0f;  ///< k of the displaced depth b = k (H + w - z_bottom): the body's lid
                                          ///< (k / (1 + k) of the submerged volume is displaced at rest)
};

/// The field table of ShallowWaterSettings (scene "settings" for "method": "shallow_water").
std::span<const Field<ShallowWaterSettings>> shallow_water_fields();

/// A rectangle of cells adding water or ink: all cells whose centre lies in [min, max] (m).
struct GridSource {
    std::array<double, 2> min{}, max{};
    double rate = 0.0;                 ///< Water: depth per second (m/s); ink: concentration per second (1/s)
    double start = 0.0, end = 1e300;   ///< Active while start <= t < end (s)
};

/// Random drops falling into the water: each adds a cosine bump of the given height and radius.
struct DropSpec {
    double rate = 0.0;       ///< Drops per second
    double radius = 0.1;     ///< m
    double height = 0.05;    ///< m of water at the drop's centre
    double start = 0.0, end = 1e300;
    std::uint64_t seed = 1;  ///< Random positions are reproducible
    double ink = 0.0;        ///< Ink added at the centre with each drop
};

/// A rigid body floating on the grid (scene key "bodies"; docs/bodies.md, "Shallow water"). The grid's
/// world: x, y horizontal, z up. Mass from density and shape unless given; inertia from the shape.
struct ShallowBodySpec {
    std::string shape;                      ///< "box" | "sphere" | "cylinder"
    std::array<double, 3> center{};         ///< Centre of mass (m)
    std::array<double, 3> size{};           ///< box: full extents along its own x, y, z (m)
    double radius = 0.0;                    ///< sphere, cylinder (m)
    double length = 0.0;                    ///< cylinder: along its axis (m)
    std::string axis = "x";                 ///< cylinder: its axis before the yaw ("x", "y": a log; "z": upright)
    double yaw = 0.0;                       ///< Rotation about z (degrees), box and cylinder
    double density = 0.0;                   ///< kg/m^3 (> 0), or
    double mass = 0.0;                      ///< kg (> 0): one of the two
    std::array<double, 3> velocity{};       ///< m/s
    std::array<double, 3> angular_velocity{};  ///< rad/s, world axes
    double drag = 1.0;                      ///< C_d: per wetted cell 0.5 rho C_d dx^2 |v_rel| v_rel
};

/// A body's state as the solver integrates it (world axes, z up). The shape's half extents: box (a, b, c);
/// sphere (r, r, r); cylinder (half length along its own x, r, r).
struct ShallowBody {
    int shape = 0;                          ///< 0 box, 1 sphere, 2 cylinder
    std::array<double, 3> half{};
    double mass = 0.0;
    std::array<double, 3> inertia{};        ///< Principal moments in the body's own axes (kg m^2)
    double drag = 1.0;
    std::array<double, 3> x{}, v{}, omega{};  ///< Centre (m), velocity (m/s), angular velocity (rad/s, world)
    std::array<double, 4> q{1, 0, 0, 0};    ///< Orientation (w, x, y, z): body axes -> world
    std::array<double, 3> force{}, torque{};  ///< The water's force (N) and torque about the centre (N m), last step
    double bound = 0.0;                     ///< Radius of a sphere about x holding the body (m)
};

/// A shallow-water scene, from the JSON keys that a particle scene does not have (docs/scenes.md).
struct ShallowWaterScene {
    int nx = 0, ny = 0;      ///< Cells along x and y
    double dx = 0.0;         ///< Cell size (m)
    double gravity = 9.81;   ///< g (m/s^2), acting along -z (the height)
    std::string terrain = "0";         ///< Expression of x, y (m), or empty when a heightmap is given
    std::filesystem::path heightmap;   ///< Grayscale PNG: terrain = offset + scale * gray (0..1)
    double heightmap_scale = 1.0, heightmap_offset = 0.0;
    std::string surface;               ///< Initial eta(x, y); or
    std::string depth;                 ///< initial h(x, y); one of the two (default: depth 0)
    std::string u = "0", v = "0";      ///< Initial cell-centred velocity (m/s)
    std::string ink_initial = "0";     ///< Initial ink
    std::string obstacles;             ///< Expression, non-zero inside solid cells; empty: none
    bool open[4] = {false, false, false, false};  ///< Borders x = 0, x = Lx, y = 0, y = Ly: wall (false) or open
    std::vector<GridSource> water_sources, ink_sources;
    std::vector<DropSpec> drops;
    std::vector<ShallowBodySpec> bodies;
    ShallowWaterSettings settings;
};

/// The body a spec describes at rest in its pose (mass, inertia, orientation from axis and yaw).
ShallowBody make_shallow_body(const ShallowBodySpec& spec);

/// Reads and checks the shallow-water keys of a scene (s.method == "shallow_water"). Throws InputError
/// naming the file and the key (bad grid, bad expression, heightmap not found, unknown key...).
ShallowWaterScene parse_shallow_water(const Scene& s);

/// The grid: row-major cells (index j * nx + i), x-faces ((nx + 1) * ny, index j * (nx + 1) + i is
/// the face at x = i dx), y-faces (nx * (ny + 1), index j * nx + i is the face at y = j dx).
template <class Real>
struct ShallowWaterGrid {
    int nx = 0, ny = 0;
    Real dx = 1;
    std::vector<Real> terrain, depth, ink;  ///< Cell centres: H (m), h (m), ink
    std::vector<Real> u, w;                 ///< Face velocities (m/s)
    std::vector<std::uint8_t> solid;        ///< 1: an obstacle cell (no water, walls on its faces)
    /// Depth of the bodies' displacement b in each cell (m), part of `depth` (empty without bodies): the
    /// water itself is depth - displaced.
    std::vector<Real> displaced;

    std::size_t cells() const { return std::size_t(nx) * std::size_t(ny); }
    std::size_t cell(int i, int j) const { return std::size_t(j) * nx + i; }
    std::size_t uface(int i, int j) const { return std::size_t(j) * (nx + 1) + i; }
    std::size_t wface(int i, int j) const { return std::size_t(j) * nx + i; }
    Real eta(std::size_t c) const { return terrain[c] + depth[c]; }
    /// Cell-centred velocity: the mean of the two faces along each axis.
    Real uc(int i, int j) const { return Real(0.5) * (u[uface(i, j)] + u[uface(i + 1, j)]); }
    Real wc(int i, int j) const { return Real(0.5) * (w[wface(i, j)] + w[wface(i, j + 1)]); }
    /// Water volume (m^3) without the bodies' displacement, summed in double in a fixed order.
    double volume() const;
    /// The bodies' displaced volume (m^3), sum of `displaced` dx^2.
    double displaced_volume() const;
};

/// Where a solver's grid lies in a larger grid: a block of the distributed layer (src/distributed/), cells
/// it owns plus halo cells copied from its neighbours. A solver on a block runs every pass on all of its
/// cells (the halo's outer rows go wrong at the block's edge and are overwritten by the next exchange)
/// and computes with global cell indices where a value depends on them (back-traces, drops, sources), so
/// that owned cells get the same bits as on the whole grid; its statistics count only owned cells/faces.
struct GridBlock {
    int i0 = 0, j0 = 0;                 ///< Global index of the block's cell (0, 0)
    int global_nx = 0, global_ny = 0;   ///< The whole grid's cells
    int own_i0 = 0, own_i1 = 0;         ///< Owned cells, local indices [own_i0, own_i1) x [own_j0, own_j1)
    int own_j0 = 0, own_j1 = 0;
};

/// A grid that is its own whole.
inline GridBlock whole_grid(int nx, int ny) {
    GridBlock b;
    b.global_nx = b.own_i1 = nx;
    b.global_ny = b.own_j1 = ny;
    return b;
}

/// The solver's clock and the quantities one step hands to the next (checkpoints, the distributed layer).
struct ShallowWaterClock {
    double time = 0.0, inflow = 0.0, outflow = 0.0;
    double max_wave_speed = 0.0;  ///< For the adaptive step (m/s)
    double max_depth = 0.0;       ///< For the depth limiter's test (m)
    double added_depth = 0.0;
    std::uint64_t steps = 0, drop_counter = 0;
};

/// What one grid step measured; PassTimes: the seconds of its named passes (eddy/pass_times.hpp).
struct ShallowWaterStats : PassTimes {
    double dt = 0.0;
    double max_speed = 0.0;     ///< Largest face speed after the step (m/s)
    double max_depth = 0.0;
    double outflow = 0.0;       ///< Volume that left through open borders during the step (m^3)
    double inflow = 0.0;        ///< Volume added by sources and drops (m^3)
    std::size_t clamped = 0;    ///< Faces whose speed hit the alpha dx/dt clamp
    bool non_finite = false;
    /// On a block: owned cells whose semi-Lagrangian back-trace reached past the block's halo (their
    /// values would differ from the whole grid's; the distributed layer stops the run).
    std::size_t halo_overrun = 0;
};

/// The solver: the grid, its scene and the clock. Holds scratch arrays; one per simulation.
template <class Real>
class ShallowWaterSolver {
public:
    /// Builds the grid (expressions evaluated at cell centres). Throws InputError on bad input.
    ShallowWaterSolver(const ShallowWaterScene& scene, const std::string& where);
    /// Only the block `b` of the scene's grid (nx x ny cells from (b.i0, b.j0), halo included): the cells
    /// the whole grid would have there, from the scene's expressions and heightmap at their positions in
    /// the whole grid. The initial wave speed and depth are of the owned cells (set_global_maxima).
    ShallowWaterSolver(const ShallowWaterScene& scene, const std::string& where, const GridBlock& b, int nx, int ny);
    /// The block `b` of `whole` (cells [b.i0, b.i0 + nx) x [b.j0, b.j0 + ny), halos included): the same
    /// state, clock and settings; borders of the block inside the whole grid are closed (only halo cells
    /// see them). With keep_totals false the inflow/outflow totals start at 0 (one block keeps them).
    ShallowWaterSolver(const ShallowWaterSolver& whole, const GridBlock& b, int nx, int ny, bool keep_totals);
    /// The next time step (s): fixed, or cfl dx / max(sqrt(g h) + |v|), at most max_time_step.
    double suggest_dt() const;
    /// Advances by dt (s).
    ShallowWaterStats step(double dt, const ExecContext& exec);

    const ShallowWaterGrid<Real>& grid() const { return m_g; }
    ShallowWaterGrid<Real>& grid() { return m_g; }
    const ShallowWaterScene& scene() const { return m_scene; }
    double time() const { return m_time; }
    std::uint64_t steps() const { return m_steps; }
    double total_inflow() const { return m_inflow; }
    double total_outflow() const { return m_outflow; }
    /// Frees the scratch arrays a step needs (half of the solver's memory): for a grid that only holds
    /// state (the distributed layer's gather target). step() must not be called afterwards.
    void release_scratch() {
        for (auto* v : {&m_a, &m_b, &m_c, &m_u2, &m_w2}) std::vector<Real>().swap(*v);
    }
    /// Where this grid lies in the whole (the whole grid itself unless built as a block).
    const GridBlock& block() const { return m_block; }
    ShallowWaterClock clock() const;
    void set_clock(const ShallowWaterClock& c);
    /// The largest face speed and depth over the whole grid (the distributed layer's reductions of
    /// ShallowWaterStats::max_speed and max_depth): the next time step and depth-limiter test use them.
    void set_global_maxima(double max_speed, double max_depth);
    /// This grid's largest face speed and depth (owned ones) at its last velocity pass (or construction).
    double max_speed() const { return m_max_speed; }
    double max_depth() const { return m_max_depth; }
    /// Changes the settings of a running simulation (the viewer's live controls): checked against the
    /// table; the precision cannot change (InputError). gravity (m/s^2) > 0.
    void set_settings(const ShallowWaterSettings& s, double gravity, const std::string& where = "settings");
    /// Replaces the water and ink sources (checked ones: parse_shallow_water), from the next step on.
    void set_sources(std::vector<GridSource> water, std::vector<GridSource> ink) {
        m_scene.water_sources = std::move(water);
        m_scene.ink_sources = std::move(ink);
    }
    /// Adds a cosine bump of water (and ink) at (x, y): used by drops and by the viewer's clicks.
    void add_drop(double x, double y, double radius, double height, double ink);
    /// The floating bodies (scene order), integrated by step() with the water (docs/bodies.md).
    const std::vector<ShallowBody>& bodies() const { return m_bodies; }
    std::vector<ShallowBody>& bodies() { return m_bodies; }
    /// The grid and the clock as a step leaves them (checkpoint and resume).
    void save_state(StateWriter& w) const;
    void load_state(StateReader& r);

private:
    void apply_sources(double dt, ShallowWaterStats& st);
    void advect_semi_lagrangian(Real dt, const ExecContext& exec);
    void advect_upwind(Real dt, const ExecContext& exec);
    void advect_conservative(Real dt, const ExecContext& exec);
    void vorticity_confinement(Real dt, const ExecContext& exec);
    void close_walls(const ExecContext& exec);
    void integrate_height(Real dt, const ExecContext& exec, ShallowWaterStats& st);
    void integrate_height_fast(Real dt, const ExecContext& exec, ShallowWaterStats& st);
    void reduce_overshooting(const ExecContext& exec);
    void integrate_velocity(Real dt, const ExecContext& exec, ShallowWaterStats& st);
    void list_displaced_cells();  // m_body_displaced_cells from the grid's displaced depth

    ShallowWaterScene m_scene;
    std::vector<ShallowBody> m_bodies;
    std::vector<Real> m_body_ax, m_body_ay;  // the bodies' drag on the water per cell (m/s^2), zero elsewhere
    std::vector<Real> m_body_b;              // scratch: the new displaced depth, zero between steps
    std::vector<std::uint32_t> m_body_drag_cells, m_body_displaced_cells;  // where the two above are not zero
    std::vector<std::uint8_t> m_body_mark;   // scratch: zero between steps
    ShallowWaterGrid<Real> m_g;
    std::vector<Real> m_a, m_b, m_c;  // scratch: cell-sized
    std::vector<Real> m_u2, m_w2;     // scratch: face-sized
    double m_time = 0.0, m_inflow = 0.0, m_outflow = 0.0;
    std::uint64_t m_steps = 0, m_drop_counter = 0;
    double m_max_wave_speed = 0.0;    // for the adaptive step, from the last velocity pass
    double m_max_depth = 0.0;         // largest depth at the last velocity pass (m)
    double m_max_speed = 0.0;         // largest face speed at the last velocity pass (m/s)
    double m_added_depth = 0.0;       // largest depth added to a cell by this step's sources (m)
    bool m_has_solid = false;         // obstacles present
    /// Is the cell with global index (i, j) one of this block's own (statistics count only those)?
    bool owns(int i, int j) const {
        const int li = i - m_block.i0, lj = j - m_block.j0;
        return li >= m_block.own_i0 && li < m_block.own_i1 && lj >= m_block.own_j0 && lj < m_block.own_j1;
    }
    GridBlock m_block;                // the whole grid unless built as a block
    bool m_partial = false;           // built as a block
    std::size_t m_halo_overrun = 0;   // this step's (advection)
};

/// A shallow-water simulation as the CLI runs it: the scene, and the solver in the chosen precision.
struct ShallowWaterSimulation {
    Scene scene;
    ShallowWaterScene spec;
    std::variant<ShallowWaterSolver<float>, ShallowWaterSolver<double>> solver;
};

/// Checks the scene (parse_shallow_water), then its memory (estimate_memory with the frame `formats`,
/// empty: the scene's; the grid and the heightmap's pixels counted from its header) against `budget`
/// before allocating anything (default: no limit), then builds the solver. Throws InputError.
ShallowWaterSimulation make_shallow_water(const Scene& scene, const MemoryBudget& budget = {},
                                          std::span<const std::string> formats = {});

struct RunOptions;
struct RunResult;
/// The run loop for grids: frames (vti, csv, obj, ply), pictures, summary.json with the water volume per
/// frame; the same options, progress, divergence and interrupt handling as the particle run.
RunResult run(ShallowWaterSimulation& sim, const RunOptions& opts, const ExecContext& exec);

/// Checkpoints of grids (include/eddy/checkpoint.hpp): the scene as run, every field of the grid, the
/// clock and the run loop's `record`; restore_shallow_water rebuilds the simulation exactly.
void write_checkpoint(const std::filesystem::path& file, const ShallowWaterSimulation& sim, const nlohmann::json& record);
/// The grid's memory (with the run's frame formats) is checked against `budget` first, as make_shallow_water.
ShallowWaterSimulation restore_shallow_water(const CheckpointFile& ck, nlohmann::json& record,
                                             const MemoryBudget& budget = {});

namespace io {
/// VTK ImageData (.vti, binary appended): cell data terrain, depth, eta, velocity (cell-centred), ink.
template <class Real>
void write_vti(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g);
/// The owned cells of a block (GridBlock) as a .vti piece at its place in the whole grid (node extent
/// i0 + own_i0 .. i0 + own_i1, likewise in y): the files write_pvti lists.
template <class Real>
void write_vti_piece(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g, const GridBlock& b);
/// A piece of a parallel .pvti: cells [x0, x1) x [y0, y1) of the whole grid, in the file `source`
/// (relative to the .pvti's folder).
struct GridPiece {
    int x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    std::string source;
};
/// VTK's parallel ImageData (.pvti): the whole nx x ny grid as the listed pieces, which ParaView opens as
/// one dataset (the arrays of write_vti; `displaced` too when the pieces carry it: a grid with floating
/// bodies).
void write_pvti(const std::filesystem::path& path, int nx, int ny, double dx, bool double_precision,
                std::span<const GridPiece> pieces, bool displaced = false);
/// CSV, header i,j,x,y,terrain,depth,u,v,ink (cell-centred velocity).
template <class Real>
void write_grid_csv(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g);
/// The water surface over wet cells as a triangle mesh, vertex (x, y, eta) of the grid's z-up world in
/// the axes of `up` (eddy/up_axis.hpp: y up by default, as every file eddy writes); .obj or .ply.
template <class Real>
void write_water_mesh(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g, UpAxis up = UpAxis::y);
}  // namespace io

/// A shaded picture of the grid: terrain (hill-shaded), water by depth, ink, and the floating bodies'
/// footprints (wood brown, darker where under water) when `bodies` is given. Grids at most 8 cells wide
/// are drawn as a side view (terrain, surface and the bodies' columns along x).
template <class Real>
void render_grid_png(const std::filesystem::path& path, const ShallowWaterGrid<Real>& g, int max_size = 1024,
                     const std::vector<ShallowBody>* bodies = nullptr);

/// A 64-bit hash (FNV-1a) of depth, velocities and ink, bit for bit.
std::uint64_t state_hash(const ShallowWaterSimulation& sim);

/// eddy run's clock for a grid (as next_landing of particles, eddy/simulation.hpp): the next frame time
/// k / fps of the scene's output.fps after the grid's time, or the scene's duration when that comes first
/// (past it the frames go on). The viewer, the page and Python's ShallowWater.step() step on it.
double next_landing(const ShallowWaterSimulation& sim);

/// One step of the grid: the solver's suggest_dt(), cut by landing_dt (below) to land on `target` (s) as
/// the grid run's steps are; target 0: the solver's own step. The same scene stepped to the same step or
/// time this way gives eddy run's state_hash.
ShallowWaterStats step(ShallowWaterSimulation& sim, const ExecContext& exec, double target);

/// Why a grid step means the run has diverged, in words, or "" when it does not (the grid run's guard): a
/// depth or velocity not finite, cells traced back past their block's halo (several processes), or the
/// solver's suggested step `suggested_dt` (s) below 1e-9 s.
std::string grid_step_divergence(const ShallowWaterStats& st, double suggested_dt);

/// A slice of the grid run's loop (as step_slice of particles, eddy/simulation.hpp): the steps `limits`
/// allows, each landing on its clock (by default next_landing(sim)) and checked by grid_step_divergence;
/// `after_step` sees every step, also the one that diverged. The viewer, the page and Python's
/// ShallowWater.step() step through it.
using GridSliceResult = SliceOf<ShallowWaterStats>;
GridSliceResult step_slice(ShallowWaterSimulation& sim, const ExecContext& exec, const SliceLimits& limits,
                           const std::function<void(const ShallowWaterStats&)>& after_step = {});

/// The step a run takes toward the next frame time `target` (s), from the solver's suggest_dt(): the
/// last one lands on it, and one that would leave a sliver under dt takes half of what is left.
inline double landing_dt(double dt, double time, double target) {
    const double left = target - time;
    if (left <= dt) return left;
    if (left < 2.0 * dt) return 0.5 * left;
    return dt;
}

}  // namespace eddy
