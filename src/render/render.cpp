// Software pictures: anti-aliased disks (2D) and shaded sphere impostors with depth buffers (3D),
// written as PNG through stb_image_write.
//
// Bodies (eddy/bodies.hpp: the boundary objects whose motion their state drives) are drawn in their own
// colours, the viewer's palette: in 2D filled (their particles are layers under the surface, the inside
// empty), in 3D opaque shaded surfaces among the fluid. No solid hides the fluid: in 3D an obstacle or a
// model (RenderSettings::solid_objects) in front of fluid or a body is a veil over it, so that a tank built
// of solid boxes, a cup or a dam plate shows the water behind its walls; elsewhere it is opaque.
//
// Serial on purpose: pixels are written in particle order, so a parallel version would need row
// bands to stay deterministic, and a 1280x720 picture of a million particles already takes well
// under a second on one core (the 3D pass only writes depth and an index per pixel and shades each
// pixel once at the end).
#include "eddy/render.hpp"

#include <algorithm>
#include <array>
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
// A solid's opacity where fluid or a body lies behind it (3D): enough to show the wall, little enough
// that the water behind it keeps its colours.
constexpr float kSolidVeil = 0.4f;

// Per boundary object, the number of its body, -1 for a wall: bodies are the objects whose motion is
// driven by their state (eddy/bodies.hpp), numbered in object order as RigidBodies lists them.
template <int D>
std::vector<int> body_numbers(const BoundarySet<D>& b) {
    std::vector<int> out(b.motions.size(), -1);
    int n = 0;
    for (std::size_t o = 0; o < b.motions.size(); ++o)
        if (b.motions[o].driven) out[o] = n++;
    return out;
}

// The body number of boundary particle k (numbers: body_numbers), -1 for a wall's.
template <int D>
int body_of(const BoundarySet<D>& b, const std::vector<int>& numbers, std::size_t k) {
    const std::size_t obj = k < b.object.size() ? b.object[k] : 0;
    return obj < numbers.size() ? numbers[obj] : -1;
}

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

// A pixel grid over a body's shell in 2D: per pixel, whether it is open, the shell's (its centre within
// the drawn radius of a particle) or outside the body. (x0, y0): the picture pixel of cell (0, 0).
struct ShellMask {
    enum : std::uint8_t { kOpen = 0, kShell = 1, kOutside = 2 };
    int x0 = 0, y0 = 0, w = 0, h = 0;
    std::vector<std::uint8_t> cell;
};

// The mask of the particles pts (picture pixels, finite) drawn at radius rad, over their box and one pixel
// more, so that the border is open all round. Empty (w = 0) when the box is not within a picture's size of
// the picture or is far larger than it (a body flung away: its disks alone are drawn).
ShellMask shell_mask(const std::vector<Vec2>& pts, float rad, int w, int h) {
    ShellMask m;
    Vec2 lo = Vec2::filled(kInf), hi = Vec2::filled(-kInf);
    for (const Vec2& p : pts)
        for (int a = 0; a < 2; ++a) {
            lo[a] = std::min(lo[a], p[a]);
            hi[a] = std::max(hi[a], p[a]);
        }
    if (!(lo[0] - rad > -float(w) && hi[0] + rad < 2.0f * float(w) && lo[1] - rad > -float(h) &&
          hi[1] + rad < 2.0f * float(h)))
        return m;
    const int x0 = int(std::floor(lo[0] - rad)) - 1, y0 = int(std::floor(lo[1] - rad)) - 1;
    const int gw = int(std::floor(hi[0] + rad)) + 2 - x0, gh = int(std::floor(hi[1] + rad)) + 2 - y0;
    if (std::size_t(gw) * std::size_t(gh) > 4 * std::size_t(w) * std::size_t(h)) return m;
    m.x0 = x0;
    m.y0 = y0;
    m.w = gw;
    m.h = gh;
    m.cell.assign(std::size_t(gw) * std::size_t(gh), ShellMask::kOpen);
    for (const Vec2& p : pts) {
        const int xa = int(std::floor(p[0] - rad)) - x0, xb = int(std::floor(p[0] + rad)) - x0;
        const int ya = int(std::floor(p[1] - rad)) - y0, yb = int(std::floor(p[1] + rad)) - y0;
        for (int y = ya; y <= yb; ++y)
            for (int x = xa; x <= xb; ++x) {
                const float dx = float(x0 + x) + 0.5f - p[0], dy = float(y0 + y) + 0.5f - p[1];
                if (dx * dx + dy * dy <= rad * rad)
                    m.cell[std::size_t(y) * std::size_t(gw) + std::size_t(x)] = ShellMask::kShell;
            }
    }
    return m;
}

// Marks the open cells reachable from the mask's corner (always open) as outside: 4-connected steps, so
// that a shell whose pixels touch only at corners still closes. What stays open is inside the body.
void flood_outside(ShellMask& m) {
    const std::size_t gw = std::size_t(m.w);
    std::vector<std::size_t> todo{0};
    m.cell[0] = ShellMask::kOutside;
    auto visit = [&](int x, int y) {
        if (x < 0 || y < 0 || x >= m.w || y >= m.h) return;
        const std::size_t j = std::size_t(y) * gw + std::size_t(x);
        if (m.cell[j] != ShellMask::kOpen) return;
        m.cell[j] = ShellMask::kOutside;
        todo.push_back(j);
    };
    while (!todo.empty()) {
        const std::size_t i = todo.back();
        todo.pop_back();
        const int x = int(i % gw), y = int(i / gw);
        visit(x - 1, y);
        visit(x + 1, y);
        visit(x, y - 1);
        visit(x, y + 1);
    }
}

// A body filled in colour c: its particles' disks of radius rad (pts: picture pixels, finite; a body is
// sampled by layers of particles under its surface) and every pixel they close in, then the disks' soft
// edge. A shell that does not close at this size (particles more than 2 rad apart) shows its disks alone.
void fill_body(std::vector<Vec3>& img, int w, int h, const std::vector<Vec2>& pts, float rad, const Vec3& c) {
    if (pts.empty()) return;
    ShellMask m = shell_mask(pts, rad, w, h);
    if (m.w > 0) {
        flood_outside(m);
        for (int y = 0; y < m.h; ++y)
            for (int x = 0; x < m.w; ++x) {
                const int px = m.x0 + x, py = m.y0 + y;
                if (px >= 0 && py >= 0 && px < w && py < h &&
                    m.cell[std::size_t(y) * std::size_t(m.w) + std::size_t(x)] != ShellMask::kOutside)
                    img[std::size_t(py) * std::size_t(w) + std::size_t(px)] = c;
            }
    }
    for (const Vec2& p : pts) disk(img, w, h, p[0], p[1], rad, c);
}

// The bodies of a 2D picture, each filled in its colour; to_px maps a position to picture pixels.
template <class ToPixels>
void draw_bodies_2d(std::vector<Vec3>& img, int w, int h, const BoundarySet<2>& b, const std::vector<int>& numbers,
                    float rad, ToPixels&& to_px) {
    const auto n = std::count_if(numbers.begin(), numbers.end(), [](int k) { return k >= 0; });
    std::vector<std::vector<Vec2>> shells(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < b.size(); ++k) {
        const int body = body_of(b, numbers, k);
        if (body < 0) continue;
        const Vec2 q = to_px(b.position[k]);
        if (std::isfinite(q[0]) && std::isfinite(q[1])) shells[std::size_t(body)].push_back(q);
    }
    for (std::size_t k = 0; k < shells.size(); ++k) fill_body(img, w, h, shells[k], rad, body_color(k));
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
    // Walls grey behind the fluid; bodies filled in their colours over it.
    const bool walls = boundary && rs.draw_boundary;
    const std::vector<int> bodies = walls ? body_numbers(*boundary) : std::vector<int>{};
    if (walls) {
        const float brad = std::max(0.8f * r * scale, 0.75f);
        for (std::size_t k = 0; k < boundary->size(); ++k) {
            const Vec2& p = boundary->position[k];
            if (body_of(*boundary, bodies, k) < 0) disk(img, w, h, px(p), py(p), brad, kWallGrey);
        }
    }
    for (std::size_t i = 0; i < fluid.size(); ++i) {
        const Vec2& p = fluid.position[i];
        disk(img, w, h, px(p), py(p), rad, speed_color(norm(fluid.velocity[i]), rs.speed_scale));
    }
    // 1.2 r (at least a pixel): a body's particles 2 r apart overlap, so that its shell closes.
    if (walls)
        draw_bodies_2d(img, w, h, *boundary, bodies, std::max(1.2f * r * scale, 1.0f),
                       [&](const Vec2& p) { return Vec2{{px(p), py(p)}}; });
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

// The depth layers of a 3D picture's boundary, per pixel (render_3d draws them).
struct WallLayers {
    std::vector<float> far_depth, near_depth;  // containers: their farthest and nearest wall surface
    std::vector<float> solid_depth;            // obstacles and models: their nearest surface
    std::vector<float> body_depth;             // bodies: their nearest surface ...
    std::vector<int> body_id;                  // ... and whose it is (body number)
    bool any_solid = false, any_body = false;
};

// Rasterises the boundary particles into the layers. Containers at full radius, so that neighbouring
// wall particles touch and walls read as surfaces; solids and bodies at 1.4 r, so that they close into a
// surface their depth shades.
WallLayers wall_layers(const Camera& cam, const RenderSettings& rs, const BoundarySet<3>& b, float r) {
    const int w = rs.width, h = rs.height;
    const std::size_t npix = std::size_t(w) * h;
    const std::vector<int> numbers = body_numbers(b);
    WallLayers layers;
    layers.far_depth.assign(npix, -kInf);
    layers.near_depth.assign(npix, kInf);
    layers.solid_depth.assign(npix, kInf);
    if (std::any_of(numbers.begin(), numbers.end(), [](int k) { return k >= 0; })) {
        layers.body_depth.assign(npix, kInf);
        layers.body_id.assign(npix, 0);
    }
    for (std::size_t k = 0; k < b.size(); ++k) {
        const Vec3& p = b.position[k];
        const std::size_t obj = k < b.object.size() ? b.object[k] : 0;
        const int body = body_of(b, numbers, k);
        if (body >= 0) {
            layers.any_body = true;
            sphere_pixels(cam, w, h, p, 1.4f * r, [&](std::size_t i, float, float, float, float depth) {
                if (depth < layers.body_depth[i]) {
                    layers.body_depth[i] = depth;
                    layers.body_id[i] = body;
                }
            });
        } else if (obj < rs.solid_objects.size() && rs.solid_objects[obj]) {
            layers.any_solid = true;
            sphere_pixels(cam, w, h, p, 1.4f * r, [&](std::size_t i, float, float, float, float depth) {
                layers.solid_depth[i] = std::min(layers.solid_depth[i], depth);
            });
        } else {
            sphere_pixels(cam, w, h, p, r, [&](std::size_t i, float, float, float, float depth) {
                layers.far_depth[i] = std::max(layers.far_depth[i], depth);
                layers.near_depth[i] = std::min(layers.near_depth[i], depth);
            });
        }
    }
    return layers;
}

// The normal at pixel (x, y) of the surface in a depth buffer (camera space: x right, y up, z towards
// the camera), from the depth's slope over a few pixels, which smooths the particles' bumps into the
// surface they sample. The pixel must hold a depth.
void depth_normal(const std::vector<float>& depth, const Camera& cam, float r, int w, int h, int x, int y, float& nx,
                  float& ny, float& nz) {
    const float d = depth[std::size_t(y) * w + x];
    const int s = std::max(2, int(std::lround(2.0f * cam.focal * r / std::max(d, 1e-6f))));
    auto at = [&](int xx, int yy) {
        xx = std::clamp(xx, 0, w - 1);
        yy = std::clamp(yy, 0, h - 1);
        const float e = depth[std::size_t(yy) * w + xx];
        return e < kInf ? e : d;
    };
    const float px = d / cam.focal;  // metres per pixel at this depth
    const float dzdx = (at(x + s, y) - at(x - s, y)) / (2.0f * s * px);
    const float dzdy = -(at(x, y + s) - at(x, y - s)) / (2.0f * s * px);
    // Depth grows away from the camera: the surface z = -depth; n ~ (dz/dx, dz/dy, 1).
    const float len = std::sqrt(dzdx * dzdx + dzdy * dzdy + 1.0f);
    nx = dzdx / len;
    ny = dzdy / len;
    nz = 1.0f / len;
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

    // Containers' walls. Drawn opaque they would hide the fluid (the camera looks into the tank through
    // its front walls), and dropping "front" particles needs wall normals we do not have (tanks may be
    // boxes, cylinders or hold obstacles). So every pixel keeps two wall layers: the farthest wall surface,
    // drawn opaque behind the fluid (floor, back walls), and the nearest one, drawn as faint glass over
    // whatever lies behind it when it is clearly in front of it. No normals needed, any shape works, and
    // the result does not depend on the drawing order. Solids (obstacles, models) keep their nearest
    // surface: opaque where nothing is behind it, a veil over the fluid and the bodies behind it, so that
    // a tank built of solid boxes, a cup or a dam plate does not hide the water. Bodies keep their nearest
    // surface too, opaque in their colours among the fluid.
    const bool walls = boundary && rs.draw_boundary && !boundary->empty();
    WallLayers layers;
    if (walls) layers = wall_layers(cam, rs, *boundary, r);

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

    // Blinn-Phong: ambient 0.25, diffuse 0.75, white specular 0.3 with exponent 32. The same projection
    // as the depth pass: the pixel is inside this silhouette (up to rounding if the compiler fused
    // operations differently, hence the clamp to the rim).
    auto fluid_color = [&](std::size_t i, int x, int y) {
        float nx, ny, nz;
        impostor_normal(project(cam, fluid.position[owner[i]], r), x, y, nx, ny, nz);
        float spec = std::max(0.0f, nx * half[0] + ny * half[1] + nz * half[2]);
        for (int k = 0; k < 5; ++k) spec *= spec;  // ^32
        const Vec3 base = speed_color(norm(fluid.velocity[owner[i]]), rs.speed_scale);
        return base * (0.25f + 0.75f * diffuse(nx, ny, nz)) + Vec3::filled(0.3f * spec);
    };
    auto surface_color = [&](const std::vector<float>& layer, const Vec3& base, int x, int y) {
        float nx, ny, nz;
        depth_normal(layer, cam, r, w, h, x, y, nx, ny, nz);
        return base * (0.35f + 0.65f * diffuse(nx, ny, nz));
    };

    for (std::size_t i = 0; i < npix; ++i) {
        const int x = int(i % std::size_t(w)), y = int(i / std::size_t(w));
        Vec3 col = kBackground;
        float behind = kInf;  // depth of what the glass would cover
        const bool far_wall = walls && layers.far_depth[i] > -kInf;
        if (far_wall) {
            const float fade = 1.0f - 0.45f * std::clamp((layers.far_depth[i] - dmin) / dspan, 0.0f, 1.0f);
            col = kWallGrey * (0.8f * fade);
            behind = layers.far_depth[i];
        }
        // The nearest fluid, body and solid surface in front of the containers' far wall.
        auto inside = [&](float d) { return d < kInf && (!far_wall || d <= layers.far_depth[i]); };
        const float fd = inside(depth[i]) ? depth[i] : kInf;
        const float bd = layers.any_body && inside(layers.body_depth[i]) ? layers.body_depth[i] : kInf;
        const float sd = layers.any_solid && inside(layers.solid_depth[i]) ? layers.solid_depth[i] : kInf;
        const float content = std::min(fd, bd);
        if (bd < fd)
            col = surface_color(layers.body_depth, body_color(std::size_t(layers.body_id[i])), x, y);
        else if (fd < kInf)
            col = fluid_color(i, x, y);
        if (content < kInf) behind = content;
        if (sd < kInf && sd <= content) {
            const Vec3 solid = surface_color(layers.solid_depth, kSolid, x, y);
            col = content < kInf ? lerp(col, solid, kSolidVeil) : solid;
            behind = sd;
        }
        // Flat tint: shading the glass by its particles' normals draws moire stripes over the fluid.
        if (walls && layers.near_depth[i] < behind - glass_gap) col = lerp(col, glass, 0.14f);
        img[i] = col;
    }
}

}  // namespace

Vec3 body_color(std::size_t k) {
    static constexpr std::array<std::array<float, 3>, 6> kPalette{{
        {0.20f, 0.80f, 0.30f},  // green
        {0.62f, 0.38f, 0.92f},  // violet
        {0.10f, 0.72f, 0.72f},  // teal
        {0.65f, 0.90f, 0.20f},  // lime
        {0.95f, 0.55f, 0.78f},  // pink
        {0.60f, 0.42f, 0.26f},  // brown
    }};
    const auto& c = kPalette[k % kPalette.size()];
    return Vec3{{c[0], c[1], c[2]}};
}

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
