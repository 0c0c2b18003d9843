// eddy: volume maps on a grid for the smooth walls' solids of any shape (eddy/volume_map.hpp).
#include "eddy/volume_map.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "eddy/smooth_walls.hpp"

namespace eddy {

namespace {

// The signed distance from x (the wall's own frame) to its surface, positive on the fluid's side and
// negative inside the wall (the collision's distance_to_wall is 0 inside a solid cylinder).
template <int D>
float signed_distance(const Wall<D>& w, const Vec<D>& x) {
    if (w.shape == Wall<D>::Shape::sdf) {
        const float phi = w.sdf->sample(x);  // negative inside the model
        return w.solid ? phi : -phi;
    }
    if constexpr (D == 3) {  // a solid cylinder about y: a tube from inner_radius to radius, or a disc
        const float rho = std::hypot(x[0] - w.center[0], x[2] - w.center[2]);
        const float qr = w.inner_radius > 0.0f ? std::max(w.inner_radius - rho, rho - w.radius) : rho - w.radius;
        const float qy = std::max(w.center[1] - x[1], x[1] - w.center[1] - w.height);
        const float out = std::hypot(std::max(qr, 0.0f), std::max(qy, 0.0f));
        return out > 0.0f ? out : std::max(qr, qy);
    }
    return 0.0f;
}

// The wall's box in its own frame: a cylinder's, a model's grid (which already holds the model grown by its band).
template <int D>
void wall_box(const Wall<D>& w, Vec<D>& lo, Vec<D>& hi) {
    if (w.shape == Wall<D>::Shape::sdf) {
        lo = w.sdf->origin;
        for (int a = 0; a < D; ++a) hi[a] = lo[a] + w.sdf->voxel * static_cast<float>(w.sdf->nodes[a] - 1);
        return;
    }
    lo = hi = w.center;
    for (int a = 0; a < D; ++a)
        if (a != 1) {
            lo[a] -= w.radius;
            hi[a] += w.radius;
        }
    hi[1] += w.height;
}

// A unit normal's orthonormal frame: t[0] (and t[1] in 3D) across it.
template <int D>
void tangents(const Vec<D>& n, Vec<D>* t) {
    if constexpr (D == 2) {
        t[0][0] = -n[1];
        t[0][1] = n[0];
    } else {
        const Vec<D> e = std::abs(n[0]) < 0.6f ? Vec<D>{{1.0f, 0.0f, 0.0f}} : Vec<D>{{0.0f, 1.0f, 0.0f}};
        t[0] = e - n * dot(e, n);
        t[0] = t[0] * (1.0f / norm(t[0]));
        t[1] = Vec<D>{{n[1] * t[0][2] - n[2] * t[0][1], n[2] * t[0][0] - n[0] * t[0][2], n[0] * t[0][1] - n[1] * t[0][0]}};
    }
}

// One point of the quadrature lattice, in the normal's frame (o[0] along n): its W dV and W'/|o| dV.
template <int D>
struct Offset {
    Vec<D> o;
    float w, dw;
};

// The quadrature lattice about a point (spacing r/2 in 3D, r/4 in 2D) in blocks of 2^D points, each with its
// centre, its points' farthest distance from it and its sums when wholly inside the wall (a block whose centre
// is farther from the surface than that, times the distance's Lipschitz bound, is all in or all out: one
// distance instead of 2^D); and the plane's sums, functions of its distance s alone, as a table.
template <int D>
struct Quadrature {
    struct Block {  // points [begin, end) of `points`
        Vec<D> centre;
        float radius = 0.0f;
        std::uint32_t begin = 0, end = 0;
        double w = 0.0, wo[D] = {};
    };
    float spacing = 0.0f, s0 = 0.0f, ds = 0.0f;
    std::vector<Offset<D>> points;
    std::vector<Block> blocks;
    std::vector<std::array<double, 3>> plane;  // K, dK/d grown, G along n of the half space beyond s0 + k ds
    std::array<double, 3> at(float s) const {
        const float u = std::clamp((s - s0) / ds, 0.0f, static_cast<float>(plane.size() - 1));
        const std::size_t k = std::min(static_cast<std::size_t>(u), plane.size() - 2);
        const double f = u - static_cast<float>(k);
        std::array<double, 3> out;
        for (int c = 0; c < 3; ++c) out[c] = plane[k][c] + f * (plane[k + 1][c] - plane[k][c]);
        return out;
    }
};

// The wall's smoothed indicator at signed distance phi (header).
inline float indicator(float phi, float spacing) { return std::clamp(0.5f - phi / spacing, 0.0f, 1.0f); }

template <int D>
Quadrature<D> quadrature(const CubicSpline<D>& W, float spacing, float s_lo) {
    Quadrature<D> q;
    q.spacing = spacing;
    // The lattice -m..m per axis in blocks of two points per axis.
    const int m = static_cast<int>(std::ceil(W.h / spacing)), nb = m + 1;
    const float dv = std::pow(spacing, float(D));
    const int blocks = D == 2 ? nb * nb : nb * nb * nb;
    for (int b = 0; b < blocks; ++b) {
        typename Quadrature<D>::Block blk;
        blk.begin = static_cast<std::uint32_t>(q.points.size());
        for (int c = 0; c < (1 << D); ++c) {
            Vec<D> o;
            int k = b;
            for (int a = 0; a < D; ++a, k /= nb) o[a] = static_cast<float>(2 * (k % nb) + ((c >> a) & 1) - m) * spacing;
            const float len = norm(o);
            if (!(len < W.h)) continue;
            q.points.push_back({o, W.value(len) * dv, len > 0.0f ? W.derivative(len) / len * dv : 0.0f});
        }
        blk.end = static_cast<std::uint32_t>(q.points.size());
        if (blk.end == blk.begin) continue;
        blk.centre = Vec<D>::zero();
        for (std::uint32_t i = blk.begin; i < blk.end; ++i) blk.centre += q.points[i].o * (1.0f / static_cast<float>(blk.end - blk.begin));
        for (std::uint32_t i = blk.begin; i < blk.end; ++i) {
            const Offset<D>& p = q.points[i];
            blk.radius = std::max(blk.radius, norm(p.o - blk.centre));
            blk.w += p.w;
            for (int a = 0; a < D; ++a) blk.wo[a] += double(p.dw) * p.o[a];
        }
        q.blocks.push_back(blk);
    }
    // The plane's sums over s in [s_lo, h + spacing], 4,096 entries.
    const int ns = 4096;
    const float hs = 0.5f * spacing;
    q.s0 = s_lo;
    q.ds = (W.h + spacing - s_lo) / (ns - 1);
    q.plane.assign(ns, {0.0, 0.0, 0.0});
    for (int k = 0; k < ns; ++k)
        for (const Offset<D>& p : q.points) {
            const float phif = q.s0 + static_cast<float>(k) * q.ds + p.o[0];
            q.plane[k][0] += double(p.w) * indicator(phif, spacing);
            q.plane[k][1] += double(p.w) * (indicator(phif - hs, spacing) - indicator(phif + hs, spacing)) / spacing;
            q.plane[k][2] += double(p.dw) * p.o[0] * indicator(phif, spacing);
        }
    return q;
}

// share and push at node y (header); for a node at most r outside the wall (a surface node: 1) whether the
// wall is thinner than r below its surface point (2: the fluid's side again along -n). A node inside the wall
// takes its surface point's values (the profile's d < 0 takes d = 0).
template <int D>
void map_node(const Wall<D>& w, const SmoothWallProfile<D>& profile, const Quadrature<D>& quad, float cell, const Vec<D>& y,
              float& share, Vec<D>& push, std::uint8_t& surface) {
    share = 0.0f;
    push = Vec<D>::zero();
    const float r = profile.radius, d = signed_distance(w, y);
    // Beyond the band no cell holding a point at -r..reach reaches.
    if (d > profile.reach + std::sqrt(float(D)) * cell || d < -r - std::sqrt(float(D)) * cell) return;
    Vec<D> n;
    const float e = 0.25f * cell;
    for (int a = 0; a < D; ++a) {
        Vec<D> step = Vec<D>::zero();
        step[a] = e;
        n[a] = signed_distance(w, y + step) - signed_distance(w, y - step);
    }
    const float len = norm(n);
    if (!(len > 0.0f)) return;
    n = n * (1.0f / len);
    Vec<D> t[D - 1];
    tangents(n, t);
    const float dq = std::max(d, 0.0f), s = profile.mapped(dq), grown = dq - s, spacing = quad.spacing, hs = 0.5f * spacing;
    const Vec<D> yq = y - n * std::min(d, 0.0f);
    auto at = [&](const Vec<D>& o) {
        Vec<D> z = yq + n * o[0];
        for (int a = 1; a < D; ++a) z += t[a - 1] * o[a];
        return z;
    };
    // K (the wall grown by `grown`), its growth rate dK/d grown (a central difference over half a spacing), the
    // push at fixed growth G (a vector in the frame (n, t)); the plane's Kf, Kfd, Gf from the table.
    const std::array<double, 3> flat = quad.at(s);
    const double Kf = flat[0], Kfd = flat[1], Gf = flat[2];
    const float lipschitz = w.shape == Wall<D>::Shape::sdf ? std::sqrt(float(D)) : 1.0f;  // multilinear: per axis 1
    double K = 0.0, Kd = 0.0;
    double G[D] = {};
    for (const auto& b : quad.blocks) {
        const float phic = signed_distance(w, at(b.centre)) - grown, margin = lipschitz * b.radius + spacing;
        if (phic > margin) continue;  // all outside the grown wall
        if (phic < -margin) {         // all inside
            K += b.w;
            for (int a = 0; a < D; ++a) G[a] += b.wo[a];
            continue;
        }
        for (std::uint32_t i = b.begin; i < b.end; ++i) {
            const Offset<D>& q = quad.points[i];
            const float phi = signed_distance(w, at(q.o)) - grown, chi = indicator(phi, spacing);
            K += double(q.w) * chi;
            Kd += double(q.w) * (indicator(phi - hs, spacing) - indicator(phi + hs, spacing)) / spacing;
            for (int a = 0; a < D; ++a) G[a] += double(q.dw) * q.o[a] * chi;
        }
    }
    // The density's push, -grad of lambda rho0 K: G at fixed growth, and the growth's d(grown)/dd = 1 - 2 kappa.
    const double k21 = 2.0 * profile.kappa - 1.0, pushf = Gf + k21 * Kfd;
    if (!(Kf > 1e-6) || !(pushf > 1e-9 / r)) {  // at the reach's edge the face holds nothing: the wall is the face
        share = 1.0f;
        push = n;
    } else {
        share = static_cast<float>(K / Kf);
        push = n * static_cast<float>((G[0] + k21 * Kd) / pushf);
        for (int a = 1; a < D; ++a) push += t[a - 1] * static_cast<float>(G[a] / pushf);
    }
    if (!(d >= 0.0f && d <= r)) return;
    surface = 1;
    for (int k = 1; k <= 4; ++k)
        if (signed_distance(w, y - n * (d + 0.25f * r * static_cast<float>(k))) > 0.0f) surface = 2;
}
}  // namespace

template <int D>
bool VolumeMap<D>::sample(const Vec<D>& x, float& share_out, Vec<D>& push_out) const {
    if (share.empty()) return false;
    int i[D];
    float f[D];
    for (int a = 0; a < D; ++a) {
        const float u = (x[a] - origin[a]) / cell;
        if (!(u >= 0.0f) || !(u <= static_cast<float>(nodes[a] - 1))) return false;
        i[a] = std::min(static_cast<int>(u), nodes[a] - 2);
        f[a] = u - static_cast<float>(i[a]);
    }
    share_out = 0.0f;
    push_out = Vec<D>::zero();
    for (int c = 0; c < (1 << D); ++c) {
        float wgt = 1.0f;
        std::size_t b = 0, local = 0, bs = 1, ls = 1;
        for (int a = 0; a < D; ++a) {
            const bool up = (c >> a) & 1;
            const int n = i[a] + (up ? 1 : 0);
            wgt *= up ? f[a] : 1.0f - f[a];
            b += static_cast<std::size_t>(n / kBlock) * bs;
            local += static_cast<std::size_t>(n % kBlock) * ls;
            bs *= static_cast<std::size_t>(blocks[a]);
            ls *= kBlock;
        }
        if (block[b] < 0) continue;  // beyond the band: 0
        const std::size_t k = static_cast<std::size_t>(block[b]) + local;
        share_out += wgt * share[k];
        push_out += push[k] * wgt;
    }
    return true;
}

namespace {
// The held blocks of a map over [lo, ...) at `cell`: those holding a node of the band (whose centre lies within
// the band grown by the block's half diagonal times the distance's Lipschitz bound, and one of whose nodes is
// in it); their nodes' number.
template <int D>
std::size_t hold_blocks(const Wall<D>& w, const SmoothWallProfile<D>& profile, VolumeMap<D>& m, const Vec<D>& hi,
                        const ExecContext& exec) {
    constexpr int B = VolumeMap<D>::kBlock;
    std::size_t total = 1;
    for (int a = 0; a < D; ++a) {
        m.blocks[a] = static_cast<int>(std::floor((hi[a] - m.origin[a]) / m.cell / B)) + 1;
        m.nodes[a] = m.blocks[a] * B;
        total *= static_cast<std::size_t>(m.blocks[a]);
    }
    const float root = std::sqrt(float(D)), lipschitz = w.shape == Wall<D>::Shape::sdf ? root : 1.0f;
    const float half = lipschitz * root * 0.5f * static_cast<float>(B - 1) * m.cell;
    const float lo_band = -profile.radius - root * m.cell - half, hi_band = profile.reach + root * m.cell + half;
    m.block.assign(total, -1);
    parallel_for_each_index(exec, total, [&](std::size_t b) {
        Vec<D> c;
        std::size_t rest = b;
        for (int a = 0; a < D; ++a) {
            c[a] = m.origin[a] + m.cell * (static_cast<float>(rest % static_cast<std::size_t>(m.blocks[a]) * B) + 0.5f * (B - 1));
            rest /= static_cast<std::size_t>(m.blocks[a]);
        }
        const float d = signed_distance(w, c);
        if (!(d >= lo_band && d <= hi_band)) return;
        // Near enough to hold a node of the band: held if one of its nodes is in it (map_node's own test; a
        // model's grid clamps its distances at its band, so deep inside the centre's test alone holds all).
        for (std::size_t k = 0; k < VolumeMap<D>::kBlockNodes && m.block[b] < 0; ++k) {
            Vec<D> y = c - Vec<D>::filled(0.5f * (B - 1) * m.cell);
            for (int a = 0, rest_k = static_cast<int>(k); a < D; ++a, rest_k /= B) y[a] += m.cell * static_cast<float>(rest_k % B);
            const float dy = signed_distance(w, y);
            if (dy <= profile.reach + root * m.cell && dy >= -profile.radius - root * m.cell) m.block[b] = 1;
        }
    }, 256);
    std::size_t held = 0;
    for (auto& b : m.block)
        if (b >= 0) b = static_cast<std::int64_t>(held++ * VolumeMap<D>::kBlockNodes);
    return held * VolumeMap<D>::kBlockNodes;
}

// The position of held node k (the wall's frame); `ids`: the held blocks in order.
template <int D>
Vec<D> held_node(const VolumeMap<D>& m, const std::vector<std::uint32_t>& ids, std::size_t k) {
    constexpr int B = VolumeMap<D>::kBlock;
    const std::size_t per = VolumeMap<D>::kBlockNodes;
    std::size_t b = ids[k / per], local = k % per;
    Vec<D> y;
    for (int a = 0; a < D; ++a) {
        const std::size_t n = (b % static_cast<std::size_t>(m.blocks[a])) * B + local % B;
        y[a] = m.origin[a] + m.cell * static_cast<float>(n);
        b /= static_cast<std::size_t>(m.blocks[a]);
        local /= B;
    }
    return y;
}
}  // namespace

template <int D>
bool make_volume_map(const Wall<D>& w, const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                     const ExecContext& exec, VolumeMap<D>& out, std::string& why, std::size_t max_nodes) {
    const float r = profile.radius, spacing = D == 3 ? 0.5f * r : 0.25f * r;
    Vec<D> lo, hi;
    wall_box(w, lo, hi);
    const float grow = w.solid ? profile.reach + 2.0f * r : 0.0f;  // a container holds its fluid inside its box
    out.origin = lo - Vec<D>::filled(grow);
    out.cell = D == 3 ? 0.5f * r : 0.25f * r;
    std::size_t total = hold_blocks(w, profile, out, hi + Vec<D>::filled(grow), exec);
    while (total > max_nodes) {  // a coarser grid rather than more memory than asked for
        out.cell *= 1.25f;
        total = hold_blocks(w, profile, out, hi + Vec<D>::filled(grow), exec);
    }
    std::vector<std::uint32_t> ids;
    for (std::size_t b = 0; b < out.block.size(); ++b)
        if (out.block[b] >= 0) ids.push_back(static_cast<std::uint32_t>(b));
    out.share.assign(total, 0.0f);
    out.push.assign(total, Vec<D>::zero());
    std::vector<std::uint8_t> surface(total, 0);
    const Quadrature<D> quad = quadrature(kernel, spacing, profile.mapped(0.0f) - spacing);
    parallel_for_each_index(exec, total, [&](std::size_t k) {
        map_node(w, profile, quad, out.cell, held_node(out, ids, k), out.share[k], out.push[k], surface[k]);
    }, 64);
    // Thin: more than 5% of the surface nodes (a plate's faces; a sharp edge's few nodes are not), or none.
    const auto thin = std::count(surface.begin(), surface.end(), 2), all = thin + std::count(surface.begin(), surface.end(), 1);
    if (all > 0 && thin * 20 <= all) return true;
    const auto at = all > 0 ? std::find(surface.begin(), surface.end(), 2) : surface.begin();
    why = all > 0 ? "thinner than a particle radius under " + std::to_string(100 * thin / all) + "% of its surface, near ("
                  : "no inside on its distance grid (thinner than its voxel), near (";
    const Vec<D> y = total > 0 ? held_node(out, ids, static_cast<std::size_t>(at - surface.begin())) : lo;
    for (int a = 0; a < D; ++a) why += (a ? ", " : "") + std::to_string(y[a]);
    why += ")";
    out = VolumeMap<D>{};
    return false;
}

template <int D>
bool VolumeMaps<D>::virtual_particle(const CubicSpline<D>& kernel, float rho, float grad, float& delta,
                                     float& psi) const {
    if (!(rho > 0.0f) || !(grad > 0.0f) || ratio.size() < 2) return false;
    const float want = rho / grad;
    // ratio falls with delta: the first node at or below want, then linear between it and the one before.
    const auto it = std::lower_bound(ratio.begin(), ratio.end(), want, std::greater<float>());
    const std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>(it - ratio.begin()), 1, ratio.size() - 1);
    const float a = ratio[k - 1], b = ratio[k], f = a > b ? std::clamp((a - want) / (a - b), 0.0f, 1.0f) : 0.0f;
    delta = h * (static_cast<float>(k - 1) + f) / static_cast<float>(ratio.size() - 1);
    const float wv = kernel.value(delta);
    if (!(wv > 0.0f)) return false;
    psi = rho / wv;
    return true;
}

template <int D>
std::size_t VolumeMaps<D>::memory_bytes() const {
    std::size_t bytes = ratio.capacity() * 4 + of_wall.capacity() * 4;
    for (const VolumeMap<D>& m : maps) bytes += m.memory_bytes();
    return bytes;
}

template <int D>
VolumeMaps<D> make_volume_maps(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& mask,
                               const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                               const ExecContext& exec) {
    VolumeMaps<D> out;
    out.of_wall.assign(walls.size(), -1);
    out.h = kernel.h;
    constexpr int nr = 4097;  // W / |W'| over (0, h): from infinity (W'(0) = 0) down to 0
    out.ratio.resize(nr);
    for (int k = 0; k < nr; ++k) {
        const float delta = kernel.h * static_cast<float>(k) / (nr - 1), dw = -kernel.derivative(delta);
        out.ratio[k] = dw > 0.0f ? kernel.value(delta) / dw : (k == 0 ? 1e30f : 0.0f);
    }
    for (std::size_t w = 0; w < walls.size(); ++w) {
        const Wall<D>& wall = walls[w];
        if (w >= mask.size() || !mask[w] || !volume_mapped<D>(wall.shape, wall.solid, wall.body, open_shell(wall))) continue;
        VolumeMap<D> map;
        std::string why;
        if (!make_volume_map(wall, profile, kernel, exec, map, why)) {
            out.refused.push_back("wall " + std::to_string(w) + ": " + why);
            continue;
        }
        out.of_wall[w] = static_cast<int>(out.maps.size());
        out.maps.push_back(std::move(map));
    }
    return out;
}

template struct VolumeMap<2>;
template struct VolumeMap<3>;
template struct VolumeMaps<2>;
template struct VolumeMaps<3>;
template bool make_volume_map<2>(const Wall<2>&, const SmoothWallProfile<2>&, const CubicSpline<2>&, const ExecContext&,
                                 VolumeMap<2>&, std::string&, std::size_t);
template bool make_volume_map<3>(const Wall<3>&, const SmoothWallProfile<3>&, const CubicSpline<3>&, const ExecContext&,
                                 VolumeMap<3>&, std::string&, std::size_t);
template VolumeMaps<2> make_volume_maps<2>(const std::vector<Wall<2>>&, const std::vector<std::uint8_t>&,
                                           const SmoothWallProfile<2>&, const CubicSpline<2>&, const ExecContext&);
template VolumeMaps<3> make_volume_maps<3>(const std::vector<Wall<3>>&, const std::vector<std::uint8_t>&,
                                           const SmoothWallProfile<3>&, const CubicSpline<3>&, const ExecContext&);

}  // namespace eddy
