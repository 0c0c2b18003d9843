// `eddy whitewater RUN_DIR`: the whitewater of a finished run, from its frames. Between two frames the
// fluid is interpolated linearly (particles matched by id) over `substeps` whitewater steps.
#include <algorithm>
#include <optional>
#include <cmath>
#include <new>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/whitewater.hpp"
#include "sim/run_support.hpp"

namespace eddy {

namespace {

namespace fs = std::filesystem;

struct FrameFile {
    int index = 0;
    double time = 0.0;
    std::string file;  // relative to the run folder
    bool empty = false;  // summary.json says it holds no particles (emitters yet to pour): not read
};

struct RunInfo {
    int dimension = 3;
    float particle_radius = 0.0f;
    UpAxis up = UpAxis::y;
    std::vector<FrameFile> frames;
    nlohmann::json scene_document;  // the scene as run (eddy run writes it), or null
    std::string scene_file, scene_name;
};

// summary.json's particle_radius: get<float>() of 1e300 is undefined (it gave inf, and every diffuse particle
// was written at -inf).
float summary_radius(const nlohmann::json& r, const std::string& where) {
    if (!r.is_number() || !(r.get<double>() >= 1e-9 && r.get<double>() <= 1e6))
        throw InputError(fmt::format("{}: key 'particle_radius' = {}: allowed: a length from 1e-9 to 1e6 (m), as a scene's",
                                     where, json_excerpt(r)));
    return static_cast<float>(r.get<double>());
}

// summary.json's frames[k]: its index, time (after `last`) and the best particle file it lists.
FrameFile summary_frame(const nlohmann::json& f, std::size_t k, double last, const std::string& where) {
    const auto rank = [](const std::string& f) {
        const auto e = fs::path(f).extension();
        return e == ".pvtp" ? 0 : e == ".vtp" ? 1 : e == ".ply" ? 2 : e == ".csv" ? 3 : 9;
    };
    const std::string at = fmt::format("frames[{}]", k);
    if (!f.is_object() || !f.contains("time") || !f["time"].is_number() || !f.contains("files") || !f["files"].is_array())
        throw InputError(fmt::format("{}: key '{}' has no time and files", where, at));
    FrameFile ff;
    // value("index", int) threw json's type_error on a string (exit 1) and cast 1e20 or 2^40 to any int.
    if (f.contains("index") && !(f["index"].is_number_integer() && f["index"].get<std::int64_t>() >= 0 &&
                                 f["index"].get<std::int64_t>() <= 99999999))
        throw InputError(fmt::format("{}: key '{}.index' = {}: allowed: a whole number from 0 to 99999999", where, at,
                                     json_excerpt(f["index"])));
    ff.index = f.contains("index") ? f["index"].get<int>() : static_cast<int>(k);
    ff.time = f["time"].get<double>();
    ff.empty = f.contains("particles") && f["particles"].is_number_unsigned() && f["particles"].get<std::uint64_t>() == 0;
    // At most 1e9 s, as eddy run's --until: a span of 1e300 s made dt infinite (diffuse particles at inf).
    if (!std::isfinite(ff.time) || !(ff.time > last) || std::fabs(ff.time) > 1e9)
        throw InputError(fmt::format("{}: key '{}.time' = {}: allowed: at most 1e9 (s) and later than the frame before",
                                     where, at, ff.time));
    for (const auto& name : f["files"]) {
        if (!name.is_string()) continue;
        const std::string s = name.get<std::string>();
        // Only the run's own particle frames (a one-component name in frames/ or a .pvtp at the top).
        const bool particle = s.rfind("frames/particles_", 0) == 0 && detail::valid_frame_file(s);
        if (!particle || rank(s) > 3) continue;
        if (fs::path(s).stem().string().find("_p") != std::string::npos && rank(s) != 0) continue;  // a piece
        if (ff.file.empty() || rank(s) < rank(ff.file)) ff.file = s;
    }
    if (ff.file.empty())
        throw InputError(fmt::format("{}: key '{}.files' lists no particle file (frames/particles_NNNNN.pvtp, .vtp, .ply, "
                                     ".csv)", where, at));
    return ff;
}

// summary.json of the run: its dimension, radius, up axis and frames (time, files).
RunInfo read_run(const fs::path& dir) {
    const fs::path summary = dir / "summary.json";
    std::string text;
    {
        auto f = io::InputFile::open_existing(summary);
        if (!f)
            throw InputError(fmt::format("{}: no summary.json: allowed: the folder of a finished `eddy run`", dir.string()));
        text = f->read_all(std::uint64_t(1) << 28, "summary.json");
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    const std::string where = summary.string();
    if (j.is_discarded() || !j.is_object()) throw InputError(fmt::format("{}: not JSON", where));
    auto bad = [&](const char* key, const std::string& what) {
        return InputError(fmt::format("{}: key '{}' {}", where, key, what));
    };
    RunInfo info;
    if (!j.contains("dimension") || !j["dimension"].is_number_integer() || (j["dimension"] != 2 && j["dimension"] != 3))
        throw bad("dimension", "is missing or not 2 or 3 (a particle run's summary; grids have no whitewater)");
    info.dimension = j["dimension"].get<int>();
    if (j.contains("particle_radius")) info.particle_radius = summary_radius(j["particle_radius"], where);
    if (j.contains("scene_document") && j["scene_document"].is_object()) info.scene_document = j["scene_document"];
    if (j.contains("scene_file") && j["scene_file"].is_string()) info.scene_file = j["scene_file"].get<std::string>();
    if (j.contains("scene") && j["scene"].is_string()) info.scene_name = j["scene"].get<std::string>();
    if (j.contains("up_axis") && j["up_axis"].is_string())
        info.up = parse_up_axis(j["up_axis"].get<std::string>(), where + ": key 'up_axis'");
    if (!j.contains("frames") || !j["frames"].is_array() || j["frames"].empty())
        throw bad("frames", "is missing or empty; allowed: a run that wrote frames (status completed)");
    double last = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < j["frames"].size(); ++k) {
        info.frames.push_back(summary_frame(j["frames"][k], k, last, where));
        last = info.frames.back().time;
    }
    return info;
}

template <int D>
struct Fluid {
    std::vector<Vec<D>> x, v;
    std::vector<std::uint32_t> id;
};

// A frame's particles, with their velocities (docs/whitewater.md: needed), each finite; a file larger than the
// budget is refused from its size, unread (a 100 GB sparse frame).
ParticleSet<3> read_frame_particles(const fs::path& file, const WhitewaterPostOptions& opts) {
    io::ParticleReadOptions ro;
    ro.allow_outside_references = opts.allow_outside_references;
    ro.require_velocity = true;
    if (!opts.budget.unlimited()) ro.max_bytes = opts.budget.limit_bytes, ro.limit_origin = opts.budget.origin;
    ParticleSet<3> p = io::read_particles<3>(file, ro);
    for (std::size_t i = 0; i < p.size(); ++i)
        if (!std::isfinite(dot(p.velocity[i], p.velocity[i])))  // NaN, inf, or so fast |v|^2 overflows
            throw InputError(fmt::format("{}: particle {} (id {}): velocity is not finite or beyond 1e19 m/s; allowed: "
                                         "finite velocities", file.string(), i, p.id[i]));
    return p;
}

// The particles in the scene's axes (y up; files written with --up z are turned back: exact, a swap and a sign).
template <int D>
Fluid<D> read_fluid(const FrameFile& frame, const WhitewaterPostOptions& opts, UpAxis up) {
    if (frame.empty) return {};
    // The frame's name is confined to frames/ by read_run; a symbolic link there may still lead out of the
    // run folder: refused as a .pvtp's pieces are, unless --allow-outside-references.
    const fs::path file = io::referenced_path(opts.run_dir / "summary.json", frame.file, opts.allow_outside_references);
    const ParticleSet<3> p = read_frame_particles(file, opts);
    // In id order once per frame (one process writes its storage order, several processes id order), so
    // that step_whitewater_by_id takes the frame as it is at every substep instead of sorting it again.
    const std::vector<std::uint32_t> order = id_order(p.id);
    Fluid<D> f;
    f.x.resize(p.size());
    f.v.resize(p.size());
    f.id.resize(p.size());
    for (std::size_t k = 0; k < p.size(); ++k) {
        const std::size_t i = order[k];
        f.id[k] = p.id[i];
        const Vec3 x = to_file_axes(p.position[i], up, UpAxis::y), v = to_file_axes(p.velocity[i], up, UpAxis::y);
        for (int a = 0; a < D; ++a) {
            f.x[k][a] = x[a];
            f.v[k][a] = v[a];
        }
    }
    return f;
}

// The run's scene again, for its walls: summary.json's scene_document (the scene as run, --set applied),
// else its scene_file as it is now; nullopt and a warning when neither can be read.
std::optional<Scene> reload_scene(const RunInfo& info, const MemoryBudget& budget, std::vector<std::string>& warnings) {
    try {
        // With the budget, models and particle files are estimated from their headers and sizes first
        // and refused unread (a 100 GB sparse model or "file" fluid: std::bad_alloc, exit 1, before).
        if (info.scene_document.is_object()) {
            Scene s = parse_scene(info.scene_document, info.scene_file.empty() ? info.scene_name : info.scene_file, {},
                                  budget);
            return s;
        }
        if (!info.scene_file.empty()) {
            std::error_code ec;
            if (!fs::is_regular_file(info.scene_file, ec))
                throw InputError(fmt::format("scene_file {} is not there", info.scene_file));
            Scene s = load_scene(info.scene_file, {}, budget);
            warnings.push_back(fmt::format("summary.json has no scene_document (a run before it): walls from {} as it is now, "
                                           "without the run's --set", info.scene_file));
            return s;
        }
        throw InputError("summary.json names no scene_file");
    } catch (const InputError& e) {
        warnings.push_back(fmt::format("the run's scene cannot be reloaded ({}): whitewater without walls",
                                       text_excerpt(e.what(), 200)));
    } catch (const std::bad_alloc&) {
        warnings.push_back("the run's scene cannot be reloaded (out of memory): whitewater without walls");
    }
    return std::nullopt;
}

// The scene's walls (scene_walls) with the prescribed motions of its moving ones (as build_boundary
// makes them); bodies' walls are left out (their poses were the run's integration: not in the frames).
template <int D>
std::vector<Wall<D>> post_walls(const Scene& scene, std::vector<BoundaryMotion<D>>& motions,
                                std::vector<std::string>& warnings, const ExecContext& exec) {
    std::vector<Wall<D>> all = scene_walls<D>(scene, exec), walls;
    motions.assign(scene.boundaries.size(), BoundaryMotion<D>{});
    std::size_t bodies = 0;
    for (std::size_t i = 0; i < scene.boundaries.size(); ++i) motions[i] = prescribed_motion<D>(scene.boundaries[i]);
    for (auto& w : all) {
        if (w.object >= 0 && scene.boundaries[std::size_t(w.object)].body >= 0) {
            ++bodies;
            continue;
        }
        walls.push_back(std::move(w));
    }
    if (bodies > 0)
        warnings.push_back(fmt::format("{} bodies' walls left out: their motion is not in the run's frames", bodies));
    index_walls(walls, static_cast<float>(scene.particle_radius));
    return walls;
}

template <int D>
WhitewaterPostReport post_process(const RunInfo& info, const WhitewaterPostOptions& opts, float radius, Vec<D> gravity,
                                  const std::optional<Scene>& scene, std::vector<std::string> warnings,
                                  const ExecContext& exec) {
    const fs::path& dir = opts.run_dir;
    std::error_code ec;
    fs::create_directories(dir / "frames", ec);
    // Stepped in the scene's axes (y up), where its walls are; written in the particle files' axes.
    const UpAxis up = D == 3 ? info.up : UpAxis::y;
    WhitewaterFiles files(dir, up);
    std::vector<BoundaryMotion<D>> motions;
    std::vector<Wall<D>> walls;
    if (scene) walls = post_walls<D>(*scene, motions, warnings, exec);
    bool moving = false;
    for (const auto& m : motions) moving = moving || m.moving();
    Whitewater<D> w;
    WhitewaterPostReport rep;
    rep.dimension = D;
    rep.walls = walls.size();
    Fluid<D> a = read_fluid<D>(info.frames[0], opts, up);
    files.write_frame<D>(info.frames[0].index, info.frames[0].time, w);
    std::vector<Vec<D>> x, v;
    std::uint64_t step_index = 0;
    for (std::size_t k = 1; k < info.frames.size(); ++k) {
        const FrameFile& fb = info.frames[k];
        Fluid<D> b = read_fluid<D>(fb, opts, up);
        const double span = fb.time - info.frames[k - 1].time;
        // Each particle of frame a at its place in frame b (by id), or none (removed: it carries on with its velocity).
        std::vector<std::int64_t> in_b(a.x.size(), -1);
        const bool same = a.id == b.id;
        std::unordered_map<std::uint32_t, std::uint32_t> where;
        if (!same)
            for (std::uint32_t i = 0; i < b.id.size(); ++i) where.emplace(b.id[i], i);
        for (std::size_t i = 0; i < a.x.size(); ++i) {
            if (same) in_b[i] = static_cast<std::int64_t>(i);
            else if (auto it = where.find(a.id[i]); it != where.end()) in_b[i] = it->second;
        }
        x.resize(a.x.size());
        v.resize(a.x.size());
        const double dt = span / opts.substeps;
        for (int s = 1; s <= opts.substeps; ++s) {
            const float t = static_cast<float>(double(s) / opts.substeps);
            const float tt = static_cast<float>(double(s) * dt);
            parallel_for_each_index(exec, a.x.size(), [&](std::size_t i) {
                if (in_b[i] >= 0) {
                    x[i] = a.x[i] + t * (b.x[in_b[i]] - a.x[i]);
                    v[i] = a.v[i] + t * (b.v[in_b[i]] - a.v[i]);
                } else {
                    x[i] = a.x[i] + tt * a.v[i];
                    v[i] = a.v[i];
                }
            });
            if (moving) update_wall_poses(walls, motions, info.frames[k - 1].time + double(s) * dt);
            step_whitewater_by_id<D>(w, x, v, a.id, radius, gravity, dt, step_index++, opts.settings, exec, &walls);
        }
        files.write_frame<D>(fb.index, fb.time, w);
        a = std::move(b);
    }
    rep.frames = static_cast<int>(info.frames.size());
    rep.rows = files.rows();
    rep.warnings = std::move(warnings);
    return rep;
}

}  // namespace

WhitewaterPostReport whitewater_post_process(const WhitewaterPostOptions& opts, const ExecContext& exec) {
    std::error_code ec;
    if (!fs::is_directory(opts.run_dir, ec))
        throw InputError(fmt::format("{}: no such folder; allowed: the output folder of `eddy run`", opts.run_dir.string()));
    // frames/ is eddy's own (as eddy run's prepare_frames_folder): a symbolic link there would send the
    // whitewater files out of the run folder, whatever --allow-outside-references says.
    const fs::path frames = opts.run_dir / "frames";
    if (fs::is_symlink(fs::symlink_status(frames, ec)))
        throw InputError(fmt::format("{}: is a symbolic link; allowed: a folder (the whitewater files are written there)",
                                     frames.string()));
    if (opts.substeps < 1 || opts.substeps > 100000)
        throw InputError(fmt::format("key 'substeps' = {}: allowed: a whole number from 1 to 100000", opts.substeps));
    validate(opts.settings, "eddy whitewater");
    const RunInfo info = read_run(opts.run_dir);
    const float radius = opts.particle_radius > 0.0f ? opts.particle_radius : info.particle_radius;
    if (!(radius > 0.0f))
        throw InputError(fmt::format("{}: key 'particle_radius' is missing from summary.json; allowed: --radius R (m, > 0)",
                                     opts.run_dir.string()));
    std::vector<std::string> warnings;
    std::optional<Scene> scene = reload_scene(info, opts.budget, warnings);
    if (scene && scene->dimension != info.dimension) {
        warnings.push_back(fmt::format("the run's scene is {}D, its frames {}D: whitewater without walls", scene->dimension,
                                       info.dimension));
        scene.reset();
    }
    // Gravity in the scene's axes (y up): --gravity is in the files' axes; else the scene's, else 9.81 down.
    std::array<double, 3> g = scene ? scene->gravity : std::array<double, 3>{0.0, -9.81, 0.0};
    if (opts.gravity) {
        const UpAxis up = info.dimension == 3 ? info.up : UpAxis::y;
        const Vec3 gv = to_file_axes(from_array<3>(*opts.gravity), up, UpAxis::y);
        g = {gv[0], gv[1], gv[2]};
    }
    if (info.dimension == 2) return post_process<2>(info, opts, radius, from_array<2>(g), scene, std::move(warnings), exec);
    return post_process<3>(info, opts, radius, from_array<3>(g), scene, std::move(warnings), exec);
}

}  // namespace eddy
