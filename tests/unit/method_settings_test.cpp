// A scene's settings checked against its method's table when the scene is read
// (detail::check_method_settings, src/scene/method_switch.cpp): an unknown key with a "did you mean",
// a bad value with the message make_simulation gives; and the run's progress text (eddy/progress.hpp)
// the command line and Python share.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "eddy/error.hpp"
#include "eddy/progress.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
#include "scene/method_switch.hpp"
#include "test_support.hpp"

using namespace eddy;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

nlohmann::json tank(const std::string& method, const nlohmann::json& settings) {
    return {{"name", "t"},
            {"dimension", 2},
            {"method", method},
            {"particle_radius", 0.01},
            {"settings", settings},
            {"boundaries", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {1, 1}}}}},
            {"fluids", {{{"shape", "box"}, {"min", {0, 0}}, {"max", {0.2, 0.2}}}}}};
}

}  // namespace

TEST(MethodSettings, EditDistanceAndClosestKey) {
    using detail::closest_key;
    using detail::edit_distance;
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("abc", ""), 3u);
    EXPECT_EQ(edit_distance("viscosity", "viscosity"), 0u);
    EXPECT_EQ(edit_distance("visocsity", "viscosity"), 2u);  // a swap is two substitutions
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    const std::vector<std::string> keys = {"cfl", "viscosity", "rest_density", "surface_tension"};
    EXPECT_EQ(closest_key("visocsity", keys), "viscosity");
    EXPECT_EQ(closest_key("viscosty", keys), "viscosity");
    EXPECT_EQ(closest_key("rest_densty", keys), "rest_density");
    EXPECT_EQ(closest_key("cf", keys), "cfl");
    EXPECT_EQ(closest_key("foo", keys), "");           // 3 edits from cfl: another word, not a typo
    EXPECT_EQ(closest_key("temperature", keys), "");
    EXPECT_EQ(closest_key(std::string(200, 'x'), keys), "");
}

TEST(MethodSettings, UnknownKeyGetsTheClosestOne) {
    struct Case {
        const char *method, *good, *typo, *meant;
    };
    for (const Case& c : {Case{"wcsph", "cfl", "seed_visocsity", "seed_viscosity"}, Case{"dfsph", "cfl", "visocsity", "viscosity"},
                          Case{"pbf", "iterations", "vorticty", "vorticity"},
                          Case{"clavet", "stiffness", "linear_viscosty", "linear_viscosity"}}) {
        SCOPED_TRACE(c.method);
        const std::string msg = error_of([&] {
            detail::check_method_settings(c.method, {{c.good, 0.3}, {c.typo, 0.1}}, "x.json: settings");
        });
        EXPECT_EQ(msg.rfind(std::string("x.json: settings: unknown key '") + c.typo + "'; did you mean '" + c.meant +
                                "'? allowed keys: ",
                            0),
                  0u)
            << msg;
        EXPECT_NE(msg.find(c.good), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
    const std::string far = error_of([] { detail::check_method_settings("wcsph", {{"foo", 1}}, "x.json: settings"); });
    EXPECT_EQ(far.rfind("x.json: settings: unknown key 'foo'; allowed keys: ", 0), 0u) << far;
    EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
    const std::string grid =
        error_of([] { detail::check_method_settings("shallow_water", {{"cfl", 0.2}, {"vorticty", 1}}, "w: settings"); });
    EXPECT_NE(grid.find("unknown key 'vorticty'; did you mean 'vorticity'?"), std::string::npos) << grid;
}

TEST(MethodSettings, ValuesAreCheckedAsMakeSimulationChecksThem) {
    // The same message as make_simulation (the table's reader, apply_json), for a key without a close
    // one, a value out of range and a value of the wrong type.
    for (const nlohmann::json& settings :
         {nlohmann::json{{"foo", 1}}, nlohmann::json{{"seed_viscosity", -1}}, nlohmann::json{{"viscosity", 0.1}}, nlohmann::json{{"cfl", "fast"}}}) {
        SCOPED_TRACE(settings.dump());
        // The scene loader runs the check (parse_scene); make_simulation, given the scene built without
        // it, says the same.
        const std::string at_load = error_of([&] { parse_scene(tank("wcsph", settings), "x.json"); });
        Scene s = parse_scene(tank("wcsph", nlohmann::json::object()), "x.json");
        s.settings = settings;
        const std::string at_build = error_of([&] {
            ExecContext exec(1);
            make_simulation(s, 1000000, exec);
        });
        EXPECT_NE(at_load, "no error");
        EXPECT_EQ(at_load, at_build);
    }
    EXPECT_NE(error_of([] { detail::check_method_settings("pbf", {{"speed_of_sound", 20}}, "s"); })
                  .find("unknown key 'speed_of_sound'"),
              std::string::npos);
    EXPECT_NE(error_of([] { detail::check_method_settings("dfsph", nlohmann::json::array(), "s"); }).find("expected an object"),
              std::string::npos);
}

TEST(MethodSettings, GoodSettingsPass) {
    EXPECT_NO_THROW(detail::check_method_settings("wcsph", nlohmann::json(), "s"));  // none given
    EXPECT_NO_THROW(detail::check_method_settings("wcsph", nlohmann::json::object(), "s"));
    EXPECT_NO_THROW(detail::check_method_settings("dfsph", {{"viscosity", 1e-6}, {"cfl", 0.3}}, "s"));
    EXPECT_NO_THROW(detail::check_method_settings("no_such_method", {{"foo", 1}}, "s"));  // the scene's check answers
    // Every bundled scene passes: the check may be added to the scene loader without refusing one.
    for (const auto& e : list_bundled_scenes()) {
        SCOPED_TRACE(e.name);
        const Scene s = load_scene(e.file);
        EXPECT_NO_THROW(detail::check_method_settings(s.method, s.settings, s.where() + ": settings"));
    }
}

TEST(ProgressText, TerminalRedrawsOneLine) {
    Progress p;
    p.time = 0.5;
    p.end_time = 2.0;
    p.steps = 340;
    p.steps_per_second = 850;
    p.particles = 27000;
    p.frames_written = 3;
    p.eta_seconds = 65;
    EXPECT_EQ(format_duration(65), "1m05s");
    EXPECT_EQ(format_duration(3720), "1h02m");
    EXPECT_EQ(format_duration(-1), "--");
    EXPECT_DOUBLE_EQ(progress_fraction(p), 0.25);
    EXPECT_EQ(progress_line(p), "t = 0.5000/2 s  step 340  850 steps/s  27000 particles  3 frames  ETA 1m05s");
    ProgressText tty(true);
    EXPECT_EQ(tty(p), "\r\033[2K[######..................]  25% " + progress_line(p));
    EXPECT_TRUE(tty.line_open());
    p.time = 2.0;
    p.finished = true;
    const std::string last = tty(p);
    EXPECT_EQ(last.substr(0, 38), "\r\033[2K[########################] 100% t");
    EXPECT_EQ(last.back(), '\n');
    EXPECT_FALSE(tty.line_open());
}

TEST(ProgressText, PipedWritesALineEveryTenth) {
    ProgressText piped(false);
    Progress p;
    p.end_time = 1.0;
    std::vector<std::string> lines;
    for (double t : {0.02, 0.05, 0.11, 0.12, 0.19, 0.35, 0.36, 0.999}) {
        p.time = t;
        if (const std::string s = piped(p); !s.empty()) lines.push_back(s);
    }
    p.time = 1.0;
    p.finished = true;
    lines.push_back(piped(p));
    ASSERT_EQ(lines.size(), 4u);  // 11%, 35%, 99.9%, the end
    EXPECT_EQ(lines[0].rfind("progress  11%: t = 0.1100/1 s", 0), 0u) << lines[0];
    EXPECT_EQ(lines[1].rfind("progress  35%", 0), 0u) << lines[1];
    EXPECT_EQ(lines[2].rfind("progress  99%", 0), 0u) << lines[2];
    EXPECT_EQ(lines[3].rfind("progress 100%", 0), 0u) << lines[3];
    for (const auto& l : lines) EXPECT_EQ(l.back(), '\n');
    EXPECT_FALSE(piped.line_open());
    // A step limit counts too: 30 of 100 steps is 30% even before any time passed.
    ProgressText by_steps(false);
    Progress q;
    q.end_time = 10.0;
    q.max_steps = 100;
    q.steps = 30;
    EXPECT_EQ(by_steps(q).rfind("progress  30%", 0), 0u);
}
