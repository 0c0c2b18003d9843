// eddy: what a request will cost in memory, estimated before anything is allocated (issue 12).
//
// A scene, a grid or a surface reconstruction can ask for far more memory than the machine has (a
// wall 10 km long sampled at 1 cm, a 2^28-cell grid, a voxel of 0.1 um): without a check the process
// hangs, swaps or dies with std::bad_alloc long after the mistake. The estimators below count what
// the request will allocate from the input alone (lattice counts in double, never a loop over the
// points), and check_memory() refuses with one line naming the key, the estimate and the limit.
// The limit is a plain value passed explicitly (MemoryBudget); the library never reads it from a
// global, and its default is no limit: the command line sets it from the machine's memory.
#pragma once
#include <cstddef>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/math.hpp"

namespace eddy {

struct Scene;
struct ShallowWaterScene;
struct SurfaceSettings;

/// How much memory one request may need (bytes). Default: no limit.
struct MemoryBudget {
    std::size_t limit_bytes = std::numeric_limits<std::size_t>::max();
    /// Where the limit came from, for the message: "--max-memory", or the machine's memory.
    std::string origin = "--max-memory";
    /// A particle run over several processes (mpirun, issue 44): the limit is each process's, and each
    /// holds its share of what the run spreads (estimate_process_memory); `pieces`: its frames too.
    int processes = 1;
    bool pieces = false;
    /// A resumed run: no start runs, so none builds the whole fluid (WCSPH's hydrostatic start neither).
    bool resumed = false;
    bool unlimited() const { return limit_bytes == std::numeric_limits<std::size_t>::max(); }
};

/// Memory this process may still take (bytes): MemAvailable of /proc/meminfo (else the physical pages,
/// sysconf), and no more than a cgroup's limit leaves (v2 memory.max - memory.current, or v1
/// memory.limit_in_bytes - usage). 0 when nothing is known.
std::size_t available_memory_bytes();

/// The command line's default budget: 90% of available_memory_bytes() (the rest for the system and the
/// output buffers), or no limit when the machine does not say.
MemoryBudget machine_memory_budget();

/// A size as a user writes it: "1000000", "500M", "4G", "1.5GB", "512MiB" (k, M, G, T: powers of 1000;
/// Ki, Mi, Gi, Ti: powers of 1024; a trailing B is optional; case-insensitive). Throws InputError
/// naming `key` on anything else or a size of 0.
std::size_t parse_memory_size(std::string_view text, std::string_view key = "--max-memory");

/// "26.3 GB", "512 kB", "800 B": decimal units, as parse_memory_size reads them.
std::string format_bytes(double bytes);
/// "1.2 M", "80 k", "512": a count in a message.
std::string format_count(double n);

/// An estimate: its parts ("walls 80 M particles", bytes) and the input that drives it most.
struct MemoryEstimate {
    struct Part {
        std::string what;
        double bytes = 0.0;
        double count = 0.0;  ///< What the part counts (particles, springs, blocks, cells), when it counts one
    };
    std::vector<Part> parts;
    /// The key to change: "boundaries[0]", "grid.cells", "terrain.heightmap", "--voxel", ...
    std::string key;

    void add(std::string what, double bytes, double count = 0.0) { parts.push_back({std::move(what), bytes, count}); }
    /// The part whose description starts with `prefix` ("fluid", "walls", "springs", "grids"), or null.
    const Part* find(std::string_view prefix) const {
        for (const auto& p : parts)
            if (std::string_view(p.what).substr(0, prefix.size()) == prefix) return &p;
        return nullptr;
    }
    double total() const;
    /// "walls 80 M particles 4.10 GB, fluid 1.2 M particles 96.0 MB, ...": every part that costs
    /// something, largest first.
    std::string describe() const;
};

/// Throws InputError "WHERE: KEY: needs about X, more than the limit Y (origin): parts" when the
/// estimate exceeds the budget (or is not finite); does nothing with an unlimited budget.
void check_memory(const MemoryEstimate& estimate, const MemoryBudget& budget, const std::string& where);

/// A particle scene as make_simulation() builds it: fluid and wall particles (their fields, the
/// neighbour grids and lists within the method's support, the method's per-particle arrays), Clavet's
/// springs, the walls' distance grids. Fluid beyond max_particles is counted as max_particles:
/// build_fluid refuses it with its own message. Scenes whose method is not a particle method get an
/// empty estimate.
MemoryEstimate estimate_memory(const Scene& scene, std::size_t max_particles);

/// The same for each of `budget.processes` processes of a distributed run (issue 44; one process: the
/// same as estimate_memory): each process builds its share of the fluid (make_simulation with a
/// ProcessShare) and holds its share of the neighbour lists: 1 / processes, a quarter more for the
/// imbalance a rebalance allows, and its ghosts (a shell of the neighbour reach around a box of its share);
/// the walls, maps and the method's arrays stay whole. WCSPH's hydrostatic start builds and searches the
/// whole fluid at the start of a new run (fluid_built_whole: whole fluid and lists; not `budget.resumed`).
/// Frame files are the root's whole ones unless `budget.pieces`.
MemoryEstimate estimate_process_memory(const Scene& scene, std::size_t max_particles, const MemoryBudget& budget);

/// Reading a model file (parse_scene, before read_triangle_mesh): its bytes, assimp's peak and eddy's
/// copy, or the cleaning and hierarchy of MeshShape when larger, from the file's size and header counts
/// (binary STL, PLY, glTF, GLB) or its lines counted streaming (OBJ, ASCII STL); per-format factors
/// measured with /usr/bin/time -v (src/geometry/model_memory.cpp, docs/scenes.md). Nothing is held: at
/// most 64 kB of header, and a 1 MB buffer. Throws InputError when the file cannot be opened.
MemoryEstimate estimate_model_memory(const std::filesystem::path& file);

/// Reading a particle file of a fluid {"shape": "file"} (.csv, .vtp, .ply; a .pvtp only its own bytes):
/// the file's bytes and the particles it holds (a PLY's header count, a .vtp's NumberOfPoints, a CSV's
/// lines, streamed) at the reader's cost per particle. When the bytes alone exceed `budget` nothing is
/// counted (refused from the size). Throws InputError when the file cannot be opened.
MemoryEstimate estimate_particle_file_memory(const std::filesystem::path& file, int dimension,
                                             const MemoryBudget& budget);

/// The running guard's limit (bytes) on what a particle simulation holds between steps (its particles,
/// grids, neighbour lists, springs and the method's arrays: the memory_bytes() of each): the budget less
/// what the estimate `e` counts beside them (frame files, models, wall distance grids). run_particles
/// stops a run whose simulation grows past it (particles clustering during the run), exit 3, the frames
/// written so far kept. Infinite with an unlimited budget.
double running_memory_limit(const MemoryEstimate& e, const MemoryBudget& budget);

/// A shallow-water grid (fields and scratch of every cell and face, in the scene's precision), the
/// largest buffer the writers of `formats` build for a frame ("vti", "csv", "obj", "ply"), and the
/// decoding of its heightmap (its size read from the PNG header, nothing decoded).
MemoryEstimate estimate_memory(const ShallowWaterScene& scene, std::span<const std::string> formats);

/// Surface reconstruction of these particles (eddy mesh): the sparse blocks it will allocate (home
/// blocks of the particles grown by the kernel's reach: counted exactly, without the grids), the
/// density, distance and flag grids, the marching tables; with dense_sdf (a .vti output) the dense
/// grid over the blocks' box, with vdb_sdf the OpenVDB copy.
template <int D>
MemoryEstimate estimate_surface_memory(std::span<const Vec<D>> positions, const SurfaceSettings& s, bool dense_sdf,
                                       bool vdb_sdf);

extern template MemoryEstimate estimate_surface_memory<2>(std::span<const Vec<2>>, const SurfaceSettings&, bool, bool);
extern template MemoryEstimate estimate_surface_memory<3>(std::span<const Vec<3>>, const SurfaceSettings&, bool, bool);

}  // namespace eddy
