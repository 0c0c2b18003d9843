// MeshShape: a bounding-volume hierarchy over a cleaned mesh, answering
// - the generalized winding number (Jacobson et al. 2013):
//     w(x) = sum_t Omega_t(x) / 4 pi   (3D: Omega_t the signed solid angle of triangle t, by
//                                        van Oosterom & Strackee 1983: tan(Omega/2) =
//                                        a.(b x c) / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|))
//     w(x) = sum_s theta_s(x) / 2 pi   (2D: theta_s the signed angle segment s subtends)
//   with Barill et al. 2018's far field: a node seen from farther than kBeta times its radius counts as
//   one dipole, w_node ~ N . (p - x) / (4 pi |p - x|^3) (2D: / (2 pi |p - x|^2)), N the sum of its
//   cells' area-weighted normals and p their area-weighted centre;
// - the distance to the nearest cell (closest point on a triangle: Ericson, Real-Time Collision
//   Detection, 5.1.5), best-first down the hierarchy.
// Queries are in double precision.
#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"

namespace eddy {

namespace {

constexpr double kBeta = 3.0;        // far-field threshold: first-order dipoles only, so farther than Barill et al.'s 2
constexpr std::uint32_t kLeaf = 4;   // cells per leaf

template <int D>
using P = std::array<double, D>;

template <int D>
P<D> to_d(const Vec<D>& v) {
    P<D> r;
    for (int a = 0; a < D; ++a) r[a] = v[a];
    return r;
}
template <int D>
double dot(const P<D>& a, const P<D>& b) {
    double s = 0.0;
    for (int i = 0; i < D; ++i) s += a[i] * b[i];
    return s;
}
template <int D>
P<D> sub(const P<D>& a, const P<D>& b) {
    P<D> r;
    for (int i = 0; i < D; ++i) r[i] = a[i] - b[i];
    return r;
}
inline P<3> cross(const P<3>& a, const P<3>& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// Squared distance from x to the box [lo, hi].
template <int D>
double box_distance2(const Vec<D>& lo, const Vec<D>& hi, const P<D>& x) {
    double s = 0.0;
    for (int a = 0; a < D; ++a) {
        const double d = x[a] < lo[a] ? lo[a] - x[a] : (x[a] > hi[a] ? x[a] - hi[a] : 0.0);
        s += d * d;
    }
    return s;
}

// Closest point on triangle abc to p (Ericson 5.1.5).
P<3> closest_on_triangle(const P<3>& p, const P<3>& a, const P<3>& b, const P<3>& c) {
    const P<3> ab = sub<3>(b, a), ac = sub<3>(c, a), ap = sub<3>(p, a);
    const double d1 = dot<3>(ab, ap), d2 = dot<3>(ac, ap);
    if (d1 <= 0 && d2 <= 0) return a;
    const P<3> bp = sub<3>(p, b);
    const double d3 = dot<3>(ab, bp), d4 = dot<3>(ac, bp);
    if (d3 >= 0 && d4 <= d3) return b;
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        const double v = d1 / (d1 - d3);
        return {a[0] + v * ab[0], a[1] + v * ab[1], a[2] + v * ab[2]};
    }
    const P<3> cp = sub<3>(p, c);
    const double d5 = dot<3>(ab, cp), d6 = dot<3>(ac, cp);
    if (d6 >= 0 && d5 <= d6) return c;
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        const double w = d2 / (d2 - d6);
        return {a[0] + w * ac[0], a[1] + w * ac[1], a[2] + w * ac[2]};
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return {b[0] + w * (c[0] - b[0]), b[1] + w * (c[1] - b[1]), b[2] + w * (c[2] - b[2])};
    }
    const double denom = 1.0 / (va + vb + vc), v = vb * denom, w = vc * denom;
    return {a[0] + ab[0] * v + ac[0] * w, a[1] + ab[1] * v + ac[1] * w, a[2] + ab[2] * v + ac[2] * w};
}

P<2> closest_on_segment(const P<2>& p, const P<2>& a, const P<2>& b) {
    const P<2> ab = sub<2>(b, a);
    const double len2 = dot<2>(ab, ab);
    double t = len2 > 0 ? dot<2>(sub<2>(p, a), ab) / len2 : 0.0;
    t = std::clamp(t, 0.0, 1.0);
    return {a[0] + t * ab[0], a[1] + t * ab[1]};
}

}  // namespace

template <int D>
MeshShape<D>::MeshShape(Mesh<D> mesh, const std::string& where) : m_mesh(std::move(mesh)), m_where(where) {
    m_report = clean_mesh(m_mesh);
    if (m_mesh.cells.empty())
        throw InputError(fmt::format("{}: no {} left after dropping {} degenerate one(s)", where,
                                     D == 3 ? "triangle" : "segment", m_report.degenerate));
    const auto n = static_cast<std::uint32_t>(m_mesh.cells.size());
    std::vector<Vec<D>> centroid(n);
    for (std::uint32_t c = 0; c < n; ++c) {
        Vec<D> s = Vec<D>::zero();
        for (int k = 0; k < D; ++k) s += m_mesh.vertices[m_mesh.cells[c][k]];
        centroid[c] = s * (1.0f / D);
    }
    m_order.resize(n);
    for (std::uint32_t c = 0; c < n; ++c) m_order[c] = c;
    m_nodes.reserve(2 * (n / kLeaf + 1));
    m_nodes.emplace_back();
    build(0, 0, n, centroid);
    m_lo = m_nodes[0].lo;
    m_hi = m_nodes[0].hi;
}

template <int D>
void MeshShape<D>::build(std::uint32_t node, std::uint32_t begin, std::uint32_t end, std::vector<Vec<D>>& centroid) {
    // Box, dipole and centre of the cells [begin, end).
    Node nd;
    nd.lo = Vec<D>::filled(std::numeric_limits<float>::max());
    nd.hi = Vec<D>::filled(-std::numeric_limits<float>::max());
    Vec<D> clo = nd.lo, chi = nd.hi;
    double area = 0.0;
    nd.centre.fill(0.0);
    nd.normal.fill(0.0);
    for (std::uint32_t i = begin; i < end; ++i) {
        const auto& cell = m_mesh.cells[m_order[i]];
        for (int k = 0; k < D; ++k)
            for (int a = 0; a < D; ++a) {
                nd.lo[a] = std::min(nd.lo[a], m_mesh.vertices[cell[k]][a]);
                nd.hi[a] = std::max(nd.hi[a], m_mesh.vertices[cell[k]][a]);
            }
        const Vec<D>& c = centroid[m_order[i]];
        for (int a = 0; a < D; ++a) {
            clo[a] = std::min(clo[a], c[a]);
            chi[a] = std::max(chi[a], c[a]);
        }
        // Area-weighted normal (its length is the cell's measure).
        P<D> an;
        if constexpr (D == 3) {
            an = cross(sub<3>(to_d<3>(m_mesh.vertices[cell[1]]), to_d<3>(m_mesh.vertices[cell[0]])),
                       sub<3>(to_d<3>(m_mesh.vertices[cell[2]]), to_d<3>(m_mesh.vertices[cell[0]])));
            for (double& x : an) x *= 0.5;
        } else {
            const P<2> e = sub<2>(to_d<2>(m_mesh.vertices[cell[1]]), to_d<2>(m_mesh.vertices[cell[0]]));
            an = {e[1], -e[0]};  // outward for a counter-clockwise contour
        }
        const double a = std::sqrt(dot<D>(an, an));
        area += a;
        for (int k = 0; k < D; ++k) {
            nd.normal[k] += an[k];
            nd.centre[k] += a * c[k];
        }
    }
    for (int k = 0; k < D; ++k) nd.centre[k] = area > 0 ? nd.centre[k] / area : 0.5 * (nd.lo[k] + nd.hi[k]);
    for (int corner = 0; corner < (1 << D); ++corner) {
        double s = 0.0;
        for (int a = 0; a < D; ++a) {
            const double d = ((corner >> a) & 1 ? nd.hi[a] : nd.lo[a]) - nd.centre[a];
            s += d * d;
        }
        nd.radius = std::max(nd.radius, std::sqrt(s));
    }
    if (end - begin <= kLeaf) {
        nd.first = begin;
        nd.count = end - begin;
        m_nodes[node] = nd;
        return;
    }
    // Split at the median centroid along the longest axis of the centroids' box.
    int axis = 0;
    for (int a = 1; a < D; ++a)
        if (chi[a] - clo[a] > chi[axis] - clo[axis]) axis = a;
    const std::uint32_t mid = begin + (end - begin) / 2;
    std::nth_element(m_order.begin() + begin, m_order.begin() + mid, m_order.begin() + end,
                     [&](std::uint32_t x, std::uint32_t y) {
                         return centroid[x][axis] != centroid[y][axis] ? centroid[x][axis] < centroid[y][axis] : x < y;
                     });
    const auto left = static_cast<std::uint32_t>(m_nodes.size());
    nd.first = left;
    nd.count = 0;
    m_nodes[node] = nd;
    m_nodes.emplace_back();
    m_nodes.emplace_back();
    build(left, begin, mid, centroid);
    build(left + 1, mid, end, centroid);
}

template <int D>
double MeshShape<D>::cell_winding(std::uint32_t c, const P<D>& x) const {
    const auto& cell = m_mesh.cells[c];
    if constexpr (D == 3) {
        const P<3> a = sub<3>(to_d<3>(m_mesh.vertices[cell[0]]), x), b = sub<3>(to_d<3>(m_mesh.vertices[cell[1]]), x),
                   cc = sub<3>(to_d<3>(m_mesh.vertices[cell[2]]), x);
        const double la = std::sqrt(dot<3>(a, a)), lb = std::sqrt(dot<3>(b, b)), lc = std::sqrt(dot<3>(cc, cc));
        const double num = dot<3>(a, cross(b, cc));
        const double den = la * lb * lc + dot<3>(a, b) * lc + dot<3>(b, cc) * la + dot<3>(cc, a) * lb;
        return 2.0 * std::atan2(num, den) / (4.0 * std::numbers::pi);
    } else {
        const P<2> a = sub<2>(to_d<2>(m_mesh.vertices[cell[0]]), x), b = sub<2>(to_d<2>(m_mesh.vertices[cell[1]]), x);
        return std::atan2(a[0] * b[1] - a[1] * b[0], dot<2>(a, b)) / (2.0 * std::numbers::pi);
    }
}

template <int D>
double MeshShape<D>::winding_number(const Vec<D>& xv) const {
    const P<D> x = to_d<D>(xv);
    double w = 0.0;
    std::uint32_t stack[128];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& nd = m_nodes[stack[--top]];
        const P<D> d = sub<D>(nd.centre, x);
        const double r2 = dot<D>(d, d);
        if (r2 > kBeta * kBeta * nd.radius * nd.radius) {
            // Far field: one dipole for the whole node. The solid angle of an outward area element
            // seen from x is positive when x is behind it (inside).
            const double r = std::sqrt(r2);
            w += dot<D>(nd.normal, d) / (D == 3 ? 4.0 * std::numbers::pi * r2 * r : 2.0 * std::numbers::pi * r2);
            continue;
        }
        if (nd.count > 0) {
            for (std::uint32_t i = nd.first; i < nd.first + nd.count; ++i) w += cell_winding(m_order[i], x);
        } else {
            stack[top++] = nd.first;
            stack[top++] = nd.first + 1;
        }
    }
    return w;
}

template <int D>
double MeshShape<D>::cell_distance2(std::uint32_t c, const P<D>& x, P<D>& closest) const {
    const auto& cell = m_mesh.cells[c];
    if constexpr (D == 3)
        closest = closest_on_triangle(x, to_d<3>(m_mesh.vertices[cell[0]]), to_d<3>(m_mesh.vertices[cell[1]]),
                                      to_d<3>(m_mesh.vertices[cell[2]]));
    else
        closest = closest_on_segment(x, to_d<2>(m_mesh.vertices[cell[0]]), to_d<2>(m_mesh.vertices[cell[1]]));
    const P<D> d = sub<D>(closest, x);
    return dot<D>(d, d);
}

template <int D>
double MeshShape<D>::distance(const Vec<D>& xv, double limit, Vec<D>* closest) const {
    return distance(xv, limit, closest, nullptr);
}

template <int D>
Vec<D> MeshShape<D>::cell_normal(std::uint32_t c) const {
    const auto& cell = m_mesh.cells[c];
    P<D> n;
    if constexpr (D == 3) {
        n = cross(sub<3>(to_d<3>(m_mesh.vertices[cell[1]]), to_d<3>(m_mesh.vertices[cell[0]])),
                  sub<3>(to_d<3>(m_mesh.vertices[cell[2]]), to_d<3>(m_mesh.vertices[cell[0]])));
    } else {
        const P<2> e = sub<2>(to_d<2>(m_mesh.vertices[cell[1]]), to_d<2>(m_mesh.vertices[cell[0]]));
        n = {e[1], -e[0]};  // outward for a counter-clockwise contour, as build()
    }
    const double len = std::sqrt(dot<D>(n, n));
    Vec<D> out = Vec<D>::zero();
    if (len > 0.0)
        for (int a = 0; a < D; ++a) out[a] = static_cast<float>(n[a] / len);
    return out;
}

template <int D>
double MeshShape<D>::distance(const Vec<D>& xv, double limit, Vec<D>* closest, std::uint32_t* cell) const {
    const P<D> x = to_d<D>(xv);
    std::uint32_t best_cell = 0;
    double best = limit * limit;
    P<D> best_point{};
    bool found = false;
    // Best-first by box distance: the nearer child is visited first (pushed last).
    std::pair<double, std::uint32_t> stack[128];
    int top = 0;
    stack[top++] = {box_distance2<D>(m_nodes[0].lo, m_nodes[0].hi, x), 0};
    while (top > 0) {
        const auto [bd, id] = stack[--top];
        if (bd >= best) continue;
        const Node& nd = m_nodes[id];
        if (nd.count > 0) {
            for (std::uint32_t i = nd.first; i < nd.first + nd.count; ++i) {
                P<D> p;
                const double d2 = cell_distance2(m_order[i], x, p);
                if (d2 < best) {
                    best = d2;
                    best_point = p;
                    best_cell = m_order[i];
                    found = true;
                }
            }
            continue;
        }
        const double dl = box_distance2<D>(m_nodes[nd.first].lo, m_nodes[nd.first].hi, x);
        const double dr = box_distance2<D>(m_nodes[nd.first + 1].lo, m_nodes[nd.first + 1].hi, x);
        if (dl < dr) {
            if (dr < best) stack[top++] = {dr, nd.first + 1};
            if (dl < best) stack[top++] = {dl, nd.first};
        } else {
            if (dl < best) stack[top++] = {dl, nd.first};
            if (dr < best) stack[top++] = {dr, nd.first + 1};
        }
    }
    if (!found) return limit;
    if (cell) *cell = best_cell;
    if (closest)
        for (int a = 0; a < D; ++a) (*closest)[a] = static_cast<float>(best_point[a]);
    return std::sqrt(best);
}

template <int D>
bool MeshShape<D>::any_within(const Vec<D>& xv, double radius, const std::function<bool(std::uint32_t)>* ignore) const {
    const P<D> x = to_d<D>(xv);
    const double r2 = radius * radius;
    std::uint32_t stack[128];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& nd = m_nodes[stack[--top]];
        if (box_distance2<D>(nd.lo, nd.hi, x) >= r2) continue;
        if (nd.count > 0) {
            for (std::uint32_t i = nd.first; i < nd.first + nd.count; ++i) {
                if (ignore && (*ignore)(m_order[i])) continue;
                P<D> p;
                if (cell_distance2(m_order[i], x, p) < r2) return true;
            }
        } else {
            stack[top++] = nd.first;
            stack[top++] = nd.first + 1;
        }
    }
    return false;
}

template <int D>
double MeshShape<D>::signed_distance(const Vec<D>& x, double limit) const {
    const double d = distance(x, limit);
    return inside(x) ? -d : d;
}

template class MeshShape<2>;
template class MeshShape<3>;

}  // namespace eddy
