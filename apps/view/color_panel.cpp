// eddy-view: colour and size controls, the legend (color_panel.hpp).
#include "color_panel.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace eddy::view {

std::array<float, 2> ColorControls::range(const Snapshot& s) const {
    const int f = std::clamp(int(s.field), 0, 2);
    const ColorScale& sc = scales[std::size_t(f)];
    if (sc.locked) return {sc.lo, sc.hi};
    return auto_range(s.field, s.speed_scale * speed_scale_factor, s.scalar_min, s.scalar_max, s.rest_density,
                      s.pressure_scale);
}

ColorRange ColorControls::color_range(const Snapshot& s) const {
    ColorRange cr;
    cr.map = map;
    const auto r = range(s);
    cr.lo = r[0], cr.hi = r[1];
    return cr;
}

bool ColorControls::panel(const Snapshot& s) {
    bool field_changed = false;
    if (ImGui::Combo("colour by", &field, kFieldNames, 3)) field_changed = true;
    int m = int(map);
    if (ImGui::Combo("colour map", &m, kColormapNames, kColormaps)) map = static_cast<Colormap>(m);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("classic: blue-yellow-red (seed 003); viridis; coolwarm (diverging); speed: deep blue to white");
    ColorScale& sc = scales[std::size_t(field)];
    const char* unit = field_unit(static_cast<ColorField>(field), s.dimension);
    if (ImGui::Checkbox("lock range", &sc.locked) && sc.locked) {
        // Start from what is shown now (the automatic range of the field, when the snapshot has it).
        const auto r = int(s.field) == field ? range(s) : std::array<float, 2>{sc.lo, sc.hi};
        sc.lo = r[0], sc.hi = r[1];
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Map a fixed range instead of the automatic one (speed: 0 .. 2 x scale; density, pressure: the frame's min .. max)");
    if (sc.locked) {
        ImGui::InputFloat(fmt::format("min ({})", unit).c_str(), &sc.lo, 0.0f, 0.0f, "%.5g");
        ImGui::InputFloat(fmt::format("max ({})", unit).c_str(), &sc.hi, 0.0f, 0.0f, "%.5g");
        if (!(sc.hi > sc.lo)) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "max must be above min");
    } else if (field == int(ColorField::speed)) {
        ImGui::SliderFloat("speed scale", &speed_scale_factor, 0.05f, 20.0f, "x %.2f", ImGuiSliderFlags_Logarithmic);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("The map's middle at this times half the free-fall speed over the fluid's height (%.3g m/s)",
                              s.speed_scale);
    }
    ImGui::SliderFloat("particle size", &size, 0.25f, 4.0f, "x %.2f r", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drawn radius in particle radii (r = %.3g mm)", 1e3 * s.particle_radius);
    ImGui::SameLine();
    ImGui::Checkbox("legend", &legend);
    return field_changed;
}

void draw_legend(ImDrawList* dl, ImVec2 br, const ColorControls& c, const Snapshot& s) {
    const float bar_w = std::clamp(0.3f * br.x, 120.0f, 220.0f), bar_h = 14.0f, pad = 8.0f;
    const float line = ImGui::GetTextLineHeight();
    const float box_w = bar_w + 2 * pad, box_h = 2 * line + bar_h + 4 * pad / 2 + pad;
    const ImVec2 p0(br.x - box_w - 10.0f, br.y - box_h - 10.0f);
    dl->AddRectFilled(p0, ImVec2(p0.x + box_w, p0.y + box_h), IM_COL32(20, 22, 26, 200), 4.0f);
    const ColorField f = s.field;
    const auto r = c.range(s);
    const bool locked = c.scales[std::size_t(std::clamp(int(f), 0, 2))].locked;
    const std::string title = fmt::format("{} ({}){}", kFieldNames[std::clamp(int(f), 0, 2)], field_unit(f, s.dimension),
                                          locked ? ", locked" : "");
    const ImU32 white = IM_COL32(235, 235, 235, 255);
    dl->AddText(ImVec2(p0.x + pad, p0.y + pad / 2), white, title.c_str());
    const ImVec2 b0(p0.x + pad, p0.y + pad / 2 + line + 4.0f);
    constexpr int kSteps = 32;
    for (int i = 0; i < kSteps; ++i) {
        const auto a = colormap_rgb(c.map, float(i) / kSteps), b = colormap_rgb(c.map, float(i + 1) / kSteps);
        const ImU32 ca = ImGui::GetColorU32(ImVec4(a[0], a[1], a[2], 1)), cb = ImGui::GetColorU32(ImVec4(b[0], b[1], b[2], 1));
        dl->AddRectFilledMultiColor(ImVec2(b0.x + bar_w * i / kSteps, b0.y), ImVec2(b0.x + bar_w * (i + 1) / kSteps, b0.y + bar_h),
                                    ca, cb, cb, ca);
    }
    const float ty = b0.y + bar_h + 3.0f;
    const std::string lo = fmt::format("{:.4g}", r[0]), mid = fmt::format("{:.4g}", 0.5f * (r[0] + r[1])),
                      hi = fmt::format("{:.4g}", r[1]);
    dl->AddText(ImVec2(b0.x, ty), white, lo.c_str());
    const float wm = ImGui::CalcTextSize(mid.c_str()).x, wh = ImGui::CalcTextSize(hi.c_str()).x;
    dl->AddText(ImVec2(b0.x + 0.5f * (bar_w - wm), ty), white, mid.c_str());
    dl->AddText(ImVec2(b0.x + bar_w - wh, ty), white, hi.c_str());
}

}  // namespace eddy::view
