#include "sim/run_support.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/io.hpp"

namespace eddy::detail {

void prepare_frames_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale, int keep_below) {
    std::error_code ec;
    std::filesystem::create_directories(out / "frames", ec);
    if (ec || !std::filesystem::is_directory(out / "frames"))
        throw InputError(fmt::format("{}: cannot create the output folder: {}", out.string(),
                                     ec ? ec.message() : "a file is in the way"));
    for (const auto& e : std::filesystem::directory_iterator(out / "frames")) {
        const std::string name = e.path().filename().string();
        for (const char* p : stale) {
            if (name.rfind(p, 0) != 0) continue;
            // A resumed run keeps the frames its checkpoint lists: those numbered below keep_below.
            const std::size_t len = std::strlen(p);
            const bool numbered = name.size() >= len + 5 &&
                                  std::all_of(name.begin() + len, name.begin() + len + 5, [](char c) { return c >= '0' && c <= '9'; });
            if (keep_below > 0 && (!numbered || std::stoi(name.substr(len, 5)) < keep_below)) break;
            std::filesystem::remove(e.path());
            break;
        }
    }
}

void start_run_folder(const std::filesystem::path& out, const nlohmann::json& what, bool resumed) {
    std::error_code ec;
    if (!resumed) {
        for (const char* stale : {"particles.pvd", "grid.pvd", "walls.pvd", "surface.pvd", "checkpoint.eddy", "last_frame.png"})
            std::filesystem::remove(out / stale, ec);
        // A distributed run's checkpoint pieces (checkpoint_sSTEP_pRANK.eddy).
        for (const auto& e : std::filesystem::directory_iterator(out, ec)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("checkpoint_s", 0) == 0 && e.path().extension() == ".eddy") std::filesystem::remove(e.path(), ec);
        }
    }
    nlohmann::json j = what;
    j["status"] = "running";
    j["message"] = resumed ? "resumed from checkpoint.eddy; running (or killed before it could finish)"
                           : "running (or killed before it could finish)";
    io::write_json(out / "summary.json", j);
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
