#include "eddy/boundary.hpp"

#include <cmath>

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
    const int n = static_cast<int>(std::ceil(kernel.h / spacing)) + 1;
    double full = 0.0, wall = 0.0;
    for (int i = -n; i <= n; ++i)
        for (int j = -n; j <= n; ++j)
            for (int k = (D == 3 ? -n : 0); k <= (D == 3 ? n : 0); ++k) {
                Vec<D> x;
                x[0] = i * spacing;
                x[1] = j * spacing;
                if constexpr (D == 3) x[2] = k * spacing;
                const double w = kernel.value(x);
                full += w;
                if (j == 0 || j == -1) wall += w;
            }
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
template void update_boundary_motion<2>(BoundarySet<2>&, double, const ExecContext&);
template void update_boundary_motion<3>(BoundarySet<3>&, double, const ExecContext&);

}  // namespace eddy
