// Scene -> particles: fluid blocks on a lattice of spacing 2r, walls as layers of boundary particles.
#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/scene.hpp"

namespace eddy {

namespace {

constexpr double kPi = std::numbers::pi;

// Coordinates along one axis of a box: the lattice min + r + 2rk inside, plus `extra` layers at
// distances r, 3r, ... outside (container) each side. The last inner coordinate is max - r when the
// box is a whole number of spacings; otherwise the outer layers sit a little closer to it.
std::vector<double> axis_coords(double lo, double hi, double r, int outside_layers) {
    std::vector<double> c;
    for (int k = outside_layers; k >= 1; --k) c.push_back(lo - (2 * k - 1) * r);
    for (double x = lo + r; x <= hi - r + 1e-6 * r; x += 2 * r) c.push_back(x);
    for (int k = 1; k <= outside_layers; ++k) c.push_back(hi + (2 * k - 1) * r);
    return c;
}

template <int D>
bool inside_shape(const BoundarySpec& b, const Vec<D>& x, float margin = 0.0f) {
    if (b.shape == "box") {
        for (int a = 0; a < D; ++a)
            if (x[a] < b.min[a] - margin || x[a] > b.max[a] + margin) return false;
        return true;
    }
    const Vec<D> c = from_array<D>(b.center);
    if constexpr (D == 3) {
        if (b.shape == "cylinder") {
            const float dx = x[0] - c[0], dz = x[2] - c[2];
            return std::sqrt(dx * dx + dz * dz) <= b.radius + margin && x[1] >= c[1] - margin &&
                   x[1] <= c[1] + b.height + margin;
        }
    }
    return norm(x - c) <= b.radius + margin;
}

// Evenly spaced points on a circle of radius R about c (2D) or in the plane y = y0 (3D).
template <int D>
void ring(std::vector<Vec<D>>& out, const Vec<D>& c, double R, double spacing, double y0 = 0.0) {
    if (R <= 1e-9) {
        Vec<D> p = c;
        if constexpr (D == 3) p[1] = static_cast<float>(y0);
        out.push_back(p);
        return;
    }
    const int n = std::max(3, static_cast<int>(std::lround(2.0 * kPi * R / spacing)));
    for (int i = 0; i < n; ++i) {
        const double a = 2.0 * kPi * i / n;
        Vec<D> p = c;
        if constexpr (D == 2) {
            p[0] = static_cast<float>(c[0] + R * std::cos(a));
            p[1] = static_cast<float>(c[1] + R * std::sin(a));
        } else {
            p[0] = static_cast<float>(c[0] + R * std::cos(a));
            p[1] = static_cast<float>(y0);
            p[2] = static_cast<float>(c[2] + R * std::sin(a));
        }
        out.push_back(p);
    }
}

// Fibonacci spiral on a sphere of radius R: n = 4 pi R^2 / spacing^2 nearly uniform points.
void sphere_shell(std::vector<Vec3>& out, const Vec3& c, double R, double spacing) {
    if (R <= 1e-9) {
        out.push_back(c);
        return;
    }
    const int n = std::max(4, static_cast<int>(std::lround(4.0 * kPi * R * R / (spacing * spacing))));
    const double golden = kPi * (3.0 - std::sqrt(5.0));
    for (int i = 0; i < n; ++i) {
        const double y = 1.0 - 2.0 * (i + 0.5) / n, rr = std::sqrt(std::max(0.0, 1.0 - y * y)), phi = golden * i;
        out.push_back(Vec3{{float(c[0] + R * rr * std::cos(phi)), float(c[1] + R * y), float(c[2] + R * rr * std::sin(phi))}});
    }
}

// A disc of radius R in the plane y = y0 as concentric rings of spacing s (3D cylinder caps).
void disc(std::vector<Vec3>& out, const Vec3& c, double R, double s, double y0) {
    const int rings = static_cast<int>(std::floor(R / s + 1e-6));
    for (int k = 0; k <= rings; ++k) ring<3>(out, c, k * s, s, y0);
    if (R - rings * s > 0.5 * s) ring<3>(out, c, R, s, y0);
}

template <int D>
std::vector<Vec<D>> sample_boundary(const BoundarySpec& b, double r, int layers) {
    std::vector<Vec<D>> pts;
    const double s = 2.0 * r;
    if (b.shape == "box") {
        std::vector<double> axes[D];
        for (int a = 0; a < D; ++a)
            axes[a] = b.solid ? axis_coords(b.min[a], b.max[a], r, 0) : axis_coords(b.min[a], b.max[a], r, layers);
        std::size_t idx[D] = {};
        while (true) {
            Vec<D> p;
            for (int a = 0; a < D; ++a) p[a] = static_cast<float>(axes[a][idx[a]]);
            if (b.solid) {
                // Keep the outer layers of the solid: depth below the surface less than 2r per layer.
                double depth = 1e300;
                for (int a = 0; a < D; ++a) depth = std::min({depth, p[a] - b.min[a], b.max[a] - p[a]});
                if (depth < 2.0 * r * layers - 1e-6 * r) pts.push_back(p);
            } else {
                bool outside = false, above_top = p[1] > b.max[1];
                for (int a = 0; a < D; ++a) outside = outside || p[a] < b.min[a] || p[a] > b.max[a];
                if (outside && !(b.open_top && above_top)) pts.push_back(p);
            }
            int a = 0;
            while (a < D && ++idx[a] == axes[a].size()) idx[a++] = 0;
            if (a == D) break;
        }
    } else if (b.shape == "circle" || b.shape == "sphere") {
        const Vec<D> c = from_array<D>(b.center);
        for (int layer = 0; layer < layers; ++layer) {
            const double R = b.solid ? b.radius - (2 * layer + 1) * r : b.radius + (2 * layer + 1) * r;
            if (R <= 0.0) {
                if (layer == 0) pts.push_back(c);  // a solid smaller than a particle: one particle
                break;
            }
            if constexpr (D == 2) ring<2>(pts, c, R, s);
            else sphere_shell(pts, c, R, s);
        }
    } else if constexpr (D == 3) {  // cylinder container, axis y
        const Vec3 c = from_array<3>(b.center);
        const double y_lo = b.center[1], y_hi = b.center[1] + b.height;
        for (int layer = 0; layer < layers; ++layer) {
            const double R = b.radius + (2 * layer + 1) * r;
            for (double y = y_lo + r; y <= y_hi - r + 1e-6 * r; y += s) ring<3>(pts, c, R, s, y);
            // Caps: discs out to the outer wall layer, `layers` layers below (and above) the fluid.
            const double cap = b.radius + (2 * layers - 1) * r;
            disc(pts, c, cap, s, y_lo - (2 * layer + 1) * r);
            if (!b.open_top) disc(pts, c, cap, s, y_hi + (2 * layer + 1) * r);
            else ring<3>(pts, c, R, s, y_hi + r);  // a rim above the open top
        }
    }
    return pts;
}

}  // namespace

template <int D>
ParticleSet<D> build_fluid(const Scene& s, std::size_t max_particles) {
    const double r = s.particle_radius;
    ParticleSet<D> out;
    std::vector<const BoundarySpec*> containers, solids;
    for (const auto& b : s.boundaries) (b.solid ? solids : containers).push_back(&b);
    for (std::size_t fi = 0; fi < s.fluids.size(); ++fi) {
        const FluidSpec& f = s.fluids[fi];
        const std::string where = fmt::format("{}: fluids[{}]", s.where(), fi);
        // Lattice bounds and the test for "inside this fluid shape".
        double lo[3], hi[3];
        for (int a = 0; a < D; ++a) {
            lo[a] = f.shape == "box" ? f.min[a] : f.center[a] - f.radius;
            hi[a] = f.shape == "box" ? f.max[a] : f.center[a] + f.radius;
        }
        std::size_t count[3] = {1, 1, 1};
        double estimate = 1.0;
        for (int a = 0; a < D; ++a) {
            const double n = std::floor((hi[a] - lo[a] - 2.0 * r) / (2.0 * r) + 1e-6) + 1.0;
            count[a] = n > 0 ? static_cast<std::size_t>(n) : 0;
            estimate *= std::max(n, 0.0);
        }
        if (estimate + double(out.size()) > double(max_particles))
            throw InputError(fmt::format("{} would create about {:.0f} particles, more than --max-particles {}", where,
                                         estimate + double(out.size()), max_particles));
        // Earlier blocks: a later block does not put particles where one already is.
        NeighborGrid<D> earlier(static_cast<float>(r));
        ExecContext serial(1);
        const std::size_t before = out.size();
        if (before) earlier.build(out.position, serial);
        const Vec<D> vel = from_array<D>(f.velocity);
        const Vec<D> centre = from_array<D>(f.center);
        std::size_t made = 0, outside = 0;
        std::size_t idx[3] = {0, 0, 0};
        if (count[0] && count[1] && (D == 2 || count[2])) {
            while (true) {
                Vec<D> p;
                for (int a = 0; a < D; ++a) p[a] = static_cast<float>(lo[a] + r + 2.0 * r * idx[a]);
                bool keep = f.shape == "box" || norm(p - centre) <= f.radius - r + 1e-6 * r;
                if (keep && !containers.empty()) {
                    // Centres at least r inside a container: a block reaching past a wall is clipped
                    // there (a box of water filling the lower half of a round tank).
                    bool in = false;
                    const float margin = -0.9999f * static_cast<float>(r);
                    for (const auto* b : containers) in = in || inside_shape<D>(*b, p, margin);
                    if (!in) {
                        keep = false;
                        ++outside;
                    }
                }
                for (const auto* b : solids) keep = keep && !inside_shape<D>(*b, p, static_cast<float>(r));
                if (keep && before) {
                    bool dup = false;
                    earlier.for_each_neighbor(p, static_cast<float>(r), [&](std::uint32_t) { dup = true; });
                    keep = !dup;
                }
                if (keep) {
                    out.push_back(p, vel);
                    ++made;
                }
                int a = 0;
                while (a < D && ++idx[a] == count[a]) idx[a++] = 0;
                if (a == D) break;
            }
        }
        if (made == 0 && outside > 0)
            throw InputError(fmt::format("{} lies outside every container", where));
        if (made == 0)
            throw InputError(fmt::format("{} holds no particle: it is smaller than one particle (2r = {:g} m) or "
                                         "entirely inside solids or other fluids",
                                         where, 2.0 * r));
    }
    return out;
}

template <int D>
BoundarySet<D> build_boundary(const Scene& s, int layers) {
    BoundarySet<D> out;
    for (std::size_t i = 0; i < s.boundaries.size(); ++i) {
        const BoundarySpec& b = s.boundaries[i];
        for (const auto& p : sample_boundary<D>(b, s.particle_radius, layers)) out.push_back(p, static_cast<std::uint16_t>(i));
        BoundaryMotion<D> m;
        m.pivot = from_array<D>(b.pivot);
        Vec3 axis = from_array<3>(b.axis);
        if (D == 3) axis *= 1.0f / norm(axis);
        m.axis = axis;
        m.angular_velocity = static_cast<float>(b.angular_velocity);
        out.motions.push_back(m);
    }
    return out;
}

template ParticleSet<2> build_fluid<2>(const Scene&, std::size_t);
template ParticleSet<3> build_fluid<3>(const Scene&, std::size_t);
template BoundarySet<2> build_boundary<2>(const Scene&, int);
template BoundarySet<3> build_boundary<3>(const Scene&, int);

}  // namespace eddy
