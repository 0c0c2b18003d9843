// eddy-view: the colour and size controls of the panel (field, map, range lock with min and max in the
// field's unit, speed scale, particle size, legend) and the legend drawn in the window: a colour bar
// with the range's ends and the unit. The map and the range are applied where the particles are drawn
// (gfx.cpp's shader), so a change shows at once, paused or not; a change of field asks the simulation
// thread for a new snapshot (SimWorker::refresh), which it publishes without a step.
#pragma once
#include <array>

#include <imgui.h>

#include "coloring.hpp"
#include "gfx.hpp"
#include "sim_worker.hpp"

namespace eddy::view {

struct ColorControls {
    int field = 0;                          ///< ColorField
    Colormap map = Colormap::classic;
    std::array<ColorScale, 3> scales{};     ///< per field: locked or automatic, and the user's ends
    float speed_scale_factor = 1.0f;        ///< automatic speed range: 0 .. 2 x this x the scene's speed scale
    float size = 1.0f;                      ///< particles drawn with this times the particle radius
    bool legend = true;

    /// The range the snapshot's scalar is drawn over (its own field's: the snapshot may still hold the
    /// previous field for a frame after a change).
    std::array<float, 2> range(const Snapshot& s) const;
    ColorRange color_range(const Snapshot& s) const;
    /// The panel's section. Returns true when the field changed.
    bool panel(const Snapshot& s);
};

/// The legend at the window's bottom right corner `br` (px): the field and unit, the bar of the map,
/// the range's ends (and its middle), "locked" when the range is the user's.
void draw_legend(ImDrawList* dl, ImVec2 br, const ColorControls& c, const Snapshot& s);

}  // namespace eddy::view
