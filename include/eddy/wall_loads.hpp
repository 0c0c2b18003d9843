// eddy: the load of the fluid on each boundary object (issue 28): the force (N; in 2D N per metre of
// depth) and the torque (N m; in 2D N m per metre, about z) that the fluid exerts on `boundaries[o]`.
//
// Every particle method pushes fluid particle i away from wall particle b with a pair force f_ib (the
// wall's share of i's momentum change; Akinci et al. 2012, eq. 10 and 11 for SPH, the wall's share of
// a position correction for PBF). By Newton's third law the object that owns b feels -f_ib, at x_b:
//
//   F_o = - sum_i sum_{b in o} f_ib,          T_o = - sum_i sum_{b in o} (x_b - c_o) x f_ib
//
// with c_o the object's pivot where it is now (the scene's `pivot`, by default the shape's centre,
// moved with the object: pivot + T(t)). A method whose walls also act through the walls' shapes (the
// guard of WCSPH and DFSPH, the collision of PBF, the wall pass of Clavet, whose walls are shapes only)
// adds that momentum change as an impulse of the particle, given to the object of its nearest wall
// particle and applied at the particle.
//
// The sums are gathers over the owned fluid particles: each particle sums its own pairs in its list
// order in double, then adds them to per-object ExactSums (order-free), reduced over the processes of a
// distributed run. The loads are therefore the same bits on any thread count, storage order and number
// of processes. Solvers call WallLoadGather once per step; ParticleSimulation::boundary.load holds the
// result, run() averages it over the steps of each frame (out/forces.csv).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "eddy/boundary.hpp"
#include "eddy/exec.hpp"
#include "eddy/halo.hpp"
#include "eddy/math.hpp"
#include "eddy/neighbors.hpp"

namespace eddy {

/// The per-step gather of the walls' loads. A solver keeps one (its scratch) and, within a step:
/// begin(), then add_pairs() with its own pair force law, add_impulses() for what its shape-based
/// walls did, finish() to reduce and store the loads in the BoundarySet.
template <int D>
class WallLoadGather {
public:
    /// Components per object: force (D) and torque (1 in 2D, 3 in 3D).
    static constexpr std::size_t kComponents = D == 2 ? 3 : 6;

    /// Starts a step at time t (s): the objects' pivots where they are now, the sums at zero.
    void begin(const BoundarySet<D>& b, double t) {
        const std::size_t objects = b.motions.size();
        m_pivot.resize(objects);
        for (std::size_t o = 0; o < objects; ++o) {
            const BoundaryMotion<D>& m = b.motions[o];
            m_pivot[o] = m.moving() ? m.pose(t).apply(m.pivot) : m.pivot;
        }
        m_sums.assign(objects * kComponents, ExactSum{});
    }

    /// Adds -f(i, b) for every owned fluid particle i < owned and wall neighbour b in bn[i]:
    /// force_on_fluid(i, b) -> Vec<D> is the force (N) wall particle b exerts on fluid particle i.
    /// A law that reads per-pair state (PBF: each pair's corrections summed over the iterations) may
    /// take a third argument, the pair's slot in bn's CSR arrays: force_on_fluid(i, b, slot).
    template <class PairForce>
    void add_pairs(const ExecContext& exec, std::size_t owned, const NeighborLists& bn, const BoundarySet<D>& b,
                   PairForce&& force_on_fluid) {
        if (m_sums.empty()) return;
        gather(exec, owned, [&](std::size_t i, Local& acc) {
            [[maybe_unused]] std::size_t slot = bn.offsets[i];
            for (std::uint32_t k : bn[i]) {
                Vec<D> f;
                if constexpr (std::is_invocable_v<PairForce&, std::size_t, std::uint32_t, std::size_t>)
                    f = force_on_fluid(i, k, slot++) * -1.0f;
                else
                    f = force_on_fluid(i, k) * -1.0f;
                acc.add(b.object[k], f, b.position[k], m_pivot);
            }
        });
    }

    /// Adds the impulses of the walls' shapes: particle i (< owned), of mass `mass`, changed its
    /// velocity by dv[i] (m/s) against a wall this step of length dt; the object of its nearest wall
    /// neighbour in bn[i] (positions x, where the step started) feels -mass dv / dt at x[i]. A particle
    /// with no wall neighbour (far from every wall particle) gives nothing.
    void add_impulses(const ExecContext& exec, std::size_t owned, const NeighborLists& bn, const BoundarySet<D>& b,
                      const Vec<D>* x, const Vec<D>* dv, float mass, float dt) {
        if (m_sums.empty() || !(dt > 0.0f)) return;
        const float scale = -mass / dt;
        gather(exec, owned, [&](std::size_t i, Local& acc) {
            if (norm2(dv[i]) == 0.0f || bn[i].empty()) return;
            std::uint32_t nearest = bn[i][0];
            float best = norm2(x[i] - b.position[nearest]);
            for (std::uint32_t k : bn[i]) {
                const float d = norm2(x[i] - b.position[k]);
                if (d < best) { best = d; nearest = k; }
            }
            acc.add(b.object[nearest], dv[i] * scale, x[i], m_pivot);
        });
    }

    /// Reduces over the processes (halo; null: one process) and stores the step's loads in b.load.
    void finish(BoundarySet<D>& b, Halo<D>* halo) {
        if (halo && !m_sums.empty()) halo->sum(m_sums);
        b.load.assign(m_pivot.size(), ObjectLoad{});
        for (std::size_t o = 0; o < m_pivot.size(); ++o) {
            const ExactSum* s = &m_sums[o * kComponents];
            ObjectLoad& l = b.load[o];
            for (int a = 0; a < D; ++a) l.force[a] = s[a].value();
            if constexpr (D == 2) l.torque[2] = s[2].value();
            else for (int a = 0; a < 3; ++a) l.torque[a] = s[3 + a].value();
        }
    }

private:
    // One particle's sums, in double in its list order, for the few objects it touches (then added to
    // the block's ExactSums once per object: the costly order-free additions stay per particle, not per pair).
    struct Local {
        static constexpr int kSlots = 4;
        std::uint16_t object[kSlots];
        double sum[kSlots][kComponents];
        int used = 0;
        std::vector<ExactSum>* out = nullptr;
        void add(std::uint16_t o, const Vec<D>& f, const Vec<D>& at, const std::vector<Vec<D>>& pivot) {
            int s = 0;
            while (s < used && object[s] != o) ++s;
            if (s == used) {
                if (used == kSlots) flush();
                s = used++;
                object[s] = o;
                for (auto& c : sum[s]) c = 0.0;
            }
            double* c = sum[s];
            const Vec<D> lever = at - pivot[o];
            for (int a = 0; a < D; ++a) c[a] += double(f[a]);
            if constexpr (D == 2) {
                c[2] += double(lever[0]) * f[1] - double(lever[1]) * f[0];
            } else {
                c[3] += double(lever[1]) * f[2] - double(lever[2]) * f[1];
                c[4] += double(lever[2]) * f[0] - double(lever[0]) * f[2];
                c[5] += double(lever[0]) * f[1] - double(lever[1]) * f[0];
            }
        }
        void flush() {
            for (int s = 0; s < used; ++s)
                for (std::size_t a = 0; a < kComponents; ++a) (*out)[object[s] * kComponents + a].add(sum[s][a]);
            used = 0;
        }
    };

    template <class PerParticle>
    void gather(const ExecContext& exec, std::size_t owned, PerParticle&& per_particle) {
        const std::size_t width = m_sums.size();
        std::vector<ExactSum> total = parallel_reduce_blocks(
            exec, owned, std::vector<ExactSum>(),
            [&](std::size_t b0, std::size_t b1) {
                std::vector<ExactSum> block(width);
                Local acc;
                acc.out = &block;
                for (std::size_t i = b0; i < b1; ++i) {
                    per_particle(i, acc);
                    acc.flush();
                }
                return block;
            },
            [](std::vector<ExactSum> l, const std::vector<ExactSum>& r) {
                if (l.empty()) return r;
                for (std::size_t a = 0; a < r.size(); ++a) l[a] += r[a];
                return l;
            });
        for (std::size_t a = 0; a < total.size(); ++a) m_sums[a] += total[a];
    }

    std::vector<Vec<D>> m_pivot;
    std::vector<ExactSum> m_sums;
};

/// The average of the loads over the steps of a frame: each step's load weighted by its length.
struct LoadAverage {
    std::vector<ObjectLoad> impulse;  ///< sum of load dt (N s, N m s)
    double elapsed = 0.0;             ///< sum of dt (s)
    void add(const std::vector<ObjectLoad>& load, double dt) {
        if (impulse.size() < load.size()) impulse.resize(load.size());
        for (std::size_t o = 0; o < load.size(); ++o)
            for (int a = 0; a < 3; ++a) {
                impulse[o].force[a] += load[o].force[a] * dt;
                impulse[o].torque[a] += load[o].torque[a] * dt;
            }
        elapsed += dt;
    }
    /// The mean load over the steps added (zero when none), for `objects` objects.
    std::vector<ObjectLoad> mean(std::size_t objects) const {
        std::vector<ObjectLoad> m(objects);
        if (elapsed <= 0.0) return m;
        for (std::size_t o = 0; o < std::min(objects, impulse.size()); ++o)
            for (int a = 0; a < 3; ++a) {
                m[o].force[a] = impulse[o].force[a] / elapsed;
                m[o].torque[a] = impulse[o].torque[a] / elapsed;
            }
        return m;
    }
    void reset() {
        impulse.clear();
        elapsed = 0.0;
    }
};

}  // namespace eddy
