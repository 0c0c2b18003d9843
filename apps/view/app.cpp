// eddy-view: the App's setup from the options, the controls' link to the simulation thread, and what
// follows a new snapshot generation (app.hpp).
#include "app.hpp"

#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/load_display.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/settings.hpp"

namespace eddy::view {
namespace {

WorkerConfig worker_config(const Options& opt) {
    WorkerConfig wc;
    wc.scene = opt.scene;
    wc.method = opt.method;
    wc.sets = opt.sets;
    wc.threads = opt.threads;
    wc.max_particles = opt.max_particles, wc.live_particles = opt.live_particles;
    if (opt.max_memory.empty()) {
        wc.budget = eddy::machine_memory_budget();
    } else {
        wc.budget.limit_bytes = eddy::parse_memory_size(opt.max_memory, "--max-memory");  // bad: exit 2
        wc.budget.origin = "--max-memory";
    }
    wc.demo_heightfield = opt.demo_heightfield;
    wc.demo_cells = opt.demo_cells;
    wc.state_hashes = opt.frames > 0;  // the last frame's is reported (harness.cpp)
    return wc;
}

// The simulation thread (not started yet) and the options it takes from the start.
void make_worker(App& app, const Options& opt) {
    app.worker = std::make_unique<SimWorker>(worker_config(opt));  // bad input throws here, before a window opens
    app.worker->playing = !opt.paused && opt.steps_per_frame == 0;
    for (int i = 0; i < 3; ++i)
        if (opt.color == kFieldNames[i]) app.colors.field = i;
    app.worker->color_field = app.colors.field;
    app.worker->refresh();  // the first snapshot was published with the default field (speed)
    if (!opt.color_range.empty()) {
        ColorScale& sc = app.colors.scales[std::size_t(app.colors.field)];
        sc.locked = true, sc.lo = opt.range[0], sc.hi = opt.range[1];
    }
    if (opt.surface) {
        if (!SimWorker::kHasSurface) throw eddy::InputError("--surface: this viewer was built without surface reconstruction");
        app.worker->surface = true;
        app.worker->refresh();
    }
    app.worker->whitewater = opt.whitewater;
    app.scenes = eddy::list_bundled_scenes();
}

// The camera on a new snapshot: the scene's bounds (ext: their size) fill the window right of the panel.
void frame_camera(App& app, const float ext[3]) {
    const Snapshot& snap = *app.snap;
    Camera& cam = app.cam;
    cam.is_3d = snap.dimension == 3;
    if (!cam.is_3d) {
        const float pad = 0.04f * std::max(ext[0], ext[1]);
        // Fitted in the part of the window right of the panel by draw_scene (Camera::free_frac).
        cam.x0 = snap.lo[0] - pad, cam.y0 = snap.lo[1] - pad, cam.x1 = snap.hi[0] + pad, cam.y1 = snap.hi[1] + pad;
    } else {
        // The scene's bounds (walls and fluid) fill the part of the window right of the panel, with
        // 6% of it free around them (frame_box; the lens shift in draw_scene centres it there). From
        // the scene's camera direction and field of view when it gives one (its eye and target frame
        // a picture for eddy run --render, and may crop the tank), else from a default angle.
        cam.yaw = 0.6f, cam.pitch = 0.45f, cam.fov_deg = 40.0f;
        if (snap.heightfield_mode) cam.pitch = 0.6f;
        if (snap.scene && snap.scene->camera.given) {
            const auto& c = snap.scene->camera;
            const V3 d{float(c.eye[0] - c.target[0]), float(c.eye[1] - c.target[1]), float(c.eye[2] - c.target[2])};
            const float len = std::sqrt(dot(d, d));
            if (len > 0.0f) {
                cam.yaw = std::atan2(d.x, d.z);
                cam.pitch = std::asin(std::clamp(d.y / len, -1.0f, 1.0f));
            }
            cam.fov_deg = static_cast<float>(c.fov_deg);
        }
        int ww = 0, wh = 0;
        glfwGetWindowSize(app.win, &ww, &wh);
        const float free_w = float(ww) - scene_left(app, ww);
        frame_box(cam, {snap.lo[0], snap.lo[1], snap.lo[2]}, {snap.hi[0], snap.hi[1], snap.hi[2]},
                  free_w / float(std::max(wh, 1)), 0.06f);
    }
}

// The controls on a new snapshot: the scene's method, settings and gravity as running.
void load_scene_controls(App& app, const eddy::Scene& sc) {
    app.settings_error.clear();
    app.scene_name = sc.name;
    app.method = sc.method;
    if (app.snap->heightfield_mode) {  // shallow water: its settings table, gravity as a strength
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
        app.water = {};
        try {
            if (app.method == "shallow_water") eddy::apply_json(app.water, eddy::shallow_water_fields(), sc.settings, "settings");
        } catch (const eddy::InputError& e) {
            app.settings_error = e.what();
        }
        app.g_strength = static_cast<float>(std::abs(sc.gravity[2]));
        app.g_angle = -90.0f;
        app.g_azimuth = 0.0f;
#endif
        return;
    }
    app.wcsph = {};
    app.dfsph = {};
    app.pbf = {};
    app.clavet = {};
    try {
        if (app.method == "wcsph") eddy::apply_json(app.wcsph, eddy::wcsph_fields(), sc.settings, "settings");
        if (app.method == "dfsph") eddy::apply_json(app.dfsph, eddy::dfsph_fields(), sc.settings, "settings");
        if (app.method == "pbf") eddy::apply_json(app.pbf, eddy::pbf_fields(), sc.settings, "settings");
        if (app.method == "clavet") eddy::apply_json(app.clavet, eddy::clavet_fields(), sc.settings, "settings");
    } catch (const eddy::InputError& e) {
        app.settings_error = e.what();
    }
    const auto& g = sc.gravity;
    app.g_strength = static_cast<float>(std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]));
    if (app.g_strength > 0) {
        if (sc.dimension == 2) {
            app.g_angle = static_cast<float>(std::atan2(g[1], g[0]) * 180.0 / std::numbers::pi);
        } else {
            app.g_angle = static_cast<float>(std::asin(std::clamp(g[1] / app.g_strength, -1.0, 1.0)) * 180.0 / std::numbers::pi);
            app.g_azimuth = static_cast<float>(std::atan2(g[2], g[0]) * 180.0 / std::numbers::pi);
        }
    }
}

}  // namespace

void setup_app(App& app, const Options& opt) {
    app.opt = opt;
    if (!opt.mesh.empty()) {
        app.file_mesh = std::make_shared<SurfaceMesh>(read_obj(opt.mesh));  // bad file: InputError, exit 2
    }
    if (opt.bench_render == 0 && !opt.mesh_only) make_worker(app, opt);
    app.show_ui = !opt.hide_ui;
    app.bodies_mode = opt.bodies_mode;
    parse_colormap(opt.colormap, app.colors.map);  // checked by the option's validator
    app.colors.size = opt.particle_size;
    app.colors.legend = !opt.no_legend;
    app.show_load_arrow = opt.load_arrow;
}

std::string object_label(const App& app, std::size_t k) {
    if (app.snap && app.snap->scene && k < app.snap->scene->boundaries.size()) return load_object_label(k, app.snap->scene->boundaries[k]);
    return std::to_string(k);
}

nlohmann::json settings_json(const App& app) {
    if (app.method == "dfsph") return eddy::to_json(app.dfsph, eddy::dfsph_fields());
    if (app.method == "pbf") return eddy::to_json(app.pbf, eddy::pbf_fields());
    if (app.method == "clavet") return eddy::to_json(app.clavet, eddy::clavet_fields());
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
    if (app.method == "shallow_water") return eddy::to_json(app.water, eddy::shallow_water_fields());
#endif
    return eddy::to_json(app.wcsph, eddy::wcsph_fields());
}

std::array<double, 3> gravity(const App& app) {
    const double a = app.g_angle * std::numbers::pi / 180.0, b = app.g_azimuth * std::numbers::pi / 180.0;
    const float g = app.g_strength;
    if (app.snap && app.snap->dimension == 2) return {g * std::cos(a), g * std::sin(a), 0.0};
    return {g * std::cos(a) * std::cos(b), g * std::sin(a), g * std::cos(a) * std::sin(b)};
}

void send_settings(App& app) {
    if (app.worker) app.worker->apply(settings_json(app), gravity(app));
}

void set_color_field(App& app, int f) {
    app.colors.field = f;
    if (app.worker) {
        app.worker->color_field = f;
        app.worker->refresh();  // a snapshot of the new field now, stepping or not
    }
}

float scene_left(const App& app, int ww) {
    return app.show_ui && app.worker && float(ww) > 2.0f * app.panel_right ? app.panel_right : 0.0f;
}

void on_new_generation(App& app) {
    app.seen_generation = app.snap->generation;
    end_body_drag(app);
    app.selected_body = -1;
    const Snapshot& snap = *app.snap;
    const float ext[3] = {snap.hi[0] - snap.lo[0], snap.hi[1] - snap.lo[1], snap.hi[2] - snap.lo[2]};
    frame_camera(app, ext);
    // The brush: 8% of the scene's largest extent (felt at any resolution; docs/viewer.md).
    app.mouse.radius = 0.08f * std::max({ext[0], ext[1], snap.dimension == 3 ? ext[2] : 0.0f, 1e-6f});
    if (!snap.scene) return;
    load_scene_controls(app, *snap.scene);
}

}  // namespace eddy::view
