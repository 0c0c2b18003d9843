// eddy-view: colour maps, units and ranges (coloring.hpp).
#include "coloring.hpp"

#include <algorithm>
#include <cmath>

namespace eddy::view {

namespace {

constexpr int N = kColormapStops;
using Table = std::array<float, 3 * N>;

// Resamples a few evenly spaced anchors to the N stops.
template <std::size_t K>
constexpr Table resample(const std::array<std::array<float, 3>, K>& a) {
    Table t{};
    for (int k = 0; k < N; ++k) {
        const float x = float(k) / float(N - 1) * float(K - 1);
        const int i = std::min(int(x), int(K) - 2);
        const float f = x - float(i);
        for (int c = 0; c < 3; ++c) t[3 * k + c] = a[i][c] + (a[i + 1][c] - a[i][c]) * f;
    }
    return t;
}

// Seed 003's map, the same as eddy::speed_color (src/render/render.cpp): blue -> yellow -> red.
constexpr Table kClassic = resample<3>({{{0.10f, 0.30f, 0.90f}, {1.0f, 0.85f, 0.10f}, {0.90f, 0.10f, 0.10f}}});
// matplotlib's viridis and coolwarm (Moreland), sampled at k / 16.
constexpr Table kViridis = {
    0.2670f, 0.0049f, 0.3294f, 0.2823f, 0.0950f, 0.4173f, 0.2788f, 0.1755f, 0.4834f, 0.2590f, 0.2515f, 0.5247f,
    0.2297f, 0.3224f, 0.5457f, 0.1994f, 0.3876f, 0.5546f, 0.1727f, 0.4488f, 0.5579f, 0.1490f, 0.5081f, 0.5573f,
    0.1276f, 0.5669f, 0.5506f, 0.1206f, 0.6258f, 0.5335f, 0.1579f, 0.6838f, 0.5017f, 0.2461f, 0.7389f, 0.4520f,
    0.3692f, 0.7889f, 0.3829f, 0.5160f, 0.8312f, 0.2943f, 0.6785f, 0.8637f, 0.1895f, 0.8456f, 0.8873f, 0.0997f,
    0.9932f, 0.9062f, 0.1439f};
constexpr Table kCoolwarm = {
    0.2298f, 0.2987f, 0.7537f, 0.3042f, 0.4069f, 0.8453f, 0.3837f, 0.5102f, 0.9178f, 0.4677f, 0.6056f, 0.9685f,
    0.5543f, 0.6901f, 0.9955f, 0.6408f, 0.7608f, 0.9978f, 0.7240f, 0.8149f, 0.9757f, 0.8006f, 0.8504f, 0.9300f,
    0.8674f, 0.8644f, 0.8626f, 0.9256f, 0.8255f, 0.7711f, 0.9595f, 0.7670f, 0.6741f, 0.9697f, 0.6905f, 0.5751f,
    0.9567f, 0.5980f, 0.4773f, 0.9214f, 0.4914f, 0.3834f, 0.8654f, 0.3711f, 0.2958f, 0.7906f, 0.2314f, 0.2162f,
    0.7057f, 0.0156f, 0.1502f};
// Speed: deep water blue at rest through sky blue to white foam at the fast end.
constexpr Table kSpeed = resample<4>({{{0.03f, 0.12f, 0.40f}, {0.10f, 0.40f, 0.85f}, {0.55f, 0.80f, 1.00f}, {1.0f, 1.0f, 1.0f}}});

}  // namespace

std::span<const float> colormap_stops(Colormap m) {
    switch (m) {
        case Colormap::viridis: return kViridis;
        case Colormap::coolwarm: return kCoolwarm;
        case Colormap::speed: return kSpeed;
        case Colormap::classic: break;
    }
    return kClassic;
}

std::array<float, 3> colormap_rgb(Colormap m, float s) {
    const auto t = colormap_stops(m);
    s = std::isfinite(s) ? std::clamp(s, 0.0f, 1.0f) : 1.0f;
    const float x = s * float(N - 1);
    const int i = std::min(int(x), N - 2);
    const float f = x - float(i);
    std::array<float, 3> c;
    for (int k = 0; k < 3; ++k) c[k] = t[3 * i + k] + (t[3 * (i + 1) + k] - t[3 * i + k]) * f;
    return c;
}

bool parse_colormap(const std::string& name, Colormap& out) {
    for (int i = 0; i < kColormaps; ++i)
        if (name == kColormapNames[i]) {
            out = static_cast<Colormap>(i);
            return true;
        }
    return false;
}

const char* field_unit(ColorField f, int dimension) {
    switch (f) {
        case ColorField::density: return dimension == 2 ? "kg/m^2" : "kg/m^3";
        case ColorField::pressure: return dimension == 2 ? "N/m" : "Pa";
        case ColorField::speed: break;
    }
    return "m/s";
}

std::array<float, 2> auto_range(ColorField f, float speed_scale, float frame_min, float frame_max, float rest_density,
                                float pressure_scale) {
    if (f == ColorField::speed) return {0.0f, 2.0f * std::max(speed_scale, 1e-6f)};
    if (f == ColorField::density && rest_density > 0.0f) return {0.98f * rest_density, 1.02f * rest_density};
    if (f == ColorField::pressure && pressure_scale > 0.0f) return {0.0f, pressure_scale};
    if (!std::isfinite(frame_min) || !std::isfinite(frame_max) || frame_max < frame_min) return {0.0f, 1.0f};
    if (frame_max - frame_min <= 1e-6f * std::max(std::abs(frame_min), std::abs(frame_max))) {
        const float d = frame_min != 0.0f ? 0.005f * std::abs(frame_min) : 1.0f;
        return {frame_min - d, frame_max + d};
    }
    return {frame_min, frame_max};
}

}  // namespace eddy::view
