// viz/backend/gl.h: the frame both backends render and the PNG encoder (stb_image_write from
// Debian's libstb, the library Dear ImGui's package already depends on).
#include "viz/backend/gl.h"

#include <GL/gl.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>

#include "core/base/check.h"
#include "viz/ui/panels.h"

namespace ksim::viz::gl {

void RenderViewerFrame(const Runs& runs, ViewState& state, ViewCache& cache, int width,
                       int height) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  DrawViewer(runs, state, cache);
  ImGui::Render();
  glViewport(0, 0, width, height);
  glClearColor(kClearRgba[0], kClearRgba[1], kClearRgba[2], kClearRgba[3]);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

namespace {

void AppendToString(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                             static_cast<size_t>(size));
}

}  // namespace

Result<std::string> EncodePng(const std::vector<uint8_t>& rgba, int width, int height) {
  KSIM_CHECK(width > 0 && height > 0);
  KSIM_CHECK(rgba.size() == static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  std::string png;
  if (stbi_write_png_to_func(&AppendToString, &png, width, height, 4, rgba.data(), width * 4) ==
          0 ||
      png.empty()) {
    return Status(Errc::kIoError, "cannot encode a " + std::to_string(width) + "x" +
                                      std::to_string(height) + " PNG");
  }
  return png;
}

}  // namespace ksim::viz::gl
