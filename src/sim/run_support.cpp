#include "sim/run_support.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "eddy/error.hpp"

namespace eddy::detail {

void prepare_frames_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale) {
    std::error_code ec;
    std::filesystem::create_directories(out / "frames", ec);
    if (ec || !std::filesystem::is_directory(out / "frames"))
        throw InputError(fmt::format("{}: cannot create the output folder: {}", out.string(),
                                     ec ? ec.message() : "a file is in the way"));
    for (const auto& e : std::filesystem::directory_iterator(out / "frames")) {
        const std::string name = e.path().filename().string();
        if (std::any_of(stale.begin(), stale.end(), [&](const char* p) { return name.rfind(p, 0) == 0; }))
            std::filesystem::remove(e.path());
    }
}

Progress make_progress(double time, double time0, double end_time, std::uint64_t steps, std::uint64_t max_steps,
                       std::size_t count, const char* counted, double wall_seconds, int frames, bool finished) {
    Progress p;
    p.time = time;
    p.end_time = end_time;
    p.steps = steps;
    p.max_steps = max_steps;
    p.particles = count;
    p.counted = counted;
    p.wall_seconds = wall_seconds;
    p.steps_per_second = wall_seconds > 0 ? double(steps) / wall_seconds : 0.0;
    double frac = end_time > time0 ? (time - time0) / (end_time - time0) : 1.0;
    if (max_steps > 0) frac = std::max(frac, double(steps) / double(max_steps));
    p.eta_seconds = frac > 0 ? wall_seconds * (1.0 - frac) / frac : 0.0;
    p.frames_written = frames;
    p.finished = finished;
    return p;
}

}  // namespace eddy::detail
