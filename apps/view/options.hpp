// eddy-view: the command line (`eddy view --help`): the options as a plain struct, parsed and checked by
// CLI11 and a few checks of their own (--size, --color-range, --test-keys, --test-drag).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace eddy::view {

inline constexpr const char* kDefaultScene = "dam_break_2d";

struct Options {
    std::string scene = kDefaultScene;
    std::string method;
    std::vector<std::string> sets;
    int threads = 0;
    std::size_t max_particles = 5'000'000;
    std::size_t live_particles = 20'000;  // scenes beyond it play coarser (SimWorker's live_scene)
    std::string max_memory;       // --max-memory; empty: 90% of the available memory
    int frames = 0;               // > 0: run this many frames and exit
    std::string screenshot;       // with --frames: the last frame; else the first
    std::string size = "1280x720";
    int width = 1280, height = 720;
    bool paused = false;
    bool demo_heightfield = false;
    int demo_cells = 128;
    std::size_t bench_render = 0;  // > 0: render this many random particles, report fps, exit
    double bench_seconds = 4.0;
    std::string record;            // folder: record every frame from the start
    std::string color = "speed";
    std::string colormap = "classic";  // --colormap
    float particle_size = 1.0f;        // --particle-size: drawn radius in particle radii
    std::string color_range;           // --color-range MIN,MAX: the colour field's range, locked
    float range[2] = {0, 0};
    bool no_legend = false;            // --no-legend
    bool load_arrow = false;           // --load-arrow
    std::string test_keys;             // "FRAME:KEY,...": keys pressed at frames, for tests
    std::vector<std::pair<int, int>> keys;  // (frame, GLFW key)
    bool hide_ui = false;
    bool screenshot_ui = false;    // screenshots include the controls
    std::string test_drag;         // "x0,y0,x1,y1" (window fractions): a scripted left drag, for tests
    float drag[4] = {0, 0, 0, 0};
    std::string mesh;              // an OBJ surface to draw (alone, or over a 3D scene)
    bool surface = false;          // reconstruct and draw the fluid's surface live (3D)
    int steps_per_frame = 0;       // > 0: lockstep, exactly this many steps before each frame is drawn
    bool mesh_only = false;        // --mesh without a scene: the mesh alone
    bool bodies_mode = false;      // --bodies-mode: a left drag grabs bodies (as the panel's checkbox, key G)
    bool whitewater = false;       // --whitewater: spray, foam and bubbles from the start (the panel's checkbox)
};

/// Parses and checks the command line into `opt`. Returns nothing when the viewer should run, else the
/// exit code to leave with now (0 after --help; 2 after a bad option, its one-line error printed).
std::optional<int> parse_options(int argc, char** argv, Options& opt);

}  // namespace eddy::view
