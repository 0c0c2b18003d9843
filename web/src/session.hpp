// eddy in the browser (docs/web.md): one simulation the page drives, stepped on the page's own thread.
// A Session owns a particle simulation (eddy::Simulation) or a shallow-water grid and steps it exactly as
// `eddy run` does (frames at the scene's fps, steps landing on them), so that after N steps the state is
// what `eddy run --steps N` reaches (the same state_hash, tests/web/). Between steps the page applies its
// hands (eddy/interaction.hpp) and new settings. Every input error comes back as the CLI's one-line
// message, never as an exception across the JavaScript boundary.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/exec.hpp"
#include "eddy/interaction.hpp"
#include "eddy/load_display.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "page_solids.hpp"
#include "page_whitewater.hpp"

namespace eddy::web {

/// A fluid's surface as the page draws it: vertices (x, y, z), unit normals, triangles.
struct PageSurface {
    std::vector<float> xyz, normals;
    std::vector<std::uint32_t> triangles;
};

/// The surface of 3D particles (x, y, z each) of radius `radius` (m) with the default surface settings
/// (eddy::reconstruct_surface, seed 004) but `anisotropic` and `decimate_ratio` (0: every triangle; else at most
/// that fraction of them, meshoptimizer's edge collapse, docs/surface.md), on the calling thread: Session::reconstruct and the page's surface
/// worker (web/page/surface_worker.js, a second module instance off the page's thread) both call it, so both
/// draw the same mesh. Throws InputError on a bad radius or count.
PageSurface reconstruct_page_surface(const std::vector<float>& xyz, double radius, bool anisotropic, double decimate_ratio);

class Session {
public:
    /// `threads`: the steps' threads (1 to kMaxThreads): more than one only in eddy-mt.js (EDDY_POOL), which
    /// the page loads when it is cross-origin isolated; eddy.js runs every loop on the calling thread.
    explicit Session(int threads = 1);
    /// The threads the steps run on.
    int threads() const { return m_exec.threads(); }

    // ---- loading: "" or the one-line error (the simulation is then left as it was) ---------------------
    /// A bundled scene by name (scenes/ is in the page's file system at /scenes), with another `method`
    /// ("" : the scene's) and `sets` (a JSON array of "key=value", as --set).
    std::string load_bundled(const std::string& name, const std::string& method, const std::string& sets);
    /// A scene from its JSON text (pasted, dropped or from a link); `where` names it in messages.
    std::string load_text(const std::string& text, const std::string& where, const std::string& method,
                          const std::string& sets);
    /// A scene dropped with its files (models, particle files; issue 43): clear_dropped() empties the page's
    /// folder for them (/dropped), drop_file() writes one there ("" or why not: a name must be a plain file
    /// name), then load_dropped() writes the scene beside them as `name` and loads it from there as `eddy run
    /// name` does from that folder: the same checks, memory estimates and one-line errors, its relative
    /// paths read from the folder (a missing model is named as the CLI names it).
    void clear_dropped();
    std::string drop_file(const std::string& name, const std::string& bytes);
    std::string load_dropped(const std::string& text, const std::string& name, const std::string& method,
                             const std::string& sets);

    // ---- stepping ----------------------------------------------------------------------------------------
    /// Up to n steps, or until `ms` milliseconds of wall time have passed (0: no limit). "" or why the run
    /// stopped ("diverged at step ... : ..."); a diverged simulation is kept at its last good state
    /// (steps after the divergence are refused until a load).
    std::string step(int n, double ms);
    /// The named passes of the steps taken since the scene was loaded (PassTimes, as summary.json's
    /// "passes"), as JSON: {"steps": N, "passes": [{"name", "seconds", "ms_per_step", "share"}, ...]} in the
    /// order a step runs them. The page's profile of its own passes (issue 42); the browser's clock is coarse
    /// (Chromium: 0.1 ms without cross-origin isolation), so read it over many steps.
    std::string passes() const;

    // ---- what the page shows -------------------------------------------------------------------------------
    std::string kind() const;  ///< "particles", "grid" or "" (nothing loaded)
    int dimension() const;     ///< 2 or 3 (a grid: 3)
    double time() const;
    double steps() const;
    double count() const;      ///< particles, or cells of a grid
    std::string name() const;  ///< the scene's name
    std::string method() const;
    double particle_radius() const;
    /// The scene bounds (m): lo x, y, z, hi x, y, z (z = 0 in 2D).
    std::vector<float> bounds() const;
    /// Refreshes the particle buffers: x, y, z per particle, and the field ("speed", "density",
    /// "pressure") per particle with its range (min, max).
    void refresh(const std::string& field);
    const std::vector<float>& positions() const { return m_xyz; }
    const std::vector<float>& scalars() const { return m_scalar; }
    double scalar_min() const { return m_smin; }
    double scalar_max() const { return m_smax; }
    /// Wall particles (x, y, z each), 2D: the walls as the solver sees them, where they are now (refresh()
    /// updates them when walls_move(): moving walls, bodies).
    const std::vector<float>& walls() const { return m_walls; }
    /// Per wall particle: the body it belongs to (the scene's bodies in order), -1 for a wall.
    const std::vector<std::int32_t>& wall_bodies() const { return m_wall_bodies; }
    bool walls_move() const;
    /// The grid: nx, ny, dx, and per cell the terrain and the depth (m).
    int grid_nx() const;
    int grid_ny() const;
    double grid_dx() const;
    const std::vector<float>& terrain() const { return m_terrain; }
    const std::vector<float>& depth() const { return m_depth; }
    /// 3D particles: the fluid's surface (eddy::reconstruct_surface, seed 004); "" or why not. Then
    /// mesh_vertices (x, y, z), mesh_normals, mesh_triangles.
    std::string reconstruct(bool anisotropic, double decimate_ratio);
    const std::vector<float>& mesh_vertices() const { return m_mesh.xyz; }
    const std::vector<float>& mesh_normals() const { return m_mesh.normals; }
    const std::vector<std::uint32_t>& mesh_triangles() const { return m_mesh.triangles; }
    /// 3D: the bodies, models and obstacles as shaded meshes where they are now (issue 43; page_solids.hpp),
    /// updated by refresh(): vertices, normals, colours (rgba), triangles (the opaque_indices() first); parts()
    /// says which is which (JSON, for tests).
    const PageSolids& solids() const { return m_solids; }
    /// Whitewater (issue 43; page_whitewater.hpp): spray, foam and bubbles stepped with the fluid as `eddy run
    /// --whitewater` steps them, from now on (and afresh with each scene loaded) until switched off; "" or
    /// why not (a grid). refresh() updates whitewater_points(): x, y, z each, spray first, then foam, then
    /// bubbles, whitewater_count(type) of each.
    std::string set_whitewater(bool on);
    bool whitewater() const { return m_whitewater.on(); }
    const std::vector<float>& whitewater_points() const { return m_ww_xyz; }
    double whitewater_count(int type) const { return type >= 0 && type < 3 ? double(m_ww_types[type]) : 0.0; }
    /// {"spray", "foam", "bubbles", "generated", "expired", "escaped", "walled", "capped"} ({} when off).
    std::string whitewater_counts() const { return m_whitewater.counts(); }
    /// The whitewater as eddy run's checkpoint keeps it (the run record's "whitewater"), as JSON.
    std::string whitewater_record() const { return m_whitewater.record(); }
    /// The fluid's loads on the scene's boundaries (issue 43; eddy/load_display.hpp, the viewer's loads panel):
    /// {"objects": [{"label", "pivot": [x, y, z], "force": [..], "torque": [..]}] (the mean over the steps of
    /// the last 0.1 s, RecentLoads; force N and torque N m, 2D per metre), "steps" (how many), "fluid_weight"
    /// (N; 2D N/m), "last": [[fx, fy, fz, tx, ty, tz] per object] (the last step's, as Python's sim.boundary_forces())};
    /// "objects" is empty before the first step or for a method that gathers no loads.
    std::string loads() const;
    /// The arrow of object `object`'s mean force (eddy::load_arrow: from its pivot, a fluid weight `reference`
    /// metres long): 3D line segments (pairs of points, x, y, z each); 2D those segments as triangles `width`
    /// metres wide (thick_lines_2d). Empty when there is no load.
    const std::vector<float>& load_arrow(int object, double reference, double width);
    /// state_hash (eddy/simulation.hpp, eddy/shallow_water.hpp) as 16 hex digits.
    std::string state_hash() const;
    /// The scene's probes (scene key "probes") read now, as eddy run's probes.csv reads them every frame
    /// (read_probes): a JSON array of {"name", "position": [x, y, z], "pressure" (Pa in 3D, N/m in 2D),
    /// "velocity": [vx, vy, vz] (m/s)}; "[]" for a grid or a scene without probes.
    std::string probes() const;

    // ---- settings ------------------------------------------------------------------------------------------
    /// Every method's settings table (Field<S>, eddy/settings.hpp) as JSON: {"wcsph": [field...], ...}.
    static std::string settings_tables();
    /// The running method's settings (every field) as a JSON object.
    std::string settings() const;
    /// Applies settings (a JSON object of the method's table) and gravity; "" or the one-line error.
    std::string apply_settings(const std::string& json, double gx, double gy, double gz);
    /// The scene as running (its document with the live method settings), for the page's share link.
    std::string scene_document() const;
    /// The bundled scenes: [{"name", "description", "method", "dimension"}].
    static std::string bundled_scenes();

    // ---- hands ---------------------------------------------------------------------------------------------
    void set_mouse(bool active, double x, double y, double z, double vx, double vy, double vz, double radius);
    /// A block of fluid at (x, y, z); returns "added N particles" or why not.
    std::string add_block(double x, double y, double z);
    /// The viewer's tools at (x, y, z) (eddy/interaction.hpp, issue 43): "box" or "ball" drops a body (8 particle
    /// radii across, 500 kg/m^3; drop_body_at), "tap" opens an emitter along gravity at `speed` (m/s), 8
    /// particle radii across (tap_at), "model:FILE" drops a model file (3D, 16 particle radii across, 500 kg/m^3;
    /// drop_model_at: FILE relative to the scene's folder, e.g. "models/cup.obj" of bundled_models()). Returns what
    /// happened for the status line, or the one-line error.
    std::string use_tool(const std::string& tool, double x, double y, double z, double speed);
    /// The bundled models the page offers to drop (/scenes/models: OBJ, STL, PLY, glTF), as a JSON list of
    /// "models/NAME" (the path a bundled scene's "file" names them by).
    static std::string bundled_models();
    /// A grid: water dropped at (x, y) (m).
    std::string drop(double x, double y);

    // ---- downloads: the same writers as eddy run's frames ---------------------------------------------------
    /// The particles as "csv" or "ply" (the file's bytes), or "" for a grid.
    std::string particles_file(const std::string& format) const;

private:
    std::string load(Scene scene);
    ExecContext m_exec;
    std::optional<Simulation> m_sim;
    std::optional<ShallowWaterSimulation> m_water;
    bool m_diverged = false;
    MouseForce m_mouse;
    float m_last_dt = 1e-3f;  // the last step's (s): the brush acts over it
    PassTimes m_passes;        // the steps' named passes since the load (passes())
    std::uint64_t m_pass_steps = 0;
    std::vector<float> m_xyz, m_scalar, m_walls, m_terrain, m_depth;
    std::vector<std::int32_t> m_wall_bodies;
    RecentLoads m_loads;        // the walls' loads of the last steps (loads())
    std::vector<float> m_arrow;  // load_arrow()'s segments or triangles
    PageSolids m_solids;
    bool m_whitewater_wanted = false;  // the page's switch: kept across loads
    PageWhitewater m_whitewater;
    std::vector<float> m_ww_xyz;
    std::uint64_t m_ww_types[3] = {0, 0, 0};
    PageSurface m_mesh;  // reconstruct()
    double m_smin = 0.0, m_smax = 0.0;
    void refresh_grid();
    void refresh_walls();
};

}  // namespace eddy::web
