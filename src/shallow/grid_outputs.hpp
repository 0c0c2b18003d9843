// A grid run's outputs (issue 41): one class per kind of file, as a particle run's (src/sim/particle_outputs.hpp),
// called by GridRun::frame (src/shallow/run_loop.hpp) at every frame in the order their files are listed:
// the grid's fields (.vti and grid.pvd, or every process's .vti piece and a .pvti), its cells as CSV, the
// water surface (.obj, .ply), the picture (.png), the floating bodies (bodies.csv). An output keeps in the
// run's record what a resumed run needs of it (save, restore).
//
// A new kind of grid file: a class deriving from GridOutput, made in make_grid_outputs where its files should
// be listed. `write` names the frame's files in record.files on every process; the root writes them (or
// every process its piece), from the whole grid `frame.whole` (gathered on the root).
#pragma once
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/io.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "sim/run_support.hpp"

namespace eddy::detail {

inline std::string grid_frame_name(int index, const char* stem, const char* ext) {
    return fmt::format("frames/{}_{:05d}.{}", stem, index, ext);
}

// What an output sees of a frame: the run folder, the frame's number and time, the whole grid (on the root
// when the run gathers it; nullptr elsewhere), whether this process writes, and the frames before it.
template <class Grid>
struct GridFrame {
    const std::filesystem::path& out;
    int index = 0;
    double time = 0.0;
    const Grid* whole = nullptr;
    bool root = true;
    const std::vector<FrameRecord>& earlier;
};

// What a resumed run gives its outputs back: the checkpoint's record (checked: read_grid_record) and how to
// refuse a corrupt one (every process alike).
struct GridResume {
    const GridRecord& checked;
    const nlohmann::json& record;
    std::string where;
    std::function<void(const std::string&)> refuse;
};

template <class Stepper, class Grid>
class GridOutput {
public:
    virtual ~GridOutput() = default;
    virtual void write(const GridFrame<Grid>& frame, Stepper& stepper, FrameRecord& record) = 0;
    virtual void save(nlohmann::json&) const {}
    virtual void restore(const GridResume&) {}
};

// The grid's fields: frames/grid_NNNNN.vti and grid.pvd listing them; with pieces, every process's block
// (frames/grid_NNNNN_pRRRR.vti) and a .pvti listing those.
template <class Stepper, class Grid>
class GridFieldFrames final : public GridOutput<Stepper, Grid> {
public:
    explicit GridFieldFrames(bool pieces) : m_pieces(pieces) {}
    void write(const GridFrame<Grid>& f, Stepper& stepper, FrameRecord& record) override {
        std::string name = grid_frame_name(f.index, "grid", m_pieces ? "pvti" : "vti");
        if (m_pieces)
            for (auto& piece : stepper.write_pieces(f.out, name)) record.files.push_back(std::move(piece));
        else if (f.root)
            io::write_vti(f.out / name, *f.whole);
        m_pvd.emplace_back(f.time, name);
        record.files.push_back(std::move(name));
        if (f.root) io::write_pvd(f.out / "grid.pvd", m_pvd);
    }
    void save(nlohmann::json& rj) const override {
        nlohmann::json p = nlohmann::json::array();
        for (const auto& [t, name] : m_pvd) p.push_back({t, name});
        rj["pvd"] = p;
    }
    void restore(const GridResume& r) override { m_pvd = r.checked.pvd; }

private:
    bool m_pieces;
    std::vector<std::pair<double, std::string>> m_pvd;
};

// The cells as a table: frames/grid_NNNNN.csv.
template <class Stepper, class Grid>
class GridCellsCsv final : public GridOutput<Stepper, Grid> {
public:
    void write(const GridFrame<Grid>& f, Stepper&, FrameRecord& record) override {
        std::string name = grid_frame_name(f.index, "grid", "csv");
        if (f.root) io::write_grid_csv(f.out / name, *f.whole);
        record.files.push_back(std::move(name));
    }
};

// The water's surface over the terrain: frames/surface_NNNNN.obj or .ply, with the run's up axis.
template <class Stepper, class Grid>
class GridSurfaceFrames final : public GridOutput<Stepper, Grid> {
public:
    GridSurfaceFrames(std::string ext, UpAxis up) : m_ext(std::move(ext)), m_up(up) {}
    void write(const GridFrame<Grid>& f, Stepper&, FrameRecord& record) override {
        std::string name = grid_frame_name(f.index, "surface", m_ext.c_str());
        if (f.root) io::write_water_mesh(f.out / name, *f.whole, m_up);
        record.files.push_back(std::move(name));
    }

private:
    std::string m_ext;
    UpAxis m_up;
};

// A picture of every frame: frames/grid_NNNNN.png (drawn by the run: the bodies' footprints when it has them).
template <class Stepper, class Grid>
class GridPictures final : public GridOutput<Stepper, Grid> {
public:
    using Draw = std::function<void(const std::filesystem::path&, const Grid&)>;
    explicit GridPictures(Draw draw) : m_draw(std::move(draw)) {}
    void write(const GridFrame<Grid>& f, Stepper&, FrameRecord& record) override {
        std::string name = grid_frame_name(f.index, "grid", "png");
        if (f.whole) m_draw(f.out / name, *f.whole);
        record.files.push_back(std::move(name));
    }

private:
    Draw m_draw;
};

// One row of bodies.csv: pose, velocity, the water's force and torque (19 numbers after time and body).
inline std::array<double, 19> body_row(const ShallowBody& b) {
    return {b.x[0], b.x[1], b.x[2], b.q[0], b.q[1], b.q[2], b.q[3], b.v[0], b.v[1], b.v[2],
            b.omega[0], b.omega[1], b.omega[2], b.force[0], b.force[1], b.force[2], b.torque[0], b.torque[1], b.torque[2]};
}

// The floating bodies: out/bodies.csv, every frame's bodies, rewritten whole (atomically) at each frame; the
// rows in the run's record ("bodies": per frame, per body 19 finite numbers).
template <class Stepper, class Grid>
class GridBodiesCsv final : public GridOutput<Stepper, Grid> {
public:
    using Rows = std::vector<std::array<double, 19>>;
    explicit GridBodiesCsv(std::function<Rows()> now) : m_now(std::move(now)) {}
    void write(const GridFrame<Grid>& f, Stepper&, FrameRecord&) override {
        m_rows.push_back(m_now());
        if (!f.root) return;
        std::string text = "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz\n";
        for (std::size_t k = 0; k < m_rows.size(); ++k) {
            const double t = k < f.earlier.size() ? f.earlier[k].time : f.time;
            for (std::size_t b = 0; b < m_rows[k].size(); ++b) {
                fmt::format_to(std::back_inserter(text), "{:.17g},{}", t, b);
                for (double v : m_rows[k][b]) fmt::format_to(std::back_inserter(text), ",{:.17g}", v);
                text += '\n';
            }
        }
        io::write_atomic(f.out / "bodies.csv", text);
    }
    void save(nlohmann::json& rj) const override { rj["bodies"] = m_rows; }
    void restore(const GridResume& r) override;

private:
    std::function<Rows()> m_now;
    std::vector<Rows> m_rows;  // per frame
};

// The bodies' rows of the frames a checkpoint lists: untrusted, every value checked.
template <class Stepper, class Grid>
void GridBodiesCsv<Stepper, Grid>::restore(const GridResume& r) {
    const std::size_t frames = r.checked.frames.size(), bodies = m_now().size();
    const auto& rb = r.record.contains("bodies") ? r.record["bodies"] : nlohmann::json();
    const std::string bad = fmt::format("{}: corrupt checkpoint: record key 'bodies' ", r.where);
    if (!rb.is_array() || rb.size() != frames) r.refuse(bad + "is not one list of bodies per frame");
    m_rows.clear();
    for (const auto& f : rb) {
        if (!f.is_array() || f.size() != bodies) r.refuse(fmt::format("{}has a frame without its {} bodies", bad, bodies));
        Rows rows;
        for (const auto& b : f) {
            if (!b.is_array() || b.size() != 19) r.refuse(bad + "has a body that is not 19 numbers");
            std::array<double, 19> row{};
            for (std::size_t k = 0; k < 19; ++k) {
                if (!b[k].is_number() || !std::isfinite(b[k].get<double>()))
                    r.refuse(bad + "holds a value that is not a finite number");
                row[k] = b[k].get<double>();
            }
            rows.push_back(row);
        }
        m_rows.push_back(std::move(rows));
    }
}

}  // namespace eddy::detail
