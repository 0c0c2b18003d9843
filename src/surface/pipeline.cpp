// reconstruct_surface: the four stages in a row (splat, pin, sweep, mesh), then smoothing and cleaning.
#include <chrono>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/surface.hpp"

namespace eddy {

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
    std::vector<std::uint8_t> pinned;
    SparseGrid<D> phi = pin_distances<D>(density, s.iso, pinned, exec);
    lap(r.seconds[1]);
    // The grids are kept (written as .vti/.vdb): the distance everywhere; a mesh alone: the narrow band.
    if (!s.keep_grids) r.band_blocks = sweep_narrow_band<D>(phi, pinned, exec, s.wavefront);
    else if (s.wavefront) sweep_wavefront<D>(phi, pinned, exec);
    else sweep_serial<D>(phi, pinned);
    if (s.keep_grids) r.band_blocks = phi.layout.size();
    lap(r.seconds[2]);
    r.mesh = extract_mesh<D>(phi, 0.0f, exec, s.vertex_margin);
    lap(r.seconds[3]);
    taubin_smooth<D>(r.mesh, s.smooth_iterations, exec);
    remove_small_components<D>(r.mesh, s.min_volume);
    // After smoothing and cleaning, before any attributes (interpolate_attributes runs on the coarse mesh).
    if constexpr (D == 3)
        if (decimating) decimate(r.mesh, DecimateSettings{s.decimate_error * s.voxel(), s.decimate_ratio}, exec);
    lap(r.seconds[4]);
    r.blocks = phi.layout.size();
    r.grid_bytes = phi.memory_bytes();
    if (s.keep_grids) {
        r.density = std::move(density);
        r.signed_distance = std::move(phi);
    }
    return r;
}

template SurfaceResult<2> reconstruct_surface<2>(std::span<const Vec<2>>, const SurfaceSettings&, const ExecContext&);
template SurfaceResult<3> reconstruct_surface<3>(std::span<const Vec<3>>, const SurfaceSettings&, const ExecContext&);

}  // namespace eddy
