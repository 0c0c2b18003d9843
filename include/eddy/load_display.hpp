// What a front end shows of the fluid's loads on the walls (issue 28; the viewer's loads panel and the
// page's, issue 43): the mean over the last steps (RecentLoads), each object's pivot where it is now, the
// fluid's weight that scales the arrow, and the arrow itself as line segments. Pure functions of the
// simulation's numbers (no GL), shared by eddy-view and the page so that both show the same numbers.
//
// The arrow's scale: a force equal to the fluid's weight is drawn `reference` metres long (the front ends pass
// a quarter of the scene's largest extent), so a tank carrying its water shows an arrow a quarter of the
// scene long, pointing down. Forces beyond kArrowMaxWeights weights (a splash hitting a wall, WCSPH's
// pressure spikes) are drawn at that length, so the arrow never leaves the picture.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <deque>
#include <numbers>
#include <string>
#include <vector>

#include "eddy/simulation.hpp"
#include "eddy/wall_loads.hpp"

namespace eddy {

/// The walls' loads of the last steps, for the snapshot's mean: the steps covering the last kWindow
/// seconds of simulated time (at most kMaxSteps of them), weighted by dt as eddy run's forces.csv. A
/// window of simulated steps, not "since the last snapshot": a single step's load is noisy (WCSPH's
/// pressure waves swing a tank's floor load by several percent) and how many steps a snapshot covers
/// depends on the machine's speed, so the shown value would too.
class RecentLoads {
public:
    static constexpr double kWindow = 0.1;          ///< (s)
    static constexpr std::size_t kMaxSteps = 4096;  ///< a cap on memory when dt is tiny
    /// One step's loads (per object) and its length dt (s). A step with loads of another count of
    /// objects than those kept starts afresh.
    void add(const std::vector<ObjectLoad>& load, double dt) {
        if (!m_steps.empty() && m_steps.back().load.size() != load.size()) clear();
        m_steps.push_back({dt, load});
        m_time += dt;
        while (m_steps.size() > 1 && (m_time - m_steps.front().dt >= kWindow || m_steps.size() > kMaxSteps)) {
            m_time -= m_steps.front().dt;
            m_steps.pop_front();
        }
    }
    /// The dt-weighted mean over the steps kept; empty when there are none.
    std::vector<ObjectLoad> mean() const {
        if (m_steps.empty()) return {};
        LoadAverage avg;
        for (const auto& s : m_steps) avg.add(s.load, s.dt);
        return avg.mean(m_steps.back().load.size());
    }
    std::size_t steps() const { return m_steps.size(); }
    void clear() {
        m_steps.clear();
        m_time = 0.0;
    }

private:
    struct Step {
        double dt;
        std::vector<ObjectLoad> load;
    };
    std::deque<Step> m_steps;
    double m_time = 0.0;  // sum of the kept steps' dt (s)
};

/// The loads panel's name of boundary object k: "k: SHAPE (container)" or "k: SHAPE (obstacle)".
inline std::string load_object_label(std::size_t k, const BoundarySpec& b) {
    return std::to_string(k) + ": " + b.shape + (b.solid ? " (obstacle)" : " (container)");
}

/// Where each boundary object's pivot is at time t (s), x, y, z (z = 0 in 2D), as WallLoadGather::begin
/// places it: the torques are about these points.
template <int D>
std::vector<std::array<float, 3>> load_pivots(const BoundarySet<D>& b, double t) {
    std::vector<std::array<float, 3>> out(b.motions.size());
    for (std::size_t o = 0; o < b.motions.size(); ++o) {
        const BoundaryMotion<D>& m = b.motions[o];
        const Vec<D> c = m.moving() ? m.pose(t).apply(m.pivot) : m.pivot;
        for (int a = 0; a < 3; ++a) out[o][a] = a < D ? c[a] : 0.0f;
    }
    return out;
}

/// The fluid's weight (N; N/m in 2D): its particles' mass times |g| (9.81 m/s^2 without gravity), the
/// arrow's unit.
template <int D>
double fluid_weight(const ParticleSimulation<D>& sim) {
    double g2 = 0.0;
    for (double g : sim.scene.gravity) g2 += g * g;
    const double g = g2 > 0.0 ? std::sqrt(g2) : 9.81;
    return double(sim.fluid.size()) * double(sim.fluid.mass) * g;
}

/// Longest arrow, in fluid weights.
inline constexpr double kArrowMaxWeights = 4.0;

/// The arrow's length (m) for a force of magnitude `force` (N; N/m in 2D) when the fluid weighs
/// `weight` (same unit) and a weight is `reference` metres: force / weight * reference, at most
/// kArrowMaxWeights * reference. 0 when a number is not finite or weight, reference <= 0.
inline double arrow_length(double force, double weight, double reference) {
    if (!std::isfinite(force) || !std::isfinite(weight) || !std::isfinite(reference) || weight <= 0.0 ||
        reference <= 0.0)
        return 0.0;
    return std::min(std::abs(force) / weight, kArrowMaxWeights) * reference;
}

/// The arrow from `pivot` (m) along `force` (its length: arrow_length), as line segments: pairs of
/// points, x, y, z each: the shaft, then the two strokes of the head (a fifth of the length, at 25
/// degrees to the shaft). In 2D (dimension 2, z = 0) the head lies in the xy plane; in 3D in the plane
/// of the shaft and the world axis least aligned with it. Empty when the length is 0 (no force, or
/// nothing to scale it by).
inline std::vector<float> load_arrow(const std::array<double, 3>& pivot, const std::array<double, 3>& force,
                                     double weight, double reference, int dimension) {
    const double f = std::sqrt(force[0] * force[0] + force[1] * force[1] + (dimension == 3 ? force[2] * force[2] : 0.0));
    const double len = f > 0.0 ? arrow_length(f, weight, reference) : 0.0;
    if (!(len > 0.0)) return {};
    std::array<double, 3> d{force[0] / f, force[1] / f, dimension == 3 ? force[2] / f : 0.0};
    // A unit vector perpendicular to d: in 2D d turned by 90 degrees; in 3D d x e, e the axis least along d.
    std::array<double, 3> n{-d[1], d[0], 0.0};
    if (dimension == 3) {
        int k = 0;
        for (int a = 1; a < 3; ++a)
            if (std::abs(d[a]) < std::abs(d[k])) k = a;
        std::array<double, 3> e{0.0, 0.0, 0.0};
        e[k] = 1.0;
        n = {d[1] * e[2] - d[2] * e[1], d[2] * e[0] - d[0] * e[2], d[0] * e[1] - d[1] * e[0]};
        const double nn = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (double& c : n) c /= nn;
    }
    const double head = 0.2 * len, c = head * std::cos(25.0 * std::numbers::pi / 180.0), s = head * std::sin(25.0 * std::numbers::pi / 180.0);
    std::array<double, 3> tip{}, left{}, right{};
    for (int a = 0; a < 3; ++a) {
        tip[a] = pivot[a] + len * d[a];
        left[a] = tip[a] - c * d[a] + s * n[a];
        right[a] = tip[a] - c * d[a] - s * n[a];
    }
    std::vector<float> out;
    auto seg = [&](const std::array<double, 3>& a, const std::array<double, 3>& b) {
        for (int k = 0; k < 3; ++k) out.push_back(static_cast<float>(a[k]));
        for (int k = 0; k < 3; ++k) out.push_back(static_cast<float>(b[k]));
    };
    seg(pivot, tip);
    seg(tip, left);
    seg(tip, right);
    return out;
}

/// 2D: the segments of `lines` (pairs of points, x, y, z each) as quads `width` metres wide (two
/// triangles each, x, y, z per corner), for a line thicker than GL's one pixel.
inline std::vector<float> thick_lines_2d(const std::vector<float>& lines, float width) {
    std::vector<float> tris;
    for (std::size_t k = 0; k + 5 < lines.size(); k += 6) {
        const float ax = lines[k], ay = lines[k + 1], bx = lines[k + 3], by = lines[k + 4];
        const float dx = bx - ax, dy = by - ay, l = std::sqrt(dx * dx + dy * dy);
        if (!(l > 0.0f)) continue;
        const float nx = -dy / l * 0.5f * width, ny = dx / l * 0.5f * width;
        const float q[4][2] = {{ax + nx, ay + ny}, {ax - nx, ay - ny}, {bx - nx, by - ny}, {bx + nx, by + ny}};
        for (int c : {0, 1, 2, 0, 2, 3}) tris.insert(tris.end(), {q[c][0], q[c][1], 0.0f});
    }
    return tris;
}

}  // namespace eddy
