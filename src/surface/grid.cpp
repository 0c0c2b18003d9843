// Sparse block grids: the layout (sorted block coordinates, lookup, face neighbours) and settings checks.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/surface.hpp"

namespace eddy {

std::span<const Field<SurfaceSettings>> surface_fields() {
    using S = SurfaceSettings;
    static const Field<S> table[] = {
        {"radius", &S::particle_radius, "m", 0, kInf, "particle radius r; a particle stands for a cube of side 2r", {}, true},
        {"voxel", &S::voxel_size, "m", 0, kInf, "grid spacing; 0: 1.0 r (measured: docs/surface.md)"},
        {"kernel_radius", &S::kernel_radius, "m", 0, kInf, "support h of the splatting cubic spline; 0: 4 r"},
        {"iso", &S::iso, "", 0, 1, "iso level of the volume fraction, below 1 (0.5: flat surfaces on the cells' faces)", {}, true},
        {"block_size", &S::block_size, "voxels", 4, 32, "voxels per block edge: unit of sparsity and of parallel work"},
        {"smooth", &S::smooth_iterations, "iterations", 0, 1000, "Taubin smoothing (lambda 0.5, mu -0.53)"},
        {"min_volume", &S::min_volume, "m^3", 0, kInf, "drop mesh pieces enclosing less (m^2 in 2D); 0 keeps all"},
        {"vertex_margin", &S::vertex_margin, "voxels", 0, 0.25, "every vertex this far from grid nodes: no sliver triangles (0: plain marching cubes)"},
        {"anisotropic", &S::anisotropic, "", 0, 1, "anisotropic kernels (Yu & Turk 2013): flat surfaces flat, thin sheets kept"},
        {"anisotropy_radius", &S::anisotropy_radius, "m", 0, kInf, "neighbourhood of a kernel's covariance; 0: 1.5 h"},
        {"anisotropy_ratio", &S::anisotropy_ratio, "", 1, 100, "k_r: largest ratio of a kernel's principal variances"},
        {"anisotropy_neighbors", &S::anisotropy_neighbors, "particles", 0, 100000, "N_eps: fewer neighbours: a round kernel of radius h/2; 0: a tenth of a full neighbourhood"},
        {"anisotropy_smoothing", &S::anisotropy_smoothing, "", 0, 1, "lambda: centres moved this far toward their neighbours' weighted mean"},
        {"wavefront", &S::wavefront, "", 0, 1, "parallel wavefront sweep (false: the serial reference; same result)"},
        {"keep_grids", &S::keep_grids, "", 0, 1, "keep the density and signed distance grids in the result"},
        {"decimate_error", &S::decimate_error, "voxels", 0, 1000, "decimation: largest distance the surface may move (0: no bound)"},
        {"decimate_ratio", &S::decimate_ratio, "", 0, 1, "decimation: keep at most this fraction of the triangles (0: as few as decimate_error allows)"},
    };
    return table;
}

void validate(const SurfaceSettings& s, const std::string& where) {
    validate(s, surface_fields(), where);
    if (!(s.iso < 1.0f))
        throw InputError(fmt::format("{}: key 'iso' = {}: allowed: 0 < iso < 1 (volume fraction)", where, s.iso));
    if (s.support() > 64.0f * s.voxel())
        throw InputError(fmt::format("{}: key 'voxel' = {:g} m is below 1/64 of the kernel radius {:g} m (4 r by default): "
                                     "allowed: voxel >= {:g} m", where, s.voxel(), s.support(), s.support() / 64.0f));
    if (s.support() < s.voxel())
        throw InputError(fmt::format("{}: key 'kernel_radius' = {} is below the voxel size {}: allowed: >= voxel",
                                     where, s.support(), s.voxel()));
    if (s.decimate_error > 0.0f || s.decimate_ratio > 0.0f)
        validate(DecimateSettings{s.decimate_error * s.voxel(), s.decimate_ratio}, where);
}

template <int D>
std::uint64_t BlockLayout<D>::key(const Coord& c) {
    // 21 bits per axis, offset so that negative coordinates pack too (+-10^6 blocks).
    std::uint64_t k = 0;
    for (int a = 0; a < D; ++a) k |= (std::uint64_t(std::uint32_t(c[a] + (1 << 20))) & 0x1fffff) << (21 * a);
    return k;
}

template <int D>
std::int32_t BlockLayout<D>::find(const Coord& c) const {
    const auto it = index.find(key(c));
    return it == index.end() ? -1 : it->second;
}

template <int D>
void BlockLayout<D>::finalize() {
    index.clear();
    index.reserve(coords.size() * 2);
    for (std::size_t b = 0; b < coords.size(); ++b) index.emplace(key(coords[b]), static_cast<std::int32_t>(b));
    neighbors.resize(coords.size());
    for (std::size_t b = 0; b < coords.size(); ++b)
        for (int a = 0; a < D; ++a)
            for (int s = 0; s < 2; ++s) {
                Coord c = coords[b];
                c[a] += s ? 1 : -1;
                neighbors[b][2 * a + s] = find(c);
            }
}

template <int D>
std::size_t BlockLayout<D>::memory_bytes() const {
    return coords.capacity() * sizeof(Coord) + neighbors.capacity() * sizeof(neighbors[0]) +
           index.size() * (sizeof(std::uint64_t) + sizeof(std::int32_t) + 2 * sizeof(void*)) +
           index.bucket_count() * sizeof(void*);
}

template <int D>
float SparseGrid<D>::at(const std::array<int, D>& i) const {
    const int B = layout.block;
    std::array<int, D> c;
    int local = 0, stride = 1;
    for (int a = 0; a < D; ++a) {
        c[a] = i[a] >= 0 ? i[a] / B : -((-i[a] + B - 1) / B);
        local += (i[a] - c[a] * B) * stride;
        stride *= B;
    }
    const std::int32_t b = layout.find(c);
    return b < 0 ? background : values[std::size_t(b) * layout.voxels_per_block() + local];
}

template <int D>
Vec<D> SparseGrid<D>::position(const std::array<int, D>& i) const {
    Vec<D> x;
    for (int a = 0; a < D; ++a) x[a] = float(i[a]) * layout.voxel;
    return x;
}

template struct BlockLayout<2>;
template struct BlockLayout<3>;
template struct SparseGrid<2>;
template struct SparseGrid<3>;

}  // namespace eddy
