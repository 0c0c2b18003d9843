// The particle methods over several processes (issue 14; include/eddy/distributed.hpp, docs/distributed.md):
// boxes by recursive coordinate bisection at equal particle counts, ghosts refreshed between the
// solvers' passes (the solvers see only eddy/halo.hpp), particles migrating to the box they moved into,
// the statistics reduced, and the whole gathered on the root for the files.
//
// A step on process q, owning box B_q:
//   1. every `rebalance_every` steps, new boxes: recursive bisection of the particles, each cut across
//      the longest side of its region where a histogram summed over the processes reaches equal counts;
//   2. migration: an owned particle outside B_q goes, with all its fields, to the owner of its box;
//   3. the time step: the method's, the same on every process (its statistics are already reduced);
//   4. the halo: each owned particle within `reach` of another box is copied there (all its fields),
//      after that process's owned ones; reach = the neighbour radius, plus for PBF and Clavet (which
//      search their predicted positions, (v + g dt) dt on) max(4 (v_max + |g| dt) dt, radius / 4);
//   5. the method's step, refreshing ghosts between its passes (Halo::refresh), then the ghosts dropped.
// Owned particles see every neighbour within the radius and sum them in the order of their ids (eddy's
// neighbour lists are keyed), so each process computes bit for bit what one process computes.
// Walls: the root keeps all their particles (it writes them); the others those of fixed walls near their
// box (redistributed with the boxes) and those of moving walls.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "core/buffers.hpp"
#include "eddy/distributed.hpp"
#include "eddy/halo.hpp"
#include "eddy/neighbors.hpp"
#include "sim/particle_step.hpp"

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

// One process's removals summed over all of them.
Removed summed(Comm& comm, Removed removed) {
    std::vector<std::uint64_t> r{removed.outflow, removed.escaped};
    r.insert(r.end(), removed.drained.begin(), removed.drained.end());
    comm.sum(r);
    removed.outflow = r[0], removed.escaped = r[1];
    std::copy(r.begin() + 2, r.end(), removed.drained.begin());
    return removed;
}

template <int D>
void shrink(ParticleSet<D>& f) {
    f.position.shrink_to_fit();
    f.velocity.shrink_to_fit();
    f.acceleration.shrink_to_fit();
    f.density.shrink_to_fit();
    f.pressure.shrink_to_fit();
    f.id.shrink_to_fit();
    for (auto& s : f.scalars) s.data.shrink_to_fit();
    for (auto& v : f.vectors) v.data.shrink_to_fit();
}

// The contiguous share [n r / p, n (r + 1) / p) of a set the whole scene built, its memory shrunk to it.
template <int D>
void keep_share(ParticleSet<D>& f, int rank, std::size_t p) {
    const std::size_t b = f.size() * std::size_t(rank) / p, e = f.size() * std::size_t(rank + 1) / p;
    std::vector<std::uint32_t> order(f.size());
    std::iota(order.begin(), order.end(), 0u);
    std::rotate(order.begin(), order.begin() + std::ptrdiff_t(b), order.end());
    f.reorder(order, ExecContext(1));
    f.resize(e - b);
    shrink(f);
}

}  // namespace

template <int D>
class ParticleBoxes final : public Halo<D>, public RunHooks {
public:
    ParticleBoxes(Comm& comm, ParticleSimulation<D>& sim, int rebalance_every, bool share, const ExecContext& exec)
        : m_comm(comm), m_every(std::max(1, rebalance_every)), m_gravity(norm(from_array<3>(sim.scene.gravity))) {
        const std::size_t p = std::size_t(comm.size());
        m_send.resize(p);
        m_recv.assign(p, 0);
        m_recv_at.assign(p, 0);
        auto& f = sim.fluid;
        m_total = share ? comm.sum(std::uint64_t(f.size())) : f.size();
        // Each keeps a contiguous share of the set (or has one: built or resumed as one, its fastest start made
        // the whole's), then the boxes are cut from the counts and the particles migrate, as at every rebalance.
        if (!share) keep_share(f, comm.rank(), p);
        else sim.speed_bound.initial = static_cast<float>(comm.max(double(sim.speed_bound.initial)));
        rebalance(f);
        place_walls(sim, exec);
        migrate(f, nullptr);
        std::visit([&](auto& m) { m.set_halo(this); }, sim.method);
    }
    void walls_written_once() override { m_root_keeps_walls = false; }

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
    bool walls_changed() const override { return m_walls_changed; }

    // ---- RunHooks (what the run loop sees) ----
    // One step: eddy::step's own (src/sim/particle_step.hpp) with this layer as its exchange (below).
    StepStats step(Simulation& simulation, const ExecContext& exec, double until) override {
        const auto t0 = std::chrono::steady_clock::now();
        Exchange exchange(*this);
        const StepStats st = detail::step_particles(std::get<ParticleSimulation<D>>(simulation), exec, until, exchange);
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
    std::vector<std::uint64_t> all_values(std::uint64_t v) override {
        const auto all = m_comm.all_gather(reinterpret_cast<const unsigned char*>(&v), sizeof v);
        std::vector<std::uint64_t> values(std::size_t(m_comm.size()));
        std::memcpy(values.data(), all.data(), values.size() * sizeof v);
        return values;
    }
    // The same "processes" record as a distributed grid run's (shallow_blocks.cpp), with particles for cells.
    void summarize(nlohmann::json& j) override {
        const auto counts = m_comm.all_values(double(m_owned));
        const auto ghosts = m_comm.all_values(m_steps ? m_ghost_sum / double(m_steps) : 0.0);
        const CommStats halo = m_comm.stats(Channel::halo), reduce = m_comm.stats(Channel::reduce),
                        gather = m_comm.stats(Channel::gather);
        const auto halo_seconds = m_comm.all_values(halo.seconds);
        const auto halo_bytes = m_comm.all_values(m_steps ? double(halo.bytes_sent) / double(m_steps) : 0.0);
        const auto reduce_seconds = m_comm.all_values(reduce.seconds);
        const auto step_seconds = m_comm.all_values(m_step_seconds);
        nlohmann::json p;
        p["ranks"] = m_comm.size();
        p["decomposition"] = "recursive bisection";
        nlohmann::json boxes = nlohmann::json::array();  // each rank's box at the end (infinite at the scene's sides)
        for (int r = 0; r < m_comm.size(); ++r) {
            Vec<D> lo, hi;
            box_of(r, lo, hi);
            nlohmann::json b = nlohmann::json::array();
            for (int a = 0; a < D; ++a) b.push_back({lo[a], hi[a]});
            boxes.push_back(b);
        }
        p["boxes"] = boxes;
        p["rebalance_every"] = m_every;
        p["rebalances"] = m_rebalances;
        p["particles_per_rank"] = counts;  // at the end
        p["ghosts_per_step"] = ghosts;     // mean over the steps, per rank
        // Largest owned count over the mean: at worst over the steps, and on average.
        p["load_imbalance"] = m_imbalance_max;
        p["load_imbalance_mean"] = m_steps ? m_imbalance_sum / double(m_steps) : 1.0;
        p["steps"] = m_steps;
        // Per rank; seconds include waiting for the others (the root writing a frame, a larger part).
        p["step_seconds"] = step_seconds;
        p["halo_exchange_seconds"] = halo_seconds;  // ghosts, their refreshes between passes, migration
        p["halo_bytes_sent_per_step"] = halo_bytes;
        p["reduction_seconds"] = reduce_seconds;
        p["gather_seconds"] = m_comm.all_values(gather.seconds);
        p["gather_bytes_sent"] = m_comm.all_values(double(gather.bytes_sent));  // frames, probes, whitewater on the root
        // Steps in which a particle moved further than the halo's margin allowed (PBF, Clavet): 0 means
        // every step had all its neighbours.
        p["halo_overruns"] = m_overruns;
        // How the counts before each halo, migration and wall distribution travelled: along the boxes' links
        // (partners: the boxes within the halo's reach; per rank at the end) or, at the start and when a
        // particle went further, to all.
        p["counts_to_partners"] = m_counts_by_partners;
        p["counts_to_all"] = m_counts_by_all;
        p["partners_per_rank"] = m_comm.all_values(double(m_partners.send.size()));
        record_walls(p);
        j["processes"] = p;
        j["boundary_particles"] = m_walls_whole;  // the whole scene's
    }

private:
    // Wall particles held: at the start (each process but the first built those near its box: place_walls; else
    // whole on every process: a new run's WCSPH hydrostatic start), and at the end, those
    // near each box, the root all of them while it writes them (walls_written_once).
    void record_walls(nlohmann::json& p) {
        p["walls_built_near_boxes"] = m_walls_near;
        p["walls_built_per_rank"] = m_comm.all_values(double(m_walls_built));
        p["walls_per_rank"] = m_comm.all_values(double(m_wall_count));
        p["root_holds_walls"] = m_root_keeps_walls;
    }

    // The decomposition: a binary tree over the ranks. A node holds ranks [r0, r1); an inner node cuts its
    // region at `cut` along `axis`, the first (r1 - r0) / 2 ranks below the cut, the others above.
    struct Node {
        int r0 = 0, r1 = 1, axis = 0, below = -1, above = -1;
        float cut = 0.0f;
        bool leaf() const { return below < 0; }
    };

    // What this layer does around a step's passes (detail::StepExchange, src/sim/particle_step.hpp).
    struct Exchange final : detail::StepExchange<D> {
        explicit Exchange(ParticleBoxes& boxes) : b(boxes) {}
        ParticleBoxes& b;
        float margin = 0.0f;          // how far beyond the kernel's reach the halo holds particles
        bool searches_again = false;  // PBF with substeps: neighbours searched again after corrections

        // The methods' statistics are reduced over the processes, so their time steps agree; the minimum makes
        // sure of it.
        float agreed_dt(float dt) override { return static_cast<float>(-b.m_comm.max(-double(dt))); }
        // The emitters (eddy/emitters.hpp), before the boxes are cut and the particles migrate: every process
        // takes the same due particles; one not blocked by fluid on any process is put in by the root (it
        // migrates to its box below), the others advance next_id alike, so that ids are the same bits as on one
        // process.
        std::size_t emit(ParticleSimulation<D>& sim) override { return sim.flow.emits() ? b.emit_everywhere(sim) : 0; }
        void before_passes(ParticleSimulation<D>& sim, float dt, const ExecContext& exec) override {
            const std::optional<std::vector<Node>> before = b.cut_and_migrate(sim.fluid);  // the boxes, if cut again
            std::visit([&](auto& method) { prepare(sim, method, dt, before, exec); }, sim.method);
        }
        template <class M>
        void prepare(ParticleSimulation<D>& sim, M& method, float dt, const std::optional<std::vector<Node>>& before,
                     const ExecContext& exec) {
            auto& f = sim.fluid;
            // WCSPH and DFSPH search the neighbours of the positions the step starts from; PBF and Clavet
            // those of the positions they predict, (v + g dt) dt further on.
            constexpr bool predicted = std::is_same_v<M, PbfSolver<D>> || std::is_same_v<M, ClavetSolver<D>>;
            float move = 0.0f;  // the farthest a particle goes before its neighbours are searched
            if constexpr (predicted) {
                float vmax = 0.0f;
                for (const auto& v : f.velocity) vmax = std::max(vmax, norm(v));
                vmax = static_cast<float>(b.m_comm.max(double(vmax)));
                move = (vmax + b.m_gravity * dt) * dt;
            }
            const float radius = method.neighbor_radius();
            // The owned particles in Morton order every sort_interval steps, as the method does on one process
            // (with ghosts behind them it leaves the order to this layer): arrivals are appended, and particles
            // move, so the order drifts away from the space's.
            if (const int every = method.settings().sort_interval; every > 0 && ++b.m_since_sort >= every) {
                NeighborGrid<D> grid(radius);
                grid.build(f.position, exec);
                f.reorder(grid.morton_order(f.position, exec), exec);
                b.m_since_sort = 0;
            }
            // Both ends of a pair move: 2 moves, and as much again for the position corrections (at least a
            // quarter radius: a fluid starting at rest has no speed yet but is corrected).
            margin = predicted ? std::max(4.0f * move, 0.25f * radius) : 0.0f;
            // The walls near this process's box, within the reach its particles search (with a quarter to
            // spare, so that a slowly growing margin does not redistribute every step).
            if (before || radius + margin > b.m_wall_band)  // the walls were distributed over the boxes before a cut
                b.distribute_walls(sim.boundary, before ? *before : b.m_tree, 1.25f * (radius + margin));
            b.build_halo(f, radius + margin);
            // With one search per step (Clavet, PBF in one substep) the searched positions are the prediction,
            // at most `move` from the start: the margin holds by construction. PBF's later substeps search
            // again after corrections: there the halo held every neighbour if no particle moved, over the
            // whole step, further than half the margin; else the summary says so (such a step may differ from
            // one process's).
            if constexpr (std::is_same_v<M, PbfSolver<D>>) searches_again = method.settings().substeps > 1;
            if (searches_again) b.m_start.assign(f.position.begin(), f.position.begin() + std::ptrdiff_t(b.m_owned));
        }
        void after_passes(ParticleSimulation<D>& sim) override {
            auto& f = sim.fluid;
            if (searches_again) {
                float moved = 0.0f;
                for (std::size_t i = 0; i < b.m_owned; ++i) moved = std::max(moved, norm(f.position[i] - b.m_start[i]));
                if (b.m_comm.max(double(moved)) > 0.5 * double(margin)) ++b.m_overruns;
            }
            b.m_walls_changed = false;
            b.m_ghost_sum += double(b.m_ghosts);
            f.resize(b.m_owned);  // the ghosts are rebuilt next step from their owners' new state
            b.m_ghosts = 0;
        }
        // The outflow: each process removes its own particles outside the domain or beyond every container;
        // the counts are the sums over the processes.
        Removed remove(ParticleSimulation<D>& sim, double t_end, const ExecContext& exec) override {
            const Removed removed = summed(b.m_comm, remove_outside(sim.flow, sim.fluid, sim.bounds, t_end, exec));
            add_removed(sim.flow.counts, removed);
            b.m_owned = sim.fluid.size();
            b.m_total -= removed.total();
            return removed;
        }
    };

    // The boxes cut again every m_every steps (or sooner when the load is unbalanced), and every particle
    // sent to the process whose box holds it. Returns the boxes before a new cut (none if not cut).
    std::optional<std::vector<Node>> cut_and_migrate(ParticleSet<D>& f) {
        std::optional<std::vector<Node>> before;
        if (m_since_rebalance >= m_every) {
            before = m_tree;
            rebalance(f);
            m_since_rebalance = 0;
            ++m_rebalances;
        }
        migrate(f, before ? &*before : &m_tree);
        ++m_since_rebalance;
        // Load: the largest part against the mean.
        const double largest = m_comm.max(double(f.size()));
        if (m_total > 0) {
            const double imbalance = largest * m_comm.size() / double(m_total);
            m_imbalance_max = std::max(m_imbalance_max, imbalance);
            m_imbalance_sum += imbalance;
            // A flow that moves fast (a splash, a drop spreading) unbalances the boxes within the 50 steps:
            // cut them again at the next step, though not more often than every 5 steps (few particles on
            // lattice planes cannot always be balanced better).
            if (imbalance > kRebalanceAbove && m_since_rebalance >= 5) m_since_rebalance = m_every;
        }
        return before;
    }

    // The rank whose box holds x (in `tree`, by default the current boxes).
    int owner(const Vec<D>& x) const { return owner(m_tree, x); }
    static int owner(const std::vector<Node>& tree, const Vec<D>& x) {
        int k = 0;
        while (!tree[std::size_t(k)].leaf()) {
            const Node& n = tree[std::size_t(k)];
            k = x[n.axis] < n.cut ? n.below : n.above;
        }
        return tree[std::size_t(k)].r0;
    }
    // Every rank whose box comes within `reach` of x along each cut (a box distance: a superset of the
    // ranks within Euclidean reach), x's owner included.
    template <class F>
    void near(const Vec<D>& x, float reach, F&& visit, int k = 0) const {
        const Node& n = m_tree[std::size_t(k)];
        if (n.leaf()) return visit(n.r0);
        if (x[n.axis] - reach < n.cut) near(x, reach, visit, n.below);
        if (x[n.axis] + reach >= n.cut) near(x, reach, visit, n.above);
    }
    // Who sends counts to whom: rows go from a point of a sender's box in `from` (the boxes its particles
    // or walls are in) to the ranks whose boxes in `to` come within `reach` of that point along every cut
    // (near()). A sender lists every r whose box in `to` comes within `reach` of its box in `from` along
    // every axis, a superset; a receiver lists every q for which q would list it, by the same test on the
    // same numbers (taken both ways round), so each side knows whom it hears from.
    struct Links {
        std::vector<int> send, recv;  // sorted, this rank not in them
    };
    Links links(const std::vector<Node>& from, const std::vector<Node>& to, float reach) const {
        const int me = m_comm.rank();
        auto test = [&](const Vec<D>& alo, const Vec<D>& ahi, const Vec<D>& blo, const Vec<D>& bhi) {
            bool in = true;
            for (int a = 0; a < D; ++a) in = in && alo[a] - reach <= bhi[a] && ahi[a] + reach >= blo[a];
            return in;
        };
        auto meets = [&](const Vec<D>& alo, const Vec<D>& ahi, const Vec<D>& blo, const Vec<D>& bhi) {
            return test(alo, ahi, blo, bhi) || test(blo, bhi, alo, ahi);
        };
        Vec<D> from_lo, from_hi, to_lo, to_hi, lo, hi;
        box_of(from, me, from_lo, from_hi);
        box_of(to, me, to_lo, to_hi);
        Links l;
        for (int r = 0; r < m_comm.size(); ++r) {
            if (r == me) continue;
            box_of(to, r, lo, hi);
            if (meets(from_lo, from_hi, lo, hi)) l.send.push_back(r);
            box_of(from, r, lo, hi);
            if (meets(lo, hi, to_lo, to_hi)) l.recv.push_back(r);
        }
        return l;
    }
    // The current boxes' links within `reach` (symmetric), kept until the boxes are cut again or the reach
    // changes.
    const Links& partners(float reach) {
        if (m_partners_tree != m_tree_version || m_partners_reach != reach) {
            m_partners = links(m_tree, m_tree, reach);
            m_partners_tree = m_tree_version;
            m_partners_reach = reach;
        }
        return m_partners;
    }
    // What each process has for this one, from counts[r] (what this one has for r), along the links from
    // the boxes of `from` (null: none known) to the current ones within `reach`. Rows certain to stay within
    // them (`known`: a halo's, from owned particles; the walls', from their owners' boxes) need no check;
    // otherwise one flag is reduced (O(log P)) and, if any process has rows beyond its links, every count
    // goes to every process.
    std::vector<std::uint64_t> counts_in(const std::vector<std::uint64_t>& counts, const std::vector<Node>* from,
                                         float reach, bool known) {
        Links other;
        const Links* l = from == &m_tree ? &partners(reach) : from ? &(other = links(*from, m_tree, reach)) : nullptr;
        if (l) {
            bool outside = false;
            for (int r = 0; r < m_comm.size(); ++r)
                if (counts[std::size_t(r)] > 0 && r != m_comm.rank() && !std::binary_search(l->send.begin(), l->send.end(), r))
                    outside = true;
            if (known && outside)
                throw std::logic_error("distributed particles: rows for a process beyond the box's links");
            if (known || !m_comm.any(outside)) {
                ++m_counts_by_partners;
                return m_comm.counts_from(counts, l->send, l->recv);
            }
        }
        ++m_counts_by_all;
        return m_comm.all_to_all(counts);
    }
    // Rank r's box (in `tree`, by default the current boxes).
    void box_of(int r, Vec<D>& lo, Vec<D>& hi) const { box_of(m_tree, r, lo, hi); }
    static void box_of(const std::vector<Node>& tree, int r, Vec<D>& lo, Vec<D>& hi) {
        for (int a = 0; a < D; ++a) {
            lo[a] = -std::numeric_limits<float>::infinity();
            hi[a] = std::numeric_limits<float>::infinity();
        }
        int k = 0;
        while (!tree[std::size_t(k)].leaf()) {
            const Node& n = tree[std::size_t(k)];
            const bool below = r < n.r0 + (n.r1 - n.r0) / 2;
            (below ? hi : lo)[n.axis] = n.cut;
            k = below ? n.below : n.above;
        }
    }

    // Recursive coordinate bisection at equal particle counts, level by level: every node of a level
    // cuts its region across its longest side (the region bounded by the particles' bounding box and its
    // ancestors' cuts) where a histogram of the particles in it, summed over the processes, reaches the
    // share of its lower ranks. One reduction of all the level's histograms per level.
    void rebalance(const ParticleSet<D>& f) {
        std::vector<double> range(2 * D, std::numeric_limits<double>::lowest());
        for (const auto& x : f.position)
            for (int a = 0; a < D; ++a) {
                range[std::size_t(2 * a)] = std::max(range[std::size_t(2 * a)], -double(x[a]));
                range[std::size_t(2 * a + 1)] = std::max(range[std::size_t(2 * a + 1)], double(x[a]));
            }
        m_comm.max(range);
        struct Region { Vec<D> lo, hi; };
        std::vector<Region> region(1);
        for (int a = 0; a < D; ++a) {
            const bool any = range[std::size_t(2 * a + 1)] >= -range[std::size_t(2 * a)];
            region[0].lo[a] = any ? static_cast<float>(-range[std::size_t(2 * a)]) : 0.0f;
            region[0].hi[a] = any ? static_cast<float>(range[std::size_t(2 * a + 1)]) : 0.0f;
        }
        m_tree.assign(1, Node{0, m_comm.size()});
        ++m_tree_version;
        constexpr std::size_t kBins = 1024;
        std::vector<int> level = {0};
        while (!level.empty()) {
            std::vector<int> split;
            for (int k : level)
                if (m_tree[std::size_t(k)].r1 - m_tree[std::size_t(k)].r0 > 1) split.push_back(k);
            if (split.empty()) break;
            // Each node's axis: its region's longest side.
            std::vector<std::size_t> slot(m_tree.size(), 0);
            for (std::size_t q = 0; q < split.size(); ++q) {
                Node& n = m_tree[std::size_t(split[q])];
                const Region& g = region[std::size_t(split[q])];
                n.axis = 0;
                for (int a = 1; a < D; ++a)
                    if (g.hi[a] - g.lo[a] > g.hi[n.axis] - g.lo[n.axis]) n.axis = a;
                slot[std::size_t(split[q])] = q;
            }
            // Histograms of the particles in each node being split (the tree so far: those nodes are leaves).
            std::vector<std::uint64_t> hist(split.size() * kBins, 0);
            for (const auto& x : f.position) {
                int k = 0;
                while (!m_tree[std::size_t(k)].leaf()) k = x[m_tree[std::size_t(k)].axis] < m_tree[std::size_t(k)].cut
                                                               ? m_tree[std::size_t(k)].below
                                                               : m_tree[std::size_t(k)].above;
                const Node& n = m_tree[std::size_t(k)];
                if (n.r1 - n.r0 <= 1) continue;
                const Region& g = region[std::size_t(k)];
                const double lo = g.lo[n.axis], hi = g.hi[n.axis];
                const double scale = hi > lo ? double(kBins) / (hi - lo) : 0.0;
                const double b = std::clamp((double(x[n.axis]) - lo) * scale, 0.0, double(kBins - 1));
                ++hist[slot[std::size_t(k)] * kBins + std::size_t(b)];
            }
            m_comm.sum(hist);
            std::vector<int> next;
            for (std::size_t q = 0; q < split.size(); ++q) {
                const int k = split[q];
                const Node n = m_tree[std::size_t(k)];
                const Region g = region[std::size_t(k)];
                const std::uint64_t* h = hist.data() + q * kBins;
                std::uint64_t total = 0;
                for (std::size_t b = 0; b < kBins; ++b) total += h[b];
                const int lower = (n.r1 - n.r0) / 2;
                const double target = double(total) * lower / double(n.r1 - n.r0);
                std::uint64_t below = 0;
                std::size_t b = 0;
                while (b < kBins && double(below + h[b]) <= target) below += h[b++];
                // The nearer of the bin's two edges to the target (particles on a lattice fill few bins).
                if (b < kBins && double(below + h[b]) - target < target - double(below)) below += h[b++];
                const double lo = g.lo[n.axis], hi = g.hi[n.axis];
                // The cut at that edge (the region's middle if it holds no particle).
                const float cut = total ? static_cast<float>(lo + (hi - lo) * double(b) / double(kBins))
                                        : static_cast<float>(0.5 * (lo + hi));
                const int below_k = int(m_tree.size()), above_k = below_k + 1;
                m_tree[std::size_t(k)].cut = cut;
                m_tree[std::size_t(k)].below = below_k;
                m_tree[std::size_t(k)].above = above_k;
                m_tree.push_back(Node{n.r0, n.r0 + lower});
                m_tree.push_back(Node{n.r0 + lower, n.r1});
                Region rb = g, ra = g;
                rb.hi[n.axis] = cut;
                ra.lo[n.axis] = cut;
                region.push_back(rb);
                region.push_back(ra);
                next.push_back(below_k);
                next.push_back(above_k);
            }
            level = std::move(next);
        }
    }

    // Room for particles that arrive with their ids: ParticleSet::resize would give the new slots fresh
    // ids and advance next_id, which must stay the whole set's (it is the id of the next particle added).
    static void resize_keeping_ids(ParticleSet<D>& f, std::size_t n) {
        const std::uint32_t next = f.next_id;
        f.resize(n);
        f.next_id = next;
    }

    // The emitters' particles due now (eddy/emitters.hpp, emit on one process): the nozzles drive the
    // owned fluid; a due particle is blocked if fluid on any process is too close; the root puts in the
    // others, every process advances next_id and the counts by them. Returns how many were put in.
    std::size_t emit_everywhere(ParticleSimulation<D>& sim) {
        auto& f = sim.fluid;
        drive_nozzles(sim.flow, f, sim.time);
        const std::size_t room = sim.flow.max_fluid - std::min<std::size_t>(sim.flow.max_fluid, m_total);
        const std::vector<NewParticle<D>> fresh = take_due(sim.flow, sim.time, room);
        if (fresh.empty()) return 0;
        const std::vector<std::uint8_t> mine = blocked_by(sim.flow, fresh, f);
        std::vector<std::uint64_t> blocked(mine.begin(), mine.end());
        m_comm.sum(blocked);
        std::size_t added = 0;
        for (std::size_t i = 0; i < fresh.size(); ++i) {
            if (blocked[i]) continue;
            if (m_comm.root()) f.push_back(fresh[i].x, fresh[i].v);
            else ++f.next_id;
            ++sim.flow.counts.emitted[fresh[i].emitter];
            ++added;
        }
        m_owned = f.size();
        m_total += added;
        return added;
    }

    // Owned particles outside this process's box go to their box's owner, with all their fields. `held`:
    // the boxes the particles were in (the boxes before a cut, else the current ones; null at the start,
    // when each process holds a share of the whole set). Their counts go along the links from those boxes
    // to the current ones within the last halo's reach (m_partners_reach; a particle's step moves it far
    // less), unless a particle went further (an emitted one): then to every process.
    void migrate(ParticleSet<D>& f, const std::vector<Node>* held) {
        const int p = m_comm.size(), me = m_comm.rank();
        std::vector<std::vector<std::uint32_t>> leave(static_cast<std::size_t>(p));
        std::vector<std::uint32_t> order;
        order.reserve(f.size());
        for (std::size_t i = 0; i < f.size(); ++i) {
            const int o = owner(f.position[i]);
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
        const std::vector<std::uint64_t> incoming = counts_in(counts, held, m_partners_reach, false);
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
        resize_keeping_ids(f, at + arriving);
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

    // The walls: the root keeps them all while it writes them (walls_written_once); another process keeps
    // the particles of moving walls and those of fixed walls within `band` of its box, in the order of the
    // whole set (so that its neighbour lists sum them in one process's order). The owner of a fixed wall
    // particle (the process whose box, in `owners`, holds it: it has it) sends it where it is needed.
    void distribute_walls(BoundarySet<D>& b, const std::vector<Node>& owners, float band) {
        m_wall_band = band;
        const int p = m_comm.size(), me = m_comm.rank(), whole = m_root_keeps_walls ? 0 : -1;  // keeps them all
        if (p == 1) return;
        number_walls(b);
        auto moving = [&](std::size_t k) { return b.object[k] < b.motions.size() && b.motions[b.object[k]].moving(); };
        std::vector<std::vector<std::uint32_t>> send(static_cast<std::size_t>(p));
        for (std::size_t k = 0; k < b.size(); ++k) {
            if (moving(k) || owner(owners, b.position[k]) != me) continue;
            near(b.position[k], band, [&](int r) {
                if (r != whole) send[std::size_t(r)].push_back(std::uint32_t(k));
            });
        }
        constexpr std::size_t row = sizeof(std::uint32_t) + 3 * sizeof(Vec<D>) + sizeof(float) + sizeof(std::uint16_t);
        std::vector<std::uint64_t> counts(std::size_t(p), 0);
        std::vector<Message> out, in;
        for (int r = 0; r < p; ++r) {
            const auto& rows = send[std::size_t(r)];
            counts[std::size_t(r)] = rows.size();
            if (rows.empty() || r == me) continue;
            Message m{r, std::vector<char>(rows.size() * row)};
            auto* q = reinterpret_cast<unsigned char*>(m.bytes.data());
            for (std::uint32_t k : rows) {
                put(q, m_wall_gid[k]);
                put(q, b.position[k]);
                put(q, b.rest_position[k]);
                put(q, b.velocity[k]);
                put(q, b.psi[k]);
                put(q, b.object[k]);
            }
            out.push_back(std::move(m));
        }
        const std::vector<std::uint64_t> incoming = counts_in(counts, &owners, band, true);
        for (int r = 0; r < p; ++r)
            if (r != me && incoming[std::size_t(r)]) in.push_back({r, std::vector<char>(incoming[std::size_t(r)] * row)});
        m_comm.exchange(out, in);
        if (me != whole) {
            // The new set: moving walls, the fixed ones this process owns and needs, those received; by id.
            struct Wall { std::uint32_t gid; Vec<D> x, rest, v; float psi; std::uint16_t object; };
            std::vector<Wall> keep;
            for (std::size_t k = 0; k < b.size(); ++k)
                if (moving(k)) keep.push_back({m_wall_gid[k], b.position[k], b.rest_position[k], b.velocity[k], b.psi[k], b.object[k]});
            for (std::uint32_t k : send[std::size_t(me)])
                keep.push_back({m_wall_gid[k], b.position[k], b.rest_position[k], b.velocity[k], b.psi[k], b.object[k]});
            for (const auto& m : in) {
                const auto* q = reinterpret_cast<const unsigned char*>(m.bytes.data());
                for (std::size_t k = 0; k < m.bytes.size() / row; ++k) {
                    Wall w;
                    get(q, w.gid);
                    get(q, w.x);
                    get(q, w.rest);
                    get(q, w.v);
                    get(q, w.psi);
                    get(q, w.object);
                    keep.push_back(w);
                }
            }
            std::sort(keep.begin(), keep.end(), [](const Wall& a, const Wall& c) { return a.gid < c.gid; });
            const std::size_t n = keep.size();
            b.position.resize(n);
            b.rest_position.resize(n);
            b.velocity.resize(n);
            b.psi.resize(n);
            b.object.resize(n);
            m_wall_gid.resize(n);
            for (std::size_t k = 0; k < n; ++k) {
                m_wall_gid[k] = keep[k].gid;
                b.position[k] = keep[k].x;
                b.rest_position[k] = keep[k].rest;
                b.velocity[k] = keep[k].v;
                b.psi[k] = keep[k].psi;
                b.object[k] = keep[k].object;
            }
            b.position.shrink_to_fit();
            b.rest_position.shrink_to_fit();
            b.velocity.shrink_to_fit();
            b.psi.shrink_to_fit();
            b.object.shrink_to_fit();
        }
        m_wall_count = b.size();
        m_walls_changed = true;
        if (!std::exchange(m_walls_kept, true)) detail::give_back_free_memory();  // the whole walls, the start's scratch
    }

    // Every process but the first built only the moving walls (make_simulation, issue 44). With the boxes cut,
    // each builds the fixed walls within its box and the kernel's reach around it: every wall particle it owns
    // has its whole neighbourhood there, so its psi has the whole set's bits (a subset in id order keeps each
    // neighbour's order in the sum). The moving walls' neighbours may lie anywhere: their psi comes from the
    // first process, which built every wall. The first distribution then sends each owner's walls as always.
    void place_walls(ParticleSimulation<D>& sim, const ExecContext& exec) {
        BoundarySet<D>& b = sim.boundary;
        m_wall_count = m_walls_whole = m_walls_built = b.size();
        if (!(m_walls_near = m_comm.any(b.moving_only))) return;  // every process built them all
        auto moving = [&](std::uint16_t object) { return b.motions[object].moving(); };  // bodies: driven
        if (b.moving_only) {
            const float reach = std::visit([](const auto& m) { return m.neighbor_radius(); }, sim.method);
            WallsNear<D> near;
            box_of(m_tree, m_comm.rank(), near.region.lo, near.region.hi);
            near.region.lo -= Vec<D>::filled(reach);
            near.region.hi += Vec<D>::filled(reach);
            BoundarySet<D> built = build_boundary<D>(sim.scene, b.layers, &exec, &near);
            std::size_t j = 0;
            for (std::size_t k = 0; k < built.size(); ++k)  // the moving walls as make_simulation left them
                if (moving(built.object[k])) built.velocity[k] = b.velocity[j++];
            if (j != b.size()) throw std::logic_error("distributed walls: the moving walls differ from make_simulation's");
            built.motions = std::move(b.motions);  // the bodies' driven motions (make_bodies)
            b = std::move(built);
            std::visit([&](const auto& m) { m.compute_wall_volumes(b, exec); }, sim.method);
            m_wall_gid = std::move(near.ids);
            m_walls_whole = near.whole;
        }
        std::string psi;  // the moving walls' psi, in id order, from the first process
        for (std::size_t k = 0; k < b.size() && m_comm.root(); ++k)
            if (moving(b.object[k])) psi.append(reinterpret_cast<const char*>(&b.psi[k]), sizeof(float));
        m_comm.broadcast(psi);
        if (psi.size() != sizeof(float) * std::size_t(std::count_if(b.object.begin(), b.object.end(), moving)))
            throw std::logic_error("distributed walls: the moving walls differ from the root's");
        for (std::size_t k = 0, j = 0; k < b.size() && !m_comm.root(); ++k)
            if (moving(b.object[k])) std::memcpy(&b.psi[k], psi.data() + sizeof(float) * j++, sizeof(float));
        m_wall_count = m_walls_built = b.size();
    }

    // The first time the walls are distributed every process but those that built only their box's (above)
    // holds the whole set: its particles numbered.
    void number_walls(const BoundarySet<D>& b) {
        if (!m_wall_gid.empty() || b.empty()) return;
        m_wall_gid.resize(b.size());
        std::iota(m_wall_gid.begin(), m_wall_gid.end(), 0u);
    }

    // Copies of owned particles within `reach` of another box, appended there after its owned ones.
    void build_halo(ParticleSet<D>& f, float reach) {
        const int p = m_comm.size(), me = m_comm.rank();
        m_owned = f.size();
        for (auto& s : m_send) s.clear();
        for (std::size_t i = 0; i < m_owned; ++i) {
            near(f.position[i], reach, [&](int r) {
                if (r != me) m_send[std::size_t(r)].push_back(std::uint32_t(i));
            });
        }
        std::vector<std::uint64_t> counts(std::size_t(p), 0);
        std::vector<Message> out, in;
        for (int r = 0; r < p; ++r) {
            counts[std::size_t(r)] = m_send[std::size_t(r)].size();
            if (!m_send[std::size_t(r)].empty()) out.push_back({r, pack_rows(f, m_send[std::size_t(r)])});
        }
        const std::vector<std::uint64_t> incoming = counts_in(counts, &m_tree, reach, true);
        const std::size_t bytes = row_bytes(f);
        std::size_t total = 0;
        for (int r = 0; r < p; ++r) {
            m_recv[std::size_t(r)] = incoming[std::size_t(r)];
            m_recv_at[std::size_t(r)] = total;
            total += incoming[std::size_t(r)];
            if (incoming[std::size_t(r)]) in.push_back({r, std::vector<char>(incoming[std::size_t(r)] * bytes)});
        }
        m_comm.exchange(out, in);
        resize_keeping_ids(f, m_owned + total);
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
        for (const auto& s : mine.scalars) whole.add_scalar(s.name);
        for (const auto& v : mine.vectors) whole.add_vector(v.name);
        const std::size_t bytes = row_bytes(mine);
        std::size_t n = 0;
        for (const auto& part : parts) n += part.size() / bytes;
        whole.resize(n);
        whole.next_id = mine.next_id;  // every process keeps the whole set's (resize advanced it)
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

    static constexpr double kRebalanceAbove = 1.25;  // largest part over the mean that cuts the boxes again

    Comm& m_comm;
    int m_every = 1;
    float m_gravity = 0.0f;
    std::vector<Node> m_tree;  // the decomposition (rebalance())
    std::vector<std::uint32_t> m_wall_gid;  // each held wall particle's index in the whole set
    float m_wall_band = -1.0f;              // the walls held reach this far from the box (distribute_walls)
    bool m_walls_changed = false;
    bool m_walls_kept = false;              // distribute_walls has run once (the start's memory given back)
    bool m_root_keeps_walls = true;         // the root holds every wall particle (it writes them)
    std::size_t m_wall_count = 0, m_walls_whole = 0;  // wall particles held here; in the whole scene
    std::size_t m_walls_built = 0;                    // wall particles this process built at the start
    bool m_walls_near = false;                        // the processes but the root built the walls near their boxes
    std::uint64_t m_total = 0;  // particles over every process (conserved)
    std::size_t m_owned = 0, m_ghosts = 0;
    std::vector<std::vector<std::uint32_t>> m_send;  // owned rows copied to each process this step
    std::vector<std::uint64_t> m_recv, m_recv_at;      // ghosts from each process, and where they start
    std::vector<Vec<D>> m_start;                       // owned positions at the step's start
    int m_since_rebalance = 0, m_since_sort = 0;
    // The partners (partners()): for which boxes (m_tree_version, one per cut) and reach (the last halo's;
    // 0 before the first: nothing has moved since the start's migration) they were found; how the counts
    // travelled (the summary).
    Links m_partners;
    std::uint64_t m_tree_version = 0, m_partners_tree = ~std::uint64_t(0);
    float m_partners_reach = 0.0f;
    std::uint64_t m_counts_by_partners = 0, m_counts_by_all = 0;
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

RunResult run_particles(Simulation& simulation, RunOptions opts, const ExecContext& exec, Comm& comm) {
    return std::visit(
        [&](auto& sim) {
            constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
            check_distributable(sim.scene, comm.size());
            ParticleBoxes<D> boxes(comm, sim, opts.rebalance_every, opts.fluid_is_share, exec);
            opts.hooks = &boxes;
            RunResult r = run(simulation, opts, exec);
            std::visit([](auto& m) { m.set_halo(nullptr); }, sim.method);
            return r;
        },
        simulation);
}

}  // namespace eddy::dist
