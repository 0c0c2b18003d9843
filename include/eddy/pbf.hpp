// eddy: Position Based Fluids (seed 002; Macklin & Mueller 2013, "Position Based Fluids", ACM TOG 32(4))
// with smooth walls (boundary_model "smooth", the default: eddy/smooth_walls.hpp; containers and solid boxes
// from their faces, their edges counted once, balls, cylinders and closed models (bodies' included) from volume
// maps) and single-layer boundary particles (Akinci et al. 2012, calibrated) for ball bodies and open shells
// (and for every wall with boundary_model "particles", seed 002's walls).
//
// Per substep of length dt (Macklin & Mueller, Algorithm 1):
//   v += dt g;  x* = x + dt v                                   (prediction)
//   neighbours of x* (fluid-fluid, fluid-boundary CSR lists)
//   repeat at least `iterations` times, then until the mean compression sum_i C_i / N is at most
//   density_error_target (0.5% by default; at most max_iterations; target 0: exactly `iterations`):
//     rho_i  = sum_j m W_ij + sum_b psi_b W_ib                   (eq. 2, Akinci's boundary term; a smooth
//                                                                  wall's face is one b: its virtual particle)
//     C_i    = max(rho_i / rho0 - 1, 0)                           (eq. 1; clamped: no attraction at the surface)
//     lambda_i = -C_i / (sum_k |grad_k C_i|^2 + eps)              (eq. 11), eps = relaxation * S_lattice
//     dp_i   = (1/rho0) [ sum_j m (lambda_i + lambda_j + s_corr) grad W_ij + sum_b psi_b lambda_i grad W_ib ]  (eq. 12, 14)
//     s_corr = -k (W(r_ij) / W(dq h))^n * lambda_ref              (eq. 13, Monaghan 2000), lambda_ref = 1 / S_lattice
//     x* += dp; keep x* inside the walls                          (collision)
//   pressure (output only): p_i = -rho0 sum_iterations lambda_i / dt^2, the pressure whose SPH force
//     -sum_j m (p_i + p_j) / rho0^2 grad W_ij moves the particle by the same corrections in dt
//   v = (x* - x) / dt
//   vorticity confinement: omega_i = sum_j (m/rho_j) v_ij x grad_j W_ij, eta = grad |omega|,
//     N = eta / |eta|, v += dt eps_v (N x omega)                  (eq. 15, 16)
//   XSPH: v_i += c sum_j (m/rho_j) (v_j - v_i) W_ij              (eq. 17)
//         + c_wall sum_b (psi_b/rho0) (v_b - v_i) W_ib            (the same against the walls: friction)
//   x = x*
// A smooth wall's face near i is a virtual wall particle (SmoothWalls: the fluid's mirror image, whose
// gradient is twice a held wall's, so its lambda_i term is the image's lambda_i + lambda_i), built once per
// substep at x*; it stays put through the iterations like a wall particle (the density it adds as i moves
// towards the face is rho_B's own to first order). Its friction is the wall XSPH above and, as DFSPH's and
// WCSPH's faces, the law of the wall (SmoothWalls::shear, wall_law_viscosity) in the same velocity update.
// The walls' loads (boundary.load, wall_loads.hpp): the wall particles' share of the corrections,
// summed per pair over the iterations (dx_ib), is a force m dx_ib / dt^2 on i; the collision's
// displacement dx_c and the wall XSPH's velocity change dv_w are impulses m (dx_c / dt + dv_w). A step's
// load is the mean over its substeps (sum F_sub dt_sub / dt).
// A body (eddy/bodies.hpp) gives way within the iterations (pbf_bodies.cpp, eddy/body_coupling.hpp): the
// density sees it where the engine will put it at the substep's end, moved by every iteration's reaction
// to its pairs' corrections, as its loads will move it.
// S_lattice = sum_k |grad_k C_i|^2 for a particle inside a full lattice of spacing 2r: the constraint
// relaxation and the tensile term are given relative to it, so their defaults hold at any scale.
// All loops gather (Jacobi): every particle writes only its own values, whatever the thread count.
#pragma once
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/body_coupling.hpp"
#include "eddy/boundary.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/kernels.hpp"
#include "eddy/halo.hpp"
#include "eddy/neighborhood.hpp"
#include "eddy/particles.hpp"
#include "eddy/settings.hpp"
#include "eddy/smooth_walls.hpp"
#include "eddy/wall_loads.hpp"
#include "eddy/wcsph.hpp"  // StepStats

namespace eddy {

struct PbfSettings {
    float rest_density = 1000.0f;       ///< Rest density rho0 (kg/m^3; kg/m^2 in 2D)
    int iterations = 2;                   ///< Constraint iterations per substep: the fewest with a target, all without
    float density_error_target = 0.005f;  ///< Mean compression to iterate down to (fraction); 0: fixed `iterations`
    int max_iterations = 50;              ///< Bound on iterations when a target is set
    float relaxation = 0.01f;           ///< eps of eq. 11, relative to S_lattice (dimensionless)
    float tensile_k = 0.1f;             ///< s_corr strength k (eq. 13)
    int tensile_n = 4;                  ///< s_corr exponent n
    float tensile_dq = 0.2f;            ///< s_corr reference distance |dq| as a fraction of h
    float xsph = 0.01f;                 ///< XSPH viscosity c (eq. 17)
    float wall_xsph = 0.1f;             ///< The same smoothing towards the walls' velocity (wall friction)
    float vorticity = 0.0f;             ///< Vorticity confinement eps (m/s): a = eps N x omega
    float time_step = 0.0f;             ///< Time step (s); 0: 0.5 * 2r / sqrt(2 g H), H the initial fluid height
    int substeps = 1;                   ///< Substeps per time step
    float support_ratio = 4.0f;         ///< Kernel support h / particle radius r
    int sort_interval = 32;             ///< Steps between Morton reorderings (0: never)
    std::string boundary_model = "smooth";  ///< smooth: closed containers from their shapes; particles: Akinci's layer
    float wall_law_viscosity = 1.0e-6f;  ///< Smooth walls: the law of the wall's kinematic viscosity (m^2/s; water's); 0: the faces slip
};

/// The field table of PbfSettings (scene "settings" for "method": "pbf").
std::span<const Field<PbfSettings>> pbf_fields();

template <int D>
class PbfSolver {
public:
    /// Validates the settings (InputError naming `where` and the key). fluid_height (m) sets the automatic
    /// time step; walls are the analytic containers and obstacles for the collision step.
    PbfSolver(const PbfSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
              std::vector<Wall<D>> walls = {}, const std::string& where = "settings");

    /// Boundary pseudo-masses (Akinci, single layer), particle mass, first reorder.
    void init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec);
    /// The wall particles' pseudo-masses psi alone, as init() computes them (walls built after init: issue 44).
    void compute_wall_volumes(BoundarySet<D>& boundary, const ExecContext& exec) const;
    /// The fixed time step (s).
    float suggest_dt(const ParticleSet<D>&) const { return m_dt; }
    /// PBF has no adaptive step to fall below.
    float min_dt() const { return 0.0f; }
    /// Advances by dt (s) in `substeps` substeps; t (s) is the start (for moving boundaries).
    StepStats step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, const ExecContext& exec);

    nlohmann::json describe() const;
    const PbfSettings& settings() const { return m_s; }
    const CubicSpline<D>& kernel() const { return m_kernel; }
    float particle_mass() const { return m_mass; }
    /// Constraint iterations taken by the last substep.
    int last_iterations() const { return m_last_iterations; }
    std::size_t memory_bytes() const;
    const SmoothWalls<D>& smooth_walls() const { return m_smooth; }
    /// The state a step hands to the next beyond the particles (checkpoint and resume).
    void save_state(StateWriter& w) const;
    void load_state(StateReader& r);

    /// A run over several processes (eddy/halo.hpp): the particle set holds ghosts after the owned
    /// particles; statistics are owned particles' over every process. Null (the default): one process.
    void set_halo(Halo<D>* halo) { m_halo = halo; }
    /// The neighbour search radius (m): every particle within it of an owned one must be held.
    float neighbor_radius() const { return m_neighbors.radius(); }

private:
    Halo<D>* m_halo = nullptr;
    // step_dt: the whole step's length, which weighs the substep's loads (dt / step_dt of the step's).
    void substep(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, float step_dt,
                 const ExecContext& exec, StepStats& stats);
    void resize_buffers(std::size_t n);  // the per-particle buffers of a substep
    // The passes of substep(), in order (pbf.cpp, each with its equations).
    struct DensityMeasure {
        float emax = 0.0f;          // the largest compression (rho / rho0 - 1)
        std::uint32_t densest = 0;  // the (first) particle at emax
        ExactSum esum;              // order-independent: the same on any number of processes
    };
    struct SpeedMeasure {
        float vmax = 0.0f;  // the fastest particle (m/s)
        bool bad = false;   // a speed or a position not finite
    };
    void predict_positions(ParticleSet<D>& fluid, float dt, const ExecContext& exec);
    DensityMeasure solve_density(ParticleSet<D>& fluid, const BoundarySet<D>& walls, float dt, const ExecContext& exec,
                                 StepStats& stats);
    DensityMeasure constraint_lambdas(ParticleSet<D>& fluid, const BoundarySet<D>& walls, const ExecContext& exec);
    void correct_positions(ParticleSet<D>& fluid, const BoundarySet<D>& walls, float p_scale, const ExecContext& exec);
    SpeedMeasure smooth_velocities(ParticleSet<D>& fluid, const BoundarySet<D>& walls, float dt, const ExecContext& exec);
    void add_substep_loads(const ParticleSet<D>& fluid, const BoundarySet<D>& walls, float dt, float step_dt,
                           const ExecContext& exec);
    void vorticity_confinement(ParticleSet<D>& fluid, float dt, const ExecContext& exec);  // eq. 15, 16
    // Bodies that give way within the constraint iterations (pbf_bodies.cpp): the pairs and where each
    // body will be at the substep's end (begin; false: no mobile body), then each iteration's push on them.
    bool begin_body_coupling(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const BoundarySet<D>& walls,
                             double t, float dt, const ExecContext& exec);
    void push_bodies(float dt, const ExecContext& exec);

    PbfSettings m_s;
    float m_r, m_mass = 0.0f, m_dt = 0.0f, m_eps = 0.0f, m_lambda_ref = 0.0f, m_w_dq = 0.0f;
    Vec<D> m_g;
    std::vector<Wall<D>> m_walls;
    CubicSpline<D> m_kernel;
    FluidNeighborhood<D> m_neighbors;
    std::vector<Vec<D>> m_old_x, m_dx, m_scratch_v;
    std::vector<Vec3> m_omega;  // vorticity; in 2D only z is used
    std::vector<float> m_lambda, m_omega_len;
    int m_last_iterations = 0;
    // The walls' loads: each wall pair's corrections over the substep's iterations (m, one per slot of
    // the boundary lists), each particle's collision displacement then wall velocity change (m/s).
    WallLoadGather<D> m_loads;
    std::vector<Vec<D>> m_pair_dx, m_wall_dv;
    SmoothWalls<D> m_smooth;  // on: boundary_model "smooth" and a container to draw so
    // The mobile bodies and each fluid particle's pairs with them (eddy/body_coupling.hpp); per particle
    // the density their motion over the substep adds (kg/m^D) and lambda's relaxation; per body, since the
    // step's start, its velocity change and its displacement beyond its poses (the engine's to apply).
    BodyCoupling<D> m_bodies;
    std::vector<float> m_body_rho, m_body_relax;
    std::vector<typename BodyCoupling<D>::Change> m_body_dv, m_body_extra;
};

extern template class PbfSolver<2>;
extern template class PbfSolver<3>;

}  // namespace eddy
