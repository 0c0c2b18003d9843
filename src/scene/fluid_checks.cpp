// Checks of a scene's fluids at load time (fluid_checks.hpp): file fluids (finite velocities, more
// than one particle, no two at one point, inside the containers) and flat models.
#include "scene/fluid_checks.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"

namespace eddy::detail {

namespace {

// Where each container of the scene is, for a message about fluid outside them all: a unit or an axis
// is easily wrong in a file written by another tool.
template <int D>
std::string containers_text(const Scene& s) {
    std::string out;
    for (std::size_t i = 0; i < s.boundaries.size(); ++i) {
        const BoundarySpec& b = s.boundaries[i];
        if (b.solid) continue;
        std::array<double, 3> lo = b.min, hi = b.max;  // boxes, and the models' boxes
        if (b.shape == "circle" || b.shape == "sphere" || b.shape == "cylinder") {
            for (int a = 0; a < 3; ++a) {
                lo[a] = b.center[a] - b.radius;
                hi[a] = b.center[a] + b.radius;
            }
            if (b.shape == "cylinder") {
                lo[1] = b.center[1];
                hi[1] = b.center[1] + b.height;
            }
        }
        const std::string what = b.shape == "mesh" ? fmt::format("mesh {}", b.model.file.string()) : b.shape;
        out += fmt::format("{}boundaries[{}] ({}) spans {} m", out.empty() ? "" : "; ", i, what, box_text<D>(lo, hi));
    }
    return out;
}

template <int D>
std::string point_text(const std::vector<double>& data, std::size_t k, int offset) {
    std::string t;
    for (int a = 0; a < D; ++a) t += fmt::format("{}{:.7g}", a ? ", " : "", data[k * 2 * D + offset + a]);  // a float's digits
    return "(" + t + ")";
}

template <int D>
std::string check_file_fluid_in(const Scene& s, FluidSpec& f, const std::string& where) {
    const std::vector<double>& data = *f.file_particles;
    const std::size_t n = data.size() / (2 * D);
    const std::string name = fmt::format("{} ({})", where, f.file.string());
    // Positions are checked finite by the particle readers; velocities are data the solver trusts.
    for (std::size_t k = 0; k < n; ++k) {
        double v2 = 0.0;
        for (int a = 0; a < D; ++a) v2 += data[k * 2 * D + D + a] * data[k * 2 * D + D + a];
        if (!(v2 <= kMaxFluidSpeed * kMaxFluidSpeed))  // NaN and inf too
            throw InputError(fmt::format("{}: particle {} has velocity {}; allowed: finite numbers, a speed of at most "
                                         "3e8 m/s (the speed of light)",
                                         name, k, point_text<D>(data, k, D)));
    }
    auto one_particle = [&](const std::string& left) {
        return InputError(fmt::format("{}: {}; allowed: at least 2 particles (one particle is no fluid: it has no "
                                      "neighbours, and no height to derive the speed of sound and time step from)",
                                      name, left));
    };
    if (n == 1) throw one_particle("holds only 1 particle");
    // Two particles at one point: no pressure force can separate them (their distance has no
    // direction), and a frame of a run never holds such a pair. Sorted by position, a pair is adjacent.
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    auto less = [&](std::size_t i, std::size_t j) {
        for (int a = 0; a < D; ++a) {
            const double x = data[i * 2 * D + a], y = data[j * 2 * D + a];
            if (x != y) return x < y;
        }
        return i < j;
    };
    std::sort(order.begin(), order.end(), less);
    for (std::size_t k = 0; k + 1 < n; ++k) {
        const std::size_t i = order[k], j = order[k + 1];
        bool same = true;
        for (int a = 0; a < D; ++a) same = same && data[i * 2 * D + a] == data[j * 2 * D + a];
        if (same)
            throw InputError(fmt::format("{}: particles {} and {} are both at {}; allowed: particles at distinct positions",
                                         name, std::min(i, j), std::max(i, j), point_text<D>(data, i, 0)));
    }
    // Clipped at the walls as a block is (builders.cpp), at the surface itself (fluid_checks.hpp).
    std::vector<const BoundarySpec*> containers, solids;
    for (const auto& b : s.boundaries) (b.solid ? solids : containers).push_back(&b);
    std::vector<std::uint8_t> keep(n, 1);
    std::size_t outside = 0, in_solid = 0;
    for (std::size_t k = 0; k < n; ++k) {
        Vec<D> x;
        for (int a = 0; a < D; ++a) x[a] = static_cast<float>(data[k * 2 * D + a]);
        bool in = containers.empty();
        for (const auto* b : containers) in = in || inside_shape<D>(*b, x, 0.0f);
        if (!in) {
            keep[k] = 0;
            ++outside;
            continue;
        }
        for (const auto* b : solids)
            if (inside_shape<D>(*b, x, 0.0f)) {
                keep[k] = 0;
                ++in_solid;
                break;
            }
    }
    if (outside == n)
        throw InputError(fmt::format("{}: all {} particles lie outside every container (the particles span {} m; {})", name,
                                     n, box_text<D>(f.min, f.max), containers_text<D>(s)));
    if (outside + in_solid == n)
        throw InputError(fmt::format("{}: no particle is left: {} lie outside every container, {} inside solid obstacles",
                                     name, outside, in_solid));
    if (outside + in_solid == 0) return {};
    auto kept = std::make_shared<std::vector<double>>();
    kept->reserve((n - outside - in_solid) * 2 * D);
    for (int a = 0; a < D; ++a) {
        f.min[a] = 1e300;
        f.max[a] = -1e300;
    }
    for (std::size_t k = 0; k < n; ++k) {
        if (!keep[k]) continue;
        for (int a = 0; a < D; ++a) {
            f.min[a] = std::min(f.min[a], data[k * 2 * D + a]);
            f.max[a] = std::max(f.max[a], data[k * 2 * D + a]);
        }
        kept->insert(kept->end(), data.begin() + static_cast<std::ptrdiff_t>(k * 2 * D),
                     data.begin() + static_cast<std::ptrdiff_t>((k + 1) * 2 * D));
    }
    if (kept->size() == 2 * D)
        throw one_particle(fmt::format("only 1 of its {} particles lies inside the containers and outside solids", n));
    f.file_particles = std::move(kept);
    return fmt::format("{}: warning: {} of its {} particles dropped: {} outside every container, {} inside solid obstacles "
                       "(fluid is clipped at the walls, as fluid blocks are)",
                       name, outside + in_solid, n, outside, in_solid);
}

// Largest distance of the model's vertices from the plane (3D) or line (2D) of its largest cell,
// against a tolerance for vertices rounded to floats: every vertex on it is a flat model.
template <int D>
bool flat(const MeshShape<D>& shape) {
    const Mesh<D>& m = shape.mesh();
    // The largest cell's unnormalised normal: a triangle's cross product, a segment turned by 90 deg.
    std::array<double, D> best{};
    double best2 = 0.0;
    std::uint32_t cell = 0;
    for (std::uint32_t c = 0; c < m.cells.size(); ++c) {
        const Vec<D>& o = m.vertices[m.cells[c][0]];
        std::array<double, D> e1{}, n{};
        for (int a = 0; a < D; ++a) e1[a] = double(m.vertices[m.cells[c][1]][a]) - o[a];
        if constexpr (D == 3) {
            std::array<double, 3> e2{};
            for (int a = 0; a < 3; ++a) e2[a] = double(m.vertices[m.cells[c][2]][a]) - o[a];
            n = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        } else {
            n = {-e1[1], e1[0]};
        }
        double n2 = 0.0;
        for (int a = 0; a < D; ++a) n2 += n[a] * n[a];
        if (n2 > best2) {
            best2 = n2;
            best = n;
            cell = c;
        }
    }
    if (!(best2 > 0.0)) return true;
    const Vec<D>& o = m.vertices[m.cells[cell][0]];
    double extent = 0.0, largest = 0.0, off = 0.0;
    for (int a = 0; a < D; ++a) extent += double(shape.hi()[a] - shape.lo()[a]) * (shape.hi()[a] - shape.lo()[a]);
    for (const auto& v : m.vertices) {
        double d = 0.0;
        for (int a = 0; a < D; ++a) {
            d += (double(v[a]) - o[a]) * best[a];
            largest = std::max(largest, std::fabs(double(v[a])));
        }
        off = std::max(off, std::fabs(d) / std::sqrt(best2));
    }
    return off <= 1e-5 * std::sqrt(extent) + 8.0 * FLT_EPSILON * largest;
}

}  // namespace

void check_fluid_velocity(const std::array<double, 3>& v, int dim, const std::string& where) {
    double v2 = 0.0;
    for (int a = 0; a < dim; ++a) v2 += v[a] * v[a];
    if (!(v2 <= kMaxFluidSpeed * kMaxFluidSpeed))
        throw InputError(fmt::format("{}.velocity: a speed of {:.3g} m/s; allowed: at most 3e8 m/s (the speed of light)",
                                     where, std::sqrt(v2)));
}

std::string check_file_fluid(const Scene& s, FluidSpec& f, const std::string& where) {
    return s.dimension == 2 ? check_file_fluid_in<2>(s, f, where) : check_file_fluid_in<3>(s, f, where);
}

void check_model_fluid(const FluidSpec& f, const std::string& where) {
    if (f.model.mesh && flat(*f.model.mesh))
        throw InputError(fmt::format("{} ({}): the mesh encloses no volume: its vertices lie in one plane; allowed: a "
                                     "closed model with an inside to fill",
                                     where, f.model.file.string()));
    if (f.model.polygon && flat(*f.model.polygon))
        throw InputError(fmt::format("{}: the polygon encloses no area: its corners lie on one line; allowed: a polygon "
                                     "with an inside to fill",
                                     where));
}

}  // namespace eddy::detail
