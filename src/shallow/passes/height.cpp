// Height integration (paper eq. 6) with the depth limiter (sec. 2.1.5).
// (A pass of ShallowWaterSolver::step: include/eddy/shallow_water.hpp has the equations of all of them.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eddy/shallow_water.hpp"
#include "shallow/passes/passes.hpp"

namespace eddy {

using namespace shallow_detail;

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
        // Owned border faces only (a block's halo rows belong to its neighbours; its inner borders are closed).
        const GridBlock& b = m_block;
        for (int j = b.own_j0; j < b.own_j1; ++j) {
                const Real h0 = xface(0, j, U(0, j), d);
                out -= double(flux(U(0, j), h0, d));
                const Real h1 = xface(nx, j, U(nx, j), d);
                out += double(flux(U(nx, j), h1, d));
            }
        for (int i = b.own_i0; i < b.own_i1; ++i) {
                const Real h0 = yface(i, 0, W(i, 0), d);
                if (b.own_j0 == 0) out -= double(flux(W(i, 0), h0, d));
                const Real h1 = yface(i, ny, W(i, ny), d);
                if (b.own_j1 == ny) out += double(flux(W(i, ny), h1, d));
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
    const GridBlock& ob = m_block;
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
                if (j >= ob.own_j0 && j < ob.own_j1) border += double(fx[nx]) - double(fx[0]);
            }
            // Owned border faces only, as in integrate_height.
            if (j0 == 0 && ob.own_j0 == 0)
                for (int i = ob.own_i0; i < ob.own_i1; ++i) border -= double(fy[std::size_t(i)]);
            if (j1 == ny && ob.own_j1 == ny)
                for (int i = ob.own_i0; i < ob.own_i1; ++i) border += double(fy[std::size_t(j1 - j0) * nx + i]);
            return border;
        },
        [](double a, double b) { return a + b; }, std::size_t(s.rows_per_task));
    st.outflow = out * double(dt) * double(g.dx);
    m_outflow += st.outflow;
    g.depth.swap(m_c);
}

template void ShallowWaterSolver<float>::integrate_height(float, const ExecContext&, ShallowWaterStats&);
template void ShallowWaterSolver<double>::integrate_height(double, const ExecContext&, ShallowWaterStats&);

template void ShallowWaterSolver<float>::integrate_height_fast(float, const ExecContext&, ShallowWaterStats&);
template void ShallowWaterSolver<double>::integrate_height_fast(double, const ExecContext&, ShallowWaterStats&);

}  // namespace eddy
