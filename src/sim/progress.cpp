#include "eddy/progress.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace eddy {

std::string format_duration(double s) {
    if (!(s >= 0) || s > 1e7) return "--";
    const int t = static_cast<int>(s + 0.5);
    if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t / 60) % 60);
    if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
    return fmt::format("{}s", t);
}

double progress_fraction(const Progress& p) {
    double frac = p.end_time > 0 ? p.time / p.end_time : 0.0;
    if (p.max_steps > 0) frac = std::max(frac, double(p.steps) / double(p.max_steps));
    return std::clamp(frac, 0.0, 1.0);
}

std::string progress_line(const Progress& p) {
    return fmt::format("t = {:.4f}/{:.4g} s  step {}  {:.0f} steps/s  {} {}  {} frames  ETA {}", p.time, p.end_time,
                       p.steps, p.steps_per_second, p.particles, p.counted, p.frames_written,
                       p.finished ? "0s" : format_duration(p.eta_seconds));
}

std::string ProgressText::operator()(const Progress& p) {
    const double frac = progress_fraction(p);
    const int percent = static_cast<int>(frac * 100);
    if (m_terminal) {
        constexpr int kWidth = 24;
        const int filled = static_cast<int>(frac * kWidth);
        m_open = !p.finished;
        return fmt::format("\r\033[2K[{}{}] {:3d}% {}{}", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                           percent, progress_line(p), p.finished ? "\n" : "");
    }
    const int decile = static_cast<int>(frac * 10.0);
    if (decile > m_last_decile || (p.finished && m_last_decile < 10)) {
        m_last_decile = p.finished ? 10 : decile;
        return fmt::format("progress {:3d}%: {}\n", percent, progress_line(p));
    }
    return {};
}

}  // namespace eddy
