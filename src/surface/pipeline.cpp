// reconstruct_surface: the stages in a row (splat, then pin and sweep when the distance is kept, mesh),
// then smoothing and cleaning.
#include <chrono>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/surface.hpp"

namespace eddy {

namespace {

// Stage 4 on the density itself: marching cubes at the iso level of rho, inside where rho >= iso, as
// extract_mesh at -iso of -rho (negation is exact). A vertex lies on its crossed edge at the density's
// linear crossing, t = (rho_0 - iso) / (rho_0 - rho_1), where pin_distances puts the crossing too, and its
// normal is -grad rho (central differences), the direction in which the density falls across the surface.
template <int D>
Mesh<D> density_mesh(SparseGrid<D> rho, float iso, const ExecContext& exec, float margin) {
    const int nv = rho.layout.voxels_per_block();
    parallel_for_each_index(exec, rho.layout.size(), [&](std::size_t b) {
        float* v = rho.values.data() + b * std::size_t(nv);
        for (int l = 0; l < nv; ++l) v[l] = -v[l];
    });
    rho.background = -rho.background;
    return extract_mesh<D>(rho, -iso, exec, margin);
}

}  // namespace

template <int D>
SurfaceResult<D> reconstruct_surface(std::span<const Vec<D>> positions, const SurfaceSettings& s, const ExecContext& exec) {
    validate(s);
    if (positions.empty()) throw InputError("no particles: allowed: at least one particle");
    const bool decimating = s.decimate_error > 0.0f || s.decimate_ratio > 0.0f;
    if (D == 2 && decimating)
        throw InputError(fmt::format("keys 'decimate_error' = {}, 'decimate_ratio' = {}: 2D contour lines are not "
                                     "decimated; allowed: 0 in 2D", s.decimate_error, s.decimate_ratio));
    using clock = std::chrono::steady_clock;
    auto t = clock::now();
    auto lap = [&](double& out) {
        const auto now = clock::now();
        out = std::chrono::duration<double>(now - t).count();
        t = now;
    };
    SurfaceResult<D> r;
    SparseGrid<D> density = splat_density<D>(positions, s, exec);
    lap(r.seconds[0]);
    // The signed distance only when it is kept (written as .vti/.vdb): the mesh needs no distance.
    SparseGrid<D> phi;
    if (s.keep_grids) {
        std::vector<std::uint8_t> pinned;
        phi = pin_distances<D>(density, s.iso, pinned, exec);
        lap(r.seconds[1]);
        if (s.wavefront) sweep_wavefront<D>(phi, pinned, exec);
        else sweep_serial<D>(phi, pinned);
        lap(r.seconds[2]);
    }
    r.blocks = density.layout.size();
    r.grid_bytes = density.memory_bytes();
    r.mesh = density_mesh<D>(s.keep_grids ? density : std::move(density), s.iso, exec, s.vertex_margin);
    lap(r.seconds[3]);
    taubin_smooth<D>(r.mesh, s.smooth_iterations, exec);
    remove_small_components<D>(r.mesh, s.min_volume);
    // After smoothing and cleaning, before any attributes (interpolate_attributes runs on the coarse mesh).
    if constexpr (D == 3)
        if (decimating) decimate(r.mesh, DecimateSettings{s.decimate_error * s.voxel(), s.decimate_ratio}, exec);
    lap(r.seconds[4]);
    if (s.keep_grids) {
        r.density = std::move(density);
        r.signed_distance = std::move(phi);
    }
    return r;
}

template SurfaceResult<2> reconstruct_surface<2>(std::span<const Vec<2>>, const SurfaceSettings&, const ExecContext&);
template SurfaceResult<3> reconstruct_surface<3>(std::span<const Vec<3>>, const SurfaceSettings&, const ExecContext&);

}  // namespace eddy
