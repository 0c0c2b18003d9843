// eddy-view: screenshots and recordings (recording.hpp).
#include "recording.hpp"

#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "gfx.hpp"

namespace eddy::view {
namespace {

bool have_ffmpeg() { return std::system("command -v ffmpeg >/dev/null 2>&1") == 0; }

}  // namespace

std::string timestamp() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
    return buf;
}

void take_screenshot(GLFWwindow* win, const std::string& path) {
    int w, h;
    glfwGetFramebufferSize(win, &w, &h);
    save_framebuffer_png(path, w, h);
}

void request_screenshot(Recorder& rec) { rec.pending_screenshot = fmt::format("eddy-view-{}.png", timestamp()); }

void stop_recording(Recorder& rec, std::string& message) {
    if (!rec.on) return;
    rec.on = false;
    if (rec.index > 0 && have_ffmpeg()) {
        const std::string mp4 = (std::filesystem::path(rec.dir) / "recording.mp4").string();
        const std::string cmd = fmt::format(
            "ffmpeg -y -loglevel error -framerate 30 -i '{}/frame_%05d.png' -pix_fmt yuv420p "
            "-vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2' '{}'",
            rec.dir, mp4);
        message = std::system(cmd.c_str()) == 0 ? "recorded " + mp4 : "ffmpeg failed; the frames are in " + rec.dir;
    } else {
        message = fmt::format("{} frames in {} (no ffmpeg on PATH: no MP4)", rec.index, rec.dir);
    }
    std::fprintf(stderr, "eddy-view: %s\n", message.c_str());
}

void start_recording(Recorder& rec, const std::string& dir, std::string& message) {
    rec.dir = dir;
    std::error_code ec;
    std::filesystem::create_directories(rec.dir, ec);
    if (ec) {
        message = fmt::format("cannot create {}: {}", rec.dir, ec.message());
        return;
    }
    rec.index = 0;
    rec.on = true;
}

void toggle_recording(Recorder& rec, std::string& message) {
    rec.on ? stop_recording(rec, message) : start_recording(rec, fmt::format("eddy-view-recording-{}", timestamp()), message);
}

void capture_scene(Recorder& rec, std::string& message, GLFWwindow* win, const Options& opt, bool last) {
    // Screenshots and recorded frames hold the scene, not the controls.
    if (last && !opt.screenshot.empty()) rec.pending_screenshot = opt.screenshot;
    if (!rec.pending_screenshot.empty() && !opt.screenshot_ui) {
        try {
            take_screenshot(win, rec.pending_screenshot);
            message = "saved " + rec.pending_screenshot;
        } catch (const std::exception& e) {
            message = e.what();
            if (last) throw;
        }
        rec.pending_screenshot.clear();
    }
    if (rec.on) {
        try {
            take_screenshot(win, fmt::format("{}/frame_{:05d}.png", rec.dir, rec.index++));
        } catch (const std::exception& e) {
            message = e.what();
            rec.on = false;
        }
    }
}

void capture_window(Recorder& rec, GLFWwindow* win) {
    if (!rec.pending_screenshot.empty()) {  // --screenshot-ui: the window as it looks
        take_screenshot(win, rec.pending_screenshot);
        rec.pending_screenshot.clear();
    }
}

}  // namespace eddy::view
