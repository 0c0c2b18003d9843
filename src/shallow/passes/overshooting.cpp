// Overshooting reduction at wave edges (paper sec. 2.2).
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

}  // namespace

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
            // Cells under floating bodies (displaced > 0) count as obstacles here: their surface is the
            // body's pressure head, not a wave, and a transfer there would be amplified (1 + k) times by
            // the displacement (body_displacement.cpp) into a checkerboard.
            const Real* disp = g.displaced.empty() ? nullptr : &g.displaced[c0];
            for (int i = 0; i < nx; ++i) {
                hr[i] = g.depth[c0 + i];
                e[i] = g.solid[c0 + i] || (disp && disp[i] > 0) ? nan : g.terrain[c0 + i] + g.depth[c0 + i];
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

template void ShallowWaterSolver<float>::reduce_overshooting(const ExecContext&);
template void ShallowWaterSolver<double>::reduce_overshooting(const ExecContext&);

}  // namespace eddy
