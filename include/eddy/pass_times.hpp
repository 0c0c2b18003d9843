// eddy: the wall-clock seconds of a step's named passes, in the order they ran: what a user profiling a slow
// scene reads first (summary.json "passes", Python's step()["passes"], the benchmarks' pass_<name>_ms, the
// viewer's panel). Every particle method's StepStats and the shallow-water grid's ShallowWaterStats carry
// them. Read, never acted on: no result depends on them.
#pragma once
#include <array>
#include <cstring>

namespace eddy {

struct PassTimes {
    struct PassTime {
        const char* name = nullptr;  ///< a static string: "neighbours", "density_solve", "advect", ...
        double seconds = 0.0;
    };
    static constexpr int kMaxPasses = 12;
    std::array<PassTime, kMaxPasses> passes{};
    int pass_count = 0;
    /// Adds `seconds` to pass `name` (appended when new; a pass run again, as PBF's substeps or the grid's
    /// advection iterations run theirs, adds to its entry; beyond kMaxPasses passes, dropped).
    void add_pass(const char* name, double seconds) {
        for (int k = 0; k < pass_count; ++k)
            if (passes[k].name == name || std::strcmp(passes[k].name, name) == 0) {
                passes[k].seconds += seconds;
                return;
            }
        if (pass_count < kMaxPasses) passes[pass_count++] = PassTime{name, seconds};
    }
    /// Adds every pass of `other` to these.
    void add_passes(const PassTimes& other) {
        for (int k = 0; k < other.pass_count; ++k) add_pass(other.passes[k].name, other.passes[k].seconds);
    }
};

}  // namespace eddy
