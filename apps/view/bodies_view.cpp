// eddy-view: rigid bodies as drawn, picked and dragged (see bodies_view.hpp).
#include "bodies_view.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numbers>

#include "eddy/render.hpp"
#include "models.hpp"

namespace eddy::view {

namespace {

using Mat3d = std::array<std::array<double, 3>, 3>;

std::uint64_t next_geometry_id() {
    // Apart from the models' ids (sim_worker.cpp counts up from 1): the window keys uploads by id and slot.
    static std::atomic<std::uint64_t> next{1ull << 40};
    return ++next;
}

void add_vertex(SurfaceMesh& m, V3 p, V3 n) {
    m.xyz.insert(m.xyz.end(), {p.x, p.y, p.z});
    m.normals.insert(m.normals.end(), {n.x, n.y, n.z});
}

// A box as 6 flat faces (4 vertices each, so that the shading shows the edges).
void box_mesh(SurfaceMesh& m, const std::array<double, 3>& lo, const std::array<double, 3>& hi) {
    for (int axis = 0; axis < 3; ++axis)
        for (int side = 0; side < 2; ++side) {
            const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
            V3 n;
            (&n.x)[axis] = side ? 1.0f : -1.0f;
            const auto base = static_cast<std::uint32_t>(m.vertices());
            for (int k = 0; k < 4; ++k) {
                std::array<double, 3> p{};
                p[axis] = side ? hi[axis] : lo[axis];
                p[a1] = (k == 1 || k == 2) ? hi[a1] : lo[a1];
                p[a2] = (k >= 2) ? hi[a2] : lo[a2];
                add_vertex(m, {float(p[0]), float(p[1]), float(p[2])}, n);
            }
            m.triangles.insert(m.triangles.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
        }
}

void sphere_mesh(SurfaceMesh& m, const std::array<double, 3>& c, double r) {
    constexpr int kLat = 16, kLon = 32;
    const double pi = std::numbers::pi;
    for (int i = 0; i <= kLat; ++i)
        for (int j = 0; j <= kLon; ++j) {
            const double th = pi * i / kLat, ph = 2 * pi * j / kLon;
            const V3 n{float(std::sin(th) * std::cos(ph)), float(std::cos(th)), float(std::sin(th) * std::sin(ph))};
            add_vertex(m, {float(c[0] + r * n.x), float(c[1] + r * n.y), float(c[2] + r * n.z)}, n);
        }
    for (int i = 0; i < kLat; ++i)
        for (int j = 0; j < kLon; ++j) {
            const auto a = static_cast<std::uint32_t>(i * (kLon + 1) + j), b = a + kLon + 1;
            m.triangles.insert(m.triangles.end(), {a, b, a + 1, a + 1, b, b + 1});
        }
}

void seg2(std::vector<float>& out, double ax, double ay, double bx, double by) {
    out.insert(out.end(), {float(ax), float(ay), 0.0f, float(bx), float(by), 0.0f});
}

// 2D: filled triangles of a simple polygon loop (ear clipping; the loop's points in order).
void fill_loop(SurfaceMesh& m, std::vector<std::array<double, 2>> p) {
    double area = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const auto& a = p[i];
        const auto& b = p[(i + 1) % p.size()];
        area += a[0] * b[1] - b[0] * a[1];
    }
    if (area < 0.0) std::reverse(p.begin(), p.end());  // counter-clockwise from here on
    auto cross = [](const std::array<double, 2>& o, const std::array<double, 2>& a, const std::array<double, 2>& b) {
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    };
    auto emit = [&](const std::array<double, 2>& a, const std::array<double, 2>& b, const std::array<double, 2>& c) {
        const auto base = static_cast<std::uint32_t>(m.vertices());
        for (const auto* q : {&a, &b, &c}) m.xyz.insert(m.xyz.end(), {float((*q)[0]), float((*q)[1]), 0.0f});
        m.triangles.insert(m.triangles.end(), {base, base + 1, base + 2});
    };
    std::vector<std::size_t> idx(p.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    while (idx.size() > 3) {
        bool clipped = false;
        for (std::size_t k = 0; k < idx.size() && !clipped; ++k) {
            const auto& a = p[idx[(k + idx.size() - 1) % idx.size()]];
            const auto& b = p[idx[k]];
            const auto& c = p[idx[(k + 1) % idx.size()]];
            if (cross(a, b, c) <= 0.0) continue;  // a reflex (or flat) corner is no ear
            bool empty = true;
            for (std::size_t j = 0; j < idx.size() && empty; ++j) {
                const auto& q = p[idx[j]];
                if (&q == &a || &q == &b || &q == &c) continue;
                empty = !(cross(a, b, q) >= 0.0 && cross(b, c, q) >= 0.0 && cross(c, a, q) >= 0.0);
            }
            if (!empty) continue;
            emit(a, b, c);
            idx.erase(idx.begin() + static_cast<std::ptrdiff_t>(k));
            clipped = true;
        }
        if (!clipped) break;  // not simple (a self-touching outline): what is left stays unfilled
    }
    if (idx.size() == 3) emit(p[idx[0]], p[idx[1]], p[idx[2]]);
}

}  // namespace

std::array<float, 3> body_color(std::size_t k) {
    const eddy::Vec3 c = eddy::body_color(k);  // eddy/render.hpp: the palette --render draws bodies in
    return {c[0], c[1], c[2]};
}

template <int D>
std::shared_ptr<const BodyGeometry> make_body_geometry(const BoundarySpec& b) {
    auto g = std::make_shared<BodyGeometry>();
    g->id = next_geometry_id();
    g->shape = b.shape;
    constexpr int kSeg = 48;
    const double tau = 2.0 * std::numbers::pi;
    if (const MeshShape<D>* shape = model_shape<D>(b.model)) {  // mesh, cylinder (as its model), polygon
        const auto& mesh = shape->mesh();
        if constexpr (D == 3) {
            g->mesh = shaded_mesh(mesh);
        } else {
            // The loops of the polygon's segments (walking a segment, the inside is on the left).
            std::vector<std::int64_t> next(mesh.vertices.size(), -1);
            for (const auto& c : mesh.cells) {
                next[c[0]] = c[1];
                const auto& a = mesh.vertices[c[0]];
                const auto& e = mesh.vertices[c[1]];
                seg2(g->outline, a[0], a[1], e[0], e[1]);
            }
            std::vector<bool> used(next.size(), false);
            for (std::size_t s = 0; s < next.size(); ++s) {
                if (used[s] || next[s] < 0) continue;
                std::vector<std::array<double, 2>> loop;
                std::size_t v = s;
                while (!used[v] && next[v] >= 0) {
                    used[v] = true;
                    loop.push_back({double(mesh.vertices[v][0]), double(mesh.vertices[v][1])});
                    v = static_cast<std::size_t>(next[v]);
                }
                if (loop.size() >= 3) fill_loop(g->mesh, std::move(loop));
            }
        }
    } else if (b.shape == "box") {
        if constexpr (D == 3) {
            box_mesh(g->mesh, b.min, b.max);
        } else {
            fill_loop(g->mesh, {{b.min[0], b.min[1]}, {b.max[0], b.min[1]}, {b.max[0], b.max[1]}, {b.min[0], b.max[1]}});
            seg2(g->outline, b.min[0], b.min[1], b.max[0], b.min[1]);
            seg2(g->outline, b.max[0], b.min[1], b.max[0], b.max[1]);
            seg2(g->outline, b.max[0], b.max[1], b.min[0], b.max[1]);
            seg2(g->outline, b.min[0], b.max[1], b.min[0], b.min[1]);
        }
    } else if (b.shape == "sphere" || b.shape == "circle") {
        if constexpr (D == 3) {
            sphere_mesh(g->mesh, b.center, b.radius);
        } else {
            std::vector<std::array<double, 2>> loop;
            for (int i = 0; i < kSeg; ++i)
                loop.push_back({b.center[0] + b.radius * std::cos(tau * i / kSeg), b.center[1] + b.radius * std::sin(tau * i / kSeg)});
            for (int i = 0; i < kSeg; ++i) seg2(g->outline, loop[i][0], loop[i][1], loop[(i + 1) % kSeg][0], loop[(i + 1) % kSeg][1]);
            // A diameter, so that the outline shows the ball turning.
            seg2(g->outline, loop[0][0], loop[0][1], loop[kSeg / 2][0], loop[kSeg / 2][1]);
            fill_loop(g->mesh, std::move(loop));
        }
    }
    return g;
}
template std::shared_ptr<const BodyGeometry> make_body_geometry<2>(const BoundarySpec&);
template std::shared_ptr<const BodyGeometry> make_body_geometry<3>(const BoundarySpec&);

Mat4 body_pose(const BodyState& s, const std::array<double, 3>& c) {
    const Mat3d R = quaternion_matrix(s.orientation);
    Mat4 m = Mat4::identity();
    for (int a = 0; a < 3; ++a) {
        double t = s.position[a];
        for (int b = 0; b < 3; ++b) {
            m(a, b) = static_cast<float>(R[a][b]);
            t -= R[a][b] * c[b];
        }
        m(a, 3) = static_cast<float>(t);
    }
    return m;
}

V3 posed(const BodyView& b, V3 p) {
    const Mat4& m = b.pose;
    return {m(0, 0) * p.x + m(0, 1) * p.y + m(0, 2) * p.z + m(0, 3), m(1, 0) * p.x + m(1, 1) * p.y + m(1, 2) * p.z + m(1, 3),
            m(2, 0) * p.x + m(2, 1) * p.y + m(2, 2) * p.z + m(2, 3)};
}

std::optional<BodyHit> pick_body(const std::vector<BodyView>& bodies, V3 o, V3 d, bool is_3d) {
    std::optional<BodyHit> best;
    for (std::size_t k = 0; k < bodies.size(); ++k) {
        const BodyView& b = bodies[k];
        if (!b.geometry) continue;
        // The ray (or point) in the body's rest frame: the pose's rotation is orthonormal, R^-1 = R^T.
        const Mat4& m = b.pose;
        auto to_rest = [&](V3 v, bool point) {
            if (point) v = v - V3{m(0, 3), m(1, 3), m(2, 3)};
            return V3{m(0, 0) * v.x + m(1, 0) * v.y + m(2, 0) * v.z, m(0, 1) * v.x + m(1, 1) * v.y + m(2, 1) * v.z,
                      m(0, 2) * v.x + m(1, 2) * v.y + m(2, 2) * v.z};
        };
        const V3 ro = to_rest(is_3d ? o : V3{o.x, o.y, 0.0f}, true), rd = to_rest(d, false);
        const auto& xyz = b.geometry->mesh.xyz;
        const auto& tri = b.geometry->mesh.triangles;
        for (std::size_t t = 0; t + 2 < tri.size(); t += 3) {
            const V3 p0{xyz[3 * tri[t]], xyz[3 * tri[t] + 1], xyz[3 * tri[t] + 2]};
            const V3 p1{xyz[3 * tri[t + 1]], xyz[3 * tri[t + 1] + 1], xyz[3 * tri[t + 1] + 2]};
            const V3 p2{xyz[3 * tri[t + 2]], xyz[3 * tri[t + 2] + 1], xyz[3 * tri[t + 2] + 2]};
            V3 hit;
            float dist = 0.0f;
            if (is_3d) {  // Moeller-Trumbore
                const V3 e1 = p1 - p0, e2 = p2 - p0, pv = cross(rd, e2);
                const float det = dot(e1, pv);
                if (std::fabs(det) < 1e-12f) continue;
                const V3 tv = ro - p0;
                const float u = dot(tv, pv) / det;
                if (u < 0.0f || u > 1.0f) continue;
                const V3 qv = cross(tv, e1);
                const float v = dot(rd, qv) / det;
                if (v < 0.0f || u + v > 1.0f) continue;
                dist = dot(e2, qv) / det;
                if (dist <= 0.0f) continue;
                hit = ro + rd * dist;
            } else {  // the point inside the triangle (either orientation)
                auto side = [&](V3 a, V3 c) { return (c.x - a.x) * (ro.y - a.y) - (c.y - a.y) * (ro.x - a.x); };
                const float s0 = side(p0, p1), s1 = side(p1, p2), s2 = side(p2, p0);
                const bool in = (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
                if (!in) continue;
                hit = {ro.x, ro.y, 0.0f};
            }
            if (best && dist >= best->distance) continue;
            BodyHit h;
            h.body = k;
            h.distance = dist;
            h.point = posed(b, hit);
            h.local = {double(hit.x) - b.rest_center[0], double(hit.y) - b.rest_center[1],
                       is_3d ? double(hit.z) - b.rest_center[2] : 0.0};
            best = h;
            if (!is_3d) break;
        }
    }
    return best;
}

ObjectLoad drag_load(const BodyDrag& drag, const BodyState& s, double mass, int dimension) {
    const Mat3d R = quaternion_matrix(s.orientation);
    std::array<double, 3> r{}, w = s.angular_velocity;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) r[a] += R[a][b] * drag.local[b];
    if (dimension == 2) r[2] = 0.0, w[0] = w[1] = 0.0;
    const std::array<double, 3> vp{s.velocity[0] + w[1] * r[2] - w[2] * r[1], s.velocity[1] + w[2] * r[0] - w[0] * r[2],
                                   s.velocity[2] + w[0] * r[1] - w[1] * r[0]};
    const double k = drag.frequency * drag.frequency, c = 2.0 * drag.damping_ratio * drag.frequency;
    ObjectLoad out;
    for (int a = 0; a < 3; ++a) out.force[a] = mass * (k * (drag.target[a] - (s.position[a] + r[a])) - c * vp[a]);
    if (dimension == 2) out.force[2] = 0.0;
    const auto& F = out.force;
    out.torque = {r[1] * F[2] - r[2] * F[1], r[2] * F[0] - r[0] * F[2], r[0] * F[1] - r[1] * F[0]};
    if (dimension == 2) out.torque[0] = out.torque[1] = 0.0;
    return out;
}

}  // namespace eddy::view
