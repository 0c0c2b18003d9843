// eddy-view: the synthetic heightfield (a test pattern for the grid renderer, not a solver).
#include "heightfield.hpp"

#include <algorithm>
#include <cmath>

namespace eddy::view {

namespace {
constexpr double kLevel = 0.12;  // rest water level (m)
constexpr double kG = 9.81;
}  // namespace

DemoHeightfield::DemoHeightfield(int n) {
    n = std::clamp(n, 8, 2048);
    m_f.nx = m_f.ny = n;
    m_f.dx = 2.0 / n;  // a 2 m x 2 m basin
    const std::size_t cells = std::size_t(n) * std::size_t(n);
    m_f.terrain.resize(cells);
    m_f.depth.resize(cells);
    m_f.ink.assign(cells, 0.0f);
    m_vel.assign(cells, 0.0f);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const double x = (i + 0.5) * m_f.dx, z = (j + 0.5) * m_f.dx;
            // A hill island, a ramp (beach) along x = 2, gentle bumps on the floor.
            const double hill = 0.2 * std::exp(-((x - 0.8) * (x - 0.8) + (z - 1.2) * (z - 1.2)) / 0.03);
            const double ramp = std::max(0.0, (x - 1.4) * 0.35);
            const double bumps = 0.01 * std::sin(7.0 * x) * std::cos(5.0 * z);
            const float H = static_cast<float>(0.02 + hill + ramp + bumps);
            m_f.terrain[i + std::size_t(n) * j] = H;
            m_f.depth[i + std::size_t(n) * j] = static_cast<float>(std::max(0.0, kLevel - H));
        }
    drop_water(0.4, 0.5, 0.15, 0.05);
    drop_ink(1.0, 0.7, 0.15);
    drop_ink(0.45, 1.5, 0.1);
}

void DemoHeightfield::drop_water(double x, double z, double radius, double amount) {
    const int n = m_f.nx;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const double dx = (i + 0.5) * m_f.dx - x, dz = (j + 0.5) * m_f.dx - z;
            const double w = std::exp(-(dx * dx + dz * dz) / (radius * radius));
            float& h = m_f.depth[i + std::size_t(n) * j];
            h = static_cast<float>(std::max(0.0, h + amount * w));
        }
}

void DemoHeightfield::drop_ink(double x, double z, double radius) {
    const int n = m_f.nx;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const double dx = (i + 0.5) * m_f.dx - x, dz = (j + 0.5) * m_f.dx - z;
            const double w = std::exp(-(dx * dx + dz * dz) / (radius * radius));
            const std::size_t c = i + std::size_t(n) * j;
            if (m_f.depth[c] > 1e-4f) m_f.ink[c] = static_cast<float>(std::min(1.0, m_f.ink[c] + w));
        }
}

void DemoHeightfield::step(double dt) {
    const int n = m_f.nx;
    const double dx = m_f.dx;
    const double sub = 0.3 * dx / std::sqrt(kG * 0.3);
    const int steps = std::max(1, static_cast<int>(std::ceil(dt / sub)));
    const double h = dt / steps;
    std::vector<float> eta(m_f.depth.size()), ink2(m_f.ink.size());
    auto at = [n](int i, int j) { return std::size_t(i) + std::size_t(n) * std::size_t(j); };
    for (int s = 0; s < steps; ++s) {
        for (std::size_t c = 0; c < eta.size(); ++c) eta[c] = m_f.terrain[c] + m_f.depth[c];
        // Linear waves on the wet cells: eta_tt = g h lap(eta), a little damping; dry neighbours act as
        // walls (their eta is replaced by the cell's own).
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const std::size_t c = at(i, j);
                if (m_f.depth[c] <= 1e-4f) { m_vel[c] = 0.0f; continue; }
                auto nb = [&](int a, int b) {
                    if (a < 0 || b < 0 || a >= n || b >= n) return eta[c];
                    const std::size_t o = at(a, b);
                    return m_f.depth[o] > 1e-4f ? eta[o] : eta[c];
                };
                const double lap = (nb(i - 1, j) + nb(i + 1, j) + nb(i, j - 1) + nb(i, j + 1) - 4.0 * eta[c]) / (dx * dx);
                const double c2 = kG * std::min<double>(m_f.depth[c], 0.3);
                m_vel[c] = static_cast<float>((m_vel[c] + h * c2 * lap) * (1.0 - 0.4 * h));
            }
        for (std::size_t c = 0; c < eta.size(); ++c)
            m_f.depth[c] = static_cast<float>(std::max(0.0, m_f.depth[c] + h * m_vel[c]));
    }
    // Ink: explicit diffusion over the wet cells (stable for D dt / dx^2 <= 1/4).
    const double D = 0.2 * dx * dx / std::max(dt, 1e-9);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const std::size_t c = at(i, j);
            auto nb = [&](int a, int b) {
                if (a < 0 || b < 0 || a >= n || b >= n) return m_f.ink[c];
                return m_f.ink[at(a, b)];
            };
            const double lap = nb(i - 1, j) + nb(i + 1, j) + nb(i, j - 1) + nb(i, j + 1) - 4.0 * m_f.ink[c];
            ink2[c] = static_cast<float>(std::clamp(m_f.ink[c] + D * dt / (dx * dx) * lap * 0.5, 0.0, 1.0));
        }
    m_f.ink.swap(ink2);
    m_t += dt;
}

}  // namespace eddy::view
