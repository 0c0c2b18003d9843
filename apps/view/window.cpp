// eddy-view: the window and ImGui (window.hpp).
#include "window.hpp"

#include <epoxy/gl.h>
// epoxy first: GLFW must not include the system GL header
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <cstdio>
#include <string>
#include <vector>

#include "eddy/error.hpp"
#include "app.hpp"
#include "input.hpp"

namespace eddy::view {
namespace {

App* g_app = nullptr;  // the window callbacks' way back to the App (this executable only, not the library)

void key_callback(GLFWwindow*, int key, int, int action, int) {
    if (action != GLFW_PRESS || !g_app || ImGui::GetIO().WantCaptureKeyboard) return;
    on_key(*g_app, key);
}
void scroll_callback(GLFWwindow*, double, double y) {
    if (g_app && !ImGui::GetIO().WantCaptureMouse) g_app->pointer.scroll += y;
}
std::string g_glfw_error;
void glfw_error(int, const char* what) { g_glfw_error = what; }

// ImGui's draw lists this frame: the background list (background true) or the others.
void draw_ui_lists(bool background) {
    ImDrawData* dd = ImGui::GetDrawData();
    ImDrawData part = *dd;
    std::vector<ImDrawList*> lists;
    for (int i = 0; i < dd->CmdListsCount; ++i)
        if ((dd->CmdLists[i] == ImGui::GetBackgroundDrawList()) == background) lists.push_back(dd->CmdLists[i]);
    part.CmdLists = lists.data(), part.CmdListsCount = int(lists.size());
    glDisable(GL_DEPTH_TEST);
    if (!background || !lists.empty()) ImGui_ImplOpenGL3_RenderDrawData(&part);
}

}  // namespace

int open_window(App& app, const Options& opt) {
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
        std::fprintf(stderr, "eddy-view: error: cannot open a window (%s); without a display, run under xvfb-run -a\n",
                     g_glfw_error.c_str());
        return eddy::kExitFailure;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    app.win = glfwCreateWindow(opt.width, opt.height, "eddy view", nullptr, nullptr);
    if (!app.win) {
        std::fprintf(stderr, "eddy-view: error: cannot create an OpenGL 3.3 core window (%s)\n", g_glfw_error.c_str());
        glfwTerminate();
        return eddy::kExitFailure;
    }
    glfwMakeContextCurrent(app.win);
    const bool unthrottled = opt.frames > 0 || opt.bench_render > 0;
    glfwSwapInterval(unthrottled ? 0 : 1);
    g_app = &app;
    glfwSetKeyCallback(app.win, key_callback);  // before ImGui, which chains to them
    glfwSetScrollCallback(app.win, scroll_callback);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini in the user's folder
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(app.win, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    return eddy::kExitOk;
}

void close_window(App& app) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    g_app = nullptr;
    glfwDestroyWindow(app.win);
    glfwTerminate();
}

void begin_ui_frame() {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
}

void draw_ui_background() { draw_ui_lists(true); }
void draw_ui_windows() { draw_ui_lists(false); }

}  // namespace eddy::view
