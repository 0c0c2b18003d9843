// eddy-view: the whitewater (issue 32; eddy/whitewater.hpp) in the window: the panel's "whitewater"
// checkbox with the counts by type, and the diffuse particles drawn as small points over the fluid,
// coloured by type (spray white, foam light grey-blue, bubbles pale cyan). The simulation thread steps
// the whitewater (SimWorker::whitewater) and puts its particles in the snapshot (Snapshot::diffuse).
#pragma once
#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "camera.hpp"
#include "sim_worker.hpp"

namespace eddy::view {

class Renderer;  // gfx.hpp (OpenGL): only whitewater_view.cpp draws

/// Colours of spray, foam and bubbles (Snapshot::diffuse's type 0, 1, 2), RGB.
inline constexpr float kDiffuseRgb[3][3] = {{1.0f, 1.0f, 1.0f}, {0.78f, 0.84f, 0.93f}, {0.66f, 0.95f, 1.0f}};
/// Drawn radius of a diffuse particle in fluid particle radii.
inline constexpr float kDiffuseRadii = 0.4f;

/// The diffuse particles (x, y, z, type each) split by type, as x, y, z, 0 per particle for
/// Renderer::draw_particles; a type beyond 2 counts as a bubble (as count_whitewater does). Header-only:
/// the simulation-thread tests check it without OpenGL.
inline std::array<std::vector<float>, 3> diffuse_by_type(std::span<const float> diffuse) {
    std::array<std::vector<float>, 3> out;
    for (std::size_t i = 0; i + 3 < diffuse.size(); i += 4) {
        const std::size_t t = std::size_t(std::clamp(static_cast<int>(diffuse[i + 3]), 0, 2));
        out[t].insert(out[t].end(), {diffuse[i], diffuse[i + 1], diffuse[i + 2], 0.0f});
    }
    return out;
}

/// The panel's whitewater line (particle scenes): the checkbox and, when on, the counts.
void whitewater_panel(SimWorker& worker, const Snapshot& snap);

/// The diffuse particles of the snapshot over the fluid: 3D lit spheres of kDiffuseRadii r, 2D disks at
/// least `min_radius` (m: a pixel or so) across their radius.
void draw_whitewater(Renderer& gfx, const Snapshot& snap, const Mat4& view, const Mat4& proj, float min_radius = 0.0f);

}  // namespace eddy::view
