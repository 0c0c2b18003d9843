// Scene -> particles: fluid blocks on a lattice of spacing 2r, walls as layers of boundary particles.
//
// Conventions (docs/scenes.md):
// - a fluid particle owns a cube of side 2r: a box [min, max] is filled with min + r + 2r k on each axis
//   while <= max - r, so a box whose sides are multiples of 2r holds exactly prod (max - min) / 2r
//   particles; round blocks use the lattice c + 2r k through their centre (symmetric about it);
// - wall layer l (l = 0, 1, ...) lies at distance (2l + 1) r outside a container's surface, inside an
//   obstacle's, so that fluid resting on a wall (centre r inside) is 2r from the first layer, exactly
//   its lattice spacing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/neighbors.hpp"
#include "eddy/scene.hpp"
#include "scene/fluid_checks.hpp"

namespace eddy {

namespace {

constexpr double kPi = std::numbers::pi;

// Counts of wall points are computed in double before any int holds them: a radius of 1e30 m at
// r = 1 cm asks for 3e32 points per ring, which a cast to int turned into 3 (a "completed" run with
// 6 wall particles). Beyond kMaxWallPoints (the int range the counts and the uint32 indices use) the
// sampler throws TooManyWallPoints and build_boundary names the boundary in an InputError.
constexpr double kMaxWallPoints = 2147483647.0;
struct TooManyWallPoints {
    double count;
};
long checked_count(double n) {
    if (!(n <= kMaxWallPoints)) throw TooManyWallPoints{n};  // NaN and inf too
    return static_cast<long>(n);
}

// Coordinates along one axis of a box: the lattice lo + r + 2r k inside (what a fluid block filling
// the box would use), plus `outside_layers` layers at r, 3r, ... beyond each end. When the side is not
// a multiple of 2r, the lattice stops short of hi - r; a last coordinate at hi - r closes what would
// otherwise be a gap of up to 4r at the hi corners. A side thinner than 2r gets one coordinate in its
// middle (a thin plate is one row of particles, not none).
std::vector<double> axis_coords(double lo, double hi, double r, int outside_layers) {
    checked_count((hi - lo) / (2.0 * r) + 2.0 * outside_layers + 2.0);
    std::vector<double> c;
    for (int k = outside_layers; k >= 1; --k) c.push_back(lo - (2 * k - 1) * r);
    const std::size_t first = c.size();
    for (long k = 0;; ++k) {
        const double x = lo + r + 2.0 * r * static_cast<double>(k);
        if (x > hi - r + 1e-6 * r) break;
        c.push_back(x);
    }
    if (c.size() == first) c.push_back(0.5 * (lo + hi));
    else if (hi - r - c.back() > 0.1 * r) c.push_back(hi - r);
    for (int k = 1; k <= outside_layers; ++k) c.push_back(hi + (2 * k - 1) * r);
    return c;
}

// How many coordinates axis_coords(lo, hi, r, outside_layers) gives at most (the lattice, one closing
// coordinate, the outside layers), from the extents alone: a box's wall is counted before any is stored.
double axis_count(double lo, double hi, double r, int outside_layers) {
    const double lattice = std::floor((hi - lo) / (2.0 * r) + 1e-6);
    return (lattice < 1.0 ? 1.0 : lattice) + 1.0 + 2.0 * outside_layers;  // NaN stays NaN: refused
}

}  // namespace

namespace detail {

// Is x inside the shape grown by `margin` (shrunk when negative)? Boxes grow along each axis (so a
// grown box has square corners), round shapes radially. Shared with fluid_checks.cpp (file fluids).
template <int D>
bool inside_shape(const BoundarySpec& b, const Vec<D>& x, float margin) {
    if (const MeshShape<D>* m = model_shape<D>(b.model))  // signed distance, capped past the margin
        return m->signed_distance(x, 2.0 * std::fabs(margin) + 1e-9) <= margin;
    if (b.shape == "box") {
        for (int a = 0; a < D; ++a)
            if (x[a] < b.min[a] - margin || x[a] > b.max[a] + margin) return false;
        return true;
    }
    const Vec<D> c = from_array<D>(b.center);
    if constexpr (D == 3) {
        if (b.shape == "cylinder") {
            const float dx = x[0] - c[0], dz = x[2] - c[2];
            return std::sqrt(dx * dx + dz * dz) <= b.radius + margin && x[1] >= c[1] - margin &&
                   x[1] <= c[1] + b.height + margin;
        }
    }
    return norm(x - c) <= b.radius + margin;
}

template bool inside_shape<2>(const BoundarySpec&, const Vec<2>&, float);
template bool inside_shape<3>(const BoundarySpec&, const Vec<3>&, float);

}  // namespace detail

namespace {

using detail::inside_shape;

// n = round(2 pi R / spacing) evenly spaced points on a circle of radius R about c (2D: in the xy
// plane; 3D: in the plane y = y0). R ~ 0: the centre alone.
template <int D>
void ring(std::vector<Vec<D>>& out, const Vec<D>& c, double R, double spacing, double y0 = 0.0) {
    if (R <= 1e-9) {
        Vec<D> p = c;
        if constexpr (D == 3) p[1] = static_cast<float>(y0);
        out.push_back(p);
        return;
    }
    const long n = std::max(3L, checked_count(std::round(2.0 * kPi * R / spacing)));
    for (long i = 0; i < n; ++i) {
        const double a = 2.0 * kPi * static_cast<double>(i) / static_cast<double>(n);
        Vec<D> p = c;
        if constexpr (D == 2) {
            p[0] = static_cast<float>(c[0] + R * std::cos(a));
            p[1] = static_cast<float>(c[1] + R * std::sin(a));
        } else {
            p[0] = static_cast<float>(c[0] + R * std::cos(a));
            p[1] = static_cast<float>(y0);
            p[2] = static_cast<float>(c[2] + R * std::sin(a));
        }
        out.push_back(p);
    }
}

// Fibonacci spiral on a sphere of radius R: n = round(4 pi R^2 / spacing^2) nearly uniform points.
void sphere_shell(std::vector<Vec3>& out, const Vec3& c, double R, double spacing) {
    if (R <= 1e-9) {
        out.push_back(c);
        return;
    }
    const long n = std::max(4L, checked_count(std::round(4.0 * kPi * (R / spacing) * (R / spacing))));
    const double golden = kPi * (3.0 - std::sqrt(5.0));
    for (long i = 0; i < n; ++i) {
        const double y = 1.0 - 2.0 * (static_cast<double>(i) + 0.5) / static_cast<double>(n),
                     rr = std::sqrt(std::max(0.0, 1.0 - y * y)), phi = golden * static_cast<double>(i);
        out.push_back(Vec3{{float(c[0] + R * rr * std::cos(phi)), float(c[1] + R * y), float(c[2] + R * rr * std::sin(phi))}});
    }
}

// A disc of radius R in the plane y = y0 (cylinder caps): the centre and ceil(R / s) concentric rings
// evenly spaced out to exactly R (so the cap reaches the outer wall layer: no gap at the rim).
void disc(std::vector<Vec3>& out, const Vec3& c, double R, double s, double y0) {
    checked_count(kPi * (R / s) * (R / s));  // the disc's points in all
    const long rings = std::max(1L, checked_count(std::ceil(R / s - 1e-6)));
    for (long k = 0; k <= rings; ++k) ring<3>(out, c, R * static_cast<double>(k) / static_cast<double>(rings), s, y0);
}

template <int D>
std::vector<Vec<D>> sample_boundary(const BoundarySpec& b, double r, int layers, const ExecContext& exec) {
    std::vector<Vec<D>> pts;
    const double s = 2.0 * r;
    if (const MeshShape<D>* m = model_shape<D>(b.model)) {
        WallSampling ws;
        ws.particle_radius = static_cast<float>(r);
        ws.layers = layers;
        ws.solid = b.solid;
        return sample_wall(*m, ws, exec);
    }
    if (b.shape == "box") {
        // Container: the lattice frame of `layers` layers around the box, corners and edges included
        // (every lattice point with some coordinate outside the box). Obstacle: the lattice points
        // inside the box whose depth below the surface is less than 2r per layer (a hollow shell; a
        // box thinner than that is filled).
        // A solid box visits its whole lattice; a container only its frame (the interior is skipped
        // below), whose points are what it keeps: counted before the coordinates are stored (a body 2e7 m
        // wide at r = 1 cm asked for two axes of 8 GB before it was refused).
        double visited = 1.0, interior = 1.0;
        for (int a = 0; a < D; ++a) {
            const double n = axis_count(b.min[a], b.max[a], r, b.solid ? 0 : layers);
            visited *= n;
            interior *= n - (b.solid ? 0 : 2 * layers);
        }
        checked_count(b.solid ? visited : visited - interior);
        std::vector<double> axes[D];
        for (int a = 0; a < D; ++a) axes[a] = axis_coords(b.min[a], b.max[a], r, b.solid ? 0 : layers);
        std::size_t idx[D] = {};
        while (true) {
            Vec<D> p;
            for (int a = 0; a < D; ++a) p[a] = static_cast<float>(axes[a][idx[a]]);
            if (b.solid) {
                double depth = 1e300;
                for (int a = 0; a < D; ++a) depth = std::min({depth, axes[a][idx[a]] - b.min[a], b.max[a] - axes[a][idx[a]]});
                if (depth < 2.0 * r * layers - 1e-6 * r) pts.push_back(p);
            } else {
                bool outside = false;
                for (int a = 0; a < D; ++a) outside = outside || axes[a][idx[a]] < b.min[a] || axes[a][idx[a]] > b.max[a];
                const bool above_top = axes[1][idx[1]] > b.max[1];
                if (outside && !(b.open_top && above_top)) pts.push_back(p);
                // Every other axis inside and axis 0 at its last outer layer: the run along axis 0
                // up to its first outer layer on the far side is interior, never wall: skip it, so
                // a 10 km tank costs its frame, not its volume.
                bool others_inside = layers > 0 && idx[0] + 1 == static_cast<std::size_t>(layers);
                for (int a = 1; a < D && others_inside; ++a)
                    others_inside = axes[a][idx[a]] >= b.min[a] && axes[a][idx[a]] <= b.max[a];
                if (others_inside) idx[0] = axes[0].size() - static_cast<std::size_t>(layers) - 1;
            }
            int a = 0;
            while (a < D && ++idx[a] == axes[a].size()) idx[a++] = 0;
            if (a == D) break;
        }
    } else if (b.shape == "circle" || b.shape == "sphere") {
        // Rings (2D) or Fibonacci shells (3D) at R + r, R + 3r, ... (container) or R - r, R - 3r, ...
        // (obstacle; radii <= 0 skipped, an obstacle smaller than a particle is its centre point).
        const Vec<D> c = from_array<D>(b.center);
        for (int layer = 0; layer < layers; ++layer) {
            const double R = b.solid ? b.radius - (2 * layer + 1) * r : b.radius + (2 * layer + 1) * r;
            if (R <= 0.0) {
                if (layer == 0) pts.push_back(c);
                break;
            }
            if constexpr (D == 2) ring<2>(pts, c, R, s);
            else sphere_shell(pts, c, R, s);
        }
    } else if constexpr (D == 3) {  // cylinder container, axis y from center.y to center.y + height
        const Vec3 c = from_array<3>(b.center);
        const double y_lo = b.center[1], y_hi = b.center[1] + b.height;
        const std::vector<double> heights = axis_coords(y_lo, y_hi, r, 0);
        // Caps: discs out to the outer wall layer's radius, at r, 3r, ... below the bottom (and above
        // the top), so that the caps and the side rings meet without a gap at the rim.
        const double cap = b.radius + (2 * layers - 1) * r;
        for (int layer = 0; layer < layers; ++layer) {
            const double R = b.radius + (2 * layer + 1) * r;
            for (double y : heights) ring<3>(pts, c, R, s, y);
            disc(pts, c, cap, s, y_lo - (2 * layer + 1) * r);
            if (!b.open_top) disc(pts, c, cap, s, y_hi + (2 * layer + 1) * r);
            else ring<3>(pts, c, R, s, y_hi + r);  // a rim level with a lid's first layer
        }
    }
    return pts;
}

// Lattice of one fluid block: x_a = origin_a + 2r k, k in [0, count_a). `points` is the product of
// the counts computed in double (a huge block must be refused by its size, not wrap around a long);
// count[] is only meaningful once `points` has been checked.
struct Lattice {
    double origin[3] = {0, 0, 0};
    long count[3] = {1, 1, 1};
    double points = 1.0;
};

template <int D>
Lattice fluid_lattice(const FluidSpec& f, double r) {
    Lattice l;
    const double s = 2.0 * r;
    bool empty = false;
    for (int a = 0; a < D; ++a) {
        double n = 0.0;
        if (f.shape == "box" || f.shape == "mesh" || f.shape == "polygon") {  // models: their box
            l.origin[a] = f.min[a] + r;
            n = std::floor((f.max[a] - f.min[a] - s) / s + 1e-6) + 1.0;
        } else {
            // Through the centre: c + 2r k, |k| <= m, m = floor((R - r) / 2r).
            const double m = std::floor((f.radius - r) / s + 1e-6);
            l.origin[a] = f.center[a] - s * m;
            n = 2.0 * m + 1.0;
        }
        if (!(n >= 1.0) && !std::isnan(n)) empty = true;  // NaN: inf - inf, a block beyond any size
        l.points *= std::isnan(n) ? std::numeric_limits<double>::infinity() : n;
        l.count[a] = n >= 1.0 && n < 1e15 ? static_cast<long>(n) : 0;  // beyond: refused by `points`
    }
    if (empty) l.points = 0.0;  // not 0 * inf
    return l;
}

}  // namespace

namespace detail {

template <int D>
std::string box_text(const std::array<double, 3>& lo, const std::array<double, 3>& hi) {
    std::string a, b;
    for (int i = 0; i < D; ++i) {
        a += fmt::format("{}{:.4g}", i ? ", " : "", lo[i]);
        b += fmt::format("{}{:.4g}", i ? ", " : "", hi[i]);
    }
    return fmt::format("[{}] to [{}]", a, b);
}

template std::string box_text<2>(const std::array<double, 3>&, const std::array<double, 3>&);
template std::string box_text<3>(const std::array<double, 3>&, const std::array<double, 3>&);

}  // namespace detail

using detail::box_text;

namespace {

// Which process keeps which fluid particle when each builds only its own share (issue 44): the scene's
// points counted in build order before any is dropped ("raw": every lattice point of every block, every
// particle of a file) are cut in `parts` runs of equal length, and a kept point goes to the process of its
// run. Every process visits every point, so that each kept point gets the whole build's id (the number of
// points kept before it); each stores only its own.
struct ShareCut {
    using Wide = unsigned __int128;
    ProcessShare share;
    Wide raw_total = 1;
    bool mine(std::uint64_t raw) const {
        return share.parts <= 1 || Wide(raw) * Wide(share.parts) / raw_total == Wide(share.part);
    }
};

template <int D>
ShareCut share_cut(const Scene& s, ProcessShare share) {
    ShareCut c{share, 0};
    double raw = 0.0;
    for (const FluidSpec& f : s.fluids)
        raw += f.shape == "file" ? double(f.file_particles->size() / (2 * D)) : fluid_lattice<D>(f, s.particle_radius).points;
    // Beyond 2^62 a block is refused by its size before any point is visited.
    c.raw_total = raw >= 1.0 && raw < 4.6e18 ? static_cast<std::uint64_t>(raw) : 1;
    return c;
}

// Where the points of the blocks after `fi` lie (their lattices' boxes, widened by 2r): an earlier block's
// kept point outside all of them cannot be a later point's duplicate, and is not kept for that check.
template <int D>
std::vector<Aabb<D>> later_blocks(const Scene& s, std::size_t fi) {
    std::vector<Aabb<D>> boxes;
    const double r = s.particle_radius;
    for (std::size_t j = fi + 1; j < s.fluids.size(); ++j) {
        if (s.fluids[j].shape == "file") continue;  // a file's particles are never dropped as duplicates
        const Lattice l = fluid_lattice<D>(s.fluids[j], r);
        Aabb<D> b;
        for (int a = 0; a < D; ++a) {
            b.lo[a] = static_cast<float>(l.origin[a] - 2.0 * r);
            b.hi[a] = static_cast<float>(l.origin[a] + 2.0 * r * double(std::max(l.count[a], 1L)));
        }
        boxes.push_back(b);
    }
    return boxes;
}

// Lattice points [o0, o0 + pts.size()) of a block (axis 0 fastest), and which of them stay
// (in parallel: a model's inside test and the walls' signed distances are the costly part).
// state: 0 dropped by the shape or a solid, 1 outside every container, 2 kept.
template <int D>
void lattice_chunk(const FluidSpec& f, const Lattice& lat, double r, std::uint64_t o0, std::vector<Vec<D>>& pts,
                   std::vector<std::uint8_t>& state, const std::vector<const BoundarySpec*>& containers,
                   const std::vector<const BoundarySpec*>& solids, const ExecContext& pool) {
    const MeshShape<D>* model = model_shape<D>(f.model);
    const bool round = f.shape == "circle" || f.shape == "sphere";
    const float fr = static_cast<float>(r);
    parallel_for_each_index(pool, pts.size(), [&](std::size_t i) {
        std::uint64_t o = o0 + i;
        Vec<D> p;
        double d2 = 0.0;  // squared distance from a round block's centre, in double: no rounding loss
        for (int a = 0; a < D; ++a) {
            const double x = lat.origin[a] + 2.0 * r * static_cast<double>(o % std::uint64_t(lat.count[a]));
            o /= std::uint64_t(lat.count[a]);
            d2 += (x - f.center[a]) * (x - f.center[a]);
            p[a] = static_cast<float>(x);
        }
        pts[i] = p;
        state[i] = 0;
        if (round && !(std::sqrt(d2) <= f.radius - r + 1e-6 * r)) return;
        if (model && !model->inside(p)) return;  // a model's inside: the lattice points within it
        if (!containers.empty()) {
            // Centres at least r inside a container: a block reaching past a wall is clipped
            // there (a box of water filling the lower half of a round tank).
            bool in = false;
            for (const auto* b : containers) in = in || inside_shape<D>(*b, p, -0.9999f * fr);
            if (!in) {
                state[i] = 1;
                return;
            }
        }
        // Points within r of a solid obstacle are dropped: that is how an obstacle is placed in
        // a block of fluid. A point at r itself (a lattice that meets the obstacle's face, where
        // fluid rests) stays, as containers keep theirs, within the float rounding of the lattice.
        for (const auto* b : solids)
            if (inside_shape<D>(*b, p, 0.9999f * fr)) return;
        state[i] = 2;
    }, 256);
}

// The build's running counts: points kept so far over every process (the next id), and the earlier
// blocks' kept points a later block may meet.
template <int D>
struct FluidBuild {
    ParticleSet<D> out;
    std::uint64_t kept = 0, raw = 0;
    std::vector<Vec<D>> nearby;
    void keep(const ShareCut& cut, std::uint64_t raw_index, const Vec<D>& x, const Vec<D>& v,
              const std::vector<Aabb<D>>& later) {
        if (cut.mine(raw_index)) {
            out.next_id = static_cast<std::uint32_t>(kept);  // the whole build's id
            out.push_back(x, v);
        }
        if (std::any_of(later.begin(), later.end(), [&](const Aabb<D>& box) { return box.contains(x); })) nearby.push_back(x);
        ++kept;
    }
};

// A frame of an earlier run: its particles as they were.
template <int D>
void take_file(FluidBuild<D>& b, const FluidSpec& f, const std::string& where, std::size_t max_particles,
               const ShareCut& cut, const std::vector<Aabb<D>>& later) {
    const auto& data = *f.file_particles;
    const std::size_t count = data.size() / (2 * D);
    if (b.kept + count > max_particles)
        throw InputError(fmt::format("{} ({}) holds {} particles, more than --max-particles {}", where,
                                     f.file.string(), count, max_particles));
    for (std::size_t k = 0; k < count; ++k) {
        Vec<D> x, v;
        for (int a = 0; a < D; ++a) {
            x[a] = static_cast<float>(data[k * 2 * D + a]);
            v[a] = static_cast<float>(data[k * 2 * D + D + a]);
        }
        b.keep(cut, b.raw + k, x, v, later);
    }
    b.raw += count;
}

}  // namespace

template <int D>
ParticleSet<D> build_fluid(const Scene& s, std::size_t max_particles, const ExecContext* exec, ProcessShare share) {
    const ExecContext serial(1);
    const ExecContext& pool = exec ? *exec : serial;
    const double r = s.particle_radius;
    const ShareCut cut = share_cut<D>(s, share);
    FluidBuild<D> b;
    std::vector<const BoundarySpec*> containers, solids;
    for (const auto& w : s.boundaries) (w.solid ? solids : containers).push_back(&w);
    const float fr = static_cast<float>(r);
    for (std::size_t fi = 0; fi < s.fluids.size(); ++fi) {
        const FluidSpec& f = s.fluids[fi];
        const std::string where = fmt::format("{}: fluids[{}]", s.where(), fi);
        const std::vector<Aabb<D>> later = later_blocks<D>(s, fi);
        if (f.shape == "file") {
            take_file(b, f, where, max_particles, cut, later);
            continue;
        }
        const Lattice lat = fluid_lattice<D>(f, r);
        const double lattice_points = lat.points;
        if (lattice_points == 0.0)
            throw InputError(fmt::format("{} is smaller than one particle (2r = {:g} m)", where, 2.0 * r));
        // A block so large that even heavy clipping could not bring it under the limit: refuse before
        // visiting its lattice (a typo in particle_radius must not hang the loader).
        if (double(b.kept) + lattice_points > 16.0 * double(max_particles) + 1e4) {
            const double fraction = f.shape == "box" ? 1.0 : (D == 2 ? kPi / 4.0 : kPi / 6.0);
            const double about = double(b.kept) + fraction * lattice_points;
            throw InputError(fmt::format("{} would create about {} particles, more than --max-particles {}", where,
                                         about < 1e15 ? fmt::format("{:.0f}", about) : fmt::format("{:.3g}", about),
                                         max_particles));
        }
        // Points of earlier blocks: a later block puts no particle closer than r to one of them.
        NeighborGrid<D> earlier(fr);
        const bool before = !b.nearby.empty();
        if (before) earlier.build(b.nearby, ExecContext(1));
        const Vec<D> vel = from_array<D>(f.velocity);
        // The lattice a chunk at a time (no process holds a whole block's points), then the earlier blocks
        // (serially).
        constexpr std::uint64_t kChunk = std::uint64_t(1) << 20;
        const auto total = static_cast<std::uint64_t>(lattice_points);
        std::vector<Vec<D>> pts;
        std::vector<std::uint8_t> state;
        std::size_t made = 0, outside = 0, over = 0;
        for (std::uint64_t o0 = 0; o0 < total; o0 += kChunk) {
            pts.resize(std::size_t(std::min(kChunk, total - o0)));
            state.resize(pts.size());
            lattice_chunk<D>(f, lat, r, o0, pts, state, containers, solids, pool);
            for (std::size_t i = 0; i < pts.size(); ++i) {
                if (state[i] == 1) ++outside;
                bool keep = state[i] == 2;
                if (keep && before) earlier.for_each_neighbor(pts[i], fr, [&](std::uint32_t) { keep = false; });
                if (!keep) continue;
                ++made;
                if (b.kept < max_particles) b.keep(cut, b.raw + o0 + i, pts[i], vel, later);
                else ++over;  // counted for the message, not stored
            }
        }
        b.raw += total;
        if (over > 0)
            throw InputError(fmt::format("{} would create {} particles, more than --max-particles {}", where,
                                         b.kept + over, max_particles));
        if (made == 0 && outside > 0) {
            // Say where the fluid and the containers are: with models, a unit or an axis is easily wrong.
            std::string boxes;
            for (std::size_t bi = 0; bi < s.boundaries.size(); ++bi) {
                const BoundarySpec& w = s.boundaries[bi];
                if (w.solid || (w.shape != "mesh" && w.shape != "polygon")) continue;
                boxes += fmt::format("; boundaries[{}] ({}) spans {} m", bi,
                                     w.shape == "mesh" ? w.model.file.string() : "polygon", box_text<D>(w.min, w.max));
            }
            throw InputError(fmt::format("{} lies outside every container (the fluid spans {} m{})", where,
                                         box_text<D>(f.min, f.max), boxes));
        }
        if (made == 0)
            throw InputError(fmt::format("{} holds no particle: it is smaller than one particle (2r = {:g} m) or "
                                         "entirely inside solids or earlier fluids",
                                         where, 2.0 * r));
    }
    b.out.next_id = static_cast<std::uint32_t>(b.kept);  // every process: the whole build's
    return std::move(b.out);
}

template <int D>
BoundaryMotion<D> prescribed_motion(const BoundarySpec& b) {
    BoundaryMotion<D> m;
    m.pivot = from_array<D>(b.pivot);
    Vec3 axis = from_array<3>(b.axis);
    if (D == 3) axis *= 1.0f / norm(axis);
    m.axis = axis;
    m.angular_velocity = static_cast<float>(b.angular_velocity);
    m.velocity = from_array<D>(b.velocity);
    m.keyframes = b.keyframes;
    return m;
}

// Object i's sampled particles into `out`: all of them, or, for one process's walls (near), a moving wall's
// or body's all (they go anywhere) and a fixed wall's within the region, with their indices in the whole set.
template <int D>
void keep_walls(BoundarySet<D>& out, const std::vector<Vec<D>>& sampled, std::size_t i, bool moving, WallsNear<D>* near) {
    for (std::size_t k = 0; k < sampled.size(); ++k) {
        if (near && !moving && !near->region.contains(sampled[k])) continue;
        out.push_back(sampled[k], static_cast<std::uint16_t>(i));
        if (near) near->ids.push_back(static_cast<std::uint32_t>(near->whole + k));
    }
    if (near) near->whole += sampled.size();
}

template <int D>
BoundarySet<D> build_boundary(const Scene& s, int layers, const ExecContext* exec, WallsNear<D>* near) {
    const ExecContext serial(1);
    BoundarySet<D> out{.particle_radius = static_cast<float>(s.particle_radius), .layers = layers, .moving_only = false, .load = {}};
    for (std::size_t i = 0; i < s.boundaries.size(); ++i) {
        const BoundarySpec& b = s.boundaries[i];
        std::vector<Vec<D>> sampled;
        try {
            sampled = sample_boundary<D>(b, s.particle_radius, layers, exec ? *exec : serial);
        } catch (const TooManyWallPoints& e) {
            const char* key = b.shape == "box" ? "min/max" : b.shape == "cylinder" ? "radius/height" : "radius";
            throw InputError(fmt::format("{}: {}.{}: a {} wall of about {:.3g} particles at particle_radius "
                                         "{:g} m; allowed: at most {:.0f} (a smaller shape or a larger particle_radius)",
                                         s.where(), boundary_key(s, i), key, b.shape, e.count, s.particle_radius, kMaxWallPoints));
        }
        out.motions.push_back(prescribed_motion<D>(b));
        keep_walls(out, sampled, i, b.body >= 0 || out.motions.back().moving(), near);
        out.sampled_layers.push_back(model_shape<D>(b.model) ? static_cast<std::uint8_t>(layers) : 0);
    }
    return out;
}

template ParticleSet<2> build_fluid<2>(const Scene&, std::size_t, const ExecContext*, ProcessShare);
template ParticleSet<3> build_fluid<3>(const Scene&, std::size_t, const ExecContext*, ProcessShare);
template BoundaryMotion<2> prescribed_motion<2>(const BoundarySpec&);
template BoundaryMotion<3> prescribed_motion<3>(const BoundarySpec&);
template BoundarySet<2> build_boundary<2>(const Scene&, int, const ExecContext*, WallsNear<2>*);
template BoundarySet<3> build_boundary<3>(const Scene&, int, const ExecContext*, WallsNear<3>*);

}  // namespace eddy
