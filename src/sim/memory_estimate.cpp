// What make_simulation() will allocate for a scene, from the scene alone (issue 12): counts follow the
// builders' lattices (src/scene/builders.cpp) in double, so a wall 10 km long is counted, not visited;
// a fluid block's share of its lattice that survives clipping is measured on at most 4096 of its points.
//
// The model, per particle (bytes; D the dimension, nb the lattice neighbours within the support h):
//   fluid    ParticleSet: position, velocity, acceleration (3 x 4D), density, pressure, id (12);
//            the method's own arrays: WCSPH none, DFSPH 25 + 16D (and a kernel gradient, 4D, per
//            fluid neighbour), PBF 20 + 12D, Clavet 16 + 8D (the members their memory_bytes() counts);
//   walls    BoundarySet: position, rest position, velocity (3 x 4D), psi, object (6), times 1.5
//            for the slack push_back leaves in the vectors;
//   grids    sorted index, sorted coordinates, bucket of each point, about one bucket: 12 + 4D per
//            fluid and per wall particle;
//   lists    CSR offsets (4 per list, two lists), 4 per entry plus the per-block scratch the lists are
//            gathered in (between 1 and 2 times the entries): 10 per entry; nb entries per fluid
//            particle, nb/2 per fluid particle next to a wall (at most min(fluid, walls) of them);
//   springs  Clavet with spring_stiffness > 0: one per neighbour pair, nb/2 per particle, each a
//            std::map node (48 bytes, 64 with malloc's header);
//   models   a wall model's signed distance grid: its box grown by 4r at voxel r, at most 2^24 nodes;
//            every model's triangles and hierarchy as the scene holds them: 12 per vertex, 60 per
//            triangle (its corners, its index in the leaves, half a node of 88 bytes per 4 triangles);
//   files    a fluid read from a particle file is not a lattice: its neighbours are counted on its
//            positions (file_neighbours below), not assumed; clustered particles have many more;
//   frames   the file image a frame is written from: 64 per fluid particle (or 92 per wall particle
//            for walls.vtp, built in a string that grows by doubling).
#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "eddy/clavet.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/kernels.hpp"
#include "eddy/memory_budget.hpp"
#include "eddy/mesh.hpp"
#include "eddy/pbf.hpp"
#include "eddy/scene.hpp"
#include "eddy/settings.hpp"
#include "eddy/simulation.hpp"
#include "eddy/smooth_walls.hpp"
#include "eddy/wcsph.hpp"

namespace eddy {

namespace {

constexpr double kPi = std::numbers::pi;

// Coordinates axis_coords() (builders.cpp) puts inside [lo, hi]: the lattice lo + r + 2r k up to
// hi - r, a closing one at hi - r when the side is not a multiple of 2r, one in the middle of a side
// thinner than 2r.
double axis_count(double lo, double hi, double r) {
    const double s = 2.0 * r;
    const double n = std::floor((hi - lo - s) / s + 5e-7) + 1.0;
    if (std::isnan(n)) return n;
    if (!(n >= 1.0)) return 1.0;
    if (!std::isfinite(n) || n > 1e15) return n;  // no closing coordinate to find at this scale
    const double last = lo + r + s * (n - 1.0);
    return hi - r - last > 0.1 * r ? n + 1.0 : n;
}

double ring_count(double R, double s) { return R <= 1e-9 ? 1.0 : std::max(3.0, std::round(2.0 * kPi * R / s)); }
double shell_count(double R, double s) { return R <= 1e-9 ? 1.0 : std::max(4.0, std::round(4.0 * kPi * R * R / (s * s))); }
// disc() of builders.cpp: the centre and ceil(R / s) rings out to R.
double disc_count(double R, double s) {
    const double rings = std::max(1.0, std::ceil(R / s - 1e-6));
    return 1.0 + std::max(3.0 * rings, kPi * R * (rings + 1.0) / s);
}

// Length (2D) or area (3D) of a model's surface.
template <int D>
double surface_measure(const Mesh<D>& m) {
    double total = 0.0;
    for (const auto& c : m.cells) {
        if constexpr (D == 2) {
            total += norm(m.vertices[c[1]] - m.vertices[c[0]]);
        } else {
            const Vec3 u = m.vertices[c[1]] - m.vertices[c[0]], v = m.vertices[c[2]] - m.vertices[c[0]];
            const double x = double(u[1]) * v[2] - double(u[2]) * v[1], y = double(u[2]) * v[0] - double(u[0]) * v[2],
                         z = double(u[0]) * v[1] - double(u[1]) * v[0];
            total += 0.5 * std::sqrt(x * x + y * y + z * z);
        }
    }
    return total;
}

// Wall particles sample_boundary() makes for one boundary.
template <int D>
double wall_count(const BoundarySpec& b, double r, int layers) {
    const double s = 2.0 * r;
    if (const MeshShape<D>* m = model_shape<D>(b.model)) {
        // Poisson-disk samples of radius 0.75 s on each offset surface: about 1 per s (2D), 1.2 per s^2 (3D).
        const double measure = surface_measure<D>(m->mesh());
        return layers * (D == 2 ? measure / s : 1.2 * measure / (s * s));
    }
    if (b.shape == "box") {
        double inner = 1.0, outer = 1.0, top = layers;
        for (int a = 0; a < D; ++a) {
            const double n = axis_count(b.min[a], b.max[a], r);
            inner *= n;
            outer *= n + 2.0 * layers;
            if (a != 1) top *= n + 2.0 * layers;
        }
        if (b.solid) {
            // The hollow shell: points less than 2r per layer deep.
            double core = 1.0;
            for (int a = 0; a < D; ++a) core *= std::max(0.0, axis_count(b.min[a], b.max[a], r) - 2.0 * layers);
            return inner - core;
        }
        return outer - inner - (b.open_top ? top : 0.0);
    }
    if (b.shape == "circle" || b.shape == "sphere") {
        double n = 0.0;
        for (int l = 0; l < layers; ++l) {
            const double R = b.solid ? b.radius - (2 * l + 1) * r : b.radius + (2 * l + 1) * r;
            if (R <= 0.0) {
                n += l == 0 ? 1.0 : 0.0;
                break;
            }
            n += D == 2 ? ring_count(R, s) : shell_count(R, s);
        }
        return n;
    }
    if (b.shape == "cylinder") {
        const double heights = axis_count(b.center[1], b.center[1] + b.height, r);
        const double cap = b.radius + (2 * layers - 1) * r;
        double n = 0.0;
        for (int l = 0; l < layers; ++l) {
            const double R = b.radius + (2 * l + 1) * r;
            n += ring_count(R, s) * heights + disc_count(cap, s) * (b.open_top ? 1.0 : 2.0) +
                 (b.open_top ? ring_count(R, s) : 0.0);
        }
        return n;
    }
    return 0.0;
}

// Box of a boundary's shape (m), for clipping fluid blocks to the containers.
template <int D>
void shape_box(const BoundarySpec& b, double lo[3], double hi[3]) {
    for (int a = 0; a < D; ++a) {
        if (b.shape == "box" || b.shape == "mesh" || b.shape == "polygon") {
            lo[a] = b.min[a];
            hi[a] = b.max[a];
        } else if (b.shape == "cylinder" && a == 1) {
            lo[a] = b.center[1];
            hi[a] = b.center[1] + b.height;
        } else {
            lo[a] = b.center[a] - b.radius;
            hi[a] = b.center[a] + b.radius;
        }
    }
}

// The wall shape a boundary becomes (add_boundary_walls), and whether it is an open model (a shell).
template <int D>
typename Wall<D>::Shape wall_shape(const BoundarySpec& b) {
    using Shape = typename Wall<D>::Shape;
    if (model_shape<D>(b.model)) return Shape::sdf;
    return b.shape == "box" ? Shape::box : b.shape == "cylinder" ? Shape::cylinder : Shape::ball;
}

template <int D>
bool open_model(const BoundarySpec& b) {
    const MeshShape<D>* m = model_shape<D>(b.model);
    return m && m->report().boundary_edges > 0;
}

// A boundary's volume maps (eddy/volume_map.hpp): share and push per node held, the blocks of 8^D nodes (cell
// r/2 in 3D, r/4 in 2D) near its surface: its area (length) times about 10 r (6 r in 2D), at most its box
// grown by 10 r on each side (small models: every block); an open-top cylinder's floor and side both. Whole: a
// map fills as the fluid comes near (fill_volume_map), and a run's fluid may come near every block.
template <int D>
double volume_map_bytes(const BoundarySpec& b, double r) {
    if (!volume_mapped<D>(wall_shape<D>(b), b.solid || b.open_top, open_model<D>(b))) return 0.0;
    const MeshShape<D>* m = model_shape<D>(b.model);
    const double surface = m ? surface_measure(m->mesh()) : 2.0 * kPi * b.radius * (b.height + b.radius);
    const double cell = D == 3 ? 0.5 * r : 0.25 * r;
    double lo[3], hi[3], grid = 1.0;
    shape_box<D>(b, lo, hi);
    for (int a = 0; a < D; ++a) grid *= ((m ? double(m->hi()[a]) - double(m->lo()[a]) : hi[a] - lo[a]) + 20.0 * r) / cell;
    const double band = surface * (D == 3 ? 10.0 : 6.0) * r / std::pow(cell, double(D));
    return (b.open_top ? 2.0 : 1.0) * (4.0 + 4.0 * D) * std::min({grid, band, double(std::size_t{1} << 24)});
}

// Is x inside the shape grown by `margin` (shrunk when negative)? The builders' inside_shape.
template <int D>
bool inside_shape(const BoundarySpec& b, const Vec<D>& x, float margin) {
    if (const MeshShape<D>* m = model_shape<D>(b.model))
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

// Fluid particles build_fluid() makes for one block: the points of its lattice (the builders'
// fluid_lattice; a box's clipped first to the containers' box) counted in double, times the fraction
// of them that pass the builder's tests (inside the block's shape, inside a container, clear of the
// solids) on a sub-lattice of at most 4096 of them. Overlaps with earlier blocks are not subtracted.
template <int D>
double fluid_count(const FluidSpec& f, double r, const std::vector<const BoundarySpec*>& containers,
                   const std::vector<const BoundarySpec*>& solids) {
    if (f.shape == "file") return f.file_particles ? double(f.file_particles->size() / (2 * D)) : 0.0;  // read already
    const double s = 2.0 * r;
    double origin[3] = {0, 0, 0}, count[3] = {1, 1, 1};
    const bool round = f.shape == "circle" || f.shape == "sphere";
    if (round) {
        const double m = std::max(-1.0, std::floor((f.radius - r) / s + 1e-6));
        for (int a = 0; a < D; ++a) {
            origin[a] = f.center[a] - s * m;
            count[a] = 2.0 * m + 1.0;
        }
    } else {
        double clo[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL}, chi[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
        if (!containers.empty()) {
            for (int a = 0; a < D; ++a) {
                clo[a] = HUGE_VAL;
                chi[a] = -HUGE_VAL;
            }
            for (const BoundarySpec* b : containers) {
                double lo[3], hi[3];
                shape_box<D>(*b, lo, hi);
                for (int a = 0; a < D; ++a) {
                    clo[a] = std::min(clo[a], lo[a]);
                    chi[a] = std::max(chi[a], hi[a]);
                }
            }
        }
        for (int a = 0; a < D; ++a) {
            const double lo = std::max(f.min[a], clo[a]), hi = std::min(f.max[a], chi[a]);
            origin[a] = lo + r;
            count[a] = std::max(0.0, std::floor((hi - lo - s) / s + 1e-6) + 1.0);
        }
    }
    double total = 1.0;
    for (int a = 0; a < D; ++a) {
        // A block or ball smaller than one spacing has no points (a round one's count is then -1 on every
        // axis: in 2D their product would read as one point, and the sub-lattice below would never end).
        if (count[a] < 1.0) return 0.0;
        total *= count[a];
    }
    if (!(total > 0.0) || !std::isfinite(total)) return total > 0.0 || std::isnan(total) ? total : 0.0;

    // The sub-lattice: every stride-th point along each axis, centred in its stride.
    const double per_axis = D == 2 ? 64.0 : 16.0;
    double stride[3] = {1, 1, 1}, samples[3] = {1, 1, 1};
    for (int a = 0; a < D; ++a) {
        stride[a] = std::max(1.0, std::ceil(count[a] / per_axis));
        samples[a] = std::ceil(count[a] / stride[a]);
    }
    const MeshShape<D>* model = model_shape<D>(f.model);
    const float fr = static_cast<float>(r);
    double tried = 0.0, kept = 0.0;
    long idx[3] = {0, 0, 0};
    while (true) {
        Vec<D> p;
        double d2 = 0.0;
        for (int a = 0; a < D; ++a) {
            const double k = std::min(count[a] - 1.0, std::floor(stride[a] * (double(idx[a]) + 0.5)));
            const double x = origin[a] + s * k;
            d2 += (x - f.center[a]) * (x - f.center[a]);
            p[a] = static_cast<float>(x);
        }
        tried += 1.0;
        bool keep = !round || std::sqrt(d2) <= f.radius - r + 1e-6 * r;
        if (keep && model) keep = model->inside(p);
        if (keep && !containers.empty()) {
            bool in = false;
            for (const BoundarySpec* b : containers) in = in || inside_shape<D>(*b, p, -0.9999f * fr);
            keep = in;
        }
        for (const BoundarySpec* b : solids) keep = keep && !inside_shape<D>(*b, p, 0.9999f * fr);
        kept += keep ? 1.0 : 0.0;
        int a = 0;
        while (a < D && ++idx[a] == static_cast<long>(samples[a])) idx[a++] = 0;
        if (a == D) break;
    }
    return total * kept / tried;
}

// Lattice neighbours (spacing 2r) strictly within h = ratio r, the particle itself excluded.
template <int D>
double lattice_neighbours(double support_ratio) {
    double n = 0.0;
    const float h = static_cast<float>(support_ratio);
    for_each_lattice_offset<D>(2.0f, h, [&](const Vec<D>& x) {
        const float d = norm(x);
        if (d > 0.0f && d < h) n += 1.0;
    });
    return n;
}

// Mean neighbours (strictly within h, the particle itself excluded) of the particles of a fluid read
// from a file: `data` holds x[D], v[D] per particle. Counted for a sample of at most 16384 particles
// (evenly spaced in the file's order) against all the others through cells of size h (sorted cell
// keys, binary search), so that the cost stays O(n log n) however clustered they are: in a cell holding
// more than 512 particles every k-th is tested and the count scaled by k. Deterministic.
template <int D>
double file_neighbours(const std::vector<double>& data, double h) {
    const std::size_t n = data.size() / (2 * D);
    if (n < 2 || !(h > 0.0) || !std::isfinite(h)) return 0.0;
    const float hf = static_cast<float>(h), h2 = hf * hf;
    auto pos = [&](std::size_t i) {
        Vec<D> x;
        for (int a = 0; a < D; ++a) x[a] = static_cast<float>(data[i * 2 * D + a]);
        return x;
    };
    // Cell keys: 21 bits per axis (3D) or 32 (2D) from the lowest cell; cells beyond that wrap and share
    // keys, which only adds candidates (the distances decide).
    double lo[D];
    for (int a = 0; a < D; ++a) lo[a] = HUGE_VAL;
    for (std::size_t i = 0; i < n; ++i)
        for (int a = 0; a < D; ++a) lo[a] = std::min(lo[a], data[i * 2 * D + a]);
    constexpr int bits = D == 3 ? 21 : 32;
    constexpr std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    auto cell = [&](const Vec<D>& x, int a) {
        const double c = std::floor((double(x[a]) - lo[a]) / h);
        return static_cast<std::int64_t>(std::clamp(c, 0.0, 9e15));
    };
    auto key = [&](const std::int64_t* c) {
        std::uint64_t k = 0;
        for (int a = 0; a < D; ++a) k |= (static_cast<std::uint64_t>(c[a]) & mask) << (bits * a);
        return k;
    };
    std::vector<std::pair<std::uint64_t, std::uint32_t>> sorted(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Vec<D> x = pos(i);
        std::int64_t c[D];
        for (int a = 0; a < D; ++a) c[a] = cell(x, a);
        sorted[i] = {key(c), static_cast<std::uint32_t>(i)};
    }
    std::sort(sorted.begin(), sorted.end());
    const std::size_t samples = std::min<std::size_t>(n, 16384);
    double total = 0.0;
    for (std::size_t s = 0; s < samples; ++s) {
        const auto i = static_cast<std::uint32_t>((double(s) + 0.5) * double(n) / double(samples));
        const Vec<D> x = pos(i);
        std::int64_t c0[D];
        int off[D];
        for (int a = 0; a < D; ++a) {
            c0[a] = cell(x, a);
            off[a] = -1;
        }
        while (true) {
            std::int64_t c[D];
            bool valid = true;
            for (int a = 0; a < D; ++a) {
                c[a] = c0[a] + off[a];
                valid = valid && c[a] >= 0;
            }
            if (valid) {
                const std::uint64_t k = key(c);
                const auto first = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(k, std::uint32_t{0}));
                const auto last = std::upper_bound(first, sorted.end(), std::make_pair(k, ~std::uint32_t{0}));
                const auto count = static_cast<std::size_t>(last - first);
                const std::size_t stride = std::max<std::size_t>(1, (count + 511) / 512);
                double near = 0.0, tested = 0.0;
                for (std::size_t t = 0; t < count; t += stride) {
                    const std::uint32_t j = first[static_cast<std::ptrdiff_t>(t)].second;
                    tested += 1.0;
                    if (j == i) continue;
                    const Vec<D> y = pos(j);
                    float d2 = 0.0f;
                    for (int a = 0; a < D; ++a) d2 += (x[a] - y[a]) * (x[a] - y[a]);
                    near += d2 < h2 ? 1.0 : 0.0;
                }
                if (tested > 0.0) total += near * double(count) / tested;
            }
            int a = 0;
            while (a < D && ++off[a] > 1) off[a++] = -1;
            if (a == D) break;
        }
    }
    return total / double(samples);
}

struct MethodCost {
    double support_ratio = 4.0;
    double bytes_per_particle = 0.0;  // the solver's own arrays
    double bytes_per_entry = 0.0;     // ... and those kept per fluid neighbour (DFSPH's kernel gradients)
    bool springs = false;
    // WCSPH's, DFSPH's and PBF's smooth walls (eddy/smooth_walls.hpp): per fluid particle its offset, wall density, push and
    // count, and up to D faces as virtual wall particles; every boundary particle neighbour copied beside them.
    bool smooth_walls = false;
    double smooth_push_bytes = 0.0;  // per fluid particle, the solver's own arrays for the faces (WCSPH's push)
    bool ghost_pairs = false;        // DFSPH caches the mirror share's pairs (SmoothWalls::cache_ghost_pairs)
    // `drawn`: a wall is drawn smooth (nw_kept < nw); without one the smooth walls stay off (SmoothWalls::init),
    // and so does the solver's array for them. kept_entries: the fluid's entries of the walls kept as particles;
    // drawn_entries: of those drawn smooth. A particle on a drawn face pairs with the neighbours of its own row
    // within the mirror's reach, about half as many as its wall entries: the cached pairs take 12 + 4D bytes
    // each, and every fluid particle the end of its pairs.
    double smooth_wall_bytes(int D, double fluid, double kept_entries, double drawn_entries, bool drawn) const {
        const double entry = 10.0 + 8.0 * D;  // index, position, velocity, psi, object
        const double pairs = ghost_pairs ? fluid * 4.0 + drawn_entries / 2.0 * (12.0 + 4.0 * D) : 0.0;
        return smooth_walls && drawn
                   ? fluid * (12.0 + 4.0 * D + D * entry + smooth_push_bytes) + kept_entries * entry + pairs
                   : 0.0;
    }
};

template <int D>
MethodCost method_cost(const Scene& scene) {
    // The settings were checked by make_method before this runs; a bad one only changes the estimate.
    const std::string where = scene.where() + ": settings";
    MethodCost c;
    if (scene.method == "wcsph") {
        WcsphSettings s;
        apply_json(s, wcsph_fields(), scene.settings, where);
        c.support_ratio = s.support_ratio;
        c.smooth_walls = s.boundary_model == "smooth";
        c.smooth_push_bytes = 4.0 * D;  // the faces' push (m_wall_push: sized only when a wall is drawn)
    } else if (scene.method == "dfsph") {
        DfsphSettings s;
        apply_json(s, dfsph_fields(), scene.settings, where);
        c.support_ratio = s.support_ratio;
        c.bytes_per_particle = 25.0 + 16.0 * D;
        c.bytes_per_entry = 4.0 * D;
        c.smooth_walls = s.boundary_model == "smooth" && !s.extrapolated_wall_pressure;
        c.ghost_pairs = true;
        if (s.viscosity > 0.0f || s.wall_viscosity > 0.0f) {
            // The implicit viscosity: a float per pair; per particle its D x D block and six vectors
            // (right-hand side, residual, preconditioned residual, direction, product, warm start).
            c.bytes_per_particle += 4.0 * D * D + 6.0 * 4.0 * D;
            c.bytes_per_entry += 4.0;
        }
    } else if (scene.method == "pbf") {
        PbfSettings s;
        apply_json(s, pbf_fields(), scene.settings, where);
        c.support_ratio = s.support_ratio;
        c.bytes_per_particle = 20.0 + 12.0 * D;
        c.smooth_walls = s.boundary_model == "smooth";
    } else if (scene.method == "clavet") {
        ClavetSettings s;
        apply_json(s, clavet_fields(), scene.settings, where);
        c.support_ratio = s.support_ratio;
        c.bytes_per_particle = 16.0 + 8.0 * D;
        c.springs = s.spring_stiffness > 0.0f;
    }
    return c;
}

// The scene key whose part costs most (a NaN cost wins: it is the one to fix).
struct Costliest {
    std::string name;
    double bytes = -1.0;
    void offer(std::string key, double b) {
        if (b > bytes || std::isnan(b)) {
            bytes = std::isnan(b) ? HUGE_VAL : b;
            name = std::move(key);
        }
    }
};

template <int D>
MemoryEstimate estimate_particles(const Scene& scene, std::size_t max_particles) {
    MemoryEstimate e;
    const double r = scene.particle_radius;
    const MethodCost cost = method_cost<D>(scene);
    // Boundary layers as make_method chooses them: two for the SPH methods, one for PBF and Clavet.
    const int layers = scene.method == "pbf" || scene.method == "clavet" ? 1 : 2;

    std::vector<const BoundarySpec*> containers, solids;
    for (const auto& b : scene.boundaries) (b.solid ? solids : containers).push_back(&b);
    std::vector<double> fluid(scene.fluids.size()), walls(scene.boundaries.size()), sdf(scene.boundaries.size(), 0.0);
    double nf_raw = 0.0, nw = 0.0, nw_kept = 0.0, sdf_bytes = 0.0, model_bytes = 0.0, map_bytes = 0.0;
    auto held = [&](const ModelSpec& spec) {
        if (const MeshShape<D>* m = model_shape<D>(spec))
            model_bytes += 12.0 * double(m->mesh().vertices.size()) + 60.0 * double(m->mesh().cells.size());
    };
    for (std::size_t i = 0; i < scene.fluids.size(); ++i) {
        nf_raw += fluid[i] = fluid_count<D>(scene.fluids[i], r, containers, solids);
        held(scene.fluids[i].model);
    }
    for (std::size_t i = 0; i < scene.boundaries.size(); ++i) {
        const BoundarySpec& b = scene.boundaries[i];
        nw += walls[i] = wall_count<D>(b, r, layers);
        // The walls the smooth model draws from their shapes (drawn_smooth, the solvers' own rule; an open
        // top is a solid that ends at its rim); the others' particles are copied into the smooth walls' lists.
        if (!drawn_smooth<D>(wall_shape<D>(b), b.solid || b.open_top, b.body >= 0, open_model<D>(b))) nw_kept += walls[i];
        else map_bytes += volume_map_bytes<D>(b, r);
        held(b.model);
        if (const MeshShape<D>* m = model_shape<D>(b.model)) {
            double nodes = 1.0;
            for (int a = 0; a < D; ++a) nodes *= (double(m->hi()[a]) - double(m->lo()[a]) + 8.0 * r) / r + 1.0;
            sdf_bytes += sdf[i] = 4.0 * std::min(nodes, double(std::size_t{1} << 24));
        }
    }
    // Emitters (issue 31): every particle they put in over the scene's duration, A U t / (2r)^D, the
    // outflow's removals not credited (an upper bound: what a closed tank would hold at the end).
    // The run holds at most --max-particles (emission waits at it: Flow::max_fluid).
    double emitted = 0.0;
    std::vector<double> emits(scene.emitters.size(), 0.0);
    for (std::size_t i = 0; i < scene.emitters.size(); ++i) {
        const EmitterSpec& em = scene.emitters[i];
        const double area = D == 2 ? em.width : 3.14159265358979323846 * em.radius * em.radius;
        const double until = std::min(em.stop, scene.duration);
        if (until > em.start) emitted += emits[i] = area * em.speed * (until - em.start) / std::pow(2.0 * r, double(D));
    }
    nf_raw += emitted;
    // More fluid than --max-particles is build_fluid's to refuse, with its own message; the emitters'
    // beyond it is never put in.
    const double nf = std::min(nf_raw, double(max_particles));
    const double fluid_share = nf_raw > 0.0 ? nf / nf_raw : 0.0;

    const double nb = lattice_neighbours<D>(cost.support_ratio);
    // Neighbours per particle of each fluid: the lattice's, or those counted on a file's positions.
    std::vector<double> nbs(scene.fluids.size(), nb);
    for (std::size_t i = 0; i < scene.fluids.size(); ++i)
        if (const auto& data = scene.fluids[i].file_particles; scene.fluids[i].shape == "file" && data)
            nbs[i] = file_neighbours<D>(*data, cost.support_ratio * r);
    double fluid_entries = 0.0;
    for (std::size_t i = 0; i < scene.fluids.size(); ++i) fluid_entries += fluid[i] * fluid_share * nbs[i];
    fluid_entries += emitted * fluid_share * nb;
    const double fluid_bytes = 12.0 * D + 12.0 + cost.bytes_per_particle;
    const double wall_bytes = 1.5 * (12.0 * D + 6.0);
    const double grid_bytes = 12.0 + 4.0 * D;
    const double entry_bytes = 10.0 + cost.bytes_per_entry;
    const double wall_entries = std::min(nf, nw) * nb / 2.0;
    const double lists = nf * (grid_bytes + 8.0) + fluid_entries * entry_bytes + nw * grid_bytes + wall_entries * 10.0 +
                         cost.smooth_wall_bytes(D, nf, nw > 0.0 ? wall_entries * nw_kept / nw : 0.0,
                                                nw > 0.0 ? wall_entries * (nw - nw_kept) / nw : 0.0, nw_kept < nw);
    const double springs = cost.springs ? fluid_entries / 2.0 : 0.0;

    e.add(emitted > 0.0 ? fmt::format("fluid {} particles ({} from emitters{})", format_count(nf),
                                      format_count(emitted * fluid_share), nf < nf_raw ? ", at --max-particles" : "")
                        : fmt::format("fluid {} particles", format_count(nf)),
          nf * fluid_bytes, nf);
    if (nw > 0.0) e.add(fmt::format("walls {} particles", format_count(nw)), nw * wall_bytes, nw);
    const double mean_nb = nf > 0.0 ? fluid_entries / nf : nb;
    e.add(mean_nb > 1.5 * nb ? fmt::format("neighbour lists ({:.0f} neighbours a particle, {:.0f} on a lattice)", mean_nb, nb)
                             : std::string("neighbour lists"),
          lists, fluid_entries + wall_entries);
    if (springs > 0.0) e.add(fmt::format("springs {}", format_count(springs)), springs * 64.0, springs);
    if (sdf_bytes > 0.0) e.add("wall distance grids", sdf_bytes);
    if (model_bytes > 0.0) e.add("models", model_bytes);
    if (map_bytes > 0.0) e.add("volume maps", map_bytes);
    // Bodies (eddy/bodies.hpp): their walls are counted above; the engine adds its shapes (a reduced hull
    // of at most ~42 points, a box, a sphere: ~1 KB) and, within a step, a rigid body and its contacts
    // (~2 KB) per body, and the state, specs and shapes kept twice (the simulation's and the engine's).
    if (!scene.bodies.empty()) e.add(fmt::format("bodies ({})", scene.bodies.size()), 4096.0 * double(scene.bodies.size()));
    // A frame is built in memory before it is written: a .vtp holds 52 bytes per fluid particle;
    // walls.vtp 46 per wall particle in a string grown by doubling (up to twice that while it grows).
    // One file at a time; csv and ply are of the same order.
    e.add("frame files", std::max(nf * 64.0, nw * 92.0));

    // The key to change: the block, emitter or wall that costs most, or the springs when they dominate.
    Costliest key;
    for (std::size_t i = 0; i < fluid.size(); ++i)
        key.offer(fmt::format("fluids[{}]", i), fluid[i] * fluid_share *
                                                    (fluid_bytes + grid_bytes + 8.0 + nbs[i] * entry_bytes +
                                                     (cost.springs ? nbs[i] / 2.0 * 64.0 : 0.0)));
    for (std::size_t i = 0; i < emits.size(); ++i)
        key.offer(fmt::format("emitters[{}]", i), emits[i] * fluid_share * (fluid_bytes + grid_bytes + 8.0 + nb * entry_bytes));
    for (std::size_t i = 0; i < walls.size(); ++i)
        key.offer(boundary_key(scene, i), walls[i] * (wall_bytes + grid_bytes) + sdf[i]);
    e.key = key.name;
    if (springs * 64.0 > 0.5 * e.total()) e.key = "settings.spring_stiffness";
    return e;
}

}  // namespace

MemoryEstimate estimate_memory(const Scene& scene, std::size_t max_particles) {
    if (scene.method == "shallow_water") return {};
    if (scene.dimension == 2) return estimate_particles<2>(scene, max_particles);
    if (scene.dimension == 3) return estimate_particles<3>(scene, max_particles);
    return {};
}

MemoryEstimate estimate_process_memory(const Scene& scene, std::size_t max_particles, const MemoryBudget& budget) {
    MemoryEstimate e = estimate_memory(scene, max_particles);
    const int p = budget.processes;
    const MemoryEstimate::Part* fluid = e.find("fluid");
    if (p <= 1 || !fluid) return e;
    const bool whole = fluid_built_whole(scene) && !budget.resumed;  // every process builds and starts the whole fluid
    // A box of a share of the fluid, n spacings a side; its ghosts a shell of the reach (2 spacings at the
    // default support, 2.5 counted) on each of its 2D faces: 2 D 2.5 / n ghosts per owned particle.
    const double n = std::pow(std::max(1.0, fluid->count / p), 1.0 / scene.dimension);
    const double share = 1.25 / p * (1.0 + std::min(1.0, 2.0 * scene.dimension * 2.5 / n));
    for (auto& part : e.parts) {
        const bool shared = (part.what.starts_with("neighbour lists") || part.what.starts_with("fluid ")) && !whole;
        if (!shared && !(part.what == "frame files" && budget.pieces)) continue;
        part.bytes *= share;
        part.count *= share;
        part.what += fmt::format(" (a process's share of {}: {:.0f}%)", p, 100.0 * share);
    }
    return e;
}

}  // namespace eddy
