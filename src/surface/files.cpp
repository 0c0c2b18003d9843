// `eddy mesh`: particle files (or folders of frames) to surface meshes and signed distance grids.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "eddy/io.hpp"
#include "eddy/surface.hpp"

namespace eddy {

namespace {

namespace fs = std::filesystem;

// summary.json beside the frames (eddy run's), read without blocking (eddy/input_file.hpp); nothing
// when it is missing or not a regular file, a discarded value when it is not JSON.
std::optional<nlohmann::json> read_summary(const fs::path& cand) {
    std::string text;
    try {
        auto f = io::InputFile::open_existing(cand);
        if (!f) return std::nullopt;
        text = f->read_all(std::uint64_t(1) << 26, "summary.json");
    } catch (const InputError&) {
        return std::nullopt;
    }
    return nlohmann::json::parse(text, nullptr, false);
}

// eddy run writes the particle radius into summary.json beside frames/.
float radius_from_summary(const fs::path& input) {
    const fs::path dir = fs::is_directory(input) ? input : input.parent_path();
    for (const fs::path& cand : {dir / "summary.json", dir.parent_path() / "summary.json"}) {
        const auto j = read_summary(cand);
        if (!j) continue;
        if (!j->is_discarded() && j->contains("particle_radius") && (*j)["particle_radius"].is_number())
            return (*j)["particle_radius"].get<float>();
    }
    throw InputError(fmt::format("{}: key 'radius' is not given and no summary.json with particle_radius was found "
                                 "beside it; allowed: --radius R (m, > 0)", input.string()));
}

// The up axis of particle files eddy run wrote (summary.json's "up_axis" beside them); y without one.
UpAxis up_from_summary(const fs::path& input) {
    const fs::path dir = fs::is_directory(input) ? input : input.parent_path();
    for (const fs::path& cand : {dir / "summary.json", dir.parent_path() / "summary.json"}) {
        const auto j = read_summary(cand);
        if (!j) continue;
        if (!j->is_discarded() && j->contains("up_axis") && (*j)["up_axis"].is_string())
            return parse_up_axis((*j)["up_axis"].get<std::string>(), cand.string() + ": key 'up_axis'");
        if (!j->is_discarded()) return UpAxis::y;
    }
    return UpAxis::y;
}

struct Frame {
    fs::path in, out;
    fs::path vtp;  // also as VTK PolyData, for surface.pvd (ParaView's .pvd reader opens VTK XML only); empty: no
};

// The particles' own times of a folder's frames: particles.pvd (eddy run's) in the folder or its parent,
// as file name -> time; empty when there is none or it lists nothing. Read without blocking, at most
// 64 MB; entries that do not parse are skipped.
std::map<std::string, double> pvd_times(const fs::path& dir) {
    std::map<std::string, double> times;
    for (const fs::path& cand : {dir / "particles.pvd", dir.parent_path() / "particles.pvd"}) {
        std::string text;
        try {
            auto f = io::InputFile::open_existing(cand);
            if (!f) continue;
            text = f->read_all(std::uint64_t(1) << 26, "particles.pvd");
        } catch (const InputError&) {
            continue;
        }
        auto attribute = [](const std::string& tag, const char* name) -> std::optional<std::string> {
            const std::string key = std::string(" ") + name + "=\"";
            const auto b = tag.find(key);
            if (b == std::string::npos) return std::nullopt;
            const auto e = tag.find('"', b + key.size());
            if (e == std::string::npos) return std::nullopt;
            return tag.substr(b + key.size(), e - b - key.size());
        };
        for (std::size_t at = text.find("<DataSet"); at != std::string::npos; at = text.find("<DataSet", at + 1)) {
            const auto end = text.find('>', at);
            if (end == std::string::npos) break;
            const std::string tag = text.substr(at, end - at);
            const auto t = attribute(tag, "timestep"), file = attribute(tag, "file");
            if (!t || !file) continue;
            char* stop = nullptr;
            const double time = std::strtod(t->c_str(), &stop);
            if (stop != t->c_str() + t->size() || !std::isfinite(time)) continue;
            times[fs::path(*file).filename().string()] = time;
        }
        if (!times.empty()) return times;
    }
    return times;
}

// The frame number in a name like particles_00012 (the digits after the last '_'), or -1.
long frame_number(const std::string& stem) {
    const auto u = stem.rfind('_');
    if (u == std::string::npos || u + 1 == stem.size() || stem.size() - u > 10) return -1;
    for (std::size_t i = u + 1; i < stem.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(stem[i]))) return -1;
    return std::stol(stem.substr(u + 1));
}

// The particles' fields named in `names`, D components of velocity, for interpolate_attributes.
template <int D>
struct FieldsOf {
    std::vector<float> velocity;
    std::vector<ParticleField> fields;
    FieldsOf(const ParticleSet<3>& p, const std::vector<std::string>& names) {
        for (const auto& n : names) {
            if (n == "velocity") {
                velocity.resize(p.size() * D);
                for (std::size_t i = 0; i < p.size(); ++i)
                    for (int a = 0; a < D; ++a) velocity[i * D + a] = p.velocity[i][a];
                fields.push_back({n, D, velocity});
            } else if (n == "density") {
                fields.push_back({n, 1, p.density});
            } else if (n == "pressure") {
                fields.push_back({n, 1, p.pressure});
            } else {
                throw InputError(fmt::format("key 'interpolate_attributes': '{}': allowed: velocity, density, pressure", n));
            }
        }
    }
};

template <int D>
MeshFilesReport mesh_one(const ParticleSet<3>& p3, const Frame& f, const MeshFilesOptions& opts,
                         const SurfaceSettings& s, const MemoryBudget& budget, UpAxis from, const ExecContext& exec) {
    const UpAxis to = opts.up.value_or(from);
    if (D == 2 && to != from)
        throw InputError(fmt::format("{}: --up {}: 2D particles give a contour in the x-y plane; allowed: leave --up out",
                                     f.in.string(), name(to)));
    std::vector<Vec<D>> pos(p3.size());
    for (std::size_t i = 0; i < pos.size(); ++i)
        for (int a = 0; a < D; ++a) pos[i][a] = p3.position[i][a];
    SurfaceSettings ss = s;
    ss.keep_grids = !opts.sdf_out.empty();
    bool vti = false, vdb = false;
    for (const auto& g : opts.sdf_out) (g.extension() == ".vti" ? vti : vdb) = true;
    // Before any grid exists: a voxel far too small for the particles' spread is refused, not swapped.
    check_memory(estimate_surface_memory<D>(pos, ss, vti, vdb), budget, f.in.string());
    SurfaceResult<D> r;
    try {
        r = reconstruct_surface<D>(pos, ss, exec);
    } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}", f.in.string(), e.what()));
    }
    const FieldsOf<D> fields(p3, opts.attributes);
    interpolate_attributes<D>(r.mesh, pos, fields.fields, ss.support(), exec);
    if constexpr (D == 3) to_file_axes(r.mesh, from, to);
    write_mesh<D>(f.out, r.mesh);
    if (!f.vtp.empty()) write_mesh<D>(f.vtp, r.mesh);
    for (const auto& g : opts.sdf_out) {
        if (g.extension() == ".vti") write_vti<D>(g, r.signed_distance);
        else vdb::write_level_set<D>(g, r.signed_distance, 3.0f, &r.density);
    }
    MeshFilesReport rep;
    rep.frames = 1;
    rep.vertices = r.mesh.vertices.size();
    rep.cells = r.mesh.cells.size();
    rep.dimension = D;
    return rep;
}

MeshFilesReport mesh_frame(const Frame& f, const MeshFilesOptions& opts, const SurfaceSettings& s,
                           const MemoryBudget& budget, UpAxis from, const ExecContext& exec) {
    // The file is held whole in memory while read: larger than the frame's budget, it cannot fit.
    io::ParticleReadOptions read;
    if (!budget.unlimited()) {
        read.max_bytes = budget.limit_bytes;
        read.limit_origin = budget.origin;
    }
    read.allow_outside_references = opts.allow_outside_references;
    const ParticleSet<3> p = io::read_particles<3>(f.in, read);
    const bool flat = std::all_of(p.position.begin(), p.position.end(), [](const Vec3& x) { return x[2] == 0.0f; });
    return flat ? mesh_one<2>(p, f, opts, s, budget, from, exec) : mesh_one<3>(p, f, opts, s, budget, from, exec);
}

bool is_particle_file(const fs::path& p) {
    const auto e = p.extension();
    return e == ".csv" || e == ".vtp" || e == ".pvtp" || e == ".ply";
}

}  // namespace

MeshFilesReport mesh_particle_files(const MeshFilesOptions& opts, const ExecContext& exec) {
    const auto started = std::chrono::steady_clock::now();
    std::error_code ec;
    if (!fs::exists(opts.input, ec))
        throw InputError(fmt::format("{}: no such file or folder; allowed: a particle file (.csv, .vtp, .pvtp, .ply) or a "
                                     "folder of them", opts.input.string()));
    SurfaceSettings s = opts.settings;
    if (s.particle_radius == 0.0f) s.particle_radius = radius_from_summary(opts.input);
    validate(s, "eddy mesh");
    const UpAxis from = up_from_summary(opts.input);
    if (opts.up && *opts.up != from && !opts.sdf_out.empty())
        throw InputError(fmt::format("--sdf with --up {}: grids are written in the particles' axes ({} up); allowed: "
                                     "leave --up out", name(*opts.up), name(from)));
    if (!opts.attributes.empty()) {
        const bool ply = fs::is_directory(opts.input) ? opts.format != "obj" : opts.out.extension() != ".obj";
        if (!ply)
            throw InputError(fmt::format("--interpolate-attributes: {} is not a PLY or VTP mesh (OBJ has no per-vertex "
                                         "fields); allowed: a .ply or .vtp --out, or --format ply or vtp", opts.out.string()));
    }
    for (const auto& g : opts.sdf_out)
        if (g.extension() != ".vti" && g.extension() != ".vdb")
            throw InputError(fmt::format("{}: key 'sdf': format '{}' is not written; allowed: .vti, .vdb", g.string(),
                                         g.extension().string()));
    std::vector<Frame> frames;
    if (fs::is_directory(opts.input)) {
        if (opts.format != "obj" && opts.format != "ply" && opts.format != "vtp")
            throw InputError(fmt::format("key 'format' = '{}': allowed: obj, ply, vtp", opts.format));
        if (!opts.sdf_out.empty())
            throw InputError(fmt::format("{}: key 'sdf' needs a single particle file, not a folder", opts.input.string()));
        // One file per frame: of particles_00001.pvtp/.vtp/.ply/.csv, the first of pvtp, vtp, ply, csv.
        std::map<std::string, fs::path> by_stem;
        const auto rank = [](const fs::path& p) {
            const auto e = p.extension();
            return e == ".pvtp" ? 0 : e == ".vtp" ? 1 : e == ".ply" ? 2 : 3;
        };
        for (const auto& e : fs::directory_iterator(opts.input)) {
            if (!e.is_regular_file() || !is_particle_file(e.path())) continue;
            // eddy run's other frame files: surfaces and walls (walls.vtp, walls_NNNNN.vtp).
            const std::string fname = e.path().filename().string();
            if (fname.rfind("surface_", 0) == 0 || fname.rfind("walls", 0) == 0) continue;
            // The pieces of a --pieces frame (particles_NNNNN_pRRRR.vtp): their .pvtp stands for them.
            const std::string stem = e.path().stem().string();
            if (stem.size() > 6 && stem[stem.size() - 6] == '_' && stem[stem.size() - 5] == 'p' &&
                std::all_of(stem.end() - 4, stem.end(), [](unsigned char c) { return std::isdigit(c); }))
                continue;
            auto [it, fresh] = by_stem.emplace(e.path().stem().string(), e.path());
            if (!fresh && rank(e.path()) < rank(it->second)) it->second = e.path();
        }
        if (by_stem.empty())
            throw InputError(fmt::format("{}: no particle files (.csv, .vtp, .pvtp, .ply) in this folder", opts.input.string()));
        fs::create_directories(opts.out, ec);
        if (!fs::is_directory(opts.out))
            throw InputError(fmt::format("{}: key 'out': cannot create the output folder", opts.out.string()));
        for (const auto& [stem, path] : by_stem) {
            std::string name = stem.rfind("particles_", 0) == 0 ? "surface_" + stem.substr(10) : stem + "_surface";
            frames.push_back({path, opts.out / (name + "." + opts.format),
                              opts.format == "vtp" ? fs::path() : opts.out / (name + ".vtp")});
        }
    } else {
        const auto ext = opts.out.extension();
        if (ext != ".obj" && ext != ".ply" && ext != ".vtp")
            throw InputError(fmt::format("{}: key 'out': allowed: a .obj, .ply or .vtp file", opts.out.string()));
        frames.push_back({opts.input, opts.out, {}});
    }
    std::vector<MeshFilesReport> reps(frames.size());
    if (frames.size() == 1) {
        reps[0] = mesh_frame(frames[0], opts, s, opts.budget, from, exec);
    } else {
        // Frames run in parallel: each may take its share of the budget.
        MemoryBudget budget = opts.budget;
        const std::size_t at_once = std::min<std::size_t>(frames.size(), std::size_t(std::max(1, exec.threads())));
        if (!budget.unlimited() && at_once > 1) {
            budget.limit_bytes /= at_once;
            budget.origin += fmt::format("; shared by {} frames meshed at once, fewer with --threads", at_once);
        }
        // Frames in parallel; each frame's own loops nest inside the same arena. Errors: the first frame's.
        std::vector<std::exception_ptr> errors(frames.size());
        parallel_for_each_index(exec, frames.size(), [&](std::size_t i) {
            try {
                reps[i] = mesh_frame(frames[i], opts, s, budget, from, exec);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }, 1);
        for (const auto& e : errors)
            if (e) std::rethrow_exception(e);
    }
    MeshFilesReport total;
    total.particle_radius = s.particle_radius;
    if (fs::is_directory(opts.input)) {
        // surface.pvd: the surfaces as one time series in ParaView, at the particles' own times.
        const fs::path dir = opts.input.has_filename() ? opts.input : opts.input.parent_path();  // "frames/" too
        const std::map<std::string, double> listed = pvd_times(dir);
        auto summary = read_summary(dir / "summary.json");
        if (!summary || summary->is_discarded()) summary = read_summary(dir.parent_path() / "summary.json");
        double fps = 0.0;
        if (summary && !summary->is_discarded() && summary->contains("fps") && (*summary)["fps"].is_number())
            fps = (*summary)["fps"].get<double>();
        bool all_listed = !listed.empty(), all_numbered = true;
        for (const auto& f : frames) {
            all_listed = all_listed && listed.count(f.in.filename().string());
            all_numbered = all_numbered && frame_number(f.in.stem().string()) >= 0;
        }
        total.times_from = all_listed ? "particles.pvd" : fps > 0.0 && std::isfinite(fps) && all_numbered ? "summary.json fps" : "frame numbers";
        std::vector<std::pair<double, std::string>> entries;
        for (std::size_t i = 0; i < frames.size(); ++i) {
            const long n = frame_number(frames[i].in.stem().string());
            const double t = all_listed ? listed.at(frames[i].in.filename().string())
                             : total.times_from == "summary.json fps" ? double(n) / fps
                             : all_numbered ? double(n) : double(i);
            entries.emplace_back(t, (frames[i].vtp.empty() ? frames[i].out : frames[i].vtp).filename().string());
        }
        io::write_pvd(opts.out / "surface.pvd", entries);
    }
    for (const auto& r : reps) {
        total.frames += r.frames;
        total.vertices += r.vertices;
        total.cells += r.cells;
        total.dimension = r.dimension;
    }
    total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return total;
}

}  // namespace eddy
