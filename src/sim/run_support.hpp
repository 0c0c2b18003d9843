// Pieces of the run loop shared by the particle run (src/sim/run.cpp) and the grid run
// (src/shallow/run.cpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>

#include "eddy/simulation.hpp"

namespace eddy::detail {

/// Creates out/frames (InputError if it cannot) and removes frames of an earlier run whose names start
/// with one of `stale` ("particles_", "grid_", "surface_"), so the folder never mixes two runs. A
/// resumed run passes keep_below = the number of frames its checkpoint lists: those stay.
void prepare_frames_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale,
                           int keep_below = 0);

/// Removes what an earlier run left at the top of the folder that this run may not rewrite (its .pvd
/// collections, checkpoint, picture) and writes a summary.json saying "running": a folder always
/// describes the run that last wrote to it, even if this one is killed before its summary.
void start_run_folder(const std::filesystem::path& out, const nlohmann::json& what, bool resumed);

/// The progress of a run between time0 and end_time (or max_steps), with an ETA from the fraction done.
Progress make_progress(double time, double time0, double end_time, std::uint64_t steps, std::uint64_t max_steps,
                       std::size_t count, const char* counted, double wall_seconds, int frames, bool finished);

}  // namespace eddy::detail
