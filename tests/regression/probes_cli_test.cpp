// The scene's "probes" (issue 41's proof of an output written once): probes.csv, one row per frame and
// probe with the fluid's pressure and velocity there. Checked against hydrostatics (rho0 g d at the
// probes' depths in a tank at rest), a dry probe above the water reads zeros, a resumed run's file is the
// uninterrupted run's bytes, and bad probes are one line and exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

using Result = eddy::test::CommandResult;
using eddy::test::run_cli;

class ProbesCli : public eddy::test::TempDirTest {};

// A 2D tank 0.2 m wide with 0.1 m of water, r = 5 mm; probes at 2.5, 5 and 7.5 cm deep mid-tank and one
// in the air above; 0.5 s at 10 frames a second.
const char* kTank = R"({
  "name": "probe_tank", "dimension": 2, "method": "METHOD", "particle_radius": 0.005,
  "gravity": [0, -9.81], "duration": 0.5, "output": { "fps": 10, "formats": ["csv"] },
  "boundaries": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.2] } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.1] } ],
  "probes": [ { "name": "shallow", "position": [0.1, 0.075] }, { "name": "middle", "position": [0.1, 0.05] },
              { "name": "deep", "position": [0.1, 0.025] }, { "name": "air", "position": [0.1, 0.17] } ] })";

std::string tank(const std::string& method) {
    std::string s = kTank;
    s.replace(s.find("METHOD"), 6, method);
    return s;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Row {
    double time = 0.0, pressure = 0.0, speed = 0.0, y = 0.0;
    std::string name;
};

std::vector<Row> read_rows(const fs::path& csv, std::string& header) {
    std::ifstream in(csv);
    std::getline(in, header);
    std::vector<Row> rows;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
        if (f.size() != 10) return {};
        Row r;
        r.time = std::stod(f[0]);
        r.name = f[2];
        r.y = std::stod(f[4]);
        r.pressure = std::stod(f[6]);
        r.speed = std::hypot(std::stod(f[7]), std::stod(f[8]), std::stod(f[9]));
        rows.push_back(r);
    }
    return rows;
}

// Every frame has a row per probe; over the last 0.25 s the wet probes read rho0 g d within `tolerance`
// and the water is still; the air probe reads zeros.
void expect_hydrostatic(const fs::path& out, double tolerance) {
    std::string header;
    const std::vector<Row> rows = read_rows(out / "probes.csv", header);
    EXPECT_EQ(header, "time,probe,name,x,y,z,pressure,vx,vy,vz");
    ASSERT_EQ(rows.size(), 6u * 4u);  // frames at 0, 0.1, ..., 0.5 s
    std::map<std::string, std::pair<double, int>> mean;
    for (const Row& r : rows) {
        if (r.time < 0.25) continue;
        if (r.name == "air") {
            EXPECT_EQ(r.pressure, 0.0);
            EXPECT_EQ(r.speed, 0.0);
            continue;
        }
        mean[r.name].first += r.pressure / (1000.0 * 9.81 * (0.1 - r.y));
        ++mean[r.name].second;
        EXPECT_LT(r.speed, 0.05) << r.name << " at t = " << r.time;
    }
    ASSERT_EQ(mean.size(), 3u);
    for (const auto& [name, m] : mean) {
        const double ratio = m.first / m.second;
        std::printf("[ figure ] probe %s: pressure / (rho0 g d) = %.3f\n", name.c_str(), ratio);
        EXPECT_NEAR(ratio, 1.0, tolerance) << name;
    }
    const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
    EXPECT_EQ(summary["probes_file"], "probes.csv");
}

}  // namespace

TEST_F(ProbesCli, ReadHydrostaticPressureInATankWcsph) {
    const fs::path out = dir / "out";
    const Result r = run_cli("run " + write("tank.json", tank("wcsph")).string() + " --quiet --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.output;
    // The shallow probe (2.5 cm, 5 r deep) reads 0.924 on WCSPH's default smooth walls (issue 40), within 6% on
    // Akinci's particles: the free surface's kernel deficiency, and the smooth column's surface sits lower.
    expect_hydrostatic(out, 0.09);
}

TEST_F(ProbesCli, ReadHydrostaticPressureInATankDfsph) {
    const fs::path out = dir / "out";
    const Result r = run_cli("run " + write("tank.json", tank("dfsph")).string() + " --quiet --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.output;
    expect_hydrostatic(out, 0.06);
}

// A run stopped at 0.2 s and resumed to 0.5 s writes the uninterrupted run's probes.csv, byte for byte.
TEST_F(ProbesCli, ResumedRunWritesTheSameFile) {
    const fs::path scene = write("tank.json", tank("wcsph"));
    const Result a = run_cli("run " + scene.string() + " --quiet --out " + (dir / "straight").string());
    ASSERT_EQ(a.code, 0) << a.output;
    const fs::path out = dir / "resumed";
    const Result b = run_cli("run " + scene.string() + " --quiet --until 0.2 --out " + out.string());
    ASSERT_EQ(b.code, 0) << b.output;
    const Result c = run_cli("run --resume " + out.string() + " --quiet --until 0.5");
    ASSERT_EQ(c.code, 0) << c.output;
    EXPECT_EQ(slurp(dir / "straight" / "probes.csv"), slurp(out / "probes.csv"));
}

TEST_F(ProbesCli, BadProbesExit2WithOneLine) {
    const std::string base = tank("wcsph");
    const std::string probes = base.substr(base.find("\"probes\""));
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("probes": 3 })", "probes"},
        {R"("probes": [ [0.1, 0.05] ] })", "probes[0]"},
        {R"("probes": [ { "position": [0.1] } ] })", "probes[0].position"},
        {R"("probes": [ { "name": "a,b", "position": [0.1, 0.05] } ] })", "probes[0].name"},
        {R"("probes": [ { "name": "a", "position": [0.1, 0.05] }, { "name": "a", "position": [0.1, 0.02] } ] })",
         "probes[1].name"},
        {R"("probes": [ { "name": "a", "where": [0.1, 0.05] } ] })", "probes[0]"},
    };
    int k = 0;
    for (const auto& [text, key] : cases) {
        std::string s = base;
        s.replace(s.find("\"probes\""), probes.size(), text);
        const fs::path f = write("bad" + std::to_string(k++) + ".json", s);
        const Result r = run_cli("run " + f.string() + " --quiet --out " + (dir / "bad").string());
        EXPECT_EQ(r.code, 2) << text << "\n" << r.output;
        EXPECT_NE(r.output.find(key), std::string::npos) << text << "\n" << r.output;
        EXPECT_NE(r.output.find(f.filename().string()), std::string::npos) << r.output;
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
}
