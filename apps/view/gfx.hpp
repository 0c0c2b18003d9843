// eddy-view: OpenGL 3.3 core drawing (through libepoxy): particles as instanced disks (2D) or sphere
// impostors with Blinn-Phong lighting (3D), lines, heightfield meshes, and a small camera. Nothing here
// touches the simulation: it draws what a Snapshot holds.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <epoxy/gl.h>

#include "heightfield.hpp"

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

    V3 eye() const;
    Mat4 view() const;
    Mat4 proj(float aspect) const;
    /// 2D: the visible world rectangle for this aspect (x0, y0, x1, y1 grown to fit).
    std::array<float, 4> rect(float aspect) const;
    /// The ray through pixel (px, py) of a w x h viewport (origin top left): origin and unit direction.
    void ray(double px, double py, int w, int h, V3& origin, V3& dir) const;
};

/// Colour of the map (blue -> yellow -> red) at s in [0, 1], as the shaders compute it.
std::array<float, 3> colormap(float s);

/// How particles are coloured: by the sigmoid of speed / scale (seed 003), or linearly over [lo, hi].
struct ColorRange {
    bool sigmoid = true;
    float lo = 0.0f, hi = 1.0f;  ///< sigmoid: lo is the scale (m/s) at the middle of the map
};

class Renderer {
public:
    /// Compiles the shaders; throws std::runtime_error with the GL log on failure.
    void init();
    void destroy();

    /// One instanced draw of n particles: xyzs holds x, y, z, scalar per particle (uploaded here, once).
    /// flat: a single colour instead of the map (walls).
    void draw_particles(std::span<const float> xyzs, float radius, bool spheres, const Mat4& view, const Mat4& proj,
                        const ColorRange& cr, const float* flat_rgb = nullptr);
    /// Line segments: pairs of points (x, y, z each).
    void draw_lines(std::span<const float> xyz, const float rgb[3], const Mat4& view, const Mat4& proj);
    /// Terrain (shaded) and water (coloured by depth, tinted by ink, translucent) of a heightfield.
    void draw_heightfield(const HeightfieldView& hf, const Mat4& view, const Mat4& proj, V3 eye);

private:
    GLuint m_particle_prog = 0, m_line_prog = 0, m_mesh_prog = 0;
    GLuint m_quad_vbo = 0, m_inst_vbo = 0, m_particle_vao = 0;
    GLuint m_line_vbo = 0, m_line_vao = 0;
    GLuint m_mesh_vbo = 0, m_mesh_ibo = 0, m_mesh_vao = 0;
    std::size_t m_inst_capacity = 0, m_line_capacity = 0, m_mesh_capacity = 0;
    int m_mesh_nx = 0, m_mesh_ny = 0;
    std::size_t m_mesh_indices = 0;
    std::vector<float> m_mesh_scratch;
};

/// Reads the current framebuffer (w x h, RGB) and writes it as a PNG atomically. Throws on failure.
void save_framebuffer_png(const std::string& path, int w, int h);

}  // namespace eddy::view
