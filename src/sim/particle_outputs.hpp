// A particle run's outputs (issue 41), one per kind of file: the particles' frames (vtk, csv, ply, pieces;
// particles.pvd), the surface (surface.pvd), the walls (walls.pvd), the bodies (bodies.csv, bodies.pvd),
// the loads (forces.csv), the probes (probes.csv), the pictures, the whitewater. The run (src/sim/run.cpp) builds the ones its
// options ask for and calls each at every frame; none of them steps, gathers or decides when a frame is.
//
// How to add an output: derive from ParticleOutput, write its files in write() (and each_process() for
// files every process writes, e.g. pieces; after() for files over every frame, e.g. a .pvd or a .csv),
// say in needs_whole() whether it needs the whole fluid gathered on the writer, and add it in
// make_particle_outputs (src/sim/particle_outputs.cpp). What a resumed run needs of it goes in the run
// record (run.cpp's record()).
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eddy/simulation.hpp"
#include "eddy/up_axis.hpp"

namespace eddy::detail {

template <int D>
class LiveWhitewater;
class RecordReader;

/// Where and how a run writes: the run folder, the files' up axis, and over several processes (hooks)
/// this process's part.
struct OutputPlace {
    std::filesystem::path out;
    UpAxis up = UpAxis::y;
    const ExecContext* exec = nullptr;
    RunHooks* hooks = nullptr;  // null: one process
    bool writer = true;         // this process writes the files of the whole run
    int rank() const { return hooks ? hooks->rank() : 0; }
    int processes() const { return hooks ? hooks->processes() : 1; }
};

/// A frame as the outputs see it. `all` and `fluid` are set on the writer only, after the gather.
template <int D>
struct ParticleFrame {
    const ParticleSimulation<D>& sim;
    FrameRecord& record;                   ///< the frame's record: outputs append their files to record.files
    const ParticleSet<D>* all = nullptr;   ///< the whole fluid, in the world's axes
    const ParticleSet<D>* fluid = nullptr; ///< the same in the files' axes (--up)
};

template <int D>
class ParticleOutput {
public:
    virtual ~ParticleOutput() = default;
    /// The writer, once the run folder is ready: files written once per run.
    virtual void begin() {}
    /// Does this frame need the whole fluid gathered on the writer (every process gives the same answer)?
    virtual bool needs_whole(const ParticleFrame<D>&) const { return false; }
    /// Every process, before the gather: files each process writes of its own particles.
    virtual void each_process(ParticleFrame<D>&) {}
    /// The writer: the frame's files.
    virtual void write(ParticleFrame<D>&) {}
    /// The writer, once the frame is in `frames` (the run's frames so far): files over every frame.
    virtual void after(const std::vector<FrameRecord>&) {}
    /// What a resumed run needs of this output, into the run record `rj` (under a key of its own).
    virtual void save(nlohmann::json&) const {}
    /// The same back from a checkpoint's record (untrusted: every value read through `r`) of a run that
    /// kept `frames` frames.
    virtual void restore(const RecordReader&, std::size_t /*frames*/) {}
};

/// What a particle run writes (its configuration; run.cpp's ParticleRunConfig carries the same).
struct ParticleOutputPlan {
    std::vector<std::string> formats;  ///< "vtk", "csv", "ply"
    bool pieces = false, render = false, mesh = false, wall_pressure = false;
    SurfaceSettings surface;  ///< with mesh: particle_radius set, anisotropic and decimation as recorded
    std::string mesh_format;
    std::vector<std::string> mesh_attributes;
    RenderSettings render_settings;  ///< with the scene's camera, solid objects and speed scale
};

/// The .pvd lists a checkpoint keeps (the run record's "pvd" and "walls_pvd").
struct PvdLists {
    std::vector<std::pair<double, std::string>> particles, walls;
};

/// The outputs of a particle run, in the order their files are listed in a frame: whitewater, particles,
/// surface, walls, bodies, picture; then forces.csv and probes.csv. They write nothing before begin().
template <int D>
std::vector<std::unique_ptr<ParticleOutput<D>>> make_particle_outputs(const ParticleSimulation<D>& sim,
                                                                      const ParticleOutputPlan& plan,
                                                                      const OutputPlace& place, PvdLists& pvd,
                                                                      LiveWhitewater<D>& whitewater);

/// The picture of a state (last_frame.png, and frames/particles_NNNNN.png with --render).
template <int D>
void render_state(const std::filesystem::path& file, const ParticleSimulation<D>& sim, const ParticleSet<D>& fluid,
                  const RenderSettings& rs);

/// The render settings of a scene: the caller's, with the scene's camera, its solid objects opaque and the
/// colour scale's middle at half the free-fall speed of the fluid's height (unless the caller set it).
RenderSettings scene_render_settings(const Scene& scene, const RenderSettings& given);

}  // namespace eddy::detail
