// Emitters and outflow (issue 31): the nozzles' lattices and rates, the particles due at a time, the
// particles removed outside the domain. The equations are in include/eddy/emitters.hpp.
#include "eddy/emitters.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "eddy/error.hpp"

namespace eddy {

namespace {

constexpr double kPi = 3.14159265358979323846;
/// A due particle closer than this many spacings to fluid already there is blocked.
constexpr float kBlockedDistance = 0.45f;
/// The nozzle's length ahead of the emitter, in spacings (emit: the fluid in it moves at the jet's speed).
constexpr float kNozzleSpacings = 2.0f;
/// A new particle moves at most this many spacings in one step.
constexpr float kStepSpacings = 0.4f;

template <int D>
Vec<D> to_vec(const std::array<double, 3>& a) {
    Vec<D> v;
    for (int k = 0; k < D; ++k) v[k] = static_cast<float>(a[k]);
    return v;
}

// Two unit vectors across a 3D direction d (a fixed construction: the same lattice on every run).
void across(const Vec<3>& d, Vec<3>& u, Vec<3>& w) {
    const Vec<3> helper = std::fabs(d[1]) < 0.9f ? Vec<3>{{0.0f, 1.0f, 0.0f}} : Vec<3>{{1.0f, 0.0f, 0.0f}};
    Vec<3> a{{helper[1] * d[2] - helper[2] * d[1], helper[2] * d[0] - helper[0] * d[2], helper[0] * d[1] - helper[1] * d[0]}};
    a = a * (1.0f / norm(a));
    u = a;
    w = Vec<3>{{d[1] * a[2] - d[2] * a[1], d[2] * a[0] - d[0] * a[2], d[0] * a[1] - d[1] * a[0]}};
}

// The lattice points across a nozzle: 2D, round(width / s) points (at least one) centred on the
// segment; 3D, the points of a square lattice of spacing s within the disk (the centre at least).
template <int D>
std::vector<Vec<D>> nozzle_columns(const EmitterSpec& e, float s) {
    const Vec<D> c = to_vec<D>(e.center), d = to_vec<D>(e.direction);
    std::vector<Vec<D>> out;
    if constexpr (D == 2) {
        const Vec<2> across2{{-d[1], d[0]}};
        const long n = std::max(1L, std::lround(e.width / s));
        for (long k = 0; k < n; ++k) out.push_back(c + across2 * (static_cast<float>(k - 0.5 * double(n - 1)) * s));
    } else {
        Vec<3> u, w;
        across(d, u, w);
        const long m = static_cast<long>(std::floor(e.radius / s));
        for (long j = -m; j <= m; ++j)
            for (long i = -m; i <= m; ++i)
                if (double(i * i + j * j) * s * s <= e.radius * e.radius)
                    out.push_back(c + u * (static_cast<float>(i) * s) + w * (static_cast<float>(j) * s));
    }
    return out;
}

// How many lattice points nozzle_columns would make (an upper bound in 3D), counted before any is made.
template <int D>
double nozzle_points(const EmitterSpec& e, float s) {
    if constexpr (D == 2) return std::max(1.0, std::round(e.width / s));
    const double m = std::floor(e.radius / s);
    return (2.0 * m + 1.0) * (2.0 * m + 1.0);
}

// The outflow's box and the drains of a flow (parse_scene checked the specs).
template <int D>
void add_outflow(Flow<D>& flow, const DomainSpec& domain, const std::vector<SinkSpec>& sinks) {
    if (domain.given) {
        Aabb<D> box;
        box.lo = to_vec<D>(domain.min);
        box.hi = to_vec<D>(domain.max);
        flow.domain = box;
    }
    for (const SinkSpec& s : sinks) {
        Sink<D> k;
        k.name = s.name;
        k.round = s.shape != "box";
        k.box.lo = to_vec<D>(s.min);
        k.box.hi = to_vec<D>(s.max);
        k.center = to_vec<D>(s.center);
        k.radius = static_cast<float>(s.radius);
        k.start = s.start;
        k.stop = s.stop;
        flow.sinks.push_back(std::move(k));
    }
    flow.counts.drained.assign(sinks.size(), 0);
}

template <int D>
std::string at_text(const Vec<D>& x) {
    return D == 3 ? fmt::format("({:.4g}, {:.4g}, {:.4g})", x[0], x[1], x[D - 1]) : fmt::format("({:.4g}, {:.4g})", x[0], x[1]);
}

}  // namespace

template <int D>
std::uint64_t Emitter<D>::due_by(double t) const {
    if (!(t >= start) || rate <= 0.0) return 0;
    // t_e = start + e / rate <= t: e <= (t - start) rate; and t_e < stop: e < (stop - start) rate.
    const double n = std::min(std::floor((t - start) * rate) + 1.0, std::ceil((stop - start) * rate));
    return n > 0.0 ? static_cast<std::uint64_t>(n) : 0;
}

std::uint64_t FlowCounts::emitted_total() const {
    std::uint64_t n = 0;
    for (auto e : emitted) n += e;
    return n;
}

std::uint64_t FlowCounts::drained_total() const {
    std::uint64_t n = 0;
    for (auto e : drained) n += e;
    return n;
}

std::size_t Removed::total() const {
    std::size_t n = outflow + escaped;
    for (auto e : drained) n += e;
    return n;
}

void add_removed(FlowCounts& counts, const Removed& r) {
    counts.removed_outflow += r.outflow;
    counts.removed_escaped += r.escaped;
    for (std::size_t k = 0; k < r.drained.size() && k < counts.drained.size(); ++k) counts.drained[k] += r.drained[k];
}

std::uint64_t FlowCounts::blocked_total() const {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < due.size(); ++k) n += due[k] - emitted[k];
    return n;
}

template <int D>
float Flow<D>::dt_limit(double t) const {
    float dt = std::numeric_limits<float>::infinity();
    for (const auto& e : emitters)
        if (t + 1e-12 >= e.start - 1e-3 && t < e.stop && e.speed > 0.0f) dt = std::min(dt, kStepSpacings * spacing / e.speed);
    return dt;
}

template <int D>
Flow<D> make_flow(const std::vector<EmitterSpec>& specs, const DomainSpec& domain, const std::vector<SinkSpec>& sinks,
                  float spacing, float particle_mass, float particle_volume, const std::vector<Wall<D>>& walls,
                  const std::string& where, std::size_t max_fluid) {
    Flow<D> flow;
    flow.spacing = spacing;
    flow.particle_mass = particle_mass;
    flow.max_fluid = max_fluid;
    add_outflow(flow, domain, sinks);
    for (std::size_t k = 0; k < specs.size(); ++k) {
        const EmitterSpec& s = specs[k];
        Emitter<D> e;
        e.direction = to_vec<D>(s.direction);
        e.speed = static_cast<float>(s.speed);
        const double points = nozzle_points<D>(s, spacing);
        if (points > double(max_fluid))
            throw InputError(fmt::format("{}: emitters[{}]: {} = {:g} m makes a nozzle of about {:.3g} particles across, "
                                         "more than --max-particles {}; allowed: a nozzle whose one layer fits",
                                         where, k, D == 2 ? "width" : "radius", D == 2 ? s.width : s.radius, points,
                                         max_fluid));
        e.columns = nozzle_columns<D>(s, spacing);
        e.area = D == 2 ? s.width : kPi * s.radius * s.radius;
        e.rate = e.area * s.speed / double(particle_volume);
        e.start = s.start;
        e.stop = s.stop;
        e.center = to_vec<D>(s.center);
        e.half_width = static_cast<float>(D == 2 ? 0.5 * s.width : s.radius) + 0.5f * spacing;
        // The nozzle inside the fluid's space: no column in a solid or outside every container.
        for (const Vec<D>& p : e.columns) {
            Vec<D> q = p;
            if (keep_inside(q, walls, 0.0f))
                throw InputError(fmt::format("{}: emitters[{}]: the nozzle's point {} lies in a wall or outside every "
                                             "container; allowed: a nozzle in the fluid's space (move center, or make "
                                             "{} smaller)",
                                             where, k, at_text(p), D == 2 ? "width" : "radius"));
            if (flow.domain && !flow.domain->contains(p))
                throw InputError(fmt::format("{}: emitters[{}]: the nozzle's point {} lies outside the domain; allowed: "
                                             "a nozzle inside domain.min..domain.max",
                                             where, k, at_text(p)));
        }
        flow.emitters.push_back(std::move(e));
    }
    flow.counts.due.assign(specs.size(), 0);
    flow.counts.emitted.assign(specs.size(), 0);
    return flow;
}

template <int D>
void drive_nozzles(const Flow<D>& flow, ParticleSet<D>& fluid, double t) {
    // What is within kNozzleSpacings ahead of an emitter that is on moves at its jet's velocity (the pipe
    // behind the nozzle pushes it), so the jet does not slow and pile up where the next particles come in.
    for (const Emitter<D>& e : flow.emitters) {
        if (!(t + 1e-12 >= e.start && t < e.stop)) continue;
        const float ahead = kNozzleSpacings * flow.spacing, behind = 0.5f * flow.spacing;
        const Vec<D> jet = e.direction * e.speed;
        for (std::size_t i = 0; i < fluid.size(); ++i) {
            const Vec<D> r = fluid.position[i] - e.center;
            const float along = dot(r, e.direction);
            if (along < -behind || along >= ahead) continue;
            if (norm(r - e.direction * along) > e.half_width) continue;
            fluid.velocity[i] = jet;
        }
    }
}

template <int D>
std::vector<NewParticle<D>> take_due(Flow<D>& flow, double t, std::size_t room) {
    std::vector<NewParticle<D>> fresh;
    for (std::size_t k = 0; k < flow.emitters.size(); ++k) {
        const Emitter<D>& e = flow.emitters[k];
        const std::uint64_t due = e.due_by(t);
        const std::size_t N = e.columns.size();
        for (std::uint64_t n = flow.counts.due[k]; n < due && fresh.size() < room; ++n) {
            const double te = e.start + double(n) / e.rate;
            const Vec<D> x = e.columns[n % N] + e.direction * static_cast<float>(double(e.speed) * (t - te));
            fresh.push_back({x, e.direction * e.speed, static_cast<std::uint32_t>(k)});
        }
        flow.counts.due[k] = std::max(flow.counts.due[k], due);
    }
    return fresh;
}

template <int D>
std::vector<std::uint8_t> blocked_by(const Flow<D>& flow, const std::vector<NewParticle<D>>& fresh,
                                     const ParticleSet<D>& fluid) {
    std::vector<std::uint8_t> blocked(fresh.size(), 0);
    if (fresh.empty()) return blocked;
    // The fluid near the new particles (a box around them), then each new particle against it.
    const float block = kBlockedDistance * flow.spacing, block2 = block * block;
    Aabb<D> box{fresh.front().x, fresh.front().x};
    for (const auto& f : fresh)
        for (int a = 0; a < D; ++a) {
            box.lo[a] = std::min(box.lo[a], f.x[a] - block);
            box.hi[a] = std::max(box.hi[a], f.x[a] + block);
        }
    std::vector<Vec<D>> near;
    for (const auto& x : fluid.position)
        if (box.contains(x)) near.push_back(x);
    for (std::size_t i = 0; i < fresh.size(); ++i)
        for (const auto& y : near)
            if (norm2(y - fresh[i].x) < block2) {
                blocked[i] = 1;
                break;
            }
    return blocked;
}

template <int D>
std::size_t emit(Flow<D>& flow, ParticleSet<D>& fluid, double t) {
    drive_nozzles(flow, fluid, t);
    const std::vector<NewParticle<D>> fresh = take_due(flow, t, flow.max_fluid - std::min(flow.max_fluid, fluid.size()));
    const std::vector<std::uint8_t> blocked = blocked_by(flow, fresh, fluid);
    std::size_t added = 0;
    for (std::size_t i = 0; i < fresh.size(); ++i) {
        if (blocked[i]) continue;
        fluid.push_back(fresh[i].x, fresh[i].v);
        ++flow.counts.emitted[fresh[i].emitter];
        ++added;
    }
    return added;
}

template <int D>
Removed remove_outside(const Flow<D>& flow, ParticleSet<D>& fluid, const Aabb<D>& bounds, double t,
                       const ExecContext& exec) {
    const std::size_t n = fluid.size();
    const bool bounded = std::isfinite(bounds.lo[0]);
    std::vector<std::uint32_t> open;  // the sinks open at t
    for (std::uint32_t k = 0; k < flow.sinks.size(); ++k)
        if (flow.sinks[k].open(t)) open.push_back(k);
    Removed removed;
    removed.drained.assign(flow.sinks.size(), 0);
    if (!flow.domain && !bounded && open.empty()) return removed;
    // 0: stays, 1: left the domain, 2: left every container, 3 + k: in sink k.
    std::vector<std::uint32_t> gone(n, 0);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        const Vec<D>& x = fluid.position[i];
        for (std::uint32_t k : open)
            if (flow.sinks[k].contains(x)) {
                gone[i] = 3 + k;
                return;
            }
        if (flow.domain && !flow.domain->contains(x)) gone[i] = 1;
        else if (bounded && !bounds.contains(x)) gone[i] = 2;
    });
    for (auto g : gone) {
        if (g == 1) ++removed.outflow;
        else if (g == 2) ++removed.escaped;
        else if (g >= 3) ++removed.drained[g - 3];
    }
    if (removed.total() == 0) return removed;
    std::vector<std::uint8_t> keep(n);
    for (std::size_t i = 0; i < n; ++i) keep[i] = gone[i] ? 0 : 1;
    fluid.keep(keep);
    return removed;
}

template <int D>
Removed remove_outflow(Flow<D>& flow, ParticleSet<D>& fluid, const Aabb<D>& bounds, double t, const ExecContext& exec) {
    const Removed removed = remove_outside(flow, fluid, bounds, t, exec);
    add_removed(flow.counts, removed);
    return removed;
}

template struct Sink<2>;
template struct Sink<3>;
template struct Emitter<2>;
template struct Emitter<3>;
template struct Flow<2>;
template struct Flow<3>;
template Flow<2> make_flow<2>(const std::vector<EmitterSpec>&, const DomainSpec&, const std::vector<SinkSpec>&, float,
                              float, float, const std::vector<Wall<2>>&, const std::string&, std::size_t);
template Flow<3> make_flow<3>(const std::vector<EmitterSpec>&, const DomainSpec&, const std::vector<SinkSpec>&, float,
                              float, float, const std::vector<Wall<3>>&, const std::string&, std::size_t);
template std::size_t emit<2>(Flow<2>&, ParticleSet<2>&, double);
template void drive_nozzles<2>(const Flow<2>&, ParticleSet<2>&, double);
template void drive_nozzles<3>(const Flow<3>&, ParticleSet<3>&, double);
template std::vector<NewParticle<2>> take_due<2>(Flow<2>&, double, std::size_t);
template std::vector<NewParticle<3>> take_due<3>(Flow<3>&, double, std::size_t);
template std::vector<std::uint8_t> blocked_by<2>(const Flow<2>&, const std::vector<NewParticle<2>>&, const ParticleSet<2>&);
template std::vector<std::uint8_t> blocked_by<3>(const Flow<3>&, const std::vector<NewParticle<3>>&, const ParticleSet<3>&);
template Removed remove_outside<2>(const Flow<2>&, ParticleSet<2>&, const Aabb<2>&, double, const ExecContext&);
template Removed remove_outside<3>(const Flow<3>&, ParticleSet<3>&, const Aabb<3>&, double, const ExecContext&);
template std::size_t emit<3>(Flow<3>&, ParticleSet<3>&, double);
template Removed remove_outflow<2>(Flow<2>&, ParticleSet<2>&, const Aabb<2>&, double, const ExecContext&);
template Removed remove_outflow<3>(Flow<3>&, ParticleSet<3>&, const Aabb<3>&, double, const ExecContext&);

}  // namespace eddy
