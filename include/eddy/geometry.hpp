// eddy: users' own geometry (issue 10). Triangle meshes (3D) and closed polygons (2D) become walls
// (containers and obstacles, fixed or moving) and fluid volumes of particle scenes:
//
//   file --read_triangle_mesh--> Mesh<3> --place--> world units --clean_mesh--> consistently oriented
//   points --polygon_mesh------> Mesh<2> ------------------------------------> (outward, no degenerates)
//        --> MeshShape<D> (BVH: generalized winding number, closest point, signed distance)
//            --> sample_wall()      wall particles in layers at r, 3r, ... on the wall's side
//            --> make_sdf_grid()    a signed-distance grid for position-based collision
//            --> inside()           fluid volumes filled on the usual lattice
//
// Real-world meshes are messy; nothing here trusts a model's normals: cells are re-oriented
// consistently across manifold edges and each connected piece made outward by its signed volume, and
// inside/outside is the generalized winding number (Jacobson et al. 2013) with the far-field dipole
// approximation of Barill et al. 2018, so holes, non-manifold edges and self-intersections (a union
// of overlapping closed parts) still give a sensible answer. Solvers never see any of this: they get
// boundary particles and, for the position-based ones, a signed-distance Wall.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/math.hpp"
#include "eddy/mesh.hpp"

namespace eddy {

/// Where a model goes in the scene: scale, then rotate (degrees about x, then y, then z), then
/// translate. Applied in double precision, so millimetre models far from the origin lose nothing.
struct Placement {
    std::array<double, 3> scale{1, 1, 1};
    std::array<double, 3> rotate_deg{0, 0, 0};
    std::array<double, 3> translate{0, 0, 0};
};

/// How a model file and the files it names are read (src/geometry/read_mesh.cpp).
struct ModelFileOptions {
    /// Side files a model names (an OBJ's mtllib, a glTF's buffer and image uris) may lie outside
    /// the model's folder (absolute paths, '..', symbolic links leading out). Off: refused.
    bool allow_outside_references = false;
    /// Largest model file, and largest side file, in bytes: refused from its size, before reading.
    std::uint64_t max_file_bytes = std::numeric_limits<std::uint64_t>::max();
};

/// Reads the triangles of a model file through assimp (OBJ, STL ascii/binary, PLY ascii/binary,
/// glTF/GLB, FBX, Collada, ... whatever assimp reads), all meshes of the file with their node
/// transforms applied, identical vertices joined, placed by `where_to`. Throws InputError naming
/// `file` and the problem (missing, not a regular file, empty, truncated, corrupt, a header whose
/// counts the file cannot hold, a face index beyond the vertices, NaN or infinite vertices, vertices
/// placed beyond float range, no triangles, a side file that is refused) before any large
/// allocation. Every file is opened without blocking (eddy/input_file.hpp) and read into memory
/// first; assimp reads from memory through an I/O system that confines side files to the model's
/// folder (ModelFileOptions) and never opens a FIFO or device.
Mesh<3> read_triangle_mesh(const std::filesystem::path& file, const Placement& where_to = {},
                           const ModelFileOptions& options = {});

/// The same from a model's bytes in memory: `name` (its extension picks the format) only names it.
/// Side files it names are not found (no file is opened). For the fuzz targets and tests.
Mesh<3> read_triangle_mesh_from_memory(std::string bytes, const std::filesystem::path& name,
                                       const Placement& where_to = {});

/// A closed polygon (2D) as a segment mesh: points[i] -> points[i + 1], the last back to the first.
/// Throws InputError (fewer than 3 points, non-finite coordinates) with `where` in the message.
/// closed = false: an open polyline (no segment from the last point back to the first; 2 points at least).
Mesh<2> polygon_mesh(const std::vector<std::array<double, 2>>& points, const std::string& where, bool closed = true);

/// What clean_mesh found.
struct MeshReport {
    std::size_t cells = 0;               ///< Cells kept
    std::size_t degenerate = 0;          ///< Cells dropped: zero area/length or repeated vertices
    std::size_t boundary_edges = 0;      ///< Edges (3D) / vertices (2D) used by one cell: the mesh is open there
    std::size_t non_manifold_edges = 0;  ///< Edges used by more than two cells
    std::size_t flipped = 0;             ///< Cells re-oriented to agree with their neighbours and face outwards
    std::size_t components = 0;          ///< Connected pieces
};

/// Drops degenerate cells and orients the rest consistently and outwards: across every manifold
/// edge, neighbours agree; each connected piece is flipped if its signed volume (area in 2D) is
/// negative. Normals are left empty.
template <int D>
MeshReport clean_mesh(Mesh<D>& mesh);

/// A cleaned mesh with a bounding-volume hierarchy for inside/outside and distance queries.
/// Immutable after construction; every query is thread-safe and deterministic.
template <int D>
class MeshShape {
public:
    /// Cleans `mesh` (clean_mesh) and builds the hierarchy. Throws InputError (with `where`) if no
    /// cell is left.
    MeshShape(Mesh<D> mesh, const std::string& where);

    const Mesh<D>& mesh() const { return m_mesh; }
    const MeshReport& report() const { return m_report; }
    const std::string& where() const { return m_where; }
    Vec<D> lo() const { return m_lo; }  ///< Bounding box (m)
    Vec<D> hi() const { return m_hi; }

    /// Generalized winding number at x: 1 inside a closed outward mesh, 0 outside, in between near
    /// holes; overlapping closed parts add up.
    double winding_number(const Vec<D>& x) const;
    bool inside(const Vec<D>& x) const { return winding_number(x) >= 0.5; }
    /// Distance from x to the nearest cell (m), or `limit` when every cell is farther than `limit`.
    /// closest (optional) gets the nearest point when one was found within the limit.
    double distance(const Vec<D>& x, double limit = 1e300, Vec<D>* closest = nullptr) const;
    /// As distance(), also giving the nearest cell's index (cell; untouched when none is within the limit).
    double distance(const Vec<D>& x, double limit, Vec<D>* closest, std::uint32_t* cell) const;
    /// Unit normal of cell c, outward after cleaning (3D: a triangle's, 2D: a segment's).
    Vec<D> cell_normal(std::uint32_t c) const;
    /// Is any cell closer to x than `radius`? (Cheaper than distance: stops at the first one.) Cells
    /// for which `ignore` returns true do not count.
    bool any_within(const Vec<D>& x, double radius, const std::function<bool(std::uint32_t)>* ignore = nullptr) const;
    /// Signed distance: negative inside (winding number >= 1/2), positive outside (m); |value| is at
    /// most `limit`.
    double signed_distance(const Vec<D>& x, double limit = 1e300) const;

private:
    struct Node {
        Vec<D> lo, hi;                 ///< Box of the node's cells
        std::array<double, D> centre;  ///< Area-weighted centre of the cells (winding far field)
        std::array<double, D> normal;  ///< Sum of area * unit normal (the dipole)
        double radius = 0.0;           ///< Largest distance from centre to the box's corners
        std::uint32_t first = 0;       ///< Leaf: first index into m_order; inner: left child (right = left + 1)
        std::uint32_t count = 0;       ///< Leaf: number of cells; 0 for an inner node
    };
    void build(std::uint32_t node, std::uint32_t begin, std::uint32_t end, std::vector<Vec<D>>& centroid);
    double cell_winding(std::uint32_t c, const std::array<double, D>& x) const;
    double cell_distance2(std::uint32_t c, const std::array<double, D>& x, std::array<double, D>& closest) const;

    Mesh<D> m_mesh;
    MeshReport m_report;
    std::string m_where;
    Vec<D> m_lo, m_hi;
    std::vector<Node> m_nodes;
    std::vector<std::uint32_t> m_order;  ///< Cell indices, leaves' ranges
};

/// A dense signed-distance grid of a MeshShape, for position-based collision: nodes at
/// origin + voxel * i, exact distances (closest point) within `band` of the surface, signs from the
/// winding number, and +-band beyond (the sign flood-filled from the band). Negative inside.
///
/// An open model (clean_mesh found boundary edges: a tank without a lid, a cube missing a side) has no
/// inside that a flood fill or a sign can be trusted with: its far inside joins the far outside through
/// the hole. It is a thin shell instead: phi is the unsigned distance (exact within the band, +band
/// beyond), `shell` holds a copy of the model for exact closest-point queries near it, and the walls
/// keep particles `shell_thickness` plus their margin off either face, on the side they are on
/// (boundary.hpp, Wall).
template <int D>
struct SdfGrid {
    Vec<D> origin = Vec<D>::zero();  ///< Position of node 0 (m)
    float voxel = 0.0f;              ///< Node spacing (m)
    float band = 0.0f;               ///< Distances are exact up to this (m)
    std::array<int, D> nodes{};      ///< Nodes per axis
    std::vector<float> phi;          ///< Row-major, x fastest
    std::shared_ptr<const MeshShape<D>> shell;  ///< Open model: the shell's surface (phi unsigned); null when closed
    float shell_thickness = 0.0f;    ///< Open model: half the shell's thickness (m), half the requested voxel
    /// Trilinear value at x (m), and its gradient when grad is given. Outside the grid: +band
    /// (outside the model) and a zero gradient.
    float sample(const Vec<D>& x, Vec<D>* grad = nullptr) const;
    /// The value at the node nearest to x (+band outside the grid): sample(x) differs from it by at
    /// most voxel * sqrt(D), distances being 1-Lipschitz. One read: the collision's quick test.
    float nearest(const Vec<D>& x) const;
};

/// Builds the grid over the shape's box grown by `band` (voxel size `voxel`, grown when the grid
/// would exceed max_nodes). Parallel over nodes, the same values on any thread count.
template <int D>
SdfGrid<D> make_sdf_grid(const MeshShape<D>& shape, float voxel, float band, const ExecContext& exec,
                         std::size_t max_nodes = std::size_t{1} << 24);

/// Wall particles for a mesh: `layers` layers at distances r, 3r, 5r, ... from the surface on the
/// wall's side (outside a container, inside a solid), about 2r apart: Poisson-disk samples (radius
/// `poisson * 2r`) of the offset surfaces, drawn from random points on the cells (offset along the
/// outward normal) and, around sharp edges and corners, from arcs and sphere caps, so that convex
/// edges leave no hole; a candidate nearer than 0.9 (2l + 1) r to another part of the mesh (a thin
/// wall's far side, a concave corner) is dropped, so thin walls and creases do not clump.
/// Deterministic: the same points, in the same order, on any thread count.
struct WallSampling {
    float particle_radius = 0.01f;  ///< r (m)
    int layers = 2;                 ///< Layers of particles on the wall's side
    bool solid = false;             ///< true: the model's inside is solid; false: it holds the fluid
    float candidates = 6.0f;        ///< Random candidates per (2r)^(D-1) of surface
    float poisson = 0.75f;          ///< Poisson-disk radius in units of the spacing 2r
    float sharp_degrees = 20.0f;    ///< Edges (2D: corners) whose normals turn more than this get arcs
};
template <int D>
std::vector<Vec<D>> sample_wall(const MeshShape<D>& shape, const WallSampling& s, const ExecContext& exec);

/// Poisson-disk thinning: keeps a subset of `points` in which no two are closer than `radius`,
/// visiting points in a random order fixed by their index (dart throwing), in parallel over grid
/// cells coloured so that cells processed at once never interact. Returns the kept indices, sorted.
template <int D>
std::vector<std::uint32_t> poisson_thin(const std::vector<Vec<D>>& points, float radius, const ExecContext& exec);

extern template class MeshShape<2>;
extern template class MeshShape<3>;

}  // namespace eddy
