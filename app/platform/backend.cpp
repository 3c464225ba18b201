#include "app/platform/backend.hpp"

#include "app/platform/gl.hpp"

#ifdef __EMSCRIPTEN__
#include "app/platform/browser.hpp"
#endif

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8
#include <stb_truetype.h>  // Debian's libstb, which ImGui links: emoji glyphs, drawn into the atlas

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

namespace attnviz::platform {
namespace {

std::string g_glfw_error;  // GLFW reports errors through a C callback

void on_glfw_error(int code, const char* description) {
  g_glfw_error = "GLFW error " + std::to_string(code) + ": " + (description ? description : "");
}

WindowEvents& events_of(GLFWwindow* window) {
  return *static_cast<WindowEvents*>(glfwGetWindowUserPointer(window));
}

void on_drop(GLFWwindow* window, int count, const char** paths) {
  WindowEvents& events = events_of(window);
  ++events.count;
  for (int i = 0; i < count; ++i) events.dropped.emplace_back(paths[i]);
}

// Every other event is only counted: the frame pacer draws frames after any of them (ImGui's
// backend reads the input itself, and calls these, installed before it, after its own).
void count_event(GLFWwindow* window) {
  ++events_of(window).count;
}
void on_cursor_position(GLFWwindow* window, double x, double y) {
  count_event(window);
  WindowEvents& events = events_of(window);
  events.pointer_x = x;
  events.pointer_y = y;
}
void on_cursor_enter(GLFWwindow* window, int) {
  count_event(window);
}
// Where a press happened, in the order the events came: when the pointer has gone on before the
// frame begins (a drag begun at once), the press is still shown where it was made.
void on_mouse_button(GLFWwindow* window, int, int action, int) {
  count_event(window);
  WindowEvents& events = events_of(window);
  if (action == GLFW_PRESS && !events.press_position)
    events.press_position = {events.pointer_x, events.pointer_y};
}
void on_scroll(GLFWwindow* window, double, double) {
  count_event(window);
}
// Called before ImGui's backend updates io.KeysDown (it calls the callback it replaced first).
void on_key(GLFWwindow* window, int key, int, int action, int) {
  count_event(window);
  WindowEvents& events = events_of(window);
  if (action == GLFW_PRESS) ++events.key_presses;
  if (key < 0 || key >= WindowEvents::kKeys) return;
  if (action == GLFW_PRESS) events.pressed = true;
  if (action == GLFW_RELEASE && events.pressed) events.released_after_press.push_back(key);
}
void on_char(GLFWwindow* window, unsigned int code_point) {
  count_event(window);
  if (code_point != 0) events_of(window).typed.push_back(code_point);  // as ImGui queues it
}
void on_focus(GLFWwindow* window, int) {
  count_event(window);
}
void on_window_size(GLFWwindow* window, int, int) {
  count_event(window);
}
void on_refresh(GLFWwindow* window) {
  count_event(window);
}
#ifndef __EMSCRIPTEN__
void on_content_scale(GLFWwindow* window, float, float) {
  count_event(window);
}
#endif
void on_iconify(GLFWwindow* window, int) {
  count_event(window);
}

// Glyphs the app prints: Latin, Greek, Cyrillic, Hebrew, Arabic (with the presentation forms
// app/view/visual_text.hpp joins its letters with), general
// punctuation, sub/superscripts, arrows, mathematical operators (√ Σ · ⊙ ∞ −), shapes.
constexpr ImWchar kGlyphRanges[] = {
    0x0020,
    0x024F,  // Basic Latin, Latin-1, Latin Extended-A/B
    0x0370,
    0x03FF,  // Greek
    0x0400,
    0x04FF,  // Cyrillic
    0x0590,
    0x06FF,  // Hebrew, Arabic
    0x1D00,
    0x1DBF,  // Phonetic extensions: modifier letters (superscript T for transpose)
    0x2000,
    0x209F,  // General punctuation, super/subscripts
    0x2100,
    0x214F,  // Letterlike symbols: ℓ (FlashAttention's running sum)
    0x2190,
    0x21FF,  // Arrows
    0x2200,
    0x22FF,  // Mathematical operators
    0x2400,
    0x243F,  // Control pictures: how a model's tokens show a space (␣), a return (␍), ...
    0x2500,
    0x25FF,  // Box drawing, blocks, geometric shapes
    0x2600,
    0x27BF,  // Miscellaneous symbols, dingbats: warning sign, check and cross marks
    0x2C60,
    0x2C7F,  // Latin Extended-C: subscript j
    0xFB1D,
    0xFBFF,  // Hebrew and Arabic presentation forms (A, the part of it with letters)
    0xFE00,
    0xFE0F,  // Variation selectors (after ❤ in ❤️, as phones type it): drawn as nothing
    0xFE70,
    0xFEFF,  // Arabic presentation forms B
    0xFFFD,
    0xFFFD,  // Replacement character
    0,
};

constexpr std::array<const char*, 3> kFontFiles = {"DejaVuSans.ttf", "DejaVuSans-Bold.ttf",
                                                   "DejaVuSansMono.ttf"};
constexpr std::array<const char*, 4> kFontFolders = {
    "/usr/share/fonts/truetype/dejavu/", "/usr/share/fonts/truetype/droid/",
    "/usr/share/fonts/truetype/ancient-scripts/", "/usr/local/share/fonts/"};
// Merged into every font for the characters DejaVu lacks (Chinese, Japanese, Korean, ...):
// only those a sentence uses are rasterized (see Backend::add_characters).
constexpr const char* kFallbackFontFile = "DroidSansFallbackFull.ttf";
// Emoji and other characters past U+FFFF, in outline (no colour): drawn as glyphs of their own
// (Backend::set_wide_characters).
constexpr const char* kWideFontFile = "Symbola_hint.ttf";

constexpr int kMinWindowWidth = 640, kMinWindowHeight = 420;

std::string find_font(const char* file) {
  for (const char* folder : kFontFolders) {
    std::string path = std::string(folder) + file;
    if (std::filesystem::exists(path)) return path;
  }
  return {};
}

// A font that is needed now: found, or (in the browser, whose page holds only DejaVu) fetched
// from beside the page for the next load_fonts(), the first time a sentence needs it.
std::string find_needed_font(const char* file) {
  std::string path = find_font(file);
#ifdef __EMSCRIPTEN__
  if (path.empty()) browser::fetch_font(file);
#endif
  return path;
}

}  // namespace

Backend::~Backend() {
  ui_renderer_.reset();  // its GL objects go while the context is current
  if (imgui_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  if (window_) glfwDestroyWindow(window_);
  glfwTerminate();
}

Status Backend::init(const WindowOptions& options) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    return Status::error("cannot open a window: " +
                         (g_glfw_error.empty() ? std::string("no display") : g_glfw_error) +
                         " (is DISPLAY set? for headless use run under xvfb-run)");
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
#ifdef __EMSCRIPTEN__
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);  // OpenGL ES 3.0: WebGL 2
  // The canvas fills the page, at the screen's own pixels: the window is the canvas.
  int width = options.width, height = options.height;
  browser::canvas_pixel_size(width, height);
#else
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, options.visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  const int width = options.width, height = options.height;
#endif
  // Nothing is depth-tested or stenciled; and without those buffers Mesa's software GL may draw
  // rectangles as rectangles (render/ui_renderer.cpp).
  glfwWindowHint(GLFW_DEPTH_BITS, 0);
  glfwWindowHint(GLFW_STENCIL_BITS, 0);
  window_ = glfwCreateWindow(width, height, options.title.c_str(), nullptr, nullptr);
  title_ = options.title;
  if (!window_) {
    return Status::error(std::string(kBrowser ? "cannot create a WebGL 2 context: "
                                              : "cannot create an OpenGL 3.3 core context: ") +
                         (g_glfw_error.empty() ? std::string("unknown reason") : g_glfw_error));
  }
  // Below this the panels have no room for their controls (a title a letter a line, buttons on
  // top of one another); the window manager keeps a user's window at least this large. (Headless
  // runs draw at the size asked.)
  if (options.visible)
    glfwSetWindowSizeLimits(window_, kMinWindowWidth, kMinWindowHeight, GLFW_DONT_CARE,
                            GLFW_DONT_CARE);
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(options.vsync ? 1 : 0);
  glfwSetWindowUserPointer(window_, &events_);
  glfwGetCursorPos(window_, &events_.pointer_x, &events_.pointer_y);
  glfwSetDropCallback(window_, on_drop);
  glfwSetCursorPosCallback(window_, on_cursor_position);
  glfwSetCursorEnterCallback(window_, on_cursor_enter);
  glfwSetMouseButtonCallback(window_, on_mouse_button);
  glfwSetScrollCallback(window_, on_scroll);
  glfwSetKeyCallback(window_, on_key);
  glfwSetCharCallback(window_, on_char);
  glfwSetWindowFocusCallback(window_, on_focus);
  glfwSetFramebufferSizeCallback(window_, on_window_size);
  glfwSetWindowRefreshCallback(window_, on_refresh);
  glfwSetWindowIconifyCallback(window_, on_iconify);
#ifdef __EMSCRIPTEN__
  // GLFW 3.2 has no content scale: the page's devicePixelRatio is it (browser::fit_canvas()).
  content_scale_ = std::max(1.0f, browser::device_pixel_ratio());
#else
  glfwSetWindowContentScaleCallback(window_, on_content_scale);
  float scale_x = 1.0f, scale_y = 1.0f;
  glfwGetWindowContentScale(window_, &scale_x, &scale_y);
  content_scale_ = std::max(1.0f, scale_y);
#endif

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // the layout is computed, not saved
  if (!ImGui_ImplGlfw_InitForOpenGL(window_, true) || !ImGui_ImplOpenGL3_Init(kGlslVersion))
    return Status::error("cannot initialise Dear ImGui's GLFW/OpenGL backends");
  imgui_ready_ = true;
#ifdef __EMSCRIPTEN__
  ImGui::GetIO().SetClipboardTextFn = [](void*, const char* text) { browser::set_clipboard(text); };
  ImGui::GetIO().GetClipboardTextFn = [](void*) { return browser::clipboard(); };
#endif
  // The backend's shader and buffers now, with its font texture for ImGui's tiny default font
  // dropped at once: the UI renderer draws and owns the font texture (one byte per texel).
  ImGui_ImplOpenGL3_CreateDeviceObjects();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ui_renderer_ = std::make_unique<render::UiRenderer>();
  if (Status status = ui_renderer_->init(); !status) return status;
  if (std::getenv("ATTNVIZ_NO_TEXT_CACHE")) ui_renderer_->set_text_cache(false);
  if (std::getenv("ATTNVIZ_NO_RESHAPE")) ui_renderer_->set_reshape(false);
  if (std::getenv("ATTNVIZ_NO_LIST_CACHE")) ui_renderer_->set_list_cache(false);
  return Status::success();
}

Status Backend::load_fonts(float pixel_size, float detail) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  // The atlas as tall as its glyphs, not the next power of two: at twice the pixels (a HiDPI
  // screen) that is 4096 x ~5000 texels rather than 4096 x 8192, which WebGL may not allow.
  io.Fonts->Flags |= ImFontAtlasFlags_NoPowerOfTwoHeight;
  const float size = std::round(pixel_size * content_scale_ * detail);
  std::string missing;  // the last font not found
  const std::string fallback_path =
      extra_characters_.empty() ? std::string() : find_needed_font(kFallbackFontFile);
  extra_ranges_.clear();
  if (!extra_characters_.empty()) {
    ImFontGlyphRangesBuilder builder;
    for (const ImWchar c : extra_characters_) builder.AddChar(c);
    ImVector<ImWchar> ranges;
    builder.BuildRanges(&ranges);  // pairs of first and last, then 0
    extra_ranges_.assign(ranges.begin(), ranges.end());
  }
  for (const char* file : kFontFiles) {
    const std::string path = find_font(file);
    ImFontConfig config;
    config.OversampleH = 2;
    config.OversampleV = 1;
    if (path.empty() || !io.Fonts->AddFontFromFileTTF(path.c_str(), size, &config, kGlyphRanges)) {
      ImFontConfig fallback;
      fallback.SizePixels = size;
      io.Fonts->AddFontDefault(&fallback);
      missing = std::string("font ") + file +
                " not found (install fonts-dejavu-core); using the built-in font";
    }
    if (!extra_ranges_.empty() && !fallback_path.empty()) {
      ImFontConfig merge;
      merge.MergeMode = true;
      merge.OversampleH = 2;
      merge.OversampleV = 1;
      io.Fonts->AddFontFromFileTTF(fallback_path.c_str(), size, &merge, extra_ranges_.data());
    }
  }
  add_wide_glyphs(size);
  draw_wide_glyphs();
  io.FontGlobalScale = 1.0f / detail;
  if (Status uploaded = ui_renderer_->load_font_atlas(); !uploaded) return uploaded;
  return missing.empty() ? Status::success() : Status::error(missing);
}

bool Backend::add_characters(const std::string& text) {
  const ImFont* font =
      ImGui::GetIO().Fonts->Fonts.empty() ? nullptr : ImGui::GetIO().Fonts->Fonts[0];
  if (!font) return false;
  bool added = false;
  const char* at = text.c_str();
  const char* end = at + text.size();
  while (at < end) {
    unsigned int c = 0;
    const int length = ImTextCharFromUtf8(&c, at, end);
    if (length <= 0) break;
    at += length;
    // ImGui's characters are 16-bit here: past the first plane (emoji) it shows U+FFFD.
    if (c < 0x80 || c > 0xFFFF || font->FindGlyphNoFallback(static_cast<ImWchar>(c))) continue;
    if (extra_characters_.size() >= kMaxExtraCharacters) break;
    added |= extra_characters_.insert(static_cast<ImWchar>(c)).second;
  }
  return added;
}

struct Backend::WideFont {
  std::vector<unsigned char> data;  // stb_truetype reads the file where it is
  stbtt_fontinfo info{};
};

void Backend::WideFontDeleter::operator()(WideFont* font) const {
  delete font;
}

void Backend::set_wide_characters(
    std::vector<std::pair<char32_t, char32_t>> stand_in_and_character) {
  wide_characters_ = std::move(stand_in_and_character);
}

// Each wide character the font has becomes a glyph of ImGui's atlas for its stand-in, in every
// font (regular, bold, mono): a rectangle of the glyph's size, which ImGui places in the atlas.
void Backend::add_wide_glyphs(float size) {
  wide_glyphs_.clear();
  if (wide_characters_.empty()) return;
  if (!wide_font_tried_) {
    const std::string path = find_needed_font(kWideFontFile);
    wide_font_tried_ = !path.empty() || !kBrowser;  // the browser's tries again once it arrives
    std::unique_ptr<WideFont, WideFontDeleter> font(new WideFont);
    if (std::ifstream in{path, std::ios::binary}; !path.empty() && in)
      font->data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!font->data.empty() && stbtt_InitFont(&font->info, font->data.data(),
                                              stbtt_GetFontOffsetForIndex(font->data.data(), 0)))
      wide_font_ = std::move(font);
  }
  if (!wide_font_) return;
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  const stbtt_fontinfo& info = wide_font_->info;
  // Symbola's lines are much taller than DejaVu's: its em is made DejaVu's (whose line, the pixel
  // size, is 1.164 em), so that an emoji is as wide as a wide letter.
  const float scale = stbtt_ScaleForMappingEmToPixels(&info, size / 1.164f);
  for (const auto& [stand_in, character] : wide_characters_) {
    const int code_point = static_cast<int>(character);
    if (stand_in > 0xFFFF || stbtt_FindGlyphIndex(&info, code_point) == 0)
      continue;  // stays the mark
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0, advance = 0, bearing = 0;
    stbtt_GetCodepointBitmapBox(&info, code_point, scale, scale, &x0, &y0, &x1, &y1);
    stbtt_GetCodepointHMetrics(&info, code_point, &advance, &bearing);
    for (ImFont* font : atlas->Fonts) {
      // Offset from the line's top for now (y0 is from the baseline): see draw_wide_glyphs().
      const int rect = atlas->AddCustomRectFontGlyph(
          font, static_cast<ImWchar>(stand_in), std::max(1, x1 - x0), std::max(1, y1 - y0),
          std::round(static_cast<float>(advance) * scale),
          ImVec2(static_cast<float>(x0), static_cast<float>(y0)));
      wide_glyphs_.push_back({rect, character, scale});
    }
  }
}

// Builds the atlas, draws each wide glyph into its rectangle, and moves the glyph down by the
// font's ascent, which ImGui knows only now: its top is y0 below the baseline, not the line's top.
void Backend::draw_wide_glyphs() {
  if (wide_glyphs_.empty()) return;
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  unsigned char* pixels = nullptr;
  int width = 0, height = 0;
  atlas->GetTexDataAsAlpha8(&pixels, &width, &height);
  if (!pixels) return;
  for (const WideGlyph& glyph : wide_glyphs_) {
    const ImFontAtlasCustomRect* rect = atlas->GetCustomRectByIndex(glyph.rect);
    if (!rect->IsPacked()) continue;
    stbtt_MakeCodepointBitmap(&wide_font_->info,
                              pixels + static_cast<std::ptrdiff_t>(rect->Y) * width + rect->X,
                              rect->Width, rect->Height, width, glyph.scale, glyph.scale,
                              static_cast<int>(glyph.character));
    for (ImFontGlyph& drawn : rect->Font->Glyphs)
      if (drawn.Codepoint == rect->GlyphID) {
        drawn.Y0 += rect->Font->Ascent;
        drawn.Y1 += rect->Font->Ascent;
      }
  }
}

void Backend::set_title(const std::string& title) {
  if (!window_ || title == title_) return;
  title_ = title;
  glfwSetWindowTitle(window_, title.c_str());
}

bool Backend::fullscreen() const {
#ifdef __EMSCRIPTEN__
  return browser::page_fullscreen();
#else
  return windowed_.has_value();
#endif
}

void Backend::set_fullscreen(bool fullscreen) {
  if (!window_ || fullscreen == this->fullscreen()) return;
#ifdef __EMSCRIPTEN__
  browser::set_page_fullscreen(fullscreen);  // the page's canvas follows (follow_page())
  ++events_.count;
  return;
#endif
  if (fullscreen) {
    WindowedPlace place;
    glfwGetWindowPos(window_, &place.x, &place.y);
    glfwGetWindowSize(window_, &place.width, &place.height);
    // The monitor under the window's centre, else the primary one.
    GLFWmonitor* monitor = glfwGetPrimaryMonitor();
    int count = 0;
    GLFWmonitor** monitors = glfwGetMonitors(&count);
    for (int i = 0; i < count; ++i) {
      int mx = 0, my = 0;
      glfwGetMonitorPos(monitors[i], &mx, &my);
      const GLFWvidmode* mode = glfwGetVideoMode(monitors[i]);
      const int cx = place.x + place.width / 2, cy = place.y + place.height / 2;
      if (mode && cx >= mx && cx < mx + mode->width && cy >= my && cy < my + mode->height)
        monitor = monitors[i];
    }
    const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
    if (!mode) return;  // no monitor to fill: stay as it is
    windowed_ = place;
    glfwSetWindowMonitor(window_, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
  } else {
    const WindowedPlace place = *windowed_;
    windowed_.reset();
    glfwSetWindowMonitor(window_, nullptr, place.x, place.y, place.width, place.height,
                         GLFW_DONT_CARE);
  }
  ++events_.count;  // a frame follows at once
}

void Backend::set_window_size(int width, int height) {
  if (!window_ || fullscreen()) return;
  glfwSetWindowSize(window_, std::max(width, 200), std::max(height, 200));
  ++events_.count;
}

bool Backend::should_close() const {
  return glfwWindowShouldClose(window_) != 0;
}
void Backend::request_close() {
  glfwSetWindowShouldClose(window_, GLFW_TRUE);
}
void Backend::cancel_close() {
  glfwSetWindowShouldClose(window_, GLFW_FALSE);
}

void Backend::new_frame() {
  // ImGui 1.86 reads whether a key is down when a frame begins. A key that went down since the
  // last frame began must be seen with the keys that were down with it: those that came up after
  // it (the key itself, tapped; the Ctrl of a Ctrl+A let go first) are shown down for this frame
  // and up from the next, as ImGui's GLFW backend does for mouse buttons.
  // A key tapped again while it is shown down (twice between two frames, or once more while the
  // frame that shows the first tap is drawn: an on-screen keyboard's Backspace, repeated) waits
  // for the frame after: ImGui counts a press only where a frame sees the key up, then down.
  ImGuiIO& io = ImGui::GetIO();
  const std::vector<int> shown_down = std::exchange(held_up_, {});
  for (int key : shown_down) io.KeysDown[key] = false;
  glfwPollEvents();
  std::vector<int> taps = std::exchange(waiting_keys_, {});
  taps.insert(taps.end(), events_.released_after_press.begin(), events_.released_after_press.end());
  const auto among = [](const std::vector<int>& keys, int key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  for (int key : taps) {
    if (among(shown_down, key) || among(held_up_, key) || among(waiting_keys_, key)) {
      waiting_keys_.push_back(key);
    } else if (!io.KeysDown[key]) {
      io.KeysDown[key] = true;
      held_up_.push_back(key);
    }
  }
  if (!shown_down.empty() || !held_up_.empty()) {  // the modifiers, as the backend sets them
    io.KeyCtrl = io.KeysDown[GLFW_KEY_LEFT_CONTROL] || io.KeysDown[GLFW_KEY_RIGHT_CONTROL];
    io.KeyShift = io.KeysDown[GLFW_KEY_LEFT_SHIFT] || io.KeysDown[GLFW_KEY_RIGHT_SHIFT];
    io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
    io.KeySuper = io.KeysDown[GLFW_KEY_LEFT_SUPER] || io.KeysDown[GLFW_KEY_RIGHT_SUPER];
  }
  events_.released_after_press.clear();
  events_.pressed = false;
  typed_.swap(events_.typed);
  events_.typed.clear();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (ignore_mouse_) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  if (events_.press_position &&
      io.MousePos.x > -FLT_MAX)  // this frame shows the pointer where it was pressed
    io.MousePos = ImVec2(static_cast<float>(events_.press_position->first),
                         static_cast<float>(events_.press_position->second));
  events_.press_position.reset();
  press_after_move();
  if (input_hook_) input_hook_(typed_);
  ImGui::NewFrame();
}

// A tap (a press that comes with the pointer's move) is shown to ImGui a frame late
// (view::TapTiming).
void Backend::press_after_move() {
  ImGuiIO& io = ImGui::GetIO();
  static_assert(IM_ARRAYSIZE(io.MouseDown) == view::TapTiming::kButtons);
  view::TapTiming::Pointer actual;
  actual.valid = io.MousePos.x > -FLT_MAX && io.MousePos.y > -FLT_MAX;
  actual.x = io.MousePos.x;
  actual.y = io.MousePos.y;
  std::copy_n(io.MouseDown, actual.down.size(), actual.down.begin());
  const view::TapTiming::Pointer shown = tap_timing_.shown(actual);
  if (shown.valid) io.MousePos = ImVec2(shown.x, shown.y);
  std::copy(shown.down.begin(), shown.down.end(), io.MouseDown);
}

void Backend::render_without_present() {
  ImGui::Render();
  int width = 0, height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  glViewport(0, 0, width, height);
  const ImVec4 clear = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(clear.x, clear.y, clear.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ui_renderer_->render(ImGui::GetDrawData());
}

void Backend::end_frame() {
  render_without_present();
  present();
}

void Backend::present() {
  glfwSwapBuffers(window_);
}

void Backend::finish() {
  glFinish();
}

namespace {

// Reads the bound read framebuffer, rows top first.
std::vector<std::uint8_t> read_rows(int width, int height) {
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width) *
                                   static_cast<std::size_t>(height) * 4);
  glFinish();
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // GL's rows start at the bottom; flip to top-first.
  const std::size_t stride = static_cast<std::size_t>(width) * 4;
  for (int y = 0; y < height / 2; ++y)
    std::swap_ranges(pixels.begin() + static_cast<std::ptrdiff_t>(y * stride),
                     pixels.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride),
                     pixels.begin() + static_cast<std::ptrdiff_t>((height - 1 - y) * stride));
  return pixels;
}

}  // namespace

Image Backend::read_pixels() const {
  Image image;
  glfwGetFramebufferSize(window_, &image.width, &image.height);
  glReadBuffer(GL_BACK);
  image.pixels = read_rows(image.width, image.height);
  return image;
}

Result<Image> Backend::render_offscreen(int scale) {
  ImDrawData* draw_data = ImGui::GetDrawData();
  const ImVec2 saved_scale = draw_data->FramebufferScale;
  const ImVec2 fb_scale(saved_scale.x * static_cast<float>(scale),
                        saved_scale.y * static_cast<float>(scale));
  const int width = static_cast<int>(draw_data->DisplaySize.x * fb_scale.x);
  const int height = static_cast<int>(draw_data->DisplaySize.y * fb_scale.y);
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
  if (width <= 0 || height <= 0 || width > max_size || height > max_size) {
    return Status::error("a " + std::to_string(width) + "x" + std::to_string(height) +
                         " picture is larger than this OpenGL allows (" + std::to_string(max_size) +
                         "); choose a smaller scale");
  }
  GLuint framebuffer = 0, colour = 0;
  glGenFramebuffers(1, &framebuffer);
  glGenRenderbuffers(1, &colour);
  glBindRenderbuffer(GL_RENDERBUFFER, colour);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour);
  Result<Image> image = Status::error("cannot create an offscreen framebuffer");
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
    glViewport(0, 0, width, height);
    const ImVec4 clear = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    draw_data->FramebufferScale =
        fb_scale;  // geometry and clip rects scale up; the fonts were rasterized larger
    ui_renderer_->render(draw_data, false);
    draw_data->FramebufferScale = saved_scale;
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    image = Image{width, height, read_rows(width, height)};
  }
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glDeleteRenderbuffers(1, &colour);
  glDeleteFramebuffers(1, &framebuffer);
  return image;
}

void Backend::framebuffer_size(int& width, int& height) const {
  glfwGetFramebufferSize(window_, &width, &height);
}

double Backend::time() const {
  return clock_ ? *clock_ : glfwGetTime();
}

std::vector<std::string> Backend::take_dropped_files() {
  std::vector<std::string> files;
  files.swap(events_.dropped);
  return files;
}

#ifndef __EMSCRIPTEN__  // the browser's are in browser.cpp
void offer_download(const std::string&) {}
void pick_file_to_open(bool) {}
bool model_files_ready(const std::string&) {
  return true;
}
void run_page_frames(const PageHooks&) {}
void stop_page_frames() {}
void after_page_frame(long, bool) {}
void show_start_error(const std::string&) {}
#endif

void Backend::follow_page() {
#ifdef __EMSCRIPTEN__
  // The page's size and zoom, which the browser changes without an event GLFW 3.2 sees.
  if (window_ && browser::fit_canvas(window_, content_scale_)) ++events_.count;
  // A font fetched for a sentence (Chinese, emoji) has arrived: the fonts are loaded again.
  if (const int fonts = browser::fonts_arrived(); fonts != fonts_arrived_) {
    fonts_arrived_ = fonts;
    fonts_changed_ = true;
    ++events_.count;
  }
#endif
}

void Backend::wait(double earliest, double latest) {
  // The browser calls each frame (emscripten_set_main_loop): there is no waiting in a page.
  if constexpr (kBrowser) return;
  const std::uint64_t key_presses = events_.key_presses;
  for (double early = earliest - time(); early > 0; early = earliest - time()) {
    glfwWaitEventsTimeout(early);
    if (events_.key_presses != key_presses) return;
  }
  if (std::isinf(latest) && latest > 0) {
    glfwWaitEvents();
  } else if (const double remaining = latest - time(); remaining > 0) {
    glfwWaitEventsTimeout(remaining);
  }
}

double Backend::refresh_rate() const {
  GLFWmonitor* monitor = glfwGetPrimaryMonitor();
  const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
  return mode ? mode->refreshRate : 0.0;
}

}  // namespace attnviz::platform
