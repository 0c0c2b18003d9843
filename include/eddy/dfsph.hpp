// eddy: divergence-free SPH (Bender & Koschier 2015, "Divergence-free smoothed particle hydrodynamics",
// SCA; 2017, "Divergence-free SPH for incompressible and viscous fluids", IEEE TVCG 23(3)), with
// Akinci et al. 2012 boundary particles, in 2D and 3D.
//
// Walls (boundary_model): by default the closed containers and solid boxes (bodies' included) are smooth walls
// (eddy/smooth_walls.hpp): each face near particle i is one virtual wall particle b whose psi_b W_ib and
// psi_b grad W_ib are the density and the push of the fluid's mirror image (the bottom row then rests at r
// with the hydrostatic pressure), plus a pressure-independent push with gravity (the mirror's hydrostatic
// part) and, in both solves, the mirror images' share along the faces (ghost_share); balls, cylinders and
// closed models (bodies' included) through volume maps, the same terms; ball bodies and open shells stay
// Akinci particles, in the same lists. The sums over b below run over both.
//
// Two pressure solvers make the velocity field divergence-free (no density change) and the density
// constant (no compression). Both are Jacobi iterations on one "stiffness" per particle; here it is
// kept as P_i = p_i / rho_i^2 (m^5 kg^-1 s^-2), so the pressure of the outputs is p_i = P_i rho_i^2.
//
// A pressure P changes the velocities by the symmetric SPH pressure force, the walls pushing with
// the particle's own pressure (Akinci et al. 2012), or, with extrapolated_wall_pressure (off by default:
// not yet robust, below), with it plus the pressure extrapolated to the wall particles (Band, Gissler,
// Ihmsen & Teschner 2018, "Pressure boundaries for implicit incompressible SPH", ACM TOG 37(2), its
// Shepard form):
//   dv_i = -dt [ sum_j m (P_i + P_j) grad W_ij + sum_b psi_b (P_i + P_b) grad W_ib ]            (2017 eq. 9)
//   P_b = sum_j' w_ij' P_j' + [max(0, sum_j' w_ij' g.(x_i - x_j')) + g.(x_b - x_i)] / rho_i
// with j' over i's fluid neighbours and i itself, w_ij' = W_ij' / sum W (Shepard weights): the pressure of
// the fluid around i, carried hydrostatically to x_i and on to the wall particle. The bracket does not
// depend on P: it acts once per step, with gravity. Without P_b (the Akinci et al. 2012 form,
// extrapolated_wall_pressure off) a particle at rest at r from a wall, where the wall's
// gradient sum mirrors the fluid's, is pushed off the wall with its own pressure only while the row
// above pushes it down with both: the bottom row sinks (to r/2 in 2D, to the guard in 3D) and carries
// 1.2-2.4x the hydrostatic pressure (docs/methods.md, "Walls with an extrapolated pressure").
// The density changes at the rate
//   Drho_i/Dt = sum_j m (v_i - v_j) . grad W_ij + sum_b psi_b (v_i - v_b) . grad W_ib             (2017 eq. 4)
// Without the extrapolated pressure the update is the transpose of the rate, and a converged solve a
// projection; with it the update pushes harder at the walls than the rate sees. Taking P_b = P_i there
// instead of the neighbourhood's average (a plainly mirrored pressure) makes the tank at rest gain
// energy (docs/methods.md); the average smooths the solver's particle-to-particle noise out of the push,
// and tanks of whole spacings settle, but the 30 cm tank at r = 4 mm, whose last column falls
// into the builder's 4 mm slot, keeps swinging (+-50% of rho0 g d): hence off by default.
// One Jacobi step assumes each particle's own P moves it and its neighbours, which gives the factor
//   alpha_i = 1 / ( F_i . (F_i + w_ii Fb_i) + sum_j |m grad W_ij|^2 ),
//   F_i = sum_j m grad W_ij + Fb_i,  Fb_i = sum_b psi_b grad W_ib                                 (2017 eq. 8)
// (w_ii Fb_i: P_i's share of the wall's push through P_b; 0 without the extrapolated pressure.)
// (Bender & Koschier's alpha is rho_i times this: they solve for kappa_i = p_i / rho_i = P_i rho_i.)
//
// Per step of length dt:
//   1. neighbours (fluid-fluid, fluid-boundary CSR lists); rho_i = sum_j m W_ij + sum_b psi_b W_ib; alpha_i;
//      per pair m grad W_ij is kept for the solvers, which never recompute a kernel
//   2. divergence solver (2017 Algorithm 3) on the velocities the step starts with:
//        dP^v_i = Drho_i/Dt alpha_i / dt   (P^v = 0 for particles with too few neighbours: the free surface)
//      until mean(max(Drho/Dt, 0)) dt / rho0 <= divergence_error_target
//   3. gravity: v* = v + dt g; with a viscosity, the implicit viscosity of Weiler et al. 2018 (CG on
//      (I - dt L) v = v* + dt a_walls, dfsph_viscosity.cpp)
//   4. density solver (2017 Algorithm 2):
//        rho*_i = rho_i + dt Drho_i/Dt (v*),  dP_i = (rho*_i - rho0) alpha_i / dt^2
//      until mean(max(rho* - rho0, 0)) / rho0 <= density_error_target, less (correct_prediction) the
//      compression the previous step ended with beyond its own prediction, times (dt / dt_prev)^2: the
//      linear prediction misses the kernel's curvature, mostly at the walls (docs/methods.md), and
//      so the compression a step ends with, not only its prediction, keeps to the target; and, with
//      density_error_max > 0, until max(rho* - rho0) / rho0 <= density_error_max as well (impacts and
//      walls hide a few strongly compressed particles in the mean; docs/methods.md)
//   5. x += dt v*; v = v* + XSPH (Schechter & Bridson 2012: c sum_j m/rho0 (v_j - v_i) W_ij, from the
//      velocities the step started with); the walls' shapes guard the boundary particles as in WCSPH.
// Both solvers start from a fraction of their pressures of the previous step (warm starts, 2017
// section 4.3) and iterate Jacobi steps that only add pressure (the paper's clamping: fluid pushes,
// never pulls). Tried and dropped (docs/methods.md): letting an iteration also lower a pressure
// (projected Jacobi) diverges at full step and in 3D dam breaks even at half step; a full warm start
// (1.0) ratchets the pressure up step after step; walls with a mirrored pressure (beta = 2) make the
// update no longer the transpose of the rate and pump energy into a tank at rest (the extrapolated
// pressure above, averaged over the neighbourhood, much less so).
// (The paper's loop ends with the divergence solver; here it opens the next step, on the same
// neighbour lists and densities: one neighbour search and one density pass per step, as in the paper.)
// Time step: dt = cfl 2r / (v_max + |g| dt_prev) (2017 section 4.4), and g dt^2 <= (cfl/40) 2r (a deep
// column at rest needs many Jacobi iterations to carry its weight when gravity moves it further per
// step), in [dt_min, dt_max]; and dt <= dt_growth dt_prev, the first step a quarter of those limits:
// fluid released without pressure (a cold start) compresses at its walls faster than the density
// solver, which carries the weight down about one row per iteration, can follow at full step (the 2D
// dam break's steps ended 1.8x above the density target in its first 15 ms; docs/methods.md).
// Every loop gathers: each particle writes only its own values, whatever the thread count.
#pragma once
#include <span>
#include <string>
#include <utility>
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

struct DfsphSettings {
    float rest_density = 1000.0f;             ///< Rest density rho0 (kg/m^3; kg/m^2 in 2D)
    float density_error_target = 0.0005f;     ///< Mean compression the density solver iterates down to (fraction)
    bool correct_prediction = true;           ///< Aim below the target by what the last step's linear prediction missed
    float density_error_max = 0.0f;           ///< Density solver: also iterate until no particle's predicted compression exceeds this (fraction); 0: the mean alone
    float divergence_error_target = 0.001f;   ///< Mean density change per step the divergence solver allows (fraction)
    int min_iterations = 1;                   ///< Density solver: at least this many iterations
    int max_iterations = 100;                 ///< Density solver: at most this many
    int min_divergence_iterations = 1;        ///< Divergence solver: at least
    int max_divergence_iterations = 100;      ///< Divergence solver: at most
    float warm_start = 0.5f;                  ///< Fraction of the previous step's pressures the density solver starts from
    float divergence_warm_start = 0.5f;       ///< The same for the divergence solver
    float viscosity = 0.0f;                   ///< Kinematic viscosity nu (m^2/s), implicit (Weiler et al. 2018); water 1e-6, honey ~1e-2
    float wall_viscosity = 0.0f;              ///< The same against the walls (m^2/s): friction, no-slip as it grows
    float wall_law_viscosity = 1.0e-6f;       ///< Smooth walls: the law of the wall's kinematic viscosity (m^2/s; water's); 0: the faces slip
    float viscosity_error_target = 0.01f;     ///< Viscosity solver: iterate until |residual| <= this |the step's viscous change|
    int max_viscosity_iterations = 100;       ///< Viscosity solver: at most this many conjugate gradient iterations
    float xsph = 0.05f;                       ///< XSPH velocity smoothing c (dimensionless)
    float wall_xsph = 0.0f;                   ///< The same towards the walls' velocity (wall friction)
    float cfl = 0.4f;                         ///< CFL number: dt <= cfl 2r / v_max
    float dt_min = 1e-6f;                     ///< Smallest time step (s); a run that needs less has diverged
    float dt_max = 5e-3f;                     ///< Largest time step (s)
    float fixed_dt = 0.0f;                    ///< Fixed time step (s); 0: adaptive (CFL)
    float dt_growth = 1.05f;                  ///< The step grows by at most this factor per step, from a quarter of its limit at the first; 0: off
    float support_ratio = 4.0f;               ///< Kernel support h / particle radius r
    int sort_interval = 32;                   ///< Steps between Morton reorderings of the particles (0: never)
    std::string boundary_model = "smooth";    ///< smooth: walls from their shapes (eddy/smooth_walls.hpp); particles: Akinci's
    bool extrapolated_wall_pressure = false;  ///< Walls push with P_i + P_b, P_b extrapolated from the fluid (Band et al. 2018); off: P_i alone (Akinci 2012)
};

/// The field table of DfsphSettings (scene "settings" for "method": "dfsph").
std::span<const Field<DfsphSettings>> dfsph_fields();

template <int D>
class DfsphSolver {
public:
    /// Validates the settings (InputError naming `where` and the key). walls: the scene's walls as
    /// shapes, a guard behind the boundary particles (as in WCSPH).
    DfsphSolver(const DfsphSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                std::vector<Wall<D>> walls = {}, const std::string& where = "settings");

    /// Boundary pseudo-masses (Akinci, double layer), particle mass, first reorder, solver fields.
    void init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec);
    /// The wall particles' pseudo-masses psi alone, as init() computes them (walls built after init: issue 44).
    void compute_wall_volumes(BoundarySet<D>& boundary, const ExecContext& exec) const;
    /// The next time step (s): CFL on the largest speed and on the gravity waves, the gravity limit, clamped to
    /// [dt_min, dt_max].
    float suggest_dt(const ParticleSet<D>& fluid) const;
    /// Advances by dt (s); t (s) is the start of the step (for moving boundaries). The density error in
    /// the statistics is that of the positions the step starts from (the previous step's result).
    StepStats step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, const ExecContext& exec);

    float min_dt() const { return m_s.fixed_dt > 0.0f ? 0.0f : m_s.dt_min; }
    nlohmann::json describe() const;
    const DfsphSettings& settings() const { return m_s; }
    const CubicSpline<D>& kernel() const { return m_kernel; }
    float particle_mass() const { return m_mass; }
    /// Mean compression the last density solve predicted when it stopped (fraction).
    float last_predicted_error() const { return m_last_predicted; }
    std::size_t memory_bytes() const;
    const SmoothWalls<D>& smooth_walls() const { return m_smooth; }
    /// The state a step hands to the next beyond the particles (checkpoint and resume).
    void save_state(StateWriter& w) const;
    void load_state(StateReader& r);

    /// Names of the per-particle fields the solver keeps in the ParticleSet (warm starts).
    static constexpr const char* kPressureField = "dfsph_P";
    static constexpr const char* kDivergencePressureField = "dfsph_Pv";
    static constexpr const char* kViscosityField = "dfsph_viscous_dv";  // the viscosity solve's correction (warm start)

    /// A run over several processes (eddy/halo.hpp): the particle set holds ghosts after the owned
    /// particles; statistics are owned particles' over every process. Null (the default): one process.
    void set_halo(Halo<D>* halo) { m_halo = halo; }
    /// The neighbour search radius (m): every particle within it of an owned one must be held.
    float neighbor_radius() const { return m_neighbors.radius(); }
    /// The fluid's neighbourhood for a reader between two steps (FluidNeighborhood::refresh_fluid: the
    /// next step keeps what it searched); null over several processes, whose lists hold ghosts.
    FluidNeighborhood<D>* neighborhood_between_steps() { return m_halo ? nullptr : &m_neighbors; }

private:
    Halo<D>* m_halo = nullptr;
    // The boundary particles' pseudo-masses and the smooth walls' profile and mask (init).
    void init_walls(BoundarySet<D>& boundary, const ExecContext& exec);
    // The walls' move to the step, the fluid's reordering and lists, and the smooth walls' virtual particles.
    void update_neighbors(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, const ExecContext& exec);
    // The smooth walls' hydrostatic push and shear (eddy/smooth_walls.hpp) on the fluid at density rho
    // moving at v, over dt, into m_wall_push (m/s^2).
    void set_smooth_wall_push(const float* rho, const Vec<D>* x, const Vec<D>* v, std::size_t n, float dt,
                              const ExecContext& exec);
    // The walls as the solver sees them: the smooth walls' virtual particles, or the boundary particles.
    const NeighborLists& wall_lists() const { return m_smooth.lists(m_neighbors.boundary()); }
    const BoundarySet<D>& wall_set(const BoundarySet<D>& b) const { return m_smooth.set(b); }
    // The wall neighbours particle i counts for the free-surface test: the smooth walls count as many
    // particles as the share of a full neighbourhood their density stands for.
    std::uint32_t wall_neighbors(std::size_t i) const {
        if (!m_smooth.on()) return static_cast<std::uint32_t>(m_neighbors.boundary()[i].size());
        return m_smooth.particles(i) +
               static_cast<std::uint32_t>(m_full_neighbors * m_smooth.density(i) / m_s.rest_density + 0.5f);
    }
    // The Jacobi velocity update dv_i = -dt [dK_i F_i + sum_j m dK_j grad W_ij] (2017 eq. 9) and the smooth
    // faces' mirror share (cached_ghost_share; with_moving_faces: the moving objects' faces too, not in the
    // divergence solve); K (if not null) accumulates dK.
    void apply_pressure(const float* dK, float* K, Vec<D>* v, float dt, bool with_moving_faces,
                        const ExecContext& exec) const;
    // The step's per-particle buffers at n particles.
    void resize_buffers(std::size_t n);
    // One step's views of the fluid and the walls, shared by its passes (step() lists them in order).
    struct StepView {
        std::size_t n = 0, owned = 0, count = 0;  // particles here, owned here, owned over every process
        Vec<D>* x = nullptr;
        Vec<D>* v = nullptr;
        float* rho = nullptr;
        float* P = nullptr;   // the density solver's pressures P = p / rho^2
        float* Pv = nullptr;  // the divergence solver's
        const Vec<D>* xb = nullptr;  // the walls as the solver sees them (wall_set)
        const Vec<D>* vb = nullptr;
        const float* psi = nullptr;
        const std::uint32_t* off = nullptr;  // the fluid pairs (CSR)
        const std::uint32_t* idx = nullptr;
        bool bodies = false;  // bodies give way within the solves (begin_body_coupling)
    };
    struct Residual {
        double mean;  // the solver's mean error, a fraction of rho0
        float max;    // the largest (with TrackMax)
    };
    StepView step_view(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, std::size_t ip, std::size_t iq) const;
    // The passes of step(), in order (dfsph.cpp, each with its equations).
    void densities_and_factors(const StepView& view, StepStats& out, const ExecContext& exec);
    template <bool TrackMax>
    Residual pressure_residual(const StepView& view, bool divergence, float h, bool fresh, const ExecContext& exec);
    std::pair<int, double> solve_pressure(const StepView& view, float* K, bool divergence, int min_it, int max_it,
                                          float target, float max_target, float h, bool fresh_rates,
                                          const ExecContext& exec);
    bool non_pressure_forces(const StepView& view, ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt,
                             StepStats& out, const ExecContext& exec);
    float density_target(float start_error, float dt) const;
    void advance_positions(const StepView& view, ParticleSet<D>& fluid, float dt, StepStats& out,
                           const ExecContext& exec);
    // The implicit viscosity (dfsph_viscosity.cpp): v <- (I - dt L)^-1 (v + dt a_walls); returns the
    // conjugate gradient iterations (0 without viscosity).
    int solve_viscosity(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, float dt, const ExecContext& exec);
    // The walls' loads (dfsph_loads.cpp, eddy/wall_loads.hpp), in three passes over the wall pairs: the
    // friction of the implicit viscosity (after it), the pressure of both solvers (after them), the
    // walls' XSPH and guard as impulses, reduced over the processes into boundary.load (after step 5).
    void begin_wall_loads(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, double t, float dt,
                          const ExecContext& exec);
    void add_pressure_wall_loads(const ParticleSet<D>& fluid, const float* P, const float* Pv, const BoundarySet<D>& boundary,
                                 const ExecContext& exec);
    void finish_wall_loads(const ParticleSet<D>& fluid, BoundarySet<D>& boundary, float dt, const ExecContext& exec);
    // Bodies that give way within the pressure solves (dfsph_bodies.cpp): the pairs of each fluid particle
    // with each body it touches (begin; false: none), the bodies' velocity change from a pressure increment
    // dK (push) and from gravity (fall), each seen by the walls' share of Drho/Dt at once.
    bool begin_body_coupling(const ParticleSet<D>& fluid, const BoundarySet<D>& boundary, double t, const ExecContext& exec);
    void push_bodies(const float* dK, float dt, const ExecContext& exec);
    void fall_bodies(const Vec<D>& gdt, const ExecContext& exec);
    void change_body_rates(const std::vector<std::array<double, 6>>& dv, const ExecContext& exec);

    DfsphSettings m_s;
    float m_r, m_wave_dt, m_mass = 0.0f, m_last_dt = 0.0f, m_vmax = 0.0f, m_last_predicted = 0.0f;  // m_wave_dt: wave_step (s)
    Vec<D> m_g;
    std::vector<Wall<D>> m_walls;
    CubicSpline<D> m_kernel;
    FluidNeighborhood<D> m_neighbors;
    SmoothWalls<D> m_smooth;            // on: boundary_model "smooth" and the scene has a container to draw so
    std::uint32_t m_full_neighbors = 0; // neighbours of a particle inside a full lattice
    std::uint32_t m_min_neighbors = 0;  // fewer (fluid + wall) neighbours: a free-surface particle
    float m_alpha_floor = 0.0f;         // alpha's denominator below this: an isolated particle, alpha = 0
    float m_viscosity_factor = 1.0f;    // the SPH Laplacian's value on a full lattice over the exact one (constructor)
    // Per step: per fluid pair m grad W_ij and the Shepard weight w_ij (aligned with the fluid CSR lists);
    // per particle alpha, F, Fb = sum_b psi_b grad W_ib, the walls' share of Drho/Dt, the density rate,
    // the pressure increment, the XSPH term, w_ii and the walls' pressure-independent push (the
    // bracket of P_b above).
    std::vector<float> m_alpha, m_dP, m_wall_rate, m_rate, m_w, m_wself;
    std::vector<Vec<D>> m_grad, m_F, m_Fb, m_xsph, m_wall_push;
    // The fluid's force on each boundary object (wall_loads.hpp); per particle the velocity the walls
    // changed outside the pressure pairs: their XSPH share and the guard (m/s).
    WallLoadGather<D> m_loads;
    std::vector<Vec<D>> m_wall_dv;
    std::vector<float> m_load_avg, m_load_lift;  // extrapolated wall pressure: per particle avg_i, max(0, lift_i)
    std::vector<std::uint8_t> m_surface;
    BodyCoupling<D> m_bodies;  // the mobile bodies and each fluid particle's pairs with them (eddy/body_coupling.hpp)
    // Viscosity solve: per pair factor, per particle inverted diagonal block, conjugate gradient vectors.
    std::vector<float> m_visc_pair, m_visc_block;
    std::vector<Vec<D>> m_visc_b, m_visc_r, m_visc_z, m_visc_p, m_visc_q;
};

extern template class DfsphSolver<2>;
extern template class DfsphSolver<3>;

}  // namespace eddy
