// Free heave decay of a floating body against linear water-wave theory (issue 40: "a floating body's
// heave is damped as water damps it"; "period within 5%").
//
// A circular cylinder of half the water's density floats half immersed. Held a tenth of its radius below
// its equilibrium while the water settles around it, then released, it rises, overshoots and decays by
// radiating waves. It is released twice, a tenth of its radius below and as far above, and the test reads the
// pair's mean, which holds the heave and not the water's own settling (heave() below). Linear theory gives the whole transient: Ursell's (1949) multipole solution of the
// heaving half-immersed circle gives its added mass and wave damping at every frequency, and Cummins'
// (1962) equation, with the memory of the radiated waves, gives the free decay from rest,
//
//   (m + a_inf) z'' + int_0^t K(t - s) z'(s) ds + rho g 2a z = 0,   K(t) = (2/pi) int_0^inf B(w) cos(w t) dw,
//
// m = rho pi a^2 / 2 the body's mass per metre, rho g 2a its waterplane stiffness. Its extrema, in units of
// sqrt(a / g) and of the release offset z0 (tests/validation/data/ursell_heave.py, which checks itself: the
// radiated energy against the damping, Kramers-Kronig against the added mass):
//
//   first overshoot at t = 3.72, -0.642 z0; back at t = 7.22, +0.305 z0; then t = 10.59, -0.214 z0.
//
// (The undamped natural period with the added mass at that frequency, 2 pi / 0.893 = 7.03, the damping
// ratio 0.164.) The added mass agrees with Vugts' (1968) measured coefficients (about 0.61 at
// w sqrt(a/g) = 0.87-0.99). To explore: EDDY_HEAVE_R (particle radius, m), EDDY_HEAVE_OFFSET (in a),
// EDDY_HEAVE_SETTINGS (the method's settings as JSON), EDDY_HEAVE_DUMP (a file for t, z / z0).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "eddy/bodies.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "figures.hpp"

using namespace eddy;

namespace {

constexpr double kG = 9.81;
constexpr double kPi = 3.14159265358979323846;

// Linear theory's first three extrema after a release from rest (tests/validation/data/ursell_heave.py, which
// ctest's reference.ursell_heave runs against these constants):
// time in sqrt(a / g), displacement over the release offset.
constexpr double kTime[3] = {3.72, 7.22, 10.59};
constexpr double kRatio[3] = {-0.642, 0.305, -0.214};
// The same transient fitted as the test fits the body's (fit_decay, 0 <= t <= 11): its period and decay rate.
constexpr double kPeriod = 7.116;
constexpr double kDecay = 0.155;

struct HeaveCase {
    std::string method;
    double r = 0.0025;      // particle radius (m): a / r = 20
    double a = 0.05;        // cylinder radius (m)
    double W = 2.0;         // tank width (m): the radiated waves come back after the measured cycles
    double depth = 0.2;     // water depth (m): deep water at this frequency (tanh(K depth) = 0.997)
    double offset = 0.1;    // release offset below equilibrium, in a
    double settle = 1.0;    // s, the body held while the water settles around it
    double measure = 0.95;  // s after the release (13 time units)
};

struct DecayFit {
    double w = 0.0, alpha = 0.0, offset = 0.0;
};

struct HeaveFigures {
    double z0 = 0.0;                 // release offset from the equilibrium by mass (m)
    DecayFit fit;                    // over 0 <= t <= 11 after the release
    double time[3] = {0, 0, 0};      // extrema after the release, in sqrt(a / g)
    double ratio[3] = {0, 0, 0};     // their displacement over z0
    bool finite = true;
};

nlohmann::json heave_scene(const HeaveCase& c, double centre) {
    nlohmann::json settings = nlohmann::json::object();
    if (const char* e = std::getenv("EDDY_HEAVE_SETTINGS")) settings = nlohmann::json::parse(e);
    return {{"name", "heave"},
            {"dimension", 2},
            {"method", c.method},
            {"particle_radius", c.r},
            {"gravity", {0, -kG}},
            {"settings", settings},
            {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {c.W, c.depth + 0.15}}}}},
            {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {c.W, c.depth}}}}},
            {"bodies", {{{"shape", "circle"}, {"center", {0.5 * c.W, centre}}, {"radius", c.a},
                         {"density", 500.0}, {"fixed_axes", {"x", "y", "rz"}}}}}};
}

// m x = b by Cramer's rule; false when m is singular.
bool solve3(const double m[3][3], const double b[3], double x[3]) {
    auto det = [](const double q[3][3]) {
        return q[0][0] * (q[1][1] * q[2][2] - q[1][2] * q[2][1]) - q[0][1] * (q[1][0] * q[2][2] - q[1][2] * q[2][0]) +
               q[0][2] * (q[1][0] * q[2][1] - q[1][1] * q[2][0]);
    };
    const double d = det(m);
    if (!(std::fabs(d) > 1e-300)) return false;
    for (int k = 0; k < 3; ++k) {
        double q[3][3];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) q[i][j] = j == k ? b[i] : m[i][j];
        x[k] = det(q) / d;
    }
    return true;
}

// The extremum of y(t) of the given sign in [lo, hi]: a parabola fitted by least squares to the samples
// within 0.5 time units of the largest sample (the body's position carries the particles' noise).
void extremum(const std::vector<double>& t, const std::vector<double>& y, double lo, double hi, double sign,
              double& at, double& value) {
    std::size_t best = 0;
    bool found = false;
    for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i] >= lo && t[i] <= hi && (!found || sign * y[i] > sign * y[best])) best = i, found = true;
    if (!found) return;
    double s[5] = {0, 0, 0, 0, 0}, b[3] = {0, 0, 0};
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double u = t[i] - t[best];
        if (std::fabs(u) > 0.5) continue;
        double p = 1.0;
        for (int k = 0; k < 5; ++k) s[k] += p, p *= u;
        b[0] += y[i], b[1] += u * y[i], b[2] += u * u * y[i];
    }
    // Normal equations of y = c0 + c1 u + c2 u^2.
    const double m[3][3] = {{s[0], s[1], s[2]}, {s[1], s[2], s[3]}, {s[2], s[3], s[4]}};
    double c[3];
    if (!solve3(m, b, c)) return;
    const double u = c[2] != 0.0 ? std::clamp(-c[1] / (2.0 * c[2]), -0.5, 0.5) : 0.0;
    at = t[best] + u;
    value = c[0] + c[1] * u + c[2] * u * u;
}

// z(t) = c + e^{-alpha t} (p cos w t + q sin w t), fitted by least squares: (w, alpha) the best on a
// grid (w 0.5-1.3 by 0.001, alpha 0-0.6 by 0.001), c, p, q linear at each. The same fit of linear theory's
// transient over the same window (ursell_heave.py) gives the reference.
DecayFit fit_decay(const std::vector<double>& t, const std::vector<double>& z) {
    DecayFit best;
    double best_residual = 1e300, zz = 0.0;
    for (double v : z) zz += v * v;
    std::vector<double> e(t.size());  // e^{-alpha t}: one per decay rate, not per frequency
    for (int ia = 0; ia <= 600; ++ia) {
        const double alpha = 0.001 * ia;
        for (std::size_t i = 0; i < t.size(); ++i) e[i] = std::exp(-alpha * t[i]);
        for (int iw = 0; iw <= 800; ++iw) {
            const double w = 0.5 + 0.001 * iw;
            double m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, b[3] = {0, 0, 0};
            for (std::size_t i = 0; i < t.size(); ++i) {
                const double f[3] = {1.0, e[i] * std::cos(w * t[i]), e[i] * std::sin(w * t[i])};
                for (int r = 0; r < 3; ++r) {
                    b[r] += f[r] * z[i];
                    for (int k = 0; k < 3; ++k) m[r][k] += f[r] * f[k];
                }
            }
            double x[3];
            if (!solve3(m, b, x)) continue;
            const double residual = zz - (x[0] * b[0] + x[1] * b[1] + x[2] * b[2]);
            if (residual < best_residual) best_residual = residual, best = {w, alpha, x[0]};
        }
    }
    return best;
}

// One release from rest `offset` (in a) below the equilibrium by mass (above when negative): the body's
// height over its offset z0 at every step after it, t in sqrt(a / g).
struct HeaveRun {
    double z0 = 0.0;
    std::vector<double> t, y;
    bool finite = true;
};

HeaveRun release(const HeaveCase& c, double offset, int threads) {
    const ExecContext exec(threads);
    // The equilibrium by mass: the body's centre at the level the fluid's volume (at rho0) and the half
    // of the body below it fill. The fluid block loses what the body displaces where it starts, so the
    // level comes from the particles built, not from the block's depth.
    const double guess = c.depth - offset * c.a;
    HeaveRun run;
    Simulation sim = make_simulation(parse_scene(heave_scene(c, guess), "heave"), 10'000'000, exec);
    auto& s = std::get<ParticleSimulation<2>>(sim);
    const double level = (double(s.fluid.size()) * 4.0 * c.r * c.r + 0.5 * kPi * c.a * c.a) / c.W;
    run.z0 = guess - level;
    while (s.time < c.settle - 1e-9) {
        const StepStats st = step(sim, exec, c.settle);
        if (st.non_finite) return run.finite = false, run;
    }
    s.bodies.specs[0].fixed_translation[1] = false;  // released from rest
    s.bodies.reset_engine();
    sync_body_motions(s.bodies, s.boundary, s.time);
    const double unit = std::sqrt(c.a / kG), release = s.time;
    while (s.time < release + c.measure - 1e-9) {
        const StepStats st = step(sim, exec, release + c.measure);
        if (st.non_finite || !std::isfinite(s.bodies.state[0].position[1])) return run.finite = false, run;
        run.t.push_back((s.time - release) / unit);
        run.y.push_back((s.bodies.state[0].position[1] - level) / run.z0);
    }
    return run;
}

// y(t) of a run by linear interpolation between its samples (t within the run's range).
double at_time(const HeaveRun& run, std::size_t& k, double t) {
    while (k + 2 < run.t.size() && run.t[k + 1] < t) ++k;
    const double t0 = run.t[k], t1 = run.t[k + 1], u = t1 > t0 ? std::clamp((t - t0) / (t1 - t0), 0.0, 1.0) : 0.0;
    return run.y[k] + u * (run.y[k + 1] - run.y[k]);
}

// The body released c.offset below its equilibrium and as far above it: the heave is the pair's symmetric
// part (y_below + y_above) / 2 (the above run's interpolated onto the below run's times), what linear theory
// describes. The antisymmetric part holds the even orders and a slow motion of the settling water around the
// body that does not depend on the release and that one run's fit takes for heave (docs/bodies.md, "The
// release's sign").
HeaveFigures heave(const HeaveCase& c, int threads = 2) {
    HeaveFigures f;
    const HeaveRun below = release(c, c.offset, threads), above = release(c, -c.offset, threads);
    if (!below.finite || !above.finite || below.t.size() < 2 || above.t.size() < 2) return f.finite = false, f;
    f.z0 = below.z0;
    std::vector<double> t, y;
    std::size_t slot = 0;
    for (std::size_t i = 0; i < below.t.size() && below.t[i] <= above.t.back(); ++i) {
        t.push_back(below.t[i]);
        y.push_back(0.5 * (below.y[i] + at_time(above, slot, below.t[i])));
    }
    if (const char* e = std::getenv("EDDY_HEAVE_DUMP"))  // t, the symmetric part, the two runs
        if (FILE* out = std::fopen(e, "w")) {
            for (std::size_t i = 0; i < t.size(); ++i)
                std::fprintf(out, "%.5f %.5f %.5f %.5f\n", t[i], y[i], below.y[i], 2.0 * y[i] - below.y[i]);
            std::fclose(out);
        }
    std::vector<double> ts, zs;  // every 0.02 time units up to 11 (the reference's window)
    for (std::size_t i = 0; i < t.size() && t[i] <= 11.0; ++i)
        if (ts.empty() || t[i] >= ts.back() + 0.02) ts.push_back(t[i]), zs.push_back(y[i]);
    f.fit = fit_decay(ts, zs);
    const double windows[4] = {2.0, 5.5, 9.0, 12.5};
    for (int k = 0; k < 3; ++k)
        extremum(t, y, windows[k], windows[k + 1], k % 2 == 0 ? -1.0 : 1.0, f.time[k], f.ratio[k]);
    return f;
}

}  // namespace

// The bounds, per method (a / r = 20, released a tenth of the radius below and above, the pair's mean;
// docs/bodies.md): the fitted period's relative error, the fitted decay rate over linear theory's, and the
// first overshoot (z / z0 at the first extremum) it must reach at least. DFSPH meets the 5% on the
// period (-2.0%; one release below read -4.3%, above -0.7%: the water's own settling) and decays 1.73 times
// as fast as linear theory. WCSPH (its smooth tank walls with the mirror's share since 2026-12-02):
// +4.2%, 1.77 times (on main before the share the pair read +5.2%, one release below +0.1%). PBF swings
// slowly and is damped hard: +36%, 2.39 times (one release below fitted +71% and 1.10 times to a drift
// without overshoot; the pair overshoots, -0.075): not met, bounded so that it does not get worse unseen.
struct HeaveBounds {
    double period, decay, overshoot;
};

HeaveBounds heave_bounds(const std::string& method) {
    if (method == "dfsph") return {0.05, 2.2, -0.15};
    if (method == "wcsph") return {0.05, 2.5, -0.10};
    return {0.40, 2.6, 0.0};  // pbf
}

class HeaveDecay : public ::testing::TestWithParam<std::string> {};

TEST_P(HeaveDecay, PeriodAndDecayMeetLinearTheory) {
    HeaveCase c;
    c.method = GetParam();
    const HeaveBounds bound = heave_bounds(c.method);
    if (const char* e = std::getenv("EDDY_HEAVE_R")) c.r = std::atof(e);
    if (const char* e = std::getenv("EDDY_HEAVE_OFFSET")) c.offset = std::atof(e);
    const HeaveFigures f = heave(c);
    ASSERT_TRUE(f.finite);
    std::printf("[heave] %s a/r=%g, released %.2f mm below and above equilibrium, their mean: extrema at t sqrt(g/a) = %.3f / %.3f / %.3f "
                "(linear theory %.2f / %.2f / %.2f), z/z0 = %+.3f / %+.3f / %+.3f (%+.3f / %+.3f / %+.3f)\n",
                c.method.c_str(), c.a / c.r, -1e3 * f.z0, f.time[0], f.time[1], f.time[2], kTime[0], kTime[1],
                kTime[2], f.ratio[0], f.ratio[1], f.ratio[2], kRatio[0], kRatio[1], kRatio[2]);
    std::printf("[heave] %s fitted: period %.3f (linear theory %.3f, %+.1f%%), decay rate %.4f (%.4f), offset %+.3f "
                "z0\n",
                c.method.c_str(), 2.0 * kPi / f.fit.w, kPeriod, 100.0 * (2.0 * kPi / f.fit.w / kPeriod - 1.0),
                f.fit.alpha, kDecay, f.fit.offset);
    const std::string key = "bodies.heave_" + c.method + ".";
    test::report_figure(key + "period_percent", 100.0 * (2.0 * kPi / f.fit.w / kPeriod - 1.0));
    test::report_figure(key + "decay_ratio", f.fit.alpha / kDecay);
    EXPECT_LT(std::fabs(2.0 * kPi / f.fit.w / kPeriod - 1.0), bound.period);
    EXPECT_LT(f.fit.alpha, bound.decay * kDecay);
    EXPECT_GT(f.fit.alpha, 0.5 * kDecay);  // it decays: the radiated waves take its energy
    EXPECT_LT(f.ratio[0], bound.overshoot);
}

INSTANTIATE_TEST_SUITE_P(Bodies, HeaveDecay, ::testing::Values("dfsph", "wcsph", "pbf"),
                         [](const auto& info) { return info.param; });
