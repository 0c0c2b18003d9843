// Surface reconstruction against closed-form answers: signed distance of analytic shapes (plane,
// sphere, torus; 2D and 3D) computed by the pin + fast-sweeping stages, the mesh of a lattice-sampled
// sphere, and a cross-check against OpenVDB's fast sweeping (tools::fogToSdf) on the same grid.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "eddy/surface.hpp"
#include "figures.hpp"
#include "surface_support.hpp"

using namespace eddy;
using namespace eddy::test;

namespace {

constexpr int kEdge = 2;  // nodes of the box's border left out of the error measures

struct SdfError {
    double max_err = 0, max_err_far = 0;  // voxels; far: nodes more than 1 voxel from the surface
    double grad_ok = 0;                   // fraction of interior nodes with |grad phi| in [0.9, 1.1]
    std::size_t nodes = 0;
};

// The shape's exact signed distance `exact` (m, negative inside) is turned into a smooth indicator
// rho = iso - exact / (4 h) on the grid, which pin_distances + sweep turn back into a distance.
template <int D>
SdfError check_sdf(const std::function<float(const Vec<D>&)>& exact, int blocks, float h, bool wavefront) {
    const float iso = 0.5f;
    SparseGrid<D> rho = box_grid<D>(blocks, 8, h, [&](const Vec<D>& x) { return iso - exact(x) / (4.0f * h); });
    ExecContext exec(2);
    std::vector<std::uint8_t> pinned;
    SparseGrid<D> phi = pin_distances<D>(rho, iso, pinned, exec);
    if (wavefront) sweep_wavefront<D>(phi, pinned, exec);
    else sweep_serial<D>(phi, pinned);
    SdfError e;
    std::size_t grad_n = 0, grad_good = 0;
    phi.for_each_node([&](const std::array<int, D>& i, float v) {
        // The box's outer faces: a node there lacks upwind neighbours on one side, and the one-sided
        // update overestimates (a boundary effect of the test box, which the sparse grid's padding
        // keeps away from the surface).
        for (int a = 0; a < D; ++a)
            if (i[a] < kEdge || i[a] > blocks * 8 - 1 - kEdge) return;
        const float ex = exact(phi.position(i));
        const double err = std::abs(double(v) - ex) / h;
        e.max_err = std::max(e.max_err, err);
        if (std::abs(ex) > h) e.max_err_far = std::max(e.max_err_far, err);
        ++e.nodes;
        // Central-difference gradient where all neighbours exist and the shape's distance is smooth
        // (not on a medial axis: the exact gradient there is itself ~1 on both sides).
        bool inner = true;
        for (int a = 0; a < D; ++a) inner &= i[a] > 0 && i[a] < blocks * 8 - 1;
        if (!inner) return;
        double g2 = 0, ge2 = 0;
        for (int a = 0; a < D; ++a) {
            auto ip = i, im = i;
            ++ip[a];
            --im[a];
            const double d = (double(phi.at(ip)) - phi.at(im)) / (2.0 * h);
            const double de = (double(exact(phi.position(ip))) - exact(phi.position(im))) / (2.0 * h);
            g2 += d * d;
            ge2 += de * de;
        }
        if (std::abs(std::sqrt(ge2) - 1.0) > 0.05) return;  // the exact field's own kinks
        ++grad_n;
        grad_good += std::sqrt(g2) >= 0.9 && std::sqrt(g2) <= 1.1;
    });
    e.grad_ok = grad_n ? double(grad_good) / double(grad_n) : 0.0;
    return e;
}

void report(const char* name, const SdfError& e) {
    std::printf("%-12s nodes %7zu  max error %.3f voxel (%.3f beyond 1 voxel)  |grad| in [0.9,1.1]: %.1f%%\n", name,
                e.nodes, e.max_err, e.max_err_far, 100.0 * e.grad_ok);
    report_figure(std::string("surface.sdf_") + name + ".max_error_voxel", e.max_err);
    report_figure(std::string("surface.sdf_") + name + ".grad_ok_percent", 100.0 * e.grad_ok);
}

}  // namespace

TEST(SurfaceValidation, AnalyticSignedDistance3D) {
    const float h = 0.01f;  // 4 blocks of 8: a 32^3 grid, 0.31 m
    const Vec3 c{{0.155f, 0.16f, 0.152f}};
    const Vec3 n = Vec3{{1, 2, 3}} * (1.0f / std::sqrt(14.0f));
    const std::pair<const char*, std::function<float(const Vec3&)>> shapes[] = {
        {"plane", [&](const Vec3& x) { return dot(x - c, n); }},
        {"sphere", [&](const Vec3& x) { return norm(x - c) - 0.1f; }},
        {"torus", [&](const Vec3& x) {
             const Vec3 d = x - c;
             const float q = std::sqrt(d[0] * d[0] + d[1] * d[1]) - 0.09f;
             return std::sqrt(q * q + d[2] * d[2]) - 0.04f;
         }},
    };
    for (const auto& [name, f] : shapes) {
        SCOPED_TRACE(name);
        const SdfError e = check_sdf<3>(f, 4, h, true);
        report(name, e);
        EXPECT_LT(e.max_err_far, 1.0);
        EXPECT_LT(e.max_err, 1.0);
        EXPECT_GT(e.grad_ok, 0.9);
    }
}

TEST(SurfaceValidation, AnalyticSignedDistance2D) {
    const float h = 0.01f;  // 8 blocks of 8: a 64^2 grid
    const Vec2 c{{0.31f, 0.32f}};
    const Vec2 n = Vec2{{1, 2}} * (1.0f / std::sqrt(5.0f));
    const std::pair<const char*, std::function<float(const Vec2&)>> shapes[] = {
        {"line", [&](const Vec2& x) { return dot(x - c, n); }},
        {"circle", [&](const Vec2& x) { return norm(x - c) - 0.2f; }},
        {"annulus", [&](const Vec2& x) { return std::abs(norm(x - c) - 0.18f) - 0.06f; }},  // the torus' section
    };
    for (const auto& [name, f] : shapes) {
        SCOPED_TRACE(name);
        const SdfError e = check_sdf<2>(f, 8, h, false);
        report(name, e);
        EXPECT_LT(e.max_err, 1.0);
        EXPECT_GT(e.grad_ok, 0.9);
    }
}

// Particles on a lattice of spacing 2r inside a ball of radius R (radius convention: a particle stands
// for a cube of side 2r, so the fluid's volume is N (2r)^3 ~ 4/3 pi R^3 and its surface is at R, not
// R + r). The lattice's own staircase puts the cells' outer faces up to r from the sphere: R = 15.5 r
// keeps it symmetric (cells from 14.9 r to 15.9 r); at R = 16 r the axis cells end at 15 r and the
// farthest vertex is 1.00 voxel away (docs/surface.md).
TEST(SurfaceValidation, LatticeSphereGivesClosedManifoldSphere) {
    SurfaceSettings s = sphere_settings();
    const float r = s.particle_radius, R = 15.5f * r;
    const Vec3 c{{0.5f, 0.25f, -0.125f}};
    const auto p = lattice_ball(r, R, c);
    ExecContext exec(2);
    const auto res = reconstruct_surface<3>(p, s, exec);
    const Mesh<3>& m = res.mesh;
    const Topology t = topology(m);
    EXPECT_EQ(t.unmatched_directed_edges, 0u);  // closed, consistently oriented
    EXPECT_EQ(t.repeated_directed_edges, 0u);   // every edge in exactly two triangles
    EXPECT_EQ(t.non_manifold_vertices, 0u);    // one disc of triangles around every vertex
    EXPECT_EQ(t.euler, 2);
    const double analytic = 4.0 / 3.0 * M_PI * double(R) * R * R;
    const double vol = enclosed_volume(m);
    double worst = 0.0;
    for (const auto& v : m.vertices) worst = std::max(worst, std::abs(double(norm(v - c)) - R));
    std::printf("sphere R = 15.5 r, %zu particles (N (2r)^3 / (4/3 pi R^3) = %.4f): %zu triangles, volume %.4f of "
                "analytic, farthest vertex %.3f voxel from the sphere, %zu blocks, %.1f MB per grid\n",
                p.size(), p.size() * 8.0 * r * r * r / analytic, m.cells.size(), vol / analytic,
                worst / s.voxel(), res.blocks, res.grid_bytes / 1e6);
    report_figure("surface.lattice_ball.euler", double(t.euler));
    report_figure("surface.lattice_ball.volume_ratio", vol / analytic);
    report_figure("surface.lattice_ball.farthest_vertex_voxel", worst / s.voxel());
    EXPECT_NEAR(vol / analytic, 1.0, 0.05);
    EXPECT_LT(worst, s.voxel());
    // Normals (from the distance gradient) point away from the centre.
    std::size_t outward = 0;
    for (std::size_t i = 0; i < m.vertices.size(); ++i) outward += dot(m.normals[i], m.vertices[i] - c) > 0.0f;
    EXPECT_EQ(outward, m.vertices.size());
}

TEST(SurfaceValidation, LatticeDiscGivesClosedCircle) {
    SurfaceSettings s = sphere_settings();
    const float r = s.particle_radius, R = 19.5f * r;  // lattice-symmetric, as the sphere above
    ExecContext exec(2);
    const auto res = reconstruct_surface<2>(lattice_disc(r, R), s, exec);
    const double analytic = M_PI * double(R) * R;
    EXPECT_NEAR(enclosed_volume(res.mesh) / analytic, 1.0, 0.05);
    for (const auto& v : res.mesh.vertices) ASSERT_LT(std::abs(norm(v) - R), s.voxel());
    std::vector<int> deg(res.mesh.vertices.size(), 0);
    for (const auto& cell : res.mesh.cells) {
        ++deg[cell[0]];
        ++deg[cell[1]];
    }
    for (int d : deg) ASSERT_EQ(d, 2);
}

// OpenVDB's fast sweeping (tools::fogToSdf, FastSweeping.h) on the very same density grid.
TEST(SurfaceValidation, AgreesWithOpenVdbFogToSdf) {
    SurfaceSettings s = sphere_settings();
    const float r = s.particle_radius;
    ExecContext exec(2);
    const auto p = lattice_ball(r, 12.0f * r, Vec3{{0.1f, 0.2f, 0.3f}});
    const SparseGrid<3> rho = splat_density<3>(p, s, exec);
    std::vector<std::uint8_t> pinned;
    SparseGrid<3> phi = pin_distances<3>(rho, s.iso, pinned, exec);
    sweep_wavefront<3>(phi, pinned, exec);
    const SparseGrid<3> ref = exec.run([&] { return vdb::fog_to_sdf(rho, s.iso); });
    double max_near = 0, sum = 0, max_all = 0;
    std::size_t n = 0, near_n = 0;
    for (std::size_t k = 0; k < phi.values.size(); ++k) {
        if (std::abs(ref.values[k]) >= FLT_MAX || std::abs(phi.values[k]) >= FLT_MAX) continue;
        const double d = std::abs(double(phi.values[k]) - ref.values[k]) / s.voxel();
        ASSERT_EQ(phi.values[k] < 0, ref.values[k] < 0) << "sign differs at node " << k;
        max_all = std::max(max_all, d);
        sum += d;
        ++n;
        if (std::abs(ref.values[k]) < 3.0f * s.voxel()) {
            max_near = std::max(max_near, d);
            ++near_n;
        }
    }
    std::printf("vs OpenVDB fogToSdf: %zu nodes, mean |difference| %.4f voxel, max %.3f (within 3 voxels of the "
                "surface, %zu nodes: max %.3f)\n", n, sum / n, max_all, near_n, max_near);
    report_figure("surface.openvdb.mean_difference_voxel", sum / n);
    report_figure("surface.openvdb.max_difference_voxel", max_all);
    ASSERT_GT(n, phi.values.size() / 2);
    EXPECT_LT(sum / n, 0.1);
    EXPECT_LT(max_near, 0.25);
    EXPECT_LT(max_all, 0.5);
}
