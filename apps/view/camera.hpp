// eddy-view: small matrices and the camera (orthographic in 2D, orbit in 3D), and the mouse ray.
// No OpenGL here: the simulation-thread tests link it without a window.
#pragma once
#include <array>

namespace eddy::view {

/// 4x4 matrix, column-major (as OpenGL wants it).
struct Mat4 {
    std::array<float, 16> m{};
    static Mat4 identity();
    float& operator()(int row, int col) { return m[col * 4 + row]; }
    float operator()(int row, int col) const { return m[col * 4 + row]; }
};
Mat4 operator*(const Mat4& a, const Mat4& b);
Mat4 perspective(float fov_y_rad, float aspect, float near, float far);
Mat4 orthographic(float left, float right, float bottom, float top, float near, float far);

struct V3 {
    float x = 0, y = 0, z = 0;
};
inline V3 operator+(V3 a, V3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline V3 operator*(V3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline float dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline V3 cross(V3 a, V3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
V3 normalized(V3 a);
Mat4 look_at(V3 eye, V3 target, V3 up);

/// The view: orthographic over a rectangle in 2D, an orbit camera (yaw, pitch, distance about a
/// target) in 3D.
struct Camera {
    bool is_3d = false;
    // 2D: the world rectangle shown (the aspect ratio is kept; the rectangle is fitted inside).
    float x0 = 0, y0 = 0, x1 = 1, y1 = 1;
    // 3D orbit
    V3 target;
    float yaw = 0.6f, pitch = 0.45f, distance = 3.0f, fov_deg = 40.0f;
    /// 3D: where the target appears across the viewport, in normalised device x (-1 left, 1 right): a
    /// lens shift, so that a scene framed for the part of the window right of the panel is centred there.
    float shift_x = 0.0f;
    /// 2D: the share of the window's width the scene is fitted in, at the right (1: all of it; less when
    /// the panel takes the left part): rect() fits x0..y1 there and extends the view left over the panel.
    float free_frac = 1.0f;

    V3 eye() const;
    Mat4 view() const;
    Mat4 proj(float aspect) const;
    /// 2D: the visible world rectangle for this aspect (x0, y0, x1, y1 grown to fit the window's free
    /// part, then extended left over the rest: see free_frac).
    std::array<float, 4> rect(float aspect) const;
    /// The ray through pixel (px, py) of a w x h viewport (origin top left): origin and unit direction.
    void ray(double px, double py, int w, int h, V3& origin, V3& dir) const;
};

/// 3D: keeps the camera's yaw, pitch and field of view and sets its target and distance so that the
/// box [lo, hi] fills a view of aspect `aspect` (width / height, of the part of the window the scene
/// is framed in) with `margin` (a fraction of the half view) left free on the tighter side, centred.
void frame_box(Camera& cam, V3 lo, V3 hi, float aspect, float margin);
/// The box's corners in normalised device coordinates (x0, y0, x1, y1) through view and proj.
std::array<float, 4> projected_box(const Mat4& view, const Mat4& proj, V3 lo, V3 hi);

/// 3D: the camera looks at the centre of the box [lo, hi] from far enough for the box's diagonal to fill
/// the view (a mesh shown alone).
void fit_bounds(Camera& cam, const float lo[3], const float hi[3]);

/// The mouse's camera moves, by the cursor's motion (dx, dy: px) in a ww x wh window. orbit: turns the
/// 3D view about the target; pan: moves the target across the view (3D) or the rectangle (2D, with
/// the cursor); zoom: `clicks` of the wheel, 0.9 each, the distance (3D) or the rectangle about its
/// centre (2D).
void orbit(Camera& cam, double dx, double dy);
void pan(Camera& cam, double dx, double dy, int ww, int wh);
void zoom(Camera& cam, double clicks);

/// The point where the ray (origin o, direction d) meets the plane through p0 with normal n, in front
/// of the origin; false when the ray is parallel to the plane or the plane is behind.
bool intersect_plane(V3 o, V3 d, V3 p0, V3 n, V3& hit);

}  // namespace eddy::view
