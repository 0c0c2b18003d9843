// eddy: fluid surface reconstruction (issue 5, seed 004 "Fluid Simulation for Video Games", part 17).
//
// Particles -> sparse block density grid (SPH kernel splatting) -> marching cubes (marching squares
// in 2D) at the density's iso level -> optional Taubin smoothing and removal of small blobs; and, when
// the signed distance is wanted (keep_grids: `eddy mesh --sdf`), iso crossings and pinned signed
// distances -> Eikonal fast sweeping (Zhao 2005) over the rest. Each stage is a free function usable on
// its own; reconstruct_surface() runs them all.
//
// Conventions:
// - Grid nodes sit at x = i * voxel_size for integer i (the world origin is a node), so grids of two
//   particle sets with the same voxel size line up.
// - Density is a volume fraction: sum_p V W(|x - x_p|, h) with V chosen so that a lattice of spacing
//   2r (the spacing eddy's scenes use) sums to exactly 1. The fluid is where density >= iso (0.5).
// - Signed distance is NEGATIVE inside the fluid, positive outside (as OpenVDB's level sets).
// - Radius convention: a particle of radius r stands for a cube of side 2r, so a lattice of spacing
//   2r filling a ball of radius R reconstructs a surface at about R (not R + r).
// - Memory follows the fluid: blocks of block_size^D voxels exist only around the blocks that hold
//   particles (as far as the kernel radius reaches, rounded up to whole blocks); nodes outside every
//   block read as "far outside" (density 0, distance +FLT_MAX).
// - Determinism: every stage writes each block from one task, sums in a fixed order, no float
//   atomics; the results are the same bits whatever the thread count.
#pragma once
#include <array>
#include <cfloat>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "eddy/mesh.hpp"

#include "eddy/exec.hpp"
#include "eddy/math.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/particles.hpp"
#include "eddy/settings.hpp"
#include "eddy/up_axis.hpp"

namespace eddy {

/// Settings of the reconstruction. Lengths in metres (the particles' units).
struct SurfaceSettings {
    /// Particle radius r (m); a particle stands for a cube of side 2r. Must be > 0.
    float particle_radius = 0.0f;
    /// Grid spacing (m), > 0. 0 means the default, 1.0 r (see docs/surface.md for the measurements).
    float voxel_size = 0.0f;
    /// Support radius h of the cubic spline used for splatting (m); 0 means the default, 4 r.
    float kernel_radius = 0.0f;
    /// Iso level of the volume-fraction density (dimensionless, in (0, 1)); 0.5 puts a flat surface
    /// exactly at the boundary of the particles' cells.
    float iso = 0.5f;
    /// Voxels per block edge (4..32): the unit of sparsity and of parallel work.
    int block_size = 8;
    /// Taubin smoothing iterations (lambda = 0.5, mu = -0.53); 0 = none.
    int smooth_iterations = 0;
    /// Connected pieces of the mesh enclosing less than this volume (m^3; m^2 in 2D) are dropped; 0 keeps all.
    float min_volume = 0.0f;
    /// Every mesh vertex keeps at least this fraction of a voxel from the grid's nodes (extract_mesh):
    /// no sliver triangles. 0: plain marching cubes.
    float vertex_margin = 0.01f;
    /// Anisotropic kernels (Yu & Turk 2013, anisotropic_kernels()): each particle's centre smoothed
    /// toward its neighbours' weighted mean and its kernel stretched along their principal axes, so that
    /// flat surfaces come out flat and thin sheets stay sheets. false: the isotropic spline of seed 003.
    bool anisotropic = false;
    /// Radius of the neighbourhood whose weighted covariance shapes a kernel (m); 0 means the default, 1.5 h.
    float anisotropy_radius = 0.0f;
    /// k_r: the largest ratio of a kernel's principal variances (>= 1; 4 in the paper).
    float anisotropy_ratio = 4.0f;
    /// N_eps: a particle with fewer neighbours within anisotropy_radius (itself included) is isolated and
    /// gets a round kernel of radius k_n h = h / 2 (spray stays visible as droplets). 0 means the default,
    /// a tenth of a full lattice neighbourhood (12 in 3D, 3 in 2D at 1.5 h), as the paper's 25 of about
    /// 260 at its radius 2 h: the corner of a block of fluid is not isolated, a lone drop is.
    int anisotropy_neighbors = 0;
    /// lambda: centres move to (1 - lambda) x + lambda x_w, x_w the neighbours' weighted mean (0: none).
    float anisotropy_smoothing = 0.9f;
    /// Use the parallel wavefront sweep (true) or the serial reference (false); same result. Only with
    /// keep_grids (the mesh needs no distance).
    bool wavefront = true;
    /// Keep the density and signed-distance grids in the result (the distance is computed only then).
    bool keep_grids = false;
    /// Decimation after smoothing and cleaning (decimate()): the largest distance the surface may move,
    /// in voxels (two-sided Hausdorff); 0: no bound. 3D only.
    float decimate_error = 0.0f;
    /// Decimation: keep at most this fraction of the triangles (0..1); 0: as few as decimate_error allows.
    /// Both 0 (the default): no decimation.
    float decimate_ratio = 0.0f;

    float voxel() const { return voxel_size > 0.0f ? voxel_size : particle_radius; }
    float support() const { return kernel_radius > 0.0f ? kernel_radius : 4.0f * particle_radius; }
    float anisotropy_support() const { return anisotropy_radius > 0.0f ? anisotropy_radius : 1.5f * support(); }
};

/// The settings' field table (key, member, unit, range, doc): drives validation and `eddy mesh --help`.
std::span<const Field<SurfaceSettings>> surface_fields();

/// Throws InputError naming `where` and the setting when a value is out of range.
void validate(const SurfaceSettings& s, const std::string& where = "surface settings");

/// The blocks of a sparse grid: integer block coordinates, sorted lexicographically (z, y, x), a
/// lookup from coordinates to index, and each block's 2 D face neighbours (-1 where absent).
template <int D>
struct BlockLayout {
    using Coord = std::array<int, D>;
    float voxel = 1.0f;  ///< Grid spacing (m)
    int block = 8;       ///< Voxels per block edge
    std::vector<Coord> coords;
    std::vector<std::array<std::int32_t, 2 * D>> neighbors;  ///< [2a] = -a side, [2a + 1] = +a side
    std::unordered_map<std::uint64_t, std::int32_t> index;

    std::size_t size() const { return coords.size(); }
    int voxels_per_block() const { return D == 2 ? block * block : block * block * block; }
    static std::uint64_t key(const Coord& c);
    /// Index of the block holding block coordinates c, or -1.
    std::int32_t find(const Coord& c) const;
    /// Builds the lookup and neighbour tables from `coords` (which must be sorted and unique).
    void finalize();
    std::size_t memory_bytes() const;
};

/// A scalar field on a sparse block grid: values[b * voxels_per_block + local], local = x + B (y + B z).
/// Nodes outside every block read as `background`.
template <int D>
struct SparseGrid {
    BlockLayout<D> layout;
    std::vector<float> values;
    float background = 0.0f;

    /// Value at global node coordinates i.
    float at(const std::array<int, D>& i) const;
    /// World position of global node i (m).
    Vec<D> position(const std::array<int, D>& i) const;
    /// Calls f(global node, value) for every node of every block, in block order.
    template <class F>
    void for_each_node(F&& f) const {
        const int B = layout.block;
        for (std::size_t b = 0; b < layout.size(); ++b) {
            const int n = layout.voxels_per_block();
            for (int l = 0; l < n; ++l) {
                std::array<int, D> g;
                int r = l;
                for (int a = 0; a < D; ++a) {
                    g[a] = layout.coords[b][a] * B + r % B;
                    r /= B;
                }
                f(g, values[b * n + l]);
            }
        }
    }
    std::size_t memory_bytes() const { return layout.memory_bytes() + values.capacity() * sizeof(float); }
};

// Mesh<D> and enclosed_volume(): eddy/mesh.hpp (shared with the geometry module).

template <int D>
struct SurfaceResult {
    Mesh<D> mesh;
    SparseGrid<D> density;          ///< Only with keep_grids
    SparseGrid<D> signed_distance;  ///< Only with keep_grids
    std::size_t blocks = 0;         ///< Blocks of the sparse grid
    std::size_t grid_bytes = 0;     ///< Memory of one grid (values + layout)
    double seconds[5] = {};         ///< Wall time of splat, pin, sweep (0 without keep_grids), mesh, smooth+clean (s)
};

// ---- the stages -----------------------------------------------------------------------------------

/// Stage 1. Volume-fraction density on a sparse block grid by cubic-spline splatting (seed 004 "density
/// on a uniform grid"; kernel of seed 003). Per-block gather: each block sums the particles of the
/// blocks around it in a fixed order. Throws InputError on non-finite positions or bad settings;
/// an empty span gives an empty grid.
template <int D>
SparseGrid<D> splat_density(std::span<const Vec<D>> positions, const SurfaceSettings& s, const ExecContext& exec);

/// The anisotropic kernels of Yu & Turk 2013 ("Reconstructing surfaces of particle-based fluids using
/// anisotropic kernels", ACM TOG 32(1)), for splat_density with SurfaceSettings::anisotropic:
///   weights     w_ij = 1 - (|x_i - x_j| / r_c)^3 for |x_i - x_j| < r_c (r_c = anisotropy_support())  (eq. 11)
///   mean        x_w,i = sum_j w_ij x_j / sum_j w_ij                                                    (eq. 10)
///   covariance  C_i = sum_j w_ij (x_j - x_w,i)(x_j - x_w,i)^T / sum_j w_ij = R diag(sigma) R^T          (eq. 9, 12)
///   clamp       sigma~_k = max(sigma_k, sigma_1 / k_r)                                                (eq. 15)
///   kernel      G_i = (1 / h) R diag(k_s / sigma~) R^T, or (1 / (k_n h)) I when N_i < N_eps           (eq. 16)
///   density     rho(x) = sum_j V det(G_j) P(|G_j (x - xbar_j)|), P the cubic spline of radius 1        (eq. 8)
///   centres     xbar_i = (1 - lambda) x_i + lambda x_w,i                                               (eq. 6)
///               then one step back, xbar_i += mu (mean_w(xbar) - xbar_i), mu = 1 / (0.1 - 1 / lambda)
///               (Taubin 1995): eq. 6 alone lowered the tank at rest's surface by 1.5 r.
/// k_s: the paper's constant (1400 in its units) makes a particle at a free surface, whose normal
/// variance is about a third of an interior one's, a kernel three times thinner across the surface:
/// measured, the surface of a ball then sits 0.4-0.6 r inside and its volume is 8% short. Here k_s =
/// min(sigma~_min, sigma_0) (sigma_0: the one-axis variance of a full lattice neighbourhood, spacing 2r,
/// same weights): no axis is ever shorter than the isotropic kernel's h; the others stretch by
/// sigma~_k / sigma~_min, at most 2 h (the splat's reach); an interior particle keeps G = I / h.
/// k_n = 0.5. Every kernel integrates to the isotropic one's volume. docs/surface.md has the figures.
template <int D>
struct AnisotropicKernels {
    std::vector<Vec<D>> centers;               ///< xbar_i (m)
    std::vector<std::array<float, D * D>> g;   ///< h G_i, symmetric, row-major (dimensionless)
    std::vector<float> det;                    ///< det(h G_i)
    std::vector<Vec<D>> extent;                ///< half-extent of {x : |G_i (x - xbar_i)| < 1} per axis (m)
    /// 1: the isotropic kernel (h G = I exactly): a covariance round enough that every axis would have
    /// stretched by less than 10% (Gershgorin's bounds on its eigenvalues); such particles, most of the
    /// interior, skip the eigen-decomposition and splat with the isotropic rows.
    std::vector<std::uint8_t> round;
    std::size_t isolated = 0;                  ///< particles with fewer than N_eps neighbours
    std::size_t rounded = 0;                   ///< particles whose kernel stayed isotropic (round)
    float max_extent = 0.0f;                   ///< the largest extent (m)
};

/// Stage 1a (with SurfaceSettings::anisotropic): the kernels above, one per particle, in input order.
/// Per particle gather over a neighbour grid in its fixed order: the same bits on any thread count.
template <int D>
AnisotropicKernels<D> anisotropic_kernels(std::span<const Vec<D>> positions, const SurfaceSettings& s,
                                          const ExecContext& exec);

/// Stage 2. Iso crossings and pinned signed distances (seed 004, ComputeImmediateSDFFromDensity): for
/// every pair of adjacent nodes on opposite sides of `iso`, the crossing by linear interpolation; a
/// node next to a crossing gets the smaller of the distance to the plane through its nearest crossing
/// on each axis, 1 / sqrt(sum_a 1 / d_a^2), and the first-order |rho - iso| / |grad rho|, never more
/// than its nearest crossing, with the sign (negative inside). Every other node gets FLT_MAX with the
/// sign of its side (-FLT_MAX inside). pinned[n] = 1 where set. Edges to absent blocks carry no crossing.
template <int D>
SparseGrid<D> pin_distances(const SparseGrid<D>& density, float iso, std::vector<std::uint8_t>& pinned,
                            const ExecContext& exec);

/// Stage 3, serial reference. Fast sweeping (Zhao 2005, Math. Comp. 74, eq. 2.4-2.5): Godunov update
/// of |u| from the sorted axis minima, in the 2^D sweep orders, `rounds` times; pinned nodes fixed.
template <int D>
void sweep_serial(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, int rounds = 1);

/// Stage 3, parallel: the seed's wavefront over blocks. For each sweep order, each block waits for its
/// upwind face neighbours (predecessor counts); ready blocks go to tbb::parallel_for_each through its
/// feeder. Face-adjacent blocks never run at once, so every node sees the same neighbour values as in
/// sweep_serial: the result is identical, bit for bit.
template <int D>
void sweep_wavefront(SparseGrid<D>& phi, const std::vector<std::uint8_t>& pinned, const ExecContext& exec,
                     int rounds = 1);

/// Stage 4. Marching cubes (Lorensen & Cline 1987) / marching squares at level `iso` of phi. Each
/// cube's polygons are traced face by face; an ambiguous face is resolved by the asymptotic decider
/// (Nielson & Hamann 1991) computed from that face's four values only, so the two cubes sharing it
/// agree and the mesh is closed, manifold and consistently oriented. One vertex per crossed grid
/// edge (shared), normals from the central-difference gradient of phi.
///
/// `margin` (fraction of a voxel, 0..0.25) keeps every vertex at least that far from the grid nodes
/// (the crossing's interpolation parameter is clamped to [margin, 1 - margin]). Plain marching cubes
/// (margin 0) puts a vertex within 1e-7 m of a node whose value is nearly the iso level, and the
/// crossings on the other edges of that node meet it there: slivers down to 1e-12 m^2 whose
/// near-coincident vertices make strict checkers (Open3D's is_watertight) report self-intersections.
/// The clamp moves no vertex by more than margin * voxel and changes no inside/outside decision, so
/// the mesh's connectivity, closedness and orientation are those of plain marching cubes.
template <int D>
Mesh<D> extract_mesh(const SparseGrid<D>& phi, float iso, const ExecContext& exec, float margin = 0.0f);

/// Taubin (1995) smoothing: Laplacian step lambda = 0.5 then mu = -0.53, `iterations` times, over the
/// mesh's own neighbours (uniform weights). Normals are re-estimated from the cells afterwards.
template <int D>
void taubin_smooth(Mesh<D>& mesh, int iterations, const ExecContext& exec);

/// Drops connected pieces enclosing less than min_volume (m^3 or m^2). Returns the pieces dropped.
template <int D>
std::size_t remove_small_components(Mesh<D>& mesh, double min_volume);

/// Settings of decimate(). Nothing happens while both are 0.
struct DecimateSettings {
    /// Largest distance (m) between the decimated and the original surface (two-sided Hausdorff, as
    /// tested); 0: no bound, target_ratio alone decides.
    float max_error = 0.0f;
    /// Keep at most this fraction of the triangles (0..1; 1 keeps all); 0: as few as max_error allows.
    float target_ratio = 0.0f;
    /// Side of the patches decimated in parallel, in mean input edges (>= 8): cubes of this side cut the
    /// surface, each piece is decimated on its own, then the seams between them (decimate()). Larger: fewer
    /// seams, less parallel work; the result depends on it, never on the thread count.
    float patch_edges = 128.0f;
};
struct DecimateReport {
    std::size_t triangles_before = 0, triangles_after = 0, vertices_before = 0, vertices_after = 0;
    std::size_t rounds = 0;  ///< Rounds of decimate-check-freeze (1: the first result passed)
    std::size_t passes = 0;  ///< meshopt_simplify calls
    std::size_t frozen = 0;  ///< Triangles kept as they were (the input's, or a patch's by a seam), around what failed a check
    std::size_t patches = 0; ///< Patches decimated in parallel (1: the whole mesh, no seams)
};
/// True when eddy was built with meshoptimizer (Debian libmeshoptimizer-dev); without it decimate()
/// refuses any decimation with an InputError naming the library.
bool decimation_available();
/// Throws InputError naming `where` and the key when a value is out of range (or meshoptimizer is missing).
void validate(const DecimateSettings& s, const std::string& where = "decimate");

/// Stage 5, optional. Edge-collapse decimation (Garland & Heckbert 1997 quadrics; meshoptimizer's
/// meshopt_simplify) to target_ratio of the triangles or as far as max_error allows, whichever comes
/// first. A closed manifold mesh stays closed, manifold and consistently oriented with every piece's
/// Euler characteristic, and within max_error of the original (two-sided, checked on samples): each
/// result is checked, the input's triangles around whatever failed are frozen (kept as they were, their
/// border locked for meshoptimizer), and the rest is decimated again, until it passes. Defects the input
/// already had (an open border) are left as they are. The kept vertices are a subset of the original
/// ones, so positions, normals and every VertexAttribute carry exactly (normals are not re-estimated from
/// the coarser faces: the original ones are the finer surface's). A second stage does the frozen triangles
/// alone the same way, the rest held fixed. The surface is cut into patches (cubes of patch_edges mean
/// edges), each decimated so on its own, in parallel, with the band along its seams held; then the bands
/// and the triangles touching them are decimated together, the rest held, checked against the original.
/// The patches and the checks' blocks never depend on the thread count: the same bits on any. 3D only
/// (reconstruct_surface refuses decimation of 2D contour lines).
DecimateReport decimate(Mesh<3>& mesh, const DecimateSettings& s, const ExecContext& exec);

/// A per-particle field to carry onto a mesh: `components` floats per particle, particle-major.
struct ParticleField {
    std::string name;
    int components = 1;
    std::span<const float> values;
};

/// Stage 6, optional (as splashsurf's --interpolate-attributes): each vertex x of `mesh` gets, for
/// every field, the Shepard-normalised cubic-spline average of the particles within `support`:
///     A(x) = sum_p A_p W(|x - x_p|, h) / sum_p W(|x - x_p|, h).
/// Normalised, unlike the SPH sum sum_p (m_p / rho_p) A_p W, so the values do not fade at the free
/// surface where the kernel is half empty: a jet's surface moves at the jet's speed. A vertex with no
/// particle within h (none after reconstruct_surface with its own support) gets zeros. Appends one
/// VertexAttribute per field; the same bits for any thread count (per-vertex sums in the neighbour
/// search's fixed order). InputError when a field's size is not positions.size() * components.
template <int D>
void interpolate_attributes(Mesh<D>& mesh, std::span<const Vec<D>> positions, std::span<const ParticleField> fields,
                            float support, const ExecContext& exec);

/// The fields of `particles` named in `names` ("velocity", "density", "pressure"; InputError
/// otherwise) as views for interpolate_attributes; they stay valid while `particles` is unchanged.
template <int D>
std::vector<ParticleField> particle_fields(const ParticleSet<D>& particles, std::span<const std::string> names);

/// The whole pipeline: splat_density, then the mesh at the density's iso level (extract_mesh at -iso of
/// -rho: a vertex at the density's linear crossing of its edge, where pin_distances puts the crossing too,
/// its normal -grad rho), smoothing, cleaning and decimation; the signed distance (pin_distances and a
/// sweep) only with keep_grids, which leaves the mesh as it is. Throws InputError on bad settings, no
/// particles or non-finite positions.
template <int D>
SurfaceResult<D> reconstruct_surface(std::span<const Vec<D>> positions, const SurfaceSettings& s,
                                     const ExecContext& exec);

// ---- output -------------------------------------------------------------------------------------

/// Wavefront OBJ (v, vn, f; in 2D v with z = 0 and l for segments), atomically.
template <int D>
void write_obj(const std::filesystem::path& path, const Mesh<D>& m);
/// Binary little-endian PLY (x y z nx ny nz, faces or edges), atomically.
template <int D>
void write_mesh_ply(const std::filesystem::path& path, const Mesh<D>& m);
/// VTK XML PolyData (points, Normals and the vertex attributes as point data; Polys in 3D, Lines in 2D),
/// atomically: ParaView's time series (surface.pvd) lists these.
template <int D>
void write_mesh_vtp(const std::filesystem::path& path, const Mesh<D>& m);
/// By extension: .obj, .ply or .vtp; anything else is an InputError.
template <int D>
void write_mesh(const std::filesystem::path& path, const Mesh<D>& m);
/// VTK ImageData (.vti, ASCII-free binary appended) of a sparse grid over its blocks' bounding box;
/// nodes outside the blocks get the background value. Field name `name`.
template <int D>
void write_vti(const std::filesystem::path& path, const SparseGrid<D>& g, const char* name = "signed_distance");

// ---- particle files to meshes (`eddy mesh`) ----------------------------------------------------------

struct MeshFilesOptions {
    std::filesystem::path input;   ///< A particle file (.csv, .vtp, .ply) or a folder of them (frames)
    /// For a file: the mesh file (.obj or .ply). For a folder: the output folder; each frame
    /// particles_NNNNN.* becomes surface_NNNNN.<format> there.
    std::filesystem::path out;
    /// "obj", "ply" or "vtp" (folders only; a file's extension decides). A folder also gets surface.pvd,
    /// the surfaces at the particles' times for ParaView, listing .vtp files (written beside obj or ply).
    std::string format = "obj";
    /// particle_radius 0: read from summary.json in the input's folder or its parent (eddy run writes it).
    SurfaceSettings settings;
    std::vector<std::filesystem::path> sdf_out;  ///< Signed distance grids to write (.vti, .vdb); files only
    /// Particle fields interpolated onto the vertices (interpolate_attributes); PLY meshes only.
    std::vector<std::string> attributes;
    /// Up axis of the meshes; unset: the particles' own (summary.json's "up_axis" beside them, else y).
    std::optional<UpAxis> up;
    /// Memory a frame may need (estimate_surface_memory, checked after reading its particles and
    /// before any grid is allocated); frames meshed at once share it. Default: no limit. A particle
    /// file (a .pvtp with its pieces) larger than a frame's share is refused from its size, unread.
    MemoryBudget budget;
    /// A .pvtp's pieces may lie outside its folder (--allow-outside-references); off: refused.
    bool allow_outside_references = false;
};
struct MeshFilesReport {
    std::size_t frames = 0, vertices = 0, cells = 0;
    int dimension = 3;
    float particle_radius = 0.0f;
    double seconds = 0.0;    ///< Wall time of the whole call (s)
    /// A folder's surface.pvd times: "particles.pvd" (eddy run's, beside the frames or in their parent),
    /// "summary.json fps" (frame number / fps) or "frame numbers" (the NNNNN of the names, or their order).
    std::string times_from;
};
/// Reads the particles (2D when every z is 0), reconstructs and writes the meshes; frames of a folder
/// in parallel. Throws InputError naming the file or option on bad input.
MeshFilesReport mesh_particle_files(const MeshFilesOptions& opts, const ExecContext& exec);

// ---- OpenVDB (src/surface/openvdb_bridge.cpp, the one file that includes its headers) ------------
namespace vdb {
/// Writes a signed distance grid as an OpenVDB level set named "surface" (class "level set", world
/// units, background = half-width of the band), atomically. 2D grids are written as one slice.
/// With `density` (the volume fraction splat_density made), the file also holds it as a fog volume
/// named "density", after it: the grid Blender's Volume to Mesh modifier and volume shaders read by
/// default (mesh it at threshold = the reconstruction's iso, 0.5; docs/blender.md).
template <int D>
void write_level_set(const std::filesystem::path& path, const SparseGrid<D>& sdf, float half_width_voxels = 3.0f,
                     const SparseGrid<D>* density = nullptr);
/// What OpenVDB itself reads back from a .vdb file (for tests): the first grid's name, class, voxel
/// size, active voxel count and value at a world position.
struct FileInfo {
    std::string name, grid_class;
    double voxel = 0.0;
    std::size_t active = 0;
    float value_at_probe = 0.0f;
    std::vector<std::string> grids;  ///< Every grid's name, in file order
};
FileInfo read_info(const std::filesystem::path& path, const Vec3& probe);
/// OpenVDB's tools::fogToSdf on a copy of `density` (3D): the signed distance (m) at every node of
/// `density`'s blocks that OpenVDB reports as active; FLT_MAX elsewhere. For cross-checks.
SparseGrid<3> fog_to_sdf(const SparseGrid<3>& density, float iso);
/// OpenVDB's particlesToSdf (spheres of radius r) + volumeToMesh on the same voxel size, for
/// benchmarks; returns the number of triangles (quads count as two).
std::size_t particles_to_mesh(std::span<const Vec3> positions, float radius, float voxel, double seconds[2]);
}  // namespace vdb

extern template struct BlockLayout<2>;
extern template struct BlockLayout<3>;
extern template struct SparseGrid<2>;
extern template struct SparseGrid<3>;

}  // namespace eddy
