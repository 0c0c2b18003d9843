// eddy: ParticleSet, the structure of arrays that owns every per-particle field.
//
// Solvers never keep per-particle arrays of their own that must follow the particles: they register
// extra fields here, and reorder() permutes all of them at once (no hand-written sort_field calls).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/math.hpp"

namespace eddy {

template <int D>
struct ParticleSet {
    std::vector<Vec<D>> position;      ///< Position (m)
    std::vector<Vec<D>> velocity;      ///< Velocity (m/s)
    std::vector<Vec<D>> acceleration;  ///< Acceleration of the last step (m/s^2)
    std::vector<float> density;        ///< Density (kg/m^D)
    std::vector<float> pressure;       ///< Pressure (Pa in 3D; N/m in 2D)
    std::vector<std::uint32_t> id;     ///< Stable id, survives reordering
    float mass = 0.0f;                 ///< Mass of every particle (kg; kg/m in 2D)

    struct ScalarField { std::string name; std::vector<float> data; };
    struct VectorField { std::string name; std::vector<Vec<D>> data; };
    std::vector<ScalarField> scalars;  ///< Extra per-particle scalars registered by a solver
    std::vector<VectorField> vectors;  ///< Extra per-particle vectors registered by a solver

    std::size_t size() const { return position.size(); }
    bool empty() const { return position.empty(); }

    /// Registers (or finds) an extra scalar field, sized like the set; returns its index.
    std::size_t add_scalar(std::string_view name);
    /// Registers (or finds) an extra vector field, sized like the set; returns its index.
    std::size_t add_vector(std::string_view name);

    /// Appends one particle with the next free id; extra fields get zeros.
    void push_back(const Vec<D>& x, const Vec<D>& v);
    /// Resizes every field.
    void resize(std::size_t n);
    /// Keeps the particles whose keep[i] is set, in their order, with their ids (ids are never reused:
    /// next_id stays), every field included. keep.size() must be size().
    void keep(std::span<const std::uint8_t> keep);
    /// Permutes every field: new[i] = old[order[i]]. order must be a permutation of [0, size()).
    void reorder(std::span<const std::uint32_t> order, const ExecContext& exec);
    /// Heap bytes held by all fields.
    std::size_t memory_bytes() const;

    std::uint32_t next_id = 0;  ///< Id given to the next particle pushed
};

extern template struct ParticleSet<2>;
extern template struct ParticleSet<3>;

}  // namespace eddy
