// eddy-view: matrices, camera and mouse ray.
#include "camera.hpp"

#include <algorithm>
#include <cmath>

namespace eddy::view {

Mat4 Mat4::identity() {
    Mat4 r;
    r.m = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    return r;
}

Mat4 operator*(const Mat4& a, const Mat4& b) {
    Mat4 r;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            float s = 0;
            for (int k = 0; k < 4; ++k) s += a(i, k) * b(k, j);
            r(i, j) = s;
        }
    return r;
}

Mat4 perspective(float fov_y, float aspect, float n, float f) {
    const float t = 1.0f / std::tan(0.5f * fov_y);
    Mat4 r;
    r(0, 0) = t / aspect;
    r(1, 1) = t;
    r(2, 2) = (f + n) / (n - f);
    r(2, 3) = 2 * f * n / (n - f);
    r(3, 2) = -1;
    return r;
}

Mat4 orthographic(float l, float rt, float b, float t, float n, float f) {
    Mat4 r = Mat4::identity();
    r(0, 0) = 2 / (rt - l);
    r(1, 1) = 2 / (t - b);
    r(2, 2) = -2 / (f - n);
    r(0, 3) = -(rt + l) / (rt - l);
    r(1, 3) = -(t + b) / (t - b);
    r(2, 3) = -(f + n) / (f - n);
    return r;
}

V3 normalized(V3 a) {
    const float l = std::sqrt(dot(a, a));
    return l > 0 ? a * (1.0f / l) : V3{0, 0, 1};
}

Mat4 look_at(V3 eye, V3 target, V3 up) {
    const V3 f = normalized(target - eye), s = normalized(cross(f, up)), u = cross(s, f);
    Mat4 r = Mat4::identity();
    r(0, 0) = s.x, r(0, 1) = s.y, r(0, 2) = s.z;
    r(1, 0) = u.x, r(1, 1) = u.y, r(1, 2) = u.z;
    r(2, 0) = -f.x, r(2, 1) = -f.y, r(2, 2) = -f.z;
    r(0, 3) = -dot(s, eye);
    r(1, 3) = -dot(u, eye);
    r(2, 3) = dot(f, eye);
    return r;
}

V3 Camera::eye() const {
    const float cp = std::cos(pitch);
    return target + V3{cp * std::sin(yaw), std::sin(pitch), cp * std::cos(yaw)} * distance;
}

Mat4 Camera::view() const {
    if (!is_3d) return Mat4::identity();
    return look_at(eye(), target, V3{0, 1, 0});
}

std::array<float, 4> Camera::rect(float aspect) const {
    const float f = std::clamp(free_frac, 0.05f, 1.0f), fa = aspect * f;  // the free part's aspect
    float w = x1 - x0, h = y1 - y0;
    const float cx = 0.5f * (x0 + x1), cy = 0.5f * (y0 + y1);
    if (w / h < fa) w = h * fa;
    else h = w / fa;
    return {cx + 0.5f * w - w / f, cy - 0.5f * h, cx + 0.5f * w, cy + 0.5f * h};
}

Mat4 Camera::proj(float aspect) const {
    if (!is_3d) {
        const auto r = rect(aspect);
        return orthographic(r[0], r[2], r[1], r[3], -1.0f, 1.0f);
    }
    Mat4 p = perspective(fov_deg * 3.14159265f / 180.0f, aspect, 0.01f * distance, 100.0f * distance);
    p(0, 2) -= shift_x;  // x_clip += shift_x w_clip (w_clip = -z_view)
    return p;
}

void Camera::ray(double px, double py, int w, int h, V3& origin, V3& dir) const {
    const float aspect = float(w) / float(std::max(h, 1));
    const float u = float(2.0 * (px + 0.5) / w - 1.0), v = float(1.0 - 2.0 * (py + 0.5) / h);
    if (!is_3d) {
        const auto r = rect(aspect);
        origin = {r[0] + 0.5f * (u + 1) * (r[2] - r[0]), r[1] + 0.5f * (v + 1) * (r[3] - r[1]), 1.0f};
        dir = {0, 0, -1};
        return;
    }
    const V3 e = eye(), f = normalized(target - e), s = normalized(cross(f, V3{0, 1, 0})), up = cross(s, f);
    const float t = std::tan(0.5f * fov_deg * 3.14159265f / 180.0f);
    origin = e;
    dir = normalized(f + s * ((u - shift_x) * t * aspect) + up * (v * t));
}

void frame_box(Camera& cam, V3 lo, V3 hi, float aspect, float margin) {
    cam.is_3d = true;
    const V3 c = (lo + hi) * 0.5f;
    const float cp = std::cos(cam.pitch);
    const V3 back{cp * std::sin(cam.yaw), std::sin(cam.pitch), cp * std::cos(cam.yaw)};  // target -> eye
    const V3 f = back * -1.0f, s = normalized(cross(f, V3{0, 1, 0})), up = cross(s, f);
    const float ty = std::tan(0.5f * cam.fov_deg * 3.14159265f / 180.0f) * (1.0f - margin), tx = ty * std::max(aspect, 1e-3f);
    V3 corners[8];
    for (int k = 0; k < 8; ++k) corners[k] = {(k & 1) ? hi.x : lo.x, (k & 2) ? hi.y : lo.y, (k & 4) ? hi.z : lo.z};
    // Corners in the camera's frame about the box's centre: across (x), up (y), toward the eye (z).
    float X[8], Y[8], Z[8], zmax = -1e30f, R = 0.0f;
    for (int k = 0; k < 8; ++k) {
        const V3 q = corners[k] - c;
        X[k] = dot(q, s), Y[k] = dot(q, up), Z[k] = dot(q, back);
        zmax = std::max(zmax, Z[k]);
        R = std::max(R, std::sqrt(dot(q, q)));
    }
    R = std::max(R, 1e-6f);
    // At distance d, the target's offset along one axis that centres the corners' projections (their
    // tangents (A - o) / (d - Z), decreasing in o): bisection.
    auto centre = [&](const float* A, float d) {
        float a = -2.0f * R, b = 2.0f * R;
        for (int it = 0; it < 60; ++it) {
            const float o = 0.5f * (a + b);
            float lo = 1e30f, hi = -1e30f;
            for (int k = 0; k < 8; ++k) {
                const float t = (A[k] - o) / (d - Z[k]);
                lo = std::min(lo, t), hi = std::max(hi, t);
            }
            (lo + hi > 0.0f ? a : b) = o;
        }
        return 0.5f * (a + b);
    };
    // How much of the view the centred box fills at distance d (1: the tighter side at the margin).
    float ox = 0.0f, oy = 0.0f;
    auto fill = [&](float d) {
        ox = centre(X, d), oy = centre(Y, d);
        float f = 0.0f;
        for (int k = 0; k < 8; ++k)
            f = std::max({f, std::abs(X[k] - ox) / ((d - Z[k]) * tx), std::abs(Y[k] - oy) / ((d - Z[k]) * ty)});
        return f;
    };
    float dn = zmax + 1e-3f * R, df = zmax + 1e4f * R;  // fill(dn) > 1 > fill(df)
    for (int it = 0; it < 60; ++it) {
        const float d = 0.5f * (dn + df);
        (fill(d) > 1.0f ? dn : df) = d;
    }
    const float d = df;
    fill(d);
    cam.target = c + s * ox + up * oy;
    cam.distance = std::max(d, 1e-4f);
}

std::array<float, 4> projected_box(const Mat4& view, const Mat4& proj, V3 lo, V3 hi) {
    const Mat4 m = proj * view;
    std::array<float, 4> r{1e30f, 1e30f, -1e30f, -1e30f};
    for (int k = 0; k < 8; ++k) {
        const float p[4] = {(k & 1) ? hi.x : lo.x, (k & 2) ? hi.y : lo.y, (k & 4) ? hi.z : lo.z, 1.0f};
        float q[4] = {0, 0, 0, 0};
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) q[i] += m(i, j) * p[j];
        const float x = q[0] / q[3], y = q[1] / q[3];
        r[0] = std::min(r[0], x), r[1] = std::min(r[1], y), r[2] = std::max(r[2], x), r[3] = std::max(r[3], y);
    }
    return r;
}

void fit_bounds(Camera& cam, const float lo[3], const float hi[3]) {
    cam.is_3d = true;
    cam.target = {0.5f * (lo[0] + hi[0]), 0.5f * (lo[1] + hi[1]), 0.5f * (lo[2] + hi[2])};
    const V3 ext{hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    cam.distance = std::max(1e-3f, 0.55f * std::sqrt(dot(ext, ext)) / std::sin(0.5f * cam.fov_deg * 3.14159265f / 180.0f));
}

void orbit(Camera& cam, double dx, double dy) {
    cam.yaw -= float(dx) * 0.008f;
    cam.pitch = std::clamp(cam.pitch + float(dy) * 0.008f, -1.55f, 1.55f);
}

void pan(Camera& cam, double dx, double dy, int ww, int wh) {
    if (cam.is_3d) {
        const V3 f = normalized(cam.target - cam.eye()), s = normalized(cross(f, V3{0, 1, 0})), u = cross(s, f);
        const float k = cam.distance * 0.0015f;
        cam.target = cam.target - s * (float(dx) * k) + u * (float(dy) * k);
    } else {
        const auto r = cam.rect(float(ww) / float(std::max(wh, 1)));
        const float kx = (r[2] - r[0]) / float(std::max(ww, 1)), ky = (r[3] - r[1]) / float(std::max(wh, 1));
        cam.x0 -= float(dx) * kx, cam.x1 -= float(dx) * kx, cam.y0 += float(dy) * ky, cam.y1 += float(dy) * ky;
    }
}

void zoom(Camera& cam, double clicks) {
    const float f = std::pow(0.9f, float(clicks));
    if (cam.is_3d) {
        cam.distance *= f;
    } else {
        const float cx = 0.5f * (cam.x0 + cam.x1), cy = 0.5f * (cam.y0 + cam.y1);
        cam.x0 = cx + (cam.x0 - cx) * f, cam.x1 = cx + (cam.x1 - cx) * f;
        cam.y0 = cy + (cam.y0 - cy) * f, cam.y1 = cy + (cam.y1 - cy) * f;
    }
}

bool intersect_plane(V3 o, V3 d, V3 p0, V3 n, V3& hit) {
    const float den = dot(d, n);
    if (std::abs(den) < 1e-6f) return false;
    const float t = dot(p0 - o, n) / den;
    if (!(t > 0)) return false;
    hit = o + d * t;
    return true;
}

}  // namespace eddy::view
