// eddy: whitewater - spray, foam and bubbles as diffuse particles beside a particle fluid (issue 32).
//
// Ihmsen, Akinci, Akinci, Teschner 2012, "Unified spray, foam and bubbles for particle-based fluids"
// (The Visual Computer 28). Each step, from the fluid's positions and velocities alone (any particle
// method: WCSPH, DFSPH, PBF, Clavet), in three passes (src/whitewater/, one file each):
//   potentials.cpp     per fluid particle the potentials, each clamped to [0, 1] by
//                      Phi(I, tau_min, tau_max) = (min(I, tau_max) - min(I, tau_min)) / (tau_max - tau_min):
//                      trapped air  v_diff_i = sum_j |v_ij| (1 - v^_ij . x^_ij) W~(x_ij)            (eq. 2)
//                      wave crest   kappa_i  = sum_j (1 - n^_i . n^_j) W~(x_ij), x^_ji . n^_i < 0,
//                                   kept where v^_i . n^_i >= 0.6 (moving along the outward normal) (eqs. 3-5)
//                      kinetic      E_i = |v_i|^2 / 2 (per unit mass)                              (eq. 6)
//                      with W~(x) = 1 - |x| / h (the paper's radially symmetric weight);
//   generation.cpp     n_d = I_k (k_ta I_ta + k_wc I_wc) dt new particles per fluid particle (eq. 7),
//                      sampled in the cylinder of radius r around x_i along v_i dt (eq. 8), drawn from a
//                      counter-based generator keyed on (seed, step, fluid index, draw): no shared state;
//   advection.cpp      classified by their fluid neighbours within h: spray < 6, bubbles > 20, foam between
//                      (3D; 2D: < 2, > 8); spray ballistic, foam moved with the kernel-weighted fluid
//                      velocity v~, bubbles u += dt (-k_b g) + k_d (v~ - u) (eqs. 9-11); foam ages and
//                      dies, every type dies beyond the fluid's bounding box plus a margin; with the
//                      scene's walls given, a particle that ends inside a solid is put back on its surface
//                      (r/2 off it) with its normal velocity removed, and spray that hits a wall is dropped;
//   output.cpp         frames/whitewater_NNNNN.vtp / .ply with a "type" array, whitewater.pvd, whitewater.csv.
// Results are the same bits for any thread count (gather, don't scatter; new particles appended in
// fluid-particle order). Whitewater is a post-process: it never acts on the fluid. docs/whitewater.md.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/neighborhood.hpp"
#include "eddy/math.hpp"
#include "eddy/settings.hpp"
#include "eddy/up_axis.hpp"

namespace eddy {

/// Settings of the whitewater (Ihmsen et al. 2012). Lengths in metres, as the fluid's.
struct WhitewaterSettings {
    /// Support h of the neighbourhoods (m): potentials, classification, foam's velocity. 0: 4 r, as eddy's SPH.
    float kernel_radius = 0.0f;
    /// Trapped air clamp [tau_min, tau_max] of v_diff (m/s): eq. 2's weighted relative velocity.
    float trapped_air_min = 2.0f;
    float trapped_air_max = 8.0f;
    /// Wave crest clamp [tau_min, tau_max] of the curvature kappa (dimensionless): eqs. 3-5.
    float wave_crest_min = 1.0f;
    float wave_crest_max = 4.0f;
    /// Kinetic energy clamp [tau_min, tau_max] of |v|^2 / 2 (J/kg): eq. 6.
    float kinetic_min = 0.5f;
    float kinetic_max = 5.0f;
    /// Smallest v^ . n^ for a wave crest: the particle moves along its outward normal (the paper's 0.6).
    float crest_alignment = 0.6f;
    /// Smallest |sum_j V grad W_ij| h for a particle to have a normal (a surface particle): interior
    /// particles' normals are noise (dimensionless).
    float normal_threshold = 0.5f;
    /// Generation rates k_ta, k_wc: diffuse particles per fluid particle per second at full potential (1/s).
    float trapped_air_rate = 500.0f;
    float wave_crest_rate = 500.0f;
    /// Foam's lifetime (s): drawn uniformly in [lifetime_min, lifetime_max] at generation; it runs down
    /// only while the particle is foam.
    float lifetime_min = 2.0f;
    float lifetime_max = 5.0f;
    /// Fluid neighbours (within h) below which a diffuse particle is spray, above which it is a bubble;
    /// 0: the paper's 6 and 20 in 3D, 2 and 8 in 2D (a 2D neighbourhood holds a third of the 3D one's).
    int spray_neighbors = 0;
    int bubble_neighbors = 0;
    /// Bubbles: buoyancy k_b (times -g) and drag k_d toward the fluid's velocity (per step, 0..1).
    float buoyancy = 2.0f;
    float drag = 0.5f;
    /// Seed of the counter-based generator.
    int seed = 0;
    /// The most diffuse particles kept (memory: about 40 bytes each in 3D, and each costs about a fifth
    /// of a fluid particle's step time); generation stops at it. 0: as many as there are fluid particles.
    int max_particles = 0;
    /// Diffuse particles farther than this beyond the fluid's bounding box are dropped (m); 0: 10 h.
    float margin = 0.0f;

    float support(float particle_radius) const { return kernel_radius > 0.0f ? kernel_radius : 4.0f * particle_radius; }
    int spray_below(int dimension) const { return spray_neighbors > 0 ? spray_neighbors : dimension == 3 ? 6 : 2; }
    int bubble_above(int dimension) const { return bubble_neighbors > 0 ? bubble_neighbors : dimension == 3 ? 20 : 8; }
};

/// The settings' field table (key, member, unit, range, doc): drives validation, --set-like flags and --help.
std::span<const Field<WhitewaterSettings>> whitewater_fields();

/// Throws InputError naming `where` and the key when a value is out of range or a min exceeds its max.
void validate(const WhitewaterSettings& s, const std::string& where = "whitewater settings");

/// Settings from KEY=VALUE strings (the command line's --ww-set), keys from whitewater_fields(), applied
/// over `base` and validated; InputError naming `where` and the key otherwise.
WhitewaterSettings whitewater_settings_from(const std::vector<std::string>& key_values, const std::string& where,
                                            WhitewaterSettings base = {});

/// Kinds of diffuse particles (the files' "type" array).
enum class Diffuse : std::uint8_t { spray = 0, foam = 1, bubble = 2 };

/// Counts of the diffuse particles now and since the start.
struct WhitewaterCounts {
    std::uint64_t spray = 0, foam = 0, bubbles = 0;  ///< Now, by type
    std::uint64_t generated = 0;                     ///< Since the start
    std::uint64_t expired = 0;                       ///< Foam whose lifetime ran out, since the start
    std::uint64_t escaped = 0;                       ///< Left the fluid's bounding box (plus margin), since the start
    std::uint64_t walled = 0;                        ///< Spray dropped on hitting a wall, since the start
    std::uint64_t capped = 0;                        ///< Not generated because of max_particles, since the start
};

/// Wall-clock seconds of a whitewater step's passes (the benchmarks print them). Read, never acted on: no
/// result depends on them.
struct WhitewaterTimes {
    double advect = 0.0, potentials = 0.0, generate = 0.0;
};

/// The diffuse particles (structure of arrays, all the same length).
template <int D>
struct Whitewater {
    static constexpr int kDimension = D;
    std::vector<Vec<D>> position;        ///< m
    std::vector<Vec<D>> velocity;        ///< m/s
    std::vector<std::uint8_t> type;      ///< Diffuse: 0 spray, 1 foam, 2 bubble
    std::vector<float> lifetime;         ///< Remaining (s); runs down while foam
    std::vector<std::uint32_t> id;       ///< Unique, in order of generation
    std::uint32_t next_id = 0;
    WhitewaterCounts counts;
    WhitewaterTimes times;               ///< The last step's passes

    std::size_t size() const { return position.size(); }
    bool empty() const { return position.empty(); }
    void clear() { *this = Whitewater{}; }
    std::size_t memory_bytes() const {
        return position.capacity() * sizeof(Vec<D>) + velocity.capacity() * sizeof(Vec<D>) + type.capacity() +
               lifetime.capacity() * sizeof(float) + id.capacity() * sizeof(std::uint32_t);
    }
};

/// Per fluid particle: the clamped potentials and the number of diffuse particles it emits (pass 1).
struct WhitewaterPotentials {
    std::vector<float> trapped_air;  ///< I_ta in [0, 1]
    std::vector<float> wave_crest;   ///< I_wc in [0, 1]
    std::vector<float> kinetic;      ///< I_k in [0, 1]
};

/// Pass 1 (src/whitewater/potentials.cpp): the three potentials of every fluid particle.
template <int D>
WhitewaterPotentials whitewater_potentials(std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
                                           float particle_radius, const WhitewaterSettings& s, const ExecContext& exec);

/// One whitewater step after a fluid step of dt seconds that left the fluid at fluid_pos / fluid_vel:
/// existing diffuse particles are classified, moved and aged (advection.cpp), then new ones are
/// generated from the fluid's potentials (generation.cpp) and classified. step_index keys the random
/// draws (use the simulation's step count; a post-process its own count): the same inputs give the
/// same bits on any number of threads. Empty fluid: every diffuse particle is dropped (escaped).
/// walls: the scene's walls at the fluid's time (eddy/boundary.hpp: containers, solids, models, moving
/// ones at their pose; the simulation's own, or scene_walls of its scene): a diffuse particle moved or
/// generated into a wall, or within r/2 of it, is put back r/2 off its surface (keep_inside, the margin
/// of a lone fluid particle: wall_contact_margin) and loses the part of its velocity into the wall
/// (guard_walls); spray that hits a wall is dropped instead (counts.walled: a droplet joins the film on
/// the wall; the paper does not say). Null or empty: no walls, as before.
template <int D>
void step_whitewater(Whitewater<D>& w, std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
                     float particle_radius, Vec<D> gravity, double dt, std::uint64_t step_index,
                     const WhitewaterSettings& s, const ExecContext& exec, const std::vector<Wall<D>>* walls = nullptr);

/// The same step over the fluid taken in its particles' id order (fluid_id: each particle's stable id,
/// ParticleSet::id), whatever order it is held in: the solvers keep it along a space-filling curve and a run
/// over several processes gathers it by id, so a whitewater keyed on the fluid's order would differ between
/// them. Taken in id order it is the same bits on any process count and thread count. `eddy run
/// --whitewater`, the viewer and `eddy whitewater RUN_DIR` step through this one.
/// The fluid is read where it is held, through a grid whose buckets are in id order (each list in (cell,
/// id) order): nothing is copied. `shared`: the method's own lists and grid at these positions
/// (fluid_lists_between_steps, eddy/simulation.hpp), taken instead of a search of the whitewater's own when
/// their radius is the whitewater's support; they are the lists that search would give, so the bits are
/// the same either way.
template <int D>
void step_whitewater_by_id(Whitewater<D>& w, std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
                           std::span<const std::uint32_t> fluid_id, float particle_radius, Vec<D> gravity, double dt,
                           std::uint64_t step_index, const WhitewaterSettings& s, const ExecContext& exec,
                           const std::vector<Wall<D>>* walls = nullptr, const FluidLists<D>& shared = {});

/// The order that lists ids from the smallest up, ties by index (order[k]: the index of the k-th smallest).
std::vector<std::uint32_t> id_order(std::span<const std::uint32_t> ids);

/// Counts by type of the particles now (w.counts.spray/foam/bubbles are kept up to date by step_whitewater).
template <int D>
void count_whitewater(Whitewater<D>& w);

// ---- files (src/whitewater/output.cpp) ----

/// frames/whitewater_NNNNN.vtp: VTK XML PolyData, points as vertices, point data type (UInt8),
/// velocity (Float32 x3), lifetime (Float32), id (UInt32); 2D points get z = 0. Atomic.
template <int D>
void write_whitewater_vtp(const std::filesystem::path& path, const Whitewater<D>& w, UpAxis up = UpAxis::y);
/// Binary little-endian PLY: x y z vx vy vz lifetime (float), type (uchar), id (uint). Atomic.
template <int D>
void write_whitewater_ply(const std::filesystem::path& path, const Whitewater<D>& w, UpAxis up = UpAxis::y);

/// The whitewater files of a run folder, frame by frame: frames/whitewater_NNNNN.{vtp,ply},
/// whitewater.pvd (the .vtp at their times) and whitewater.csv (frame,time,spray,foam,bubbles).
class WhitewaterFiles {
public:
    struct Row {
        int frame = 0;
        double time = 0.0;
        std::uint64_t spray = 0, foam = 0, bubbles = 0;
    };
    WhitewaterFiles(std::filesystem::path out_dir, UpAxis up = UpAxis::y) : m_out(std::move(out_dir)), m_up(up) {}
    /// Writes frame `frame` at `time` and rewrites whitewater.pvd and whitewater.csv. Returns the files
    /// written, relative to the run folder.
    template <int D>
    std::vector<std::string> write_frame(int frame, double time, Whitewater<D>& w);
    const std::vector<Row>& rows() const { return m_rows; }
    /// A resumed run's files carry on: the rows of the frames its checkpoint kept (whitewater.pvd lists
    /// their .vtp files at the rows' times).
    void restore(std::vector<Row> rows);

private:
    std::filesystem::path m_out;
    UpAxis m_up;
    std::vector<std::pair<double, std::string>> m_pvd;
    std::vector<Row> m_rows;
};

/// `eddy whitewater RUN_DIR`: the whitewater of a finished run from its frames
/// (frames/particles_NNNNN.{pvtp,vtp,ply,csv} with velocities; times from particles.pvd or summary.json,
/// particle radius from summary.json), written into RUN_DIR as above. The run's scene is rebuilt from
/// summary.json (scene_document: the scene as run; else scene_file as it is now) for its walls (scene_walls;
/// prescribed motions followed, bodies left out) and gravity; when it cannot be, a warning and no walls.
struct WhitewaterPostOptions {
    std::filesystem::path run_dir;
    WhitewaterSettings settings;
    int substeps = 10;            ///< Whitewater steps between two frames (fluid interpolated linearly)
    float particle_radius = 0.0f; ///< 0: summary.json's
    /// Gravity in the files' axes (m/s^2); unset: the run's scene's (9.81 down when it cannot be reloaded).
    std::optional<std::array<double, 3>> gravity;
    bool allow_outside_references = false;  ///< frames and .pvtp pieces leading outside their folder
    /// Frames, models and particle files larger than this are refused from their sizes, unread.
    MemoryBudget budget;
};
struct WhitewaterPostReport {
    int frames = 0;
    int dimension = 0;
    std::size_t walls = 0;                  ///< Walls the diffuse particles were kept out of
    std::vector<std::string> warnings;      ///< One line each (e.g. the scene could not be reloaded: no walls)
    std::vector<WhitewaterFiles::Row> rows;
};
WhitewaterPostReport whitewater_post_process(const WhitewaterPostOptions& opts, const ExecContext& exec);

extern template struct Whitewater<2>;
extern template struct Whitewater<3>;

}  // namespace eddy
