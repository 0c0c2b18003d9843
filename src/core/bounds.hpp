// eddy: the box of a set of points, reduced in parallel (the smooth walls' map fill, the whitewater's kept
// region). min and max are exact, so the blocks' order cannot change a bit: the same box on any thread count.
#pragma once
#include <algorithm>
#include <cstddef>
#include <limits>

#include "eddy/exec.hpp"
#include "eddy/math.hpp"

namespace eddy::detail {

/// The box that holds nothing: lo = +inf, hi = -inf (grown by any point).
template <int D>
Aabb<D> empty_box() {
    const float inf = std::numeric_limits<float>::infinity();
    return {Vec<D>::filled(inf), Vec<D>::filled(-inf)};
}

/// box grown to hold [lo, hi].
template <int D>
void grow_box(Aabb<D>& box, const Vec<D>& lo, const Vec<D>& hi) {
    for (int a = 0; a < D; ++a) box.lo[a] = std::min(box.lo[a], lo[a]), box.hi[a] = std::max(box.hi[a], hi[a]);
}

/// The box of x[0, n) (empty_box for none).
template <int D>
Aabb<D> bounding_box(const Vec<D>* x, std::size_t n, const ExecContext& exec) {
    return parallel_reduce_blocks(exec, n, empty_box<D>(), [&](std::size_t b, std::size_t e) {
        Aabb<D> k = empty_box<D>();
        for (std::size_t i = b; i < e; ++i) grow_box(k, x[i], x[i]);
        return k;
    }, [](Aabb<D> p, const Aabb<D>& q) {
        grow_box(p, q.lo, q.hi);
        return p;
    });
}

}  // namespace eddy::detail
