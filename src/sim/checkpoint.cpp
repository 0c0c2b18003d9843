// Checkpoints of particle simulations (include/eddy/checkpoint.hpp has the file layout): the scene as
// run, the clock, every particle field in its current order (the order is part of the state: sums
// run over neighbours in it), and the method's own state. Resuming rebuilds the simulation from the
// scene (walls, settings, derived constants) and then puts the saved state in place.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "eddy/checkpoint.hpp"
#include "eddy/json_text.hpp"
#include "eddy/simulation.hpp"

namespace eddy {

namespace {

template <int D>
void save_particles(StateWriter& w, const ParticleSet<D>& f) {
    const std::size_t n = f.size(), vec = n * sizeof(Vec<D>) + 8, num = n * 4 + 8;
    w.reserve_more(3 * vec + 3 * num + 64 + f.scalars.size() * (num + 80) + f.vectors.size() * (vec + 80));
    w.put_vector(f.position);
    w.put_vector(f.velocity);
    w.put_vector(f.acceleration);
    w.put_vector(f.density);
    w.put_vector(f.pressure);
    w.put_vector(f.id);
    w.put(f.mass);
    w.put(f.next_id);
    w.put<std::uint64_t>(f.scalars.size());
    for (const auto& s : f.scalars) {
        w.put_string(s.name);
        w.put_vector(s.data);
    }
    w.put<std::uint64_t>(f.vectors.size());
    for (const auto& v : f.vectors) {
        w.put_string(v.name);
        w.put_vector(v.data);
    }
}

// Ids below next_id, each once: every particle's, the rows a process keeps or not.
void check_ids(const StateReader& r, std::vector<std::uint32_t> ids, std::uint32_t next_id) {
    for (std::uint32_t id : ids)
        if (id >= next_id) r.fail("a particle id is not below next_id");
    std::sort(ids.begin(), ids.end());
    if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) r.fail("two particles have the same id");
}

// An array of a checkpoint as it lies in the state's bytes (issue 44: a process keeps some of its rows and
// checks them all, so that every process finds the same fault): its length checked as get_vector checks it
// (StateReader::get_array_bytes).
template <class T>
struct ArrayBytes {
    std::string_view bytes;
    std::size_t size() const { return bytes.size() / sizeof(T); }
};

template <class T>
ArrayBytes<T> get_array(StateReader& r, std::size_t expect, std::size_t max = SIZE_MAX) {
    return {r.get_array_bytes<T>(expect, max)};
}

// Every float of the array finite (positions, velocities and the extra vectors are floats too).
template <class T>
bool all_finite(ArrayBytes<T> a) {
    static_assert(sizeof(T) % sizeof(float) == 0);
    for (std::size_t k = 0; k < a.bytes.size(); k += sizeof(float)) {
        float x;
        std::memcpy(&x, a.bytes.data() + k, sizeof x);
        if (!std::isfinite(x)) return false;
    }
    return true;
}

// Rows [b, e) of the array into v.
template <class T>
void keep_rows(std::vector<T>& v, ArrayBytes<T> a, std::pair<std::size_t, std::size_t> rows) {
    v.resize(rows.second - rows.first);
    if (!v.empty()) std::memcpy(v.data(), a.bytes.data() + rows.first * sizeof(T), v.size() * sizeof(T));
}

struct AllRows {
    std::pair<std::size_t, std::size_t> operator()(std::size_t n) const { return {0, n}; }
};

// The particles of a checkpoint into `f`, which the scene has just built (and the method initialised):
// every array its length, every number finite, ids distinct and below next_id, the extra fields with
// plain names (they end up in files), at least one particle; of n particles the rows rows(n) are kept (a
// process's run of a whole checkpoint, issue 44: never all of them held as well). Returns n.
// A checkpoint in pieces may hold none (the index, a process's empty box): `may_be_empty`.
template <int D, class Rows = AllRows>
std::size_t load_particles(StateReader& r, ParticleSet<D>& f, bool may_be_empty = false, Rows rows = {}) {
    const auto position = get_array<Vec<D>>(r, SIZE_MAX, r.remaining() / (2 * sizeof(Vec<D>)));  // and velocities
    const std::size_t n = position.size();
    if (n == 0 && !may_be_empty) r.fail("it holds no particle");
    const auto velocity = get_array<Vec<D>>(r, n), acceleration = get_array<Vec<D>>(r, n);
    const auto density = get_array<float>(r, n), pressure = get_array<float>(r, n);
    const auto id = get_array<std::uint32_t>(r, n);
    f.mass = r.get<float>();
    f.next_id = r.get<std::uint32_t>();
    if (!(std::isfinite(f.mass) && f.mass >= 0.0f)) r.fail("the particle mass is not a number >= 0");
    if (!all_finite(position)) r.fail("a particle position is not finite (NaN or infinite)");
    if (!all_finite(velocity)) r.fail("a particle velocity is not finite (NaN or infinite)");
    if (!all_finite(acceleration) || !all_finite(density) || !all_finite(pressure))
        r.fail("a particle's acceleration, density or pressure is not finite");
    std::vector<std::uint32_t> ids;
    keep_rows(ids, id, {0, n});
    check_ids(r, std::move(ids), f.next_id);
    const auto [b, e] = rows(n);
    const std::pair kept{std::min(b, n), std::min(e, n)};  // a piece shorter than its index lists keeps what it has
    keep_rows(f.position, position, kept), keep_rows(f.velocity, velocity, kept), keep_rows(f.acceleration, acceleration, kept);
    keep_rows(f.density, density, kept), keep_rows(f.pressure, pressure, kept), keep_rows(f.id, id, kept);
    // Extra fields (methods add some as they run: DFSPH's viscosity warm start): their names end up in
    // the frames' files, so only plain names, each once.
    auto fields = [&]<class T>(auto& list, const char* what, T) {
        const auto count = r.get<std::uint64_t>();
        if (count > 64) r.fail(fmt::format("it has {} extra {} fields; allowed: at most 64", count, what));
        list.resize(count);
        for (std::size_t k = 0; k < list.size(); ++k) {
            auto& field = list[k];
            field.name = r.get_string();
            const bool plain = !field.name.empty() && field.name.size() <= 64 &&
                               std::all_of(field.name.begin(), field.name.end(), [](char c) {
                                   return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
                               });
            if (!plain) r.fail(fmt::format("an extra {} field is named \"{}\"; allowed: letters, digits, _", what,
                                           text_excerpt(field.name, 40)));
            for (std::size_t i = 0; i < k; ++i)
                if (list[i].name == field.name) r.fail(fmt::format("two extra fields are named {}", field.name));
            const auto data = get_array<T>(r, n);
            if (!all_finite(data)) r.fail(fmt::format("the field {} is not finite", field.name));
            keep_rows(field.data, data, kept);
        }
    };
    fields(f.scalars, "scalar", float{});
    fields(f.vectors, "vector", Vec<D>{});
    return n;
}

// The scene's models (as read and placed) and file fluids' particles: a resumed run rebuilds its scene
// from these and never opens a model or particle file again (issue 29, item 10).
void save_inputs(StateWriter& w, const SceneInputs& in) {
    w.put<std::uint64_t>(in.meshes.size());
    for (const auto& m : in.meshes) {
        w.put_vector(m->vertices);
        w.put_vector(m->cells);
    }
    w.put<std::uint64_t>(in.particle_files.size());
    for (const auto& p : in.particle_files) w.put_vector(*p);
}

SceneInputs load_inputs(StateReader& r) {
    SceneInputs in;
    const auto meshes = r.get<std::uint64_t>();
    if (meshes > 4096) r.fail("it carries more than 4096 models");
    for (std::uint64_t k = 0; k < meshes; ++k) {
        auto m = std::make_shared<Mesh<3>>();
        r.get_vector(m->vertices);
        r.get_vector(m->cells);
        for (const auto& v : m->vertices)
            for (int a = 0; a < 3; ++a)
                if (!std::isfinite(v[a])) r.fail("a model's vertex is not finite");
        for (const auto& c : m->cells)
            for (auto i : c)
                if (i >= m->vertices.size()) r.fail("a model's triangle names a vertex it does not have");
        in.meshes.push_back(std::move(m));
    }
    const auto files = r.get<std::uint64_t>();
    if (files > 4096) r.fail("it carries more than 4096 particle files");
    for (std::uint64_t k = 0; k < files; ++k) {
        auto p = std::make_shared<std::vector<double>>();
        r.get_vector(*p);
        in.particle_files.push_back(std::move(p));
    }
    return in;
}

// The particles' fields without their rows: the index of a checkpoint in pieces holds these.
template <int D>
ParticleSet<D> no_rows(const ParticleSet<D>& f) {
    ParticleSet<D> none;
    none.mass = f.mass;
    none.next_id = f.next_id;
    for (const auto& x : f.scalars) none.scalars.push_back({x.name, {}});
    for (const auto& x : f.vectors) none.vectors.push_back({x.name, {}});
    return none;
}

// A whole checkpoint, or with `pieces` the index of one in pieces (its particles in the pieces).
void write_state(const std::filesystem::path& file, const Simulation& simulation, const nlohmann::json& record,
                 const nlohmann::json* pieces) {
    std::visit(
        [&](const auto& sim) {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            nlohmann::json meta{{"kind", "particles"}, {"dimension", D}, {"method", sim.scene.method}};
            if (pieces) meta["pieces"] = *pieces;
            meta["scene"] = sim.scene.document;
            meta["scene_source"] = sim.scene.source.string();
            meta["time"] = sim.time;
            meta["steps"] = sim.steps;
            meta["run"] = record;
            StateWriter w;
            w.put(sim.time);
            w.put(sim.steps);
            save_inputs(w, scene_inputs(sim.scene));
            save_particles(w, pieces ? no_rows(sim.fluid) : sim.fluid);
            std::visit([&](const auto& m) { m.save_state(w); }, sim.method);
            w.put_vector(sim.bodies.state);  // all the engine needs (eddy/bodies.hpp)
            // The emitters' and the outflow's counts (issue 31; absent in older checkpoints).
            w.put_vector(sim.flow.counts.due);
            w.put_vector(sim.flow.counts.emitted);
            w.put(sim.flow.counts.removed_outflow);
            w.put(sim.flow.counts.removed_escaped);
            w.put_vector(sim.flow.counts.drained);  // issue 45: per sink (absent before)
            write_checkpoint_file(file, meta, w.bytes());
        },
        simulation);
}

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const Simulation& simulation, const nlohmann::json& record) {
    write_state(file, simulation, record, nullptr);
}

std::string checkpoint_piece_name(std::uint64_t steps, int rank) {
    return fmt::format("checkpoint_s{:012d}_p{:04d}.eddy", steps, rank);
}

void write_checkpoint_piece(const std::filesystem::path& file, const Simulation& simulation, int rank) {
    std::visit(
        [&](const auto& sim) {
            nlohmann::json meta{{"kind", "particle_piece"}, {"rank", rank}, {"steps", sim.steps}, {"time", sim.time},
                                {"particles", sim.fluid.size()}};
            StateWriter w;
            save_particles(w, sim.fluid);
            write_checkpoint_file(file.parent_path() / checkpoint_piece_name(sim.steps, rank), meta, w.bytes());
        },
        simulation);
}

void write_checkpoint_index(const std::filesystem::path& file, const Simulation& simulation, const nlohmann::json& record,
                            const std::vector<std::uint64_t>& counts) {
    const nlohmann::json pieces{{"counts", counts}};
    write_state(file, simulation, record, &pieces);
}

Simulation read_checkpoint(const std::filesystem::path& file, const ExecContext& exec, nlohmann::json& record,
                           const MemoryBudget& budget) {
    return restore_simulation(read_checkpoint_file(file), exec, record, budget);
}

namespace {

// The meta data of a particle checkpoint: untrusted, every key checked (kind, dimension, method, the
// clock, the scene). The run record is checked key by key by the run loop (RecordReader).
void check_particle_meta(const nlohmann::json& meta, const std::string& where) {
    auto bad = [&](const std::string& key, const std::string& what) {
        throw InputError(fmt::format("{}: corrupt checkpoint: meta key '{}' {}", where, key, what));
    };
    if (!meta.contains("kind") || meta["kind"] != "particles") bad("kind", "is not \"particles\"");
    if (!meta.contains("dimension") || !meta["dimension"].is_number_integer() ||
        (meta["dimension"] != 2 && meta["dimension"] != 3))
        bad("dimension", "is not 2 or 3");
    if (!meta.contains("method") || !meta["method"].is_string()) bad("method", "is not a method's name");
    check_common_meta(meta, where);
}

void check_bodies(const StateReader& r, const std::vector<BodyState>& bodies) {
    for (const BodyState& b : bodies) {
        bool finite = true;
        for (double x : b.position) finite = finite && std::isfinite(x);
        for (double x : b.orientation) finite = finite && std::isfinite(x);
        for (double x : b.velocity) finite = finite && std::isfinite(x);
        for (double x : b.angular_velocity) finite = finite && std::isfinite(x);
        const double q = b.orientation[0] * b.orientation[0] + b.orientation[1] * b.orientation[1] +
                         b.orientation[2] * b.orientation[2] + b.orientation[3] * b.orientation[3];
        if (!finite || std::fabs(q - 1.0) > 1e-6) r.fail("a body's state is not finite or not a rotation");
    }
}

// Rows [b, e) of `from` after the rows of `to` (the same fields, in the same order: checked by the caller).
template <int D>
void append_rows(ParticleSet<D>& to, const ParticleSet<D>& from, std::size_t b, std::size_t e) {
    auto add = [&](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin() + std::ptrdiff_t(b), src.begin() + std::ptrdiff_t(e)); };
    add(to.position, from.position);
    add(to.velocity, from.velocity);
    add(to.acceleration, from.acceleration);
    add(to.density, from.density);
    add(to.pressure, from.pressure);
    add(to.id, from.id);
    for (std::size_t k = 0; k < to.scalars.size(); ++k) add(to.scalars[k].data, from.scalars[k].data);
    for (std::size_t k = 0; k < to.vectors.size(); ++k) add(to.vectors[k].data, from.vectors[k].data);
}

// The rows [b, e) of `total` a process's share of a checkpoint's particles takes: n part / parts to n (part + 1) / parts.
std::pair<std::uint64_t, std::uint64_t> share_rows(unsigned __int128 total, ProcessShare share) {
    return {std::uint64_t(total * unsigned(share.part) / unsigned(share.parts)),
            std::uint64_t(total * unsigned(share.part + 1) / unsigned(share.parts))};
}

// A whole checkpoint resumed on several processes (issue 44): the rows of this process's run of its particles, cut
// as a checkpoint in pieces is (load_share); the boxes are then cut from the runs' counts, as at a start.
struct RunOf {
    ProcessShare share;
    std::pair<std::size_t, std::size_t> operator()(std::size_t n) const {
        const auto [b, e] = share_rows(n, share);
        return {std::size_t(b), std::size_t(e)};
    }
};

// A resumed run's budget: no start runs, so the estimate counts WCSPH's fluid in shares too (estimate_process_memory).
MemoryBudget resumed(MemoryBudget b) {
    b.resumed = true;
    return b;
}

// The counts of a checkpoint's pieces (meta "pieces"), checked: one per process that wrote it.
std::vector<std::uint64_t> piece_counts(const nlohmann::json& pieces, const StateReader& r) {
    const nlohmann::json* c = pieces.is_object() && pieces.contains("counts") ? &pieces["counts"] : nullptr;
    if (!c || !c->is_array() || c->empty() || c->size() > (1u << 20))
        r.fail("meta key 'pieces' does not list its pieces' counts (1 to 2^20 of them)");
    std::vector<std::uint64_t> counts;
    for (const auto& x : *c) {
        if (!x.is_number_unsigned() || x.get<std::uint64_t>() > std::uint64_t(UINT32_MAX))
            r.fail("a piece's particle count is not a whole number below 2^32");
        counts.push_back(x.get<std::uint64_t>());
    }
    return counts;
}

// A checkpoint in pieces (issue 44): this process's share of its particles, in rank order, from the pieces
// that hold a part of it (each piece read whole, checked as a checkpoint's particles are, then its rows in
// the share kept): the particles of `f`, which holds the index's (none, their fields' names).
template <int D>
void load_share(const CheckpointFile& index, ParticleSet<D>& f, std::uint64_t steps, ProcessShare share) {
    const StateReader at_index(index.state, index.file.string());
    if (share.parts < 1 || share.part < 0 || share.part >= share.parts)
        throw InputError(fmt::format("{}: share {} of {} of its particles: no such share", index.file.string(), share.part, share.parts));
    const std::vector<std::uint64_t> counts = piece_counts(index.meta["pieces"], at_index);
    unsigned __int128 total = 0;
    for (auto c : counts) total += c;
    if (total == 0) at_index.fail("it holds no particle");
    if (!f.empty()) at_index.fail("it lists pieces, yet holds particles itself");
    const auto [b, e] = share_rows(total, share);
    std::uint64_t first = 0;  // the first row of piece k in the whole
    for (std::size_t k = 0; k < counts.size(); first += counts[k++]) {
        const std::uint64_t lo = std::max(b, first), hi = std::min(e, first + counts[k]);
        if (lo >= hi) continue;
        const std::filesystem::path file = index.file.parent_path() / checkpoint_piece_name(steps, int(k));
        if (!std::filesystem::exists(file))
            throw InputError(fmt::format("{}: its piece {} (of {}) is missing; allowed: the folder as the run left it, "
                                         "every piece beside checkpoint.eddy", index.file.string(), file.filename().string(), counts.size()));
        const CheckpointFile piece = read_checkpoint_file(file);
        StateReader r(piece.state, piece.file.string());
        const nlohmann::json& m = piece.meta;
        if (m.value("kind", "") != "particle_piece" || m.value("rank", -1) != int(k) || m.value("steps", ~std::uint64_t(0)) != steps)
            r.fail(fmt::format("it is not piece {} of the checkpoint at step {} (meta keys kind, rank, steps)", k, steps));
        ParticleSet<D> got;  // only the rows in the share
        const std::size_t n = load_particles(r, got, true, [&](std::size_t) { return std::pair{std::size_t(lo - first), std::size_t(hi - first)}; });
        if (!r.done()) r.fail("unexpected bytes after its particles");
        if (n != counts[k] || got.mass != f.mass || got.next_id != f.next_id)
            r.fail(fmt::format("its particles (count, mass or next_id) are not those {} lists", index.file.string()));
        bool same_fields = got.scalars.size() == f.scalars.size() && got.vectors.size() == f.vectors.size();
        for (std::size_t i = 0; same_fields && i < f.scalars.size(); ++i) same_fields = got.scalars[i].name == f.scalars[i].name;
        for (std::size_t i = 0; same_fields && i < f.vectors.size(); ++i) same_fields = got.vectors[i].name == f.vectors[i].name;
        if (!same_fields) r.fail(fmt::format("its extra fields are not those {} lists", index.file.string()));
        append_rows(f, got, 0, got.size());
    }
    check_ids(at_index, f.id, f.next_id);  // across the pieces read
}

// The emitters' and the outflow's counts (issue 31), checked against the scene and the clock.
template <int D>
void load_flow_counts(StateReader& r, Flow<D>& flow, double time) {
    FlowCounts& fc = flow.counts;
    r.get_vector(fc.due, flow.emitters.size());
    r.get_vector(fc.emitted, flow.emitters.size());
    fc.removed_outflow = r.get<std::uint64_t>();
    fc.removed_escaped = r.get<std::uint64_t>();
    if (!r.done()) r.get_vector(fc.drained, flow.sinks.size());
    for (std::size_t k = 0; k < fc.due.size(); ++k)
        if (fc.emitted[k] > fc.due[k] || fc.due[k] > flow.emitters[k].due_by(time) + 1)
            r.fail("an emitter's counts do not match its scene and the clock");
}

}  // namespace

Simulation restore_simulation(const CheckpointFile& ck, const ExecContext& exec, nlohmann::json& record,
                              const MemoryBudget& budget, ProcessShare share) {
    const std::string where = ck.file.string();
    const auto& meta = ck.meta;
    try {
        check_particle_meta(meta, where);
        // The clock, then the models and particle files the scene read: the scene as it was run is
        // rebuilt from its JSON and these, without opening a file (the files may have moved or changed
        // since). Its errors name the checkpoint.
        StateReader r(ck.state, where);
        const double time = r.get<double>();
        const auto steps = r.get<std::uint64_t>();
        // The clock in the state is the one in the meta data, bit for bit.
        if (!std::isfinite(time) || time != meta["time"].get<double>() || steps != meta["steps"].get<std::uint64_t>())
            r.fail("the clock in its state is not the one in its meta data (or not finite)");
        const SceneInputs inputs = load_inputs(r);
        const bool in_pieces = meta.contains("pieces");  // issue 44: its particles are in the pieces
        std::optional<Scene> parsed;
        try {
            parsed.emplace(parse_scene_from(meta["scene"], meta["scene_source"].get<std::string>(), inputs));
        } catch (const InputError& e) {
            throw InputError(fmt::format("{}: the scene it holds: {}", where, e.what()));
        }
        const Scene& scene = *parsed;
        if (scene.dimension != meta["dimension"].get<int>() || scene.method != meta["method"].get<std::string>())
            throw InputError(fmt::format("{}: corrupt checkpoint: meta keys 'dimension' and 'method' do not match its scene", where));
        {
            const SceneInputs used = scene_inputs(scene);
            if (used.meshes.size() != inputs.meshes.size() || used.particle_files.size() != inputs.particle_files.size())
                r.fail("the models or particle files it carries are not its scene's");
        }
        // This process's share of the fluid is built without a start (WCSPH's hydrostatic one) and the checkpoint's
        // replaces it, in pieces or whole; its walls as at a start: moving walls and bodies whole (their motions set
        // from the checkpoint below), the fixed ones near its box once the boxes are cut (place_walls).
        const ProcessShare build{share.parts > 1 ? share.part : 0, std::max(1, share.parts), true};
        Simulation simulation = make_simulation(scene, std::numeric_limits<std::size_t>::max(), exec, resumed(budget), build);
        std::visit(
            [&](auto& sim) {
                sim.time = time;
                sim.steps = steps;
                load_particles(r, sim.fluid, in_pieces, RunOf{build});  // all of them on one process, none in pieces
                if (in_pieces) load_share(ck, sim.fluid, steps, share);
                std::visit([&](auto& m) { m.load_state(r); }, sim.method);
                r.get_vector(sim.bodies.state, sim.bodies.size());
                check_bodies(r, sim.bodies.state);
                sync_body_motions(sim.bodies, sim.boundary, time);
                if (!r.done()) load_flow_counts(r, sim.flow, time);  // issue 31
            },
            simulation);
        if (!r.done()) r.fail("unexpected bytes after the method's state");
        record = meta["run"];
        return simulation;
    } catch (const nlohmann::json::exception& e) {
        // A value of an unexpected type anywhere in the meta data: one line, not the library's text.
        throw InputError(fmt::format("{}: corrupt checkpoint: its meta data has a value of the wrong type ({})", where,
                                     text_excerpt(e.what(), 80)));
    }
}

}  // namespace eddy
