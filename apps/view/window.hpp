// eddy-view: the window (GLFW, an OpenGL 3.3 core context through libepoxy) and Dear ImGui on it: opening
// and closing them, the key and wheel callbacks into the App, and ImGui's frame and drawing.
#pragma once

namespace eddy::view {

struct App;
struct Options;

/// Opens the window (opt.width x opt.height; vsync unless --frames or --bench-render) and ImGui on it,
/// with the key and wheel callbacks on `app`. kExitOk, or kExitFailure with the error printed (no
/// display, no OpenGL 3.3).
int open_window(App& app, const Options& opt);
/// ImGui's and the window's end (the App's renderer and simulation thread are the caller's).
void close_window(App& app);

/// A new ImGui frame: before the controls are built.
void begin_ui_frame();
/// After ImGui::Render: the background list only (the legend: part of the scene, in screenshots) or
/// the windows (panel, overlay).
void draw_ui_background();
void draw_ui_windows();

}  // namespace eddy::view
