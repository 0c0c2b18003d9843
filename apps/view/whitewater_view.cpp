// eddy-view: the whitewater's panel line and drawing (whitewater_view.hpp).
#include "whitewater_view.hpp"

#include <algorithm>

#include <imgui.h>

#include "gfx.hpp"

namespace eddy::view {

void whitewater_panel(SimWorker& worker, const Snapshot& snap) {
    bool on = worker.whitewater;
    if (ImGui::Checkbox("whitewater", &on)) {
        worker.whitewater = on;
        worker.refresh();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Spray (white), foam (grey-blue) and bubbles (cyan) from the fluid's trapped air, wave crests and "
                          "kinetic energy (Ihmsen et al. 2012), stepped after every fluid step (eddy::step_whitewater, default "
                          "settings; docs/whitewater.md)");
    if (!on || !snap.whitewater) return;
    const WhitewaterCounts& c = snap.whitewater_counts;
    const char* names[3] = {"spray", "foam", "bubbles"};
    const unsigned long long n[3] = {c.spray, c.foam, c.bubbles};
    for (int t = 0; t < 3; ++t) {
        if (t > 0) ImGui::SameLine();
        ImGui::ColorButton(names[t], ImVec4(kDiffuseRgb[t][0], kDiffuseRgb[t][1], kDiffuseRgb[t][2], 1.0f),
                           ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
        ImGui::SameLine();
        ImGui::Text("%llu %s", n[t], names[t]);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("since the start: %llu generated, %llu expired (foam), %llu escaped, %llu capped",
                          static_cast<unsigned long long>(c.generated), static_cast<unsigned long long>(c.expired),
                          static_cast<unsigned long long>(c.escaped), static_cast<unsigned long long>(c.capped));
}

void draw_whitewater(Renderer& gfx, const Snapshot& snap, const Mat4& view, const Mat4& proj, float min_radius) {
    if (!snap.whitewater || snap.diffuse.empty()) return;
    const auto parts = diffuse_by_type(snap.diffuse);
    const float radius = std::max(kDiffuseRadii * snap.particle_radius, min_radius);
    ColorRange flat;
    flat.rim = 0.0f;
    for (int t = 0; t < 3; ++t)
        if (!parts[std::size_t(t)].empty())
            gfx.draw_particles(parts[std::size_t(t)], radius, snap.dimension == 3, view, proj, flat, kDiffuseRgb[t]);
}

}  // namespace eddy::view
