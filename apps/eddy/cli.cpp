// eddy's command line: what its commands share (cli.hpp).
#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/json_text.hpp"

namespace eddy::cli {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

CLI::Validator number_check(double lo, bool lo_open, double hi, bool hi_open, std::string allowed, std::string key) {
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            const char* begin = text.c_str();
            char* end = nullptr;
            const double d = std::strtod(begin, &end);
            const bool number = !text.empty() && end == begin + text.size() && !std::isspace(static_cast<unsigned char>(text[0]));
            if (number && std::isfinite(d) && (lo_open ? d > lo : d >= lo) && (hi_open ? d < hi : d <= hi)) return {};
            if (!key.empty()) return fmt::format("key '{}' = {}: allowed: {}", key, eddy::text_excerpt(text, 40), allowed);
            return fmt::format("'{}' is not allowed; allowed: {}", eddy::text_excerpt(text, 40), allowed);
        },
        "");
}

CLI::Validator whole_check(long long lo, long long hi, std::string allowed) {
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            long long v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc() && end == text.data() + text.size() && v >= lo && v <= hi) return {};
            return fmt::format("'{}' is not allowed; allowed: {}", eddy::text_excerpt(text, 40), allowed);
        },
        "");
}

const CLI::Validator kThreadsCheck =
    whole_check(0, eddy::kMaxThreads, fmt::format("0 (every core) or a whole number from 1 to {}", eddy::kMaxThreads));

const CLI::Validator kNonEmptyPath(
    [](std::string& text) -> std::string { return text.empty() ? "'' is not allowed; allowed: a path" : ""; }, "");

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return eddy::text_excerpt(s, 300);
}

void ProgressPrinter::operator()(const eddy::Progress& p) {
    if (quiet) return;
    if (!text) text.emplace(tty);
    const std::string s = (*text)(p);
    if (s.empty()) return;
    std::fputs(s.c_str(), stderr);
    std::fflush(stderr);
}

eddy::MemoryBudget memory_budget(const std::string& max_memory, bool pieces) {
    eddy::MemoryBudget b = eddy::machine_memory_budget();
    if (!max_memory.empty()) b = {eddy::parse_memory_size(max_memory, "--max-memory"), "--max-memory"};
    // Under mpirun (issue 44): the limit is each process's; the machine's is shared by those on it.
    b.processes = g_procs.size;
    b.pieces = pieces;
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (max_memory.empty() && !b.unlimited() && g_procs.size > 1 && local && std::atoi(local) > 1) {
        b.limit_bytes /= std::size_t(std::atoi(local));
        b.origin = fmt::format("90% of the available memory shared by the {} processes on this machine; set --max-memory", local);
    }
    return b;
}

int threads_here(int threads) {
    if (threads > 0 || g_procs.size == 1) return threads;
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int here = local ? std::max(1, std::atoi(local)) : 1;
    return std::max(1, int(std::thread::hardware_concurrency()) / here);
}

}  // namespace eddy::cli
