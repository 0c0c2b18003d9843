// landing_step(): how a run's steps reach a frame time. The last steps before a frame share the
// remaining time equally (at most 8 of them), so that a frame never ends on a short step after long
// ones (a pressure solver's frame would otherwise show the short step's pressure).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "eddy/simulation.hpp"

using namespace eddy;

namespace {

// The steps from `time` to `until` when the method always suggests `dt`.
std::vector<float> steps_to(double time, double until, float dt) {
    std::vector<float> out;
    for (int guard = 0; guard < 100000; ++guard) {
        bool lands = false;
        const float step = landing_step(dt, time, until, lands);
        out.push_back(step);
        time = lands ? until : time + step;
        if (lands) return out;
    }
    ADD_FAILURE() << "never landed";
    return out;
}

}  // namespace

TEST(LandingStep, FarFromTheFrameTheStepIsTheMethods) {
    bool lands = true;
    EXPECT_EQ(landing_step(0.001f, 0.0, 1.0, lands), 0.001f);
    EXPECT_FALSE(lands);
    EXPECT_EQ(landing_step(0.001f, 0.0, 0.0, lands), 0.001f);  // no frame to land on
    EXPECT_FALSE(lands);
}

TEST(LandingStep, TheLastStepsAreEqualAndLandExactly) {
    // 0.05 s frames, 2.9 ms steps: 17.24 steps a frame, so 18 steps; the last ones all equal.
    const std::vector<float> s = steps_to(0.0, 0.05, 0.0029f);
    ASSERT_EQ(s.size(), 18u);
    const float last = s.back();
    for (std::size_t k = s.size() - 8; k < s.size(); ++k) EXPECT_NEAR(s[k], last, 1e-9f) << k;
    for (float step : s) EXPECT_LE(step, 0.0029f * (1.0f + 1e-6f));
    // No step is much shorter than the one before it.
    for (std::size_t k = 1; k < s.size(); ++k) EXPECT_GE(s[k], 0.85f * s[k - 1]) << k;
    double t = 0.0;
    for (float step : s) t += step;
    EXPECT_NEAR(t, 0.05, 1e-7);
}

TEST(LandingStep, AFrameThatTheStepDividesTakesNoExtraStep) {
    // 0.04 s in steps of 0.005f (a float just below 0.005): 8 steps, not 7 and two halves.
    EXPECT_EQ(steps_to(0.0, 0.04, 0.005f).size(), 8u);
    EXPECT_EQ(steps_to(0.035, 0.04, 0.005f).size(), 1u);
}
