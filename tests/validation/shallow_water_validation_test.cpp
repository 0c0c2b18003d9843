// Shallow water against closed-form answers (SWASHES cases; ../shared/REFERENCES.md): Ritter's dry dam
// break, Stoker's wet dam break, the lake at rest, the speed of a small wave; and the invariants: volume
// kept in a closed basin, no negative depth, no velocity on dry land, sources and open borders balanced.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "eddy/scene.hpp"
#include "eddy/shallow_water.hpp"
#include "figures.hpp"

using namespace eddy;

namespace {

constexpr double g = 9.81;

nlohmann::json channel(int nx, double dx, const std::string& surface, const std::string& terrain = "0") {
    return {{"name", "channel"},      {"method", "shallow_water"},      {"gravity", g},
            {"grid", {{"cells", {nx, 2}}, {"dx", dx}}}, {"terrain", terrain}, {"water", {{"surface", surface}}}};
}

ShallowWaterSimulation make(nlohmann::json j, const std::vector<std::string>& sets = {}) {
    return make_shallow_water(parse_scene(std::move(j), "test", sets));
}

// Runs to time t exactly (the last step cut to land on it); f(solver, stats) after every step.
template <class F>
void run_to(ShallowWaterSimulation& sim, double t, const ExecContext& exec, F&& f) {
    std::visit(
        [&](auto& s) {
            while (s.time() < t - 1e-12) {
                double dt = s.suggest_dt();
                if (s.time() + dt > t) dt = t - s.time();
                const auto st = s.step(dt, exec);
                f(s, st);
            }
        },
        sim.solver);
}
void run_to(ShallowWaterSimulation& sim, double t, const ExecContext& exec) {
    run_to(sim, t, exec, [](auto&, const auto&) {});
}

template <class F>
auto with_grid(const ShallowWaterSimulation& sim, F&& f) {
    return std::visit([&](const auto& s) { return f(s.grid()); }, sim.solver);
}

// Ritter (dry bed) and Stoker (wet bed) depth at x, time t; dam at x0.
struct DamBreak {
    double hl, hr, x0;
    double cm = 0;
    DamBreak(double hl_, double hr_, double x0_) : hl(hl_), hr(hr_), x0(x0_) {
        if (hr <= 0) return;
        const double cl = std::sqrt(g * hl);
        auto F = [&](double c) { return -8 * g * hr * c * c * (cl - c) * (cl - c) + std::pow(c * c - g * hr, 2) * (c * c + g * hr); };
        double a = std::sqrt(g * hr), b = cl;
        for (int k = 0; k < 200; ++k) {
            const double m = 0.5 * (a + b);
            (F(a) * F(m) <= 0 ? b : a) = m;
        }
        cm = 0.5 * (a + b);
    }
    double hm() const { return cm * cm / g; }
    double shock(double t) const {
        const double cl = std::sqrt(g * hl);
        return x0 + t * 2 * cm * cm * (cl - cm) / (cm * cm - g * hr);
    }
    double depth(double x, double t) const {
        const double cl = std::sqrt(g * hl), xi = x - x0;
        if (xi <= -cl * t) return hl;
        if (hr <= 0) return xi < 2 * cl * t ? 4.0 / (9 * g) * std::pow(cl - xi / (2 * t), 2) : 0.0;
        const double xb = x0 + t * (2 * cl - 3 * cm);
        if (x < xb) return 4.0 / (9 * g) * std::pow(cl - xi / (2 * t), 2);
        if (x < shock(t)) return hm();
        return hr;
    }
};

// Mean |h - exact| over the channel's first row, relative to hl.
double l1_error(const ShallowWaterSimulation& sim, const DamBreak& d, double t) {
    return with_grid(sim, [&](const auto& gr) {
        double e = 0;
        for (int i = 0; i < gr.nx; ++i) e += std::abs(double(gr.depth[gr.cell(i, 0)]) - d.depth((i + 0.5) * double(gr.dx), t));
        return e / gr.nx / d.hl;
    });
}

}  // namespace

TEST(ShallowWaterValidation, RitterDryDamBreak) {
    const DamBreak d(1.0, 0.0, 5.0);
    const double t = 0.6;
    ExecContext exec(2);
    for (const auto& [method, bound] : {std::pair{"conservative", 0.006}, {"semi_lagrangian", 0.04}, {"upwind", 0.04}}) {
        ShallowWaterSimulation sim = make(channel(400, 0.025, "x < 5 ? 1 : 0"), {std::string("settings.advection=") + method});
        bool negative = false;
        run_to(sim, t, exec, [&](const auto& s, const auto&) {
            for (auto h : s.grid().depth) negative = negative || h < 0;
        });
        const double err = l1_error(sim, d, t);
        // The front: the farthest cell holding 1 mm, against 2 c0 t (where the exact depth is 0).
        const double front = with_grid(sim, [&](const auto& gr) {
            double x = 0;
            for (int i = 0; i < gr.nx; ++i)
                if (gr.depth[gr.cell(i, 0)] > 1e-3) x = (i + 0.5) * double(gr.dx);
            return x;
        });
        std::printf("Ritter, %s: L1 error %.4f of h_l, front (h > 1 mm) at %.3f m, exact tip %.3f m\n", method, err, front,
                    5.0 + 2 * std::sqrt(g) * t);
        test::report_figure(std::string("shallow.ritter.l1_percent_") + method, 100.0 * err);
        EXPECT_LT(err, bound) << method;
        EXPECT_FALSE(negative) << method;
        if (std::string(method) == "conservative") EXPECT_GT(front, 5.0 + 0.75 * 2 * std::sqrt(g) * t);
    }
}

TEST(ShallowWaterValidation, StokerWetDamBreak) {
    const DamBreak d(1.0, 0.3, 5.0);
    ASSERT_NEAR(d.hm(), 0.5914, 1e-4);  // REFERENCES.md's check value
    const double t = 1.0;
    test::report_figure("shallow.stoker.plateau_exact_m", d.hm());
    test::report_figure("shallow.stoker.shock_exact_m", d.shock(t));
    ExecContext exec(2);
    struct Case {
        const char* method;
        double l1, plateau, shock;  // bounds: L1 / h_l, plateau relative, shock position (m)
    };
    for (const Case& c : {Case{"conservative", 0.004, 0.01, 0.05}, Case{"semi_lagrangian", 0.02, 0.05, 0.35}}) {
        ShallowWaterSimulation sim = make(channel(400, 0.025, "x < 5 ? 1 : 0.3"), {std::string("settings.advection=") + c.method});
        run_to(sim, t, exec);
        const double err = l1_error(sim, d, t);
        double plateau = 0, shock = 0;
        with_grid(sim, [&](const auto& gr) {
            const double cl = std::sqrt(g), xb = d.x0 + t * (2 * cl - 3 * d.cm), xc = d.shock(t);
            int n = 0;
            const double mid = 0.5 * (d.hm() + d.hr);
            for (int i = 0; i + 1 < gr.nx; ++i) {
                const double x = (i + 0.5) * double(gr.dx);
                const double h0 = gr.depth[gr.cell(i, 0)], h1 = gr.depth[gr.cell(i + 1, 0)];
                if (x > xb + 0.3 && x < xc - 0.3) {
                    plateau += h0;
                    ++n;
                }
                if (h0 >= mid && h1 < mid) shock = x + (h0 - mid) / (h0 - h1) * double(gr.dx);
            }
            plateau /= n;
            return 0;
        });
        std::printf("Stoker, %s: L1 error %.4f of h_l; plateau %.4f m (exact %.4f); shock at %.3f m (exact %.3f)\n", c.method,
                    err, plateau, d.hm(), shock, d.shock(t));
        test::report_figure(std::string("shallow.stoker.") + c.method + ".plateau_m", plateau);
        test::report_figure(std::string("shallow.stoker.") + c.method + ".plateau_percent",
                            100.0 * (plateau / d.hm() - 1.0));
        test::report_figure(std::string("shallow.stoker.") + c.method + ".shock_m", shock);
        test::report_figure(std::string("shallow.stoker.") + c.method + ".shock_behind_m", d.shock(t) - shock);
        EXPECT_LT(err, c.l1) << c.method;
        EXPECT_NEAR(plateau / d.hm(), 1.0, c.plateau) << c.method;
        EXPECT_NEAR(shock, d.shock(t), c.shock) << c.method;
    }
}

// SWASHES' lake at rest: bump z = max(0, 0.2 - 0.05 (x - 10)^2) in a 25 m channel, eta = 0.5 (submerged)
// and 0.1 (emerged); 1000 steps; nothing may move.
TEST(ShallowWaterValidation, LakeAtRestStaysAtRest) {
    ExecContext exec(2);
    for (const char* eta : {"0.5", "0.1"})
        for (const char* method : {"conservative", "semi_lagrangian", "upwind"}) {
            ShallowWaterSimulation sim = make(channel(250, 0.1, eta, "max(0, 0.2 - 0.05*(x-10)^2)"),
                                              {std::string("settings.advection=") + method});
            const double eta0 = std::stod(eta);
            std::visit([&](auto& s) { for (int k = 0; k < 1000; ++k) s.step(s.suggest_dt(), exec); }, sim.solver);
            double umax = 0, deta = 0;
            int dry = 0;
            with_grid(sim, [&](const auto& gr) {
                for (auto u : gr.u) umax = std::max(umax, std::abs(double(u)));
                for (auto w : gr.w) umax = std::max(umax, std::abs(double(w)));
                for (std::size_t c = 0; c < gr.cells(); ++c) {
                    if (gr.depth[c] > 0) deta = std::max(deta, std::abs(double(gr.eta(c)) - eta0));
                    else ++dry;
                }
                return 0;
            });
            SCOPED_TRACE(std::string(eta) + " " + method);
            EXPECT_LT(umax, 1e-6);
            EXPECT_LT(deta, 1e-6);
            if (std::string(eta) == "0.1") EXPECT_GT(dry, 0);  // the bump's top really is dry
        }
}

TEST(ShallowWaterValidation, VolumeIsKeptInAClosedBasin) {
    // Uneven terrain with an island, water sloshing from a tilted surface, 1000 steps.
    nlohmann::json j = {{"name", "basin"}, {"method", "shallow_water"}, {"grid", {{"cells", {64, 48}}, {"dx", 0.1}}},
                        {"terrain", "0.25 + 0.15*sin(2*x)*cos(3*y) + 0.4*exp(-((x-3)^2+(y-2.4)^2))"},
                        {"obstacles", "(x-1.5)^2 + (y-1.5)^2 < 0.1"},
                        {"water", {{"surface", "0.5 + 0.2*(x/Lx - 0.5)"}, {"u", "0.3"}}}};
    ExecContext exec(2);
    for (const char* method : {"conservative", "semi_lagrangian", "upwind"}) {
        ShallowWaterSimulation sim = make(j, {std::string("settings.advection=") + method, "settings.vorticity=2"});
        const double v0 = with_grid(sim, [](const auto& gr) { return gr.volume(); });
        double hmin = 0;
        std::visit(
            [&](auto& s) {
                for (int k = 0; k < 1000; ++k) {
                    s.step(s.suggest_dt(), exec);
                    for (auto h : s.grid().depth) hmin = std::min(hmin, double(h));
                }
            },
            sim.solver);
        const double v1 = with_grid(sim, [](const auto& gr) { return gr.volume(); });
        std::printf("closed basin, %s: volume %.9g -> %.9g (relative change %.2e)\n", method, v0, v1, (v1 - v0) / v0);
        test::report_figure(std::string("shallow.closed_basin.volume_change_relative_") + method, (v1 - v0) / v0);
        EXPECT_LT(std::abs(v1 - v0) / v0, 1e-5) << method;
        EXPECT_GE(hmin, 0.0) << method;
    }
}

TEST(ShallowWaterValidation, SmallWaveTravelsAtSqrtGH) {
    // A 1 mm Gaussian hump on 1 m of still water splits into two waves at c = sqrt(g h).
    const double h0 = 1.0, x0 = 10.0, t = 4.0;
    ShallowWaterSimulation sim = make(channel(2000, 0.02, "1 + 0.001*exp(-((x-10)/0.3)^2)"));
    ExecContext exec(2);
    run_to(sim, t, exec);
    const double peak = with_grid(sim, [&](const auto& gr) {
        int best = gr.nx / 2;
        for (int i = gr.nx / 2; i < gr.nx - 1; ++i)
            if (gr.depth[gr.cell(i, 0)] > gr.depth[gr.cell(best, 0)]) best = i;
        // Parabola through the three highest samples.
        const double a = gr.depth[gr.cell(best - 1, 0)], b = gr.depth[gr.cell(best, 0)], c = gr.depth[gr.cell(best + 1, 0)];
        const double off = 0.5 * (a - c) / (a - 2 * b + c);
        return (best + 0.5 + off) * double(gr.dx);
    });
    const double speed = (peak - x0) / t, exact = std::sqrt(g * h0);
    std::printf("wave speed %.4f m/s, sqrt(g h) = %.4f m/s (%.2f%%)\n", speed, exact, 100 * (speed / exact - 1));
    test::report_figure("shallow.small_wave.speed_m_s", speed);
    test::report_figure("shallow.small_wave.sqrt_gh_m_s", exact);
    EXPECT_NEAR(speed / exact, 1.0, 0.03);
}

// The seed's cross-check: its two advection methods, so different in construction, give nearly the same
// flow; and both differ clearly from no advection at all (so the check can fail).
TEST(ShallowWaterValidation, TheSeedsTwoAdvectionMethodsAgreeOnASmoothFlow) {
    nlohmann::json j = {{"name", "swirl"}, {"method", "shallow_water"}, {"grid", {{"cells", {96, 96}}, {"dx", 0.05}}},
                        {"water", {{"depth", "1"},
                                   {"u", "-0.5*sin(pi*x/Lx)*cos(pi*y/Ly)"},
                                   {"v", "0.5*cos(pi*x/Lx)*sin(pi*y/Ly)"},
                                   {"ink", "exp(-((x-1.2)^2+(y-2.4)^2)/0.1)"}}}};
    ExecContext exec(2);
    auto fields = [&](const char* method) {
        ShallowWaterSimulation sim = make(j, {std::string("settings.advection=") + method});
        run_to(sim, 1.5, exec);
        return with_grid(sim, [](const auto& gr) {
            std::vector<double> v;
            for (auto x : gr.u) v.push_back(x);
            for (auto x : gr.w) v.push_back(x);
            std::vector<double> ink(gr.ink.begin(), gr.ink.end());
            return std::pair{v, ink};
        });
    };
    auto rel = [](const std::vector<double>& a, const std::vector<double>& b) {
        double d = 0, n = 0;
        for (std::size_t i = 0; i < a.size(); ++i) {
            d += (a[i] - b[i]) * (a[i] - b[i]);
            n += b[i] * b[i];
        }
        return std::sqrt(d / n);
    };
    const auto sl = fields("semi_lagrangian"), up = fields("upwind"), none = fields("none");
    const double dv = rel(sl.first, up.first), dink = rel(sl.second, up.second);
    const double dink_none = rel(none.second, up.second);
    std::printf("semi-Lagrangian vs upwind: velocity %.3f%%, ink %.3f%%; no advection vs upwind: ink %.1f%%\n", 100 * dv,
                100 * dink, 100 * dink_none);
    EXPECT_LT(dv, 0.05);
    EXPECT_LT(dink, 0.15);
    EXPECT_GT(dink_none, 4 * dink);
}

TEST(ShallowWaterValidation, DryLandStaysStillAndDepthNeverNegative) {
    // A dam break onto a dry, bumpy slope: water may only move where there is water.
    nlohmann::json j = {{"name", "slope"}, {"method", "shallow_water"}, {"grid", {{"cells", {120, 40}}, {"dx", 0.05}}},
                        {"terrain", "0.1*x + 0.05*sin(4*y)"}, {"water", {{"surface", "x < 1.5 ? 0.6 : 0"}}}};
    ExecContext exec(2);
    for (const char* method : {"conservative", "semi_lagrangian", "upwind"}) {
        ShallowWaterSimulation sim = make(j, {std::string("settings.advection=") + method});
        double hmin = 0;
        std::size_t moving_dry = 0, wet_max = 0;
        run_to(sim, 1.0, exec, [&](const auto& s, const auto&) {
            const auto& gr = s.grid();
            const auto dry = [&](int i, int jj) { return gr.depth[gr.cell(i, jj)] <= 1e-4 * gr.dx; };
            std::size_t wet = 0;
            for (int jj = 0; jj < gr.ny; ++jj)
                for (int i = 0; i < gr.nx; ++i) {
                    hmin = std::min(hmin, double(gr.depth[gr.cell(i, jj)]));
                    wet += !dry(i, jj);
                    if (i > 0 && dry(i - 1, jj) && dry(i, jj) && gr.u[gr.uface(i, jj)] != 0) ++moving_dry;
                    if (jj > 0 && dry(i, jj - 1) && dry(i, jj) && gr.w[gr.wface(i, jj)] != 0) ++moving_dry;
                }
            wet_max = std::max(wet_max, wet);
        });
        SCOPED_TRACE(method);
        EXPECT_GE(hmin, 0.0);
        EXPECT_EQ(moving_dry, 0u);
        EXPECT_GT(wet_max, 30u * 40u);  // the water did spread onto the slope
    }
}

TEST(ShallowWaterValidation, SourcesAndOpenBordersBalanceTheVolume) {
    // A river: water enters through a source at the left (a wall behind it), leaves through the open right
    // border.
    nlohmann::json j = {{"name", "river"}, {"method", "shallow_water"}, {"grid", {{"cells", {100, 20}}, {"dx", 0.1}}},
                        {"terrain", "0.3 - 0.02*x"}, {"water", {{"depth", "0.1"}}}, {"borders", {{"x", {"wall", "open"}}, {"y", "wall"}}},
                        {"sources", {{{"min", {0, 0}}, {"max", {0.3, 2}}, {"rate", 0.2}}}}};
    ExecContext exec(2);
    ShallowWaterSimulation sim = make(j);
    const double v0 = with_grid(sim, [](const auto& gr) { return gr.volume(); });
    run_to(sim, 3.0, exec);
    std::visit(
        [&](auto& s) {
            const double v1 = s.grid().volume(), expected = v0 + s.total_inflow() - s.total_outflow();
            std::printf("river: V0 %.6f + in %.6f - out %.6f = %.6f; V %.6f\n", v0, s.total_inflow(), s.total_outflow(), expected, v1);
            test::report_figure("shallow.river.volume_balance_relative", std::abs(v1 - expected) / expected);
            // The source: 0.2 m/s over 3 x 20 cells of 0.01 m^2 for 3 s.
            EXPECT_NEAR(s.total_inflow(), 0.2 * 60 * 0.01 * 3.0, 1e-4);
            EXPECT_GT(s.total_outflow(), 0.01);
            EXPECT_LT(std::abs(v1 - expected) / expected, 1e-5);
        },
        sim.solver);
}

TEST(ShallowWaterValidation, VorticityConfinementKeepsASwirlAlive) {
    nlohmann::json j = {{"name", "swirl"}, {"method", "shallow_water"}, {"grid", {{"cells", {64, 64}}, {"dx", 0.05}}},
                        {"water", {{"depth", "0.5"},
                                   {"u", "-0.4*sin(pi*x/Lx)*cos(pi*y/Ly)"},
                                   {"v", "0.4*cos(pi*x/Lx)*sin(pi*y/Ly)"}}}};
    ExecContext exec(2);
    auto energy = [&](float eps) {
        ShallowWaterSimulation sim = make(j, {"settings.advection=semi_lagrangian", fmt::format("settings.vorticity={}", eps)});
        run_to(sim, 2.0, exec);
        return with_grid(sim, [](const auto& gr) {
            double e = 0;
            for (auto u : gr.u) e += double(u) * u;
            for (auto w : gr.w) e += double(w) * w;
            return e;
        });
    };
    const double off = energy(0), on = energy(5);
    std::printf("kinetic energy after 2 s: confinement off %.3f, on %.3f\n", off, on);
    EXPECT_GT(on, 1.02 * off);
}

TEST(ShallowWaterValidation, OpenBordersLetWavesLeave) {
    // A 1 cm hump on 1 m of water splits into two waves; by t = 6 s both have reached the borders.
    // Walls reflect them (the surface keeps its energy); open borders let them out.
    auto left = [](const char* border) {
        nlohmann::json j = {{"name", "channel"}, {"method", "shallow_water"}, {"grid", {{"cells", {1000, 2}}, {"dx", 0.02}}},
                            {"water", {{"surface", "1 + 0.01*exp(-((x-14)/0.3)^2)"}}}, {"borders", {{"x", border}}}};
        ShallowWaterSimulation sim = make(j);
        auto energy = [&] {
            return with_grid(sim, [](const auto& gr) {
                double e = 0;
                for (int i = 0; i < gr.nx; ++i) e += std::pow(double(gr.depth[gr.cell(i, 0)]) - 1.0, 2);
                return e;
            });
        };
        const double e0 = energy();
        ExecContext exec(2);
        run_to(sim, 6.0, exec);
        return energy() / e0;
    };
    const double open = left("open"), wall = left("wall");
    std::printf("surface energy left after 6 s: open borders %.4f, walls %.4f\n", open, wall);
    EXPECT_LT(open, 0.03);
    EXPECT_GT(wall, 0.4);
}
