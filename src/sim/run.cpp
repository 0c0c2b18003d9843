#include "eddy/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/bounds.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "eddy/bodies_io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/wall_pressure.hpp"
#include "sim/frame_loop.hpp"
#include "sim/particle_outputs.hpp"
#include "sim/particle_step.hpp"
#include "sim/run_support.hpp"
#include "sim/slice_loop.hpp"
#include "sim/whitewater_output.hpp"

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
    w.body = b.body >= 0;
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

// The walls this process builds at the start. Under mpirun (issue 44), where the fluid is built in shares (`whole`
// false), the first process builds them all (it writes the walls' files) and every other one only the moving walls
// and bodies (they go anywhere): the fixed ones follow when its box is known (src/distributed/particle_boxes.cpp).
template <int D>
BoundarySet<D> walls_built_here(const Scene& scene, int layers, const ExecContext& exec, ProcessShare share, bool whole) {
    if (share.parts <= 1 || share.part == 0 || whole)
        return build_boundary<D>(scene, layers, &exec);
    WallsNear<D> none{detail::empty_box<D>()};  // an empty region: the moving walls only
    BoundarySet<D> walls = build_boundary<D>(scene, layers, &exec, &none);
    walls.moving_only = true;
    return walls;
}

// The method's init; without `start` (a resumed run) WCSPH's hydrostatic start is skipped: the checkpoint's
// particles replace the ones it would compress.
template <int D>
void init_method(ParticleSimulation<D>& sim, const ExecContext& exec, bool start) {
    std::visit(
        [&](auto& m) {
            if constexpr (std::is_same_v<std::decay_t<decltype(m)>, WcsphSolver<D>>) m.init(sim.fluid, sim.boundary, exec, start);
            else m.init(sim.fluid, sim.boundary, exec);
        },
        sim.method);
}

template <int D>
ParticleSimulation<D> make_particle_simulation(const Scene& scene, std::size_t max_particles, const ExecContext& exec,
                                               const MemoryBudget& budget, ProcessShare share) {
    int layers = 2;
    // Settings first: a bad setting is reported before any particle is built.
    ParticleMethod<D> method = make_method<D>(scene, layers, exec);
    // Then what the particles will cost, counted from the scene: a wall kilometres long at 1 cm, or
    // springs between millions of particles, is refused here instead of swapping or hanging.
    check_memory(estimate_process_memory(scene, max_particles, budget), budget, scene.where());
    const bool whole = fluid_built_whole(scene) && !share.replaced;  // a resume's start needs no whole fluid
    ParticleSimulation<D> sim{scene, build_fluid<D>(scene, max_particles, &exec, whole ? ProcessShare{} : share),
                              walls_built_here<D>(scene, layers, exec, share, whole), std::move(method), {}, 0.0, 0, {}, {}, {}};
    sim.bodies = make_bodies<D>(scene, sim.boundary);
    init_method(sim, exec, !share.replaced);
    if (scene.boundaries.empty()) {  // nothing holds the fluid: no particle can leave "every boundary"
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
        if (dimension == 2 && c.up != UpAxis::y) rec->fail("up_axis", "= z in a 2D run; allowed: y");
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
        c.mesh_format = opts.mesh_format;
        c.up = opts.up;
        c.mesh_attributes = opts.mesh_attributes;
        c.run_id = detail::new_run_id();  // the options themselves: check_run_options (src/sim/run_plan.cpp)
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
    detail::PvdLists pvd;  // particles.pvd's and walls.pvd's lists
    float frame_max_err = 0.0f;  // since the previous frame
    double frame_sum_err = 0.0;
    std::uint64_t frame_steps = 0;
    double step_seconds = 0.0, wall_before = 0.0;
    float max_err = 0.0f, max_speed = 0.0f;
    double sum_err = 0.0, sum_iterations = 0.0, sum_divergence_iterations = 0.0, sum_viscosity_iterations = 0.0;
    std::uint64_t stat_steps = 0;
    LoadAverage loads;  // the walls' loads since the previous frame
    StepStats passes;   // the steps' named passes' seconds, summed over this invocation (summary.json "passes")
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
    c.pvd.particles = detail::read_record_pvd(r, "pvd", listed);
    c.pvd.walls = detail::read_record_pvd(r, "walls_pvd", listed);
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

// A method's smooth walls' volume map nodes: held, filled now, the most filled at once (zeros without maps).
template <class M>
std::array<std::uint64_t, 3> volume_map_nodes(const M& m) {
    if constexpr (requires { m.smooth_walls(); }) {
        const auto& maps = m.smooth_walls().volume_maps();
        return {maps.nodes_held(), maps.nodes_filled(), maps.nodes_peak()};
    } else return {0, 0, 0};
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
            // The outputs' own parts (the whitewater's state, the probes' rows), as a resumed run reads them.
            LiveWhitewater<D> whitewater(RunOptions{}, sim.scene, cfg.fps, cfg.up, sim.time, &reader);
            ParticleOutputPlan plan;  // what the outputs write does not matter here: none is begun
            plan.formats = cfg.formats;
            for (auto& o : make_particle_outputs<D>(sim, plan, OutputPlace{}, carry.pvd, whitewater))
                o->restore(reader, frames.size());
        },
        simulation);
}

}  // namespace detail

bool fluid_built_whole(const Scene& scene) {
    if (scene.method != "wcsph") return false;
    const auto it = scene.settings.find("hydrostatic_start");  // on unless set false or 0
    return it == scene.settings.end() || !(it->is_boolean() ? !it->get<bool>() : it->is_number() && it->get<double>() == 0.0);
}

Simulation make_simulation(const Scene& scene, std::size_t max_particles, const ExecContext& exec,
                           const MemoryBudget& budget, ProcessShare share) {
    if (scene.dimension == 2) return make_particle_simulation<2>(scene, max_particles, exec, budget, share);
    if (scene.dimension == 3) return make_particle_simulation<3>(scene, max_particles, exec, budget, share);
    throw InputError(fmt::format("{}: key 'dimension' = {}: allowed: 2, 3", scene.where(), scene.dimension));
}

namespace {
template <int D> auto table_of(const WcsphSolver<D>&) { return wcsph_fields(); }

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

double FrameLanding::target(double time) const {
    // The first frame time after `time` (a step that landed on frame k is at its time exactly).
    const double eps = 1e-9 * std::max(1.0, std::fabs(time));
    double k = std::max(0.0, std::floor(time * fps));
    while (k > 0.0 && frame_time(0.0, fps, k) > time + eps) k -= 1.0;
    while (frame_time(0.0, fps, k) <= time + eps) k += 1.0;
    const double frame = frame_time(0.0, fps, k);
    return end > 0.0 && end < frame ? end : frame;
}

bool FrameLanding::reached_end(double time) const {
    return end > 0.0 && time >= end - 1e-9 * std::max(1.0, end);
}

double next_landing(const Simulation& simulation) {
    return std::visit(
        [](const auto& sim) { return SliceLimits{}.landing(sim.scene.output.fps, sim.scene.duration, sim.time).target(sim.time); },
        simulation);
}

std::string divergence_message(std::uint64_t steps, double t, const std::string& why) {
    return fmt::format("diverged at step {} (t = {:.6g} s): {}", steps, t, why);
}

SliceResult step_slice(Simulation& simulation, const ExecContext& exec, const SliceLimits& limits,
                       const std::function<void()>& before_step, const std::function<void(const StepStats&)>& after_step) {
    return std::visit(
        [&](auto& sim) {
            return detail::slice_loop<StepStats>(
                limits, [&] { return sim.time; },
                [&](double time) { return limits.landing(sim.scene.output.fps, sim.scene.duration, time); },
                [&](double target, StepStats& last) {
                    if (before_step) before_step();
                    last = step(simulation, exec, target);
                    if (after_step) after_step(last);
                    const std::string why = step_divergence(last, method_dt_min(sim.method));
                    return why.empty() ? why : divergence_message(sim.steps, sim.time, why);
                });
        },
        simulation);
}

StepStats step(Simulation& simulation, const ExecContext& exec, double until) {
    return std::visit(
        [&](auto& sim) {
            detail::StepExchange<std::remove_reference_t<decltype(sim)>::kDimension> here;  // one process
            return detail::step_particles(sim, exec, until, here);
        },
        simulation);
}

namespace {

// A particle run (issue 41): the task the frame loop (src/sim/frame_loop.hpp) drives, on one process or,
// through RunHooks, on each of several. It steps and guards (divergence, memory, escaped particles), keeps
// the statistics and the record a checkpoint carries, and hands every frame to its outputs
// (src/sim/particle_outputs.hpp).
template <int D>
class ParticleRun {
public:
    ParticleRun(Simulation& simulation, ParticleSimulation<D>& sim, const RunOptions& opts, const ExecContext& exec);
    RunResult go();

    // The frame loop's task.
    double time() const { return m_sim.time; }
    std::uint64_t steps() const { return m_sim.steps; }
    std::string advance(double target);
    void frame();
    void checkpoint();
    void checkpoint_pieces(const std::filesystem::path& file);
    bool any(bool v) { return m_hooks ? m_hooks->any(v) : v; }  // the same decision on every process
    void progress(bool finished);

private:
    using clock = std::chrono::steady_clock;
    const ParticleSet<D>& whole();
    void whitewater_step();
    void warn(const std::string& w);
    std::string memory_problem() const;
    void check_surface_memory() const;
    detail::ParticleOutputPlan output_plan() const;
    nlohmann::json record() const;
    nlohmann::json summary(const std::string& picture) const;
    // summary.json's processes (several) or state hash (one), and the volume maps' nodes (collective).
    void record_processes(nlohmann::json& j) const;

    Simulation& m_simulation;
    ParticleSimulation<D>& m_sim;
    const RunOptions& m_opts;
    const ExecContext& m_exec;
    RunHooks* const m_hooks;  // over several processes: every one runs this loop; the writer alone touches the folder
    const bool m_writer;
    const std::uint64_t m_particles;  // of every process, at the start
    std::optional<detail::RecordReader> m_reader;  // a resumed run: the checkpoint's record, untrusted
    ParticleRunConfig m_cfg;
    LoopCarry m_carry;
    detail::FrameClock m_clock;
    RunResult m_result;
    std::optional<detail::LiveWhitewater<D>> m_whitewater;  // spray, foam and bubbles (--whitewater)
    RenderSettings m_render;
    std::vector<std::unique_ptr<detail::ParticleOutput<D>>> m_outputs;
    ParticleSet<D> m_gathered;  // the whole fluid on the writer, over several processes
    std::vector<std::string> m_warnings;  // summary.json "warnings"
    bool m_warned_escaped = false;
    double m_memory_limit = std::numeric_limits<double>::infinity();
    std::uint64_t m_steps_at_start = 0;  // of this invocation (progress counts from here)
    clock::time_point m_t0;
};

template <int D>
ParticleRun<D>::ParticleRun(Simulation& simulation, ParticleSimulation<D>& sim, const RunOptions& opts,
                            const ExecContext& exec)
    : m_simulation(simulation), m_sim(sim), m_opts(opts), m_exec(exec), m_hooks(opts.hooks),
      m_writer(!m_hooks || m_hooks->writes()), m_particles(m_hooks ? m_hooks->sum(sim.fluid.size()) : sim.fluid.size()) {
    const Scene& scene = sim.scene;
    check_run_options(scene, sim.time, opts);  // before anything is written
    if (opts.resume) m_reader.emplace(*opts.resume, (opts.out_dir / kCheckpointFile).string());
    m_cfg = particle_run_config(scene, D, opts, m_reader ? &*m_reader : nullptr);
    const double fps = m_cfg.fps, end_time = m_cfg.end_time;
    if (m_cfg.mesh && !opts.budget.unlimited()) check_surface_memory();
    // The clock's own guard (a checkpoint's, or a scene's): a frame interval or an end it cannot resolve never ends.
    if (!(fps > 0.0 && fps <= kMaxFps) || !(end_time > 0.0 && end_time <= kMaxDuration))
        throw InputError(fmt::format("{}: fps = {:g}, end time = {:g} s: allowed: 0 < fps <= {:g}, 0 < end <= {:g} s",
                                     scene.where(), fps, end_time, kMaxFps, kMaxDuration));
    if (m_reader && sim.time > end_time + 1e-9 * std::max(1.0, end_time))
        throw InputError(fmt::format("--until {:g}: the checkpoint is at t = {:.6g} s already; allowed: a later time",
                                     end_time, sim.time));
    // The record's counters, frames and statistics, checked against the simulation's clock.
    m_carry.time0 = sim.time;
    m_carry.steps0 = sim.steps;
    if (m_reader)
        restore_carry(*m_reader, m_cfg, sim.time, sim.steps, sim.boundary.motions.size(), sim.bodies.size(), m_carry,
                      m_result.frames);
    m_clock = {m_carry.time0, fps, end_time, m_carry.next_frame};
    // The outputs, and what they carry in the record, before the folder is touched.
    m_whitewater.emplace(opts, scene, fps, m_cfg.up, sim.time, m_reader ? &*m_reader : nullptr);
    m_render = detail::scene_render_settings(scene, opts.render_settings);
    const detail::OutputPlace place{opts.out_dir, m_cfg.up, &exec, m_hooks, m_writer};
    m_outputs = detail::make_particle_outputs<D>(sim, output_plan(), place, m_carry.pvd, *m_whitewater);
    if (m_reader && m_writer)
        for (auto& o : m_outputs) o->restore(*m_reader, m_result.frames.size());
    // Stale frames of an earlier run would mix with this one's in the folder (a resumed run keeps the
    // frames its checkpoint lists).
    if (m_writer) {
        detail::open_run_folder(opts.out_dir, {"particles_", "surface_", "walls", "bodies_", "whitewater_"},
                                static_cast<int>(m_result.frames.size()), {{"scene", scene.name}, {"method", scene.method}},
                                m_reader.has_value(), m_cfg.run_id);
        for (auto& o : m_outputs) o->begin();
    }
    if (m_hooks) m_hooks->any(false);  // the folder is ready before any process writes a piece into it
    m_steps_at_start = sim.steps;
    m_t0 = clock::now();
    // The running memory guard (issue 29): particles that cluster during a run multiply their neighbour
    // lists; the run stops when the simulation outgrows the budget (checked after every step: what one step
    // adds, at most, beyond it) instead of growing until the kernel kills it.
    m_memory_limit = running_memory_limit(
        opts.budget.unlimited() ? MemoryEstimate{} : estimate_process_memory(scene, std::numeric_limits<std::size_t>::max(), opts.budget),
        opts.budget);
}

// With --mesh and a memory budget: the surface grids come on top of the simulation.
template <int D>
void ParticleRun<D>::check_surface_memory() const {
    SurfaceSettings ss = m_opts.mesh_settings;
    ss.anisotropic = m_cfg.mesh_anisotropic;
    if (ss.particle_radius <= 0.0f) ss.particle_radius = m_sim.scene.particle_radius;
    MemoryEstimate e = estimate_memory(m_sim.scene, std::numeric_limits<std::size_t>::max());
    const MemoryEstimate surface = estimate_surface_memory<D>(
        std::span<const Vec<D>>(m_sim.fluid.position.data(), m_sim.fluid.size()), ss, false, false);
    for (const auto& p : surface.parts) e.add("--mesh: " + p.what, p.bytes, p.count);
    e.key = "--mesh";
    check_memory(e, m_opts.budget, m_sim.scene.where());
}

template <int D>
detail::ParticleOutputPlan ParticleRun<D>::output_plan() const {
    detail::ParticleOutputPlan p;
    p.formats = m_cfg.formats;
    p.pieces = m_cfg.pieces;
    p.render = m_cfg.render_all;
    p.mesh = m_cfg.mesh;
    p.wall_pressure = m_cfg.wall_pressure;
    p.surface = m_opts.mesh_settings;
    p.surface.anisotropic = m_cfg.mesh_anisotropic;
    if (p.surface.particle_radius == 0.0f) p.surface.particle_radius = static_cast<float>(m_sim.scene.particle_radius);
    p.surface.decimate_error = m_cfg.mesh_decimate_error;
    p.surface.decimate_ratio = m_cfg.mesh_decimate_ratio;
    p.mesh_format = m_cfg.mesh_format;
    p.mesh_attributes = m_cfg.mesh_attributes;
    p.render_settings = m_render;
    return p;
}

// The whole fluid: this process's, or every process's gathered on the writer (collective).
template <int D>
const ParticleSet<D>& ParticleRun<D>::whole() {
    if (!m_hooks) return m_sim.fluid;
    m_hooks->gather(m_sim.fluid, m_gathered);
    return m_gathered;
}

// The whitewater's step when it is due, on the whole fluid (over several processes: gathered on the writer,
// in id order, as one process's is taken; the other processes only move its clock on).
template <int D>
void ParticleRun<D>::whitewater_step() {
    if (!m_whitewater->due(m_sim.time)) return;
    const ParticleSet<D>& all = whole();
    m_whitewater->step(m_sim, m_writer ? &all : nullptr, m_exec);
}

template <int D>
void ParticleRun<D>::warn(const std::string& w) {
    m_warnings.push_back(w);
    if (m_opts.on_warning && m_writer) m_opts.on_warning(w);
}

template <int D>
std::string ParticleRun<D>::advance(double target) {
    LoopCarry& c = m_carry;
    const auto s0 = clock::now();
    const StepStats st = m_hooks ? m_hooks->step(m_simulation, m_exec, target) : eddy::step(m_simulation, m_exec, target);
    c.step_seconds += std::chrono::duration<double>(clock::now() - s0).count();
    c.passes.add_passes(st);
    whitewater_step();
    c.max_err = std::max(c.max_err, st.max_density_error);
    c.frame_max_err = std::max(c.frame_max_err, st.max_density_error);
    c.frame_sum_err += st.mean_density_error, ++c.frame_steps;
    c.max_speed = std::max(c.max_speed, st.max_speed);
    c.sum_err += st.mean_density_error;
    c.sum_iterations += st.iterations;
    c.sum_divergence_iterations += st.divergence_iterations;
    c.sum_viscosity_iterations += st.viscosity_iterations;
    ++c.stat_steps;
    c.loads.add(m_sim.boundary.load, st.dt);
    std::string problem = step_divergence(st, method_dt_min(m_sim.method));
    if (st.removed_escaped > 0 && !m_warned_escaped) {
        m_warned_escaped = true;
        warn(fmt::format("{} particle(s) left every container at t = {:.6g} s: removed and counted (summary.json "
                         "removed.escaped; a \"domain\" in the scene makes such an outflow explicit)",
                         st.removed_escaped, m_sim.time));
    }
    if (problem.empty() && std::isfinite(m_memory_limit)) problem = memory_problem();
    return problem;
}

// The running memory guard's verdict: "" or why the run stops (the same on every process).
template <int D>
std::string ParticleRun<D>::memory_problem() const {
    const double held = double(m_sim.fluid.memory_bytes() + m_sim.boundary.memory_bytes() +
                               std::visit([](const auto& m) { return m.memory_bytes(); }, m_sim.method));
    std::uint64_t over = held > m_memory_limit ? 1 : 0;
    if (m_hooks) over = m_hooks->sum(over);
    if (!over) return {};
    return fmt::format("the simulation holds {}, more than the {} the memory limit {} ({}) leaves it: its particles "
                       "have clustered and their neighbour lists grew",
                       format_bytes(held), format_bytes(m_memory_limit), format_bytes(double(m_opts.budget.limit_bytes)),
                       m_opts.budget.origin);
}

// A frame: its record (the statistics since the previous frame, the loads, the bodies, the counts), then
// every output: the pieces on every process, the rest on the writer with the whole fluid if one needs it.
template <int D>
void ParticleRun<D>::frame() {
    LoopCarry& c = m_carry;
    FrameRecord fr;
    fr.index = static_cast<int>(m_result.frames.size());
    fr.time = m_sim.time;
    fr.max_density_error = c.frame_max_err;
    fr.mean_density_error = c.frame_steps ? static_cast<float>(c.frame_sum_err / double(c.frame_steps)) : 0.0f;
    if (fr.index > 0) fr.loads = c.loads.mean(m_sim.boundary.motions.size());
    c.loads.reset();
    fr.bodies = m_sim.bodies.state;
    fr.particles = m_hooks ? m_hooks->sum(m_sim.fluid.size()) : m_sim.fluid.size();
    set_flow_counts(fr, m_sim.flow.counts);
    c.frame_max_err = 0.0f;
    c.frame_sum_err = 0.0;
    c.frame_steps = 0;
    detail::ParticleFrame<D> f{m_sim, fr};
    bool need_whole = false;
    for (auto& o : m_outputs) {
        o->each_process(f);
        need_whole = need_whole || o->needs_whole(f);
    }
    const ParticleSet<D>& all = need_whole ? whole() : m_sim.fluid;
    if (m_writer) {  // else another process writes the files
        std::optional<ParticleSet<D>> turned;
        if constexpr (D == 3)
            if (m_cfg.up != UpAxis::y) turned = io::in_file_axes(all, m_cfg.up);
        f.all = &all;
        f.fluid = turned ? &*turned : &all;
        for (auto& o : m_outputs) o->write(f);
    }
    m_result.frames.push_back(std::move(fr));
    if (m_writer)
        for (auto& o : m_outputs) o->after(m_result.frames);
}

// What the run loop carries from step to step beyond the simulation: a checkpoint keeps it so that a
// resumed run writes the same frames, numbers and statistics.
template <int D>
nlohmann::json ParticleRun<D>::record() const {
    const ParticleRunConfig& cfg = m_cfg;
    const LoopCarry& c = m_carry;
    auto pvd_json = [](const std::vector<std::pair<double, std::string>>& v) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& [t, name] : v) a.push_back({t, name});
        return a;
    };
    nlohmann::json rj;
    rj["end_time"] = cfg.end_time;
    rj["fps"] = cfg.fps;
    rj["formats"] = cfg.formats;
    rj["render"] = cfg.render_all;
    rj["pieces"] = cfg.pieces;
    rj["mesh"] = cfg.mesh;
    rj["mesh_anisotropic"] = cfg.mesh_anisotropic;
    rj["wall_pressure"] = cfg.wall_pressure;
    rj["mesh_decimate_error"] = cfg.mesh_decimate_error;
    rj["mesh_decimate_ratio"] = cfg.mesh_decimate_ratio;
    rj["mesh_format"] = cfg.mesh_format;
    rj["mesh_attributes"] = cfg.mesh_attributes;
    rj["up_axis"] = name(cfg.up);
    rj["run_id"] = cfg.run_id;
    rj["time0"] = c.time0;
    rj["steps0"] = c.steps0;
    rj["next_frame"] = m_clock.next_frame;
    rj["frames"] = record_frames_json(m_result.frames);
    rj["objects"] = m_sim.boundary.motions.size();
    std::vector<ObjectLoad> impulse = c.loads.impulse;
    impulse.resize(m_sim.boundary.motions.size());
    rj["load_accumulator"] = {c.loads.elapsed, detail::loads_json(impulse)};
    rj["pvd"] = pvd_json(c.pvd.particles);
    rj["walls_pvd"] = pvd_json(c.pvd.walls);
    rj["frame_accumulators"] = {c.frame_max_err, c.frame_sum_err, c.frame_steps};
    if (m_whitewater->on()) rj["whitewater"] = m_whitewater->record();  // --whitewater: its state and files
    for (const auto& o : m_outputs) o->save(rj);
    rj["stats"] = {c.step_seconds, c.max_err, c.max_speed, c.sum_err, c.sum_iterations, c.sum_divergence_iterations,
                   c.stat_steps, c.wall_before + std::chrono::duration<double>(clock::now() - m_t0).count(),
                   c.sum_viscosity_iterations};
    return rj;
}

template <int D>
void ParticleRun<D>::checkpoint() {
    const std::filesystem::path file = m_opts.out_dir / kCheckpointFile;
    if (m_cfg.pieces) return checkpoint_pieces(file);  // (or resumed from pieces on one process)
    if (!m_hooks) return write_checkpoint(file, m_simulation, record());
    // Over several processes: the whole fluid, gathered, in the writer's simulation for the write (the
    // methods' statistics are every process's already), then its own part back.
    whole();
    if (!m_writer) return;
    std::swap(m_sim.fluid, m_gathered);
    try { write_checkpoint(file, m_simulation, record()); } catch (...) { std::swap(m_sim.fluid, m_gathered); throw; }
    std::swap(m_sim.fluid, m_gathered);
}

// With pieces over several processes (issue 44): each process writes its own particles, then the writer
// the index naming them (the rest of the state is every process's alike), then each removes its older
// pieces. An index always names a complete set, and no process holds the whole fluid. A process that
// cannot write stops them all (the front end's MPI_Abort), the previous index and its pieces intact.
template <int D>
void ParticleRun<D>::checkpoint_pieces(const std::filesystem::path& file) {
    if (!m_hooks) {  // one process: a whole checkpoint, then no piece is needed any more
        write_checkpoint(file, m_simulation, record());
        return detail::drop_checkpoint_pieces(file.parent_path(), "", 0, 0);
    }
    write_checkpoint_piece(file, m_simulation, m_hooks->rank());
    const std::vector<std::uint64_t> counts = m_hooks->all_values(m_sim.fluid.size());  // (collective)
    if (m_writer) write_checkpoint_index(file, m_simulation, record(), counts);
    m_hooks->any(false);  // the index is in place before an older piece goes
    detail::drop_checkpoint_pieces(file.parent_path(), checkpoint_piece_name(m_sim.steps, m_hooks->rank()), m_hooks->rank(),
                                   m_writer ? m_hooks->processes() : std::numeric_limits<int>::max());
}

template <int D>
void ParticleRun<D>::progress(bool finished) {
    if (!m_opts.on_progress || !m_writer) return;
    m_opts.on_progress(detail::make_progress(m_sim.time, m_clock.time0, m_clock.end_time, m_sim.steps - m_steps_at_start,
                                             m_opts.max_steps, m_hooks ? m_particles : m_sim.fluid.size(), "particles",
                                             std::chrono::duration<double>(clock::now() - m_t0).count(),
                                             static_cast<int>(m_result.frames.size()), finished));
}

template <int D>
nlohmann::json ParticleRun<D>::summary(const std::string& picture) const {
    const double wall = m_carry.wall_before + std::chrono::duration<double>(clock::now() - m_t0).count();
    nlohmann::json j = run_summary(m_sim, m_cfg, m_carry, m_result, m_particles, wall,
                                   m_opts.threads > 0 ? m_opts.threads : m_exec.threads(), picture);
    if (!m_warnings.empty()) j["warnings"] = m_warnings;
    if (!m_sim.scene.probes.empty()) j["probes_file"] = "probes.csv";
    j["passes"] = detail::passes_json(m_carry.passes, m_sim.steps - m_steps_at_start);  // this process's
    // The final state's hash (state_hash; one process only: over several, each holds a part).
    record_processes(j);
    return j;
}

template <int D>
void ParticleRun<D>::record_processes(nlohmann::json& j) const {
    if (m_hooks) m_hooks->summarize(j);
    else j["state_hash"] = fmt::format("{:016x}", state_hash(m_simulation));
    // The smooth walls' volume maps: their nodes, those filled now (near the fluid; each process's own) and the
    // most filled at once.
    const auto maps = std::visit([](const auto& m) { return volume_map_nodes(m); }, m_sim.method);
    if (maps[0] == 0) return;
    j["volume_map_nodes"] = {{"held", maps[0]}};
    if (m_hooks) {
        j["processes"]["volume_map_nodes_filled_per_rank"] = m_hooks->all_values(maps[1]);
        j["processes"]["volume_map_nodes_peak_per_rank"] = m_hooks->all_values(maps[2]);
    } else j["volume_map_nodes"]["filled"] = maps[1], j["volume_map_nodes"]["peak"] = maps[2];
}

template <int D>
RunResult ParticleRun<D>::go() {
    detail::run_frames(*this, m_clock, m_opts, m_reader.has_value(), m_result);
    // The last good frame gets a picture (not in pieces over several processes: none holds the whole fluid).
    std::string picture;
    if (m_result.exit_code != kExitDiverged && !(m_hooks && m_cfg.pieces)) {
        const ParticleSet<D>& all = whole();
        picture = "last_frame.png";
        if (m_writer) detail::render_state<D>(m_opts.out_dir / picture, m_sim, all, m_render);
    }
    detail::finish_message(m_result, m_sim.steps - m_carry.steps0, m_sim.time);
    progress(true);
    m_result.summary = summary(picture);
    if (m_writer) io::write_json(m_opts.out_dir / "summary.json", m_result.summary);
    return std::move(m_result);
}

}  // namespace

RunResult run(Simulation& simulation, const RunOptions& opts, const ExecContext& exec) {
    return std::visit(
        [&](auto& sim) -> RunResult {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            return ParticleRun<D>(simulation, sim, opts, exec).go();
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
