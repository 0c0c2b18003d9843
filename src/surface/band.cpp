// Stage 3 for meshes (reconstruct_surface without keep_grids): fast sweeping over the narrow band only,
// the blocks that hold a crossing of the surface: the mixed blocks and the uniform blocks next to a
// block of another side (so the face neighbours of every mixed block), as OpenVDB's level sets keep a
// narrow band (particlesToSdf: 3 voxels each side). Here the band reaches at least block_size - 1
// voxels beyond every crossed edge.
//
// The mesh reads phi at the two ends of every crossed grid edge (pinned: never swept) and, for the
// normals, one node further: all inside the band. Distances grow away from the surface, so the sweep's
// values there come from the band's own nodes; the nodes the band leaves out keep +-FLT_MAX, the sign of
// their side, and marching cubes skips their blocks as before.
#include <algorithm>
#include <cstring>

#include "eddy/surface.hpp"
#include "surface/block_access.hpp"

namespace eddy {

using namespace surface_detail;

template <int D>
std::size_t sweep_narrow_band(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, const ExecContext& exec,
                              bool wavefront) {
    const std::size_t n = phi.layout.size();
    const int nv = phi.layout.voxels_per_block();
    // A block holds a crossing when it is mixed or a face neighbour lies on the other side (the test of
    // pin_distances and extract_mesh; absent blocks are the background's side, outside).
    const std::vector<std::int8_t> side = block_sides(phi, 0.0f, exec);
    const std::int8_t outside = phi.background >= 0.0f ? 1 : -1;
    std::vector<std::uint8_t> in_band(n, 0);
    parallel_for_each_index(exec, n, [&](std::size_t b) {
        bool crossing = side[b] == 0;
        for (int k = 0; k < 2 * D && !crossing; ++k) {
            const std::int32_t nb = phi.layout.neighbors[b][k];
            crossing = (nb < 0 ? outside : side[nb]) != side[b];
        }
        // No ring of blocks around them is needed: a uniform block face-adjacent to a mixed one is a
        // crossing block itself, so the band holds every node within block_size - 1 of a crossed edge.
        in_band[b] = crossing;
    }, 64);
    std::vector<std::uint32_t> blocks;
    for (std::size_t b = 0; b < n; ++b)
        if (in_band[b]) blocks.push_back(static_cast<std::uint32_t>(b));
    if (blocks.size() == n) {  // the whole grid is band: sweep it in place
        if (wavefront) sweep_wavefront<D>(phi, pinned, exec);
        else sweep_serial<D>(phi, pinned);
        return n;
    }
    // The band as a grid of its own (coordinates stay sorted), swept, and its values put back.
    SparseGrid<D> sub;
    sub.background = phi.background;
    sub.layout.voxel = phi.layout.voxel;
    sub.layout.block = phi.layout.block;
    sub.layout.coords.reserve(blocks.size());
    for (const std::uint32_t b : blocks) sub.layout.coords.push_back(phi.layout.coords[b]);
    sub.layout.finalize();
    sub.values.resize(blocks.size() * std::size_t(nv));
    std::vector<std::uint8_t> sub_pinned(sub.values.size());
    parallel_for_each_index(exec, blocks.size(), [&](std::size_t k) {
        std::memcpy(sub.values.data() + k * nv, phi.values.data() + std::size_t(blocks[k]) * nv, nv * sizeof(float));
        std::memcpy(sub_pinned.data() + k * nv, pinned.data() + std::size_t(blocks[k]) * nv, nv);
    }, 64);
    if (wavefront) sweep_wavefront<D>(sub, sub_pinned, exec);
    else sweep_serial<D>(sub, sub_pinned);
    parallel_for_each_index(exec, blocks.size(), [&](std::size_t k) {
        std::memcpy(phi.values.data() + std::size_t(blocks[k]) * nv, sub.values.data() + k * nv, nv * sizeof(float));
    }, 64);
    return blocks.size();
}

template std::size_t sweep_narrow_band<2>(SparseGrid<2>&, const std::vector<std::uint8_t>&, const ExecContext&, bool);
template std::size_t sweep_narrow_band<3>(SparseGrid<3>&, const std::vector<std::uint8_t>&, const ExecContext&, bool);

}  // namespace eddy
