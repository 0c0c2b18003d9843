// eddy: smooth walls from the walls' shapes (eddy/smooth_walls.hpp).
#include "eddy/smooth_walls.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "core/bounds.hpp"
#include "core/portable_math.hpp"

namespace eddy {

namespace {

// The kernel integrated over a plane at distance z (1/m): 2D a line, 3D a plane (rings of radius s).
template <int D>
double plane_integral(const CubicSpline<D>& W, double z) {
    const double h = W.h;
    z = std::abs(z);
    if (z >= h) return 0.0;
    const int n = 2000;  // Simpson, even
    if constexpr (D == 2) {
        const double L = std::sqrt(h * h - z * z), ds = L / n;
        double sum = 0.0;
        for (int k = 0; k <= n; ++k) {
            const double s = k * ds, w = W.value(static_cast<float>(std::sqrt(z * z + s * s)));
            sum += (k == 0 || k == n ? 1.0 : (k % 2 ? 4.0 : 2.0)) * w;
        }
        return 2.0 * sum * ds / 3.0;
    } else {
        const double dR = (h - z) / n;  // 2 pi integral_z^h W(R) R dR
        double sum = 0.0;
        for (int k = 0; k <= n; ++k) {
            const double R = z + k * dR;
            sum += (k == 0 || k == n ? 1.0 : (k % 2 ? 4.0 : 2.0)) * W.value(static_cast<float>(R)) * R;
        }
        return 2.0 * std::numbers::pi * sum * dR / 3.0;
    }
}

// The rigid motion's velocity at a world point x, from the object's poses at t - e, t, t + e.
template <int D>
Vec<D> point_velocity(const std::array<RigidPose<D>, 3>& p, const Vec<D>& x, double e) {
    const Vec<D> x0 = p[1].inverse(x);
    return (p[2].apply(x0) - p[0].apply(x0)) * static_cast<float>(1.0 / (2.0 * e));
}

// Whether x (in w's frame) is inside the box or closed cylinder container w, or within `margin` outside it.
template <int D>
bool inside_container(const Wall<D>& w, const Vec<D>& x, float margin) {
    if (w.shape == Wall<D>::Shape::box) {
        for (int a = 0; a < D; ++a)
            if (x[a] < w.lo[a] - margin || x[a] > w.hi[a] + margin) return false;
        return true;
    }
    if constexpr (D == 3) {
        const float dx = x[0] - w.center[0], dz = x[2] - w.center[2];
        return detail::portable_hypot(dx, dz) <= w.radius + margin && x[1] >= w.center[1] - margin &&
               x[1] <= w.center[1] + w.height + margin;
    }
    return false;
}

// Copies boundary particle b of `from` into slot k of `to`.
template <int D>
void b_copy(BoundarySet<D>& to, std::size_t k, const BoundarySet<D>& from, std::uint32_t b) {
    to.position[k] = from.position[b];
    to.velocity[k] = from.velocity[b];
    to.psi[k] = from.psi[b];
    to.object[k] = from.object[b];
}

// Whether x lies beyond `reach` of a bounded solid's world box (then the solid has nothing for x).
template <int D>
bool beyond_reach(const Wall<D>& w, const Vec<D>& x, float reach) {
    if (w.bounded)
        for (int a = 0; a < D; ++a)
            if (x[a] < w.reach_lo[a] - reach || x[a] > w.reach_hi[a] + reach) return true;
    return false;
}

// Calls f(d, n) for every face of wall w within `reach` of x: d the distance to it on the fluid's side,
// n its unit normal into the fluid (world frame).
template <int D, class F>
void for_each_face(const Wall<D>& w, const Vec<D>& x, float reach, F&& f) {
    if (beyond_reach(w, x, reach)) return;  // a solid far from x: nothing
    const bool box = w.shape == Wall<D>::Shape::box && !w.solid;
    const bool cylinder = D == 3 && w.shape == Wall<D>::Shape::cylinder && !w.solid;
    if (!box && !cylinder) {  // one face at the nearest point
        Vec<D> towards;
        const float d = distance_to_wall(w, x, towards);
        // A point well outside a container (in another tank of the scene) is none of its business.
        if (d < reach && (w.solid || d > -reach) && norm2(towards) > 0.0f) f(d, towards * -1.0f);
        return;
    }
    const Vec<D> xb = w.moving ? w.pose.inverse(x) : x;
    if (!inside_container(w, xb, reach)) return;
    auto face = [&](float d, Vec<D> n) {
        if (!(d < reach)) return;
        if (w.moving) n = w.pose.apply(xb + n) - w.pose.apply(xb);
        f(d, n);
    };
    if (box) {
        for (int a = 0; a < D; ++a) {
            Vec<D> n = Vec<D>::zero();
            n[a] = 1.0f;
            face(xb[a] - w.lo[a], n);
            face(w.hi[a] - xb[a], n * -1.0f);
        }
        return;
    }
    if constexpr (D == 3) {  // a closed cylinder: side, floor, lid
        const float dx = xb[0] - w.center[0], dz = xb[2] - w.center[2], rho = detail::portable_hypot(dx, dz);
        if (rho > 0.0f) face(w.radius - rho, Vec<D>{{-dx / rho, 0.0f, -dz / rho}});
        face(xb[1] - w.center[1], Vec<D>{{0.0f, 1.0f, 0.0f}});
        face(w.center[1] + w.height - xb[1], Vec<D>{{0.0f, -1.0f, 0.0f}});
    }
}

}  // namespace

template <int D>
bool SmoothWallProfile<D>::at(float d, float& delta_out, float& psi_out) const {
    if (!(d < reach)) return false;
    const float u = std::max(d, 0.0f) / step;
    const std::size_t k = std::min(static_cast<std::size_t>(u), delta.size() - 2);
    const float f = std::min(u - static_cast<float>(k), 1.0f);
    delta_out = delta[k] + f * (delta[k + 1] - delta[k]);
    psi_out = psi[k] + f * (psi[k + 1] - psi[k]);
    return psi_out > 0.0f;
}

namespace {
// Linear interpolation in a table of d from 0 by `step` (d < 0 takes d = 0).
float lookup(const std::vector<float>& t, float step, float d) {
    const float u = std::max(d, 0.0f) / step;
    const std::size_t k = std::min(static_cast<std::size_t>(u), t.size() - 2);
    const float f = std::min(u - static_cast<float>(k), 1.0f);
    return t[k] + f * (t[k + 1] - t[k]);
}
}  // namespace

namespace {
// The kernel integrated along the axes beyond the first two (1/m^2): 2D the kernel itself.
template <int D>
double edge_kernel(const CubicSpline<D>& W, double x, double y) {
    const double h = W.h, rr = x * x + y * y;
    if (rr >= h * h) return 0.0;
    if constexpr (D == 2) {
        return W.value(static_cast<float>(std::sqrt(rr)));
    } else {
        const int n = 32;  // Simpson over z in [0, sqrt(h^2 - rr)], doubled
        const double L = std::sqrt(h * h - rr), dz = L / n;
        double sum = 0.0;
        for (int k = 0; k <= n; ++k)
            sum += (k == 0 || k == n ? 1.0 : (k % 2 ? 4.0 : 2.0)) * W.value(static_cast<float>(std::sqrt(rr + k * dz * k * dz)));
        return 2.0 * sum * dz / 3.0;
    }
}

// Bilinear interpolation in a (cells + 1)^2 table over [-h, h]^2, row-major in a.
float table2(const std::vector<float>& t, int cells, float h, float step, float a, float b) {
    const float u = std::clamp((a + h) / step, 0.0f, float(cells)), v = std::clamp((b + h) / step, 0.0f, float(cells));
    const int i = std::min(static_cast<int>(u), cells - 1), j = std::min(static_cast<int>(v), cells - 1);
    const float fu = u - float(i), fv = v - float(j);
    const std::size_t row = std::size_t(cells) + 1, k = std::size_t(i) * row + std::size_t(j);
    return (1.0f - fu) * ((1.0f - fv) * t[k] + fv * t[k + 1]) + fu * ((1.0f - fv) * t[k + row] + fv * t[k + row + 1]);
}

// Q(a, b) and P(a, b) of the header on a (cells + 1)^2 grid over [-h, h]^2: midpoint sums of edge_kernel.
template <int D>
void edge_tables(const CubicSpline<D>& W, SmoothWallProfile<D>& out) {
    const int N = 128;
    const double h = W.h, dq = 2.0 * h / N;
    const std::size_t row = N + 1;
    out.q_cells = N;
    out.q_step = static_cast<float>(dq);
    out.q.assign(row * row, 0.0f);
    out.p.assign(row * row, 0.0f);
    std::vector<double> cell(std::size_t(N) * N), Q(row * row, 0.0);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) cell[std::size_t(i) * N + j] = edge_kernel(W, -h + (i + 0.5) * dq, -h + (j + 0.5) * dq);
    for (int i = N - 1; i >= 0; --i)
        for (int j = N - 1; j >= 0; --j)
            Q[i * row + j] = cell[std::size_t(i) * N + j] * dq * dq + Q[(i + 1) * row + j] + Q[i * row + j + 1] -
                             Q[(i + 1) * row + j + 1];
    for (int i = 0; i <= N; ++i) {
        double sum = 0.0;
        for (int j = N - 1; j >= 0; --j) {
            sum += edge_kernel(W, -h + i * dq, -h + (j + 0.5) * dq) * dq;
            out.p[i * row + j] = static_cast<float>(sum);
        }
    }
    for (std::size_t k = 0; k < Q.size(); ++k) out.q[k] = static_cast<float>(Q[k]);
}
}  // namespace

namespace {
// Q3(a, b, c) and P3(a, b, c) = integral over y > b, z > c of W(a, y, z) on an (N + 1)^3 grid over [-h, h]^3.
void corner_tables(const CubicSpline<3>& W, SmoothWallProfile<3>& out) {
    const int N = 48;
    const double h = W.h, dq = 2.0 * h / N;
    const std::size_t row = N + 1, plane = row * row;
    auto w = [&](double x, double y, double z) {
        const double rr = x * x + y * y + z * z;
        return rr >= h * h ? 0.0 : double(W.value(static_cast<float>(std::sqrt(rr))));
    };
    std::vector<double> Q(plane * row, 0.0), P(plane * row, 0.0);
    for (int i = N - 1; i >= 0; --i)
        for (int j = N - 1; j >= 0; --j)
            for (int k = N - 1; k >= 0; --k) {
                const double c = w(-h + (i + 0.5) * dq, -h + (j + 0.5) * dq, -h + (k + 0.5) * dq) * dq * dq * dq;
                const std::size_t a = i * plane + j * row + k;
                Q[a] = c + Q[a + plane] + Q[a + row] + Q[a + 1] - Q[a + plane + row] - Q[a + plane + 1] - Q[a + row + 1] +
                       Q[a + plane + row + 1];
            }
    for (int i = 0; i <= N; ++i)
        for (int j = N - 1; j >= 0; --j)
            for (int k = N - 1; k >= 0; --k) {
                const std::size_t a = i * plane + j * row + k;
                P[a] = w(-h + i * dq, -h + (j + 0.5) * dq, -h + (k + 0.5) * dq) * dq * dq + P[a + row] + P[a + 1] -
                       P[a + row + 1];
            }
    out.q3_cells = N;
    out.q3_step = static_cast<float>(dq);
    out.q3.assign(Q.begin(), Q.end());
    out.p3.assign(P.begin(), P.end());
}

// Trilinear interpolation in an (cells + 1)^3 table over [-h, h]^3.
float table3(const std::vector<float>& t, int cells, float h, float step, float a, float b, float c) {
    const float s[3] = {a, b, c};
    int i[3];
    float f[3];
    for (int e = 0; e < 3; ++e) {
        const float u = std::clamp((s[e] + h) / step, 0.0f, float(cells));
        i[e] = std::min(static_cast<int>(u), cells - 1);
        f[e] = u - float(i[e]);
    }
    const std::size_t row = std::size_t(cells) + 1, plane = row * row;
    float out = 0.0f;
    for (int e = 0; e < 8; ++e) {
        const int x = e & 1, y = (e >> 1) & 1, z = (e >> 2) & 1;
        const float wgt = (x ? f[0] : 1.0f - f[0]) * (y ? f[1] : 1.0f - f[1]) * (z ? f[2] : 1.0f - f[2]);
        out += wgt * t[std::size_t(i[0] + x) * plane + std::size_t(i[1] + y) * row + std::size_t(i[2] + z)];
    }
    return out;
}

// The virtual distance delta with W(delta) / |W'(delta)| = target: W / |W'| falls monotonically from infinity
// at 0 to 0 at h (bisection).
template <int D>
float virtual_distance(const CubicSpline<D>& W, double target, int halvings = 48) {
    const double h = W.h;
    double lo = 1e-6 * h, hi = h * (1.0 - 1e-6);
    for (int it = 0; it < halvings; ++it) {
        const double mid = 0.5 * (lo + hi);
        const float dw = W.derivative(static_cast<float>(mid));
        const double ratio = dw < 0.0f ? W.value(static_cast<float>(mid)) / -double(dw) : 1e30;
        (ratio > target ? lo : hi) = mid;
    }
    return static_cast<float>(0.5 * (lo + hi));
}

// The virtual particle (delta, psi) of a wall term of density G and push grad (header: psi W(delta) = G,
// psi W'(delta) = -grad); false (left as they are) when the term holds nothing.
template <int D>
bool virtual_particle(const CubicSpline<D>& W, double G, double grad, double rho0, float& delta_out, float& psi_out) {
    if (!(G > 1e-9 * rho0) || !(grad > 0.0)) return false;
    const float delta = virtual_distance(W, G / grad, 80);
    const double wv = W.value(delta);
    if (!(wv > 0.0)) return false;
    delta_out = delta;
    psi_out = static_cast<float>(G / wv);
    return true;
}
}  // namespace

namespace {
// The edge and corner tables, each scaled (as lambda scales the face) so that a rest lattice's particle on an
// edge (its rows at r from two faces) and in a corner (three) reads rho0: the tables integrate the kernel, the
// fluid is a lattice of three points across it (the factors are 1.00-1.05).
template <int D>
void calibrate_edges(const CubicSpline<D>& W, float r, float mass, float rho0, SmoothWallProfile<D>& out) {
    edge_tables(W, out);
    double quarter = 0.0, octant = 0.0;
    for_each_lattice_offset<D>(2.0f * r, W.h, [&](const Vec<D>& p) {
        if (p[0] < 0.0f || p[1] < 0.0f) return;
        quarter += double(mass) * W.value(p);
        if (D == 3 && p[D - 1] >= 0.0f) octant += double(mass) * W.value(p);
    });
    const double face = out.density(r), scale = double(out.lambda) * rho0;
    const double edge = scale * table2(out.q, out.q_cells, out.h, out.q_step, r, r);
    const double mu2 = edge > 0.0 ? (quarter + 2.0 * face - rho0) / edge : 1.0;
    for (auto* t : {&out.q, &out.p})
        for (float& v : *t) v = static_cast<float>(v * mu2);
    out.mu2 = static_cast<float>(mu2);
    if constexpr (D == 3) {
        corner_tables(W, out);
        const double corner = scale * table3(out.q3, out.q3_cells, out.h, out.q3_step, r, r, r);
        const double mu3 = corner > 0.0 ? (rho0 - octant - 3.0 * face + 3.0 * mu2 * edge) / corner : 1.0;
        for (auto* t : {&out.q3, &out.p3})
            for (float& v : *t) v = static_cast<float>(v * mu3);
        out.mu3 = static_cast<float>(mu3);
    }
}
}  // namespace

template <int D>
bool SmoothWallProfile<D>::triple(const float* s, const Vec<D>* n, float sign, const CubicSpline<D>& W, float& rho_out,
                                  float& delta_out, float& psi_out, Vec<D>& along) const {
    if constexpr (D != 3) {
        return false;
    } else {
        if (!edges || q3.empty()) return false;
        const float scale = lambda * rest_density;
        const float Q = table3(q3, q3_cells, h, q3_step, s[0], s[1], s[2]);
        const Vec<D> G = (n[0] * table3(p3, q3_cells, h, q3_step, s[0], s[1], s[2]) +
                          n[1] * table3(p3, q3_cells, h, q3_step, s[1], s[0], s[2]) +
                          n[2] * table3(p3, q3_cells, h, q3_step, s[2], s[0], s[1])) *
                         (2.0f * kappa * scale);
        const float g = norm(G);
        if (!(Q > 1e-7f * q3[0]) || !(g > 0.0f)) return false;
        const float delta = virtual_distance(W, double(scale) * Q / g), wv = W.value(delta);
        if (!(wv > 0.0f)) return false;
        rho_out = sign * scale * Q;
        delta_out = delta;
        psi_out = rho_out / wv;
        along = G * (1.0f / g);
        return true;
    }
}

template <int D>
bool SmoothWallProfile<D>::corner(const float* d, const Vec<D>* n, const CubicSpline<D>& W, float& rho_out,
                                  float& delta_out, float& psi_out, Vec<D>& along) const {
    float s[3];
    for (int e = 0; e < 3; ++e) {
        if (!(d[e] < reach)) return false;
        s[e] = mapped(std::max(d[e], 0.0f));
    }
    return triple(s, n, 1.0f, W, rho_out, delta_out, psi_out, along);
}

template <int D>
bool SmoothWallProfile<D>::pair(float sk, const Vec<D>& nk, float sl, const Vec<D>& nl, float sign,
                                const CubicSpline<D>& W, float& rho_out, float& delta_out, float& psi_out,
                                Vec<D>& along) const {
    if (!edges || q.empty()) return false;
    const float scale = lambda * rest_density;
    const float Q = table2(q, q_cells, h, q_step, sk, sl);
    const Vec<D> G = (nk * table2(p, q_cells, h, q_step, sk, sl) + nl * table2(p, q_cells, h, q_step, sl, sk)) *
                     (2.0f * kappa * scale);
    const float g = norm(G);
    if (!(Q > 1e-7f * table2(q, q_cells, h, q_step, -h, -h)) || !(g > 0.0f)) return false;
    const float delta = virtual_distance(W, double(scale) * Q / g), wv = W.value(delta);
    if (!(wv > 0.0f)) return false;
    rho_out = sign * scale * Q;
    delta_out = delta;
    psi_out = rho_out / wv;
    along = G * (1.0f / g);
    return true;
}

template <int D>
bool SmoothWallProfile<D>::edge(float dk, const Vec<D>& nk, float dl, const Vec<D>& nl, const CubicSpline<D>& W,
                                float& rho_out, float& delta_out, float& psi_out, Vec<D>& along) const {
    if (!(dk < reach) || !(dl < reach)) return false;
    return pair(mapped(std::max(dk, 0.0f)), nk, mapped(std::max(dl, 0.0f)), nl, -1.0f, W, rho_out, delta_out, psi_out,
                along);
}

template <int D>
float SmoothWallProfile<D>::density(float d) const { return d < reach ? lookup(rho, step, d) : 0.0f; }

template <int D>
float SmoothWallProfile<D>::support(float d) const { return d < reach ? lookup(hold, step, d) : 0.0f; }

namespace {
// The rest lattice (spacing 2r) about a particle of its bottom row, at r from a face.
struct RestLatticeSums {
    double half = 0.0;        // its half's density (its own row included), kg/m^D
    double half_grad = 0.0;   // the rows above's normal gradient m sum |dW/dy| (the mirror's push per unit pressure)
};

template <int D>
RestLatticeSums rest_lattice_sums(const CubicSpline<D>& W, float particle_radius, float mass) {
    RestLatticeSums out;
    for_each_lattice_offset<D>(2.0f * particle_radius, W.h, [&](const Vec<D>& p) {
        if (p[1] < 0.0f) return;
        const float len = norm(p);
        out.half += double(mass) * W.value(p);
        if (p[1] > 0.0f && len > 0.0f) out.half_grad += double(mass) * -W.derivative(len) * p[1] / len;
    });
    return out;
}
}  // namespace

template <int D>
SmoothWallProfile<D> make_smooth_wall_profile(const CubicSpline<D>& W, float particle_radius, float mass,
                                              float rest_density, bool edges) {
    const double h = W.h, r = particle_radius, rho0 = rest_density;
    // S(s) = integral_s^h W1: cumulative trapezoid over [-h, h] on a fine grid.
    const int ns = 4000;
    const double ds = 2.0 * h / ns;
    std::vector<double> w1(ns + 1), S(ns + 1);
    for (int k = 0; k <= ns; ++k) w1[k] = plane_integral(W, -h + k * ds);
    S[ns] = 0.0;
    for (int k = ns - 1; k >= 0; --k) S[k] = S[k + 1] + 0.5 * (w1[k] + w1[k + 1]) * ds;
    auto interp = [&](const std::vector<double>& f, double s) {
        const double u = std::clamp((s + h) / ds, 0.0, double(ns));
        const int k = std::min(static_cast<int>(u), ns - 1);
        return f[k] + (u - k) * (f[k + 1] - f[k]);
    };
    const RestLatticeSums sums = rest_lattice_sums(W, particle_radius, mass);
    const double half = sums.half, half_grad = sums.half_grad;
    SmoothWallProfile<D> out;
    // lambda: fluid resting at r reads rho0; kappa: there the wall's push per unit pressure is twice the
    // rows above's (the mirror image's P_i + P_i), from the lattice's own sums rather than the integrals.
    out.lambda = static_cast<float>((rho0 - half) / (rho0 * interp(S, r)));
    out.kappa = static_cast<float>(half_grad / (out.lambda * rho0 * interp(w1, r)));
    const double lift_r = r * interp(w1, r) + interp(S, r);
    out.reach = static_cast<float>(r + (h - r) / (2.0 * out.kappa));
    out.h = W.h;
    out.radius = particle_radius;
    out.rest_density = rest_density;
    out.edges = edges;
    const int nt = 512;
    out.step = out.reach / nt;
    out.delta.assign(nt + 1, static_cast<float>(h));
    out.psi.assign(nt + 1, 0.0f);
    out.rho.assign(nt + 1, 0.0f);
    out.hold.assign(nt + 1, 0.0f);
    for (int k = 0; k <= nt; ++k) {
        const double d = k * double(out.step), s = r + 2.0 * out.kappa * (d - r);
        const double G = out.lambda * rho0 * interp(S, s), grad = 2.0 * out.kappa * out.lambda * rho0 * interp(w1, s);
        out.rho[k] = static_cast<float>(G);
        out.hold[k] = static_cast<float>(0.5 * (s * interp(w1, s) + interp(S, s)) / lift_r);
        virtual_particle(W, G, grad, rho0, out.delta[k], out.psi[k]);
    }
    if (edges) calibrate_edges(W, particle_radius, mass, rest_density, out);
    return out;
}

namespace {
// V_R at distance rho = R + s of x from the ball's centre (header): the kernel's shells of radius q, each
// weighted by its part inside the ball (midpoint rule, 2,000 shells over the support).
template <int D>
double ball_volume(const CubicSpline<D>& W, double R, double rho) {
    constexpr int nq = 2000;
    const double h = W.h, dq = h / nq, pi = std::numbers::pi;
    rho = std::max(rho, 1e-6 * h);
    double sum = 0.0;
    for (int k = 0; k < nq; ++k) {
        const double q = (k + 0.5) * dq;
        const double t = std::clamp((R * R - rho * rho - q * q) / (2.0 * rho * q), -1.0, 1.0);
        const double part = D == 3 ? 4.0 * pi * q * q * 0.5 * (1.0 + t) : 2.0 * q * (pi - std::acos(t));
        sum += double(W.value(static_cast<float>(q))) * part * dq;
    }
    return sum;
}
}  // namespace

template <int D>
BallMap make_ball_map(const SmoothWallProfile<D>& profile, const CubicSpline<D>& W, float radius) {
    const double R = radius, rho0 = profile.rest_density, lr = profile.lambda * rho0, eps = 1e-3 * W.h;
    BallMap out;
    out.radius = radius;
    out.step = profile.step;
    out.reach = profile.reach;
    const std::size_t nt = profile.rho.size();
    out.rho.assign(nt, 0.0f);
    out.delta.assign(nt, W.h);
    out.psi.assign(nt, 0.0f);
    out.share.assign(nt, 0.0f);
    for (std::size_t k = 0; k < nt; ++k) {
        const double s = profile.mapped(static_cast<float>(k * double(profile.step)));
        const double G = lr * ball_volume(W, R, R + s);
        const double grad = 2.0 * profile.kappa * lr * (ball_volume(W, R, R + s - eps) - ball_volume(W, R, R + s + eps)) /
                            (2.0 * eps);
        out.rho[k] = static_cast<float>(G);
        out.share[k] = profile.rho[k] > 0.0f ? static_cast<float>(std::clamp(G / profile.rho[k], 0.0, 1.0)) : 0.0f;
        virtual_particle(W, G, grad, rho0, out.delta[k], out.psi[k]);
    }
    return out;
}

bool BallMap::at(float d, float& rho_out, float& delta_out, float& psi_out, float& share_out) const {
    if (!(d < reach) || rho.size() < 2) return false;
    const float u = std::max(d, 0.0f) / step;
    const std::size_t k = std::min(static_cast<std::size_t>(u), rho.size() - 2);
    const float f = std::min(u - static_cast<float>(k), 1.0f);
    auto lerp = [&](const std::vector<float>& v) { return v[k] + f * (v[k + 1] - v[k]); };
    rho_out = lerp(rho);
    delta_out = lerp(delta);
    psi_out = lerp(psi);
    share_out = lerp(share);
    return true;
}

template <int D>
BallMaps make_ball_maps(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& mask,
                        const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel, const ExecContext& exec) {
    BallMaps out;
    out.of_wall.assign(walls.size(), -1);
    std::vector<float> radii;
    for (std::size_t w = 0; w < walls.size(); ++w) {
        const Wall<D>& wall = walls[w];
        if (w >= mask.size() || !mask[w] || !wall.solid || wall.shape != Wall<D>::Shape::ball) continue;
        const auto it = std::find(radii.begin(), radii.end(), wall.radius);
        out.of_wall[w] = static_cast<int>(it - radii.begin());
        if (it == radii.end()) radii.push_back(wall.radius);
    }
    out.maps.resize(radii.size());
    parallel_for_each_index(exec, radii.size(), [&](std::size_t k) { out.maps[k] = make_ball_map(profile, kernel, radii[k]); }, 1);
    return out;
}

template <int D>
std::vector<std::uint8_t> smooth_wall_mask(const std::vector<Wall<D>>& walls, std::size_t object_count,
                                           std::vector<std::uint8_t>& objects) {
    std::vector<std::uint8_t> mask(walls.size(), 0);
    objects.assign(object_count, 0);
    for (std::size_t w = 0; w < walls.size(); ++w) {
        const Wall<D>& wall = walls[w];
        if (!drawn_smooth<D>(wall.shape, wall.solid, wall.body, open_shell(wall))) continue;
        mask[w] = 1;
        if (wall.owner >= 0 && static_cast<std::size_t>(wall.owner) < object_count) objects[wall.owner] = 1;
    }
    return mask;
}

namespace {
// One entry of a particle's list drawn from a smooth wall: a face (at distance d, normal n into the fluid) or,
// with the profile's edges, the term of two perpendicular faces (n: its virtual particle's direction).
template <int D>
struct FaceTerm {
    float d = 0.0f, rho = 0.0f, delta = 0.0f, psi = 0.0f;
    float share = 1.0f;  // of the face's hydrostatic push H(d) (a solid box's face: its orthant's share)
    Vec<D> n;
    bool edge = false;
};

// A solid box drawn smooth (fluid outside): within the kernel's reach the region beyond its faces is the
// orthant of the D faces that look towards x (per axis the nearer side, at distance d_a: negative where x
// lies between that axis' two faces). Its density is the face x is farthest outside of (p), less what of
// that face's half space H_p lies beyond the others (H^c: the half space across a face, s -> -s, n -> -n):
//   2D  m(H_p & H_q)       = m(H_p) - m(H_p & H_q^c)
//   3D  m(H_p & H_q & H_o) = m(H_p) - m(H_p & H_q^c) - m(H_p & H_q & H_o^c)
// in the mapped distances s of the header (the kernel's own integrals: the tables without the containers'
// lattice calibration mu2, mu3); the face is the containers' face (its hold pushed by the orthant's
// share of it), the others the edge and corner terms of negative psi. Mid-face the others are beyond the
// kernel (-s >= h) and the face is a container's face exactly. Calls f for each, face first.
template <int D, class F>
void solid_box_terms(const Wall<D>& w, const Vec<D>& x, const SmoothWallProfile<D>& profile,
                     const CubicSpline<D>* kernel, F&& f) {
    const float reach = profile.reach;
    if (beyond_reach(w, x, reach)) return;
    const Vec<D> xb = w.moving ? w.pose.inverse(x) : x;
    float d[D];
    Vec<D> n[D];
    int p = 0;
    for (int a = 0; a < D; ++a) {
        const bool high = xb[a] >= 0.5f * (w.lo[a] + w.hi[a]);
        d[a] = high ? xb[a] - w.hi[a] : w.lo[a] - xb[a];
        if (!(d[a] < reach)) return;
        n[a] = Vec<D>::zero();
        n[a][a] = high ? 1.0f : -1.0f;
        if (w.moving) n[a] = w.pose.apply(xb + n[a]) - w.pose.apply(xb);
        if (d[a] > d[p]) p = a;
    }
    FaceTerm<D> face;
    face.d = d[p];
    face.n = n[p];
    profile.at(d[p], face.delta, face.psi);
    face.rho = profile.density(d[p]);
    FaceTerm<D> off[D];
    int m = 0;
    float rho = face.rho;
    if (profile.edges && kernel) {
        const float sp = profile.mapped(std::max(d[p], 0.0f));
        int q[2], k = 0;
        for (int a = 0; a < D; ++a)
            if (a != p) q[k++] = a;
        FaceTerm<D>& t = off[m];
        t.edge = true;
        if (profile.pair(sp, n[p], -profile.mapped(d[q[0]]), n[q[0]] * -1.0f, -1.0f / profile.mu2, *kernel, t.rho, t.delta, t.psi,
                         t.n))
            rho += off[m++].rho;
        if constexpr (D == 3) {
            const float s3[3] = {sp, profile.mapped(d[q[0]]), -profile.mapped(d[q[1]])};
            const Vec<D> n3[3] = {n[p], n[q[0]], n[q[1]] * -1.0f};
            FaceTerm<D>& u = off[m];
            u.edge = true;
            if (profile.triple(s3, n3, -1.0f / profile.mu3, *kernel, u.rho, u.delta, u.psi, u.n)) rho += off[m++].rho;
        }
    }
    face.share = face.rho > 0.0f ? std::clamp(rho / face.rho, 0.0f, 1.0f) : 0.0f;
    f(face);
    for (int k = 0; k < m; ++k) f(off[k]);
}

// Calls f for each face of w within reach of x, then for each pair of them at a right angle that the
// profile's edge term takes off (the same calls, in the same order, for counting and for filling).
template <int D, class F>
void for_each_face_and_edge(const Wall<D>& w, const Vec<D>& x, const SmoothWallProfile<D>& profile,
                            const CubicSpline<D>* kernel, F&& f) {
    constexpr int kMax = 8;
    float ds[kMax];
    Vec<D> ns[kMax];
    int m = 0;
    for_each_face(w, x, profile.reach, [&](float d, const Vec<D>& nrm) {
        FaceTerm<D> t;
        t.d = d;
        t.n = nrm;
        profile.at(d, t.delta, t.psi);  // psi 0 where the table runs out: a virtual particle that adds nothing
        t.rho = profile.density(d);
        f(t);
        if (m < kMax) {
            ds[m] = d;
            ns[m++] = nrm;
        }
    });
    if (!profile.edges || !kernel) return;
    for (int k = 0; k < m; ++k)
        for (int l = k + 1; l < m; ++l) {
            if (std::abs(dot(ns[k], ns[l])) > 0.5f) continue;
            FaceTerm<D> t;
            t.edge = true;
            if (profile.edge(ds[k], ns[k], ds[l], ns[l], *kernel, t.rho, t.delta, t.psi, t.n)) f(t);
        }
    if constexpr (D == 3)
        for (int k = 0; k < m; ++k)
            for (int l = k + 1; l < m; ++l)
                for (int o = l + 1; o < m; ++o) {
                    if (std::abs(dot(ns[k], ns[l])) > 0.5f || std::abs(dot(ns[k], ns[o])) > 0.5f ||
                        std::abs(dot(ns[l], ns[o])) > 0.5f)
                        continue;
                    const float d3[3] = {ds[k], ds[l], ds[o]};
                    const Vec<D> n3[3] = {ns[k], ns[l], ns[o]};
                    FaceTerm<D> t;
                    t.edge = true;
                    if (profile.corner(d3, n3, *kernel, t.rho, t.delta, t.psi, t.n)) f(t);
                }
}

// A solid ball drawn from its map: one term on x's normal to the sphere (header, BallMap).
template <int D, class F>
void solid_ball_term(const Wall<D>& w, const BallMap& map, const Vec<D>& x, F&& f) {
    if (beyond_reach(w, x, map.reach)) return;
    const Vec<D> off = x - (w.moving ? w.pose.apply(w.center) : w.center);
    const float len = norm(off);
    FaceTerm<D> t;
    t.d = len - w.radius;
    if (!(len > 0.0f) || !map.at(t.d, t.rho, t.delta, t.psi, t.share)) return;
    t.n = off * (1.0f / len);
    f(t);
}

// A wall drawn from its volume map (eddy/volume_map.hpp): one term, the face's at x's distance d scaled by
// the map's share (density) and push (the gradient's length and direction).
template <int D, class F>
void volume_map_term(const Wall<D>& w, const VolumeMap<D>& map, const VolumeMaps<D>& maps, const Vec<D>& x,
                     const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel, F&& f) {
    if (beyond_reach(w, x, profile.reach)) return;
    Vec<D> towards, push;
    FaceTerm<D> t;
    t.d = distance_to_wall(w, x, towards);
    // A point well outside a container model (in another tank of the scene) is none of its business.
    float delta, psi, share;
    if (!(t.d < profile.reach) || (!w.solid && !(t.d > -profile.reach)) || !profile.at(t.d, delta, psi)) return;
    const Vec<D> xl = w.moving ? w.pose.inverse(x) : x;
    const float len = map.sample(xl, share, push) ? norm(push) : 0.0f;
    if (!(len > 0.0f) || !(share > 0.0f)) return;
    t.n = push * (1.0f / len);
    if (w.moving) t.n = w.pose.apply(xl + t.n) - w.pose.apply(xl);
    t.rho = profile.density(t.d) * share;
    t.share = std::min(share, 2.0f);
    if (maps.virtual_particle(kernel, t.rho, -psi * kernel.derivative(delta) * len, t.delta, t.psi)) f(t);
}

// Every term of wall wi near x: a solid box's orthant (solid_box_terms), a solid ball's map (solid_ball_term),
// a volume map's (volume_map_term), any other wall's faces and edges.
template <int D, class F>
void wall_terms(const Wall<D>& w, std::size_t wi, const BallMaps* balls, const VolumeMaps<D>* volumes, const Vec<D>& x,
                const SmoothWallProfile<D>& profile, const CubicSpline<D>* kernel, F&& f) {
    if (w.solid && w.shape == Wall<D>::Shape::box) return solid_box_terms(w, x, profile, kernel, f);
    if (const BallMap* ball = balls ? balls->find(wi) : nullptr) return solid_ball_term(w, *ball, x, f);
    if (const VolumeMap<D>* map = volumes ? volumes->find(wi) : nullptr)
        return kernel ? volume_map_term(w, *map, *volumes, x, profile, *kernel, f) : void();
    for_each_face_and_edge(w, x, profile, kernel, f);
}
}  // namespace

template <int D>
void build_virtual_walls(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& smooth,
                         const std::vector<BoundaryMotion<D>>& motions, double t, const SmoothWallProfile<D>& profile,
                         const Vec<D>& g, const Vec<D>* x, std::size_t n, VirtualWalls<D>& out, const ExecContext& exec,
                         const NeighborLists* particle_lists, const BoundarySet<D>* particles,
                         const std::vector<std::uint8_t>* smooth_object, const CubicSpline<D>* kernel,
                         const BallMaps* balls, const VolumeMaps<D>* volumes) {
    // A boundary particle neighbour kept as it is: its object is not drawn smooth.
    auto kept = [&](std::uint32_t b) {
        const std::uint16_t o = particles->object[b];
        return !smooth_object || o >= smooth_object->size() || !(*smooth_object)[o];
    };
    const bool with_particles = particle_lists && particles && particle_lists->size() >= n;
    // The moving objects' poses about t, once a step (their faces' velocities).
    const double e = 1e-4;
    std::vector<std::array<RigidPose<D>, 3>> poses(motions.size());
    std::vector<std::uint8_t> moving(motions.size(), 0);
    for (std::size_t o = 0; o < motions.size(); ++o)
        if (motions[o].moving()) {
            moving[o] = 1;
            poses[o] = {motions[o].pose(t - e), motions[o].pose(t), motions[o].pose(t + e)};
        }
    const float reach = profile.reach;
    out.counts.resize(n);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint32_t c = 0;
        for (std::size_t w = 0; w < walls.size(); ++w)
            if (smooth[w]) wall_terms(walls[w], w, balls, volumes, x[i], profile, kernel, [&](const FaceTerm<D>&) { ++c; });
        if (with_particles)
            for (std::uint32_t b : (*particle_lists)[i]) c += kept(b);
        out.counts[i] = c;
    });
    auto& off = out.lists.offsets;
    off.resize(n + 1);
    off[0] = 0;
    for (std::size_t i = 0; i < n; ++i) off[i + 1] = off[i] + out.counts[i];
    const std::size_t total = off[n];
    out.lists.indices.resize(total);
    auto& b = out.set;
    b.position.resize(total);
    b.velocity.resize(total);
    b.psi.resize(total);
    b.object.resize(total);
    out.density.resize(n);
    out.hold.resize(n);
    out.gap.resize(total);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint32_t k = off[i];
        float rho_b = 0.0f;
        Vec<D> hold = Vec<D>::zero();
        if (with_particles)
            for (std::uint32_t b : (*particle_lists)[i]) {
                if (!kept(b)) continue;
                out.lists.indices[k] = k;
                b_copy(out.set, k, *particles, b);
                out.gap[k] = 0.0f;
                ++k;
            }
        out.counts[i] = k - off[i];  // from here on: the boundary particles among i's list
        for (std::size_t wi = 0; wi < walls.size(); ++wi) {
            if (!smooth[wi]) continue;
            const Wall<D>& w = walls[wi];
            const std::uint16_t obj = static_cast<std::uint16_t>(w.owner >= 0 ? w.owner : 0);
            wall_terms(w, wi, balls, volumes, x[i], profile, kernel, [&](const FaceTerm<D>& f) {
                rho_b += f.rho;
                const float gn = dot(g, f.n);
                if (!f.edge && (gn < 0.0f || w.solid)) hold += f.n * (-gn * profile.support(f.d) * f.share);
                const Vec<D> xb = x[i] - f.n * f.delta;
                out.lists.indices[k] = k;
                b.position[k] = xb;
                b.psi[k] = f.psi;
                b.object[k] = obj;
                out.gap[k] = f.edge ? reach : f.d;
                b.velocity[k] = obj < moving.size() && moving[obj] ? point_velocity(poses[obj], xb, e) : Vec<D>::zero();
                ++k;
            });
        }
        out.density[i] = rho_b;
        out.hold[i] = hold;
    });
}

double wall_shear_stress(double u, double y, double nu) {
    if (!(u > 0.0) || !(y > 0.0) || !(nu > 0.0)) return 0.0;
    constexpr double kappa = 0.41, B = 5.5;
    const double eB = std::exp(-kappa * B), re = u * y / nu;
    // f(u+) = u+ y+(u+) - re: increasing and convex, f(u+) >= u+^2 - re. Newton from above the root,
    // min(sqrt(re), 60) (f(60) > 1e10), falls monotonically onto it.
    double up = std::min(std::sqrt(re), 60.0);
    for (int it = 0; it < 60; ++it) {
        const double k = kappa * up, ek = std::exp(k);
        const double yp = up + eB * (ek - 1.0 - k - 0.5 * k * k - k * k * k / 6.0);
        const double dyp = 1.0 + eB * kappa * (ek - 1.0 - k - 0.5 * k * k);
        const double f = up * yp - re, df = yp + up * dyp;
        const double next = up - f / df;
        if (!(next < up) || up - next <= 1e-9 * up) {
            up = std::max(next, 0.0);
            break;
        }
        up = next;
    }
    if (!(up > 0.0)) return 0.0;
    const double ustar = u / up;
    return ustar * ustar;
}

template <int D>
void SmoothWalls<D>::init(bool wanted, const std::vector<Wall<D>>& walls, std::size_t object_count,
                          const CubicSpline<D>& kernel, float particle_radius, float mass, float rest_density, float nu,
                          const ExecContext* exec) {
    m_walls = smooth_wall_mask(walls, object_count, m_objects);
    m_on = wanted && std::find(m_walls.begin(), m_walls.end(), 1) != m_walls.end();
    m_rest_density = rest_density;
    m_nu = nu;
    m_radius = particle_radius;
    if (!m_on) return;
    m_kernel = kernel;
    m_profile = make_smooth_wall_profile(kernel, particle_radius, mass, rest_density, true);
    m_rho_rest = m_profile.density(particle_radius);
    const ExecContext one(1);
    make_maps(walls, exec ? *exec : one);
}

template <int D>
void SmoothWalls<D>::make_maps(const std::vector<Wall<D>>& walls, const ExecContext& exec) {
    const auto start = std::chrono::steady_clock::now();
    m_balls = make_ball_maps(walls, m_walls, m_profile, m_kernel, exec);
    m_volumes = make_volume_maps(walls, m_walls, m_profile, m_kernel, exec, MapFill::on_demand);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!m_volumes.maps.empty() && took >= 1.0 && isatty(fileno(stderr)))  // a wait at the start, said on a terminal
        std::fprintf(stderr, "eddy: smooth walls: %zu volume maps planned in %.1f s (filled where the fluid comes)\n",
                     m_volumes.maps.size(), took);
    for (std::size_t w = 0; w < walls.size(); ++w) {
        if (!m_walls[w] || m_volumes.find(w) || !volume_mapped<D>(walls[w].shape, walls[w].solid, open_shell(walls[w])))
            continue;
        for (std::size_t v = 0; v < walls.size(); ++v)  // refused: its object's walls keep their particles
            if (v == w || (walls[w].owner >= 0 && walls[v].owner == walls[w].owner)) m_walls[v] = 0;
        if (walls[w].owner >= 0 && static_cast<std::size_t>(walls[w].owner) < m_objects.size()) m_objects[walls[w].owner] = 0;
    }
    for (const std::string& why : m_volumes.refused)
        std::fprintf(stderr, "eddy: smooth walls: %s: no volume map, its boundary particles hold the fluid\n", why.c_str());
    m_on = std::find(m_walls.begin(), m_walls.end(), 1) != m_walls.end();
}

template <int D>
void SmoothWalls<D>::update(const std::vector<Wall<D>>& walls, const std::vector<BoundaryMotion<D>>& motions, double t,
                            const Vec<D>& g, const Vec<D>* x, std::size_t n, const NeighborLists& particle_lists,
                            const BoundarySet<D>& particles, const ExecContext& exec) {
    if (!m_on) return;
    prepare(walls, motions, x, n, exec);
    build_virtual_walls(walls, m_walls, motions, t, m_profile, g, x, n, m_virtual, exec, &particle_lists, &particles,
                        &m_objects, &m_kernel, &m_balls, &m_volumes);
}

namespace {
// The world box in wall w's frame: a moving wall's, around the box's corners taken there.
template <int D>
Aabb<D> in_frame(const Wall<D>& w, const Aabb<D>& box) {
    if (!w.moving) return box;
    Aabb<D> in = detail::empty_box<D>();
    for (int c = 0; c < (1 << D); ++c) {
        Vec<D> corner;
        for (int a = 0; a < D; ++a) corner[a] = ((c >> a) & 1 ? box.hi : box.lo)[a];
        const Vec<D> l = w.pose.inverse(corner);
        detail::grow_box(in, l, l);
    }
    return in;
}
}  // namespace

// Which objects move this step, and the volume maps' blocks the fluid at x[0, n) may read (MapFill::on_demand):
// those within the fluid's box grown by the reach (the margin lets the fluid move a while before the next
// fill). A process of a distributed run holds its box and halo, so it fills only the blocks around them (issue 44).
// Blocks beyond twice the reach of the box are released (a process's box moves when the boxes are cut again,
// the fluid leaves a region): a map holds the blocks around the fluid now, not every block it ever came near.
template <int D>
void SmoothWalls<D>::prepare(const std::vector<Wall<D>>& walls, const std::vector<BoundaryMotion<D>>& motions,
                             const Vec<D>* x, std::size_t n, const ExecContext& exec) {
    m_moving.assign(motions.size(), 0);
    for (std::size_t o = 0; o < motions.size(); ++o) m_moving[o] = motions[o].moving() ? 1 : 0;
    if (m_volumes.maps.empty()) return;  // no fluid (n = 0): an empty box, every block released
    const Aabb<D> box = detail::bounding_box(x, n, exec);
    const Vec<D> reach = Vec<D>::filled(m_profile.reach);
    for (std::size_t w = 0; w < walls.size(); ++w) {
        const int m = w < m_volumes.of_wall.size() ? m_volumes.of_wall[w] : -1;
        if (m < 0) continue;
        VolumeMap<D>& map = m_volumes.maps[static_cast<std::size_t>(m)];
        const Aabb<D> keep = in_frame(walls[w], Aabb<D>{box.lo - reach * 2.0f, box.hi + reach * 2.0f});
        release_volume_map(keep.lo, keep.hi, map);
        const Aabb<D> in = in_frame(walls[w], Aabb<D>{box.lo - reach, box.hi + reach});
        fill_volume_map(walls[w], m_profile, m_kernel, in.lo, in.hi, exec, map);
    }
}

// Each block of particles writes its own pairs, in the order ghost_share visits them: the same list on any
// thread count.
template <int D>
void SmoothWalls<D>::cache_ghost_pairs(const Vec<D>* x, const NeighborLists& lists, std::size_t n,
                                       const ExecContext& exec) {
    if (!m_on) return;
    m_pairs.resize((n + kBlock - 1) / kBlock);
    m_pair_end.resize(n);
    parallel_blocks(exec, n, [&](std::size_t b0, std::size_t b1) {
        auto& block = m_pairs[b0 / kBlock];
        block.clear();
        for (std::size_t i = b0; i < b1; ++i) {
            if (mirrored(i))
                for_each_ghost_pair(i, x, lists[i], [&](std::uint32_t j, bool moving_face, const Vec<D>& rt, float dw, float len) {
                    block.push_back(GhostPair{moving_face ? j | kMovingFace : j, rt, dw, len});
                });
            m_pair_end[i] = static_cast<std::uint32_t>(block.size());
        }
    });
}

template <int D>
std::size_t SmoothWalls<D>::memory_bytes() const {
    std::size_t bytes = m_virtual.memory_bytes() + m_pair_end.capacity() * sizeof(std::uint32_t) + m_volumes.memory_bytes();
    for (const auto& block : m_pairs) bytes += block.capacity() * sizeof(GhostPair);
    return bytes;
}

template <int D>
Vec<D> SmoothWalls<D>::push(std::size_t i, float rho) const {
    if (!m_on) return Vec<D>::zero();
    return m_virtual.hold[i] * std::clamp(5.0f * rho / m_rest_density - 4.0f, 0.0f, 1.0f);
}

template <int D>
Vec<D> SmoothWalls<D>::shear(std::size_t i, const Vec<D>& x, const Vec<D>& v, float dt) const {
    Vec<D> dv = Vec<D>::zero();
    if (!m_on || !(m_nu > 0.0f) || !(m_rho_rest > 0.0f)) return dv;
    const auto& set = m_virtual.set;
    for (std::uint32_t k = first_face(i); k < m_virtual.lists.offsets[i + 1]; ++k) {
        Vec<D> n;
        if (!face_normal(k, x, n)) continue;
        const Vec<D> u = v + dv - set.velocity[k];
        const Vec<D> ut = u - n * dot(u, n);
        const float slip = norm(ut);
        if (!(slip > 0.0f)) continue;
        const float w = std::min(1.0f, m_profile.density(m_virtual.gap[k]) / m_rho_rest);
        if (!(w > 0.0f)) continue;
        const float y = std::max(m_virtual.gap[k], 0.05f * m_radius);  // on the face: the first twentieth of r
        const float a = w * static_cast<float>(wall_shear_stress(slip, y, m_nu)) / (2.0f * m_radius);
        dv -= ut * (std::min(a * dt, slip) / slip);
    }
    return dv;
}

template class SmoothWalls<2>;
template class SmoothWalls<3>;
template struct SmoothWallProfile<2>;
template struct SmoothWallProfile<3>;
template SmoothWallProfile<2> make_smooth_wall_profile<2>(const CubicSpline<2>&, float, float, float, bool);
template SmoothWallProfile<3> make_smooth_wall_profile<3>(const CubicSpline<3>&, float, float, float, bool);
template void build_virtual_walls<2>(const std::vector<Wall<2>>&, const std::vector<std::uint8_t>&,
                                     const std::vector<BoundaryMotion<2>>&, double, const SmoothWallProfile<2>&,
                                     const Vec<2>&, const Vec<2>*, std::size_t, VirtualWalls<2>&, const ExecContext&,
                                     const NeighborLists*, const BoundarySet<2>*, const std::vector<std::uint8_t>*,
                                     const CubicSpline<2>*, const BallMaps*, const VolumeMaps<2>*);
template void build_virtual_walls<3>(const std::vector<Wall<3>>&, const std::vector<std::uint8_t>&,
                                     const std::vector<BoundaryMotion<3>>&, double, const SmoothWallProfile<3>&,
                                     const Vec<3>&, const Vec<3>*, std::size_t, VirtualWalls<3>&, const ExecContext&,
                                     const NeighborLists*, const BoundarySet<3>*, const std::vector<std::uint8_t>*,
                                     const CubicSpline<3>*, const BallMaps*, const VolumeMaps<3>*);
template BallMap make_ball_map<2>(const SmoothWallProfile<2>&, const CubicSpline<2>&, float);
template BallMap make_ball_map<3>(const SmoothWallProfile<3>&, const CubicSpline<3>&, float);
template BallMaps make_ball_maps<2>(const std::vector<Wall<2>>&, const std::vector<std::uint8_t>&,
                                    const SmoothWallProfile<2>&, const CubicSpline<2>&, const ExecContext&);
template BallMaps make_ball_maps<3>(const std::vector<Wall<3>>&, const std::vector<std::uint8_t>&,
                                    const SmoothWallProfile<3>&, const CubicSpline<3>&, const ExecContext&);
template std::vector<std::uint8_t> smooth_wall_mask<2>(const std::vector<Wall<2>>&, std::size_t, std::vector<std::uint8_t>&);
template std::vector<std::uint8_t> smooth_wall_mask<3>(const std::vector<Wall<3>>&, std::size_t, std::vector<std::uint8_t>&);

}  // namespace eddy
