// eddy-view: the window's state (App): the options, the window, the simulation thread and its latest
// snapshot, the controls' values, the mouse and the outputs, and what follows a new snapshot (a new
// scene or method: the camera and the controls follow it). The rest of the viewer is free functions on
// it, by concern: input.*, panels.*, scene_draw.*, recording.*, harness.*, window.*.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/clavet.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/pbf.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/wcsph.hpp"
#include "camera.hpp"
#include "color_panel.hpp"
#include "gfx.hpp"
#include "input.hpp"
#include "mesh.hpp"
#include "options.hpp"
#include "recording.hpp"
#include "sim_worker.hpp"

// The shallow-water solver is part of the library: its live controls are always built.
#ifndef EDDY_VIEW_HAS_SHALLOW_WATER
#define EDDY_VIEW_HAS_SHALLOW_WATER 1
#endif

struct GLFWwindow;

namespace eddy::view {

using Clock = std::chrono::steady_clock;

constexpr int kPanelWidth = 360;  // px

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
    PointerState pointer;  // the buttons' drags (input.hpp)
    // bodies (issue 30): in bodies mode, or with Ctrl held, a left press on a body grabs it
    bool bodies_mode = false;
    int selected_body = -1;

    // output
    Recorder rec;  // screenshots and recording (recording.hpp)
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
};

/// Before the window opens: --mesh read, the simulation thread made (bad input throws here), and the
/// options that set the controls' first values.
void setup_app(App& app, const Options& opt);

inline bool heightfield(const App& app) { return app.snap && app.snap->heightfield_mode; }

/// A label for boundary object k: its index, shape and kind, from the scene as running.
std::string object_label(const App& app, std::size_t k);

/// The current method's settings as JSON, and gravity as a vector from the strength and angles.
nlohmann::json settings_json(const App& app);
std::array<double, 3> gravity(const App& app);
/// Both to the simulation thread.
void send_settings(App& app);

/// The colour field, and a snapshot of it from the simulation thread now, stepping or not.
void set_color_field(App& app, int f);

/// px: where the scene's part of the window starts, right of the panel (0 when the panel is hidden or
/// the window is too narrow to share).
float scene_left(const App& app, int ww);

/// A new scene or method: controls and camera follow it.
void on_new_generation(App& app);

}  // namespace eddy::view
