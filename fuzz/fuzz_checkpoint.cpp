// Fuzz target: a checkpoint (issue 29, item 3). The bytes go through the reader (header, checksum,
// version, meta JSON), the restore of a particle simulation or a shallow-water grid (meta keys, the
// scene it carries, every particle and grid field) and the run record's checks (what a resumed run
// reads before it touches its folder). The trailing checksum is recomputed over the mutated bytes
// first: it is an FNV-1a anyone can recompute, and a fuzzer stopped at it would never reach the
// validation that protects eddy from a crafted file.
#include <cstring>

#include "eddy/checkpoint.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "fuzz_support.hpp"
#include "sim/run_support.hpp"

namespace {

// The container's checksum (include/eddy/checkpoint.hpp): FNV-1a 64 of everything before it.
void fix_checksum(std::string& bytes) {
    if (bytes.size() < 8 + 16) return;  // too short to hold a header and a checksum: left as it is
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i + 8 < bytes.size(); ++i) {
        h ^= static_cast<unsigned char>(bytes[i]);
        h *= 1099511628211ull;
    }
    std::memcpy(&bytes[bytes.size() - 8], &h, 8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    // One input in 16 keeps its checksum as mutated: the refusal of a wrong one is covered too.
    if (size == 0 || data[0] % 16 != 15) fix_checksum(bytes);
    return eddy::fuzz::expect_clean([&] {
        const std::filesystem::path file = "fuzz/checkpoint.eddy";
        const eddy::CheckpointFile ck = eddy::read_checkpoint_bytes(bytes, file);
        // A small budget: a mutated scene asking for millions of particles or cells is refused by the
        // estimate before anything is built (and an execution stays fast).
        const eddy::MemoryBudget budget{std::size_t(64) << 20};
        nlohmann::json record;
        if (ck.meta.value("kind", "") == "grid") {
            eddy::ShallowWaterSimulation sim = eddy::restore_shallow_water(ck, record, budget);
            std::visit(
                [&](const auto& s) { eddy::detail::read_grid_record(record, file.string(), s.time(), s.steps()); },
                sim.solver);
        } else {
            eddy::ExecContext exec(1);
            eddy::Simulation sim = eddy::restore_simulation(ck, exec, record, budget);
            eddy::detail::check_particle_record(sim, record, file.string());
        }
    });
}
