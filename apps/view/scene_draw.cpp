// eddy-view: drawing the scene (scene_draw.hpp).
#include "scene_draw.hpp"

#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>

#include <algorithm>
#include <vector>

#include "app.hpp"
#include "eddy/load_display.hpp"
#include "whitewater_view.hpp"

namespace eddy::view {
namespace {

constexpr float kArrowRgb[3] = {1.0f, 0.3f, 0.85f};  // magenta: not in the colour map, not grey
constexpr float kProbeRgb[3] = {0.3f, 1.0f, 0.45f};  // green: the probes' crosses

// The selected object's load arrow (load_arrow.hpp): from its pivot along the force, a fluid weight
// a quarter of the scene's largest extent long. Empty without loads.
std::vector<float> load_arrow_lines(const App& app) {
    const auto& snap = app.snap;
    const int load_object = app.load_object;
    if (!snap || !app.show_load_arrow || load_object < 0 || std::size_t(load_object) >= snap->loads.size() ||
        std::size_t(load_object) >= snap->pivots.size())
        return {};
    float extent = 0.0f;
    for (int a = 0; a < 3; ++a) extent = std::max(extent, snap->hi[a] - snap->lo[a]);
    const auto& p = snap->pivots[std::size_t(load_object)];
    return load_arrow({p[0], p[1], p[2]}, snap->loads[std::size_t(load_object)].force, snap->fluid_weight,
                      0.25 * double(extent), snap->dimension);
}

void draw_mesh(App& app, const Mat4& view, const Mat4& proj) {
    if (!app.show_mesh || !app.cam.is_3d) return;
    glEnable(GL_DEPTH_TEST);
    if (app.snap && app.snap->surface) {
        // Over the particles, which are blue when slow: a pale glassy tint that stands apart.
        app.gfx.set_mesh_color(0.80f, 0.90f, 1.00f, 0.55f);
        app.gfx.draw_mesh(*app.snap->surface, app.snap->surface_version, view, proj, app.cam.eye());
        app.gfx.set_mesh_color(0.20f, 0.45f, 0.90f, 0.75f);
    }
    else if (app.file_mesh) app.gfx.draw_mesh(*app.file_mesh, 0, view, proj, app.cam.eye());
}

// While dragging: a white line from the grabbed point (where it is now) to the cursor's target.
void draw_drag_line(App& app, const Mat4& view, const Mat4& proj) {
    const PointerState& ps = app.pointer;
    if (!ps.body_dragging || !app.snap) return;
    for (const BodyView& b : app.snap->bodies) {
        if (b.index != ps.body_drag.body) continue;
        const auto& drag = ps.body_drag;
        const V3 p = posed(b, {float(b.rest_center[0] + drag.local[0]), float(b.rest_center[1] + drag.local[1]),
                               float(b.rest_center[2] + drag.local[2])});
        const std::vector<float> line{p.x, p.y, p.z, static_cast<float>(drag.target[0]),
                                      static_cast<float>(drag.target[1]), static_cast<float>(drag.target[2])};
        static constexpr float kWhite[3] = {1.0f, 1.0f, 1.0f};
        app.gfx.draw_lines(line, kWhite, view, proj);
    }
}

// The bodies (issue 30), each in its own colour (bodies_view.hpp body_color), at the snapshot's pose.
// 2D: filled over the fluid (the fluid stays outside them), with a darker outline (white while
// dragged or selected) that shows the turning.
void draw_bodies_2d(App& app, const Mat4& view, const Mat4& proj) {
    for (const BodyView& b : app.snap->bodies) {
        if (!b.geometry) continue;
        const auto& m = b.geometry->mesh;
        std::vector<float> tris;
        tris.reserve(3 * m.triangles.size());
        for (auto v : m.triangles) {
            const V3 p = posed(b, {m.xyz[3 * v], m.xyz[3 * v + 1], m.xyz[3 * v + 2]});
            tris.insert(tris.end(), {p.x, p.y, 0.0f});
        }
        const auto c = body_color(b.index);
        app.gfx.draw_triangles(tris, c.data(), view, proj);
        std::vector<float> lines;
        const auto& o = b.geometry->outline;
        for (std::size_t i = 0; i + 2 < o.size(); i += 3) {
            const V3 p = posed(b, {o[i], o[i + 1], o[i + 2]});
            lines.insert(lines.end(), {p.x, p.y, 0.0f});
        }
        const bool lit = b.dragged || int(b.index) == app.selected_body;
        const float edge[3] = {lit ? 1.0f : 0.45f * c[0], lit ? 1.0f : 0.45f * c[1], lit ? 1.0f : 0.45f * c[2]};
        app.gfx.draw_lines(lines, edge, view, proj);
    }
    draw_drag_line(app, view, proj);
}

// 3D: opaque, shaded as the models (matte, lit on both sides), drawn before the particles.
void draw_bodies_3d(App& app, const Mat4& view, const Mat4& proj) {
    for (const BodyView& b : app.snap->bodies) {
        if (!b.geometry) continue;
        const auto c = body_color(b.index);
        const bool lit = b.dragged || int(b.index) == app.selected_body;
        const float k = lit ? 1.15f : 1.0f;  // the selected body a little brighter
        const float rgba[4] = {std::min(1.0f, k * c[0]), std::min(1.0f, k * c[1]), std::min(1.0f, k * c[2]), 1.0f};
        app.gfx.draw_model(b.geometry->mesh, b.geometry->id, app.snap->models.size() + b.index, b.pose, rgba, true, view, proj,
                           app.cam.eye());
    }
}

// The scene's models (3D meshes) at the snapshot's pose, light grey: obstacles as opaque as the
// panel says, containers translucent so that the fluid inside shows. Opaque ones are drawn before
// the particles, translucent ones after them.
void draw_models_3d(App& app, const Mat4& view, const Mat4& proj, bool opaque_pass) {
    if (!app.show_models) return;
    for (std::size_t k = 0; k < app.snap->models.size(); ++k) {
        const ModelView& m = app.snap->models[k];
        if (!m.mesh) continue;
        const float rgba[4] = {0.88f, 0.88f, 0.90f, m.solid ? app.solid_opacity : 0.3f};
        if ((rgba[3] >= 1.0f) != opaque_pass) continue;
        app.gfx.draw_model(*m.mesh, m.id, k, m.pose, rgba, m.closed, view, proj, app.cam.eye());
    }
}

// 2D models (polygons): a grey band along the outline on the wall's side, as thick as a wall
// particle (at least 2 px). px: metres per pixel.
void draw_models_2d(App& app, const Mat4& view, const Mat4& proj, float px) {
    if (!app.show_models || app.snap->models.empty()) return;
    static constexpr float kGrey[3] = {0.62f, 0.62f, 0.65f};
    const float width = std::max(2.0f * app.snap->particle_radius, 2.0f * px);
    std::vector<float> tris;
    for (const auto& m : app.snap->models) {
        if (!m.outline) continue;
        const auto band = outline_band(*m.outline, m.pose, m.solid, width);
        tris.insert(tris.end(), band.begin(), band.end());
    }
    app.gfx.draw_triangles(tris, kGrey, view, proj);
}

// The scene's probes as crosses `size` across (m): segments, x, y, z per end; in 2D within the plane.
std::vector<float> probe_crosses(const Snapshot& snap, float size) {
    std::vector<float> lines;
    const float h = 0.5f * size;
    for (const Snapshot::ProbeView& p : snap.probes)
        for (int a = 0; a < snap.dimension; ++a) {
            std::array<float, 3> lo = p.position, hi = p.position;
            lo[std::size_t(a)] -= h, hi[std::size_t(a)] += h;
            lines.insert(lines.end(), {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]});
        }
    return lines;
}

void draw_particles_2d(App& app, const Mat4& view, const Mat4& proj, ColorRange cr, float drawn_r, float aspect, int w) {
    const Snapshot& snap = *app.snap;
    glDisable(GL_DEPTH_TEST);
    // Disks at least 1.5 px across their radius, or a zoomed-out fluid turns into a dotted grid.
    const auto r = app.cam.rect(aspect);
    const float px = (r[2] - r[0]) / float(std::max(w, 1));  // metres per pixel
    const float radius = std::max(drawn_r, 1.5f * px);
    const float wall_radius = std::max(snap.particle_radius, 1.5f * px);
    cr.rim = radius > 4.0f * px ? 0.3f : 0.0f;
    const float grey[3] = {0.45f, 0.45f, 0.48f};
    app.gfx.draw_particles(snap.boundary, wall_radius, false, view, proj, cr, grey);
    draw_models_2d(app, view, proj, px);
    app.gfx.draw_particles(snap.fluid, radius, false, view, proj, cr);
    draw_whitewater(app.gfx, snap, view, proj, px);
    draw_bodies_2d(app, view, proj);
    app.gfx.draw_triangles(thick_lines_2d(load_arrow_lines(app), 3.0f * px), kArrowRgb, view, proj);
    app.gfx.draw_triangles(thick_lines_2d(probe_crosses(snap, 12.0f * px), 2.0f * px), kProbeRgb, view, proj);
}

void draw_particles_3d(App& app, const Mat4& view, const Mat4& proj, const ColorRange& cr, float drawn_r) {
    const Snapshot& snap = *app.snap;
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    const float grey[3] = {0.55f, 0.55f, 0.6f};
    app.gfx.draw_lines(snap.wall_lines, grey, view, proj);
    draw_models_3d(app, view, proj, true);
    draw_bodies_3d(app, view, proj);
    app.gfx.draw_particles(snap.fluid, drawn_r, true, view, proj, cr);
    draw_whitewater(app.gfx, snap, view, proj);
    draw_models_3d(app, view, proj, false);
    draw_mesh(app, view, proj);
    glDisable(GL_DEPTH_TEST);  // the load arrow shows through the fluid and the walls
    app.gfx.draw_lines(load_arrow_lines(app), kArrowRgb, view, proj);
    app.gfx.draw_lines(probe_crosses(snap, 6.0f * snap.particle_radius), kProbeRgb, view, proj);
    draw_drag_line(app, view, proj);
}

}  // namespace

void draw_scene(App& app, int w, int h) {
    glViewport(0, 0, w, h);
    glClearColor(0.13f, 0.14f, 0.16f, 1.0f);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    const float aspect = float(w) / float(std::max(h, 1));
    {  // the scene right of the panel: 3D a lens shift (the frustum is not rotated), 2D the rectangle
        int ww = 0, wh = 0;
        glfwGetWindowSize(app.win, &ww, &wh);
        const float left = ww > 0 ? scene_left(app, ww) / float(ww) : 0.0f;
        app.cam.shift_x = app.cam.is_3d ? left : 0.0f;
        app.cam.free_frac = app.cam.is_3d ? 1.0f : 1.0f - left;
    }
    const Mat4 view = app.cam.view(), proj = app.cam.proj(aspect);
    if (!app.snap) {
        draw_mesh(app, view, proj);
        return;
    }
    if (app.snap->heightfield_mode) {
        glEnable(GL_DEPTH_TEST);
        app.gfx.draw_heightfield(app.snap->hf.view(), view, proj, app.cam.eye());
        return;
    }
    const ColorRange cr = app.colors.color_range(*app.snap);
    const float drawn_r = app.snap->particle_radius * app.colors.size;  // the size slider
    if (app.snap->dimension == 2) draw_particles_2d(app, view, proj, cr, drawn_r, aspect, w);
    else draw_particles_3d(app, view, proj, cr, drawn_r);
}

}  // namespace eddy::view
