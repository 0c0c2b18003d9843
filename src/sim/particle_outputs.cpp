// A particle run's outputs, one class per kind of file (src/sim/particle_outputs.hpp says how they are called).
#include "sim/particle_outputs.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "eddy/bodies_io.hpp"
#include "eddy/io.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/render.hpp"
#include "eddy/surface.hpp"
#include "eddy/wall_pressure.hpp"
#include "sim/run_support.hpp"
#include "sim/whitewater_output.hpp"

namespace eddy::detail {

namespace {

std::string frame_name(int index, const char* ext) { return fmt::format("frames/particles_{:05d}.{}", index, ext); }

bool has(const std::vector<std::string>& list, const char* what) {
    return std::find(list.begin(), list.end(), what) != list.end();
}

// The frames' files whose names start with `prefix` (and end with `suffix`), with their times: a .pvd
// collection built from the frames' own lists (a resumed run's kept frames too).
std::vector<std::pair<double, std::string>> listed_files(const std::vector<FrameRecord>& frames, const char* prefix,
                                                         const char* suffix = "") {
    std::vector<std::pair<double, std::string>> listed;
    const std::string p = prefix, s = suffix;
    for (const FrameRecord& f : frames)
        for (const auto& file : f.files)
            if (file.rfind(p, 0) == 0 && file.size() > s.size() && file.compare(file.size() - s.size(), s.size(), s) == 0)
                listed.emplace_back(f.time, file);
    return listed;
}

// The particles: one .vtp, .csv or .ply per format and frame (frames/particles_NNNNN), or with pieces each
// process's .vtp and a .pvtp listing them; particles.pvd lists the VTK ones.
template <int D>
class ParticleFiles final : public ParticleOutput<D> {
public:
    ParticleFiles(const OutputPlace& place, std::vector<std::string> formats, bool pieces,
                  std::vector<std::pair<double, std::string>>& pvd)
        : m_place(place), m_formats(std::move(formats)), m_pieces(pieces && has(m_formats, "vtk")), m_pvd(pvd) {}

    bool needs_whole(const ParticleFrame<D>&) const override {
        return !m_pieces || m_formats.size() > 1;  // a format written whole
    }
    void each_process(ParticleFrame<D>& f) override {
        if (!m_pieces) return;
        const int index = f.record.index;
        auto piece = [&](int r) { return fmt::format("particles_{:05d}_p{:04d}.vtp", index, r); };
        std::optional<ParticleSet<D>> turned;
        io::write_vtp(m_place.out / "frames" / piece(m_place.rank()), in_axes(f.sim.fluid, turned));
        if (!m_place.writer) return;
        const std::string name = frame_name(index, "pvtp");
        std::vector<std::string> all_pieces;
        for (int r = 0; r < m_place.processes(); ++r) all_pieces.push_back(piece(r));
        io::write_pvtp(m_place.out / name, all_pieces);
        f.record.files.push_back(name);
        for (const auto& p : all_pieces) f.record.files.push_back("frames/" + p);
        m_pvd.emplace_back(f.sim.time, name);
    }
    void write(ParticleFrame<D>& f) override {
        const int index = f.record.index;
        for (const auto& format : m_formats) {
            std::string name;
            if (format == "vtk" && !m_pieces) {
                name = frame_name(index, "vtp");
                io::write_vtp(m_place.out / name, *f.fluid);
                m_pvd.emplace_back(f.sim.time, name);
            } else if (format == "csv") {
                name = frame_name(index, "csv");
                io::write_csv(m_place.out / name, *f.fluid);
            } else if (format == "ply") {
                name = frame_name(index, "ply");
                io::write_ply(m_place.out / name, *f.fluid);
            }
            if (!name.empty()) f.record.files.push_back(name);
        }
    }
    void after(const std::vector<FrameRecord>&) override {
        if (!m_pvd.empty()) io::write_pvd(m_place.out / "particles.pvd", m_pvd);
    }

private:
    // Particles in the axes --up asks for (eddy/up_axis.hpp; the world is y up): p itself, or a turned copy.
    const ParticleSet<D>& in_axes(const ParticleSet<D>& p, std::optional<ParticleSet<D>>& turned) const {
        if constexpr (D == 3)
            if (m_place.up != UpAxis::y) return *(turned = io::in_file_axes(p, m_place.up));
        return p;
    }
    OutputPlace m_place;
    std::vector<std::string> m_formats;
    bool m_pieces;
    std::vector<std::pair<double, std::string>>& m_pvd;
};

// Spray, foam and bubbles (--whitewater): its files of the frame (its own .pvd and .csv are its own).
template <int D>
class WhitewaterFiles final : public ParticleOutput<D> {
public:
    explicit WhitewaterFiles(LiveWhitewater<D>& w) : m_w(w) {}
    void write(ParticleFrame<D>& f) override {
        for (auto& file : m_w.write_frame(f.record.index, f.sim.time)) f.record.files.push_back(std::move(file));
    }

private:
    LiveWhitewater<D>& m_w;
};

// The fluid's surface (issue 5): frames/surface_NNNNN.<mesh_format>, and .vtp too with the vtk format
// (ParaView's time series, surface.pvd, lists VTK files).
template <int D>
class SurfaceFiles final : public ParticleOutput<D> {
public:
    SurfaceFiles(const OutputPlace& place, const ParticleOutputPlan& plan)
        : m_place(place), m_settings(plan.surface), m_format(plan.mesh_format), m_attributes(plan.mesh_attributes),
          m_vtp_too(plan.mesh_format != "vtp" && has(plan.formats, "vtk")) {}

    bool needs_whole(const ParticleFrame<D>&) const override { return true; }
    void write(ParticleFrame<D>& f) override {
        const ParticleSet<D>& all = *f.all;
        const std::string name = fmt::format("frames/surface_{:05d}.{}", f.record.index, m_format);
        Mesh<D> surface;  // none yet when the fluid is still to come (emitters)
        if (!all.empty()) {
            surface = reconstruct_surface<D>(all.position, m_settings, *m_place.exec).mesh;
            interpolate_attributes<D>(surface, all.position, particle_fields(all, m_attributes), m_settings.support(),
                                      *m_place.exec);
        }
        if constexpr (D == 3) to_file_axes(surface, UpAxis::y, m_place.up);
        write_mesh<D>(m_place.out / name, surface);
        f.record.files.push_back(name);
        if (m_vtp_too) {
            const std::string vtp = fmt::format("frames/surface_{:05d}.vtp", f.record.index);
            write_mesh<D>(m_place.out / vtp, surface);
            f.record.files.push_back(vtp);
        }
    }
    void after(const std::vector<FrameRecord>& frames) override {
        const auto listed = listed_files(frames, "frames/surface_", ".vtp");
        if (!listed.empty()) io::write_pvd(m_place.out / "surface.pvd", listed);
    }

private:
    OutputPlace m_place;
    SurfaceSettings m_settings;
    std::string m_format;
    std::vector<std::string> m_attributes;
    bool m_vtp_too;
};

// Whether boundary object `obj` (a scene "boundaries" entry) moves.
template <int D>
bool object_moves(const BoundarySet<D>& b, std::size_t obj) {
    return obj < b.motions.size() && b.motions[obj].moving();
}

// The scene's models (meshes, polygons) at their pose at time t, with their boundary object index.
template <int D>
std::vector<std::pair<std::uint16_t, Mesh<D>>> posed_models(const ParticleSimulation<D>& sim, double t) {
    std::vector<std::pair<std::uint16_t, Mesh<D>>> out;
    for (std::size_t i = 0; i < sim.scene.boundaries.size(); ++i) {
        const MeshShape<D>* m = model_shape<D>(sim.scene.boundaries[i].model);
        if (!m) continue;
        Mesh<D> mesh;
        mesh.cells = m->mesh().cells;
        mesh.vertices = m->mesh().vertices;
        if (object_moves(sim.boundary, i)) {
            const RigidPose<D> pose = sim.boundary.motions[i].pose(t);
            for (auto& v : mesh.vertices) v = pose.apply(v);
        }
        out.emplace_back(static_cast<std::uint16_t>(i), std::move(mesh));
    }
    return out;
}

// The scene's models but the bodies' (a body's model is its own object in Blender, bodies/body_KK.obj)
// as one OBJ, for Blender and other mesh tools.
template <int D>
Mesh<D> models_but_bodies(const Scene& scene, const std::vector<std::pair<std::uint16_t, Mesh<D>>>& models) {
    Mesh<D> all;
    for (const auto& [obj, m] : models) {
        if (scene.boundaries[obj].body >= 0) continue;
        const auto base = static_cast<std::uint32_t>(all.vertices.size());
        all.vertices.insert(all.vertices.end(), m.vertices.begin(), m.vertices.end());
        for (auto c : m.cells) {
            for (auto& k : c) k += base;
            all.cells.push_back(c);
        }
    }
    return all;
}

// The particles of `p` within `reach` (m) of one of `points`, every field, in p's order.
template <int D>
ParticleSet<D> near_points(const ParticleSet<D>& p, std::span<const Vec<D>> points, float reach, const ExecContext& exec) {
    NeighborGrid<D> grid(reach);
    grid.build(points, exec);
    std::vector<std::uint8_t> near(p.size(), 0);
    parallel_for_each_index(exec, p.size(), [&](std::size_t i) {
        grid.for_each_neighbor(p.position[i], reach, [&](std::uint32_t) { near[i] = 1; });
    });
    std::vector<std::uint32_t> rows;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (near[i]) rows.push_back(static_cast<std::uint32_t>(i));
    ParticleSet<D> out;  // the extra fields registered while it is empty, then every field filled alike
    for (const auto& f : p.scalars) out.add_scalar(f.name);
    for (const auto& f : p.vectors) out.add_vector(f.name);
    auto pick = [&](auto& to, const auto& from) {
        if (from.size() != p.size()) return;  // a field not sized like the set holds nothing per particle
        for (std::uint32_t i : rows) to.push_back(from[i]);
    };
    pick(out.position, p.position), pick(out.velocity, p.velocity), pick(out.acceleration, p.acceleration);
    pick(out.density, p.density), pick(out.pressure, p.pressure), pick(out.id, p.id);
    for (std::size_t k = 0; k < p.scalars.size(); ++k) pick(out.scalars[k].data, p.scalars[k].data);
    for (std::size_t k = 0; k < p.vectors.size(); ++k) pick(out.vectors[k].data, p.vectors[k].data);
    out.mass = p.mass, out.next_id = p.next_id;
    return out;
}

// Over several processes: the fluid within the method's kernel support of `points` (1% beyond it), every
// process's part gathered on the writer into `out` in id order (collective; the others get nothing).
template <int D>
void gather_near(const OutputPlace& place, const ParticleSimulation<D>& sim, std::span<const Vec<D>> points,
                 ParticleSet<D>& out) {
    const float h = std::visit([](const auto& m) { return m.neighbor_radius(); }, sim.method);
    place.hooks->gather(near_points<D>(sim.fluid, points, 1.01f * h, *place.exec), out);
}

// The wall particles of the objects that move (moving = true) or of those that do not, in the set's order
// (so an object's rigid fit in walls.vtp sums them as the whole set does); `models` likewise.
template <int D>
BoundarySet<D> walls_that_move(const BoundarySet<D>& b, bool moving) {
    BoundarySet<D> out;
    out.motions = b.motions, out.sampled_layers = b.sampled_layers;
    out.particle_radius = b.particle_radius, out.layers = b.layers;
    for (std::size_t k = 0; k < b.size(); ++k) {
        if (object_moves(b, b.object[k]) != moving) continue;
        out.position.push_back(b.position[k]);
        out.rest_position.push_back(b.rest_position[k]);
        out.velocity.push_back(b.velocity[k]);
        out.psi.push_back(b.psi[k]);
        out.object.push_back(b.object[k]);
    }
    return out;
}

template <int D>
std::vector<std::pair<std::uint16_t, Mesh<D>>> models_that_move(std::vector<std::pair<std::uint16_t, Mesh<D>>> models,
                                                                const BoundarySet<D>& b, bool moving) {
    std::erase_if(models, [&](const auto& om) { return object_moves(b, om.first) != moving; });
    return models;
}

// The walls beside the fluid: once when nothing moves (frames/walls.vtp, .obj), else every frame
// (frames/walls_NNNNN, walls.pvd); every frame too with the fluid's pressure on them (--wall-pressure),
// which changes as it flows. Frames in pieces (--pieces) without the pressure split them: the walls that
// do not move once (frames/walls.vtp, .obj), those that move every frame (frames/walls_NNNNN, walls.pvd),
// so that over several processes, without pictures (of the walls too), once is all the writer needs the
// whole walls for; it then keeps, as the others do, the moving walls and the fixed ones near its box.
template <int D>
class WallFiles final : public ParticleOutput<D> {
public:
    WallFiles(const OutputPlace& place, const ParticleOutputPlan& plan, std::vector<std::pair<double, std::string>>& pvd)
        : m_place(place), m_vtk(has(plan.formats, "vtk")), m_pressure(plan.wall_pressure && m_vtk),
          m_split(plan.pieces && !m_pressure), m_pvd(pvd) {
        if (place.hooks && m_split && !plan.render) place.hooks->walls_written_once();
    }

    // The pressure over several processes: the writer gathers only the fluid within the kernel's support of a
    // wall particle, not the whole (each sums its fluid neighbours in (cell, id) order: the same bits).
    void each_process(ParticleFrame<D>& f) override {
        if (m_place.hooks && m_pressure && !f.sim.boundary.empty())
            gather_near<D>(m_place, f.sim, f.sim.boundary.position, m_near);
    }
    void write(ParticleFrame<D>& f) override {
        const ParticleSimulation<D>& sim = f.sim;
        const bool moving = sim.boundary.any_moving() || (m_pressure && !sim.boundary.empty());
        if (sim.boundary.empty() || !(f.record.index == 0 || moving)) return;
        const std::string each = fmt::format("frames/walls_{:05d}", f.record.index);
        auto models = posed_models(sim, sim.time);
        if (!m_split || !moving) return write_walls(f, moving ? each : "frames/walls", sim.boundary, models, moving);
        if (f.record.index == 0)
            write_walls(f, "frames/walls", walls_that_move(sim.boundary, false), models_that_move(models, sim.boundary, false), false);
        write_walls(f, each, walls_that_move(sim.boundary, true), models_that_move(std::move(models), sim.boundary, true), true);
    }

private:
    // One walls file (stem.vtp, and stem.obj of the models but the bodies'); `listed` in walls.pvd.
    void write_walls(ParticleFrame<D>& f, const std::string& stem, const BoundarySet<D>& walls,
                     std::vector<std::pair<std::uint16_t, Mesh<D>>> models, bool listed) {
        const ParticleSimulation<D>& sim = f.sim;
        if (walls.empty() && models.empty()) return;  // pieces: no wall that does not move
        // The fluid's pressure on the walls, in the world's axes (gravity's), before the files' turn (each_process).
        std::vector<float> on_walls, on_models;
        if (m_pressure && !walls.empty()) {
            const float h = std::visit([](const auto& m) { return m.neighbor_radius(); }, sim.method);
            const ParticleSet<D>& fluid = m_place.hooks ? m_near : *f.all;  // the whole, or all that is near the walls
            on_walls = wall_pressure<D>(walls, fluid, from_array<D>(sim.scene.gravity), h, *m_place.exec);
            std::vector<Vec<D>> verts;
            for (const auto& [obj, m] : models) verts.insert(verts.end(), m.vertices.begin(), m.vertices.end());
            on_models = wall_pressure_at<D>(verts, walls, on_walls, h, *m_place.exec);
        }
        std::optional<BoundarySet<D>> turned;
        if constexpr (D == 3)
            if (m_place.up != UpAxis::y) {
                turned = io::in_file_axes(walls, m_place.up);
                for (auto& [obj, m] : models) to_file_axes(m, UpAxis::y, m_place.up);
            }
        if (m_vtk) {
            io::write_walls_vtp(m_place.out / (stem + ".vtp"), turned ? *turned : walls, models, on_walls, on_models);
            f.record.files.push_back(stem + ".vtp");
            if (listed) {
                m_pvd.emplace_back(sim.time, stem + ".vtp");
                io::write_pvd(m_place.out / "walls.pvd", m_pvd);
            }
        }
        const auto is_body = [&](const auto& om) { return sim.scene.boundaries[om.first].body >= 0; };
        if (!std::all_of(models.begin(), models.end(), is_body)) {
            write_obj(m_place.out / (stem + ".obj"), models_but_bodies(sim.scene, models));
            f.record.files.push_back(stem + ".obj");
        }
    }

    OutputPlace m_place;
    bool m_vtk, m_pressure, m_split;
    ParticleSet<D> m_near;  // over several processes, with the pressure: the fluid near the walls, on the writer
    std::vector<std::pair<double, std::string>>& m_pvd;
};

// The bodies (issue 30; eddy/bodies_io.hpp): their surfaces at rest once (bodies/body_KK.obj, for
// Blender), at their pose every frame (frames/bodies_NNNNN.vtp, bodies.pvd), their state in bodies.csv.
template <int D>
class BodyFiles final : public ParticleOutput<D> {
public:
    BodyFiles(const OutputPlace& place, const ParticleSimulation<D>& sim)
        : m_place(place), m_rest(io::body_rest_meshes<D>(sim.bodies, io::body_prism_depth(sim.scene.particle_radius))),
          m_objects(sim.bodies.object), m_any(!sim.bodies.empty()) {}
    // Without bodies too: an earlier run's bodies/ files go.
    void begin() override { io::write_body_meshes(m_place.out / "bodies", m_rest, m_place.up); }
    void write(ParticleFrame<D>& f) override {
        if (!m_any) return;
        const std::string name = fmt::format("frames/bodies_{:05d}.vtp", f.record.index);
        io::write_bodies_vtp(m_place.out / name, m_rest, f.sim.bodies.state, m_place.up);
        f.record.files.push_back(name);
    }
    void after(const std::vector<FrameRecord>& frames) override {
        if (!m_any) return;
        write_bodies_csv(m_place.out / "bodies.csv", frames, m_objects);
        io::write_pvd(m_place.out / "bodies.pvd", listed_files(frames, "frames/bodies_"));
    }

private:
    OutputPlace m_place;
    std::vector<Mesh<3>> m_rest;
    std::vector<std::uint16_t> m_objects;
    bool m_any;
};

// The fluid's loads on the boundary objects (forces.csv), from the frames' records.
template <int D>
class ForceFiles final : public ParticleOutput<D> {
public:
    explicit ForceFiles(const OutputPlace& place) : m_place(place) {}
    void after(const std::vector<FrameRecord>& frames) override {
        if (frames.back().index > 0 && !frames.back().loads.empty()) write_forces_csv(m_place.out / "forces.csv", frames);
    }

private:
    OutputPlace m_place;
};

// The fluid at the scene's probes every frame (read_probes): probes.csv, "time,probe,name,x,y,z,pressure,vx,vy,vz",
// one row per frame and probe, rewritten atomically at every frame; the readings of every frame in the run
// record (a resumed run's file is the same bits as an uninterrupted one's). Over several processes the writer
// gathers only the fluid within the probes' reach, not the whole: a probe sums the particles within the
// kernel's support in the neighbour grid's order (world cells, then the set's order, here the ids'), which
// such a part keeps, so the same bits.
template <int D>
class ProbeFiles final : public ParticleOutput<D> {
public:
    ProbeFiles(const OutputPlace& place, const Scene& scene) : m_place(place), m_points(probe_points<D>(scene)) {
        for (const auto& p : scene.probes) m_names.push_back(p.name);
    }
    void each_process(ParticleFrame<D>& f) override {
        if (m_place.hooks) gather_near<D>(m_place, f.sim, m_points, m_near);
    }
    void write(ParticleFrame<D>& f) override {
        m_rows.push_back(read_probes<D>(f.sim, m_place.hooks ? m_near : *f.all, m_points, *m_place.exec));
    }
    void after(const std::vector<FrameRecord>& frames) override {
        std::string text = "time,probe,name,x,y,z,pressure,vx,vy,vz\n";
        for (std::size_t f = 0; f < m_rows.size() && f < frames.size(); ++f)
            for (std::size_t k = 0; k < m_rows[f].size(); ++k) {
                const Vec<D>& x = m_points[k];
                const ProbeReading& r = m_rows[f][k];
                fmt::format_to(std::back_inserter(text), "{:.17g},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n",
                               frames[f].time, k, m_names[k], x[0], x[1], D == 3 ? x[D - 1] : 0.0f, r.pressure,
                               r.velocity[0], r.velocity[1], r.velocity[2]);
            }
        io::write_atomic(m_place.out / "probes.csv", text);
    }
    void save(nlohmann::json& rj) const override {
        nlohmann::json frames = nlohmann::json::array();
        for (const auto& row : m_rows) {
            nlohmann::json probes = nlohmann::json::array();
            for (const ProbeReading& r : row) probes.push_back({r.pressure, r.velocity[0], r.velocity[1], r.velocity[2]});
            frames.push_back(std::move(probes));
        }
        rj["probes"] = std::move(frames);
    }
    void restore(const RecordReader& r, std::size_t frames) override {
        constexpr double kFloat = std::numeric_limits<float>::max();
        const nlohmann::json& a = r.array("probes", frames);
        m_rows.clear();
        for (std::size_t f = 0; f < frames; ++f) {
            const std::string at = fmt::format("probes[{}]", f);
            if (!a[f].is_array() || a[f].size() != m_points.size())
                r.fail(at, fmt::format("is not a list of {} probe readings", m_points.size()));
            std::vector<ProbeReading> row(m_points.size());
            for (std::size_t k = 0; k < row.size(); ++k) {
                const std::string what = fmt::format("{}[{}]", at, k);
                if (!a[f][k].is_array() || a[f][k].size() != 4) r.fail(what, "is not 4 numbers (pressure, velocity)");
                row[k].pressure = static_cast<float>(r.number_at(a[f][k][0], what, -kFloat, kFloat));
                for (int c = 0; c < 3; ++c)
                    row[k].velocity[c] = static_cast<float>(r.number_at(a[f][k][1 + c], what, -kFloat, kFloat));
            }
            m_rows.push_back(std::move(row));
        }
    }

private:
    OutputPlace m_place;
    std::vector<Vec<D>> m_points;
    std::vector<std::string> m_names;
    ParticleSet<D> m_near;  // over several processes: the fluid near the probes, gathered on the writer
    std::vector<std::vector<ProbeReading>> m_rows;  // per frame, per probe
};

// A picture of every frame (--render): frames/particles_NNNNN.png.
template <int D>
class PictureFiles final : public ParticleOutput<D> {
public:
    PictureFiles(const OutputPlace& place, const RenderSettings& rs) : m_place(place), m_settings(rs) {}
    bool needs_whole(const ParticleFrame<D>&) const override { return true; }
    void write(ParticleFrame<D>& f) override {
        const std::string name = frame_name(f.record.index, "png");
        render_state<D>(m_place.out / name, f.sim, *f.all, m_settings);
        f.record.files.push_back(name);
    }

private:
    OutputPlace m_place;
    RenderSettings m_settings;
};

}  // namespace

template <int D>
void render_state(const std::filesystem::path& file, const ParticleSimulation<D>& sim, const ParticleSet<D>& fluid,
                  const RenderSettings& rs) {
    render_png(file, fluid, &sim.boundary, scene_bounds<D>(sim.scene), static_cast<float>(sim.scene.particle_radius), rs);
}

RenderSettings scene_render_settings(const Scene& scene, const RenderSettings& given) {
    RenderSettings rs = given;
    if (rs.solid_objects.empty())  // obstacles and models: opaque, a veil over what is behind (render.hpp)
        for (const auto& b : scene.boundaries) rs.solid_objects.push_back(b.solid ? 1 : 0);
    if (scene.camera.given) {
        rs.eye = from_array<3>(scene.camera.eye);
        rs.target = from_array<3>(scene.camera.target);
        rs.fov_deg = static_cast<float>(scene.camera.fov_deg);
    }
    // Colour scale: the middle of the map at half the free-fall speed of the fluid's height.
    if (!given.speed_scale_set) {
        const double v = std::sqrt(2.0 * norm(from_array<3>(scene.gravity)) * fluid_height(scene));
        if (v > 0.0) rs.speed_scale = static_cast<float>(0.5 * v);
    }
    return rs;
}

template <int D>
std::vector<std::unique_ptr<ParticleOutput<D>>> make_particle_outputs(const ParticleSimulation<D>& sim,
                                                                      const ParticleOutputPlan& plan,
                                                                      const OutputPlace& place, PvdLists& pvd,
                                                                      LiveWhitewater<D>& whitewater) {
    std::vector<std::unique_ptr<ParticleOutput<D>>> outputs;
    if (whitewater.on()) outputs.push_back(std::make_unique<WhitewaterFiles<D>>(whitewater));
    outputs.push_back(std::make_unique<ParticleFiles<D>>(place, plan.formats, plan.pieces, pvd.particles));
    if (plan.mesh) outputs.push_back(std::make_unique<SurfaceFiles<D>>(place, plan));
    outputs.push_back(std::make_unique<WallFiles<D>>(place, plan, pvd.walls));
    outputs.push_back(std::make_unique<BodyFiles<D>>(place, sim));
    outputs.push_back(std::make_unique<ForceFiles<D>>(place));
    if (!sim.scene.probes.empty()) outputs.push_back(std::make_unique<ProbeFiles<D>>(place, sim.scene));
    if (plan.render) outputs.push_back(std::make_unique<PictureFiles<D>>(place, plan.render_settings));
    return outputs;
}

#define EDDY_OUTPUTS(D)                                                                                                \
    template std::vector<std::unique_ptr<ParticleOutput<D>>> make_particle_outputs<D>(                                 \
        const ParticleSimulation<D>&, const ParticleOutputPlan&, const OutputPlace&, PvdLists&, LiveWhitewater<D>&);   \
    template void render_state<D>(const std::filesystem::path&, const ParticleSimulation<D>&, const ParticleSet<D>&,   \
                                  const RenderSettings&);
EDDY_OUTPUTS(2)
EDDY_OUTPUTS(3)
#undef EDDY_OUTPUTS

}  // namespace eddy::detail
