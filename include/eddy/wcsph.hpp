// eddy: weakly compressible SPH (seed 003; Becker & Teschner 2007, "Weakly compressible SPH for free
// surface flows"; Monaghan 1992/1994; smooth container walls by default, eddy/smooth_walls.hpp, and boundary
// particles after Akinci et al. 2012 for every other wall).
//
// Per step (symplectic Euler, operator splitting as in the seed):
//   1. neighbours: fluid-fluid and fluid-boundary CSR lists (hashed grid, Morton reordering);
//   2. density     rho_i = sum_j m W_ij + sum_b psi_b W_ib                          (seed eq. d)
//   3. pressure    p_i = B ((rho_i / rho0)^gamma - 1), B = rho0 c0^2 / gamma          (Tait, seed eq. h)
//   4. accel.      a_i = -sum_j m (p_i/rho_i^2 + p_j/rho_j^2) grad W_ij                (seed eq. f)
//                        - sum_b psi_b ((p_i + p_b) / rho_i^2) grad W_ib   (the wall particle as fluid)
//                        + viscosity + g,
//                  p_b = p_i + rho_i g . (x_b - x_i)   (hydrostatic_walls; Adami, Hu & Adams 2012, eq. 27,
//                        with the particle itself as the one fluid neighbour; off: p_b = p_i, mirrored)
//                  With the smooth walls (boundary_model "smooth", the default; eddy/smooth_walls.hpp) each
//                  face of a closed container near i is one virtual wall particle b, the fluid's mirror
//                  image: its psi_b W and psi_b grad W are the image's density and (doubled) gradient, so
//                  its term is - psi_b (p_i / rho_i^2) grad W_ib, and the image's hydrostatic pressure is
//                  the push a_i += hold_i (hydrostatic_walls; as DFSPH's, in full at rho0, none below 0.8 rho0).
//                  Solid boxes (bodies' included) are drawn so too, and the mirror images' share along the
//                  faces (ghost_share) adds to a_i. Balls, cylinders and closed models (bodies' included)
//                  act through volume maps; ball bodies and shells keep their boundary particles and the
//                  terms above.
//   5. v += a dt, x += v dt.
// Time step: dt = cfl * min(2r / v_max, h / (c0 + v_max), sqrt(h / a_max)), clamped to [dt_min, dt_max].
//
// A tank at rest. Fluid built at rest on the lattice of spacing 2r has rho = rho0 and p = 0 everywhere,
// a column far from equilibrium: it falls, overshoots and rings at its quarter-wave acoustic period
// 4H/c0 (0.045 s for 24 cm of water, c0 = 21.7 m/s; measured 22.3 Hz), which the artificial viscosity
// damps only over seconds (the swing at 10 cm depth: +-45% at 0.3 s, +-35% at 1 s). Frames every 0.05 s
// sample that 22.3 Hz ringing at 20 Hz and show it aliased, |22.3 - 20| = 2.3 Hz: the 0.4 s "bounce".
// A box side that is not a multiple of 2r adds a slot beside a wall (the fluid block stops short of it),
// and the column beside it, with no pressure, falls in. Three settings make the tank start and stay at rest:
//   hydrostatic_start (init(), below), hydrostatic_walls (step 4: mirrored pressure lacks the weight
//   between a particle and the wall particles below it, so the lowest row sank), and the artificial
//   viscosity's default 0.1 (0.05 before): a square lattice is not the particles' stable packing under
//   pressure (rows over the wall particles and the top row slide sideways into the hollows in the first
//   half second), and at 0.05 that rearrangement kept the pressure swinging by up to 10% of rho0 g d.
// Density diffusion (delta-SPH, Molteni & Colagrossi 2009, Antuono et al. 2010) is not used: it is a
// term of the continuity equation, d rho_i/dt = ... + delta h c0 sum_j psi_ij . grad W_ij V_j, and the
// density here is a sum over positions with nothing integrated to diffuse; nor would it damp this mode,
// whose wavelength 4H is 60 h (a diffusion rate delta h c0 k^2 / 2 = 0.7/s for delta = 0.1).
//
// Hydrostatic start (hydrostatic_start, init()): fluid at rest is compressed, from its positions alone,
// to the discrete hydrostatic state:
//   columns: bins of width 2r across gravity; in each, runs of particles along gravity spaced about 2r
//            (a gap over 3r starts a new run: a drop above a pool); a particle of mass m stands for a
//            cell of side 2r at rho0, so the k-th particle from the top of a run (k = 0, 1, ...) carries
//            the weight of d_k = (2k + 1) r of fluid at rest density: d_k is its depth in mass;
//   SPH equilibrium on a lattice: sum_j m (p_i/rho_i^2 + p_j/rho_j^2) grad W_ij = -C grad p / rho
//            (seed eq. f, Taylor-expanded), C = (m/rho0) sum_lattice (e_g . x)^2 / |x| |W'(|x|)| (1.012 in
//            2D, 1.020 in 3D with h = 4r), so a column is at rest when p(d) = rho0 g d / C;
//   Tait (seed eq. h): rho(d) = rho0 (1 + p(d) / B)^(1/gamma);
//   the summation density answers a compression along gravity by the same factor C (the derivative
//            of the lattice sum is the sum above), so consecutive particles of a run end up
//            2r lambda apart, lambda = 1 / (1 + (rho(d)/rho0 - 1) / C), d the depth between them, the lowest
//            particle of the run staying where it is;
//   then the density by summation, walls included, is matched to rho(d) particle by particle (the rows
//            beside a wall take part of their density from wall particles, which do not compress), and
//            rows across gravity that stop short of a wall by less than a particle are first widened to
//            reach it (the lost density made up along gravity). See start_hydrostatic() in wcsph_hydrostatic_start.cpp.
// Only runs at rest (v = 0) are moved. The result depends on the runs' ranks and measured widths, not
// on their spacing along gravity, so calling init() again (the viewer does, on settings changes) leaves
// the particles where they are (3e-8 m in the test).
#pragma once
#include <array>
#include <cstring>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "eddy/boundary.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/kernels.hpp"
#include "eddy/halo.hpp"
#include "eddy/neighborhood.hpp"
#include "eddy/particles.hpp"
#include "eddy/pass_times.hpp"
#include "eddy/settings.hpp"
#include "eddy/smooth_walls.hpp"
#include "eddy/wall_loads.hpp"

namespace eddy {

struct WcsphSettings {
    float rest_density = 1000.0f;    ///< Rest density rho0 (kg/m^3; kg/m^2 in 2D)
    float speed_of_sound = 0.0f;     ///< Numerical speed of sound c0 (m/s); 0: 10 sqrt(2 g H), H the fluid height (Mach <= 0.1)
    float stiffness = 0.0f;          ///< Tait stiffness B (Pa); 0: rho0 c0^2 / gamma. Setting it fixes c0 = sqrt(gamma B / rho0)
    float exponent = 7.0f;           ///< Tait exponent gamma
    bool clamp_pressure = true;      ///< Clamp negative pressure to 0 (no tensile instability at the free surface)
    float viscosity = 0.0f;          ///< Key seed_viscosity (once "viscosity"): the seed's velocity smoothing nu (1/s): a_i += nu sum_j m 2/(rho_i+rho_j) (v_j - v_i) W_ij
    float artificial_viscosity = 0.1f;   ///< Monaghan artificial viscosity alpha (dimensionless); 0.05 before the still-tank fix
    float boundary_viscosity = 0.05f;    ///< The same between fluid and walls (dimensionless)
    float cfl = 0.4f;                ///< CFL number lambda
    float dt_min = 1e-6f;            ///< Smallest time step (s); a run that needs less has diverged
    float dt_max = 5e-3f;            ///< Largest time step (s)
    float fixed_dt = 0.0f;           ///< Fixed time step (s); 0: adaptive
    float support_ratio = 4.0f;      ///< Kernel support h / particle radius r
    int sort_interval = 32;          ///< Steps between Morton reorderings of the particles (0: never)
    bool hydrostatic_walls = true;   ///< Wall pressure p_b = p_i + rho_i g . (x_b - x_i) (Adami et al. 2012); off: p_b = p_i
    bool hydrostatic_start = true;   ///< init() compresses fluid at rest to hydrostatic equilibrium (with gravity)
    /// smooth (the default, as DFSPH's and PBF's): closed containers from their shapes (eddy/smooth_walls.hpp);
    /// particles: Akinci's boundary particles everywhere (seed 003's walls; docs/methods.md).
    std::string boundary_model = "smooth";
    float wall_law_viscosity = 1.0e-6f;  ///< Smooth walls: the law of the wall's kinematic viscosity (m^2/s; water's); 0: the faces slip
};

/// The field table of WcsphSettings (keys of the scene's "settings" object for "method": "wcsph").
std::span<const Field<WcsphSettings>> wcsph_fields();

/// What one step measured. Flags, never printed warnings: the caller decides what to do. PassTimes: the
/// wall-clock seconds of the step's named passes, in the order they ran (eddy/pass_times.hpp).
struct StepStats : PassTimes {
    float dt = 0.0f;                  ///< Time step taken (s)
    float max_speed = 0.0f;           ///< Largest |v| after the step (m/s)
    float max_density_error = 0.0f;   ///< max (rho_i - rho0) / rho0 over the fluid, compression only
    float mean_density_error = 0.0f;  ///< mean of max(0, rho_i - rho0) / rho0
    bool non_finite = false;          ///< A position or velocity became NaN or infinite
    bool dt_underflow = false;        ///< The method needed a time step below its dt_min
    /// A speed the method cannot represent (m/s; 0: none): WCSPH's speed of sound, past which the weakly
    /// compressible model has broken down. run() reports max_speed above it as a divergence.
    float speed_limit = 0.0f;
    /// The fastest a particle of this scene can move by its physics (m/s; 0: no bound), set by step()
    /// from the simulation's SpeedBound (simulation.hpp): kSpeedBoundFactor times free fall over the
    /// scene's height plus the walls' and initial speeds. Every method's max_speed above it diverged.
    float scene_speed_limit = 0.0f;
    /// Collapse of a position-based method (PBF, Clavet), measured in the step's own density pass: the
    /// largest density over the rest density rho_i / rho0, and the method's bound on it (0: none; run()
    /// reports max_density_ratio above it as a divergence). A collapsed fluid (thousands of particles in
    /// a few cells) stays slow, so the speed checks above never see it.
    float max_density_ratio = 0.0f;
    float density_ratio_limit = 0.0f;
    /// The neighbour search refused to build the lists: a particle had `crowded` candidates within its
    /// 3^D cells, more than `crowded_limit` (a collapse; building them takes quadratic time and memory).
    std::uint32_t crowded = 0;
    std::uint32_t crowded_limit = 0;
    /// As crowded, found at the end of the step: `crowded` particles in one cell of side h, more than
    /// crowded_limit (the collision crushed the fluid after the density pass).
    bool crowded_cell = false;
    /// The particle of the densest (or most crowded) measurement: its id and position (m; z = 0 in 2D),
    /// `dimension` components of `where` meaningful (0: no particle named).
    std::uint32_t where_id = 0;
    std::array<float, 3> where{0.0f, 0.0f, 0.0f};
    int where_dimension = 0;
    int iterations = 0;             ///< Pressure (density) solver iterations of an iterative method (PBF, DFSPH)
    int divergence_iterations = 0;  ///< Divergence solver iterations (DFSPH)
    int viscosity_iterations = 0;   ///< Implicit viscosity solver iterations (DFSPH with a viscosity)
    /// Set by step() (eddy/emitters.hpp): particles the emitters put in before the step, and those removed
    /// after it outside the domain (outflow), beyond every container (escaped) and in the sinks (drained).
    std::uint32_t emitted = 0, removed_outflow = 0, removed_escaped = 0, removed_drained = 0;
};

/// Collapse bounds of the position-based methods (PBF, Clavet; docs/methods.md, "Collapse"). A density
/// above kCollapseDensityRatio times the rest density, measured in the step's density pass, is a
/// collapse: the worst frames of the bundled scenes stay far below it (the figures are in the docs).
inline constexpr float kCollapseDensityRatio = 4.0f;
/// The neighbour search refuses a particle with more than kCrowdedFactor times the candidates of a
/// lattice at rest in its 3^D cells of side h: (3 h / 2r)^D of them at spacing 2r.
inline constexpr float kCrowdedFactor = 16.0f;
template <int D>
std::size_t crowded_candidate_limit(float support, float particle_radius) {
    double n = kCrowdedFactor;
    for (int a = 0; a < D; ++a) n *= 3.0 * double(support) / (2.0 * double(particle_radius));
    return static_cast<std::size_t>(n);
}
/// At the end of a step, one cell of side h holding more than kCrowdedFactor times a lattice at rest's
/// (h / 2r)^D particles is a collapse.
template <int D>
std::size_t crowded_cell_limit(float support, float particle_radius) {
    double n = kCrowdedFactor;
    for (int a = 0; a < D; ++a) n *= double(support) / (2.0 * double(particle_radius));
    return static_cast<std::size_t>(n);
}

/// The end-of-step collapse check of the position-based methods: the fullest cell of the fluid where
/// the step left it (their collision can crush the fluid after the step's density pass: Clavet at a
/// 0.5 s step put 801 particles in one cell in its last step). Sets st.crowded and the particle when a
/// cell holds more than crowded_cell_limit. On several processes all agree (the count's maximum).
template <int D>
void check_crowded_cells(FluidNeighborhood<D>& neighbors, const ParticleSet<D>& fluid, Halo<D>* halo, float support,
                         float particle_radius, StepStats& st, const ExecContext& exec) {
    if (st.crowded > 0) return;
    std::uint32_t particle = 0;
    const std::uint32_t most = fluid.empty() ? 0 : neighbors.fullest_cell(fluid, exec, particle);
    const auto limit = static_cast<std::uint32_t>(crowded_cell_limit<D>(support, particle_radius));
    float all[1] = {static_cast<float>(most)};
    if (halo) halo->max(all);
    if (!(all[0] > static_cast<float>(limit))) return;
    st.crowded = static_cast<std::uint32_t>(all[0]);
    st.crowded_limit = limit;
    st.crowded_cell = true;
    st.where_dimension = 0;
    if (most > limit && particle < owned_count(halo, fluid.size())) {
        st.where_id = fluid.id[particle];
        for (int a = 0; a < D; ++a) st.where[a] = fluid.position[particle][a];
        st.where_dimension = D;
    }
}

template <int D>
class WcsphSolver {
public:
    /// Validates the settings (throws InputError naming `where` and the key) and derives c0 and B.
    /// fluid_height (m) sets the automatic speed of sound; gravity (m/s^2); particle_radius r (m).
    /// walls: the scene's walls as shapes, a guard behind the boundary particles (below).
    WcsphSolver(const WcsphSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                std::vector<Wall<D>> walls = {}, const std::string& where = "settings");

    /// Mass of a fluid particle, m = rho0 / sum_j W over a full lattice of spacing 2r, so that the
    /// density of fluid at rest on its initial lattice is exactly rho0.
    float particle_mass() const { return m_mass; }

    /// Prepares the boundary (pseudo-masses) and the fluid (mass, reorder); call once before stepping.
    /// start = false: no hydrostatic start (a resumed run, whose particles a checkpoint replaces).
    void init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec, bool start = true);
    /// The wall particles' pseudo-masses psi alone, as init() computes them (walls built after init: issue 44).
    void compute_wall_volumes(BoundarySet<D>& boundary, const ExecContext& exec) const;

    /// The next time step (s) from the current state (CFL, acoustic and force limits).
    float suggest_dt(const ParticleSet<D>& fluid) const;

    /// Advances by dt (s); time t (s) is the start of the step (for moving boundaries).
    StepStats step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, const ExecContext& exec);

    /// The smallest time step the adaptive control may take before the run counts as diverged (s);
    /// 0 with a fixed time step.
    float min_dt() const { return m_s.fixed_dt > 0.0f ? 0.0f : m_s.dt_min; }
    /// The settings and the values derived from them (c0, B, mass, h), for summary.json.
    nlohmann::json describe() const;

    const WcsphSettings& settings() const { return m_s; }
    const CubicSpline<D>& kernel() const { return m_kernel; }
    float speed_of_sound() const { return m_c0; }
    float stiffness() const { return m_B; }
    std::size_t memory_bytes() const;
    const SmoothWalls<D>& smooth_walls() const { return m_smooth; }
    /// The state a step hands to the next beyond the particles (checkpoint and resume).
    void save_state(StateWriter& w) const;
    void load_state(StateReader& r);
    const NeighborLists& fluid_neighbors() const { return m_neighbors.fluid(); }
    /// C = (m/rho0) sum_lattice (e_g . x)^2 / |x| |W'(|x|)|: how much the SPH pressure gradient and the
    /// summation density over-respond on the lattice of spacing 2r (1 in the continuum).
    float gradient_factor() const { return m_grad_factor; }

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
    /// Density by summation and Tait pressure of every particle (seed eq. d, h) from the current lists.
    void update_density(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const ExecContext& exec);
    // The passes of step() after update_density, in order (wcsph.cpp): the accelerations, then positions,
    // the walls' guard and loads, and the statistics. WallTerm: one wall particle's acceleration of a fluid
    // particle (Akinci 2012, eq. 10 and 11), shared by the forces and the walls' loads.
    struct WallTerm;
    void compute_accelerations(ParticleSet<D>& fluid, const WallTerm& wall, float dt, const ExecContext& exec);
    /// Smooth walls: particle i's faces' hydrostatic push and shear (kept in m_wall_push for the loads) and the
    /// mirror images' share of its pressure force along them (smooth_walls.hpp, ghost_share; no load).
    Vec<D> smooth_wall_terms(const ParticleSet<D>& fluid, std::size_t i, float dt);
    StepStats advance(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const WallTerm& wall, double t, float dt,
                      const ExecContext& exec);
    /// The hydrostatic start (see the top of this file); returns the number of particles in the columns
    /// it compressed (0: none).
    std::size_t start_hydrostatic(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, const ExecContext& exec);
    /// The boundary's pseudo-masses and which walls are drawn smooth (init()).
    void init_walls(BoundarySet<D>& boundary, const ExecContext& exec);
    /// The neighbour lists for the current positions, then the smooth walls' virtual particles for them
    /// (their velocities at time t, s).
    void update_neighbors(ParticleSet<D>& fluid, const BoundarySet<D>& boundary, bool walls_changed, double t,
                          const ExecContext& exec);
    /// The walls every term reads: the virtual particles of the smooth walls (with copies of the boundary
    /// particles of the other walls), or the boundary particles themselves.
    const NeighborLists& wall_lists() const { return m_smooth.lists(m_neighbors.boundary()); }
    const BoundarySet<D>& wall_set(const BoundarySet<D>& b) const { return m_smooth.set(b); }

    WcsphSettings m_s;
    float m_r, m_mass = 0.0f, m_c0 = 0.0f, m_B = 0.0f, m_grad_factor = 1.0f;
    Vec<D> m_g;
    CubicSpline<D> m_kernel;
    FluidNeighborhood<D> m_neighbors;
    float m_vmax = 0.0f;  // largest speed after the last step (m/s)
    float m_amax = 0.0f;  // largest acceleration of the last step (m/s^2)
    std::vector<Wall<D>> m_walls;
    WallLoadGather<D> m_loads;       // the fluid's force on each boundary object (wall_loads.hpp)
    std::vector<Vec<D>> m_guard_dv;  // per particle: the velocity the walls' guard took this step (m/s)
    SmoothWalls<D> m_smooth;          // on: boundary_model "smooth" and a container to draw so
    std::vector<Vec<D>> m_wall_push;  // per particle: the smooth walls' hydrostatic push and shear (m/s^2)
};

extern template class WcsphSolver<2>;
extern template class WcsphSolver<3>;

/// Mass that gives density rho0 on a full lattice of spacing `spacing`, with `kernel`.
template <int D>
float lattice_mass(const CubicSpline<D>& kernel, float spacing, float rest_density);

}  // namespace eddy
