// The threads of the web build with pthreads (EDDY_POOL, eddy-mt.js; docs/web.md, "Threads"): a pool that
// takes eddy/exec.hpp's fixed blocks from an atomic counter. Which thread runs a block never changes what
// the block computes, and every block writes its own slot as under oneTBB, so the results have the same bits
// on any number of threads. Owned by an ExecContext (no global pool); natively oneTBB does this.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#ifdef __EMSCRIPTEN_PTHREADS__
#include <emscripten/threading.h>
#endif

namespace eddy::detail {

class BlockPool {
public:
    /// `workers` threads beside the caller's (0: every loop runs on the caller's thread). In the browser
    /// they must already exist in Emscripten's worker pool (-sPTHREAD_POOL_SIZE): the page's thread cannot
    /// wait for a new worker to start.
    explicit BlockPool(int workers) {
        m_threads.reserve(static_cast<std::size_t>(workers > 0 ? workers : 0));
        for (int i = 0; i < workers; ++i) m_threads.emplace_back([this] { work(); });
    }
    ~BlockPool() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (std::thread& t : m_threads) t.join();
    }
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;

    /// Calls call(ctx, b) once for every b in [0, blocks), on the pool's threads and the caller's, and
    /// returns when all are done; the first exception a block threw is rethrown here. A loop started
    /// inside a block (or while another caller holds the pool) runs its blocks in order on its own thread:
    /// the same results, no deadlock.
    void run(std::size_t blocks, void (*call)(void*, std::size_t), void* ctx) {
        std::unique_lock busy(m_run, std::try_to_lock);
        if (m_threads.empty() || t_inside || !busy.owns_lock() || blocks < 2) {
            for (std::size_t b = 0; b < blocks; ++b) call(ctx, b);
            return;
        }
        Job job(call, ctx, blocks);
        {
            std::lock_guard lock(m_mutex);
            m_job = &job;
            m_generation.fetch_add(1, std::memory_order_release);
        }
        m_wake.notify_all();
        take(job);
        {
            // No worker joins after this; those that joined hold &job until they leave.
            std::lock_guard lock(m_mutex);
            m_job = nullptr;
        }
        // The caller may be the browser's main thread, which must not block: it spins (the blocks are done
        // but for the ones still running), answering what a worker asks of it meanwhile (printing a line).
        while (m_joined.load(std::memory_order_acquire) != 0) {
#ifdef __EMSCRIPTEN_PTHREADS__
            if (emscripten_is_main_runtime_thread()) emscripten_main_thread_process_queued_calls();
#endif
            std::this_thread::yield();
        }
        if (job.error) std::rethrow_exception(job.error);
    }

private:
    struct Job {
        Job(void (*c)(void*, std::size_t), void* x, std::size_t n) : call(c), ctx(x), blocks(n) {}
        void (*call)(void*, std::size_t);
        void* ctx;
        std::size_t blocks;
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        std::exception_ptr error;
    };

    static void take(Job& job) {
        t_inside = true;
        for (std::size_t b; (b = job.next.fetch_add(1, std::memory_order_relaxed)) < job.blocks;) {
            try {
                job.call(job.ctx, b);
            } catch (...) {
                if (!job.failed.exchange(true)) job.error = std::current_exception();
                job.next.store(job.blocks, std::memory_order_relaxed);  // the rest is skipped, as oneTBB cancels
            }
        }
        t_inside = false;
    }

    void work() {
        std::uint64_t seen = 0;
        for (;;) {
            // A step's loops follow each other within microseconds: look for the next one a while before
            // sleeping (waking a sleeping Web Worker costs more than a small loop does).
            for (int i = 0; i < kSpins && m_generation.load(std::memory_order_acquire) == seen; ++i) {
            }
            Job* job = nullptr;
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [&] { return m_stop || m_generation.load(std::memory_order_relaxed) != seen; });
                if (m_stop) return;
                seen = m_generation.load(std::memory_order_relaxed);
                if (m_job == nullptr) continue;
                job = m_job;
                m_joined.fetch_add(1, std::memory_order_relaxed);
            }
            take(*job);
            m_joined.fetch_sub(1, std::memory_order_release);
        }
    }

    static constexpr int kSpins = 1 << 14;
    static inline thread_local bool t_inside = false;
    std::vector<std::thread> m_threads;
    std::mutex m_run;  // one loop at a time uses the workers
    std::mutex m_mutex;
    std::condition_variable m_wake;
    Job* m_job = nullptr;
    std::atomic<std::uint64_t> m_generation{0};  // written under m_mutex
    std::atomic<int> m_joined{0};
    bool m_stop = false;
};

}  // namespace eddy::detail
