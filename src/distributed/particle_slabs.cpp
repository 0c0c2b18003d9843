// The particle methods over several processes (issue 14; include/eddy/distributed.hpp, docs/distributed.md):
// slabs along one axis cut by particle counts, ghosts refreshed between the solvers' passes (the solvers
// see only eddy/halo.hpp), particles migrating to the slab they moved into, the statistics reduced, and
// the whole gathered on the root for the files.
//
// A step on process q, owning the slab [c_q, c_q+1) of the axis:
//   1. every `rebalance_every` steps, new cuts c from a histogram of every process's particles (equal counts);
//   2. migration: an owned particle outside the slab goes, with all its fields, to the slab's owner;
//   3. the time step: the method's, the same on every process (its statistics are already reduced);
//   4. the halo: each owned particle within `reach` of another slab is copied there (all its fields),
//      after that process's owned ones; reach = the neighbour radius plus twice the distance a particle
//      can move in the step (3 (v_max + |g| dt) dt: PBF and Clavet search their predicted positions);
//   5. the method's step, refreshing ghosts between its passes (Halo::refresh), then the ghosts dropped.
// Owned particles see every neighbour within the radius and sum them in the order of their ids (eddy's
// neighbour lists are keyed), so each process computes bit for bit what one process computes.
// The walls' particles are kept whole on every process (not distributed: docs/distributed.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "eddy/distributed.hpp"
#include "eddy/halo.hpp"

namespace eddy::dist {

namespace {

// One particle's fields as bytes: position, velocity, acceleration, density, pressure, id, then the
// solvers' extra scalars and vectors (every process registers the same ones, in the same order).
template <int D>
std::size_t row_bytes(const ParticleSet<D>& f) {
    return 3 * sizeof(Vec<D>) + 2 * sizeof(float) + sizeof(std::uint32_t) + f.scalars.size() * sizeof(float) +
           f.vectors.size() * sizeof(Vec<D>);
}

template <class T>
void put(unsigned char*& p, const T& v) {
    std::memcpy(p, &v, sizeof(T));
    p += sizeof(T);
}
template <class T>
void get(const unsigned char*& p, T& v) {
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
}

template <int D>
void pack_row(const ParticleSet<D>& f, std::size_t i, unsigned char*& p) {
    put(p, f.position[i]);
    put(p, f.velocity[i]);
    put(p, f.acceleration[i]);
    put(p, f.density[i]);
    put(p, f.pressure[i]);
    put(p, f.id[i]);
    for (const auto& s : f.scalars) put(p, s.data[i]);
    for (const auto& v : f.vectors) put(p, v.data[i]);
}

template <int D>
void unpack_row(ParticleSet<D>& f, std::size_t i, const unsigned char*& p) {
    get(p, f.position[i]);
    get(p, f.velocity[i]);
    get(p, f.acceleration[i]);
    get(p, f.density[i]);
    get(p, f.pressure[i]);
    get(p, f.id[i]);
    for (auto& s : f.scalars) get(p, s.data[i]);
    for (auto& v : f.vectors) get(p, v.data[i]);
}

// Rows of `rows` packed into one message.
template <int D>
std::vector<char> pack_rows(const ParticleSet<D>& f, const std::vector<std::uint32_t>& rows) {
    std::vector<char> b(rows.size() * row_bytes(f));
    auto* p = reinterpret_cast<unsigned char*>(b.data());
    for (std::uint32_t i : rows) pack_row(f, i, p);
    return b;
}

}  // namespace

template <int D>
class ParticleSlabs final : public Halo<D>, public RunHooks {
public:
    ParticleSlabs(Comm& comm, ParticleSimulation<D>& sim, int rebalance_every)
        : m_comm(comm), m_every(std::max(1, rebalance_every)) {
        const std::size_t p = std::size_t(comm.size());
        m_send.resize(p);
        m_recv.assign(p, 0);
        m_recv_at.assign(p, 0);
        // The axis: the longest extent of the fluid (every process holds the whole scene here).
        auto& f = sim.fluid;
        Vec<D> lo = Vec<D>::zero(), hi = Vec<D>::zero();
        for (int a = 0; a < D; ++a) {
            lo[a] = std::numeric_limits<float>::infinity();
            hi[a] = -std::numeric_limits<float>::infinity();
        }
        for (const auto& x : f.position)
            for (int a = 0; a < D; ++a) {
                lo[a] = std::min(lo[a], x[a]);
                hi[a] = std::max(hi[a], x[a]);
            }
        for (int a = 1; a < D; ++a)
            if (hi[a] - lo[a] > hi[m_axis] - lo[m_axis]) m_axis = a;
        m_total = f.size();
        // Each keeps a contiguous share of the set, then the cuts are made from the counts and the
        // particles migrate to their slabs: the path every later rebalance takes.
        const std::size_t b = f.size() * std::size_t(comm.rank()) / p, e = f.size() * std::size_t(comm.rank() + 1) / p;
        std::vector<std::uint32_t> order(f.size());
        std::iota(order.begin(), order.end(), 0u);
        std::rotate(order.begin(), order.begin() + std::ptrdiff_t(b), order.end());
        f.reorder(order, ExecContext(1));
        f.resize(e - b);
        rebalance(f);
        migrate(f);
        std::visit([&](auto& m) { m.set_halo(this); }, sim.method);
        m_gravity = norm(from_array<3>(sim.scene.gravity));
    }

    // ---- Halo (what the solvers see) ----
    std::size_t ghosts() const override { return m_ghosts; }
    std::size_t global_owned() const override { return m_total; }
    void refresh(std::span<float> field) override { refresh_field(field); }
    void refresh(std::span<Vec<D>> field) override { refresh_field(field); }
    void max(std::span<float> values) override {
        std::vector<double> v(values.begin(), values.end());
        m_comm.max(v);
        for (std::size_t k = 0; k < v.size(); ++k) values[k] = static_cast<float>(v[k]);
    }
    void sum(std::span<ExactSum> values) override {
        // Every process's exact partial sums, added in rank order: integers, so any order gives these bits.
        std::vector<unsigned char> mine(values.size() * ExactSum::kStateBytes);
        for (std::size_t k = 0; k < values.size(); ++k) values[k].save(mine.data() + k * ExactSum::kStateBytes);
        const std::vector<unsigned char> all = m_comm.all_gather(mine.data(), mine.size());
        for (std::size_t k = 0; k < values.size(); ++k) {
            ExactSum s;
            for (int r = 0; r < m_comm.size(); ++r)
                s.add_saved(all.data() + std::size_t(r) * mine.size() + k * ExactSum::kStateBytes);
            values[k] = s;
        }
    }
    double max(double v) override { return m_comm.max(v); }
    __int128 sum(__int128 v) override {
        const auto all = m_comm.all_gather(reinterpret_cast<const unsigned char*>(&v), sizeof v);
        __int128 total = 0;
        for (int r = 0; r < m_comm.size(); ++r) {
            __int128 x;
            std::memcpy(&x, all.data() + std::size_t(r) * sizeof x, sizeof x);
            total += x;
        }
        return total;
    }
    bool any(bool v) override { return m_comm.any(v); }

    // ---- RunHooks (what the run loop sees) ----
    StepStats step(Simulation& simulation, const ExecContext& exec, double until) override {
        auto& sim = std::get<ParticleSimulation<D>>(simulation);
        auto& f = sim.fluid;
        const auto t0 = std::chrono::steady_clock::now();
        if (m_since_rebalance >= m_every) {
            rebalance(f);
            m_since_rebalance = 0;
            ++m_rebalances;
        }
        migrate(f);
        ++m_since_rebalance;
        // Load: the largest slab against the mean.
        const double largest = m_comm.max(double(f.size()));
        if (m_total > 0) {
            const double imbalance = largest * m_comm.size() / double(m_total);
            m_imbalance_max = std::max(m_imbalance_max, imbalance);
            m_imbalance_sum += imbalance;
        }
        StepStats st = std::visit(
            [&](auto& method) {
                // The methods' statistics are reduced over the processes, so their time steps agree; the
                // minimum makes sure of it.
                float dt = static_cast<float>(-m_comm.max(-double(method.suggest_dt(f))));
                const bool underflow = dt < method_dt_min(sim.method);
                bool lands = false;
                dt = landing_step(dt, sim.time, until, lands);
                // WCSPH and DFSPH search the neighbours of the positions the step starts from; PBF and
                // Clavet those of the positions they predict, (v + g dt) dt further on.
                using M = std::remove_reference_t<decltype(method)>;
                constexpr bool predicted = std::is_same_v<M, PbfSolver<D>> || std::is_same_v<M, ClavetSolver<D>>;
                float move = 0.0f;  // the farthest a particle goes before its neighbours are searched
                if constexpr (predicted) {
                    float vmax = 0.0f;
                    for (const auto& v : f.velocity) vmax = std::max(vmax, norm(v));
                    vmax = static_cast<float>(m_comm.max(double(vmax)));
                    move = (vmax + m_gravity * dt) * dt;
                }
                const float radius = method.neighbor_radius();
                build_halo(f, radius + 4.0f * move);  // both ends of a pair move: 2 moves, and as much again
                if constexpr (predicted) m_start.assign(f.position.begin(), f.position.begin() + std::ptrdiff_t(m_owned));
                StepStats s = method.step(f, sim.boundary, sim.time, dt, exec);
                s.dt_underflow = underflow;
                s.scene_speed_limit = sim.speed_bound.limit();
                sim.time = lands ? until : sim.time + dt;
                ++sim.steps;
                if constexpr (predicted) {
                    // The halo held every neighbour if no particle moved, over the whole step, further than
                    // the margin allows (2 moves: the corrections and substeps after the prediction
                    // included); else the summary says so (such a step may differ from one process's).
                    float moved = 0.0f;
                    for (std::size_t i = 0; i < m_owned; ++i) moved = std::max(moved, norm(f.position[i] - m_start[i]));
                    if (m_comm.max(double(moved)) > 2.0 * double(move) + 1e-6 * radius) ++m_overruns;
                }
                return s;
            },
            sim.method);
        m_ghost_sum += double(m_ghosts);
        f.resize(m_owned);  // the ghosts are rebuilt next step from their owners' new state
        m_ghosts = 0;
        ++m_steps;
        m_step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return st;
    }
    bool writes() const override { return m_comm.root(); }
    int rank() const override { return m_comm.rank(); }
    int processes() const override { return m_comm.size(); }
    void gather(const ParticleSet<2>& mine, ParticleSet<2>& whole) override { gather_set(mine, whole); }
    void gather(const ParticleSet<3>& mine, ParticleSet<3>& whole) override { gather_set(mine, whole); }
    std::uint64_t sum(std::uint64_t v) override { return m_comm.sum(v); }
    void summarize(nlohmann::json& j) override {
        const auto counts = m_comm.all_values(double(m_owned));
        const auto ghosts = m_comm.all_values(m_steps ? m_ghost_sum / double(m_steps) : 0.0);
        const auto halo_bytes = m_comm.all_values(
            m_steps ? double(m_comm.stats(Channel::halo).bytes_sent) / double(m_steps) : 0.0);
        std::vector<double> comm_seconds[3];
        for (int c = 0; c < 3; ++c) comm_seconds[c] = m_comm.all_values(m_comm.stats(Channel(c)).seconds);
        const auto step_seconds = m_comm.all_values(m_step_seconds);
        j["processes"] = m_comm.size();
        j["decomposition"] = {{"kind", "slabs"}, {"axis", std::string(1, "xyz"[m_axis])},
                              {"rebalance_every", m_every}, {"rebalances", m_rebalances},
                              {"halo_overruns", m_overruns},
                              {"walls", "every process holds all wall particles"}};
        nlohmann::json per = nlohmann::json::array();
        for (int r = 0; r < m_comm.size(); ++r) {
            const std::size_t k = std::size_t(r);
            per.push_back({{"rank", r},
                           {"particles", std::uint64_t(counts[k])},
                           {"ghosts_per_step", ghosts[k]},
                           {"halo_bytes_per_step", halo_bytes[k]},
                           {"step_seconds", step_seconds[k]},
                           {"communication_seconds",
                            {{"halo", comm_seconds[0][k]}, {"reduce", comm_seconds[1][k]}, {"gather", comm_seconds[2][k]}}}});
        }
        j["per_process"] = per;
        j["load_imbalance"] = {{"max", m_imbalance_max}, {"mean", m_steps ? m_imbalance_sum / double(m_steps) : 1.0}};
    }

private:
    // The slab holding coordinate c.
    int owner(float c) const {
        return int(std::upper_bound(m_cuts.begin() + 1, m_cuts.end() - 1, c) - (m_cuts.begin() + 1));
    }

    // Cuts at equal particle counts from a histogram of every process's particles along the axis.
    void rebalance(const ParticleSet<D>& f) {
        const int p = m_comm.size();
        std::vector<double> range = {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest()};
        for (const auto& x : f.position) {
            range[0] = std::max(range[0], -double(x[m_axis]));
            range[1] = std::max(range[1], double(x[m_axis]));
        }
        m_comm.max(range);
        const double lo = -range[0], hi = range[1];
        constexpr std::size_t kBins = 4096;
        std::vector<std::uint64_t> hist(kBins, 0);
        const double scale = hi > lo ? double(kBins) / (hi - lo) : 0.0;
        for (const auto& x : f.position)
            ++hist[std::min(kBins - 1, std::size_t(std::max(0.0, (double(x[m_axis]) - lo) * scale)))];
        m_comm.sum(hist);
        m_cuts.assign(std::size_t(p) + 1, 0.0f);
        m_cuts.front() = -std::numeric_limits<float>::infinity();
        m_cuts.back() = std::numeric_limits<float>::infinity();
        std::uint64_t below = 0;
        std::size_t bin = 0;
        for (int r = 1; r < p; ++r) {
            const double target = double(m_total) * r / p;
            while (bin < kBins && double(below + hist[bin]) <= target) below += hist[bin++];
            // The cut at the start of the bin that crosses the target.
            m_cuts[std::size_t(r)] = m_total ? static_cast<float>(lo + (hi - lo) * double(bin) / double(kBins))
                                             : m_cuts[std::size_t(r) - 1];
        }
        for (int r = 2; r < p; ++r) m_cuts[std::size_t(r)] = std::max(m_cuts[std::size_t(r)], m_cuts[std::size_t(r) - 1]);
    }

    // Owned particles outside the slab go to its owner, with all their fields.
    void migrate(ParticleSet<D>& f) {
        const int p = m_comm.size(), me = m_comm.rank();
        std::vector<std::vector<std::uint32_t>> leave(static_cast<std::size_t>(p));
        std::vector<std::uint32_t> order;
        order.reserve(f.size());
        for (std::size_t i = 0; i < f.size(); ++i) {
            const int o = owner(f.position[i][m_axis]);
            if (o == me) order.push_back(std::uint32_t(i));
            else leave[std::size_t(o)].push_back(std::uint32_t(i));
        }
        const std::size_t stay = order.size();
        std::vector<std::uint64_t> counts(std::size_t(p), 0);
        std::vector<Message> out, in;
        for (int r = 0; r < p; ++r) {
            counts[std::size_t(r)] = leave[std::size_t(r)].size();
            if (!leave[std::size_t(r)].empty()) out.push_back({r, pack_rows(f, leave[std::size_t(r)])});
            for (std::uint32_t i : leave[std::size_t(r)]) order.push_back(i);
        }
        const std::vector<std::uint64_t> incoming = m_comm.all_to_all(counts);
        const std::size_t bytes = row_bytes(f);
        for (int r = 0; r < p; ++r)
            if (incoming[std::size_t(r)]) in.push_back({r, std::vector<char>(incoming[std::size_t(r)] * bytes)});
        m_comm.exchange(out, in);
        if (stay < f.size()) {
            f.reorder(order, ExecContext(1));
            f.resize(stay);
        }
        std::size_t at = f.size(), arriving = 0;
        for (const auto& m : in) arriving += m.bytes.size() / bytes;
        f.resize(at + arriving);
        for (const auto& m : in) {
            const auto* q = reinterpret_cast<const unsigned char*>(m.bytes.data());
            for (std::size_t k = 0; k < m.bytes.size() / bytes; ++k) unpack_row(f, at++, q);
        }
        m_owned = f.size();
        // No particle lost or doubled at a face.
        if (m_comm.sum(std::uint64_t(m_owned)) != m_total)
            throw std::logic_error(fmt::format("distributed particles: {} particles after migration, {} before",
                                               m_comm.sum(std::uint64_t(m_owned)), m_total));
    }

    // Copies of owned particles within `reach` of another slab, appended there after its owned ones.
    void build_halo(ParticleSet<D>& f, float reach) {
        const int p = m_comm.size(), me = m_comm.rank();
        m_owned = f.size();
        for (auto& s : m_send) s.clear();
        for (std::size_t i = 0; i < m_owned; ++i) {
            const float c = f.position[i][m_axis];
            const int r0 = owner(c - reach), r1 = owner(c + reach);
            for (int r = r0; r <= r1; ++r)
                if (r != me) m_send[std::size_t(r)].push_back(std::uint32_t(i));
        }
        std::vector<std::uint64_t> counts(std::size_t(p), 0);
        std::vector<Message> out, in;
        for (int r = 0; r < p; ++r) {
            counts[std::size_t(r)] = m_send[std::size_t(r)].size();
            if (!m_send[std::size_t(r)].empty()) out.push_back({r, pack_rows(f, m_send[std::size_t(r)])});
        }
        const std::vector<std::uint64_t> incoming = m_comm.all_to_all(counts);
        const std::size_t bytes = row_bytes(f);
        std::size_t total = 0;
        for (int r = 0; r < p; ++r) {
            m_recv[std::size_t(r)] = incoming[std::size_t(r)];
            m_recv_at[std::size_t(r)] = total;
            total += incoming[std::size_t(r)];
            if (incoming[std::size_t(r)]) in.push_back({r, std::vector<char>(incoming[std::size_t(r)] * bytes)});
        }
        m_comm.exchange(out, in);
        f.resize(m_owned + total);
        for (const auto& m : in) {
            std::size_t at = m_owned + m_recv_at[std::size_t(m.peer)];
            const auto* q = reinterpret_cast<const unsigned char*>(m.bytes.data());
            for (std::size_t k = 0; k < m.bytes.size() / bytes; ++k) unpack_row(f, at++, q);
        }
        m_ghosts = total;
    }

    // The ghosts' entries of one field from their owners, in the order the halo was built.
    template <class T>
    void refresh_field(std::span<T> field) {
        std::vector<Message> out, in;
        for (int r = 0; r < m_comm.size(); ++r) {
            const auto& rows = m_send[std::size_t(r)];
            if (!rows.empty()) {
                Message m{r, std::vector<char>(rows.size() * sizeof(T))};
                auto* q = reinterpret_cast<unsigned char*>(m.bytes.data());
                for (std::uint32_t i : rows) put(q, field[i]);
                out.push_back(std::move(m));
            }
            if (m_recv[std::size_t(r)]) in.push_back({r, std::vector<char>(m_recv[std::size_t(r)] * sizeof(T))});
        }
        m_comm.exchange(out, in);
        for (const auto& m : in) {
            const auto* q = reinterpret_cast<const unsigned char*>(m.bytes.data());
            T* dst = field.data() + m_owned + m_recv_at[std::size_t(m.peer)];
            for (std::size_t k = 0; k < m.bytes.size() / sizeof(T); ++k) get(q, dst[k]);
        }
    }

    // Every process's particles on the root, ordered by id.
    template <int E>
    void gather_set(const ParticleSet<E>& mine, ParticleSet<E>& whole) {
        std::vector<std::uint32_t> rows(mine.size());
        std::iota(rows.begin(), rows.end(), 0u);
        const auto parts = m_comm.gather(pack_rows(mine, rows));
        whole = ParticleSet<E>{};
        if (!m_comm.root()) return;
        whole.mass = mine.mass;
        whole.next_id = mine.next_id;
        for (const auto& s : mine.scalars) whole.add_scalar(s.name);
        for (const auto& v : mine.vectors) whole.add_vector(v.name);
        const std::size_t bytes = row_bytes(mine);
        std::size_t n = 0;
        for (const auto& part : parts) n += part.size() / bytes;
        whole.resize(n);
        std::size_t at = 0;
        for (const auto& part : parts) {
            const auto* q = reinterpret_cast<const unsigned char*>(part.data());
            for (std::size_t k = 0; k < part.size() / bytes; ++k) unpack_row(whole, at++, q);
        }
        std::vector<std::uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return whole.id[a] < whole.id[b]; });
        whole.reorder(order, ExecContext(1));
    }

    Comm& m_comm;
    int m_every = 1, m_axis = 0;
    float m_gravity = 0.0f;
    std::vector<float> m_cuts;  // slab r: [m_cuts[r], m_cuts[r + 1]) of the axis
    std::uint64_t m_total = 0;  // particles over every process (conserved)
    std::size_t m_owned = 0, m_ghosts = 0;
    std::vector<std::vector<std::uint32_t>> m_send;  // owned rows copied to each process this step
    std::vector<std::uint64_t> m_recv, m_recv_at;      // ghosts from each process, and where they start
    std::vector<Vec<D>> m_start;                       // owned positions at the step's start
    int m_since_rebalance = 0;
    std::uint64_t m_steps = 0, m_rebalances = 0, m_overruns = 0;
    double m_ghost_sum = 0.0, m_imbalance_max = 1.0, m_imbalance_sum = 0.0, m_step_seconds = 0.0;
};

void check_distributable(const Scene& scene, int processes) {
    if (processes <= 1) return;
    auto refuse = [&](const std::string& what) {
        throw AgreedError(fmt::format("{}: {} runs on one process in this version ({} were started): run it without "
                                      "mpirun (or -np 1); docs/distributed.md",
                                      scene.where(), what, processes));
    };
    const nlohmann::json& s = scene.settings;
    auto number = [&](const char* key) { return s.contains(key) && s[key].is_number() ? s[key].get<double>() : 0.0; };
    if (scene.method == "clavet") {
        if (s.value("mode", std::string("parallel")) == "sequential")
            refuse("Clavet's sequential mode (the seed's Gauss-Seidel relaxation, key 'mode')");
        if (number("spring_stiffness") > 0.0) refuse("Clavet's viscoelastic springs (key 'spring_stiffness' > 0)");
    }
}

RunResult run_particles(Simulation& simulation, RunOptions opts, const ExecContext& exec, Comm& comm,
                        const DistributedParticleOptions& dopts) {
    return std::visit(
        [&](auto& sim) {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            check_distributable(sim.scene, comm.size());
            ParticleSlabs<D> slabs(comm, sim, dopts.rebalance_every);
            opts.hooks = &slabs;
            RunResult r = run(simulation, opts, exec);
            std::visit([](auto& m) { m.set_halo(nullptr); }, sim.method);
            return r;
        },
        simulation);
}

}  // namespace eddy::dist
