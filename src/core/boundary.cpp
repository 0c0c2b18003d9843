#include "eddy/boundary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eddy/neighbors.hpp"

namespace eddy {

template <int D>
void BoundarySet<D>::push_back(const Vec<D>& x, std::uint16_t obj) {
    position.push_back(x);
    rest_position.push_back(x);
    velocity.push_back(Vec<D>::zero());
    psi.push_back(0.0f);
    object.push_back(obj);
}

template <int D>
std::size_t BoundarySet<D>::memory_bytes() const {
    return (position.capacity() + rest_position.capacity() + velocity.capacity()) * sizeof(Vec<D>) +
           psi.capacity() * sizeof(float) + object.capacity() * sizeof(std::uint16_t);
}

template <int D>
float double_layer_volume_correction(const CubicSpline<D>& kernel, float spacing) {
    if (!(spacing > 0.0f)) return 1.0f;
    // Lattice points within the support around the origin: all of them (full), and those of the two
    // wall layers y = 0 and y = -spacing (the origin is an inner-layer particle).
    double full = 0.0, wall = 0.0;
    for_each_lattice_offset<D>(spacing, kernel.h, [&](const Vec<D>& x) {
        const double w = kernel.value(x);
        full += w;
        const long layer = std::lround(x[1] / spacing);
        if (layer == 0 || layer == -1) wall += w;
    });
    return static_cast<float>(wall / full);
}

template <int D>
void compute_boundary_psi(BoundarySet<D>& b, const CubicSpline<D>& kernel, float rest_density, const ExecContext& exec,
                          float spacing) {
    if (b.empty()) return;
    const float gamma = double_layer_volume_correction(kernel, spacing);
    NeighborGrid<D> grid(kernel.h);
    grid.build(b.position, exec);
    parallel_for_each_index(exec, b.size(), [&](std::size_t i) {
        const Vec<D> xi = b.position[i];
        float sum = 0.0f;  // includes b itself (j == i: W(0))
        grid.for_each_neighbor(xi, kernel.h, [&](std::uint32_t j) { sum += kernel.value(xi - b.position[j]); });
        b.psi[i] = gamma * rest_density / sum;
    });
}

namespace {

template <int D>
bool inside_wall(const Wall<D>& w, const Vec<D>& x, float m) {
    switch (w.shape) {
        case Wall<D>::Shape::box:
            for (int a = 0; a < D; ++a)
                if (x[a] < w.lo[a] + m || x[a] > w.hi[a] - m) return false;
            return true;
        case Wall<D>::Shape::ball: return norm(x - w.center) <= w.radius - m;
        case Wall<D>::Shape::cylinder: {
            if constexpr (D == 3) {
                const float dx = x[0] - w.center[0], dz = x[2] - w.center[2];
                return std::sqrt(dx * dx + dz * dz) <= w.radius - m && x[1] >= w.center[1] + m &&
                       x[1] <= w.center[1] + w.height - m;
            }
            return false;
        }
    }
    return false;
}

// The point of the container at least m inside it that is nearest to x.
template <int D>
Vec<D> project_into(const Wall<D>& w, Vec<D> x, float m) {
    switch (w.shape) {
        case Wall<D>::Shape::box:
            for (int a = 0; a < D; ++a) x[a] = std::clamp(x[a], w.lo[a] + m, std::max(w.lo[a] + m, w.hi[a] - m));
            return x;
        case Wall<D>::Shape::ball: {
            const Vec<D> d = x - w.center;
            const float n = norm(d), R = std::max(0.0f, w.radius - m);
            return n > R && n > 0.0f ? w.center + d * (R / n) : x;
        }
        case Wall<D>::Shape::cylinder: {
            if constexpr (D == 3) {
                const float dx = x[0] - w.center[0], dz = x[2] - w.center[2], n = std::sqrt(dx * dx + dz * dz);
                const float R = std::max(0.0f, w.radius - m);
                if (n > R && n > 0.0f) {
                    x[0] = w.center[0] + dx * (R / n);
                    x[2] = w.center[2] + dz * (R / n);
                }
                x[1] = std::clamp(x[1], w.center[1] + m, std::max(w.center[1] + m, w.center[1] + w.height - m));
            }
            return x;
        }
    }
    return x;
}

// The point outside the solid (by m) nearest to x, when x is inside it.
template <int D>
Vec<D> push_out_of(const Wall<D>& w, Vec<D> x, float m) {
    if (w.shape == Wall<D>::Shape::box) {
        int best_axis = 0;
        float best = std::numeric_limits<float>::max(), target = 0.0f;
        for (int a = 0; a < D; ++a) {
            const float to_lo = x[a] - (w.lo[a] - m), to_hi = (w.hi[a] + m) - x[a];
            if (to_lo < best) { best = to_lo; best_axis = a; target = w.lo[a] - m; }
            if (to_hi < best) { best = to_hi; best_axis = a; target = w.hi[a] + m; }
        }
        x[best_axis] = target;
        return x;
    }
    const Vec<D> d = x - w.center;
    const float n = norm(d);
    if (n == 0.0f) {
        x[0] = w.center[0] + w.radius + m;  // exactly at the centre: any direction will do
        return x;
    }
    return w.center + d * ((w.radius + m) / n);
}

}  // namespace

template <int D>
bool keep_inside(Vec<D>& x, const std::vector<Wall<D>>& walls, float margin) {
    bool moved = false;
    bool any_container = false, inside = false;
    for (const auto& w : walls)
        if (!w.solid) {
            any_container = true;
            inside = inside || inside_wall(w, x, margin);
        }
    if (any_container && !inside) {
        Vec<D> best = x;
        float best_d = std::numeric_limits<float>::max();
        for (const auto& w : walls) {
            if (w.solid) continue;
            const Vec<D> p = project_into(w, x, margin);
            const float d = norm2(p - x);
            if (d < best_d) { best_d = d; best = p; }
        }
        x = best;
        moved = true;
    }
    for (const auto& w : walls) {
        if (!w.solid) continue;
        const bool in_solid = w.shape == Wall<D>::Shape::box ? inside_wall(Wall<D>{w.shape, false, w.lo - Vec<D>::filled(margin), w.hi + Vec<D>::filled(margin), w.center, 0, 0}, x, 0.0f)
                                                             : norm(x - w.center) < w.radius + margin;
        if (in_solid) {
            x = push_out_of(w, x, margin);
            moved = true;
        }
    }
    return moved;
}

namespace {
// Rodrigues' rotation of v about unit axis k by angle a.
inline Vec3 rotate(const Vec3& v, const Vec3& k, float a) {
    const float c = std::cos(a), s = std::sin(a);
    const Vec3 kxv = {{k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]}};
    return v * c + kxv * s + k * (dot(k, v) * (1.0f - c));
}
}  // namespace

template <int D>
void update_boundary_motion(BoundarySet<D>& b, double t, const ExecContext& exec) {
    if (!b.any_moving()) return;
    parallel_for_each_index(exec, b.size(), [&](std::size_t i) {
        const BoundaryMotion<D>& m = b.motions[b.object[i]];
        if (!m.moving()) return;
        // Angle from the rest pose in double: no drift over long runs.
        const float a = static_cast<float>(m.angular_velocity * t);
        const Vec<D> r0 = b.rest_position[i] - m.pivot;
        if constexpr (D == 2) {
            const float c = std::cos(a), s = std::sin(a);
            const Vec2 r = {{c * r0[0] - s * r0[1], s * r0[0] + c * r0[1]}};
            b.position[i] = m.pivot + r;
            b.velocity[i] = Vec2{{-r[1], r[0]}} * m.angular_velocity;  // omega x r
        } else {
            const Vec3 r = rotate(r0, m.axis, a);
            b.position[i] = m.pivot + r;
            const Vec3& k = m.axis;
            b.velocity[i] = Vec3{{k[1] * r[2] - k[2] * r[1], k[2] * r[0] - k[0] * r[2], k[0] * r[1] - k[1] * r[0]}} *
                            m.angular_velocity;
        }
    });
}

template struct BoundarySet<2>;
template struct BoundarySet<3>;
template void compute_boundary_psi<2>(BoundarySet<2>&, const CubicSpline<2>&, float, const ExecContext&, float);
template void compute_boundary_psi<3>(BoundarySet<3>&, const CubicSpline<3>&, float, const ExecContext&, float);
template float double_layer_volume_correction<2>(const CubicSpline<2>&, float);
template float double_layer_volume_correction<3>(const CubicSpline<3>&, float);
template bool keep_inside<2>(Vec<2>&, const std::vector<Wall<2>>&, float);
template bool keep_inside<3>(Vec<3>&, const std::vector<Wall<3>>&, float);
template void update_boundary_motion<2>(BoundarySet<2>&, double, const ExecContext&);
template void update_boundary_motion<3>(BoundarySet<3>&, double, const ExecContext&);

}  // namespace eddy
