#include "sim/run_support.hpp"


#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"

namespace eddy::detail {

std::string new_run_id() {
    std::array<unsigned char, 16> raw{};
    io::random_bytes(raw.data(), raw.size());
    std::string id;
    for (unsigned char c : raw) id += fmt::format("{:02x}", c);
    return id;
}

bool valid_run_id(std::string_view id) {
    return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

void prepare_frames_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale, int keep_below) {
    namespace fs = std::filesystem;
    // An empty --out (an unset shell variable, Python's out='') would put the run in the working folder
    // and clear what it finds there.
    if (out.empty()) throw InputError("output folder '': not allowed; allowed: the path of a folder (e.g. out)");
    std::error_code ec;
    const fs::path frames = out / "frames";
    // frames/ is eddy's own: a symbolic link there (planted in a shared folder) would send every frame,
    // and the clean-up below, elsewhere. The output folder itself is the user's choice and may be a link.
    if (fs::is_symlink(fs::symlink_status(frames, ec)))
        throw InputError(fmt::format("{}: is a symbolic link; allowed: a folder eddy creates (remove the link)",
                                     frames.string()));
    fs::create_directories(frames, ec);
    if (ec || !fs::is_directory(fs::symlink_status(frames)))
        throw InputError(fmt::format("{}: cannot create the output folder: {}", out.string(),
                                     ec ? ec.message() : "a file is in the way"));
    // Writes a SIGKILL stopped half-way left their temporaries (".NAME.eddy-tmp-XXXXXX").
    io::remove_stale_temporaries(out);
    io::remove_stale_temporaries(frames);
    for (const auto& e : fs::directory_iterator(frames)) {
        const std::string name = e.path().filename().string();
        for (const char* p : stale) {
            if (name.rfind(p, 0) != 0) continue;
            // A resumed run keeps the frames its checkpoint lists: those numbered below keep_below.
            const std::size_t len = std::strlen(p);
            const bool numbered = name.size() >= len + 5 &&
                                  std::all_of(name.begin() + len, name.begin() + len + 5, [](char c) { return c >= '0' && c <= '9'; });
            if (keep_below > 0 && (!numbered || std::stoi(name.substr(len, 5)) < keep_below)) break;
            // A link is removed as a link (remove() does not follow it); folders are left alone.
            if (!fs::is_directory(e.symlink_status(ec))) fs::remove(e.path(), ec);
            break;
        }
    }
}

// The checkpoint pieces in `dir` (checkpoint_sSTEP_pRANK.eddy) of process `rank` but `keep`, and those of
// every process from `beyond` on (a run resumed on fewer processes than wrote its pieces).
void drop_checkpoint_pieces(const std::filesystem::path& dir, const std::string& keep, int rank, int beyond) {
    const std::string tail = fmt::format("_p{:04d}.eddy", rank);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (!name.starts_with("checkpoint_s") || name.size() != tail.size() + 24 || name == keep) continue;
        if (name.ends_with(tail) || std::atoi(name.c_str() + name.size() - 9) >= beyond) std::filesystem::remove(e.path(), ec);
    }
}

void start_run_folder(const std::filesystem::path& out, const nlohmann::json& what, bool resumed,
                      const std::string& run_id) {
    std::error_code ec;
    const std::filesystem::path marker = out / kRunMarkerFile;
    if (!resumed) {
        for (const char* stale : {"particles.pvd", "grid.pvd", "walls.pvd", "surface.pvd", "checkpoint.eddy", "last_frame.png", "forces.csv", "bodies.csv", "bodies.pvd", "whitewater.pvd", "whitewater.csv", "probes.csv"})
            std::filesystem::remove(out / stale, ec);
        // A distributed run's checkpoint pieces (checkpoint_sSTEP_pRANK.eddy).
        for (const auto& e : std::filesystem::directory_iterator(out, ec)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("checkpoint_s", 0) == 0 && e.path().extension() == ".eddy") std::filesystem::remove(e.path(), ec);
        }
        io::write_json(marker, {{"run_id", run_id}});
    }
    nlohmann::json j = what;
    j["status"] = "running";
    j["run_id"] = run_id;
    j["message"] = resumed ? "resumed from checkpoint.eddy; running (or killed before it could finish)"
                           : "running (or killed before it could finish)";
    io::write_json(out / "summary.json", j);
}

void check_run_marker(const std::filesystem::path& out, const std::string& run_id) {
    const std::filesystem::path marker = out / kRunMarkerFile;
    const std::string checkpoint = (out / kCheckpointFile).string();
    std::string found;
    try {
        const nlohmann::json j = parse_json_text(io::read_regular_file(marker, 4096, "a run marker"), marker.string());
        if (j.is_object() && j.contains("run_id") && j["run_id"].is_string()) found = j["run_id"].get<std::string>();
    } catch (const InputError&) {
        found.clear();
    }
    if (found != run_id)
        throw InputError(fmt::format(
            "{}: belongs to run {}, but {} {}; allowed: resume a checkpoint in the folder of the run that wrote it",
            checkpoint, run_id, marker.string(),
            found.empty() ? "is missing or unreadable" : fmt::format("names run {}", text_excerpt(found, 40))));
}

void open_run_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale, int frames_kept,
                     const nlohmann::json& what, bool resumed, const std::string& run_id) {
    if (out.empty()) throw InputError("output folder '': not allowed; allowed: the path of a folder (e.g. out)");
    if (resumed) check_run_marker(out, run_id);
    prepare_frames_folder(out, stale, frames_kept);
    start_run_folder(out, what, resumed, run_id);
}

bool valid_frame_file(std::string_view name) {
    constexpr std::string_view prefix = "frames/";
    if (name.size() <= prefix.size() || name.size() > 128 || name.substr(0, prefix.size()) != prefix) return false;
    const std::string_view file = name.substr(prefix.size());
    if (file[0] == '.') return false;
    return std::all_of(file.begin(), file.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    });
}

RecordReader::RecordReader(const nlohmann::json& record, std::string where) : m_rec(record), m_where(std::move(where)) {
    if (!m_rec.is_object()) fail("run", "is not a JSON object");
}

void RecordReader::fail(const std::string& key, const std::string& what) const {
    throw InputError(fmt::format("{}: corrupt checkpoint: run record key '{}' {}", m_where, key, what));
}

const nlohmann::json& RecordReader::at(const char* key) const {
    const auto it = m_rec.find(key);
    if (it == m_rec.end()) fail(key, "is missing");
    return *it;
}

double RecordReader::number_at(const nlohmann::json& v, const std::string& what, double lo, double hi) const {
    if (!v.is_number()) fail(what, fmt::format("is {}; allowed: a number", json_excerpt(v)));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) fail(what, fmt::format("= {}; allowed: {:g} to {:g}", json_excerpt(v), lo, hi));
    return x;
}

std::uint64_t RecordReader::count_at(const nlohmann::json& v, const std::string& what, std::uint64_t hi) const {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        fail(what, fmt::format("is {}; allowed: a whole number >= 0", json_excerpt(v)));
    const auto x = v.get<std::uint64_t>();
    if (x > hi) fail(what, fmt::format("= {}; allowed: at most {}", x, hi));
    return x;
}

std::string RecordReader::frame_file_at(const nlohmann::json& v, const std::string& what) const {
    if (!v.is_string() || !valid_frame_file(v.get<std::string>()))
        fail(what, fmt::format("is {}; allowed: a file name frames/NAME (no folder, no '..')", json_excerpt(v)));
    return v.get<std::string>();
}

double RecordReader::number(const char* key, double lo, double hi) const { return number_at(at(key), key, lo, hi); }

std::uint64_t RecordReader::count(const char* key, std::uint64_t lo, std::uint64_t hi) const {
    const std::uint64_t x = count_at(at(key), key, hi);
    if (x < lo) fail(key, fmt::format("= {}; allowed: at least {}", x, lo));
    return x;
}

bool RecordReader::flag(const char* key) const {
    const auto& v = at(key);
    if (!v.is_boolean()) fail(key, fmt::format("is {}; allowed: true or false", json_excerpt(v)));
    return v.get<bool>();
}

namespace {
std::string join_allowed(std::initializer_list<const char*> allowed) {
    std::string s;
    for (const char* a : allowed) s += (s.empty() ? "" : ", ") + std::string(a);
    return s;
}
bool member(const std::string& v, std::initializer_list<const char*> allowed) {
    return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; });
}
}  // namespace

std::string RecordReader::choice(const char* key, std::initializer_list<const char*> allowed) const {
    const auto& v = at(key);
    if (!v.is_string() || !member(v.get<std::string>(), allowed))
        fail(key, fmt::format("is {}; allowed: {}", json_excerpt(v), join_allowed(allowed)));
    return v.get<std::string>();
}

std::vector<std::string> RecordReader::choices(const char* key, std::initializer_list<const char*> allowed,
                                               std::size_t max) const {
    const auto& a = array(key, SIZE_MAX, max);
    std::vector<std::string> out;
    for (const auto& v : a) {
        if (!v.is_string() || !member(v.get<std::string>(), allowed))
            fail(key, fmt::format("holds {}; allowed: {}", json_excerpt(v), join_allowed(allowed)));
        if (std::find(out.begin(), out.end(), v.get<std::string>()) != out.end())
            fail(key, fmt::format("holds {} twice", json_excerpt(v)));
        out.push_back(v.get<std::string>());
    }
    return out;
}

const nlohmann::json& RecordReader::array(const char* key, std::size_t n, std::size_t max_n) const {
    const auto& v = at(key);
    if (!v.is_array()) fail(key, fmt::format("is {}; allowed: a list", json_excerpt(v)));
    if (n != SIZE_MAX && v.size() != n) fail(key, fmt::format("has {} entries; allowed: {}", v.size(), n));
    if (v.size() > max_n) fail(key, fmt::format("has {} entries; allowed: at most {}", v.size(), max_n));
    return v;
}

std::vector<RecordFrame> read_record_frames(const RecordReader& r, double time0, double fps, double now,
                                            std::initializer_list<const char*> extra) {
    // A frame per 1/fps from time0 to now, at most: a longer list is not this run's.
    const double most = std::floor((now - time0) * fps * (1.0 + 1e-9)) + 1.0;
    const auto& a = r.array("frames", SIZE_MAX, static_cast<std::size_t>(std::min(most, 1e8)));
    if (a.empty()) r.fail("frames", "is empty; allowed: the frames written so far (the first at the run's start)");
    std::vector<RecordFrame> out;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const std::string at = fmt::format("frames[{}]", k);
        const auto& f = a[k];
        if (!f.is_object()) r.fail(at, "is not an object");
        RecordFrame fr;
        fr.index = static_cast<int>(r.count_at(f.contains("index") ? f["index"] : nlohmann::json(), at + ".index", 1u << 30));
        if (fr.index != static_cast<int>(k)) r.fail(at + ".index", fmt::format("= {}; allowed: {}", fr.index, k));
        fr.time = r.number_at(f.contains("time") ? f["time"] : nlohmann::json(), at + ".time", time0, now);
        // The loop lands frame k on time0 + k / fps (or on the run's end when that comes first, within
        // its tolerance): anything else is not a frame time of this run.
        const double expect = frame_time(time0, fps, double(k));
        if (std::fabs(fr.time - expect) > 1e-9 * std::max(1.0, std::fabs(expect)))
            r.fail(at + ".time", fmt::format("= {:.17g}; allowed: {:.17g} (frame {} at {:g} fps from {:g} s)", fr.time,
                                             expect, k, fps, time0));
        const auto files = f.contains("files") ? f["files"] : nlohmann::json();
        if (!files.is_array() || files.size() > 4096) r.fail(at + ".files", "is not a list of file names");
        for (std::size_t i = 0; i < files.size(); ++i)
            fr.files.push_back(r.frame_file_at(files[i], fmt::format("{}.files[{}]", at, i)));
        for (const char* e : extra)
            fr.numbers.push_back(r.number_at(f.contains(e) ? f[e] : nlohmann::json(), at + "." + e, -1e300, 1e300));
        out.push_back(std::move(fr));
    }
    return out;
}

std::vector<std::pair<double, std::string>> read_record_pvd(const RecordReader& r, const char* key,
                                                            const std::vector<RecordFrame>& frames) {
    const auto& a = r.array(key, SIZE_MAX, frames.size() * 64);
    std::vector<std::pair<double, std::string>> out;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const std::string at = fmt::format("{}[{}]", key, k);
        if (!a[k].is_array() || a[k].size() != 2) r.fail(at, "is not a [time, file] pair");
        const double t = r.number_at(a[k][0], at, -1e300, 1e300);
        const std::string file = r.frame_file_at(a[k][1], at);
        const bool listed = std::any_of(frames.begin(), frames.end(), [&](const RecordFrame& f) {
            return f.time == t && std::find(f.files.begin(), f.files.end(), file) != f.files.end();
        });
        if (!listed) r.fail(at, fmt::format("names {} at {:g} s, which no frame of the record lists", file, t));
        out.emplace_back(t, file);
    }
    return out;
}

std::string read_run_id(const RecordReader& r) {
    const nlohmann::json id = r.has("run_id") ? r.json()["run_id"] : nlohmann::json();
    if (!id.is_string() || !valid_run_id(id.get<std::string>()))
        r.fail("run_id", fmt::format("is {}; allowed: 32 hex digits", json_excerpt(id)));
    return id.get<std::string>();
}

GridRecord read_grid_record(const nlohmann::json& record, const std::string& where, double time, std::uint64_t steps) {
    constexpr double kTiny = std::numeric_limits<double>::min();
    constexpr double kBig = 1e300;
    const RecordReader r(record, where);
    GridRecord g;
    g.end_time = r.number("end_time", kTiny, kMaxDuration);
    g.fps = r.number("fps", kTiny, kMaxFps);
    g.formats = r.choices("formats", {"vti", "csv", "obj", "ply"});
    g.render = r.flag("render");
    g.pieces = r.flag("pieces", false);
    if (r.has("up_axis")) g.up = parse_up_axis(r.choice("up_axis", {"y", "z"}), "checkpoint");
    g.run_id = read_run_id(r);
    g.time0 = r.number("time0", 0.0, time);
    g.steps0 = r.count("steps0", 0, steps);
    g.frames = read_record_frames(r, g.time0, g.fps, time, {"volume"});
    g.next_frame = static_cast<int>(r.count("next_frame", 1, g.frames.size()));
    if (g.next_frame != static_cast<int>(g.frames.size()))
        r.fail("next_frame", fmt::format("= {}; allowed: {} (the frames listed)", g.next_frame, g.frames.size()));
    g.volume0 = r.number("volume0", -kBig, kBig);
    g.pvd = read_record_pvd(r, "pvd", g.frames);
    const auto& st = r.array("stats", 5);
    g.step_seconds = r.number_at(st[0], "stats[0]", 0.0, kBig);
    g.max_speed = r.number_at(st[1], "stats[1]", 0.0, kBig);
    g.max_depth = r.number_at(st[2], "stats[2]", -kBig, kBig);
    g.clamped = r.count_at(st[3], "stats[3]", std::numeric_limits<std::size_t>::max());
    g.wall_before = r.number_at(st[4], "stats[4]", 0.0, kBig);
    return g;
}

bool lands_off_frame(double time0, double fps, int next_frame, double end_time) {
    const double eps = 1e-9 * std::max(1.0, end_time);
    return end_time < frame_time(time0, fps, next_frame) - eps;
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

// What to profile first: the passes in the order a step runs them, each with its share.
nlohmann::json passes_json(const PassTimes& p, std::uint64_t steps) {
    double total = 0.0;
    for (int k = 0; k < p.pass_count; ++k) total += p.passes[k].seconds;
    nlohmann::json a = nlohmann::json::array();
    for (int k = 0; k < p.pass_count; ++k)
        a.push_back({{"name", p.passes[k].name},
                     {"seconds", p.passes[k].seconds},
                     {"ms_per_step", steps ? 1e3 * p.passes[k].seconds / double(steps) : 0.0},
                     {"share", total > 0.0 ? p.passes[k].seconds / total : 0.0}});
    return a;
}

}  // namespace eddy::detail
