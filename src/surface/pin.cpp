// Stage 2: iso crossings and pinned signed distances (seed 004, ComputeImmediateSDFFromDensity_Nearest).
//
// Along every grid edge whose two nodes lie on opposite sides of the iso level the crossing is found by
// linear interpolation, z = x_i + h (rho_i - iso) / (rho_i - rho_j) (the seed's z = x_i + h (1 - A/M) with
// the iso level in place of the outside density). A node next to crossings gets, from the nearest
// crossing d_a on each axis a that has one, the distance to the plane through them:
//   phi = 1 / sqrt(sum_a 1 / d_a^2)   (exact for a flat surface; <= min_a d_a, the seed's "nearest"),
// or, when smaller, the first-order estimate |rho - iso| / |grad rho| (central differences; exact for a
// linear field, and the better one where the surface is oblique to the axes), never more than the
// nearest crossing; negative inside (rho >= iso). Every other node gets FLT_MAX with its side's sign.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "eddy/surface.hpp"
#include "surface/block_access.hpp"
#include "core/buffers.hpp"

namespace eddy {

using namespace surface_detail;

template <int D>
SparseGrid<D> pin_distances(const SparseGrid<D>& density, float iso, std::vector<std::uint8_t>& pinned,
                            const ExecContext& exec) {
    SparseGrid<D> phi;
    phi.layout = density.layout;
    phi.background = FLT_MAX;
    const int B = density.layout.block, nv = density.layout.voxels_per_block();
    detail::resize_huge(phi.values, density.values.size());
    detail::assign_huge(pinned, density.values.size(), std::uint8_t(0));
    const float h = density.layout.voxel;
    const std::vector<std::int8_t> side = block_sides(density, iso, exec);
    parallel_for_each_index(exec, density.layout.size(), [&](std::size_t b) {
        bool uniform = side[b] != 0;
        for (int k = 0; k < 2 * D && uniform; ++k) {
            const std::int32_t n = density.layout.neighbors[b][k];
            uniform = n < 0 || side[n] == side[b];
        }
        if (uniform) {  // no crossing on any edge of this block's nodes
            std::fill_n(phi.values.begin() + b * nv, nv, side[b] > 0 ? -FLT_MAX : FLT_MAX);
            return;
        }
        // Edges to nodes outside every block carry no crossing (NaN marks them).
        auto rho = Around<D, const float>::make(density, b);
        rho.background = std::numeric_limits<float>::quiet_NaN();
        for (int l = 0; l < nv; ++l) {
            const auto c = local_coords<D>(l, B);
            const float f0 = density.values[b * nv + l] - iso;
            const bool inside = f0 >= 0.0f;
            float nearest = FLT_MAX, inv2 = 0.0f;
            bool any = false;
            float grad2 = 0.0f;
            for (int a = 0; a < D; ++a) {
                float d = FLT_MAX;
                float fm = f0, fp = f0, span = 0.0f;  // for the gradient: neighbours that exist
                for (int dir = -1; dir <= 1; dir += 2) {
                    const float f1 = rho.step(c, a, dir) - iso;
                    if (std::isnan(f1)) continue;
                    (dir < 0 ? fm : fp) = f1;
                    span += h;
                    if ((f1 >= 0.0f) == inside) continue;
                    const float t = f0 / (f0 - f1);  // in [0, 1): fraction of the edge to the crossing
                    d = std::min(d, t * h);
                }
                if (span > 0.0f) grad2 += ((fp - fm) / span) * ((fp - fm) / span);
                if (d == FLT_MAX) continue;
                any = true;
                nearest = std::min(nearest, d);
                inv2 += d > 0.0f ? 1.0f / (d * d) : FLT_MAX;
            }
            float v = FLT_MAX;
            if (any) {
                // The plane through the axis crossings; a node with a crossing on one axis only would
                // take the whole edge fraction, so the first-order estimate |f| / |grad f| (exact for a
                // linear field) takes over when smaller. No estimate exceeds the nearest crossing,
                // which lies on the surface.
                v = inv2 >= FLT_MAX ? 0.0f : 1.0f / std::sqrt(inv2);
                if (grad2 > 0.0f) v = std::min(v, std::abs(f0) / std::sqrt(grad2));
                v = std::min(v, nearest);
            }
            phi.values[b * nv + l] = inside ? -v : v;
            pinned[b * nv + l] = any ? 1 : 0;
        }
    }, 1);
    return phi;
}

template SparseGrid<2> pin_distances<2>(const SparseGrid<2>&, float, std::vector<std::uint8_t>&, const ExecContext&);
template SparseGrid<3> pin_distances<3>(const SparseGrid<3>&, float, std::vector<std::uint8_t>&, const ExecContext&);

}  // namespace eddy
