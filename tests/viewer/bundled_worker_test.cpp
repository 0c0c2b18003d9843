// Every bundled scene plays in the viewer (issue 45: dam_break_debris_3d diverged in the viewer at t = 0.31 s
// while `eddy run` completed): the viewer's own simulation thread (SimWorker, the loop the window drives) takes
// each scene through 100 lockstep frames of one step, without a divergence or an error. No window: the
// drawing reads copies of the state (worker_test.cpp), so what can diverge is all here.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_worker.hpp"
#include "worker_support.hpp"

using namespace eddy::view;

namespace {

std::vector<std::string> bundled_scenes() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(EDDY_SOURCE_DIR) / "scenes"))
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

class BundledScene : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(BundledScene, PlaysOneHundredFramesInTheViewer) {
    WorkerConfig c;
    c.scene = GetParam();
    c.threads = 1;
    SimWorker w(c);
    w.playing = false;
    w.start();
    constexpr std::uint64_t kFrames = 100;
    for (std::uint64_t i = 0; i < kFrames; ++i) w.request_step();
    const auto s = eddy::view::test::wait_until(
        w, [](const Snapshot& s) { return s.steps == kFrames || s.status.find("diverged") != std::string::npos; }, 1200);
    ASSERT_TRUE(s);
    std::printf("%s: %llu steps, t = %.4f s, status '%s'\n", GetParam().c_str(), static_cast<unsigned long long>(s->steps),
                s->time, s->status.c_str());
    EXPECT_EQ(s->steps, kFrames) << s->status;
    EXPECT_EQ(s->status.find("diverged"), std::string::npos) << s->status;
}

INSTANTIATE_TEST_SUITE_P(Bundled, BundledScene, ::testing::ValuesIn(bundled_scenes()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
