// Whitewater: the settings' table and one step (the passes in potentials.cpp, advection.cpp,
// generation.cpp; Ihmsen et al. 2012).
#include <algorithm>
#include <chrono>
#include <numeric>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/bounds.hpp"
#include "eddy/error.hpp"
#include "whitewater/internal.hpp"

namespace eddy {

std::span<const Field<WhitewaterSettings>> whitewater_fields() {
    using S = WhitewaterSettings;
    static const Field<S> table[] = {
        {"kernel_radius", &S::kernel_radius, "m", 0, kInf, "support h of the neighbourhoods; 0: 4 r, as eddy's SPH"},
        {"trapped_air_min", &S::trapped_air_min, "m/s", 0, kInf, "trapped air: v_diff below this gives nothing (tau_ta min)"},
        {"trapped_air_max", &S::trapped_air_max, "m/s", 0, kInf, "trapped air: v_diff above this gives the most (tau_ta max)", {}, true},
        {"wave_crest_min", &S::wave_crest_min, "", 0, kInf, "wave crest: curvature below this gives nothing (tau_wc min)"},
        {"wave_crest_max", &S::wave_crest_max, "", 0, kInf, "wave crest: curvature above this gives the most (tau_wc max)", {}, true},
        {"kinetic_min", &S::kinetic_min, "J/kg", 0, kInf, "kinetic energy |v|^2/2 below this gives nothing (tau_k min)"},
        {"kinetic_max", &S::kinetic_max, "J/kg", 0, kInf, "kinetic energy above this gives the most (tau_k max)", {}, true},
        {"crest_alignment", &S::crest_alignment, "", -1, 1, "wave crest only where v^ . n^ >= this (paper: 0.6)"},
        {"normal_threshold", &S::normal_threshold, "", 0, kInf, "a surface normal only where |grad colour| h >= this"},
        {"trapped_air_rate", &S::trapped_air_rate, "1/s", 0, 1e9, "k_ta: particles per fluid particle per second at full potential"},
        {"wave_crest_rate", &S::wave_crest_rate, "1/s", 0, 1e9, "k_wc: particles per fluid particle per second at full potential"},
        {"lifetime_min", &S::lifetime_min, "s", 0, 1e9, "foam's lifetime, drawn uniformly from [min, max]"},
        {"lifetime_max", &S::lifetime_max, "s", 0, 1e9, "foam's lifetime, drawn uniformly from [min, max]"},
        {"spray_neighbors", &S::spray_neighbors, "particles", 0, 1000, "spray below this many fluid neighbours; 0: 6 (3D), 2 (2D)"},
        {"bubble_neighbors", &S::bubble_neighbors, "particles", 0, 1000, "bubbles above this many; 0: 20 (3D), 8 (2D)"},
        {"buoyancy", &S::buoyancy, "", 0, 1000, "bubbles: k_b, buoyancy as a multiple of -g"},
        {"drag", &S::drag, "", 0, 1, "bubbles: k_d, the fraction of the difference to the fluid's velocity removed per step"},
        {"seed", &S::seed, "", 0, 2147483647, "seed of the counter-based random numbers"},
        {"max_particles", &S::max_particles, "particles", 0, 2147483647, "most diffuse particles kept; generation stops at it; 0: as many as fluid particles"},
        {"margin", &S::margin, "m", 0, kInf, "dropped beyond the fluid's bounding box plus this; 0: 10 h"},
    };
    return table;
}

void validate(const WhitewaterSettings& s, const std::string& where) {
    validate(s, whitewater_fields(), where);
    auto order = [&](const char* lo_key, float lo, const char* hi_key, float hi) {
        if (!(lo < hi))
            throw InputError(fmt::format("{}: key '{}' = {:g} is not below '{}' = {:g}; allowed: {} < {}", where, lo_key, lo,
                                         hi_key, hi, lo_key, hi_key));
    };
    order("trapped_air_min", s.trapped_air_min, "trapped_air_max", s.trapped_air_max);
    order("wave_crest_min", s.wave_crest_min, "wave_crest_max", s.wave_crest_max);
    order("kinetic_min", s.kinetic_min, "kinetic_max", s.kinetic_max);
    if (s.lifetime_min > s.lifetime_max)
        throw InputError(fmt::format("{}: key 'lifetime_min' = {:g} is above 'lifetime_max' = {:g}; allowed: min <= max",
                                     where, s.lifetime_min, s.lifetime_max));
    if (s.spray_neighbors > 0 && s.bubble_neighbors > 0 && s.spray_neighbors > s.bubble_neighbors)
        throw InputError(fmt::format("{}: key 'spray_neighbors' = {} is above 'bubble_neighbors' = {}; allowed: spray <= bubble",
                                     where, s.spray_neighbors, s.bubble_neighbors));
}

WhitewaterSettings whitewater_settings_from(const std::vector<std::string>& key_values, const std::string& where,
                                            WhitewaterSettings base) {
    nlohmann::json obj = nlohmann::json::object();
    for (const std::string& kv : key_values) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError(fmt::format("{}: '{}' is not KEY=VALUE; allowed keys: see eddy whitewater --help", where, kv));
        const std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
        nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
        if (v.is_discarded()) v = text;
        obj[key] = v;
    }
    apply_json(base, whitewater_fields(), obj, where);
    validate(base, where);
    return base;
}

template <int D>
void count_whitewater(Whitewater<D>& w) {
    std::uint64_t c[3] = {0, 0, 0};
    for (const std::uint8_t t : w.type) ++c[std::min<std::uint8_t>(t, 2)];
    w.counts.spray = c[0];
    w.counts.foam = c[1];
    w.counts.bubbles = c[2];
}

namespace {

// The region kept: the fluid's bounding box (a deterministic reduction: the same whatever the order the
// fluid is held in) plus the margin.
template <int D>
Aabb<D> keep_region(std::span<const Vec<D>> fluid_pos, float margin, const ExecContext& exec) {
    Aabb<D> keep = detail::bounding_box(fluid_pos.data(), fluid_pos.size(), exec);
    for (int k = 0; k < D; ++k) {
        keep.lo[k] -= margin;
        keep.hi[k] += margin;
    }
    return keep;
}

// The three passes over the fluid as it is held (pos, vel: not empty), on `grid` (built over pos, cell size
// h, buckets in the fluid's id order) and its lists within h (or null: potentials searches them); order and
// rank: the id order and its inverse (both empty: the index order is the id order).
template <int D>
void step_on(Whitewater<D>& w, std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
             const NeighborGrid<D>& grid, const NeighborLists* lists, std::span<const std::uint32_t> order,
             std::span<const std::uint32_t> rank, float particle_radius, Vec<D> gravity, double dt,
             std::uint64_t step_index, const WhitewaterSettings& s, const ExecContext& exec,
             const std::vector<Wall<D>>* walls) {
    const float h = s.support(particle_radius);
    const float fdt = static_cast<float>(dt);
    const Aabb<D> keep = keep_region<D>(fluid_pos, s.margin > 0.0f ? s.margin : 10.0f * h, exec);
    // The diffuse particles there already move with the fluid's new velocities (the paper's v_f(t + dt)),
    // then the fluid's new state makes new ones.
    const float wall_margin = wall_contact_margin(particle_radius, false);  // r/2, as a lone fluid particle
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    auto t = Clock::now();
    ww::advect<D>(w, grid, fluid_vel, h, gravity, fdt, keep, s, exec, walls, wall_margin);
    w.times.advect = since(t);
    t = Clock::now();
    WhitewaterPotentials p;
    ww::potentials<D>(grid, lists, fluid_pos, fluid_vel, particle_radius, s, exec, p);
    w.times.potentials = since(t);
    t = Clock::now();
    ww::generate<D>(w, p, grid, fluid_pos, fluid_vel, order, rank, particle_radius, h, fdt, step_index, s, exec, walls,
                    wall_margin);
    count_whitewater(w);
    w.times.generate = since(t);
}

}  // namespace

template <int D>
void step_whitewater(Whitewater<D>& w, std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
                     float particle_radius, Vec<D> gravity, double dt, std::uint64_t step_index,
                     const WhitewaterSettings& s, const ExecContext& exec, const std::vector<Wall<D>>* walls) {
    EDDY_ASSERT(fluid_pos.size() == fluid_vel.size());
    EDDY_ASSERT(particle_radius > 0.0f && dt >= 0.0);
    if (fluid_pos.empty()) {  // nothing to classify against, nothing to keep them near
        w.counts.escaped += w.size();
        const WhitewaterCounts c = w.counts;
        const std::uint32_t next = w.next_id;
        w.clear();
        w.counts = c;
        w.next_id = next;
        count_whitewater(w);
        return;
    }
    NeighborGrid<D> grid(s.support(particle_radius));
    grid.build(fluid_pos, exec);
    step_on<D>(w, fluid_pos, fluid_vel, grid, nullptr, {}, {}, particle_radius, gravity, dt, step_index, s, exec, walls);
}

std::vector<std::uint32_t> id_order(std::span<const std::uint32_t> ids) {
    const std::size_t n = ids.size();
    std::vector<std::uint32_t> order(n);
    if (n == 0) return order;
    const std::uint32_t top = *std::max_element(ids.begin(), ids.end());
    if (std::size_t(top) < 4 * n + 1024) {  // dense ids (a run's): one pass through a table of slots
        constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
        std::vector<std::uint32_t> slot(std::size_t(top) + 1, kNone);
        for (std::size_t i = 0; i < n; ++i) slot[ids[i]] = static_cast<std::uint32_t>(i);
        std::size_t k = 0;
        for (const std::uint32_t i : slot)
            if (i != kNone) order[k++] = i;
        if (k == n) return order;  // else ids held twice (a crafted frame): sorted below, ties by index
    }
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b] || (ids[a] == ids[b] && a < b); });
    return order;
}

template <int D>
void step_whitewater_by_id(Whitewater<D>& w, std::span<const Vec<D>> fluid_pos, std::span<const Vec<D>> fluid_vel,
                           std::span<const std::uint32_t> fluid_id, float particle_radius, Vec<D> gravity, double dt,
                           std::uint64_t step_index, const WhitewaterSettings& s, const ExecContext& exec,
                           const std::vector<Wall<D>>* walls, const FluidLists<D>& shared) {
    EDDY_ASSERT(fluid_id.size() == fluid_pos.size() && fluid_vel.size() == fluid_pos.size());
    const std::size_t n = fluid_pos.size();
    const float h = s.support(particle_radius);
    // The method's lists serve when they are the ones the whitewater's own search would give: the same
    // radius and cell size over these very particles (both grids' buckets in id order).
    const bool use_shared = shared.grid && shared.lists && shared.radius == h && shared.grid->cell_size() == h &&
                            shared.grid->point_count() == n && shared.lists->size() == n;
    if (n == 0 || (!use_shared && std::is_sorted(fluid_id.begin(), fluid_id.end()))) {  // held in id order
        step_whitewater<D>(w, fluid_pos, fluid_vel, particle_radius, gravity, dt, step_index, s, exec, walls);
        return;
    }
    EDDY_ASSERT(particle_radius > 0.0f && dt >= 0.0);
    const std::vector<std::uint32_t> order = id_order(fluid_id);
    std::vector<std::uint32_t> rank(n);
    parallel_for_each_index(exec, n, [&](std::size_t k) { rank[order[k]] = static_cast<std::uint32_t>(k); });
    NeighborGrid<D> own(h);
    if (!use_shared) own.build(fluid_pos, exec, fluid_id);  // buckets in id order: the lists as if held so
    step_on<D>(w, fluid_pos, fluid_vel, use_shared ? *shared.grid : own, use_shared ? shared.lists : nullptr, order, rank,
               particle_radius, gravity, dt, step_index, s, exec, walls);
}

template struct Whitewater<2>;
template struct Whitewater<3>;
template void count_whitewater<2>(Whitewater<2>&);
template void count_whitewater<3>(Whitewater<3>&);
template void step_whitewater<2>(Whitewater<2>&, std::span<const Vec<2>>, std::span<const Vec<2>>, float, Vec<2>, double,
                                 std::uint64_t, const WhitewaterSettings&, const ExecContext&, const std::vector<Wall<2>>*);
template void step_whitewater<3>(Whitewater<3>&, std::span<const Vec<3>>, std::span<const Vec<3>>, float, Vec<3>, double,
                                 std::uint64_t, const WhitewaterSettings&, const ExecContext&, const std::vector<Wall<3>>*);

template void step_whitewater_by_id<2>(Whitewater<2>&, std::span<const Vec<2>>, std::span<const Vec<2>>,
                                       std::span<const std::uint32_t>, float, Vec<2>, double, std::uint64_t,
                                       const WhitewaterSettings&, const ExecContext&, const std::vector<Wall<2>>*,
                                       const FluidLists<2>&);
template void step_whitewater_by_id<3>(Whitewater<3>&, std::span<const Vec<3>>, std::span<const Vec<3>>,
                                       std::span<const std::uint32_t>, float, Vec<3>, double, std::uint64_t,
                                       const WhitewaterSettings&, const ExecContext&, const std::vector<Wall<3>>*,
                                       const FluidLists<3>&);

}  // namespace eddy
