// eddy-view: users' models as drawn (see models.hpp).
#include "models.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace eddy::view {

V3 ModelView::apply(V3 p) const {
    return {pose(0, 0) * p.x + pose(0, 1) * p.y + pose(0, 2) * p.z + pose(0, 3),
            pose(1, 0) * p.x + pose(1, 1) * p.y + pose(1, 2) * p.z + pose(1, 3),
            pose(2, 0) * p.x + pose(2, 1) * p.y + pose(2, 2) * p.z + pose(2, 3)};
}

SurfaceMesh shaded_mesh(const Mesh<3>& m, float crease_deg) {
    const std::size_t T = m.cells.size(), V = m.vertices.size();
    // Face normals: area-weighted (|n| = 2 area) and unit.
    std::vector<std::array<double, 3>> fn(T), fu(T);
    for (std::size_t t = 0; t < T; ++t) {
        const auto& a = m.vertices[m.cells[t][0]];
        const auto& b = m.vertices[m.cells[t][1]];
        const auto& c = m.vertices[m.cells[t][2]];
        const double u[3] = {double(b[0]) - a[0], double(b[1]) - a[1], double(b[2]) - a[2]};
        const double v[3] = {double(c[0]) - a[0], double(c[1]) - a[1], double(c[2]) - a[2]};
        fn[t] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        const double l = std::sqrt(fn[t][0] * fn[t][0] + fn[t][1] * fn[t][1] + fn[t][2] * fn[t][2]);
        fu[t] = l > 0 ? std::array<double, 3>{fn[t][0] / l, fn[t][1] / l, fn[t][2] / l} : std::array<double, 3>{0, 0, 0};
    }
    // The triangles around each vertex (compressed rows).
    std::vector<std::uint32_t> start(V + 1, 0), around(3 * T);
    for (const auto& c : m.cells)
        for (auto v : c) ++start[v + 1];
    for (std::size_t v = 0; v < V; ++v) start[v + 1] += start[v];
    {
        std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
        for (std::size_t t = 0; t < T; ++t)
            for (auto v : m.cells[t]) around[fill[v]++] = static_cast<std::uint32_t>(t);
    }
    const double cos_crease = std::cos(double(crease_deg) * std::numbers::pi / 180.0);
    SurfaceMesh out;
    out.xyz.resize(9 * T);
    out.normals.resize(9 * T);
    out.triangles.resize(3 * T);
    for (std::size_t t = 0; t < T; ++t)
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t v = m.cells[t][k];
            double n[3] = {0, 0, 0};
            for (std::uint32_t j = start[v]; j < start[v + 1]; ++j) {
                const std::uint32_t f = around[j];
                if (fu[f][0] * fu[t][0] + fu[f][1] * fu[t][1] + fu[f][2] * fu[t][2] < cos_crease) continue;
                for (int d = 0; d < 3; ++d) n[d] += fn[f][d];
            }
            double l = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (!(l > 0)) n[0] = 0, n[1] = 1, n[2] = 0, l = 1;  // a degenerate triangle: any normal
            const std::size_t c = 3 * t + k;
            for (int d = 0; d < 3; ++d) {
                out.xyz[3 * c + d] = m.vertices[v][d];
                out.normals[3 * c + d] = static_cast<float>(n[d] / l);
            }
            out.triangles[c] = static_cast<std::uint32_t>(c);
        }
    return out;
}

Outline outline_of(const Mesh<2>& m) {
    Outline o;
    o.xyz.reserve(3 * m.vertices.size());
    for (const auto& v : m.vertices) o.xyz.insert(o.xyz.end(), {v[0], v[1], 0.0f});
    o.segments.reserve(2 * m.cells.size());
    for (const auto& c : m.cells) o.segments.insert(o.segments.end(), {c[0], c[1]});
    return o;
}

template <int D>
Mat4 pose_matrix(const RigidPose<D>& p) {
    Mat4 r = Mat4::identity();
    for (int a = 0; a < D; ++a) {
        double t = p.pivot[a] + p.shift[a];
        for (int b = 0; b < D; ++b) {
            r(a, b) = static_cast<float>(p.R[a][b]);
            t -= p.R[a][b] * p.pivot[b];
        }
        r(a, 3) = static_cast<float>(t);
    }
    return r;
}
template Mat4 pose_matrix<2>(const RigidPose<2>&);
template Mat4 pose_matrix<3>(const RigidPose<3>&);

namespace {

std::vector<V3> posed_points(const Outline& o, const Mat4& pose) {
    ModelView mv;
    mv.pose = pose;
    std::vector<V3> p(o.xyz.size() / 3);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = mv.apply({o.xyz[3 * i], o.xyz[3 * i + 1], o.xyz[3 * i + 2]});
    return p;
}

}  // namespace

std::vector<float> outline_lines(const Outline& o, const Mat4& pose) {
    const auto p = posed_points(o, pose);
    std::vector<float> out;
    out.reserve(3 * o.segments.size());
    for (auto v : o.segments) out.insert(out.end(), {p[v].x, p[v].y, p[v].z});
    return out;
}

std::vector<float> outline_band(const Outline& o, const Mat4& pose, bool solid, float width) {
    const auto p = posed_points(o, pose);
    std::vector<float> out;
    auto tri = [&](V3 a, V3 b, V3 c) {
        for (V3 q : {a, b, c}) out.insert(out.end(), {q.x, q.y, q.z});
    };
    // Per vertex: the wall-side normals of its segments, for the joins.
    std::vector<std::vector<V3>> normals(p.size());
    for (std::size_t s = 0; s + 1 < o.segments.size(); s += 2) {
        const V3 a = p[o.segments[s]], b = p[o.segments[s + 1]];
        const V3 d = b - a;
        const float l = std::sqrt(d.x * d.x + d.y * d.y);
        if (!(l > 0)) continue;
        // Inside is on the left of a -> b; the wall particles lie inside a solid, outside a container.
        const float sign = solid ? 1.0f : -1.0f;
        const V3 n{-d.y / l * sign, d.x / l * sign, 0.0f};
        const V3 off = n * width;
        tri(a, b, b + off);
        tri(a, b + off, a + off);
        normals[o.segments[s]].push_back(n);
        normals[o.segments[s + 1]].push_back(n);
    }
    // Round joins: a fan from each corner between its segments' normals (the smaller angle).
    for (std::size_t v = 0; v < p.size(); ++v) {
        const auto& ns = normals[v];
        for (std::size_t k = 1; k < ns.size(); ++k) {
            const float a0 = std::atan2(ns[0].y, ns[0].x);
            float turn = std::atan2(ns[k].y, ns[k].x) - a0;
            while (turn > float(std::numbers::pi)) turn -= 2 * float(std::numbers::pi);
            while (turn < -float(std::numbers::pi)) turn += 2 * float(std::numbers::pi);
            const int steps = std::max(1, int(std::ceil(std::abs(turn) / 0.3f)));
            for (int i = 0; i < steps; ++i) {
                const float t0 = a0 + turn * float(i) / float(steps), t1 = a0 + turn * float(i + 1) / float(steps);
                tri(p[v], p[v] + V3{std::cos(t0), std::sin(t0), 0} * width, p[v] + V3{std::cos(t1), std::sin(t1), 0} * width);
            }
        }
    }
    return out;
}

}  // namespace eddy::view
