// Water and ink sources, random drops (before advection in a step).
// (A pass of ShallowWaterSolver::step: include/eddy/shallow_water.hpp has the equations of all of them.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eddy/shallow_water.hpp"
#include "shallow/passes/passes.hpp"

namespace eddy {

namespace {
std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
double uniform01(std::uint64_t& s) { return double(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }
}  // namespace

template <class Real>
void ShallowWaterSolver<Real>::add_drop(double x, double y, double radius, double height, double ink) {
    auto& g = m_g;
    const double dx = g.dx;
    // (x, y) and the cell centres in the whole grid's coordinates (a block: m_block), the cells this grid has.
    const GridBlock& b = m_block;
    const int i0 = std::max(b.i0, int(std::floor((x - radius) / dx))), i1 = std::min(b.i0 + g.nx - 1, int(std::ceil((x + radius) / dx)));
    const int j0 = std::max(b.j0, int(std::floor((y - radius) / dx))), j1 = std::min(b.j0 + g.ny - 1, int(std::ceil((y + radius) / dx)));
    double added = 0.0;
    for (int j = j0; j <= j1; ++j) {
        for (int i = i0; i <= i1; ++i) {
            const std::size_t c = g.cell(i - b.i0, j - b.j0);
            if (g.solid[c]) continue;
            const double r = std::hypot((i + 0.5) * dx - x, (j + 0.5) * dx - y);
            if (r >= radius) continue;
            const double bump = 0.5 * (1.0 + std::cos(M_PI * r / radius));
            const Real before = g.depth[c];
            g.depth[c] += Real(height * bump);
            if (owns(i, j)) added += double(g.depth[c]) - double(before);
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
    const GridBlock& b = m_block;
    // f(cell, owned) for the cells of this grid whose centre (whole-grid coordinates) lies in the source.
    auto cells_of = [&](const GridSource& s, auto&& f) {
        const int i0 = std::max(b.i0, int(std::ceil(s.min[0] / dx - 0.5))), i1 = std::min(b.i0 + g.nx - 1, int(std::floor(s.max[0] / dx - 0.5)));
        const int j0 = std::max(b.j0, int(std::ceil(s.min[1] / dx - 0.5))), j1 = std::min(b.j0 + g.ny - 1, int(std::floor(s.max[1] / dx - 0.5)));
        for (int j = j0; j <= j1; ++j)
            for (int i = i0; i <= i1; ++i) {
                const std::size_t c = g.cell(i - b.i0, j - b.j0);
                if (!g.solid[c]) f(c, owns(i, j));
            }
    };
    // The part of [t0, t1) during which a source is on.
    auto active = [&](double start, double end) { return std::max(0.0, std::min(t1, end) - std::max(t0, start)); };
    const double before = m_inflow;
    m_added_depth = 0.0;
    for (const auto& s : m_scene.water_sources) {
        const double on = active(s.start, s.end);
        if (on <= 0.0) continue;
        m_added_depth = std::max(m_added_depth, s.rate * on);
        cells_of(s, [&](std::size_t c, bool owned) {
            const Real old = g.depth[c];
            g.depth[c] = std::max(Real(0), Real(g.depth[c] + s.rate * on));
            if (owned) m_inflow += (double(g.depth[c]) - double(old)) * dx * dx;
        });
    }
    for (const auto& s : m_scene.ink_sources) {
        const double on = active(s.start, s.end);
        if (on > 0.0) cells_of(s, [&](std::size_t c, bool) { g.ink[c] += Real(s.rate * on); });
    }
    for (const auto& d : m_scene.drops) {
        // Drop k falls at start + (k + 0.5) / rate; its position comes from (seed, k).
        const double a = std::max(0.0, t0 - d.start) * d.rate, b = std::max(0.0, std::min(t1, d.end) - d.start) * d.rate;
        for (auto k = std::uint64_t(std::ceil(a - 0.5)); double(k) + 0.5 < b; ++k) {
            if (double(k) + 0.5 < a) continue;
            std::uint64_t state = d.seed * 0x632BE59BD9B4E019ull + k;
            const double x = uniform01(state) * m_block.global_nx * dx, y = uniform01(state) * m_block.global_ny * dx;
            add_drop(x, y, d.radius, d.height, d.ink);  // raises the depth bound itself
        }
    }
    st.inflow = m_inflow - before;
}

template void ShallowWaterSolver<float>::add_drop(double, double, double, double, double);
template void ShallowWaterSolver<double>::add_drop(double, double, double, double, double);

template void ShallowWaterSolver<float>::apply_sources(double, ShallowWaterStats&);
template void ShallowWaterSolver<double>::apply_sources(double, ShallowWaterStats&);

}  // namespace eddy
