// Advection: momentum conservative (Stelling & Duinmeijer 2003).
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

namespace {

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

}  // namespace

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
    const bool no_ink = ink_idle(exec, g.ink);
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
            if (j < ny && !no_ink) {
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
    if (!no_ink) g.ink.swap(m_c);
}

template void ShallowWaterSolver<float>::advect_conservative(float, const ExecContext&);
template void ShallowWaterSolver<double>::advect_conservative(double, const ExecContext&);

}  // namespace eddy
