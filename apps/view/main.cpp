// eddy-view: the interactive viewer (`eddy view` runs it). GLFW window, OpenGL 3.3 core through
// libepoxy, Dear ImGui (Debian's libimgui, whose GLFW and OpenGL 3 backends are compiled in).
// The simulation runs on its own thread (SimWorker); this thread draws the latest snapshot, handles
// the mouse and the keys and builds the controls. See docs/viewer.md.
#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <new>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "eddy/clavet.hpp"
#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "eddy/pbf.hpp"
#include "eddy/scene.hpp"
#include "eddy/settings.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/wcsph.hpp"
#include "bodies_view.hpp"
#include "color_panel.hpp"
#include "coloring.hpp"
#include "gfx.hpp"
#include "load_arrow.hpp"
#include "mesh.hpp"
#include "settings_ui.hpp"
#include "sim_worker.hpp"
#include "status_text.hpp"
#include "whitewater_view.hpp"

// The shallow-water solver is part of the library: its live controls are always built.
#ifndef EDDY_VIEW_HAS_SHALLOW_WATER
#define EDDY_VIEW_HAS_SHALLOW_WATER 1
#endif

namespace {

using namespace eddy::view;
using Clock = std::chrono::steady_clock;

constexpr const char* kDefaultScene = "dam_break_2d";
constexpr int kPanelWidth = 360;  // px
constexpr const char* kMethods[] = {"wcsph", "dfsph", "pbf", "clavet"};

struct Options {
    std::string scene = kDefaultScene;
    std::string method;
    std::vector<std::string> sets;
    int threads = 0;
    std::size_t max_particles = 5'000'000;
    std::size_t live_particles = 20'000;  // scenes beyond it play coarser (SimWorker's live_scene)
    std::string max_memory;       // --max-memory; empty: 90% of the available memory
    int frames = 0;               // > 0: run this many frames and exit
    std::string screenshot;       // with --frames: the last frame; else the first
    std::string size = "1280x720";
    int width = 1280, height = 720;
    bool paused = false;
    bool demo_heightfield = false;
    int demo_cells = 128;
    std::size_t bench_render = 0;  // > 0: render this many random particles, report fps, exit
    double bench_seconds = 4.0;
    std::string record;            // folder: record every frame from the start
    std::string color = "speed";
    std::string colormap = "classic";  // --colormap
    float particle_size = 1.0f;        // --particle-size: drawn radius in particle radii
    std::string color_range;           // --color-range MIN,MAX: the colour field's range, locked
    float range[2] = {0, 0};
    bool no_legend = false;            // --no-legend
    bool load_arrow = false;           // --load-arrow
    std::string test_keys;             // "FRAME:KEY,...": keys pressed at frames, for tests
    std::vector<std::pair<int, int>> keys;  // (frame, GLFW key)
    bool hide_ui = false;
    bool screenshot_ui = false;    // screenshots include the controls
    std::string test_drag;         // "x0,y0,x1,y1" (window fractions): a scripted left drag, for tests
    float drag[4] = {0, 0, 0, 0};
    std::string mesh;              // an OBJ surface to draw (alone, or over a 3D scene)
    bool surface = false;          // reconstruct and draw the fluid's surface live (3D)
    int steps_per_frame = 0;       // > 0: lockstep, exactly this many steps before each frame is drawn
    bool mesh_only = false;        // --mesh without a scene: the mesh alone
    bool bodies_mode = false;      // --bodies-mode: a left drag grabs bodies (as the panel's checkbox, key G)
    bool whitewater = false;       // --whitewater: spray, foam and bubbles from the start (the panel's checkbox)
};

std::string timestamp() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
    return buf;
}

bool have_ffmpeg() { return std::system("command -v ffmpeg >/dev/null 2>&1") == 0; }

struct App {
    Options opt;
    GLFWwindow* win = nullptr;
    std::unique_ptr<SimWorker> worker;
    Renderer gfx;
    Camera cam;
    std::shared_ptr<const Snapshot> snap;
    std::uint64_t seen_generation = 0;

    // controls
    std::vector<eddy::SceneEntry> scenes;
    std::string scene_name, method;
    eddy::WcsphSettings wcsph;
    eddy::DfsphSettings dfsph;
    eddy::PbfSettings pbf;
    eddy::ClavetSettings clavet;
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
    eddy::ShallowWaterSettings water;
#endif
    float g_strength = 9.81f, g_angle = -90.0f, g_azimuth = 0.0f;  // degrees; 3D: g_angle is the elevation
    std::string settings_error;
    ColorControls colors;  // field, map, range lock, particle size, legend (color_panel.hpp)
    bool show_ui = true;
    float panel_right = float(kPanelWidth);  // px: the panel's right edge (the scene is framed right of it)
    bool quit = false;

    // interaction
    MouseForce mouse;
    float emitter_speed = 1.0f, emitter_size = 8.0f;  // the next emitter's jet (m/s) and nozzle (particle radii)
    bool dragging = false, orbiting = false, panning = false;
    V3 plane_point, plane_normal, last_point;
    bool has_last = false;
    double last_mouse_time = 0;  // lockstep: the simulated time at the last mouse sample
    double last_mx = 0, last_my = 0;
    double scroll = 0;
    // bodies (issue 30): in bodies mode, or with Ctrl held, a left press on a body grabs it
    bool bodies_mode = false;
    bool body_dragging = false;
    bool body_press = false;  // the left button's press went to the bodies (hit or not): no fluid push
    BodyDrag body_drag;
    V3 body_plane_point, body_plane_normal;
    int selected_body = -1;

    // output
    std::string pending_screenshot;
    bool recording = false;
    std::string record_dir;
    int record_index = 0;
    std::string message;

    // timing
    int frame = 0;
    Clock::time_point last_frame = Clock::now();
    double fps = 0, frame_ms = 0;

    // the surface mesh: from the simulation thread when it makes one, else from --mesh
    std::shared_ptr<const SurfaceMesh> file_mesh;
    bool show_mesh = true;
    bool show_models = true;     // the scene's models (wall meshes, polygons)
    float solid_opacity = 0.75f;  // of 3D obstacle models (containers: 0.3): the fluid behind shows faintly
    int load_object = 0;          // the boundary object whose load the panel shows and the arrow draws
    bool show_load_arrow = false;  // off by default: in a 2D tank it crosses the water (--load-arrow)

    // The selected object's load arrow (load_arrow.hpp): from its pivot along the force, a fluid weight
    // a quarter of the scene's largest extent long. Empty without loads.
    std::vector<float> load_arrow_lines() const {
        if (!snap || !show_load_arrow || load_object < 0 || std::size_t(load_object) >= snap->loads.size() ||
            std::size_t(load_object) >= snap->pivots.size())
            return {};
        float extent = 0.0f;
        for (int a = 0; a < 3; ++a) extent = std::max(extent, snap->hi[a] - snap->lo[a]);
        const auto& p = snap->pivots[std::size_t(load_object)];
        return load_arrow({p[0], p[1], p[2]}, snap->loads[std::size_t(load_object)].force, snap->fluid_weight,
                          0.25 * double(extent), snap->dimension);
    }

    // A label for boundary object k: its index, shape and kind, from the scene as running.
    std::string object_label(std::size_t k) const {
        if (snap && snap->scene && k < snap->scene->boundaries.size()) {
            const auto& b = snap->scene->boundaries[k];
            return fmt::format("{}: {} {}", k, b.shape, b.solid ? "(obstacle)" : "(container)");
        }
        return std::to_string(k);
    }

    bool heightfield() const { return snap && snap->heightfield_mode; }

    void draw_mesh(const Mat4& view, const Mat4& proj) {
        if (!show_mesh || !cam.is_3d) return;
        glEnable(GL_DEPTH_TEST);
        if (snap && snap->surface) {
            // Over the particles, which are blue when slow: a pale glassy tint that stands apart.
            gfx.set_mesh_color(0.80f, 0.90f, 1.00f, 0.55f);
            gfx.draw_mesh(*snap->surface, snap->surface_version, view, proj, cam.eye());
            gfx.set_mesh_color(0.20f, 0.45f, 0.90f, 0.75f);
        }
        else if (file_mesh) gfx.draw_mesh(*file_mesh, 0, view, proj, cam.eye());
    }

    void fit_camera_to_mesh() {
        float lo[3], hi[3];
        file_mesh->bounds(lo, hi);
        cam.is_3d = true;
        cam.target = {0.5f * (lo[0] + hi[0]), 0.5f * (lo[1] + hi[1]), 0.5f * (lo[2] + hi[2])};
        const V3 ext{hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
        cam.distance = std::max(1e-3f, 0.55f * std::sqrt(dot(ext, ext)) / std::sin(0.5f * cam.fov_deg * 3.14159265f / 180.0f));
    }

    nlohmann::json settings_json() const {
        if (method == "dfsph") return eddy::to_json(dfsph, eddy::dfsph_fields());
        if (method == "pbf") return eddy::to_json(pbf, eddy::pbf_fields());
        if (method == "clavet") return eddy::to_json(clavet, eddy::clavet_fields());
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
        if (method == "shallow_water") return eddy::to_json(water, eddy::shallow_water_fields());
#endif
        return eddy::to_json(wcsph, eddy::wcsph_fields());
    }

    std::array<double, 3> gravity() const {
        const double a = g_angle * std::numbers::pi / 180.0, b = g_azimuth * std::numbers::pi / 180.0;
        if (snap && snap->dimension == 2) return {g_strength * std::cos(a), g_strength * std::sin(a), 0.0};
        return {g_strength * std::cos(a) * std::cos(b), g_strength * std::sin(a), g_strength * std::cos(a) * std::sin(b)};
    }

    void send_settings() {
        if (worker) worker->apply(settings_json(), gravity());
    }

    // A new scene or method: controls and camera follow it.
    void on_new_generation() {
        seen_generation = snap->generation;
        end_body_drag();
        selected_body = -1;
        const float ext[3] = {snap->hi[0] - snap->lo[0], snap->hi[1] - snap->lo[1], snap->hi[2] - snap->lo[2]};
        cam.is_3d = snap->dimension == 3;
        if (!cam.is_3d) {
            const float pad = 0.04f * std::max(ext[0], ext[1]);
            // Fitted in the part of the window right of the panel by draw_scene (Camera::free_frac).
            cam.x0 = snap->lo[0] - pad, cam.y0 = snap->lo[1] - pad, cam.x1 = snap->hi[0] + pad, cam.y1 = snap->hi[1] + pad;
        } else {
            // The scene's bounds (walls and fluid) fill the part of the window right of the panel, with
            // 6% of it free around them (frame_box; the lens shift in draw_scene centres it there). From
            // the scene's camera direction and field of view when it gives one (its eye and target frame
            // a picture for eddy run --render, and may crop the tank), else from a default angle.
            cam.yaw = 0.6f, cam.pitch = 0.45f, cam.fov_deg = 40.0f;
            if (snap->heightfield_mode) cam.pitch = 0.6f;
            if (snap->scene && snap->scene->camera.given) {
                const auto& c = snap->scene->camera;
                const V3 d{float(c.eye[0] - c.target[0]), float(c.eye[1] - c.target[1]), float(c.eye[2] - c.target[2])};
                const float len = std::sqrt(dot(d, d));
                if (len > 0.0f) {
                    cam.yaw = std::atan2(d.x, d.z);
                    cam.pitch = std::asin(std::clamp(d.y / len, -1.0f, 1.0f));
                }
                cam.fov_deg = static_cast<float>(c.fov_deg);
            }
            int ww = 0, wh = 0;
            glfwGetWindowSize(win, &ww, &wh);
            const float free_w = float(ww) - scene_left(ww);
            frame_box(cam, {snap->lo[0], snap->lo[1], snap->lo[2]}, {snap->hi[0], snap->hi[1], snap->hi[2]},
                      free_w / float(std::max(wh, 1)), 0.06f);
        }
        // The brush: 8% of the scene's largest extent (felt at any resolution; docs/viewer.md).
        mouse.radius = 0.08f * std::max({ext[0], ext[1], snap->dimension == 3 ? ext[2] : 0.0f, 1e-6f});
        if (!snap->scene) return;
        const eddy::Scene& sc = *snap->scene;
        settings_error.clear();
        scene_name = sc.name;
        method = sc.method;
        if (snap->heightfield_mode) {  // shallow water: its settings table, gravity as a strength
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
            water = {};
            try {
                if (method == "shallow_water") eddy::apply_json(water, eddy::shallow_water_fields(), sc.settings, "settings");
            } catch (const eddy::InputError& e) {
                settings_error = e.what();
            }
            g_strength = static_cast<float>(std::abs(sc.gravity[2]));
            g_angle = -90.0f;
            g_azimuth = 0.0f;
#endif
            return;
        }
        wcsph = {};
        dfsph = {};
        pbf = {};
        clavet = {};
        try {
            if (method == "wcsph") eddy::apply_json(wcsph, eddy::wcsph_fields(), sc.settings, "settings");
            if (method == "dfsph") eddy::apply_json(dfsph, eddy::dfsph_fields(), sc.settings, "settings");
            if (method == "pbf") eddy::apply_json(pbf, eddy::pbf_fields(), sc.settings, "settings");
            if (method == "clavet") eddy::apply_json(clavet, eddy::clavet_fields(), sc.settings, "settings");
        } catch (const eddy::InputError& e) {
            settings_error = e.what();
        }
        const auto& g = sc.gravity;
        g_strength = static_cast<float>(std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]));
        if (g_strength > 0) {
            if (sc.dimension == 2) {
                g_angle = static_cast<float>(std::atan2(g[1], g[0]) * 180.0 / std::numbers::pi);
            } else {
                g_angle = static_cast<float>(std::asin(std::clamp(g[1] / g_strength, -1.0, 1.0)) * 180.0 / std::numbers::pi);
                g_azimuth = static_cast<float>(std::atan2(g[2], g[0]) * 180.0 / std::numbers::pi);
            }
        }
    }

    // px: where the scene's part of the window starts, right of the panel (0 when the panel is hidden or
    // the window is too narrow to share).
    float scene_left(int ww) const {
        return show_ui && worker && float(ww) > 2.0f * panel_right ? panel_right : 0.0f;
    }

    // Where the cursor points: in 2D the point under it; in 3D where its ray meets the plane through the
    // scene's centre facing the camera, or first the horizontal plane there (`horizontal`: where a body
    // or a tap is put).
    std::array<double, 3> cursor_point(bool horizontal = false) const {
        double mx, my;
        glfwGetCursorPos(win, &mx, &my);
        int w, h;
        glfwGetWindowSize(win, &w, &h);
        V3 o, d;
        cam.ray(mx, my, w, h, o, d);
        if (!cam.is_3d || !snap) return {o.x, o.y, 0.0};
        const V3 mid{0.5f * (snap->lo[0] + snap->hi[0]), 0.5f * (snap->lo[1] + snap->hi[1]), 0.5f * (snap->lo[2] + snap->hi[2])};
        V3 hit;
        if (!(horizontal && intersect_plane(o, d, mid, V3{0, 1, 0}, hit)) &&
            !intersect_plane(o, d, mid, normalized(cam.eye() - cam.target), hit))
            hit = mid;
        return {hit.x, hit.y, hit.z};
    }

    void set_color_field(int f) {
        colors.field = f;
        if (worker) {
            worker->color_field = f;
            worker->refresh();  // a snapshot of the new field now, stepping or not
        }
    }

    void take_screenshot(const std::string& path) {
        int w, h;
        glfwGetFramebufferSize(win, &w, &h);
        save_framebuffer_png(path, w, h);
    }

    void stop_recording() {
        if (!recording) return;
        recording = false;
        if (record_index > 0 && have_ffmpeg()) {
            const std::string mp4 = (std::filesystem::path(record_dir) / "recording.mp4").string();
            const std::string cmd = fmt::format(
                "ffmpeg -y -loglevel error -framerate 30 -i '{}/frame_%05d.png' -pix_fmt yuv420p "
                "-vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2' '{}'",
                record_dir, mp4);
            message = std::system(cmd.c_str()) == 0 ? "recorded " + mp4 : "ffmpeg failed; the frames are in " + record_dir;
        } else {
            message = fmt::format("{} frames in {} (no ffmpeg on PATH: no MP4)", record_index, record_dir);
        }
        std::fprintf(stderr, "eddy-view: %s\n", message.c_str());
    }

    void start_recording(const std::string& dir) {
        record_dir = dir;
        std::error_code ec;
        std::filesystem::create_directories(record_dir, ec);
        if (ec) {
            message = fmt::format("cannot create {}: {}", record_dir, ec.message());
            return;
        }
        record_index = 0;
        recording = true;
    }

    bool ray_plane(double mx, double my, V3 p0, V3 n, V3& hit) const {
        int w, h;
        glfwGetWindowSize(win, &w, &h);
        V3 o, d;
        cam.ray(mx, my, w, h, o, d);
        if (!cam.is_3d) {
            hit = {o.x, o.y, 0};
            return true;
        }
        return intersect_plane(o, d, p0, n, hit);
    }

    void handle_mouse(double frame_dt) {
        double mx, my;
        glfwGetCursorPos(win, &mx, &my);
        bool ui = ImGui::GetIO().WantCaptureMouse;
        bool left = glfwGetMouseButton(win, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS;
        const bool right = glfwGetMouseButton(win, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS;
        const bool middle = glfwGetMouseButton(win, GLFW_MOUSE_BUTTON_MIDDLE) == GLFW_PRESS;
        int ww, wh;
        glfwGetWindowSize(win, &ww, &wh);
        // --test-drag: the left button held from the 3rd frame to the 3rd last, the pointer moving
        // along the line; the same code path as a real drag from here on.
        if (!opt.test_drag.empty() && opt.frames > 0) {
            const int first = 2, last = std::max(first + 1, opt.frames - 3);
            if (frame >= first && frame <= last) {
                const double f = double(frame - first) / double(last - first);
                mx = ww * (opt.drag[0] + f * (opt.drag[2] - opt.drag[0]));
                my = wh * (opt.drag[1] + f * (opt.drag[3] - opt.drag[1]));
                left = true;
                ui = false;
            }
        }
        const double dx = mx - last_mx, dy = my - last_my;
        last_mx = mx, last_my = my;

        // Left on a body in bodies mode (or with Ctrl): grab it and drag it (a spring to the cursor,
        // applied by the simulation thread); elsewhere in bodies mode: nothing.
        const bool ctrl = glfwGetKey(win, GLFW_KEY_LEFT_CONTROL) == GLFW_PRESS || glfwGetKey(win, GLFW_KEY_RIGHT_CONTROL) == GLFW_PRESS;
        if (left && !dragging && !body_dragging && !ui && snap && !heightfield() && (bodies_mode || ctrl)) {
            dragging = true;  // this press is the bodies': no fluid push until it is released
            body_press = true;
            mouse.active = false;
            V3 o, d;
            cam.ray(mx, my, ww, wh, o, d);
            if (const auto hit = pick_body(snap->bodies, o, d, cam.is_3d); hit && worker) {
                body_dragging = true;
                selected_body = int(hit->body);
                body_plane_point = hit->point;
                body_plane_normal = normalized(cam.eye() - cam.target);
                body_drag.active = true;
                body_drag.body = snap->bodies[hit->body].index;
                body_drag.local = hit->local;
                body_drag.target = {hit->point.x, hit->point.y, hit->point.z};
                worker->set_body_drag(body_drag);
            }
        }
        if (body_dragging && !left) end_body_drag();
        if (body_dragging && worker) {
            V3 hit;
            if (ray_plane(mx, my, body_plane_point, body_plane_normal, hit)) {
                body_drag.target = {hit.x, hit.y, cam.is_3d ? hit.z : 0.0f};
                worker->set_body_drag(body_drag);
            }
        }
        // Left: the mouse force (particles), or a drop of water / ink (heightfield, Shift: ink).
        if (left && !dragging && !ui && snap) {
            dragging = true;
            has_last = false;
            plane_point = {snap->centroid[0], snap->centroid[1], snap->centroid[2]};
            plane_normal = heightfield() ? V3{0, 1, 0} : normalized(cam.eye() - cam.target);
            if (heightfield()) {
                V3 hit;
                const bool ink = glfwGetKey(win, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS || glfwGetKey(win, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS;
                if (ray_plane(mx, my, plane_point, plane_normal, hit)) worker->drop(hit.x, hit.z, ink);
            }
        }
        if (!left && dragging) {
            dragging = false;
            body_press = false;
            mouse.active = false;
            if (worker) worker->set_mouse(mouse);
        }
        if (dragging && !body_press && !heightfield() && worker) {
            V3 hit;
            // The mouse's velocity: its motion over the frame's wall-clock time; in lockstep over the
            // simulated time between the frames, so that a scripted drag gives the same run every time.
            double mouse_dt = frame_dt;
            if (opt.steps_per_frame > 0) mouse_dt = snap->time - last_mouse_time;
            last_mouse_time = snap->time;
            if (ray_plane(mx, my, plane_point, plane_normal, hit)) {
                const V3 vel = has_last && mouse_dt > 0 ? (hit - last_point) * float(1.0 / mouse_dt) : V3{};
                last_point = hit;
                has_last = true;
                mouse.active = true;
                mouse.point = {hit.x, hit.y, hit.z};
                mouse.velocity = {vel.x, vel.y, vel.z};
                worker->set_mouse(mouse);
            }
        }
        // Right: orbit (3D) or pan (2D); middle: pan.
        if ((right || middle) && !orbiting && !panning && !ui) (right && cam.is_3d ? orbiting : panning) = true;
        if (!right && !middle) orbiting = panning = false;
        if (orbiting) {
            cam.yaw -= float(dx) * 0.008f;
            cam.pitch = std::clamp(cam.pitch + float(dy) * 0.008f, -1.55f, 1.55f);
        }
        if (panning) {
            if (cam.is_3d) {
                const V3 f = normalized(cam.target - cam.eye()), s = normalized(cross(f, V3{0, 1, 0})), u = cross(s, f);
                const float k = cam.distance * 0.0015f;
                cam.target = cam.target - s * (float(dx) * k) + u * (float(dy) * k);
            } else {
                const auto r = cam.rect(float(ww) / float(std::max(wh, 1)));
                const float kx = (r[2] - r[0]) / float(std::max(ww, 1)), ky = (r[3] - r[1]) / float(std::max(wh, 1));
                cam.x0 -= float(dx) * kx, cam.x1 -= float(dx) * kx, cam.y0 += float(dy) * ky, cam.y1 += float(dy) * ky;
            }
        }
        if (scroll != 0) {
            const float f = std::pow(0.9f, float(scroll));
            if (cam.is_3d) {
                cam.distance *= f;
            } else {
                const float cx = 0.5f * (cam.x0 + cam.x1), cy = 0.5f * (cam.y0 + cam.y1);
                cam.x0 = cx + (cam.x0 - cx) * f, cam.x1 = cx + (cam.x1 - cx) * f;
                cam.y0 = cy + (cam.y0 - cy) * f, cam.y1 = cy + (cam.y1 - cy) * f;
            }
            scroll = 0;
        }
    }

    void end_body_drag() {
        if (!body_dragging && !body_drag.active) return;
        body_dragging = false;
        body_drag.active = false;
        if (worker) worker->set_body_drag(body_drag);
    }


    void key(int k) {
        switch (k) {  // these work without a simulation too (--mesh alone)
            case GLFW_KEY_P: pending_screenshot = fmt::format("eddy-view-{}.png", timestamp()); return;
            case GLFW_KEY_V: recording ? stop_recording() : start_recording(fmt::format("eddy-view-recording-{}", timestamp())); return;
            case GLFW_KEY_H: show_ui = !show_ui; return;
            case GLFW_KEY_ESCAPE:
            case GLFW_KEY_Q: quit = true; return;
            default: break;
        }
        if (!worker) return;
        switch (k) {
            case GLFW_KEY_SPACE: worker->playing = !worker->playing; break;
            case GLFW_KEY_S: worker->playing = false, worker->request_step(); break;
            case GLFW_KEY_R: worker->reset(opt.scene, method); break;
            case GLFW_KEY_B:
                if (!heightfield()) worker->add_block(cursor_point());
                break;
            case GLFW_KEY_N:
                if (!heightfield()) worker->drop_body(true, cursor_point(true));
                break;
            case GLFW_KEY_E:  // an emitter at the cursor (issue 31); Shift+E stops them all
                if (heightfield()) break;
                if (glfwGetKey(win, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS || glfwGetKey(win, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS)
                    worker->stop_emitter(-1);
                else
                    worker->add_emitter(cursor_point(true), emitter_speed, emitter_size);
                break;
            case GLFW_KEY_M:
                if (!heightfield()) worker->drop_body(false, cursor_point(true));
                break;
            case GLFW_KEY_G:
                bodies_mode = !bodies_mode;
                if (!bodies_mode) end_body_drag();
                break;
            case GLFW_KEY_C: set_color_field((colors.field + 1) % 3); break;
            default: break;
        }
    }

    void draw_scene(int w, int h) {
        glViewport(0, 0, w, h);
        glClearColor(0.13f, 0.14f, 0.16f, 1.0f);
        glClearDepth(1.0);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        const float aspect = float(w) / float(std::max(h, 1));
        {  // the scene right of the panel: 3D a lens shift (the frustum is not rotated), 2D the rectangle
            int ww = 0, wh = 0;
            glfwGetWindowSize(win, &ww, &wh);
            const float left = ww > 0 ? scene_left(ww) / float(ww) : 0.0f;
            cam.shift_x = cam.is_3d ? left : 0.0f;
            cam.free_frac = cam.is_3d ? 1.0f : 1.0f - left;
        }
        const Mat4 view = cam.view(), proj = cam.proj(aspect);
        if (!snap) {
            draw_mesh(view, proj);
            return;
        }
        if (snap->heightfield_mode) {
            glEnable(GL_DEPTH_TEST);
            gfx.draw_heightfield(snap->hf.view(), view, proj, cam.eye());
            return;
        }
        ColorRange cr = colors.color_range(*snap);
        const float drawn_r = snap->particle_radius * colors.size;  // the size slider
        if (snap->dimension == 2) {
            glDisable(GL_DEPTH_TEST);
            // Disks at least 1.5 px across their radius, or a zoomed-out fluid turns into a dotted grid.
            const auto r = cam.rect(aspect);
            const float px = (r[2] - r[0]) / float(std::max(w, 1));  // metres per pixel
            const float radius = std::max(drawn_r, 1.5f * px);
            const float wall_radius = std::max(snap->particle_radius, 1.5f * px);
            cr.rim = radius > 4.0f * px ? 0.3f : 0.0f;
            const float grey[3] = {0.45f, 0.45f, 0.48f};
            gfx.draw_particles(snap->boundary, wall_radius, false, view, proj, cr, grey);
            draw_models_2d(view, proj, px);
            gfx.draw_particles(snap->fluid, radius, false, view, proj, cr);
            draw_whitewater(gfx, *snap, view, proj, px);
            draw_bodies_2d(view, proj);
            gfx.draw_triangles(thick_lines_2d(load_arrow_lines(), 3.0f * px), kArrowRgb, view, proj);
        } else {
            glEnable(GL_DEPTH_TEST);
            glDepthFunc(GL_LESS);
            const float grey[3] = {0.55f, 0.55f, 0.6f};
            gfx.draw_lines(snap->wall_lines, grey, view, proj);
            draw_models_3d(view, proj, true);
            draw_bodies_3d(view, proj);
            gfx.draw_particles(snap->fluid, drawn_r, true, view, proj, cr);
            draw_whitewater(gfx, *snap, view, proj);
            draw_models_3d(view, proj, false);
            draw_mesh(view, proj);
            glDisable(GL_DEPTH_TEST);  // the load arrow shows through the fluid and the walls
            gfx.draw_lines(load_arrow_lines(), kArrowRgb, view, proj);
            draw_drag_line(view, proj);
        }
    }
    static constexpr float kArrowRgb[3] = {1.0f, 0.3f, 0.85f};  // magenta: not in the colour map, not grey

    // The bodies (issue 30), each in its own colour (bodies_view.hpp body_color), at the snapshot's pose.
    // 2D: filled over the fluid (the fluid stays outside them), with a darker outline (white while
    // dragged or selected) that shows the turning.
    void draw_bodies_2d(const Mat4& view, const Mat4& proj) {
        for (const BodyView& b : snap->bodies) {
            if (!b.geometry) continue;
            const auto& m = b.geometry->mesh;
            std::vector<float> tris;
            tris.reserve(3 * m.triangles.size());
            for (auto v : m.triangles) {
                const V3 p = posed(b, {m.xyz[3 * v], m.xyz[3 * v + 1], m.xyz[3 * v + 2]});
                tris.insert(tris.end(), {p.x, p.y, 0.0f});
            }
            const auto c = body_color(b.index);
            gfx.draw_triangles(tris, c.data(), view, proj);
            std::vector<float> lines;
            const auto& o = b.geometry->outline;
            for (std::size_t i = 0; i + 2 < o.size(); i += 3) {
                const V3 p = posed(b, {o[i], o[i + 1], o[i + 2]});
                lines.insert(lines.end(), {p.x, p.y, 0.0f});
            }
            const bool lit = b.dragged || int(b.index) == selected_body;
            const float edge[3] = {lit ? 1.0f : 0.45f * c[0], lit ? 1.0f : 0.45f * c[1], lit ? 1.0f : 0.45f * c[2]};
            gfx.draw_lines(lines, edge, view, proj);
        }
        draw_drag_line(view, proj);
    }

    // 3D: opaque, shaded as the models (matte, lit on both sides), drawn before the particles.
    void draw_bodies_3d(const Mat4& view, const Mat4& proj) {
        for (const BodyView& b : snap->bodies) {
            if (!b.geometry) continue;
            const auto c = body_color(b.index);
            const bool lit = b.dragged || int(b.index) == selected_body;
            const float k = lit ? 1.15f : 1.0f;  // the selected body a little brighter
            const float rgba[4] = {std::min(1.0f, k * c[0]), std::min(1.0f, k * c[1]), std::min(1.0f, k * c[2]), 1.0f};
            gfx.draw_model(b.geometry->mesh, b.geometry->id, snap->models.size() + b.index, b.pose, rgba, true, view, proj,
                           cam.eye());
        }
    }

    // While dragging: a white line from the grabbed point (where it is now) to the cursor's target.
    void draw_drag_line(const Mat4& view, const Mat4& proj) {
        if (!body_dragging || !snap) return;
        for (const BodyView& b : snap->bodies) {
            if (b.index != body_drag.body) continue;
            const V3 p = posed(b, {float(b.rest_center[0] + body_drag.local[0]), float(b.rest_center[1] + body_drag.local[1]),
                                   float(b.rest_center[2] + body_drag.local[2])});
            const std::vector<float> line{p.x, p.y, p.z, static_cast<float>(body_drag.target[0]),
                                          static_cast<float>(body_drag.target[1]), static_cast<float>(body_drag.target[2])};
            static constexpr float kWhite[3] = {1.0f, 1.0f, 1.0f};
            gfx.draw_lines(line, kWhite, view, proj);
        }
    }

    // The panel's bodies: count, drag mode, drops, and the selected body's numbers.
    void bodies_panel() {
        if (!ImGui::CollapsingHeader("Bodies", snap->bodies.empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen)) return;
        const auto& bs = snap->bodies;
        const bool d2 = snap->dimension == 2;
        ImGui::Text("%zu bodies", bs.size());
        ImGui::SameLine();
        if (ImGui::Checkbox("drag bodies (G)", &bodies_mode) && !bodies_mode) end_body_drag();
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Left drag on a body pulls it (a spring to the cursor); Ctrl + left drag does it in any mode");
        // The buttons drop above the middle of the scene (the keys: at the cursor).
        const std::array<double, 3> top{0.5 * (snap->lo[0] + snap->hi[0]), snap->lo[1] + 0.75 * (snap->hi[1] - snap->lo[1]),
                                        0.5 * (snap->lo[2] + snap->hi[2])};
        if (ImGui::Button("Drop ball (N)")) worker->drop_body(true, top);
        ImGui::SameLine();
        if (ImGui::Button("Drop box (M)")) worker->drop_body(false, top);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%.0f particle radii across, density %.0f kg/m^3; the keys drop at the cursor",
                              SimWorker::kDropSizeRadii, SimWorker::kDropDensity);
        if (bs.empty()) return;
        selected_body = std::clamp(selected_body, 0, int(bs.size()) - 1);
        auto label = [&](std::size_t k) {
            return fmt::format("body {}: {}", k, bs[k].geometry ? bs[k].geometry->shape : std::string("?"));
        };
        if (ImGui::BeginCombo("body", label(std::size_t(selected_body)).c_str())) {
            for (std::size_t k = 0; k < bs.size(); ++k)
                if (ImGui::Selectable(label(k).c_str(), int(k) == selected_body)) selected_body = int(k);
            ImGui::EndCombo();
        }
        const BodyView& b = bs[std::size_t(selected_body)];
        const auto& s = b.state;
        const auto c = body_color(b.index);
        ImGui::ColorButton("##colour", ImVec4(c[0], c[1], c[2], 1), ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
        ImGui::SameLine();
        if (d2) {
            ImGui::Text("mass %.4g kg/m%s", b.mass, b.dragged ? " (dragged)" : "");
            ImGui::Text("position (m): %.4f, %.4f", s.position[0], s.position[1]);
            ImGui::Text("velocity (m/s): %.4g, %.4g", s.velocity[0], s.velocity[1]);
            ImGui::Text("angular velocity (rad/s): %.4g", s.angular_velocity[2]);
        } else {
            ImGui::Text("mass %.4g kg%s", b.mass, b.dragged ? " (dragged)" : "");
            ImGui::Text("position (m): %.4f, %.4f, %.4f", s.position[0], s.position[1], s.position[2]);
            ImGui::Text("velocity (m/s): %.4g, %.4g, %.4g", s.velocity[0], s.velocity[1], s.velocity[2]);
            ImGui::Text("angular velocity (rad/s): %.3g, %.3g, %.3g", s.angular_velocity[0], s.angular_velocity[1],
                        s.angular_velocity[2]);
        }
        if (b.object < snap->loads.size()) {
            const auto& f = snap->loads[b.object].force;
            if (d2) ImGui::Text("fluid force (N/m): %.4g, %.4g", f[0], f[1]);
            else ImGui::Text("fluid force (N): %.4g, %.4g, %.4g", f[0], f[1], f[2]);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("The mean over the last 0.1 s of simulated time (as the walls' loads)");
        } else {
            ImGui::TextDisabled("fluid force: none yet");
        }
    }

    // The scene's models (3D meshes) at the snapshot's pose, light grey: obstacles as opaque as the
    // panel says, containers translucent so that the fluid inside shows. Opaque ones are drawn before
    // the particles, translucent ones after them.
    void draw_models_3d(const Mat4& view, const Mat4& proj, bool opaque_pass) {
        if (!show_models) return;
        for (std::size_t k = 0; k < snap->models.size(); ++k) {
            const ModelView& m = snap->models[k];
            if (!m.mesh) continue;
            const float rgba[4] = {0.88f, 0.88f, 0.90f, m.solid ? solid_opacity : 0.3f};
            if ((rgba[3] >= 1.0f) != opaque_pass) continue;
            gfx.draw_model(*m.mesh, m.id, k, m.pose, rgba, m.closed, view, proj, cam.eye());
        }
    }

    // 2D models (polygons): a grey band along the outline on the wall's side, as thick as a wall
    // particle (at least 2 px). px: metres per pixel.
    void draw_models_2d(const Mat4& view, const Mat4& proj, float px) {
        if (!show_models || snap->models.empty()) return;
        static constexpr float kGrey[3] = {0.62f, 0.62f, 0.65f};
        const float width = std::max(2.0f * snap->particle_radius, 2.0f * px);
        std::vector<float> tris;
        for (const auto& m : snap->models) {
            if (!m.outline) continue;
            const auto band = outline_band(*m.outline, m.pose, m.solid, width);
            tris.insert(tris.end(), band.begin(), band.end());
        }
        gfx.draw_triangles(tris, kGrey, view, proj);
    }

    // The fluid's load on the selected boundary object (issue 28): force and torque, the mean over the
    // steps since the previous snapshot, and the arrow's switch.
    void loads_panel() {
        if (!ImGui::CollapsingHeader("Loads on the walls", ImGuiTreeNodeFlags_DefaultOpen)) return;
        const std::size_t objects = snap->pivots.size();
        load_object = std::clamp(load_object, 0, int(objects) - 1);
        if (ImGui::BeginCombo("object", object_label(std::size_t(load_object)).c_str())) {
            for (std::size_t k = 0; k < objects; ++k)
                if (ImGui::Selectable(object_label(k).c_str(), int(k) == load_object)) load_object = int(k);
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The scene's boundaries, in order");
        const bool d2 = snap->dimension == 2;
        if (std::size_t(load_object) >= snap->loads.size()) {
            ImGui::TextDisabled("no loads yet (no step, or %s gathers none)", method.c_str());
            return;
        }
        const eddy::ObjectLoad& l = snap->loads[std::size_t(load_object)];
        const double f = std::sqrt(l.force[0] * l.force[0] + l.force[1] * l.force[1] + l.force[2] * l.force[2]);
        if (d2) {
            ImGui::Text("force (N/m): %.4g, %.4g", l.force[0], l.force[1]);
            ImGui::Text("torque (N m/m): %.4g", l.torque[2]);
        } else {
            ImGui::Text("force (N): %.4g, %.4g, %.4g", l.force[0], l.force[1], l.force[2]);
            ImGui::Text("torque (N m): %.4g, %.4g, %.4g", l.torque[0], l.torque[1], l.torque[2]);
        }
        ImGui::Text("|F| %.4g %s = %.3f x the fluid's weight", f, d2 ? "N/m" : "N",
                    snap->fluid_weight > 0 ? f / snap->fluid_weight : 0.0);
        ImGui::Checkbox("arrow", &show_load_arrow);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("From the object's pivot along the force; the fluid's weight is a quarter of the scene's "
                              "largest extent (at most %.0f weights long)", kArrowMaxWeights);
    }

    void ui() {
        const ImGuiIO& io = ImGui::GetIO();
        // Overlay: numbers and the colour bar.
        ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x - 10, 10), ImGuiCond_Always, ImVec2(1, 0));
        ImGui::SetNextWindowBgAlpha(0.55f);
        ImGui::Begin("overlay", nullptr,
                     ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing |
                         ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoMove);
        // Short lines (status_text.hpp): the overlay never grows a scrollbar or runs over the scene.
        if (file_mesh)
            ImGui::TextUnformatted(one_line(fmt::format("mesh: {} triangles", file_mesh->triangles.size() / 3)).c_str());
        if (snap) {
            for (const auto& l : status_lines(*snap, method, frame_ms)) ImGui::TextUnformatted(l.c_str());
            if (worker && !worker->playing) ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "paused");
            if (recording) ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "recording %d frames", record_index);
        } else {
            ImGui::Text("frame %.3g ms (%.0f fps)", frame_ms, fps);
        }
        ImGui::End();
        // The legend, in the scene (the background draw list is drawn before screenshots are taken).
        if (snap && !snap->heightfield_mode && colors.legend)
            draw_legend(ImGui::GetBackgroundDrawList(), io.DisplaySize, colors, *snap);
        if (!show_ui || !worker) return;

        // The panel: the window's full height at the left, the scene framed right of it.
        ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
        ImGui::SetNextWindowSize(ImVec2(float(kPanelWidth) - 15, io.DisplaySize.y - 20), ImGuiCond_FirstUseEver);
        ImGui::SetNextWindowBgAlpha(0.8f);
        ImGui::Begin("eddy");
        panel_right = ImGui::GetWindowPos().x < 40.0f ? ImGui::GetWindowPos().x + ImGui::GetWindowSize().x + 5.0f : 0.0f;
        ImGui::PushItemWidth(150);
        if (ImGui::Button(worker->playing ? "Pause" : "Play")) worker->playing = !worker->playing;
        ImGui::SameLine();
        if (ImGui::Button("Step")) worker->playing = false, worker->request_step();
        ImGui::SameLine();
        if (ImGui::Button("Reset")) worker->reset(opt.scene, method);
        ImGui::SameLine();
        if (ImGui::Button("Screenshot")) pending_screenshot = fmt::format("eddy-view-{}.png", timestamp());
        ImGui::SameLine();
        if (ImGui::Button(recording ? "Stop rec." : "Record"))
            recording ? stop_recording() : start_recording(fmt::format("eddy-view-recording-{}", timestamp()));
        // Status and messages on one short line each; the whole text in the tooltip.
        const std::string* texts[2] = {snap ? &snap->status : nullptr, &message};
        for (const std::string* t : texts) {
            if (!t || t->empty()) continue;
            ImGui::TextUnformatted(one_line(*t, 46).c_str());
            if (ImGui::IsItemHovered() && t->size() > 46) ImGui::SetTooltip("%s", t->c_str());
        }

        if (snap && !snap->synthetic) {
            if (ImGui::BeginCombo("scene", scene_name.c_str())) {
                for (const auto& s : scenes)
                    if (ImGui::Selectable(s.name.c_str(), s.name == scene_name)) {
                        opt.scene = s.name;
                        worker->reset(s.name, "");
                    }
                ImGui::EndCombo();
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("The bundled scenes (eddy scenes)");
        }
        if (!heightfield()) {
            if (ImGui::BeginCombo("method", method.c_str())) {
                for (const char* m : kMethods)
                    if (ImGui::Selectable(m, method == m)) worker->reset(opt.scene, m);
                ImGui::EndCombo();
            }
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("Restarts the scene with this method: the scene's settings it has with the same key "
                                  "and unit are kept, the others take its defaults (listed in the status)");

            if (snap && colors.panel(*snap)) set_color_field(colors.field);
            if (SimWorker::kHasSurface && snap && snap->dimension == 3) {
                bool on = worker->surface;
                if (ImGui::Checkbox("reconstructed surface", &on)) {
                    worker->surface = on;
                    worker->refresh();
                }
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("eddy::reconstruct_surface on the simulation thread (every 250 ms while playing)");
                if (on) {
                    ImGui::SameLine();
                    bool aniso = worker->surface_anisotropic;
                    if (ImGui::Checkbox("anisotropic", &aniso)) {
                        worker->surface_anisotropic = aniso;
                        worker->refresh();
                    }
                    if (ImGui::IsItemHovered())
                        ImGui::SetTooltip("Anisotropic kernels (Yu & Turk 2013): flat surfaces flat, thin sheets kept "
                                          "(eddy mesh --anisotropic)");
                }
            }
            if (file_mesh || (snap && snap->surface)) {
                ImGui::SameLine();
                ImGui::Checkbox("show mesh", &show_mesh);
            }
            if (snap) whitewater_panel(*worker, *snap);
            if (snap && !snap->models.empty()) {
                ImGui::Checkbox("show models", &show_models);
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("The scene's wall meshes (3D) and polygons (2D)");
                if (snap->dimension == 3 && show_models) {
                    ImGui::SameLine();
                    ImGui::SetNextItemWidth(90);
                    ImGui::SliderFloat("opacity", &solid_opacity, 0.1f, 1.0f, "%.2f");
                    if (ImGui::IsItemHovered())
                        ImGui::SetTooltip("Of obstacle meshes (1: opaque); mesh containers are drawn at 0.3");
                }
            }

            if (snap && !snap->pivots.empty()) loads_panel();
            if (snap) bodies_panel();
            if (ImGui::CollapsingHeader("Gravity", ImGuiTreeNodeFlags_DefaultOpen)) {
                bool g = ImGui::SliderFloat("strength (m/s^2)", &g_strength, 0.0f, 50.0f, "%.3g");
                if (snap && snap->dimension == 2) {
                    g |= ImGui::SliderFloat("direction (deg)", &g_angle, -180.0f, 180.0f, "%.0f");
                } else {
                    g |= ImGui::SliderFloat("elevation (deg)", &g_angle, -90.0f, 90.0f, "%.0f");
                    g |= ImGui::SliderFloat("azimuth (deg)", &g_azimuth, -180.0f, 180.0f, "%.0f");
                }
                if (g) send_settings();
            }
            if (ImGui::CollapsingHeader("Interaction", ImGuiTreeNodeFlags_DefaultOpen)) {
                const float ext = snap ? std::max({snap->hi[0] - snap->lo[0], snap->hi[1] - snap->lo[1], 1e-3f}) : 1.0f;
                ImGui::SliderFloat("brush radius (m)", &mouse.radius, 0.005f * ext, 0.5f * ext, "%.3g", ImGuiSliderFlags_Logarithmic);
                ImGui::SliderFloat("brush rate (1/s)", &mouse.rate, 1.0f, 200.0f, "%.0f", ImGuiSliderFlags_Logarithmic);
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("Particles in the brush take the mouse's velocity at this rate (a velocity target: "
                                      "the same at any particle count)");
                if (ImGui::Button("Add block (B)")) worker->add_block();
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("The button: above the middle; the key B: at the cursor");
                ImGui::TextDisabled("%s", cam.is_3d ? "left: stir, right: orbit, wheel: zoom" : "left: stir, right: pan, wheel: zoom");
                ImGui::TextDisabled("Ctrl + left (or G): drag a body");
            }
            if (!heightfield() && ImGui::CollapsingHeader("Emitters")) {
                ImGui::SliderFloat("jet speed (m/s)", &emitter_speed, 0.1f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
                ImGui::SliderFloat("nozzle (radii)", &emitter_size, 2.0f, 40.0f, "%.0f");
                ImGui::TextDisabled("E: a tap at the cursor, Shift+E: stop them");
                if (snap) {
                    const bool two = snap->dimension == 2;
                    for (std::size_t k = 0; k < snap->emitters.size(); ++k) {
                        const auto& e = snap->emitters[k];
                        // Volume rate in litres per second (3D) or m^2/s (2D, per metre of depth).
                        ImGui::Text("%zu %s %.0f/s %.3g %s  %llu in", k, e.on ? "on " : "off", e.rate,
                                    two ? e.volume_rate : 1e3 * e.volume_rate, two ? "m2/s" : "L/s",
                                    static_cast<unsigned long long>(e.emitted));
                        if (e.on) {
                            ImGui::SameLine();
                            if (ImGui::SmallButton(fmt::format("stop##e{}", k).c_str())) worker->stop_emitter(int(k));
                        }
                        if (e.blocked && ImGui::IsItemHovered())
                            ImGui::SetTooltip("%llu held back (fluid at the nozzle)", static_cast<unsigned long long>(e.blocked));
                    }
                    if (snap->removed_outflow + snap->removed_escaped + snap->drained > 0)
                        ImGui::Text("removed: %llu outflow, %llu escaped, %llu drained", static_cast<unsigned long long>(snap->removed_outflow),
                                    static_cast<unsigned long long>(snap->removed_escaped), static_cast<unsigned long long>(snap->drained));
                }
            }
            if (ImGui::CollapsingHeader(fmt::format("Settings: {}", method).c_str())) {
                bool changed = false;
                if (method == "wcsph") changed = settings_controls(wcsph, eddy::wcsph_fields());
                if (method == "dfsph") changed = settings_controls(dfsph, eddy::dfsph_fields());
                if (method == "pbf") changed = settings_controls(pbf, eddy::pbf_fields());
                if (method == "clavet") changed = settings_controls(clavet, eddy::clavet_fields());
                if (changed) {
                    try {  // the table's ranges again, and the solver's own checks on the worker
                        if (method == "wcsph") eddy::validate(wcsph, eddy::wcsph_fields(), "settings");
                        if (method == "dfsph") eddy::validate(dfsph, eddy::dfsph_fields(), "settings");
                        if (method == "pbf") eddy::validate(pbf, eddy::pbf_fields(), "settings");
                        if (method == "clavet") eddy::validate(clavet, eddy::clavet_fields(), "settings");
                        settings_error.clear();
                        send_settings();
                    } catch (const eddy::InputError& e) {
                        settings_error = e.what();
                    }
                }
                if (!settings_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", settings_error.c_str());
            }
        } else {
            if (snap->synthetic) ImGui::TextWrapped("Synthetic heightfield (a test pattern for the shallow-water renderer).");
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
            if (!snap->synthetic && method == "shallow_water") {
                if (ImGui::SliderFloat("gravity (m/s^2)", &g_strength, 0.1f, 30.0f, "%.2f")) send_settings();
                if (ImGui::CollapsingHeader("Settings: shallow_water")) {
                    if (settings_controls(water, eddy::shallow_water_fields())) {
                        try {
                            eddy::validate(water, eddy::shallow_water_fields(), "settings");
                            settings_error.clear();
                            send_settings();
                        } catch (const eddy::InputError& e) {
                            settings_error = e.what();
                        }
                    }
                    if (!settings_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", settings_error.c_str());
                }
            }
#endif
            ImGui::TextWrapped("Left click: drop water; Shift + left click: drop ink. Right drag: orbit; wheel: zoom.");
        }
        ImGui::TextDisabled("keys: Space play/pause, S step, R reset,\nB block at the cursor, N ball, M box,\nG drag bodies, C colour, P screenshot,\nV record, H hide panel, Q quit");
        ImGui::PopItemWidth();
        ImGui::End();
    }
};

App* g_app = nullptr;  // the window callbacks' way back to the App (this executable only, not the library)

void key_callback(GLFWwindow*, int key, int, int action, int) {
    if (action != GLFW_PRESS || !g_app || ImGui::GetIO().WantCaptureKeyboard) return;
    g_app->key(key);
}
void scroll_callback(GLFWwindow*, double, double y) {
    if (g_app && !ImGui::GetIO().WantCaptureMouse) g_app->scroll += y;
}
std::string g_glfw_error;
void glfw_error(int, const char* what) { g_glfw_error = what; }

// Random particles in a unit cube, for --bench-render.
std::vector<float> bench_particles(std::size_t n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> p(4 * n);
    for (std::size_t i = 0; i < n; ++i) {
        p[4 * i] = u(rng), p[4 * i + 1] = u(rng), p[4 * i + 2] = u(rng);
        p[4 * i + 3] = 2.0f * p[4 * i + 1];  // "speed": a gradient over height
    }
    return p;
}

int run(Options& opt) {
    App app;
    app.opt = opt;
    if (!opt.mesh.empty()) {
        app.file_mesh = std::make_shared<SurfaceMesh>(read_obj(opt.mesh));  // bad file: InputError, exit 2
    }
    if (opt.bench_render == 0 && !opt.mesh_only) {
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
        app.worker = std::make_unique<SimWorker>(wc);  // bad input throws here, before a window opens
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
    app.show_ui = !opt.hide_ui;
    app.bodies_mode = opt.bodies_mode;
    parse_colormap(opt.colormap, app.colors.map);  // checked by the option's validator
    app.colors.size = opt.particle_size;
    app.colors.legend = !opt.no_legend;
    app.show_load_arrow = opt.load_arrow;

    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
        std::fprintf(stderr, "eddy-view: error: cannot open a window (%s); without a display, run under xvfb-run -a\n",
                     g_glfw_error.c_str());
        return eddy::kExitFailure;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    app.win = glfwCreateWindow(opt.width, opt.height, "eddy view", nullptr, nullptr);
    if (!app.win) {
        std::fprintf(stderr, "eddy-view: error: cannot create an OpenGL 3.3 core window (%s)\n", g_glfw_error.c_str());
        glfwTerminate();
        return eddy::kExitFailure;
    }
    glfwMakeContextCurrent(app.win);
    const bool unthrottled = opt.frames > 0 || opt.bench_render > 0;
    glfwSwapInterval(unthrottled ? 0 : 1);
    g_app = &app;
    glfwSetKeyCallback(app.win, key_callback);  // before ImGui, which chains to them
    glfwSetScrollCallback(app.win, scroll_callback);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini in the user's folder
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(app.win, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");

    int rc = eddy::kExitOk;
    try {
        app.gfx.init();
        std::vector<float> bench;
        if (opt.bench_render > 0) {
            bench = bench_particles(opt.bench_render);
            app.cam.is_3d = true;
            app.cam.target = {0.5f, 0.5f, 0.5f};
            app.cam.distance = 2.6f;
        }
        if (opt.mesh_only) app.fit_camera_to_mesh();
        const float bench_r = 0.5f * std::cbrt(1.0f / float(std::max<std::size_t>(opt.bench_render, 1)));
        if (app.worker) app.worker->start();
        if (!opt.record.empty()) app.start_recording(opt.record);
        if (!opt.screenshot.empty() && opt.frames == 0) app.pending_screenshot = opt.screenshot;
        int frame = 0;
        const auto t_start = Clock::now();
        while (!glfwWindowShouldClose(app.win) && !app.quit) {
            glfwPollEvents();
            const auto now = Clock::now();
            const double frame_dt = std::chrono::duration<double>(now - app.last_frame).count();
            app.last_frame = now;
            app.frame_ms = 0.9 * app.frame_ms + 0.1 * frame_dt * 1e3;
            app.fps = app.frame_ms > 0 ? 1e3 / app.frame_ms : 0;
            if (app.worker && opt.steps_per_frame > 0 && !opt.paused) {
                // Lockstep: exactly steps_per_frame steps per drawn frame, so a --frames run shows the same
                // state (and saves the same picture) every time, a note in the status or not (halted: failed).
                const std::uint64_t target = app.worker->latest()->steps + std::uint64_t(opt.steps_per_frame);
                for (int k = 0; k < opt.steps_per_frame; ++k) app.worker->request_step();
                const auto t0 = Clock::now();
                while (app.worker->latest()->steps < target && !app.worker->latest()->halted) {
                    if (Clock::now() - t0 > std::chrono::seconds(120))
                        throw std::runtime_error("--steps-per-frame: the simulation thread did not answer in 120 s");
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                }
            }
            if (app.worker) {
                app.snap = app.worker->latest();
                if (app.snap && app.snap->generation != app.seen_generation) app.on_new_generation();
            }

            for (const auto& [at, k] : opt.keys)  // --test-keys: through the key handler, as a press would
                if (at == frame) app.key(k);
            ImGui_ImplOpenGL3_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            ImGui::NewFrame();
            app.handle_mouse(frame_dt);
            app.ui();
            ImGui::Render();

            int w, h;
            glfwGetFramebufferSize(app.win, &w, &h);
            if (opt.bench_render > 0) {
                app.cam.yaw += 0.01f;  // a slowly turning view: nothing cached between frames
                glViewport(0, 0, w, h);
                glClearColor(0.13f, 0.14f, 0.16f, 1.0f);
                glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
                glEnable(GL_DEPTH_TEST);
                ColorRange cr;
                cr.lo = 0.0f, cr.hi = 2.0f;
                app.gfx.draw_particles(bench, bench_r, true, app.cam.view(), app.cam.proj(float(w) / float(std::max(h, 1))), cr);
            } else {
                app.draw_scene(w, h);
            }
            // The legend belongs to the scene: ImGui's background list (legend only) is drawn now, before
            // a screenshot, the windows (panel, overlay) after it.
            ImDrawData* dd = ImGui::GetDrawData();
            ImDrawData scene_part = *dd, ui_part = *dd;
            std::vector<ImDrawList*> lists_scene, lists_ui;
            for (int i = 0; i < dd->CmdListsCount; ++i)
                (dd->CmdLists[i] == ImGui::GetBackgroundDrawList() ? lists_scene : lists_ui).push_back(dd->CmdLists[i]);
            scene_part.CmdLists = lists_scene.data(), scene_part.CmdListsCount = int(lists_scene.size());
            ui_part.CmdLists = lists_ui.data(), ui_part.CmdListsCount = int(lists_ui.size());
            glDisable(GL_DEPTH_TEST);
            if (!lists_scene.empty()) ImGui_ImplOpenGL3_RenderDrawData(&scene_part);
            ++frame;
            app.frame = frame;
            const bool last = opt.frames > 0 && frame >= opt.frames;
            // Screenshots and recorded frames hold the scene, not the controls.
            if (last && !opt.screenshot.empty()) app.pending_screenshot = opt.screenshot;
            if (!app.pending_screenshot.empty() && !opt.screenshot_ui) {
                try {
                    app.take_screenshot(app.pending_screenshot);
                    app.message = "saved " + app.pending_screenshot;
                } catch (const std::exception& e) {
                    app.message = e.what();
                    if (last) throw;
                }
                app.pending_screenshot.clear();
            }
            if (app.recording) {
                try {
                    app.take_screenshot(fmt::format("{}/frame_{:05d}.png", app.record_dir, app.record_index++));
                } catch (const std::exception& e) {
                    app.message = e.what();
                    app.recording = false;
                }
            }
            glDisable(GL_DEPTH_TEST);
            ImGui_ImplOpenGL3_RenderDrawData(&ui_part);
            if (!app.pending_screenshot.empty()) {  // --screenshot-ui: the window as it looks
                app.take_screenshot(app.pending_screenshot);
                app.pending_screenshot.clear();
            }
            if (opt.bench_render > 0) glFinish();
            glfwSwapBuffers(app.win);
            if (last) break;
            if (opt.bench_render > 0 && opt.frames == 0) {
                const double el = std::chrono::duration<double>(Clock::now() - t_start).count();
                if (el >= opt.bench_seconds && frame >= 3) break;
            }
        }
        if (opt.bench_render > 0) {
            const double el = std::chrono::duration<double>(Clock::now() - t_start).count();
            int w, h;
            glfwGetFramebufferSize(app.win, &w, &h);
            std::printf("bench-render: %zu particles (3D impostors), %dx%d, %d frames in %.2f s: %.2f fps (%s)\n",
                        opt.bench_render, w, h, frame, el, frame / el, reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
        }
        if (!opt.screenshot.empty() && opt.frames > 0) std::fprintf(stderr, "eddy-view: saved %s\n", opt.screenshot.c_str());
        if (opt.frames > 0 && app.worker) {  // the state the last frame showed, for scripts and tests
            const auto s = app.worker->latest();
            const bool grid = s->heightfield_mode;
            std::fprintf(stderr, "eddy-view: %d frames, t = %.4f s, %llu steps, %zu %s, max speed %.4g m/s\n", frame, s->time,
                         static_cast<unsigned long long>(s->steps),
                         grid ? std::size_t(s->hf.nx) * std::size_t(s->hf.ny) : s->particles, grid ? "cells" : "particles",
                         s->max_speed);
        }
        if (opt.frames > 0 && app.worker) {  // the walls' loads the last frame showed (issue 28)
            const auto s = app.worker->latest();
            const char* fu = s->dimension == 2 ? "N/m" : "N";
            const char* tu = s->dimension == 2 ? "N m/m" : "N m";
            for (std::size_t o = 0; o < s->loads.size(); ++o) {
                const eddy::ObjectLoad& l = s->loads[o];
                std::fprintf(stderr, "eddy-view: load on object %zu: force %.6g %.6g %.6g %s, torque %.6g %.6g %.6g %s, "
                             "fluid weight %.6g %s\n", o, l.force[0], l.force[1], l.force[2], fu, l.torque[0], l.torque[1],
                             l.torque[2], tu, s->fluid_weight, fu);
            }
        }
        if (opt.frames > 0 && app.worker) {  // the bodies the last frame showed (issue 30), for scripts and tests
            const auto s = app.worker->latest();
            for (const BodyView& b : s->bodies)
                std::fprintf(stderr, "eddy-view: body %zu: position %.6g %.6g %.6g m, velocity %.6g %.6g %.6g m/s\n", b.index,
                             b.state.position[0], b.state.position[1], b.state.position[2], b.state.velocity[0],
                             b.state.velocity[1], b.state.velocity[2]);
        }
        app.stop_recording();
        if (app.snap && !app.snap->status.empty() && opt.frames > 0) {
            std::fprintf(stderr, "eddy-view: %s\n", app.snap->status.c_str());
            if (app.snap->status.rfind("diverged", 0) == 0) rc = eddy::kExitDiverged;  // as `eddy run`
        }
    } catch (const eddy::InputError& e) {  // a screenshot or recording path, a model: one line, exit 2
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "eddy-view: error: %s\n", eddy::text_excerpt(msg, 300).c_str());
        rc = eddy::kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "eddy-view: error: out of memory while running the viewer\n");
        rc = eddy::kExitFailure;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "eddy-view: error: while running the viewer: %s\n", eddy::text_excerpt(msg, 300).c_str());
        rc = eddy::kExitFailure;
    }
    if (app.worker) app.worker->stop();
    app.gfx.destroy();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    g_app = nullptr;
    glfwDestroyWindow(app.win);
    glfwTerminate();
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{"eddy view: watch, steer and play with a simulation in a window (OpenGL 3.3)", "eddy view"};
    Options opt;
    cli.add_option("scene", opt.scene, "Bundled scene name or scene file (default: " + std::string(kDefaultScene) + ")");
    cli.add_option("--method", opt.method, "Run the scene with this method: the scene's settings it has with the same key and unit are kept, the others take its defaults")
        ->check(CLI::IsMember({"wcsph", "dfsph", "pbf", "clavet"}));
    cli.add_option("--set", opt.sets, "Override a scene key: KEY.PATH=VALUE, e.g. settings.cfl=0.3 (repeatable)");
    cli.add_option("--threads,-j", opt.threads, "Simulation threads, at most 4096 (default and 0: all cores)")
        ->check(CLI::Range(0, eddy::kMaxThreads));
    cli.add_option("--max-particles", opt.max_particles, "Refuse scenes (and added blocks) beyond this many particles")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cli.add_option("--live-particles", opt.live_particles,
                   "Play scenes with more fluid and wall particles than this at a coarser particle radius, so that "
                   "they run live (a warning says so); 0: always at the scene's own resolution")
        ->capture_default_str();
    cli.add_option("--max-memory", opt.max_memory,
                   "Refuse scenes estimated to need more memory than this: bytes or 500M, 4G, 1.5GB, 512MiB; "
                   "default: 90% of the available memory");
    cli.add_option("--frames", opt.frames, "Run this many frames, then exit (for scripts and tests)")->check(CLI::PositiveNumber);
    cli.add_option("--screenshot", opt.screenshot, "Save a PNG of the scene: the last frame with --frames, else the first");
    cli.add_option("--size", opt.size, "Window size WIDTHxHEIGHT (px)")->capture_default_str();
    cli.add_flag("--paused", opt.paused, "Start paused");
    cli.add_option("--color", opt.color, "Colour particles by speed, density or pressure")
        ->check(CLI::IsMember({"speed", "density", "pressure"}))
        ->capture_default_str();
    cli.add_option("--colormap", opt.colormap, "Colour map: classic (blue-yellow-red), viridis, coolwarm or speed (blue-white)")
        ->check(CLI::IsMember({"classic", "viridis", "coolwarm", "speed"}))
        ->capture_default_str();
    cli.add_option("--color-range", opt.color_range,
                   "MIN,MAX: lock the colour field's range, in its unit (m/s; kg/m^3, 2D kg/m^2; Pa, 2D N/m)");
    cli.add_option("--particle-size", opt.particle_size, "Draw particles with this times their radius (0.25 to 4)")
        ->check(CLI::Range(0.25f, 4.0f))
        ->capture_default_str();
    cli.add_flag("--no-legend", opt.no_legend, "Do not draw the colour legend (the panel's 'legend' checkbox)");
    cli.add_flag("--load-arrow", opt.load_arrow, "Draw the selected object's load arrow from the start (the loads panel's 'arrow' checkbox)");
    cli.add_option("--test-keys", opt.test_keys, "With --frames: FRAME:KEY,... keys pressed at frames (letters, 'space'), for tests");
    cli.add_flag("--screenshot-ui", opt.screenshot_ui, "Screenshots show the controls too (default: the scene only)");
    cli.add_option("--steps-per-frame", opt.steps_per_frame,
                   "Lockstep: exactly this many simulation steps before each frame is drawn (reproducible --frames runs)")
        ->check(CLI::PositiveNumber);
    cli.add_flag("--surface", opt.surface, "Reconstruct the fluid's surface live and draw it (3D scenes; the panel's checkbox)");
    cli.add_flag("--whitewater", opt.whitewater, "Spray, foam and bubbles beside the fluid from the start (particle scenes; the panel's checkbox)");
    cli.add_flag("--bodies-mode", opt.bodies_mode, "Start with left drags grabbing bodies (the panel's 'drag bodies', key G)");
    cli.add_flag("--hide-ui", opt.hide_ui, "Start with the control panel hidden (H shows it)");
    cli.add_option("--record", opt.record, "Record every frame into this folder as PNGs (and recording.mp4 if ffmpeg is on PATH)");
    cli.add_option("--test-drag", opt.test_drag,
                   "With --frames: a scripted left drag X0,Y0,X1,Y1 in window fractions (0..1), for tests");
    cli.add_option("--mesh", opt.mesh,
                   "A surface mesh (.obj, e.g. from eddy mesh) to draw over a 3D scene, or alone when no scene is named");
    cli.add_flag("--demo-heightfield", opt.demo_heightfield,
                 "Show a synthetic heightfield (terrain, water, ink) instead of a scene: a test of the shallow-water renderer");
    cli.add_option("--demo-cells", opt.demo_cells, "Cells per side of the synthetic heightfield")
        ->capture_default_str()
        ->check(CLI::Range(8, 2048));
    cli.add_option("--bench-render", opt.bench_render, "Render N random 3D particles (no simulation), print frames per second, exit")
        ->check(CLI::PositiveNumber);
    cli.add_option("--bench-seconds", opt.bench_seconds, "How long --bench-render runs (s)")->capture_default_str()->check(CLI::PositiveNumber);
    cli.footer("\nMouse: left drag stirs the fluid (particles in the brush take the mouse's velocity); right drag orbits (3D) or pans (2D);\n"
               "wheel zooms; Ctrl + left drag (or G, then left drag) pulls a body. Keys: Space play/pause, S step, R reset,\n"
               "B add a block at the cursor, N drop a ball, M drop a box (at the cursor), G drag bodies, C colour field, P screenshot, V record,\n"
               "H hide the panel, Q/Esc quit. Exit codes: 0 done, 1 failure (no display, OpenGL), 2 bad input, 3 the simulation\n"
               "diverged during a --frames run. See docs/viewer.md.");
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "eddy-view: error: %s (see eddy view --help)\n", eddy::text_excerpt(msg, 300).c_str());
        return eddy::kExitBadInput;
    }
    if (!opt.test_drag.empty()) {
        float* d = opt.drag;
        char tail = 0;
        const int n = std::sscanf(opt.test_drag.c_str(), "%f,%f,%f,%f%c", &d[0], &d[1], &d[2], &d[3], &tail);
        bool ok = n == 4 && opt.frames >= 6;
        for (int i = 0; i < 4; ++i) ok = ok && d[i] >= 0.0f && d[i] <= 1.0f;
        if (!ok) {
            std::fprintf(stderr, "eddy-view: error: --test-drag '%s': expected X0,Y0,X1,Y1, each in [0, 1], with --frames 6 or more\n",
                         opt.test_drag.c_str());
            return eddy::kExitBadInput;
        }
    }
    if (!opt.color_range.empty()) {
        char tail = 0;
        if (std::sscanf(opt.color_range.c_str(), "%f,%f%c", &opt.range[0], &opt.range[1], &tail) != 2 ||
            !std::isfinite(opt.range[0]) || !std::isfinite(opt.range[1]) || !(opt.range[1] > opt.range[0])) {
            std::fprintf(stderr, "eddy-view: error: --color-range '%s': expected MIN,MAX with MAX > MIN (e.g. 990,1010)\n",
                         opt.color_range.c_str());
            return eddy::kExitBadInput;
        }
    }
    if (!opt.test_keys.empty()) {
        std::string item;
        std::size_t start = 0;
        while (start <= opt.test_keys.size()) {
            const std::size_t end = std::min(opt.test_keys.find(',', start), opt.test_keys.size());
            item = opt.test_keys.substr(start, end - start);
            start = end + 1;
            int at = -1, key = -1;
            char name[16] = {0};
            if (std::sscanf(item.c_str(), "%d:%15s", &at, name) == 2 && at >= 0) {
                const std::string n = name;
                if (n == "space") key = GLFW_KEY_SPACE;
                else if (n.size() == 1 && std::isalpha(static_cast<unsigned char>(n[0]))) key = GLFW_KEY_A + (std::toupper(n[0]) - 'A');
            }
            if (key < 0 || opt.frames == 0) {
                std::fprintf(stderr, "eddy-view: error: --test-keys '%s': expected FRAME:KEY,... (KEY a letter or space) with --frames\n",
                             opt.test_keys.c_str());
                return eddy::kExitBadInput;
            }
            opt.keys.emplace_back(at, key);
        }
    }
    opt.mesh_only = !opt.mesh.empty() && cli.count("scene") == 0 && !opt.demo_heightfield;
    {
        int w = 0, h = 0;
        char x = 0;
        if (std::sscanf(opt.size.c_str(), "%d%c%d", &w, &x, &h) != 3 || x != 'x' || w < 64 || h < 64 || w > 8192 || h > 8192) {
            std::fprintf(stderr, "eddy-view: error: --size '%s': expected WIDTHxHEIGHT, each 64..8192 (e.g. 1280x720)\n",
                         opt.size.c_str());
            return eddy::kExitBadInput;
        }
        opt.width = w, opt.height = h;
    }
    // Every failure is one line (a what() can hold newlines or a huge echoed value), with what was
    // being done when it is not an InputError (those name their file and key).
    auto one_line = [](std::string s) {
        std::replace(s.begin(), s.end(), '\n', ' ');
        return eddy::text_excerpt(s, 300);
    };
    const std::string doing = opt.scene.empty() ? std::string("starting the viewer")
                                                : "opening " + eddy::text_excerpt(opt.scene);
    try {
        return run(opt);
    } catch (const eddy::InputError& e) {
        std::fprintf(stderr, "eddy-view: error: %s\n", one_line(e.what()).c_str());
        return eddy::kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "eddy-view: error: out of memory while %s\n", doing.c_str());
        return eddy::kExitFailure;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eddy-view: error: while %s: %s\n", doing.c_str(), one_line(e.what()).c_str());
        return eddy::kExitFailure;
    }
}
