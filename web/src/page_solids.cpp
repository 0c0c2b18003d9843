// The page's 3D solids: the viewer's geometry at rest (bodies_view.*, models.*) posed each refresh.
#include "page_solids.hpp"

#include <nlohmann/json.hpp>

#include "models.hpp"

namespace eddy::web {

namespace {
constexpr std::array<float, 4> kGrey{0.88f, 0.88f, 0.90f, 1.0f};  // the viewer's models (scene_draw.cpp)
constexpr float kContainerAlpha = 0.3f;
}  // namespace

// Rest geometry: each body's shape (make_body_geometry, as the viewer's build_walls), then each boundary
// that is not a body: a model (mesh, cylinder) as its shaded mesh, an obstacle (a solid box or sphere) as the
// body geometry of its shape; box containers are left to the page's outline.
void PageSolids::build(const ParticleSimulation<3>& sim) {
    m_parts.clear();
    const auto& bs = sim.scene.boundaries;
    std::vector<bool> is_body(bs.size(), false);
    for (std::size_t k = 0; k < sim.bodies.size(); ++k) {
        if (sim.bodies.object[k] < is_body.size()) is_body[sim.bodies.object[k]] = true;
        const auto c = view::body_color(k);
        Part p{"body", sim.bodies.object[k], k, false, {c[0], c[1], c[2], 1.0f}, nullptr};
        auto g = view::make_body_geometry<3>(sim.bodies.shapes[k]);
        p.mesh = std::shared_ptr<const view::SurfaceMesh>(g, &g->mesh);
        m_parts.push_back(std::move(p));
    }
    for (std::size_t i = 0; i < bs.size(); ++i) {
        if (is_body[i]) continue;
        Part p{"model", i, 0, !bs[i].solid, kGrey, nullptr};
        if (bs[i].solid || model_shape<3>(bs[i].model)) {
            if (p.translucent) p.rgba[3] = kContainerAlpha;
            if (const MeshShape<3>* shape = model_shape<3>(bs[i].model)) {
                p.mesh = std::make_shared<const view::SurfaceMesh>(view::shaded_mesh(shape->mesh()));
            } else {
                p.kind = "obstacle";
                auto g = view::make_body_geometry<3>(bs[i]);
                p.mesh = std::shared_ptr<const view::SurfaceMesh>(g, &g->mesh);
            }
            if (!p.mesh->empty()) m_parts.push_back(std::move(p));
        }
    }
    m_built_for = {bs.size(), sim.bodies.size()};
}

// One part's triangles posed: x -> pose x, normals turned by the pose's rotation.
void PageSolids::append(Part& p, const view::Mat4& m) {
    const view::SurfaceMesh& s = *p.mesh;
    const auto base = static_cast<std::uint32_t>(m_xyz.size() / 3);
    for (std::size_t v = 0; v < s.vertices(); ++v) {
        const float* x = &s.xyz[3 * v];
        const float* n = s.normals.size() == s.xyz.size() ? &s.normals[3 * v] : nullptr;
        for (int a = 0; a < 3; ++a) {
            m_xyz.push_back(m(a, 0) * x[0] + m(a, 1) * x[1] + m(a, 2) * x[2] + m(a, 3));
            m_normals.push_back(n ? m(a, 0) * n[0] + m(a, 1) * n[1] + m(a, 2) * n[2] : 0.0f);
        }
        m_rgba.insert(m_rgba.end(), p.rgba.begin(), p.rgba.end());
    }
    p.first = m_tris.size();
    for (const auto t : s.triangles) m_tris.push_back(base + t);
    p.count = m_tris.size() - p.first;
}

void PageSolids::refresh(const Simulation& simulation) {
    m_xyz.clear(), m_normals.clear(), m_rgba.clear(), m_tris.clear();
    m_opaque = 0;
    const auto* sim = std::get_if<ParticleSimulation<3>>(&simulation);
    if (!sim) return;
    if (m_built_for != std::array<std::size_t, 2>{sim->scene.boundaries.size(), sim->bodies.size()}) build(*sim);
    for (const bool translucent : {false, true}) {  // the opaque first
        for (Part& p : m_parts) {
            if (p.translucent != translucent) continue;
            view::Mat4 pose = view::Mat4::identity();
            if (p.kind == "body") {
                pose = view::body_pose(sim->bodies.state[p.body], sim->bodies.specs[p.body].mass.center);
            } else if (p.object < sim->boundary.motions.size() && sim->boundary.motions[p.object].moving()) {
                pose = view::pose_matrix<3>(sim->boundary.motions[p.object].pose(sim->time));
            }
            append(p, pose);
        }
        if (!translucent) m_opaque = m_tris.size();
    }
}

std::string PageSolids::parts() const {
    nlohmann::json out = nlohmann::json::array();
    for (const Part& p : m_parts)
        out.push_back({{"kind", p.kind}, {"object", p.object}, {"body", p.body}, {"first", p.first}, {"count", p.count},
                       {"translucent", p.translucent}});
    return out.dump();
}

}  // namespace eddy::web
