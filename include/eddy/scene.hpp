// eddy: scenes. A JSON file (docs/scenes.md) becomes a validated Scene; builders turn a Scene into
// particles and boundary particles. All validation happens here, once, when the input becomes a
// solver: every error is an InputError naming the file and the key.
#pragma once
#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/boundary.hpp"
#include "eddy/emitters.hpp"
#include "eddy/geometry.hpp"
#include "eddy/mass_properties.hpp"
#include "eddy/math.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/particles.hpp"

namespace eddy {

/// A user's model in a scene, loaded and placed when the scene is parsed: a triangle mesh (3D,
/// "shape": "mesh") or a closed polygon (2D, "shape": "polygon"). Shared, immutable.
struct ModelSpec {
    std::filesystem::path file;        ///< mesh: the model file, resolved against the scene's folder
    Placement placement;               ///< mesh: scale, rotate, translate
    std::vector<std::array<double, 2>> points;  ///< polygon: its corners (m)
    std::shared_ptr<const MeshShape<3>> mesh;   ///< mesh, in scene coordinates
    /// mesh: the model as read and placed, before MeshShape cleaned it. A checkpoint carries it, so that
    /// a resumed run is the same model without reading the file again (SceneInputs).
    std::shared_ptr<const Mesh<3>> placed;
    std::shared_ptr<const MeshShape<2>> polygon;  ///< polygon
};

/// The model of a spec as a MeshShape<D> (nullptr when it has none).
template <int D>
const MeshShape<D>* model_shape(const ModelSpec& m) {
    if constexpr (D == 2) return m.polygon.get();
    else return m.mesh.get();
}

/// A solid shape of a scene's "boundaries" list. Vectors are stored with 3 components (z = 0 in 2D).
struct BoundarySpec {
    std::string shape;                 ///< "box" | "circle" (2D) | "sphere" (3D) | "cylinder" (3D, axis y)
                                       ///< | "mesh" (3D) | "polygon" (2D)
    bool solid = false;                ///< false: a container, fluid inside; true: an obstacle, fluid outside
    std::array<double, 3> min{};       ///< box: lower corner (m)
    std::array<double, 3> max{};       ///< box: upper corner (m)
    std::array<double, 3> center{};    ///< circle/sphere: centre; cylinder: centre of the bottom disc (m)
    double radius = 0.0;               ///< circle/sphere/cylinder radius (m)
    double height = 0.0;               ///< cylinder height along y (m)
    double angular_velocity = 0.0;     ///< rigid rotation (rad/s), counter-clockwise; 0: fixed
    std::array<double, 3> pivot{};     ///< centre of rotation (m); default: the shape's centre
    std::array<double, 3> axis{0, 0, 1};  ///< rotation axis (3D); 2D rotates in the xy plane
    bool open_top = false;             ///< box/cylinder containers: no lid (the top face is not sampled)
    std::array<double, 3> velocity{};  ///< motion.velocity: constant translation (m/s)
    std::vector<Keyframe> keyframes;   ///< motion.keyframes
    ModelSpec model;                   ///< mesh / polygon
    int body = -1;                     ///< The shape of Scene::bodies[body] (a solid the fluid moves); -1: a wall
    bool moving() const {
        return body >= 0 || angular_velocity != 0.0 || velocity != std::array<double, 3>{} || !keyframes.empty();
    }
};

/// A rigid body of a scene's "bodies" list (issue 30; eddy/bodies.hpp, docs/bodies.md): a solid the fluid
/// moves and whose walls move the fluid. Its shape is the solid Scene::boundaries[boundary] (listed after the
/// scene's own boundaries, BoundarySpec::body naming the body), so that every builder samples it as an
/// obstacle: its wall particles, the fluid kept out of it, its walls for collision.
struct BodySpec {
    std::size_t boundary = 0;               ///< Its shape: Scene::boundaries[boundary]
    std::string shape;                      ///< As given: box, circle, polygon (2D); box, sphere, cylinder, mesh (3D)
    MassProperties mass;                    ///< Mass, centre of mass, inertia (kg, m, kg m^2; 2D: per metre of depth)
    std::array<double, 3> velocity{};       ///< Initial velocity of the centre of mass (m/s)
    std::array<double, 3> angular_velocity{};  ///< Initial angular velocity (rad/s; 2D: z only)
    double friction = 0.5;                  ///< Coulomb friction of its contacts with bodies and walls (the engine's)
    double restitution = 0.0;               ///< Bounciness of its contacts, 0 to 1
    std::array<bool, 3> fixed_translation{false, false, false};  ///< fixed_axes "x", "y", "z"
    std::array<bool, 3> fixed_rotation{false, false, false};     ///< fixed_axes "rx", "ry", "rz" (2D: "rz")
    /// "added_at" (s): the time add_body() added it to a running simulation, which writes this key into
    /// the scene's document; 0: a body of the scene from the start. An added body was checked against
    /// the objects where they were then, so make_bodies does not check it at the scene's poses (where
    /// a body since moved away may have started).
    double added_at = 0.0;
};

/// A block of fluid of a scene's "fluids" list, sampled on a lattice of spacing 2r.
struct FluidSpec {
    std::string shape;                 ///< "box" | "circle" (2D) | "sphere" (3D) | "mesh" (3D) | "polygon" (2D)
    std::array<double, 3> min{};       ///< box lower corner (m)
    std::array<double, 3> max{};       ///< box upper corner (m)
    std::array<double, 3> center{};    ///< circle/sphere centre (m)
    double radius = 0.0;               ///< circle/sphere radius (m)
    std::array<double, 3> velocity{};  ///< initial velocity (m/s)
    ModelSpec model;                   ///< mesh / polygon: its inside is filled on the lattice
    /// "file": particles read from a particle file (a frame of an earlier run: .vtp, .csv, .ply), as
    /// positions and velocities x, y[, z], vx, vy[, vz] in that file's order; min/max are their box.
    std::filesystem::path file;
    std::shared_ptr<const std::vector<double>> file_particles;
};

/// Limits on the run's clock, shared by the scene keys (duration, output.fps) and eddy run's --until
/// and --fps. A frame interval below 1 us (fps above 1e6) or an end past 1e9 s would let a frame's
/// time step round to nothing (time stops advancing: a frame every step, a run that never ends).
inline constexpr double kMaxFps = 1e6;
inline constexpr double kMaxDuration = 1e9;
/// particle_radius (m): much smaller radii overflow the kernel's gradient (1/h^4 with h = 4r is near a
/// float's 3.4e38 at r ~ 1e-10) and underflow the masses; larger ones overflow the masses (rho0 (2r)^3).
inline constexpr double kMinParticleRadius = 1e-9;
inline constexpr double kMaxParticleRadius = 1e6;

struct OutputSpec {
    double fps = 25.0;                          ///< frames per simulated second
    std::vector<std::string> formats{"vtk"};    ///< any of "vtk", "csv", "ply"
    bool render = false;                        ///< a PNG per frame
    bool render_last = true;                    ///< always render the last frame
    /// Particle scenes: the walls every frame with the fluid's pressure on them (eddy/wall_pressure.hpp)
    bool wall_pressure = false;
};

/// A point where a particle run reads the fluid every frame (probes.csv: pressure and velocity; see
/// read_probes in eddy/simulation.hpp).
struct ProbeSpec {
    std::string name;                    ///< Its name in probes.csv ("probes[i]" when not given)
    std::array<double, 3> position{};    ///< Where (m); z = 0 in 2D
};

/// Optional fixed camera for pictures (3D): eye and target (m), vertical field of view (deg).
struct CameraSpec {
    std::array<double, 3> eye{};
    std::array<double, 3> target{};
    double fov_deg = 40.0;
    bool given = false;
};

struct Scene {
    std::filesystem::path source;       ///< File it came from ("" for scenes built in code)
    std::string name;                   ///< Scene name
    std::string description;            ///< One line, shown by `eddy scenes`
    int dimension = 2;                  ///< 2 or 3
    std::string method = "wcsph";       ///< Solver: "wcsph" | "pbf" | "clavet" | "shallow_water"
    double particle_radius = 0.01;      ///< Particle radius r (m); lattice spacing 2r
    std::array<double, 3> gravity{0, -9.81, 0};  ///< Gravity (m/s^2)
    double duration = 1.0;              ///< Simulated time (s)
    OutputSpec output;
    CameraSpec camera;
    nlohmann::json settings = nlohmann::json::object();  ///< Method settings, checked by the method's table
    std::vector<BoundarySpec> boundaries;
    std::vector<FluidSpec> fluids;
    std::vector<BodySpec> bodies;       ///< Their shapes are the last entries of `boundaries`
    std::vector<EmitterSpec> emitters;  ///< Nozzles that put fluid in (eddy/emitters.hpp)
    DomainSpec domain;                  ///< Particles outside it are removed (the outflow)
    std::vector<SinkSpec> sinks;        ///< Drains: particles inside an open one are removed and counted
    std::vector<ProbeSpec> probes;      ///< Points read every frame (probes.csv); particle scenes
    /// "method": "shallow_water": the grid's keys (grid, terrain, water, borders, ink, sources, drops,
    /// obstacles) as given, checked by parse_shallow_water (shallow_water.hpp). Null for particle scenes.
    nlohmann::json shallow_water;
    /// The scene as parsed (after --set overrides): checkpoints keep it, so a resumed run is the same
    /// scene even if the file changed since.
    nlohmann::json document;
    /// Things worth knowing that are not errors (a model open where it matters), one line each; the
    /// CLI prints them to stderr.
    std::vector<std::string> warnings;

    /// "file.json" or the scene name, for error messages.
    std::string where() const { return source.empty() ? name : source.string(); }
    /// The file it came from as an absolute path (summary.json's scene_file: read from any folder), or "".
    std::string source_path() const {
        std::error_code ec;
        const std::filesystem::path p = source.empty() ? source : std::filesystem::absolute(source, ec);
        return ec ? source.string() : p.lexically_normal().string();
    }
};

/// The key of boundary object i in the scene's file: "boundaries[i]", or "bodies[k]" for a body's shape.
inline std::string boundary_key(const Scene& s, std::size_t i) {
    if (i < s.boundaries.size() && s.boundaries[i].body >= 0) return "bodies[" + std::to_string(s.boundaries[i].body) + "]";
    return "boundaries[" + std::to_string(i) + "]";
}

/// Reads and validates a scene file. overrides are "key.path=value" strings applied to the JSON before
/// validation (value parsed as JSON when it parses, else taken as a string), e.g. "settings.cfl=0.3".
/// Throws InputError (file missing, broken JSON, unknown key, wrong type, bad value). Models and particle
/// files are read here: with a `budget`, each is estimated from its header and size first
/// (estimate_model_memory, estimate_particle_file_memory) and refused, unread, when it does not fit.
Scene load_scene(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
                 const MemoryBudget& budget = {});
/// The same from JSON already in memory; `where` names it in errors.
Scene parse_scene(nlohmann::json j, const std::string& where, const std::vector<std::string>& overrides = {},
                  const MemoryBudget& budget = {});

/// Models and particle files given to parse_scene_from instead of read: a resumed run's, from its
/// checkpoint (issue 29, item 10), so that resuming never opens a file again (from another working
/// folder, or after a model was moved or edited, the run is the one it was). In document order: the
/// "mesh" models of the boundaries, then of the fluids (ModelSpec::placed); the "file" fluids' particles
/// (FluidSpec::file_particles).
struct SceneInputs {
    std::vector<std::shared_ptr<const Mesh<3>>> meshes;
    std::vector<std::shared_ptr<const std::vector<double>>> particle_files;
};
/// parse_scene with the scene's models and particle files taken from `inputs`: no file is opened. An
/// input missing for a model or file fluid is an InputError naming the key.
Scene parse_scene_from(nlohmann::json j, const std::string& where, const SceneInputs& inputs);
/// What parse_scene_from needs to rebuild `scene` (its placed meshes and file particles).
SceneInputs scene_inputs(const Scene& scene);

/// Help text documenting every top-level, boundary, fluid and output key.
std::string scene_keys_help();

/// The folder of bundled scenes: $EDDY_SCENES_DIR, else <exe>/../share/eddy/scenes, else the source tree.
std::filesystem::path bundled_scenes_dir();
/// A scene argument (a file path, or the name of a bundled scene) -> the file. Throws InputError.
std::filesystem::path resolve_scene(const std::string& name_or_file);
/// The bundled scenes, sorted by name: (name, description, file).
struct SceneEntry { std::string name, description; std::filesystem::path file; };
std::vector<SceneEntry> list_bundled_scenes();

/// One process's part of what `parts` processes build or read together (issue 44): part in [0, parts).
struct ProcessShare {
    int part = 0;
    int parts = 1;
    /// A resumed run: a checkpoint's particles replace the built ones, so no start needs the whole fluid
    /// (fluid_built_whole does not apply) and none runs (WCSPH's hydrostatic start).
    bool replaced = false;
};

/// The fluid particles of the scene: lattice of spacing 2r inside each fluid shape, particle centres at
/// least r inside the shape and at least r inside a container (a block reaching past a wall is clipped),
/// minus points inside solid obstacles. Throws InputError if a fluid lies entirely outside every
/// container, or if the count exceeds max_particles.
/// Mesh and polygon fluids: the lattice points of their box inside the model (winding number).
/// exec: threads for the models' inside tests (nullptr: one).
/// share: several processes each building their own part (issue 44): every process visits every point
/// (the checks, counts and ids are the whole build's: a particle's id is its index in the whole set,
/// next_id the whole set's size) and keeps the points of its contiguous run of the scene's points,
/// counted in build order before any is dropped. The parts together are the whole set.
template <int D>
ParticleSet<D> build_fluid(const Scene& s, std::size_t max_particles, const ExecContext* exec = nullptr,
                           ProcessShare share = {});

/// The boundary particles: `layers` layers of spacing 2r, at r, 3r, ... outside every container wall
/// (inside every solid obstacle's surface), their motions set. psi is left for the solver. WCSPH uses
/// two layers (the kernel support never reaches past them), PBF Akinci's single layer.
/// Meshes and polygons: sample_wall (geometry.hpp), the same layers on the wall's side.
/// near: one process's walls under mpirun (issue 44): the particles of moving walls and bodies whole, those
/// of fixed walls only within near->region (closed), each kept particle's index in the whole set in
/// near->ids and the whole set's size in near->whole; every object is sampled, so the ids and the order
/// are the whole build's.
template <int D>
struct WallsNear {
    Aabb<D> region;
    std::vector<std::uint32_t> ids;
    std::uint64_t whole = 0;
};
template <int D>
BoundarySet<D> build_boundary(const Scene& s, int layers = 2, const ExecContext* exec = nullptr,
                              WallsNear<D>* near = nullptr);

/// Box around everything the scene contains (containers, obstacles, fluids) (m).
template <int D>
Aabb<D> scene_bounds(const Scene& s);

/// The prescribed motion a boundary's keys give it (pivot, axis, spin, velocity, keyframes).
template <int D>
BoundaryMotion<D> prescribed_motion(const BoundarySpec& b);

/// Height of the fluid: highest fluid point minus lowest, along gravity (m). Used for the speed of sound.
double fluid_height(const Scene& s);

}  // namespace eddy
