// Anisotropic kernels (Yu & Turk 2013; issue 32) against what a renderer shows: the free surface of a
// DFSPH tank at rest must be a plane (the isotropic kernel leaves the particles' lattice as ripples),
// a ball keeps its volume, and a sheet two particles thick stays one sheet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "eddy/surface.hpp"
#include "figures.hpp"
#include "surface_support.hpp"

using namespace eddy;
using namespace eddy::test;

namespace {

// The tank: DFSPH, r = 1 cm, 20 cm of water in a 30 cm square box; its particles at 1, 1.5
// and 2 s.
std::vector<std::vector<Vec3>> settled_tank(float& r_out, double& width_out) {
    const double r = 0.01, width = 0.3, depth = 0.2;
    nlohmann::json j = {{"name", "tank"}, {"dimension", 3}, {"method", "dfsph"}, {"particle_radius", r},
                        {"gravity", {0, -9.81, 0}},
                        {"boundaries", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {width, depth + 0.1, width}}}}},
                        {"fluids", {{{"shape", "box"}, {"min", {0, 0, 0}}, {"max", {width, depth, width}}}}}};
    // The fluid as issue 32 measured the surface on: the Akinci walls. With the smooth walls (the default
    // since issue 40) the same tank's surface reads 0.035 r anisotropic, 0.049 r isotropic (0.03 r asked):
    // the particles along the side walls now sit at 0.7-0.9 r from them, not 0.25 r, and the top row
    // bends down there (docs/methods.md); this test is about the reconstruction, so it keeps that fluid.
    j["settings"] = {{"boundary_model", "particles"}};
    ExecContext exec(2);
    Simulation sim = make_simulation(parse_scene(j, "tank"), 1'000'000, exec);
    auto& ps = std::get<ParticleSimulation<3>>(sim);
    std::vector<std::vector<Vec3>> out;
    for (const double t : {1.0, 1.5, 2.0}) {
        while (ps.time < t - 1e-9) {
            const StepStats st = step(sim, exec, t);
            if (st.non_finite) {
                ADD_FAILURE() << "tank diverged at t = " << ps.time;
                return out;
            }
        }
        out.emplace_back(ps.fluid.position.begin(), ps.fluid.position.end());
    }
    r_out = float(r);
    width_out = width;
    return out;
}

struct PlaneFit {
    double rms = 0.0;    // m: residual heights about the least-squares plane y = a + b x + c z
    double mean = 0.0;   // m: the mean height
    std::size_t n = 0;   // vertices used
};

// The upward-facing vertices over the middle half of the tank (away from the walls' meniscus).
PlaneFit fit_top(const Mesh<3>& m, double width) {
    std::vector<std::array<double, 3>> pts;
    for (std::size_t i = 0; i < m.vertices.size(); ++i) {
        const Vec3 v = m.vertices[i];
        if (m.normals[i][1] < 0.9f) continue;
        if (v[0] < 0.25 * width || v[0] > 0.75 * width || v[2] < 0.25 * width || v[2] > 0.75 * width) continue;
        pts.push_back({v[0], v[1], v[2]});
    }
    PlaneFit f;
    f.n = pts.size();
    if (pts.size() < 10) return f;
    // Normal equations for y = a + b x + c z.
    double A[3][3] = {}, rhs[3] = {};
    for (const auto& p : pts) {
        const double row[3] = {1.0, p[0], p[2]};
        for (int i = 0; i < 3; ++i) {
            rhs[i] += row[i] * p[1];
            for (int k = 0; k < 3; ++k) A[i][k] += row[i] * row[k];
        }
    }
    // Cramer's rule.
    auto det3 = [](double M[3][3]) {
        return M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
               M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
    };
    const double d = det3(A);
    double coef[3];
    for (int c = 0; c < 3; ++c) {
        double M[3][3];
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k) M[i][k] = k == c ? rhs[i] : A[i][k];
        coef[c] = det3(M) / d;
    }
    double ss = 0.0, sum = 0.0;
    for (const auto& p : pts) {
        const double e = p[1] - (coef[0] + coef[1] * p[0] + coef[2] * p[2]);
        ss += e * e;
        sum += p[1];
    }
    f.rms = std::sqrt(ss / pts.size());
    f.mean = sum / pts.size();
    return f;
}

}  // namespace

TEST(SurfaceAnisotropic, TankAtRestSurfaceIsFlat) {
    float r = 0;
    double width = 0;
    const auto frames = settled_tank(r, width);
    ASSERT_EQ(frames.size(), 3u);
    ExecContext exec(2);
    double sum_iso = 0.0, sum_an = 0.0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        const auto& p = frames[f];
        SurfaceSettings s;
        s.particle_radius = r;
        const auto iso = reconstruct_surface<3>(p, s, exec);
        s.anisotropic = true;
        const auto an = reconstruct_surface<3>(p, s, exec);
        const PlaneFit fi = fit_top(iso.mesh, width), fa = fit_top(an.mesh, width);
        std::printf("tank at rest (DFSPH, r = 1 cm, 20 cm, %zu particles) at %.1f s: top surface RMS about a plane: "
                    "isotropic %.4f r (%zu vertices, mean height %.4f m), anisotropic %.4f r (%zu vertices, mean "
                    "height %.4f m)\n",
                    p.size(), 1.0 + 0.5 * f, fi.rms / r, fi.n, fi.mean, fa.rms / r, fa.n, fa.mean);
        ASSERT_GT(fa.n, 100u);
        ASSERT_GT(fi.n, 100u);
        sum_iso += fi.rms / r;
        sum_an += fa.rms / r;
        // The two surfaces at the same height (the kernels are never thinner than the isotropic one).
        EXPECT_NEAR(fa.mean, fi.mean, 0.75 * r);
    }
    std::printf("mean over the three frames: isotropic %.4f r, anisotropic %.4f r (issue 32 asks 0.03 r)\n", sum_iso / 3,
                sum_an / 3);
    report_figure("surface.anisotropic_tank.rms_r", sum_an / 3);
    report_figure("surface.anisotropic_tank.isotropic_rms_r", sum_iso / 3);
    EXPECT_LE(sum_an / 3, 0.03);
    EXPECT_LT(sum_an, 0.9 * sum_iso);  // what the option is for
}

namespace {

// Connected pieces of a mesh (through shared vertices).
std::size_t pieces(const Mesh<3>& m) {
    std::vector<std::uint32_t> parent(m.vertices.size());
    for (std::uint32_t i = 0; i < parent.size(); ++i) parent[i] = i;
    auto find = [&](std::uint32_t a) {
        while (parent[a] != a) a = parent[a] = parent[parent[a]];
        return a;
    };
    for (const auto& c : m.cells) {
        parent[find(c[1])] = find(c[0]);
        parent[find(c[2])] = find(c[0]);
    }
    std::vector<std::uint8_t> used(m.vertices.size(), 0);
    for (const auto& c : m.cells) used[c[0]] = 1;
    std::size_t n = 0;
    for (std::uint32_t i = 0; i < parent.size(); ++i) n += used[i] && find(i) == i;
    return n;
}

// A deterministic jitter in [-a, a] per particle and axis.
float jitter(std::uint32_t i, int axis, float a) {
    std::uint32_t h = i * 2654435761u ^ std::uint32_t(axis + 1) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return a * (float(h & 0xffff) / 32767.5f - 1.0f);
}

}  // namespace

// The lattice ball of SurfaceValidation.LatticeSphereGivesClosedManifoldSphere, and the same ball with
// every particle jittered by up to 0.3 r (as a simulated fluid is never a lattice).
TEST(SurfaceAnisotropic, BallKeepsItsVolume) {
    SurfaceSettings s = sphere_settings();
    s.anisotropic = true;
    const float r = s.particle_radius;
    ExecContext exec(2);
    for (const float R : {12.0f * r, 15.5f * r, 20.0f * r}) {
        for (const float jit : {0.0f, 0.3f * r}) {
            auto p = lattice_ball(r, R, Vec3{{0.1f, 0.2f, 0.3f}});
            for (std::uint32_t i = 0; i < p.size(); ++i)
                for (int a = 0; a < 3; ++a) p[i][a] += jitter(i, a, jit);
            const auto res = reconstruct_surface<3>(p, s, exec);
            const auto kernels = anisotropic_kernels<3>(p, s, exec);
            std::printf("  kernels: %zu of %zu isotropic (round), %zu isolated\n", kernels.rounded, p.size(),
                        kernels.isolated);
            SurfaceSettings si = s;
            si.anisotropic = false;
            const double vol_iso = enclosed_volume(reconstruct_surface<3>(p, si, exec).mesh);
            const Topology t = topology(res.mesh);
            const double analytic = 4.0 / 3.0 * M_PI * double(R) * R * R;
            const double vol = enclosed_volume(res.mesh);
            std::printf("ball R = %.1f r, jitter %.1f r, %zu particles: volume / (4/3 pi R^3): anisotropic %.4f, isotropic "
                        "%.4f (the particles' N (2r)^3: %.4f), %zu triangles, euler %ld\n",
                        R / r, jit / r, p.size(), vol / analytic, vol_iso / analytic, p.size() * 8.0 * r * r * r / analytic,
                        res.mesh.cells.size(), t.euler);
            report_figure("surface.anisotropic_ball.r" + std::to_string(std::lround(10 * R / r)) + "_jitter" +
                              std::to_string(std::lround(10 * jit / r)) + ".volume_ratio",
                          vol / analytic);
            EXPECT_EQ(t.unmatched_directed_edges, 0u);
            EXPECT_EQ(t.euler, 2);
            EXPECT_NEAR(vol / analytic, 1.0, 0.035) << "R = " << R / r << " r, jitter " << jit / r << " r";
            EXPECT_NEAR(vol / vol_iso, 1.0, 0.02) << "R = " << R / r << " r, jitter " << jit / r << " r";
        }
    }
}

// A sheet two particles thick, stretched in its plane (40 x 40 x 2, spacing 2.4 r in the plane, 2r
// across, jittered by 0.3 r): the isotropic kernel tears it (holes: Euler characteristic -2, measured);
// the anisotropic kernels reach along it, so it stays one closed sheet: one piece, no holes (Euler
// characteristic 2). Stretched to 2.8 r both tear (13 pieces anisotropic, 180 isotropic).
TEST(SurfaceAnisotropic, ThinSheetStaysOneSheet) {
    SurfaceSettings s = sphere_settings();
    const float r = s.particle_radius;
    const float spread = 2.4f;  // in-plane spacing (r): a sheet thinning as it stretches
    std::vector<Vec3> p;
    for (int k = 0; k < 40; ++k)
        for (int j = 0; j < 2; ++j)
            for (int i = 0; i < 40; ++i) {
                const std::uint32_t id = std::uint32_t(p.size());
                p.push_back(Vec3{{spread * r * i + jitter(id, 0, 0.3f * r), 2 * r * j + jitter(id, 1, 0.3f * r),
                                  spread * r * k + jitter(id, 2, 0.3f * r)}});
            }
    ExecContext exec(2);
    const auto iso = reconstruct_surface<3>(p, s, exec);
    s.anisotropic = true;
    const auto an = reconstruct_surface<3>(p, s, exec);
    const Topology ti = topology(iso.mesh), ta = topology(an.mesh);
    std::printf("sheet 40 x 40 x 2 particles (in-plane spacing 2.4 r, jitter 0.3 r): isotropic %zu pieces, euler %ld, volume %.3g m^3; "
                "anisotropic %zu pieces, euler %ld, volume %.3g m^3 (particles: %.3g m^3)\n",
                pieces(iso.mesh), ti.euler, enclosed_volume(iso.mesh), pieces(an.mesh), ta.euler,
                enclosed_volume(an.mesh), p.size() * 8.0 * r * r * r);
    EXPECT_EQ(pieces(an.mesh), 1u);
    EXPECT_EQ(ta.euler, 2);
    EXPECT_EQ(ta.unmatched_directed_edges, 0u);
}
