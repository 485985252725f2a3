// RenderScreenshot (viz/backend/backend.h): the viewer rendered without a display. EGL on Mesa's
// surfaceless platform (EGL_MESA_platform_surfaceless: no X, no Wayland, no GPU needed; llvmpipe
// renders on the CPU), a desktop OpenGL 3.3 core context made current without any surface
// (EGL_KHR_surfaceless_context), an offscreen framebuffer with one RGBA8 colour renderbuffer,
// ImGui's OpenGL 3 backend drawing into it, glReadPixels, rows flipped (GL's first row is the
// bottom one), PNG written atomically (sim/kernel/atomic_file.h: a temporary file renamed, so a
// failed render never leaves a half-written PNG).
//
// Created and destroyed inside one call: the ImGui context, the GL objects, the EGL context. The
// EGL display is initialised on first use and kept for the process (see SurfacelessDisplay).
// Not thread-safe (ImGui's current context is a global).
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cstring>
#include <string>
#include <vector>

#include "sim/kernel/atomic_file.h"
#include "viz/backend/backend.h"
#include "viz/backend/gl.h"
#include "viz/ui/imgui_setup.h"

namespace ksim::viz {
namespace {

// Screenshots above this are refused before anything is allocated (and llvmpipe's renderbuffer
// limit is 16384).
constexpr int kMaxSidePx = 8192;

std::string EglErrorText(const char* what) {
  char code[16];
  std::snprintf(code, sizeof(code), "0x%04x", static_cast<unsigned>(eglGetError()));
  return std::string(what) + " failed (EGL error " + code + ")";
}

// The GL 3.0 framebuffer entry points, through EGL (EGL_KHR_get_all_proc_addresses).
struct FramebufferFunctions {
  PFNGLGENFRAMEBUFFERSPROC gen_framebuffers = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind_framebuffer = nullptr;
  PFNGLGENRENDERBUFFERSPROC gen_renderbuffers = nullptr;
  PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers = nullptr;
  PFNGLBINDRENDERBUFFERPROC bind_renderbuffer = nullptr;
  PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage = nullptr;
  PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status = nullptr;

  template <typename F>
  static bool Load(F* out, const char* name) {
    *out = reinterpret_cast<F>(eglGetProcAddress(name));
    return *out != nullptr;
  }
  bool LoadAll() {
    return Load(&gen_framebuffers, "glGenFramebuffers") &&
           Load(&delete_framebuffers, "glDeleteFramebuffers") &&
           Load(&bind_framebuffer, "glBindFramebuffer") &&
           Load(&gen_renderbuffers, "glGenRenderbuffers") &&
           Load(&delete_renderbuffers, "glDeleteRenderbuffers") &&
           Load(&bind_renderbuffer, "glBindRenderbuffer") &&
           Load(&renderbuffer_storage, "glRenderbufferStorage") &&
           Load(&framebuffer_renderbuffer, "glFramebufferRenderbuffer") &&
           Load(&check_framebuffer_status, "glCheckFramebufferStatus");
  }
};

// The surfaceless display, initialised once per process and never terminated: eglTerminate
// would unload Mesa's driver (dlclose), and what the driver keeps for the process would then
// show as leaks from an unknown module under LeakSanitizer, where no suppression can name it.
// Kept, it stays reachable from Mesa's globals. Later calls reuse it (or its error).
Result<EGLDisplay> SurfacelessDisplay() {
  static const Result<EGLDisplay>* display = []() -> Result<EGLDisplay>* {
    const char* client_extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (client_extensions == nullptr ||
        std::strstr(client_extensions, "EGL_MESA_platform_surfaceless") == nullptr) {
      return new Result<EGLDisplay>(
          Status(Errc::kUnsupported,
                 "headless rendering needs EGL with Mesa's surfaceless platform "
                 "(EGL_MESA_platform_surfaceless; Debian: libegl-mesa0, libgl1-mesa-dri)"));
    }
    auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (get_platform_display == nullptr) {
      return new Result<EGLDisplay>(
          Status(Errc::kUnsupported, "EGL has no eglGetPlatformDisplayEXT"));
    }
    EGLDisplay opened =
        get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (opened == EGL_NO_DISPLAY) {
      return new Result<EGLDisplay>(
          Status(Errc::kUnsupported, EglErrorText("eglGetPlatformDisplayEXT(surfaceless)")));
    }
    EGLint major = 0;
    EGLint minor = 0;
    if (eglInitialize(opened, &major, &minor) != EGL_TRUE) {
      return new Result<EGLDisplay>(Status(Errc::kUnsupported, EglErrorText("eglInitialize")));
    }
    const char* extensions = eglQueryString(opened, EGL_EXTENSIONS);
    if (extensions == nullptr ||
        std::strstr(extensions, "EGL_KHR_surfaceless_context") == nullptr) {
      return new Result<EGLDisplay>(
          Status(Errc::kUnsupported, "EGL lacks EGL_KHR_surfaceless_context"));
    }
    return new Result<EGLDisplay>(opened);
  }();
  return *display;
}

// A desktop OpenGL 3.3 core context, current without a surface while it lives.
class HeadlessContext {
 public:
  HeadlessContext() = default;
  HeadlessContext(const HeadlessContext&) = delete;
  HeadlessContext& operator=(const HeadlessContext&) = delete;
  ~HeadlessContext() {
    if (context_ != EGL_NO_CONTEXT) {
      eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display_, context_);
    }
  }

  Status Open() {
    KSIM_ASSIGN_OR_RETURN(display_, SurfacelessDisplay());
    if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) {
      return Status(Errc::kUnsupported, EglErrorText("eglBindAPI(EGL_OPENGL_API)"));
    }
    const EGLint config_attributes[] = {EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                        EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    if (eglChooseConfig(display_, config_attributes, &config, 1, &configs) != EGL_TRUE ||
        configs < 1) {
      config = nullptr;  // EGL_KHR_no_config_context: a context without a config
    }
    const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION,
                                         3,
                                         EGL_CONTEXT_MINOR_VERSION,
                                         3,
                                         EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                         EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                         EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, context_attributes);
    if (context_ == EGL_NO_CONTEXT) {
      return Status(Errc::kUnsupported, EglErrorText("eglCreateContext(OpenGL 3.3 core)"));
    }
    if (eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_) != EGL_TRUE) {
      return Status(Errc::kUnsupported, EglErrorText("eglMakeCurrent(no surface)"));
    }
    return Status::Ok();
  }

 private:
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
};

// An offscreen RGBA8 framebuffer, bound while it lives.
class Framebuffer {
 public:
  explicit Framebuffer(const FramebufferFunctions& gl) : gl_(gl) {}
  Framebuffer(const Framebuffer&) = delete;
  Framebuffer& operator=(const Framebuffer&) = delete;
  ~Framebuffer() {
    if (framebuffer_ != 0) {
      gl_.bind_framebuffer(GL_FRAMEBUFFER, 0);
      gl_.delete_framebuffers(1, &framebuffer_);
    }
    if (renderbuffer_ != 0) gl_.delete_renderbuffers(1, &renderbuffer_);
  }

  Status Create(int width, int height) {
    gl_.gen_framebuffers(1, &framebuffer_);
    gl_.bind_framebuffer(GL_FRAMEBUFFER, framebuffer_);
    gl_.gen_renderbuffers(1, &renderbuffer_);
    gl_.bind_renderbuffer(GL_RENDERBUFFER, renderbuffer_);
    gl_.renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    gl_.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                                 renderbuffer_);
    const GLenum status = gl_.check_framebuffer_status(GL_FRAMEBUFFER);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
      return Status(Errc::kUnsupported, "offscreen framebuffer of " + std::to_string(width) + "x" +
                                            std::to_string(height) + " incomplete (status " +
                                            std::to_string(status) + ")");
    }
    return Status::Ok();
  }

 private:
  const FramebufferFunctions& gl_;
  GLuint framebuffer_ = 0;
  GLuint renderbuffer_ = 0;
};

// An ImGui context with the OpenGL 3 backend, destroyed with it.
class ImGuiSession {
 public:
  ImGuiSession() {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    SetUpImGui(gl::kFontPx);
  }
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;
  ~ImGuiSession() {
    if (backend_) ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext();
  }
  bool InitBackend() {
    backend_ = ImGui_ImplOpenGL3_Init(gl::kGlslVersion);
    return backend_;
  }

 private:
  bool backend_ = false;
};

// The framebuffer's pixels, top row first.
std::vector<uint8_t> ReadPixels(int width, int height) {
  const size_t row_bytes = static_cast<size_t>(width) * 4;
  std::vector<uint8_t> bottom_up(row_bytes * static_cast<size_t>(height));
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
  std::vector<uint8_t> top_down(bottom_up.size());
  for (int y = 0; y < height; ++y) {
    std::memcpy(&top_down[static_cast<size_t>(y) * row_bytes],
                &bottom_up[static_cast<size_t>(height - 1 - y) * row_bytes], row_bytes);
  }
  return top_down;
}

}  // namespace

Status RenderScreenshot(const Runs& runs, ViewState& state, ViewCache& cache,
                        const ScreenshotOptions& options) {
  if (options.width < 1 || options.height < 1 || options.width > kMaxSidePx ||
      options.height > kMaxSidePx) {
    return Status(Errc::kInvalidArgument, "screenshot size " + std::to_string(options.width) + "x" +
                                              std::to_string(options.height) +
                                              " out of range: 1 to " + std::to_string(kMaxSidePx) +
                                              " pixels a side");
  }
  if (options.frames < 1) {
    return Status(Errc::kInvalidArgument, "a screenshot draws at least one frame");
  }
  // The output first: a path that cannot be written fails before any rendering.
  KSIM_ASSIGN_OR_RETURN(sim::AtomicFile out, sim::AtomicFile::Create(options.path));

  HeadlessContext context;
  KSIM_RETURN_IF_ERROR(context.Open());
  FramebufferFunctions functions;
  if (!functions.LoadAll()) {
    return Status(Errc::kUnsupported, "OpenGL lacks framebuffer objects (GL 3.0)");
  }
  Framebuffer framebuffer(functions);
  KSIM_RETURN_IF_ERROR(framebuffer.Create(options.width, options.height));

  std::vector<uint8_t> pixels;
  {
    ImGuiSession session;
    if (!session.InitBackend()) {
      return Status(Errc::kUnsupported,
                    "ImGui's OpenGL 3 backend did not initialise (libGL.so.1 missing?)");
    }
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(options.width), static_cast<float>(options.height));
    io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
    state.fixed_layout = true;
    for (int frame = 0; frame < options.frames; ++frame) {
      io.DeltaTime = 1.0f / 60.0f;
      gl::RenderViewerFrame(runs, state, cache, options.width, options.height);
    }
    glFinish();
    pixels = ReadPixels(options.width, options.height);
    if (const GLenum error = glGetError(); error != GL_NO_ERROR) {
      return Status(Errc::kUnsupported,
                    "OpenGL error " + std::to_string(error) + " rendering the screenshot");
    }
  }
  KSIM_ASSIGN_OR_RETURN(std::string png, gl::EncodePng(pixels, options.width, options.height));
  KSIM_RETURN_IF_ERROR(out.Append(png));
  return out.Commit();
}

}  // namespace ksim::viz
