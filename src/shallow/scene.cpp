// Shallow-water scenes: the grid's keys of a scene file (docs/scenes.md, "Shallow water") -> a checked
// ShallowWaterScene. Every error names the file, the key and what is allowed.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/json_text.hpp"
#include "eddy/shallow_water.hpp"
#include "shallow/expression.hpp"

namespace eddy {

std::span<const Field<ShallowWaterSettings>> shallow_water_fields() {
    using S = ShallowWaterSettings;
    static const Field<S> table[] = {
        {"advection", &S::advection, "", 0, 0, "advection of velocity and ink: the seed's semi-Lagrangian gather, its direct upwind scheme, the momentum-conservative scheme of Stelling & Duinmeijer (2003), or none",
         {"semi_lagrangian", "upwind", "conservative", "none"}},
        {"advection_step", &S::advection_step, "", 0, 1, "back-trace length as a fraction of dt (the seed shortens it to 0.5)", {}, true},
        {"advection_blend", &S::advection_blend, "", 0, 1, "fraction of the advected value blended in (the seed uses 0.5)", {}, true},
        {"advection_iterations", &S::advection_iterations, "", 1, 16, "advection passes per step"},
        {"alpha", &S::alpha, "", 0, 1, "velocity clamp |u| <= alpha dx / dt (paper sec. 2.1.5)", {}, true},
        {"beta", &S::beta, "", 0, kInf, "depth limiter: face depths above beta dx / (g dt) are lowered (sec. 2.1.5)", {}, true},
        {"edge_threshold", &S::edge_threshold, "cells", 0, kInf, "lambda_edge of the overshooting reduction (sec. 2.2)"},
        {"edge_alpha", &S::edge_alpha, "", 0, 0.5, "share of a wave edge's excess passed to the lower side (0: off)"},
        {"dry_depth", &S::dry_depth, "dx", 0, 1, "depth below which a cell is dry (shore rule), as a fraction of dx"},
        {"vorticity", &S::vorticity, "1/s", 0, kInf, "vorticity confinement eps: dv = dt eps dx (N x omega)"},
        {"acceleration_x", &S::acceleration_x, "m/s^2", -kInf, kInf, "external horizontal acceleration along x"},
        {"acceleration_y", &S::acceleration_y, "m/s^2", -kInf, kInf, "external horizontal acceleration along y"},
        {"time_step", &S::time_step, "s", 0, kInf, "fixed time step; 0: adaptive, cfl dx / max(sqrt(g h) + |v|)"},
        {"cfl", &S::cfl, "", 0, 1, "Courant number of the adaptive step", {}, true},
        {"max_time_step", &S::max_time_step, "s", 0, kInf, "upper bound of the adaptive step", {}, true},
        {"precision", &S::precision, "", 0, 0, "number type of the grid", {"float", "double"}},
        {"rows_per_task", &S::rows_per_task, "rows", 1, 1 << 20, "rows of cells per parallel task (results do not depend on it)"},
        {"water_density", &S::water_density, "kg/m^3", 0, kInf, "the water's density: buoyancy and drag on bodies", {}, true},
        {"displacement_stiffness", &S::displacement_stiffness, "", 0, 100, "k of a body's displaced depth b = k (H + w - z_bottom); k / (1 + k) of the submerged volume is displaced at rest"},
    };
    return table;
}

namespace {

struct Ctx {
    std::string file;
    // "file: path: what", or "file: path = value: what" when `what` starts with "= " (as scene.cpp).
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        const bool value = what.rfind("= ", 0) == 0;
        throw InputError(fmt::format("{}: {}{}{}", file, path, value ? " " : ": ", what));
    }
    void keys(const nlohmann::json& o, const std::string& path, std::initializer_list<const char*> allowed) const {
        if (!o.is_object()) fail(path, fmt::format("expected an object, got {}", json_excerpt(o)));
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (std::none_of(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; })) {
                std::string list;
                for (const char* k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
                fail(path, fmt::format("unknown key '{}'; allowed: {}", text_excerpt(it.key()), list));
            }
        }
    }
    double num(const nlohmann::json& o, const std::string& path, const char* key, double fallback, bool required,
               double lo, double hi, bool lo_exclusive) const {
        const std::string p = path + "." + key;
        if (!o.contains(key)) {
            if (required) fail(p, "missing; it is required");
            return fallback;
        }
        const auto& v = o.at(key);
        if (!v.is_number()) fail(p, fmt::format("must be a number, got {}", json_excerpt(v)));
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < lo || d > hi || (lo_exclusive && d == lo))
            fail(p, fmt::format("= {:g}: allowed: {}{:g}, {:g}]", d, lo_exclusive ? "(" : "[", lo, hi));
        return d;
    }
    // A string expression; numbers are accepted and turned into text.
    std::string expr(const nlohmann::json& o, const std::string& path, const char* key, const std::string& fallback) const {
        if (!o.contains(key)) return fallback;
        const auto& v = o.at(key);
        if (v.is_number()) return fmt::format("{:.17g}", v.get<double>());
        if (!v.is_string()) fail(path + "." + key, fmt::format("must be an expression of x and y (a string) or a number, got {}", json_excerpt(v)));
        return v.get<std::string>();
    }
    std::array<double, 2> pair(const nlohmann::json& o, const std::string& path, const char* key) const {
        const std::string p = path + "." + key;
        if (!o.contains(key)) fail(p, "missing; it is required ([x, y] in m)");
        const auto& v = o.at(key);
        if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
            fail(p, fmt::format("expected [x, y] (m), got {}", json_excerpt(v)));
        return {v[0].get<double>(), v[1].get<double>()};
    }
};

std::vector<GridSource> sources(const Ctx& c, const nlohmann::json& list, const std::string& path, bool water) {
    std::vector<GridSource> out;
    if (!list.is_array()) c.fail(path, "must be a list of {\"min\": [x, y], \"max\": [x, y], \"rate\": ...}");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = fmt::format("{}[{}]", path, i);
        c.keys(list[i], p, {"min", "max", "rate", "start", "end"});
        GridSource s;
        s.min = c.pair(list[i], p, "min");
        s.max = c.pair(list[i], p, "max");
        if (!(s.min[0] <= s.max[0] && s.min[1] <= s.max[1])) c.fail(p, "min must not exceed max");
        s.rate = c.num(list[i], p, "rate", 0.0, true, water ? -1e3 : 0.0, 1e3, false);
        s.start = c.num(list[i], p, "start", 0.0, false, 0.0, 1e300, false);
        s.end = c.num(list[i], p, "end", 1e300, false, 0.0, 1e300, false);
        out.push_back(s);
    }
    return out;
}

// bodies[i]: {shape, center, size | radius (+ length), axis, yaw, density | mass, velocity, angular_velocity, drag}.
std::vector<ShallowBodySpec> bodies(const Ctx& c, const nlohmann::json& list, double lx, double ly) {
    if (!list.is_array()) c.fail("bodies", "must be a list of {\"shape\": \"box\" | \"sphere\" | \"cylinder\", ...}");
    std::vector<ShallowBodySpec> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string p = fmt::format("bodies[{}]", i);
        const auto& o = list[i];
        if (!o.is_object()) c.fail(p, fmt::format("expected an object, got {}", json_excerpt(o)));
        ShallowBodySpec b;
        if (!o.contains("shape") || !o["shape"].is_string())
            c.fail(p + ".shape", "missing; allowed: \"box\", \"sphere\", \"cylinder\"");
        b.shape = o["shape"].get<std::string>();
        const char* common[] = {"shape", "center", "density", "mass", "velocity", "angular_velocity", "drag"};
        if (b.shape == "box") c.keys(o, p, {common[0], common[1], common[2], common[3], common[4], common[5], common[6], "size", "yaw"});
        else if (b.shape == "sphere") c.keys(o, p, {common[0], common[1], common[2], common[3], common[4], common[5], common[6], "radius"});
        else if (b.shape == "cylinder")
            c.keys(o, p, {common[0], common[1], common[2], common[3], common[4], common[5], common[6], "radius", "length", "axis", "yaw"});
        else c.fail(p + ".shape", fmt::format("= {}: allowed: \"box\", \"sphere\", \"cylinder\"", json_excerpt(o["shape"])));
        auto vec3 = [&](const char* key, bool required, std::array<double, 3> fallback) {
            const std::string k = p + "." + key;
            if (!o.contains(key)) {
                if (required) c.fail(k, "missing; it is required ([x, y, z])");
                return fallback;
            }
            const auto& v = o[key];
            if (!v.is_array() || v.size() != 3 || !v[0].is_number() || !v[1].is_number() || !v[2].is_number())
                c.fail(k, fmt::format("expected [x, y, z], got {}", json_excerpt(v)));
            std::array<double, 3> a{v[0].get<double>(), v[1].get<double>(), v[2].get<double>()};
            for (double e : a)
                if (!std::isfinite(e) || std::abs(e) > 1e6) c.fail(k, fmt::format("= {}: each must be in [-1e6, 1e6]", json_excerpt(v)));
            return a;
        };
        b.center = vec3("center", true, {});
        if (b.center[0] < 0 || b.center[0] > lx || b.center[1] < 0 || b.center[1] > ly)
            c.fail(p + ".center", fmt::format("= {}: x must be in [0, {:g}] and y in [0, {:g}] (on the grid)", json_excerpt(o["center"]), lx, ly));
        b.velocity = vec3("velocity", false, {});
        b.angular_velocity = vec3("angular_velocity", false, {});
        if (b.shape == "box") {
            b.size = vec3("size", true, {});
            for (double e : b.size)
                if (!(e > 0.0)) c.fail(p + ".size", fmt::format("= {}: each extent must be > 0 (m)", json_excerpt(o["size"])));
        } else {
            b.radius = c.num(o, p, "radius", 0.0, true, 0.0, 1e6, true);
        }
        if (b.shape == "cylinder") {
            b.length = c.num(o, p, "length", 0.0, true, 0.0, 1e6, true);
            if (o.contains("axis")) {
                const auto& a = o["axis"];
                if (a != "x" && a != "y" && a != "z") c.fail(p + ".axis", fmt::format("= {}: allowed: \"x\", \"y\" (lying), \"z\" (upright)", json_excerpt(a)));
                b.axis = a.get<std::string>();
            }
        }
        if (b.shape != "sphere") b.yaw = c.num(o, p, "yaw", 0.0, false, -3600.0, 3600.0, false);
        if (o.contains("density") == o.contains("mass")) c.fail(p, "give either 'density' (kg/m^3) or 'mass' (kg), one of the two");
        b.density = c.num(o, p, "density", 0.0, false, 0.0, 1e6, true);
        b.mass = c.num(o, p, "mass", 0.0, false, 0.0, 1e12, true);
        b.drag = c.num(o, p, "drag", 1.0, false, 0.0, 1e3, false);
        out.push_back(b);
    }
    return out;
}

}  // namespace

ShallowWaterScene parse_shallow_water(const Scene& scene) {
    const Ctx c{scene.where()};
    const nlohmann::json& j = scene.shallow_water;
    if (!j.is_object()) throw InputError(fmt::format("{}: not a shallow-water scene", scene.where()));
    ShallowWaterScene s;
    s.gravity = -scene.gravity[2];

    if (!j.contains("grid")) c.fail("grid", "missing; it is required, e.g. {\"cells\": [400, 4], \"dx\": 0.025}");
    const auto& g = j["grid"];
    c.keys(g, "grid", {"cells", "dx"});
    if (!g.contains("cells")) c.fail("grid.cells", "missing; it is required ([nx, ny], cells along x and y)");
    const auto& cells = g["cells"];
    if (!cells.is_array() || cells.size() != 2 || !cells[0].is_number_integer() || !cells[1].is_number_integer())
        c.fail("grid.cells", fmt::format("expected [nx, ny] (whole numbers >= 1), got {}", json_excerpt(cells)));
    const long long nx = cells[0].get<long long>(), ny = cells[1].get<long long>();
    if (nx < 1 || ny < 1 || nx > 65536 || ny > 65536 || nx * ny > (1ll << 28))
        c.fail("grid.cells", fmt::format("= {}: each count must be in [1, 65536] and nx * ny at most 2^28", json_excerpt(cells)));
    s.nx = static_cast<int>(nx);
    s.ny = static_cast<int>(ny);
    s.dx = c.num(g, "grid", "dx", 0.0, true, 0.0, 1e6, true);
    const double lx = s.nx * s.dx, ly = s.ny * s.dx;

    if (j.contains("terrain")) {
        const auto& t = j["terrain"];
        if (t.is_object()) {
            c.keys(t, "terrain", {"heightmap", "scale", "offset"});
            if (!t.contains("heightmap") || !t["heightmap"].is_string())
                c.fail("terrain.heightmap", "missing; expected the path of a grayscale PNG (relative to the scene file)");
            std::filesystem::path hm = t["heightmap"].get<std::string>();
            if (hm.is_relative() && !scene.source.empty()) hm = scene.source.parent_path() / hm;
            // A FIFO or device is refused here, before anything opens it (eddy/input_file.hpp).
            bool found = true;
            try {
                found = io::InputFile::open_existing(hm).has_value();
            } catch (const InputError& e) {
                c.fail("terrain.heightmap", e.what());
            }
            if (!found) c.fail("terrain.heightmap", fmt::format("\"{}\": file not found", hm.string()));
            s.heightmap = hm;
            s.heightmap_scale = c.num(t, "terrain", "scale", 1.0, false, -1e6, 1e6, false);
            s.heightmap_offset = c.num(t, "terrain", "offset", 0.0, false, -1e6, 1e6, false);
            s.terrain.clear();
        } else {
            s.terrain = c.expr(j, "", "terrain", "0");
        }
    }
    if (j.contains("water")) {
        const auto& w = j["water"];
        c.keys(w, "water", {"surface", "depth", "u", "v", "ink"});
        if (w.contains("surface") && w.contains("depth")) c.fail("water", "give either 'surface' (eta) or 'depth' (h), not both");
        s.surface = c.expr(w, "water", "surface", "");
        s.depth = c.expr(w, "water", "depth", "");
        s.u = c.expr(w, "water", "u", "0");
        s.v = c.expr(w, "water", "v", "0");
        s.ink_initial = c.expr(w, "water", "ink", "0");
    }
    if (s.surface.empty() && s.depth.empty()) s.depth = "0";
    if (j.contains("obstacles")) s.obstacles = c.expr(j, "", "obstacles", "");
    if (j.contains("borders")) {
        const auto& b = j["borders"];
        c.keys(b, "borders", {"x", "y"});
        // "open" | "wall" for both sides of an axis, or ["wall", "open"] for (low side, high side).
        for (const char* axis : {"x", "y"}) {
            if (!b.contains(axis)) continue;
            const auto& v = b[axis];
            const int k = axis[0] == 'x' ? 0 : 2;
            auto side = [&](const nlohmann::json& e) {
                if (e != "wall" && e != "open")
                    c.fail(std::string("borders.") + axis,
                           fmt::format("= {}: allowed: \"wall\", \"open\", or a pair like [\"wall\", \"open\"] (low, high side)",
                                       json_excerpt(v)));
                return e == "open";
            };
            if (v.is_array() && v.size() == 2) {
                s.open[k] = side(v[0]);
                s.open[k + 1] = side(v[1]);
            } else {
                s.open[k] = s.open[k + 1] = side(v);
            }
        }
    }
    if (j.contains("ink")) s.ink_sources = sources(c, j["ink"], "ink", false);
    if (j.contains("sources")) s.water_sources = sources(c, j["sources"], "sources", true);
    if (j.contains("drops")) {
        const auto& d = j["drops"];
        const nlohmann::json list = d.is_array() ? d : nlohmann::json::array({d});
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string p = d.is_array() ? fmt::format("drops[{}]", i) : "drops";
            c.keys(list[i], p, {"rate", "radius", "height", "start", "end", "seed", "ink"});
            DropSpec ds;
            ds.rate = c.num(list[i], p, "rate", 0.0, true, 0.0, 1e6, true);
            ds.radius = c.num(list[i], p, "radius", 4 * s.dx, false, 0.0, 1e6, true);
            ds.height = c.num(list[i], p, "height", 0.05, false, 0.0, 1e6, true);
            ds.start = c.num(list[i], p, "start", 0.0, false, 0.0, 1e300, false);
            ds.end = c.num(list[i], p, "end", 1e300, false, 0.0, 1e300, false);
            ds.seed = static_cast<std::uint64_t>(c.num(list[i], p, "seed", 1.0, false, 0.0, 1e15, false));
            ds.ink = c.num(list[i], p, "ink", 0.0, false, 0.0, 1e6, false);
            s.drops.push_back(ds);
        }
    }
    if (j.contains("bodies")) s.bodies = bodies(c, j["bodies"], lx, ly);
    apply_json(s.settings, shallow_water_fields(), scene.settings, scene.where() + ": settings");
    validate(s.settings, shallow_water_fields(), scene.where() + ": settings");

    // Compile every expression now, so that a typo is reported before anything runs.
    const std::string where = scene.where();
    for (auto [text, key] : {std::pair{s.terrain, "terrain"}, {s.surface, "water.surface"}, {s.depth, "water.depth"},
                             {s.u, "water.u"}, {s.v, "water.v"}, {s.ink_initial, "water.ink"}, {s.obstacles, "obstacles"}})
        if (!text.empty()) detail::Expression(text, lx, ly, s.dx, where, key);
    return s;
}

ShallowWaterSimulation make_shallow_water(const Scene& scene, const MemoryBudget& budget,
                                          std::span<const std::string> formats) {
    ShallowWaterScene spec = parse_shallow_water(scene);
    if (formats.empty()) formats = scene.output.formats;
    check_memory(estimate_memory(spec, formats), budget, scene.where());
    if (spec.settings.precision == "double")
        return ShallowWaterSimulation{scene, spec, ShallowWaterSolver<double>(spec, scene.where())};
    return ShallowWaterSimulation{scene, spec, ShallowWaterSolver<float>(spec, scene.where())};
}

}  // namespace eddy
