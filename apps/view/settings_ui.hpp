// eddy-view: live ImGui controls generated from a settings table (Field<S>): the same table that drives
// the scene loader, --set and --help. One control per field: a checkbox, a slider (finite range,
// logarithmic when it spans decades), a drag box (open range), a whole-number box or a list of choices.
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <span>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <imgui.h>

#include "eddy/settings.hpp"

namespace eddy::view {

/// Draws the controls; returns true when a value changed (already clamped to the table's range).
template <class S>
bool settings_controls(S& s, std::span<const Field<S>> table) {
    bool changed = false;
    for (const auto& f : table) {
        ImGui::PushID(f.key);
        const std::string label = *f.unit ? fmt::format("{} ({})", f.key, f.unit) : std::string(f.key);
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(s.*member)>;
                if constexpr (std::is_same_v<T, bool>) {
                    changed |= ImGui::Checkbox(label.c_str(), &(s.*member));
                } else if constexpr (std::is_same_v<T, std::string>) {
                    if (f.choices.empty()) {
                        ImGui::TextUnformatted(fmt::format("{}: {}", label, s.*member).c_str());
                    } else if (ImGui::BeginCombo(label.c_str(), (s.*member).c_str())) {
                        for (auto c : f.choices) {
                            const std::string choice(c);
                            if (ImGui::Selectable(choice.c_str(), choice == s.*member)) {
                                s.*member = choice;
                                changed = true;
                            }
                        }
                        ImGui::EndCombo();
                    }
                } else if constexpr (std::is_same_v<T, int>) {
                    int v = s.*member;
                    if (ImGui::InputInt(label.c_str(), &v)) {
                        const double lo = f.min_exclusive ? f.min + 1 : f.min;
                        v = static_cast<int>(std::clamp<double>(v, std::max(lo, -2e9), std::min(f.max, 2e9)));
                        if (v != s.*member) s.*member = v, changed = true;
                    }
                } else {
                    float v = s.*member;
                    const bool finite = std::isfinite(f.min) && std::isfinite(f.max);
                    float lo = std::isfinite(f.min) ? static_cast<float>(f.min) : -FLT_MAX;
                    const float hi = std::isfinite(f.max) ? static_cast<float>(f.max) : FLT_MAX;
                    if (f.min_exclusive) lo = std::nextafter(lo, hi);
                    bool edited;
                    if (finite && hi > lo) {
                        const bool log = lo > 0 && hi / lo >= 100.0f;
                        edited = ImGui::SliderFloat(label.c_str(), &v, lo, hi, "%.4g",
                                                    ImGuiSliderFlags_AlwaysClamp | (log ? ImGuiSliderFlags_Logarithmic : 0));
                    } else {
                        const float speed = std::max(std::abs(v) * 0.01f, 1e-4f);
                        edited = ImGui::DragFloat(label.c_str(), &v, speed, lo, hi, "%.4g", ImGuiSliderFlags_AlwaysClamp);
                    }
                    if (edited && v != s.*member) s.*member = v, changed = true;
                }
            },
            f.member);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.doc);
        ImGui::PopID();
    }
    return changed;
}

}  // namespace eddy::view
