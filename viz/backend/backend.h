// The viewer's platform code, behind one header (docs/STYLE.md: Tracy's backends): a desktop
// window (GLFW + OpenGL 3, viz/backend/glfw.cc) and a headless renderer (EGL on Mesa's
// surfaceless platform into an offscreen framebuffer, viz/backend/egl.cc) that writes one
// frame as a PNG. Both create their own ImGui context, set it up with SetUpImGui
// (viz/ui/imgui_setup.h), draw DrawViewer each frame with the caller's ViewState and ViewCache
// (one pair per viewer) and destroy the context before returning.
#pragma once

#include <string>

#include "core/base/status.h"
#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::viz {

struct WindowOptions {
  int width = 1600;
  int height = 1000;
  std::string title = "ksim";
  int max_frames = 0;  // > 0: close the window after this many frames (smoke tests, demos)
};

// Opens the window and runs the viewer until it is closed. kUnsupported when no window can be
// opened (no display), naming why.
Status RunWindow(const Runs& runs, ViewState& state, ViewCache& cache,
                 const WindowOptions& options);

struct ScreenshotOptions {
  int width = 1600;
  int height = 1000;
  int frames = 4;  // frames drawn before the capture (ImGui settles its layout over a few)
  std::string path;
};

// Renders `frames` frames at a fixed 1/60 s step without a display and writes the last one as
// an RGBA PNG to options.path, atomically (temporary file, rename). kUnsupported when EGL or
// its surfaceless platform is missing, kIoError when the file cannot be written.
Status RenderScreenshot(const Runs& runs, ViewState& state, ViewCache& cache,
                        const ScreenshotOptions& options);

}  // namespace ksim::viz
