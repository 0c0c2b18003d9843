// The web build's thread pool (eddy/detail/block_pool.hpp, EDDY_POOL in eddy/exec.hpp): plain C++ threads,
// so it is tested here natively; the browser checks (web.hash at 2 threads) test it in eddy-mt.js.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "eddy/detail/block_pool.hpp"

namespace {

using eddy::detail::BlockPool;

template <class F>
void run(BlockPool& pool, std::size_t blocks, F&& f) {
    pool.run(blocks, [](void* ctx, std::size_t b) { (*static_cast<F*>(ctx))(b); }, &f);
}

// One slot per block, summed in block order: the reduction exec.hpp's parallel_reduce_blocks makes.
float block_sums(BlockPool& pool, const std::vector<float>& v, std::size_t block) {
    const std::size_t blocks = (v.size() + block - 1) / block;
    std::vector<float> slot(blocks, 0.0f);
    run(pool, blocks, [&](std::size_t b) {
        float s = 0.0f;
        for (std::size_t i = b * block; i < std::min(v.size(), (b + 1) * block); ++i) s += std::sin(v[i]) * v[i];
        slot[b] = s;
    });
    float total = 0.0f;
    for (const float s : slot) total += s;
    return total;
}

TEST(BlockPool, EveryBlockRunsOnceOnAnyNumberOfWorkers) {
    for (const int workers : {0, 1, 3}) {
        BlockPool pool(workers);
        for (int round = 0; round < 2000; ++round) {  // many loops in a row: no job is taken twice or lost
            const std::size_t blocks = 1 + std::size_t(round % 37);
            std::vector<std::atomic<int>> count(blocks);
            run(pool, blocks, [&](std::size_t b) { count[b].fetch_add(1); });
            for (std::size_t b = 0; b < blocks; ++b) ASSERT_EQ(count[b].load(), 1) << workers << " workers, round " << round;
        }
    }
}

TEST(BlockPool, ReductionsHaveTheSameBitsOnAnyNumberOfWorkers) {
    std::vector<float> v(100'000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.001f * float(i % 977) - 0.3f;
    BlockPool serial(0);
    const float want = block_sums(serial, v, 1024);
    for (const int workers : {1, 2, 5}) {
        BlockPool pool(workers);
        for (int round = 0; round < 20; ++round) {
            const float got = block_sums(pool, v, 1024);
            ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << workers << " workers: " << got << " vs " << want;
        }
    }
}

TEST(BlockPool, AnExceptionReachesTheCallerAndThePoolGoesOn) {
    BlockPool pool(2);
    EXPECT_THROW(run(pool, 64, [](std::size_t b) {
                     if (b == 17) throw std::runtime_error("block 17");
                 }),
                 std::runtime_error);
    std::atomic<int> n{0};
    run(pool, 64, [&](std::size_t) { n.fetch_add(1); });
    EXPECT_EQ(n.load(), 64);
}

TEST(BlockPool, ALoopInsideABlockRunsOnItsThreadWithoutDeadlock) {
    BlockPool pool(2);
    std::vector<std::atomic<int>> inner(8 * 16);
    run(pool, 8, [&](std::size_t b) { run(pool, 16, [&](std::size_t c) { inner[b * 16 + c].fetch_add(1); }); });
    for (auto& c : inner) EXPECT_EQ(c.load(), 1);
}

TEST(BlockPool, TwoCallersAtOnceEachGetTheirBlocksDone) {
    BlockPool pool(2);
    std::atomic<int> a{0}, b{0};
    std::thread other([&] {
        for (int i = 0; i < 500; ++i) run(pool, 7, [&](std::size_t) { b.fetch_add(1); });
    });
    for (int i = 0; i < 500; ++i) run(pool, 5, [&](std::size_t) { a.fetch_add(1); });
    other.join();
    EXPECT_EQ(a.load(), 2500);
    EXPECT_EQ(b.load(), 3500);
}

}  // namespace
