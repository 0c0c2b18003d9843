// eddy: one simulation over many processes (issue 14): the distributed layer, on MPI (Open MPI).
//
// The solvers do not know about it. A process holds one block of the work and a Comm to talk to the
// others; the layer cuts the blocks, exchanges their halos, reduces the statistics and gathers the
// whole on the root (rank 0), which writes the same files as a run on one process. oneTBB threads run
// inside each process as everywhere else. `mpirun -np N eddy run SCENE` starts it; the same binary
// without mpirun (or with N = 1) runs as before.
//
// Shallow water (docs/distributed.md): px x py blocks of cells; each block also holds a halo `halo_width`
// cells wide taken from its neighbours. A step runs every pass on the block and its halo, then one
// exchange refreshes the halo: a pass's stencil reaches at most a few cells, so errors that start at the
// halo's outer edge (where the block's copy of the grid ends) travel less than the halo's width in a step
// and never reach an owned cell. Owned cells are computed with the whole grid's indices, so every
// process count gives the same bits as one process (tests/distributed/).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eddy/checkpoint.hpp"
#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"

namespace eddy::dist {

/// An InputError every process throws at the same point (a bad scene, a refusal reduced over the
/// processes): they can all stop cleanly, without MPI_Abort.
struct AgreedError : InputError {
    using InputError::InputError;
};

/// What the communication was for: halo exchanges (every step), reductions (time step, statistics),
/// gathers of frames and checkpoints on the root.
enum class Channel { halo, reduce, gather };

/// Time spent in communication and what was sent, by this process, on one channel.
struct CommStats {
    double seconds = 0.0;           ///< Wall time inside communication calls (s), waiting included
    std::uint64_t bytes_sent = 0;
    std::uint64_t messages = 0;
};

/// A message to or from one other process (exchange()).
struct Message {
    int peer = 0;
    std::vector<char> bytes;
};

/// This process among the run's processes. A default Comm is a run of one process (no MPI calls).
class Comm {
public:
    Comm() = default;
    int rank() const { return m_rank; }
    int size() const { return m_size; }
    bool root() const { return m_rank == 0; }

    /// Collective operations: every process calls them, in the same order.
    double max(double v);
    std::uint64_t sum(std::uint64_t v);
    /// Element-wise over the processes, in place (one message for several statistics).
    void max(std::vector<double>& v);
    void sum(std::vector<std::uint64_t>& v);
    /// Each process's value, in rank order (the same vector on every process): sums over processes are
    /// then taken in a fixed order, whatever the process count.
    std::vector<double> all_values(double v);
    bool any(bool v);
    /// counts[r]: what this process has for process r; returns what each process has for this one.
    std::vector<std::uint64_t> all_to_all(const std::vector<std::uint64_t>& counts);
    /// The same along known links only: counts[r] goes to each r in `send`, and the result holds what each
    /// q in `recv` has for this process (0 from every other). Every process whose `send` names r must be in
    /// r's `recv` and the other way round (the caller's decomposition says who talks to whom).
    std::vector<std::uint64_t> counts_from(const std::vector<std::uint64_t>& counts, const std::vector<int>& send,
                                           const std::vector<int>& recv);
    /// Every process's `bytes` bytes (the same size on every process), in rank order, on every process.
    std::vector<unsigned char> all_gather(const unsigned char* data, std::size_t bytes);
    /// Sends every message of `out` to its peer and receives one message from each peer listed in `in`
    /// (their sizes must be set: the caller knows them from the decomposition).
    void exchange(const std::vector<Message>& out, std::vector<Message>& in);
    /// The root receives every process's bytes (rank order, its own included); the others get {}.
    std::vector<std::vector<char>> gather(const std::vector<char>& mine);
    /// The root's string, on every process.
    void broadcast(std::string& s);
    void barrier();

    const CommStats& stats(Channel c) const { return m_stats[int(c)]; }

private:
    friend class MpiSession;
    int m_rank = 0, m_size = 1;
    void* m_comm = nullptr;  // an MPI_Comm when MPI runs
    CommStats m_stats[3];
};

/// MPI for this process's lifetime, when it was started by mpirun (MPI_Init_thread, funneled: only the
/// main thread communicates; MPI_Finalize at the end). Otherwise nothing: world() is a one-process Comm.
class MpiSession {
public:
    MpiSession(int& argc, char**& argv);
    ~MpiSession();
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
    Comm& world() { return m_world; }
    /// Stops every process now with this exit code (a failure on one rank the others cannot see).
    [[noreturn]] void abort(int code);
    /// Was this process started by mpirun (Open MPI's or PMIx's environment)?
    static bool launched_by_mpirun();

private:
    Comm m_world;
    bool m_active = false;
};

/// Cells of the whole grid split over processes: px x py blocks (px * py <= processes; the others idle).
struct BlockLayout {
    int px = 1, py = 1;
    int halo = 0;  ///< Halo width (cells)
    /// Owned cells of block (bx, by): [x0, x1) x [y0, y1) of the whole grid.
    int x_begin(int bx, int nx) const { return int(std::int64_t(bx) * nx / px); }
    int y_begin(int by, int ny) const { return int(std::int64_t(by) * ny / py); }
};

/// The layout for `processes` over an nx x ny grid: the factorisation px * py that minimises the halo
/// per block (nx / px + ny / py), with px <= nx and py <= ny, using as many processes as it can.
BlockLayout choose_layout(int processes, int nx, int ny, int halo);

/// Grids larger than this (cells) write their .vti frames in pieces under mpirun even without --pieces:
/// gathered, a frame of 2^26 float cells is built as about 3.5 GB on rank 0.
inline constexpr double kPiecesAboveCells = double(1 << 26);

/// The halo a step of these settings needs (cells): the reach of every pass's stencil, summed.
int halo_width(const ShallowWaterSettings& s);

/// Runs a shallow-water simulation over the processes of `comm` (run() when comm.size() == 1). Every
/// process passes the same simulation (restore_shallow_water from the same checkpoint: a resumed run);
/// each keeps its block of it and the others release the whole grid, which stays on the root to gather
/// the frames into. The files, checkpoints and summary are those of one process
/// (rank 0 writes them), and the grid has the same bits; summary.json adds "processes".
RunResult run_shallow_water(ShallowWaterSimulation& sim, const RunOptions& opts, const ExecContext& exec, Comm& comm);

/// A fresh run of a shallow-water scene over the processes of `comm`: each builds only its block from the
/// scene (the root also builds the whole grid, which frames and checkpoints are gathered into); each
/// block's memory is checked against `budget` (the root's whole grid too, as make_shallow_water).
/// A bad scene or a refusal on any process throws the first failing process's InputError on all.
RunResult run_shallow_water(const Scene& scene, const MemoryBudget& budget, std::span<const std::string> formats,
                            const RunOptions& opts, const ExecContext& exec, Comm& comm);

/// Resumes a run whose checkpoint was written in pieces (a `--pieces` run with .vti frames only: no
/// process held the whole grid, so each wrote its block: OUT/checkpoint_sSTEP_pRANK.eddy, and rank 0
/// the index OUT/checkpoint.eddy, `ck`). On another number of processes each block gathers its cells
/// from the pieces that own them (every process reads the files it needs: a shared folder).
RunResult resume_shallow_water_pieces(const CheckpointFile& ck, const MemoryBudget& budget, RunOptions opts,
                                      const ExecContext& exec, Comm& comm);

/// Throws AgreedError (on every process alike) for what does not run over several processes yet:
/// Clavet's sequential mode and springs. Nothing on one process.
void check_distributable(const Scene& scene, int processes);

/// Runs a particle simulation over the processes of `comm` (every process passes the same, freshly made
/// simulation, or the same checkpoint restored): boxes by recursive bisection at equal particle counts,
/// cut again every opts.rebalance_every steps; ghosts within the neighbour radius refreshed between the solver's passes;
/// migration; statistics reduced. The root writes the files of a run on one process (particles in id
/// order) and summary.json adds the processes, their particles, the load imbalance and the time spent
/// communicating. Owned particles are computed as on one process: the same bits for every N.
RunResult run_particles(Simulation& sim, RunOptions opts, const ExecContext& exec, Comm& comm);

}  // namespace eddy::dist
