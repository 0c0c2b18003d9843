// eddy-view: screenshots (P, the panel's button, --screenshot) and recordings (V, the panel's button,
// --record): PNGs of the scene as drawn, a recording's frames numbered in a folder and joined into an MP4
// by ffmpeg when it is on PATH.
#pragma once
#include <string>

#include "options.hpp"

struct GLFWwindow;

namespace eddy::view {

struct Recorder {
    std::string pending_screenshot;  // saved once this frame is drawn
    bool on = false;                 // recording
    std::string dir;                 // the recording's folder
    int index = 0;                   // the next recorded frame's number
};

/// Local time as YYYYMMDD-HHMMSS, for the default file and folder names.
std::string timestamp();

/// Saves the window's framebuffer as a PNG. Throws on failure.
void take_screenshot(GLFWwindow* win, const std::string& path);

/// A screenshot of the next frame into eddy-view-<time>.png (P, the panel's button).
void request_screenshot(Recorder& rec);

/// Records every frame into `dir` from the next one; `message` says why not when the folder cannot be made.
void start_recording(Recorder& rec, const std::string& dir, std::string& message);
/// Ends a recording: its frames joined into dir/recording.mp4 by ffmpeg when it is on PATH. `message`
/// says where they are (also printed).
void stop_recording(Recorder& rec, std::string& message);
/// Stops a recording, or starts one into eddy-view-recording-<time> (V, the panel's button).
void toggle_recording(Recorder& rec, std::string& message);

/// After the scene (and the legend) is drawn, before the controls: the pending screenshot (with
/// --frames, the last frame's is --screenshot), unless --screenshot-ui, and the recording's frame.
/// `last`: the last frame of a --frames run, whose screenshot failing throws.
void capture_scene(Recorder& rec, std::string& message, GLFWwindow* win, const Options& opt, bool last);
/// After the controls are drawn: a screenshot still pending (--screenshot-ui: the window as it looks).
void capture_window(Recorder& rec, GLFWwindow* win);

}  // namespace eddy::view
