// make_sdf_grid: a dense signed-distance grid of a model for position-based collision (PBF, Clavet).
//
// Nodes within `band` of the surface get the exact distance (closest point on the mesh) signed by the
// winding number; the rest are +-band with the sign of their region: regions of far nodes are
// connected through 6-neighbours, and one winding number per region gives the sign of all of it.
// Queries are trilinear, with the gradient of the trilinear cell (a unit normal after normalising).
//
// An open model (boundary edges) is a thin shell instead: the far nodes inside a tank without a lid
// are connected to the far outside through the opening, so the flood fill gave the whole interior the
// outside's sign (+band): every particle in the tank was "outside the container" and thrown at the
// walls (PBF at 2.7e11 m/s in its first step). Signs are not the shell's business: its grid holds the
// unsigned distance, and the collision (boundary.cpp) asks the model itself for the closest point of
// the particles near it, which says on which side each one is.
#include <algorithm>
#include <cmath>
#include <memory>

#include "eddy/geometry.hpp"

namespace eddy {

template <int D>
SdfGrid<D> make_sdf_grid(const MeshShape<D>& shape, float voxel, float band, const ExecContext& exec,
                         std::size_t max_nodes) {
    SdfGrid<D> g;
    g.band = band;
    const bool shell = shape.report().boundary_edges > 0;
    if (shell) {
        g.shell = std::make_shared<const MeshShape<D>>(shape);
        g.shell_thickness = 0.5f * voxel;  // before the voxel grows: a property of the particles, not the grid
    }
    const Vec<D> lo = shape.lo() - Vec<D>::filled(band + voxel), hi = shape.hi() + Vec<D>::filled(band + voxel);
    // Grow the voxel until the grid fits max_nodes.
    while (true) {
        double total = 1.0;
        for (int a = 0; a < D; ++a) total *= std::ceil((hi[a] - lo[a]) / voxel) + 1.0;
        if (total <= double(max_nodes)) break;
        voxel *= 1.25f;
    }
    g.voxel = voxel;
    g.origin = lo;
    std::size_t total = 1;
    for (int a = 0; a < D; ++a) {
        g.nodes[a] = static_cast<int>(std::ceil((hi[a] - lo[a]) / voxel)) + 1;
        total *= static_cast<std::size_t>(g.nodes[a]);
    }
    g.phi.assign(total, 0.0f);
    auto position = [&](std::size_t i) {
        Vec<D> x;
        for (int a = 0; a < D; ++a) {
            x[a] = g.origin[a] + voxel * static_cast<float>(i % static_cast<std::size_t>(g.nodes[a]));
            i /= static_cast<std::size_t>(g.nodes[a]);
        }
        return x;
    };
    // 0: far (sign to be filled), else the signed exact distance.
    std::vector<std::uint8_t> near(total, 0);
    parallel_for_each_index(exec, total, [&](std::size_t i) {
        const Vec<D> x = position(i);
        const double d = shape.distance(x, band);
        if (d < band) {
            near[i] = 1;
            g.phi[i] = static_cast<float>(shell || !shape.inside(x) ? d : -d);
        } else if (shell) {
            g.phi[i] = band;
        }
    });
    if (shell) return g;
    // Far regions: flood fill, one winding number per region (serial; cheap next to the distances).
    std::vector<std::size_t> queue;
    std::size_t stride[3] = {1, 1, 1};
    for (int a = 1; a < D; ++a) stride[a] = stride[a - 1] * static_cast<std::size_t>(g.nodes[a - 1]);
    for (std::size_t seed = 0; seed < total; ++seed) {
        if (near[seed]) continue;
        const float value = shape.inside(position(seed)) ? -band : band;
        near[seed] = 2;
        g.phi[seed] = value;
        queue.assign(1, seed);
        while (!queue.empty()) {
            const std::size_t i = queue.back();
            queue.pop_back();
            std::size_t rest = i;
            for (int a = 0; a < D; ++a) {
                const std::size_t k = rest % static_cast<std::size_t>(g.nodes[a]);
                rest /= static_cast<std::size_t>(g.nodes[a]);
                if (k > 0 && !near[i - stride[a]]) {
                    near[i - stride[a]] = 2;
                    g.phi[i - stride[a]] = value;
                    queue.push_back(i - stride[a]);
                }
                if (k + 1 < static_cast<std::size_t>(g.nodes[a]) && !near[i + stride[a]]) {
                    near[i + stride[a]] = 2;
                    g.phi[i + stride[a]] = value;
                    queue.push_back(i + stride[a]);
                }
            }
        }
    }
    return g;
}

template <int D>
float SdfGrid<D>::sample(const Vec<D>& x, Vec<D>* grad) const {
    int base[D];
    float f[D];
    for (int a = 0; a < D; ++a) {
        const float u = (x[a] - origin[a]) / voxel;
        if (!(u >= 0.0f && u <= float(nodes[a] - 1))) {
            if (grad) *grad = Vec<D>::zero();
            return band;
        }
        base[a] = std::min(static_cast<int>(u), nodes[a] - 2);
        f[a] = u - static_cast<float>(base[a]);
    }
    std::size_t idx = 0, stride = 1;
    std::size_t strides[D];
    for (int a = 0; a < D; ++a) {
        idx += static_cast<std::size_t>(base[a]) * stride;
        strides[a] = stride;
        stride *= static_cast<std::size_t>(nodes[a]);
    }
    if (!grad) {  // value only: multilinear interpolation, one axis at a time
        float c[1 << D];
        for (int corner = 0; corner < (1 << D); ++corner) {
            std::size_t j = idx;
            for (int a = 0; a < D; ++a) j += ((corner >> a) & 1) ? strides[a] : 0;
            c[corner] = phi[j];
        }
        int n = 1 << D;
        for (int a = 0; a < D; ++a) {
            n >>= 1;
            for (int k = 0; k < n; ++k) c[k] = c[2 * k] + f[a] * (c[2 * k + 1] - c[2 * k]);
        }
        return c[0];
    }
    float value = 0.0f;
    Vec<D> g = Vec<D>::zero();
    for (int corner = 0; corner < (1 << D); ++corner) {
        std::size_t j = idx;
        float w = 1.0f;
        float dw[D];
        for (int a = 0; a < D; ++a) {
            const bool up = (corner >> a) & 1;
            j += up ? strides[a] : 0;
            w *= up ? f[a] : 1.0f - f[a];
        }
        for (int a = 0; a < D; ++a) {
            dw[a] = ((corner >> a) & 1) ? 1.0f : -1.0f;
            for (int b = 0; b < D; ++b)
                if (b != a) dw[a] *= ((corner >> b) & 1) ? f[b] : 1.0f - f[b];
        }
        const float p = phi[j];
        value += w * p;
        for (int a = 0; a < D; ++a) g[a] += dw[a] * p / voxel;
    }
    if (grad) *grad = g;
    return value;
}

template <int D>
float SdfGrid<D>::nearest(const Vec<D>& x) const {
    std::size_t idx = 0, stride = 1;
    for (int a = 0; a < D; ++a) {
        const float u = (x[a] - origin[a]) / voxel;
        if (!(u >= 0.0f && u <= float(nodes[a] - 1))) return band;
        idx += static_cast<std::size_t>(u + 0.5f) * stride;
        stride *= static_cast<std::size_t>(nodes[a]);
    }
    return phi[idx];
}

template struct SdfGrid<2>;
template struct SdfGrid<3>;
template SdfGrid<2> make_sdf_grid<2>(const MeshShape<2>&, float, float, const ExecContext&, std::size_t);
template SdfGrid<3> make_sdf_grid<3>(const MeshShape<3>&, float, float, const ExecContext&, std::size_t);

}  // namespace eddy
