// Velocity integration (paper eq. 7), boundary conditions and closed walls.
// (A pass of ShallowWaterSolver::step: include/eddy/shallow_water.hpp has the equations of all of them.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eddy/shallow_water.hpp"
#include "shallow/passes/passes.hpp"
#include <cstring>

namespace eddy {

using namespace shallow_detail;

namespace {

// std::bit_cast (absent from libc++ 14, the web build's standard library): memcpy, which compilers turn
// into the same register move.
template <class To, class From>
To bits_of(const From& v) {
    static_assert(sizeof(To) == sizeof(From));
    To t;
    std::memcpy(&t, &v, sizeof t);
    return t;
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
    for (int i = 0; i < n; ++i) top = std::max(top, bits_of<Bits>(v[i]) & mask);
    run.top = top;
    run.clamped += clamped;
    run.bad += bad;
}

}  // namespace

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
    // Statistics count the faces and cells this grid owns (all of them unless it is a block): faces
    // [fi0, fi1) of a row, x-faces of cell rows [oj0, oj1), y-face rows [fj0, fj1); the others go to `halo`.
    const GridBlock& b = m_block;
    const int oi0 = b.own_i0, oi1 = b.own_i1, oj0 = b.own_j0, oj1 = b.own_j1;
    const int fi0 = oi0, fi1 = oi1 + (oi1 == nx ? 1 : 0), fj0 = oj0, fj1 = oj1 + (oj1 == ny ? 1 : 0);
    // faces() on the run [first, first + n) of a row's faces, split at the owned range [lo, hi).
    auto split = [&](int first, int n, int lo, int hi, Acc& own, Acc& halo, auto&& run) {
        const int a = std::clamp(lo, first, first + n), e = std::clamp(hi, a, first + n);
        if (a > first) run(first, a - first, halo);
        run(a, e - a, own);
        if (first + n > e) run(e, first + n - e, halo);
    };
    const std::size_t rows = std::size_t(ny + 1);
    const Acc total = parallel_reduce_blocks(
        exec, rows, Acc{},
        [&](std::size_t j0, std::size_t j1) {
            Acc acc, halo;
            for (int j = int(j0); j < int(j1); ++j) {
                if (j < ny) {
                    Real* u = &g.u[g.uface(0, j)];
                    const std::size_t c0 = g.cell(0, j);
                    Acc& row = j >= oj0 && j < oj1 ? acc : halo;
                    split(1, nx - 1, fi0, fi1, row, halo, [&](int f, int n, Acc& to) {
                        faces(u + f, h + c0 + f - 1, h + c0 + f, H + c0 + f - 1, H + c0 + f, solid + c0 + f - 1, solid + c0 + f, n, ax, to);
                    });
                    // Open: the radiation condition u_t + c u_n = 0 at the border face (c = sqrt(g h)
                    // of the border cell), upwind: waves leave, a steady flow keeps its speed.
                    const Real sl = std::min(Real(1), std::sqrt(G * h[c0]) * dtdx);
                    const Real sr = std::min(Real(1), std::sqrt(G * h[c0 + nx - 1]) * dtdx);
                    u[0] = open[0] && !solid[c0] ? u[0] + sl * ((nx > 1 ? u[1] : u[0]) - u[0]) : Real(0);
                    u[nx] = open[1] && !solid[c0 + nx - 1] ? u[nx] + sr * ((nx > 1 ? u[nx - 1] : u[nx]) - u[nx]) : Real(0);
                    if (fi0 == 0) row.speed = std::max(row.speed, std::abs(u[0]));
                    if (fi1 == nx + 1) row.speed = std::max(row.speed, std::abs(u[nx]));
                    Bits top = 0;
                    std::size_t bad = 0;
                    for (int i = oi0; i < oi1; ++i) top = std::max(top, bits_of<Bits>(h[c0 + i]));  // h >= 0
                    for (int i = oi0; i < oi1; ++i) bad += (h[c0 + i] <= big) ? 0 : 1;
                    Real d;
                    std::memcpy(&d, &top, sizeof(d));
                    row.depth = std::max(row.depth, d);
                    if (bad) row.nan_probe = std::numeric_limits<Real>::quiet_NaN();
                }
                Real* w = &g.w[g.wface(0, j)];
                Acc& wrow = j >= fj0 && j < fj1 ? acc : halo;
                if (j > 0 && j < ny) {
                    const std::size_t lo = g.cell(0, j - 1), hi = g.cell(0, j);
                    split(0, nx, oi0, oi1, wrow, halo, [&](int f, int n, Acc& to) {
                        faces(w + f, h + lo + f, h + hi + f, H + lo + f, H + hi + f, solid + lo + f, solid + hi + f, n, ay, to);
                    });
                } else if (open[j == 0 ? 2 : 3] && ny > 1) {
                    const Real* inner = &g.w[g.wface(0, j == 0 ? 1 : ny - 1)];
                    const std::size_t c0 = g.cell(0, j == 0 ? 0 : ny - 1);
                    for (int i = 0; i < nx; ++i) {
                        const Real sg = std::min(Real(1), std::sqrt(G * h[c0 + i]) * dtdx);
                        w[i] = solid[c0 + i] ? Real(0) : w[i] + sg * (inner[i] - w[i]);
                        Acc& to = i >= oi0 && i < oi1 ? wrow : halo;
                        to.speed = std::max(to.speed, std::abs(w[i]));
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
    m_max_speed = double(total.speed);
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

template void ShallowWaterSolver<float>::integrate_velocity(float, const ExecContext&, ShallowWaterStats&);
template void ShallowWaterSolver<double>::integrate_velocity(double, const ExecContext&, ShallowWaterStats&);

template void ShallowWaterSolver<float>::close_walls(const ExecContext&);
template void ShallowWaterSolver<double>::close_walls(const ExecContext&);

}  // namespace eddy
