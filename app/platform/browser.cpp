#include "app/platform/browser.hpp"

#include "app/platform/gl.hpp"
#include "app/platform/platform.hpp"

#include <emscripten/emscripten.h>
#include <emscripten/html5.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace attnviz::platform::browser {

// clang-format off
EM_JS(void, js_download, (const char* path), {
  const name = UTF8ToString(path);
  let blob, file = name.split("/").pop();
  if (FS.isDir(FS.stat(name).mode)) {  // a folder: one ZIP of its files (index.html)
    const files = FS.readdir(name).filter((entry) => entry !== "." && entry !== "..").sort()
      .map((entry) => ({name: file + "/" + entry, bytes: FS.readFile(name + "/" + entry)}));
    blob = Module.attnvizZip(files);
    file += ".zip";
  } else {
    blob = new Blob([FS.readFile(name)]);
  }
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = file;
  document.body.appendChild(link);
  link.click();
  setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
});

EM_JS(void, js_pick_file, (int model), {
  const input = document.createElement("input");
  input.type = "file";
  // A model: a llama2.c .bin (with its tokenizer), or a GPT-2 folder's files chosen together.
  input.accept = model ? ".bin,.safetensors,.json,.txt" : ".json";
  input.multiple = !!model;
  // As if dropped on the canvas: GLFW copies the files into the page's memory, then calls the
  // window's drop callback with their paths.
  // In the page (hidden) while it is open: some browsers open no picker for a detached input.
  input.style.display = "none";
  document.body.appendChild(input);
  input.onchange = () => {
    if (input.files.length) GLFW.onDrop({dataTransfer: {files: input.files}, preventDefault() {}});
    input.remove();
  };
  input.oncancel = () => input.remove();
  input.click();
});
EM_JS(void, js_fetch_model, (const char* name), {
  Module.attnvizFetchModel(UTF8ToString(name));
});

EM_JS(void, js_fetch_font, (const char* file), {
  Module.attnvizFetchFont(UTF8ToString(file));
});

EM_JS(int, js_fonts_arrived, (), {
  return Module.attnvizFontsArrived || 0;
});

// The clipboard: what the app copies goes to the system's clipboard (where the browser allows
// it) and is kept for the app's own pastes; what the user pastes (Ctrl+V, a paste event on the
// page: index.html) is what the app pastes next.
EM_JS(void, js_set_clipboard, (const char* text), {
  Module.attnvizClipboard = UTF8ToString(text);
  if (navigator.clipboard && navigator.clipboard.writeText)
    navigator.clipboard.writeText(Module.attnvizClipboard).catch(() => {});
});

EM_JS(char*, js_clipboard, (), {
  const text = Module.attnvizClipboard || "";
  const bytes = lengthBytesUTF8(text) + 1;
  const copy = _malloc(bytes);
  stringToUTF8(text, copy, bytes);
  return copy;
});

EM_JS(int, js_page_fullscreen, (), {
  return document.fullscreenElement ? 1 : 0;
});

EM_JS(void, js_set_page_fullscreen, (int on), {
  const done = (error) => console.warn("AttnViz: full screen: " + error.message);
  if (on && !document.fullscreenElement)
    document.documentElement.requestFullscreen().catch(done);
  else if (!on && document.fullscreenElement)
    document.exitFullscreen().catch(done);
});

// The canvas resized to the page: as glfwSetWindowSize, without its full-screen request when the
// size is the screen's (refused outside a user's gesture, and asked again every frame).
EM_JS(void, js_resize_canvas, (int width, int height), {
  if (!GLFW.active) return;
  Browser.setCanvasSize(width, height, true);
  GLFW.active.width = width;
  GLFW.active.height = height;
  GLFW.onWindowSizeChanged();
  GLFW.onFramebufferSizeChanged();
});

EM_JS(void, js_follow_text_input, (int wanted), {
  if (Module.attnvizFollowTextInput) Module.attnvizFollowTextInput(wanted !== 0);
});

EM_JS(void, js_show_error, (const char* text), {
  const message = document.getElementById("message");
  if (!message) return;
  message.textContent = UTF8ToString(text);
  message.className = "error";
  message.style.display = "block";
});

EM_JS(void, js_first_frame_drawn, (), {
  Module.attnvizFirstFrameMs = performance.now();
  console.log("AttnViz: first frame after " + Math.round(Module.attnvizFirstFrameMs) + " ms");
});

EM_JS(void, js_frame_drawn, (double frames, int settled), {
  Module.attnvizFrames = frames;
  Module.attnvizSettled = settled !== 0;
  if (settled && !Module.attnvizReady) {
    Module.attnvizReady = performance.now();
    console.log("AttnViz: ready after " + Math.round(Module.attnvizReady) + " ms");
  }
});
// clang-format on

float device_pixel_ratio() {
  const double ratio = emscripten_get_device_pixel_ratio();
  return std::isfinite(ratio) && ratio > 0 ? static_cast<float>(ratio) : 1.0f;
}

void canvas_pixel_size(int& width, int& height) {
  double css_width = 0, css_height = 0;
  if (emscripten_get_element_css_size("#canvas", &css_width, &css_height) !=
      EMSCRIPTEN_RESULT_SUCCESS)
    return;
  const double ratio = device_pixel_ratio();
  if (!(css_width >= 1 && css_height >= 1)) return;
  width = static_cast<int>(std::lround(std::min(css_width * ratio, 16384.0)));
  height = static_cast<int>(std::lround(std::min(css_height * ratio, 16384.0)));
}

bool fit_canvas(GLFWwindow* window, float& content_scale) {
  bool changed = false;
  if (const float ratio = std::max(1.0f, device_pixel_ratio()); ratio != content_scale) {
    content_scale = ratio;
    changed = true;
  }
  int window_width = 0, window_height = 0;
  glfwGetWindowSize(window, &window_width, &window_height);
  int width = window_width, height = window_height;
  canvas_pixel_size(width, height);
  if (width != window_width || height != window_height) {
    js_resize_canvas(width, height);
    changed = true;
  }
  return changed;
}

void set_clipboard(const char* text) {
  js_set_clipboard(text != nullptr ? text : "");
}

const char* clipboard() {
  static std::string text;  // ImGui copies it at once
  char* copy = js_clipboard();
  text = copy != nullptr ? copy : "";
  std::free(copy);
  return text.c_str();
}

void fetch_font(const char* file) {
  js_fetch_font(file);
}

int fonts_arrived() {
  return js_fonts_arrived();
}

bool page_fullscreen() {
  return js_page_fullscreen() != 0;
}

void set_page_fullscreen(bool fullscreen) {
  js_set_page_fullscreen(fullscreen ? 1 : 0);
}

void follow_text_input(bool wanted) {
  static int last = -1;  // asked only when it changes: the page's focus is the user's otherwise
  if (static_cast<int>(wanted) == last) return;
  last = static_cast<int>(wanted);
  js_follow_text_input(wanted ? 1 : 0);
}

void show_error(const std::string& text) {
  js_show_error(text.c_str());
}

void first_frame_drawn() {
  js_first_frame_drawn();
}

void frame_drawn(long frames, bool settled) {
  js_frame_drawn(static_cast<double>(frames), settled ? 1 : 0);
}

}  // namespace attnviz::platform::browser

namespace attnviz::platform {

namespace {
PageHooks g_hooks;     // the app's, from run_page_frames()
std::string g_layout;  // the last attnviz_layout_json(), alive until the next
}  // namespace

void run_page_frames(const PageHooks& hooks) {
  g_hooks = hooks;
  emscripten_set_main_loop_arg(hooks.frame, hooks.app, 0, false);
}

void stop_page_frames() {
  emscripten_cancel_main_loop();
}

void after_page_frame(long frames_drawn, bool wants_text) {
  if (frames_drawn == 1) browser::first_frame_drawn();
  browser::frame_drawn(frames_drawn, g_hooks.settled != nullptr && g_hooks.settled(g_hooks.app));
  browser::follow_text_input(wants_text);
}

void show_start_error(const std::string& message) {
  browser::show_error("AttnViz could not start: " + message);
}

void offer_download(const std::string& path) {
  browser::js_download(path.c_str());
}

bool model_files_ready(const std::string& model) {
  if (model.empty() || model.find('/') != std::string::npos) return true;
  // index.html writes the list of a model's files there until they have all arrived.
  std::error_code error;
  if (!std::filesystem::exists("/assets/models/" + model + "/.download", error)) return true;
  browser::js_fetch_model(model.c_str());
  return false;
}

void pick_file_to_open(bool model) {
  browser::js_pick_file(model ? 1 : 0);
}

}  // namespace attnviz::platform

// The page's calls into the app (app/platform/web/index.html) and its tests' (tests/web/).
// Where the last frame drew things, as JSON ("" before the app has started).
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_layout_json() {
  using namespace attnviz::platform;
  g_layout = g_hooks.layout_json ? g_hooks.layout_json(g_hooks.app) : std::string();
  return g_layout.c_str();
}
// The touch handler's: the frames of a tap drawn now, then whether a text field is being edited
// (the page's hidden text box then takes the keyboard within the touch's own handler, where iOS
// opens its on-screen keyboard).
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_run_frames(int frames) {
  using namespace attnviz::platform;
  if (g_hooks.run_frames_now) g_hooks.run_frames_now(g_hooks.app, frames);
}
extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_wants_text() {
  using namespace attnviz::platform;
  return g_hooks.wants_text && g_hooks.wants_text(g_hooks.app) ? 1 : 0;
}
