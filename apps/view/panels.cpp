// eddy-view: the overlay and the panel (panels.hpp), one function per section.
#include "panels.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/load_display.hpp"
#include "eddy/settings.hpp"
#include "app.hpp"
#include "recording.hpp"
#include "settings_ui.hpp"
#include "status_text.hpp"
#include "whitewater_view.hpp"

namespace eddy::view {
namespace {

constexpr const char* kMethods[] = {"wcsph", "dfsph", "pbf", "clavet"};

// Overlay: numbers and the colour bar.
void overlay(App& app) {
    const ImGuiIO& io = ImGui::GetIO();
    const auto& snap = app.snap;
    ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x - 10, 10), ImGuiCond_Always, ImVec2(1, 0));
    ImGui::SetNextWindowBgAlpha(0.55f);
    ImGui::Begin("overlay", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing |
                     ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoMove);
    // Short lines (status_text.hpp): the overlay never grows a scrollbar or runs over the scene.
    if (app.file_mesh)
        ImGui::TextUnformatted(one_line(fmt::format("mesh: {} triangles", app.file_mesh->triangles.size() / 3)).c_str());
    if (snap) {
        for (const auto& l : status_lines(*snap, app.method, app.frame_ms)) ImGui::TextUnformatted(l.c_str());
        if (app.worker && !app.worker->playing) ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "paused");
        if (app.rec.on) ImGui::TextColored(ImVec4(1, 0.3f, 0.3f, 1), "recording %d frames", app.rec.index);
    } else {
        ImGui::Text("frame %.3g ms (%.0f fps)", app.frame_ms, app.fps);
    }
    ImGui::End();
    // The legend, in the scene (the background draw list is drawn before screenshots are taken).
    if (snap && !snap->heightfield_mode && app.colors.legend)
        draw_legend(ImGui::GetBackgroundDrawList(), io.DisplaySize, app.colors, *snap);
}

// Play, step, reset, screenshot, record; then the status and the last message on one short line each
// (the whole text in the tooltip).
void transport(App& app) {
    SimWorker& worker = *app.worker;
    if (ImGui::Button(worker.playing ? "Pause" : "Play")) worker.playing = !worker.playing;
    ImGui::SameLine();
    if (ImGui::Button("Step")) worker.playing = false, worker.request_step();
    ImGui::SameLine();
    if (ImGui::Button("Reset")) worker.reset(app.opt.scene, app.method);
    ImGui::SameLine();
    if (ImGui::Button("Screenshot")) request_screenshot(app.rec);
    ImGui::SameLine();
    if (ImGui::Button(app.rec.on ? "Stop rec." : "Record")) toggle_recording(app.rec, app.message);
    // Status and messages on one short line each; the whole text in the tooltip.
    const std::string* texts[2] = {app.snap ? &app.snap->status : nullptr, &app.message};
    for (const std::string* t : texts) {
        if (!t || t->empty()) continue;
        ImGui::TextUnformatted(one_line(*t, 46).c_str());
        if (ImGui::IsItemHovered() && t->size() > 46) ImGui::SetTooltip("%s", t->c_str());
    }
}

void scene_combo(App& app) {
    if (ImGui::BeginCombo("scene", app.scene_name.c_str())) {
        for (const auto& s : app.scenes)
            if (ImGui::Selectable(s.name.c_str(), s.name == app.scene_name)) {
                app.opt.scene = s.name;
                app.worker->reset(s.name, "");
            }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The bundled scenes (eddy scenes)");
}

void method_combo(App& app) {
    if (ImGui::BeginCombo("method", app.method.c_str())) {
        for (const char* m : kMethods)
            if (ImGui::Selectable(m, app.method == m)) app.worker->reset(app.opt.scene, m);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Restarts the scene with this method: the scene's settings it has with the same key "
                          "and unit are kept, the others take its defaults (listed in the status)");
}

// The reconstructed surface (3D): on or off, isotropic or anisotropic kernels.
void surface_controls(SimWorker& worker) {
    bool on = worker.surface;
    if (ImGui::Checkbox("reconstructed surface", &on)) {
        worker.surface = on;
        worker.refresh();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("eddy::reconstruct_surface on the simulation thread (every 250 ms while playing)");
    if (on) {
        ImGui::SameLine();
        bool aniso = worker.surface_anisotropic;
        if (ImGui::Checkbox("anisotropic", &aniso)) {
            worker.surface_anisotropic = aniso;
            worker.refresh();
        }
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Anisotropic kernels (Yu & Turk 2013): flat surfaces flat, thin sheets kept "
                              "(eddy mesh --anisotropic)");
    }
}

// How the scene looks: colours (color_panel.hpp), the surface, the mesh, whitewater, the models.
void look_controls(App& app) {
    const auto& snap = app.snap;
    if (snap && app.colors.panel(*snap)) set_color_field(app, app.colors.field);
    if (SimWorker::kHasSurface && snap && snap->dimension == 3) surface_controls(*app.worker);
    if (app.file_mesh || (snap && snap->surface)) {
        ImGui::SameLine();
        ImGui::Checkbox("show mesh", &app.show_mesh);
    }
    if (snap) whitewater_panel(*app.worker, *snap);
    if (snap && !snap->models.empty()) {
        ImGui::Checkbox("show models", &app.show_models);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The scene's wall meshes (3D) and polygons (2D)");
        if (snap->dimension == 3 && app.show_models) {
            ImGui::SameLine();
            ImGui::SetNextItemWidth(90);
            ImGui::SliderFloat("opacity", &app.solid_opacity, 0.1f, 1.0f, "%.2f");
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("Of obstacle meshes (1: opaque); mesh containers are drawn at 0.3");
        }
    }
}

// The fluid's load on the selected boundary object (issue 28): force and torque, the mean over the
// steps since the previous snapshot, and the arrow's switch.
void loads_panel(App& app) {
    if (!ImGui::CollapsingHeader("Loads on the walls", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const Snapshot& snap = *app.snap;
    const std::size_t objects = snap.pivots.size();
    app.load_object = std::clamp(app.load_object, 0, int(objects) - 1);
    if (ImGui::BeginCombo("object", object_label(app, std::size_t(app.load_object)).c_str())) {
        for (std::size_t k = 0; k < objects; ++k)
            if (ImGui::Selectable(object_label(app, k).c_str(), int(k) == app.load_object)) app.load_object = int(k);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The scene's boundaries, in order");
    const bool d2 = snap.dimension == 2;
    if (std::size_t(app.load_object) >= snap.loads.size()) {
        ImGui::TextDisabled("no loads yet (no step, or %s gathers none)", app.method.c_str());
        return;
    }
    const eddy::ObjectLoad& l = snap.loads[std::size_t(app.load_object)];
    const double f = std::sqrt(l.force[0] * l.force[0] + l.force[1] * l.force[1] + l.force[2] * l.force[2]);
    if (d2) {
        ImGui::Text("force (N/m): %.4g, %.4g", l.force[0], l.force[1]);
        ImGui::Text("torque (N m/m): %.4g", l.torque[2]);
    } else {
        ImGui::Text("force (N): %.4g, %.4g, %.4g", l.force[0], l.force[1], l.force[2]);
        ImGui::Text("torque (N m): %.4g, %.4g, %.4g", l.torque[0], l.torque[1], l.torque[2]);
    }
    ImGui::Text("|F| %.4g %s = %.3f x the fluid's weight", f, d2 ? "N/m" : "N",
                snap.fluid_weight > 0 ? f / snap.fluid_weight : 0.0);
    ImGui::Checkbox("arrow", &app.show_load_arrow);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("From the object's pivot along the force; the fluid's weight is a quarter of the scene's "
                          "largest extent (at most %.0f weights long)", kArrowMaxWeights);
}

// The scene's probes (its key "probes"): the fluid's pressure and velocity at each, as eddy run's probes.csv
// reads them every frame; a dry probe (no particle within h) reads zeros.
void probes_panel(const Snapshot& snap) {
    if (!ImGui::CollapsingHeader("Probes", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const bool d2 = snap.dimension == 2;
    if (!ImGui::BeginTable("probes", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
    ImGui::TableSetupColumn("probe");
    ImGui::TableSetupColumn(d2 ? "p (N/m)" : "p (Pa)");
    ImGui::TableSetupColumn("velocity (m/s)");
    ImGui::TableHeadersRow();
    for (const Snapshot::ProbeView& p : snap.probes) {
        const auto& v = p.reading.velocity;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(p.name.c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(d2 ? "at (%.4g, %.4g) m" : "at (%.4g, %.4g, %.4g) m", p.position[0], p.position[1], p.position[2]);
        ImGui::TableNextColumn();
        ImGui::Text("%.4g", p.reading.pressure);
        ImGui::TableNextColumn();
        if (d2) ImGui::Text("%.3g, %.3g", v[0], v[1]);
        else ImGui::Text("%.3g, %.3g, %.3g", v[0], v[1], v[2]);
    }
    ImGui::EndTable();
}

// The last batch's steps by named pass (StepStats::passes): where a step's time goes, as summary.json's
// "passes" says after a run.
void passes_panel(const Snapshot& snap) {
    if (!ImGui::CollapsingHeader("Step passes")) return;
    double total = 0.0;
    for (const auto& [name, ms] : snap.pass_ms) total += ms;
    if (!ImGui::BeginTable("passes", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
    ImGui::TableSetupColumn("pass");
    ImGui::TableSetupColumn("ms/step");
    ImGui::TableSetupColumn("share");
    ImGui::TableHeadersRow();
    for (const auto& [name, ms] : snap.pass_ms) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(name.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.3g", ms);
        ImGui::TableNextColumn();
        ImGui::Text("%.0f%%", total > 0.0 ? 100.0 * ms / total : 0.0);
    }
    ImGui::EndTable();
}

// The selected body's numbers: mass, position, velocities, the fluid's force on it.
void body_numbers(const Snapshot& snap, const BodyView& b) {
    const bool d2 = snap.dimension == 2;
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
    if (b.object < snap.loads.size()) {
        const auto& f = snap.loads[b.object].force;
        if (d2) ImGui::Text("fluid force (N/m): %.4g, %.4g", f[0], f[1]);
        else ImGui::Text("fluid force (N): %.4g, %.4g, %.4g", f[0], f[1], f[2]);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The mean over the last 0.1 s of simulated time (as the walls' loads)");
    } else {
        ImGui::TextDisabled("fluid force: none yet");
    }
}

// The panel's bodies: count, drag mode, drops, and the selected body's numbers.
void bodies_panel(App& app) {
    const Snapshot& snap = *app.snap;
    if (!ImGui::CollapsingHeader("Bodies", snap.bodies.empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen)) return;
    const auto& bs = snap.bodies;
    ImGui::Text("%zu bodies", bs.size());
    ImGui::SameLine();
    if (ImGui::Checkbox("drag bodies (G)", &app.bodies_mode) && !app.bodies_mode) end_body_drag(app);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Left drag on a body pulls it (a spring to the cursor); Ctrl + left drag does it in any mode");
    // The buttons drop above the middle of the scene (the keys: at the cursor).
    const std::array<double, 3> top{0.5 * (snap.lo[0] + snap.hi[0]), snap.lo[1] + 0.75 * (snap.hi[1] - snap.lo[1]),
                                    0.5 * (snap.lo[2] + snap.hi[2])};
    if (ImGui::Button("Drop ball (N)")) app.worker->drop_body(true, top);
    ImGui::SameLine();
    if (ImGui::Button("Drop box (M)")) app.worker->drop_body(false, top);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%.0f particle radii across, density %.0f kg/m^3; the keys drop at the cursor",
                          SimWorker::kDropSizeRadii, SimWorker::kDropDensity);
    if (bs.empty()) return;
    app.selected_body = std::clamp(app.selected_body, 0, int(bs.size()) - 1);
    auto label = [&](std::size_t k) {
        return fmt::format("body {}: {}", k, bs[k].geometry ? bs[k].geometry->shape : std::string("?"));
    };
    if (ImGui::BeginCombo("body", label(std::size_t(app.selected_body)).c_str())) {
        for (std::size_t k = 0; k < bs.size(); ++k)
            if (ImGui::Selectable(label(k).c_str(), int(k) == app.selected_body)) app.selected_body = int(k);
        ImGui::EndCombo();
    }
    body_numbers(snap, bs[std::size_t(app.selected_body)]);
}

void gravity_panel(App& app) {
    if (!ImGui::CollapsingHeader("Gravity", ImGuiTreeNodeFlags_DefaultOpen)) return;
    bool g = ImGui::SliderFloat("strength (m/s^2)", &app.g_strength, 0.0f, 50.0f, "%.3g");
    if (app.snap && app.snap->dimension == 2) {
        g |= ImGui::SliderFloat("direction (deg)", &app.g_angle, -180.0f, 180.0f, "%.0f");
    } else {
        g |= ImGui::SliderFloat("elevation (deg)", &app.g_angle, -90.0f, 90.0f, "%.0f");
        g |= ImGui::SliderFloat("azimuth (deg)", &app.g_azimuth, -180.0f, 180.0f, "%.0f");
    }
    if (g) send_settings(app);
}

void interaction_panel(App& app) {
    if (!ImGui::CollapsingHeader("Interaction", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const auto& snap = app.snap;
    const float ext = snap ? std::max({snap->hi[0] - snap->lo[0], snap->hi[1] - snap->lo[1], 1e-3f}) : 1.0f;
    ImGui::SliderFloat("brush radius (m)", &app.mouse.radius, 0.005f * ext, 0.5f * ext, "%.3g", ImGuiSliderFlags_Logarithmic);
    ImGui::SliderFloat("brush rate (1/s)", &app.mouse.rate, 1.0f, 200.0f, "%.0f", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Particles in the brush take the mouse's velocity at this rate (a velocity target: "
                          "the same at any particle count)");
    if (ImGui::Button("Add block (B)")) app.worker->add_block();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The button: above the middle; the key B: at the cursor");
    ImGui::TextDisabled("%s", app.cam.is_3d ? "left: stir, right: orbit, wheel: zoom" : "left: stir, right: pan, wheel: zoom");
    ImGui::TextDisabled("Ctrl + left (or G): drag a body");
}

// The emitters' list: each one's rate, volume rate and count, a stop button, and what was removed.
void emitter_list(SimWorker& worker, const Snapshot& snap) {
    const bool two = snap.dimension == 2;
    for (std::size_t k = 0; k < snap.emitters.size(); ++k) {
        const auto& e = snap.emitters[k];
        // Volume rate in litres per second (3D) or m^2/s (2D, per metre of depth).
        ImGui::Text("%zu %s %.0f/s %.3g %s  %llu in", k, e.on ? "on " : "off", e.rate,
                    two ? e.volume_rate : 1e3 * e.volume_rate, two ? "m2/s" : "L/s",
                    static_cast<unsigned long long>(e.emitted));
        if (e.on) {
            ImGui::SameLine();
            if (ImGui::SmallButton(fmt::format("stop##e{}", k).c_str())) worker.stop_emitter(int(k));
        }
        if (e.blocked && ImGui::IsItemHovered())
            ImGui::SetTooltip("%llu held back (fluid at the nozzle)", static_cast<unsigned long long>(e.blocked));
    }
    if (snap.removed_outflow + snap.removed_escaped + snap.drained > 0)
        ImGui::Text("removed: %llu outflow, %llu escaped, %llu drained", static_cast<unsigned long long>(snap.removed_outflow),
                    static_cast<unsigned long long>(snap.removed_escaped), static_cast<unsigned long long>(snap.drained));
}

void emitters_panel(App& app) {
    if (!(!heightfield(app) && ImGui::CollapsingHeader("Emitters"))) return;
    ImGui::SliderFloat("jet speed (m/s)", &app.emitter_speed, 0.1f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    ImGui::SliderFloat("nozzle (radii)", &app.emitter_size, 2.0f, 40.0f, "%.0f");
    ImGui::TextDisabled("E: a tap at the cursor, Shift+E: stop them");
    if (app.snap) emitter_list(*app.worker, *app.snap);
}

// The particle method's settings, from its table (settings_ui.hpp), checked and sent on a change.
void settings_panel(App& app) {
    const std::string& method = app.method;
    if (!ImGui::CollapsingHeader(fmt::format("Settings: {}", method).c_str())) return;
    bool changed = false;
    if (method == "wcsph") changed = settings_controls(app.wcsph, eddy::wcsph_fields());
    if (method == "dfsph") changed = settings_controls(app.dfsph, eddy::dfsph_fields());
    if (method == "pbf") changed = settings_controls(app.pbf, eddy::pbf_fields());
    if (method == "clavet") changed = settings_controls(app.clavet, eddy::clavet_fields());
    if (changed) {
        try {  // the table's ranges again, and the solver's own checks on the worker
            if (method == "wcsph") eddy::validate(app.wcsph, eddy::wcsph_fields(), "settings");
            if (method == "dfsph") eddy::validate(app.dfsph, eddy::dfsph_fields(), "settings");
            if (method == "pbf") eddy::validate(app.pbf, eddy::pbf_fields(), "settings");
            if (method == "clavet") eddy::validate(app.clavet, eddy::clavet_fields(), "settings");
            app.settings_error.clear();
            send_settings(app);
        } catch (const eddy::InputError& e) {
            app.settings_error = e.what();
        }
    }
    if (!app.settings_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", app.settings_error.c_str());
}

// What the latest snapshot holds beside the fluid: the walls' loads, the bodies, the probes, the passes.
void snapshot_panels(App& app) {
    if (!app.snap->pivots.empty()) loads_panel(app);
    bodies_panel(app);
    if (!app.snap->probes.empty()) probes_panel(*app.snap);
    if (!app.snap->pass_ms.empty()) passes_panel(*app.snap);
}

// The sections of a particle scene.
void particle_panels(App& app) {
    method_combo(app);
    look_controls(app);
    if (app.snap) snapshot_panels(app);
    gravity_panel(app);
    interaction_panel(app);
    emitters_panel(app);
    settings_panel(app);
}

// A heightfield: the synthetic demo's note, or shallow water's gravity and settings.
void heightfield_panel(App& app) {
    if (app.snap->synthetic) ImGui::TextWrapped("Synthetic heightfield (a test pattern for the shallow-water renderer).");
#ifdef EDDY_VIEW_HAS_SHALLOW_WATER
    if (!app.snap->synthetic && app.method == "shallow_water") {
        if (ImGui::SliderFloat("gravity (m/s^2)", &app.g_strength, 0.1f, 30.0f, "%.2f")) send_settings(app);
        if (ImGui::CollapsingHeader("Settings: shallow_water")) {
            if (settings_controls(app.water, eddy::shallow_water_fields())) {
                try {
                    eddy::validate(app.water, eddy::shallow_water_fields(), "settings");
                    app.settings_error.clear();
                    send_settings(app);
                } catch (const eddy::InputError& e) {
                    app.settings_error = e.what();
                }
            }
            if (!app.settings_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", app.settings_error.c_str());
        }
    }
#endif
    ImGui::TextWrapped("Left click: drop water; Shift + left click: drop ink. Right drag: orbit; wheel: zoom.");
}

// The panel: the window's full height at the left, the scene framed right of it.
void panel(App& app) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(float(kPanelWidth) - 15, io.DisplaySize.y - 20), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.8f);
    ImGui::Begin("eddy");
    app.panel_right = ImGui::GetWindowPos().x < 40.0f ? ImGui::GetWindowPos().x + ImGui::GetWindowSize().x + 5.0f : 0.0f;
    ImGui::PushItemWidth(150);
    transport(app);
    if (app.snap && !app.snap->synthetic) scene_combo(app);
    if (!heightfield(app)) particle_panels(app);
    else heightfield_panel(app);
    ImGui::TextDisabled("keys: Space play/pause, S step, R reset,\nB block at the cursor, N ball, M box,\nG drag bodies, C colour, P screenshot,\nV record, H hide panel, Q quit");
    ImGui::PopItemWidth();
    ImGui::End();
}

}  // namespace

void draw_ui(App& app) {
    overlay(app);
    if (!app.show_ui || !app.worker) return;
    panel(app);
}

}  // namespace eddy::view
