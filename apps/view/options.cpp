// eddy-view: the command line. The options' order here is the order of `eddy view --help`.
#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#define GLFW_INCLUDE_NONE  // the key codes only: no OpenGL header
#include <GLFW/glfw3.h>
#include <CLI/CLI.hpp>

#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/json_text.hpp"

namespace eddy::view {
namespace {

void add_options(CLI::App& cli, Options& opt) {
    cli.add_option("scene", opt.scene, "Bundled scene name or scene file (default: " + std::string(kDefaultScene) + ")");
    cli.add_option("--method", opt.method, "Run the scene with this method: the scene's settings it has with the same key and unit are kept, the others take its defaults")
        ->check(CLI::IsMember({"wcsph", "dfsph", "pbf", "clavet"}));
    cli.add_option("--set", opt.sets, "Override a scene key: KEY.PATH=VALUE, e.g. settings.cfl=0.3 (repeatable)");
    cli.add_option("--threads,-j", opt.threads, "Simulation threads, at most 4096 (default and 0: all cores)")
        ->check(CLI::Range(0, eddy::kMaxThreads));
    cli.add_option("--max-particles", opt.max_particles, "Refuse scenes (and added blocks) beyond this many particles")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cli.add_option("--live-particles", opt.live_particles,
                   "Play scenes with more fluid and wall particles than this at a coarser particle radius, so that "
                   "they run live (a warning says so); 0: always at the scene's own resolution")
        ->capture_default_str();
    cli.add_option("--max-memory", opt.max_memory,
                   "Refuse scenes estimated to need more memory than this: bytes or 500M, 4G, 1.5GB, 512MiB; "
                   "default: 90% of the available memory");
    cli.add_option("--frames", opt.frames, "Run this many frames, then exit (for scripts and tests)")->check(CLI::PositiveNumber);
    cli.add_option("--screenshot", opt.screenshot, "Save a PNG of the scene: the last frame with --frames, else the first");
    cli.add_option("--size", opt.size, "Window size WIDTHxHEIGHT (px)")->capture_default_str();
    cli.add_flag("--paused", opt.paused, "Start paused");
    cli.add_option("--color", opt.color, "Colour particles by speed, density or pressure")
        ->check(CLI::IsMember({"speed", "density", "pressure"}))
        ->capture_default_str();
    cli.add_option("--colormap", opt.colormap, "Colour map: classic (blue-yellow-red), viridis, coolwarm or speed (blue-white)")
        ->check(CLI::IsMember({"classic", "viridis", "coolwarm", "speed"}))
        ->capture_default_str();
    cli.add_option("--color-range", opt.color_range,
                   "MIN,MAX: lock the colour field's range, in its unit (m/s; kg/m^3, 2D kg/m^2; Pa, 2D N/m)");
    cli.add_option("--particle-size", opt.particle_size, "Draw particles with this times their radius (0.25 to 4)")
        ->check(CLI::Range(0.25f, 4.0f))
        ->capture_default_str();
    cli.add_flag("--no-legend", opt.no_legend, "Do not draw the colour legend (the panel's 'legend' checkbox)");
    cli.add_flag("--load-arrow", opt.load_arrow, "Draw the selected object's load arrow from the start (the loads panel's 'arrow' checkbox)");
    cli.add_option("--test-keys", opt.test_keys, "With --frames: FRAME:KEY,... keys pressed at frames (letters, 'space'), for tests");
    cli.add_flag("--screenshot-ui", opt.screenshot_ui, "Screenshots show the controls too (default: the scene only)");
    cli.add_option("--steps-per-frame", opt.steps_per_frame,
                   "Lockstep: exactly this many simulation steps before each frame is drawn (reproducible --frames runs)")
        ->check(CLI::PositiveNumber);
    cli.add_flag("--surface", opt.surface, "Reconstruct the fluid's surface live and draw it (3D scenes; the panel's checkbox)");
    cli.add_flag("--whitewater", opt.whitewater, "Spray, foam and bubbles beside the fluid from the start (particle scenes; the panel's checkbox)");
    cli.add_flag("--bodies-mode", opt.bodies_mode, "Start with left drags grabbing bodies (the panel's 'drag bodies', key G)");
    cli.add_flag("--hide-ui", opt.hide_ui, "Start with the control panel hidden (H shows it)");
    cli.add_option("--record", opt.record, "Record every frame into this folder as PNGs (and recording.mp4 if ffmpeg is on PATH)");
    cli.add_option("--test-drag", opt.test_drag,
                   "With --frames: a scripted left drag X0,Y0,X1,Y1 in window fractions (0..1), for tests");
    cli.add_option("--mesh", opt.mesh,
                   "A surface mesh (.obj, e.g. from eddy mesh) to draw over a 3D scene, or alone when no scene is named");
    cli.add_flag("--demo-heightfield", opt.demo_heightfield,
                 "Show a synthetic heightfield (terrain, water, ink) instead of a scene: a test of the shallow-water renderer");
    cli.add_option("--demo-cells", opt.demo_cells, "Cells per side of the synthetic heightfield")
        ->capture_default_str()
        ->check(CLI::Range(8, 2048));
    cli.add_option("--bench-render", opt.bench_render, "Render N random 3D particles (no simulation), print frames per second, exit")
        ->check(CLI::PositiveNumber);
    cli.add_option("--bench-seconds", opt.bench_seconds, "How long --bench-render runs (s)")->capture_default_str()->check(CLI::PositiveNumber);
    cli.footer("\nMouse: left drag stirs the fluid (particles in the brush take the mouse's velocity); right drag orbits (3D) or pans (2D);\n"
               "wheel zooms; Ctrl + left drag (or G, then left drag) pulls a body. Keys: Space play/pause, S step, R reset,\n"
               "B add a block at the cursor, N drop a ball, M drop a box (at the cursor), G drag bodies, C colour field, P screenshot, V record,\n"
               "H hide the panel, Q/Esc quit. Exit codes: 0 done, 1 failure (no display, OpenGL), 2 bad input, 3 the simulation\n"
               "diverged during a --frames run. See docs/viewer.md.");
}

// --test-drag X0,Y0,X1,Y1: into opt.drag. False (the error printed) when it is not four fractions, or
// without --frames 6 or more.
bool check_test_drag(Options& opt) {
    if (opt.test_drag.empty()) return true;
    float* d = opt.drag;
    char tail = 0;
    const int n = std::sscanf(opt.test_drag.c_str(), "%f,%f,%f,%f%c", &d[0], &d[1], &d[2], &d[3], &tail);
    bool ok = n == 4 && opt.frames >= 6;
    for (int i = 0; i < 4; ++i) ok = ok && d[i] >= 0.0f && d[i] <= 1.0f;
    if (!ok) {
        std::fprintf(stderr, "eddy-view: error: --test-drag '%s': expected X0,Y0,X1,Y1, each in [0, 1], with --frames 6 or more\n",
                     opt.test_drag.c_str());
        return false;
    }
    return true;
}

// --color-range MIN,MAX: into opt.range. False (the error printed) unless both are finite and MAX > MIN.
bool check_color_range(Options& opt) {
    if (opt.color_range.empty()) return true;
    char tail = 0;
    if (std::sscanf(opt.color_range.c_str(), "%f,%f%c", &opt.range[0], &opt.range[1], &tail) != 2 ||
        !std::isfinite(opt.range[0]) || !std::isfinite(opt.range[1]) || !(opt.range[1] > opt.range[0])) {
        std::fprintf(stderr, "eddy-view: error: --color-range '%s': expected MIN,MAX with MAX > MIN (e.g. 990,1010)\n",
                     opt.color_range.c_str());
        return false;
    }
    return true;
}

// --test-keys FRAME:KEY,...: into opt.keys as (frame, GLFW key). False (the error printed) on a bad item
// or without --frames.
bool parse_test_keys(Options& opt) {
    if (opt.test_keys.empty()) return true;
    std::string item;
    std::size_t start = 0;
    while (start <= opt.test_keys.size()) {
        const std::size_t end = std::min(opt.test_keys.find(',', start), opt.test_keys.size());
        item = opt.test_keys.substr(start, end - start);
        start = end + 1;
        int at = -1, key = -1;
        char name[16] = {0};
        if (std::sscanf(item.c_str(), "%d:%15s", &at, name) == 2 && at >= 0) {
            const std::string n = name;
            if (n == "space") key = GLFW_KEY_SPACE;
            else if (n.size() == 1 && std::isalpha(static_cast<unsigned char>(n[0]))) key = GLFW_KEY_A + (std::toupper(n[0]) - 'A');
        }
        if (key < 0 || opt.frames == 0) {
            std::fprintf(stderr, "eddy-view: error: --test-keys '%s': expected FRAME:KEY,... (KEY a letter or space) with --frames\n",
                         opt.test_keys.c_str());
            return false;
        }
        opt.keys.emplace_back(at, key);
    }
    return true;
}

// --size WIDTHxHEIGHT: into opt.width and opt.height. False (the error printed) unless each is 64..8192.
bool parse_size(Options& opt) {
    int w = 0, h = 0;
    char x = 0;
    if (std::sscanf(opt.size.c_str(), "%d%c%d", &w, &x, &h) != 3 || x != 'x' || w < 64 || h < 64 || w > 8192 || h > 8192) {
        std::fprintf(stderr, "eddy-view: error: --size '%s': expected WIDTHxHEIGHT, each 64..8192 (e.g. 1280x720)\n",
                     opt.size.c_str());
        return false;
    }
    opt.width = w, opt.height = h;
    return true;
}

}  // namespace

std::optional<int> parse_options(int argc, char** argv, Options& opt) {
    CLI::App cli{"eddy view: watch, steer and play with a simulation in a window (OpenGL 3.3)", "eddy view"};
    add_options(cli, opt);
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::fprintf(stderr, "eddy-view: error: %s (see eddy view --help)\n", eddy::text_excerpt(msg, 300).c_str());
        return eddy::kExitBadInput;
    }
    if (!check_test_drag(opt) || !check_color_range(opt) || !parse_test_keys(opt)) return eddy::kExitBadInput;
    opt.mesh_only = !opt.mesh.empty() && cli.count("scene") == 0 && !opt.demo_heightfield;
    if (!parse_size(opt)) return eddy::kExitBadInput;
    return std::nullopt;
}

}  // namespace eddy::view
