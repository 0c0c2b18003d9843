// Scratch arrays that a pass overwrites whole (per-pair kernel factors, neighbour indices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
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

/// Reserves room for n elements of v and asks the system to back its whole 2 MB spans with huge pages
/// (Linux's transparent huge pages, which Debian gives on request: "madvise" mode). An array of tens of MB
/// filled once per call (a density grid, a surface's distances) otherwise costs a page fault every 4 kB,
/// serialised across threads: a quarter of the surface pipeline's time at 10^6 particles on 2 threads
/// (docs/performance.md, "Huge pages"). Only advice: where it is not given, nothing changes but the time.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
    v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t k2M = std::uintptr_t(1) << 21;
    const std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(v.data()) + k2M - 1) & ~(k2M - 1);
    const std::uintptr_t e = reinterpret_cast<std::uintptr_t>(v.data() + v.capacity()) & ~(k2M - 1);
    if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#endif
}

/// v.assign(n, value) and v.resize(n) on room from reserve_huge.
template <class T>
void assign_huge(std::vector<T>& v, std::size_t n, const T& value) {
    reserve_huge(v, n);
    v.assign(n, value);
}
template <class T>
void resize_huge(std::vector<T>& v, std::size_t n) {
    reserve_huge(v, n);
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
