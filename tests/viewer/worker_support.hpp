// Shared by the viewer's worker tests (no window): waiting for the simulation thread's snapshots.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "sim_worker.hpp"

namespace eddy::view::test {

/// Waits until the worker has published a snapshot satisfying pred; a failure after `seconds` (a hang
/// guard, generous for a busy machine: the tests wait for events, never for time to pass).
template <class P>
std::shared_ptr<const Snapshot> wait_until(SimWorker& w, P pred, int seconds = 300) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        auto s = w.latest();
        if (s && pred(*s)) return s;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(seconds)) {
            ADD_FAILURE() << "timed out";
            return s;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

/// Steps the paused worker n times and waits for them (or for a diverged run).
inline std::shared_ptr<const Snapshot> step_and_wait(SimWorker& w, int n) {
    const std::uint64_t target = w.latest()->steps + std::uint64_t(n);
    for (int i = 0; i < n; ++i) w.request_step();
    return wait_until(w, [&](const Snapshot& s) { return s.steps >= target || s.status.find("diverged") != std::string::npos; });
}

}  // namespace eddy::view::test
