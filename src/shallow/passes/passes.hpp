// Private to the shallow-water passes (src/shallow/passes/*.cpp): the row loop every pass runs on, the
// upwind row kernel that two advection schemes share, and the check that lets them skip an empty ink field.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "eddy/exec.hpp"

namespace eddy::shallow_detail {

// Rows [0, n) in tasks of `rows` rows: f(j0, j1).
template <class F>
void for_rows(const ExecContext& exec, int n, int rows, F&& f) {
    parallel_blocks(exec, std::size_t(n), [&](std::size_t b, std::size_t e) { f(int(b), int(e)); }, std::size_t(rows));
}

// Whether every value of `v` is +0 (no ink anywhere, the common case): the advection passes then leave
// the ink as it is. Advecting +0 everywhere gives +0 everywhere (upwind_cell: q - k (+-0) is +0; the
// semi-Lagrangian blend likewise), so skipping it keeps the bits; a -0 or a NaN counts as ink.
template <class Real>
bool ink_idle(const ExecContext& exec, const std::vector<Real>& v) {
    return parallel_reduce_blocks(
        exec, v.size(), true,
        [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
                if (v[i] != Real(0) || std::signbit(v[i])) return false;
            return true;
        },
        [](bool a, bool b) { return a && b; });
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

}  // namespace eddy::shallow_detail
