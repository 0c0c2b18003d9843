// Shallow water over many processes (include/eddy/distributed.hpp): blocks of cells with halos, one halo
// exchange per step, statistics reduced over the processes, frames gathered on the root. The run loop
// is the one-process loop (src/shallow/run_loop.hpp) over a stepper that does these.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "eddy/distributed.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/error.hpp"
#include "shallow/run_loop.hpp"

namespace eddy::dist {

int halo_width(const ShallowWaterSettings& s) {
    // How far (cells) a pass's result at one cell depends on values elsewhere, per pass of a step:
    //   sources 0; velocity 1; closed walls 0; height 2 (a face's flux reads its donor's limiter and
    //   outflow scale, which read the donor's faces); overshooting 2 (an edge test reads two cells away);
    //   advection per iteration: conservative and upwind 2 (discharges averaged to the face), semi-
    //   Lagrangian 2 (the 3x3 mean) + 2 (the bilinear read) + the back-trace (at most alpha cells per
    //   unit of advection_step with the velocity clamp; checked every step: halo_overrun);
    //   vorticity 3 (omega, its gradient, the face mean).
    // Each reach adds up over a step; the halo is twice the sum, rounded up to a multiple of 4.
    int reach = 1 + 2 + 2;
    const int iterations = std::max(1, s.advection_iterations);
    if (s.advection == "semi_lagrangian")
        reach += iterations * (4 + int(std::ceil(std::max(1.0f, s.advection_step) * std::max(1.0f, s.alpha))));
    else if (s.advection != "none")
        reach += iterations * 2;
    if (s.vorticity > 0.0f) reach += 3;
    return (2 * reach + 3) / 4 * 4;
}

BlockLayout choose_layout(int processes, int nx, int ny, int halo) {
    for (int k = std::max(1, processes); k >= 1; --k) {
        BlockLayout best;
        double best_cost = std::numeric_limits<double>::infinity();
        for (int px = 1; px <= k; ++px) {
            if (k % px) continue;
            const int py = k / px;
            if (px > nx || py > ny) continue;
            const double cost = double(nx) / px + double(ny) / py;  // halo cells per block, over 2 halo
            if (cost < best_cost - 1e-12) {
                best_cost = cost;
                best.px = px;
                best.py = py;
            }
        }
        if (std::isfinite(best_cost)) {
            best.halo = halo;
            return best;
        }
    }
    return BlockLayout{1, 1, halo};
}

namespace {

// A rectangle of a field's index space (global indices): [x0, x1) x [y0, y1).
struct Rect {
    int x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    bool empty() const { return x1 <= x0 || y1 <= y0; }
    std::size_t count() const { return empty() ? 0 : std::size_t(x1 - x0) * std::size_t(y1 - y0); }
};
Rect meet(const Rect& a, const Rect& b) {
    return {std::max(a.x0, b.x0), std::min(a.x1, b.x1), std::max(a.y0, b.y0), std::min(a.y1, b.y1)};
}

enum Field { kDepth, kInk, kU, kW, kFields };

// The one message of the first process that failed (rank order), on every process; empty if none did.
std::string first_error(Comm& comm, const std::string& mine) {
    const auto all = comm.gather(std::vector<char>(mine.begin(), mine.end()));
    std::string first;
    for (const auto& m : all)
        if (!m.empty()) {
            first.assign(m.begin(), m.end());
            break;
        }
    comm.broadcast(first);
    return first;
}

// One process's block: its owned cells and the cells it holds (owned + halo), in the whole grid.
struct Block {
    bool active = false;
    Rect own, held;
    // A field's index space: cells, x-faces (one more column), y-faces (one more row).
    Rect held_of(Field f) const {
        Rect r = held;
        if (f == kU) ++r.x1;
        if (f == kW) ++r.y1;
        return r;
    }
    // Faces on the whole grid's last column/row belong to the block of the cells beside them.
    Rect own_of(Field f, int nx, int ny) const {
        Rect r = own;
        if (f == kU && r.x1 == nx) ++r.x1;
        if (f == kW && r.y1 == ny) ++r.y1;
        return r;
    }
};

Block block_of(int rank, const BlockLayout& L, int nx, int ny) {
    Block b;
    if (rank >= L.px * L.py) return b;
    const int bx = rank % L.px, by = rank / L.px;
    b.active = true;
    b.own = {L.x_begin(bx, nx), L.x_begin(bx + 1, nx), L.y_begin(by, ny), L.y_begin(by + 1, ny)};
    b.held = {std::max(0, b.own.x0 - L.halo), std::min(nx, b.own.x1 + L.halo), std::max(0, b.own.y0 - L.halo),
              std::min(ny, b.own.y1 + L.halo)};
    return b;
}

// The stepper of the run loop (src/shallow/run_loop.hpp) for one process's block.
template <class Real>
class BlockStepper {
public:
    // sim: the whole simulation, on the root (and on every process when it was built whole: then
    // `fresh` is false and make_local cuts the block from it); make_local(block, nx, ny) builds the block.
    // gathers: the root holds the whole grid (sim) to gather frames and checkpoints into; without it
    // every process writes its own checkpoint piece (the same value on every process).
    template <class MakeLocal>
    BlockStepper(const Scene& scene, const ShallowWaterScene& spec, ShallowWaterSimulation* sim, Comm& comm,
                 const ShallowWaterClock& start, bool fresh, bool gathers, MakeLocal&& make_local)
        : m_scene(scene), m_spec(spec), m_sim(comm.root() ? sim : nullptr), m_comm(comm), m_gathers(gathers), m_idle(start) {
        if (m_sim) {
            m_whole = &std::get<ShallowWaterSolver<Real>>(m_sim->solver);
            m_whole->release_scratch();  // it only receives the blocks' cells: half its memory
        }
        m_nx = spec.nx;
        m_ny = spec.ny;
        m_layout = choose_layout(comm.size(), m_nx, m_ny, halo_width(spec.settings));
        for (int r = 0; r < comm.size(); ++r) m_blocks.push_back(block_of(r, m_layout, m_nx, m_ny));
        const Block& me = m_blocks[std::size_t(comm.rank())];
        if (me.active) m_local.emplace(make_local(grid_block(me), me.held.x1 - me.held.x0, me.held.y1 - me.held.y0));
        // The exchange plan: what each peer holds of what this process owns, and the reverse.
        for (int p = 0; p < comm.size(); ++p) {
            if (p == comm.rank()) continue;
            const Block& other = m_blocks[std::size_t(p)];
            if (!me.active || !other.active) continue;
            Plan send{p, {}}, recv{p, {}};
            std::size_t ns = 0, nr = 0;
            for (int f = 0; f < kFields; ++f) {
                send.rects[f] = meet(other.held_of(Field(f)), me.own_of(Field(f), m_nx, m_ny));
                recv.rects[f] = meet(me.held_of(Field(f)), other.own_of(Field(f), m_nx, m_ny));
                ns += send.rects[f].count();
                nr += recv.rects[f].count();
            }
            if (ns) m_send.push_back(send);
            if (nr) m_recv.push_back(recv);
        }
        if (fresh) {
            // A block built from the scene closed its inner borders and measured only its own cells:
            // the halo from the neighbours, the first time step from every block.
            exchange();
            std::vector<double> most{m_local ? m_local->max_speed() : 0.0, m_local ? m_local->max_depth() : 0.0};
            m_comm.max(most);
            if (m_local) m_local->set_global_maxima(most[0], most[1]);
        }
    }

    static GridBlock grid_block(const Block& me) {
        GridBlock gb;
        gb.i0 = me.held.x0;
        gb.j0 = me.held.y0;
        gb.own_i0 = me.own.x0 - me.held.x0;
        gb.own_i1 = me.own.x1 - me.held.x0;
        gb.own_j0 = me.own.y0 - me.held.y0;
        gb.own_j1 = me.own.y1 - me.held.y0;
        return gb;
    }

    const ShallowWaterScene& spec() const { return m_spec; }
    const ShallowWaterSettings& settings() const { return m_spec.settings; }
    double time() const { return m_local ? m_local->time() : m_idle.time; }
    std::uint64_t steps() const { return m_local ? m_local->steps() : m_idle.steps; }
    bool root() const { return m_comm.root(); }
    double suggest_dt() { return m_comm.max(m_local ? m_local->suggest_dt() : -std::numeric_limits<double>::infinity()); }

    ShallowWaterStats step(double dt, const ExecContext& exec) {
        ShallowWaterStats st;
        st.dt = dt;
        if (m_local) {
            st = m_local->step(dt, exec);
        } else {
            m_idle.time += dt;  // as the solvers' clocks
            ++m_idle.steps;
        }
        exchange();
        // Two reductions: maxima (a non-finite value as 1), counts.
        std::vector<double> most{st.max_speed, st.max_depth, st.non_finite ? 1.0 : 0.0};
        std::vector<std::uint64_t> counts{st.clamped, st.halo_overrun};
        m_comm.max(most);
        m_comm.sum(counts);
        if (m_local) m_local->set_global_maxima(most[0], most[1]);
        st.max_speed = most[0];
        st.max_depth = most[1];
        st.non_finite = most[2] > 0.0;
        st.clamped = std::size_t(counts[0]);
        st.halo_overrun = std::size_t(counts[1]);
        ++m_steps;
        return st;
    }

    // Collective: every process sends its owned cells and faces; the root pastes them into the whole.
    const ShallowWaterGrid<Real>* gather() {
        std::vector<char> mine;
        const Block& me = m_blocks[std::size_t(m_comm.rank())];
        if (m_local) pack(me, [&](Field f) { return me.own_of(f, m_nx, m_ny); }, mine);
        const auto all = m_comm.gather(mine);
        const double inflow = total_inflow(), outflow = total_outflow();
        if (!root()) return nullptr;
        auto& W = m_whole->grid();
        for (int r = 0; r < m_comm.size(); ++r) {
            const Block& b = m_blocks[std::size_t(r)];
            if (!b.active) continue;
            const char* p = all[std::size_t(r)].data();
            for (int f = 0; f < kFields; ++f) {
                const Rect rc = b.own_of(Field(f), m_nx, m_ny);
                std::vector<Real>& to = whole_field(W, Field(f));
                const int stride = m_nx + (f == kU ? 1 : 0);
                for (int j = rc.y0; j < rc.y1; ++j) {
                    const std::size_t n = std::size_t(rc.x1 - rc.x0);
                    std::memcpy(&to[std::size_t(j) * stride + rc.x0], p, n * sizeof(Real));
                    p += n * sizeof(Real);
                }
            }
        }
        ShallowWaterClock c = m_local->clock();
        c.inflow = inflow;
        c.outflow = outflow;
        m_whole->set_clock(c);
        return &W;
    }

    bool any(bool v) { return m_comm.any(v); }
    template <class F>
    void on_root(F&& f) {
        std::string error;
        if (root()) {
            try {
                f();
            } catch (const InputError& e) {
                error = e.what();
                if (error.empty()) error = "input error";
            }
        }
        m_comm.broadcast(error);
        if (!error.empty()) throw AgreedError(error);
    }
    // Totals over the processes, summed in rank order (collective).
    double total_inflow() { return ordered_sum(m_local ? m_local->total_inflow() : 0.0); }
    double total_outflow() { return ordered_sum(m_local ? m_local->total_outflow() : 0.0); }
    bool gathers() const { return m_gathers; }
    // The run loop's own checks give every process the same verdict: all stop cleanly.
    [[noreturn]] void refuse(const std::string& message) const { throw AgreedError(message); }

    void checkpoint(const std::filesystem::path& file, const nlohmann::json& record) {
        if (m_gathers) {
            gather();
            on_root([&] { write_checkpoint(file, *m_sim, record); });
            return;
        }
        // One file per process, the index (checkpoint.eddy, with rank 0's block) last: it names the pieces
        // by their step, so an index always refers to a complete set; older pieces are removed after it.
        const std::filesystem::path dir = file.parent_path();
        const std::string stem = fmt::format("checkpoint_s{:012d}", steps());
        auto piece = [&](int r) { return checkpoint_piece_name(steps(), r); };  // stem + _pRRRR.eddy
        std::string error;
        if (m_local && !root()) {
            try {
                nlohmann::json meta{{"kind", "grid_piece"}, {"rank", m_comm.rank()}, {"steps", steps()}, {"time", time()}};
                StateWriter w;
                m_local->save_state(w);
                write_checkpoint_file(dir / piece(m_comm.rank()), meta, w.bytes());
            } catch (const InputError& e) {
                error = e.what();
            }
        }
        error = first_error(m_comm, error);
        if (!error.empty()) throw AgreedError(error);
        const double inflow = total_inflow(), outflow = total_outflow();  // (collective)
        on_root([&] {
            nlohmann::json meta;
            meta["kind"] = "grid_pieces";
            meta["inflow_total"] = inflow;   // resumed on another process count: the root's
            meta["outflow_total"] = outflow;
            meta["method"] = m_scene.method;
            meta["precision"] = m_spec.settings.precision;
            meta["scene"] = m_scene.document;
            meta["scene_source"] = m_scene.source.string();
            meta["time"] = time();
            meta["steps"] = steps();
            meta["run"] = record;
            meta["ranks"] = m_comm.size();
            meta["blocks"] = {m_layout.px, m_layout.py, m_layout.halo};
            meta["piece_stem"] = stem;
            StateWriter w;
            m_local->save_state(w);
            write_checkpoint_file(file, meta, w.bytes());
        });
        if (m_local && !root())
            detail::drop_checkpoint_pieces(dir, piece(m_comm.rank()), m_comm.rank(), std::numeric_limits<int>::max());
    }

    // Collective: every block writes its owned cells as a .vti piece, the root the .pvti listing them.
    std::vector<std::string> write_pieces(const std::filesystem::path& out, const std::string& pvti) {
        std::string error;
        if (m_local) {
            try {
                io::write_vti_piece(out / detail::grid_piece_name(pvti, m_comm.rank()), m_local->grid(), m_local->block());
            } catch (const InputError& e) {
                error = e.what();
                if (error.empty()) error = "cannot write a piece";
            }
        }
        error = first_error(m_comm, error);
        if (!error.empty()) throw AgreedError(error);
        std::vector<std::string> names;
        std::vector<io::GridPiece> pieces;
        for (int r = 0; r < m_comm.size(); ++r) {
            const Block& b = m_blocks[std::size_t(r)];
            if (!b.active) continue;
            names.push_back(detail::grid_piece_name(pvti, r));
            pieces.push_back({b.own.x0, b.own.x1, b.own.y0, b.own.y1, std::filesystem::path(names.back()).filename().string()});
        }
        // Floating bodies: the active blocks carry their displaced depth.
        const bool displaced = m_comm.any(m_local && !m_local->grid().displaced.empty());
        on_root([&] { io::write_pvti(out / pvti, m_nx, m_ny, m_spec.dx, sizeof(Real) == 8, pieces, displaced); });
        return names;
    }

    // The whole grid's water volume (m^3): the blocks' owned cells, summed in rank order (collective).
    double volume() {
        double v = 0.0;
        if (m_local) {
            const auto& g = m_local->grid();
            const GridBlock& b = m_local->block();
            for (int j = b.own_j0; j < b.own_j1; ++j)
                for (int i = b.own_i0; i < b.own_i1; ++i) v += double(g.depth[g.cell(i, j)]);
            v *= double(g.dx) * double(g.dx);
        }
        return ordered_sum(v);
    }

    void describe(nlohmann::json& j) {
        const Block& me = m_blocks[std::size_t(m_comm.rank())];
        const auto cells = m_comm.all_values(double(me.own.count()));
        const auto held = m_comm.all_values(double(me.active ? me.held.count() : 0));
        const CommStats halo = m_comm.stats(Channel::halo), reduce = m_comm.stats(Channel::reduce),
                        gather = m_comm.stats(Channel::gather);
        const auto halo_seconds = m_comm.all_values(halo.seconds);
        const auto halo_bytes = m_comm.all_values(double(halo.bytes_sent));
        const auto reduce_seconds = m_comm.all_values(reduce.seconds);
        const auto gather_seconds = m_comm.all_values(gather.seconds);
        const auto gather_bytes = m_comm.all_values(double(gather.bytes_sent));
        std::size_t halo_cells = 0;
        for (const auto& p : m_recv) halo_cells += p.rects[kDepth].count();
        const auto halo_cells_all = m_comm.all_values(double(halo_cells));
        double most = 0, total = 0;
        for (double c : cells) {
            most = std::max(most, c);
            total += c;
        }
        nlohmann::json p;
        p["ranks"] = m_comm.size();
        p["blocks"] = {m_layout.px, m_layout.py};
        p["halo_cells_wide"] = m_layout.halo;
        p["cells_per_rank"] = cells;
        p["cells_held_per_rank"] = held;  // owned + halo: the work of a step
        p["halo_cells_received_per_step"] = halo_cells_all;
        p["load_imbalance"] = total > 0 ? most / (total / double(m_comm.size())) : 1.0;
        // Per rank; seconds include waiting for the others (the root writing a frame, a slower block).
        auto per_step = [&](const std::vector<double>& v) {
            nlohmann::json a = nlohmann::json::array();
            for (double x : v) a.push_back(m_steps ? x / double(m_steps) : 0.0);
            return a;
        };
        p["steps"] = m_steps;
        p["halo_exchange_seconds"] = halo_seconds;
        p["halo_bytes_sent_per_step"] = per_step(halo_bytes);
        p["reduction_seconds"] = reduce_seconds;
        p["gather_seconds"] = gather_seconds;
        p["gather_bytes_sent"] = gather_bytes;
        j["processes"] = p;
    }

private:
    struct Plan {
        int peer = 0;
        Rect rects[kFields];
    };

    static std::vector<Real>& whole_field(ShallowWaterGrid<Real>& g, Field f) {
        return f == kDepth ? g.depth : f == kInk ? g.ink : f == kU ? g.u : g.w;
    }
    // The index of global (i, j) of field f in this process's local arrays.
    std::size_t local_index(Field f, int i, int j) const {
        const Block& me = m_blocks[std::size_t(m_comm.rank())];
        const int stride = (me.held.x1 - me.held.x0) + (f == kU ? 1 : 0);
        return std::size_t(j - me.held.y0) * stride + std::size_t(i - me.held.x0);
    }
    template <class RectOf>
    void pack(const Block&, RectOf&& rect_of, std::vector<char>& out) {
        auto& g = m_local->grid();
        for (int f = 0; f < kFields; ++f) {
            const Rect rc = rect_of(Field(f));
            const std::vector<Real>& from = whole_field(g, Field(f));
            for (int j = rc.y0; j < rc.y1; ++j) {
                const std::size_t n = std::size_t(rc.x1 - rc.x0);
                const char* p = reinterpret_cast<const char*>(&from[local_index(Field(f), rc.x0, j)]);
                out.insert(out.end(), p, p + n * sizeof(Real));
            }
        }
    }
    void exchange() {
        if (!m_local) return;
        std::vector<Message> out, in;
        for (const auto& s : m_send) {
            Message m{s.peer, {}};
            pack(m_blocks[std::size_t(m_comm.rank())], [&](Field f) { return s.rects[f]; }, m.bytes);
            out.push_back(std::move(m));
        }
        for (const auto& r : m_recv) {
            std::size_t n = 0;
            for (int f = 0; f < kFields; ++f) n += r.rects[f].count();
            in.push_back(Message{r.peer, std::vector<char>(n * sizeof(Real))});
        }
        m_comm.exchange(out, in);
        auto& g = m_local->grid();
        for (std::size_t k = 0; k < m_recv.size(); ++k) {
            const char* p = in[k].bytes.data();
            for (int f = 0; f < kFields; ++f) {
                const Rect rc = m_recv[k].rects[f];
                std::vector<Real>& to = whole_field(g, Field(f));
                for (int j = rc.y0; j < rc.y1; ++j) {
                    const std::size_t n = std::size_t(rc.x1 - rc.x0);
                    std::memcpy(&to[local_index(Field(f), rc.x0, j)], p, n * sizeof(Real));
                    p += n * sizeof(Real);
                }
            }
        }
    }
    double ordered_sum(double v) {
        double s = 0.0;
        for (double x : m_comm.all_values(v)) s += x;
        return s;
    }

    const Scene& m_scene;
    const ShallowWaterScene& m_spec;
    ShallowWaterSimulation* m_sim = nullptr;      // the root's
    ShallowWaterSolver<Real>* m_whole = nullptr;  // the root's: frames are gathered into it
    Comm& m_comm;
    bool m_gathers = true;
    int m_nx = 0, m_ny = 0;
    BlockLayout m_layout;
    std::vector<Block> m_blocks;
    ShallowWaterClock m_idle;
    std::optional<ShallowWaterSolver<Real>> m_local;
    std::vector<Plan> m_send, m_recv;
    std::uint64_t m_steps = 0;
};

// Every process holds the whole simulation (a resumed run): each cuts its block, the others release the whole.
template <class Real>
RunResult run_cut(ShallowWaterSimulation& sim, ShallowWaterSolver<Real>& whole, const RunOptions& opts, const ExecContext& exec,
                  Comm& comm) {
    std::optional<BlockStepper<Real>> stepper;
    stepper.emplace(sim.scene, sim.spec, &sim, comm, whole.clock(), false, true, [&](const GridBlock& b, int nx, int ny) {
        GridBlock gb = b;
        gb.global_nx = sim.spec.nx;
        gb.global_ny = sim.spec.ny;
        return ShallowWaterSolver<Real>(whole, gb, nx, ny, comm.root());
    });
    if (!comm.root()) {
        auto& w = whole.grid();  // the whole grid stays on the root only (the frames are gathered into it)
        for (auto* v : {&w.terrain, &w.depth, &w.ink, &w.u, &w.w}) std::vector<Real>().swap(*v);
        std::vector<std::uint8_t>().swap(w.solid);
    }
    return detail::run_grid_loop(*stepper, sim.scene, opts, exec);
}

}  // namespace

RunResult run_shallow_water(ShallowWaterSimulation& sim, const RunOptions& opts, const ExecContext& exec, Comm& comm) {
    if (comm.size() == 1) return run(sim, opts, exec);
    return std::visit([&](auto& whole) { return run_cut(sim, whole, opts, exec, comm); }, sim.solver);
}

RunResult run_shallow_water(const Scene& scene, const MemoryBudget& budget, std::span<const std::string> formats,
                            const RunOptions& opts, const ExecContext& exec, Comm& comm) {
    if (comm.size() == 1) {
        ShallowWaterSimulation sim = make_shallow_water(scene, budget, formats);
        return run(sim, opts, exec);
    }
    const ShallowWaterScene spec = parse_shallow_water(scene);  // the same verdict on every process
    const BlockLayout layout = choose_layout(comm.size(), spec.nx, spec.ny, halo_width(spec.settings));
    const Block me = block_of(comm.rank(), layout, spec.nx, spec.ny);
    // The root builds the whole grid (frames and checkpoints are gathered into it); every process checks
    // its block's memory. A failure anywhere stops all, with the first failing process's message.
    // Frames only in pieces (.vti alone, no pictures): no process needs the whole grid; checkpoints are
    // written per process too.
    const std::vector<std::string>& run_formats = opts.formats.empty() ? scene.output.formats : opts.formats;
    const bool gathers = !(opts.pieces && run_formats.size() == 1 && run_formats[0] == "vti" && !opts.render &&
                           !scene.output.render);
    std::optional<ShallowWaterSimulation> whole;
    std::string error;
    try {
        if (comm.root() && gathers) whole.emplace(make_shallow_water(scene, budget, formats));
        ShallowWaterScene part = spec;
        part.nx = std::max(1, me.held.x1 - me.held.x0);
        part.ny = std::max(1, me.held.y1 - me.held.y0);
        check_memory(estimate_memory(part, {}), budget, fmt::format("{} (the block of process {})", scene.where(), comm.rank()));
    } catch (const InputError& e) {
        error = e.what();
        if (error.empty()) error = "input error";
    }
    error = first_error(comm, error);
    if (!error.empty()) throw AgreedError(error);
    auto go = [&](auto tag) -> RunResult {
        using Real = decltype(tag);
        ShallowWaterClock start;  // a fresh grid's clock; the idle processes keep it
        std::optional<BlockStepper<Real>> stepper;
        std::string where = scene.where();
        stepper.emplace(scene, spec, whole ? &*whole : nullptr, comm, start, true, gathers, [&](const GridBlock& b, int nx, int ny) {
            GridBlock gb = b;
            gb.global_nx = spec.nx;
            gb.global_ny = spec.ny;
            return ShallowWaterSolver<Real>(spec, where, gb, nx, ny);
        });
        return detail::run_grid_loop(*stepper, scene, opts, exec);
    };
    if (spec.settings.precision == "double") return go(double{});
    return go(float{});
}

RunResult resume_shallow_water_pieces(const CheckpointFile& ck, const MemoryBudget& budget, RunOptions opts,
                                      const ExecContext& exec, Comm& comm) {
    const std::string where = ck.file.string();
    const auto& meta = ck.meta;
    if (meta.value("kind", "") != "grid_pieces" || !meta.contains("scene") || !meta["scene"].is_object() ||
        !meta.contains("scene_source") || !meta["scene_source"].is_string() || !meta.contains("ranks") ||
        !meta["ranks"].is_number_integer() || !meta.contains("piece_stem") || !meta["piece_stem"].is_string() ||
        !meta.contains("steps") || !meta["steps"].is_number_unsigned() || !meta.contains("time") || !meta["time"].is_number())
        throw AgreedError(fmt::format("{}: corrupt checkpoint: not a distributed shallow-water grid's", where));
    const int ranks = meta["ranks"].get<int>();
    if (ranks < 1 || ranks > (1 << 20)) throw AgreedError(fmt::format("{}: corrupt checkpoint: {} processes", where, ranks));
    const Scene scene = parse_scene(meta["scene"], meta["scene_source"].get<std::string>());
    const ShallowWaterScene spec = parse_shallow_water(scene);
    nlohmann::json record = meta.value("run", nlohmann::json::object());
    opts.resume = &record;
    ShallowWaterClock start;
    start.time = meta["time"].get<double>();
    start.steps = meta["steps"].get<std::uint64_t>();
    const std::filesystem::path dir = ck.file.parent_path();
    const std::string stem = meta["piece_stem"].get<std::string>();
    // The blocks that wrote the pieces (their layout follows from their count, as when they were cut).
    const BlockLayout written = choose_layout(ranks, spec.nx, spec.ny, halo_width(spec.settings));
    auto go = [&](auto tag) -> RunResult {
        using Real = decltype(tag);
        // Block r's piece, read into a solver on its block (rank 0's is in checkpoint.eddy itself).
        auto load_piece = [&](int r, ShallowWaterSolver<Real>& into) {
            if (r == 0) {
                StateReader rd(ck.state, where);
                into.load_state(rd);
                if (!rd.done()) rd.fail("unexpected bytes after the grid");
                return;
            }
            const CheckpointFile piece = read_checkpoint_file(dir / fmt::format("{}_p{:04d}.eddy", stem, r));
            if (piece.meta.value("kind", "") != "grid_piece" || piece.meta.value("rank", -1) != r ||
                piece.meta.value("steps", std::uint64_t(0)) != start.steps)
                throw InputError(fmt::format("{}: not process {}'s piece of step {}", piece.file.string(), r, start.steps));
            StateReader rd(piece.state, piece.file.string());
            into.load_state(rd);
            if (!rd.done()) rd.fail("unexpected bytes after the grid");
        };
        auto solver_on = [&](const GridBlock& b, int nx, int ny) {
            GridBlock gb = b;
            gb.global_nx = spec.nx;
            gb.global_ny = spec.ny;
            return ShallowWaterSolver<Real>(spec, scene.where(), gb, nx, ny);
        };
        std::optional<BlockStepper<Real>> stepper;
        std::string error;
        try {
            stepper.emplace(scene, spec, nullptr, comm, start, false, false, [&](const GridBlock& b, int nx, int ny) {
                ShallowWaterScene part = spec;
                part.nx = nx;
                part.ny = ny;
                check_memory(estimate_memory(part, {}), budget, fmt::format("{} (the block of process {})", where, comm.rank()));
                ShallowWaterSolver<Real> solver = solver_on(b, nx, ny);
                if (ranks == comm.size()) {  // the same blocks: this process's own piece
                    load_piece(comm.rank(), solver);
                    return solver;
                }
                // Another process count: the cells this block holds, from every piece that owns some of them.
                Block mine;
                mine.active = true;
                mine.held = {b.i0, b.i0 + nx, b.j0, b.j0 + ny};
                auto& g = solver.grid();
                bool clock_set = false;
                for (int r = 0; r < ranks; ++r) {
                    const Block old = block_of(r, written, spec.nx, spec.ny);
                    if (!old.active || (meet(old.own_of(kU, spec.nx, spec.ny), mine.held_of(kU)).empty() &&
                                            meet(old.own_of(kW, spec.nx, spec.ny), mine.held_of(kW)).empty()))
                        continue;
                    ShallowWaterSolver<Real> from = solver_on(BlockStepper<Real>::grid_block(old), old.held.x1 - old.held.x0,
                                                              old.held.y1 - old.held.y0);
                    load_piece(r, from);
                    const auto& f = from.grid();
                    const GridBlock& fb = from.block();
                    for (int field = 0; field < kFields; ++field) {
                        const Rect rc = meet(old.own_of(Field(field), spec.nx, spec.ny), mine.held_of(Field(field)));
                        for (int j = rc.y0; j < rc.y1; ++j)
                            for (int i = rc.x0; i < rc.x1; ++i) {
                                const int li = i - b.i0, lj = j - b.j0, fi = i - fb.i0, fj = j - fb.j0;
                                if (field == kDepth) g.depth[g.cell(li, lj)] = f.depth[f.cell(fi, fj)];
                                else if (field == kInk) g.ink[g.cell(li, lj)] = f.ink[f.cell(fi, fj)];
                                else if (field == kU) g.u[g.uface(li, lj)] = f.u[f.uface(fi, fj)];
                                else g.w[g.wface(li, lj)] = f.w[f.wface(fi, fj)];
                            }
                    }
                    if (!clock_set) {
                        ShallowWaterClock c = from.clock();
                        c.inflow = comm.root() ? meta.value("inflow_total", 0.0) : 0.0;
                        c.outflow = comm.root() ? meta.value("outflow_total", 0.0) : 0.0;
                        solver.set_clock(c);
                        clock_set = true;
                    }
                }
                if (!clock_set) throw InputError(fmt::format("{}: no piece holds the cells of process {}", where, comm.rank()));
                return solver;
            });
        } catch (const InputError& e) {
            error = e.what();
            if (error.empty()) error = "input error";
        }
        error = first_error(comm, error);
        if (!error.empty()) throw AgreedError(error);
        return detail::run_grid_loop(*stepper, scene, opts, exec);
    };
    if (spec.settings.precision == "double") return go(double{});
    return go(float{});
}

}  // namespace eddy::dist
