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

#include "camera.hpp"
#include "coloring.hpp"
#include "heightfield.hpp"
#include "mesh.hpp"

namespace eddy::view {

/// How particles are coloured: the map (coloring.hpp) linearly over [lo, hi] of the scalar.
struct ColorRange {
    Colormap map = Colormap::classic;
    float lo = 0.0f, hi = 1.0f;  ///< the scalar at the map's left and right ends
    float rim = 0.3f;            ///< 2D disks: darkening of the rim (0: flat; tiny disks read better flat)
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
    /// Flat-coloured triangles: x, y, z per corner (2D outlines of models).
    void draw_triangles(std::span<const float> xyz, const float rgb[3], const Mat4& view, const Mat4& proj);
    /// Terrain (shaded) and water (coloured by depth, tinted by ink, translucent) of a heightfield.
    void draw_heightfield(const HeightfieldView& hf, const Mat4& view, const Mat4& proj, V3 eye);

    /// A surface mesh, lit, in translucent water blue. Uploaded only when `version` changes.
    void draw_mesh(const SurfaceMesh& mesh, std::uint64_t version, const Mat4& view, const Mat4& proj, V3 eye);
    /// Colour and opacity of draw_mesh: opaque blue alone; over particles a pale, clear water tint.
    void set_mesh_color(float r, float g, float b, float a) { m_mesh_rgba[0] = r, m_mesh_rgba[1] = g, m_mesh_rgba[2] = b, m_mesh_rgba[3] = a; }

    /// A model of the scene (a wall mesh): its rest triangles moved by `model` (rigid), lit on both
    /// sides, matte. Opaque when rgba[3] >= 1 (writes depth), else translucent, and then, when `closed`
    /// (an outward mesh without open edges), only its near side is drawn (back faces culled), so that
    /// what lies inside shows through one layer. `slot` (0, 1, ...: the model's place in the snapshot)
    /// keeps its own GPU buffers, uploaded only when `id` changes.
    void draw_model(const SurfaceMesh& mesh, std::uint64_t id, std::size_t slot, const Mat4& model, const float rgba[4],
                    bool closed, const Mat4& view, const Mat4& proj, V3 eye);

private:
    void draw_flat(std::span<const float> xyz, const float rgb[3], const Mat4& view, const Mat4& proj, unsigned mode,
                   std::size_t per);
    struct GpuMesh {  // a triangle mesh's buffers: positions, normals, indices
        GLuint vao = 0, pos = 0, nrm = 0, ibo = 0;
        std::uint64_t version = ~0ull;
        std::size_t indices = 0;
    };
    void upload_mesh(GpuMesh& g, const SurfaceMesh& mesh, std::uint64_t version);
    GpuMesh m_surf;                 // draw_mesh
    std::vector<GpuMesh> m_models;  // draw_model, per slot
    float m_mesh_rgba[4] = {0.20f, 0.45f, 0.90f, 0.75f};
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
