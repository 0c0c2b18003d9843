// The whitewater of a live run: stepped every 1/(fps K) s of simulated time (the same whitewater step
// as `eddy whitewater RUN_DIR --substeps K` takes between frames), written every frame.
#include "sim/whitewater_output.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/settings.hpp"
#include "sim/run_support.hpp"

namespace eddy::detail {

template <int D>
LiveWhitewater<D>::LiveWhitewater(const RunOptions& opts, const Scene& scene, double fps, UpAxis up, double time0,
                                  const RecordReader* rec) {
    const bool resumed = rec && rec->has("whitewater");  // a checkpoint of a run with --whitewater
    if (!opts.whitewater && !resumed) return;
    if (opts.whitewater_substeps < 0 || opts.whitewater_substeps > 100000)
        throw InputError(fmt::format("--whitewater-substeps = {}: allowed: 0 (after every fluid step) to 100000",
                                     opts.whitewater_substeps));
    validate(opts.whitewater_settings, "--whitewater");
    m_on = true;
    m_settings = opts.whitewater_settings;
    m_radius = static_cast<float>(scene.particle_radius);
    m_gravity = from_array<D>(scene.gravity);
    m_time0 = m_last = time0;
    m_substeps = opts.whitewater_substeps;
    m_interval = m_substeps > 0 ? 1.0 / (fps * m_substeps) : 0.0;
    m_files.emplace(opts.out_dir, up);
    if (resumed) restore(*rec, fps);
}

template <int D>
nlohmann::json LiveWhitewater<D>::record() const {
    nlohmann::json j;
    j["settings"] = to_json(m_settings, whitewater_fields());
    j["substeps"] = m_substeps;
    j["clock"] = {m_time0, m_last, m_next};
    nlohmann::json pos = nlohmann::json::array(), vel = nlohmann::json::array();
    for (std::size_t i = 0; i < m_w.size(); ++i)
        for (int d = 0; d < D; ++d) {
            pos.push_back(m_w.position[i][d]);  // floats as doubles: exact, and written to round-trip
            vel.push_back(m_w.velocity[i][d]);
        }
    j["position"] = std::move(pos);
    j["velocity"] = std::move(vel);
    j["lifetime"] = m_w.lifetime;
    j["type"] = m_w.type;
    j["id"] = m_w.id;
    j["next_id"] = m_w.next_id;
    const WhitewaterCounts& c = m_w.counts;
    j["counts"] = {c.generated, c.expired, c.escaped, c.walled, c.capped};
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : m_files->rows()) rows.push_back({r.frame, r.time, r.spray, r.foam, r.bubbles});
    j["rows"] = std::move(rows);
    return j;
}

// The state record() kept, from an untrusted checkpoint: every value checked (RecordReader's one-line errors).
template <int D>
void LiveWhitewater<D>::restore(const RecordReader& rec, double fps) {
    const nlohmann::json& w = rec.json()["whitewater"];
    auto at = [&](const char* key) -> const nlohmann::json& {
        if (!w.is_object() || !w.contains(key)) rec.fail(fmt::format("whitewater.{}", key), "is missing");
        return w[key];
    };
    m_settings = WhitewaterSettings{};
    apply_json(m_settings, whitewater_fields(), at("settings"), rec.where() + ": run record key 'whitewater.settings'");
    validate(m_settings, rec.where() + ": run record key 'whitewater.settings'");
    m_substeps = static_cast<int>(rec.count_at(at("substeps"), "whitewater.substeps", 100000));
    m_interval = m_substeps > 0 ? 1.0 / (fps * m_substeps) : 0.0;
    const nlohmann::json& clock = at("clock");
    if (!clock.is_array() || clock.size() != 3) rec.fail("whitewater.clock", "is not [time0, last, next]");
    m_time0 = rec.number_at(clock[0], "whitewater.clock[0]", 0.0, m_time0);
    m_last = rec.number_at(clock[1], "whitewater.clock[1]", m_time0, m_last);
    m_next = rec.count_at(clock[2], "whitewater.clock[2]", std::uint64_t(1) << 53);
    const nlohmann::json& ids = at("id");
    if (!ids.is_array() || ids.size() > (std::size_t(1) << 31)) rec.fail("whitewater.id", "is not a list of ids");
    const std::size_t n = ids.size();
    m_w.next_id = static_cast<std::uint32_t>(rec.count_at(at("next_id"), "whitewater.next_id", 0xffffffffu));
    auto numbers = [&](const char* key, std::size_t count) {
        const nlohmann::json& a = at(key);
        if (!a.is_array() || a.size() != count) rec.fail(fmt::format("whitewater.{}", key), fmt::format("is not a list of {} numbers", count));
        constexpr double kFloat = std::numeric_limits<float>::max();
        std::vector<float> v(count);
        for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(rec.number_at(a[i], fmt::format("whitewater.{}[{}]", key, i), -kFloat, kFloat));
        return v;
    };
    const std::vector<float> pos = numbers("position", n * D), vel = numbers("velocity", n * D);
    m_w.lifetime = numbers("lifetime", n);
    const nlohmann::json& types = at("type");
    if (!types.is_array() || types.size() != n) rec.fail("whitewater.type", fmt::format("is not a list of {} types", n));
    for (std::size_t i = 0; i < n; ++i) {
        m_w.id.push_back(static_cast<std::uint32_t>(rec.count_at(ids[i], fmt::format("whitewater.id[{}]", i), 0xffffffffu)));
        if (m_w.id[i] >= m_w.next_id || (i > 0 && m_w.id[i] <= m_w.id[i - 1]))
            rec.fail(fmt::format("whitewater.id[{}]", i), "is not below next_id and above the one before");
        m_w.type.push_back(static_cast<std::uint8_t>(rec.count_at(types[i], fmt::format("whitewater.type[{}]", i), 2)));
        Vec<D> p, v;
        for (int d = 0; d < D; ++d) p[d] = pos[i * D + d], v[d] = vel[i * D + d];
        m_w.position.push_back(p);
        m_w.velocity.push_back(v);
    }
    const nlohmann::json& c = at("counts");
    if (!c.is_array() || c.size() != 5) rec.fail("whitewater.counts", "is not [generated, expired, escaped, walled, capped]");
    std::uint64_t* since[] = {&m_w.counts.generated, &m_w.counts.expired, &m_w.counts.escaped, &m_w.counts.walled, &m_w.counts.capped};
    for (int k = 0; k < 5; ++k) *since[k] = rec.count_at(c[k], fmt::format("whitewater.counts[{}]", k), std::uint64_t(1) << 62);
    count_whitewater(m_w);
    const nlohmann::json& rows = at("rows");
    if (!rows.is_array()) rec.fail("whitewater.rows", "is not a list");
    std::vector<WhitewaterFiles::Row> kept;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const std::string what = fmt::format("whitewater.rows[{}]", k);
        if (!rows[k].is_array() || rows[k].size() != 5) rec.fail(what, "is not [frame, time, spray, foam, bubbles]");
        WhitewaterFiles::Row row;
        row.frame = static_cast<int>(rec.count_at(rows[k][0], what, 1u << 30));
        row.time = rec.number_at(rows[k][1], what, 0.0, m_last + 1e300);
        row.spray = rec.count_at(rows[k][2], what, std::uint64_t(1) << 62);
        row.foam = rec.count_at(rows[k][3], what, std::uint64_t(1) << 62);
        row.bubbles = rec.count_at(rows[k][4], what, std::uint64_t(1) << 62);
        kept.push_back(row);
    }
    m_files->restore(std::move(kept));
}

template <int D>
bool LiveWhitewater<D>::due(double time) const {
    if (!m_on) return false;
    if (m_interval <= 0.0) return true;  // after every fluid step
    const double at = m_time0 + double(m_next) * m_interval;
    return time >= at - 1e-9 * std::max(1.0, std::fabs(at));
}

template <int D>
void LiveWhitewater<D>::step(ParticleSimulation<D>& sim, const ParticleSet<D>* fluid, const ExecContext& exec) {
    const double time = sim.time;
    // The next whitewater time after this one (a fluid step longer than the interval skips some).
    if (m_interval > 0.0) m_next = static_cast<std::uint64_t>(std::floor((time - m_time0) / m_interval + 1e-6)) + 1;
    if (fluid) {
        if (!m_walls_built || m_wall_objects != sim.scene.boundaries.size()) {
            m_walls = scene_walls<D>(sim.scene, exec);
            m_wall_objects = sim.scene.boundaries.size();
            m_walls_built = true;
        }
        // Moving walls where the fluid's step left them (the solvers' own walls are at this time too).
        if (sim.boundary.any_moving()) update_wall_poses(m_walls, sim.boundary.motions, time);
        // One process: the method's own lists at these positions, which its next step then keeps (no second
        // search); gathered from several processes: the whitewater's own search (the same bits).
        const FluidLists<D> shared = fluid == &sim.fluid ? fluid_lists_between_steps(sim, exec) : FluidLists<D>{};
        step_whitewater_by_id<D>(m_w, fluid->position, fluid->velocity, fluid->id, m_radius, m_gravity, time - m_last,
                                 sim.steps, m_settings, exec, &m_walls, shared);
    }
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
