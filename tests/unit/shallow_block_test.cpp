// A shallow-water solver built on a block of a grid (GridBlock: what the distributed layer runs on each
// process) computes its owned cells with the same bits as the whole grid, given a fresh halo every step;
// and a semi-Lagrangian back-trace that leaves the halo is counted, not silently wrong.
#include <gtest/gtest.h>

#include <cstring>

#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"

using namespace eddy;

namespace {

ShallowWaterSimulation make(nlohmann::json settings, const char* u = "0.3*sin(3*y)", bool open = true) {
    nlohmann::json j = {{"name", "block"},
                        {"method", "shallow_water"},
                        {"grid", {{"cells", {48, 40}}, {"dx", 0.05}}},
                        {"terrain", "0.05*sin(4*x)*cos(3*y)"},
                        {"water", {{"surface", "0.3 + 0.05*exp(-20*((x-1.2)^2+(y-1)^2))"}, {"u", u}}},
                        {"drops", {{{"rate", 40}, {"radius", 0.15}, {"height", 0.03}, {"seed", 7}}}},
                        {"sources", {{{"min", {0.1, 0.1}}, {"max", {0.4, 1.9}}, {"rate", 0.05}}}},
                        {"settings", settings}};
    if (open) j["borders"] = {{"x", "open"}, {"y", "wall"}};
    return make_shallow_water(parse_scene(j, "block.json"));
}

// The block of cells [x0, x1) x [y0, y1) with a halo `halo` cells wide (cut at the grid's border).
struct Cut {
    GridBlock b;
    int nx = 0, ny = 0;
};
Cut cut(const ShallowWaterGrid<float>& g, int x0, int x1, int y0, int y1, int halo) {
    Cut c;
    c.b.i0 = std::max(0, x0 - halo);
    c.b.j0 = std::max(0, y0 - halo);
    c.b.global_nx = g.nx;
    c.b.global_ny = g.ny;
    c.nx = std::min(g.nx, x1 + halo) - c.b.i0;
    c.ny = std::min(g.ny, y1 + halo) - c.b.j0;
    c.b.own_i0 = x0 - c.b.i0;
    c.b.own_i1 = x1 - c.b.i0;
    c.b.own_j0 = y0 - c.b.j0;
    c.b.own_j1 = y1 - c.b.j0;
    return c;
}

// Copies every cell and face of the block's halo from the whole grid (what the exchange does).
void refresh_halo(ShallowWaterGrid<float>& part, const Cut& c, const ShallowWaterGrid<float>& whole) {
    for (int j = 0; j < c.ny; ++j) {
        std::memcpy(&part.depth[part.cell(0, j)], &whole.depth[whole.cell(c.b.i0, c.b.j0 + j)], sizeof(float) * c.nx);
        std::memcpy(&part.ink[part.cell(0, j)], &whole.ink[whole.cell(c.b.i0, c.b.j0 + j)], sizeof(float) * c.nx);
        std::memcpy(&part.u[part.uface(0, j)], &whole.u[whole.uface(c.b.i0, c.b.j0 + j)], sizeof(float) * (c.nx + 1));
    }
    for (int j = 0; j <= c.ny; ++j)
        std::memcpy(&part.w[part.wface(0, j)], &whole.w[whole.wface(c.b.i0, c.b.j0 + j)], sizeof(float) * c.nx);
}

void expect_owned_equal(const ShallowWaterGrid<float>& part, const Cut& c, const ShallowWaterGrid<float>& whole, int step) {
    for (int j = c.b.own_j0; j < c.b.own_j1; ++j)
        for (int i = c.b.own_i0; i < c.b.own_i1; ++i) {
            const int gi = i + c.b.i0, gj = j + c.b.j0;
            ASSERT_EQ(part.depth[part.cell(i, j)], whole.depth[whole.cell(gi, gj)]) << "step " << step << " cell " << gi << "," << gj;
            ASSERT_EQ(part.ink[part.cell(i, j)], whole.ink[whole.cell(gi, gj)]) << "step " << step;
            ASSERT_EQ(part.u[part.uface(i, j)], whole.u[whole.uface(gi, gj)]) << "step " << step;
            ASSERT_EQ(part.w[part.wface(i, j)], whole.w[whole.wface(gi, gj)]) << "step " << step;
        }
}

void blocks_follow_the_whole(const nlohmann::json& settings) {
    ShallowWaterSimulation sim = make(settings);
    auto& whole = std::get<ShallowWaterSolver<float>>(sim.solver);
    ExecContext exec(2);
    const auto& g = whole.grid();
    // Four blocks: at corners, at an open border, and one inside.
    const Cut cuts[] = {cut(g, 0, 20, 0, 15, 8), cut(g, 20, 48, 0, 15, 8), cut(g, 10, 30, 15, 28, 8), cut(g, 30, 48, 28, 40, 8)};
    std::vector<ShallowWaterSolver<float>> parts;
    for (std::size_t k = 0; k < std::size(cuts); ++k) parts.emplace_back(whole, cuts[k].b, cuts[k].nx, cuts[k].ny, k == 0);
    for (int step = 0; step < 40; ++step) {
        const double dt = whole.suggest_dt();
        for (auto& p : parts) ASSERT_EQ(p.suggest_dt(), dt);
        double inflow = 0.0;
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const ShallowWaterStats st = parts[k].step(dt, exec);
            EXPECT_EQ(st.halo_overrun, 0u);
            inflow += st.inflow;
        }
        const ShallowWaterStats all = whole.step(dt, exec);
        EXPECT_GT(all.inflow, 0.0);
        for (std::size_t k = 0; k < parts.size(); ++k) {
            expect_owned_equal(parts[k].grid(), cuts[k], g, step);
            refresh_halo(parts[k].grid(), cuts[k], g);
            parts[k].set_global_maxima(all.max_speed, all.max_depth);
        }
    }
}

}  // namespace

TEST(ShallowBlock, OwnedCellsHaveTheWholeGridsBitsConservative) { blocks_follow_the_whole(nlohmann::json::object()); }
TEST(ShallowBlock, OwnedCellsHaveTheWholeGridsBitsSemiLagrangianVorticity) {
    blocks_follow_the_whole({{"advection", "semi_lagrangian"}, {"advection_iterations", 2}, {"advection_step", 0.5}, {"vorticity", 3}});
}
TEST(ShallowBlock, OwnedCellsHaveTheWholeGridsBitsUpwind) { blocks_follow_the_whole({{"advection", "upwind"}}); }

TEST(ShallowBlock, StatisticsCountOwnedCellsOnly) {
    ShallowWaterSimulation sim = make(nlohmann::json::object());
    auto& whole = std::get<ShallowWaterSolver<float>>(sim.solver);
    const auto& g = whole.grid();
    const Cut a = cut(g, 0, 24, 0, 40, 6), b = cut(g, 24, 48, 0, 40, 6);
    ShallowWaterSolver<float> pa(whole, a.b, a.nx, a.ny, true), pb(whole, b.b, b.nx, b.ny, false);
    EXPECT_EQ(pb.total_inflow(), 0.0);  // one block keeps the totals
    ExecContext exec(1);
    const double dt = whole.suggest_dt();
    const ShallowWaterStats sa = pa.step(dt, exec), sb = pb.step(dt, exec), sw = whole.step(dt, exec);
    EXPECT_EQ(std::max(sa.max_depth, sb.max_depth), sw.max_depth);
    EXPECT_EQ(std::max(sa.max_speed, sb.max_speed), sw.max_speed);
    EXPECT_NEAR(sa.inflow + sb.inflow, sw.inflow, 1e-12 * sw.inflow);
    EXPECT_NEAR(sa.outflow + sb.outflow, sw.outflow, 1e-9);
    EXPECT_EQ(sa.clamped + sb.clamped, sw.clamped);
}

TEST(ShallowBlock, BackTracePastTheHaloIsCounted) {
    // 3 m/s at 0.05 m cells with a 0.04 s step (the first advection comes before any clamp): a back-trace
    // of 2.4 cells, past a 1-cell halo.
    ShallowWaterSimulation sim = make({{"advection", "semi_lagrangian"}, {"time_step", 0.04}}, "3", false);
    auto& whole = std::get<ShallowWaterSolver<float>>(sim.solver);
    const Cut c = cut(whole.grid(), 20, 30, 10, 30, 1);
    ShallowWaterSolver<float> part(whole, c.b, c.nx, c.ny, true);
    ExecContext exec(1);
    EXPECT_GT(part.step(0.04, exec).halo_overrun, 0u);
    EXPECT_EQ(whole.step(0.04, exec).halo_overrun, 0u);  // the whole grid has no halo to leave
}
