// eddy-view: the overlay's status as a few short lines (t, steps, steps/s, particles, frame time), and
// long messages cut to one line (the full text goes to a tooltip). Pure functions: tested without a
// window (ViewerStatus.*).
#pragma once
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim_worker.hpp"

namespace eddy::view {

/// Lines of at most kStatusWidth characters for the overlay: the scene (cut), time and steps, the
/// simulation's speed, particles and dt, the window's frame time, and the density error.
inline constexpr std::size_t kStatusWidth = 40;

/// `text` on one line of at most `width` characters: newlines become spaces, a longer text is cut and
/// ends with "...".
inline std::string one_line(std::string text, std::size_t width = kStatusWidth) {
    for (char& c : text)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (text.size() > width) text = text.substr(0, width > 3 ? width - 3 : 0) + "...";
    return text;
}

inline std::vector<std::string> status_lines(const Snapshot& s, const std::string& method, double frame_ms) {
    std::vector<std::string> out;
    const std::string name = s.scene ? s.scene->name : std::string("synthetic heightfield");
    const double steps_per_s = s.ms_per_step > 0.0 ? 1e3 / s.ms_per_step : 0.0;
    const double fps = frame_ms > 0.0 ? 1e3 / frame_ms : 0.0;
    if (s.heightfield_mode) {
        out.push_back(one_line(s.synthetic ? name : fmt::format("{}, shallow water", name)));
        out.push_back(one_line(fmt::format("{} x {} cells of {:.3g} m", s.hf.nx, s.hf.ny, s.hf.dx)));
    } else {
        out.push_back(one_line(fmt::format("{}, {}, {}D", name, method, s.dimension)));
        out.push_back(one_line(fmt::format("{} particles, dt {:.3g} ms", s.particles, 1e3 * s.dt)));
    }
    out.push_back(one_line(fmt::format("t {:.3f} s, step {}", s.time, s.steps)));
    if (!s.synthetic) out.push_back(one_line(fmt::format("{:.3g} steps/s ({:.3g} ms/step)", steps_per_s, s.ms_per_step)));
    out.push_back(one_line(fmt::format("frame {:.3g} ms ({:.0f} fps)", frame_ms, fps)));
    if (!s.heightfield_mode)
        out.push_back(one_line(fmt::format("density error {:.2f}% (max {:.2f}%)", 100.0 * s.mean_density_error,
                                           100.0 * s.max_density_error)));
    return out;
}

}  // namespace eddy::view
