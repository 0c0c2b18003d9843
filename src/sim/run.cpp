#include "eddy/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "eddy/bodies_io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/wall_pressure.hpp"
#include "sim/whitewater_output.hpp"
#include "sim/run_support.hpp"

namespace eddy {

namespace {

// An open box ends at its rim (issue 40): instead of a container whose sides went on above the rim (water
// could not spill over them), its floor and sides are solid slabs as thick as the wall's two particle
// layers (4r), the sides up to the rim. Water above the rim is free; water that went over the rim falls
// outside the sides. `w` carries the solid flag and the moving object.
template <int D>
void add_open_box_slabs(std::vector<Wall<D>>& walls, Wall<D> w, const Vec<D>& lo, const Vec<D>& hi, float T) {
    w.shape = Wall<D>::Shape::box;
    w.solid = true;
    auto slab = [&](int axis, bool high) {  // axis 1 low: the floor; the others: the sides up to the rim
        w.lo = lo - Vec<D>::filled(T);
        w.hi = hi + Vec<D>::filled(T);
        w.hi[1] = axis == 1 ? lo[1] : hi[1];
        if (axis != 1) {
            w.lo[axis] = high ? hi[axis] : lo[axis] - T;
            w.hi[axis] = high ? hi[axis] + T : lo[axis];
        }
        update_wall_reach(w);
        walls.push_back(w);
    };
    slab(1, false);
    for (int a = 0; a < D; ++a)
        if (a != 1) {
            slab(a, false);
            slab(a, true);
        }
}

// An open cylinder tank ends at its rim as the open box does: a solid disc under its floor and a solid
// tube around its side up to the rim, both T thick (3D only: cylinders are 3D shapes).
template <int D>
void add_open_cylinder_walls(std::vector<Wall<D>>& walls, Wall<D> w, const BoundarySpec& b, float T) {
    w.shape = Wall<D>::Shape::cylinder;
    w.solid = true;
    w.center = from_array<D>(b.center);
    w.center[1] -= T;
    w.radius = static_cast<float>(b.radius) + T;
    w.height = T;  // the floor
    update_wall_reach(w);
    walls.push_back(w);
    w.inner_radius = static_cast<float>(b.radius);  // the side, from under the floor up to the rim
    w.height = static_cast<float>(b.height) + T;
    update_wall_reach(w);
    walls.push_back(w);
}

// The walls of one boundary object, appended to `walls`.
template <int D>
void add_boundary_walls(std::vector<Wall<D>>& walls, const BoundarySpec& b, int object, float r, const ExecContext& exec) {
    Wall<D> w;
    w.solid = b.solid;
    w.object = b.moving() ? object : -1;
    w.owner = object;
    if (const MeshShape<D>* m = model_shape<D>(b.model)) {
        w.shape = Wall<D>::Shape::sdf;
        w.sdf = std::make_shared<const SdfGrid<D>>(make_sdf_grid(*m, r, 4.0f * r, exec));
    } else if (b.shape == "box" && b.open_top) {
        return add_open_box_slabs(walls, w, from_array<D>(b.min), from_array<D>(b.max), 4.0f * r);
    } else if (b.shape == "cylinder" && b.open_top) {
        return add_open_cylinder_walls(walls, w, b, 4.0f * r);
    } else if (b.shape == "box") {
        w.shape = Wall<D>::Shape::box;
        w.lo = from_array<D>(b.min);
        w.hi = from_array<D>(b.max);
    } else {
        w.shape = b.shape == "cylinder" ? Wall<D>::Shape::cylinder : Wall<D>::Shape::ball;
        w.center = from_array<D>(b.center);
        w.radius = static_cast<float>(b.radius);
        w.height = static_cast<float>(b.height);
    }
    update_wall_reach(w);  // at rest; moving ones again at every pose
    walls.push_back(std::move(w));
}

}  // namespace

// The scene's walls for position-based collision: analytic shapes, and models as signed-distance
// grids (voxel r, exact within 4r). Moving walls follow their boundary object (update_wall_poses).
template <int D>
std::vector<Wall<D>> scene_walls(const Scene& scene, const ExecContext& exec) {
    std::vector<Wall<D>> walls;
    const float r = static_cast<float>(scene.particle_radius);
    for (std::size_t i = 0; i < scene.boundaries.size(); ++i)
        add_boundary_walls(walls, scene.boundaries[i], static_cast<int>(i), r, exec);
    // Many solids (a scene of bodies): an index of their boxes, for margins up to r (wall_contact_margin,
    // the collision's); kept up to date by update_wall_poses.
    index_walls(walls, r);
    return walls;
}
template std::vector<Wall<2>> scene_walls<2>(const Scene&, const ExecContext&);
template std::vector<Wall<3>> scene_walls<3>(const Scene&, const ExecContext&);

namespace {

// The scene's method with its settings and gravity; `layers` gets the boundary layers it needs.
template <int D>
ParticleMethod<D> make_method(const Scene& scene, int& layers, const ExecContext& exec) {
    const std::string where = scene.where() + ": settings";
    const float r = static_cast<float>(scene.particle_radius);
    const Vec<D> g = from_array<D>(scene.gravity);
    const float height = static_cast<float>(fluid_height(scene));
    layers = 2;  // WCSPH: the kernel support never reaches past two layers
    if (scene.method == "wcsph") {
        WcsphSettings s;
        apply_json(s, wcsph_fields(), scene.settings, where);
        return WcsphSolver<D>(s, r, g, height, scene_walls<D>(scene, exec), where);
    }
    if (scene.method == "dfsph") {
        DfsphSettings s;
        apply_json(s, dfsph_fields(), scene.settings, where);
        return DfsphSolver<D>(s, r, g, height, scene_walls<D>(scene, exec), where);  // two layers, as WCSPH
    }
    if (scene.method == "pbf") {
        PbfSettings s;
        apply_json(s, pbf_fields(), scene.settings, where);
        layers = 1;  // Akinci's single layer, as seed 002 describes
        return PbfSolver<D>(s, r, g, height, scene_walls<D>(scene, exec), where);
    }
    if (scene.method == "clavet") {
        ClavetSettings s;
        apply_json(s, clavet_fields(), scene.settings, where);
        layers = 1;  // drawn only: Clavet's walls are the analytic shapes
        return ClavetSolver<D>(s, r, g, height, scene_walls<D>(scene, exec), where);
    }
    throw InputError(fmt::format("{}: key 'method' = \"{}\" is not implemented; allowed: wcsph, dfsph, pbf, clavet",
                                 scene.where(), scene.method));
}

// The fastest physical motion of a scene (simulation.hpp, SpeedBound). Free fall over the height of
// everything the scene holds (containers, obstacles, fluid) along gravity; no container (nothing to land
// on): the fall has no end and the bound is off. The walls' speed: a rigid motion's velocity is affine
// in x, so its largest magnitude over an object is at a corner of the object's box; sampled at 256
// times over the run and at the middle of every keyframe interval (central differences, as
// update_boundary_motion).
template <int D>
SpeedBound scene_speed_bound(const Scene& scene, const BoundarySet<D>& boundary, const ParticleSet<D>& fluid) {
    SpeedBound sb;
    const bool container = std::any_of(scene.boundaries.begin(), scene.boundaries.end(),
                                       [](const BoundarySpec& b) { return !b.solid; });
    if (!container) return sb;
    const Vec3 g3 = from_array<3>(scene.gravity);
    const float g = norm(g3);
    if (g > 0.0f) {
        const Aabb<D> b = scene_bounds<D>(scene);
        float lo = std::numeric_limits<float>::max(), hi = -lo;
        for (int c = 0; c < (1 << D); ++c) {
            float h = 0.0f;  // height of the corner against gravity
            for (int a = 0; a < D; ++a) h -= ((c >> a) & 1 ? b.hi[a] : b.lo[a]) * g3[a] / g;
            lo = std::min(lo, h);
            hi = std::max(hi, h);
        }
        sb.free_fall = std::sqrt(2.0f * g * std::max(hi - lo, 0.0f));
    }
    for (std::size_t o = 0; o < boundary.motions.size(); ++o) {
        const BoundaryMotion<D>& m = boundary.motions[o];
        if (!m.moving()) continue;
        Aabb<D> box{Vec<D>::filled(std::numeric_limits<float>::max()), Vec<D>::filled(-std::numeric_limits<float>::max())};
        for (std::size_t i = 0; i < boundary.size(); ++i)
            if (boundary.object[i] == o)
                for (int a = 0; a < D; ++a) {
                    box.lo[a] = std::min(box.lo[a], boundary.rest_position[i][a]);
                    box.hi[a] = std::max(box.hi[a], boundary.rest_position[i][a]);
                }
        if (!(box.lo[0] <= box.hi[0])) continue;
        double end = scene.duration;
        if (!m.keyframes.empty()) end = std::max(end, m.keyframes.back().time);
        std::vector<double> times;
        for (int k = 0; k <= 256; ++k) times.push_back(end * k / 256.0);
        for (std::size_t k = 0; k + 1 < m.keyframes.size(); ++k)
            times.push_back(0.5 * (m.keyframes[k].time + m.keyframes[k + 1].time));
        constexpr double kDt = 1e-4;
        for (double t : times) {
            const RigidPose<D> before = m.pose(t - kDt), after = m.pose(t + kDt);
            for (int c = 0; c < (1 << D); ++c) {
                Vec<D> x;
                for (int a = 0; a < D; ++a) x[a] = (c >> a) & 1 ? box.hi[a] : box.lo[a];
                sb.walls = std::max(sb.walls, norm(after.apply(x) - before.apply(x)) * static_cast<float>(0.5 / kDt));
            }
        }
    }
    for (const auto& v : fluid.velocity) sb.initial = std::max(sb.initial, norm(v));
    return sb;
}

}  // namespace

template <int D>
Flow<D> scene_flow(const Scene& scene, const ParticleSimulation<D>& sim, const ExecContext& exec) {
    // The rate from the method's particle mass and rest density (the volume a particle of the rest
    // lattice stands for), Clavet's from the lattice.
    const float spacing = 2.0f * static_cast<float>(scene.particle_radius);
    float volume = std::pow(spacing, float(D));
    std::visit(
        [&](const auto& m) {
            using M = std::decay_t<decltype(m)>;
            if constexpr (!std::is_same_v<M, ClavetSolver<D>>) volume = sim.fluid.mass / m.settings().rest_density;
        },
        sim.method);
    return make_flow<D>(scene.emitters, scene.domain, scene.sinks, spacing, sim.fluid.mass, volume,
                        scene.emitters.empty() ? std::vector<Wall<D>>{} : scene_walls<D>(scene, exec), scene.where(),
                        sim.flow.max_fluid);
}
template Flow<2> scene_flow<2>(const Scene&, const ParticleSimulation<2>&, const ExecContext&);
template Flow<3> scene_flow<3>(const Scene&, const ParticleSimulation<3>&, const ExecContext&);

namespace {

template <int D>
ParticleSimulation<D> make_particle_simulation(const Scene& scene, std::size_t max_particles, const ExecContext& exec,
                                               const MemoryBudget& budget) {
    int layers = 2;
    // Settings first: a bad setting is reported before any particle is built.
    ParticleMethod<D> method = make_method<D>(scene, layers, exec);
    // Then what the particles will cost, counted from the scene: a wall kilometres long at 1 cm, or
    // springs between millions of particles, is refused here instead of swapping or hanging.
    check_memory(estimate_memory(scene, max_particles), budget, scene.where());
    ParticleSimulation<D> sim{scene, build_fluid<D>(scene, max_particles, &exec), build_boundary<D>(scene, layers, &exec),
                              std::move(method), {}, 0.0, 0, {}, {}};
    sim.bodies = make_bodies<D>(scene, sim.boundary);
    std::visit([&](auto& m) { m.init(sim.fluid, sim.boundary, exec); }, sim.method);
    if (scene.boundaries.empty()) {
        // Nothing holds the fluid: no particle can leave "every boundary".
        sim.bounds.lo = Vec<D>::filled(-std::numeric_limits<float>::infinity());
        sim.bounds.hi = Vec<D>::filled(std::numeric_limits<float>::infinity());
    } else {
        const Aabb<D> b = scene_bounds<D>(scene);
        float extent = 0.0f;
        for (int a = 0; a < D; ++a) extent = std::max(extent, b.hi[a] - b.lo[a]);
        const float margin = std::max(0.25f * extent, 16.0f * static_cast<float>(scene.particle_radius));
        sim.bounds.lo = b.lo - Vec<D>::filled(margin);
        sim.bounds.hi = b.hi + Vec<D>::filled(margin);
        if (scene.domain.given)  // the outflow's box counts first: what is inside it has not escaped
            for (int a = 0; a < D; ++a) {
                sim.bounds.lo[a] = std::min(sim.bounds.lo[a], static_cast<float>(scene.domain.min[a]));
                sim.bounds.hi[a] = std::max(sim.bounds.hi[a], static_cast<float>(scene.domain.max[a]));
            }
    }
    sim.speed_bound = scene_speed_bound(scene, sim.boundary, sim.fluid);
    sim.flow.max_fluid = max_particles;  // the emitters' too (scene_flow, add_emitter)
    if (!scene.emitters.empty() || scene.domain.given || !scene.sinks.empty()) {
        sim.flow = scene_flow<D>(scene, sim, exec);
        // A jet's speed is the scene's as much as an initial velocity is.
        for (const auto& e : scene.emitters) sim.speed_bound.initial = std::max(sim.speed_bound.initial, float(e.speed));
    }
    return sim;
}


std::string frame_name(int index, const char* ext) { return fmt::format("frames/particles_{:05d}.{}", index, ext); }

// The scene's models (meshes, polygons) at their pose at time t, with their boundary object index.
template <int D>
std::vector<std::pair<std::uint16_t, Mesh<D>>> posed_models(const ParticleSimulation<D>& sim, double t) {
    std::vector<std::pair<std::uint16_t, Mesh<D>>> out;
    for (std::size_t i = 0; i < sim.scene.boundaries.size(); ++i) {
        const MeshShape<D>* m = model_shape<D>(sim.scene.boundaries[i].model);
        if (!m) continue;
        Mesh<D> mesh;
        mesh.cells = m->mesh().cells;
        mesh.vertices = m->mesh().vertices;
        if (i < sim.boundary.motions.size() && sim.boundary.motions[i].moving()) {
            const RigidPose<D> pose = sim.boundary.motions[i].pose(t);
            for (auto& v : mesh.vertices) v = pose.apply(v);
        }
        out.emplace_back(static_cast<std::uint16_t>(i), std::move(mesh));
    }
    return out;
}

// What a particle run writes and until when: the caller's options (and the scene's) for a new run, the
// checkpoint's record (checked key by key) for a resumed one.
struct ParticleRunConfig {
    double end_time = 0.0, fps = 0.0;
    std::vector<std::string> formats;
    bool render_all = false, pieces = false, mesh = false;
    bool mesh_anisotropic = false;  // the surfaces with anisotropic kernels (Yu & Turk 2013)
    bool wall_pressure = false;  // the walls every frame with the fluid's pressure on them
    float mesh_decimate_error = 0.0f, mesh_decimate_ratio = 0.0f;  // the surfaces decimated (SurfaceSettings)
    std::string mesh_format;
    UpAxis up = UpAxis::y;
    std::vector<std::string> mesh_attributes;
    std::string run_id;  // detail::new_run_id(), kept by the checkpoints and the folder's run.json
};

ParticleRunConfig particle_run_config(const Scene& scene, int dimension, const RunOptions& opts,
                                      const detail::RecordReader* rec) {
    ParticleRunConfig c;
    constexpr double kTiny = std::numeric_limits<double>::min();
    if (rec) {
        // A resumed run goes where the original was going, unless told to go further.
        const double recorded_end = rec->number("end_time", kTiny, kMaxDuration);  // checked even if --until
        c.end_time = opts.until > 0.0 ? opts.until : recorded_end;
        c.fps = rec->number("fps", kTiny, kMaxFps);
        c.formats = rec->choices("formats", {"vtk", "csv", "ply"});
        c.render_all = rec->flag("render");
        c.pieces = rec->flag("pieces", false);
        c.mesh = rec->flag("mesh");
        c.mesh_anisotropic = rec->flag("mesh_anisotropic", false);  // absent in checkpoints before it existed
        c.wall_pressure = rec->flag("wall_pressure", false);  // absent in checkpoints before it existed
        if (rec->has("mesh_decimate_error")) c.mesh_decimate_error = float(rec->number("mesh_decimate_error", 0.0, 1000.0));
        if (rec->has("mesh_decimate_ratio")) c.mesh_decimate_ratio = float(rec->number("mesh_decimate_ratio", 0.0, 1.0));
        // Pasted into frame names: a closed list, never a path (issue 29, item 3).
        c.mesh_format = rec->choice("mesh_format", {"obj", "ply", "vtp"});
        c.up = rec->has("up_axis") ? parse_up_axis(rec->choice("up_axis", {"y", "z"}), "checkpoint") : UpAxis::y;
        if (rec->has("mesh_attributes")) c.mesh_attributes = rec->choices("mesh_attributes", {"velocity", "density", "pressure"});
        c.run_id = detail::read_run_id(*rec);
    } else {
        c.end_time = opts.until > 0.0 ? opts.until : scene.duration;
        c.fps = opts.fps > 0.0 ? opts.fps : scene.output.fps;
        c.formats = opts.formats.empty() ? scene.output.formats : opts.formats;
        c.render_all = opts.render || scene.output.render;
        c.pieces = opts.pieces;  // .vtp frames in pieces, one per process, listed by a .pvtp
        c.mesh = opts.mesh;
        c.mesh_anisotropic = opts.mesh_settings.anisotropic;
        c.wall_pressure = opts.wall_pressure || scene.output.wall_pressure;
        c.mesh_decimate_error = opts.mesh_settings.decimate_error;
        c.mesh_decimate_ratio = opts.mesh_settings.decimate_ratio;
        if (c.mesh && dimension == 2 && (c.mesh_decimate_error > 0.0f || c.mesh_decimate_ratio > 0.0f))
            throw InputError(fmt::format("{}: --mesh-decimate-error, --mesh-decimate-ratio: 2D contour lines are not "
                                         "decimated; allowed: with 3D scenes", scene.where()));
        c.mesh_format = opts.mesh_format;
        c.up = opts.up;
        c.mesh_attributes = opts.mesh_attributes;
        c.run_id = detail::new_run_id();
        for (const auto& f : c.formats)
            if (f != "vtk" && f != "csv" && f != "ply")
                throw InputError(fmt::format("{}: format '{}': allowed: vtk, csv, ply", scene.where(), text_excerpt(f, 40)));
        if (c.mesh && c.mesh_format != "obj" && c.mesh_format != "ply" && c.mesh_format != "vtp")
            throw InputError(fmt::format("--mesh-format '{}': allowed: obj, ply, vtp", text_excerpt(c.mesh_format, 40)));
    }
    if (dimension == 2 && c.up != UpAxis::y)
        throw InputError(fmt::format("{}: --up {}: a 2D scene is written in the x-y plane (z = 0); allowed: --up y",
                                     scene.where(), name(c.up)));
    for (const auto& a : c.mesh_attributes) {
        if (a != "velocity" && a != "density" && a != "pressure")
            throw InputError(fmt::format("--interpolate-attributes: '{}': allowed: velocity, density, pressure", a));
        if (!c.mesh || c.mesh_format == "obj")
            throw InputError(fmt::format("--interpolate-attributes {}: needs --mesh with --mesh-format ply or vtp (OBJ "
                                         "files have no per-vertex fields)", a));
    }
    return c;
}

// What the run loop carries from step to step beyond the simulation (counters, .pvd lists,
// statistics): a checkpoint's record keeps it so that a resumed run writes the same frames, numbers
// and statistics.
struct LoopCarry {
    double time0 = 0.0;
    std::uint64_t steps0 = 0;
    int next_frame = 1;
    std::vector<std::pair<double, std::string>> pvd, walls_pvd;
    float frame_max_err = 0.0f;  // since the previous frame
    double frame_sum_err = 0.0;
    std::uint64_t frame_steps = 0;
    double step_seconds = 0.0, wall_before = 0.0;
    float max_err = 0.0f, max_speed = 0.0f;
    double sum_err = 0.0, sum_iterations = 0.0, sum_divergence_iterations = 0.0, sum_viscosity_iterations = 0.0;
    std::uint64_t stat_steps = 0;
    LoadAverage loads;  // the walls' loads since the previous frame
};

// A frame's particles and flow counts as the run record keeps them (record_frames_json; absent in checkpoints
// before issue 45: 0), so that summary.json's frames read the same after a resume.
void read_frame_counts(const detail::RecordReader& r, FrameRecord& fr) {
    const nlohmann::json& f = r.array("frames")[static_cast<std::size_t>(fr.index)];
    auto at = [&](const char* key) -> std::uint64_t {
        constexpr std::uint64_t kMostParticles = std::uint64_t(1) << 48;
        return f.contains(key) ? r.count_at(f[key], fmt::format("frames[{}].{}", fr.index, key), kMostParticles) : 0;
    };
    fr.particles = at("particles"), fr.emitted = at("emitted");
    fr.removed_outflow = at("removed_outflow"), fr.removed_escaped = at("removed_escaped"), fr.drained = at("drained");
}

// A checkpoint's record back into the loop's carry and frame list, every value checked: against the
// simulation's clock (time, steps), the frame rate, and plain ranges (floats must fit a float).
void restore_carry(const detail::RecordReader& r, const ParticleRunConfig& cfg, double time, std::uint64_t steps,
                   std::size_t objects_expected, std::size_t bodies, LoopCarry& c, std::vector<FrameRecord>& frames) {
    constexpr double kFloat = std::numeric_limits<float>::max();
    constexpr double kBig = 1e300;
    c.time0 = r.number("time0", 0.0, time);
    c.steps0 = r.count("steps0", 0, steps);
    const auto listed = detail::read_record_frames(r, c.time0, cfg.fps, time, {"max_density_error", "mean_density_error"});
    c.next_frame = static_cast<int>(r.count("next_frame", 1, listed.size()));
    if (c.next_frame != static_cast<int>(listed.size()))
        r.fail("next_frame", fmt::format("= {}; allowed: {} (the frames listed)", c.next_frame, listed.size()));
    for (const auto& f : listed) {
        if (std::fabs(f.numbers[0]) > kFloat || std::fabs(f.numbers[1]) > kFloat)
            r.fail(fmt::format("frames[{}]", f.index), "holds a density error out of a float's range");
        FrameRecord fr;
        fr.index = f.index, fr.time = f.time, fr.files = f.files;
        read_frame_counts(r, fr);
        fr.max_density_error = static_cast<float>(f.numbers[0]);
        fr.mean_density_error = static_cast<float>(f.numbers[1]);
        frames.push_back(std::move(fr));
    }
    // The walls' loads of each frame and since the last one (absent in checkpoints before issue 28).
    const std::size_t objects = r.has("objects") ? r.count("objects", 0, 65536) : 0;
    if (r.has("objects") && objects != objects_expected)
        r.fail("objects", fmt::format("= {}; allowed: {} (the scene's boundary objects)", objects, objects_expected));
    if (objects) {
        const auto& a = r.array("frames");
        for (std::size_t k = 1; k < frames.size(); ++k) {
            const std::string at = fmt::format("frames[{}].loads", k);
            frames[k].loads = detail::loads_from_record(r, a[k].contains("loads") ? a[k]["loads"] : nlohmann::json(), at,
                                                        objects);
        }
        const auto& acc = r.array("load_accumulator", 2);
        c.loads.elapsed = r.number_at(acc[0], "load_accumulator[0]", 0.0, kBig);
        c.loads.impulse = detail::loads_from_record(r, acc[1], "load_accumulator[1]", objects);
    }
    if (bodies) {  // the bodies' state at each frame (bodies.csv)
        const auto& a = r.array("frames");
        for (std::size_t k = 0; k < frames.size(); ++k)
            frames[k].bodies = detail::bodies_from_record(r, a[k].contains("bodies") ? a[k]["bodies"] : nlohmann::json(),
                                                          fmt::format("frames[{}].bodies", k), bodies);
    }
    c.pvd = detail::read_record_pvd(r, "pvd", listed);
    c.walls_pvd = detail::read_record_pvd(r, "walls_pvd", listed);
    const auto& acc = r.array("frame_accumulators", 3);
    c.frame_max_err = static_cast<float>(r.number_at(acc[0], "frame_accumulators[0]", -kFloat, kFloat));
    c.frame_sum_err = r.number_at(acc[1], "frame_accumulators[1]", -kBig, kBig);
    c.frame_steps = r.count_at(acc[2], "frame_accumulators[2]", steps);
    const auto& st = r.array("stats", SIZE_MAX, 9);
    if (st.size() < 8) r.fail("stats", fmt::format("has {} entries; allowed: 8 or 9", st.size()));
    c.step_seconds = r.number_at(st[0], "stats[0]", 0.0, kBig);
    c.max_err = static_cast<float>(r.number_at(st[1], "stats[1]", -kFloat, kFloat));
    c.max_speed = static_cast<float>(r.number_at(st[2], "stats[2]", 0.0, kFloat));
    c.sum_err = r.number_at(st[3], "stats[3]", -kBig, kBig);
    c.sum_iterations = r.number_at(st[4], "stats[4]", 0.0, kBig);
    c.sum_divergence_iterations = r.number_at(st[5], "stats[5]", 0.0, kBig);
    c.stat_steps = r.count_at(st[6], "stats[6]", steps);
    c.wall_before = r.number_at(st[7], "stats[7]", 0.0, kBig);
    if (st.size() > 8) c.sum_viscosity_iterations = r.number_at(st[8], "stats[8]", 0.0, kBig);  // since DFSPH's viscosity
}

// The run record's frames (restore_carry reads them back): each frame's files, density errors, counts, loads
// and bodies.
nlohmann::json record_frames_json(const std::vector<FrameRecord>& kept) {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : kept) {
        frames.push_back({{"index", f.index}, {"time", f.time}, {"files", f.files},
                          {"max_density_error", f.max_density_error}, {"mean_density_error", f.mean_density_error},
                          {"particles", f.particles}, {"emitted", f.emitted},
                          {"removed_outflow", f.removed_outflow}, {"removed_escaped", f.removed_escaped},
                          {"drained", f.drained}});
        if (f.index > 0) frames.back()["loads"] = detail::loads_json(f.loads);
        if (!f.bodies.empty()) frames.back()["bodies"] = detail::bodies_json(f.bodies);
    }
    return frames;
}

// A frame's particles, and where they came from and went (eddy/emitters.hpp), in summary.json's frames.
void add_frame_flow(nlohmann::json& frame, const FrameRecord& f) {
    frame["particles"] = f.particles;
    frame["emitted"] = f.emitted;
    frame["removed_outflow"] = f.removed_outflow;
    frame["removed_escaped"] = f.removed_escaped;
    frame["drained"] = f.drained;
}

// summary.json's "removed", "emitters" and "sinks": what the flow put in and took out since the start.
template <int D>
void add_flow_summary(nlohmann::json& j, const Flow<D>& flow) {
    const FlowCounts& fc = flow.counts;
    j["removed"] = {{"outflow", fc.removed_outflow}, {"escaped", fc.removed_escaped}, {"drained", fc.drained_total()},
                    {"total", fc.removed_outflow + fc.removed_escaped + fc.drained_total()}};
    if (!flow.sinks.empty()) {
        nlohmann::json sinks = nlohmann::json::array();
        for (std::size_t k = 0; k < flow.sinks.size(); ++k)
            sinks.push_back({{"sink", k},
                             {"name", flow.sinks[k].name},
                             {"drained", fc.drained[k]},
                             {"mass_drained", double(fc.drained[k]) * flow.particle_mass}});
        j["sinks"] = sinks;
    }
    if (!flow.emits()) return;
    nlohmann::json em = nlohmann::json::array();
    for (std::size_t k = 0; k < flow.emitters.size(); ++k) {
        const Emitter<D>& e = flow.emitters[k];
        em.push_back({{"emitter", k},
                      {"emitted", fc.emitted[k]},
                      {"blocked", fc.due[k] - fc.emitted[k]},
                      {"rate", e.rate},
                      {"columns", e.columns.size()},
                      {"mass_emitted", double(fc.emitted[k]) * flow.particle_mass},
                      {"volume_rate", e.area * e.speed}});
    }
    j["emitters"] = em;
    j["emitted"] = fc.emitted_total();
}

// summary.json of a particle run: the scene, its statistics (the loop's carry), the frames with the last
// one's loads, the method's settings and memory.
template <int D>
nlohmann::json run_summary(const ParticleSimulation<D>& sim, const ParticleRunConfig& cfg, const LoopCarry& c,
                           const RunResult& result, std::uint64_t particles, double wall, int threads,
                           const std::string& picture) {
    const Scene& scene = sim.scene;
    const std::uint64_t nsteps = sim.steps - c.steps0;
    const double step_seconds = c.step_seconds;
    const double stat_steps = double(c.stat_steps);
    nlohmann::json j;
    j["scene"] = scene.name;
    j["scene_file"] = scene.source_path();  // absolute: the add-on reads it from anywhere
    j["scene_document"] = scene.document;  // the scene as run (--set applied): eddy whitewater rebuilds its walls
    j["method"] = scene.method;
    j["dimension"] = D;
    j["particles"] = result.frames.empty() ? particles : result.frames.front().particles;  // the run's start, resumed or not
    j["boundary_particles"] = sim.boundary.size();
    j["particle_radius"] = scene.particle_radius;
    j["up_axis"] = name(cfg.up);  // of every geometry file in frames/ (eddy/up_axis.hpp)
    j["fps"] = cfg.fps;
    j["steps"] = nsteps;
    j["simulated_time"] = sim.time;
    j["wall_time"] = wall;
    j["threads"] = threads;
    j["mean_ms_per_step"] = nsteps ? 1e3 * step_seconds / double(nsteps) : 0.0;
    j["ns_per_particle_step"] = nsteps && particles ? 1e9 * step_seconds / double(nsteps) / double(particles) : 0.0;
    j["max_density_error"] = c.max_err;
    j["mean_density_error"] = c.stat_steps ? c.sum_err / stat_steps : 0.0;
    j["max_speed"] = c.max_speed;
    j["speed_bound"] = {{"free_fall", sim.speed_bound.free_fall}, {"walls", sim.speed_bound.walls},
                        {"initial", sim.speed_bound.initial}, {"limit", sim.speed_bound.limit()}};
    if (c.sum_iterations > 0.0) j["mean_iterations"] = c.sum_iterations / stat_steps;
    if (c.sum_divergence_iterations > 0.0) j["mean_divergence_iterations"] = c.sum_divergence_iterations / stat_steps;
    if (c.sum_viscosity_iterations > 0.0) j["mean_viscosity_iterations"] = c.sum_viscosity_iterations / stat_steps;
    j["status"] = result.status;
    j["message"] = result.message;
    j["run_id"] = cfg.run_id;
    std::visit(
        [&](const auto& m) {
            j["settings"] = m.describe();
            j["memory_bytes_per_particle"] =
                sim.fluid.size() ? double(sim.fluid.memory_bytes() + m.memory_bytes()) / double(sim.fluid.size()) : 0.0;
        },
        sim.method);
    const bool flows = sim.flow.emits() || sim.flow.domain || !sim.flow.sinks.empty() || sim.flow.counts.removed_escaped > 0;
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : result.frames) {
        frames.push_back({{"index", f.index},
                          {"time", f.time},
                          {"files", f.files},
                          {"max_density_error", f.max_density_error},
                          {"mean_density_error", f.mean_density_error}});
        if (flows) add_frame_flow(frames.back(), f);
    }
    j["particles_at_end"] = result.frames.empty() ? particles : result.frames.back().particles;
    add_flow_summary(j, sim.flow);
    // The walls' loads of the last frame (forces.csv has every frame's).
    if (!frames.empty() && result.frames.back().index > 0 && !result.frames.back().loads.empty()) {
        frames.back()["forces"] = detail::loads_summary(result.frames.back().loads);
        j["forces_file"] = "forces.csv";
    }
    // The bodies at the last frame (bodies.csv has every frame's).
    if (!sim.bodies.empty() && !result.frames.empty()) {
        nlohmann::json b = nlohmann::json::array();
        const FrameRecord& last = result.frames.back();
        for (std::size_t k = 0; k < last.bodies.size(); ++k) {
            const BodyState& s = last.bodies[k];
            b.push_back({{"body", k},
                         {"object", sim.bodies.object[k]},
                         {"mass", sim.bodies.specs[k].mass.mass},
                         {"position", s.position},
                         {"orientation", s.orientation},
                         {"velocity", s.velocity},
                         {"angular_velocity", s.angular_velocity}});
        }
        j["bodies"] = b;
        j["bodies_file"] = "bodies.csv";
    }
    j["frames"] = frames;
    if (!picture.empty()) j["picture"] = picture;
    return j;
}
}  // namespace

namespace detail {

void check_particle_record(const Simulation& simulation, const nlohmann::json& record, const std::string& where) {
    std::visit(
        [&](const auto& sim) {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            const RecordReader reader(record, where);
            const ParticleRunConfig cfg = particle_run_config(sim.scene, D, RunOptions{}, &reader);
            LoopCarry carry;
            std::vector<FrameRecord> frames;
            restore_carry(reader, cfg, sim.time, sim.steps, sim.boundary.motions.size(), sim.bodies.size(), carry, frames);
        },
        simulation);
}

}  // namespace detail

Simulation make_simulation(const Scene& scene, std::size_t max_particles, const ExecContext& exec,
                           const MemoryBudget& budget) {
    if (scene.dimension == 2) return make_particle_simulation<2>(scene, max_particles, exec, budget);
    if (scene.dimension == 3) return make_particle_simulation<3>(scene, max_particles, exec, budget);
    throw InputError(fmt::format("{}: key 'dimension' = {}: allowed: 2, 3", scene.where(), scene.dimension));
}

namespace {
template <int D> auto table_of(const WcsphSolver<D>&) { return wcsph_fields(); }

// A step's removals in its statistics.
void note_removed(StepStats& st, const Removed& r) {
    st.removed_outflow = static_cast<std::uint32_t>(r.outflow);
    st.removed_escaped = static_cast<std::uint32_t>(r.escaped);
    st.removed_drained = static_cast<std::uint32_t>(r.total() - r.outflow - r.escaped);
}

// The flow's counts since the start, in a frame's record.
void set_flow_counts(FrameRecord& fr, const FlowCounts& fc) {
    fr.emitted = fc.emitted_total();
    fr.removed_outflow = fc.removed_outflow;
    fr.removed_escaped = fc.removed_escaped;
    fr.drained = fc.drained_total();
}
template <int D> auto table_of(const DfsphSolver<D>&) { return dfsph_fields(); }
template <int D> auto table_of(const PbfSolver<D>&) { return pbf_fields(); }
template <int D> auto table_of(const ClavetSolver<D>&) { return clavet_fields(); }
}  // namespace

nlohmann::json method_settings(const Simulation& simulation) {
    return std::visit([](const auto& sim) {
        return std::visit([](const auto& m) { return to_json(m.settings(), table_of(m)); }, sim.method);
    }, simulation);
}

void rebuild_method(Simulation& simulation, const Scene& scene, const ExecContext& exec) {
    auto rebuild = [&](auto& sim) {
        constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
        if (scene.dimension != D || scene.method != sim.scene.method || scene.particle_radius != sim.scene.particle_radius)
            throw InputError(fmt::format("{}: rebuild_method keeps the particles: the dimension, method and "
                                         "particle_radius must stay as they are",
                                         scene.where()));
        int layers = 2;
        ParticleMethod<D> method = make_method<D>(scene, layers, exec);  // throws before anything changes
        sim.method = std::move(method);
        sim.scene.settings = scene.settings;
        sim.scene.gravity = scene.gravity;
        sim.bodies.gravity = scene.gravity;
        sim.bodies.reset_engine();
        std::visit([&](auto& m) { m.init(sim.fluid, sim.boundary, exec); }, sim.method);
    };
    // Particle methods only (a grid method added to Simulation keeps this compiling).
    if (auto* p = std::get_if<ParticleSimulation<2>>(&simulation)) return rebuild(*p);
    if (auto* p = std::get_if<ParticleSimulation<3>>(&simulation)) return rebuild(*p);
    throw InputError(fmt::format("{}: settings can be rebuilt on the particle methods only", scene.where()));
}

namespace {
// "particle 12 at (0.1, 0.2) m" for the particle a StepStats names, else "a particle".
std::string named_particle(const StepStats& st) {
    if (st.where_dimension == 2) return fmt::format("particle {} at ({:.4g}, {:.4g}) m", st.where_id, st.where[0], st.where[1]);
    if (st.where_dimension == 3)
        return fmt::format("particle {} at ({:.4g}, {:.4g}, {:.4g}) m", st.where_id, st.where[0], st.where[1], st.where[2]);
    return "a particle";
}
}  // namespace

std::string step_divergence(const StepStats& st, float dt_min) {
    if (st.non_finite) return "a position or velocity is not finite (NaN or infinite)";
    if (st.dt_underflow) return fmt::format("the time step fell below dt_min = {:g} s", dt_min);
    if (st.speed_limit > 0.0f && st.max_speed > st.speed_limit)
        return fmt::format("a particle moved at {:.3g} m/s, faster than the speed of sound c0 = {:.3g} m/s", st.max_speed,
                           st.speed_limit);
    if (st.scene_speed_limit > 0.0f && st.max_speed > st.scene_speed_limit)
        return fmt::format("a particle moved at {:.3g} m/s, faster than any motion of the scene can make it: {:g} times "
                           "{:.3g} m/s (free fall over the scene's height, plus twice its walls' fastest point and its "
                           "initial velocities)",
                           st.max_speed, kSpeedBoundFactor, st.scene_speed_limit / kSpeedBoundFactor);
    // Collapses of the position-based methods: slow, so the speed checks above never see them.
    if (st.crowded > 0 && st.crowded_cell)
        return fmt::format("the fluid collapsed: {} ended a step in a cell (of the kernel's support) with {} particles, "
                           "more than {} ({:g} times a fluid at rest)",
                           named_particle(st), st.crowded, st.crowded_limit, kCrowdedFactor);
    if (st.crowded > 0)
        return fmt::format("the fluid collapsed: {} has {} particles in the cells around it, more than {} ({:g} "
                           "times a fluid at rest); its neighbours were not searched",
                           named_particle(st), st.crowded, st.crowded_limit, kCrowdedFactor);
    if (st.density_ratio_limit > 0.0f && st.max_density_ratio > st.density_ratio_limit)
        return fmt::format("the fluid collapsed: {} reached {:.3g} times the rest density, above the bound {:g}",
                           named_particle(st), st.max_density_ratio, st.density_ratio_limit);
    return {};
}

float landing_step(float dt, double time, double until, bool& lands) {
    lands = false;
    if (until > 0.0) {
        // Land exactly on `until`: the last kLandingSteps steps before it (at most) share the remaining
        // time equally, so a frame never ends on a short step after long ones. A step shorter than the
        // one before gives a pressure solver a different problem: DFSPH undoes the compression a step
        // starts with within that step, by a pressure that grows as 1/dt^2, and a tank at rest showed its
        // pressure 35% off in frames that ended on a halved step (docs/methods.md). Spread over the last
        // 8 steps, a step is at least 7/8 of the one before, and free steps (Python's step()) far from
        // a frame stay the method's own.
        constexpr double kLandingSteps = 8.0;
        const double left = until - time;
        if (left <= double(dt) * (1.0 + 1e-6)) {
            lands = true;
            return static_cast<float>(left);
        }
        const double n = std::ceil(left / double(dt) * (1.0 - 1e-6));
        if (n <= kLandingSteps) return static_cast<float>(left / n);
    }
    return dt;
}

StepStats step(Simulation& simulation, const ExecContext& exec, double until) {
    return std::visit(
        [&](auto& sim) {
            return std::visit(
                [&](auto& method) {
                    float dt = method.suggest_dt(sim.fluid);
                    const bool underflow = dt < method_dt_min(sim.method);
                    dt = std::min(dt, sim.flow.dt_limit(sim.time));
                    bool lands = false;
                    dt = landing_step(dt, sim.time, until, lands);
                    const std::size_t emitted = sim.flow.emits() ? emit(sim.flow, sim.fluid, sim.time) : 0;
                    const double t_end = lands ? until : sim.time + dt;  // the clock after the step
                    StepStats st = method.step(sim.fluid, sim.boundary, sim.time, dt, exec);
                    advance_bodies(sim.bodies, sim.boundary, sim.time, dt, t_end);
                    if (!st.non_finite) {  // a step that diverged keeps its particles, for the report
                        note_removed(st, remove_outflow(sim.flow, sim.fluid, sim.bounds, t_end, exec));
                    }
                    st.emitted = static_cast<std::uint32_t>(emitted);
                    st.dt_underflow = underflow;
                    st.scene_speed_limit = sim.speed_bound.limit();
                    sim.time = t_end;
                    ++sim.steps;
                    return st;
                },
                sim.method);
        },
        simulation);
}

RunResult run(Simulation& simulation, const RunOptions& opts, const ExecContext& exec) {
    return std::visit(
        [&](auto& sim) -> RunResult {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            const Scene& scene = sim.scene;
            const nlohmann::json* rec = opts.resume;  // a resumed run: the checkpoint's record
            // Over several processes (RunHooks): every one runs this loop; the writer alone touches the folder.
            RunHooks* const hooks = opts.hooks;
            const bool writer = !hooks || hooks->writes();
            const std::uint64_t particles = hooks ? hooks->sum(sim.fluid.size()) : sim.fluid.size();
            // A resumed run's record comes from a checkpoint: untrusted, read key by key (RecordReader).
            std::optional<detail::RecordReader> reader;
            if (rec) reader.emplace(*rec, (opts.out_dir / kCheckpointFile).string());
            const ParticleRunConfig cfg = particle_run_config(scene, D, opts, reader ? &*reader : nullptr);
            const double end_time = cfg.end_time, fps = cfg.fps;
            const std::vector<std::string>& formats = cfg.formats;
            const bool render_all = cfg.render_all, pieces = cfg.pieces, mesh = cfg.mesh;
            const std::string& mesh_format = cfg.mesh_format;
            const UpAxis up = cfg.up;
            const std::vector<std::string>& mesh_attributes = cfg.mesh_attributes;
            const auto& out = opts.out_dir;
            if (mesh && !opts.budget.unlimited()) {  // the surface grids come on top of the simulation
                SurfaceSettings ss = opts.mesh_settings;
                ss.anisotropic = cfg.mesh_anisotropic;
                if (ss.particle_radius <= 0.0f) ss.particle_radius = scene.particle_radius;
                MemoryEstimate e = estimate_memory(scene, std::numeric_limits<std::size_t>::max());
                const MemoryEstimate surface = estimate_surface_memory<D>(
                    std::span<const Vec<D>>(sim.fluid.position.data(), sim.fluid.size()), ss, false, false);
                for (const auto& p : surface.parts) e.add("--mesh: " + p.what, p.bytes, p.count);
                e.key = "--mesh";
                check_memory(e, opts.budget, scene.where());
            }
            // The library's own guard (the CLI and the scene loader check first): a frame interval or an
            // end the clock cannot resolve would make a run that never ends.
            if (!(fps > 0.0 && fps <= kMaxFps) || !(end_time > 0.0 && end_time <= kMaxDuration))
                throw InputError(fmt::format("{}: fps = {:g}, end time = {:g} s: allowed: 0 < fps <= {:g}, 0 < end <= {:g} s",
                                             scene.where(), fps, end_time, kMaxFps, kMaxDuration));
            if (rec && sim.time > end_time + 1e-9 * std::max(1.0, end_time))
                throw InputError(fmt::format("--until {:g}: the checkpoint is at t = {:.6g} s already; allowed: a later time",
                                             end_time, sim.time));
            // Stale frames of an earlier run would mix with this one's in the folder (a resumed run
            // keeps the frames its checkpoint lists).
            // The record's counters, frames and statistics, checked against the simulation's clock.
            LoopCarry carry;
            carry.time0 = sim.time;
            carry.steps0 = sim.steps;
            RunResult result;
            if (reader) restore_carry(*reader, cfg, sim.time, sim.steps, sim.boundary.motions.size(), sim.bodies.size(), carry, result.frames);
            const int frames_kept = static_cast<int>(result.frames.size());
            if (writer) {
                detail::open_run_folder(out, {"particles_", "surface_", "walls", "bodies_", "whitewater_"}, frames_kept,
                                        {{"scene", scene.name}, {"method", scene.method}}, rec != nullptr, cfg.run_id);
            }
            // The bodies in files (issue 30; eddy/bodies_io.hpp): their surfaces at rest once (bodies/body_KK.obj,
            // for Blender), at their pose every frame (frames/bodies_NNNNN.vtp in write_frame, bodies.pvd).
            const std::vector<Mesh<3>> body_rest =
                io::body_rest_meshes<D>(sim.bodies, io::body_prism_depth(scene.particle_radius));
            if (writer) io::write_body_meshes(out / "bodies", body_rest, up);
            if (hooks) hooks->any(false);  // the folder is ready before any process writes a piece into it
            // Spray, foam and bubbles (--whitewater; eddy/whitewater.hpp), stepped and written beside the fluid.
            detail::LiveWhitewater<D> whitewater(opts, scene, fps, up, sim.time, hooks != nullptr, reader ? &*reader : nullptr);
            // The whole fluid: this process's, or every process's gathered on the writer (collective).
            ParticleSet<D> gathered;
            auto whole = [&]() -> const ParticleSet<D>& {
                if (!hooks) return sim.fluid;
                hooks->gather(sim.fluid, gathered);
                return gathered;
            };
            // Particles in the axes --up asks for (eddy/up_axis.hpp; the world is y up): p itself, or a
            // turned copy kept in `turned`.
            auto in_file_axes = [&](const ParticleSet<D>& p, std::optional<ParticleSet<D>>& turned) -> const ParticleSet<D>& {
                if constexpr (D == 3)
                    if (up != UpAxis::y) return *(turned = io::in_file_axes(p, up));
                return p;
            };

            RenderSettings rs = opts.render_settings;
            if (rs.solid_objects.empty())  // obstacles and models: opaque, a veil over what is behind (render.hpp)
                for (const auto& b : scene.boundaries) rs.solid_objects.push_back(b.solid ? 1 : 0);
            if (scene.camera.given) {
                rs.eye = from_array<3>(scene.camera.eye);
                rs.target = from_array<3>(scene.camera.target);
                rs.fov_deg = static_cast<float>(scene.camera.fov_deg);
            }
            const Aabb<D> view = scene_bounds<D>(scene);
            // Colour scale: the middle of the map at half the free-fall speed of the fluid's height.
            if (!opts.render_settings.speed_scale_set) {
                const double v = std::sqrt(2.0 * norm(from_array<3>(scene.gravity)) * fluid_height(scene));
                if (v > 0.0) rs.speed_scale = static_cast<float>(0.5 * v);
            }
            const float r = static_cast<float>(scene.particle_radius);

            auto& pvd = carry.pvd;
            auto& walls_pvd = carry.walls_pvd;
            std::vector<std::string> warnings;  // summary.json "warnings"
            auto warn = [&](const std::string& w) {
                warnings.push_back(w);
                if (opts.on_warning && writer) opts.on_warning(w);
            };
            float& frame_max_err = carry.frame_max_err;  // since the previous frame
            double& frame_sum_err = carry.frame_sum_err;
            std::uint64_t& frame_steps = carry.frame_steps;
            auto write_frame = [&](bool render) {
                FrameRecord fr;
                fr.index = static_cast<int>(result.frames.size());
                fr.time = sim.time;
                fr.max_density_error = frame_max_err;
                fr.mean_density_error = frame_steps ? static_cast<float>(frame_sum_err / double(frame_steps)) : 0.0f;
                if (fr.index > 0) fr.loads = carry.loads.mean(sim.boundary.motions.size());
                carry.loads.reset();
                fr.bodies = sim.bodies.state;
                fr.particles = hooks ? hooks->sum(sim.fluid.size()) : sim.fluid.size();
                set_flow_counts(fr, sim.flow.counts);
                frame_max_err = 0.0f;
                frame_sum_err = 0.0;
                frame_steps = 0;
                const bool vtk = std::find(formats.begin(), formats.end(), "vtk") != formats.end();
                if (pieces && vtk) {  // every process writes its own particles
                    const int rank = hooks ? hooks->rank() : 0, processes = hooks ? hooks->processes() : 1;
                    auto piece = [&](int r) { return fmt::format("particles_{:05d}_p{:04d}.vtp", fr.index, r); };
                    std::optional<ParticleSet<D>> turned;
                    io::write_vtp(out / "frames" / piece(rank), in_file_axes(sim.fluid, turned));
                    const std::string name = frame_name(fr.index, "pvtp");
                    if (writer) {
                        std::vector<std::string> all_pieces;
                        for (int r = 0; r < processes; ++r) all_pieces.push_back(piece(r));
                        io::write_pvtp(out / name, all_pieces);
                        fr.files.push_back(name);
                        for (const auto& p : all_pieces) fr.files.push_back("frames/" + p);
                        pvd.emplace_back(sim.time, name);
                    }
                }
                // The whole fluid on the writer, for what is not written in pieces.
                const bool pressure_walls = cfg.wall_pressure && vtk && !sim.boundary.empty();  // every frame
                const bool walls_now = !sim.boundary.empty() && (fr.index == 0 || sim.boundary.any_moving() || pressure_walls);
                const bool need_whole = !pieces || !vtk || formats.size() > 1 || mesh || render || pressure_walls;
                const ParticleSet<D>& all = need_whole ? whole() : sim.fluid;
                if (!writer) {  // another process writes the files
                    result.frames.push_back(std::move(fr));
                    return;
                }
                std::optional<ParticleSet<D>> turned;
                const ParticleSet<D>& fluid = in_file_axes(all, turned);
                for (auto& f : whitewater.write_frame(fr.index, sim.time)) fr.files.push_back(std::move(f));
                for (const auto& f : formats) {
                    if (f == "vtk" && !pieces) {
                        const std::string name = frame_name(fr.index, "vtp");
                        io::write_vtp(out / name, fluid);
                        fr.files.push_back(name);
                        pvd.emplace_back(sim.time, name);
                    } else if (f == "csv") {
                        const std::string name = frame_name(fr.index, "csv");
                        io::write_csv(out / name, fluid);
                        fr.files.push_back(name);
                    } else if (f == "ply") {
                        const std::string name = frame_name(fr.index, "ply");
                        io::write_ply(out / name, fluid);
                        fr.files.push_back(name);
                    }
                }
                if (mesh) {  // issue 5: the fluid's surface beside the particles
                    SurfaceSettings ss = opts.mesh_settings;
                    ss.anisotropic = cfg.mesh_anisotropic;
                    if (ss.particle_radius == 0.0f) ss.particle_radius = r;
                    ss.decimate_error = cfg.mesh_decimate_error;
                    ss.decimate_ratio = cfg.mesh_decimate_ratio;
                    const std::string name = fmt::format("frames/surface_{:05d}.{}", fr.index, mesh_format);
                    Mesh<D> surface;  // none yet when the fluid is still to come (emitters)
                    if (!all.empty()) {
                        surface = reconstruct_surface<D>(all.position, ss, exec).mesh;
                        interpolate_attributes<D>(surface, all.position, particle_fields(all, mesh_attributes),
                                                  ss.support(), exec);
                    }
                    if constexpr (D == 3) to_file_axes(surface, UpAxis::y, up);
                    write_mesh<D>(out / name, surface);
                    fr.files.push_back(name);
                    // ParaView's time series (surface.pvd, below) lists VTK files: with the vtk format, the
                    // surface as .vtp too when it is written as OBJ or PLY.
                    if (mesh_format != "vtp" && std::find(formats.begin(), formats.end(), "vtk") != formats.end()) {
                        const std::string vtp = fmt::format("frames/surface_{:05d}.vtp", fr.index);
                        write_mesh<D>(out / vtp, surface);
                        fr.files.push_back(vtp);
                    }
                }
                // The walls beside the fluid: once when nothing moves, else every frame (walls.pvd); every
                // frame too with the fluid's pressure on them (--wall-pressure), which changes as it flows.
                if (walls_now) {
                    const bool moving = sim.boundary.any_moving() || pressure_walls;
                    const std::string stem = moving ? fmt::format("frames/walls_{:05d}", fr.index) : "frames/walls";
                    auto models = posed_models(sim, sim.time);
                    // The fluid's pressure on the walls, in the world's axes (gravity's), before the files' turn;
                    // the whole fluid (`all`), so that every process count gives the same bits.
                    std::vector<float> pressure, model_pressure;
                    if (pressure_walls) {
                        const float h = std::visit([](const auto& m) { return m.neighbor_radius(); }, sim.method);
                        pressure = wall_pressure<D>(sim.boundary, all, from_array<D>(scene.gravity), h, exec);
                        std::vector<Vec<D>> verts;
                        for (const auto& [obj, m] : models) verts.insert(verts.end(), m.vertices.begin(), m.vertices.end());
                        model_pressure = wall_pressure_at<D>(verts, sim.boundary, pressure, h, exec);
                    }
                    std::optional<BoundarySet<D>> turned_walls;
                    if constexpr (D == 3)
                        if (up != UpAxis::y) {
                            turned_walls = io::in_file_axes(sim.boundary, up);
                            for (auto& [obj, m] : models) to_file_axes(m, UpAxis::y, up);
                        }
                    if (vtk) {
                        io::write_walls_vtp(out / (stem + ".vtp"), turned_walls ? *turned_walls : sim.boundary, models,
                                            pressure, model_pressure);
                        fr.files.push_back(stem + ".vtp");
                        if (moving) {
                            walls_pvd.emplace_back(sim.time, stem + ".vtp");
                            io::write_pvd(out / "walls.pvd", walls_pvd);
                        }
                    }
                    // A body's model is its own object in Blender (bodies/body_KK.obj, keyed): not in the walls' OBJ.
                    const auto is_body = [&](const auto& om) { return scene.boundaries[om.first].body >= 0; };
                    if (!std::all_of(models.begin(), models.end(), is_body)) {  // for Blender and other mesh tools: the models alone, OBJ
                        Mesh<D> all;
                        for (const auto& [obj, m] : models) {
                            if (scene.boundaries[obj].body >= 0) continue;
                            const auto base = static_cast<std::uint32_t>(all.vertices.size());
                            all.vertices.insert(all.vertices.end(), m.vertices.begin(), m.vertices.end());
                            for (auto c : m.cells) {
                                for (auto& k : c) k += base;
                                all.cells.push_back(c);
                            }
                        }
                        write_obj(out / (stem + ".obj"), all);
                        fr.files.push_back(stem + ".obj");
                    }
                }
                if (!sim.bodies.empty()) {  // the bodies at their pose (eddy/bodies_io.hpp)
                    const std::string name = fmt::format("frames/bodies_{:05d}.vtp", fr.index);
                    io::write_bodies_vtp(out / name, body_rest, sim.bodies.state, up);
                    fr.files.push_back(name);
                }
                if (render) {
                    const std::string name = frame_name(fr.index, "png");
                    render_png(out / name, all, &sim.boundary, view, r, rs);
                    fr.files.push_back(name);
                }
                if (!pvd.empty()) io::write_pvd(out / "particles.pvd", pvd);
                const bool loads = fr.index > 0 && !fr.loads.empty();
                result.frames.push_back(std::move(fr));
                if (loads) detail::write_forces_csv(out / "forces.csv", result.frames);
                if (!sim.bodies.empty()) detail::write_bodies_csv(out / "bodies.csv", result.frames, sim.bodies.object);
                if (mesh) {  // surface.pvd from the frames' own files, at the particles' times
                    std::vector<std::pair<double, std::string>> listed;
                    for (const FrameRecord& f : result.frames)
                        for (const auto& file : f.files)
                            if (file.rfind("frames/surface_", 0) == 0 && file.size() > 4 &&
                                file.compare(file.size() - 4, 4, ".vtp") == 0)
                                listed.emplace_back(f.time, file);
                    if (!listed.empty()) io::write_pvd(out / "surface.pvd", listed);
                }
                if (!sim.bodies.empty()) {  // bodies.pvd from the frames' own files (a resumed run's kept ones too)
                    std::vector<std::pair<double, std::string>> listed;
                    for (const FrameRecord& f : result.frames)
                        for (const auto& file : f.files)
                            if (file.rfind("frames/bodies_", 0) == 0) listed.emplace_back(f.time, file);
                    io::write_pvd(out / "bodies.pvd", listed);
                }
            };

            using clock = std::chrono::steady_clock;
            const auto t0 = clock::now();
            auto last_report = t0;
            const std::uint64_t steps0 = carry.steps0;
            const double time0 = carry.time0;
            double& step_seconds = carry.step_seconds;
            const double wall_before = carry.wall_before;
            float& max_err = carry.max_err;
            float& max_speed = carry.max_speed;
            double& sum_err = carry.sum_err;
            double& sum_iterations = carry.sum_iterations;
            double& sum_divergence_iterations = carry.sum_divergence_iterations;
            double& sum_viscosity_iterations = carry.sum_viscosity_iterations;
            std::uint64_t& stat_steps = carry.stat_steps;
            int& next_frame = carry.next_frame;
            auto pvd_json = [](const std::vector<std::pair<double, std::string>>& v) {
                nlohmann::json a = nlohmann::json::array();
                for (const auto& [t, name] : v) a.push_back({t, name});
                return a;
            };
            // What the run loop carries from step to step beyond the simulation: a checkpoint keeps it
            // so that a resumed run writes the same frames, numbers and statistics.
            auto record = [&]() {
                nlohmann::json rj;
                rj["end_time"] = end_time;
                rj["fps"] = fps;
                rj["formats"] = formats;
                rj["render"] = render_all;
                rj["pieces"] = pieces;
                rj["mesh"] = mesh;
                rj["mesh_anisotropic"] = cfg.mesh_anisotropic;
                rj["wall_pressure"] = cfg.wall_pressure;
                rj["mesh_decimate_error"] = cfg.mesh_decimate_error;
                rj["mesh_decimate_ratio"] = cfg.mesh_decimate_ratio;
                rj["mesh_format"] = mesh_format;
                rj["mesh_attributes"] = mesh_attributes;
                rj["up_axis"] = name(up);
                rj["run_id"] = cfg.run_id;
                rj["time0"] = time0;
                rj["steps0"] = steps0;
                rj["next_frame"] = next_frame;
                rj["frames"] = record_frames_json(result.frames);
                rj["objects"] = sim.boundary.motions.size();
                std::vector<ObjectLoad> impulse = carry.loads.impulse;
                impulse.resize(sim.boundary.motions.size());
                rj["load_accumulator"] = {carry.loads.elapsed, detail::loads_json(impulse)};
                rj["pvd"] = pvd_json(pvd);
                rj["walls_pvd"] = pvd_json(walls_pvd);
                rj["frame_accumulators"] = {frame_max_err, frame_sum_err, frame_steps};
                if (whitewater.on()) rj["whitewater"] = whitewater.record();  // --whitewater: its state and files
                rj["stats"] = {step_seconds, max_err, max_speed, sum_err, sum_iterations, sum_divergence_iterations,
                               stat_steps, wall_before + std::chrono::duration<double>(clock::now() - t0).count(),
                               sum_viscosity_iterations};
                return rj;
            };
            const std::uint64_t steps_at_start = sim.steps;  // of this invocation (--steps counts from here)
            const double checkpoint_every = opts.checkpoint_every;
            double next_checkpoint = checkpoint_every > 0.0
                                         ? time0 + checkpoint_every * (std::floor((sim.time - time0) / checkpoint_every) + 1.0)
                                         : std::numeric_limits<double>::infinity();
            auto checkpoint = [&]() {
                if (!hooks) return write_checkpoint(out / kCheckpointFile, simulation, record());
                // Over several processes: the whole fluid, gathered, in the writer's simulation for the
                // write (the methods' statistics are every process's already), then its own part back.
                whole();
                if (!writer) return;
                std::swap(sim.fluid, gathered);
                try {
                    write_checkpoint(out / kCheckpointFile, simulation, record());
                } catch (...) {
                    std::swap(sim.fluid, gathered);
                    throw;
                }
                std::swap(sim.fluid, gathered);
            };

            auto progress = [&](bool finished) {
                if (!opts.on_progress || !writer) return;
                opts.on_progress(detail::make_progress(sim.time, time0, end_time, sim.steps - steps_at_start, opts.max_steps,
                                                       hooks ? particles : sim.fluid.size(), "particles",
                                                       std::chrono::duration<double>(clock::now() - t0).count(),
                                                       static_cast<int>(result.frames.size()), finished));
            };

            // The stretch from the last frame to an end that is not a frame time lands its steps on the
            // end, off the path a longer run takes (landing_step): the checkpoint that lets a finished run
            // be extended is the one taken where that stretch begins, and none is taken on it.
            bool checkpoints_held = false;
            auto hold_checkpoints_if_off_frame = [&]() {
                if (checkpoints_held || !detail::lands_off_frame(time0, fps, next_frame, end_time)) return;
                if (opts.checkpoint_at_end || checkpoint_every > 0.0) checkpoint();
                checkpoints_held = true;
            };

            // The running memory guard (issue 29): particles that cluster during a run multiply their
            // neighbour lists; the run stops when the simulation outgrows the budget (checked after every
            // step: what one step adds, at most, beyond it) instead of growing until the kernel kills it.
            const double memory_limit = running_memory_limit(
                opts.budget.unlimited() ? MemoryEstimate{} : estimate_memory(scene, std::numeric_limits<std::size_t>::max()),
                opts.budget);
            if (!rec) write_frame(render_all);
            hold_checkpoints_if_off_frame();
            const double frame_dt = 1.0 / fps;
            bool warned_escaped = false;
            result.status = "completed";
            result.exit_code = kExitOk;
            const double eps = 1e-9 * std::max(1.0, end_time);
            while (sim.time < end_time - eps && (opts.max_steps == 0 || sim.steps - steps_at_start < opts.max_steps)) {
                const double target = std::min(time0 + next_frame * frame_dt, end_time);
                const auto s0 = clock::now();
                const StepStats st = hooks ? hooks->step(simulation, exec, target) : step(simulation, exec, target);
                step_seconds += std::chrono::duration<double>(clock::now() - s0).count();
                whitewater.after_step(sim, exec);
                max_err = std::max(max_err, st.max_density_error);
                frame_max_err = std::max(frame_max_err, st.max_density_error);
                frame_sum_err += st.mean_density_error;
                ++frame_steps;
                max_speed = std::max(max_speed, st.max_speed);
                sum_err += st.mean_density_error;
                sum_iterations += st.iterations;
                sum_divergence_iterations += st.divergence_iterations;
                sum_viscosity_iterations += st.viscosity_iterations;
                ++stat_steps;
                carry.loads.add(sim.boundary.load, st.dt);
                std::string problem = step_divergence(st, method_dt_min(sim.method));
                if (st.removed_escaped > 0 && !warned_escaped) {
                    warned_escaped = true;
                    warn(fmt::format("{} particle(s) left every container at t = {:.6g} s: removed and counted (summary.json "
                                     "removed.escaped; a \"domain\" in the scene makes such an outflow explicit)",
                                     st.removed_escaped, sim.time));
                }
                if (problem.empty() && std::isfinite(memory_limit)) {
                    const double held = double(sim.fluid.memory_bytes() + sim.boundary.memory_bytes() +
                                               std::visit([](const auto& m) { return m.memory_bytes(); }, sim.method));
                    std::uint64_t over = held > memory_limit ? 1 : 0;
                    if (hooks) over = hooks->sum(over);  // the same decision on every process
                    if (over)
                        problem = fmt::format("the simulation holds {}, more than the {} the memory limit {} ({}) leaves it: "
                                              "its particles have clustered and their neighbour lists grew",
                                              format_bytes(held), format_bytes(memory_limit),
                                              format_bytes(double(opts.budget.limit_bytes)), opts.budget.origin);
                }
                if (!problem.empty()) {
                    result.status = "diverged";
                    result.exit_code = kExitDiverged;
                    result.message = fmt::format("diverged at step {} (t = {:.6g} s): {}; the {} frame(s) written so far are valid",
                                                 sim.steps, sim.time, problem, result.frames.size());
                    break;
                }
                if (sim.time >= target - eps) {
                    write_frame(render_all);
                    ++next_frame;
                    hold_checkpoints_if_off_frame();
                }
                if (sim.time >= next_checkpoint - eps) {
                    if (!checkpoints_held) checkpoint();
                    next_checkpoint += checkpoint_every;
                }
                bool stop = opts.stop && opts.stop->load();
                if (hooks) stop = hooks->any(stop);  // the same decision on every process
                if (stop) {
                    result.status = "interrupted";
                    result.exit_code = kExitInterrupted;
                    result.message = fmt::format("interrupted at step {} (t = {:.6g} s)", sim.steps, sim.time);
                    break;
                }
                const auto now = clock::now();
                if (std::chrono::duration<double>(now - last_report).count() >= opts.progress_interval) {
                    last_report = now;
                    progress(false);
                }
            }
            // The final checkpoint, before the frame below (a frame off the frame times, which a resumed
            // run rewrites under the same number at its proper time). A run that ended off the frame
            // times has its checkpoint already: the state at its last frame.
            if (result.exit_code != kExitDiverged && opts.checkpoint_at_end && !checkpoints_held) checkpoint();
            // A run stopped by --steps (or interrupted) between frames still ends with a frame of its last state.
            if (result.exit_code != kExitDiverged && result.frames.back().time < sim.time) write_frame(render_all);
            // The last good frame always gets a picture.
            std::string picture;
            if (result.exit_code != kExitDiverged) {
                const ParticleSet<D>& all = whole();
                picture = "last_frame.png";
                if (writer) render_png(out / picture, all, &sim.boundary, view, r, rs);
            }
            if (result.message.empty())
                result.message = fmt::format("completed {} steps to t = {:.6g} s", sim.steps - steps0, sim.time);
            progress(true);

            const double wall = wall_before + std::chrono::duration<double>(clock::now() - t0).count();
            nlohmann::json j = run_summary(sim, cfg, carry, result, particles, wall,
                                           opts.threads > 0 ? opts.threads : exec.threads(), picture);
            if (!warnings.empty()) j["warnings"] = warnings;
            // The final state's hash (state_hash; one process only: over several, each holds a part).
            if (!hooks) j["state_hash"] = fmt::format("{:016x}", state_hash(simulation));
            if (hooks) hooks->summarize(j);
            result.summary = j;
            if (writer) io::write_json(out / "summary.json", j);
            return result;
        },
        simulation);
}

std::uint64_t state_hash(const Simulation& simulation) {
    return std::visit(
        [](const auto& sim) {
            std::uint64_t h = 1469598103934665603ull;
            auto mix = [&](const void* data, std::size_t bytes) {
                const auto* p = static_cast<const unsigned char*>(data);
                for (std::size_t i = 0; i < bytes; ++i) {
                    h ^= p[i];
                    h *= 1099511628211ull;
                }
            };
            const auto& f = sim.fluid;
            mix(f.position.data(), f.position.size() * sizeof(f.position[0]));
            mix(f.velocity.data(), f.velocity.size() * sizeof(f.velocity[0]));
            mix(f.id.data(), f.id.size() * sizeof(f.id[0]));
            return h;
        },
        simulation);
}

}  // namespace eddy
