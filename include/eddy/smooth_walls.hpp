// eddy: smooth walls from the walls' shapes, for the particle methods' pressure solvers (issue 40).
//
// Instead of sampling a wall with particles, each fluid particle i near a wall face sees the density the
// fluid's own mirror image across the face would give it, as a function of its distance d to the face:
//
//   rho_B(d) = lambda rho0 S(s),   s = r + 2 kappa (d - r),   S(s) = integral over z > s of W1(z) dz,
//   W1(z)    = the kernel integrated over a plane at distance z (1/m),
//
// the kernel mass beyond a plane at s. A bottom row at rest at d = r has s = r: the half space beyond r is
// what the fluid's mirror lattice (rows at 2r, 4r, ... below it) fills. When i moves towards the face its
// mirror image comes towards it as well, so s falls twice as fast as d (kappa = 1 for the continuous
// fluid). Two constants, computed once from the rest lattice's own sums, make the lattice at rest exact:
//   lambda: fluid resting at r reads rho0: lambda rho0 S(r) = rho0 - m sum of W over its half lattice
//           (its own row included);
//   kappa:  there the wall's push per unit pressure, |grad rho_B| = 2 kappa lambda rho0 W1(r), is twice
//           the rows above's, 2 m sum |dW/dy| (the mirror's P_i + P_i). The lattice's rows, three points
//           across the kernel, are a coarse quadrature of W1: kappa is 1.2-1.3, not 1.
// The push, the density and the rate (v_i - v_wall) . grad rho_B are one smooth function of d: no sampling
// slots, no bumps, and the velocity update stays the transpose of the rate. The Akinci wall (a lattice
// held still, half this gradient) let DFSPH's bottom row sink to the guard at r/4 (docs/methods.md).
//
// A mirror image also carries the hydrostatic pressure of its depth: the ghost rows below a floor push
// harder than the row itself. That part does not depend on the solver's pressures; it is the
// pressure-independent acceleration
//
//   a_i = sum over faces with g . n < 0 of  -(g . n) H(d) n,   H(d) = [s W1(s) + S(s)] / (2 [r W1(r) + S(r)])
//
// (the kernel's first moment over the mirror region, scaled so that H(r) = 1/2: in a column of rows at
// rest, whose pairs only reach the next row, the hydrostatic pressures balance the bottom row exactly when
// the wall adds half its weight). Without it the wall's push mirrors the row's own pressure only, and the
// floor rows' pressures alternate (+22% / -9% / +7% in the 2D tank: the pair force (P_i + P_j) cannot see
// a pressure that alternates row by row, so only the wall sets that mode). The solvers apply it with
// gravity, in full to particles at rest density and not at all below 0.8 rho0 (a drop or a film on a
// floor is no column; switching it on the particles that had pressure instead rang the tank's column).
//
// The solvers see it as one virtual wall particle per face near i: at x_b = x_i - delta n with the
// pseudo-mass psi such that psi W(delta) = rho_B(d) and psi W'(delta) = -|grad rho_B(d)| (W / |W'| falls
// monotonically over the support, so delta is unique), the velocity of the wall at x_b, and the face's
// boundary object (its loads). Their loops, loads, friction and viscosity are unchanged.
//
// A virtual particle lies on i's normal to its face, so the viscosity's x_ib . (v_i - v_b) sees only the
// normal velocity: the faces would slip. A no-slip wall shears the water sliding past it; the faces apply
// that shear as the law of the wall (wall_shear_stress: Spalding 1961, the viscous sublayer and the log law
// in one) with the water's own viscosity, evaluated at the particle's distance d and spread over the
// particle's share of the face (SmoothWalls::shear). It has no free constant: nu is the fluid's.
//
// Faces: a box container gives its 2D faces, a cylinder container its side, floor and lid, a ball
// container its sphere. Each face is a half-space, so where two faces of one container meet at a right
// angle (a box's edges and corners, a cylinder's rims) the region beyond both is counted twice. Each
// such pair adds one more virtual particle that takes it off again (inclusion-exclusion; every method:
// PBF's constraint turned the excess straight into velocity, a 3D tank's corner particles leaving at
// 5.5 g dt after the first step):
//
//   rho_kl = -lambda rho0 Q(s_k, s_l),   Q(a, b) = integral over x > a, y > b of W2(x, y) dx dy,
//
// W2 the kernel integrated along the remaining axis (3D) or the kernel itself (2D), with its gradient
// lambda rho0 2 kappa [P(s_k, s_l) n_k + P(s_l, s_k) n_l], P(a, b) = -dQ/da = integral over y > b of
// W2(a, y) dy: a virtual particle of negative psi on that gradient's line. In 3D, where three faces meet at
// right angles (a box's corners), the region beyond all three, counted three times and taken off three
// times, is added back once: rho_klm = lambda rho0 Q3(s_k, s_l, s_m), its gradient from
// P3(a, b, c) = -dQ3/da (a virtual particle of positive psi). The profile's `edges` off (unit tests only)
// shows what the terms take off.
// A solid box (fluid outside: obstacles, the slabs of an open-top box, a body's box in its own frame) is,
// within the reach, the orthant of the faces that look towards x: its face x is farthest outside of, less
// the parts of that face's half space beyond the others, as edge and corner terms of negative psi in the
// same tables without the containers' calibration (solid_box_terms; where the mirror image lies in the box,
// its faces' hydrostatic push also holds a ceiling). It matches the kernel's integral over the orthant and
// its push is the density's gradient (the unit tests). A moving box's faces move with its pose, and its
// virtual particles carry its object and velocity: the loads and DFSPH's and PBF's in-solve body coupling
// read them as they read boundary particles.
//
// A face's virtual particle pushes along its normal only. A true mirror image also holds a row along the
// face: in a pressure field that changes along the face, the mirror rows carry their share of the pairs'
// pressure force. Without it a row on a side wall holds only 85% of its weight by its pressure gradient and
// sinks into a denser packing with 10-16% more pressure (docs/methods.md, "Why rows crowd on a smooth
// wall"). The share in the solvers' symmetric pair form (ghost_share): each fluid neighbour j that has the
// same face within the reach has its image x_j' = x_j - 2 d_j n across it, and
//
//   a_ghost = sum_j m (q_i + q_j) grad W(x_i - x_j')   along the face   (q: the solver's pressure term),
//
// with no constant: on the rest lattice the images are the missing half of the lattice. The images of a
// pair, (i, j') and (j, i'), lie at the same distance d_i + d_j with opposite offsets along the face, so
// over the fluid their parts cancel to the bit (the pair's normal is the mean of the two particles' normals):
// a frictionless wall carries no load along itself and needs no reaction, and a body's momentum exchange
// with the fluid stays exact. Only where the particle's list holds no boundary particles (mirrored): the
// mirror continues a fluid lattice, which next to a particle wall it is not. DFSPH adds it in both solves,
// WCSPH to its accelerations; PBF takes none (its tank at rest moved with the share's earlier form). In
// DFSPH's divergence solve a moving object's faces (a body, a moving or keyframed wall) take none: with them a
// box dropped 1 cm on DFSPH water still heaved 2.1 mm (above r) 2.5-3 s later, 1.8 mm without; without any
// share on a body's faces a neutral body drifted 5.1 mm (r = 5 mm) and a light one floated 8.2% deep. Why the
// divergence solve's share on a moving face feeds a heave is not understood. docs/methods.md, "Solids and
// bodies drawn smooth".
//
// The reach is r + (h - r) / (2 kappa), about 2.2 r at h = 4r. Closed analytic containers, solid boxes,
// solid balls (a ball's volume map, BallMap: the kernel's integral over the ball, radial) and, from their
// volume maps on a grid in their own frames (eddy/volume_map.hpp, Bender et al. 2019), solid cylinders and
// closed models, bodies' included, are drawn so (drawn_smooth); ball bodies, open shells and walls too thin
// for a map keep their boundary particles (one face at such a solid's nearest point, tried, read a box held
// under water 21% heavy and let a neutral body drift 2 r; shells let particles through), and the solvers see
// both in one list.
#pragma once
#include <cmath>
#include <span>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/kernels.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/volume_map.hpp"

namespace eddy {

/// rho_B(d) and its virtual particle (delta, psi) tabulated over the distance d to a face, for one kernel,
/// particle radius and rest density.
template <int D>
struct SmoothWallProfile {
    float reach = 0.0f;       ///< d beyond which a face adds nothing: r + (h - r) / (2 kappa) (m)
    float step = 0.0f;        ///< Table spacing in d (m), from d = 0
    float lambda = 1.0f;      ///< The rest lattice's density calibration above
    float kappa = 1.0f;       ///< and its push's: s = r + 2 kappa (d - r) in place of 2d - r
    std::vector<float> delta;  ///< Distance of the virtual particle from x_i (m)
    std::vector<float> psi;    ///< Its pseudo-mass (kg; kg/m in 2D)
    std::vector<float> rho;    ///< rho_B (kg/m^3; kg/m^2 in 2D)
    std::vector<float> hold;   ///< H(d): a_i per unit of -(g . n) (dimensionless)
    bool edges = false;        ///< Take the region beyond two perpendicular faces off once (header)
    int q_cells = 0;           ///< Q and P tables: (q_cells + 1)^2 nodes over s in [-h, h]^2
    float q_step = 0.0f, h = 0.0f, radius = 0.0f;  // table spacing, the kernel's support, r (m)
    float rest_density = 1000.0f;                  // rho0
    std::vector<float> q, p;   ///< Q(a, b) and P(a, b) (header), row-major in a
    int q3_cells = 0;          ///< 3D: Q3 and P3 tables, (q3_cells + 1)^3 nodes over [-h, h]^3
    float q3_step = 0.0f;
    std::vector<float> q3, p3;
    float mu2 = 1.0f, mu3 = 1.0f;  ///< The Q, P and Q3, P3 tables' calibration to the container's lattice corner
    /// delta and psi at distance d (m); d < 0 (inside the wall) takes d = 0. Returns false beyond reach.
    bool at(float d, float& delta_out, float& psi_out) const;
    float density(float d) const;  ///< rho_B(d)
    float support(float d) const;  ///< H(d)
    /// The edge term of faces at d_k, d_l with normals n_k, n_l (into the fluid): its density (<= 0) and
    /// virtual particle (distance delta along `along`, a unit vector into the fluid; psi <= 0). False when
    /// it adds nothing.
    bool edge(float dk, const Vec<D>& nk, float dl, const Vec<D>& nl, const CubicSpline<D>& kernel, float& rho_out,
              float& delta_out, float& psi_out, Vec<D>& along) const;
    /// 3D: the corner term of three faces at right angles (header), density >= 0, psi >= 0.
    bool corner(const float* d, const Vec<D>* n, const CubicSpline<D>& kernel, float& rho_out, float& delta_out,
                float& psi_out, Vec<D>& along) const;
    /// The terms behind edge and corner, in the mapped distances s (not clamped: a solid's orthant, header):
    /// sign lambda rho0 Q(s_k, s_l) and sign lambda rho0 Q3(s), with their virtual particles.
    bool pair(float sk, const Vec<D>& nk, float sl, const Vec<D>& nl, float sign, const CubicSpline<D>& kernel,
              float& rho_out, float& delta_out, float& psi_out, Vec<D>& along) const;
    bool triple(const float* s, const Vec<D>* n, float sign, const CubicSpline<D>& kernel, float& rho_out,
                float& delta_out, float& psi_out, Vec<D>& along) const;
    /// The mapped distance s = r + 2 kappa (d - r) of a face at d (m).
    float mapped(float d) const { return radius + 2.0f * kappa * (d - radius); }
};

template <int D>
SmoothWallProfile<D> make_smooth_wall_profile(const CubicSpline<D>& kernel, float particle_radius, float mass,
                                              float rest_density, bool edges = false);

/// A solid ball's volume map (Bender, Kugelstadt, Weiler & Koschier 2019, for the one shape whose map is
/// radial): the kernel's integral over the ball seen from x at distance R + s from its centre,
///
///   3D  V_R(s) = integral_0^h W(q) 4 pi q^2 (1 + t) / 2 dq,
///   2D  V_R(s) = integral_0^h W(q) 2 q (pi - acos t) dq,     t = clamp((R^2 - (R + s)^2 - q^2) / (2 (R + s) q), -1, 1)
///
/// (the part of the sphere, or circle, of radius q about x inside the ball), in place of the face's half
/// space S(s) at the same mapped distance s = r + 2 kappa (d - r): rho_B(d) = lambda rho0 V_R(s), its push
/// 2 kappa lambda rho0 |dV_R/ds| along the ball's normal, and the hydrostatic hold H(d) V_R(s) / S(s). As R
/// grows V_R(s) tends to S(s): a large ball is the face. Tabulated over d like the profile, once per radius.
struct BallMap {
    float radius = 0.0f;  ///< R (m)
    float step = 0.0f;    ///< Table spacing in d (m), the profile's
    float reach = 0.0f;   ///< The profile's reach (m)
    std::vector<float> rho, delta, psi, share;  ///< rho_B, the virtual particle (delta, psi), V_R / S
    /// The ball's term at distance d (m) from its surface (d < 0 takes d = 0); false beyond reach.
    bool at(float d, float& rho_out, float& delta_out, float& psi_out, float& share_out) const;
};

/// The ball map of radius R (m) for the profile's kernel, calibration and table.
template <int D>
BallMap make_ball_map(const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel, float radius);

/// The ball maps of a list of walls: one per distinct radius of its solid balls, and per wall the map it
/// reads (-1: none).
struct BallMaps {
    std::vector<BallMap> maps;
    std::vector<int> of_wall;
    const BallMap* find(std::size_t w) const {
        return w < of_wall.size() && of_wall[w] >= 0 ? &maps[static_cast<std::size_t>(of_wall[w])] : nullptr;
    }
};

/// The maps of the solid balls among `walls` with mask[w] set (computed in parallel, one radius per task).
template <int D>
BallMaps make_ball_maps(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& mask,
                        const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel, const ExecContext& exec);

/// The virtual wall particles of one step: `set` (positions, velocities, psi, object; no motions: the loads
/// take their objects' pivots from the scene's BoundarySet) and, per fluid particle, its list into it.
template <int D>
struct VirtualWalls {
    BoundarySet<D> set;
    NeighborLists lists;
    std::vector<float> density;          ///< Per fluid particle: the walls' rho_B summed over its faces
    std::vector<Vec<D>> hold;           ///< Per fluid particle: a_i above (m/s^2)
    std::vector<std::uint32_t> counts;  ///< Per fluid particle: the boundary particles copied into its list
    std::vector<float> gap;             ///< Per slot: a face's distance d from the particle (m); copies: 0; edges: reach
    std::size_t memory_bytes() const {
        return set.memory_bytes() + lists.memory_bytes() + (density.capacity() + counts.capacity() + gap.capacity()) * 4 +
               hold.capacity() * sizeof(Vec<D>);
    }
};

/// Builds the virtual wall particles of fluid positions x[0, n) against the walls with smooth[w] set, at
/// their current poses; `motions` (the scene's boundary objects) give each face's velocity at time t; g:
/// gravity (m/s^2). Particle walls stay as they were: particle i's list also holds copies of its boundary
/// particle neighbours (particle_lists into `particles`) whose object is not drawn smooth (smooth_object).
/// Gathers: each particle writes only its own slots, whatever the thread count.
template <int D>
void build_virtual_walls(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& smooth,
                         const std::vector<BoundaryMotion<D>>& motions, double t, const SmoothWallProfile<D>& profile,
                         const Vec<D>& g, const Vec<D>* x, std::size_t n, VirtualWalls<D>& out, const ExecContext& exec,
                         const NeighborLists* particle_lists = nullptr, const BoundarySet<D>* particles = nullptr,
                         const std::vector<std::uint8_t>* smooth_object = nullptr, const CubicSpline<D>* kernel = nullptr,
                         const BallMaps* balls = nullptr, const VolumeMaps<D>* volumes = nullptr);

/// The one rule for the walls the smooth model draws: closed analytic containers (box, ball, and in 3D the
/// cylinder), solid boxes (obstacles, bodies, an open-top box's slabs, which end at its rim), solid balls
/// that are not bodies (their BallMap: still, spinning or keyframed; a floating ball drawn so heaved 6.3%
/// short of linear theory's period with DFSPH, docs/methods.md "Solid balls from a volume map") and, from
/// their volume maps (eddy/volume_map.hpp), solid cylinders and closed models, bodies' shapes included (a map
/// refused at the start, a wall thinner than r, keeps its particles). Ball bodies and open shells keep their
/// boundary particles. smooth_wall_mask and the memory estimate both ask it.
template <int D>
constexpr bool drawn_smooth(typename Wall<D>::Shape shape, bool solid, bool body = false, bool shell = false) {
    using S = typename Wall<D>::Shape;
    if (volume_mapped<D>(shape, solid, shell)) return true;
    if (solid) return shape == S::box || (shape == S::ball && !body);
    return shape == S::box || shape == S::ball || (D == 3 && shape == S::cylinder);
}

/// Per wall 1 if drawn_smooth; per object in `objects` (size: the boundary objects) 1 if one of its walls is.
template <int D>
std::vector<std::uint8_t> smooth_wall_mask(const std::vector<Wall<D>>& walls, std::size_t object_count,
                                           std::vector<std::uint8_t>& objects);

/// The shear stress over density, tau_w / rho = u_*^2 (m^2/s^2), that a smooth no-slip wall puts on fluid of
/// kinematic viscosity nu (m^2/s) sliding past it at speed u (m/s) at distance y (m): Spalding's (1961)
/// law of the wall, the viscous sublayer (u+ = y+) and the log law (u+ = ln(y+) / kappa + B) in one,
///
///   y+ = u+ + exp(-kappa B) [exp(kappa u+) - 1 - kappa u+ - (kappa u+)^2 / 2 - (kappa u+)^3 / 6],
///   u+ = u / u_*,  y+ = y u_* / nu,  kappa = 0.41, B = 5.5,
///
/// solved for u+ from u+ y+ = u y / nu (Newton from above: u+ y+ grows and is convex in u+). 0 for u, y or
/// nu not above 0.
double wall_shear_stress(double u, double y, double nu);

/// The help line of the solvers' `wall_law_viscosity` setting (one text for DFSPH, WCSPH and PBF).
inline constexpr const char* kWallLawViscosityHelp =
    "smooth walls: the kinematic viscosity of their law of the wall (Spalding 1961), the shear a no-slip wall puts on "
    "the water sliding past it (docs/methods.md): water 1e-6; 0: the faces slip";

/// The smooth walls of one solver (DFSPH, WCSPH): which walls are drawn so, their profile, this step's
/// virtual particles, and what every face adds beyond the pressure pairs (the hydrostatic push, the wall's
/// shear). Off (a scene without a container to draw so, or boundary_model "particles"), the solvers read
/// the boundary particles through the same calls.
template <int D>
class SmoothWalls {
public:
    /// Draws the drawn_smooth walls among `walls` when `wanted`; stays off when there are none. nu: the
    /// law of the wall's kinematic viscosity (m^2/s; 0: the faces slip); exec: the solid balls' maps are
    /// computed on its threads (null: one).
    void init(bool wanted, const std::vector<Wall<D>>& walls, std::size_t object_count, const CubicSpline<D>& kernel,
              float particle_radius, float mass, float rest_density, float nu, const ExecContext* exec = nullptr);
    bool on() const { return m_on; }
    /// This step's virtual particles for the fluid at x[0, n) (build_virtual_walls), with copies of the
    /// boundary particles (`particle_lists` into `particles`) of the walls not drawn smooth.
    void update(const std::vector<Wall<D>>& walls, const std::vector<BoundaryMotion<D>>& motions, double t,
                const Vec<D>& g, const Vec<D>* x, std::size_t n, const NeighborLists& particle_lists,
                const BoundarySet<D>& particles, const ExecContext& exec);
    /// The walls every term reads: the virtual particles (on), or the boundary particles themselves.
    const NeighborLists& lists(const NeighborLists& particle_lists) const { return m_on ? m_virtual.lists : particle_lists; }
    const BoundarySet<D>& set(const BoundarySet<D>& particles) const { return m_on ? m_virtual.set : particles; }
    /// The slot of particle i's list from which on the entries are faces, not particles (off: none).
    std::uint32_t first_face(std::size_t i) const {
        return m_on ? m_virtual.lists.offsets[i] + m_virtual.counts[i] : ~std::uint32_t{0};
    }
    /// The faces' hydrostatic push on particle i at density rho (a_i, m/s^2): in full at rest density,
    /// none below 0.8 rho0 (a drop or a film on a floor is no column).
    Vec<D> push(std::size_t i, float rho) const;
    /// The faces' shear on particle i at x moving at v, over dt: the velocity change (m/s). Each face within
    /// reach takes wall_shear_stress of the slip u_t (v less the face's velocity, its normal part taken off)
    /// at the particle's distance d over the particle's share of the face, (2r)^(D-1) of its volume
    /// (2r)^D: a = w(d) u_*^2 / (2r), w = min(1, rho_B(d) / rho_B(r)) (1 for the row at rest on the face,
    /// fading to 0 at the reach). Never more than the slip: the wall drags, it does not push back.
    Vec<D> shear(std::size_t i, const Vec<D>& x, const Vec<D>& v, float dt) const;
    /// Whether particle i has a face (or an edge term) within reach; off: false.
    bool near_face(std::size_t i) const { return m_on && first_face(i) < m_virtual.lists.offsets[i + 1]; }
    /// Whether particle i takes the mirror's share: a face within reach and no boundary particles in its list
    /// (the mirror continues a fluid lattice across the face; next to a particle wall or a body it is not one).
    bool mirrored(std::size_t i) const { return near_face(i) && m_virtual.counts[i] == 0; }
    /// Whether boundary object o moves (a body, a moving or keyframed wall) this step; off: false.
    bool moving(std::size_t o) const { return m_on && o < m_moving.size() && m_moving[o]; }
    /// Whether face slot k is within the mirror's reach (an edge term or a face farther than the reach is not).
    bool mirror_reaches(std::uint32_t k) const { return m_on && m_virtual.gap[k] < m_profile.reach; }
    /// The mirror images' share along i's faces in the solvers' symmetric pair form (header, a_ghost): for each
    /// face slot k of i within the mirror's reach (of an object that does not move, unless `with_moving_faces`)
    /// and each mirrored fluid neighbour j in `list` with a slot l of the same face (the same object, normals
    /// within 25 degrees), j's image across the face adds
    /// m (q_i + q_j) grad W(x_i - x_j') along it, x_i - x_j' = (x_i - x_j) along the face and d_i + d_j across.
    /// Pair by pair the images' parts cancel to the bit (no load on a frictionless wall); zero where not
    /// mirrored(i). q: the solver's pressure term per particle, by index.
    template <class Q>
    Vec<D> ghost_share(std::size_t i, const Vec<D>* x, std::span<const std::uint32_t> list, float m, const Q& q,
                       bool with_moving_faces = true) const {
        Vec<D> a = Vec<D>::zero();
        if (!mirrored(i)) return a;
        const float qi = q[i];
        for_each_ghost_pair(i, x, list, [&](std::uint32_t j, bool moving_face, const Vec<D>& rt, float dw, float len) {
            if (with_moving_faces || !moving_face) a += rt * (m * (qi + q[j]) * dw / len);
        });
        return a;
    }
    /// ghost_share's pairs for the fluid at x[0, n) with neighbour lists `lists`, kept until the next call: the
    /// geometry of every pair (its offset along the face, W' and the distance) once per step, for a solver
    /// that sums the share many times at the same positions (DFSPH's Jacobi iterations).
    void cache_ghost_pairs(const Vec<D>* x, const NeighborLists& lists, std::size_t n, const ExecContext& exec);
    /// ghost_share from the pairs of the last cache_ghost_pairs: the same terms in the same order (the same
    /// bits), only the sum over q left per call.
    template <class Q>
    Vec<D> cached_ghost_share(std::size_t i, float m, const Q& q, bool with_moving_faces = true) const {
        Vec<D> a = Vec<D>::zero();
        if (!mirrored(i)) return a;
        const float qi = q[i];
        const auto& block = m_pairs[i / kBlock];
        for (std::uint32_t e = i % kBlock ? m_pair_end[i - 1] : 0; e < m_pair_end[i]; ++e) {
            const GhostPair& p = block[e];
            if (with_moving_faces || !(p.j & kMovingFace)) a += p.rt * (m * (qi + q[p.j & ~kMovingFace]) * p.dw / p.len);
        }
        return a;
    }
    /// The unit normal n (into the fluid) of face slot k of a particle at x (its virtual particle lies on x's
    /// normal to the face); false when x sits on it.
    bool face_normal(std::uint32_t k, const Vec<D>& x, Vec<D>& n) const {
        const Vec<D> off = x - m_virtual.set.position[k];
        const float len = norm(off);
        if (!(len > 0.0f)) return false;
        n = off * (1.0f / len);
        return true;
    }
    /// Per fluid particle: the faces' rho_B (for counting neighbours); off: 0.
    float density(std::size_t i) const { return m_on ? m_virtual.density[i] : 0.0f; }
    /// Per fluid particle: the boundary particles in its list (on: the copies; off: call with the lists).
    std::uint32_t particles(std::size_t i) const { return m_virtual.counts[i]; }
    const VirtualWalls<D>& virtual_walls() const { return m_virtual; }
    /// The virtual particles, the cached pairs and the volume maps (their capacity).
    std::size_t memory_bytes() const;
    /// The walls whose volume map was refused at init (one line each: the wall and why); they keep their particles.
    const std::vector<std::string>& refused_maps() const { return m_volumes.refused; }
    /// The volume maps (their nodes filled so far: those the fluid came near, issue 44).
    const VolumeMaps<D>& volume_maps() const { return m_volumes; }

private:
    // The ball and volume maps of the walls drawn smooth; a wall whose map is refused, and every wall of its
    // object, is drawn from its particles instead (m_walls, m_objects); off when none is left.
    void make_maps(const std::vector<Wall<D>>& walls, const ExecContext& exec);
    // update's first part: m_moving, and the volume maps' blocks the fluid at x[0, n) may read (fill_volume_map).
    void prepare(const std::vector<Wall<D>>& walls, const std::vector<BoundaryMotion<D>>& motions, const Vec<D>* x,
                 std::size_t n, const ExecContext& exec);
    // ghost_share's pairs of particle i in order: f(j, whether k's object moves, the offset along the face
    // rt, W'(len), len) for every (face slot k of i, neighbour j, slot l of j on the same face) within reach.
    template <class F>
    void for_each_ghost_pair(std::size_t i, const Vec<D>* x, std::span<const std::uint32_t> list, F&& f) const {
        const float h2 = m_kernel.h * m_kernel.h;
        const auto& obj = m_virtual.set.object;
        for (std::uint32_t k = first_face(i); k < m_virtual.lists.offsets[i + 1]; ++k) {
            Vec<D> ni;
            // Edge terms: their faces share.
            if (!mirror_reaches(k) || !face_normal(k, x[i], ni)) continue;
            const bool moving_face = moving(obj[k]);
            for (std::uint32_t j : list) {
                if (!mirrored(j)) continue;
                for (std::uint32_t l = first_face(j); l < m_virtual.lists.offsets[j + 1]; ++l) {
                    Vec<D> nj;
                    // j's slot of the same face: the same object, normals within 25 degrees. Every quantity
                    // below is symmetric in (i, k) and (j, l) or flips its sign with r: the pair's two terms
                    // cancel to the bit.
                    if (obj[l] != obj[k] || !mirror_reaches(l) || !face_normal(l, x[j], nj) || !(dot(ni, nj) > 0.9f))
                        continue;
                    const Vec<D> s = ni + nj, n = s * (1.0f / norm(s)), r = x[i] - x[j];
                    const Vec<D> rt = r - n * dot(r, n);
                    const float dn = m_virtual.gap[k] + m_virtual.gap[l], l2 = norm2(rt) + dn * dn;
                    if (!(l2 < h2)) continue;
                    const float len = std::sqrt(l2);
                    f(j, moving_face, rt, m_kernel.derivative(len), len);
                }
            }
        }
    }
    // One pair of cache_ghost_pairs: j (its top bit set when the face's object moves), the offset along the
    // face, W'(len) and len.
    static constexpr std::uint32_t kMovingFace = 0x80000000u;
    struct GhostPair {
        std::uint32_t j;
        Vec<D> rt;
        float dw, len;
    };

    bool m_on = false;
    float m_rest_density = 1000.0f, m_nu = 0.0f, m_radius = 0.0f, m_rho_rest = 0.0f;  // m_rho_rest: rho_B(r)
    SmoothWallProfile<D> m_profile;
    CubicSpline<D> m_kernel;
    VirtualWalls<D> m_virtual;
    std::vector<std::uint8_t> m_walls, m_objects;  // smooth_wall_mask: per wall, per boundary object
    BallMaps m_balls;                              // the solid balls' maps
    VolumeMaps<D> m_volumes;                       // the other solids' and the models' volume maps
    std::vector<std::uint8_t> m_moving;            // per boundary object: moves this step (update)
    std::vector<std::vector<GhostPair>> m_pairs;   // cache_ghost_pairs: per block of kBlock particles
    std::vector<std::uint32_t> m_pair_end;         // per particle: the end of its pairs in its block's
};

extern template struct SmoothWallProfile<2>;
extern template struct SmoothWallProfile<3>;
extern template class SmoothWalls<2>;
extern template class SmoothWalls<3>;

}  // namespace eddy
