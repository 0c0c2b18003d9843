// eddy: volume maps on a grid for the smooth walls' solids of any shape (issue 40; Bender, Kugelstadt,
// Weiler & Koschier 2019, "Volume Maps: An Implicit Boundary Representation for SPH").
//
// A flat face's term is a function of the distance d alone (SmoothWallProfile, eddy/smooth_walls.hpp): the
// kernel's mass beyond a plane at the mapped distance s = r + 2 kappa (d - r),
//
//   rho_B(d) = lambda rho0 S(s),   push 2 kappa lambda rho0 |dS/ds|.
//
// A solid of any other shape (a cylinder, a user's closed model, 2D polygons; a model container too) holds
// the kernel's mass over its own volume instead. Its volume map K is that mass seen from a point p,
//
//   K(p) = integral over the wall's region of W(p - z) dz,   grad K(p) = integral of grad_p W(p - z) dz,
//
// taken, as for the face and the ball (BallMap), at the point of the mapped distance on x's normal,
// p = x + (s - d) n. The map stores, on a grid in the wall's own frame, K over the face's value at the same
// s, and -grad K over the face's |dS/ds| (a vector: into the fluid, of length 1 on a flat face):
//
//   share(x) = K(p) / S(s),   push(x) = -grad K(p) / |dS/ds|(s),
//
// push's part along the surface divided by 2 kappa (p moves with x across the normal, 2 kappa times as fast
// along it): the push is then the gradient of the density x reads.
//
// Both are 1 (and n) wherever the wall is flat within the kernel's reach and vary only with its shape, so a
// grid of r/2 (3D; r/4 in 2D) holds them, while the steep part, the profile over d, stays the profile's 512-entry
// table: a term is rho_B(d) share(x) with the push |grad rho_B(d)| |push(x)| along push(x), and its virtual
// particle solves psi W(delta) = rho, psi W'(delta) = -|grad| as the faces' do. The push's direction is the
// volume's own gradient, not the surface's normal: in a concave corner it points along the bisector.
//
// The integrals are sums over the map's own nodes (spacing r/2 in 3D, r/4 in 2D) within the kernel's support,
// over a smoothed indicator of the wall clamp(1/2 - phi/(1.5 spacing), 0, 1) (phi: the signed distance,
// positive on the fluid's side); the face's values are the same sums over the plane at s along the node's
// normal, so a flat face reads exactly 1 in any orientation. Computed once per wall at the start, block by
// block in parallel: each block takes the distances of its nodes and the support's around them once (about
// 27 a node in 3D), and its nodes' sums read them (the same values on any thread count).
// Only the blocks of 8^D nodes that reach the band (-r to the reach) are held. A thin wall (thinner than r
// under more than 5% of its surface: the fluid on its far side within the kernel's reach; a sharp edge's
// few nodes are not) is refused: it keeps its boundary particles. That is decided from distances alone, over
// every held node; the sums, the cost, can then wait until fluid comes near a block (MapFill::on_demand,
// fill_volume_map): a process of a distributed run fills only the blocks around its box (issue 44), one process
// only those the fluid reaches. A node's values depend on its position alone, so when it is filled does not
// change a bit.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/kernels.hpp"

namespace eddy {

template <int D>
struct SmoothWallProfile;

/// One wall's volume map, in the wall's own frame (its pose maps it to the world): nodes in blocks of kBlock^D,
/// only the blocks that reach the band (-r to the reach from the surface) held.
template <int D>
struct VolumeMap {
    static constexpr int kBlock = 8;  ///< Nodes per block per axis
    static constexpr std::size_t kBlockNodes = D == 2 ? 64 : 512;
    Vec<D> origin = Vec<D>::zero();   ///< Node 0 (m)
    float cell = 0.0f;                ///< Node spacing (m)
    std::array<int, D> nodes{};       ///< Nodes per axis (whole blocks)
    std::array<int, D> blocks{};      ///< Blocks per axis
    static constexpr std::int64_t kNotFilled = -2;  ///< block[]: held, its nodes not computed yet (fill_volume_map)
    std::vector<std::int64_t> block;  ///< Per block (x fastest): its first node in share and push; -1: not held
    std::vector<float> share;         ///< Per held node (x fastest within its block): K(p) / S(s); 0 beyond the band
    std::vector<Vec<D>> push;         ///< Per held node: -grad K(p) / |dS/ds|(s); zero beyond the band
    std::vector<std::int64_t> spare;  ///< First nodes of released blocks' slots in share and push, reused first
    std::size_t peak_filled = 0;      ///< The most nodes filled at once so far
    /// Nodes filled now (share's slots less the spare ones).
    std::size_t filled() const { return share.size() - spare.size() * kBlockNodes; }
    /// share and push at x (the wall's frame), multilinear in the nodes (a node not held: 0); false outside the grid.
    /// A node of a block not filled yet throws std::logic_error (fill_volume_map first).
    bool sample(const Vec<D>& x, float& share_out, Vec<D>& push_out) const;
    std::size_t memory_bytes() const {
        return block.capacity() * 8 + spare.capacity() * 8 + share.capacity() * 4 + push.capacity() * sizeof(Vec<D>);
    }
};

/// Whether a wall is drawn from a volume map: a solid cylinder (3D, a disc or a tube) or a closed model
/// (solid, or a container), still, moving or a body's shape (the map in the body's frame, moved with its
/// pose); open models (shells) keep their particles.
template <int D>
constexpr bool volume_mapped(typename Wall<D>::Shape shape, bool solid, bool shell) {
    using S = typename Wall<D>::Shape;
    if (shell) return false;
    return shape == S::sdf || (D == 3 && shape == S::cylinder && solid);
}

/// Whether w is an open model (a shell: either side holds fluid).
template <int D>
bool open_shell(const Wall<D>& w) {
    return w.shape == Wall<D>::Shape::sdf && w.sdf && w.sdf->shell;
}

/// When a map's held blocks are computed: all at once, or none until fill_volume_map asks for them.
enum class MapFill { whole, on_demand };

/// The volume map of wall w (volume_mapped) for the profile's kernel, calibration and reach; node cell r/2
/// (3D; r/4 in 2D), grown (and the sums' spacing with it) when the held nodes would exceed max_nodes. Returns
/// false, with `why` (one line), when the wall is thin (thinner than r under more than 5% of its surface) or
/// its grid shows no inside. With MapFill::on_demand its held blocks are left kNotFilled.
template <int D>
bool make_volume_map(const Wall<D>& w, const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                     const ExecContext& exec, VolumeMap<D>& out, std::string& why,
                     std::size_t max_nodes = std::size_t{1} << 24, MapFill fill = MapFill::whole);

/// Computes the held blocks of `map` (wall w's) not filled yet that sample() may read at a point of the box
/// [lo, hi] (the wall's frame); returns how many. Their nodes take spare slots first, then are appended to share
/// and push.
template <int D>
std::size_t fill_volume_map(const Wall<D>& w, const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                            const Vec<D>& lo, const Vec<D>& hi, const ExecContext& exec, VolumeMap<D>& map);

/// Releases the filled blocks of `map` that sample() cannot read at any point of the box [lo, hi] (the wall's
/// frame): they become kNotFilled again and their slots spare (fill_volume_map refills them, with the same bits:
/// a node's values depend on its position alone). When more than half the slots are spare, share and push are
/// rebuilt without them and their memory returned. Returns the blocks released.
template <int D>
std::size_t release_volume_map(const Vec<D>& lo, const Vec<D>& hi, VolumeMap<D>& map);

/// The volume maps of a list of walls, and the one table every term solves its virtual particle from.
template <int D>
struct VolumeMaps {
    std::vector<VolumeMap<D>> maps;
    std::vector<int> of_wall;        ///< Per wall: its map, -1 for none
    std::vector<std::string> refused;  ///< One line per wall that wanted a map and was refused (thin)
    float h = 0.0f;                  ///< The kernel's support (m)
    std::vector<float> ratio;        ///< W(delta) / |W'(delta)| at delta = h k / (size - 1), decreasing
    const VolumeMap<D>* find(std::size_t w) const {
        return w < of_wall.size() && of_wall[w] >= 0 ? &maps[static_cast<std::size_t>(of_wall[w])] : nullptr;
    }
    /// The virtual particle (delta, psi) of a term of density rho and push grad: psi W(delta) = rho,
    /// psi W'(delta) = -grad. False when it holds nothing.
    bool virtual_particle(const CubicSpline<D>& kernel, float rho, float grad, float& delta, float& psi) const;
    std::size_t memory_bytes() const;
    /// Nodes computed and kept now (MapFill::on_demand: those near the fluid), the most kept at once per map
    /// summed, and all the maps' held nodes.
    std::size_t nodes_filled() const;
    std::size_t nodes_peak() const;
    std::size_t nodes_held() const;
};

/// The maps of the walls with mask[w] set that are volume_mapped, one per wall, each computed in parallel
/// over its nodes.
template <int D>
VolumeMaps<D> make_volume_maps(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& mask,
                               const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                               const ExecContext& exec, MapFill fill = MapFill::whole);

}  // namespace eddy
