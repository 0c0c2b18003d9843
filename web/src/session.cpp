// eddy in the browser: the page's simulation (session.hpp).
#include "session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "eddy/clavet.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/pbf.hpp"
#include "eddy/surface.hpp"
#include "eddy/wcsph.hpp"
#include "sim/run_support.hpp"  // detail::passes_json: summary.json's "passes"

namespace eddy::web {

namespace {

namespace fs = std::filesystem;

// What the page takes on (issue 45: a pasted scene of millions of particles built for minutes and hung the
// tab). The module may grow to 2 GB (web/CMakeLists.txt, MAXIMUM_MEMORY); a scene whose estimate needs more
// than half of it, or more particles than the page can play, is refused with a line before anything is built.
constexpr std::size_t kPageMaxParticles = 1'000'000;
MemoryBudget page_budget() { return {std::size_t(1) << 30, "the page's limit"}; }

// The CLI's form of a bad input: "eddy: error: <one line>" (apps/eddy/main.cpp). The library names the
// CLI's option for the particle limit; the page has no options, so the line names the page's limit.
std::string error_line(const std::string& what) {
    std::string s = what;
    std::replace(s.begin(), s.end(), '\n', ' ');
    const std::string option = fmt::format("--max-particles {}", kPageMaxParticles);
    if (const auto at = s.find(option); at != std::string::npos)
        s.replace(at, option.size(), fmt::format("the page's limit of {} particles", kPageMaxParticles));
    return "eddy: error: " + text_excerpt(s, 300);
}

std::vector<std::string> overrides_of(const std::string& method, const std::string& sets) {
    std::vector<std::string> out;
    if (!method.empty()) out.push_back("method=" + method);
    if (sets.empty()) return out;
    const nlohmann::json j = parse_json_text(sets, "the page's settings");
    if (!j.is_array()) throw InputError("the page's settings: expected a list of \"key=value\"");
    for (const auto& s : j) {
        if (!s.is_string()) throw InputError("the page's settings: expected a list of \"key=value\"");
        out.push_back(s.get<std::string>());
    }
    return out;
}

template <class S>
nlohmann::json table_json(std::span<const Field<S>> table) {
    const nlohmann::json defaults = to_json(S{}, table);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : table) {
        nlohmann::json e;
        e["key"] = f.key;
        e["unit"] = f.unit;
        e["doc"] = f.doc;
        std::visit([&](auto member) {
            using T = std::remove_cvref_t<decltype(S{}.*member)>;
            e["type"] = std::is_same_v<T, bool> ? "bool" : std::is_same_v<T, int> ? "int" : std::is_same_v<T, float> ? "float" : "string";
        }, f.member);
        if (std::isfinite(f.min)) e["min"] = f.min;
        if (std::isfinite(f.max)) e["max"] = f.max;
        e["min_exclusive"] = f.min_exclusive;
        if (!f.choices.empty()) {
            e["choices"] = nlohmann::json::array();
            for (auto c : f.choices) e["choices"].push_back(std::string(c));
        }
        e["default"] = defaults[f.key];
        out.push_back(std::move(e));
    }
    return out;
}

template <class F>
auto with_grid(const ShallowWaterSimulation& w, F&& f) {
    return std::visit([&](const auto& s) { return f(s); }, w.solver);
}

// The steps' threads: as asked (1 to kMaxThreads) in the module with threads (eddy-mt.js), else 1.
int page_threads(int threads) {
    if (threads < 1) throw InputError(fmt::format("the page's threads = {}: allowed: 1 to {}", threads, kMaxThreads));
#ifdef EDDY_POOL
    return checked_threads(threads, "the page's threads");
#else
    return 1;
#endif
}

}  // namespace

Session::Session(int threads) : m_exec(page_threads(threads)) {
    // The bundled scenes and the files they name (heightmaps, models) are packed at /scenes; a pasted
    // scene's relative paths are read from there too.
    std::error_code ec;
    if (fs::is_directory("/scenes", ec)) {
        setenv("EDDY_SCENES_DIR", "/scenes", 1);
        fs::current_path("/scenes", ec);
    }
}

std::string Session::load(Scene sc) {
    if (sc.method == "shallow_water") {
        ShallowWaterSimulation w = make_shallow_water(sc, page_budget());
        m_sim.reset();
        m_water.emplace(std::move(w));
    } else {
        Simulation s = make_simulation(sc, kPageMaxParticles, m_exec, page_budget());
        m_water.reset();
        m_sim.emplace(std::move(s));
    }
    m_diverged = false;
    m_passes = {};
    m_pass_steps = 0;
    m_mouse = {};
    m_loads.clear();
    m_solids.reset();
    m_mesh = {};
    m_whitewater.start(m_whitewater_wanted && m_sim ? &*m_sim : nullptr);  // afresh beside the new scene
    refresh_walls();
    std::string warnings;
    for (const auto& w : sc.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    return warnings.empty() ? "" : "warning: " + warnings;
}

std::string Session::load_bundled(const std::string& name, const std::string& method, const std::string& sets) {
    try {
        const auto file = resolve_scene(name);
        load(load_scene(file, overrides_of(method, sets)));
        return "";
    } catch (const InputError& e) {
        return error_line(e.what());
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::load_text(const std::string& text, const std::string& where, const std::string& method,
                               const std::string& sets) {
    try {
        load(parse_scene(parse_json_text(text, where), where, overrides_of(method, sets)));
        return "";
    } catch (const InputError& e) {
        return error_line(e.what());
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

namespace {
const fs::path kDropped = "/dropped";  // the files dropped with a scene (Session::drop_file)

// A dropped file's name: a plain name, written in /dropped and nowhere else.
void check_dropped_name(const std::string& name) {
    const fs::path p(name);
    if (name.empty() || p.has_parent_path() || !p.has_filename() || name == "." || name == ".." ||
        name.find('\0') != std::string::npos)
        throw InputError(fmt::format("a dropped file named \"{}\": allowed: a plain file name", text_excerpt(name)));
}

// Writes a dropped file (or the dropped scene) into /dropped.
void write_dropped(const std::string& name, const std::string& bytes) {
    check_dropped_name(name);
    fs::create_directories(kDropped);
    io::write_atomic(kDropped / name, bytes);
}

// Loads from /dropped as eddy run from its folder, the page's folder (/scenes) again after.
struct InDropped {
    InDropped() { fs::current_path(kDropped); }
    ~InDropped() {
        std::error_code ec;
        fs::current_path("/scenes", ec);
    }
};
}  // namespace

void Session::clear_dropped() {
    std::error_code ec;
    fs::remove_all(kDropped, ec);
    fs::create_directories(kDropped, ec);
}

std::string Session::drop_file(const std::string& name, const std::string& bytes) {
    try {
        write_dropped(name, bytes);
        return "";
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::load_dropped(const std::string& text, const std::string& name, const std::string& method,
                                  const std::string& sets) {
    try {
        write_dropped(name, text);
        Scene sc = [&] {
            InDropped here;
            return load_scene(name, overrides_of(method, sets), page_budget());
        }();
        load(std::move(sc));
        return "";
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::step(int n, double ms) {
    if (m_diverged) return "the simulation diverged: load a scene again";
    try {
        if (m_sim) {
            // eddy run's loop a slice at a time (eddy::step_slice, as the viewer's): each step lands on eddy
            // run's frame times and is checked by its guard; the mouse acts before each step, over the last
            // step's dt.
            const SliceResult r = step_slice(
                *m_sim, m_exec, SliceLimits{.max_steps = n, .wall_ms = ms},
                [&] { apply_mouse_force(*m_sim, m_mouse, m_last_dt, m_exec); },
                [&](const StepStats& st) {
                    if (m_whitewater.on()) m_whitewater.after_step(*m_sim, m_exec);
                    std::visit([&](const auto& s) { if (!s.boundary.load.empty()) m_loads.add(s.boundary.load, st.dt); }, *m_sim);
                    m_last_dt = st.dt;
                    m_passes.add_passes(st);
                    ++m_pass_steps;
                });
            m_diverged = !r.diverged.empty();
            return r.diverged;
        }
        if (!m_water) return "no scene loaded";
        // The grid likewise (eddy::step_slice of a grid, as the viewer's and Python's step()).
        const GridSliceResult r = step_slice(*m_water, m_exec, SliceLimits{.max_steps = n, .wall_ms = ms},
                                             [&](const ShallowWaterStats& st) {
                                                 m_passes.add_passes(st);
                                                 ++m_pass_steps;
                                             });
        m_diverged = !r.diverged.empty();
        return r.diverged;
    } catch (const std::exception& e) {
        m_diverged = true;
        return error_line(e.what());
    }
    return "";
}

std::string Session::passes() const {
    return nlohmann::json{{"steps", m_pass_steps}, {"passes", detail::passes_json(m_passes, m_pass_steps)}}.dump();
}

std::string Session::kind() const { return m_sim ? "particles" : m_water ? "grid" : ""; }

int Session::dimension() const {
    if (m_sim) return m_sim->index() == 0 ? 2 : 3;
    return 3;
}

double Session::time() const {
    if (m_sim) return std::visit([](const auto& s) { return s.time; }, *m_sim);
    if (m_water) return with_grid(*m_water, [](const auto& s) { return s.time(); });
    return 0.0;
}

double Session::steps() const {
    if (m_sim) return double(std::visit([](const auto& s) { return s.steps; }, *m_sim));
    if (m_water) return double(with_grid(*m_water, [](const auto& s) { return s.steps(); }));
    return 0.0;
}

double Session::count() const {
    if (m_sim) return double(std::visit([](const auto& s) { return s.fluid.size(); }, *m_sim));
    if (m_water) return double(with_grid(*m_water, [](const auto& s) { return s.grid().cells(); }));
    return 0.0;
}

std::string Session::name() const {
    if (m_sim) return std::visit([](const auto& s) { return s.scene.name; }, *m_sim);
    if (m_water) return m_water->scene.name;
    return "";
}

std::string Session::method() const {
    if (m_sim) return std::visit([](const auto& s) { return s.scene.method; }, *m_sim);
    if (m_water) return m_water->scene.method;
    return "";
}

double Session::particle_radius() const {
    if (m_sim) return std::visit([](const auto& s) { return s.scene.particle_radius; }, *m_sim);
    if (m_water) return grid_dx();
    return 0.0;
}

std::vector<float> Session::bounds() const {
    std::vector<float> b(6, 0.0f);
    if (m_sim) {
        std::visit([&](const auto& s) {
            constexpr int D = std::remove_cvref_t<decltype(s)>::kDimension;
            for (int a = 0; a < D; ++a) b[a] = s.bounds.lo[a], b[3 + a] = s.bounds.hi[a];
        }, *m_sim);
    } else if (m_water) {
        with_grid(*m_water, [&](const auto& s) {
            const auto& g = s.grid();
            float lo = std::numeric_limits<float>::max(), hi = -lo;
            for (std::size_t c = 0; c < g.cells(); ++c) {
                lo = std::min(lo, float(g.terrain[c]));
                hi = std::max(hi, float(g.terrain[c] + g.depth[c]));
            }
            b = {0.0f, 0.0f, lo, float(g.dx * g.nx), float(g.dx * g.ny), hi};
            return 0;
        });
    }
    return b;
}

void Session::refresh(const std::string& field) {
    if (m_water) {
        refresh_grid();
        return;
    }
    m_xyz.clear();
    m_scalar.clear();
    if (!m_sim) return;
    if (walls_move()) refresh_walls();
    std::visit([&](const auto& sim) {
        constexpr int D = std::remove_cvref_t<decltype(sim)>::kDimension;
        const auto& f = sim.fluid;
        const std::size_t n = f.size();
        m_xyz.resize(3 * n);
        m_scalar.resize(n);
        float lo = std::numeric_limits<float>::infinity(), hi = -lo;
        for (std::size_t i = 0; i < n; ++i) {
            for (int a = 0; a < 3; ++a) m_xyz[3 * i + a] = a < D ? f.position[i][a] : 0.0f;
            const float s = field == "density" ? f.density[i] : field == "pressure" ? f.pressure[i] : norm(f.velocity[i]);
            m_scalar[i] = s;
            if (std::isfinite(s)) lo = std::min(lo, s), hi = std::max(hi, s);
        }
        m_smin = n && std::isfinite(lo) ? lo : 0.0;
        m_smax = n && std::isfinite(hi) ? hi : 0.0;
    }, *m_sim);
    m_whitewater.points(m_ww_xyz, m_ww_types);
    m_solids.refresh(*m_sim);
}

std::string Session::set_whitewater(bool on) {
    if (on && m_water) return error_line(fmt::format("whitewater: {} is a grid; allowed with particle scenes", m_water->scene.name));
    m_whitewater_wanted = on;
    if (!on) m_whitewater.stop();
    else if (m_sim && !m_whitewater.on()) m_whitewater.start(&*m_sim);  // from the simulation's time on
    m_whitewater.points(m_ww_xyz, m_ww_types);
    return "";
}

void Session::refresh_walls() {
    m_walls.clear();
    m_wall_bodies.clear();
    auto* sim = m_sim ? std::get_if<ParticleSimulation<2>>(&*m_sim) : nullptr;
    if (!sim) return;
    for (const auto& x : sim->boundary.position) m_walls.insert(m_walls.end(), {x[0], x[1], 0.0f});
    // Each wall particle's body (its index in the scene's bodies), -1 for a wall: the page fills bodies.
    std::vector<std::int32_t> body_of;  // by boundary object
    for (std::size_t k = 0; k < sim->bodies.object.size(); ++k) {
        const std::size_t o = sim->bodies.object[k];
        if (body_of.size() <= o) body_of.resize(o + 1, -1);
        body_of[o] = static_cast<std::int32_t>(k);
    }
    for (const auto o : sim->boundary.object) m_wall_bodies.push_back(o < body_of.size() ? body_of[o] : -1);
}

bool Session::walls_move() const {
    auto* sim = m_sim ? std::get_if<ParticleSimulation<2>>(&*m_sim) : nullptr;
    return sim && (sim->boundary.any_moving() || !sim->bodies.empty());
}

void Session::refresh_grid() {
    with_grid(*m_water, [&](const auto& s) {
        const auto& g = s.grid();
        m_terrain.assign(g.terrain.begin(), g.terrain.end());
        m_depth.assign(g.depth.begin(), g.depth.end());
        // Speed at the cell centres, for the colour.
        m_scalar.resize(g.cells());
        float hi = 0.0f;
        for (int j = 0; j < g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) {
                const float u = float(g.uc(i, j)), w = float(g.wc(i, j));
                const float v = std::sqrt(u * u + w * w);
                m_scalar[g.cell(i, j)] = v;
                hi = std::max(hi, v);
            }
        m_smin = 0.0;
        m_smax = hi;
        return 0;
    });
}

int Session::grid_nx() const { return m_water ? with_grid(*m_water, [](const auto& s) { return s.grid().nx; }) : 0; }
int Session::grid_ny() const { return m_water ? with_grid(*m_water, [](const auto& s) { return s.grid().ny; }) : 0; }
double Session::grid_dx() const {
    return m_water ? with_grid(*m_water, [](const auto& s) { return double(s.grid().dx); }) : 0.0;
}

PageSurface reconstruct_page_surface(const std::vector<float>& xyz, double radius, bool anisotropic, double decimate_ratio) {
    if (xyz.size() % 3 != 0) throw InputError(fmt::format("the surface's positions: {} numbers; allowed: x, y, z each", xyz.size()));
    std::vector<Vec3> points(xyz.size() / 3);
    for (std::size_t i = 0; i < points.size(); ++i) points[i] = Vec3{{xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]}};
    SurfaceSettings ss;
    ss.particle_radius = static_cast<float>(radius);
    ss.anisotropic = anisotropic;
    ss.decimate_ratio = static_cast<float>(decimate_ratio);
    validate(ss, "the page's surface");
    const ExecContext exec(1);
    const auto res = reconstruct_surface<3>(std::span<const Vec3>(points), ss, exec);
    PageSurface out;
    for (const auto& v : res.mesh.vertices) out.xyz.insert(out.xyz.end(), {v[0], v[1], v[2]});
    for (const auto& nrm : res.mesh.normals) out.normals.insert(out.normals.end(), {nrm[0], nrm[1], nrm[2]});
    for (const auto& c : res.mesh.cells) out.triangles.insert(out.triangles.end(), {c[0], c[1], c[2]});
    return out;
}

std::string Session::reconstruct(bool anisotropic, double decimate_ratio) {
    m_mesh = {};
    auto* sim = m_sim ? std::get_if<ParticleSimulation<3>>(&*m_sim) : nullptr;
    if (!sim) return "the surface is reconstructed for 3D particle scenes";
    try {
        std::vector<float> xyz;
        xyz.reserve(3 * sim->fluid.size());
        for (const auto& x : sim->fluid.position) xyz.insert(xyz.end(), {x[0], x[1], x[2]});
        m_mesh = reconstruct_page_surface(xyz, sim->scene.particle_radius, anisotropic, decimate_ratio);
        return "";
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::state_hash() const {
    std::uint64_t h = 0;
    if (m_sim) h = eddy::state_hash(*m_sim);
    else if (m_water) h = eddy::state_hash(*m_water);
    return fmt::format("{:016x}", h);
}

std::string Session::settings_tables() {
    nlohmann::json j;
    j["wcsph"] = table_json(wcsph_fields());
    j["dfsph"] = table_json(dfsph_fields());
    j["pbf"] = table_json(pbf_fields());
    j["clavet"] = table_json(clavet_fields());
    j["shallow_water"] = table_json(shallow_water_fields());
    j["surface"] = table_json(surface_fields());
    return j.dump();
}

std::string Session::probes() const {
    nlohmann::json out = nlohmann::json::array();
    if (!m_sim) return out.dump();
    std::visit(
        [&](const auto& sim) {
            constexpr int D = std::remove_cvref_t<decltype(sim)>::kDimension;
            if (sim.scene.probes.empty()) return;
            const std::vector<Vec<D>> points = probe_points<D>(sim.scene);
            const std::vector<ProbeReading> readings = read_probes<D>(sim, sim.fluid, points, m_exec);
            for (std::size_t k = 0; k < points.size(); ++k) {
                const ProbeReading& r = readings[k];
                out.push_back({{"name", sim.scene.probes[k].name},
                               {"position", {points[k][0], points[k][1], D == 3 ? points[k][D - 1] : 0.0f}},
                               {"pressure", r.pressure},
                               {"velocity", {r.velocity[0], r.velocity[1], r.velocity[2]}}});
            }
        },
        *m_sim);
    return out.dump();
}

std::string Session::loads() const {
    nlohmann::json j = {{"objects", nlohmann::json::array()}, {"steps", m_loads.steps()}, {"fluid_weight", 0.0},
                        {"last", nlohmann::json::array()}};
    if (!m_sim) return j.dump();
    std::visit([&](const auto& sim) {
        const std::vector<ObjectLoad> mean = m_loads.mean();
        const auto pivots = load_pivots(sim.boundary, sim.time);
        j["fluid_weight"] = fluid_weight(sim);
        for (std::size_t o = 0; o < mean.size() && o < pivots.size() && o < sim.scene.boundaries.size(); ++o) {
            j["objects"].push_back({{"label", load_object_label(o, sim.scene.boundaries[o])},
                                    {"pivot", pivots[o]}, {"force", mean[o].force}, {"torque", mean[o].torque}});
        }
        for (const ObjectLoad& l : sim.boundary.load)
            j["last"].push_back({l.force[0], l.force[1], l.force[2], l.torque[0], l.torque[1], l.torque[2]});
    }, *m_sim);
    return j.dump();
}

const std::vector<float>& Session::load_arrow(int object, double reference, double width) {
    m_arrow.clear();
    if (!m_sim || object < 0) return m_arrow;
    std::visit([&](const auto& sim) {
        constexpr int D = std::remove_cvref_t<decltype(sim)>::kDimension;
        const std::vector<ObjectLoad> mean = m_loads.mean();
        const auto pivots = load_pivots(sim.boundary, sim.time);
        if (std::size_t(object) >= mean.size() || std::size_t(object) >= pivots.size()) return;
        const auto& p = pivots[std::size_t(object)];
        m_arrow = eddy::load_arrow({p[0], p[1], p[2]}, mean[std::size_t(object)].force, fluid_weight(sim), reference, D);
        if (D == 2) m_arrow = thick_lines_2d(m_arrow, static_cast<float>(width));
    }, *m_sim);
    return m_arrow;
}

std::string Session::settings() const {
    if (m_sim) return method_settings(*m_sim).dump();
    if (m_water) return with_grid(*m_water, [](const auto& s) { return to_json(s.scene().settings, shallow_water_fields()).dump(); });
    return "{}";
}

std::string Session::apply_settings(const std::string& json, double gx, double gy, double gz) {
    try {
        const nlohmann::json settings = parse_json_text(json, "settings");
        if (m_water) {
            std::visit([&](auto& s) {
                ShallowWaterSettings next = s.scene().settings;
                apply_json(next, shallow_water_fields(), settings, "settings");
                s.set_settings(next, std::sqrt(gx * gx + gy * gy + gz * gz));
            }, m_water->solver);
            return "";
        }
        if (!m_sim) return "no scene loaded";
        Scene sc = std::visit([](const auto& s) { return s.scene; }, *m_sim);
        sc.settings = settings;
        sc.gravity = {gx, gy, gz};
        rebuild_method(*m_sim, sc, m_exec);  // throws InputError, leaves the simulation as it was
        return "";
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::scene_document() const {
    nlohmann::json doc;
    if (m_sim) {
        std::visit([&](const auto& s) {
            doc = s.scene.document;
            doc["settings"] = nlohmann::json::parse(settings());
            doc["gravity"] = nlohmann::json::array();
            for (int a = 0; a < std::remove_cvref_t<decltype(s)>::kDimension; ++a) doc["gravity"].push_back(s.scene.gravity[a]);
        }, *m_sim);
    } else if (m_water) {
        doc = m_water->scene.document;
        doc["settings"] = nlohmann::json::parse(settings());
    }
    return doc.dump();
}

std::string Session::bundled_scenes() {
    // Every scene file of the bundled folder, in name order; one that does not load in the web build is
    // listed with "unavailable": its one-line reason (since issue 43, none).
    nlohmann::json out = nlohmann::json::array();
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(bundled_scenes_dir(), ec))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        nlohmann::json e{{"name", file.stem().string()}};
        try {
            const nlohmann::json doc = read_json_file(file);
            e["description"] = doc.value("description", "");
            e["method"] = doc.value("method", "wcsph");
            e["dimension"] = doc.value("dimension", 2);
            (void)load_scene(file);
        } catch (const std::exception& x) {
            e["unavailable"] = error_line(x.what());
        }
        out.push_back(std::move(e));
    }
    return out.dump();
}

void Session::set_mouse(bool active, double x, double y, double z, double vx, double vy, double vz, double radius) {
    m_mouse.active = active;
    m_mouse.point = {float(x), float(y), float(z)};
    m_mouse.velocity = {float(vx), float(vy), float(vz)};
    m_mouse.radius = float(radius);
}

std::string Session::add_block(double x, double y, double z) {
    if (!m_sim) return "fluid is added to particle scenes";
    try {
        return add_fluid_block(*m_sim, std::array<double, 3>{x, y, z}, kPageMaxParticles, m_exec);
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::use_tool(const std::string& tool, double x, double y, double z, double speed) {
    if (!m_sim) return "bodies and taps are added to particle scenes";
    try {
        const std::array<double, 3> at{x, y, z};
        if (tool == "box" || tool == "ball") {
            const std::size_t removed = drop_body_at(*m_sim, tool == "ball", at, m_exec);
            return fmt::format("dropped a {}; {} fluid particles inside it removed", tool, removed);
        }
        if (tool == "tap") return fmt::format("tap {} opened", tap_at(*m_sim, at, speed, 8.0, m_exec));
        if (tool.rfind("model:", 0) == 0) {  // a model file, as a scene's "file" names it (bundled_models())
            const std::size_t removed = drop_model_at(*m_sim, tool.substr(6), at, m_exec);
            return fmt::format("dropped {}; {} fluid particles inside it removed", tool.substr(6), removed);
        }
        throw InputError(fmt::format("the tool \"{}\": allowed: box, ball, tap, model:FILE", text_excerpt(tool)));
    } catch (const std::exception& e) {
        return error_line(e.what());
    }
}

std::string Session::bundled_models() {
    nlohmann::json out = nlohmann::json::array();
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator("/scenes/models", ec)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file(ec) && (ext == ".obj" || ext == ".stl" || ext == ".ply" || ext == ".gltf" || ext == ".glb"))
            names.push_back("models/" + e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) out.push_back(n);
    return out.dump();
}

std::string Session::drop(double x, double y) {
    if (!m_water) return "water is dropped on grids";
    drop_water(*m_water, x, y, false);
    return "";
}

std::string Session::particles_file(const std::string& format) const {
    if (!m_sim) return "";
    const fs::path path = fs::path("/tmp") / ("particles." + format);
    try {
        std::visit([&](const auto& s) {
            if (format == "ply") io::write_ply(path, s.fluid);
            else io::write_csv(path, s.fluid);
        }, *m_sim);
        std::ifstream in(path, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        fs::remove(path);
        return ss.str();
    } catch (const std::exception& e) {
        return "";
    }
}

}  // namespace eddy::web
