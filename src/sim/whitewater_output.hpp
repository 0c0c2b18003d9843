// The whitewater of a live run (`eddy run --whitewater`; eddy/whitewater.hpp): stepped along with the
// fluid, written every frame. The run loop (src/sim/run.cpp) calls it in three places.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/simulation.hpp"
#include "eddy/whitewater.hpp"

namespace eddy::detail {

class RecordReader;

template <int D>
class LiveWhitewater {
public:
    static constexpr int kDimension = D;
    /// Off unless opts.whitewater or, resuming (`rec`: the checkpoint's run record), unless the record has
    /// "whitewater": then the checkpointed run's settings, clock, particles and files' rows carry on (every
    /// value checked as RecordReader checks). Throws InputError for bad settings. `time0`: the simulation's
    /// clock at the start.
    LiveWhitewater(const RunOptions& opts, const Scene& scene, double fps, UpAxis up, double time0,
                   const RecordReader* rec = nullptr);
    bool on() const { return m_on; }
    /// What a checkpoint keeps (the run record's "whitewater"): all a resumed run needs to carry on bit for bit.
    nlohmann::json record() const;
    /// After each fluid step: whether the clock has reached the next whitewater time (the same answer on
    /// every process: the simulation's clock is).
    bool due(double time) const;
    /// A whitewater step at the simulation's time on `fluid`, the whole fluid (this process's, or every
    /// process's gathered on the writer; taken in id order, so the same bits for any process count), inside
    /// the simulation's walls at its time (scene_walls of its scene, moving ones at their objects' poses;
    /// rebuilt when the scene's boundaries change, e.g. a body added). Null `fluid` (a process that does not
    /// write): only the clock moves on.
    void step(ParticleSimulation<D>& sim, const ParticleSet<D>* fluid, const ExecContext& exec);
    /// The frame's whitewater files (relative to the run folder); none when off.
    std::vector<std::string> write_frame(int frame, double time);
    const Whitewater<D>& state() const { return m_w; }

private:
    bool m_on = false;
    int m_substeps = 0;
    void restore(const RecordReader& rec, double fps);
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
