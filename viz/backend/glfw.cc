// RunWindow (viz/backend/backend.h): the desktop viewer. A GLFW window with an OpenGL 3.3 core
// context (vsync on: the frame loop runs at the display's rate and sleeps in the swap), ImGui's
// GLFW backend feeding mouse and keyboard (its callbacks installed on the window), and each
// frame the viewer drawn by gl::RenderViewerFrame into the window's framebuffer (HiDPI: the
// framebuffer may be larger than the window; ImGui scales by DisplayFramebufferScale).
//
// GLFW is initialised and terminated inside the call; its error callback keeps the last error
// text so that a failed glfwInit (no DISPLAY, no WAYLAND_DISPLAY) can be reported as it was.
// Main thread only (GLFW's rule).
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <string>

#include "viz/backend/backend.h"
#include "viz/backend/gl.h"
#include "viz/ui/imgui_setup.h"

namespace ksim::viz {
namespace {

// GLFW's last error on this thread as "<code>: <description>" ("" none); reading clears it
// (glfwGetError, GLFW 3.3: no error callback, so nothing kept here).
std::string TakeGlfwError() {
  const char* description = nullptr;
  const int code = glfwGetError(&description);
  if (code == GLFW_NO_ERROR) return "";
  return std::to_string(code) + ": " + (description != nullptr ? description : "");
}

// glfwInit / glfwTerminate.
class GlfwLibrary {
 public:
  GlfwLibrary() { initialised_ = glfwInit() == GLFW_TRUE; }
  GlfwLibrary(const GlfwLibrary&) = delete;
  GlfwLibrary& operator=(const GlfwLibrary&) = delete;
  ~GlfwLibrary() {
    if (initialised_) glfwTerminate();
  }
  bool initialised() const { return initialised_; }

 private:
  bool initialised_ = false;
};

// The ImGui context with both backends, torn down in reverse order.
class WindowImGui {
 public:
  WindowImGui() {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    SetUpImGui(gl::kFontPx);
  }
  WindowImGui(const WindowImGui&) = delete;
  WindowImGui& operator=(const WindowImGui&) = delete;
  ~WindowImGui() {
    if (opengl_) ImGui_ImplOpenGL3_Shutdown();
    if (glfw_) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  Status Init(GLFWwindow* window) {
    glfw_ = ImGui_ImplGlfw_InitForOpenGL(window, /*install_callbacks=*/true);
    if (!glfw_) return Status(Errc::kUnsupported, "ImGui's GLFW backend did not initialise");
    opengl_ = ImGui_ImplOpenGL3_Init(gl::kGlslVersion);
    if (!opengl_) return Status(Errc::kUnsupported, "ImGui's OpenGL 3 backend did not initialise");
    return Status::Ok();
  }

 private:
  bool glfw_ = false;
  bool opengl_ = false;
};

}  // namespace

Status RunWindow(const Runs& runs, ViewState& state, ViewCache& cache,
                 const WindowOptions& options) {
  TakeGlfwError();  // an earlier failure is not this window's
  GlfwLibrary glfw;
  if (!glfw.initialised()) {
    const std::string error = TakeGlfwError();
    return Status(Errc::kUnsupported, "no display: cannot open a window (GLFW " +
                                          (error.empty() ? std::string("init failed") : error) +
                                          "); render headless with --screenshot out.png --at-ms T");
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);  // macOS needs it; harmless elsewhere
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr, nullptr);
  if (window == nullptr) {
    return Status(Errc::kUnsupported, "cannot open a " + std::to_string(options.width) + "x" +
                                          std::to_string(options.height) +
                                          " OpenGL 3.3 window (GLFW " + TakeGlfwError() +
                                          "); render headless with --screenshot out.png --at-ms T");
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);  // vsync

  Status result = Status::Ok();
  {
    WindowImGui imgui;
    result = imgui.Init(window);
    state.fixed_layout = false;
    int frames = 0;
    while (result.ok() && glfwWindowShouldClose(window) == GLFW_FALSE &&
           (options.max_frames <= 0 || frames < options.max_frames)) {
      glfwPollEvents();
      ImGui_ImplGlfw_NewFrame();  // display size, DeltaTime, mouse, keyboard
      int width = 0;
      int height = 0;
      glfwGetFramebufferSize(window, &width, &height);
      if (width <= 0 || height <= 0) {  // minimised: nothing to draw
        glfwWaitEvents();
        continue;
      }
      gl::RenderViewerFrame(runs, state, cache, width, height);
      glfwSwapBuffers(window);
      ++frames;
    }
  }
  glfwDestroyWindow(window);
  return result;
}

}  // namespace ksim::viz
