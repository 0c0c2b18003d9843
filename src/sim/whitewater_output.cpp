// The whitewater of a live run: stepped every 1/(fps K) s of simulated time (the same whitewater step
// as `eddy whitewater RUN_DIR --substeps K` takes between frames), written every frame.
#include "sim/whitewater_output.hpp"

#include <cmath>

#include <fmt/format.h>

#include "eddy/error.hpp"

namespace eddy::detail {

template <int D>
LiveWhitewater<D>::LiveWhitewater(const RunOptions& opts, const Scene& scene, double fps, UpAxis up, double time0,
                                  bool distributed) {
    if (!opts.whitewater) return;
    if (distributed)
        throw InputError("--whitewater: a run over several processes has no whitewater; allowed: one process, or "
                         "`eddy whitewater RUN_DIR` on its frames afterwards");
    if (opts.resume)
        throw InputError("--whitewater: whitewater is not kept in checkpoints, so a resumed run cannot carry it on; "
                         "allowed: `eddy whitewater RUN_DIR` on the finished run's frames");
    if (opts.whitewater_substeps < 0 || opts.whitewater_substeps > 100000)
        throw InputError(fmt::format("--whitewater-substeps = {}: allowed: 0 (after every fluid step) to 100000",
                                     opts.whitewater_substeps));
    validate(opts.whitewater_settings, "--whitewater");
    m_on = true;
    m_settings = opts.whitewater_settings;
    m_radius = static_cast<float>(scene.particle_radius);
    m_gravity = from_array<D>(scene.gravity);
    m_time0 = m_last = time0;
    m_interval = opts.whitewater_substeps > 0 ? 1.0 / (fps * opts.whitewater_substeps) : 0.0;
    m_files.emplace(opts.out_dir, up);
}

template <int D>
void LiveWhitewater<D>::after_step(const ParticleSimulation<D>& sim, const ExecContext& exec) {
    if (!m_on) return;
    const double time = sim.time;
    if (m_interval > 0.0) {
        const double due = m_time0 + double(m_next) * m_interval;
        if (time < due - 1e-9 * std::max(1.0, std::fabs(due))) return;
        // The next whitewater time after this one (a fluid step longer than the interval skips some).
        m_next = static_cast<std::uint64_t>(std::floor((time - m_time0) / m_interval + 1e-6)) + 1;
    }
    if (!m_walls_built || m_wall_objects != sim.scene.boundaries.size()) {
        m_walls = scene_walls<D>(sim.scene, exec);
        m_wall_objects = sim.scene.boundaries.size();
        m_walls_built = true;
    }
    // Moving walls where the fluid's step left them (the solvers' own walls are at this time too).
    if (sim.boundary.any_moving()) update_wall_poses(m_walls, sim.boundary.motions, time);
    step_whitewater<D>(m_w, sim.fluid.position, sim.fluid.velocity, m_radius, m_gravity, time - m_last, sim.steps,
                       m_settings, exec, &m_walls);
    m_last = time;
}

template <int D>
std::vector<std::string> LiveWhitewater<D>::write_frame(int frame, double time) {
    if (!m_on) return {};
    return m_files->write_frame<D>(frame, time, m_w);
}

template class LiveWhitewater<2>;
template class LiveWhitewater<3>;

}  // namespace eddy::detail
