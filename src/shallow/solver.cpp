// Heightfield shallow water (seed 001; Chentanez & Mueller 2010): the grid built from its scene, the time
// step, and step() calling the passes in order. Each pass is a file of src/shallow/passes/ (shallow_water.hpp
// has the equations); every pass is a gather over rows: a task writes only the cells (or faces) of its own
// rows, reading the previous pass's arrays.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO_WARNINGS
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "core/pass_timer.hpp"
#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/shallow_water.hpp"
#include "shallow/bodies.hpp"
#include "shallow/expression.hpp"
#include "shallow/heightmap.hpp"

namespace eddy {

bool detail::png_header(const std::filesystem::path& file, int& width, int& height, int& channels, int& bits) {
    // The first 64 kB hold the header (IHDR comes first); opened without blocking, like every file
    // from users (eddy/input_file.hpp), never by stb_image itself.
    io::InputFile in(file);
    std::string head(std::size_t(1) << 16, '\0');
    std::size_t have = 0;
    for (std::size_t got; have < head.size() && (got = in.read(head.data() + have, head.size() - have)) > 0;) have += got;
    const auto* bytes = reinterpret_cast<const stbi_uc*>(head.data());
    if (!stbi_info_from_memory(bytes, int(have), &width, &height, &channels)) return false;
    bits = stbi_is_16_bit_from_memory(bytes, int(have)) ? 16 : 8;
    return true;
}

namespace {

// A grayscale PNG (8 or 16 bit, any channel count: the first is used) sampled bilinearly at the cell
// centres; image column 0 is x = 0, image row 0 is the far edge y = Ly (north up, as a map).
// Only the cells of block b (nx x ny cells from (b.i0, b.j0)) are sampled.
std::vector<double> load_heightmap(const ShallowWaterScene& s, const std::string& where, const GridBlock& b, int nx, int ny) {
    int w = 0, h = 0, channels = 0;
    // Read by eddy (non-blocking open, a regular file, at most 2 GB: stb_image counts in int), decoded
    // from memory.
    const std::string png = io::read_regular_file(s.heightmap, std::numeric_limits<int>::max(), "the heightmap");
    stbi_us* data = stbi_load_16_from_memory(reinterpret_cast<const stbi_uc*>(png.data()), int(png.size()), &w, &h,
                                             &channels, 1);
    if (!data)
        throw InputError(fmt::format("{}: terrain.heightmap = \"{}\": cannot read it as a PNG ({})", where,
                                     s.heightmap.string(), stbi_failure_reason() ? stbi_failure_reason() : "unknown"));
    std::vector<double> out(std::size_t(nx) * ny);
    for (int j = b.j0; j < b.j0 + ny; ++j) {
        for (int i = b.i0; i < b.i0 + nx; ++i) {
            const double fx = std::clamp((i + 0.5) / s.nx * w - 0.5, 0.0, double(w - 1));
            const double fy = std::clamp((1.0 - (j + 0.5) / s.ny) * h - 0.5, 0.0, double(h - 1));
            const int x0 = int(fx), y0 = int(fy), x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
            const double tx = fx - x0, ty = fy - y0;
            auto px = [&](int x, int y) { return data[std::size_t(y) * w + x] / 65535.0; };
            const double v = (1 - ty) * ((1 - tx) * px(x0, y0) + tx * px(x1, y0)) + ty * ((1 - tx) * px(x0, y1) + tx * px(x1, y1));
            out[std::size_t(j - b.j0) * nx + std::size_t(i - b.i0)] = s.heightmap_offset + s.heightmap_scale * v;
        }
    }
    stbi_image_free(data);
    return out;
}

}  // namespace

template <class Real>
double ShallowWaterGrid<Real>::volume() const {
    double v = 0.0;
    for (Real h : depth) v += double(h);
    for (Real b : displaced) v -= double(b);
    return v * double(dx) * double(dx);
}

template <class Real>
double ShallowWaterGrid<Real>::displaced_volume() const {
    double v = 0.0;
    for (Real b : displaced) v += double(b);
    return v * double(dx) * double(dx);
}

template <class Real>
ShallowWaterSolver<Real>::ShallowWaterSolver(const ShallowWaterScene& scene, const std::string& where)
    : ShallowWaterSolver(scene, where, whole_grid(scene.nx, scene.ny), scene.nx, scene.ny) {}

template <class Real>
ShallowWaterSolver<Real>::ShallowWaterSolver(const ShallowWaterScene& scene, const std::string& where, const GridBlock& b,
                                             int nx, int ny)
    : m_scene(scene), m_block(b), m_partial(nx != scene.nx || ny != scene.ny) {
    validate(scene.settings, shallow_water_fields(), where + ": settings");
    if (scene.nx < 1 || scene.ny < 1) throw InputError(fmt::format("{}: grid.cells: at least 1 x 1 cells", where));
    if (!(scene.dx > 0.0)) throw InputError(fmt::format("{}: grid.dx = {:g}: must be > 0", where, scene.dx));
    // The block's borders that lie inside the whole grid are walls here: only halo cells see them.
    m_scene.open[0] = scene.open[0] && b.i0 == 0;
    m_scene.open[1] = scene.open[1] && b.i0 + nx == scene.nx;
    m_scene.open[2] = scene.open[2] && b.j0 == 0;
    m_scene.open[3] = scene.open[3] && b.j0 + ny == scene.ny;
    auto& g = m_g;
    g.nx = nx;
    g.ny = ny;
    g.dx = Real(scene.dx);
    const std::size_t n = g.cells();
    g.terrain.assign(n, 0);
    g.depth.assign(n, 0);
    g.ink.assign(n, 0);
    g.solid.assign(n, 0);
    g.u.assign(std::size_t(g.nx + 1) * g.ny, 0);
    g.w.assign(std::size_t(g.nx) * (g.ny + 1), 0);
    m_a.assign(n, 0);
    m_b.assign(n, 0);
    m_c.assign(n, 0);
    m_u2.assign(g.u.size(), 0);
    m_w2.assign(g.w.size(), 0);

    // Expressions at the cells' (faces') positions in the whole grid: gi = i + b.i0, gj = j + b.j0.
    const double dx = scene.dx, lx = scene.nx * dx, ly = scene.ny * dx;
    const int i0 = b.i0, j0 = b.j0;
    auto eval = [&](const std::string& text, const char* key, auto&& store) {
        detail::Expression e(text, lx, ly, dx, where, key);
        for (int j = 0; j < g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) store(i, j, e((i + i0 + 0.5) * dx, (j + j0 + 0.5) * dx));
    };
    if (!scene.heightmap.empty()) {
        const auto t = load_heightmap(scene, where, b, nx, ny);
        for (std::size_t c = 0; c < n; ++c) g.terrain[c] = Real(t[c]);
    } else {
        eval(scene.terrain, "terrain", [&](int i, int j, double v) { g.terrain[g.cell(i, j)] = Real(v); });
    }
    if (!scene.obstacles.empty())
        eval(scene.obstacles, "obstacles", [&](int i, int j, double v) { g.solid[g.cell(i, j)] = v != 0.0; });
    if (!scene.surface.empty()) {
        // Depth from the surface; where eta - H rounds, keep H + h == eta exactly when it can be (lake at rest).
        eval(scene.surface, "water.surface", [&](int i, int j, double v) {
            const std::size_t c = g.cell(i, j);
            const Real eta = Real(v);
            Real h = std::max(Real(0), eta - g.terrain[c]);
            if (h > 0 && g.terrain[c] + h != eta) {
                const Real up = std::nextafter(h, std::numeric_limits<Real>::max());
                const Real down = std::nextafter(h, Real(0));
                if (g.terrain[c] + up == eta) h = up;
                else if (g.terrain[c] + down == eta) h = down;
            }
            g.depth[c] = h;
        });
    } else {
        eval(scene.depth, "water.depth", [&](int i, int j, double v) { g.depth[g.cell(i, j)] = Real(std::max(0.0, v)); });
    }
    eval(scene.ink_initial, "water.ink", [&](int i, int j, double v) { g.ink[g.cell(i, j)] = Real(v); });
    {
        detail::Expression eu(scene.u, lx, ly, dx, where, "water.u"), ev(scene.v, lx, ly, dx, where, "water.v");
        for (int j = 0; j < g.ny; ++j)
            for (int i = 0; i <= g.nx; ++i) g.u[g.uface(i, j)] = Real(eu((i + i0) * dx, (j + j0 + 0.5) * dx));
        for (int j = 0; j <= g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) g.w[g.wface(i, j)] = Real(ev((i + i0 + 0.5) * dx, (j + j0) * dx));
    }
    for (std::size_t c = 0; c < n; ++c)
        if (g.solid[c]) {
            g.depth[c] = 0;
            m_has_solid = true;
        }
    // Floating bodies, on the whole grid only (the distributed layer refuses them: run_loop.hpp).
    if (!scene.bodies.empty() && !m_partial) {
        for (const auto& spec : scene.bodies) m_bodies.push_back(make_shallow_body(spec));
        shallow_detail::initial_displacement(g, m_bodies, double(scene.settings.displacement_stiffness));
        m_body_ax.assign(n, 0);
        m_body_ay.assign(n, 0);
        m_body_b.assign(n, 0);
        m_body_mark.assign(n, 0);
        list_displaced_cells();
    }
    // Boundary conditions on the initial state, and the wave speed for the first step (of the owned
    // cells: a block's caller reduces it over the blocks, set_global_maxima).
    ShallowWaterStats st;
    ExecContext serial(1);
    integrate_velocity(Real(0), serial, st);
}

template <class Real>
ShallowWaterSolver<Real>::ShallowWaterSolver(const ShallowWaterSolver& whole, const GridBlock& b, int nx, int ny,
                                             bool keep_totals)
    : m_scene(whole.m_scene), m_block(b), m_partial(true) {
    const auto& W = whole.m_g;
    auto& g = m_g;
    g.nx = nx;
    g.ny = ny;
    g.dx = W.dx;
    // The block's borders that lie inside the whole grid are walls here: only halo cells see them.
    m_scene.open[0] = m_scene.open[0] && b.i0 == 0;
    m_scene.open[1] = m_scene.open[1] && b.i0 + nx == b.global_nx;
    m_scene.open[2] = m_scene.open[2] && b.j0 == 0;
    m_scene.open[3] = m_scene.open[3] && b.j0 + ny == b.global_ny;
    auto cut = [&](const std::vector<Real>& from, int from_stride, int cols, int rows, std::vector<Real>& to) {
        to.resize(std::size_t(cols) * rows);
        for (int j = 0; j < rows; ++j)
            std::copy_n(&from[std::size_t(j + b.j0) * from_stride + b.i0], cols, &to[std::size_t(j) * cols]);
    };
    cut(W.terrain, W.nx, nx, ny, g.terrain);
    cut(W.depth, W.nx, nx, ny, g.depth);
    cut(W.ink, W.nx, nx, ny, g.ink);
    cut(W.u, W.nx + 1, nx + 1, ny, g.u);
    cut(W.w, W.nx, nx, ny + 1, g.w);
    g.solid.resize(g.cells());
    for (int j = 0; j < ny; ++j)
        std::copy_n(&W.solid[std::size_t(j + b.j0) * W.nx + b.i0], nx, &g.solid[std::size_t(j) * nx]);
    m_has_solid = std::find(g.solid.begin(), g.solid.end(), std::uint8_t(1)) != g.solid.end();
    m_a.assign(g.cells(), 0);
    m_b.assign(g.cells(), 0);
    m_c.assign(g.cells(), 0);
    m_u2.assign(g.u.size(), 0);
    m_w2.assign(g.w.size(), 0);
    ShallowWaterClock c = whole.clock();
    if (!keep_totals) c.inflow = c.outflow = 0.0;
    set_clock(c);
}

template <class Real>
ShallowWaterClock ShallowWaterSolver<Real>::clock() const {
    ShallowWaterClock c;
    c.time = m_time;
    c.inflow = m_inflow;
    c.outflow = m_outflow;
    c.max_wave_speed = m_max_wave_speed;
    c.max_depth = m_max_depth;
    c.added_depth = m_added_depth;
    c.steps = m_steps;
    c.drop_counter = m_drop_counter;
    return c;
}

template <class Real>
void ShallowWaterSolver<Real>::set_clock(const ShallowWaterClock& c) {
    m_time = c.time;
    m_inflow = c.inflow;
    m_outflow = c.outflow;
    m_max_wave_speed = c.max_wave_speed;
    m_max_depth = c.max_depth;
    m_added_depth = c.added_depth;
    m_steps = c.steps;
    m_drop_counter = c.drop_counter;
}

template <class Real>
void ShallowWaterSolver<Real>::set_global_maxima(double max_speed, double max_depth) {
    // As integrate_velocity computes them from its own faces and cells.
    m_max_depth = max_depth;
    m_max_wave_speed = std::sqrt(m_scene.gravity * max_depth) + max_speed;
}

template <class Real>
double ShallowWaterSolver<Real>::suggest_dt() const {
    const auto& s = m_scene.settings;
    if (s.time_step > 0.0f) return s.time_step;
    const double c = m_max_wave_speed;
    double dt = c > 0.0 ? s.cfl * m_scene.dx / c : s.max_time_step;
    for (const ShallowBody& b : m_bodies)
        dt = std::min(dt, shallow_detail::body_time_step(b, double(s.water_density), m_scene.gravity));
    return std::min<double>(dt, s.max_time_step);
}

template <class Real>
void ShallowWaterSolver<Real>::set_settings(const ShallowWaterSettings& s, double gravity, const std::string& where) {
    validate(s, shallow_water_fields(), where);
    if (s.precision != m_scene.settings.precision)
        throw InputError(fmt::format("{}: key 'precision' = \"{}\": the grid's number type cannot change while it runs; "
                                     "allowed: \"{}\" (restart the scene to change it)",
                                     where, s.precision, m_scene.settings.precision));
    if (!(gravity > 0.0) || !std::isfinite(gravity))
        throw InputError(fmt::format("{}: gravity = {:g}: must be > 0", where, gravity));
    m_scene.settings = s;
    m_scene.gravity = gravity;
}

template <class Real>
ShallowWaterStats ShallowWaterSolver<Real>::step(double dt_in, const ExecContext& exec) {
    detail::PassTimer timer;  // ShallowWaterStats::passes: each pass's wall-clock time
    ShallowWaterStats st;
    st.dt = dt_in;
    const Real dt = Real(dt_in);
    const auto& s = m_scene.settings;
    m_halo_overrun = 0;
    shallow_detail::BodyCoupling coupling;
    shallow_detail::BodyCells cells;
    if (!m_bodies.empty()) {
        // The bodies move first, under the water's loads at the start of the step (body_motion.cpp).
        coupling.gravity = m_scene.gravity;
        coupling.density = double(s.water_density);
        coupling.dry = double(s.dry_depth) * m_scene.dx;
        // The displacement's stiffness k raises the wave speed under a body by sqrt(1 + k): lowered for
        // a step whose Courant number C would make that exceed 0.5 (body_displacement.cpp).
        const double courant = dt_in * m_max_wave_speed / m_scene.dx;
        const double k_max = courant > 0.0 ? 0.25 / (courant * courant) - 1.0 : double(s.displacement_stiffness);
        coupling.stiffness = std::clamp(k_max, 0.0, double(s.displacement_stiffness));
        cells.drag = std::move(m_body_drag_cells);
        cells.displaced = std::move(m_body_displaced_cells);
        cells.mark = std::move(m_body_mark);
        shallow_detail::body_loads_and_motion(m_bodies, m_g, coupling, dt_in, m_body_ax, m_body_ay, cells);
        shallow_detail::keep_bodies_on_grid(m_bodies, m_g);
        timer.lap("body_motion");
    }
    apply_sources(dt_in, st);
    timer.lap("sources");
    if (s.advection != "none") {
        // Each pass traces back advection_step * dt: the seed's (0.5, 2 passes) moves as far as (1, 1).
        for (int k = 0; k < s.advection_iterations; ++k) {
            if (s.advection == "upwind") advect_upwind(dt, exec);
            else if (s.advection == "conservative") advect_conservative(dt, exec);
            else advect_semi_lagrangian(dt, exec);
        }
        timer.lap("advect");
    }
    if (s.vorticity > 0.0f) {
        vorticity_confinement(dt, exec);
        timer.lap("vorticity");
    }
    close_walls(exec);
    // The depth limiter acts only on face depths above beta dx / (g dt): below that, the one-pass update.
    const double limit = double(s.beta) * m_scene.dx / (m_scene.gravity * dt_in);
    if (m_max_depth + m_added_depth < limit) integrate_height_fast(dt, exec, st);
    else integrate_height(dt, exec, st);
    timer.lap("height");
    if (s.edge_alpha > 0.0f) {
        reduce_overshooting(exec);
        timer.lap("overshooting");
    }
    // The bodies at their new poses displace the water the height pass has moved (body_displacement.cpp).
    if (!m_bodies.empty()) {
        shallow_detail::displace_water(m_g, m_bodies, coupling, dt, m_body_ax, m_body_ay, m_body_b, cells);
        m_body_drag_cells = std::move(cells.drag);
        m_body_displaced_cells = std::move(cells.displaced);
        m_body_mark = std::move(cells.mark);
        timer.lap("body_displacement");
    }
    integrate_velocity(dt, exec, st);
    st.halo_overrun = m_halo_overrun;
    // A body whose state is no longer finite is a divergence like a depth that is not (the run stops).
    for (const ShallowBody& b : m_bodies)
        for (const auto* a : {&b.x, &b.v, &b.omega})
            for (double v : *a) st.non_finite = st.non_finite || !std::isfinite(v);
    m_time += dt_in;
    ++m_steps;
    return timer.finish("velocity", st);
}

template <class Real>
void ShallowWaterSolver<Real>::save_state(StateWriter& w) const {
    w.put<std::int32_t>(m_g.nx);
    w.put<std::int32_t>(m_g.ny);
    w.put_vector(m_g.terrain);
    w.put_vector(m_g.depth);
    w.put_vector(m_g.ink);
    w.put_vector(m_g.u);
    w.put_vector(m_g.w);
    w.put_vector(m_g.solid);
    for (double v : {m_time, m_inflow, m_outflow, m_max_wave_speed, m_max_depth, m_added_depth}) w.put(v);
    w.put(m_steps);
    w.put(m_drop_counter);
    // Bodies (none: nothing, the layout of checkpoints written before bodies existed).
    if (!m_bodies.empty()) {
        w.put_vector(m_g.displaced);
        shallow_detail::save_bodies(w, m_bodies);
    }
}

template <class Real>
void ShallowWaterSolver<Real>::load_state(StateReader& r) {
    if (r.get<std::int32_t>() != m_g.nx || r.get<std::int32_t>() != m_g.ny) r.fail("its grid is not its scene's");
    r.get_vector(m_g.terrain, m_g.terrain.size());
    r.get_vector(m_g.depth, m_g.depth.size());
    r.get_vector(m_g.ink, m_g.ink.size());
    r.get_vector(m_g.u, m_g.u.size());
    r.get_vector(m_g.w, m_g.w.size());
    r.get_vector(m_g.solid, m_g.solid.size());
    for (double* v : {&m_time, &m_inflow, &m_outflow, &m_max_wave_speed, &m_max_depth, &m_added_depth}) *v = r.get<double>();
    m_steps = r.get<std::uint64_t>();
    m_drop_counter = r.get<std::uint64_t>();
    if (!m_bodies.empty()) {
        r.get_vector(m_g.displaced, m_g.displaced.size());
        shallow_detail::load_bodies(r, m_bodies);
        list_displaced_cells();
    }
}

template <class Real>
void ShallowWaterSolver<Real>::list_displaced_cells() {
    m_body_displaced_cells.clear();
    for (std::size_t c = 0; c < m_g.displaced.size(); ++c)
        if (m_g.displaced[c] != 0) m_body_displaced_cells.push_back(std::uint32_t(c));
}

template struct ShallowWaterGrid<float>;
template struct ShallowWaterGrid<double>;
template class ShallowWaterSolver<float>;
template class ShallowWaterSolver<double>;

}  // namespace eddy
