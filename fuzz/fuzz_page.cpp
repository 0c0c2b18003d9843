// Fuzz target (issue 45): the page's scene and share-link parser, through the page's Session
// (web/src/session.cpp: plain C++; web/src/bindings.cpp only binds it to JavaScript) driven as
// web/page/app.js drives it: a pasted scene's text loaded with the method menu's choice (a share link's
// base64url is decoded in JavaScript, so the Session gets text the same way), what the page reads after a
// load, a few steps under a time budget, the colour field refreshed, settings applied with the scene's
// gravity (the settings table sends the running settings with a key changed; a script may send anything),
// a step, the state hash, the share link's document, and that document loaded back as a link; whitewater
// on throughout, the loads panel and its arrow read with the rest. The Session
// answers bad input with a line, never an exception: an exception escaping it, a crash, a hang or a
// sanitizer report is a finding.
//
// Bounded work: the page takes up to 1,000,000 particles (1 GB) and the Session takes no other limit, so a
// scene is counted here first (parse_scene and the memory estimate, as make_simulation does) and loaded
// only with at most 1,000 fluid particles (the emitters' over the steps taken included), 5,000 wall
// particles and a 64 MB estimate, or a grid of at most 16,384 cells; a scene the Session refuses anyway
// is loaded (its error path). A step runs only when its solver work (particles x the settings' iteration
// bounds x neighbours) is at most 2e6 particle-iterations: the time budget is checked between steps, and
// PBF's 1,000 substeps of 1,000 iterations are 10^6 sweeps over the particles in one step (a timeout
// here, not a bug).
//
// Input: byte 0 chooses, the rest is the scene's text, then optionally a NUL byte and a settings fragment.
//   byte 0, bits 0-2: the method menu, (value % 5) of "" (the scene's own), wcsph, dfsph, pbf, clavet
//           bits 3-4: steps before the settings, 0 to 3 (one more after them)
//           bits 5-6: the colour field: speed, density, pressure, "" (the Session's fallback: speed)
//           bit 7:    load the share link's document back at the end
//   the fragment: applied as sent (a script's call), then, when it is a JSON object, as the settings table
//   sends it (the running settings with its keys set). Without one, the running settings are applied.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/json_text.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "session.hpp"

namespace {

using eddy::web::Session;

constexpr double kMaxFluid = 1'000;         // fluid particles, the emitters' over the steps included
constexpr double kMaxWalls = 5'000;         // wall particles
constexpr double kMaxBytes = 64e6;          // the memory estimate (models' distance grids, lists)
constexpr double kMaxCells = 16'384;        // a grid's cells
constexpr double kMaxStepWork = 2e6;        // particle-iterations a step (step_work)
constexpr double kBudgetMs = 50.0;          // the page's budget is 12 ms a frame (app.js); ASan is slower
constexpr const char* kMethods[] = {"", "wcsph", "dfsph", "pbf", "clavet"};
constexpr const char* kFields[] = {"speed", "density", "pressure", ""};

// Whether the Session may build this scene here: it is small enough, or the Session refuses it before
// building anything (it parses the same text with the same overrides; make_simulation checks the settings
// and this same estimate before any particle, make_shallow_water parses the grid first). The emitters'
// particles are counted over `steps` steps, two layers of every nozzle a step at most (a step moves a new
// particle 0.4 of a spacing), not over the scene's duration as the estimate counts them.
bool fits(const std::string& text, const std::string& where, const std::string& method, int steps) {
    eddy::Scene scene;
    try {
        std::vector<std::string> overrides;
        if (!method.empty()) overrides.push_back("method=" + method);
        scene = eddy::parse_scene(eddy::parse_json_text(text, where), where, overrides);
    } catch (const std::exception&) {
        return true;
    }
    try {
        if (scene.method == "shallow_water") {
            const eddy::ShallowWaterScene grid = eddy::parse_shallow_water(scene);
            return double(grid.nx) * double(grid.ny) <= kMaxCells;
        }
        eddy::Scene held = scene;
        held.emitters.clear();
        const eddy::MemoryEstimate e = eddy::estimate_memory(held, std::numeric_limits<std::size_t>::max());
        const eddy::MemoryEstimate::Part* fluid = e.find("fluid");
        const eddy::MemoryEstimate::Part* walls = e.find("walls");
        const double spacing = 2.0 * scene.particle_radius;
        double nozzles = 0.0;  // lattice points across every nozzle (src/emitters/emitters.cpp, nozzle_points)
        for (const eddy::EmitterSpec& em : scene.emitters)
            nozzles += scene.dimension == 2 ? std::max(1.0, std::round(em.width / spacing))
                                            : std::pow(2.0 * std::floor(em.radius / spacing) + 1.0, 2.0);
        const double n_fluid = (fluid ? fluid->count : 0.0) + 2.0 * double(steps) * nozzles;
        const double n_walls = walls ? walls->count : 0.0;
        return n_fluid <= kMaxFluid && n_walls <= kMaxWalls && e.total() <= kMaxBytes;  // false for NaN
    } catch (const std::exception&) {
        return true;
    }
}

// One step's work in particle-iterations: the particles (or cells), times the running settings' iteration
// bounds (PBF: substeps x (iterations + max_iterations); DFSPH: its density, divergence and viscosity
// solvers' bounds; the grid's advection passes), times the neighbours at the support radius against the
// default 4 r. An overestimate: solvers usually stop early.
double step_work(const Session& s) {
    double iterations = 0.0, substeps = 1.0, support = 4.0;
    const std::string settings = s.settings();
    try {
        const nlohmann::json j = eddy::parse_json_text(settings, "settings");
        if (j.is_object())
            for (auto it = j.begin(); it != j.end(); ++it) {
                if (!it.value().is_number()) continue;
                const double v = it.value().get<double>();
                if (it.key().find("iterations") != std::string::npos) iterations += std::max(0.0, v);
                else if (it.key() == "substeps") substeps = std::max(1.0, v);
                else if (it.key() == "support_ratio") support = std::max(0.0, v);
            }
    } catch (const std::exception&) {  // the harness's own parsing: not the Session's
        return std::numeric_limits<double>::infinity();
    }
    return s.count() * substeps * (1.0 + iterations) * std::pow(support / 4.0, double(s.dimension()));
}

void step_bounded(Session& s, int n) {
    if (n > 0 && step_work(s) <= kMaxStepWork) s.step(n, kBudgetMs);
}

// What the page reads after a load (app.js, afterLoad) and each frame (refresh, the status line).
void look(Session& s, const std::string& field) {
    (void)s.kind();
    (void)s.dimension();
    (void)s.bounds();
    (void)s.particle_radius();
    (void)s.name();
    (void)s.method();
    (void)s.settings();
    (void)s.scene_document();
    (void)s.walls_move();
    (void)s.grid_nx();
    (void)s.grid_ny();
    (void)s.grid_dx();
    s.refresh(field);
    (void)s.scalar_min();
    (void)s.scalar_max();
    (void)s.time();
    (void)s.steps();
    (void)s.count();
    (void)s.loads();  // the loads panel and its arrow (issue 43)
    (void)s.load_arrow(0, 0.1, 0.003);
    (void)s.whitewater_counts();
    (void)s.whitewater_record();
}

// The gravity the page sends with settings (app.js, afterLoad): the document's list (an entry that is not a
// number: 0), a number (a grid's, down z), else [0, -9.81, 0] for particles and [0, 0, -9.81] for a grid.
std::array<double, 3> page_gravity(const Session& s) {
    const bool grid = s.kind() == "grid";
    std::array<double, 3> g{0.0, grid ? 0.0 : -9.81, grid ? -9.81 : 0.0};
    const std::string doc_text = s.scene_document();
    try {
        const nlohmann::json doc = eddy::parse_json_text(doc_text, "sceneDocument");
        const nlohmann::json* v = doc.is_object() && doc.contains("gravity") ? &doc.at("gravity") : nullptr;
        if (v && v->is_array()) {
            for (std::size_t a = 0; a < 3; ++a)
                g[a] = a < v->size() && (*v)[a].is_number() ? (*v)[a].get<double>() : 0.0;
        } else if (v && v->is_number()) {
            g = {0.0, 0.0, -v->get<double>()};
        }
    } catch (const std::exception&) {  // the harness's own parsing: not the Session's
    }
    return g;
}

// The settings table's request (app.js, applySetting): the running settings with the fragment's keys set.
std::optional<std::string> table_request(const Session& s, const std::string& fragment_text) {
    const std::string running = s.settings();
    try {
        const nlohmann::json fragment = eddy::parse_json_text(fragment_text, "settings");
        if (!fragment.is_object()) return std::nullopt;
        nlohmann::json cur = eddy::parse_json_text(running, "settings");
        if (!cur.is_object()) cur = nlohmann::json::object();
        for (auto it = fragment.begin(); it != fragment.end(); ++it) cur[it.key()] = it.value();
        return cur.dump();
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void drive(const std::string& text, const std::optional<std::string>& fragment, const std::string& method,
           int steps, const std::string& field, bool relink) {
    // The Session moves into /scenes when there is one (the page's file system): libFuzzer writes its corpus
    // and crashes to paths relative to the working folder, so it is put back.
    std::error_code ec;
    const std::filesystem::path cwd = std::filesystem::current_path(ec);
    Session s;
    if (!ec) std::filesystem::current_path(cwd, ec);

    s.set_whitewater(true);  // the panel's checkbox: stepped beside every particle scene loaded (issue 43)
    s.load_text(text, "the pasted scene", method, "[]");
    look(s, "speed");
    if (s.kind().empty()) return;  // refused: the page shows the line
    step_bounded(s, steps);
    look(s, field);

    const std::array<double, 3> g = page_gravity(s);
    if (fragment) {
        s.apply_settings(*fragment, g[0], g[1], g[2]);
        if (const auto request = table_request(s, *fragment)) s.apply_settings(*request, g[0], g[1], g[2]);
    } else {
        s.apply_settings(s.settings(), g[0], g[1], g[2]);
    }
    look(s, field);
    step_bounded(s, 1);
    look(s, field);
    (void)s.state_hash();

    const std::string link = s.scene_document();
    if (relink && fits(link, "the shared link", "", 0)) {
        s.load_text(link, "the shared link", "", "[]");
        look(s, field);
        (void)s.state_hash();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const unsigned choice = data[0];
    const std::string method = kMethods[(choice & 7u) % 5u];
    const int steps = int((choice >> 3) & 3u);
    const std::string field = kFields[(choice >> 5) & 3u];
    const bool relink = (choice & 0x80u) != 0;
    const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::size_t nul = rest.find('\0');
    const std::string text = rest.substr(0, nul);
    const std::optional<std::string> fragment =
        nul == std::string::npos ? std::nullopt : std::optional<std::string>(rest.substr(nul + 1));
    if (!fits(text, "the pasted scene", method, steps + 1)) return 0;
    try {
        drive(text, fragment, method, steps, field, relink);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eddy fuzz: an exception escaped the page's Session: %s\n", e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "eddy fuzz: an exception escaped the page's Session\n");
        std::abort();
    }
    return 0;
}
