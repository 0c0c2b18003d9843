// eddy-view: the heightfield the viewer draws, independent of any solver. A shallow-water solver hands
// the viewer a HeightfieldView of its cell-centred fields (terrain H, depth h, ink); the viewer draws
// shaded terrain and a translucent water surface eta = H + h coloured by depth and tinted by ink.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace eddy::view {

/// Cell-centred fields of an nx x ny grid of square cells of size dx (m), row-major (index i + nx j;
/// i along x, j along z in the 3D view, y is up). Cell (i, j) has its centre at ((i + 0.5) dx, (j + 0.5) dx).
struct HeightfieldView {
    int nx = 0, ny = 0;
    double dx = 1.0;                   ///< Cell size (m)
    std::span<const float> terrain;    ///< Bed height H (m), nx * ny
    std::span<const float> depth;      ///< Water depth h >= 0 (m), nx * ny; h ~ 0: dry
    std::span<const float> ink;        ///< Ink concentration in [0, 1], nx * ny (may be empty)
    bool valid() const {
        const std::size_t n = std::size_t(nx) * std::size_t(ny);
        return nx >= 2 && ny >= 2 && dx > 0 && terrain.size() == n && depth.size() == n && (ink.empty() || ink.size() == n);
    }
};

/// Owning storage for a HeightfieldView (what the simulation thread copies for the window).
struct Heightfield {
    int nx = 0, ny = 0;
    double dx = 1.0;
    std::vector<float> terrain, depth, ink;
    HeightfieldView view() const { return {nx, ny, dx, terrain, depth, ink}; }
};

/// A synthetic "shallow water" stand-in for testing the drawing and the interaction without a solver:
/// a basin with a hill and a ramp, water at rest level, linear waves (damped wave equation on eta, the
/// depth clamped at 0 over dry land) and ink that diffuses. Not physics eddy claims anything about.
class DemoHeightfield {
public:
    explicit DemoHeightfield(int n = 128);
    void step(double dt);
    /// Adds a Gaussian bump of water (m) or of ink at (x, z) (m) of radius `radius` (m).
    void drop_water(double x, double z, double radius, double amount);
    void drop_ink(double x, double z, double radius);
    const Heightfield& field() const { return m_f; }
    double time() const { return m_t; }

private:
    Heightfield m_f;
    std::vector<float> m_vel;  // d eta / dt
    double m_t = 0.0;
};

}  // namespace eddy::view
