// Pieces of the run loop shared by the particle run (src/sim/run.cpp) and the grid run
// (src/shallow/run.cpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>

#include "eddy/simulation.hpp"

namespace eddy::detail {

/// Creates out/frames (InputError if it cannot) and removes frames of an earlier run whose names start
/// with one of `stale` ("particles_", "grid_", "surface_"), so the folder never mixes two runs.
void prepare_frames_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale);

/// The progress of a run between time0 and end_time (or max_steps), with an ETA from the fraction done.
Progress make_progress(double time, double time0, double end_time, std::uint64_t steps, std::uint64_t max_steps,
                       std::size_t count, const char* counted, double wall_seconds, int frames, bool finished);

}  // namespace eddy::detail
