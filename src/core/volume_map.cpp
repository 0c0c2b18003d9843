// eddy: volume maps on a grid for the smooth walls' solids of any shape (eddy/volume_map.hpp).
#include "eddy/volume_map.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "eddy/smooth_walls.hpp"
#include "core/portable_math.hpp"

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
        const float rho = detail::portable_hypot(x[0] - w.center[0], x[2] - w.center[2]);
        const float qr = w.inner_radius > 0.0f ? std::max(w.inner_radius - rho, rho - w.radius) : rho - w.radius;
        const float qy = std::max(w.center[1] - x[1], x[1] - w.center[1] - w.height);
        const float out = detail::portable_hypot(std::max(qr, 0.0f), std::max(qy, 0.0f));
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

// The quadrature lattice about a node: the map's own nodes (spacing = cell) within the kernel's support,
// as offsets into a block's window of (kBlock + 2 m)^D nodes (m: the support in cells) with, per point, its
// W dV, its offset o (m) and W'(|o|) / |o| o dV; padded with empty points (weight 0) to whole lanes.
template <int D>
struct Lattice {
    static constexpr int kLanes = 8;
    int m = 0, side = 0;  // the support in cells; the window's nodes per axis
    std::vector<std::int32_t> at;
    std::vector<float> w, o[D], dwo[D];
};

template <int D>
Lattice<D> lattice(const CubicSpline<D>& W, float cell) {
    Lattice<D> q;
    q.m = static_cast<int>(std::ceil(W.h / cell));
    q.side = VolumeMap<D>::kBlock + 2 * q.m;
    const float dv = std::pow(cell, float(D));
    const int span = 2 * q.m + 1;
    const int count = D == 2 ? span * span : span * span * span;
    for (int k = 0; k < count; ++k) {
        Vec<D> o;
        std::int32_t at = 0, stride = 1;
        for (int a = 0, rest = k; a < D; ++a, rest /= span, stride *= q.side) {
            const int i = rest % span - q.m;
            o[a] = static_cast<float>(i) * cell;
            at += i * stride;
        }
        const float len = norm(o);
        if (!(len < W.h)) continue;
        const float dw = len > 0.0f ? W.derivative(len) / len * dv : 0.0f;
        q.at.push_back(at);
        q.w.push_back(W.value(len) * dv);
        for (int a = 0; a < D; ++a) q.o[a].push_back(o[a]), q.dwo[a].push_back(dw * o[a]);
    }
    while (q.at.size() % Lattice<D>::kLanes) {
        q.at.push_back(0);
        q.w.push_back(0.0f);
        for (int a = 0; a < D; ++a) q.o[a].push_back(0.0f), q.dwo[a].push_back(0.0f);
    }
    return q;
}

// The wall's smoothed indicator at signed distance phi (header): a ramp over kRamp spacings. On a lattice that
// is not turned to the surface a narrower ramp aliases: one spacing read the push off a cylinder's rim 35% off
// the density's gradient at 1.5 r (12% at 1.5 spacings), two the rim's density 10% high at r (4% at 1.5).
constexpr float kRamp = 1.5f;
inline float indicator(float phi, float inv_spacing) { return std::clamp(0.5f - phi * inv_spacing, 0.0f, 1.0f); }

// The unit normal at node y: the signed distance's central differences over a quarter cell; false where they
// vanish.
template <int D>
bool surface_normal(const Wall<D>& w, const Vec<D>& y, float cell, Vec<D>& n) {
    const float e = 0.25f * cell;
    for (int a = 0; a < D; ++a) {
        Vec<D> step = Vec<D>::zero();
        step[a] = e;
        n[a] = signed_distance(w, y + step) - signed_distance(w, y - step);
    }
    const float len = norm(n);
    if (!(len > 0.0f)) return false;
    n = n * (1.0f / len);
    return true;
}

// share and push at node y (header) from `phi`, the signed distances of y's window (y at index c). A node
// inside the wall takes its surface point's values (the profile's d < 0 takes d = 0): the wall's sum shifted
// by d, exact for a flat wall.
//
// Both the wall's sums and the flat face's (the plane at the mapped distance s along y's normal) run over the
// same lattice points, so a flat face reads share 1 and push n in any orientation. Each sum is kept in
// kLanes partial sums (point k in lane k mod kLanes), added in one order: the same bits on any thread count.
template <int D>
void map_node(const Wall<D>& w, const SmoothWallProfile<D>& profile, const Lattice<D>& q, float cell, const Vec<D>& y,
              const float* phi, std::int32_t c, float& share, Vec<D>& push) {
    share = 0.0f;
    push = Vec<D>::zero();
    const float r = profile.radius, d = phi[c];
    // Beyond the band no cell holding a point at -r..reach reaches.
    if (d > profile.reach + std::sqrt(float(D)) * cell || d < -r - std::sqrt(float(D)) * cell) return;
    Vec<D> n;
    if (!surface_normal(w, y, cell, n)) return;
    // The wall grown by `grown` (at the node's own distance: the surface point's d = 0 inside the wall).
    const float dq = std::max(d, 0.0f), s = profile.mapped(dq), grown = dq - s + std::min(d, 0.0f);
    const float width = kRamp * cell, inv = 1.0f / width, hs = 0.5f * width;
    // K, its growth rate dK/d grown (a central difference over the ramp's width), -grad K at fixed growth (G);
    // the plane's Kf, Kfd and Gf along n.
    constexpr int L = Lattice<D>::kLanes;
    float K[L] = {}, Kd[L] = {}, G[D][L] = {}, Kf[L] = {}, Kfd[L] = {}, Gf[L] = {};
    const std::size_t count = q.at.size();
    for (std::size_t k0 = 0; k0 < count; k0 += L)
        for (int l = 0; l < L; ++l) {
            const std::size_t k = k0 + static_cast<std::size_t>(l);
            const float wk = q.w[k], pw = phi[c + q.at[k]] - grown, chi = indicator(pw, inv);
            K[l] += wk * chi;
            Kd[l] += wk * (indicator(pw - hs, inv) - indicator(pw + hs, inv)) * inv;
            float on = 0.0f, dwn = 0.0f;
            for (int a = 0; a < D; ++a) {
                G[a][l] += q.dwo[a][k] * chi;
                on += q.o[a][k] * n[a];
                dwn += q.dwo[a][k] * n[a];
            }
            const float pp = s + on, chp = indicator(pp, inv);
            Kf[l] += wk * chp;
            Kfd[l] += wk * (indicator(pp - hs, inv) - indicator(pp + hs, inv)) * inv;
            Gf[l] += dwn * chp;
        }
    auto sum = [](const float* v) {
        double t = 0.0;
        for (int l = 0; l < L; ++l) t += v[l];
        return t;
    };
    // The density's push, -grad of lambda rho0 K: G at fixed growth, and the growth's d(grown)/dd = 1 - 2 kappa.
    const double k21 = 2.0 * profile.kappa - 1.0, kf = sum(Kf), pushf = sum(Gf) + k21 * sum(Kfd);
    if (!(kf > 1e-6) || !(pushf > 1e-9 / r)) {  // at the reach's edge the face holds nothing: the wall is the face
        share = 1.0f;
        push = n;
    } else {
        share = static_cast<float>(sum(K) / kf);
        const double kd = k21 * sum(Kd);
        for (int a = 0; a < D; ++a) push[a] = static_cast<float>((sum(G[a]) + kd * n[a]) / pushf);
    }
}

// Node y at signed distance d: 0, or for a node at most r outside the wall (a surface node) 1, and 2 when the
// wall is thinner than r below its surface point (the fluid's side again along -n; n as map_node's).
template <int D>
std::uint8_t surface_flag(const Wall<D>& w, const SmoothWallProfile<D>& profile, float cell, const Vec<D>& y, float d) {
    const float r = profile.radius;
    Vec<D> n;
    if (!(d >= 0.0f && d <= r) || !surface_normal(w, y, cell, n)) return 0;
    for (int k = 1; k <= 4; ++k)
        if (signed_distance(w, y - n * (d + 0.25f * r * static_cast<float>(k))) > 0.0f) return 2;
    return 1;
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
        if (block[b] < 0) {  // beyond the band: 0
            if (block[b] == kNotFilled) throw std::logic_error("volume map: read in a block that was not filled");
            continue;
        }
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

// The position of node `local` of block b (the wall's frame).
template <int D>
Vec<D> block_node(const VolumeMap<D>& m, std::size_t b, std::size_t local) {
    constexpr int B = VolumeMap<D>::kBlock;
    Vec<D> y;
    for (int a = 0; a < D; ++a) {
        const std::size_t n = (b % static_cast<std::size_t>(m.blocks[a])) * B + local % B;
        y[a] = m.origin[a] + m.cell * static_cast<float>(n);
        b /= static_cast<std::size_t>(m.blocks[a]);
        local /= B;
    }
    return y;
}

// Blocks ids of `out` given their slots in share and push: spare ones first (the last released first), then new
// ones at the end.
template <int D>
void give_slots(const std::vector<std::size_t>& ids, VolumeMap<D>& out) {
    constexpr std::size_t per = VolumeMap<D>::kBlockNodes;
    const std::size_t reused = std::min(ids.size(), out.spare.size()), first_node = out.share.size();
    out.share.resize(first_node + (ids.size() - reused) * per, 0.0f);
    out.push.resize(first_node + (ids.size() - reused) * per, Vec<D>::zero());
    for (std::size_t k = 0; k < ids.size(); ++k) {
        const std::size_t fresh = first_node + (k - std::min(k, reused)) * per;
        out.block[ids[k]] = k < reused ? out.spare[out.spare.size() - 1 - k] : static_cast<std::int64_t>(fresh);
    }
    out.spare.resize(out.spare.size() - reused);
    out.peak_filled = std::max(out.peak_filled, out.filled());
}

// Fills blocks `ids` (held, not filled; ascending), their nodes in the slots give_slots gives them. Block
// by block: the signed distances of the block's window (its nodes and m more on each side) once, then every
// node's sums from them. A node's values depend on its position alone: the same bits whichever blocks are
// filled when, and on any thread count.
template <int D>
void fill_blocks(const Wall<D>& w, const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                 const std::vector<std::size_t>& ids, const ExecContext& exec, VolumeMap<D>& out) {
    if (ids.empty()) return;
    constexpr int B = VolumeMap<D>::kBlock;
    constexpr std::size_t per = VolumeMap<D>::kBlockNodes;
    give_slots(ids, out);
    const Lattice<D> q = lattice(kernel, out.cell);
    parallel_for_each_index(exec, ids.size(), [&](std::size_t ib) {
        std::size_t window = 1;
        for (int a = 0; a < D; ++a) window *= static_cast<std::size_t>(q.side);
        std::vector<float> phi(window);
        std::array<int, D> first;  // the window's first node per axis
        for (int a = 0, rest = static_cast<int>(ids[ib]); a < D; ++a) {
            first[a] = rest % out.blocks[a] * B - q.m;
            rest /= out.blocks[a];
        }
        for (std::size_t k = 0; k < window; ++k) {
            Vec<D> z;
            for (int a = 0, rest = static_cast<int>(k); a < D; ++a, rest /= q.side)
                z[a] = out.origin[a] + out.cell * static_cast<float>(first[a] + rest % q.side);
            phi[k] = signed_distance(w, z);
        }
        const auto at = static_cast<std::size_t>(out.block[ids[ib]]);
        for (std::size_t local = 0; local < per; ++local) {
            std::int32_t c = 0, stride = 1;
            for (int a = 0, rest = static_cast<int>(local); a < D; ++a, rest /= B, stride *= q.side) c += (rest % B + q.m) * stride;
            map_node(w, profile, q, out.cell, block_node(out, ids[ib], local), phi.data(), c, out.share[at + local],
                     out.push[at + local]);
        }
    }, 1);
}
}  // namespace

template <int D>
bool make_volume_map(const Wall<D>& w, const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                     const ExecContext& exec, VolumeMap<D>& out, std::string& why, std::size_t max_nodes, MapFill fill) {
    const float r = profile.radius;
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
    std::vector<std::size_t> ids;
    for (std::size_t b = 0; b < out.block.size(); ++b)
        if (out.block[b] >= 0) {
            ids.push_back(b);
            out.block[b] = VolumeMap<D>::kNotFilled;
        }
    // Thin: more than 5% of the surface nodes (a plate's faces; a sharp edge's few nodes are not), or none. Decided
    // over every held node before any is filled (the flags need distances only): the same answer whichever part
    // of the map a process fills.
    constexpr std::size_t per = VolumeMap<D>::kBlockNodes;
    std::vector<std::array<std::size_t, 3>> counts(ids.size());  // per block: thin, surface, first thin node
    parallel_for_each_index(exec, ids.size(), [&](std::size_t ib) {
        counts[ib] = {0, 0, per};
        for (std::size_t local = 0; local < per; ++local) {
            const Vec<D> y = block_node(out, ids[ib], local);
            const std::uint8_t f = surface_flag(w, profile, out.cell, y, signed_distance(w, y));
            counts[ib][0] += f == 2;
            counts[ib][1] += f != 0;
            if (f == 2 && counts[ib][2] == per) counts[ib][2] = local;
        }
    }, 16);
    std::size_t thin = 0, all = 0;
    Vec<D> at = lo;
    for (std::size_t ib = 0; ib < ids.size(); ++ib) {
        if (thin == 0 && counts[ib][0] > 0) at = block_node(out, ids[ib], counts[ib][2]);
        thin += counts[ib][0];
        all += counts[ib][1];
    }
    if (all > 0 && thin * 20 <= all) {
        if (fill == MapFill::whole) fill_blocks(w, profile, kernel, ids, exec, out);
        return true;
    }
    if (all == 0 && !ids.empty()) at = block_node(out, ids[0], 0);
    why = all > 0 ? "thinner than a particle radius under " + std::to_string(100 * thin / all) + "% of its surface, near ("
                  : "no inside on its distance grid (thinner than its voxel), near (";
    for (int a = 0; a < D; ++a) why += (a ? ", " : "") + std::to_string(at[a]);
    why += ")";
    out = VolumeMap<D>{};
    return false;
}

namespace {
// The blocks [b0, b1] per axis holding a node of the cells the box [lo, hi] touches (those sample() may read
// there); false when the box misses the grid (or is NaN).
template <int D>
bool blocks_under(const VolumeMap<D>& map, const Vec<D>& lo, const Vec<D>& hi, std::array<int, D>& b0,
                  std::array<int, D>& b1) {
    constexpr int B = VolumeMap<D>::kBlock;
    for (int a = 0; a < D; ++a) {
        const float u0 = (lo[a] - map.origin[a]) / map.cell, u1 = (hi[a] - map.origin[a]) / map.cell;
        if (!(u1 >= 0.0f) || !(u0 <= static_cast<float>(map.nodes[a] - 1))) return false;
        const float top = static_cast<float>(map.nodes[a] - 1);  // clamped as floats: a far point casts safely
        b0[a] = static_cast<int>(std::floor(std::clamp(u0, 0.0f, top))) / B;
        b1[a] = std::min(static_cast<int>(std::floor(std::clamp(u1, 0.0f, top))) + 1, map.nodes[a] - 1) / B;
    }
    return true;
}

// share and push rebuilt with the filled blocks only, in block order (their values move with them), and their
// spare capacity returned.
template <int D>
void compact(VolumeMap<D>& map) {
    constexpr std::size_t per = VolumeMap<D>::kBlockNodes;
    std::vector<float> share;
    std::vector<Vec<D>> push;
    share.reserve(map.filled());
    push.reserve(map.filled());
    for (std::int64_t& at : map.block) {
        if (at < 0) continue;
        const auto from = static_cast<std::ptrdiff_t>(at);
        at = static_cast<std::int64_t>(share.size());
        share.insert(share.end(), map.share.begin() + from, map.share.begin() + from + per);
        push.insert(push.end(), map.push.begin() + from, map.push.begin() + from + per);
    }
    map.share = std::move(share);
    map.push = std::move(push);
    map.spare = {};
}
}  // namespace

template <int D>
std::size_t release_volume_map(const Vec<D>& lo, const Vec<D>& hi, VolumeMap<D>& map) {
    std::array<int, D> b0{}, b1{};
    const bool any = blocks_under<D>(map, lo, hi, b0, b1);
    std::size_t released = 0;
    for (std::size_t b = 0; b < map.block.size(); ++b) {
        if (map.block[b] < 0) continue;
        bool near = any;
        for (int a = 0, rest = static_cast<int>(b); a < D; rest /= map.blocks[a], ++a) {
            const int at = rest % map.blocks[a];
            near = near && at >= b0[a] && at <= b1[a];
        }
        if (near) continue;
        map.spare.push_back(map.block[b]);
        map.block[b] = VolumeMap<D>::kNotFilled;
        ++released;
    }
    if (map.spare.size() * VolumeMap<D>::kBlockNodes * 2 > map.share.size()) compact(map);
    return released;
}

template <int D>
std::size_t fill_volume_map(const Wall<D>& w, const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                            const Vec<D>& lo, const Vec<D>& hi, const ExecContext& exec, VolumeMap<D>& map) {
    std::array<int, D> b0, b1;
    if (map.block.empty() || !blocks_under<D>(map, lo, hi, b0, b1)) return 0;
    std::vector<std::size_t> ids;
    std::array<int, D> c = b0;
    for (;;) {
        std::size_t b = 0, stride = 1;
        for (int a = 0; a < D; ++a) {
            b += static_cast<std::size_t>(c[a]) * stride;
            stride *= static_cast<std::size_t>(map.blocks[a]);
        }
        if (map.block[b] == VolumeMap<D>::kNotFilled) ids.push_back(b);
        int a = 0;
        while (a < D && ++c[a] > b1[a]) c[a] = b0[a], ++a;
        if (a == D) break;
    }
    std::sort(ids.begin(), ids.end());
    fill_blocks(w, profile, kernel, ids, exec, map);
    return ids.size();
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
std::size_t VolumeMaps<D>::nodes_filled() const {
    std::size_t n = 0;
    for (const VolumeMap<D>& m : maps) n += m.filled();
    return n;
}

template <int D>
std::size_t VolumeMaps<D>::nodes_peak() const {
    std::size_t n = 0;
    for (const VolumeMap<D>& m : maps) n += m.peak_filled;
    return n;
}

template <int D>
std::size_t VolumeMaps<D>::nodes_held() const {
    std::size_t n = 0;
    for (const VolumeMap<D>& m : maps)
        n += VolumeMap<D>::kBlockNodes * static_cast<std::size_t>(std::count_if(m.block.begin(), m.block.end(),
                                                                                 [](std::int64_t b) { return b != -1; }));
    return n;
}

template <int D>
VolumeMaps<D> make_volume_maps(const std::vector<Wall<D>>& walls, const std::vector<std::uint8_t>& mask,
                               const SmoothWallProfile<D>& profile, const CubicSpline<D>& kernel,
                               const ExecContext& exec, MapFill fill) {
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
        if (w >= mask.size() || !mask[w] || !volume_mapped<D>(wall.shape, wall.solid, open_shell(wall))) continue;
        VolumeMap<D> map;
        std::string why;
        if (!make_volume_map(wall, profile, kernel, exec, map, why, std::size_t{1} << 24, fill)) {
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
                                 VolumeMap<2>&, std::string&, std::size_t, MapFill);
template std::size_t fill_volume_map<2>(const Wall<2>&, const SmoothWallProfile<2>&, const CubicSpline<2>&, const Vec<2>&,
                                        const Vec<2>&, const ExecContext&, VolumeMap<2>&);
template bool make_volume_map<3>(const Wall<3>&, const SmoothWallProfile<3>&, const CubicSpline<3>&, const ExecContext&,
                                 VolumeMap<3>&, std::string&, std::size_t, MapFill);
template std::size_t fill_volume_map<3>(const Wall<3>&, const SmoothWallProfile<3>&, const CubicSpline<3>&, const Vec<3>&,
                                        const Vec<3>&, const ExecContext&, VolumeMap<3>&);
template std::size_t release_volume_map<2>(const Vec<2>&, const Vec<2>&, VolumeMap<2>&);
template std::size_t release_volume_map<3>(const Vec<3>&, const Vec<3>&, VolumeMap<3>&);
template VolumeMaps<2> make_volume_maps<2>(const std::vector<Wall<2>>&, const std::vector<std::uint8_t>&,
                                           const SmoothWallProfile<2>&, const CubicSpline<2>&, const ExecContext&, MapFill);
template VolumeMaps<3> make_volume_maps<3>(const std::vector<Wall<3>>&, const std::vector<std::uint8_t>&,
                                           const SmoothWallProfile<3>&, const CubicSpline<3>&, const ExecContext&, MapFill);

}  // namespace eddy
