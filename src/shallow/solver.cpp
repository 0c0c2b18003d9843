// Heightfield shallow water (seed 001; Chentanez & Mueller 2010): the step. See shallow_water.hpp for
// the equations; each pass below names the one it implements. Every pass is a gather over rows: a task
// writes only the cells (or faces) of its own rows, reading the previous pass's arrays.
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

#include "eddy/error.hpp"
#include "eddy/shallow_water.hpp"
#include "shallow/expression.hpp"
#include "shallow/heightmap.hpp"

namespace eddy {

bool detail::png_header(const std::filesystem::path& file, int& width, int& height, int& channels, int& bits) {
    if (!stbi_info(file.string().c_str(), &width, &height, &channels)) return false;
    bits = stbi_is_16_bit(file.string().c_str()) ? 16 : 8;
    return true;
}

namespace {

// Rows [0, n) in tasks of `rows` rows: f(j0, j1).
template <class F>
void for_rows(const ExecContext& exec, int n, int rows, F&& f) {
    parallel_blocks(exec, std::size_t(n), [&](std::size_t b, std::size_t e) { f(int(b), int(e)); }, std::size_t(rows));
}

std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
double uniform01(std::uint64_t& s) { return double(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

// A grayscale PNG (8 or 16 bit, any channel count: the first is used) sampled bilinearly at the cell
// centres; image column 0 is x = 0, image row 0 is the far edge y = Ly (north up, as a map).
std::vector<double> load_heightmap(const ShallowWaterScene& s, const std::string& where) {
    int w = 0, h = 0, channels = 0;
    stbi_us* data = stbi_load_16(s.heightmap.string().c_str(), &w, &h, &channels, 1);
    if (!data)
        throw InputError(fmt::format("{}: terrain.heightmap = \"{}\": cannot read it as a PNG ({})", where,
                                     s.heightmap.string(), stbi_failure_reason() ? stbi_failure_reason() : "unknown"));
    std::vector<double> out(std::size_t(s.nx) * s.ny);
    for (int j = 0; j < s.ny; ++j) {
        for (int i = 0; i < s.nx; ++i) {
            const double fx = std::clamp((i + 0.5) / s.nx * w - 0.5, 0.0, double(w - 1));
            const double fy = std::clamp((1.0 - (j + 0.5) / s.ny) * h - 0.5, 0.0, double(h - 1));
            const int x0 = int(fx), y0 = int(fy), x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
            const double tx = fx - x0, ty = fy - y0;
            auto px = [&](int x, int y) { return data[std::size_t(y) * w + x] / 65535.0; };
            const double v = (1 - ty) * ((1 - tx) * px(x0, y0) + tx * px(x1, y0)) + ty * ((1 - tx) * px(x0, y1) + tx * px(x1, y1));
            out[std::size_t(j) * s.nx + i] = s.heightmap_offset + s.heightmap_scale * v;
        }
    }
    stbi_image_free(data);
    return out;
}

// Row kernels of the momentum-conservative advection (advect_conservative), as free functions with
// restrict-qualified rows so that the compiler vectorises them.
template <class Real>
void conservative_u_row(int nx, Real k, Real dry, const Real* __restrict uj, const Real* __restrict um,
                        const Real* __restrict up, const Real* __restrict hj, const Real* __restrict qx,
                        const Real* __restrict qb, const Real* __restrict qt, Real* __restrict out) {
    for (int i = 1; i < nx; ++i) {
        const Real uf = uj[i];
        const Real hm = Real(0.5) * (hj[i - 1] + hj[i]);
        const Real ql = Real(0.5) * (qx[i - 1] + qx[i]), qr = Real(0.5) * (qx[i] + qx[i + 1]);
        const Real ul = ql > 0 ? uj[i - 1] : uf, ur = qr > 0 ? uf : uj[i + 1];
        const Real b = Real(0.5) * (qb[i - 1] + qb[i]), t = Real(0.5) * (qt[i - 1] + qt[i]);
        const Real ub = b > 0 ? um[i] : uf, ut = t > 0 ? uf : up[i];
        const Real a = (qr * ur - ql * ul) - uf * (qr - ql) + (t * ut - b * ub) - uf * (t - b);
        out[i] = hm > dry ? uf - k * a / hm : uf;
    }
}

template <class Real>
inline Real conservative_w(Real k, Real dry, Real wf, Real wm, Real wp, Real wl, Real wr, Real lo, Real hi, Real qm, Real qj,
                           Real qp, Real xl0, Real xh0, Real xl1, Real xh1) {
    const Real hm = Real(0.5) * (lo + hi);
    const Real qb = Real(0.5) * (qm + qj), qt = Real(0.5) * (qj + qp);
    const Real wb = qb > 0 ? wm : wf, wt = qt > 0 ? wf : wp;
    const Real ql = Real(0.5) * (xl0 + xh0), qr = Real(0.5) * (xl1 + xh1);
    const Real wl2 = ql > 0 ? wl : wf, wr2 = qr > 0 ? wf : wr;
    const Real a = (qt * wt - qb * wb) - wf * (qt - qb) + (qr * wr2 - ql * wl2) - wf * (qr - ql);
    return hm > dry ? wf - k * a / hm : wf;
}

template <class Real>
void conservative_w_row(int nx, Real k, Real dry, const Real* __restrict wj, const Real* __restrict wm,
                        const Real* __restrict wp, const Real* __restrict lo, const Real* __restrict hi,
                        const Real* __restrict qm, const Real* __restrict qj, const Real* __restrict qp,
                        const Real* __restrict xl, const Real* __restrict xh, Real* __restrict out) {
    // The neighbours along x past the border are the face itself (no difference there).
    auto at = [&](int i, int il, int ir) {
        return conservative_w(k, dry, wj[i], wm[i], wp[i], wj[il], wj[ir], lo[i], hi[i], qm[i], qj[i], qp[i], xl[i], xh[i],
                              xl[i + 1], xh[i + 1]);
    };
    if (nx == 1) {
        out[0] = at(0, 0, 0);
        return;
    }
    out[0] = at(0, 0, 1);
    for (int i = 1; i < nx - 1; ++i)
        out[i] = conservative_w(k, dry, wj[i], wm[i], wp[i], wj[i - 1], wj[i + 1], lo[i], hi[i], qm[i], qj[i], qp[i], xl[i],
                                xh[i], xl[i + 1], xh[i + 1]);
    out[nx - 1] = at(nx - 1, nx - 2, nx - 1);
}

// First-order upwind advection of a cell quantity q by the cell velocities (from the faces).
template <class Real>
inline Real upwind_cell(Real k, Real q, Real left, Real right, Real down, Real upq, Real uc, Real wc) {
    const Real dqx = uc > 0 ? q - left : right - q;
    const Real dqy = wc > 0 ? q - down : upq - q;
    return q - k * (uc * dqx + wc * dqy);
}

template <class Real>
void upwind_ink_row(int nx, Real k, const Real* __restrict q, const Real* __restrict qm, const Real* __restrict qp,
                    const Real* __restrict uj, const Real* __restrict wl, const Real* __restrict wh, Real* __restrict out) {
    auto at = [&](int i, int il, int ir) {
        return upwind_cell(k, q[i], q[il], q[ir], qm[i], qp[i], Real(0.5) * (uj[i] + uj[i + 1]), Real(0.5) * (wl[i] + wh[i]));
    };
    if (nx == 1) {
        out[0] = at(0, 0, 0);
        return;
    }
    out[0] = at(0, 0, 1);
    for (int i = 1; i < nx - 1; ++i)
        out[i] = upwind_cell(k, q[i], q[i - 1], q[i + 1], qm[i], qp[i], Real(0.5) * (uj[i] + uj[i + 1]), Real(0.5) * (wl[i] + wh[i]));
    out[nx - 1] = at(nx - 1, nx - 2, nx - 1);
}

// Faces of row j (along x, and towards row j - 1 when given) whose surface step exceeds thr.
template <class Real>
std::size_t count_steep(int nx, Real thr, const Real* __restrict H, const Real* __restrict h, const Real* __restrict Hm,
                        const Real* __restrict hm) {
    std::size_t n = 0;
    for (int i = 1; i < nx; ++i) n += std::abs((H[i] + h[i]) - (H[i - 1] + h[i - 1])) > thr ? 1 : 0;
    if (Hm)
        for (int i = 0; i < nx; ++i) n += std::abs((H[i] + h[i]) - (Hm[i] + hm[i])) > thr ? 1 : 0;
    return n;
}

// Velocity update of a run of faces between cells a[i] and b[i] (integrate_velocity). Reductions in
// integers so that the loop vectorises without reassociating floats: the largest speed as the largest
// bit pattern of abs(v) (ordered like the values for non-negative floats); clamped faces and non-finite
// values as counts.
template <class Real>
struct FaceRun {
    std::conditional_t<sizeof(Real) == 4, std::uint32_t, std::uint64_t> top = 0;
    std::size_t clamped = 0, bad = 0;
};

template <class Real>
void velocity_faces(Real* __restrict v, const Real* __restrict ha, const Real* __restrict hb, const Real* __restrict Ha,
                    const Real* __restrict Hb, const std::uint8_t* __restrict sa, const std::uint8_t* __restrict sb, int n,
                    Real gdt, Real accel, Real vmax, Real dry, FaceRun<Real>& run) {
    using Bits = decltype(run.top);
    const Real big = std::numeric_limits<Real>::max();
    Bits top = run.top;
    std::size_t clamped = 0, bad = 0;
    for (int i = 0; i < n; ++i) {
        const Real ea = Ha[i] + ha[i], eb = Hb[i] + hb[i];
        const bool da = ha[i] <= dry, db = hb[i] <= dry;
        const bool shut = (da & (db | (Ha[i] > eb))) | (db & (Hb[i] > ea)) | ((sa[i] | sb[i]) != 0);
        const Real raw = v[i] - gdt * (eb - ea) + accel;
        const Real mag = std::abs(raw);
        clamped += (!shut & (mag > vmax)) ? 1 : 0;
        bad += (mag <= big) ? 0 : 1;  // NaN or infinite
        const Real c = std::min(std::max(raw, -vmax), vmax);
        v[i] = shut ? Real(0) : c;
    }
    // The largest speed, as a second loop over the row (in cache): bit patterns without the sign.
    const Bits mask = ~(Bits(1) << (8 * sizeof(Bits) - 1));
    for (int i = 0; i < n; ++i) top = std::max(top, std::bit_cast<Bits>(v[i]) & mask);
    run.top = top;
    run.clamped += clamped;
    run.bad += bad;
}

}  // namespace

template <class Real>
double ShallowWaterGrid<Real>::volume() const {
    double v = 0.0;
    for (Real h : depth) v += double(h);
    return v * double(dx) * double(dx);
}

template <class Real>
ShallowWaterSolver<Real>::ShallowWaterSolver(const ShallowWaterScene& scene, const std::string& where) : m_scene(scene) {
    validate(scene.settings, shallow_water_fields(), where + ": settings");
    if (scene.nx < 1 || scene.ny < 1) throw InputError(fmt::format("{}: grid.cells: at least 1 x 1 cells", where));
    if (!(scene.dx > 0.0)) throw InputError(fmt::format("{}: grid.dx = {:g}: must be > 0", where, scene.dx));
    auto& g = m_g;
    g.nx = scene.nx;
    g.ny = scene.ny;
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

    const double dx = scene.dx, lx = g.nx * dx, ly = g.ny * dx;
    auto eval = [&](const std::string& text, const char* key, auto&& store) {
        detail::Expression e(text, lx, ly, dx, where, key);
        for (int j = 0; j < g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) store(i, j, e((i + 0.5) * dx, (j + 0.5) * dx));
    };
    if (!scene.heightmap.empty()) {
        const auto t = load_heightmap(scene, where);
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
            for (int i = 0; i <= g.nx; ++i) g.u[g.uface(i, j)] = Real(eu(i * dx, (j + 0.5) * dx));
        for (int j = 0; j <= g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) g.w[g.wface(i, j)] = Real(ev((i + 0.5) * dx, j * dx));
    }
    for (std::size_t c = 0; c < n; ++c)
        if (g.solid[c]) {
            g.depth[c] = 0;
            m_has_solid = true;
        }
    // Boundary conditions on the initial state, and the wave speed for the first step.
    ShallowWaterStats st;
    ExecContext serial(1);
    integrate_velocity(Real(0), serial, st);
}

template <class Real>
double ShallowWaterSolver<Real>::suggest_dt() const {
    const auto& s = m_scene.settings;
    if (s.time_step > 0.0f) return s.time_step;
    const double c = m_max_wave_speed;
    const double dt = c > 0.0 ? s.cfl * m_scene.dx / c : s.max_time_step;
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
void ShallowWaterSolver<Real>::add_drop(double x, double y, double radius, double height, double ink) {
    auto& g = m_g;
    const double dx = g.dx;
    const int i0 = std::max(0, int(std::floor((x - radius) / dx))), i1 = std::min(g.nx - 1, int(std::ceil((x + radius) / dx)));
    const int j0 = std::max(0, int(std::floor((y - radius) / dx))), j1 = std::min(g.ny - 1, int(std::ceil((y + radius) / dx)));
    double added = 0.0;
    for (int j = j0; j <= j1; ++j) {
        for (int i = i0; i <= i1; ++i) {
            const std::size_t c = g.cell(i, j);
            if (g.solid[c]) continue;
            const double r = std::hypot((i + 0.5) * dx - x, (j + 0.5) * dx - y);
            if (r >= radius) continue;
            const double bump = 0.5 * (1.0 + std::cos(M_PI * r / radius));
            const Real before = g.depth[c];
            g.depth[c] += Real(height * bump);
            added += double(g.depth[c]) - double(before);
            g.ink[c] += Real(ink * bump);
        }
    }
    m_inflow += added * dx * dx;
    m_max_depth += height;  // a bound for the limiter's test until the next velocity pass measures it
}

template <class Real>
void ShallowWaterSolver<Real>::apply_sources(double dt, ShallowWaterStats& st) {
    auto& g = m_g;
    const double dx = g.dx;
    const double t0 = m_time, t1 = m_time + dt;
    auto cells_of = [&](const GridSource& s, auto&& f) {
        const int i0 = std::max(0, int(std::ceil(s.min[0] / dx - 0.5))), i1 = std::min(g.nx - 1, int(std::floor(s.max[0] / dx - 0.5)));
        const int j0 = std::max(0, int(std::ceil(s.min[1] / dx - 0.5))), j1 = std::min(g.ny - 1, int(std::floor(s.max[1] / dx - 0.5)));
        for (int j = j0; j <= j1; ++j)
            for (int i = i0; i <= i1; ++i)
                if (!g.solid[g.cell(i, j)]) f(g.cell(i, j));
    };
    // The part of [t0, t1) during which a source is on.
    auto active = [&](double start, double end) { return std::max(0.0, std::min(t1, end) - std::max(t0, start)); };
    const double before = m_inflow;
    m_added_depth = 0.0;
    for (const auto& s : m_scene.water_sources) {
        const double on = active(s.start, s.end);
        if (on <= 0.0) continue;
        m_added_depth = std::max(m_added_depth, s.rate * on);
        cells_of(s, [&](std::size_t c) {
            const Real old = g.depth[c];
            g.depth[c] = std::max(Real(0), Real(g.depth[c] + s.rate * on));
            m_inflow += (double(g.depth[c]) - double(old)) * dx * dx;
        });
    }
    for (const auto& s : m_scene.ink_sources) {
        const double on = active(s.start, s.end);
        if (on > 0.0) cells_of(s, [&](std::size_t c) { g.ink[c] += Real(s.rate * on); });
    }
    for (const auto& d : m_scene.drops) {
        // Drop k falls at start + (k + 0.5) / rate; its position comes from (seed, k).
        const double a = std::max(0.0, t0 - d.start) * d.rate, b = std::max(0.0, std::min(t1, d.end) - d.start) * d.rate;
        for (auto k = std::uint64_t(std::ceil(a - 0.5)); double(k) + 0.5 < b; ++k) {
            if (double(k) + 0.5 < a) continue;
            std::uint64_t state = d.seed * 0x632BE59BD9B4E019ull + k;
            const double x = uniform01(state) * g.nx * dx, y = uniform01(state) * g.ny * dx;
            add_drop(x, y, d.radius, d.height, d.ink);  // raises the depth bound itself
        }
    }
    st.inflow = m_inflow - before;
}

// ---- advection: the seed's gather (semi-Lagrangian) --------------------------------------------------
// Pass 1: cell velocity from the faces (mean of the two faces). Pass 2: per cell, a 3x3 weighted mean of
// the cell velocities (1-2-1 weights, cells past the border left out) traced back by
// step * dt; the cell velocity and ink there (bilinear) replace the cell's, blended by `blend`; a
// back-trace leaving the domain leaves the cell as it is (the seed's border rule). Pass 3: each face
// takes the mean change of its two cells, so that without pass 2 the faces are exactly unchanged (the
// seed's check that passes 1 and 3 are inverse).
template <class Real>
void ShallowWaterSolver<Real>::advect_semi_lagrangian(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real trace = Real(s.advection_step) * dt / g.dx, blend = Real(s.advection_blend);
    Real* du = m_a.data();
    Real* dw = m_b.data();
    Real* ink2 = m_c.data();
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                du[c] = 0;
                dw[c] = 0;
                ink2[c] = g.ink[c];
                if (g.solid[c]) continue;
                Real su = 0, sw = 0, sum = 0;
                for (int b = -1; b <= 1; ++b) {
                    const int jj = j + b;
                    if (jj < 0 || jj >= ny) continue;
                    for (int a = -1; a <= 1; ++a) {
                        const int ii = i + a;
                        if (ii < 0 || ii >= nx) continue;
                        const Real wgt = Real((2 - std::abs(a)) * (2 - std::abs(b)));
                        su += wgt * g.uc(ii, jj);
                        sw += wgt * g.wc(ii, jj);
                        sum += wgt;
                    }
                }
                const Real px = Real(i) + Real(0.5) - trace * su / sum, py = Real(j) + Real(0.5) - trace * sw / sum;
                if (!(px >= 0 && px <= Real(nx) && py >= 0 && py <= Real(ny))) continue;  // upstream is outside: skip
                const Real fx = std::clamp(px - Real(0.5), Real(0), Real(nx - 1));
                const Real fy = std::clamp(py - Real(0.5), Real(0), Real(ny - 1));
                const int x0 = std::min(int(fx), nx - 1), y0 = std::min(int(fy), ny - 1);
                const int x1 = std::min(x0 + 1, nx - 1), y1 = std::min(y0 + 1, ny - 1);
                const Real tx = fx - Real(x0), ty = fy - Real(y0);
                auto lerp2 = [&](auto&& q) {
                    return (1 - ty) * ((1 - tx) * q(x0, y0) + tx * q(x1, y0)) + ty * ((1 - tx) * q(x0, y1) + tx * q(x1, y1));
                };
                const Real u_up = lerp2([&](int a, int b) { return g.uc(a, b); });
                const Real w_up = lerp2([&](int a, int b) { return g.wc(a, b); });
                const Real ink_up = lerp2([&](int a, int b) { return g.ink[g.cell(a, b)]; });
                du[c] = blend * (u_up - g.uc(i, j));
                dw[c] = blend * (w_up - g.wc(i, j));
                ink2[c] = g.ink[c] + blend * (ink_up - g.ink[c]);
            }
        }
    });
    // Faces: row j holds the x-faces of cell row j (j < ny) and the y-faces below cell row j.
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny) {
                Real* u = &g.u[g.uface(0, j)];
                const Real* d = &du[g.cell(0, j)];
                u[0] += d[0];
                for (int i = 1; i < nx; ++i) u[i] += Real(0.5) * (d[i - 1] + d[i]);
                u[nx] += d[nx - 1];
            }
            Real* w = &g.w[g.wface(0, j)];
            if (j == 0) {
                for (int i = 0; i < nx; ++i) w[i] += dw[g.cell(i, 0)];
            } else if (j == ny) {
                for (int i = 0; i < nx; ++i) w[i] += dw[g.cell(i, ny - 1)];
            } else {
                const Real* lo = &dw[g.cell(0, j - 1)];
                const Real* hi = &dw[g.cell(0, j)];
                for (int i = 0; i < nx; ++i) w[i] += Real(0.5) * (lo[i] + hi[i]);
            }
        }
    });
    g.ink.swap(m_c);
}

// ---- advection: the seed's direct discretisation, first-order upwind ---------------------------------
// u_t = -(u u_x + w u_y) at x-faces (w averaged from the 4 nearest y-faces), likewise w at y-faces and
// ink at cells; differences taken on the upwind side, zero where that side is past the border. Scaled by
// step * blend like the gather, so that the two agree to first order.
template <class Real>
void ShallowWaterSolver<Real>::advect_upwind(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real k = Real(s.advection_step) * Real(s.advection_blend) * dt / g.dx;
    auto U = [&](int i, int j) { return g.u[g.uface(i, j)]; };
    auto W = [&](int i, int j) { return g.w[g.wface(i, j)]; };
    auto upwind = [](Real vel, Real minus, Real here, Real plus, bool has_minus, bool has_plus) -> Real {
        if (vel > 0) return has_minus ? here - minus : Real(0);
        return has_plus ? plus - here : Real(0);
    };
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny) {
                for (int i = 0; i <= nx; ++i) {
                    const Real uf = U(i, j);
                    const int il = std::max(i - 1, 0), ir = std::min(i, nx - 1);
                    const Real wf = Real(0.25) * (W(il, j) + W(ir, j) + W(il, j + 1) + W(ir, j + 1));
                    const Real dudx = upwind(uf, i > 0 ? U(i - 1, j) : 0, uf, i < nx ? U(i + 1, j) : 0, i > 0, i < nx);
                    const Real dudy = upwind(wf, j > 0 ? U(i, j - 1) : 0, uf, j + 1 < ny ? U(i, j + 1) : 0, j > 0, j + 1 < ny);
                    m_u2[g.uface(i, j)] = uf - k * (uf * dudx + wf * dudy);
                }
            }
            for (int i = 0; i < nx; ++i) {
                const Real wf = W(i, j);
                const int jl = std::max(j - 1, 0), jr = std::min(j, ny - 1);
                const Real uf = Real(0.25) * (U(i, jl) + U(i + 1, jl) + U(i, jr) + U(i + 1, jr));
                const Real dwdx = upwind(uf, i > 0 ? W(i - 1, j) : 0, wf, i + 1 < nx ? W(i + 1, j) : 0, i > 0, i + 1 < nx);
                const Real dwdy = upwind(wf, j > 0 ? W(i, j - 1) : 0, wf, j < ny ? W(i, j + 1) : 0, j > 0, j < ny);
                m_w2[g.wface(i, j)] = wf - k * (uf * dwdx + wf * dwdy);
            }
            if (j < ny) {
                const Real* ink = g.ink.data();
                upwind_ink_row(nx, k, ink + std::size_t(j) * nx, ink + std::size_t(j > 0 ? j - 1 : j) * nx,
                               ink + std::size_t(j + 1 < ny ? j + 1 : j) * nx, &g.u[g.uface(0, j)], &g.w[g.wface(0, j)],
                               &g.w[g.wface(0, j + 1)], &m_c[g.cell(0, j)]);
            }
        }
    });
    g.u.swap(m_u2);
    g.w.swap(m_w2);
    g.ink.swap(m_c);
}

// ---- advection: momentum conservative (Stelling & Duinmeijer 2003) ----------------------------------
// Not in the seed: the velocity form above moves shocks at the wrong speed (it conserves u, not h u) and
// lets a dry front wait for its face to accelerate from rest. Here the advection of u at x-face f
// between cells L and R is computed from the discharges q = hbar u of the faces:
//   u (du/dx) ~ [ (Q_R u*_R - Q_L u*_L) - u_f (Q_R - Q_L) ] / (dx hmean_f)
// with Q_c = (q_left + q_right) / 2 the cell discharge, u*_c the face velocity upwind of Q_c, hmean_f =
// (h_L + h_R) / 2; the cross term w (du/dy) likewise with the y-discharges averaged to the face's corners.
// It keeps h u across a jump (Stoker's shock speed) and carries momentum into a wetting front (Ritter).
// Ink uses the upwind scheme with the cell velocities.
template <class Real>
void ShallowWaterSolver<Real>::advect_conservative(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real k = Real(s.advection_step) * Real(s.advection_blend) * dt / g.dx;
    const Real dry = Real(s.dry_depth) * g.dx;
    const Real* h = g.depth.data();
    const Real* u = g.u.data();
    const Real* w = g.w.data();
    const Real* ink = g.ink.data();
    Real* u2 = m_u2.data();
    Real* w2 = m_w2.data();
    Real* ink2 = m_c.data();
    const std::size_t su = std::size_t(nx + 1);  // x-face row stride
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        // Discharges q = hbar u of the faces this task reads: x-faces of cell rows j0 - 1 .. j1 (clamped),
        // y-faces of face rows j0 - 1 .. j1 + 1 (clamped). Border faces take the border cell's depth.
        const int qx0 = std::max(j0 - 1, 0), qx1 = std::min(j1, ny - 1);
        const int qy0 = std::max(j0 - 1, 0), qy1 = std::min(j1 + 1, ny);
        std::vector<Real> qxb(std::size_t(qx1 - qx0 + 1) * su), qyb(std::size_t(qy1 - qy0 + 1) * nx);
        for (int j = qx0; j <= qx1; ++j) {
            const Real* __restrict uj = u + std::size_t(j) * su;
            const Real* __restrict hj = h + std::size_t(j) * nx;
            Real* q = &qxb[std::size_t(j - qx0) * su];
            q[0] = uj[0] * hj[0];
            for (int i = 1; i < nx; ++i) q[i] = uj[i] * (uj[i] > 0 ? hj[i - 1] : hj[i]);
            q[nx] = uj[nx] * hj[nx - 1];
        }
        for (int j = qy0; j <= qy1; ++j) {
            const Real* __restrict wj = w + std::size_t(j) * nx;
            const Real* __restrict lo = h + std::size_t(std::max(j - 1, 0)) * nx;
            const Real* __restrict hi = h + std::size_t(std::min(j, ny - 1)) * nx;
            Real* q = &qyb[std::size_t(j - qy0) * nx];
            for (int i = 0; i < nx; ++i) q[i] = wj[i] * (wj[i] > 0 ? lo[i] : hi[i]);
        }
        auto QX = [&](int j) { return &qxb[std::size_t(j - qx0) * su]; };
        auto QY = [&](int j) { return &qyb[std::size_t(j - qy0) * nx]; };
        for (int j = j0; j < j1; ++j) {
            if (j < ny) {
                // x-faces of cell row j. Rows past the border read row j itself (no cross difference there).
                const Real* __restrict uj = u + std::size_t(j) * su;
                const Real* __restrict um = u + std::size_t(j > 0 ? j - 1 : j) * su;
                const Real* __restrict up = u + std::size_t(j + 1 < ny ? j + 1 : j) * su;
                const Real* __restrict hj = h + std::size_t(j) * nx;
                const Real* __restrict qx = QX(j);
                const Real* __restrict qb = QY(j);
                const Real* __restrict qt = QY(j + 1);
                Real* __restrict out = u2 + std::size_t(j) * su;
                out[0] = uj[0];
                out[nx] = uj[nx];
                conservative_u_row(nx, k, dry, uj, um, up, hj, qx, qb, qt, out);
            }
            // y-faces of face row j (between cell rows j - 1 and j); the border rows are kept.
            {
                const Real* __restrict wj = w + std::size_t(j) * nx;
                Real* __restrict out = w2 + std::size_t(j) * nx;
                if (j == 0 || j == ny) {
                    for (int i = 0; i < nx; ++i) out[i] = wj[i];
                } else {
                    const Real* __restrict wm = w + std::size_t(j - 1) * nx;
                    const Real* __restrict wp = w + std::size_t(j + 1) * nx;
                    const Real* __restrict lo = h + std::size_t(j - 1) * nx;
                    const Real* __restrict hi = h + std::size_t(j) * nx;
                    const Real* __restrict qm = QY(j - 1);
                    const Real* __restrict qj = QY(j);
                    const Real* __restrict qp = QY(j + 1);
                    const Real* __restrict xl = QX(j - 1);
                    const Real* __restrict xh = QX(j);
                    conservative_w_row(nx, k, dry, wj, wm, wp, lo, hi, qm, qj, qp, xl, xh, out);
                }
            }
            // Ink of cell row j, upwind with the cell velocities.
            if (j < ny) {
                const Real* __restrict q = ink + std::size_t(j) * nx;
                const Real* __restrict qm = ink + std::size_t(j > 0 ? j - 1 : j) * nx;
                const Real* __restrict qp = ink + std::size_t(j + 1 < ny ? j + 1 : j) * nx;
                const Real* __restrict uj = u + std::size_t(j) * su;
                const Real* __restrict wl = w + std::size_t(j) * nx;
                const Real* __restrict wh = w + std::size_t(j + 1) * nx;
                Real* __restrict out = ink2 + std::size_t(j) * nx;
                upwind_ink_row(nx, k, q, qm, qp, uj, wl, wh, out);
            }
        }
    });
    g.u.swap(m_u2);
    g.w.swap(m_w2);
    g.ink.swap(m_c);
}

// ---- vorticity confinement (Fedkiw, Stam & Jensen 2001), scaled by dx and dt as the seed notes -------
// omega = dw/dx - du/dy at cells (central differences of the cell velocities), N = grad|omega| / |.|,
// f = eps dx (N x omega) = eps dx (N_y omega, -N_x omega); faces between two wet cells get dt times the
// mean of their cells' f.
template <class Real>
void ShallowWaterSolver<Real>::vorticity_confinement(Real dt, const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real dry = Real(s.dry_depth) * g.dx, inv2dx = Real(0.5) / g.dx;
    Real* omega = m_a.data();
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                if (g.depth[c] <= dry) {
                    omega[c] = 0;
                    continue;
                }
                const int il = std::max(i - 1, 0), ir = std::min(i + 1, nx - 1), jl = std::max(j - 1, 0), jr = std::min(j + 1, ny - 1);
                const Real dwdx = ir > il ? (g.wc(ir, j) - g.wc(il, j)) / (Real(ir - il) * g.dx) : Real(0);
                const Real dudy = jr > jl ? (g.uc(i, jr) - g.uc(i, jl)) / (Real(jr - jl) * g.dx) : Real(0);
                omega[c] = dwdx - dudy;
            }
    });
    Real* fx = m_b.data();
    Real* fy = m_c.data();
    const Real scale = Real(s.vorticity) * g.dx;
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                const int il = std::max(i - 1, 0), ir = std::min(i + 1, nx - 1), jl = std::max(j - 1, 0), jr = std::min(j + 1, ny - 1);
                const Real gx = (std::abs(omega[g.cell(ir, j)]) - std::abs(omega[g.cell(il, j)])) * inv2dx;
                const Real gy = (std::abs(omega[g.cell(i, jr)]) - std::abs(omega[g.cell(i, jl)])) * inv2dx;
                const Real len = std::sqrt(gx * gx + gy * gy);
                if (!(len > Real(1e-12)) || omega[c] == 0) {
                    fx[c] = fy[c] = 0;
                    continue;
                }
                fx[c] = scale * (gy / len) * omega[c];
                fy[c] = -scale * (gx / len) * omega[c];
            }
    });
    for_rows(exec, ny + 1, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny)
                for (int i = 1; i < nx; ++i) {
                    const std::size_t l = g.cell(i - 1, j), r = g.cell(i, j);
                    if (g.depth[l] > dry && g.depth[r] > dry) g.u[g.uface(i, j)] += dt * Real(0.5) * (fx[l] + fx[r]);
                }
            if (j > 0 && j < ny)
                for (int i = 0; i < nx; ++i) {
                    const std::size_t b = g.cell(i, j - 1), t = g.cell(i, j);
                    if (g.depth[b] > dry && g.depth[t] > dry) g.w[g.wface(i, j)] += dt * Real(0.5) * (fy[b] + fy[t]);
                }
        }
    });
}

// ---- height integration (paper eq. 6 with the depth limiter of sec. 2.1.5) ---------------------------
// hbar at a face: the depth of the upwind (donor) cell; an open border's ghost cell has the border
// cell's depth (zero gradient). Per cell: h_adj = max(0, mean of its 4 hbar - beta dx / (g dt)); a face's depth is its
// donor's hbar - h_adj (>= 0). Outflow scaling: if the faces a cell feeds would take more than h, they
// are scaled by h / outflow, so no cell goes below zero and no water is created by a clamp.
template <class Real>
void ShallowWaterSolver<Real>::integrate_height(Real dt, const ExecContext& exec, ShallowWaterStats& st) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const bool* open = m_scene.open;
    const Real limit = Real(s.beta) * g.dx / (Real(m_scene.gravity) * dt);
    const Real k = dt / g.dx;
    Real* adj = m_a.data();
    Real* scale = m_b.data();
    const Real* h = g.depth.data();
    const std::uint8_t* solid = g.solid.data();
    auto U = [&](int i, int j) { return g.u[g.uface(i, j)]; };
    auto W = [&](int i, int j) { return g.w[g.wface(i, j)]; };
    // Upwind depth of x-face (i, j) and its donor cell.
    auto xface = [&](int i, int j, Real uf, long& donor) -> Real {
        // Borders: walls carry nothing; through an open border the border cell's depth (zero gradient).
        if (i == 0) { donor = long(g.cell(0, j)); return open[0] ? h[g.cell(0, j)] : Real(0); }
        if (i == nx) { donor = long(g.cell(nx - 1, j)); return open[1] ? h[g.cell(nx - 1, j)] : Real(0); }
        donor = long(uf >= 0 ? g.cell(i - 1, j) : g.cell(i, j));
        if (solid[g.cell(i - 1, j)] || solid[g.cell(i, j)]) return 0;  // an obstacle's face is a wall
        return h[donor];
    };
    auto yface = [&](int i, int j, Real wf, long& donor) -> Real {
        if (j == 0) { donor = long(g.cell(i, 0)); return open[2] ? h[g.cell(i, 0)] : Real(0); }
        if (j == ny) { donor = long(g.cell(i, ny - 1)); return open[3] ? h[g.cell(i, ny - 1)] : Real(0); }
        donor = long(wf >= 0 ? g.cell(i, j - 1) : g.cell(i, j));
        if (solid[g.cell(i, j - 1)] || solid[g.cell(i, j)]) return 0;
        return h[donor];
    };
    // Pass A: h_adj and the outflow scale of every cell.
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                long d0 = -1, d1 = -1, d2 = -1, d3 = -1;
                const Real ul = U(i, j), ur = U(i + 1, j), wb = W(i, j), wt = W(i, j + 1);
                const Real hl = xface(i, j, ul, d0), hr = xface(i + 1, j, ur, d1);
                const Real hb = yface(i, j, wb, d2), ht = yface(i, j + 1, wt, d3);
                const Real a = std::max(Real(0), Real(0.25) * (hl + hr + hb + ht) - limit);
                adj[c] = a;
                Real out = 0;
                if (ul < 0) out -= ul * std::max(Real(0), hl - a);
                if (ur > 0) out += ur * std::max(Real(0), hr - a);
                if (wb < 0) out -= wb * std::max(Real(0), hb - a);
                if (wt > 0) out += wt * std::max(Real(0), ht - a);
                out *= k;
                scale[c] = out > h[c] ? (out > 0 ? h[c] / out : Real(0)) : Real(1);
            }
    });
    // The flux through a face (m^2/s): u * (hbar - h_adj of the donor) * scale of the donor.
    auto flux = [&](Real vel, Real hbar, long donor) -> Real {
        if (vel == 0) return 0;
        return vel * std::max(Real(0), hbar - adj[donor]) * scale[donor];
    };
    // Open borders: the volume that leaves (or enters) through them, before pass B overwrites nothing it needs.
    if (open[0] || open[1] || open[2] || open[3]) {
        double out = 0.0;
        long d = -1;
        for (int j = 0; j < ny; ++j) {
                const Real h0 = xface(0, j, U(0, j), d);
                out -= double(flux(U(0, j), h0, d));
                const Real h1 = xface(nx, j, U(nx, j), d);
                out += double(flux(U(nx, j), h1, d));
            }
        for (int i = 0; i < nx; ++i) {
                const Real h0 = yface(i, 0, W(i, 0), d);
                out -= double(flux(W(i, 0), h0, d));
                const Real h1 = yface(i, ny, W(i, ny), d);
                out += double(flux(W(i, ny), h1, d));
            }
        st.outflow = out * double(dt) * double(g.dx);
        m_outflow += st.outflow;
    }
    // Pass B: h -= dt/dx div(flux).
    Real* hn = m_c.data();
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j)
            for (int i = 0; i < nx; ++i) {
                const std::size_t c = g.cell(i, j);
                if (g.solid[c]) {
                    hn[c] = 0;
                    continue;
                }
                long d0 = -1, d1 = -1, d2 = -1, d3 = -1;
                const Real ul = U(i, j), ur = U(i + 1, j), wb = W(i, j), wt = W(i, j + 1);
                // (The depths first: the donors they set are read by flux.)
                const Real hl = xface(i, j, ul, d0), hr = xface(i + 1, j, ur, d1);
                const Real hb = yface(i, j, wb, d2), ht = yface(i, j + 1, wt, d3);
                const Real fl = flux(ul, hl, d0), fr = flux(ur, hr, d1), fb = flux(wb, hb, d2), ft = flux(wt, ht, d3);
                const Real v = h[c] - k * ((fr - fl) + (ft - fb));
                hn[c] = v > 0 ? v : Real(0);  // only round-off can go below zero here
            }
    });
    g.depth.swap(m_c);
}

// The same update when the depth limiter cannot act (every face depth below beta dx / (g dt), known
// from the largest depth): then a cell's outflow is k h S, S the sum of its outward face speeds, and the
// outflow scale min(1, 1 / (k S)) needs no depth. One pass, rows of scales and y-fluxes kept per task.
template <class Real>
void ShallowWaterSolver<Real>::integrate_height_fast(Real dt, const ExecContext& exec, ShallowWaterStats& st) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real k = dt / g.dx;
    const Real* h = g.depth.data();
    const Real* u = g.u.data();
    const Real* w = g.w.data();
    Real* hn = m_c.data();
    const std::size_t su = std::size_t(nx + 1);
    const double out = parallel_reduce_blocks(
        exec, std::size_t(ny), 0.0,
        [&](std::size_t jb, std::size_t je) {
            const int j0 = int(jb), j1 = int(je);
            const int s0 = std::max(j0 - 1, 0), s1 = std::min(j1, ny - 1);
            std::vector<Real> sc(std::size_t(s1 - s0 + 1) * nx), fy(std::size_t(j1 - j0 + 1) * nx), fx(su);
            for (int j = s0; j <= s1; ++j) {
                const Real* uj = u + std::size_t(j) * su;
                const Real* wl = w + std::size_t(j) * nx;
                const Real* wh = w + std::size_t(j + 1) * nx;
                Real* out = &sc[std::size_t(j - s0) * nx];
                for (int i = 0; i < nx; ++i) {
                    const Real ks = k * (std::max(Real(0), uj[i + 1]) - std::min(Real(0), uj[i]) + std::max(Real(0), wh[i]) -
                                         std::min(Real(0), wl[i]));
                    out[i] = ks > 1 ? 1 / ks : Real(1);
                }
            }
            auto SC = [&](int j) { return &sc[std::size_t(j - s0) * nx]; };
            for (int f = j0; f <= j1; ++f) {
                const Real* wf = w + std::size_t(f) * nx;
                const int lo = std::max(f - 1, 0), hi = std::min(f, ny - 1);  // border rows: the cell inside
                const Real* hl = h + std::size_t(lo) * nx;
                const Real* hh = h + std::size_t(hi) * nx;
                const Real* sl = SC(lo);
                const Real* sh = SC(hi);
                Real* F = &fy[std::size_t(f - j0) * nx];
                for (int i = 0; i < nx; ++i) F[i] = wf[i] * (wf[i] > 0 ? hl[i] * sl[i] : hh[i] * sh[i]);
            }
            double border = 0.0;
            for (int j = j0; j < j1; ++j) {
                const Real* uj = u + std::size_t(j) * su;
                const Real* hj = h + std::size_t(j) * nx;
                const Real* sj = SC(j);
                fx[0] = uj[0] * hj[0] * sj[0];
                for (int i = 1; i < nx; ++i) fx[i] = uj[i] * (uj[i] > 0 ? hj[i - 1] * sj[i - 1] : hj[i] * sj[i]);
                fx[nx] = uj[nx] * hj[nx - 1] * sj[nx - 1];
                const Real* fb = &fy[std::size_t(j - j0) * nx];
                const Real* ft = &fy[std::size_t(j - j0 + 1) * nx];
                Real* o = hn + std::size_t(j) * nx;
                for (int i = 0; i < nx; ++i) {
                    const Real v = hj[i] - k * ((fx[i + 1] - fx[i]) + (ft[i] - fb[i]));
                    o[i] = v > 0 ? v : Real(0);  // only round-off can go below zero
                }
                border += double(fx[nx]) - double(fx[0]);
            }
            if (j0 == 0)
                for (int i = 0; i < nx; ++i) border -= double(fy[std::size_t(i)]);
            if (j1 == ny)
                for (int i = 0; i < nx; ++i) border += double(fy[std::size_t(j1 - j0) * nx + i]);
            return border;
        },
        [](double a, double b) { return a + b; }, std::size_t(s.rows_per_task));
    st.outflow = out * double(dt) * double(g.dx);
    m_outflow += st.outflow;
    g.depth.swap(m_c);
}

// ---- overshooting reduction at wave edges (paper sec. 2.2) -------------------------------------------
// Cell C is an edge towards R (its lower neighbour along an axis) when eta_C - eta_L > lambda_edge and
// eta_C > eta_R, L the neighbour on the other side. It passes alpha_edge * max(0, (h_C - h_R) / 2) to R:
// the paper's h_C += alpha_edge (max(0, (h_C + h_R) / 2) - h_C), written as a transfer so that volume is
// kept. Gathered: each cell adds what its neighbours pass to it, all from the previous depths.
template <class Real>
void ShallowWaterSolver<Real>::reduce_overshooting(const ExecContext& exec) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real thr = Real(s.edge_threshold) * g.dx, alpha = Real(s.edge_alpha) * Real(0.5);
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    // First: is any step between neighbouring cells steeper than lambda_edge? An edge needs
    // eta_C - eta_L > lambda_edge, so without one there is nothing to do (calm water: most steps).
    const std::size_t steep_faces = parallel_reduce_blocks(
        exec, std::size_t(ny), std::size_t(0),
        [&](std::size_t jb, std::size_t je) {
            std::size_t n = 0;
            for (std::size_t j = jb; j < je; ++j) n += count_steep(nx, thr, &g.terrain[g.cell(0, int(j))], &g.depth[g.cell(0, int(j))],
                                                                   j > 0 ? &g.terrain[g.cell(0, int(j) - 1)] : nullptr,
                                                                   j > 0 ? &g.depth[g.cell(0, int(j) - 1)] : nullptr);
            return n;
        },
        [](std::size_t a, std::size_t b) { return a + b; }, std::size_t(s.rows_per_task));
    if (steep_faces == 0) return;
    Real* hn = m_c.data();
    for_rows(exec, ny, s.rows_per_task, [&](int j0, int j1) {
        // eta and h of rows j0 - 2 .. j1 + 1 with one padding cell on each side; eta is NaN outside the
        // grid and in obstacles, so that every comparison with it is false (no edge, no transfer).
        const int rows = j1 - j0 + 4, stride = nx + 4;
        std::vector<Real> eta(std::size_t(rows) * stride, nan), hh(std::size_t(rows) * stride, Real(0));
        // Is any step between neighbours steeper than the threshold? If not, nothing here is an edge
        // (an edge needs eta_C - eta_L > lambda_edge for a neighbour L within two rows).
        bool steep = false;
        for (int r = 0; r < rows; ++r) {
            const int j = j0 - 2 + r;
            if (j < 0 || j >= ny) continue;
            const std::size_t c0 = g.cell(0, j);
            Real* e = &eta[std::size_t(r) * stride + 2];
            Real* hr = &hh[std::size_t(r) * stride + 2];
            for (int i = 0; i < nx; ++i) {
                hr[i] = g.depth[c0 + i];
                e[i] = g.solid[c0 + i] ? nan : g.terrain[c0 + i] + g.depth[c0 + i];
            }
            Real m = 0;
            for (int i = 1; i < nx; ++i) m = std::max(m, std::abs(e[i] - e[i - 1]));  // NaN never wins
            if (r > 0 && j > 0) {
                const Real* p = e - stride;
                for (int i = 0; i < nx; ++i) m = std::max(m, std::abs(e[i] - p[i]));
            }
            steep = steep || m > thr;
        }
        if (!steep) {
            for (int j = j0; j < j1; ++j) std::copy_n(&g.depth[g.cell(0, j)], nx, &hn[g.cell(0, j)]);
            return;
        }
        // What the cell at offset o passes to its neighbour at o + d (d = +-1 or +-stride).
        auto give = [&](std::size_t o, std::ptrdiff_t d) -> Real {
            const Real ec = eta[o];
            const bool edge = (ec - eta[o - d] > thr) & (ec > eta[o + d]);
            return edge ? alpha * std::max(Real(0), hh[o] - hh[o + d]) : Real(0);
        };
        const std::ptrdiff_t S = stride;
        for (int j = j0; j < j1; ++j) {
            const std::size_t row = std::size_t(j - j0 + 2) * stride + 2;
            const std::size_t c0 = g.cell(0, j);
            for (int i = 0; i < nx; ++i) {
                const std::size_t o = row + i;
                if (g.solid[c0 + i]) {
                    hn[c0 + i] = g.depth[c0 + i];
                    continue;
                }
                Real v = hh[o];
                v -= give(o, 1) + give(o, -1);
                v += give(o - 1, 1) + give(o + 1, -1);
                // Along y; the rows beyond j +- 1 are only read when the neighbour's edge test needs them.
                v -= give(o, S) + give(o, -S);
                v += give(o - S, S) + give(o + S, -S);
                hn[c0 + i] = v > 0 ? v : Real(0);
            }
        }
    });
    g.depth.swap(m_c);
}

// ---- velocity integration (paper eq. 7) and the boundary conditions ----------------------------------
// Per face between cells a and b (b on the positive side):
//   v = clamp(v - g dt/dx (eta_b - eta_a) + a dt, -alpha dx/dt, alpha dx/dt)
//   v = 0 on a shore: (h_a <= eps and (h_b <= eps or H_a > eta_b)) or (h_b <= eps and H_b > eta_a),
//         and on the faces of obstacles; walls close the border faces, open borders copy the inner
//         face's outward velocity.
// Written without branches in the inner loops, so that they vectorise.
template <class Real>
void ShallowWaterSolver<Real>::integrate_velocity(Real dt, const ExecContext& exec, ShallowWaterStats& st) {
    auto& g = m_g;
    const auto& s = m_scene.settings;
    const int nx = g.nx, ny = g.ny;
    const Real gdt = Real(m_scene.gravity) * dt / g.dx;
    const Real G = Real(m_scene.gravity), dtdx = dt / g.dx;
    const Real ax = Real(s.acceleration_x) * dt, ay = Real(s.acceleration_y) * dt;
    const Real vmax = dt > 0 ? Real(s.alpha) * g.dx / dt : std::numeric_limits<Real>::max();
    const Real dry = Real(s.dry_depth) * g.dx;
    const Real* h = g.depth.data();
    const Real* H = g.terrain.data();
    const std::uint8_t* solid = g.solid.data();
    const bool* open = m_scene.open;
    struct Acc {
        Real speed = 0, depth = 0, nan_probe = 0;
        std::size_t clamped = 0;
    };
    // The faces between cells a[i] and b[i], i in [0, n).
    using Bits = decltype(FaceRun<Real>::top);
    const Real big = std::numeric_limits<Real>::max();
    auto faces = [&](Real* v, const Real* ha, const Real* hb, const Real* Ha, const Real* Hb, const std::uint8_t* sa,
                     const std::uint8_t* sb, int n, Real accel, Acc& acc) {
        FaceRun<Real> run;
        velocity_faces(v, ha, hb, Ha, Hb, sa, sb, n, gdt, accel, vmax, dry, run);
        Real speed;
        std::memcpy(&speed, &run.top, sizeof(speed));
        acc.speed = std::max(acc.speed, speed);
        if (run.bad) acc.nan_probe = std::numeric_limits<Real>::quiet_NaN();
        acc.clamped += run.clamped;
    };
    const std::size_t rows = std::size_t(ny + 1);
    const Acc total = parallel_reduce_blocks(
        exec, rows, Acc{},
        [&](std::size_t j0, std::size_t j1) {
            Acc acc;
            for (int j = int(j0); j < int(j1); ++j) {
                if (j < ny) {
                    Real* u = &g.u[g.uface(0, j)];
                    const std::size_t c0 = g.cell(0, j);
                    faces(u + 1, h + c0, h + c0 + 1, H + c0, H + c0 + 1, solid + c0, solid + c0 + 1, nx - 1, ax, acc);
                    // Open: the radiation condition u_t + c u_n = 0 at the border face (c = sqrt(g h)
                    // of the border cell), upwind: waves leave, a steady flow keeps its speed.
                    const Real sl = std::min(Real(1), std::sqrt(G * h[c0]) * dtdx);
                    const Real sr = std::min(Real(1), std::sqrt(G * h[c0 + nx - 1]) * dtdx);
                    u[0] = open[0] && !solid[c0] ? u[0] + sl * ((nx > 1 ? u[1] : u[0]) - u[0]) : Real(0);
                    u[nx] = open[1] && !solid[c0 + nx - 1] ? u[nx] + sr * ((nx > 1 ? u[nx - 1] : u[nx]) - u[nx]) : Real(0);
                    acc.speed = std::max({acc.speed, std::abs(u[0]), std::abs(u[nx])});
                    Bits top = 0;
                    std::size_t bad = 0;
                    for (int i = 0; i < nx; ++i) top = std::max(top, std::bit_cast<Bits>(h[c0 + i]));  // h >= 0
                    for (int i = 0; i < nx; ++i) bad += (h[c0 + i] <= big) ? 0 : 1;
                    Real d;
                    std::memcpy(&d, &top, sizeof(d));
                    acc.depth = std::max(acc.depth, d);
                    if (bad) acc.nan_probe = std::numeric_limits<Real>::quiet_NaN();
                }
                Real* w = &g.w[g.wface(0, j)];
                if (j > 0 && j < ny) {
                    const std::size_t lo = g.cell(0, j - 1), hi = g.cell(0, j);
                    faces(w, h + lo, h + hi, H + lo, H + hi, solid + lo, solid + hi, nx, ay, acc);
                } else if (open[j == 0 ? 2 : 3] && ny > 1) {
                    const Real* inner = &g.w[g.wface(0, j == 0 ? 1 : ny - 1)];
                    const std::size_t c0 = g.cell(0, j == 0 ? 0 : ny - 1);
                    for (int i = 0; i < nx; ++i) {
                        const Real sg = std::min(Real(1), std::sqrt(G * h[c0 + i]) * dtdx);
                        w[i] = solid[c0 + i] ? Real(0) : w[i] + sg * (inner[i] - w[i]);
                        acc.speed = std::max(acc.speed, std::abs(w[i]));
                    }
                } else {
                    for (int i = 0; i < nx; ++i) w[i] = 0;
                }
            }
            return acc;
        },
        [](Acc a, const Acc& b) {
            a.speed = std::max(a.speed, b.speed);
            a.depth = std::max(a.depth, b.depth);
            a.nan_probe += b.nan_probe;
            a.clamped += b.clamped;
            return a;
        },
        std::size_t(s.rows_per_task));
    st.max_speed = double(total.speed);
    st.max_depth = double(total.depth);
    st.clamped = total.clamped;
    st.non_finite = !std::isfinite(total.nan_probe);
    m_max_depth = double(total.depth);
    m_max_wave_speed = std::sqrt(m_scene.gravity * double(total.depth)) + double(total.speed);
}

// Walls and obstacles carry nothing: advection and vorticity confinement may have changed those faces;
// the height update needs them closed.
template <class Real>
void ShallowWaterSolver<Real>::close_walls(const ExecContext& exec) {
    auto& g = m_g;
    const int nx = g.nx, ny = g.ny;
    for (int j = 0; j < ny; ++j) {
        Real& l = g.u[g.uface(0, j)];
        Real& r = g.u[g.uface(nx, j)];
        if (!m_scene.open[0]) l = 0;
        if (!m_scene.open[1]) r = 0;
    }
    for (int i = 0; i < nx; ++i) {
        Real& b = g.w[g.wface(i, 0)];
        Real& t = g.w[g.wface(i, ny)];
        if (!m_scene.open[2]) b = 0;
        if (!m_scene.open[3]) t = 0;
    }
    if (!m_has_solid) return;
    for_rows(exec, ny + 1, m_scene.settings.rows_per_task, [&](int j0, int j1) {
        for (int j = j0; j < j1; ++j) {
            if (j < ny)
                for (int i = 0; i < nx; ++i)
                    if (g.solid[g.cell(i, j)]) g.u[g.uface(i, j)] = g.u[g.uface(i + 1, j)] = 0;
            for (int i = 0; i < nx; ++i) {
                const bool lo = j > 0 && g.solid[g.cell(i, j - 1)], hi = j < ny && g.solid[g.cell(i, j)];
                if (lo || hi) g.w[g.wface(i, j)] = 0;
            }
        }
    });
}

template <class Real>
ShallowWaterStats ShallowWaterSolver<Real>::step(double dt_in, const ExecContext& exec) {
    ShallowWaterStats st;
    st.dt = dt_in;
    const Real dt = Real(dt_in);
    const auto& s = m_scene.settings;
    apply_sources(dt_in, st);
    if (s.advection != "none") {
        // Each pass traces back advection_step * dt: the seed's (0.5, 2 passes) moves as far as (1, 1).
        for (int k = 0; k < s.advection_iterations; ++k) {
            if (s.advection == "upwind") advect_upwind(dt, exec);
            else if (s.advection == "conservative") advect_conservative(dt, exec);
            else advect_semi_lagrangian(dt, exec);
        }
    }
    if (s.vorticity > 0.0f) vorticity_confinement(dt, exec);
    close_walls(exec);
    // The depth limiter acts only on face depths above beta dx / (g dt): below that, the one-pass update.
    const double limit = double(s.beta) * m_scene.dx / (m_scene.gravity * dt_in);
    if (m_max_depth + m_added_depth < limit) integrate_height_fast(dt, exec, st);
    else integrate_height(dt, exec, st);
    if (s.edge_alpha > 0.0f) reduce_overshooting(exec);
    integrate_velocity(dt, exec, st);
    m_time += dt_in;
    ++m_steps;
    return st;
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
}

template struct ShallowWaterGrid<float>;
template struct ShallowWaterGrid<double>;
template class ShallowWaterSolver<float>;
template class ShallowWaterSolver<double>;

}  // namespace eddy
