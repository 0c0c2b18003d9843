// Scene files: JSON -> validated Scene. Every error names the file, the key path and what is allowed.
#include "eddy/scene.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"
#include "scene/method_switch.hpp"
#include "scene/fluid_checks.hpp"

namespace eddy {

namespace {

// The methods a scene may name; adding a method is one entry here, one in make_simulation and one in
// method_switch.cpp (its settings table).
constexpr const char* kMethods[] = {"wcsph", "dfsph", "pbf", "clavet", "shallow_water"};
constexpr std::initializer_list<const char*> kFormats = {"vtk", "csv", "ply"};

struct Ctx {
    std::string file;
    /// Models and particle files are estimated against it before they are read (issue 29).
    MemoryBudget budget;
    /// A resumed run's models and particle files (SceneInputs), taken in order instead of read.
    const SceneInputs* inputs = nullptr;
    mutable std::size_t next_mesh = 0, next_particles = 0;
    // "file: path: what", or "file: path = value: what" when `what` starts with "= ".
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        const bool value = what.rfind("= ", 0) == 0;
        throw InputError(fmt::format("{}: {}{}{}", file, path, value ? " " : ": ", what));
    }
};

std::string join(std::initializer_list<const char*> keys) {
    std::string s;
    for (const char* k : keys) s += (s.empty() ? "" : ", ") + std::string(k);
    return s;
}

void check_keys(const Ctx& c, const nlohmann::json& obj, const std::string& path,
                std::initializer_list<const char*> allowed) {
    if (!obj.is_object()) c.fail(path.empty() ? "scene" : path, fmt::format("expected an object, got {}", obj.type_name()));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool ok = false;
        for (const char* k : allowed) ok = ok || it.key() == k;
        if (!ok) {
            const std::string where = path.empty() ? "" : path + ": ";
            const std::vector<std::string> keys(allowed.begin(), allowed.end());
            const std::string guess = it.key().size() <= 100 ? detail::closest_key(it.key(), keys) : "";
            throw InputError(fmt::format("{}: {}unknown key '{}'; {}allowed: {}", c.file, where, text_excerpt(it.key()),
                                         guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess), join(allowed)));
        }
    }
}

std::string sub(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// Every number of a scene ends up in a float (positions, speeds, gravity) or next to one (times):
// beyond a float's range it would become infinite there, far from the key that caused it.
constexpr double kFloatMax = std::numeric_limits<float>::max();
[[noreturn]] void fail_float_range(const Ctx& c, const std::string& p, double d) {
    c.fail(p, fmt::format("= {:g}: beyond the largest value eddy computes with ({:.2g}, a float); allowed: numbers "
                          "within +-{:.2g}",
                          d, kFloatMax, kFloatMax));
}

double number(const Ctx& c, const nlohmann::json& obj, const std::string& path, const char* key, double fallback,
              bool required, bool positive) {
    const std::string p = sub(path, key);
    if (!obj.contains(key)) {
        if (required) c.fail(p, "missing; it is required");
        return fallback;
    }
    const auto& v = obj.at(key);
    if (!v.is_number()) c.fail(p, fmt::format("must be a number, got {}", json_excerpt(v)));
    const double d = v.get<double>();
    if (!std::isfinite(d)) c.fail(p, "must be finite");
    if (std::fabs(d) > kFloatMax) fail_float_range(c, p, d);
    if (positive && !(d > 0.0)) c.fail(p, fmt::format("= {:g}: must be > 0", d));
    return d;
}

std::string text(const Ctx& c, const nlohmann::json& obj, const std::string& path, const char* key,
                 const std::string& fallback, bool required) {
    const std::string p = sub(path, key);
    if (!obj.contains(key)) {
        if (required) c.fail(p, "missing; it is required");
        return fallback;
    }
    if (!obj.at(key).is_string()) c.fail(p, fmt::format("must be a string, got {}", json_excerpt(obj.at(key))));
    return obj.at(key).get<std::string>();
}

bool flag(const Ctx& c, const nlohmann::json& obj, const std::string& path, const char* key, bool fallback) {
    if (!obj.contains(key)) return fallback;
    if (!obj.at(key).is_boolean())
        c.fail(sub(path, key), fmt::format("must be true or false, got {}", json_excerpt(obj.at(key))));
    return obj.at(key).get<bool>();
}

std::array<double, 3> vec(const Ctx& c, const nlohmann::json& obj, const std::string& path, const char* key, int dim,
                          std::array<double, 3> fallback, bool required, int components = 0) {
    const std::string p = sub(path, key);
    const int n = components ? components : dim;
    if (!obj.contains(key)) {
        if (required) c.fail(p, fmt::format("missing; it is required ({} numbers)", n));
        return fallback;
    }
    const auto& v = obj.at(key);
    if (!v.is_array()) c.fail(p, fmt::format("expected a list of {} numbers, got {}", n, json_excerpt(v)));
    if (static_cast<int>(v.size()) != n)
        c.fail(p, fmt::format("expected {} numbers, got {} ({})", n, v.size(), json_excerpt(v)));
    std::array<double, 3> r{0, 0, 0};
    for (int i = 0; i < n; ++i) {
        if (!v[i].is_number() || !std::isfinite(v[i].get<double>()))
            c.fail(p, fmt::format("expected {} finite numbers, got {}", n, json_excerpt(v)));
        r[i] = v[i].get<double>();
        if (std::fabs(r[i]) > kFloatMax) fail_float_range(c, fmt::format("{}[{}]", p, i), r[i]);
    }
    return r;
}

void check_box(const Ctx& c, const std::string& path, const std::array<double, 3>& lo, const std::array<double, 3>& hi,
               int dim) {
    static const char* axis[] = {"x", "y", "z"};
    for (int a = 0; a < dim; ++a)
        if (!(lo[a] < hi[a]))
            c.fail(path, fmt::format("min.{} = {:g} must be below max.{} = {:g}", axis[a], lo[a], axis[a], hi[a]));
}

void check_shape_dim(const Ctx& c, const std::string& path, const std::string& shape, int dim, bool fluid) {
    const bool ok = shape == "box" || (dim == 2 && (shape == "circle" || shape == "polygon")) ||
                    (dim == 3 && (shape == "sphere" || shape == "mesh")) || (!fluid && dim == 3 && shape == "cylinder");
    if (!ok) {
        const char* allowed = fluid ? (dim == 2 ? "box, circle, polygon" : "box, sphere, mesh")
                                    : (dim == 2 ? "box, circle, polygon" : "box, sphere, cylinder, mesh");
        c.fail(sub(path, "shape"),
               fmt::format("\"{}\" is not allowed in {}D; allowed: {}", text_excerpt(shape), dim, allowed));
    }
}

// Keys that are known but mean nothing for this shape (a box's "radius") are errors too: they would
// be silently ignored otherwise.
void check_shape_keys(const Ctx& c, const nlohmann::json& obj, const std::string& path, const std::string& shape,
                      std::initializer_list<const char*> allowed) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool ok = false;
        for (const char* k : allowed) ok = ok || it.key() == k;
        if (!ok)
            c.fail(sub(path, text_excerpt(it.key())),
                   fmt::format("a {} has no '{}'; its keys: {}", shape, text_excerpt(it.key()), join(allowed)));
    }
}

// A model's keys: "mesh" (file, scale, rotate, translate) or "polygon" (points). The model is loaded,
// placed and cleaned here, so that a bad file is reported with the scene's other input errors.
// A model's memory from its header and size, before assimp reads it (estimate_model_memory). A text model
// (OBJ, ASCII STL) is counted by streaming its lines, and it is held whole while read: one larger than the
// budget is refused from its size alone first (a 100 GB sparse huge.obj kept eddy run reading zeros for
// minutes). Binary formats keep the estimate's own line ("reading the model 4 M triangles").
void check_model_memory(const Ctx& c, const std::string& key, const std::filesystem::path& file) {
    const double size = double(io::check_regular_file(file));
    char head[5] = {};
    std::ifstream(file, std::ios::binary).read(head, sizeof head);
    const std::string ext = file.extension().string();
    const bool text = ext == ".obj" || ext == ".OBJ" || std::string_view(head, sizeof head) == "solid";
    MemoryEstimate e;
    if (text && size > double(c.budget.limit_bytes)) e.add("model file", size);
    else e = estimate_model_memory(file);
    e.key = key;
    check_memory(e, c.budget, c.file);
}

void parse_model(const Ctx& c, const nlohmann::json& o, const std::string& p, const std::string& shape, int dim,
                 ModelSpec& m, std::vector<std::string>& warnings) {
    MeshReport report;
    std::string name;
    if (shape == "mesh") {
        const std::string file = text(c, o, p, "file", "", true);
        if (file.empty()) c.fail(sub(p, "file"), "must name a model file (.obj, .stl, .ply, .gltf, .glb, .fbx, ...)");
        // JSON strings may hold \u0000: the name would be cut there by every system call.
        if (file.find('\0') != std::string::npos)
            c.fail(sub(p, "file"), fmt::format("\"{}\" holds a NUL byte (\\u0000); allowed: a plain path", text_excerpt(file)));
        m.file = io::scene_relative_path(file, c.file);
        if (o.contains("scale") && o["scale"].is_number()) {
            // Negative mirrors, as in the 3-number form (clean_mesh turns the mirrored, inside-out
            // winding outwards again).
            const double k = number(c, o, p, "scale", 1.0, false, false);
            if (!(k != 0.0)) c.fail(sub(p, "scale"), "= 0: must not be zero; a number, or 3 numbers (negative mirrors)");
            m.placement.scale = {k, k, k};
        } else {
            m.placement.scale = vec(c, o, p, "scale", dim, {1, 1, 1}, false);
            for (int a = 0; a < 3; ++a)
                if (!(m.placement.scale[a] != 0.0))
                    c.fail(sub(p, "scale"), "factors must not be zero; a number, or 3 numbers (negative mirrors)");
        }
        m.placement.rotate_deg = vec(c, o, p, "rotate", dim, {0, 0, 0}, false);
        m.placement.translate = vec(c, o, p, "translate", dim, {0, 0, 0}, false);
        name = m.file.string();
        if (!c.budget.unlimited() && !c.inputs) check_model_memory(c, fmt::format("{} ({})", sub(p, "file"), name), m.file);
        if (c.inputs) {  // a resumed run: the model its checkpoint carries, already placed
            if (c.next_mesh >= c.inputs->meshes.size() || !c.inputs->meshes[c.next_mesh])
                c.fail(sub(p, "file"), "the checkpoint carries no model for it");
            m.placed = c.inputs->meshes[c.next_mesh++];
        } else {
            m.placed = std::make_shared<const Mesh<3>>(read_triangle_mesh(m.file, m.placement));
        }
        m.mesh = std::make_shared<const MeshShape<3>>(*m.placed, name);
        report = m.mesh->report();
    } else {
        const std::string key = sub(p, "points");
        if (!o.contains("points")) c.fail(key, "missing; it is required (a list of [x, y] corners)");
        // "closed": false (boundaries only): an open polyline, e.g. a tank's floor and sides without a lid.
        const bool closed = !o.contains("closed") || flag(c, o, p, "closed", true);
        const auto& pts = o["points"];
        if (!pts.is_array() || pts.size() < (closed ? 3u : 2u))
            c.fail(key, closed ? "must be a list of at least 3 [x, y] corners"
                               : "must be a list of at least 2 [x, y] points (an open polyline)");
        for (const auto& q : pts) {
            if (!q.is_array() || q.size() != 2 || !q[0].is_number() || !q[1].is_number())
                c.fail(key, fmt::format("expected [x, y] corners, got {}", json_excerpt(q)));
            for (int a = 0; a < 2; ++a)
                if (!std::isfinite(q[a].get<double>()) || std::fabs(q[a].get<double>()) > kFloatMax)
                    c.fail(key, fmt::format("expected [x, y] corners within +-{:.2g}, got {}", kFloatMax, json_excerpt(q)));
            m.points.push_back({q[0].get<double>(), q[1].get<double>()});
        }
        // A polygon listed closed, its last corner repeating its first, is the same polygon: the
        // repeat would be a zero-length closing segment, skipped and warned about as an opening.
        if (closed && m.points.front() == m.points.back()) {
            m.points.pop_back();
            if (m.points.size() < 3)
                c.fail(key, "must be a list of at least 3 [x, y] corners (a last corner repeating the first counts once)");
        }
        name = fmt::format("{}: {}", c.file, key);
        m.polygon = std::make_shared<const MeshShape<2>>(polygon_mesh(m.points, name, closed), name);
        report = m.polygon->report();
    }
    if (report.boundary_edges || report.non_manifold_edges || report.degenerate)
        warnings.push_back(fmt::format(
            "{}: warning: {} boundary edge(s) (open), {} non-manifold edge(s), {} degenerate {}(s) skipped; inside "
            "and outside are decided by the generalized winding number{}",
            name, report.boundary_edges, report.non_manifold_edges, report.degenerate, dim == 3 ? "triangle" : "segment",
            report.boundary_edges ? "; open, its walls are a thin shell that keeps fluid on the side it is on" : ""));
}

// "motion": {velocity, angular_velocity, axis, pivot, keyframes}; or the older angular_velocity, pivot
// and axis beside the shape (not both).
void parse_motion(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim, BoundarySpec& bs) {
    const bool nested = b.contains("motion");
    for (const char* k : {"angular_velocity", "pivot", "axis"})
        if (nested && b.contains(k))
            c.fail(sub(p, k), "give the motion either in 'motion' or beside the shape, not both");
    const nlohmann::json& m = nested ? b["motion"] : b;
    const std::string mp = nested ? sub(p, "motion") : p;
    if (nested) check_keys(c, m, mp, {"velocity", "angular_velocity", "axis", "pivot", "keyframes"});
    bs.angular_velocity = number(c, m, mp, "angular_velocity", 0.0, false, false);
    bs.pivot = vec(c, m, mp, "pivot", dim, bs.pivot, false);
    if (dim == 2 && m.contains("axis")) c.fail(sub(mp, "axis"), "2D rotations are in the xy plane; remove 'axis'");
    bs.axis = vec(c, m, mp, "axis", dim, {0, 0, 1}, false, 3);
    if (dim == 3 && bs.axis[0] == 0 && bs.axis[1] == 0 && bs.axis[2] == 0) c.fail(sub(mp, "axis"), "must not be zero");
    if (!nested) return;
    bs.velocity = vec(c, m, mp, "velocity", dim, {0, 0, 0}, false);
    if (!m.contains("keyframes")) return;
    const std::string kp = sub(mp, "keyframes");
    if (!m["keyframes"].is_array() || m["keyframes"].empty())
        c.fail(kp, "must be a non-empty list of {time, translate, rotate}");
    for (std::size_t i = 0; i < m["keyframes"].size(); ++i) {
        const auto& k = m["keyframes"][i];
        const std::string ip = fmt::format("{}[{}]", kp, i);
        check_keys(c, k, ip, {"time", "translate", "rotate"});
        Keyframe kf;
        kf.time = number(c, k, ip, "time", 0.0, true, false);
        if (kf.time < 0.0) c.fail(sub(ip, "time"), fmt::format("= {:g}: must be >= 0", kf.time));
        if (!bs.keyframes.empty() && !(kf.time > bs.keyframes.back().time))
            c.fail(sub(ip, "time"), fmt::format("= {:g}: keyframe times must increase (the one before is {:g})", kf.time,
                                                bs.keyframes.back().time));
        kf.translate = vec(c, k, ip, "translate", dim, {0, 0, 0}, false);
        if (dim == 2) kf.rotate_deg[2] = number(c, k, ip, "rotate", 0.0, false, false);
        else kf.rotate_deg = vec(c, k, ip, "rotate", dim, {0, 0, 0}, false);
        bs.keyframes.push_back(kf);
    }
}

// Applies "a.b.0.c=value" to j.
void apply_override(nlohmann::json& j, const std::string& ov, const std::string& where) {
    const std::string shown = text_excerpt(ov);  // an argument may be megabytes long
    const auto eq = ov.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError(fmt::format("{}: --set '{}': expected KEY.PATH=VALUE, e.g. settings.cfl=0.3", where, shown));
    const std::string path = ov.substr(0, eq), value = ov.substr(eq + 1);
    // The key path's levels plus the value's nesting, bounded like a scene file's (json_text.hpp):
    // `--set gravity=[[[[...` 65,000 deep, or a.a.a... as deep, would overflow the stack later.
    const int levels = 1 + static_cast<int>(std::count(path.begin(), path.end(), '.'));
    if (levels > kMaxJsonDepth || levels + json_text_depth(value, kMaxJsonDepth - levels) > kMaxJsonDepth)
        throw InputError(fmt::format("{}: --set '{}': nested deeper than {} levels (the key path and the value's [ and {{); "
                                     "allowed: at most {}",
                                     where, shown, kMaxJsonDepth, kMaxJsonDepth));
    nlohmann::json v;
    try {
        v = nlohmann::json::parse(value);
    } catch (const nlohmann::json::out_of_range&) {
        throw InputError(fmt::format("{}: --set '{}': number {} is out of range; allowed: numbers within +-1.7e308", where,
                                     shown, text_excerpt(value, 40)));
    } catch (const nlohmann::json::exception&) {
        v = value;  // not JSON: a plain string
        try {
            (void)v.dump();  // scene text is UTF-8 (names end up in summary.json); a stray byte is refused here
        } catch (const nlohmann::json::type_error&) {
            throw InputError(fmt::format("{}: --set '{}': the value is not valid UTF-8 text; allowed: JSON or UTF-8 text",
                                         where, shown));
        }
    }
    nlohmann::json* cur = &j;
    std::size_t start = 0;
    while (true) {
        const auto dot = path.find('.', start);
        const std::string seg = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (seg.empty()) throw InputError(fmt::format("{}: --set '{}': empty key in the path", where, shown));
        nlohmann::json* next;
        if (cur->is_array()) {
            char* end = nullptr;
            const long idx = std::strtol(seg.c_str(), &end, 10);
            if (*end || idx < 0 || idx >= static_cast<long>(cur->size()))
                throw InputError(fmt::format("{}: --set '{}': '{}' is not an index of a list of {} entries", where, shown,
                                             text_excerpt(seg), cur->size()));
            next = &(*cur)[static_cast<std::size_t>(idx)];
        } else {
            if (!cur->is_object()) *cur = nlohmann::json::object();
            next = &(*cur)[seg];
        }
        if (dot == std::string::npos) {
            *next = v;
            return;
        }
        cur = next;
        start = dot + 1;
    }
}

std::filesystem::path exe_dir() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return {};
    buf[n] = 0;
    return std::filesystem::path(buf).parent_path();
}

// "duration": the clock is a double stepped by float time steps; past kMaxDuration a frame's steps
// could round to nothing and the run would never end.
double run_duration(const Ctx& c, const nlohmann::json& j) {
    const double d = number(c, j, "", "duration", 1.0, false, true);
    if (d > kMaxDuration)
        c.fail("duration",
               fmt::format("= {:g}: too long for the run's clock; allowed: 0 < duration <= {:g} s", d, kMaxDuration));
    return d;
}

// "output": {fps, formats, render, wall_pressure (particle scenes: `particles`)}; `formats` lists what
// this kind of scene can write.
void parse_output(const Ctx& c, const nlohmann::json& o, std::initializer_list<const char*> formats, const char* what,
                  OutputSpec& out, bool particles) {
    if (particles)
        check_keys(c, o, "output", {"fps", "formats", "render", "wall_pressure"});
    else
        check_keys(c, o, "output", {"fps", "formats", "render"});
    if (particles) out.wall_pressure = flag(c, o, "output", "wall_pressure", false);
    out.fps = number(c, o, "output", "fps", 25.0, false, true);
    if (out.fps > kMaxFps)
        c.fail("output.fps", fmt::format("= {:g}: a frame every {:g} s is too short to advance the clock; allowed: 0 < fps "
                                         "<= {:g} (a frame interval of at least {:g} s)",
                                         out.fps, 1.0 / out.fps, kMaxFps, 1.0 / kMaxFps));
    out.render = flag(c, o, "output", "render", false);
    if (!o.contains("formats")) return;
    const auto& f = o["formats"];
    if (!f.is_array()) c.fail("output.formats", fmt::format("must be a list, e.g. [\"{}\"]", *formats.begin()));
    out.formats.clear();
    for (const auto& e : f) {
        if (!e.is_string() ||
            std::none_of(formats.begin(), formats.end(), [&](const char* k) { return e.get<std::string>() == k; }))
            c.fail("output.formats", fmt::format("{} is not a {}; allowed: {}", json_excerpt(e), what, join(formats)));
        out.formats.push_back(e.get<std::string>());
    }
}

// A shallow-water scene: the keys shared with particle scenes are checked here, the grid's own keys by
// parse_shallow_water (src/shallow/scene.cpp), which make_shallow_water calls before anything runs.
Scene parse_grid_scene(const Ctx& c, const nlohmann::json& j, const std::string& where) {
    check_keys(c, j, "", {"name", "description", "dimension", "method", "gravity", "duration", "output", "settings",
                          "grid", "terrain", "water", "borders", "ink", "sources", "drops", "obstacles", "bodies"});
    Scene s;
    s.source = where;
    s.method = "shallow_water";
    s.name = text(c, j, "", "name", "", true);
    s.description = text(c, j, "", "description", "", false);
    if (j.contains("dimension") && j["dimension"] != 2)
        c.fail("dimension",
               fmt::format("= {}: shallow water is a 2D grid (a heightfield); allowed: 2", json_excerpt(j["dimension"])));
    s.dimension = 2;
    s.gravity = {0, 0, -number(c, j, "", "gravity", 9.81, false, true)};
    s.duration = run_duration(c, j);
    s.output.formats = {"vti"};
    if (j.contains("output")) parse_output(c, j["output"], {"vti", "csv", "obj", "ply"}, "grid format", s.output, false);
    if (j.contains("settings")) {
        if (!j["settings"].is_object()) c.fail("settings", "must be an object of the method's settings");
        s.settings = j["settings"];
    }
    s.shallow_water = nlohmann::json::object();
    for (const char* k : {"grid", "terrain", "water", "borders", "ink", "sources", "drops", "obstacles", "bodies"})
        if (j.contains(k)) s.shallow_water[k] = j[k];
    if (!j.contains("grid")) c.fail("grid", "missing; it is required for shallow water, e.g. {\"cells\": [400, 4], \"dx\": 0.025}");
    return s;
}

}  // namespace

namespace {
// "emitters": nozzles that put fluid in (issue 31; eddy/emitters.hpp), and "domain": the box outside
// which particles are removed (the outflow).
void parse_emitters(const Ctx& c, const nlohmann::json& j, int dim, double duration, Scene& s) {
    if (!j.is_array()) c.fail("emitters", "must be a list");
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto& e = j[i];
        const std::string p = fmt::format("emitters[{}]", i);
        if (dim == 2)
            check_keys(c, e, p, {"center", "direction", "speed", "flow_rate", "width", "start", "stop"});
        else
            check_keys(c, e, p, {"center", "direction", "speed", "flow_rate", "radius", "start", "stop"});
        EmitterSpec es;
        es.center = vec(c, e, p, "center", dim, {}, true);
        es.direction = vec(c, e, p, "direction", dim, {}, true);
        double len = 0.0;
        for (int a = 0; a < dim; ++a) len += es.direction[a] * es.direction[a];
        len = std::sqrt(len);
        if (!(len > 0.0)) c.fail(sub(p, "direction"), "must not be zero; allowed: any non-zero vector (where the jet goes)");
        for (int a = 0; a < dim; ++a) es.direction[a] /= len;
        const char* size_key = dim == 2 ? "width" : "radius";
        const double size = number(c, e, p, size_key, 0.0, true, true);
        (dim == 2 ? es.width : es.radius) = size;
        if (size < s.particle_radius)
            c.fail(sub(p, size_key), fmt::format("= {:g}: smaller than a particle; allowed: at least particle_radius = {:g} m",
                                                 size, s.particle_radius));
        const double area = dim == 2 ? size : 3.14159265358979323846 * size * size;
        if (e.contains("speed") == e.contains("flow_rate"))
            c.fail(p, fmt::format("give one of speed (m/s) or flow_rate ({}), not {}", dim == 2 ? "m^2/s" : "m^3/s",
                                  e.contains("speed") ? "both" : "neither"));
        if (e.contains("speed")) es.speed = number(c, e, p, "speed", 0.0, true, true);
        else es.speed = number(c, e, p, "flow_rate", 0.0, true, true) / area;
        if (es.speed > 1e4) c.fail(sub(p, e.contains("speed") ? "speed" : "flow_rate"),
                                   fmt::format("gives a jet of {:g} m/s; allowed: up to 1e4 m/s", es.speed));
        es.start = number(c, e, p, "start", 0.0, false, false);
        if (!(es.start >= 0.0 && es.start <= kMaxDuration))
            c.fail(sub(p, "start"), fmt::format("= {:g}: allowed: 0 to 1e9 s", es.start));
        es.stop = e.contains("stop") ? number(c, e, p, "stop", 0.0, true, false) : duration;
        if (!(es.stop > es.start))
            c.fail(sub(p, "stop"), fmt::format("= {:g}: must be after start = {:g} s", es.stop, es.start));
        s.emitters.push_back(es);
    }
}

void parse_domain(const Ctx& c, const nlohmann::json& j, int dim, Scene& s) {
    check_keys(c, j, "domain", {"min", "max"});
    s.domain.given = true;
    s.domain.min = vec(c, j, "domain", "min", dim, {}, true);
    s.domain.max = vec(c, j, "domain", "max", dim, {}, true);
    check_box(c, "domain", s.domain.min, s.domain.max, dim);
}

// One of "sinks": a box, or a sphere (3D) / circle (2D), open from start to stop.
SinkSpec parse_sink(const Ctx& c, const nlohmann::json& e, const std::string& p, int dim, const Scene& s) {
    SinkSpec k;
    k.shape = text(c, e, p, "shape", "box", false);
    const char* round = dim == 2 ? "circle" : "sphere";
    if (k.shape != "box" && k.shape != round)
        c.fail(sub(p, "shape"), fmt::format("\"{}\" is not allowed in {}D; allowed: box, {}", text_excerpt(k.shape), dim, round));
    if (k.shape == "box") {
        check_keys(c, e, p, {"name", "shape", "min", "max", "start", "stop"});
        k.min = vec(c, e, p, "min", dim, {}, true);
        k.max = vec(c, e, p, "max", dim, {}, true);
        check_box(c, p, k.min, k.max, dim);
    } else {
        check_keys(c, e, p, {"name", "shape", "center", "radius", "start", "stop"});
        k.center = vec(c, e, p, "center", dim, {}, true);
        k.radius = number(c, e, p, "radius", 0.0, true, true);
        if (k.radius < s.particle_radius)
            c.fail(sub(p, "radius"), fmt::format("= {:g}: smaller than a particle; allowed: at least particle_radius = {:g} m",
                                                 k.radius, s.particle_radius));
    }
    k.name = text(c, e, p, "name", p, false);
    if (k.name.empty() || k.name.size() > 64)
        c.fail(sub(p, "name"), "allowed: a name of 1 to 64 characters");
    k.start = number(c, e, p, "start", 0.0, false, false);
    if (!(k.start >= 0.0 && k.start <= kMaxDuration))
        c.fail(sub(p, "start"), fmt::format("= {:g}: allowed: 0 to 1e9 s", k.start));
    if (e.contains("stop")) k.stop = number(c, e, p, "stop", 0.0, true, false);
    if (!(k.stop > k.start)) c.fail(sub(p, "stop"), fmt::format("= {:g}: must be after start = {:g} s", k.stop, k.start));
    return k;
}

// The outflow: "domain" (the box outside which particles are removed) and "sinks" (drains; issue 45).
void parse_outflow(const Ctx& c, const nlohmann::json& j, int dim, Scene& s) {
    if (j.contains("domain")) parse_domain(c, j["domain"], dim, s);
    if (!j.contains("sinks")) return;
    const nlohmann::json& list = j["sinks"];
    constexpr std::size_t kMostSinks = 256;  // each particle is tested against every open sink
    if (!list.is_array() || list.size() > kMostSinks)
        c.fail("sinks", fmt::format("must be a list of at most {} sinks, got {}", kMostSinks, json_excerpt(list)));
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = fmt::format("sinks[{}]", i);
        if (!list[i].is_object()) c.fail(p, fmt::format("expected an object, got {}", json_excerpt(list[i])));
        s.sinks.push_back(parse_sink(c, list[i], p, dim, s));
        for (std::size_t k = 0; k + 1 < s.sinks.size(); ++k)
            if (s.sinks[k].name == s.sinks.back().name)
                c.fail(sub(p, "name"), fmt::format("\"{}\" is also sinks[{}]'s; allowed: a name no other sink has",
                                                   text_excerpt(s.sinks.back().name), k));
    }
}

// "camera": a fixed camera for 3D pictures.
void parse_camera(const Ctx& c, const nlohmann::json& o, int dim, CameraSpec& camera) {
    check_keys(c, o, "camera", {"eye", "target", "fov"});
    camera.eye = vec(c, o, "camera", "eye", dim, {}, true, 3);
    camera.target = vec(c, o, "camera", "target", dim, {}, true, 3);
    camera.fov_deg = number(c, o, "camera", "fov", 40.0, false, true);
    if (camera.fov_deg >= 180.0) c.fail("camera.fov", fmt::format("= {:g}: must be in (0, 180) degrees", camera.fov_deg));
    camera.given = true;
}

// "probes": points where the run reads the fluid every frame (probes.csv). A name goes into a CSV field:
// letters, digits and _ - . only.
void parse_probes(const Ctx& c, const nlohmann::json& j, int dim, Scene& s) {
    if (!j.contains("probes")) return;
    const nlohmann::json& list = j["probes"];
    constexpr std::size_t kMostProbes = 4096;  // each is a neighbour search per frame
    if (!list.is_array() || list.size() > kMostProbes)
        c.fail("probes", fmt::format("must be a list of at most {} probes, got {}", kMostProbes, json_excerpt(list)));
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = fmt::format("probes[{}]", i);
        if (!list[i].is_object()) c.fail(p, fmt::format("expected an object {{\"name\", \"position\"}}, got {}", json_excerpt(list[i])));
        check_keys(c, list[i], p, {"name", "position"});
        ProbeSpec probe;
        probe.position = vec(c, list[i], p, "position", dim, {}, true);
        probe.name = text(c, list[i], p, "name", fmt::format("probe_{}", i), false);
        const bool plain = std::all_of(probe.name.begin(), probe.name.end(), [](char ch) {
            return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                   ch == '-' || ch == '.';
        });
        if (probe.name.empty() || probe.name.size() > 64 || !plain)
            c.fail(sub(p, "name"), fmt::format("\"{}\": allowed: 1 to 64 letters, digits, '_', '-' or '.'",
                                               text_excerpt(probe.name)));
        for (std::size_t k = 0; k < s.probes.size(); ++k)
            if (s.probes[k].name == probe.name)
                c.fail(sub(p, "name"), fmt::format("\"{}\" is also probes[{}]'s; allowed: a name no other probe has",
                                                   probe.name, k));
        s.probes.push_back(std::move(probe));
    }
}

Scene parse_document(nlohmann::json& j, const std::string& where, const MemoryBudget& budget,
                     const SceneInputs* inputs = nullptr);
}  // namespace

Scene parse_scene_from(nlohmann::json j, const std::string& where, const SceneInputs& inputs) {
    nlohmann::json document = j;
    Scene s = parse_document(j, where, MemoryBudget{}, &inputs);
    s.document = std::move(document);
    return s;
}

SceneInputs scene_inputs(const Scene& scene) {
    SceneInputs in;
    for (const auto& b : scene.boundaries)
        if (b.model.placed) in.meshes.push_back(b.model.placed);
    for (const auto& f : scene.fluids) {
        if (f.model.placed) in.meshes.push_back(f.model.placed);
        if (f.file_particles) in.particle_files.push_back(f.file_particles);
    }
    return in;
}

Scene parse_scene(nlohmann::json j, const std::string& where, const std::vector<std::string>& overrides,
                  const MemoryBudget& budget) {
    const detail::SceneMethodOrigin origin = detail::method_origin(j);
    for (const auto& ov : overrides) apply_override(j, ov, where);
    // `--set method=X`: the file's settings for its own method do not carry over (method_switch.hpp).
    const std::string dropped = detail::drop_foreign_settings(j, origin, overrides, where);
    nlohmann::json document = j;  // before parsing: reading a missing key through [] would add it
    Scene s = parse_document(j, where, budget);
    s.document = std::move(document);
    if (!dropped.empty()) s.warnings.push_back(dropped);
    return s;
}

namespace {

using Inertia = std::array<std::array<double, 3>, 3>;

using Axis3 = std::array<double, 3>;

// A right-handed frame around a direction: {a (the unit direction), u, v} with u x v = a.
std::array<Axis3, 3> axis_frame(const Axis3& axis) {
    const double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    const Axis3 a{axis[0] / len, axis[1] / len, axis[2] / len};
    Axis3 u = std::fabs(a[0]) < 0.9 ? Axis3{1, 0, 0} : Axis3{0, 1, 0};
    const double d = u[0] * a[0] + u[1] * a[1] + u[2] * a[2];
    for (int k = 0; k < 3; ++k) u[k] -= d * a[k];
    const double ul = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (auto& x : u) x /= ul;
    const Axis3 v{a[1] * u[2] - a[2] * u[1], a[2] * u[0] - a[0] * u[2], a[0] * u[1] - a[1] * u[0]};
    return {a, u, v};
}

// A cylinder body (3D) as a closed triangle mesh: its walls, fluid exclusion and collision then go
// through the model path (any axis, not only the containers' y). 48 sides: the prism's volume is
// 0.29% below the cylinder's, well inside one particle of sampling; the mass comes from the exact shape.
std::shared_ptr<const MeshShape<3>> cylinder_model(const Axis3& c, const Axis3& axis, double radius, double height,
                                                   const std::string& name) {
    constexpr int kSides = 48;
    const auto [a, u, v] = axis_frame(axis);
    Mesh<3> m;
    for (int end = 0; end < 2; ++end) {
        const double s = (end == 0 ? -0.5 : 0.5) * height;
        for (int i = 0; i < kSides; ++i) {
            const double t = 2.0 * M_PI * i / kSides, cs = radius * std::cos(t), sn = radius * std::sin(t);
            Vec3 p;
            for (int k = 0; k < 3; ++k) p[k] = static_cast<float>(c[k] + s * a[k] + cs * u[k] + sn * v[k]);
            m.vertices.push_back(p);
        }
    }
    const std::uint32_t bottom = 2 * kSides, top = 2 * kSides + 1;
    Vec3 pb, pt;
    for (int k = 0; k < 3; ++k) {
        pb[k] = static_cast<float>(c[k] - 0.5 * height * a[k]);
        pt[k] = static_cast<float>(c[k] + 0.5 * height * a[k]);
    }
    m.vertices.push_back(pb);
    m.vertices.push_back(pt);
    for (std::uint32_t i = 0; i < kSides; ++i) {
        const std::uint32_t j = (i + 1) % kSides;
        m.cells.push_back({i, j, kSides + j});  // clean_mesh orients every cell outwards
        m.cells.push_back({i, kSides + j, kSides + i});
        m.cells.push_back({bottom, j, i});
        m.cells.push_back({top, kSides + i, kSides + j});
    }
    return std::make_shared<const MeshShape<3>>(std::move(m), name);
}

// R M R^T for a rotation R (columns: where the axes go).
Inertia rotated(const Inertia& m, const Inertia& r) {
    Inertia out{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
                for (int l = 0; l < 3; ++l) out[i][j] += r[i][k] * m[k][l] * r[j][l];
    return out;
}

// "bodies": rigid bodies the fluid moves (issue 30). Each becomes a BodySpec and, as its shape, a solid
// boundary appended to s.boundaries (parsed after the scene's own boundaries, before the fluids: the
// order of SceneInputs' models).
constexpr double kMinBodyDensity = 1e-3, kMaxBodyDensity = 1e6;  // kg/m^3
constexpr double kMaxBodySpeed = 1e3, kMaxBodySpin = 1e4;          // m/s, rad/s

// A round body smaller than a particle holds no wall particle that could push the fluid: it flies off
// (an emitter's nozzle below particle_radius is refused alike).
void check_body_radius(const Ctx& c, const std::string& p, double radius, double particle_radius) {
    if (radius < particle_radius)
        c.fail(sub(p, "radius"), fmt::format("= {:g}: smaller than a particle; allowed: at least particle_radius = {:g} m",
                                             radius, particle_radius));
}

// The shapes a body may have in `dim` dimensions.
void check_body_shape(const Ctx& c, const std::string& p, const std::string& shape, int dim) {
    const bool ok = shape == "box" || (dim == 2 && (shape == "circle" || shape == "polygon")) ||
                    (dim == 3 && (shape == "sphere" || shape == "cylinder" || shape == "mesh"));
    if (!ok)
        c.fail(sub(p, "shape"), fmt::format("\"{}\" is not allowed for a body in {}D; allowed: {}", text_excerpt(shape),
                                            dim, dim == 2 ? "box, circle, polygon" : "box, sphere, cylinder, mesh"));
}

// A body's keys: those every body has and its shape's `own`.
void check_body_keys(const Ctx& c, const nlohmann::json& b, const std::string& p, const std::string& shape,
                     std::initializer_list<const char*> own) {
    const std::initializer_list<const char*> common = {"shape", "density", "mass", "inertia", "velocity",
                                                       "angular_velocity", "friction", "restitution", "fixed_axes",
                                                       "added_at"};
    for (auto it = b.begin(); it != b.end(); ++it) {
        bool known = false;
        for (const char* k : common) known = known || it.key() == k;
        for (const char* k : own) known = known || it.key() == k;
        if (!known)
            c.fail(sub(p, text_excerpt(it.key())),
                   fmt::format("a {} body has no '{}'; its keys: {}, {}", shape, text_excerpt(it.key()), join(own),
                               join(common)));
    }
}

// A cylinder body (3D): bs becomes its closed triangle model; its mass properties of density 1.
MassProperties parse_body_cylinder(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim,
                                   double particle_radius, BoundarySpec& bs) {
    const auto center = vec(c, b, p, "center", dim, {}, true);
    const double radius = number(c, b, p, "radius", 0.0, true, true);
    check_body_radius(c, p, radius, particle_radius);
    const double height = number(c, b, p, "height", 0.0, true, true);
    const auto axis = vec(c, b, p, "axis", dim, {0, 1, 0}, false);
    const double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(len > 0.0)) c.fail(sub(p, "axis"), "must not be zero; the direction of the cylinder's axis");
    // Its mass along y, turned onto the axis: x -> v, y -> a, z -> u (right-handed, as v x a = u).
    MassProperties unit = cylinder_mass_properties({0, -0.5 * height, 0}, radius, height, 1.0);
    const auto [a, u, v] = axis_frame(axis);
    const Inertia r{{{v[0], a[0], u[0]}, {v[1], a[1], u[1]}, {v[2], a[2], u[2]}}};
    unit.inertia = rotated(unit.inertia, r);
    unit.center = center;
    bs.center = center;
    bs.radius = radius;
    bs.height = height;
    bs.shape = "mesh";  // sampled, excluded and collided as its closed triangle model
    bs.model.mesh = cylinder_model(center, axis, radius, height, fmt::format("{}: {}", c.file, p));
    for (int k = 0; k < 3; ++k) {
        bs.min[k] = bs.model.mesh->lo()[k];
        bs.max[k] = bs.model.mesh->hi()[k];
    }
    return unit;
}

// A mesh (3D) or polygon (2D) body: a closed model; its mass properties of density 1.
MassProperties parse_body_model(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim,
                                std::vector<std::string>& warnings, BoundarySpec& bs) {
    parse_model(c, b, p, bs.shape, dim, bs.model, warnings);
    const MeshReport& rep = bs.shape == "mesh" ? bs.model.mesh->report() : bs.model.polygon->report();
    if (rep.boundary_edges || rep.non_manifold_edges)
        c.fail(sub(p, bs.shape == "mesh" ? "file" : "points"),
               fmt::format("the {} is not closed ({} open edge(s), {} non-manifold edge(s)): a body needs a closed "
                           "{} to have a volume and a mass",
                           bs.shape == "mesh" ? "model " + bs.model.file.string() : std::string("polygon"),
                           rep.boundary_edges, rep.non_manifold_edges, bs.shape == "mesh" ? "model" : "polygon"));
    MassProperties unit;  // of density 1
    if (bs.shape == "mesh") {
        unit = mesh_mass_properties(bs.model.mesh->mesh(), 1.0);
        for (int a = 0; a < 3; ++a) {
            bs.min[a] = bs.model.mesh->lo()[a];
            bs.max[a] = bs.model.mesh->hi()[a];
        }
    } else {
        unit = polygon_mass_properties(bs.model.points, 1.0);
        for (int a = 0; a < 2; ++a) {
            bs.min[a] = bs.model.polygon->lo()[a];
            bs.max[a] = bs.model.polygon->hi()[a];
        }
    }
    if (!(unit.volume > 0.0))
        c.fail(sub(p, "shape"), fmt::format("the {} encloses no volume", bs.shape == "mesh" ? "model" : "polygon"));
    return unit;
}

// A body's shape (its keys checked against it) into bs; its mass properties of density 1.
MassProperties parse_body_shape(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim, Scene& s,
                                BoundarySpec& bs) {
    MassProperties unit;  // of density 1
    if (bs.shape == "box") {
        check_body_keys(c, b, p, bs.shape, {"min", "max"});
        bs.min = vec(c, b, p, "min", dim, {}, true);
        bs.max = vec(c, b, p, "max", dim, {}, true);
        check_box(c, p, bs.min, bs.max, dim);
        unit = box_mass_properties(dim, bs.min, bs.max, 1.0);
    } else if (bs.shape == "circle" || bs.shape == "sphere") {
        check_body_keys(c, b, p, bs.shape, {"center", "radius"});
        bs.center = vec(c, b, p, "center", dim, {}, true);
        bs.radius = number(c, b, p, "radius", 0.0, true, true);
        check_body_radius(c, p, bs.radius, s.particle_radius);
        unit = ball_mass_properties(dim, bs.center, bs.radius, 1.0);
    } else if (bs.shape == "cylinder") {
        check_body_keys(c, b, p, bs.shape, {"center", "radius", "height", "axis"});
        unit = parse_body_cylinder(c, b, p, dim, s.particle_radius, bs);
    } else {  // mesh (3D) or polygon (2D): a closed model
        if (bs.shape == "mesh") check_body_keys(c, b, p, bs.shape, {"file", "scale", "rotate", "translate"});
        else check_body_keys(c, b, p, bs.shape, {"points"});
        unit = parse_body_model(c, b, p, dim, s.warnings, bs);
    }
    return unit;
}

// Mass: from the density, or given (the density follows); the inertia scales with it unless given.
MassProperties parse_body_mass(const Ctx& c, const nlohmann::json& b, const std::string& p,
                               const MassProperties& unit) {
    const bool has_density = b.contains("density"), has_mass = b.contains("mass");
    if (has_density == has_mass)
        c.fail(p, has_density ? "give either 'density' or 'mass', not both"
                              : "missing 'density' (kg/m^3) or 'mass' (kg; 2D: kg per metre of depth); one is required");
    const double scale = has_density ? number(c, b, p, "density", 0.0, true, true) : number(c, b, p, "mass", 0.0, true, true) / unit.mass;
    // What the rigid-body engines can step (Box2D and Bullet work in single precision: a mass of 3e38 or a
    // density of 1e-38 aborted eddy inside Box2D): a mean density from a thousandth of air's to 40 times
    // osmium's, speeds below 1,000 m/s and 10,000 rad/s.
    if (!(scale >= kMinBodyDensity && scale <= kMaxBodyDensity))
        c.fail(sub(p, has_density ? "density" : "mass"),
               fmt::format("= {:g}{}: allowed: a mean density of {:g} to {:g} kg/m^3", has_density ? scale : scale * unit.mass,
                           has_density ? "" : fmt::format(" (a mean density of {:g} kg/m^3)", scale), kMinBodyDensity,
                           kMaxBodyDensity));
    MassProperties mass = unit;
    mass.mass = unit.mass * scale;
    for (auto& row : mass.inertia)
        for (auto& x : row) x *= scale;
    return mass;
}

// A body's given "inertia": 2D its one moment; 3D three moments [Ixx, Iyy, Izz] or a symmetric 3x3 tensor.
Inertia read_body_inertia(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim) {
    const std::string ip = sub(p, "inertia");
    const auto& in = b["inertia"];
    Inertia given{};
    if (dim == 2) {
        given[2][2] = number(c, b, p, "inertia", 0.0, true, true);
    } else if (in.is_array() && in.size() == 3 && in[0].is_array()) {
        for (int r = 0; r < 3; ++r) {
            if (!in[r].is_array() || in[r].size() != 3)
                c.fail(ip, "expected 3 moments [Ixx, Iyy, Izz] or a 3x3 tensor [[..], [..], [..]] (kg m^2)");
            for (int k = 0; k < 3; ++k) {
                if (!in[r][k].is_number() || !std::isfinite(in[r][k].get<double>()))
                    c.fail(ip, "expected finite numbers (kg m^2)");
                given[r][k] = in[r][k].get<double>();
            }
        }
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < r; ++k)
                if (given[r][k] != given[k][r]) c.fail(ip, "the tensor must be symmetric");
    } else {
        const auto d = vec(c, b, p, "inertia", dim, {}, true, 3);
        for (int k = 0; k < 3; ++k) given[k][k] = d[k];
    }
    return given;
}

// The given inertia (key path `ip`) against `shape`, the shape's own at the body's mass.
void check_body_inertia(const Ctx& c, const std::string& ip, int dim, const Inertia& given, const Inertia& shape) {
    for (int k = dim == 2 ? 2 : 0; k < 3; ++k) {
        if (!(given[k][k] > 0.0))
            c.fail(ip, fmt::format("the moments must be > 0 (kg m^2{}), got {:g}", dim == 2 ? " per metre" : "", given[k][k]));
        // Within a factor 1,000 of the shape's own at this mass (a hollow shell, a lead core).
        const double own = shape[k][k], ratio = given[k][k] / own;
        if (!(ratio >= 1e-3 && ratio <= 1e3))
            c.fail(ip, fmt::format("moment {:g} is {:g} times the shape's own at this mass ({:g} kg m^2{}); allowed: "
                                   "0.001 to 1000 times it",
                                   given[k][k], ratio, own, dim == 2 ? " per metre" : ""));
    }
    if (dim == 3) {  // a physical tensor: each moment at most the sum of the other two
        const auto pa = principal_axes(given);
        if (!(pa.moments[0] > 0.0) || pa.moments[2] > pa.moments[0] + pa.moments[1] * (1.0 + 1e-9))
            c.fail(ip, "is no rigid body's inertia: its principal moments must be > 0 and each at most the sum of the "
                       "other two");
    }
}

// A body's initial velocity and spin (2D: about z), up to kMaxBodySpeed and kMaxBodySpin.
void parse_body_velocities(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim, BodySpec& body) {
    body.velocity = vec(c, b, p, "velocity", dim, {0, 0, 0}, false);
    if (dim == 2) body.angular_velocity[2] = number(c, b, p, "angular_velocity", 0.0, false, false);
    else body.angular_velocity = vec(c, b, p, "angular_velocity", dim, {0, 0, 0}, false);
    auto length = [](const std::array<double, 3>& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); };
    if (!(length(body.velocity) <= kMaxBodySpeed))
        c.fail(sub(p, "velocity"), fmt::format("|v| = {:g} m/s: allowed: up to {:g} m/s", length(body.velocity), kMaxBodySpeed));
    if (!(length(body.angular_velocity) <= kMaxBodySpin))
        c.fail(sub(p, "angular_velocity"),
               fmt::format("= {:g} rad/s: allowed: up to {:g} rad/s", length(body.angular_velocity), kMaxBodySpin));
}

// A body's contact: "friction" (>= 0) and "restitution" (0 to 1).
void parse_body_contact(const Ctx& c, const nlohmann::json& b, const std::string& p, BodySpec& body) {
    body.friction = number(c, b, p, "friction", 0.5, false, false);
    if (body.friction < 0.0) c.fail(sub(p, "friction"), fmt::format("= {:g}: must be >= 0", body.friction));
    body.restitution = number(c, b, p, "restitution", 0.0, false, false);
    if (body.restitution < 0.0 || body.restitution > 1.0)
        c.fail(sub(p, "restitution"), fmt::format("= {:g}: allowed: 0 (no bounce) to 1", body.restitution));
}

// A body's "fixed_axes" (`fa`): the axes it may not move along ("x") or turn about ("rx").
void parse_fixed_axes(const Ctx& c, const nlohmann::json& fa, const std::string& p, int dim, BodySpec& body) {
    const char* allowed = dim == 2 ? "\"x\", \"y\", \"rz\"" : "\"x\", \"y\", \"z\", \"rx\", \"ry\", \"rz\"";
    if (!fa.is_array()) c.fail(sub(p, "fixed_axes"), fmt::format("must be a list of axes; allowed: {}", allowed));
    for (const auto& a : fa) {
        const std::string n = a.is_string() ? a.get<std::string>() : json_excerpt(a);
        const bool rot = n.size() == 2 && n[0] == 'r';
        const int k = n.empty() ? -1 : (n.back() == 'x' ? 0 : n.back() == 'y' ? 1 : n.back() == 'z' ? 2 : -1);
        const bool valid = a.is_string() && k >= 0 && (n.size() == 1 || rot) &&
                           (dim == 3 || (rot ? k == 2 : k < 2));
        if (!valid)
            c.fail(sub(p, "fixed_axes"), fmt::format("\"{}\" is no axis of a {}D body; allowed: {}", text_excerpt(n), dim, allowed));
        (rot ? body.fixed_rotation : body.fixed_translation)[k] = true;
    }
}

// bodies[i]: its BodySpec appended to s.bodies, its shape to s.boundaries.
void parse_body(const Ctx& c, const nlohmann::json& b, std::size_t i, int dim, Scene& s) {
    const std::string p = fmt::format("bodies[{}]", i);
    check_keys(c, b, p, {"shape", "min", "max", "center", "radius", "height", "axis", "file", "scale", "rotate",
                         "translate", "points", "density", "mass", "inertia", "velocity", "angular_velocity",
                         "friction", "restitution", "fixed_axes", "added_at"});
    BodySpec body;
    BoundarySpec bs;
    bs.solid = true;
    bs.body = static_cast<int>(i);
    body.shape = bs.shape = text(c, b, p, "shape", "", true);
    check_body_shape(c, p, bs.shape, dim);
    const MassProperties unit = parse_body_shape(c, b, p, dim, s, bs);
    body.mass = parse_body_mass(c, b, p, unit);
    if (b.contains("inertia")) {
        const Inertia given = read_body_inertia(c, b, p, dim);
        check_body_inertia(c, sub(p, "inertia"), dim, given, body.mass.inertia);
        body.mass.inertia = given;
    }
    parse_body_velocities(c, b, p, dim, body);
    parse_body_contact(c, b, p, body);
    body.added_at = number(c, b, p, "added_at", 0.0, false, false);  // add_body's (eddy/simulation.hpp)
    if (!(body.added_at >= 0.0 && body.added_at <= kMaxDuration))
        c.fail(sub(p, "added_at"), fmt::format("= {:g}: allowed: 0 (from the start) to 1e9 s", body.added_at));
    if (b.contains("fixed_axes")) parse_fixed_axes(c, b["fixed_axes"], p, dim, body);
    for (int a = 0; a < 3; ++a) bs.pivot[a] = body.mass.center[a];
    body.boundary = s.boundaries.size();
    s.boundaries.push_back(std::move(bs));
    s.bodies.push_back(std::move(body));
}

void parse_bodies(const Ctx& c, const nlohmann::json& j, int dim, Scene& s) {
    if (!j.is_array()) c.fail("bodies", "must be a list");
    for (std::size_t i = 0; i < j.size(); ++i) parse_body(c, j[i], i, dim, s);
}

// "dimension": 2 or 3, required.
int parse_dimension(const Ctx& c, const nlohmann::json& j) {
    if (!j.contains("dimension")) c.fail("dimension", "missing; it is required (2 or 3)");
    if (!j["dimension"].is_number_integer() || (j["dimension"] != 2 && j["dimension"] != 3))
        c.fail("dimension", fmt::format("= {}: allowed: 2, 3", json_excerpt(j["dimension"])));
    return j["dimension"].get<int>();
}

// "method": one of kMethods (wcsph when not given).
std::string parse_method(const Ctx& c, const nlohmann::json& j) {
    std::string method = text(c, j, "", "method", "wcsph", false);
    if (std::none_of(std::begin(kMethods), std::end(kMethods), [&](const char* m) { return method == m; })) {
        std::string allowed;
        for (const char* m : kMethods) allowed += (allowed.empty() ? "" : ", ") + std::string(m);
        c.fail("method", fmt::format("\"{}\" is not a method; allowed: {}", text_excerpt(method), allowed));
    }
    return method;
}

// "particle_radius": required, kMinParticleRadius to kMaxParticleRadius.
double parse_particle_radius(const Ctx& c, const nlohmann::json& j) {
    const double radius = number(c, j, "", "particle_radius", 0.0, true, true);
    if (radius < kMinParticleRadius)
        c.fail("particle_radius", fmt::format("= {:g}: below the smallest allowed radius {:g} m (eddy computes in floats); "
                                              "allowed: {:g} to {:g} m",
                                              radius, kMinParticleRadius, kMinParticleRadius, kMaxParticleRadius));
    if (radius > kMaxParticleRadius)
        c.fail("particle_radius", fmt::format("= {:g}: above the largest allowed radius {:g} m (masses would overflow a "
                                              "float); allowed: {:g} to {:g} m",
                                              radius, kMaxParticleRadius, kMinParticleRadius, kMaxParticleRadius));
    return radius;
}

// "settings": the method's own (s.method parsed before).
void parse_settings(const Ctx& c, const nlohmann::json& j, Scene& s) {
    if (j.contains("settings")) {
        if (!j["settings"].is_object()) c.fail("settings", "must be an object of the method's settings");
        s.settings = j["settings"];
    }
    // Unknown settings keys ("did you mean") and bad values at load, as make_simulation would read them.
    detail::check_method_settings(s.method, s.settings, s.where() + ": settings");
}

// A boundary's keys, by its shape.
void check_boundary_keys(const Ctx& c, const nlohmann::json& b, const std::string& p, const std::string& shape) {
    if (shape == "box")
        check_shape_keys(c, b, p, "box", {"shape", "solid", "min", "max", "angular_velocity", "pivot", "axis",
                                          "open_top", "motion"});
    else if (shape == "cylinder")
        check_shape_keys(c, b, p, "cylinder", {"shape", "solid", "center", "radius", "height", "angular_velocity",
                                               "pivot", "axis", "open_top", "motion"});
    else if (shape == "mesh")
        check_shape_keys(c, b, p, "mesh", {"shape", "solid", "file", "scale", "rotate", "translate",
                                           "angular_velocity", "pivot", "axis", "motion"});
    else if (shape == "polygon")
        check_shape_keys(c, b, p, "polygon",
                         {"shape", "solid", "points", "closed", "angular_velocity", "pivot", "motion"});
    else
        check_shape_keys(c, b, p, shape, {"shape", "solid", "center", "radius", "angular_velocity", "pivot",
                                          "axis", "motion"});
}

// A boundary's geometry by its shape (bs.shape, bs.solid set), with its default pivot.
void parse_boundary_geometry(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim,
                             std::vector<std::string>& warnings, BoundarySpec& bs) {
    if (bs.shape == "box") {
        bs.min = vec(c, b, p, "min", dim, {}, true);
        bs.max = vec(c, b, p, "max", dim, {}, true);
        check_box(c, p, bs.min, bs.max, dim);
        for (int a = 0; a < 3; ++a) bs.pivot[a] = 0.5 * (bs.min[a] + bs.max[a]);
    } else if (bs.shape == "mesh" || bs.shape == "polygon") {
        parse_model(c, b, p, bs.shape, dim, bs.model, warnings);
        // The model's box, as a box's corners (scene bounds, default pivot).
        auto box = [&](const auto& shape) {
            for (int a = 0; a < dim; ++a) {
                bs.min[a] = shape.lo()[a];
                bs.max[a] = shape.hi()[a];
                bs.pivot[a] = 0.5 * (bs.min[a] + bs.max[a]);
            }
        };
        if (bs.model.mesh) box(*bs.model.mesh);
        else box(*bs.model.polygon);
    } else {
        bs.center = vec(c, b, p, "center", dim, {}, true);
        bs.radius = number(c, b, p, "radius", 0.0, true, true);
        bs.pivot = bs.center;
        if (bs.shape == "cylinder") {
            bs.height = number(c, b, p, "height", 0.0, true, true);
            bs.pivot[1] += 0.5 * bs.height;
            if (bs.solid) c.fail(sub(p, "solid"), "cylinders are containers only; allowed: false");
        }
    }
}

// boundaries[i] (key path p): a container or a solid obstacle.
BoundarySpec parse_boundary(const Ctx& c, const nlohmann::json& b, const std::string& p, int dim,
                            std::vector<std::string>& warnings) {
    check_keys(c, b, p, {"shape", "solid", "min", "max", "center", "radius", "height", "angular_velocity",
                         "pivot", "axis", "open_top", "motion", "file", "scale", "rotate", "translate", "points",
                         "closed"});
    BoundarySpec bs;
    bs.shape = text(c, b, p, "shape", "", true);
    check_shape_dim(c, p, bs.shape, dim, false);
    check_boundary_keys(c, b, p, bs.shape);
    bs.solid = flag(c, b, p, "solid", false);
    bs.open_top = flag(c, b, p, "open_top", false);
    parse_boundary_geometry(c, b, p, dim, warnings, bs);
    if (bs.open_top && bs.solid) c.fail(sub(p, "open_top"), "only containers have a top to open, not solids");
    parse_motion(c, b, p, dim, bs);
    return bs;
}

void parse_boundaries(const Ctx& c, const nlohmann::json& j, int dim, Scene& s) {
    if (!j.is_array()) c.fail("boundaries", "must be a list");
    for (std::size_t i = 0; i < j.size(); ++i) {
        const BoundarySpec bs = parse_boundary(c, j[i], fmt::format("boundaries[{}]", i), dim, s.warnings);
        s.boundaries.push_back(bs);
    }
}

// A file fluid's "file": its path (relative ones to the scene file's folder), normalised.
std::filesystem::path parse_particle_file_path(const Ctx& c, const nlohmann::json& f, const std::string& p) {
    const std::string file = text(c, f, p, "file", "", true);
    if (file.empty()) c.fail(sub(p, "file"), "must name a particle file (.vtp, .csv, .ply)");
    if (file.find('\0') != std::string::npos)
        c.fail(sub(p, "file"), fmt::format("\"{}\" holds a NUL byte (\\u0000); allowed: a plain path", text_excerpt(file)));
    return io::scene_relative_path(file, c.file);
}

// A resumed run: a file fluid's particles (x.., v.. per particle) and box from the checkpoint's next particles.
void take_checkpoint_particles(const Ctx& c, const std::string& p, int dim, FluidSpec& fs) {
    if (c.next_particles >= c.inputs->particle_files.size() || !c.inputs->particle_files[c.next_particles])
        c.fail(sub(p, "file"), "the checkpoint carries no particles for it");
    fs.file_particles = c.inputs->particle_files[c.next_particles++];
    const auto& d = *fs.file_particles;
    if (d.empty() || d.size() % std::size_t(2 * dim) != 0)
        c.fail(sub(p, "file"), "the checkpoint's particles for it are not whole particles");
    for (int a = 0; a < 3; ++a) {
        fs.min[a] = a < dim ? 1e300 : 0.0;
        fs.max[a] = a < dim ? -1e300 : 0.0;
    }
    for (std::size_t k = 0; k < d.size(); k += std::size_t(2 * dim))
        for (int a = 0; a < dim; ++a) {
            if (!std::isfinite(d[k + a])) c.fail(sub(p, "file"), "the checkpoint's particles are not finite");
            fs.min[a] = std::min(fs.min[a], d[k + a]);
            fs.max[a] = std::max(fs.max[a], d[k + a]);
        }
}

// A particle set read from fs.file: appended to `data` (x.., v.. per particle), its box into fs.min/max.
template <class Set>
void take_particles(const Ctx& c, const std::string& p, const Set& set, FluidSpec& fs, std::vector<double>& data) {
    constexpr int FD = static_cast<int>(sizeof(set.position[0]) / sizeof(float));
    if (set.empty()) c.fail(sub(p, "file"), fmt::format("{}: holds no particle", fs.file.string()));
    for (int a = 0; a < 3; ++a) {
        fs.min[a] = a < FD ? 1e300 : 0.0;
        fs.max[a] = a < FD ? -1e300 : 0.0;
    }
    data.reserve(set.size() * 2 * FD);
    for (std::size_t k = 0; k < set.size(); ++k) {
        for (int a = 0; a < FD; ++a) {
            const double x = set.position[k][a];
            fs.min[a] = std::min(fs.min[a], x);
            fs.max[a] = std::max(fs.max[a], x);
            data.push_back(x);
        }
        for (int a = 0; a < FD; ++a) data.push_back(set.velocity[k][a]);
    }
}

// Does a .csv particle file's header name a z column?
bool csv_has_z(const std::filesystem::path& file) {
    // Its header line only, opened without blocking (a FIFO is refused, not waited on; a
    // missing file is reported by read_particles in read_file_particles).
    std::string header;
    if (auto in = io::InputFile::open_existing(file)) {
        char block[4096];
        for (std::size_t got; header.find('\n') == std::string::npos && header.size() < (1u << 20) &&
                              (got = in->read(block, sizeof block)) > 0;)
            header.append(block, got);
    }
    header = header.substr(0, header.find('\n'));
    return header.find(",z") != std::string::npos;
}

// A file fluid's particles read from fs.file into fs.file_particles (and its box), in the scene's dimension.
void read_file_particles(const Ctx& c, const std::string& p, int dim, FluidSpec& fs) {
    auto data = std::make_shared<std::vector<double>>();
    const std::string ext = fs.file.extension().string();
    bool three = false;
    if (ext == ".csv") {
        three = csv_has_z(fs.file);
    } else {
        three = true;  // vtp and ply always hold 3 components; 2D frames have z = 0
    }
    if (dim == 2) {
        if (ext == ".csv" && three)
            c.fail(sub(p, "file"), fmt::format("{}: a 3D particle file in a 2D scene", fs.file.string()));
        if (ext == ".csv") take_particles(c, p, io::read_particles<2>(fs.file), fs, *data);
        else {
            const auto set3 = io::read_particles<3>(fs.file);
            ParticleSet<2> set2;
            for (std::size_t k = 0; k < set3.size(); ++k) {
                if (set3.position[k][2] != 0.0f)
                    c.fail(sub(p, "file"), fmt::format("{}: a 3D particle file (z != 0) in a 2D scene", fs.file.string()));
                set2.push_back(Vec2{{set3.position[k][0], set3.position[k][1]}},
                               Vec2{{set3.velocity[k][0], set3.velocity[k][1]}});
            }
            take_particles(c, p, set2, fs, *data);
        }
    } else {
        if (ext == ".csv" && !three)
            c.fail(sub(p, "file"), fmt::format("{}: a 2D particle file in a 3D scene", fs.file.string()));
        take_particles(c, p, io::read_particles<3>(fs.file), fs, *data);
    }
    fs.file_particles = std::move(data);
}

// A frame of an earlier run: its particles as they were (positions and velocities).
void parse_file_fluid(const Ctx& c, const nlohmann::json& f, const std::string& p, int dim, Scene& s, FluidSpec& fs) {
    check_shape_keys(c, f, p, "file", {"shape", "file"});
    fs.file = parse_particle_file_path(c, f, p);
    if (c.inputs) {  // a resumed run: the particles its checkpoint carries (x.., v.. per particle)
        take_checkpoint_particles(c, p, dim, fs);
        return;
    }
    if (!c.budget.unlimited()) {  // from its size and counts, before it is read
        MemoryEstimate e = estimate_particle_file_memory(fs.file, dim, c.budget);
        e.key = fmt::format("{} ({})", sub(p, "file"), fs.file.string());
        check_memory(e, c.budget, c.file);
    }
    read_file_particles(c, p, dim, fs);
    if (auto w = detail::check_file_fluid(s, fs, fmt::format("{}: {}", c.file, p)); !w.empty())
        s.warnings.push_back(std::move(w));
}

// A fluid block's geometry by its shape: a model, a box or a ball.
void parse_fluid_geometry(const Ctx& c, const nlohmann::json& f, const std::string& p, int dim,
                          std::vector<std::string>& warnings, FluidSpec& fs) {
    if (fs.shape == "mesh" || fs.shape == "polygon") {
        parse_model(c, f, p, fs.shape, dim, fs.model, warnings);
        auto box = [&](const auto& shape) {
            for (int a = 0; a < dim; ++a) {
                fs.min[a] = shape.lo()[a];
                fs.max[a] = shape.hi()[a];
            }
        };
        if (fs.model.mesh) box(*fs.model.mesh);
        else box(*fs.model.polygon);
        detail::check_model_fluid(fs, fmt::format("{}: {}", c.file, p));
    } else if (fs.shape == "box") {
        fs.min = vec(c, f, p, "min", dim, {}, true);
        fs.max = vec(c, f, p, "max", dim, {}, true);
        check_box(c, p, fs.min, fs.max, dim);
    } else {
        fs.center = vec(c, f, p, "center", dim, {}, true);
        fs.radius = number(c, f, p, "radius", 0.0, true, true);
    }
}

// fluids[i] (key path p): appended to s.fluids.
void parse_fluid(const Ctx& c, const nlohmann::json& f, const std::string& p, int dim, Scene& s) {
    check_keys(c, f, p, {"shape", "min", "max", "center", "radius", "velocity", "file", "scale", "rotate", "translate",
                         "points"});
    FluidSpec fs;
    fs.shape = text(c, f, p, "shape", "", true);
    if (fs.shape != "file") check_shape_dim(c, p, fs.shape, dim, true);
    if (fs.shape == "file") {
        parse_file_fluid(c, f, p, dim, s, fs);
        s.fluids.push_back(fs);
        return;
    }
    if (fs.shape == "box") check_shape_keys(c, f, p, "box", {"shape", "min", "max", "velocity"});
    else if (fs.shape == "mesh")
        check_shape_keys(c, f, p, "mesh", {"shape", "file", "scale", "rotate", "translate", "velocity"});
    else if (fs.shape == "polygon") check_shape_keys(c, f, p, "polygon", {"shape", "points", "velocity"});
    else check_shape_keys(c, f, p, fs.shape, {"shape", "center", "radius", "velocity"});
    parse_fluid_geometry(c, f, p, dim, s.warnings, fs);
    fs.velocity = vec(c, f, p, "velocity", dim, {0, 0, 0}, false);
    detail::check_fluid_velocity(fs.velocity, dim, fmt::format("{}: {}", c.file, p));
    s.fluids.push_back(fs);
}

void parse_fluids(const Ctx& c, const nlohmann::json& j, int dim, Scene& s) {
    // A scene with emitters may start empty (the fluid comes from them).
    if (!j.contains("fluids") && s.emitters.empty()) c.fail("fluids", "missing; at least one fluid block or emitter is required");
    const nlohmann::json no_fluids = nlohmann::json::array();
    const nlohmann::json& fluids = j.contains("fluids") ? j["fluids"] : no_fluids;
    if (!fluids.is_array() || (fluids.empty() && s.emitters.empty()))
        c.fail("fluids", "must be a non-empty list (or give emitters)");
    for (std::size_t i = 0; i < fluids.size(); ++i) parse_fluid(c, fluids[i], fmt::format("fluids[{}]", i), dim, s);
}

Scene parse_document(nlohmann::json& j, const std::string& where, const MemoryBudget& budget,
                     const SceneInputs* inputs) {
    const Ctx c{where, budget, inputs};
    if (j.is_object() && j.contains("method") && j["method"] == "shallow_water") return parse_grid_scene(c, j, where);
    check_keys(c, j, "", {"name", "description", "dimension", "method", "particle_radius", "gravity", "duration", "output",
                          "camera", "settings", "boundaries", "bodies", "fluids", "emitters", "domain", "sinks",
                          "probes"});
    Scene s;
    s.source = where;
    s.name = text(c, j, "", "name", "", true);
    s.description = text(c, j, "", "description", "", false);
    s.dimension = parse_dimension(c, j);
    const int dim = s.dimension;
    s.method = parse_method(c, j);
    s.particle_radius = parse_particle_radius(c, j);
    s.gravity = vec(c, j, "", "gravity", dim, {0, -9.81, 0}, false);
    s.duration = run_duration(c, j);

    if (j.contains("output")) parse_output(c, j["output"], kFormats, "format", s.output, true);
    if (j.contains("camera")) parse_camera(c, j["camera"], dim, s.camera);
    parse_settings(c, j, s);

    if (j.contains("boundaries")) parse_boundaries(c, j["boundaries"], dim, s);
    if (j.contains("bodies")) parse_bodies(c, j["bodies"], dim, s);
    if (j.contains("emitters")) parse_emitters(c, j["emitters"], dim, s.duration, s);
    parse_outflow(c, j, dim, s);
    parse_probes(c, j, dim, s);
    parse_fluids(c, j, dim, s);
    return s;
}

}  // namespace

Scene load_scene(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                 const MemoryBudget& budget) {
    // read_json_file: a device or a folder is refused before reading, the nesting is bounded before
    // parsing, and syntax errors and out-of-range numbers become one line naming the file.
    return parse_scene(read_json_file(file), file.string(), overrides, budget);
}

std::string scene_keys_help() {
    return R"(Scene file keys (JSON; vectors have 2 or 3 numbers as "dimension" says; SI units):
  name (text, required)            scene name
  description (text)               one line, shown by `eddy scenes`
  dimension (2|3, required)        2D or 3D
  method (text; default "wcsph")   solver: wcsph | dfsph | pbf | clavet | shallow_water
  particle_radius (m, 1e-9 to 1e6, required)  particle radius r; fluid is sampled on a lattice of spacing 2r
  gravity (m/s^2; default [0,-9.81(,0)])
  duration (s, 0 to 1e9; default 1)  simulated time of `eddy run`
  output.fps (1/s, 0 to 1e6; default 25)  frames per simulated second (a frame at least every 1 us)
  output.formats (list of vtk|csv|ply; default ["vtk"])
  output.render (true|false; default false)  a PNG per frame
  output.wall_pressure (true|false; default false)  the walls every frame (frames/walls_NNNNN.vtp,
                                   walls.pvd) with the fluid's pressure on them (point array pressure)
  camera.eye, camera.target (m, 3 numbers), camera.fov (deg; default 40)  3D pictures
  probes[] (list, at most 4096)    points read every frame into probes.csv: the fluid's pressure (Pa)
                                   and velocity (m/s) averaged over the particles within the kernel
                                   support (zeros where none is: a dry probe)
    name (text; default probe_I)   1 to 64 letters, digits, _ - .; unique
    position (m, required)         the point
  settings (object)                the method's settings, listed below
  boundaries[] (list)              walls, sampled with two layers of boundary particles:
    shape: box | circle, polygon (2D) | sphere, cylinder (axis y), mesh (3D)
    solid (true|false; default false)  false: a container (fluid inside); true: an obstacle (fluid outside)
    min, max (m)                   box corners
    center (m), radius (m, > 0)    circle/sphere centre; cylinder: centre of the bottom disc
    height (m, > 0)                cylinder height along y
    open_top (true|false)          box/cylinder container without a lid
    file (path, meshes)            a model (OBJ, STL, PLY, glTF, FBX, ...), relative to the scene's folder
    scale (number or 3), rotate (deg about x, y, z), translate (m)   meshes: placement, in that order
    points ([[x, y], ...], polygons)   a closed polygon
    closed (true|false, polygons)      false: an open polyline (a tank without a lid), a thin shell
    angular_velocity (rad/s; default 0)  rigid rotation, counter-clockwise
    pivot (m; default the shape's centre), axis (3 numbers, 3D; default [0,0,1])
    motion ({velocity, angular_velocity, axis, pivot, keyframes: [{time, translate, rotate}]})
                                   a prescribed motion instead of the three keys above
    (a key that does not belong to the shape, e.g. a box's radius, is an error)
  bodies[] (list)                  rigid bodies the fluid moves and that move it (docs/bodies.md):
    shape: box | circle, polygon (2D) | sphere, cylinder, mesh (3D); min, max, center, radius,
    height, axis (cylinder; default [0,1,0]; center is its middle), file, scale, rotate, translate,
    points as for boundaries (models and polygons closed)
    density (kg/m^3) or mass (kg; 2D: kg per metre of depth), one of them required
    inertia (kg m^2 about the centre of mass; 2D: a number; 3D: [Ixx, Iyy, Izz] or a 3x3 tensor;
                                   default: from the shape and its density)
    velocity (m/s), angular_velocity (rad/s; 2D: a number, 3D: 3 numbers)   initial; default 0
    friction (>= 0; default 0.5), restitution (0 to 1; default 0)   its contacts (Bullet, Box2D)
    fixed_axes (list of "x", "y", "z", "rx", "ry", "rz")   axes it cannot move or turn along
    added_at (s; default 0)        written by add_body (viewer, Python): when it joined a running run;
                                   its overlaps were checked then, not at the others' starting poses
  fluids[] (list, at least one)    blocks of fluid:
    shape: box | circle, polygon (2D) | sphere, mesh (3D); min, max or center, radius (m), or
    file, scale, rotate, translate (meshes), or points (polygons); velocity (m/s; default 0)
    shape: file, file: a particle file (.vtp, .csv, .ply; e.g. a frame of an earlier run): its
    particles and velocities as they are (same particle_radius as that run)

Shallow-water scene keys ("method": "shallow_water"; docs/scenes.md; expressions of x, y, Lx, Ly, dx):
  gravity (m/s^2, a number; default 9.81)   g, acting on the height
  grid.cells ([nx, ny], required), grid.dx (m, > 0, required)   x runs from 0 to nx dx, y to ny dx
  terrain (expression; default "0"), or {"heightmap": "file.png", "scale": m, "offset": m}
  water.surface (eta) or water.depth (h) (expression); water.u, water.v (m/s), water.ink (expressions)
  obstacles (expression, non-zero inside solid cells)
  borders.x, borders.y (wall | open | [low, high]; default wall)   open: absorbing, waves and rivers pass through
  sources[] ({min, max (m), rate (m/s of depth), start, end (s)})   water added
  ink[] ({min, max, rate (1/s), start, end})   ink added
  drops ({rate (1/s), radius (m), height (m), ink, seed, start, end})   random drops
  bodies[] ({shape: box|sphere|cylinder, center, size|radius, length, axis, yaw, density|mass, velocity, ...})
  output.formats (list of vti|csv|obj|ply; default ["vti"]), output.fps, output.render
)";
}

std::filesystem::path bundled_scenes_dir() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("EDDY_SCENES_DIR"); env && *env) return env;
    const fs::path exe = exe_dir();
    if (!exe.empty()) {
        if (fs::is_directory(exe / "../share/eddy/scenes")) return fs::weakly_canonical(exe / "../share/eddy/scenes");
        if (fs::is_directory(exe / "../../scenes") && fs::exists(exe / "../../scenes/dam_break_3d.json"))
            return fs::weakly_canonical(exe / "../../scenes");
    }
    if (fs::is_directory(EDDY_SOURCE_SCENES_DIR)) return EDDY_SOURCE_SCENES_DIR;
    return EDDY_INSTALL_SCENES_DIR;
}

std::vector<SceneEntry> list_bundled_scenes() {
    namespace fs = std::filesystem;
    std::vector<SceneEntry> out;
    const fs::path dir = bundled_scenes_dir();
    if (!fs::is_directory(dir)) throw InputError(fmt::format("{}: the bundled scenes folder is missing", dir.string()));
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".json") continue;
        const Scene s = load_scene(e.path());
        out.push_back({s.name, s.description, e.path()});
    }
    std::sort(out.begin(), out.end(), [](const SceneEntry& a, const SceneEntry& b) { return a.name < b.name; });
    return out;
}


std::filesystem::path resolve_scene(const std::string& arg) {
    namespace fs = std::filesystem;
    // error_code forms throughout: a name too long for the file system is "not found", not an exception.
    std::error_code ec;
    const std::string shown = text_excerpt(arg);
    const auto st = fs::status(arg, ec);
    if (fs::is_regular_file(st)) return arg;
    if (fs::is_directory(st))
        throw InputError(fmt::format("{}: is a folder, not a scene file; give a .json file or a bundled scene name", shown));
    if (fs::exists(st))  // /dev/null, a pipe: reading it would give nothing or never end
        throw InputError(fmt::format("{}: not a regular file; allowed: a .json scene file or a bundled scene name", shown));
    const fs::path dir = bundled_scenes_dir();
    for (const fs::path& cand : {dir / arg, dir / (arg + ".json")})
        if (fs::is_regular_file(cand, ec)) return cand;
    if (arg.find('/') != std::string::npos || fs::path(arg).extension() == ".json")
        throw InputError(fmt::format("{}: cannot open file: No such file or directory", shown));
    std::vector<std::string> names;
    if (fs::is_directory(dir, ec))
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    // The closest name, if it is close: a typo (dam_brake_2d), not a different word.
    std::string guess;
    if (arg.size() <= 100) {
        std::size_t best = std::max<std::size_t>(2, arg.size() / 3) + 1;
        for (const auto& n : names)
            if (const std::size_t d = detail::edit_distance(arg, n); d < best) {
                best = d;
                guess = n;
            }
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("{}: no such scene file or bundled scene; {}bundled: {}", shown,
                                 guess.empty() ? "" : fmt::format("did you mean {}? ", guess), list));
}

double fluid_height(const Scene& s) {
    Vec3 down = from_array<3>(s.gravity);
    const float g = norm(down);
    down = g > 0.0f ? down * (1.0f / g) : Vec3{{0.0f, -1.0f, 0.0f}};
    double lo = 1e300, hi = -1e300;
    for (const auto& f : s.fluids) {
        if (f.shape == "box" || f.shape == "mesh" || f.shape == "polygon" || f.shape == "file") {  // models, files: their box
            for (int corner = 0; corner < 8; ++corner) {
                Vec3 p{{float(corner & 1 ? f.max[0] : f.min[0]), float(corner & 2 ? f.max[1] : f.min[1]),
                        float(s.dimension == 3 && (corner & 4) ? f.max[2] : f.min[2])}};
                const double h = -dot(p, down);
                lo = std::min(lo, h);
                hi = std::max(hi, h);
            }
        } else {
            const double h = -dot(from_array<3>(f.center), down);
            lo = std::min(lo, h - f.radius);
            hi = std::max(hi, h + f.radius);
        }
    }
    // Emitters: their fluid may fill the containers from the bottom up to the nozzle, and a jet rises
    // v^2 / 2g above it.
    if (!s.emitters.empty()) {
        std::array<double, 3> blo{0, 0, 0}, bhi{0, 0, 0};
        if (s.dimension == 2) {
            const Aabb<2> b = scene_bounds<2>(s);
            for (int a = 0; a < 2; ++a) { blo[a] = b.lo[a]; bhi[a] = b.hi[a]; }
        } else {
            const Aabb<3> b = scene_bounds<3>(s);
            for (int a = 0; a < 3; ++a) { blo[a] = b.lo[a]; bhi[a] = b.hi[a]; }
        }
        for (int corner = 0; corner < 8; ++corner) {
            Vec3 p{{float(corner & 1 ? bhi[0] : blo[0]), float(corner & 2 ? bhi[1] : blo[1]),
                    float(s.dimension == 3 && (corner & 4) ? bhi[2] : blo[2])}};
            lo = std::min(lo, -double(dot(p, down)));
        }
        for (const auto& e : s.emitters) {
            const double h = -dot(from_array<3>(e.center), down) + (g > 0.0f ? e.speed * e.speed / (2.0 * g) : 0.0);
            lo = std::min(lo, h);
            hi = std::max(hi, h);
        }
    }
    return hi > lo ? hi - lo : 0.0;
}

template <int D>
Aabb<D> scene_bounds(const Scene& s) {
    Aabb<D> b;
    b.lo = Vec<D>::filled(std::numeric_limits<float>::max());
    b.hi = Vec<D>::filled(-std::numeric_limits<float>::max());
    auto grow = [&](const std::array<double, 3>& lo, const std::array<double, 3>& hi) {
        for (int a = 0; a < D; ++a) {
            b.lo[a] = std::min(b.lo[a], float(lo[a]));
            b.hi[a] = std::max(b.hi[a], float(hi[a]));
        }
    };
    auto round_shape = [&](const std::array<double, 3>& c, double r, double height) {
        std::array<double, 3> lo = c, hi = c;
        for (int a = 0; a < 3; ++a) {
            lo[a] -= r;
            hi[a] += r;
        }
        if (height > 0) {
            lo[1] = c[1];
            hi[1] = c[1] + height;
        }
        grow(lo, hi);
    };
    for (const auto& x : s.boundaries) {
        if (x.shape == "box" || x.shape == "mesh" || x.shape == "polygon") grow(x.min, x.max);
        else round_shape(x.center, x.radius, x.shape == "cylinder" ? x.height : 0.0);
    }
    for (const auto& f : s.fluids) {
        if (f.shape == "box" || f.shape == "mesh" || f.shape == "polygon" || f.shape == "file") grow(f.min, f.max);
        else round_shape(f.center, f.radius, 0.0);
    }
    for (const auto& e : s.emitters) round_shape(e.center, D == 2 ? 0.5 * e.width : e.radius, 0.0);  // the nozzles
    return b;
}

template Aabb<2> scene_bounds<2>(const Scene&);
template Aabb<3> scene_bounds<3>(const Scene&);

}  // namespace eddy
