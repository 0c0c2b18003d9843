// The fluid of a whitewater step sorted by cell (cell size h), positions and velocities as arrays per
// axis in that order: one grid for the potentials, the classification and the foam's velocity. Not
// public API (src/whitewater/ only).
//
// Cells are ordered by (z, y, x), the particles of a cell by index; the cells around a point are then
// 3^(D-1) runs of consecutive particles (three cells along x each), so neighbour sums read contiguous
// memory and run in lanes (kLanes at a time, summed lane by lane, the lanes added in a fixed order). The
// order depends on the positions only: the same bits on any number of threads.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/math.hpp"

namespace eddy::ww {

constexpr int kLanes = 16;  // one AVX-512 register (two AVX2) per sum
constexpr float kFar = 1e18f;  // padding: d^2 = 1e36 stays finite, never within h

template <int D>
struct FluidGrid {
    using Cell = std::array<std::int32_t, D>;
    static constexpr int kRuns = D == 3 ? 9 : 3;

    float h = 0.0f, inv_h = 0.0f;
    std::vector<std::uint32_t> order;       ///< Sorted position -> fluid index
    /// Positions and velocities in sorted order, then kLanes more (far away, at rest): lanes read past a
    /// run's end without a bounds test (the lane's mask drops them).
    std::vector<float> x[D], v[D];
    std::vector<std::uint32_t> cell_begin;   ///< Per sorted particle: the first of its cell (sorted)
    // Occupied cells: keys (z, y, x packed, increasing) and their first particles (one more at the end).
    std::vector<std::uint64_t> keys;
    std::vector<std::uint32_t> starts;
    // Dense layout (cells of the box around the fluid, when not many more than the particles): per cell
    // its first particle, one more at the end; empty otherwise (keys searched).
    std::vector<std::uint32_t> dense;
    std::array<std::int64_t, 3> lo{0, 0, 0}, dims{1, 1, 1};

    std::size_t size() const { return order.size(); }
    Cell cell_of(const Vec<D>& p) const;
    static std::uint64_t key(const Cell& c);
    /// Sorts the fluid (pos, vel) into cells of size h.
    void build(std::span<const Vec<D>> pos, std::span<const Vec<D>> vel, float support, const ExecContext& exec);
    /// The runs [s0, s1) of sorted particles covering the 3^D cells around c, in a fixed order; returns
    /// how many (empty runs left out).
    int runs(const Cell& c, std::array<std::array<std::uint32_t, 2>, kRuns>& out) const;
};

extern template struct FluidGrid<2>;
extern template struct FluidGrid<3>;

}  // namespace eddy::ww
