// eddy-view: the simulation thread. It owns the Simulation (or the synthetic heightfield), steps it
// while playing, applies the window's commands between steps (reset, settings, gravity, added
// particles, mouse force) and publishes a Snapshot: a copy of what the window draws. The window only
// ever reads snapshots, so drawing never changes the results.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/exec.hpp"
#include "eddy/interaction.hpp"
#include "eddy/load_display.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/wall_loads.hpp"
#include "eddy/whitewater.hpp"
#include "bodies_view.hpp"
#include "coloring.hpp"
#include "heightfield.hpp"
#include "mesh.hpp"
#include "models.hpp"

namespace eddy::view {

using eddy::MouseForce;  // the mouse's brush (eddy/interaction.hpp), shared with the web page

/// What the window draws and shows; immutable once published.
struct Snapshot {
    std::uint64_t generation = 0;   ///< Changes on every reset (new scene, method)
    std::shared_ptr<const Scene> scene;  ///< The scene as running (settings and gravity as applied)
    int dimension = 2;
    bool heightfield_mode = false;  ///< A grid (shallow water, or the synthetic demo): draw `hf`
    bool synthetic = false;         ///< The synthetic demo heightfield (--demo-heightfield)
    std::vector<float> fluid;       ///< x, y, z, scalar per particle (z = 0 in 2D)
    ColorField field = ColorField::speed;
    float scalar_min = 0, scalar_max = 0;
    std::vector<float> boundary;    ///< x, y, z, 0 per wall particle (2D only; not those of models)
    std::vector<float> wall_lines;  ///< 3D edges of the analytic walls (boxes, cylinders, spheres), posed: pairs of points
    /// The scene's models (meshes, polygons): shared rest geometry and the pose at `time`. Their wall
    /// particles are not in `boundary`: the window draws the models themselves.
    std::vector<ModelView> models;
    std::array<float, 3> lo{}, hi{};  ///< Scene bounds (m)
    std::array<float, 3> centroid{};  ///< Mean fluid position (m)
    float particle_radius = 0.01f;  ///< r (m)
    float kernel_h = 0.04f;         ///< Support radius h (m)
    float speed_scale = 1.0f;       ///< Speed at the middle of the colour map (m/s), from the fluid height
    float rest_density = 0.0f;      ///< rho0 of an SPH method (kg/m^3; 2D kg/m^2); 0: none (Clavet, grids)
    float pressure_scale = 0.0f;    ///< rho0 g H over the fluid's height H (Pa; 2D N/m); 0: none
    Heightfield hf;                 ///< heightfield_mode only
    /// The fluid's reconstructed surface, when the simulation thread computes one (see docs/viewer.md,
    /// "Surface mesh"); surface_version changes whenever the mesh does.
    std::shared_ptr<const SurfaceMesh> surface;
    std::uint64_t surface_version = 0;
    double time = 0;
    std::uint64_t steps = 0;
    float dt = 0, mean_density_error = 0, max_density_error = 0;
    float max_speed = 0;            ///< Largest particle speed (m/s)
    double ms_per_step = 0;
    /// The last batch's steps by named pass (StepStats::passes, as summary.json's "passes"): each pass's
    /// milliseconds per step, in the order they ran. Particle methods only.
    std::vector<std::pair<std::string, double>> pass_ms;
    std::size_t particles = 0;
    std::string status;             ///< "" or what happened last (diverged, a bad setting, a body dropped, a note)
    /// The steps stopped on a failure (diverged, a step threw): the steps asked for were not all taken.
    bool halted = false;
    /// The fluid's load on each boundary object (issue 28, eddy/wall_loads.hpp; the scene's
    /// `boundaries` in order): force (N; 2D N/m) and torque about its pivot (N m; 2D N m/m, z only),
    /// the mean over the last RecentLoads::kWindow of simulated time. Empty while unknown: no step
    /// since the reset, or a method that gathers no loads.
    std::vector<ObjectLoad> loads;
    /// Per boundary object: its pivot where it is now (BoundaryMotion::pivot moved by the pose) (m).
    std::vector<std::array<float, 3>> pivots;
    /// The fluid's weight (N; 2D N/m): particles x mass x |gravity|, with 9.81 m/s^2 when gravity is
    /// off; the window scales the load arrow by it (load_arrow.hpp).
    double fluid_weight = 0;
    /// The rigid bodies (issue 30; eddy/bodies.hpp) at the snapshot's time: geometry (shared, at rest),
    /// pose and state (copies). Their wall particles are not in `boundary`, nor their shapes in
    /// `models` or `wall_lines`: the window draws the bodies themselves.
    std::vector<BodyView> bodies;
    /// The emitters (issue 31; eddy/emitters.hpp): where each nozzle is, whether it is on now, its rate
    /// and what it has put in (copies).
    struct EmitterView {
        std::array<float, 3> center{}, direction{};
        bool on = false;
        double rate = 0.0;         ///< particles/s
        double volume_rate = 0.0;  ///< m^3/s (2D: m^2/s)
        std::uint64_t emitted = 0, blocked = 0;
    };
    std::vector<EmitterView> emitters;
    std::uint64_t removed_outflow = 0, removed_escaped = 0, drained = 0;  ///< Since the start (eddy/emitters.hpp)
    /// Whitewater (issue 32; eddy/whitewater.hpp), while SimWorker::whitewater is on: the diffuse
    /// particles as x, y, z, type each (z = 0 in 2D; type 0 spray, 1 foam, 2 bubble) and their counts.
    bool whitewater = false;
    std::vector<float> diffuse;
    WhitewaterCounts whitewater_counts;
    /// The scene's probes (its key "probes", as eddy run's probes.csv): name, position (z = 0 in 2D) and the
    /// fluid there at this snapshot (read_probes: pressure, Pa in 3D, N/m in 2D; velocity, m/s).
    struct ProbeView {
        std::string name;
        std::array<float, 3> position{};
        ProbeReading reading;
    };
    std::vector<ProbeView> probes;
    /// The simulation's state_hash (eddy/simulation.hpp, eddy/shallow_water.hpp: eddy run's summary.json)
    /// at this snapshot, when WorkerConfig::state_hashes; none for the synthetic demo.
    std::optional<std::uint64_t> state_hash;
};

struct WorkerConfig {
    std::string scene;                 ///< Bundled name or file
    std::string method;                ///< "" : the scene's
    std::vector<std::string> sets;     ///< --set overrides (first scene only)
    int threads = 0;
    std::size_t max_particles = 5'000'000;
    MemoryBudget budget;               ///< Scenes estimated to need more are refused (default: no limit)
    /// Scenes whose fluid and walls hold more particles than this play at a coarser particle radius
    /// (live_scene in sim_worker.cpp; the viewer's --live-particles); 0: always the scene's own.
    std::size_t live_particles = 0;
    bool demo_heightfield = false;
    int demo_cells = 128;
    /// Every snapshot carries the state's hash (Snapshot::state_hash): the scripted --frames runs, whose
    /// last one eddy-view prints, as eddy run writes it in summary.json. Off while playing: O(particles).
    bool state_hashes = false;
};

class SimWorker {
public:
    /// Loads the scene and builds the simulation on the calling thread, so that bad input fails
    /// (InputError) before a window opens.
    explicit SimWorker(const WorkerConfig& cfg);
    ~SimWorker();
    SimWorker(const SimWorker&) = delete;
    SimWorker& operator=(const SimWorker&) = delete;

    void start();
    void stop();

    std::shared_ptr<const Snapshot> latest() const;

    /// True when eddy's shallow-water solver (include/eddy/shallow_water.hpp) was compiled in:
    /// "method": "shallow_water" scenes are drawn as heightfields then.
    static const bool kHasShallowWater;
    /// True when eddy's surface reconstruction (include/eddy/surface.hpp, issue 5) was compiled in.
    static const bool kHasSurface;
    std::atomic<bool> playing{true};
    /// 3D: reconstruct the fluid's surface for the window (at most every 250 ms while playing).
    std::atomic<bool> surface{false};
    /// With surface: anisotropic kernels (Yu & Turk 2013, SurfaceSettings::anisotropic).
    std::atomic<bool> surface_anisotropic{false};
    /// Particle scenes: step a Whitewater (spray, foam, bubbles; eddy::step_whitewater with default
    /// settings) after every fluid step and publish its particles. Off: they are dropped.
    std::atomic<bool> whitewater{false};
    std::atomic<int> color_field{0};
    void request_step() { ++m_step_requests; wake(); }
    /// Publishes a new snapshot without stepping (e.g. after the surface was switched on while paused).
    void refresh() { post([] {}); }
    /// Reset to a scene (bundled name or file) and a method ("" : the scene's own).
    void reset(const std::string& scene, const std::string& method);
    /// Method settings (JSON object of the method's table) and gravity (m/s^2).
    void apply(nlohmann::json settings, std::array<double, 3> gravity);
    /// Adds a block of fluid particles (20 x 20 in 2D, 12^3 in 3D at the scene's spacing, at most 0.4 of
    /// the scene's extent per side) centred at `center` (m; z ignored in 2D), kept inside the scene's
    /// bounds; without a centre, above the middle of the scene. Lattice points next to existing
    /// particles are skipped (overlaps explode); the status says how many were added.
    void add_block(std::optional<std::array<double, 3>> center = std::nullopt);
    void set_mouse(const MouseForce& m);
    /// Heightfield mode: water (or ink) dropped at (x, z) (m).
    void drop(double x, double z, bool ink);
    /// Drags a body (eddy/bodies.hpp's `external` load: a spring-damper from the grabbed point to the
    /// cursor, bodies_view.hpp drag_load), applied before every step until a drag with active = false.
    void set_body_drag(const BodyDrag& d);
    /// Adds a body at `point` (m; z ignored in 2D): a ball or a box, 8 particle radii across, of density
    /// 500 kg/m^3 (eddy::add_body; a body that would overlap a wall or another body is refused, and the
    /// status says why).
    void drop_body(bool ball, std::array<double, 3> point);
    /// The drop's size and density.
    static constexpr double kDropSizeRadii = 8.0, kDropDensity = 500.0;
    /// Adds an emitter at `point` (m; z ignored in 2D), pointing along gravity (a tap; down when there is
    /// none), at `speed` (m/s), `size_radii` particle radii across (2D width, 3D diameter), until stopped
    /// (eddy::add_emitter; a nozzle in a wall is refused and the status says why).
    void add_emitter(std::array<double, 3> point, double speed, double size_radii);
    /// Stops emitter k (every emitter when k < 0) from now on (eddy::stop_emitter).
    void stop_emitter(int k);

private:
    void loop();
    void post(std::function<void()> f);
    void wake();
    void publish();
    std::optional<std::uint64_t> current_state_hash() const;
    void do_reset(const std::string& scene, const std::string& method, const std::vector<std::string>& sets);
    void apply_mouse(float dt);
    void apply_body_drag(float dt);

    WorkerConfig m_cfg;
    std::string m_initial_scene, m_initial_method;  // as on the command line: --set applies to them only
    ExecContext m_exec;
    std::optional<Simulation> m_sim;
    std::optional<DemoHeightfield> m_demo;
    std::uint64_t m_demo_steps = 0;  // the demo's steps since its start (lockstep counts them)
    void step_demo(std::chrono::steady_clock::time_point until);  // one 1/60 s step, then waits until `until`
    struct Water;                    // the shallow-water simulation (sim_worker.cpp), when compiled in
    std::unique_ptr<Water> m_water;
    // A slice of eddy run's loop (eddy::step_slice) for the grid and for particles: playing, about a frame
    // (16 ms) of steps, paused, the `requested` steps. Each returns the steps taken; a divergence halts the
    // run (m_status says why). The particles' slice adds its density errors to sum_err, max_err.
    SliceLimits slice_limits(int requested) const;
    int step_water_slice(int requested);
    int step_particle_slice(int requested, float& sum_err, float& max_err);
    void publish_water(Snapshot& snap);
    float m_max_speed = 0;
    std::uint64_t m_generation = 0;
    float m_speed_scale = 1.0f;
    float m_rest_density = 0.0f, m_pressure_scale = 0.0f;  // the colour map's automatic ranges (Snapshot)
    std::vector<float> m_wall_lines;                                         // analytic walls at rest
    std::vector<std::pair<std::uint16_t, std::vector<float>>> m_moving_lines;  // moving analytic walls: object, rest edges
    std::vector<ModelView> m_models;                                         // models at rest (pose: identity)
    std::vector<bool> m_model_object;                                        // per boundary object: a model?
    std::vector<bool> m_body_object;                                         // per boundary object: a body's?
    std::vector<std::shared_ptr<const BodyGeometry>> m_body_geometry;        // per body: its shape at rest
    void build_walls();                                                      // the above, after a reset or an added body
    RecentLoads m_loads;                    // the walls' loads of the last steps
    float m_last_dt = 1e-3f, m_mean_err = 0, m_max_err = 0;
    double m_ms_per_step = 0;
    std::vector<std::pair<std::string, double>> m_pass_ms;  // Snapshot::pass_ms
    std::string m_status;
    bool m_halted = false;  // Snapshot::halted; cleared by a new scene or Reset
    std::shared_ptr<const SurfaceMesh> m_surface;
    std::uint64_t m_surface_version = 0;
    std::chrono::steady_clock::time_point m_surface_time{};
    void update_surface();
    // The whitewater beside the particle fluid (while `whitewater` is on), restarted on every reset.
    std::variant<std::monostate, Whitewater<2>, Whitewater<3>> m_whitewater;
    WhitewaterSettings m_whitewater_settings;
    // The scene's walls for the whitewater (scene_walls: diffuse particles stop at them), built on the
    // first whitewater step of a scene and again when its boundary objects change (a body added).
    std::vector<Wall<2>> m_ww_walls2;
    std::vector<Wall<3>> m_ww_walls3;
    std::size_t m_ww_wall_objects = 0;
    bool m_ww_walls_built = false;
    void step_whitewater_after(double dt);  // one whitewater step after a fluid step of dt seconds
    void publish_whitewater(Snapshot& snap);

    mutable std::mutex m_snap_mutex;
    std::shared_ptr<const Snapshot> m_snapshot;

    std::mutex m_cmd_mutex;
    std::condition_variable m_cv;
    std::vector<std::function<void()>> m_commands;
    MouseForce m_mouse;
    BodyDrag m_body_drag;                   // guarded by m_cmd_mutex, as m_mouse
    std::optional<std::size_t> m_drag_applied;  // the body whose external load the drag set (sim thread)
    std::atomic<int> m_step_requests{0};
    std::atomic<bool> m_quit{false};
    std::thread m_thread;
};

}  // namespace eddy::view
