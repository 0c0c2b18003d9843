// The one check of what a run is asked (issue 41): every front end (the CLI, Python's run(), the library's
// run() itself) refuses the same options for the same reasons, each message in the front end's own words
// (OptionSpelling: the CLI's flags, Python's keywords).
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "eddy/simulation.hpp"

namespace eddy {

namespace {

// The caller's spelling with RunOptions' own names where it leaves a member unset.
struct Say {
    const OptionSpelling& s;
    std::string given(std::string_view key, std::string_view value) const {
        if (s.given) return s.given(key, value);
        return value == "true" ? std::string(key) : fmt::format("{} = {}", key, value);
    }
    std::string name(std::string_view key) const { return s.name ? s.name(key) : std::string(key); }
    std::string suggest(std::string_view key, std::string_view value) const {
        if (s.suggest) return s.suggest(key, value);
        return value == "true" ? std::string(key) : fmt::format("{} = {}", key, value);
    }
    std::string value(std::string_view key, std::string_view v) const { return s.value ? s.value(key, v) : std::string(v); }
    std::string values(std::string_view key, std::initializer_list<const char*> vs) const {
        std::string out;
        for (const char* v : vs) out += (out.empty() ? "" : ", ") + value(key, v);
        return out;
    }
    // A message in the caller's words: its context, then the text.
    [[noreturn]] void refuse(const std::string& text) const { throw InputError(s.context + text); }
};

bool one_of(const std::string& v, const std::vector<std::string>& allowed) {
    return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

// until, fps and checkpoint_every: finite, >= 0 (0: the scene's, or none), at most the clock's range.
void check_times(const RunOptions& o, const Say& say) {
    if (!(std::isfinite(o.until) && o.until >= 0.0 && o.until <= kMaxDuration))
        say.refuse(fmt::format("{}: allowed: 0 (the scene's duration) or a time > 0 and <= 1e9 (s)",
                               say.given("until", fmt::format("{}", o.until))));
    if (!(std::isfinite(o.fps) && o.fps >= 0.0 && o.fps <= kMaxFps))
        say.refuse(fmt::format("{}: allowed: 0 (the scene's output.fps) or frames per second > 0 and <= 1e6",
                               say.given("fps", fmt::format("{}", o.fps))));
    if (!(std::isfinite(o.checkpoint_every) && o.checkpoint_every >= 0.0 && o.checkpoint_every <= kMaxDuration))
        say.refuse(fmt::format("{}: allowed: 0 (at the end only) or a time > 0 and <= 1e9 (s)",
                               say.given("checkpoint_every", fmt::format("{}", o.checkpoint_every))));
}

// What a grid does not write: surfaces of particles, their attributes, whitewater, the walls' pressure.
void check_grid_outputs(const Scene& scene, const RunOptions& o, const Say& say) {
    if (o.mesh)
        say.refuse(fmt::format("{}: {} is a grid; its water surface is written with {} or {}", say.given("mesh", "true"),
                               scene.where(), say.suggest("formats", "obj"), say.suggest("formats", "ply")));
    if (!o.mesh_attributes.empty())
        say.refuse(fmt::format("{}: {} is a grid; allowed with particle scenes' {}",
                               say.given("mesh_attributes", text_excerpt(o.mesh_attributes[0], 40)), scene.where(),
                               say.suggest("mesh", "true")));
    if (o.whitewater)
        say.refuse(fmt::format("{}: {} is a grid; allowed with particle scenes", say.given("whitewater", "true"), scene.where()));
    if (o.wall_pressure)
        say.refuse(fmt::format("{}: {} is a grid (its walls are cells, not particles); allowed with particle scenes",
                               say.given("wall_pressure", "true"), scene.where()));
}

// A particle run's surface: its format, its attributes (PLY and VTP carry them), no decimated 2D contours.
void check_particle_outputs(const Scene& scene, const RunOptions& o, const Say& say) {
    if (!one_of(o.mesh_format, {"obj", "ply", "vtp"}))
        say.refuse(fmt::format("{}: allowed: {}", say.given("mesh_format", text_excerpt(o.mesh_format, 40)),
                               say.values("mesh_format", {"obj", "ply", "vtp"})));
    for (const auto& a : o.mesh_attributes) {
        if (!one_of(a, {"velocity", "density", "pressure"}))
            say.refuse(fmt::format("{}: allowed: {}", say.given("mesh_attributes", text_excerpt(a, 40)),
                                   say.values("mesh_attributes", {"velocity", "density", "pressure"})));
        if (!o.mesh || o.mesh_format == "obj")
            say.refuse(fmt::format("{}: needs {} with {} or {} (OBJ files have no per-vertex fields)",
                                   say.given("mesh_attributes", a), say.suggest("mesh", "true"),
                                   say.suggest("mesh_format", "ply"), say.value("mesh_format", "vtp")));
    }
    if (scene.dimension == 2 && o.up != UpAxis::y)
        say.refuse(fmt::format("{}: a 2D scene is written in the x-y plane (z = 0); allowed: {}", say.given("up", name(o.up)),
                               say.value("up", "y")));
    const SurfaceSettings& m = o.mesh_settings;
    if (o.mesh && scene.dimension == 2 && (m.decimate_error > 0.0f || m.decimate_ratio > 0.0f))
        say.refuse(fmt::format("{}, {}: 2D contour lines are not decimated; allowed: with 3D scenes",
                               say.name("mesh_decimate_error"), say.name("mesh_decimate_ratio")));
}

}  // namespace

void check_run_options(const Scene& scene, double time, const RunOptions& opts) {
    const Say say{opts.spelling};
    check_times(opts, say);
    if (opts.resume) return;  // the checkpoint's outputs and end (the run checks them as it reads the record)
    const bool grid = scene.method == "shallow_water";
    const std::vector<std::string> formats =
        grid ? std::vector<std::string>{"vti", "csv", "obj", "ply"} : std::vector<std::string>{"vtk", "csv", "ply"};
    for (const auto& f : opts.formats.empty() ? scene.output.formats : opts.formats)
        if (!one_of(f, formats))
            say.refuse(fmt::format("{} is not a {} format; allowed: {}", say.given("formats", text_excerpt(f, 40)),
                                   grid ? "grid" : "particle", fmt::join(formats, ", ")));
    if (grid) check_grid_outputs(scene, opts, say);
    else check_particle_outputs(scene, opts, say);
    // The same tolerance as a resumed run's "already at t": the end lands on `until` exactly.
    const double end = opts.until > 0.0 ? opts.until : scene.duration;
    if (time > end + 1e-9 * std::max(1.0, end)) {
        if (opts.until > 0.0)
            say.refuse(fmt::format("{}: the simulation is at t = {:.6g} s already; allowed: a later time",
                                   say.given("until", fmt::format("{:g} s", opts.until)), time));
        say.refuse(fmt::format("{}: the simulation is at t = {:.6g} s already; allowed: a later {}",
                               say.given("until", fmt::format("0 (the scene's duration, {:g} s)", scene.duration)), time,
                               say.name("until")));
    }
}

}  // namespace eddy
