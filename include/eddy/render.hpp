// eddy: software pictures of particles (PNG through stb_image_write), no OpenGL needed.
// 2D: particles as disks in an orthographic view of the domain. 3D: shaded spheres (Blinn-Phong) from
// a fixed perspective camera, depth-tested. Colour by speed, blue -> yellow -> red through a sigmoid
// as in seed 003. Boundary particles (walls) are drawn in grey behind the fluid: small disks in 2D;
// in 3D the farthest wall surface of the containers (floor, back walls) is opaque and evenly lit, the
// nearest one a faint glass tint, so that the front walls of a tank never hide the fluid; solids
// (obstacles, models: RenderSettings::solid_objects) are shaded surfaces, opaque except where fluid or a
// body lies behind them, where they are a veil over it (a tank built of solid boxes shows its water).
// Bodies (the boundary objects whose motion is driven) are drawn in their own colours, the viewer's
// palette: filled in 2D, opaque shaded surfaces among the fluid in 3D.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/math.hpp"
#include "eddy/particles.hpp"

namespace eddy {

struct RenderSettings {
    int width = 1280;            ///< Picture width (px)
    int height = 720;            ///< Picture height (px)
    float particle_radius = 0;   ///< Drawn radius (m); 0: the scene's particle radius
    float speed_scale = 1.0f;    ///< Speed (m/s) at the middle of the colour map (sigmoid centre)
    bool speed_scale_set = false;  ///< run(): false lets it pick half the free-fall speed of the fluid height
    bool draw_boundary = true;   ///< Draw the boundary particles
    /// Per boundary object (BoundarySet::object), 1 for a solid (an obstacle, a model, a body): drawn
    /// shaded where it stands, opaque, or a veil where fluid or a body lies behind it (3D); the other
    /// walls (containers) as the tank's far surface and faint near glass. Bodies are told by their
    /// driven motion, whatever this says. Empty: every wall is a container's.
    std::vector<std::uint8_t> solid_objects;
    // 3D camera; if eye == target, a default view of `bounds` from the front-right-above.
    Vec3 eye = {{0, 0, 0}};
    Vec3 target = {{0, 0, 0}};
    float fov_deg = 40.0f;       ///< Vertical field of view (deg)
};

/// The seed's colour map: sigmoid of speed/scale, blue -> yellow -> red. RGB in [0, 1].
Vec3 speed_color(float speed, float scale);

/// The colour of body k, the bodies' palette in turn (green, violet, teal, lime, pink, brown): hues the
/// speed colour map, the walls' greys and the load arrow's magenta do not use. --render and the viewer
/// draw bodies in it; the page keeps a copy (web/page/render.js). RGB in [0, 1].
Vec3 body_color(std::size_t k);

/// Writes an RGB picture (row 0 at the top, components in [0, 1]) as a PNG, atomically.
void write_png(const std::filesystem::path& path, int width, int height, const std::vector<Vec3>& rgb);

/// Renders the particles (and the boundary, if given) over `bounds` and writes a PNG atomically.
template <int D>
void render_png(const std::filesystem::path& path, const ParticleSet<D>& fluid, const BoundarySet<D>* boundary,
                const Aabb<D>& bounds, float particle_radius, const RenderSettings& rs = {});

}  // namespace eddy
