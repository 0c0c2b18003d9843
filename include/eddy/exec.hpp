// eddy: the execution context. The caller owns the threads (a oneTBB task arena) and passes them in;
// there is no global pool. Every parallel loop splits its range into fixed-size blocks that do not
// depend on the thread count, and every reduction combines those blocks in a fixed order, so results
// are bit-identical whatever the number of threads ("gather, don't scatter").
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// Without oneTBB (the WebAssembly builds, web/; docs/web.md) EDDY_NO_TBB is set and the fixed blocks below run
// either in order on the calling thread (EDDY_SERIAL, eddy.js) or on a pool of pthreads that takes them from
// an atomic counter (EDDY_POOL, eddy-mt.js: Emscripten with -pthread). The blocks and the order reductions
// combine them in are the same, so every build and thread count computes what a threaded native one does.
#if defined(__EMSCRIPTEN__) && !defined(EDDY_SERIAL) && !defined(EDDY_POOL)
#ifdef __EMSCRIPTEN_PTHREADS__
#define EDDY_POOL 1
#else
#define EDDY_SERIAL 1
#endif
#endif
#if defined(EDDY_SERIAL) || defined(EDDY_POOL)
#define EDDY_NO_TBB 1
#endif
#ifdef EDDY_POOL
#include "eddy/detail/block_pool.hpp"
#endif
#ifndef EDDY_NO_TBB
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#endif

#include "eddy/error.hpp"

namespace eddy {

/// The most worker threads a user may ask for. Far beyond any machine eddy runs on (oneTBB gives an
/// arena no more workers than the machine has anyway), yet small enough that the arena's per-slot
/// storage stays a few MB: a request of 1e5 or 1e9 threads crashed in the arena's teardown (issue 29).
/// A fixed number rather than a multiple of this machine's cores, so a script that runs on one
/// machine is accepted on every other.
inline constexpr int kMaxThreads = 4096;

/// Checks a thread count a user gave (`name` is the flag or argument, e.g. "--threads" or "threads"):
/// 0 (every core) or 1..kMaxThreads, else an InputError naming it and the allowed range.
inline int checked_threads(long long threads, const char* name = "threads") {
    if (threads < 0 || threads > kMaxThreads)
        throw InputError(std::string(name) + " = " + std::to_string(threads) + ": allowed: 0 (every core) or 1 to " +
                         std::to_string(kMaxThreads));
    return static_cast<int>(threads);
}

#ifdef EDDY_SERIAL
/// The serial context: threads() is what was asked for (summaries record it), the work runs on the
/// calling thread.
class ExecContext {
public:
    explicit ExecContext(int threads = 0) : m_threads(checked_threads(threads) > 0 ? threads : 1) {}
    int threads() const { return m_threads; }
    template <class F>
    decltype(auto) run(F&& f) const { return std::forward<F>(f)(); }

private:
    int m_threads;
};
#elif defined(EDDY_POOL)
/// The pthreads context (the page's eddy-mt.js): threads - 1 workers beside the calling thread; 0 means the
/// hardware's threads.
class ExecContext {
public:
    explicit ExecContext(int threads = 0)
        : m_threads(checked_threads(threads) > 0 ? threads : std::max(1, int(std::thread::hardware_concurrency()))),
          m_pool(std::make_unique<detail::BlockPool>(m_threads - 1)) {}
    int threads() const { return m_threads; }
    template <class F>
    decltype(auto) run(F&& f) const { return std::forward<F>(f)(); }
    detail::BlockPool& pool() const { return *m_pool; }

private:
    int m_threads;
    std::unique_ptr<detail::BlockPool> m_pool;
};
#else
class ExecContext {
public:
    /// threads 0 means all hardware threads; outside 0..kMaxThreads is an InputError (the last line of
    /// defence: the command line and the Python module check first, naming their own flag).
    /// The arena itself gets at most the machine's threads: oneTBB would give it no more workers anyway,
    /// and asked for more it prints a warning to stderr and keeps a slot for each (threads() is still
    /// the number asked for, as summaries record it; results do not depend on it).
    explicit ExecContext(int threads = 0)
        : m_threads(checked_threads(threads) > 0 ? threads : tbb::this_task_arena::max_concurrency()),
          m_arena(std::make_unique<tbb::task_arena>(std::min(m_threads, tbb::info::default_concurrency()))) {}

    int threads() const { return m_threads; }

    /// Runs f inside this context's arena (all parallel loops started from f use its threads).
    template <class F>
    decltype(auto) run(F&& f) const { return m_arena->execute(std::forward<F>(f)); }

private:
    int m_threads;
    std::unique_ptr<tbb::task_arena> m_arena;
};
#endif

/// Default block size for per-particle loops.
inline constexpr std::size_t kBlock = 1024;

/// Calls f(begin, end) for consecutive blocks of [0, n) of size `block` (the last may be shorter),
/// in parallel on the context's threads. Blocks never depend on the thread count.
template <class F>
void parallel_blocks(const ExecContext& exec, std::size_t n, F&& f, std::size_t block = kBlock) {
    if (n == 0) return;
    const std::size_t blocks = (n + block - 1) / block;
    // Always through the same TBB body, even on one thread: a separate serial loop would be a second
    // inlined copy of f, which the compiler may vectorise differently (and round differently).
#if defined(EDDY_SERIAL)
    (void)exec;
    for (std::size_t b = 0; b != blocks; ++b) f(b * block, std::min(n, (b + 1) * block));
#elif defined(EDDY_POOL)
    struct Call {
        std::remove_reference_t<F>* f;
        std::size_t n, block;
        static void one(void* self, std::size_t b) {
            const Call& c = *static_cast<const Call*>(self);
            (*c.f)(b * c.block, std::min(c.n, (b + 1) * c.block));
        }
    } call{&f, n, block};
    exec.pool().run(blocks, &Call::one, &call);
#else
    exec.run([&] {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, blocks, 1),
            [&](const tbb::blocked_range<std::size_t>& r) {
                for (std::size_t b = r.begin(); b != r.end(); ++b) f(b * block, std::min(n, (b + 1) * block));
            },
            tbb::simple_partitioner());
    });
#endif
}

/// Sorts [first, last) on the context's threads. The order must be total (no two elements equal unless
/// identical): then every thread count, and the serial build, give the same sequence.
template <class It>
void parallel_sort(const ExecContext& exec, It first, It last) {
#ifdef EDDY_NO_TBB
    (void)exec;
    std::sort(first, last);
#else
    exec.run([&] { tbb::parallel_sort(first, last); });
#endif
}

/// Per-element loop over [0, n) on fixed blocks.
template <class F>
void parallel_for_each_index(const ExecContext& exec, std::size_t n, F&& f, std::size_t block = kBlock) {
    parallel_blocks(exec, n, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) f(i);
    }, block);
}

/// Deterministic reduction: map(begin, end) -> T on fixed blocks, combined with join in block order.
template <class T, class Map, class Join>
T parallel_reduce_blocks(const ExecContext& exec, std::size_t n, T identity, Map&& map, Join&& join,
                         std::size_t block = kBlock) {
    if (n == 0) return identity;
    const std::size_t blocks = (n + block - 1) / block;
    // One slot per block, each written by one task. Not std::vector<bool>: its bits share words, and two
    // tasks setting neighbouring blocks' bits would race (a lost `false` once made ink_idle skip real ink).
    struct Slot {
        T value;
    };
    std::vector<Slot> partial(blocks, Slot{identity});
    parallel_blocks(exec, blocks, [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) partial[b].value = map(b * block, std::min(n, (b + 1) * block));
    }, 1);
    T acc = identity;
    for (const Slot& p : partial) acc = join(acc, p.value);
    return acc;
}

namespace detail {
/// std::llround(y) (to the nearest integer, halves away from zero) for |y| < 2^63, inline: trunc and the
/// remainder y - trunc(y) are exact, and the libm call it replaces cost 2.5% of a DFSPH step.
inline long long round_half_away(double y) {
    const double t = std::trunc(y);
    const double f = y - t;
    long long q = static_cast<long long>(t);
    if (f >= 0.5) ++q;
    else if (f <= -0.5) --q;
    return q;
}

/// q 2^e as a double (q a 128-bit fixed-point total of ExactSum or order_free_sum).
inline double fixed_to_double(__int128 q, int e) {
    const bool neg = q < 0;
    const unsigned __int128 a = neg ? static_cast<unsigned __int128>(-q) : static_cast<unsigned __int128>(q);
    const double r = std::ldexp(std::ldexp(double(static_cast<unsigned long long>(a >> 64)), 64) +
                                    double(static_cast<unsigned long long>(a)),
                                e);
    return neg ? -r : r;
}
}  // namespace detail

/// An order-independent sum: each value is rounded once to a fixed point of 2^-40 and added as a
/// 128-bit integer, so the total has the same bits in any order of addition. The fixed blocks above make
/// sums reproducible for a given storage order; this makes them independent of it, which the
/// neighbour lists' (cell, id) order and a run spread over processes (each holding a different subset
/// of the particles, in its own order) need for decisions such as a solver's stopping test.
/// Non-finite values make the sum non-finite.
class ExactSum {
public:
    void add(double v) {
        if (!std::isfinite(v)) {
            m_bad += v;
            return;
        }
        const double hi = std::trunc(v);  // |v| < 2^63 for anything a solver sums
        // (v - hi) 2^40 by a multiplication: exact (a power of two), and no libm call per value.
        m_q += static_cast<__int128>(static_cast<long long>(hi)) * kOne +
               static_cast<__int128>(detail::round_half_away((v - hi) * 0x1p40));
    }
    ExactSum& operator+=(const ExactSum& o) {
        m_q += o.m_q;
        m_bad += o.m_bad;
        return *this;
    }
    double value() const {
        if (m_bad != 0.0 || std::isnan(m_bad)) return m_bad;
        return detail::fixed_to_double(m_q, -40);
    }
    /// The exact state, for a sum over processes (src/distributed/): save to and add from kStateBytes bytes.
    static constexpr std::size_t kStateBytes = sizeof(__int128) + sizeof(double);
    void save(unsigned char* out) const {
        std::memcpy(out, &m_q, sizeof m_q);
        std::memcpy(out + sizeof m_q, &m_bad, sizeof m_bad);
    }
    void add_saved(const unsigned char* in) {
        ExactSum o;
        std::memcpy(&o.m_q, in, sizeof o.m_q);
        std::memcpy(&o.m_bad, in + sizeof o.m_q, sizeof o.m_bad);
        *this += o;
    }

private:
    static constexpr __int128 kOne = static_cast<__int128>(1) << 40;
    __int128 m_q = 0;
    double m_bad = 0.0;
};

/// The sum of f(i) over [0, n), the same bits in any storage order, for values of any size (a solver's
/// dot products): a first pass finds the largest |f(i)| = 2^E at most, then each value is rounded once to
/// 2^(E - 62) and the values are summed as 128-bit integers (relative precision 2^-62 of the largest).
/// ExactSum's fixed 2^-40 would round the tiny products of a converging solver to zero.
namespace detail {
// order_free_sum's two passes: the largest |f(i)|, then the values rounded to 2^(e - 62) and summed as
// integers (|f(i)| < 2^e). Over several processes (eddy/halo.hpp) each is reduced in between.
template <class F>
double order_free_top(const ExecContext& exec, std::size_t n, F&& f) {
    return parallel_reduce_blocks(
        exec, n, 0.0,
        [&](std::size_t b0, std::size_t b1) {
            double m = 0.0;
            for (std::size_t i = b0; i < b1; ++i) m = std::max(m, std::fabs(double(f(i))));
            return m;
        },
        [](double a, double b) { return std::max(a, b); });
}
template <class F>
__int128 order_free_fixed(const ExecContext& exec, std::size_t n, F&& f, int e) {
    return parallel_reduce_blocks(
        exec, n, static_cast<__int128>(0),
        [&](std::size_t b0, std::size_t b1) {
            __int128 acc = 0;
            const double scale = std::ldexp(1.0, 62 - e);  // a power of two: the products are exact
            for (std::size_t i = b0; i < b1; ++i) acc += round_half_away(double(f(i)) * scale);
            return acc;
        },
        [](__int128 a, __int128 b) { return a + b; });
}
}  // namespace detail

/// The sum of f(i) over [0, n), the same bits in any storage order, for values of any size (a solver's
/// dot products): a first pass finds the largest |f(i)| = 2^E at most, then each value is rounded once to
/// 2^(E - 62) and the values are summed as 128-bit integers (relative precision 2^-62 of the largest).
/// ExactSum's fixed 2^-40 would round the tiny products of a converging solver to zero.
template <class F>
double order_free_sum(const ExecContext& exec, std::size_t n, F&& f) {
    const double top = detail::order_free_top(exec, n, f);
    if (!std::isfinite(top)) return top;
    if (top == 0.0) return 0.0;
    const int e = std::ilogb(top) + 1;  // |f(i)| < 2^e
    return detail::fixed_to_double(detail::order_free_fixed(exec, n, f, e), e - 62);
}

}  // namespace eddy
