// eddy: the few elementary functions whose last bit differed between the native build and the page.
//
// std::hypot on floats: glibc takes the exact double sum of the squares, its double root, and rounds that
// once to float; the browser's musl rounds the sum to float before its root (sqrtf). The two differ in the
// last bit for some inputs, and a cylinder container's distance (its radius minus hypot) took different
// values on the page within five steps of mixer_3d (issue 43). Written out here, both builds compute
// glibc's way: the same bits as before natively, and now on the page.
#pragma once
#include <cmath>

namespace eddy::detail {

/// sqrt(x^2 + y^2) for floats: the squares and their sum in double (the squares exact), one double root,
/// rounded to float.
inline float portable_hypot(float x, float y) {
    const double a = x, b = y;
    return static_cast<float>(std::sqrt(a * a + b * b));
}

}  // namespace eddy::detail
