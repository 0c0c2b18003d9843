// Software pictures: disks (2D) and shaded sphere impostors with a depth buffer (3D), then PNG.
// Serial on purpose: the same particles give the same bytes on any number of threads, and a
// 1280x720 picture of a million particles still takes well under a second.
#include "eddy/render.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

#include "eddy/io.hpp"

namespace eddy {

namespace {

struct Image {
    int w, h;
    std::vector<float> rgb;    // linear 0..1
    std::vector<float> depth;  // camera distance, 3D only
    Image(int w_, int h_) : w(w_), h(h_), rgb(std::size_t(w_) * h_ * 3), depth(std::size_t(w_) * h_, std::numeric_limits<float>::infinity()) {
        for (std::size_t i = 0; i < std::size_t(w) * h; ++i) {
            rgb[3 * i + 0] = 0.11f;
            rgb[3 * i + 1] = 0.13f;
            rgb[3 * i + 2] = 0.16f;
        }
    }
    void blend(int x, int y, const Vec3& c, float a) {
        float* p = &rgb[3 * (std::size_t(y) * w + x)];
        for (int k = 0; k < 3; ++k) p[k] = p[k] * (1.0f - a) + c[k] * a;
    }
    std::string png() const {
        std::vector<unsigned char> bytes(std::size_t(w) * h * 3);
        for (std::size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = static_cast<unsigned char>(std::lround(std::clamp(rgb[i], 0.0f, 1.0f) * 255.0f));
        std::string out;
        stbi_write_png_to_func(
            [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size); },
            &out, w, h, 3, bytes.data(), w * 3);
        return out;
    }
};

Vec3 cross(const Vec3& a, const Vec3& b) {
    return Vec3{{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
Vec3 normalized(const Vec3& v) { return v * (1.0f / norm(v)); }

// A filled disk with a one-pixel soft edge.
void disk(Image& img, float cx, float cy, float rad, const Vec3& c) {
    rad = std::max(rad, 0.7f);
    const int x0 = std::max(0, int(std::floor(cx - rad - 1))), x1 = std::min(img.w - 1, int(std::ceil(cx + rad + 1)));
    const int y0 = std::max(0, int(std::floor(cy - rad - 1))), y1 = std::min(img.h - 1, int(std::ceil(cy + rad + 1)));
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
            const float d = std::hypot(x + 0.5f - cx, y + 0.5f - cy);
            const float a = std::clamp(rad + 0.5f - d, 0.0f, 1.0f);
            if (a > 0.0f) img.blend(x, y, c, a);
        }
}

}  // namespace

Vec3 speed_color(float speed, float scale) {
    const float s = 1.0f / (1.0f + std::exp(-4.0f * (speed / std::max(scale, 1e-6f) - 1.0f)));
    const Vec3 blue{{0.10f, 0.30f, 0.90f}}, yellow{{1.0f, 0.85f, 0.10f}}, red{{0.90f, 0.10f, 0.10f}};
    if (s < 0.5f) return blue + (yellow - blue) * (2.0f * s);
    return yellow + (red - yellow) * (2.0f * s - 1.0f);
}

template <int D>
void render_png(const std::filesystem::path& path, const ParticleSet<D>& fluid, const BoundarySet<D>* boundary,
                const Aabb<D>& bounds, float particle_radius, const RenderSettings& rs) {
    Image img(rs.width, rs.height);
    const float r = rs.particle_radius > 0.0f ? rs.particle_radius : particle_radius;
    const Vec3 grey{{0.55f, 0.57f, 0.60f}};
    if constexpr (D == 2) {
        // Orthographic, y up, the bounds (plus 4%) fitted to the picture.
        const float bw = bounds.hi[0] - bounds.lo[0], bh = bounds.hi[1] - bounds.lo[1];
        const float scale = 0.92f * std::min(rs.width / std::max(bw, 1e-9f), rs.height / std::max(bh, 1e-9f));
        const float ox = 0.5f * (rs.width - scale * bw), oy = 0.5f * (rs.height - scale * bh);
        auto to_px = [&](const Vec2& p) {
            return std::pair<float, float>{ox + (p[0] - bounds.lo[0]) * scale, rs.height - (oy + (p[1] - bounds.lo[1]) * scale)};
        };
        if (boundary && rs.draw_boundary)
            for (const auto& p : boundary->position) {
                const auto [x, y] = to_px(p);
                disk(img, x, y, 0.8f * r * scale, grey);
            }
        for (std::size_t i = 0; i < fluid.size(); ++i) {
            const auto [x, y] = to_px(fluid.position[i]);
            disk(img, x, y, r * scale, speed_color(norm(fluid.velocity[i]), rs.speed_scale));
        }
    } else {
        const Vec3 c = (bounds.lo + bounds.hi) * 0.5f;
        Vec3 eye = rs.eye, target = rs.target;
        if (eye == target) {
            const float ext = norm(bounds.hi - bounds.lo);
            target = c;
            eye = c + normalized(Vec3{{0.9f, 0.7f, 1.3f}}) * (1.6f * ext);
        }
        const Vec3 f = normalized(target - eye);
        const Vec3 right = normalized(cross(f, Vec3{{0.0f, 1.0f, 0.0f}}));
        const Vec3 up = cross(right, f);
        const float focal = 0.5f * rs.height / std::tan(0.5f * rs.fov_deg * std::numbers::pi_v<float> / 180.0f);
        const Vec3 light = normalized(Vec3{{-0.45f, 0.65f, -0.6f}});  // camera space: from upper left, towards the scene
        const Vec3 half = normalized(light + Vec3{{0.0f, 0.0f, -1.0f}});
        const float center_depth = dot(c - eye, f);
        auto sphere = [&](const Vec3& p, const Vec3& base, bool shaded, float alpha) {
            const Vec3 q = p - eye;
            const float z = dot(q, f);
            if (z <= 1e-4f) return;
            const float sx = 0.5f * rs.width + focal * dot(q, right) / z, sy = 0.5f * rs.height - focal * dot(q, up) / z;
            const float rad = std::max(focal * r / z, 0.6f);
            const int x0 = std::max(0, int(sx - rad)), x1 = std::min(rs.width - 1, int(sx + rad));
            const int y0 = std::max(0, int(sy - rad)), y1 = std::min(rs.height - 1, int(sy + rad));
            for (int y = y0; y <= y1; ++y)
                for (int x = x0; x <= x1; ++x) {
                    const float dx = (x + 0.5f - sx) / rad, dy = (y + 0.5f - sy) / rad;
                    const float d2 = dx * dx + dy * dy;
                    if (d2 > 1.0f) continue;
                    const float nz = std::sqrt(1.0f - d2);
                    const float depth = z - r * nz;
                    float& zb = img.depth[std::size_t(y) * rs.width + x];
                    if (depth >= zb) continue;
                    zb = depth;
                    Vec3 col = base;
                    if (shaded) {
                        // Blinn-Phong in camera space; the normal faces the camera (-z).
                        const Vec3 n{{dx, -dy, -nz}};
                        const float diff = std::max(0.0f, dot(n, light));
                        const float spec = std::pow(std::max(0.0f, dot(n, half)), 32.0f);
                        col = base * (0.25f + 0.75f * diff) + Vec3::filled(0.3f * spec);
                    }
                    img.blend(x, y, col, alpha);
                }
        };
        // Walls: only the particles behind the middle of the scene (floor and far walls) are drawn, as a
        // translucent backdrop; the near walls would hide the fluid.
        if (boundary && rs.draw_boundary)
            for (const auto& p : boundary->position)
                if (dot(p - eye, f) > center_depth) sphere(p, grey * 0.7f, false, 0.35f);
        for (std::size_t i = 0; i < fluid.size(); ++i)
            sphere(fluid.position[i], speed_color(norm(fluid.velocity[i]), rs.speed_scale), true, 1.0f);
    }
    io::write_atomic(path, img.png());
}

template void render_png<2>(const std::filesystem::path&, const ParticleSet<2>&, const BoundarySet<2>*, const Aabb<2>&,
                            float, const RenderSettings&);
template void render_png<3>(const std::filesystem::path&, const ParticleSet<3>&, const BoundarySet<3>*, const Aabb<3>&,
                            float, const RenderSettings&);

}  // namespace eddy
