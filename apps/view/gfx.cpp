// eddy-view: OpenGL 3.3 core drawing. One instanced draw for all particles; positions uploaded once
// per frame (buffer orphaning, so the driver never waits for the previous frame's draw).
#include "gfx.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

#include "eddy/io.hpp"

namespace eddy::view {

namespace {

// The colour map's stops (coloring.hpp: kColormapStops of them), linear in between; the "classic" map is
// eddy::speed_color's (src/render/render.cpp), so pictures and the window agree.
constexpr const char* kColormapGlsl = R"(
uniform vec3 u_cmap[17];
vec3 cmap(float s) {
    float x = clamp(s, 0.0, 1.0) * 16.0;
    int i = min(int(x), 15);
    return mix(u_cmap[i], u_cmap[i + 1], x - float(i));
}
)";

constexpr const char* kParticleVs = R"(
layout(location = 0) in vec2 corner;
layout(location = 1) in vec4 inst;   // x, y, z, scalar
uniform mat4 u_view, u_proj;
uniform float u_radius;
uniform vec2 u_range;
uniform int u_flat;
uniform vec3 u_flat_rgb;
out vec2 v_uv;
out vec3 v_color;
out vec3 v_center;
void main() {
    vec4 c = u_view * vec4(inst.xyz, 1.0);
    float s;
    s = (inst.w - u_range.x) / max(u_range.y - u_range.x, 1e-20);
    if (isnan(inst.w)) s = 1.0;
    v_color = u_flat == 1 ? u_flat_rgb : cmap(s);
    v_uv = corner;
    v_center = c.xyz;
    gl_Position = u_proj * (c + vec4(corner * u_radius, 0.0, 0.0));
}
)";

constexpr const char* kParticleFs = R"(
in vec2 v_uv;
in vec3 v_color;
in vec3 v_center;
uniform mat4 u_proj;
uniform float u_radius;
uniform int u_sphere;
uniform float u_rim;
out vec4 frag;
void main() {
    float r2 = dot(v_uv, v_uv);
    if (r2 > 1.0) discard;
    if (u_sphere == 0) {   // 2D: a flat disk with a darker rim
        frag = vec4(v_color * (1.0 - u_rim * smoothstep(0.6, 1.0, r2)), 1.0);
        return;
    }
    // Sphere impostor: the normal of the sphere under this fragment, its true depth, Blinn-Phong.
    vec3 n = vec3(v_uv, sqrt(1.0 - r2));
    vec3 p = v_center + n * u_radius;
    vec4 clip = u_proj * vec4(p, 1.0);
    gl_FragDepth = 0.5 * clip.z / clip.w + 0.5;
    vec3 L = normalize(vec3(0.4, 0.8, 0.5));
    vec3 V = normalize(-p);
    vec3 H = normalize(L + V);
    float diff = max(dot(n, L), 0.0);
    float spec = pow(max(dot(n, H), 0.0), 48.0);
    frag = vec4(v_color * (0.3 + 0.7 * diff) + vec3(0.3) * spec, 1.0);
}
)";

constexpr const char* kLineVs = R"(
layout(location = 0) in vec3 pos;
uniform mat4 u_view, u_proj;
void main() { gl_Position = u_proj * u_view * vec4(pos, 1.0); }
)";
constexpr const char* kLineFs = R"(
uniform vec3 u_rgb;
out vec4 frag;
void main() { frag = vec4(u_rgb, 1.0); }
)";

constexpr const char* kMeshVs = R"(
layout(location = 0) in vec3 pos;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec4 color;
uniform mat4 u_view, u_proj;
uniform mat4 u_model;   // rigid: rotation and translation
out vec3 v_pos;
out vec3 v_normal;
out vec4 v_color;
void main() {
    vec4 p = u_model * vec4(pos, 1.0);
    v_pos = p.xyz;
    v_normal = mat3(u_model) * normal;
    v_color = color;
    gl_Position = u_proj * u_view * p;
}
)";
constexpr const char* kMeshFs = R"(
in vec3 v_pos;
in vec3 v_normal;
in vec4 v_color;
uniform vec3 u_eye;
uniform float u_shininess;
uniform int u_matte;    // models: lit on both sides, a fill light from the camera, a faint sheen
out vec4 frag;
void main() {
    if (v_color.a < 0.01) discard;
    vec3 n = normalize(v_normal);
    vec3 L = normalize(vec3(0.3, 1.0, 0.4));
    vec3 V = normalize(u_eye - v_pos);
    if (u_matte == 1) {
        if (dot(n, V) < 0.0) n = -n;  // the inside of a cup, an open mesh's back
        float key = max(dot(n, L), 0.0), fill = max(dot(n, V), 0.0);
        float spec = pow(max(dot(n, normalize(L + V)), 0.0), 24.0);
        frag = vec4(v_color.rgb * (0.32 + 0.55 * key + 0.25 * fill) + vec3(0.08) * spec, v_color.a);
        return;
    }
    vec3 H = normalize(L + V);
    float diff = max(dot(n, L), 0.0);
    float spec = u_shininess > 0.0 ? pow(max(dot(n, H), 0.0), u_shininess) : 0.0;
    frag = vec4(v_color.rgb * (0.35 + 0.65 * diff) + vec3(0.5) * spec, v_color.a);
}
)";

GLuint compile(GLenum type, const std::string& src) {
    const GLuint s = glCreateShader(type);
    const char* p = src.c_str();
    glShaderSource(s, 1, &p, nullptr);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetShaderInfoLog(s, sizeof log, nullptr, log);
        throw std::runtime_error(std::string("shader compilation failed: ") + log);
    }
    return s;
}

GLuint program(const char* vs, const char* fs) {
    const std::string head = std::string("#version 330 core\n") + kColormapGlsl;
    const GLuint v = compile(GL_VERTEX_SHADER, head + vs), f = compile(GL_FRAGMENT_SHADER, "#version 330 core\n" + std::string(fs));
    const GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetProgramInfoLog(p, sizeof log, nullptr, log);
        throw std::runtime_error(std::string("shader link failed: ") + log);
    }
    return p;
}

void set_matrices(GLuint prog, const Mat4& view, const Mat4& proj, const Mat4& model = Mat4::identity()) {
    glUniformMatrix4fv(glGetUniformLocation(prog, "u_view"), 1, GL_FALSE, view.m.data());
    glUniformMatrix4fv(glGetUniformLocation(prog, "u_proj"), 1, GL_FALSE, proj.m.data());
    const GLint m = glGetUniformLocation(prog, "u_model");
    if (m >= 0) glUniformMatrix4fv(m, 1, GL_FALSE, model.m.data());
}

void make_mesh_buffers(GLuint& vao, GLuint& pos, GLuint& nrm, GLuint& ibo) {
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glGenBuffers(1, &pos);
    glGenBuffers(1, &nrm);
    glGenBuffers(1, &ibo);
    glBindBuffer(GL_ARRAY_BUFFER, pos);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
    glBindBuffer(GL_ARRAY_BUFFER, nrm);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ibo);
    glBindVertexArray(0);
}

// Grows a buffer to hold `bytes` (orphaning the old storage) and uploads the data.
void upload(GLenum target, GLuint buf, std::size_t& capacity, const void* data, std::size_t bytes) {
    glBindBuffer(target, buf);
    if (bytes > capacity) {
        capacity = std::max(bytes, capacity + capacity / 2);
        glBufferData(target, static_cast<GLsizeiptr>(capacity), nullptr, GL_STREAM_DRAW);
    } else {
        glBufferData(target, static_cast<GLsizeiptr>(capacity), nullptr, GL_STREAM_DRAW);  // orphan
    }
    glBufferSubData(target, 0, static_cast<GLsizeiptr>(bytes), data);
}

}  // namespace

void Renderer::init() {
    m_particle_prog = program(kParticleVs, kParticleFs);
    m_line_prog = program(kLineVs, kLineFs);
    m_mesh_prog = program(kMeshVs, kMeshFs);

    const float quad[8] = {-1, -1, 1, -1, -1, 1, 1, 1};
    glGenVertexArrays(1, &m_particle_vao);
    glBindVertexArray(m_particle_vao);
    glGenBuffers(1, &m_quad_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, m_quad_vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof quad, quad, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
    glGenBuffers(1, &m_inst_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, m_inst_vbo);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
    glVertexAttribDivisor(1, 1);

    glGenVertexArrays(1, &m_line_vao);
    glBindVertexArray(m_line_vao);
    glGenBuffers(1, &m_line_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, m_line_vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, nullptr);

    glGenVertexArrays(1, &m_mesh_vao);
    glBindVertexArray(m_mesh_vao);
    glGenBuffers(1, &m_mesh_vbo);
    glGenBuffers(1, &m_mesh_ibo);
    glBindBuffer(GL_ARRAY_BUFFER, m_mesh_vbo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m_mesh_ibo);
    const GLsizei stride = 10 * sizeof(float);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, stride, nullptr);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride, reinterpret_cast<void*>(3 * sizeof(float)));
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 4, GL_FLOAT, GL_FALSE, stride, reinterpret_cast<void*>(6 * sizeof(float)));

    make_mesh_buffers(m_surf.vao, m_surf.pos, m_surf.nrm, m_surf.ibo);
}

// Uploads a mesh into g's buffers when its version is not the one they hold (g's VAO is bound).
void Renderer::upload_mesh(GpuMesh& g, const SurfaceMesh& mesh, std::uint64_t version) {
    if (version == g.version) return;
    glBindBuffer(GL_ARRAY_BUFFER, g.pos);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(mesh.xyz.size() * 4), mesh.xyz.data(), GL_STATIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, g.nrm);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(mesh.normals.size() * 4), mesh.normals.data(), GL_STATIC_DRAW);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(mesh.triangles.size() * 4), mesh.triangles.data(),
                 GL_STATIC_DRAW);
    g.indices = mesh.triangles.size();
    g.version = version;
}

void Renderer::draw_mesh(const SurfaceMesh& mesh, std::uint64_t version, const Mat4& view, const Mat4& proj, V3 eye) {
    if (mesh.empty() || mesh.normals.size() != mesh.xyz.size()) return;
    glBindVertexArray(m_surf.vao);
    upload_mesh(m_surf, mesh, version);
    glUseProgram(m_mesh_prog);
    set_matrices(m_mesh_prog, view, proj);
    glUniform3f(glGetUniformLocation(m_mesh_prog, "u_eye"), eye.x, eye.y, eye.z);
    glUniform1f(glGetUniformLocation(m_mesh_prog, "u_shininess"), 64.0f);
    glUniform1i(glGetUniformLocation(m_mesh_prog, "u_matte"), 0);
    glVertexAttrib4f(2, m_mesh_rgba[0], m_mesh_rgba[1], m_mesh_rgba[2], m_mesh_rgba[3]);  // attribute 2 (colour): a constant
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_FALSE);  // translucent: what lies behind (particles) stays visible
    glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(m_surf.indices), GL_UNSIGNED_INT, nullptr);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    glBindVertexArray(0);
}

void Renderer::draw_model(const SurfaceMesh& mesh, std::uint64_t id, std::size_t slot, const Mat4& model, const float rgba[4],
                          bool closed, const Mat4& view, const Mat4& proj, V3 eye) {
    if (mesh.empty() || mesh.normals.size() != mesh.xyz.size()) return;
    while (m_models.size() <= slot) {
        GpuMesh g;
        make_mesh_buffers(g.vao, g.pos, g.nrm, g.ibo);
        m_models.push_back(g);
    }
    GpuMesh& g = m_models[slot];
    glBindVertexArray(g.vao);
    upload_mesh(g, mesh, id);
    glUseProgram(m_mesh_prog);
    set_matrices(m_mesh_prog, view, proj, model);
    glUniform3f(glGetUniformLocation(m_mesh_prog, "u_eye"), eye.x, eye.y, eye.z);
    glUniform1i(glGetUniformLocation(m_mesh_prog, "u_matte"), 1);
    glVertexAttrib4f(2, rgba[0], rgba[1], rgba[2], rgba[3]);
    const bool opaque = rgba[3] >= 1.0f;
    if (!opaque) {  // over what lies behind; closed: the near side only (cleaned models face outwards)
        glEnable(GL_BLEND);
        glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
        glDepthMask(GL_FALSE);
        if (closed) {
            glEnable(GL_CULL_FACE);
            glCullFace(GL_BACK);
        }
    }
    glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(g.indices), GL_UNSIGNED_INT, nullptr);
    if (!opaque) {
        glDisable(GL_CULL_FACE);
        glDepthMask(GL_TRUE);
        glDisable(GL_BLEND);
    }
    glUniform1i(glGetUniformLocation(m_mesh_prog, "u_matte"), 0);
    glBindVertexArray(0);
}

void Renderer::destroy() {
    const GLuint bufs[] = {m_quad_vbo, m_inst_vbo, m_line_vbo, m_mesh_vbo, m_mesh_ibo, m_surf.pos, m_surf.nrm, m_surf.ibo};
    glDeleteBuffers(8, bufs);
    const GLuint vaos[] = {m_particle_vao, m_line_vao, m_mesh_vao, m_surf.vao};
    glDeleteVertexArrays(4, vaos);
    for (const auto& g : m_models) {
        const GLuint b[] = {g.pos, g.nrm, g.ibo};
        glDeleteBuffers(3, b);
        glDeleteVertexArrays(1, &g.vao);
    }
    m_models.clear();
    glDeleteProgram(m_particle_prog);
    glDeleteProgram(m_line_prog);
    glDeleteProgram(m_mesh_prog);
}

void Renderer::draw_particles(std::span<const float> xyzs, float radius, bool spheres, const Mat4& view,
                              const Mat4& proj, const ColorRange& cr, const float* flat_rgb) {
    const std::size_t n = xyzs.size() / 4;
    if (n == 0) return;
    glUseProgram(m_particle_prog);
    set_matrices(m_particle_prog, view, proj);
    glUniform1f(glGetUniformLocation(m_particle_prog, "u_radius"), radius);
    glUniform1i(glGetUniformLocation(m_particle_prog, "u_sphere"), spheres ? 1 : 0);
    static_assert(kColormapStops == 17, "the shader's u_cmap[17]");
    glUniform3fv(glGetUniformLocation(m_particle_prog, "u_cmap"), kColormapStops, colormap_stops(cr.map).data());
    glUniform1f(glGetUniformLocation(m_particle_prog, "u_rim"), cr.rim);
    glUniform2f(glGetUniformLocation(m_particle_prog, "u_range"), cr.lo, cr.hi);
    glUniform1i(glGetUniformLocation(m_particle_prog, "u_flat"), flat_rgb ? 1 : 0);
    if (flat_rgb) glUniform3fv(glGetUniformLocation(m_particle_prog, "u_flat_rgb"), 1, flat_rgb);
    glBindVertexArray(m_particle_vao);
    upload(GL_ARRAY_BUFFER, m_inst_vbo, m_inst_capacity, xyzs.data(), n * 4 * sizeof(float));
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, static_cast<GLsizei>(n));
    glBindVertexArray(0);
}

// Flat-coloured vertices (x, y, z each) drawn as `mode` (GL_LINES or GL_TRIANGLES), `per` vertices a primitive.
void Renderer::draw_flat(std::span<const float> xyz, const float rgb[3], const Mat4& view, const Mat4& proj,
                         unsigned mode, std::size_t per) {
    if (xyz.size() < 3 * per) return;
    glUseProgram(m_line_prog);
    set_matrices(m_line_prog, view, proj);
    glUniform3fv(glGetUniformLocation(m_line_prog, "u_rgb"), 1, rgb);
    glBindVertexArray(m_line_vao);
    upload(GL_ARRAY_BUFFER, m_line_vbo, m_line_capacity, xyz.data(), xyz.size() * sizeof(float));
    glDrawArrays(static_cast<GLenum>(mode), 0, static_cast<GLsizei>(xyz.size() / 3));
    glBindVertexArray(0);
}

void Renderer::draw_lines(std::span<const float> xyz, const float rgb[3], const Mat4& view, const Mat4& proj) {
    draw_flat(xyz, rgb, view, proj, GL_LINES, 2);
}

void Renderer::draw_triangles(std::span<const float> xyz, const float rgb[3], const Mat4& view, const Mat4& proj) {
    draw_flat(xyz, rgb, view, proj, GL_TRIANGLES, 3);
}

void Renderer::draw_heightfield(const HeightfieldView& hf, const Mat4& view, const Mat4& proj, V3 eye) {
    if (!hf.valid()) return;
    const int nx = hf.nx, ny = hf.ny;
    const float dx = static_cast<float>(hf.dx);
    const std::size_t cells = std::size_t(nx) * std::size_t(ny);
    glBindVertexArray(m_mesh_vao);
    if (nx != m_mesh_nx || ny != m_mesh_ny) {  // triangles between cell centres: built once per grid size
        std::vector<std::uint32_t> idx;
        idx.reserve(std::size_t(nx - 1) * (ny - 1) * 6);
        for (int j = 0; j + 1 < ny; ++j)
            for (int i = 0; i + 1 < nx; ++i) {
                const std::uint32_t a = i + nx * j, b = a + 1, c = a + nx, d = c + 1;
                idx.insert(idx.end(), {a, c, b, b, c, d});
            }
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m_mesh_ibo);
        glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(idx.size() * 4), idx.data(), GL_STATIC_DRAW);
        m_mesh_indices = idx.size();
        m_mesh_nx = nx;
        m_mesh_ny = ny;
    }
    auto fill = [&](bool water) {
        m_mesh_scratch.resize(cells * 10);
        auto height = [&](int i, int j) {
            i = std::clamp(i, 0, nx - 1);
            j = std::clamp(j, 0, ny - 1);
            const std::size_t c = std::size_t(i) + std::size_t(nx) * j;
            return hf.terrain[c] + (water ? hf.depth[c] : 0.0f);
        };
        float hmin = hf.terrain[0], hmax = hf.terrain[0], dmax = 0.0f;
        for (float t : hf.terrain) hmin = std::min(hmin, t), hmax = std::max(hmax, t);
        for (float d : hf.depth) dmax = std::max(dmax, d);
        const float deep_scale = dmax > 0.0f ? 1.0f / dmax : 0.0f;  // depth colour relative to the deepest water
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = std::size_t(i) + std::size_t(nx) * j;
                float* v = &m_mesh_scratch[c * 10];
                v[0] = (i + 0.5f) * dx;
                v[1] = height(i, j);
                v[2] = (j + 0.5f) * dx;
                const V3 n = normalized(V3{height(i - 1, j) - height(i + 1, j), 2 * dx, height(i, j - 1) - height(i, j + 1)});
                v[3] = n.x, v[4] = n.y, v[5] = n.z;
                if (!water) {  // muted earth tones, lighter with height (desaturated: never mistaken for water)
                    const float s = hmax > hmin ? (hf.terrain[c] - hmin) / (hmax - hmin) : 0.5f;
                    v[6] = 0.42f + 0.25f * s, v[7] = 0.40f + 0.22f * s, v[8] = 0.34f + 0.20f * s, v[9] = 1.0f;
                } else {
                    const float h = hf.depth[c];
                    const float deep = std::clamp(h * deep_scale, 0.0f, 1.0f);
                    float r = 0.30f - 0.25f * deep, g = 0.70f - 0.40f * deep, b = 0.95f - 0.25f * deep;
                    const float ink = hf.ink.empty() ? 0.0f : std::clamp(hf.ink[c], 0.0f, 1.0f);
                    r += (0.85f - r) * ink, g += (0.10f - g) * ink, b += (0.45f - b) * ink;  // magenta ink
                    v[6] = r, v[7] = g, v[8] = b;
                    v[9] = h > 1e-4f ? 0.55f + 0.35f * deep + 0.1f * ink : 0.0f;
                }
            }
        upload(GL_ARRAY_BUFFER, m_mesh_vbo, m_mesh_capacity, m_mesh_scratch.data(), m_mesh_scratch.size() * sizeof(float));
    };
    glUseProgram(m_mesh_prog);
    set_matrices(m_mesh_prog, view, proj);
    glUniform3f(glGetUniformLocation(m_mesh_prog, "u_eye"), eye.x, eye.y, eye.z);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m_mesh_ibo);
    fill(false);
    glUniform1f(glGetUniformLocation(m_mesh_prog, "u_shininess"), 0.0f);
    glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(m_mesh_indices), GL_UNSIGNED_INT, nullptr);
    fill(true);
    glUniform1f(glGetUniformLocation(m_mesh_prog, "u_shininess"), 64.0f);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_FALSE);
    glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(m_mesh_indices), GL_UNSIGNED_INT, nullptr);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    glBindVertexArray(0);
}

void save_framebuffer_png(const std::string& path, int w, int h) {
    std::vector<unsigned char> px(std::size_t(w) * h * 3);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, px.data());
    std::vector<unsigned char> flipped(px.size());
    for (int y = 0; y < h; ++y)
        std::copy_n(&px[std::size_t(h - 1 - y) * w * 3], std::size_t(w) * 3, &flipped[std::size_t(y) * w * 3]);
    std::string bytes;
    const int ok = stbi_write_png_to_func(
        [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size); },
        &bytes, w, h, 3, flipped.data(), w * 3);
    if (!ok) throw std::runtime_error(path + ": PNG encoding failed");
    io::write_atomic(path, bytes);
}

}  // namespace eddy::view
