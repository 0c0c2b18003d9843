// Decimation on a real fluid surface (issue 32 part 2): a dam break frame from eddy run, reconstructed
// and decimated by error and by count. Closed, manifold, oriented, the Euler characteristic kept, the
// two-sided Hausdorff distance within the bound (sampled independently of decimate's own check, 28
// points per triangle both ways), attributes carried exactly. Skipped without meshoptimizer.
#include <gtest/gtest.h>

#include <cstring>

#include "eddy/io.hpp"
#include "eddy/surface.hpp"
#include "decimate_support.hpp"
#include "surface_support.hpp"
#include "test_support.hpp"

using namespace eddy;
using namespace eddy::test;

namespace {

struct Case {
    float error_voxels, ratio;
};

// dam_break_3d at 0.4 s (with `set`'s options), its surface decimated by each case and checked.
void check_dam_break_frame(const fs::path& dir, const std::string& set, const std::vector<Case>& cases) {
    const auto run = run_cli("run dam_break_3d --until 0.4 --fps 5 --format vtk --quiet --threads 2 " + set + " --out '" +
                             (dir / "run").string() + "'");
    ASSERT_EQ(run.code, 0) << run.output;
    const ParticleSet<3> p = io::read_particles<3>(dir / "run" / "frames" / "particles_00002.vtp", {});
    SurfaceSettings s;
    s.particle_radius = 0.005f;  // dam_break_3d's
    ExecContext exec(2);
    Mesh<3> original = reconstruct_surface<3>(p.position, s, exec).mesh;
    const Topology t0 = topology(original);
    ASSERT_EQ(t0.unmatched_directed_edges + t0.repeated_directed_edges + t0.non_manifold_vertices, 0u);
    ASSERT_GT(original.cells.size(), 20000u);
    VertexAttribute id{"id", 1, {}};
    for (std::size_t i = 0; i < original.vertices.size(); ++i) id.values.push_back(float(i));
    original.attributes.push_back(id);
    const float voxel = s.voxel();
    for (const Case& c : cases) {
        Mesh<3> m = original;
        const DecimateReport rep = decimate(m, DecimateSettings{c.error_voxels * voxel, c.ratio}, exec);
        SCOPED_TRACE(::testing::Message() << "error " << c.error_voxels << " voxel, ratio " << c.ratio << ": "
                                          << rep.triangles_before << " -> " << rep.triangles_after << ", "
                                          << rep.frozen << " frozen, " << rep.passes << " passes");
        const Topology t = topology(m);
        EXPECT_EQ(t.unmatched_directed_edges, 0u);
        EXPECT_EQ(t.repeated_directed_edges, 0u);
        EXPECT_EQ(t.degenerate_cells, 0u);
        EXPECT_EQ(t.non_manifold_vertices, 0u);
        EXPECT_EQ(t.euler, t0.euler);
        EXPECT_LT(m.cells.size(), original.cells.size() / 3);  // it does decimate
        // The count target where the error bound allows it (1 voxel alone keeps about 6%; 0.2 decides).
        if (c.ratio > 0.0f) EXPECT_LE(double(m.cells.size()), double(c.ratio) * double(original.cells.size()) * 1.1);
        if (c.error_voxels > 0.0f) {
            const float h = hausdorff(original, m, 2.0f * voxel, 6);
            EXPECT_LE(h, c.error_voxels * voxel) << "Hausdorff " << h / voxel << " voxel";
        }
        for (std::size_t i = 0; i < m.vertices.size(); ++i) {
            const std::size_t o = std::size_t(m.attributes[0].values[i]);
            ASSERT_EQ(std::memcmp(&m.vertices[i], &original.vertices[o], sizeof(Vec3)), 0);
            ASSERT_EQ(std::memcmp(&m.normals[i], &original.normals[o], sizeof(Vec3)), 0);
        }
    }
}

class DecimateDamBreak : public TempDirTest {};

}  // namespace

TEST_F(DecimateDamBreak, StaysClosedManifoldAndWithinTheBound) {
    if (!decimation_available()) GTEST_SKIP() << "eddy was built without meshoptimizer (libmeshoptimizer-dev)";
    // The frame these cases were measured on: WCSPH on Akinci's particles (its default before issue 40). On the
    // default smooth walls the frame differs, and at 0.5 voxel a whole piece whose Euler characteristic the
    // first round changed is frozen: 85,876 triangles -> 64,088 (61,576 frozen), where this frame gives < 1/3.
    // Not fixed yet (docs/surface.md); the other five cases pass on that frame.
    check_dam_break_frame(dir, "--set settings.boundary_model=particles",
                          {{0.25f, 0.0f}, {0.5f, 0.0f}, {1.0f, 0.0f}, {0.0f, 0.1f}, {0.0f, 0.05f}, {1.0f, 0.2f}});
}

// The same scene on smooth walls (boundary_model "smooth") at ratio 0.1: its frame's defects froze patches
// that ate the whole count budget, the rest's target fell to 0 (meshoptimizer's "as few as you can"),
// which closed its handles and froze it whole: 86,428 triangles in, 86,428 out. The unfrozen part now
// keeps at least the ratio of itself: 8,896 out (the bound 9,507).
TEST_F(DecimateDamBreak, FrozenPatchesDoNotStarveTheRestAtRatio) {
    if (!decimation_available()) GTEST_SKIP() << "eddy was built without meshoptimizer (libmeshoptimizer-dev)";
    check_dam_break_frame(dir, "--set settings.boundary_model=smooth", {{0.0f, 0.1f}});
}
