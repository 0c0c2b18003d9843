// eddy-view: the scene as the window draws it from the latest snapshot: particles, walls and models,
// bodies, whitewater, the surface mesh or a heightfield, and the load arrow (the drawing itself is
// gfx.*'s).
#pragma once

namespace eddy::view {

struct App;

/// The scene into a w x h framebuffer, right of the panel; without a snapshot the --mesh alone.
void draw_scene(App& app, int w, int h);

}  // namespace eddy::view
