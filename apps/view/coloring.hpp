// eddy-view: how particles are coloured: the colour maps (seed 003's blue-yellow-red, viridis,
// coolwarm, speed blue-white), the fields' units, and the range a field is mapped over (automatic or
// locked by the user). No OpenGL, no ImGui: the shaders and the legend read the same tables, and the
// window-less tests link it.
#pragma once
#include <array>
#include <span>
#include <string>

namespace eddy::view {

enum class ColorField { speed = 0, density = 1, pressure = 2 };
inline constexpr const char* kFieldNames[] = {"speed", "density", "pressure"};

enum class Colormap { classic = 0, viridis = 1, coolwarm = 2, speed = 3 };
inline constexpr const char* kColormapNames[] = {"classic", "viridis", "coolwarm", "speed"};
inline constexpr int kColormaps = 4;

/// Every map is kColormapStops colours at s = k / (kColormapStops - 1), linear in between (the shader
/// interpolates the same table).
inline constexpr int kColormapStops = 17;
/// The map's stops, RGB in [0, 1], 3 * kColormapStops floats.
std::span<const float> colormap_stops(Colormap m);
/// The map's colour at s (clamped to [0, 1]), as the shader computes it.
std::array<float, 3> colormap_rgb(Colormap m, float s);
/// "viridis" -> Colormap::viridis; false for an unknown name.
bool parse_colormap(const std::string& name, Colormap& out);

/// The field's unit: m/s; kg/m^3 (2D kg/m^2: mass per area of a layer); Pa (2D N/m: force per length).
const char* field_unit(ColorField f, int dimension);

/// The range [lo, hi] a field is mapped over (in its unit): the map's left end at lo, right end at hi.
struct ColorScale {
    bool locked = false;          ///< the user's lo, hi; else automatic (see auto_range)
    float lo = 0.0f, hi = 1.0f;
};

/// The automatic range: speed 0 .. 2 x speed_scale (the middle of the map at speed_scale, half the
/// free-fall speed over the fluid's height times the panel's factor); density rho0 +-2% (the middle of the
/// map at rest: compression and the free surface's deficit show, the bulk does not saturate) and pressure
/// 0 .. rho0 g H (the hydrostatic pressure at the bottom of the fluid's height H at the top) when the
/// scene gives them (`rest_density`, `pressure_scale` > 0); else the frame's smallest .. largest value (a
/// constant field gets +-0.5% or +-1 around it).
std::array<float, 2> auto_range(ColorField f, float speed_scale, float frame_min, float frame_max,
                                float rest_density = 0.0f, float pressure_scale = 0.0f);

}  // namespace eddy::view
