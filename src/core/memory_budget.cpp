// The machine's memory, sizes as users write them, and the check every estimate goes through.
#include "eddy/memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "eddy/error.hpp"

namespace eddy {

namespace {

// A number of bytes from a one-line file ("max" or missing: nothing).
bool read_bytes_file(const char* path, double& out) {
    std::ifstream in(path);
    std::string word;
    if (!(in >> word) || word == "max") return false;
    try {
        out = std::stod(word);
    } catch (...) {
        return false;
    }
    return out > 0.0;
}

// MemAvailable (kB) of /proc/meminfo: what can be allocated without swapping, page cache included.
bool mem_available(double& out) {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    double value = 0.0;
    while (in >> key >> value) {
        std::getline(in, unit);
        if (key == "MemAvailable:") {
            out = value * 1024.0;
            return true;
        }
    }
    return false;
}

}  // namespace

std::size_t available_memory_bytes() {
    double bytes = 0.0;
    if (!mem_available(bytes)) {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) bytes = double(pages) * double(page);
    }
    // A container's limit is what counts there, whatever the host has: cgroup v2, then v1.
    double limit = 0.0, used = 0.0;
    if (read_bytes_file("/sys/fs/cgroup/memory.max", limit)) {
        read_bytes_file("/sys/fs/cgroup/memory.current", used);
    } else if (read_bytes_file("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit) && limit < 1e18) {
        read_bytes_file("/sys/fs/cgroup/memory/memory.usage_in_bytes", used);
    } else {
        limit = 0.0;
    }
    if (limit > 0.0) {
        const double left = std::max(0.0, limit - used);
        bytes = bytes > 0.0 ? std::min(bytes, left) : left;
    }
    return bytes > 0.0 ? static_cast<std::size_t>(bytes) : 0;
}

MemoryBudget machine_memory_budget() {
    const std::size_t avail = available_memory_bytes();
    MemoryBudget b;
    if (avail == 0) return b;  // unknown: no limit rather than a made-up one
    b.limit_bytes = static_cast<std::size_t>(0.9 * double(avail));
    b.origin = "90% of the available memory; set --max-memory";
    return b;
}

std::size_t parse_memory_size(std::string_view text, std::string_view key) {
    auto fail = [&] {
        return InputError(fmt::format("{} = '{}': allowed: a size in bytes > 0, e.g. 500M, 4G, 1.5GB, 512MiB "
                                      "(k, M, G, T: powers of 1000; Ki, Mi, Gi, Ti: powers of 1024)",
                                      key, text.substr(0, 64)));
    };
    std::string s(text);
    std::size_t pos = 0;
    double value = 0.0;
    try {
        value = std::stod(s, &pos);
    } catch (...) {
        throw fail();
    }
    std::string unit;
    for (char c : s.substr(pos))
        if (!std::isspace(static_cast<unsigned char>(c))) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!unit.empty() && unit.back() == 'b') unit.pop_back();
    double scale = 0.0;
    if (unit.empty()) scale = 1.0;
    else if (unit == "k") scale = 1e3;
    else if (unit == "m") scale = 1e6;
    else if (unit == "g") scale = 1e9;
    else if (unit == "t") scale = 1e12;
    else if (unit == "ki") scale = 1024.0;
    else if (unit == "mi") scale = 1024.0 * 1024.0;
    else if (unit == "gi") scale = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "ti") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    const double bytes = value * scale;
    if (!(scale > 0.0) || !std::isfinite(bytes) || !(bytes >= 1.0)) throw fail();
    if (bytes >= 1.8e19) return std::numeric_limits<std::size_t>::max();
    return static_cast<std::size_t>(bytes);
}

std::string format_bytes(double bytes) {
    if (!std::isfinite(bytes)) return "more than any machine has";
    static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (bytes >= 999.5 && u < 6) {
        bytes /= 1000.0;
        ++u;
    }
    if (u == 0) return fmt::format("{:.0f} B", bytes);
    return bytes < 9.95 ? fmt::format("{:.2f} {}", bytes, units[u]) : (bytes < 99.5 ? fmt::format("{:.1f} {}", bytes, units[u])
                                                                                    : fmt::format("{:.0f} {}", bytes, units[u]));
}

std::string format_count(double n) {
    if (!std::isfinite(n)) return "infinitely many";
    if (n < 1e4) return fmt::format("{:.0f}", n);
    static const char* units[] = {"k", "M", "G", "T", "P", "E"};
    int u = -1;
    while (n >= 999.5 && u < 5) {
        n /= 1000.0;
        ++u;
    }
    return n < 99.5 ? fmt::format("{:.3g} {}", n, units[u]) : fmt::format("{:.0f} {}", n, units[u]);
}

double MemoryEstimate::total() const {
    double t = 0.0;
    for (const auto& p : parts) t += p.bytes;
    return t;
}

std::string MemoryEstimate::describe() const {
    // Largest first: a message cut short for length still says what matters.
    std::vector<Part> sorted = parts;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Part& a, const Part& b) {
        return a.bytes > b.bytes || (std::isnan(a.bytes) && !std::isnan(b.bytes));
    });
    std::string s;
    for (const auto& p : sorted) {
        if (p.bytes == 0.0) continue;
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", p.what, format_bytes(p.bytes));
    }
    return s;
}

void check_memory(const MemoryEstimate& e, const MemoryBudget& budget, const std::string& where) {
    const double total = e.total();
    // NaN counts as too much: it comes from an infinite extent somewhere.
    if (budget.unlimited() || total <= double(budget.limit_bytes)) return;
    std::string head = where;
    if (!e.key.empty()) head += (head.empty() ? "" : ": ") + e.key;
    // The key, the estimate and the limit first, then the parts: the CLI caps an error line's length.
    throw InputError(fmt::format("{}: needs about {}, more than the limit {} ({}): {}", head, format_bytes(total),
                                 format_bytes(double(budget.limit_bytes)), budget.origin, e.describe()));
}

double running_memory_limit(const MemoryEstimate& e, const MemoryBudget& budget) {
    if (budget.unlimited()) return HUGE_VAL;
    // The parts the simulation's memory_bytes() covers; the rest is held beside it (or only while a
    // frame is written) and comes off the budget.
    double beside = 0.0;
    for (const auto& p : e.parts) {
        const std::string_view w = p.what;
        const bool inside = w.starts_with("fluid") || w.starts_with("walls") || w.starts_with("neighbour lists") ||
                            w.starts_with("springs");
        if (!inside) beside += p.bytes;
    }
    return std::max(0.0, double(budget.limit_bytes) - beside);
}

}  // namespace eddy
