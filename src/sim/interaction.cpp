// A user's hands in a running particle simulation (eddy/interaction.hpp): the mouse's brush, a block of fluid.
#include "eddy/interaction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <unordered_set>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/geometry.hpp"
#include "eddy/input_file.hpp"

namespace eddy {

namespace {
template <class F>
void with_particles(Simulation& s, F&& f) {
    std::visit([&](auto& sim) { f(sim); }, s);
}
}  // namespace

void apply_mouse_force(Simulation& simulation, const MouseForce& mf, float dt, const ExecContext& exec) {
    if (!mf.active) return;
    with_particles(simulation, [&](auto& sim) {
        constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
        const float R2 = mf.radius * mf.radius;
        const float a = 1.0f - std::exp(-std::max(mf.rate, 0.0f) * dt);  // the share of the gap closed in dt
        Vec<D> p, u;
        for (int k = 0; k < D; ++k) p[k] = mf.point[k], u[k] = mf.velocity[k];
        // A velocity target: each particle on its own, so the result does not depend on the thread count
        // or on the order.
        parallel_for_each_index(exec, sim.fluid.size(), [&](std::size_t i) {
            const float d2 = norm2(sim.fluid.position[i] - p);
            if (!(d2 < R2)) return;
            const float q = 1.0f - d2 / R2, w = q * q;
            sim.fluid.velocity[i] += (u - sim.fluid.velocity[i]) * (w * a);
        });
        // Energy from outside the scene: |v + a w (u - v)| <= max(|v|, |u|), so no particle gets faster
        // than the fastest of the scene's motion and the mouse's speed.
        sim.speed_bound.added = std::max(sim.speed_bound.added, norm(u));
    });
}

std::string add_fluid_block(Simulation& simulation, std::optional<std::array<double, 3>> center, std::size_t max_particles,
                            const ExecContext& exec) {
    std::string status;
    with_particles(simulation, [&](auto& sim) {
        constexpr int D = std::remove_reference_t<decltype(sim)>::kDimension;
        const Scene& sc = sim.scene;
        const double r = sc.particle_radius, sp = 2.0 * r;
        // Seed 003: a block of fixed size, at the given centre (the cursor) or above the middle of the
        // scene, kept a particle spacing inside the scene's bounds.
        const Aabb<D> b = scene_bounds<D>(sc);
        const int per_side = D == 2 ? 20 : 12;
        FluidSpec f;
        f.shape = "box";
        for (int a = 0; a < D; ++a) {
            const double half = std::min(0.5 * per_side * sp, 0.2 * (b.hi[a] - b.lo[a]));
            double c = 0.5 * (b.lo[a] + b.hi[a]);
            if (center) c = (*center)[a];
            else if (a == 1) c = b.lo[1] + 0.92 * (b.hi[1] - b.lo[1]) - half;
            c = std::clamp(c, b.lo[a] + half + sp, std::max(b.lo[a] + half + sp, b.hi[a] - half - sp));
            f.min[a] = c - half;
            f.max[a] = c + half;
        }
        Scene blk = sc;
        blk.fluids = {f};
        ParticleSet<D> add;
        try {
            add = build_fluid<D>(blk, max_particles);
        } catch (const InputError&) {
            status = "no room for a block of particles here";
            return;
        }
        // Skip lattice points near existing particles: overlapping particles explode (seed 003).
        auto key = [&](const Vec<D>& x) {
            std::uint64_t k = 0;
            for (int a = 0; a < D; ++a)
                k = k * 2654435761ull + static_cast<std::uint64_t>(static_cast<std::int64_t>(std::floor(x[a] / sp)) + (1 << 20));
            return k;
        };
        std::unordered_set<std::uint64_t> occupied;
        occupied.reserve(sim.fluid.size());
        for (const auto& x : sim.fluid.position) occupied.insert(key(x));
        std::size_t added = 0;
        for (const auto& x : add.position) {
            bool free = true;
            const int nb = D == 2 ? 9 : 27;
            for (int o = 0; o < nb && free; ++o) {
                Vec<D> y = x;
                y[0] += float(sp * (o % 3 - 1));
                y[1] += float(sp * ((o / 3) % 3 - 1));
                if constexpr (D == 3) y[2] += float(sp * (o / 9 - 1));
                free = !occupied.contains(key(y));
            }
            if (!free) continue;
            if (sim.fluid.size() >= max_particles) break;
            sim.fluid.push_back(x, Vec<D>::zero());
            ++added;
        }
        if (added == 0) {
            status = "no room for a block of particles here";
            return;
        }
        std::visit([&](auto& m) { m.init(sim.fluid, sim.boundary, exec); }, sim.method);
        status = fmt::format("added {} particles", added);
    });
    return status;
}

namespace {
// Where a tool acts: `point` (z ignored in 2D) moved inside the scene's bounds, clear of their edges by
// `margin` (m) per axis (the bounds' middle on an axis too narrow for that).
template <int D>
std::array<double, D> clamped_in_scene(const ParticleSimulation<D>& sim, const std::array<double, 3>& point, double margin) {
    const Aabb<D> b = scene_bounds<D>(sim.scene);
    std::array<double, D> c{};
    for (int a = 0; a < D; ++a) {
        const double lo = b.lo[a] + margin, hi = b.hi[a] - margin;
        c[a] = lo < hi ? std::clamp(point[a], lo, hi) : 0.5 * (b.lo[a] + b.hi[a]);
    }
    return c;
}
}  // namespace

std::size_t drop_body_at(Simulation& simulation, bool ball, const std::array<double, 3>& point, const ExecContext& exec,
                         double size_radii, double density) {
    nlohmann::json body;
    with_particles(simulation, [&](const auto& sim) {
        constexpr int D = std::remove_cvref_t<decltype(sim)>::kDimension;
        const double half = 0.5 * size_radii * sim.scene.particle_radius;
        const auto c = clamped_in_scene(sim, point, half + 2.0 * sim.scene.particle_radius);
        if (ball) {
            body = {{"shape", D == 2 ? "circle" : "sphere"}, {"center", c}, {"radius", half}};
        } else {
            nlohmann::json lo = nlohmann::json::array(), hi = nlohmann::json::array();
            for (int a = 0; a < D; ++a) lo.push_back(c[a] - half), hi.push_back(c[a] + half);
            body = {{"shape", "box"}, {"min", lo}, {"max", hi}};
        }
        body["density"] = density;
    });
    return add_body(simulation, body, exec);
}

std::size_t drop_model_at(Simulation& simulation, const std::string& file, const std::array<double, 3>& point,
                          const ExecContext& exec, double size_radii, double density) {
    auto* sim = std::get_if<ParticleSimulation<3>>(&simulation);
    if (!sim) throw InputError(fmt::format("a dropped model ({}): allowed in 3D scenes", file));
    // The file as the scene's own "file" keys find it: relative to the scene file's folder when there is one.
    const Mesh<3> mesh = read_triangle_mesh(io::scene_relative_path(file, sim->scene.where()));
    std::array<double, 3> lo{}, hi{};
    for (int a = 0; a < 3; ++a) lo[a] = std::numeric_limits<double>::infinity(), hi[a] = -lo[a];
    for (const auto& v : mesh.vertices)
        for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], double(v[a])), hi[a] = std::max(hi[a], double(v[a]));
    const double extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    if (!(extent > 0.0)) throw InputError(fmt::format("a dropped model ({}): flat (no extent); allowed: a solid", file));
    const double size = size_radii * sim->scene.particle_radius, scale = size / extent;
    const auto c = clamped_in_scene(*sim, point, 0.5 * size + 2.0 * sim->scene.particle_radius);
    nlohmann::json t = nlohmann::json::array();
    for (int a = 0; a < 3; ++a) t.push_back(c[a] - scale * 0.5 * (lo[a] + hi[a]));
    const nlohmann::json body = {{"shape", "mesh"}, {"file", file}, {"scale", scale}, {"translate", t}, {"density", density}};
    return add_body(simulation, body, exec);
}

std::size_t tap_at(Simulation& simulation, const std::array<double, 3>& point, double speed, double size_radii,
                   const ExecContext& exec) {
    nlohmann::json e;
    with_particles(simulation, [&](const auto& sim) {
        constexpr int D = std::remove_cvref_t<decltype(sim)>::kDimension;
        const double r = sim.scene.particle_radius, half = 0.5 * size_radii * r;
        double g2 = 0.0;
        for (int a = 0; a < D; ++a) g2 += sim.scene.gravity[a] * sim.scene.gravity[a];
        nlohmann::json d = nlohmann::json::array();
        for (int a = 0; a < D; ++a) d.push_back(g2 > 0.0 ? sim.scene.gravity[a] / std::sqrt(g2) : (a == 1 ? -1.0 : 0.0));
        e = {{"center", clamped_in_scene(sim, point, half + 2.0 * r)}, {"direction", d}, {"speed", speed}};
        e[D == 2 ? "width" : "radius"] = D == 2 ? 2.0 * half : half;
    });
    return add_emitter(simulation, e, exec);
}

void drop_water(ShallowWaterSimulation& water, double x, double y, bool ink) {
    std::visit([&](auto& s) {
        const auto& g = s.grid();
        const double dx = static_cast<double>(g.dx), extent = dx * std::max(g.nx, g.ny);
        double mean = 0, wet = 0;
        for (auto h : g.depth)
            if (h > 1e-4) mean += static_cast<double>(h), wet += 1;
        mean = wet > 0 ? mean / wet : 0.01 * extent;
        const double radius = std::max(3.0 * dx, 0.03 * extent);
        s.add_drop(x, y, radius, ink ? 0.0 : mean / 3.0, ink ? 1.0 : 0.0);
    }, water.solver);
}

}  // namespace eddy
