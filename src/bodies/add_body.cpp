// add_body (eddy/simulation.hpp): a body added to a running particle simulation, as the viewer's drop
// and Python's sim.add_body do. The body is one more entry of the scene's "bodies" list, so the
// simulation afterwards is the one its scene document describes: a checkpoint written later holds the
// new document and rebuilds the same walls on a resume.
//
// The stages: the scene re-parsed with the body appended (the one place its keys are checked, errors
// naming bodies[i]); the new body's wall particles sampled alone (the other walls are where the run
// moved them and are left so); the overlap check against every object where it is now (make_bodies'
// own check compares shapes at their scene pose, which is right at the start only); the fluid inside the
// body or within r of its surface removed; the bodies rebuilt with the old ones' state; the method
// rebuilt on the new walls.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eddy/bodies.hpp"
#include "eddy/error.hpp"
#include "eddy/simulation.hpp"
#include "scene/fluid_checks.hpp"

namespace eddy {

namespace {

// The new body's model (a "mesh" body reads a file): parsed from a scene that holds only this body and
// a token fluid, since the running scene's own models come from its SceneInputs (a resumed run has no
// files to read). Its errors are the body's: "bodies[0]" becomes the index it gets in the real list.
std::shared_ptr<const Mesh<3>> new_body_model(const Scene& old, const nlohmann::json& body, std::size_t index) {
    const bool mesh = body.is_object() && body.contains("shape") && body["shape"] == "mesh";
    if (!mesh) return nullptr;
    const auto v = [&](double x) { return old.dimension == 2 ? nlohmann::json{x, x} : nlohmann::json{x, x, x}; };
    const nlohmann::json probe = {{"name", old.name.empty() ? std::string("add_body") : old.name},
                                  {"dimension", old.dimension},
                                  {"particle_radius", old.particle_radius},
                                  {"bodies", nlohmann::json::array({body})},
                                  {"fluids", {{{"shape", "box"}, {"min", v(0.0)}, {"max", v(1.0)}}}}};
    try {
        const Scene s = parse_scene(probe, old.where());
        return s.boundaries.empty() ? nullptr : s.boundaries.back().model.placed;
    } catch (const InputError& e) {
        std::string what = e.what();
        const std::size_t at = what.find("bodies[0]");
        if (at != std::string::npos) what.replace(at, 9, fmt::format("bodies[{}]", index));
        else what = fmt::format("{}: bodies[{}].file: {}", old.where(), index, what);  // the model reader's own line
        throw InputError(what);
    }
}

// Is x on the fluid's side of container b (at rest)? An open top lets the fluid (and a body) stand
// above the box.
template <int D>
bool in_container(const BoundarySpec& b, const Vec<D>& x) {
    if (b.shape == "box" && b.open_top) {
        for (int a = 0; a < D; ++a)
            if (x[a] < b.min[a] || (a != 1 && x[a] > b.max[a])) return false;
        return true;
    }
    return detail::inside_shape<D>(b, x, 0.0f);
}

template <int D>
std::string at_text(const Vec<D>& x) {
    return D == 3 ? fmt::format("({:.4g}, {:.4g}, {:.4g})", x[0], x[1], x[D - 1]) : fmt::format("({:.4g}, {:.4g})", x[0], x[1]);
}

template <int D>
std::size_t add_body_to(ParticleSimulation<D>& sim, const nlohmann::json& body, const ExecContext& exec) {
    const Scene& old = sim.scene;
    const std::size_t index = old.bodies.size();
    const std::size_t object = old.boundaries.size();
    if (object >= std::numeric_limits<std::uint16_t>::max())
        throw InputError(fmt::format("{}: bodies[{}]: the scene already has {} boundary objects; allowed: at most {}",
                                     old.where(), index, object, std::numeric_limits<std::uint16_t>::max() - 1));

    // 1. The scene with the body appended. Its models come from the running scene (SceneInputs: the
    //    boundaries' and bodies' models, then the fluids'), the new body's (if a mesh) in between.
    nlohmann::json doc = old.document;
    if (!doc.contains("bodies")) doc["bodies"] = nlohmann::json::array();
    doc["bodies"].push_back(body);
    // When it joined: make_bodies (a resume) does not check it at the scene's poses (BodySpec::added_at).
    if (body.is_object() && sim.time > 0.0) doc["bodies"].back()["added_at"] = sim.time;
    SceneInputs inputs = scene_inputs(old);
    if (auto model = new_body_model(old, body, index)) {
        std::size_t walls = 0;
        for (const auto& b : old.boundaries) walls += b.model.placed ? 1 : 0;
        inputs.meshes.insert(inputs.meshes.begin() + std::ptrdiff_t(walls), std::move(model));
    }
    Scene next = parse_scene_from(doc, old.where(), inputs);
    next.source = old.source;
    next.warnings = old.warnings;
    if (next.bodies.size() != index + 1 || next.boundaries.size() != object + 1 || next.bodies.back().boundary != object)
        throw InputError(fmt::format("{}: bodies[{}]: the scene did not take the body as its last object", old.where(), index));
    const BoundarySpec& spec = next.boundaries[object];

    // 2. Its wall particles, sampled alone (as build_boundary samples every object: the same points a
    //    resumed run builds), with the layers the method samples walls with.
    const int layers = std::holds_alternative<PbfSolver<D>>(sim.method) || std::holds_alternative<ClavetSolver<D>>(sim.method) ? 1 : 2;
    Scene alone;
    alone.source = next.source;
    alone.name = next.name;
    alone.dimension = next.dimension;
    alone.particle_radius = next.particle_radius;
    alone.boundaries = {spec};
    const BoundarySet<D> own = build_boundary<D>(alone, layers, &exec);

    // 3. Overlaps, with every object where it is now (at sim.time): the new body's particles on the
    //    fluid's side of the containers and outside the solids (walls and bodies), and no solid's
    //    particle inside the new body.
    const std::string key = fmt::format("{}: bodies[{}]", old.where(), index);
    std::vector<RigidPose<D>> pose(object);
    for (std::size_t o = 0; o < object; ++o) pose[o] = sim.boundary.motions[o].pose(sim.time);
    auto rest_point = [&](std::size_t o, const Vec<D>& x) {
        return sim.boundary.motions[o].moving() ? pose[o].inverse(x) : x;
    };
    bool any_container = false;
    for (std::size_t o = 0; o < object; ++o) any_container = any_container || !next.boundaries[o].solid;
    for (const Vec<D>& x : own.position) {
        bool contained = !any_container;
        for (std::size_t o = 0; o < object; ++o) {
            const BoundarySpec& b = next.boundaries[o];
            const Vec<D> y = rest_point(o, x);
            if (!b.solid) {
                contained = contained || in_container<D>(b, y);
                continue;
            }
            if (detail::inside_shape<D>(b, y, 0.0f))
                throw InputError(fmt::format("{}: overlaps {} at {}; a body must be added clear of the walls and of the other "
                                             "bodies where they are now",
                                             key, boundary_key(next, o), at_text<D>(x)));
        }
        if (!contained)
            throw InputError(fmt::format("{}: reaches outside every container at {}; a body must be added inside the walls",
                                         key, at_text<D>(x)));
    }
    for (std::size_t p = 0; p < sim.boundary.size(); ++p) {
        const std::size_t o = sim.boundary.object[p];
        if (!next.boundaries[o].solid) continue;
        const Vec<D> x = sim.boundary.motions[o].moving() ? pose[o].apply(sim.boundary.rest_position[p]) : sim.boundary.rest_position[p];
        if (detail::inside_shape<D>(spec, x, 0.0f))
            throw InputError(fmt::format("{}: overlaps {} at {}; a body must be added clear of the walls and of the other "
                                         "bodies where they are now",
                                         key, boundary_key(next, o), at_text<D>(x)));
    }

    // 4. Everything that can throw is checked; from here the simulation changes. The fluid inside the
    //    body or within r of its surface goes, as a fluid block leaves room for a solid (build_fluid).
    const float r = static_cast<float>(next.particle_radius);
    std::vector<std::uint8_t> keep(sim.fluid.size(), 1);
    std::size_t removed = 0;
    parallel_for_each_index(exec, sim.fluid.size(), [&](std::size_t i) {
        keep[i] = detail::inside_shape<D>(spec, sim.fluid.position[i], 0.9999f * r) ? 0 : 1;
    });
    for (auto k : keep) removed += k ? 0 : 1;
    if (removed == sim.fluid.size() && removed > 0)
        throw InputError(fmt::format("{}: would remove every fluid particle; allowed: a body that leaves some fluid", key));
    if (removed > 0) sim.fluid.keep(keep);

    // 5. The new walls: the body's particles at rest where it is added (its pose at rest is now).
    for (const Vec<D>& x : own.position) sim.boundary.push_back(x, static_cast<std::uint16_t>(object));
    sim.boundary.motions.push_back(own.motions.front());
    sim.boundary.sampled_layers.push_back(own.sampled_layers.front());
    if (!sim.boundary.load.empty()) sim.boundary.load.resize(object + 1, ObjectLoad{});

    // 6. The bodies: the scene's, with the old ones' state, loads and outside forces kept. make_bodies
    //    gets the motions without particles: its check of shapes at their scene pose is step 3's here.
    BoundarySet<D> motions_only;
    motions_only.motions = sim.boundary.motions;
    RigidBodies<D> bodies = make_bodies<D>(next, motions_only);
    for (std::size_t k = 0; k < index && k < sim.bodies.size(); ++k) {
        bodies.state[k] = sim.bodies.state[k];
        bodies.load[k] = sim.bodies.load[k];
    }
    bodies.external = sim.bodies.external;
    sim.bodies = std::move(bodies);
    sync_body_motions(sim.bodies, sim.boundary, sim.time);

    sim.scene = next;
    return removed;
}

}  // namespace

std::size_t add_body(Simulation& simulation, const nlohmann::json& body, const ExecContext& exec) {
    const std::size_t removed = std::visit([&](auto& sim) { return add_body_to(sim, body, exec); }, simulation);
    // The method on the new walls. Wall volumes (psi) are those of the walls at rest, as make_simulation
    // and a resume from a checkpoint compute them: init() sees the rest positions, then the walls go back
    // where they are (the next step rebuilds its wall grid: bodies move).
    auto swap_walls = [&] {
        std::visit([](auto& sim) { std::swap(sim.boundary.position, sim.boundary.rest_position); }, simulation);
    };
    const Scene scene = std::visit([](auto& sim) { return sim.scene; }, simulation);
    swap_walls();
    try {
        rebuild_method(simulation, scene, exec);
    } catch (...) {
        swap_walls();
        throw;
    }
    swap_walls();
    return removed;
}

}  // namespace eddy
