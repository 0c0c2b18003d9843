// The page's 3D solids (issue 43; docs/web.md): rigid bodies, users' models and obstacles drawn as shaded
// meshes where they are now, from the viewer's own geometry (apps/view/bodies_view.*, models.*: the same
// shapes at rest, the same poses, compiled into the module). Rest geometry is built once per scene and again
// when the scene's boundaries change (a body dropped); refresh() poses it. Bodies take the viewer's colours
// (body_color), models and obstacles its light grey; containers that are models (a cup, a bowl) are
// translucent so that the fluid inside shows, the box tanks are the page's outline.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bodies_view.hpp"
#include "eddy/simulation.hpp"

namespace eddy::web {

class PageSolids {
public:
    /// Forgets the geometry (a new scene).
    void reset() { m_parts.clear(), m_built_for = {~std::size_t(0), ~std::size_t(0)}; }
    /// Poses the solids of a 3D particle simulation at its time (its bodies at their state); a 2D one has none
    /// (the page draws 2D bodies and walls from their particles).
    void refresh(const Simulation& sim);
    /// Vertices (x, y, z), unit normals and colours (r, g, b, a) each; triangles as vertex indices, the opaque
    /// ones first (opaque_indices() of them), then the translucent.
    const std::vector<float>& xyz() const { return m_xyz; }
    const std::vector<float>& normals() const { return m_normals; }
    const std::vector<float>& rgba() const { return m_rgba; }
    const std::vector<std::uint32_t>& triangles() const { return m_tris; }
    std::size_t opaque_indices() const { return m_opaque; }
    /// What is drawn, for tests: [{"kind": "body" | "model" | "obstacle", "object": boundary index, "body": k
    /// (bodies), "first": first index, "count": indices, "translucent"}].
    std::string parts() const;

private:
    struct Part {
        std::string kind;
        std::size_t object = 0, body = 0;
        bool translucent = false;
        std::array<float, 4> rgba{};
        std::shared_ptr<const view::SurfaceMesh> mesh;  // at rest
        std::size_t first = 0, count = 0;               // its indices in m_tris (refresh)
    };
    std::vector<Part> m_parts;
    std::array<std::size_t, 2> m_built_for{~std::size_t(0), ~std::size_t(0)};  // boundaries, bodies
    std::vector<float> m_xyz, m_normals, m_rgba;
    std::vector<std::uint32_t> m_tris;
    std::size_t m_opaque = 0;
    void build(const ParticleSimulation<3>& sim);
    void append(Part& p, const view::Mat4& pose);
};

}  // namespace eddy::web
