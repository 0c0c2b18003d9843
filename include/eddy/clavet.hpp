// eddy: particle-based viscoelastic fluid (seed 000; Clavet, Beaudoin & Poulin 2005, "Particle-based
// Viscoelastic Fluid Simulation", SCA 2005), in 2D and 3D.
//
// Per step of length dt (the paper's Algorithm 1):
//   v += dt g; x_prev = x; x += dt v; neighbours of x (one search per step)
//   viscosity impulses: u = (v_i - v_j) . r_ij (inward), if u > 0:
//     I = dt (1 - q)(sigma u + beta u^2) r_ij, v_i -= I/2, v_j += I/2          (Algorithm 5),
//     then x = x_prev + dt v (the paper searches and applies impulses before predicting)
//   springs (if spring_stiffness > 0): add one for each new pair within h (rest length L = r), plastic
//     rest lengths (Algorithm 3, yield ratio gamma, plasticity alpha), remove those with L > h, and
//     displace D = dt^2 k_spring (1 - L/h)(L - r) r_ij, half to each end     (Algorithm 2)
//   double density relaxation (Algorithm 4): rho = sum (1-q)^2, rho_near = sum (1-q)^3,
//     P = k (rho - rho0), P_near = k_near rho_near, D = dt^2 (P (1-q) + P_near (1-q)^2) r_ij,
//     half to each particle
//   walls: particles projected back inside containers / out of obstacles, with the seed's anti-stick
//     shift of the previous position; stickiness pulls particles within d_stick towards walls
//     (section 6.1): I = dt k_stick d (1 - d/d_stick) n
//   v = (x - x_prev) / dt
// The walls' loads (boundary.load, wall_loads.hpp): the wall pass's change of v = (x - x_prev) / dt
// (its displacements, the anti-stick shift of x_prev) is an impulse of the particle, given to the object
// of its nearest wall particle. The method has no mass: the loads take m = density (2r)^D, the mass
// of the initial lattice's cell at the `density` the particles stand for.
// q = r/h. Two modes: "sequential", the seed's Gauss-Seidel loop (each particle's displacements are
// applied at once, later particles see them; serial by nature), and "parallel", a Jacobi gather:
// dx_i = -(dt^2/2) sum_j [(P_i + P_j)(1-q) + (Pn_i + Pn_j)(1-q)^2] r_ij, every particle writing only its
// own displacement - deterministic on any number of threads; the sum of all displacements is zero.
//
// Units (SI): k and k_near in m/s^2 (D = dt^2 k (...)), sigma 1/s, beta 1/m, k_spring 1/s^2,
// alpha 1/s, k_stick 1/s^2. rho and rho0 are the paper's dimensionless neighbour sums. The paper's
// per-frame values convert as sigma_SI = sigma / frame time, beta_SI = beta / h.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/boundary.hpp"
#include "eddy/checkpoint.hpp"
#include "eddy/halo.hpp"
#include "eddy/neighborhood.hpp"
#include "eddy/particles.hpp"
#include "eddy/settings.hpp"
#include "eddy/wall_loads.hpp"
#include "eddy/wcsph.hpp"  // StepStats

namespace eddy {

struct ClavetSettings {
    std::string mode = "parallel";    ///< "parallel" (Jacobi gather, deterministic) or "sequential" (the seed's Gauss-Seidel)
    float rest_density = 0.0f;        ///< rho0 (dimensionless); 0: the value of the initial lattice
    float speed_of_sound = 0.0f;      ///< c0 (m/s) setting k when k = 0; 0: 10 sqrt(2 g H)
    float stiffness = 0.0f;           ///< k (m/s^2); 0: from c0 (k = c0^2 / B, B the lattice's geometric factor)
    float near_stiffness = 0.0f;      ///< k_near (m/s^2); 0: k (k / 4 before: small drops evaporated; see clavet.cpp)
    float linear_viscosity = 0.0f;    ///< sigma (1/s): I = dt (1-q)(sigma u + beta u^2) is a velocity
    float quadratic_viscosity = 10.0f;///< beta (1/m)
    float spring_stiffness = 0.0f;    ///< k_spring (1/s^2); 0: no springs (no elasticity)
    float yield_ratio = 0.1f;         ///< gamma: a spring deforms plastically beyond this fraction of L
    float plasticity = 0.3f;          ///< alpha (1/s): rate at which rest lengths follow the deformation
    float stickiness = 0.0f;          ///< k_stick (1/s^2): attraction to walls; 0: none
    float stick_distance = 0.25f;     ///< d_stick as a fraction of h
    float anti_stick = 0.0f;          ///< speed (m/s) of the seed's push off walls; 0: h per second, as the seed
    float time_step = 0.0f;           ///< Fixed step (s); 0: 0.4 h / c0
    float support_ratio = 6.0f;       ///< Interaction radius h / particle radius r (3 lattice spacings: with
                                      ///< 2 the particles stay on their lattice like a solid)
    int sort_interval = 32;           ///< Steps between Morton reorderings (0: never)
    float density = 1000.0f;          ///< Mass density (kg/m^3; kg/m^2 in 2D) the particles stand for: walls' loads only
};

std::span<const Field<ClavetSettings>> clavet_fields();

template <int D>
class ClavetSolver {
public:
    ClavetSolver(const ClavetSettings& s, float particle_radius, const Vec<D>& gravity, float fluid_height,
                 std::vector<Wall<D>> walls = {}, const std::string& where = "settings");

    void init(ParticleSet<D>& fluid, BoundarySet<D>& boundary, const ExecContext& exec);
    /// Clavet's walls are their shapes: no pseudo-masses.
    void compute_wall_volumes(BoundarySet<D>&, const ExecContext&) const {}
    float suggest_dt(const ParticleSet<D>&) const { return m_dt; }
    float min_dt() const { return 0.0f; }
    StepStats step(ParticleSet<D>& fluid, BoundarySet<D>& boundary, double t, float dt, const ExecContext& exec);

    nlohmann::json describe() const;
    const ClavetSettings& settings() const { return m_s; }
    float rest_density() const { return m_rho0; }
    /// The mass (kg) each particle stands for in the walls' loads: density (2r)^D.
    float particle_mass() const { return m_mass; }
    float stiffness() const { return m_k; }
    std::size_t spring_count() const { return m_springs.size(); }
    /// Sum of the relaxation displacements of the last step (m): zero to round-off (Newton's third law).
    const Vec<D>& last_displacement_sum() const { return m_disp_sum; }
    /// Sum of the lengths of the pairwise displacement terms (m), the scale to compare the sum with.
    double last_displacement_length_sum() const { return m_disp_abs; }
    std::size_t memory_bytes() const;
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
    void relax_parallel(ParticleSet<D>& fluid, float dt, const ExecContext& exec);
    void relax_sequential(ParticleSet<D>& fluid, float dt);
    void viscosity(ParticleSet<D>& fluid, float dt, const ExecContext& exec);
    void springs(ParticleSet<D>& fluid, float dt);
    void walls(ParticleSet<D>& fluid, float dt, const ExecContext& exec);

    ClavetSettings m_s;
    bool m_parallel = true;
    float m_r, m_h, m_rho0 = 0.0f, m_k = 0.0f, m_k_near = 0.0f, m_dt = 0.0f, m_c0 = 0.0f, m_anti_stick = 0.0f;
    float m_mass = 0.0f;  // kg, the walls' loads only
    Vec<D> m_g;
    std::vector<Wall<D>> m_walls;
    FluidNeighborhood<D> m_neighbors;
    std::vector<Vec<D>> m_prev, m_dx;
    std::vector<float> m_p, m_p_near, m_pair_len;
    std::map<std::uint64_t, float> m_springs;  // (id_low << 32 | id_high) -> rest length L (m); ordered: deterministic
    std::vector<std::uint32_t> m_index_of_id;
    WallLoadGather<D> m_loads;
    std::vector<Vec<D>> m_wall_dv;  // each particle's velocity change by the wall pass (m/s)
    Vec<D> m_disp_sum = Vec<D>::zero();
    double m_disp_abs = 0.0;
};

extern template class ClavetSolver<2>;
extern template class ClavetSolver<3>;

}  // namespace eddy
