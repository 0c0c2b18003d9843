// eddy: selects by bits for loops that must vectorise (the surface's splats and neighbour sums, whitewater's
// kernel sums).
//
// GCC 12 turns `c ? a : b`, std::min and std::max into masked vector code with AVX-512, but with AVX2 alone
// (Zen 3 and most desktops) it left a branch per element and the loop scalar: the splat ran 2.5x slower there
// (docs/performance.md, "AVX2 hosts"). These give the same bits as the plain forms, with no branch.
// __builtin_bit_cast (GCC 11, Clang 9): std::bit_cast is absent from libc++ 14, the web build's library.
#pragma once

#include <cstdint>

namespace eddy {

/// c ? a : b.
inline float pick(bool c, float a, float b) {
    const std::uint32_t m = 0u - std::uint32_t(c);
    const std::uint32_t bits = (__builtin_bit_cast(std::uint32_t, a) & m) | (__builtin_bit_cast(std::uint32_t, b) & ~m);
    return __builtin_bit_cast(float, bits);
}

/// std::min(a, b): (b < a) ? b : a.
inline float min_of(float a, float b) { return pick(b < a, b, a); }

/// std::max(a, b): (a < b) ? b : a.
inline float max_of(float a, float b) { return pick(a < b, b, a); }

}  // namespace eddy
