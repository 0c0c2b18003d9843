// Helpers shared by eddy's test executables: temporary folders, one-line input errors, running the CLI.
#pragma once
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>

#include "eddy/error.hpp"
#include "eddy/particles.hpp"

namespace eddy::test {

namespace fs = std::filesystem;

/// A ball (disc in 2D) of fluid on a jittered lattice of spacing 2r, squeezed by 3% so that it has
/// pressure to release, with random velocities in [-0.5, 0.5] m/s: the momentum tests' free blob.
template <int D>
ParticleSet<D> squeezed_ball(float r, unsigned seed) {
    ParticleSet<D> fluid;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> jitter(-0.2f * r, 0.2f * r), vel(-0.5f, 0.5f);
    const int n = D == 2 ? 40 : 14;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < (D == 3 ? n : 1); ++k) {
                Vec<D> x, v;
                const int idx[3] = {i, j, k};
                for (int a = 0; a < D; ++a) {
                    x[a] = (2 * idx[a] + 1) * r + jitter(rng);
                    v[a] = vel(rng);
                }
                const Vec<D> c = Vec<D>::filled(n * r);
                if (norm(x - c) < n * r) fluid.push_back(c + (x - c) * 0.97f, v);
            }
    return fluid;
}

/// A folder of its own, unique across the test processes ctest runs at once; removed at the end.
class TempDir {
public:
    explicit TempDir(const std::string& tag)
        : m_dir(fs::temp_directory_path() /
                ("eddy_test_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()))) {
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return m_dir; }
    /// Writes `text` to path()/name and returns that path.
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(m_dir / name, std::ios::binary) << text;
        return m_dir / name;
    }

private:
    fs::path m_dir;
};

/// A fixture giving every test case its own folder `dir`, named after the test.
class TempDirTest : public ::testing::Test {
protected:
    void SetUp() override { m_tmp = std::make_unique<TempDir>(::testing::UnitTest::GetInstance()->current_test_info()->name()); dir = m_tmp->path(); }
    void TearDown() override { m_tmp.reset(); }
    fs::path write(const std::string& name, const std::string& text) const { return m_tmp->write(name, text); }
    fs::path dir;

private:
    std::unique_ptr<TempDir> m_tmp;
};

/// Expects f() to throw an InputError whose message is one line containing every one of `needles`.
template <class F>
void expect_input_error(F&& f, std::initializer_list<std::string> needles) {
    try {
        f();
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
        for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
    }
}

// ---- Measures that do not depend on the machine's load (docs/testing.md, "Under load") ----------------
// A test that something is "instant" or "refused unread" checks what the work cost, not how long the
// clock ran: on a busy machine a process waits for a core, and wall time says nothing about the code.

/// CPU seconds (user + system) of getrusage's `who`: RUSAGE_SELF or RUSAGE_CHILDREN.
inline double rusage_cpu_seconds(int who) {
    rusage u{};
    ::getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// CPU seconds (all threads) this process has used so far.
inline double cpu_seconds() { return rusage_cpu_seconds(RUSAGE_SELF); }

/// CPU seconds used by the children (and their children) this process has waited for.
inline double children_cpu_seconds() { return rusage_cpu_seconds(RUSAGE_CHILDREN); }

/// Bytes this process, and the children it has waited for, have read through read() and its kin
/// (/proc/self/io: rchar; Linux adds a reaped child's counts to its parent's). 0 where it is not there.
inline std::uint64_t bytes_read() {
    std::ifstream io("/proc/self/io");
    std::string key;
    std::uint64_t value = 0;
    while (io >> key >> value)
        if (key == "rchar:") return value;
    return 0;
}

/// A hang guard for code that must never block (a FIFO opened the blocking way): SIGALRM ends the test
/// process after `seconds`, a failure, where the code would otherwise wait forever. Generous on purpose:
/// it is a timeout, not a measure of speed.
struct HangGuard {
    explicit HangGuard(unsigned seconds = 60) { ::alarm(seconds); }
    ~HangGuard() { ::alarm(0); }
    HangGuard(const HangGuard&) = delete;
    HangGuard& operator=(const HangGuard&) = delete;
};

/// What a command printed (stdout and stderr together), its exit code and what it cost: wall seconds
/// (a generous timeout at most: they grow with the machine's load), CPU seconds and bytes read by the
/// command and everything it started (load-independent: what "quick" and "unread" checks use).
struct CommandResult {
    int code = -1;
    std::string output;
    double seconds = 0.0;
    double cpu_seconds = 0.0;
    std::uint64_t bytes_read = 0;
};

/// Runs a shell command line (stderr joined to stdout by the caller's "2>&1").
inline CommandResult run_shell(const std::string& cmd) {
    CommandResult r;
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = children_cpu_seconds();
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) r.output += buf.data();
    // Read before pclose: the command's counts join this process's when it is reaped, after its output
    // (read here, and counted) is all in.
    const std::uint64_t read0 = bytes_read();
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cpu_seconds = children_cpu_seconds() - cpu0;
    r.bytes_read = bytes_read() - read0;
    return r;
}

/// Runs `eddy ARGS` (the CLI this build made, EDDY_CLI) through the shell.
inline CommandResult run_cli(const std::string& args) { return run_shell(std::string(EDDY_CLI) + " " + args + " 2>&1"); }

}  // namespace eddy::test
