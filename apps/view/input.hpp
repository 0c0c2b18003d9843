// eddy-view: the keys and the mouse. Left drag stirs the fluid (the mouse force: particles in the brush
// take the pointer's velocity) or drops water and ink on a heightfield; in bodies mode, or with Ctrl, it
// grabs a body and pulls it (a spring to the cursor, applied by the simulation thread); right drag
// orbits (3D) or pans (2D), middle drag pans, the wheel zooms. See docs/viewer.md.
#pragma once
#include <array>

#include "bodies_view.hpp"
#include "camera.hpp"

namespace eddy::view {

struct App;

/// What the buttons are doing, between frames.
struct PointerState {
    bool dragging = false, orbiting = false, panning = false;
    V3 plane_point, plane_normal, last_point;
    bool has_last = false;
    double last_mouse_time = 0;  // lockstep: the simulated time at the last mouse sample
    double last_mx = 0, last_my = 0;
    double scroll = 0;
    // A body held by the left button (App::bodies_mode, or Ctrl)
    bool body_dragging = false;
    bool body_press = false;  // the left button's press went to the bodies (hit or not): no fluid push
    BodyDrag body_drag;
    V3 body_plane_point, body_plane_normal;
};

/// A key press (also --test-keys'): the bindings of `eddy view --help`.
void on_key(App& app, int key);

/// Once a frame, before the controls are built: the buttons and the cursor into the mouse force, a body
/// drag, drops, and the camera. frame_dt: the frame's wall-clock time (s).
void handle_mouse(App& app, double frame_dt);

/// Lets go of a dragged body (the simulation thread's spring too).
void end_body_drag(App& app);

/// Where the cursor points: in 2D the point under it; in 3D where its ray meets the plane through the
/// scene's centre facing the camera, or first the horizontal plane there (`horizontal`: where a body
/// or a tap is put).
std::array<double, 3> cursor_point(const App& app, bool horizontal = false);

}  // namespace eddy::view
