// eddy-view: the controls (Dear ImGui): the overlay at the top right (status lines, and the colour
// legend drawn in the scene), and the panel at the left (play, scene, method, look, loads, bodies,
// gravity, interaction, emitters, the method's settings; the shallow-water controls on a heightfield).
#pragma once

namespace eddy::view {

struct App;

/// Builds this frame's controls (between ImGui::NewFrame and ImGui::Render).
void draw_ui(App& app);

}  // namespace eddy::view
