// Software pictures: anti-aliased disks (2D) and shaded sphere impostors with depth buffers (3D),
// written as PNG through stb_image_write.
//
// Serial on purpose: pixels are written in particle order, so a parallel version would need row
// bands to stay deterministic, and a 1280x720 picture of a million particles already takes well
// under a second on one core (the 3D pass only writes depth and an index per pixel and shades each
// pixel once at the end).
#include "eddy/render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/io.hpp"

namespace eddy {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const Vec3 kBackground{{0.11f, 0.13f, 0.17f}};  // dark grey-blue
const Vec3 kWallGrey{{0.56f, 0.58f, 0.62f}};
const Vec3 kSolid{{0.78f, 0.72f, 0.62f}};  // obstacles and models: warm grey, apart from the tank

Vec3 cross(const Vec3& a, const Vec3& b) {
    return Vec3{{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
Vec3 normalized(const Vec3& v) { return v * (1.0f / norm(v)); }
Vec3 lerp(const Vec3& a, const Vec3& b, float t) { return a + (b - a) * t; }

// Pixel rectangle covered by a disk at (cx, cy) of radius rad (+ pad for the soft edge), clipped to
// the picture. Empty (x0 > x1) when off screen or not finite: a diverged particle must not turn into
// an out-of-range float-to-int conversion.
struct PixelRect { int x0 = 0, x1 = -1, y0 = 0, y1 = -1; };
PixelRect covered(float cx, float cy, float rad, int w, int h) {
    PixelRect r;
    if (!(std::isfinite(cx) && std::isfinite(cy) && std::isfinite(rad))) return r;
    if (cx + rad < 0.0f || cy + rad < 0.0f || cx - rad > float(w) || cy - rad > float(h)) return r;
    r.x0 = std::max(0, int(std::floor(cx - rad)));
    r.x1 = std::min(w - 1, int(std::floor(cx + rad)));
    r.y0 = std::max(0, int(std::floor(cy - rad)));
    r.y1 = std::min(h - 1, int(std::floor(cy + rad)));
    return r;
}

std::string encode_png(int w, int h, const std::vector<Vec3>& rgb) {
    std::vector<unsigned char> bytes(std::size_t(w) * h * 3);
    for (std::size_t i = 0; i < rgb.size(); ++i)
        for (int k = 0; k < 3; ++k) {
            const float c = rgb[i][k];
            bytes[3 * i + k] = static_cast<unsigned char>(std::lround((c > 0.0f ? std::min(c, 1.0f) : 0.0f) * 255.0f));
        }
    std::string out;
    const int ok = stbi_write_png_to_func(
        [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size); },
        &out, w, h, 3, bytes.data(), w * 3);
    if (!ok) throw std::runtime_error(fmt::format("cannot encode a {}x{} PNG", w, h));
    return out;
}

// ---- 2D -------------------------------------------------------------------------------------

// A filled disk with a one-pixel soft edge (coverage = how far the pixel centre is inside the rim).
void disk(std::vector<Vec3>& img, int w, int h, float cx, float cy, float rad, const Vec3& c) {
    const PixelRect r = covered(cx, cy, rad + 0.5f, w, h);
    for (int y = r.y0; y <= r.y1; ++y)
        for (int x = r.x0; x <= r.x1; ++x) {
            const float dx = x + 0.5f - cx, dy = y + 0.5f - cy;
            const float a = std::clamp(rad + 0.5f - std::sqrt(dx * dx + dy * dy), 0.0f, 1.0f);
            if (a > 0.0f) {
                Vec3& p = img[std::size_t(y) * w + x];
                p = lerp(p, c, a);
            }
        }
}

// The view box: `bounds` if it is a real box, else the box around the finite fluid particles (at
// least 20 particle radii wide, so that a single particle still makes a picture).
template <int D>
Aabb<D> usable_bounds(const Aabb<D>& bounds, const ParticleSet<D>& fluid, float r) {
    bool ok = true;
    float extent = 0.0f;
    for (int a = 0; a < D; ++a) {
        ok = ok && std::isfinite(bounds.lo[a]) && std::isfinite(bounds.hi[a]) && bounds.hi[a] >= bounds.lo[a];
        extent = std::max(extent, bounds.hi[a] - bounds.lo[a]);
    }
    if (ok && extent > 0.0f) return bounds;
    Aabb<D> b{Vec<D>::filled(kInf), Vec<D>::filled(-kInf)};
    for (const auto& x : fluid.position)
        if (is_finite(x))
            for (int a = 0; a < D; ++a) {
                b.lo[a] = std::min(b.lo[a], x[a]);
                b.hi[a] = std::max(b.hi[a], x[a]);
            }
    if (!std::isfinite(b.lo[0])) return Aabb<D>{Vec<D>::filled(0.0f), Vec<D>::filled(1.0f)};
    const float pad = std::max(10.0f * r, 1e-3f);
    for (int a = 0; a < D; ++a)
        if (b.hi[a] - b.lo[a] < 2.0f * pad) {
            const float c = 0.5f * (b.lo[a] + b.hi[a]);
            b.lo[a] = c - pad;
            b.hi[a] = c + pad;
        }
    return b;
}

void render_2d(std::vector<Vec3>& img, const RenderSettings& rs, const ParticleSet<2>& fluid,
               const BoundarySet<2>* boundary, const Aabb<2>& bounds_in, float r) {
    const int w = rs.width, h = rs.height;
    const Aabb<2> bounds = usable_bounds(bounds_in, fluid, r);
    // Orthographic, y up; the bounds plus a 4% margin on each side fill the picture, aspect kept.
    const float bw = bounds.hi[0] - bounds.lo[0], bh = bounds.hi[1] - bounds.lo[1];
    const float tiny = 1e-6f * std::max({bw, bh, 1e-6f});
    const float scale = 0.92f * std::min(float(w) / std::max(bw, tiny), float(h) / std::max(bh, tiny));
    const float ox = 0.5f * (float(w) - scale * bw), oy = 0.5f * (float(h) - scale * bh);
    auto px = [&](const Vec2& p) { return ox + (p[0] - bounds.lo[0]) * scale; };
    auto py = [&](const Vec2& p) { return float(h) - (oy + (p[1] - bounds.lo[1]) * scale); };
    const float rad = std::max(r * scale, 1.0f);
    if (boundary && rs.draw_boundary) {
        const float brad = std::max(0.8f * r * scale, 0.75f);
        for (const auto& p : boundary->position) disk(img, w, h, px(p), py(p), brad, kWallGrey);
    }
    for (std::size_t i = 0; i < fluid.size(); ++i) {
        const Vec2& p = fluid.position[i];
        disk(img, w, h, px(p), py(p), rad, speed_color(norm(fluid.velocity[i]), rs.speed_scale));
    }
}

// ---- 3D -------------------------------------------------------------------------------------

struct Camera {
    Vec3 eye, forward, right, up;
    float focal;  // pixels per unit of (lateral offset / depth)
    float cx, cy;
};

Camera make_camera(const RenderSettings& rs, const Aabb<3>& bounds) {
    const float fov = std::clamp(rs.fov_deg, 1.0f, 170.0f) * std::numbers::pi_v<float> / 180.0f;
    const float aspect = float(rs.width) / float(rs.height);
    Vec3 eye = rs.eye, target = rs.target;
    if (eye == target || !is_finite(eye) || !is_finite(target)) {
        // Default view from the front-right-above, far enough that the sphere around the bounds fits
        // both the vertical and the horizontal field of view.
        const Vec3 c = (bounds.lo + bounds.hi) * 0.5f;
        const float radius = std::max(0.5f * norm(bounds.hi - bounds.lo), 1e-6f);
        const float half = std::min(0.5f * fov, std::atan(std::tan(0.5f * fov) * aspect));
        target = c;
        eye = c + normalized(Vec3{{0.9f, 0.7f, 1.3f}}) * (1.03f * radius / std::sin(half));
    }
    Camera cam;
    cam.eye = eye;
    cam.forward = normalized(target - eye);
    // Looking straight up or down: any horizontal screen-up works; -z keeps the front at the bottom.
    Vec3 world_up{{0.0f, 1.0f, 0.0f}};
    if (std::abs(cam.forward[1]) > 0.9999f) world_up = Vec3{{0.0f, 0.0f, cam.forward[1] < 0.0f ? -1.0f : 1.0f}};
    cam.right = normalized(cross(cam.forward, world_up));
    cam.up = cross(cam.right, cam.forward);
    cam.focal = 0.5f * float(rs.height) / std::tan(0.5f * fov);
    cam.cx = 0.5f * float(rs.width);
    cam.cy = 0.5f * float(rs.height);
    return cam;
}

// Where a sphere of radius r at p lands on the picture: centre (sx, sy), radius rad (px, at least 1)
// and the depth z of its centre along the view axis. visible is false behind or around the eye.
struct Projected { float sx, sy, rad, z; bool visible; };
Projected project(const Camera& cam, const Vec3& p, float r) {
    const Vec3 q = p - cam.eye;
    const float z = dot(q, cam.forward);
    if (!(z > r)) return {0, 0, 0, 0, false};  // also catches NaN
    const float inv = 1.0f / z;
    return {cam.cx + cam.focal * dot(q, cam.right) * inv, cam.cy - cam.focal * dot(q, cam.up) * inv,
            std::max(cam.focal * r * inv, 1.0f), z, true};
}

// Normal of the sphere impostor at pixel (x, y), in camera space (x right, y up, z towards the
// camera); returns false outside the silhouette, where the normal is clamped to the rim.
bool impostor_normal(const Projected& s, int x, int y, float& nx, float& ny, float& nz) {
    nx = (x + 0.5f - s.sx) / s.rad;
    ny = -(y + 0.5f - s.sy) / s.rad;
    const float d2 = nx * nx + ny * ny;
    nz = std::sqrt(std::max(0.0f, 1.0f - d2));
    if (d2 <= 1.0f) return true;
    const float inv = 1.0f / std::sqrt(d2);
    nx *= inv;
    ny *= inv;
    return false;
}

// Calls f(pixel index, nx, ny, nz, depth) for each pixel centre inside the sphere's silhouette; depth
// is the distance along the view axis of the sphere's front surface there (centre depth - r nz).
template <class F>
void sphere_pixels(const Camera& cam, int w, int h, const Vec3& p, float r, F&& f) {
    const Projected s = project(cam, p, r);
    if (!s.visible) return;
    const PixelRect b = covered(s.sx, s.sy, s.rad, w, h);
    for (int y = b.y0; y <= b.y1; ++y)
        for (int x = b.x0; x <= b.x1; ++x) {
            float nx, ny, nz;
            if (impostor_normal(s, x, y, nx, ny, nz)) f(std::size_t(y) * w + x, nx, ny, nz, s.z - r * nz);
        }
}

void render_3d(std::vector<Vec3>& img, const RenderSettings& rs, const ParticleSet<3>& fluid,
               const BoundarySet<3>* boundary, const Aabb<3>& bounds_in, float r) {
    const int w = rs.width, h = rs.height;
    const std::size_t npix = std::size_t(w) * h;
    const Aabb<3> bounds = usable_bounds(bounds_in, fluid, r);
    const Camera cam = make_camera(rs, bounds);
    // Camera space: light from the upper left, on the camera's side of the scene.
    const Vec3 light = normalized(Vec3{{-0.5f, 0.6f, 0.65f}});
    const Vec3 half = normalized(light + Vec3{{0.0f, 0.0f, 1.0f}});
    auto diffuse = [&](float nx, float ny, float nz) { return std::max(0.0f, nx * light[0] + ny * light[1] + nz * light[2]); };

    // Walls. Drawn opaque they would hide the fluid (the camera looks into the tank through its front
    // walls), and dropping "front" particles needs wall normals we do not have (tanks may be boxes,
    // cylinders or hold obstacles). So every pixel keeps two wall layers: the farthest wall surface,
    // drawn opaque behind the fluid (floor, back walls), and the nearest one, drawn as faint glass over
    // whatever lies behind it when it is clearly in front of it. No normals needed, any shape works,
    // and the result does not depend on the drawing order.
    std::vector<float> far_depth, near_depth, far_shade;
    const bool walls = boundary && rs.draw_boundary && !boundary->empty();
    // Solids (obstacles, models, bodies) are opaque: the nearest of their particles' spheres, drawn 1.4
    // times as large so that they close into a surface, shaded by a normal taken from the depth.
    std::vector<float> solid_depth;
    bool any_solid = false;
    if (walls) {
        far_depth.assign(npix, -kInf);
        near_depth.assign(npix, kInf);
        far_shade.assign(npix, 0.0f);
        solid_depth.assign(npix, kInf);
        // Full radius, so that neighbouring wall particles touch and walls read as surfaces; evenly lit
        // (the spheres' own normals draw a sheet of bumps), so that the walls do not compete with the fluid.
        for (std::size_t k = 0; k < boundary->size(); ++k) {
            const Vec3& p = boundary->position[k];
            const std::size_t obj = k < boundary->object.size() ? boundary->object[k] : 0;
            if (obj < rs.solid_objects.size() && rs.solid_objects[obj]) {
                any_solid = true;
                sphere_pixels(cam, w, h, p, 1.4f * r, [&](std::size_t i, float, float, float, float depth) {
                    solid_depth[i] = std::min(solid_depth[i], depth);
                });
                continue;
            }
            sphere_pixels(cam, w, h, p, r, [&](std::size_t i, float, float, float, float depth) {
                if (depth > far_depth[i]) {
                    far_depth[i] = depth;
                    far_shade[i] = 1.0f;
                }
                near_depth[i] = std::min(near_depth[i], depth);
            });
        }
    }
    // The solids' normals from their depth (camera space: x right, y up, z towards the camera), over a
    // few pixels, which smooths the particles' bumps into the surface they sample.
    auto solid_normal = [&](int x, int y, float& nx, float& ny, float& nz) {
        const int s = std::max(2, int(std::lround(2.0f * cam.focal * r / std::max(solid_depth[std::size_t(y) * w + x], 1e-6f))));
        auto at = [&](int xx, int yy) {
            xx = std::clamp(xx, 0, w - 1);
            yy = std::clamp(yy, 0, h - 1);
            const float d = solid_depth[std::size_t(yy) * w + xx];
            return d < kInf ? d : solid_depth[std::size_t(y) * w + x];
        };
        const float d = solid_depth[std::size_t(y) * w + x];
        const float px = d / cam.focal;  // metres per pixel at this depth
        const float dzdx = (at(x + s, y) - at(x - s, y)) / (2.0f * s * px);
        const float dzdy = -(at(x, y + s) - at(x, y - s)) / (2.0f * s * px);
        // Depth grows away from the camera: the surface z = -depth; n ~ (dz/dx, dz/dy, 1).
        const float len = std::sqrt(dzdx * dzdx + dzdy * dzdy + 1.0f);
        nx = dzdx / len;
        ny = dzdy / len;
        nz = 1.0f / len;
    };

    // Fluid: depth test only, keeping which particle won; each visible pixel is shaded once
    // afterwards (deferred), which keeps a million overlapping impostors cheap.
    std::vector<float> depth(npix, kInf);
    std::vector<std::uint32_t> owner(npix, 0);
    for (std::size_t k = 0; k < fluid.size(); ++k)
        sphere_pixels(cam, w, h, fluid.position[k], r, [&](std::size_t i, float, float, float, float d) {
            if (d < depth[i]) {
                depth[i] = d;
                owner[i] = static_cast<std::uint32_t>(k);
            }
        });

    // Depth range of the bounds, for fading distant walls (a cue for how deep the tank is).
    float dmin = kInf, dmax = -kInf;
    for (int c = 0; c < 8; ++c) {
        const Vec3 corner{{(c & 1) ? bounds.hi[0] : bounds.lo[0], (c & 2) ? bounds.hi[1] : bounds.lo[1],
                           (c & 4) ? bounds.hi[2] : bounds.lo[2]}};
        const float d = dot(corner - cam.eye, cam.forward);
        dmin = std::min(dmin, d);
        dmax = std::max(dmax, d);
    }
    const float dspan = std::max(dmax - dmin, 1e-6f);
    const float glass_gap = 8.0f * r;  // a double-layer wall seen at a slant is thinner than this
    const Vec3 glass{{0.80f, 0.84f, 0.90f}};

    for (std::size_t i = 0; i < npix; ++i) {
        const int x = int(i % std::size_t(w)), y = int(i / std::size_t(w));
        Vec3 col = kBackground;
        float behind = kInf;  // depth of what the glass would cover
        if (walls && far_depth[i] > -kInf) {
            const float fade = 1.0f - 0.45f * std::clamp((far_depth[i] - dmin) / dspan, 0.0f, 1.0f);
            col = kWallGrey * (0.8f * far_shade[i] * fade);
            behind = far_depth[i];
        }
        const bool solid_first = any_solid && solid_depth[i] < kInf && solid_depth[i] <= depth[i] &&
                                 (far_depth[i] == -kInf || solid_depth[i] <= far_depth[i]);
        if (solid_first) {
            float nx, ny, nz;
            solid_normal(x, y, nx, ny, nz);
            col = kSolid * (0.35f + 0.65f * diffuse(nx, ny, nz));
            behind = solid_depth[i];
        } else if (depth[i] < kInf && (!walls || depth[i] <= far_depth[i] || far_depth[i] == -kInf)) {
            // Blinn-Phong: ambient 0.25, diffuse 0.75, white specular 0.3 with exponent 32.
            // The same projection as the depth pass: the pixel is inside this silhouette (up to
            // rounding if the compiler fused operations differently, hence the clamp to the rim).
            float nx, ny, nz;
            impostor_normal(project(cam, fluid.position[owner[i]], r), x, y, nx, ny, nz);
            float spec = std::max(0.0f, nx * half[0] + ny * half[1] + nz * half[2]);
            for (int k = 0; k < 5; ++k) spec *= spec;  // ^32
            const Vec3 base = speed_color(norm(fluid.velocity[owner[i]]), rs.speed_scale);
            col = base * (0.25f + 0.75f * diffuse(nx, ny, nz)) + Vec3::filled(0.3f * spec);
            behind = depth[i];
        }
        // Flat tint: shading the glass by its particles' normals draws moire stripes over the fluid.
        if (walls && near_depth[i] < behind - glass_gap) col = lerp(col, glass, 0.14f);
        img[i] = col;
    }
}

}  // namespace

Vec3 speed_color(float speed, float scale) {
    // Sigmoid centred on `scale`: speed = scale is the middle (yellow) of the map.
    float s = 1.0f / (1.0f + std::exp(-4.0f * (speed / std::max(scale, 1e-6f) - 1.0f)));
    if (!std::isfinite(s)) s = 1.0f;  // a NaN speed belongs to a diverged particle: show it as fast
    const Vec3 blue{{0.10f, 0.30f, 0.90f}}, yellow{{1.0f, 0.85f, 0.10f}}, red{{0.90f, 0.10f, 0.10f}};
    if (s < 0.5f) return lerp(blue, yellow, 2.0f * s);
    return lerp(yellow, red, 2.0f * s - 1.0f);
}

void write_png(const std::filesystem::path& path, int width, int height, const std::vector<Vec3>& rgb) {
    if (width <= 0 || height <= 0 || rgb.size() != std::size_t(width) * std::size_t(height))
        throw std::invalid_argument(fmt::format("write_png: {} pixels for a {}x{} picture", rgb.size(), width, height));
    io::write_atomic(path, encode_png(width, height, rgb));
}

template <int D>
void render_png(const std::filesystem::path& path, const ParticleSet<D>& fluid, const BoundarySet<D>* boundary,
                const Aabb<D>& bounds, float particle_radius, const RenderSettings& rs) {
    if (rs.width <= 0 || rs.height <= 0 || rs.width > 16384 || rs.height > 16384)
        throw InputError(fmt::format("{}: picture size {}x{} is out of range (1 to 16384 pixels a side)", path.string(),
                                     rs.width, rs.height));
    std::vector<Vec3> img(std::size_t(rs.width) * rs.height, kBackground);
    float r = rs.particle_radius > 0.0f ? rs.particle_radius : particle_radius;
    if (!(r > 0.0f) || !std::isfinite(r)) r = 0.0f;  // draws every particle at the 1-pixel minimum
    if constexpr (D == 2)
        render_2d(img, rs, fluid, boundary, bounds, r);
    else
        render_3d(img, rs, fluid, boundary, bounds, r);
    io::write_atomic(path, encode_png(rs.width, rs.height, img));
}

template void render_png<2>(const std::filesystem::path&, const ParticleSet<2>&, const BoundarySet<2>*, const Aabb<2>&,
                            float, const RenderSettings&);
template void render_png<3>(const std::filesystem::path&, const ParticleSet<3>&, const BoundarySet<3>*, const Aabb<3>&,
                            float, const RenderSettings&);

}  // namespace eddy
