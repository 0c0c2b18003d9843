// Shallow water: scene keys and their errors, the heightmap, the files a run writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eddy/error.hpp"
#include "eddy/render.hpp"
#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "test_support.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {


using test::expect_input_error;
using test::TempDir;

nlohmann::json basin() {
    return {{"name", "basin"},
            {"method", "shallow_water"},
            {"grid", {{"cells", {20, 10}}, {"dx", 0.1}}},
            {"terrain", "0.1*x"},
            {"water", {{"surface", "0.5"}}}};
}

ShallowWaterSimulation make(const nlohmann::json& j, const std::vector<std::string>& sets = {}) {
    return make_shallow_water(parse_scene(j, "basin.json", sets));
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST(ShallowWaterScene, BadGridsAreRejectedNamingTheKey) {
    auto with = [](const std::string& key, nlohmann::json v) {
        nlohmann::json j = basin();
        j["grid"][key] = std::move(v);
        return j;
    };
    expect_input_error([&] { make(with("cells", {0, 10})); }, {"basin.json", "grid.cells", "[1, 65536]"});
    expect_input_error([&] { make(with("cells", {20})); }, {"basin.json", "grid.cells", "[nx, ny]"});
    expect_input_error([&] { make(with("cells", {2.5, 3})); }, {"grid.cells", "whole numbers"});
    expect_input_error([&] { make(with("dx", -0.1)); }, {"basin.json", "grid.dx", "-0.1", "allowed"});
    expect_input_error([&] { make(with("dx", 0)); }, {"grid.dx", "allowed: (0"});
    expect_input_error([&] { make(with("size", 3)); }, {"grid", "unknown key 'size'", "cells, dx"});
    nlohmann::json j = basin();
    j.erase("grid");
    expect_input_error([&] { make(j); }, {"basin.json", "grid", "missing"});
}

TEST(ShallowWaterScene, BadKeysAndExpressionsAreRejected) {
    nlohmann::json j = basin();
    j["terrain"] = "0.1*x + ";
    expect_input_error([&] { make(j); }, {"basin.json", "terrain", "0.1*x + "});
    j = basin();
    j["terrain"] = "height(x)";
    expect_input_error([&] { make(j); }, {"terrain", "height(x)"});
    j = basin();
    j["water"]["surface"] = "sqrt(-1 - x)";
    expect_input_error([&] { make(j); }, {"water.surface", "not finite"});
    j = basin();
    j["water"]["depth"] = "1";
    expect_input_error([&] { make(j); }, {"water", "either 'surface'", "not both"});
    j = basin();
    j["borders"] = {{"x", "periodic"}};
    expect_input_error([&] { make(j); }, {"borders.x", "\"periodic\"", "wall", "open"});
    j = basin();
    j["particle_radius"] = 0.1;
    expect_input_error([&] { make(j); }, {"basin.json", "unknown key 'particle_radius'", "grid"});
    j = basin();
    j["dimension"] = 3;
    expect_input_error([&] { make(j); }, {"dimension", "allowed: 2"});
    j = basin();
    j["settings"] = {{"advection", "maccormack"}};
    expect_input_error([&] { make(j); }, {"settings", "advection", "semi_lagrangian", "upwind", "conservative"});
    j = basin();
    j["settings"] = {{"alpha", -1}};
    expect_input_error([&] { make(j); }, {"settings", "alpha"});
    j = basin();
    j["sources"] = {{{"min", {0, 0}}, {"max", {1, 1}}}};
    expect_input_error([&] { make(j); }, {"sources[0].rate", "missing"});
    j = basin();
    j["output"] = {{"formats", {"vtk"}}};
    expect_input_error([&] { make(j); }, {"output.formats", "vti, csv, obj, ply"});
}

TEST(ShallowWaterScene, HeightmapFromAPng) {
    const TempDir tmp("heightmap");
    // 4 x 2 pixels, gray rising to the right; row 0 (top) is the far edge y = Ly.
    std::vector<Vec3> px;
    for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 4; ++x) {
            const float v = x / 3.0f * (y == 0 ? 1.0f : 0.5f);
            px.push_back(Vec3{{v, v, v}});
        }
    write_png(tmp.path() / "valley.png", 4, 2, px);
    nlohmann::json j = basin();
    j["grid"]["cells"] = {4, 2};
    j["terrain"] = {{"heightmap", "valley.png"}, {"scale", 2.0}, {"offset", -1.0}};
    const Scene scene = parse_scene(j, (tmp.path() / "valley.json").string());  // relative to the scene file
    ShallowWaterSimulation sim = make_shallow_water(scene);
    const auto& g = std::get<ShallowWaterSolver<float>>(sim.solver).grid();
    // Cell (3, 1) is the top-right pixel (1.0): -1 + 2 * 1; cell (3, 0) the bottom-right one (0.5).
    EXPECT_NEAR(g.terrain[g.cell(3, 1)], 1.0, 5e-3);
    EXPECT_NEAR(g.terrain[g.cell(3, 0)], 0.0, 5e-3);
    EXPECT_NEAR(g.terrain[g.cell(0, 0)], -1.0, 5e-3);
    j["terrain"]["heightmap"] = "missing.png";
    expect_input_error([&] { make_shallow_water(parse_scene(j, (tmp.path() / "valley.json").string())); },
                 {"terrain.heightmap", "missing.png", "not found"});
}

TEST(ShallowWaterScene, InitialStateFromTheExpressions) {
    nlohmann::json j = basin();
    j["obstacles"] = "x > 1.5 && y > 0.5";
    j["water"]["u"] = "0.25";
    ShallowWaterSimulation sim = make(j, {"settings.precision=double"});
    const auto& g = std::get<ShallowWaterSolver<double>>(sim.solver).grid();
    for (int jj = 0; jj < g.ny; ++jj)
        for (int i = 0; i < g.nx; ++i) {
            const std::size_t c = g.cell(i, jj);
            const double x = (i + 0.5) * 0.1, y = (jj + 0.5) * 0.1;
            EXPECT_EQ(g.solid[c], x > 1.5 && y > 0.5);
            EXPECT_DOUBLE_EQ(g.terrain[c], 0.1 * x);
            if (!g.solid[c]) EXPECT_DOUBLE_EQ(g.eta(c), 0.5);  // H + h == eta exactly: a lake at rest
            else EXPECT_EQ(g.depth[c], 0.0);
        }
    // Walls: the border faces are closed; the faces of obstacle cells too; inside, the given u.
    EXPECT_EQ(g.u[g.uface(0, 3)], 0.0);
    EXPECT_EQ(g.u[g.uface(g.nx, 3)], 0.0);
    EXPECT_EQ(g.u[g.uface(5, 3)], 0.25);
    EXPECT_EQ(g.u[g.uface(16, 8)], 0.0);
}

TEST(ShallowWaterRun, WritesFramesMeshesPicturesAndSummary) {
    const TempDir tmp("run");
    nlohmann::json j = basin();
    j["water"]["surface"] = "0.5 + 0.1*(x < 1)";
    j["output"] = {{"fps", 10}, {"formats", {"vti", "csv", "obj", "ply"}}};
    j["ink"] = {{{"min", {0, 0}}, {"max", {0.3, 1}}, {"rate", 1.0}}};
    j["duration"] = 0.2;
    ShallowWaterSimulation sim = make(j);
    RunOptions opts;
    opts.out_dir = tmp.path();
    ExecContext exec(2);
    const RunResult r = run(sim, opts, exec);
    ASSERT_EQ(r.exit_code, kExitOk) << r.message;
    ASSERT_EQ(r.frames.size(), 3u);
    for (const char* f : {"frames/grid_00002.vti", "frames/grid_00002.csv", "frames/surface_00002.obj",
                          "frames/surface_00002.ply", "grid.pvd", "summary.json", "last_frame.png"})
        EXPECT_TRUE(fs::exists(tmp.path() / f)) << f;
    const std::string csv = slurp(tmp.path() / "frames/grid_00000.csv");
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "i,j,x,y,terrain,depth,u,v,ink");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 20 * 10);
    const std::string vti = slurp(tmp.path() / "frames/grid_00001.vti");
    for (const char* key : {"ImageData", "WholeExtent=\"0 20 0 10 0 0\"", "Name=\"terrain\"", "Name=\"depth\"", "Name=\"eta\"",
                            "Name=\"velocity\" NumberOfComponents=\"3\"", "Name=\"ink\"", "encoding=\"raw\""})
        EXPECT_NE(vti.find(key), std::string::npos) << key;
    // The mesh: a vertex per wet cell, two triangles per 2 x 2 block of wet cells (all wet here).
    const std::string obj = slurp(tmp.path() / "frames/surface_00000.obj");
    auto lines = [&](const std::string& start) {
        std::size_t n = 0, at = 0;
        while ((at = obj.find("\n" + start, at)) != std::string::npos) ++n, ++at;
        return n;
    };
    EXPECT_EQ(lines("v "), 200u);
    EXPECT_EQ(lines("f "), 2u * 19u * 9u);
    const auto summary = nlohmann::json::parse(slurp(tmp.path() / "summary.json"));
    EXPECT_EQ(summary["frames"].size(), 3u);
    EXPECT_NEAR(summary["frames"][2]["volume"].get<double>(), summary["volume_initial"].get<double>(), 1e-5);
    EXPECT_EQ(summary["method"], "shallow_water");
}

TEST(ShallowWaterRun, CliRunsABundledSceneAndRejectsABadOne) {
    const TempDir tmp("cli");
    const std::string cli = EDDY_CLI;
    const std::string ok = cli + " run shallow_dam_break_wet -q --until 0.05 --out " + (tmp.path() / "out").string();
    EXPECT_EQ(std::system(ok.c_str()), 0);
    EXPECT_TRUE(fs::exists(tmp.path() / "out/frames/grid_00000.vti"));
    std::ofstream(tmp.path() / "bad.json") << R"({"name": "bad", "method": "shallow_water", "grid": {"cells": [0, 4], "dx": 0.1}})";
    const std::string bad = cli + " run " + (tmp.path() / "bad.json").string() + " -q --out " + (tmp.path() / "o2").string() + " 2> " +
                            (tmp.path() / "err.txt").string();
    const int rc = std::system(bad.c_str());
    EXPECT_EQ(WEXITSTATUS(rc), kExitBadInput);
    const std::string err = slurp(tmp.path() / "err.txt");
    EXPECT_NE(err.find("bad.json: grid.cells"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(ShallowWaterRun, ADivergingRunStopsSaysWhereAndKeepsItsFrames) {
    // 3e37 m of water: the wave speed drives the adaptive step below 1e-9 s at once.
    nlohmann::json j = basin();
    j["water"] = {{"depth", "x < 1 ? 3e37 : 1"}};
    j["output"] = {{"fps", 10}, {"formats", {"vti"}}};
    const TempDir tmp("diverge");
    ShallowWaterSimulation sim = make(j);
    RunOptions opts;
    opts.out_dir = tmp.path();
    ExecContext exec(1);
    const RunResult r = run(sim, opts, exec);
    EXPECT_EQ(r.exit_code, kExitDiverged);
    EXPECT_EQ(r.status, "diverged");
    EXPECT_NE(r.message.find("diverged at step 1"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("time step"), std::string::npos) << r.message;
    EXPECT_TRUE(fs::exists(tmp.path() / "frames/grid_00000.vti"));  // the last good frame stays
    EXPECT_FALSE(fs::exists(tmp.path() / "last_frame.png"));         // no picture of a bad state
    const auto summary = nlohmann::json::parse(slurp(tmp.path() / "summary.json"));
    EXPECT_EQ(summary["status"], "diverged");
}
