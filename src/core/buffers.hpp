// Scratch arrays that a pass overwrites whole (per-pair kernel factors, neighbour indices).
#pragma once

#include <cstddef>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace eddy::detail {

/// Resizes `v` to `n` elements whose old values nobody reads again (the caller overwrites every one).
/// When it must grow, the old buffer is freed before the new one is taken: no copy, and no moment with
/// both held (for per-pair arrays of a million particles, hundreds of MB: the peak a growing count
/// would otherwise add to a step; issue 44). An eighth more room is kept, so a count that creeps up
/// step by step does not reallocate every step.
template <class T>
void resize_for_overwrite(std::vector<T>& v, std::size_t n) {
    if (n > v.capacity()) {
        std::vector<T>().swap(v);
        v.reserve(n + n / 8);
    }
    v.resize(n);
}

/// Hands the heap's free memory back to the system (glibc keeps what was freed for later allocations:
/// after a start that built and dropped more than the run then holds, that memory would stay resident for
/// the whole run; issue 44). Costs a walk of the free lists; call it once, after such a start.
inline void give_back_free_memory() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

}  // namespace eddy::detail
