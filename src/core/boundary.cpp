#include "eddy/boundary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eddy/neighbors.hpp"
#include "core/portable_math.hpp"

namespace eddy {

template <int D>
void BoundarySet<D>::push_back(const Vec<D>& x, std::uint16_t obj) {
    position.push_back(x);
    rest_position.push_back(x);
    velocity.push_back(Vec<D>::zero());
    psi.push_back(0.0f);
    object.push_back(obj);
}

template <int D>
std::size_t BoundarySet<D>::memory_bytes() const {
    return (position.capacity() + rest_position.capacity() + velocity.capacity()) * sizeof(Vec<D>) +
           psi.capacity() * sizeof(float) + object.capacity() * sizeof(std::uint16_t);
}

template <int D>
float wall_volume_correction(const CubicSpline<D>& kernel, float spacing, int layers) {
    if (!(spacing > 0.0f) || layers < 1) return 1.0f;
    // Lattice points within the support around the origin: all of them (full), and those of the wall's
    // layers y = 0, -spacing, ... (the origin is a particle of the layer next to the fluid).
    double full = 0.0, wall = 0.0;
    for_each_lattice_offset<D>(spacing, kernel.h, [&](const Vec<D>& x) {
        const double w = kernel.value(x);
        full += w;
        const long layer = std::lround(x[1] / spacing);
        if (layer <= 0 && layer > -layers) wall += w;
    });
    return static_cast<float>(wall / full);
}

namespace {

// Akinci's psi over a set of wall particles (b included in its own sum).
template <int D>
void akinci_psi(const std::vector<Vec<D>>& x, const std::vector<float>& factor, const std::vector<std::uint16_t>& object,
                std::vector<float>& psi, const CubicSpline<D>& kernel, float rest_density, const ExecContext& exec) {
    NeighborGrid<D> grid(kernel.h);
    grid.build(x, exec);
    psi.resize(x.size());
    parallel_for_each_index(exec, x.size(), [&](std::size_t i) {
        const Vec<D> xi = x[i];
        float sum = 0.0f;  // includes b itself (j == i: W(0))
        grid.for_each_neighbor(xi, kernel.h, [&](std::uint32_t j) { sum += kernel.value(xi - x[j]); });
        psi[i] = (object[i] < factor.size() ? factor[object[i]] : factor[0]) * rest_density / sum;
    });
}

// Mean density the wall particles give probes at height r above the plane y = 0 (wall below it),
// over the middle of a patch of half-width `half`.
template <int D>
double probe_density(const std::vector<Vec<D>>& x, const std::vector<float>& psi, const CubicSpline<D>& kernel, float r,
                     float half) {
    double sum = 0.0;
    int n = 0;
    const float reach = half - 2.0f * kernel.h, step = 0.37f * r;
    const int steps = static_cast<int>(2.0f * reach / step);
    for (int i = 0; i <= steps; ++i)
        for (int k = 0; k <= (D == 3 ? steps : 0); ++k) {
            Vec<D> p = Vec<D>::zero();
            p[0] = -reach + step * float(i);
            p[1] = r;
            if constexpr (D == 3) p[2] = -reach + step * float(k);
            double rho = 0.0;
            for (std::size_t b = 0; b < x.size(); ++b) rho += psi[b] * kernel.value(p - x[b]);
            sum += rho;
            ++n;
        }
    return sum / n;
}

}  // namespace

template <int D>
float sampled_wall_correction(const CubicSpline<D>& kernel, float r, int layers, float gamma, const ExecContext& exec) {
    const float half = 10.0f * kernel.h, s = 2.0f * r;
    // The lattice wall: layers at y = -r, -3r, ... on the lattice of spacing 2r.
    std::vector<Vec<D>> lattice;
    const int n = static_cast<int>(half / s);
    for (int l = 0; l < layers; ++l)
        for (int i = -n; i <= n; ++i)
            for (int k = -n; k <= (D == 3 ? n : -n); ++k) {
                Vec<D> p = Vec<D>::zero();
                p[0] = s * float(i);
                p[1] = -float(2 * l + 1) * r;
                if constexpr (D == 3) p[2] = s * float(k);
                lattice.push_back(p);
            }
    // The same plane as a model (outward normal -y: the wall's side is below), sampled.
    Mesh<D> patch;
    if constexpr (D == 3) {
        patch.vertices = {Vec3{{-half, 0, -half}}, Vec3{{half, 0, -half}}, Vec3{{half, 0, half}}, Vec3{{-half, 0, half}}};
        patch.cells = {{0, 1, 2}, {0, 2, 3}};
    } else {
        patch.vertices = {Vec2{{-half, 0}}, Vec2{{half, 0}}};  // outward normal -y, as in 3D
        patch.cells = {{0, 1}};
    }
    WallSampling ws;
    ws.particle_radius = r;
    ws.layers = layers;
    const std::vector<Vec<D>> sampled = sample_wall(MeshShape<D>(std::move(patch), "calibration patch"), ws, exec);
    const std::vector<float> factor{gamma};
    std::vector<float> psi_l, psi_s;
    akinci_psi(lattice, factor, std::vector<std::uint16_t>(lattice.size(), 0), psi_l, kernel, 1.0f, exec);
    akinci_psi(sampled, factor, std::vector<std::uint16_t>(sampled.size(), 0), psi_s, kernel, 1.0f, exec);
    return static_cast<float>(probe_density(lattice, psi_l, kernel, r, half) / probe_density(sampled, psi_s, kernel, r, half));
}

template <int D>
void compute_boundary_psi(BoundarySet<D>& b, const CubicSpline<D>& kernel, float rest_density, const ExecContext& exec,
                          float spacing, int layers) {
    if (b.empty()) return;
    const float gamma = wall_volume_correction(kernel, spacing, layers);
    std::vector<float> factor(std::max<std::size_t>(b.sampled_layers.size(), 1), gamma);
    for (std::size_t o = 0; o < b.sampled_layers.size() && o < factor.size(); ++o)
        if (b.sampled_layers[o] > 0)
            factor[o] = gamma * sampled_wall_correction(kernel, b.particle_radius, b.sampled_layers[o], gamma, exec);
    akinci_psi(b.position, factor, b.object, b.psi, kernel, rest_density, exec);
}

namespace {

// Analytic shapes and sdf walls, in the wall's own (body) frame.
template <int D>
bool inside_wall(const Wall<D>& w, const Vec<D>& x, float m) {
    switch (w.shape) {
        case Wall<D>::Shape::box:
            for (int a = 0; a < D; ++a)
                if (x[a] < w.lo[a] + m || x[a] > w.hi[a] - m) return false;
            return true;
        case Wall<D>::Shape::ball: return norm(x - w.center) <= w.radius - m;
        case Wall<D>::Shape::cylinder: {
            if constexpr (D == 3) {
                const float dx = x[0] - w.center[0], dz = x[2] - w.center[2];
                return std::sqrt(dx * dx + dz * dz) <= w.radius - m && x[1] >= w.center[1] + m &&
                       x[1] <= w.center[1] + w.height - m;
            }
            return false;
        }
        case Wall<D>::Shape::sdf: {
            const float slack = w.sdf->voxel * (D == 3 ? 1.7321f : 1.4143f);
            const float near = w.sdf->nearest(x);
            if (near <= -m - slack) return true;  // deep inside: one read
            if (near > -m + slack) return false;
            return w.sdf->sample(x) <= -m;
        }
    }
    return false;
}

// Moves x along the distance gradient until sdf(x) = target (from outside the grid, first towards the
// grid's box). Each pass moves by the missing distance (target - phi) along the unit gradient: a
// distance field has |grad| = 1, and the trilinear cell's gradient is often much shorter (inside a
// container's corner the cell at the corner has three nodes at 0 and is nearly flat). Newton's step
// (target - phi) / |grad| there threw particles by many particle sizes (2D Clavet in a square polygon
// tank: 133 m/s at step 10, where the analytic box held). Each pass moves at most a voxel, the whole
// call at most kMaxMove voxels (2r at the collision's voxel r: half the default kernel support); a
// particle still short of the target moves on at the next call. A non-finite value or step leaves x
// where it was.
constexpr float kMaxMove = 2.0f;

template <int D>
Vec<D> limit_move(const Vec<D>& from, const Vec<D>& to, float max_len) {
    const Vec<D> d = to - from;
    const float len = norm(d);
    if (!std::isfinite(len)) return from;
    return len > max_len ? from + d * (max_len / len) : to;
}

template <int D>
Vec<D> sdf_move_to(const SdfGrid<D>& g, const Vec<D> x0, float target) {
    Vec<D> x = x0;
    for (int a = 0; a < D; ++a) {
        const float top = g.origin[a] + g.voxel * float(g.nodes[a] - 1);
        x[a] = std::clamp(x[a], g.origin[a], top);
    }
    for (int it = 0; it < 3; ++it) {
        Vec<D> grad;
        const float phi = g.sample(x, &grad);
        const float len = norm(grad);
        if (!(len > 0.0f) || !std::isfinite(phi)) break;
        x = limit_move(x, x + grad * ((target - phi) / len), g.voxel);
        if (std::fabs(target - phi) < 1e-3f * g.voxel) break;
    }
    return limit_move(x0, x, kMaxMove * g.voxel);
}

// An open model's shell (SdfGrid::shell): the unsigned distance from x to the model and the unit
// direction from the surface towards x (the side x is on), from the model's exact closest point.
// Exactly on the surface, the side is the winding number's, along the cell's normal. `limit`: farther
// than this, the answer is limit and a zero direction.
template <int D>
float shell_distance(const SdfGrid<D>& g, const Vec<D>& x, Vec<D>& away, float limit) {
    away = Vec<D>::zero();
    Vec<D> c;
    std::uint32_t cell = 0;
    const double d = g.shell->distance(x, limit, &c, &cell);
    if (!(d < limit)) return limit;
    const Vec<D> dir = x - c;
    const float len = norm(dir);
    if (len > 1e-6f * g.voxel) {
        away = dir * (1.0f / len);
    } else {
        const Vec<D> n = g.shell->cell_normal(cell);
        away = g.shell->inside(x) ? -n : n;
    }
    return static_cast<float>(d);
}

// Is x within m of the shell's surface plus its thickness? The grid's nearest node first (one read):
// distances are 1-Lipschitz, so a node farther than the reach plus the node's offset rules x out.
template <int D>
bool near_shell(const SdfGrid<D>& g, const Vec<D>& x, float m) {
    const float reach = g.shell_thickness + m;
    const float slack = g.voxel * (D == 3 ? 1.7321f : 1.4143f);
    if (g.nearest(x) >= reach + slack) return false;
    Vec<D> away;
    return shell_distance(g, x, away, reach) < reach;
}

// Pushes x off the shell to the side it is on, to the shell's thickness plus m from the surface. A
// concave corner (the floor meeting a side of a tank) pushes off one face onto the other: a few
// passes. Every pass moves by at most the reach (thickness + m), so the whole by at most 3 of them.
template <int D>
Vec<D> push_off_shell(const SdfGrid<D>& g, Vec<D> x, float m) {
    const float reach = g.shell_thickness + m;
    for (int it = 0; it < 3; ++it) {
        Vec<D> away;
        const float d = shell_distance(g, x, away, reach);
        if (!(d < reach)) break;
        const Vec<D> next = x + away * (reach - d);
        if (!is_finite(next)) break;
        x = next;
    }
    return x;
}

template <int D>
bool is_shell(const Wall<D>& w) { return w.shape == Wall<D>::Shape::sdf && w.sdf && w.sdf->shell; }

// The point of the container at least m inside it that is nearest to x.
template <int D>
Vec<D> project_into(const Wall<D>& w, Vec<D> x, float m) {
    switch (w.shape) {
        case Wall<D>::Shape::box:
            for (int a = 0; a < D; ++a) x[a] = std::clamp(x[a], w.lo[a] + m, std::max(w.lo[a] + m, w.hi[a] - m));
            return x;
        case Wall<D>::Shape::ball: {
            const Vec<D> d = x - w.center;
            const float n = norm(d), R = std::max(0.0f, w.radius - m);
            return n > R && n > 0.0f ? w.center + d * (R / n) : x;
        }
        case Wall<D>::Shape::cylinder: {
            if constexpr (D == 3) {
                const float dx = x[0] - w.center[0], dz = x[2] - w.center[2], n = std::sqrt(dx * dx + dz * dz);
                const float R = std::max(0.0f, w.radius - m);
                if (n > R && n > 0.0f) {
                    x[0] = w.center[0] + dx * (R / n);
                    x[2] = w.center[2] + dz * (R / n);
                }
                x[1] = std::clamp(x[1], w.center[1] + m, std::max(w.center[1] + m, w.center[1] + w.height - m));
            }
            return x;
        }
        case Wall<D>::Shape::sdf: return sdf_move_to(*w.sdf, x, -m);
    }
    return x;
}

// Is x within m of the solid (or inside it)?
template <int D>
bool in_solid(const Wall<D>& w, const Vec<D>& x, float m) {
    switch (w.shape) {
        case Wall<D>::Shape::box:
            for (int a = 0; a < D; ++a)
                if (x[a] < w.lo[a] - m || x[a] > w.hi[a] + m) return false;
            return true;
        case Wall<D>::Shape::sdf: {
            const float slack = w.sdf->voxel * (D == 3 ? 1.7321f : 1.4143f);
            const float near = w.sdf->nearest(x);
            if (near >= m + slack) return false;  // far outside: one read
            if (near < m - slack) return true;
            return w.sdf->sample(x) < m;
        }
        case Wall<D>::Shape::cylinder: {  // a tube (inner_radius > 0) or a disc about y, 3D only
            if constexpr (D == 3) {
                const float rho = detail::portable_hypot(x[0] - w.center[0], x[2] - w.center[2]);
                return x[1] >= w.center[1] - m && x[1] <= w.center[1] + w.height + m && rho <= w.radius + m &&
                       (w.inner_radius <= 0.0f || rho >= w.inner_radius - m);
            }
            return false;
        }
        default: return norm(x - w.center) < w.radius + m;
    }
}

// The point outside a solid cylinder (tube or disc) by m nearest to x, when x is inside it: below its
// bottom, above its top, radially outside, or into its hole.
template <int D>
Vec<D> push_out_of_cylinder(const Wall<D>& w, Vec<D> x, float m) {
    if constexpr (D == 3) {
        const float dx = x[0] - w.center[0], dz = x[2] - w.center[2], rho = detail::portable_hypot(dx, dz);
        const float ux = rho > 0.0f ? dx / rho : 1.0f, uz = rho > 0.0f ? dz / rho : 0.0f;
        const float bottom = w.center[1] - m, top = w.center[1] + w.height + m;
        const float outer = w.radius + m, inner = w.inner_radius - m;
        Vec<D> out = x;
        float best = x[1] - bottom;
        out[1] = bottom;
        if (top - x[1] < best) {
            best = top - x[1];
            out = x;
            out[1] = top;
        }
        auto radial = [&](float R) {
            out = x;
            out[0] = w.center[0] + ux * R;
            out[2] = w.center[2] + uz * R;
        };
        if (outer - rho < best) {
            best = outer - rho;
            radial(outer);
        }
        if (w.inner_radius > 0.0f && inner > 0.0f && rho - inner < best) radial(inner);
        return out;
    }
    return x;
}

// The point outside the solid (by m) nearest to x, when x is inside it.
template <int D>
Vec<D> push_out_of(const Wall<D>& w, Vec<D> x, float m) {
    if (w.shape == Wall<D>::Shape::sdf) return sdf_move_to(*w.sdf, x, m);
    if (w.shape == Wall<D>::Shape::cylinder) return push_out_of_cylinder(w, x, m);
    if (w.shape == Wall<D>::Shape::box) {
        int best_axis = 0;
        float best = std::numeric_limits<float>::max(), target = 0.0f;
        for (int a = 0; a < D; ++a) {
            const float to_lo = x[a] - (w.lo[a] - m), to_hi = (w.hi[a] + m) - x[a];
            if (to_lo < best) { best = to_lo; best_axis = a; target = w.lo[a] - m; }
            if (to_hi < best) { best = to_hi; best_axis = a; target = w.hi[a] + m; }
        }
        x[best_axis] = target;
        return x;
    }
    const Vec<D> d = x - w.center;
    const float n = norm(d);
    if (n == 0.0f) {
        x[0] = w.center[0] + w.radius + m;  // exactly at the centre: any direction will do
        return x;
    }
    return w.center + d * ((w.radius + m) / n);
}

template <int D>
Vec<D> to_body(const Wall<D>& w, const Vec<D>& x) { return w.moving ? w.pose.inverse(x) : x; }
template <int D>
Vec<D> to_world(const Wall<D>& w, const Vec<D>& x) { return w.moving ? w.pose.apply(x) : x; }

}  // namespace

template <int D>
bool move_walls(BoundarySet<D>& b, std::vector<Wall<D>>& walls, double t, float dt, const ExecContext& exec) {
    if (!b.any_moving()) return false;
    update_boundary_motion(b, t, exec);
    update_wall_poses(walls, b.motions, t + dt);
    return true;
}

template <int D>
bool guard_walls(Vec<D>& x, Vec<D>& v, const std::vector<Wall<D>>& walls, float margin) {
    if (walls.empty()) return false;
    const Vec<D> before = x;
    if (!keep_inside(x, walls, margin)) return false;
    const Vec<D> push = x - before;
    const float len = norm(push);
    if (len > 0.0f) {
        const Vec<D> nrm = push * (1.0f / len);
        const float vn = dot(v, nrm);
        if (vn < 0.0f) v -= nrm * vn;
    }
    return true;
}

template <int D>
bool keep_inside(Vec<D>& x, const std::vector<Wall<D>>& walls, float margin) {
    bool moved = false;
    bool any_container = false, inside = false;
    const WallIndex* index = walls.empty() ? nullptr : walls.front().index.get();
    // The containers: from the index (a thousand bodies are a thousand solids, a tank is one wall), or
    // every wall that is neither solid nor a shell.
    auto for_containers = [&](auto&& f) {
        if (index) {
            for (std::uint32_t k : index->containers) f(walls[k]);
            return;
        }
        for (const auto& w : walls)
            if (!w.solid && !is_shell(w)) f(w);
    };
    // An open model's shell bounds nothing (water goes in and out over its rim): it is no container
    // of the union below, but a wall of both faces, like an obstacle's.
    for_containers([&](const Wall<D>& w) {
        any_container = true;
        inside = inside || inside_wall(w, to_body(w, x), margin);
    });
    if (any_container && !inside) {
        Vec<D> best = x;
        float best_d = std::numeric_limits<float>::max();
        for_containers([&](const Wall<D>& w) {
            const Vec<D> p = to_world(w, project_into(w, to_body(w, x), margin));
            const float d = norm2(p - x);
            if (d < best_d) { best_d = d; best = p; }
        });
        x = best;
        moved = true;
    }
    // The obstacles and shells, in the list's order: each sees x as the walls before it left it.
    auto obstacle = [&](const Wall<D>& w) {
        if (is_shell(w)) {
            const Vec<D> xb = to_body(w, x);
            if (near_shell(*w.sdf, xb, margin)) {
                x = to_world(w, push_off_shell(*w.sdf, xb, margin));
                return true;
            }
            return false;
        }
        if (!w.solid) return false;
        if (w.bounded) {  // outside the solid's box widened by the margin: not within the margin of it
            bool out = false;
            for (int a = 0; a < D; ++a) out = out || x[a] < w.reach_lo[a] - margin || x[a] > w.reach_hi[a] + margin;
            if (out) return false;
        }
        const Vec<D> xb = to_body(w, x);
        if (in_solid(w, xb, margin)) {
            x = to_world(w, push_out_of(w, xb, margin));
            return true;
        }
        return false;
    };
    if (!index || margin > index->pad) {
        for (const auto& w : walls) moved = obstacle(w) || moved;
        return moved;
    }
    // The walls of x's cell merged with the unbounded ones, in the list's order. A wall not listed for the
    // cell cannot reach x; once x is moved it may have left the cell: the rest are scanned in full.
    std::size_t c = 0;
    for (int a = D - 1; a >= 0; --a) {
        const int k = std::clamp(static_cast<int>(std::floor((x[a] - index->lo[a]) / index->cell[a])), 0, index->cells[a] - 1);
        c = c * std::size_t(index->cells[a]) + std::size_t(k);
    }
    bool inside_grid = true;
    for (int a = 0; a < D; ++a)
        inside_grid = inside_grid && x[a] >= index->lo[a] && x[a] <= index->lo[a] + index->cell[a] * float(index->cells[a]);
    const std::uint32_t* cw = index->walls.data() + (inside_grid ? index->start[c] : 0);
    const std::uint32_t* cw_end = index->walls.data() + (inside_grid ? index->start[c + 1] : 0);
    const std::uint32_t* uw = index->unbounded.data();
    const std::uint32_t* uw_end = uw + index->unbounded.size();
    while (cw != cw_end || uw != uw_end) {
        const std::uint32_t next = (uw == uw_end || (cw != cw_end && *cw < *uw)) ? *cw++ : *uw++;
        if (obstacle(walls[next])) {
            moved = true;
            for (std::size_t k = next + 1; k < walls.size(); ++k) obstacle(walls[k]);
            return moved;
        }
    }
    return moved;
}

template <int D>
void index_walls(std::vector<Wall<D>>& walls, float pad) {
    for (auto& w : walls) w.index.reset();
    std::size_t bounded = 0;
    for (const auto& w : walls) bounded += w.bounded ? 1 : 0;
    if (bounded < 16) return;  // a scan of a few boxes is as fast
    auto index = std::make_shared<WallIndex>();
    index->dim = D;
    index->pad = pad;
    Vec<D> lo = Vec<D>::filled(std::numeric_limits<float>::max()), hi = Vec<D>::filled(-std::numeric_limits<float>::max());
    double extent = 0.0;
    for (const auto& w : walls) {
        if (!w.bounded) continue;
        for (int a = 0; a < D; ++a) {
            lo[a] = std::min(lo[a], w.reach_lo[a] - pad);
            hi[a] = std::max(hi[a], w.reach_hi[a] + pad);
            extent = std::max(extent, double(w.reach_hi[a] - w.reach_lo[a]) + 2.0 * pad);
        }
    }
    // A little more than pad all round, so that the rounding of a cell's number never drops a wall that
    // keep_inside's own box test would have kept.
    const float eps = 1e-3f * static_cast<float>(extent) + 1e-6f;
    lo -= Vec<D>::filled(eps);
    hi += Vec<D>::filled(eps);
    // Cells about as large as the largest box, at most 64 a side.
    for (int a = 0; a < D; ++a) {
        const double span = std::max(double(hi[a] - lo[a]), 1e-6);
        index->cells[a] = std::clamp(static_cast<int>(span / std::max(extent, 1e-6)), 1, 64);
        index->lo[a] = lo[a];
        index->cell[a] = static_cast<float>(span / index->cells[a]) * (1.0f + 1e-6f);
    }
    std::size_t ncells = 1;
    for (int a = 0; a < D; ++a) ncells *= std::size_t(index->cells[a]);
    std::vector<std::vector<std::uint32_t>> lists(ncells);
    for (std::size_t i = 0; i < walls.size(); ++i) {
        const Wall<D>& w = walls[i];
        if (!w.solid && !is_shell(w)) index->containers.push_back(static_cast<std::uint32_t>(i));
        if (!w.bounded) {
            index->unbounded.push_back(static_cast<std::uint32_t>(i));
            continue;
        }
        std::array<int, 3> k0{0, 0, 0}, k1{0, 0, 0};
        for (int a = 0; a < D; ++a) {
            k0[a] = std::clamp(static_cast<int>(std::floor((w.reach_lo[a] - pad - eps - index->lo[a]) / index->cell[a])), 0,
                               index->cells[a] - 1);
            k1[a] = std::clamp(static_cast<int>(std::floor((w.reach_hi[a] + pad + eps - index->lo[a]) / index->cell[a])), 0,
                               index->cells[a] - 1);
        }
        for (int z = k0[2]; z <= k1[2]; ++z)
            for (int y = k0[1]; y <= k1[1]; ++y)
                for (int x = k0[0]; x <= k1[0]; ++x) {
                    const std::size_t c = D == 3 ? (std::size_t(z) * index->cells[1] + y) * index->cells[0] + x
                                                 : std::size_t(y) * index->cells[0] + x;
                    lists[c].push_back(static_cast<std::uint32_t>(i));
                }
    }
    index->start.reserve(ncells + 1);
    index->start.push_back(0);
    for (const auto& l : lists) {
        index->walls.insert(index->walls.end(), l.begin(), l.end());
        index->start.push_back(static_cast<std::uint32_t>(index->walls.size()));
    }
    for (auto& w : walls) w.index = index;
}

template <int D>
float distance_to_wall(const Wall<D>& w, const Vec<D>& xw, Vec<D>& towards) {
    towards = Vec<D>::zero();
    const Vec<D> x = to_body(w, xw);
    float dist = 0.0f;
    if (is_shell(w)) {
        // Either face holds fluid: the distance beyond the shell's thickness, towards the surface.
        Vec<D> away;
        const float reach = w.sdf->band;
        dist = shell_distance(*w.sdf, x, away, reach) - w.sdf->shell_thickness;
        towards = -away;
    } else if (w.shape == Wall<D>::Shape::sdf) {
        Vec<D> g;
        const float phi = w.sdf->sample(x, &g);  // negative inside the model
        const float len = norm(g);
        // Fluid side: outside a solid model, inside a container model.
        dist = w.solid ? phi : -phi;
        if (len > 0.0f) towards = g * ((w.solid ? -1.0f : 1.0f) / len);
    } else if (w.shape == Wall<D>::Shape::box && !w.solid) {
        float best = std::numeric_limits<float>::max();
        for (int a = 0; a < D; ++a) {
            const float lo = x[a] - w.lo[a], hi = w.hi[a] - x[a];
            if (lo < best) { best = lo; towards = Vec<D>::zero(); towards[a] = -1.0f; }
            if (hi < best) { best = hi; towards = Vec<D>::zero(); towards[a] = 1.0f; }
        }
        dist = best;
    } else if (w.shape == Wall<D>::Shape::box) {  // solid box: distance outside it
        Vec<D> c;
        for (int a = 0; a < D; ++a) c[a] = std::clamp(x[a], w.lo[a], w.hi[a]);
        const Vec<D> d = c - x;
        const float len = norm(d);
        if (len > 0.0f) towards = d * (1.0f / len);
        dist = len;
    } else if (w.shape == Wall<D>::Shape::cylinder && w.solid) {  // tube or disc: distance outside it
        Vec<D> c = x;
        if constexpr (D == 3) {
            const float dx = x[0] - w.center[0], dz = x[2] - w.center[2], rho = detail::portable_hypot(dx, dz);
            const float R = std::clamp(rho, w.inner_radius, w.radius);
            c[0] = w.center[0] + (rho > 0.0f ? dx / rho : 1.0f) * R;
            c[2] = w.center[2] + (rho > 0.0f ? dz / rho : 0.0f) * R;
            c[1] = std::clamp(x[1], w.center[1], w.center[1] + w.height);
        }
        const Vec<D> d = c - x;
        dist = norm(d);
        if (dist > 0.0f) towards = d * (1.0f / dist);
    } else {
        Vec<D> rel = x - w.center;
        if constexpr (D == 3)
            if (w.shape == Wall<D>::Shape::cylinder) rel[1] = 0.0f;  // radial distance only
        const float len = norm(rel);
        if (len == 0.0f) return w.radius;
        const Vec<D> out = rel * (1.0f / len);
        if (w.solid) {
            towards = -out;
            dist = len - w.radius;
        } else {
            towards = out;
            dist = w.radius - len;
        }
    }
    if (w.moving) {  // directions back to the world frame
        const Vec<D> tip = w.pose.apply(x + towards), base = w.pose.apply(x);
        towards = tip - base;
    }
    return dist;
}

template <int D>
Vec<D> RigidPose<D>::apply(const Vec<D>& x) const {
    Vec<D> out;
    for (int a = 0; a < D; ++a) {
        double s = pivot[a] + shift[a];
        for (int b = 0; b < D; ++b) s += R[a][b] * (double(x[b]) - pivot[b]);
        out[a] = static_cast<float>(s);
    }
    return out;
}

template <int D>
Vec<D> RigidPose<D>::inverse(const Vec<D>& x) const {
    Vec<D> out;
    for (int a = 0; a < D; ++a) {
        double s = pivot[a];
        for (int b = 0; b < D; ++b) s += R[b][a] * (double(x[b]) - pivot[b] - shift[b]);
        out[a] = static_cast<float>(s);
    }
    return out;
}

namespace {

using Mat3 = std::array<std::array<double, 3>, 3>;

Mat3 mul(const Mat3& a, const Mat3& b) {
    Mat3 r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) r[i][j] += a[i][k] * b[k][j];
    return r;
}

// Rotation by angle a about unit axis k (Rodrigues).
template <class V>
Mat3 axis_angle(const V& k, double a) {
    const double c = std::cos(a), s = std::sin(a), t = 1.0 - c, x = k[0], y = k[1], z = k[2];
    return {{{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
             {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
             {t * x * z - s * y, t * y * z + s * x, t * z * z + c}}};
}

// Rz Ry Rx (about x first), degrees.
Mat3 euler(const std::array<double, 3>& deg) {
    const double k = 3.14159265358979323846 / 180.0;
    return mul(axis_angle(Vec3{{0, 0, 1}}, deg[2] * k),
               mul(axis_angle(Vec3{{0, 1, 0}}, deg[1] * k), axis_angle(Vec3{{1, 0, 0}}, deg[0] * k)));
}

}  // namespace

template <int D>
bool BoundaryMotion<D>::moving() const {
    return driven || angular_velocity != 0.0f || !(velocity == Vec<D>::zero()) || !keyframes.empty();
}

template <int D>
RigidPose<D> BoundaryMotion<D>::pose(double t) const {
    if (driven) {  // the body's state, carried on at its velocities: R(t) = Rot(w (t - t0)) R0
        const double dt = t - state.time;
        const auto& w = state.angular_velocity;
        const double speed = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        Mat3 turn{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
        if (speed > 0.0 && dt != 0.0) turn = axis_angle(std::array<double, 3>{w[0] / speed, w[1] / speed, w[2] / speed}, speed * dt);
        const Mat3 R = mul(turn, state.R);
        RigidPose<D> p;
        for (int a = 0; a < D; ++a) {
            p.pivot[a] = pivot[a];
            p.shift[a] = state.shift[a] + state.velocity[a] * dt;
            for (int b = 0; b < D; ++b) p.R[a][b] = R[a][b];
        }
        return p;
    }
    // Keyframe displacement at t: linear between the two keyframes around t.
    std::array<double, 3> tr{0, 0, 0}, rot{0, 0, 0};
    if (!keyframes.empty()) {
        // The last keyframe at or before t (the first when t is before it), by bisection: a linear
        // scan made every pose O(keyframes), and the start's speed bound, which samples every
        // interval, quadratic (200k keyframes: 22.8 s; issue 29). Times increase (scene.cpp).
        const auto after = std::partition_point(keyframes.begin() + 1, keyframes.end(),
                                                [t](const Keyframe& kf) { return kf.time <= t; });
        const std::size_t k = static_cast<std::size_t>(after - keyframes.begin()) - 1;
        const Keyframe& a = keyframes[k];
        if (k + 1 < keyframes.size() && t > a.time) {
            const Keyframe& b = keyframes[k + 1];
            const double f = (t - a.time) / (b.time - a.time);
            for (int i = 0; i < 3; ++i) {
                tr[i] = a.translate[i] + f * (b.translate[i] - a.translate[i]);
                rot[i] = a.rotate_deg[i] + f * (b.rotate_deg[i] - a.rotate_deg[i]);
            }
        } else {
            tr = a.translate;
            rot = a.rotate_deg;
        }
    }
    const Vec3 axis = D == 2 ? Vec3{{0, 0, 1}} : this->axis;
    const Mat3 R = mul(euler(rot), axis_angle(axis, double(angular_velocity) * t));
    RigidPose<D> p;
    for (int a = 0; a < D; ++a) {
        p.pivot[a] = pivot[a];
        p.shift[a] = double(velocity[a]) * t + tr[a];
        for (int b = 0; b < D; ++b) p.R[a][b] = R[a][b];
    }
    return p;
}

template <int D>
void update_boundary_motion(BoundarySet<D>& b, double t, const ExecContext& exec) {
    if (!b.any_moving()) return;
    // Poses in double, from the rest pose: no drift over long runs. Velocities by a central
    // difference of the pose over +-0.1 ms (exact for translations, 1e-8 relative for spins).
    constexpr double kDt = 1e-4;
    std::vector<std::array<RigidPose<D>, 3>> poses(b.motions.size());
    for (std::size_t o = 0; o < b.motions.size(); ++o)
        if (b.motions[o].moving())
            poses[o] = {b.motions[o].pose(t), b.motions[o].pose(t - kDt), b.motions[o].pose(t + kDt)};
    parallel_for_each_index(exec, b.size(), [&](std::size_t i) {
        const std::uint16_t o = b.object[i];
        if (!b.motions[o].moving()) return;
        const Vec<D> x0 = b.rest_position[i];
        b.position[i] = poses[o][0].apply(x0);
        b.velocity[i] = (poses[o][2].apply(x0) - poses[o][1].apply(x0)) * static_cast<float>(1.0 / (2.0 * kDt));
    });
}

template <int D>
void update_wall_poses(std::vector<Wall<D>>& walls, const std::vector<BoundaryMotion<D>>& motions, double t) {
    bool any = false;
    for (auto& w : walls) {
        if (w.object < 0 || std::size_t(w.object) >= motions.size() || !motions[w.object].moving()) continue;
        w.pose = motions[w.object].pose(t);
        w.moving = true;
        update_wall_reach(w);
        any = true;
    }
    if (any && !walls.empty() && walls.front().index) index_walls(walls, walls.front().index->pad);
}

template <int D>
void update_wall_reach(Wall<D>& w) {
    w.bounded = false;
    if (!w.solid || is_shell(w)) return;
    Vec<D> lo, hi;  // in the body frame
    if (w.shape == Wall<D>::Shape::box) {
        lo = w.lo;
        hi = w.hi;
    } else if (w.shape == Wall<D>::Shape::sdf) {
        if (!w.sdf) return;
        lo = w.sdf->origin;
        for (int a = 0; a < D; ++a) hi[a] = lo[a] + w.sdf->voxel * float(std::max(w.sdf->nodes[a] - 1, 0));
    } else if (w.shape == Wall<D>::Shape::ball) {
        lo = w.center - Vec<D>::filled(w.radius);
        hi = w.center + Vec<D>::filled(w.radius);
    } else if (w.shape == Wall<D>::Shape::cylinder) {
        lo = w.center - Vec<D>::filled(w.radius);
        hi = w.center + Vec<D>::filled(w.radius);
        lo[1] = w.center[1];
        hi[1] = w.center[1] + w.height;
    } else {
        return;
    }
    w.reach_lo = Vec<D>::filled(std::numeric_limits<float>::max());
    w.reach_hi = Vec<D>::filled(-std::numeric_limits<float>::max());
    for (int c = 0; c < (1 << D); ++c) {
        Vec<D> p;
        for (int a = 0; a < D; ++a) p[a] = (c >> a) & 1 ? hi[a] : lo[a];
        const Vec<D> q = to_world(w, p);
        for (int a = 0; a < D; ++a) {
            w.reach_lo[a] = std::min(w.reach_lo[a], q[a]);
            w.reach_hi[a] = std::max(w.reach_hi[a], q[a]);
        }
    }
    // Rounding of the pose's transforms (float): a little slack, so that the skip never changes a result.
    float size = 0.0f;
    for (int a = 0; a < D; ++a) size = std::max(size, w.reach_hi[a] - w.reach_lo[a]);
    const Vec<D> slack = Vec<D>::filled(1e-4f * size + 1e-6f);
    w.reach_lo -= slack;
    w.reach_hi += slack;
    w.bounded = true;
}

template struct BoundarySet<2>;
template struct BoundarySet<3>;
template void compute_boundary_psi<2>(BoundarySet<2>&, const CubicSpline<2>&, float, const ExecContext&, float, int);
template void compute_boundary_psi<3>(BoundarySet<3>&, const CubicSpline<3>&, float, const ExecContext&, float, int);
template float wall_volume_correction<2>(const CubicSpline<2>&, float, int);
template float sampled_wall_correction<2>(const CubicSpline<2>&, float, int, float, const ExecContext&);
template float sampled_wall_correction<3>(const CubicSpline<3>&, float, int, float, const ExecContext&);
template float wall_volume_correction<3>(const CubicSpline<3>&, float, int);
template bool keep_inside<2>(Vec<2>&, const std::vector<Wall<2>>&, float);
template bool keep_inside<3>(Vec<3>&, const std::vector<Wall<3>>&, float);
template bool move_walls<2>(BoundarySet<2>&, std::vector<Wall<2>>&, double, float, const ExecContext&);
template bool move_walls<3>(BoundarySet<3>&, std::vector<Wall<3>>&, double, float, const ExecContext&);
template bool guard_walls<2>(Vec<2>&, Vec<2>&, const std::vector<Wall<2>>&, float);
template bool guard_walls<3>(Vec<3>&, Vec<3>&, const std::vector<Wall<3>>&, float);
template void update_boundary_motion<2>(BoundarySet<2>&, double, const ExecContext&);
template void update_boundary_motion<3>(BoundarySet<3>&, double, const ExecContext&);
template void index_walls<2>(std::vector<Wall<2>>&, float);
template void index_walls<3>(std::vector<Wall<3>>&, float);
template void update_wall_reach<2>(Wall<2>&);
template void update_wall_reach<3>(Wall<3>&);
template void update_wall_poses<2>(std::vector<Wall<2>>&, const std::vector<BoundaryMotion<2>>&, double);
template void update_wall_poses<3>(std::vector<Wall<3>>&, const std::vector<BoundaryMotion<3>>&, double);
template float distance_to_wall<2>(const Wall<2>&, const Vec<2>&, Vec<2>&);
template float distance_to_wall<3>(const Wall<3>&, const Vec<3>&, Vec<3>&);
template struct BoundaryMotion<2>;
template struct BoundaryMotion<3>;
template struct RigidPose<2>;
template struct RigidPose<3>;

}  // namespace eddy
