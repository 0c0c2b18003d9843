// eddy-view: the simulation thread.
#include "sim_worker.hpp"

#include <algorithm>
#include <limits>
#include <chrono>
#include <cmath>
#include <numbers>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/interaction.hpp"
#include "eddy/json_text.hpp"
#include "eddy/memory_budget.hpp"
// The surface reconstruction (issue 5) lands on another branch: the live surface is compiled in when
// its header is there, and the window offers it then.
// Likewise the shallow-water solver (issue 4): "method": "shallow_water" scenes become heightfields.
#if __has_include("eddy/shallow_water.hpp")
#include "eddy/shallow_water.hpp"
#define EDDY_VIEW_HAS_SHALLOW_WATER 1
#endif
#if __has_include("eddy/surface.hpp")
#include "eddy/surface.hpp"
#define EDDY_VIEW_HAS_SURFACE 1
#endif

namespace eddy::view {

namespace {

// The panel's "Step passes": each pass of a slice of `steps` steps in ms per step, in the step's order.
std::vector<std::pair<std::string, double>> pass_ms_per_step(const PassTimes& passes, int steps) {
    std::vector<std::pair<std::string, double>> out;
    for (int k = 0; k < passes.pass_count && steps > 0; ++k)
        out.emplace_back(passes.passes[k].name, 1e3 * passes.passes[k].seconds / steps);
    return out;
}

// rho0 of the running SPH method (kg/m^3; 2D kg/m^2), 0 for Clavet (its density has no unit).
float method_rest_density(const Simulation& simulation) {
    return std::visit(
        [](const auto& sim) {
            constexpr int D = std::decay_t<decltype(sim)>::kDimension;
            return std::visit(
                [](const auto& m) -> float {
                    if constexpr (std::is_same_v<std::decay_t<decltype(m)>, ClavetSolver<D>>) return 0.0f;
                    else return m.settings().rest_density;
                },
                sim.method);
        },
        simulation);
}

using Clock = std::chrono::steady_clock;

// The scale s (> 1) of the particle radius that brings fluid / s^D + walls / s^(D-1) particles down to
// `most` (the fluid fills a volume, the walls' layers a surface); 1 when they fit already.
double coarsening(double fluid, double walls, int dim, double most) {
    auto count = [&](double s) { return fluid / std::pow(s, dim) + walls / std::pow(s, dim - 1); };
    if (count(1.0) <= most) return 1.0;
    double lo = 1.0, hi = 2.0;
    while (count(hi) > most && hi < 1e3) hi *= 2.0;
    for (int k = 0; k < 40; ++k) (count(0.5 * (lo + hi)) > most ? lo : hi) = 0.5 * (lo + hi);
    return hi;
}

// The scene as the viewer plays it (WorkerConfig::live_particles): a scene whose fluid and walls hold more
// particles than the live budget is loaded again at a particle radius scaled up until they fit (about
// 20,000 particles play at 10-20 steps a second on 2 cores), unless the overrides set particle_radius
// (the user's choice is kept). A warning says what was done and how to keep the scene's own resolution.
Scene live_scene(const std::filesystem::path& file, std::vector<std::string> overrides, const WorkerConfig& cfg) {
    Scene sc = load_scene(file, overrides, cfg.budget);
    if (cfg.live_particles == 0 || sc.method == "shallow_water") return sc;
    for (const auto& o : overrides)
        if (o.rfind("particle_radius=", 0) == 0) return sc;
    const MemoryEstimate est = estimate_memory(sc, cfg.max_particles);
    const double fluid = est.find("fluid") ? est.find("fluid")->count : 0.0;
    const double walls = est.find("walls") ? est.find("walls")->count : 0.0;
    const double s = coarsening(fluid, walls, sc.dimension, double(cfg.live_particles));
    if (s <= 1.0) return sc;
    const double r = sc.particle_radius * s;
    overrides.push_back(fmt::format("particle_radius={:.4g}", r));
    const std::string note = fmt::format(
        "{}: {} particles (fluid and walls) play slowly here; shown at particle_radius {:.4g} m instead of {:g} "
        "(about {}) for live play; --live-particles 0 (or --set particle_radius=...) keeps the scene's own",
        sc.name, format_count(fluid + walls), r, sc.particle_radius, format_count(double(cfg.live_particles)));
    try {
        Scene coarse = load_scene(file, overrides, cfg.budget);
        coarse.warnings.push_back(note);
        return coarse;
    } catch (const InputError& e) {  // a nozzle or a body smaller than the coarser particles: keep the scene's
        sc.warnings.push_back(fmt::format("{}: not coarsened for live play ({})", sc.name, e.what()));
        return sc;
    }
}

// The edges of a 3D analytic wall as line segments (boxes, cylinders, spheres; nothing for others).
std::vector<float> wall_lines(const BoundarySpec& b) {
    std::vector<float> out;
    auto seg = [&](std::array<double, 3> p, std::array<double, 3> q) {
        for (double v : p) out.push_back(static_cast<float>(v));
        for (double v : q) out.push_back(static_cast<float>(v));
    };
    constexpr int kSeg = 48;
    const double tau = 2.0 * std::numbers::pi;
    if (b.shape == "box") {
        const auto& lo = b.min;
        const auto& hi = b.max;
        for (int e = 0; e < 12; ++e) {
            // 4 edges along each axis
            const int axis = e / 4, k = e % 4;
            const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
            std::array<double, 3> p = lo, q = lo;
            p[a1] = q[a1] = (k & 1) ? hi[a1] : lo[a1];
            p[a2] = q[a2] = (k & 2) ? hi[a2] : lo[a2];
            q[axis] = hi[axis];
            seg(p, q);
        }
    } else if (b.shape == "cylinder") {
        for (int i = 0; i < kSeg; ++i) {
            const double a0 = tau * i / kSeg, a1 = tau * (i + 1) / kSeg;
            for (double y : {b.center[1], b.center[1] + b.height})
                seg({b.center[0] + b.radius * std::cos(a0), y, b.center[2] + b.radius * std::sin(a0)},
                    {b.center[0] + b.radius * std::cos(a1), y, b.center[2] + b.radius * std::sin(a1)});
        }
        for (int i = 0; i < 4; ++i) {
            const double a = tau * i / 4;
            const double x = b.center[0] + b.radius * std::cos(a), z = b.center[2] + b.radius * std::sin(a);
            seg({x, b.center[1], z}, {x, b.center[1] + b.height, z});
        }
    } else if (b.shape == "sphere") {
        for (int plane = 0; plane < 3; ++plane)
            for (int i = 0; i < kSeg; ++i) {
                std::array<double, 3> p = b.center, q = b.center;
                const double a0 = tau * i / kSeg, a1 = tau * (i + 1) / kSeg;
                p[plane] += b.radius * std::cos(a0), p[(plane + 1) % 3] += b.radius * std::sin(a0);
                q[plane] += b.radius * std::cos(a1), q[(plane + 1) % 3] += b.radius * std::sin(a1);
                seg(p, q);
            }
    }
    return out;
}

// Calls f with the particle simulation s holds; false when it holds something else (a later grid
// method added to eddy::Simulation), so the viewer keeps compiling when the variant grows.
template <class Sim, class F>
bool with_particles(Sim& s, F&& f) {
    if (auto* p = std::get_if<ParticleSimulation<2>>(&s)) return f(*p), true;
    if (auto* p = std::get_if<ParticleSimulation<3>>(&s)) return f(*p), true;
    return false;
}

template <class M>
float support_radius(const M& m, float r) {
    if constexpr (requires { m.settings().support_ratio; }) return m.settings().support_ratio * r;
    else return 4.0f * r;
}

}  // namespace

struct SimWorker::Water {
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
    ShallowWaterSimulation sim;
#endif
};

#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
const bool SimWorker::kHasShallowWater = true;

int SimWorker::step_water_slice(int requested) {
    PassTimes passes;  // the slice's steps' named passes, summed (the panel's "Step passes")
    const GridSliceResult r = step_slice(m_water->sim, m_exec, slice_limits(requested), [&](const ShallowWaterStats& st) {
        m_last_dt = static_cast<float>(st.dt);
        m_max_speed = static_cast<float>(st.max_speed);
        passes.add_passes(st);
    });
    m_pass_ms = pass_ms_per_step(passes, r.steps);
    if (!r.diverged.empty()) {
        m_status = r.diverged + "; press Reset";
        playing = false, m_halted = true;
    }
    return r.steps;
}

void SimWorker::publish_water(Snapshot& snap) {
    const auto& ws = m_water->sim;
    // The scene as running: the live settings and gravity, not the file's.
    auto scene = std::make_shared<Scene>(ws.scene);
    std::visit(
        [&](const auto& s) {
            scene->settings = to_json(s.scene().settings, shallow_water_fields());
            scene->gravity = {0.0, 0.0, -s.scene().gravity};
        },
        ws.solver);
    snap.scene = std::move(scene);
    std::visit(
        [&](const auto& s) {
            const auto& g = s.grid();
            Heightfield& hf = snap.hf;
            hf.nx = g.nx, hf.ny = g.ny, hf.dx = static_cast<double>(g.dx);
            hf.terrain.assign(g.terrain.begin(), g.terrain.end());
            hf.depth.assign(g.depth.begin(), g.depth.end());
            hf.ink.assign(g.ink.begin(), g.ink.end());
            if (hf.ink.size() != hf.depth.size()) hf.ink.clear();
            snap.time = s.time();
            snap.steps = s.steps();
        },
        ws.solver);
    const Heightfield& hf = snap.hf;
    float lo = std::numeric_limits<float>::max(), hi = -lo;
    double wet = 0, eta = 0;
    for (std::size_t c = 0; c < hf.depth.size(); ++c) {
        lo = std::min(lo, hf.terrain[c]);
        hi = std::max(hi, hf.terrain[c] + hf.depth[c]);
        if (hf.depth[c] > 1e-4f) wet += 1, eta += hf.terrain[c] + hf.depth[c];
    }
    const float ex = static_cast<float>(hf.dx * hf.nx), ez = static_cast<float>(hf.dx * hf.ny);
    snap.lo = {0, lo, 0};
    snap.hi = {ex, hi, ez};
    snap.centroid = {0.5f * ex, wet > 0 ? static_cast<float>(eta / wet) : hi, 0.5f * ez};
    snap.particle_radius = snap.kernel_h = static_cast<float>(hf.dx);
    snap.max_speed = m_max_speed;
}
#else
const bool SimWorker::kHasShallowWater = false;
int SimWorker::step_water_slice(int) { return 0; }
void SimWorker::publish_water(Snapshot&) {}
#endif

#ifdef EDDY_VIEW_HAS_SURFACE
const bool SimWorker::kHasSurface = true;
#else
const bool SimWorker::kHasSurface = false;
#endif

// The fluid's surface for the window (3D scenes): eddy::reconstruct_surface with its defaults.
void SimWorker::update_surface() {
    if (!surface || !m_sim) {
        m_surface.reset();
        return;
    }
#ifdef EDDY_VIEW_HAS_SURFACE
    if (playing && Clock::now() - m_surface_time < std::chrono::milliseconds(250)) return;
    m_surface_time = Clock::now();
    auto* sim = std::get_if<ParticleSimulation<3>>(&*m_sim);
    if (!sim) return;
    SurfaceSettings ss;
    ss.particle_radius = static_cast<float>(sim->scene.particle_radius);
    ss.anisotropic = surface_anisotropic;
    try {
        const auto res = reconstruct_surface<3>(std::span<const Vec3>(sim->fluid.position), ss, m_exec);
        auto mesh = std::make_shared<SurfaceMesh>();
        mesh->xyz.reserve(3 * res.mesh.vertices.size());
        for (const auto& v : res.mesh.vertices) mesh->xyz.insert(mesh->xyz.end(), {v[0], v[1], v[2]});
        for (const auto& n : res.mesh.normals) mesh->normals.insert(mesh->normals.end(), {n[0], n[1], n[2]});
        for (const auto& c : res.mesh.cells) mesh->triangles.insert(mesh->triangles.end(), {c[0], c[1], c[2]});
        mesh->compute_normals();
        m_surface = std::move(mesh);
        ++m_surface_version;
    } catch (const std::exception& e) {
        m_status = std::string("surface: ") + e.what();
        surface = false;
    }
#endif
}

// The whitewater (issue 32): one step after each fluid step while the panel's checkbox is on, keyed on
// the simulation's step count and with the scene's gravity as running: the same bits as
// eddy::step_whitewater_by_id (as eddy run --whitewater) called beside the same fluid steps (ViewerWhitewater.*). Switched off: dropped.
void SimWorker::step_whitewater_after(double dt) {
    if (!whitewater || !m_sim) {
        m_whitewater = std::monostate{};
        return;
    }
    with_particles(*m_sim, [&](auto& sim) {
        constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
        if (!std::holds_alternative<Whitewater<D>>(m_whitewater)) m_whitewater = Whitewater<D>{};
        Vec<D> g;
        for (int a = 0; a < D; ++a) g[a] = static_cast<float>(sim.scene.gravity[a]);
        auto& walls = [&]() -> std::vector<Wall<D>>& {
            if constexpr (D == 2) return m_ww_walls2;
            else return m_ww_walls3;
        }();
        if (!m_ww_walls_built || m_ww_wall_objects != sim.scene.boundaries.size()) {
            walls = scene_walls<D>(sim.scene, m_exec);
            m_ww_wall_objects = sim.scene.boundaries.size();
            m_ww_walls_built = true;
        }
        // Moving walls where the fluid's step left them (as eddy run --whitewater).
        if (sim.boundary.any_moving()) update_wall_poses(walls, sim.boundary.motions, sim.time);
        step_whitewater_by_id<D>(std::get<Whitewater<D>>(m_whitewater), std::span<const Vec<D>>(sim.fluid.position),
                                 std::span<const Vec<D>>(sim.fluid.velocity), sim.fluid.id,
                                 static_cast<float>(sim.scene.particle_radius), g, dt, sim.steps, m_whitewater_settings,
                                 m_exec, &walls, fluid_lists_between_steps(sim, m_exec));  // the method's lists: no second search
    });
}

void SimWorker::publish_whitewater(Snapshot& snap) {
    if (!whitewater) {
        m_whitewater = std::monostate{};
        return;
    }
    snap.whitewater = true;
    std::visit(
        [&](const auto& w) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(w)>, std::monostate>) {
                constexpr int D = std::decay_t<decltype(w)>::kDimension;
                snap.diffuse.resize(4 * w.size());
                for (std::size_t i = 0; i < w.size(); ++i) {
                    float* o = &snap.diffuse[4 * i];
                    for (int a = 0; a < 3; ++a) o[a] = a < D ? w.position[i][a] : 0.0f;
                    o[3] = static_cast<float>(w.type[i]);
                }
                snap.whitewater_counts = w.counts;
            }
        },
        m_whitewater);
}

SimWorker::SimWorker(const WorkerConfig& cfg) : m_cfg(cfg), m_initial_scene(cfg.scene), m_exec(cfg.threads) {
    if (cfg.demo_heightfield) {
        m_demo.emplace(cfg.demo_cells);
        ++m_generation;
        publish();
        return;
    }
    do_reset(cfg.scene, cfg.method, cfg.sets);
    if (m_sim) with_particles(*m_sim, [&](const auto& sim) { m_initial_method = sim.scene.method; });
    else m_initial_method = "shallow_water";
}

SimWorker::~SimWorker() { stop(); }

void SimWorker::start() {
    if (!m_thread.joinable()) m_thread = std::thread([this] { loop(); });
}

void SimWorker::stop() {
    m_quit = true;
    wake();
    if (m_thread.joinable()) m_thread.join();
}

std::shared_ptr<const Snapshot> SimWorker::latest() const {
    std::lock_guard lock(m_snap_mutex);
    return m_snapshot;
}

void SimWorker::wake() {
    { std::lock_guard lock(m_cmd_mutex); }
    m_cv.notify_all();
}

void SimWorker::post(std::function<void()> f) {
    {
        std::lock_guard lock(m_cmd_mutex);
        m_commands.push_back(std::move(f));
    }
    m_cv.notify_all();
}

void SimWorker::reset(const std::string& scene, const std::string& method) {
    post([this, scene, method] {
        if (m_demo) {
            m_demo.emplace(m_cfg.demo_cells);
            m_demo_steps = 0;
            ++m_generation;
            return;
        }
        // --set applies to the scene and method named on the command line only.
        const bool initial = scene == m_initial_scene && (method.empty() || method == m_initial_method);
        do_reset(scene, method, initial ? m_cfg.sets : std::vector<std::string>{});
    });
}

void SimWorker::apply(nlohmann::json settings, std::array<double, 3> gravity) {
    post([this, settings = std::move(settings), gravity] {
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
        if (m_water) {  // the grid: its settings change in place (its clock, sources and drops go on)
            std::visit(
                [&](auto& s) {
                    ShallowWaterSettings next = s.scene().settings;
                    apply_json(next, shallow_water_fields(), settings, "settings");
                    s.set_settings(next, std::sqrt(gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2]));
                },
                m_water->sim.solver);
            m_status.clear();
            return;
        }
#endif
        if (!m_sim) return;
        Scene sc;
        if (!with_particles(*m_sim, [&](const auto& s) { sc = s.scene; })) return;
        sc.settings = settings;
        sc.gravity = gravity;
        rebuild_method(*m_sim, sc, m_exec);  // throws InputError, leaves the simulation as it was
        m_status.clear();
    });
}

void SimWorker::set_mouse(const MouseForce& m) {
    std::lock_guard lock(m_cmd_mutex);
    m_mouse = m;
}

void SimWorker::set_body_drag(const BodyDrag& d) {
    std::lock_guard lock(m_cmd_mutex);
    m_body_drag = d;
}

// The drag's load on its body for the next step (RigidBodies::external, which the bodies' step adds to
// the fluid's); a released drag takes its load away again.
void SimWorker::apply_body_drag(float dt) {
    BodyDrag d;
    {
        std::lock_guard lock(m_cmd_mutex);
        d = m_body_drag;
    }
    if (!m_sim) return;
    with_particles(*m_sim, [&](auto& sim) {
        constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
        auto& rb = sim.bodies;
        if (m_drag_applied && (!d.active || d.body != *m_drag_applied)) {
            if (*m_drag_applied < rb.external.size()) rb.external[*m_drag_applied] = ObjectLoad{};
            m_drag_applied.reset();
        }
        if (!d.active || d.body >= rb.size()) return;
        if (rb.external.size() < rb.size()) rb.external.resize(rb.size());
        const double mass = rb.specs[d.body].mass.mass;
        const ObjectLoad l = drag_load(d, rb.state[d.body], mass, D);
        rb.external[d.body] = l;
        m_drag_applied = d.body;
        // Energy from outside the scene, as the mouse force's: the speed the fluid may reach grows by
        // what the drag gives the body over the step.
        const double f = std::sqrt(l.force[0] * l.force[0] + l.force[1] * l.force[1] + l.force[2] * l.force[2]);
        if (mass > 0.0) sim.speed_bound.added += static_cast<float>(f / mass * double(dt));
    });
}

void SimWorker::drop_body(bool ball, std::array<double, 3> point) {
    post([this, ball, point] {
        if (!m_sim) return;
        try {
            const std::size_t removed = drop_body_at(*m_sim, ball, point, m_exec, kDropSizeRadii, kDropDensity);
            build_walls();
            std::size_t n = 0;
            double mass = 0.0;
            with_particles(*m_sim, [&](const auto& sim) {
                n = sim.bodies.size();
                if (n) mass = sim.bodies.specs[n - 1].mass.mass;
            });
            m_status = fmt::format("dropped body {} ({}, {:.4g} {}); {} fluid particles inside it removed", n - 1,
                                   ball ? "ball" : "box", mass, std::holds_alternative<ParticleSimulation<2>>(*m_sim) ? "kg/m" : "kg",
                                   removed);
        } catch (const InputError& e) {
            m_status = fmt::format("cannot drop a {} there: {}", ball ? "ball" : "box", e.what());
        }
    });
}

void SimWorker::add_emitter(std::array<double, 3> point, double speed, double size_radii) {
    post([this, point, speed, size_radii] {
        if (!m_sim) return;
        try {
            const std::size_t k = tap_at(*m_sim, point, speed, size_radii, m_exec);
            with_particles(*m_sim, [&](const auto& sim) {
                const auto& em = sim.flow.emitters[k];
                m_status = fmt::format("emitter {}: {:.0f} particles/s at {:.3g} m/s (Shift+E stops the emitters)", k,
                                       em.rate, double(em.speed));
            });
        } catch (const InputError& ex) {
            m_status = fmt::format("cannot put an emitter there: {}", ex.what());
        }
    });
}

void SimWorker::stop_emitter(int k) {
    post([this, k] {
        if (!m_sim) return;
        try {
            std::size_t n = 0;
            with_particles(*m_sim, [&](const auto& sim) { n = sim.flow.emitters.size(); });
            for (std::size_t i = 0; i < n; ++i)
                if (k < 0 || std::size_t(k) == i) eddy::stop_emitter(*m_sim, i, m_exec);
            m_status = k < 0 ? "every emitter stopped" : fmt::format("emitter {} stopped", k);
        } catch (const InputError& ex) {
            m_status = ex.what();
        }
    });
}

void SimWorker::drop(double x, double z, bool ink) {
    post([this, x, z, ink] {
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
        if (m_water) {
            drop_water(m_water->sim, x, z, ink);
            return;
        }
#endif
        if (!m_demo) return;
        if (ink) m_demo->drop_ink(x, z, 0.08);
        else m_demo->drop_water(x, z, 0.08, 0.04);
    });
}

void SimWorker::add_block(std::optional<std::array<double, 3>> center) {
    post([this, center] {
        if (m_sim) m_status = add_fluid_block(*m_sim, center, m_cfg.max_particles, m_exec);
    });
}

// What the window draws of the walls: the edges of analytic shapes (3D; moving ones apart, posed in
// publish()), and the models (meshes, polygons) at rest, built once here and shared by every snapshot.
void SimWorker::build_walls() {
    static std::atomic<std::uint64_t> next_id{0};  // model geometry ids, unique in the process
    m_wall_lines.clear();
    m_moving_lines.clear();
    m_models.clear();
    m_model_object.clear();
    m_body_object.clear();
    m_body_geometry.clear();
    if (!m_sim) return;
    with_particles(*m_sim, [&](const auto& sim) {
        constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
        const auto& bs = sim.scene.boundaries;
        m_model_object.assign(bs.size(), false);
        // The bodies are drawn as bodies (a colour each, at their state's pose), not as walls.
        m_body_object.assign(std::max(bs.size(), sim.boundary.motions.size()), false);
        for (std::size_t k = 0; k < sim.bodies.size(); ++k) {
            if (sim.bodies.object[k] < m_body_object.size()) m_body_object[sim.bodies.object[k]] = true;
            m_body_geometry.push_back(make_body_geometry<D>(sim.bodies.shapes[k]));
        }
        for (std::size_t i = 0; i < bs.size(); ++i) {
            if (m_body_object[i]) continue;
            const bool moving = i < sim.boundary.motions.size() && sim.boundary.motions[i].moving();
            if (const MeshShape<D>* shape = model_shape<D>(bs[i].model)) {
                ModelView mv;
                mv.object = static_cast<std::uint16_t>(i);
                mv.solid = bs[i].solid;
                mv.moving = moving;
                mv.closed = shape->report().boundary_edges == 0;
                mv.id = ++next_id;
                if constexpr (D == 3) mv.mesh = std::make_shared<const SurfaceMesh>(shaded_mesh(shape->mesh()));
                else mv.outline = std::make_shared<const Outline>(outline_of(shape->mesh()));
                m_models.push_back(std::move(mv));
                m_model_object[i] = true;
            } else if constexpr (D == 3) {
                auto lines = wall_lines(bs[i]);
                if (lines.empty()) continue;
                if (moving) m_moving_lines.emplace_back(static_cast<std::uint16_t>(i), std::move(lines));
                else m_wall_lines.insert(m_wall_lines.end(), lines.begin(), lines.end());
            }
        }
    });
}

void SimWorker::do_reset(const std::string& scene_arg, const std::string& method, const std::vector<std::string>& sets) {
    const auto file = resolve_scene(scene_arg);
    // Another method is `--set method=M`: the scene's settings for its own method are dropped (those the
    // new method has with the same key and unit kept), with a warning naming them; the overrides apply
    // to the new method (src/scene/method_switch.hpp).
    std::vector<std::string> overrides = sets;
    if (!method.empty()) overrides.insert(overrides.begin(), "method=" + method);
    Scene sc = live_scene(file, overrides, m_cfg);  // also validates the file and the overrides
    for (const auto& w : sc.warnings) std::fprintf(stderr, "eddy-view: %s\n", w.c_str());  // an open model, ...
    if (sc.method == "shallow_water") {
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
        m_water = std::make_unique<Water>(Water{make_shallow_water(sc, m_cfg.budget)});
        m_sim.reset();
        ++m_generation;
        m_wall_lines.clear();
        m_moving_lines.clear();
        m_models.clear();
        m_model_object.clear();
        m_body_object.clear();
        m_body_geometry.clear();
        m_status.clear();
        m_halted = false;
        m_ms_per_step = 0;
        m_pass_ms.clear();
        m_max_speed = 0;
        publish();
        return;
#else
        throw InputError(fmt::format("{}: the viewer was built without the shallow-water solver", sc.where()));
#endif
    }
    m_sim.emplace(make_simulation(sc, m_cfg.max_particles, m_exec, m_cfg.budget));
    m_water.reset();
    m_whitewater = std::monostate{};  // the new scene's whitewater starts from nothing
    m_ww_walls_built = false;
    m_drag_applied.reset();  // the new simulation has no drag's load (the window starts a new drag)
    {
        std::lock_guard lock(m_cmd_mutex);
        m_body_drag.active = false;
    }
    ++m_generation;
    build_walls();
    const double v = std::sqrt(2.0 * norm(from_array<3>(sc.gravity)) * fluid_height(sc));
    m_speed_scale = v > 0.0 ? static_cast<float>(0.5 * v) : 1.0f;
    m_rest_density = method_rest_density(*m_sim);
    m_pressure_scale = static_cast<float>(m_rest_density * 0.5 * v * v);  // rho0 g H, v^2 = 2 g H
    m_status.clear();
    m_halted = false;
    for (const auto& w : sc.warnings)  // the settings another method dropped, an open model: on the panel too
        m_status += (m_status.empty() ? "" : "; ") + w;
    m_mean_err = m_max_err = 0;
    m_ms_per_step = 0;
    m_pass_ms.clear();
    m_loads.clear();
    publish();
}

void SimWorker::apply_mouse(float dt) {
    MouseForce mf;
    {
        std::lock_guard lock(m_cmd_mutex);
        mf = m_mouse;
    }
    if (m_sim) apply_mouse_force(*m_sim, mf, dt, m_exec);
}

void SimWorker::step_demo(std::chrono::steady_clock::time_point until) {
    m_demo->step(1.0 / 60.0);
    m_last_dt = 1.0f / 60.0f;
    ++m_demo_steps;
    std::this_thread::sleep_until(until);
}

SliceLimits SimWorker::slice_limits(int requested) const {
    SliceLimits l;
    if (playing) l.wall_ms = 16.0;
    else l.max_steps = requested;
    return l;
}

int SimWorker::step_particle_slice(int requested, float& sum_err, float& max_err) {
    int n = 0;
    StepStats passes;  // the slice's steps' named passes, summed
    try {
        const SliceResult r = step_slice(
            *m_sim, m_exec, slice_limits(requested),
            [&] {
                apply_mouse(m_last_dt);
                apply_body_drag(m_last_dt);
            },
            [&](const StepStats& st) {
                ++n;
                m_last_dt = st.dt;
                passes.add_passes(st);
                // The walls' loads, for the snapshot's mean over the last steps (RecentLoads); a method that
                // gathers none leaves boundary.load empty.
                with_particles(*m_sim, [&](const auto& s) {
                    if (!s.boundary.load.empty()) m_loads.add(s.boundary.load, st.dt);
                });
                sum_err += st.mean_density_error;
                max_err = std::max(max_err, st.max_density_error);
                try {
                    step_whitewater_after(st.dt);
                } catch (const std::exception& e) {  // e.g. out of memory: the fluid goes on without it
                    m_status = std::string("whitewater: ") + e.what();
                    whitewater = false;
                    m_whitewater = std::monostate{};
                }
            });
        m_pass_ms = pass_ms_per_step(passes, n);
        if (!r.diverged.empty()) {
            m_status = r.diverged + "; press Reset";
            playing = false, m_halted = true;
        }
        return r.steps;
    } catch (const std::exception& e) {
        m_status = e.what();
        playing = false, m_halted = true;
        return n;
    }
}

void SimWorker::loop() {
    while (!m_quit) {
        std::vector<std::function<void()>> cmds;
        {
            std::unique_lock lock(m_cmd_mutex);
            if (m_commands.empty() && !playing && m_step_requests == 0)
                m_cv.wait_for(lock, std::chrono::milliseconds(50));
            cmds.swap(m_commands);
        }
        bool changed = !cmds.empty();
        for (auto& c : cmds) {
            try {
                c();
            } catch (const std::exception& e) {
                m_status = e.what();
            }
        }
        if (m_quit) break;
        const int requested = m_step_requests.exchange(0);
        if (playing || requested > 0) {
            const auto t0 = Clock::now();
            int n = 0;
            float sum_err = 0, max_err = 0;
            if (m_demo) {  // playing: one step a frame, in real time; paused: the steps asked for
                do step_demo(playing ? t0 + std::chrono::milliseconds(16) : t0);
                while (++n < requested && !playing);
            } else {  // paused: exactly the steps asked for; playing: steps for about a frame (16 ms)
                n = m_water ? step_water_slice(requested) : step_particle_slice(requested, sum_err, max_err);
            }
            if (n > 0) {
                m_ms_per_step = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / n;
                m_mean_err = sum_err / n;
                m_max_err = max_err;
            }
            changed = true;
        }
        if (changed) publish();
    }
}

namespace {

// The scene's emitters as drawn and listed: where each nozzle is, whether it is on, what it put in.
template <int D>
std::vector<Snapshot::EmitterView> emitter_views(const ParticleSimulation<D>& sim) {
    std::vector<Snapshot::EmitterView> views;
    for (std::size_t k = 0; k < sim.flow.emitters.size(); ++k) {
        const auto& em = sim.flow.emitters[k];
        Snapshot::EmitterView ev;
        for (int a = 0; a < D; ++a) ev.center[a] = float(sim.scene.emitters[k].center[a]), ev.direction[a] = em.direction[a];
        ev.on = sim.time + 1e-12 >= em.start && sim.time < em.stop;
        ev.rate = em.rate;
        ev.volume_rate = em.area * double(em.speed);
        ev.emitted = sim.flow.counts.emitted[k];
        ev.blocked = sim.flow.counts.due[k] - sim.flow.counts.emitted[k];
        views.push_back(ev);
    }
    return views;
}

// The fluid at the scene's probes (read_probes, as eddy run's probes.csv reads them every frame).
template <int D>
std::vector<Snapshot::ProbeView> probe_views(const ParticleSimulation<D>& sim, const ExecContext& exec) {
    std::vector<Snapshot::ProbeView> views;
    if (sim.scene.probes.empty()) return views;
    const std::vector<Vec<D>> points = probe_points<D>(sim.scene);
    const std::vector<ProbeReading> readings = read_probes<D>(sim, sim.fluid, points, exec);
    for (std::size_t k = 0; k < points.size(); ++k) {
        Snapshot::ProbeView v{sim.scene.probes[k].name, {}, readings[k]};
        for (int a = 0; a < D; ++a) v.position[a] = points[k][a];
        views.push_back(std::move(v));
    }
    return views;
}

}  // namespace

// eddy run's state_hash of what this thread steps (the particles' or the grid's); none for the demo.
std::optional<std::uint64_t> SimWorker::current_state_hash() const {
    if (m_sim) return state_hash(*m_sim);
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
    if (m_water) return state_hash(m_water->sim);
#endif
    return std::nullopt;
}

void SimWorker::publish() {
    update_surface();
    auto snap = std::make_shared<Snapshot>();
    snap->surface = m_surface;
    snap->surface_version = m_surface_version;
    snap->generation = m_generation;
    snap->field = static_cast<ColorField>(color_field.load());
    snap->dt = m_last_dt;
    snap->mean_density_error = m_mean_err;
    snap->max_density_error = m_max_err;
    snap->ms_per_step = m_ms_per_step;
    snap->pass_ms = m_pass_ms;
    snap->status = m_status;
    snap->halted = m_halted;
    snap->speed_scale = m_speed_scale;
    snap->rest_density = m_rest_density;
    snap->pressure_scale = m_pressure_scale;
    if (m_water) {
        snap->heightfield_mode = true;
        snap->dimension = 3;
        publish_water(*snap);
    } else if (m_demo) {
        snap->heightfield_mode = true;
        snap->synthetic = true;
        snap->dimension = 3;
        snap->hf = m_demo->field();
        snap->time = m_demo->time();
        snap->steps = m_demo_steps;
        const float ext = static_cast<float>(snap->hf.dx * snap->hf.nx);
        snap->lo = {0, 0, 0};
        snap->hi = {ext, 0.3f, ext};
        snap->centroid = {0.5f * ext, 0.12f, 0.5f * ext};
        snap->particle_radius = static_cast<float>(snap->hf.dx);
        snap->kernel_h = snap->particle_radius;
    } else {
        const bool drawn = with_particles(
            *m_sim,
            [&](const auto& sim) {
                constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
                snap->scene = std::make_shared<const Scene>(sim.scene);
                snap->dimension = D;
                snap->time = sim.time;
                snap->steps = sim.steps;
                snap->particles = sim.fluid.size();
                snap->particle_radius = static_cast<float>(sim.scene.particle_radius);
                snap->kernel_h = std::visit([&](const auto& m) { return support_radius(m, snap->particle_radius); }, sim.method);
                const auto& f = sim.fluid;
                const std::size_t n = f.size();
                snap->fluid.resize(4 * n);
                float smin = std::numeric_limits<float>::infinity(), smax = -smin;
                double c[3] = {0, 0, 0};
                for (std::size_t i = 0; i < n; ++i) {
                    float* o = &snap->fluid[4 * i];
                    for (int a = 0; a < 3; ++a) o[a] = a < D ? f.position[i][a] : 0.0f;
                    for (int a = 0; a < D; ++a) c[a] += f.position[i][a];
                    snap->max_speed = std::max(snap->max_speed, norm(f.velocity[i]));
                    float s = 0;
                    switch (snap->field) {
                        case ColorField::speed: s = norm(f.velocity[i]); break;
                        case ColorField::density: s = f.density[i]; break;
                        case ColorField::pressure: s = f.pressure[i]; break;
                    }
                    o[3] = s;
                    if (std::isfinite(s)) smin = std::min(smin, s), smax = std::max(smax, s);
                }
                snap->scalar_min = n && std::isfinite(smin) ? smin : 0.0f;
                snap->scalar_max = n && std::isfinite(smax) ? smax : 1.0f;
                for (int a = 0; a < 3; ++a) snap->centroid[a] = n ? static_cast<float>(c[a] / double(n)) : 0.0f;
                const auto& wb = sim.boundary;
                if constexpr (D == 2) {  // wall particles, but not those of models (drawn as outlines)
                    snap->boundary.reserve(4 * wb.size());
                    for (std::size_t i = 0; i < wb.size(); ++i)
                        if ((wb.object[i] >= m_model_object.size() || !m_model_object[wb.object[i]]) &&
                            (wb.object[i] >= m_body_object.size() || !m_body_object[wb.object[i]]))
                            snap->boundary.insert(snap->boundary.end(), {wb.position[i][0], wb.position[i][1], 0.0f, 0.0f});
                }
                // Models and moving walls at the snapshot's time: the motion's pose (as posed_models in eddy run).
                snap->models = m_models;
                for (auto& mv : snap->models)
                    if (mv.moving) mv.pose = pose_matrix<D>(wb.motions[mv.object].pose(sim.time));
                snap->wall_lines = m_wall_lines;
                if constexpr (D == 3)
                    for (const auto& [obj, lines] : m_moving_lines) {
                        const RigidPose<3> pose = wb.motions[obj].pose(sim.time);
                        for (std::size_t k = 0; k + 2 < lines.size(); k += 3) {
                            const Vec3 x = pose.apply(Vec3{{lines[k], lines[k + 1], lines[k + 2]}});
                            snap->wall_lines.insert(snap->wall_lines.end(), {x[0], x[1], x[2]});
                        }
                    }
                // The walls' loads (copies: the window never reads the simulation) and where each object's
                // pivot is now, as WallLoadGather::begin places it.
                snap->loads = m_loads.mean();
                if (snap->loads.size() != wb.motions.size()) snap->loads.clear();
                snap->pivots = load_pivots(wb, sim.time);
                // The bodies at their state (the pose the fluid's walls have: sync_body_motions).
                std::optional<std::size_t> dragged;
                {
                    std::lock_guard lock(m_cmd_mutex);
                    if (m_body_drag.active) dragged = m_body_drag.body;
                }
                const auto& rb = sim.bodies;
                for (std::size_t k = 0; k < rb.size() && k < m_body_geometry.size(); ++k) {
                    BodyView bv;
                    bv.index = k;
                    bv.object = rb.object[k];
                    bv.geometry = m_body_geometry[k];
                    bv.rest_center = rb.specs[k].mass.center;
                    bv.state = rb.state[k];
                    bv.pose = body_pose(bv.state, bv.rest_center);
                    bv.mass = rb.specs[k].mass.mass;
                    bv.dragged = dragged == k;
                    snap->bodies.push_back(std::move(bv));
                }
                snap->fluid_weight = fluid_weight(sim);
                snap->emitters = emitter_views(sim);  // the emitters, then the outflow's counts
                snap->probes = probe_views(sim, m_exec);
                publish_whitewater(*snap);
                snap->removed_outflow = sim.flow.counts.removed_outflow;
                snap->removed_escaped = sim.flow.counts.removed_escaped, snap->drained = sim.flow.counts.drained_total();
                const Aabb<D> b = scene_bounds<D>(sim.scene);
                for (int a = 0; a < D; ++a) snap->lo[a] = b.lo[a], snap->hi[a] = b.hi[a];
            });
        if (!drawn) snap->status = "the viewer cannot draw this method yet";
    }
    if (m_cfg.state_hashes) snap->state_hash = current_state_hash();
    std::lock_guard lock(m_snap_mutex);
    m_snapshot = std::move(snap);
}

}  // namespace eddy::view
