// The whitewater of a live run (`eddy run --whitewater`; eddy/whitewater.hpp): stepped along with the
// fluid, written every frame. The run loop (src/sim/run.cpp) calls it in three places.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "eddy/simulation.hpp"
#include "eddy/whitewater.hpp"

namespace eddy::detail {

template <int D>
class LiveWhitewater {
public:
    /// Off unless opts.whitewater. Throws InputError for a run over several processes (`distributed`),
    /// a resumed one, or bad settings. `time0`: the simulation's clock at the start.
    LiveWhitewater(const RunOptions& opts, const Scene& scene, double fps, UpAxis up, double time0, bool distributed);
    bool on() const { return m_on; }
    /// After each fluid step: a whitewater step when the clock has reached the next whitewater time, on
    /// the fluid as it is and inside the simulation's walls at its time (scene_walls of its scene, moving
    /// ones at their objects' poses; rebuilt when the scene's boundaries change, e.g. a body added).
    void after_step(const ParticleSimulation<D>& sim, const ExecContext& exec);
    /// The frame's whitewater files (relative to the run folder); none when off.
    std::vector<std::string> write_frame(int frame, double time);
    const Whitewater<D>& state() const { return m_w; }

private:
    bool m_on = false;
    WhitewaterSettings m_settings;
    float m_radius = 0.0f;
    Vec<D> m_gravity = Vec<D>::zero();
    double m_time0 = 0.0, m_interval = 0.0, m_last = 0.0;
    std::uint64_t m_next = 1;  // index of the next whitewater time, time0 + m_next * m_interval
    Whitewater<D> m_w;
    std::vector<Wall<D>> m_walls;
    std::size_t m_wall_objects = 0;  // scene.boundaries.size() when m_walls was built
    bool m_walls_built = false;
    std::optional<WhitewaterFiles> m_files;
};

}  // namespace eddy::detail
