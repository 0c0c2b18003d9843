// eddy: small fixed-size vectors, generic over the dimension (2 or 3).
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace eddy {

/// A D-dimensional vector of floats (metres, m/s, ... as the field says). Plain data, no invariants.
template <int D>
struct Vec {
    static_assert(D == 2 || D == 3, "eddy supports 2D and 3D");
    float v[D];

    constexpr float& operator[](int i) { return v[i]; }
    constexpr float operator[](int i) const { return v[i]; }

    static constexpr Vec zero() {
        Vec r{};
        for (int i = 0; i < D; ++i) r.v[i] = 0.0f;
        return r;
    }
    static constexpr Vec filled(float s) {
        Vec r{};
        for (int i = 0; i < D; ++i) r.v[i] = s;
        return r;
    }
    constexpr Vec& operator+=(const Vec& o) {
        for (int i = 0; i < D; ++i) v[i] += o.v[i];
        return *this;
    }
    constexpr Vec& operator-=(const Vec& o) {
        for (int i = 0; i < D; ++i) v[i] -= o.v[i];
        return *this;
    }
    constexpr Vec& operator*=(float s) {
        for (int i = 0; i < D; ++i) v[i] *= s;
        return *this;
    }
    friend constexpr Vec operator+(Vec a, const Vec& b) { return a += b; }
    friend constexpr Vec operator-(Vec a, const Vec& b) { return a -= b; }
    friend constexpr Vec operator*(Vec a, float s) { return a *= s; }
    friend constexpr Vec operator*(float s, Vec a) { return a *= s; }
    friend constexpr Vec operator-(Vec a) {
        for (int i = 0; i < D; ++i) a.v[i] = -a.v[i];
        return a;
    }
    friend constexpr bool operator==(const Vec& a, const Vec& b) {
        for (int i = 0; i < D; ++i)
            if (a.v[i] != b.v[i]) return false;
        return true;
    }
};

using Vec2 = Vec<2>;
using Vec3 = Vec<3>;

template <int D>
constexpr float dot(const Vec<D>& a, const Vec<D>& b) {
    float s = 0.0f;
    for (int i = 0; i < D; ++i) s += a.v[i] * b.v[i];
    return s;
}
template <int D>
constexpr float norm2(const Vec<D>& a) { return dot(a, a); }
template <int D>
inline float norm(const Vec<D>& a) { return std::sqrt(dot(a, a)); }
template <int D>
inline bool is_finite(const Vec<D>& a) {
    for (int i = 0; i < D; ++i)
        if (!std::isfinite(a.v[i])) return false;
    return true;
}

/// Converts a 3-component array (as scene files store every vector) to Vec<D>, dropping z in 2D.
template <int D>
constexpr Vec<D> from_array(const std::array<double, 3>& a) {
    Vec<D> r{};
    for (int i = 0; i < D; ++i) r.v[i] = static_cast<float>(a[i]);
    return r;
}

/// Axis-aligned box.
template <int D>
struct Aabb {
    Vec<D> lo = Vec<D>::filled(0.0f);
    Vec<D> hi = Vec<D>::filled(0.0f);
    bool contains(const Vec<D>& p) const {
        for (int i = 0; i < D; ++i)
            if (!(p.v[i] >= lo.v[i] && p.v[i] <= hi.v[i])) return false;
        return true;
    }
};

}  // namespace eddy
