// The distributed layer's communication on MPI: a thin, timed wrapper over the few collective and
// point-to-point calls the layer uses (include/eddy/distributed.hpp).
#include <chrono>
#include <cstdlib>
#include <numeric>

#include <mpi.h>

#include "eddy/distributed.hpp"

namespace eddy::dist {

namespace {

MPI_Comm handle(void* c) { return c ? *static_cast<MPI_Comm*>(c) : MPI_COMM_SELF; }

// Adds the wall time of its lifetime to the Comm's statistics.
struct Timed {
    explicit Timed(CommStats& s) : stats(s), t0(std::chrono::steady_clock::now()) {}
    ~Timed() { stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    CommStats& stats;
    std::chrono::steady_clock::time_point t0;
};

}  // namespace

double Comm::max(double v) {
    if (m_size == 1) return v;
    Timed t(m_stats[int(Channel::reduce)]);
    double r = v;
    MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, handle(m_comm));
    return r;
}

std::uint64_t Comm::sum(std::uint64_t v) {
    if (m_size == 1) return v;
    Timed t(m_stats[int(Channel::reduce)]);
    std::uint64_t r = v;
    MPI_Allreduce(&v, &r, 1, MPI_UINT64_T, MPI_SUM, handle(m_comm));
    return r;
}

void Comm::max(std::vector<double>& v) {
    if (m_size == 1 || v.empty()) return;
    Timed t(m_stats[int(Channel::reduce)]);
    MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_MAX, handle(m_comm));
}

void Comm::sum(std::vector<std::uint64_t>& v) {
    if (m_size == 1 || v.empty()) return;
    Timed t(m_stats[int(Channel::reduce)]);
    MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_UINT64_T, MPI_SUM, handle(m_comm));
}

std::vector<double> Comm::all_values(double v) {
    if (m_size == 1) return {v};
    Timed t(m_stats[int(Channel::reduce)]);
    std::vector<double> r(static_cast<std::size_t>(m_size));
    MPI_Allgather(&v, 1, MPI_DOUBLE, r.data(), 1, MPI_DOUBLE, handle(m_comm));
    return r;
}

bool Comm::any(bool v) {
    if (m_size == 1) return v;
    Timed t(m_stats[int(Channel::reduce)]);
    int in = v ? 1 : 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, handle(m_comm));
    return out != 0;
}

std::vector<std::uint64_t> Comm::all_to_all(const std::vector<std::uint64_t>& counts) {
    if (m_size == 1) return counts;
    Timed t(m_stats[int(Channel::halo)]);
    std::vector<std::uint64_t> r(static_cast<std::size_t>(m_size));
    MPI_Alltoall(counts.data(), 1, MPI_UINT64_T, r.data(), 1, MPI_UINT64_T, handle(m_comm));
    return r;
}

std::vector<std::uint64_t> Comm::counts_from(const std::vector<std::uint64_t>& counts, const std::vector<int>& send,
                                             const std::vector<int>& recv) {
    if (m_size == 1) return counts;
    Timed t(m_stats[int(Channel::halo)]);
    std::vector<std::uint64_t> r(static_cast<std::size_t>(m_size), 0);
    std::vector<MPI_Request> req;
    req.reserve(send.size() + recv.size());
    for (const int q : recv) {
        req.emplace_back();
        MPI_Irecv(&r[std::size_t(q)], 1, MPI_UINT64_T, q, 16, handle(m_comm), &req.back());
    }
    for (const int q : send) {
        req.emplace_back();
        MPI_Isend(&counts[std::size_t(q)], 1, MPI_UINT64_T, q, 16, handle(m_comm), &req.back());
        m_stats[int(Channel::halo)].bytes_sent += sizeof(std::uint64_t);
        ++m_stats[int(Channel::halo)].messages;
    }
    MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE);
    return r;
}

std::vector<unsigned char> Comm::all_gather(const unsigned char* data, std::size_t bytes) {
    if (m_size == 1) return std::vector<unsigned char>(data, data + bytes);
    Timed t(m_stats[int(Channel::reduce)]);
    std::vector<unsigned char> r(bytes * static_cast<std::size_t>(m_size));
    MPI_Allgather(data, int(bytes), MPI_BYTE, r.data(), int(bytes), MPI_BYTE, handle(m_comm));
    return r;
}

void Comm::exchange(const std::vector<Message>& out, std::vector<Message>& in) {
    if (out.empty() && in.empty()) return;
    Timed t(m_stats[int(Channel::halo)]);
    std::vector<MPI_Request> req;
    req.reserve(out.size() + in.size());
    for (auto& m : in) {
        req.emplace_back();
        MPI_Irecv(m.bytes.data(), int(m.bytes.size()), MPI_BYTE, m.peer, 14, handle(m_comm), &req.back());
    }
    for (const auto& m : out) {
        req.emplace_back();
        MPI_Isend(m.bytes.data(), int(m.bytes.size()), MPI_BYTE, m.peer, 14, handle(m_comm), &req.back());
        m_stats[int(Channel::halo)].bytes_sent += m.bytes.size();
        ++m_stats[int(Channel::halo)].messages;
    }
    MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE);
}

std::vector<std::vector<char>> Comm::gather(const std::vector<char>& mine) {
    if (m_size == 1) return {mine};
    Timed t(m_stats[int(Channel::gather)]);
    const MPI_Comm c = handle(m_comm);
    long long n = static_cast<long long>(mine.size());
    std::vector<long long> sizes(root() ? std::size_t(m_size) : 0);
    MPI_Gather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, c);
    // Point to point rather than Gatherv: a frame of a large grid exceeds an int's count of bytes.
    std::vector<std::vector<char>> all;
    if (root()) {
        all.resize(std::size_t(m_size));
        all[0] = mine;
        for (int r = 1; r < m_size; ++r) {
            all[std::size_t(r)].resize(std::size_t(sizes[std::size_t(r)]));
            std::size_t done = 0;
            while (done < all[std::size_t(r)].size()) {
                const int chunk = int(std::min<std::size_t>(all[std::size_t(r)].size() - done, 1u << 30));
                MPI_Recv(all[std::size_t(r)].data() + done, chunk, MPI_BYTE, r, 15, c, MPI_STATUS_IGNORE);
                done += std::size_t(chunk);
            }
        }
    } else {
        std::size_t done = 0;
        while (done < mine.size()) {
            const int chunk = int(std::min<std::size_t>(mine.size() - done, 1u << 30));
            MPI_Send(mine.data() + done, chunk, MPI_BYTE, 0, 15, c);
            done += std::size_t(chunk);
        }
        m_stats[int(Channel::gather)].bytes_sent += mine.size();
        ++m_stats[int(Channel::gather)].messages;
    }
    return all;
}

void Comm::broadcast(std::string& s) {
    if (m_size == 1) return;
    Timed t(m_stats[int(Channel::reduce)]);
    long long n = static_cast<long long>(s.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, handle(m_comm));
    s.resize(std::size_t(n));
    if (n > 0) MPI_Bcast(s.data(), int(n), MPI_CHAR, 0, handle(m_comm));
}

void Comm::barrier() {
    if (m_size == 1) return;
    Timed t(m_stats[int(Channel::reduce)]);
    MPI_Barrier(handle(m_comm));
}

bool MpiSession::launched_by_mpirun() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

MpiSession::MpiSession(int& argc, char**& argv) {
    if (!launched_by_mpirun()) return;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    m_active = true;
    m_world.m_comm = new MPI_Comm(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_world.m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_world.m_size);
}

MpiSession::~MpiSession() {
    if (!m_active) return;
    delete static_cast<MPI_Comm*>(m_world.m_comm);
    MPI_Finalize();
}

void MpiSession::abort(int code) {
    if (m_active && m_world.m_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
}

}  // namespace eddy::dist
