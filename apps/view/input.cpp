// eddy-view: the keys and the mouse (input.hpp).
#include "input.hpp"

#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>

#include "app.hpp"
#include "harness.hpp"
#include "recording.hpp"

namespace eddy::view {
namespace {

// The pointer this frame: where it is (px), the window's size, the buttons, and whether the controls
// have it.
struct PointerSample {
    double x = 0, y = 0;
    int ww = 0, wh = 0;
    bool left = false, right = false, middle = false;
    bool over_ui = false;
};

// Either of a left and right modifier key held (Shift, Ctrl).
bool held(GLFWwindow* win, int left_key, int right_key) {
    return glfwGetKey(win, left_key) == GLFW_PRESS || glfwGetKey(win, right_key) == GLFW_PRESS;
}

PointerSample sample_pointer(const App& app) {
    PointerSample p;
    glfwGetCursorPos(app.win, &p.x, &p.y);
    p.over_ui = ImGui::GetIO().WantCaptureMouse;
    p.left = glfwGetMouseButton(app.win, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS;
    p.right = glfwGetMouseButton(app.win, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS;
    p.middle = glfwGetMouseButton(app.win, GLFW_MOUSE_BUTTON_MIDDLE) == GLFW_PRESS;
    glfwGetWindowSize(app.win, &p.ww, &p.wh);
    // --test-drag: the left button held from the 3rd frame to the 3rd last, the pointer moving
    // along the line; the same code path as a real drag from here on.
    if (scripted_drag(app.opt, app.frame, p.ww, p.wh, p.x, p.y)) {
        p.left = true;
        p.over_ui = false;
    }
    return p;
}

bool ray_plane(const App& app, double mx, double my, V3 p0, V3 n, V3& hit) {
    int w, h;
    glfwGetWindowSize(app.win, &w, &h);
    V3 o, d;
    app.cam.ray(mx, my, w, h, o, d);
    if (!app.cam.is_3d) {
        hit = {o.x, o.y, 0};
        return true;
    }
    return intersect_plane(o, d, p0, n, hit);
}

// A left press for the bodies: the body under the cursor, if any, is grabbed.
void grab_body(App& app, const PointerSample& p) {
    PointerState& ps = app.pointer;
    ps.dragging = true;  // this press is the bodies': no fluid push until it is released
    ps.body_press = true;
    app.mouse.active = false;
    V3 o, d;
    app.cam.ray(p.x, p.y, p.ww, p.wh, o, d);
    if (const auto hit = pick_body(app.snap->bodies, o, d, app.cam.is_3d); hit && app.worker) {
        ps.body_dragging = true;
        app.selected_body = int(hit->body);
        ps.body_plane_point = hit->point;
        ps.body_plane_normal = normalized(app.cam.eye() - app.cam.target);
        ps.body_drag.active = true;
        ps.body_drag.body = app.snap->bodies[hit->body].index;
        ps.body_drag.local = hit->local;
        ps.body_drag.target = {hit->point.x, hit->point.y, hit->point.z};
        app.worker->set_body_drag(ps.body_drag);
    }
}

void drag_bodies(App& app, const PointerSample& p) {
    PointerState& ps = app.pointer;
    // Left on a body in bodies mode (or with Ctrl): grab it and drag it (a spring to the cursor,
    // applied by the simulation thread); elsewhere in bodies mode: nothing.
    const bool ctrl = held(app.win, GLFW_KEY_LEFT_CONTROL, GLFW_KEY_RIGHT_CONTROL);
    if (p.left && !ps.dragging && !ps.body_dragging && !p.over_ui && app.snap && !heightfield(app) && (app.bodies_mode || ctrl))
        grab_body(app, p);
    if (ps.body_dragging && !p.left) end_body_drag(app);
    if (ps.body_dragging && app.worker) {
        V3 hit;
        if (ray_plane(app, p.x, p.y, ps.body_plane_point, ps.body_plane_normal, hit)) {
            ps.body_drag.target = {hit.x, hit.y, app.cam.is_3d ? hit.z : 0.0f};
            app.worker->set_body_drag(ps.body_drag);
        }
    }
}

void stir(App& app, const PointerSample& p, double frame_dt) {
    PointerState& ps = app.pointer;
    // Left: the mouse force (particles), or a drop of water / ink (heightfield, Shift: ink).
    if (p.left && !ps.dragging && !p.over_ui && app.snap) {
        ps.dragging = true;
        ps.has_last = false;
        ps.plane_point = {app.snap->centroid[0], app.snap->centroid[1], app.snap->centroid[2]};
        ps.plane_normal = heightfield(app) ? V3{0, 1, 0} : normalized(app.cam.eye() - app.cam.target);
        if (heightfield(app)) {
            V3 hit;
            const bool ink = held(app.win, GLFW_KEY_LEFT_SHIFT, GLFW_KEY_RIGHT_SHIFT);
            if (ray_plane(app, p.x, p.y, ps.plane_point, ps.plane_normal, hit)) app.worker->drop(hit.x, hit.z, ink);
        }
    }
    if (!p.left && ps.dragging) {
        ps.dragging = false;
        ps.body_press = false;
        app.mouse.active = false;
        if (app.worker) app.worker->set_mouse(app.mouse);
    }
    if (ps.dragging && !ps.body_press && !heightfield(app) && app.worker) {
        V3 hit;
        // The mouse's velocity: its motion over the frame's wall-clock time; in lockstep over the
        // simulated time between the frames, so that a scripted drag gives the same run every time.
        double mouse_dt = frame_dt;
        if (app.opt.steps_per_frame > 0) mouse_dt = app.snap->time - ps.last_mouse_time;
        ps.last_mouse_time = app.snap->time;
        if (ray_plane(app, p.x, p.y, ps.plane_point, ps.plane_normal, hit)) {
            const V3 vel = ps.has_last && mouse_dt > 0 ? (hit - ps.last_point) * float(1.0 / mouse_dt) : V3{};
            ps.last_point = hit;
            ps.has_last = true;
            app.mouse.active = true;
            app.mouse.point = {hit.x, hit.y, hit.z};
            app.mouse.velocity = {vel.x, vel.y, vel.z};
            app.worker->set_mouse(app.mouse);
        }
    }
}

// dx, dy: the pointer's motion since the last frame (px).
void steer_camera(App& app, const PointerSample& p, double dx, double dy) {
    PointerState& ps = app.pointer;
    // Right: orbit (3D) or pan (2D); middle: pan.
    if ((p.right || p.middle) && !ps.orbiting && !ps.panning && !p.over_ui) (p.right && app.cam.is_3d ? ps.orbiting : ps.panning) = true;
    if (!p.right && !p.middle) ps.orbiting = ps.panning = false;
    if (ps.orbiting) orbit(app.cam, dx, dy);
    if (ps.panning) pan(app.cam, dx, dy, p.ww, p.wh);
    if (ps.scroll != 0) {
        zoom(app.cam, ps.scroll);
        ps.scroll = 0;
    }
}

}  // namespace

void handle_mouse(App& app, double frame_dt) {
    const PointerSample p = sample_pointer(app);
    const double dx = p.x - app.pointer.last_mx, dy = p.y - app.pointer.last_my;
    app.pointer.last_mx = p.x, app.pointer.last_my = p.y;
    drag_bodies(app, p);
    stir(app, p, frame_dt);
    steer_camera(app, p, dx, dy);
}

void end_body_drag(App& app) {
    PointerState& ps = app.pointer;
    if (!ps.body_dragging && !ps.body_drag.active) return;
    ps.body_dragging = false;
    ps.body_drag.active = false;
    if (app.worker) app.worker->set_body_drag(ps.body_drag);
}

std::array<double, 3> cursor_point(const App& app, bool horizontal) {
    double mx, my;
    glfwGetCursorPos(app.win, &mx, &my);
    int w, h;
    glfwGetWindowSize(app.win, &w, &h);
    V3 o, d;
    app.cam.ray(mx, my, w, h, o, d);
    if (!app.cam.is_3d || !app.snap) return {o.x, o.y, 0.0};
    const Snapshot& s = *app.snap;
    const V3 mid{0.5f * (s.lo[0] + s.hi[0]), 0.5f * (s.lo[1] + s.hi[1]), 0.5f * (s.lo[2] + s.hi[2])};
    V3 hit;
    if (!(horizontal && intersect_plane(o, d, mid, V3{0, 1, 0}, hit)) &&
        !intersect_plane(o, d, mid, normalized(app.cam.eye() - app.cam.target), hit))
        hit = mid;
    return {hit.x, hit.y, hit.z};
}

void on_key(App& app, int k) {
    switch (k) {  // these work without a simulation too (--mesh alone)
        case GLFW_KEY_P: request_screenshot(app.rec); return;
        case GLFW_KEY_V: toggle_recording(app.rec, app.message); return;
        case GLFW_KEY_H: app.show_ui = !app.show_ui; return;
        case GLFW_KEY_ESCAPE:
        case GLFW_KEY_Q: app.quit = true; return;
        default: break;
    }
    SimWorker* worker = app.worker.get();
    if (!worker) return;
    switch (k) {
        case GLFW_KEY_SPACE: worker->playing = !worker->playing; break;
        case GLFW_KEY_S: worker->playing = false, worker->request_step(); break;
        case GLFW_KEY_R: worker->reset(app.opt.scene, app.method); break;
        case GLFW_KEY_B:
            if (!heightfield(app)) worker->add_block(cursor_point(app));
            break;
        case GLFW_KEY_N:
            if (!heightfield(app)) worker->drop_body(true, cursor_point(app, true));
            break;
        case GLFW_KEY_E:  // an emitter at the cursor (issue 31); Shift+E stops them all
            if (heightfield(app)) break;
            if (held(app.win, GLFW_KEY_LEFT_SHIFT, GLFW_KEY_RIGHT_SHIFT))
                worker->stop_emitter(-1);
            else
                worker->add_emitter(cursor_point(app, true), app.emitter_speed, app.emitter_size);
            break;
        case GLFW_KEY_M:
            if (!heightfield(app)) worker->drop_body(false, cursor_point(app, true));
            break;
        case GLFW_KEY_G:
            app.bodies_mode = !app.bodies_mode;
            if (!app.bodies_mode) end_body_drag(app);
            break;
        case GLFW_KEY_C: set_color_field(app, (app.colors.field + 1) % 3); break;
        default: break;
    }
}

}  // namespace eddy::view
