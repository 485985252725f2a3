// The part of the two backends (viz/backend/glfw.cc, viz/backend/egl.cc) that does not
// depend on the window system: one viewer frame rendered with Dear ImGui's OpenGL 3 backend
// (ImGui_ImplOpenGL3_*, compiled into Debian's libimgui.a), and RGBA pixels encoded as PNG.
//
// GL function loading: ImGui 1.86's OpenGL 3 backend loads its GL entry points itself (its
// imgl3w loader dlopens libGL.so.1 and asks glXGetProcAddress). With GLVND (Debian's libGL is
// GLVND's) those entry points are dispatch stubs that call into whichever context is current on
// the thread, an EGL context included, so the same backend serves the GLFW window and the
// headless EGL context. Single-threaded: everything runs on the thread whose context is current.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::viz::gl {

// GLSL version string both backends give ImGui_ImplOpenGL3_Init (OpenGL 3.0+; Mesa's llvmpipe
// accepts it in a 3.3+ core profile context too).
inline constexpr const char* kGlslVersion = "#version 130";
// Font size of the viewer's text, in pixels.
inline constexpr float kFontPx = 16.0f;
// The colour behind the panels.
inline constexpr float kClearRgba[4] = {0.09f, 0.09f, 0.11f, 1.0f};

// Draws and renders one frame of the viewer into the currently bound framebuffer, of
// `width` x `height` pixels. The caller has filled io.DisplaySize, io.DeltaTime and the inputs.
// REQUIRES: a current GL context, an ImGui context set up with ImGui_ImplOpenGL3_Init.
void RenderViewerFrame(const Runs& runs, ViewState& state, ViewCache& cache, int width, int height);

// PNG bytes of `rgba` (width * height * 4 bytes, top row first).
// REQUIRES: rgba.size() == width * height * 4, width and height > 0.
Result<std::string> EncodePng(const std::vector<uint8_t>& rgba, int width, int height);

}  // namespace ksim::viz::gl
