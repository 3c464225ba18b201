// The platform behind a small interface: a GLFW window with an OpenGL 3.3 core context and the
// Dear ImGui backends. Nothing else in the app touches GLFW; GL is used directly only by the
// renderers in app/render/.
#pragma once

#include "app/render/ui_renderer.hpp"
#include "app/view/tap_timing.hpp"
#include "core/base/status.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

struct GLFWwindow;

namespace attnviz::platform {

struct WindowOptions {
  int width = 1280;
  int height = 720;
  bool visible = true;  // false for headless screenshots and benchmarks
  bool vsync = true;
  std::string title = "AttnViz";
};

// What the window's event callbacks collect (GLFW calls C functions: this is their user pointer).
struct WindowEvents {
  static constexpr int kKeys = 512;  // ImGui 1.86's io.KeysDown, indexed by GLFW key code
  std::vector<std::string> dropped;  // files dropped onto the window, not yet taken
  std::uint64_t count = 0;           // events of any kind so far
  std::uint64_t key_presses = 0;     // of those, keys going down
  // Since the last frame began: whether a key went down, and the keys that came up after that.
  bool pressed = false;
  std::vector<int> released_after_press;
  std::vector<unsigned> typed;          // characters typed since the last frame began, in order
  double pointer_x = 0, pointer_y = 0;  // the pointer, as of the last event that moved it
  std::optional<std::pair<double, double>>
      press_position;  // of the first press since the last frame began
};

struct Fonts {
  float pixel_size = 16;  // before the content scale
};

// A picture read back from the GL: RGBA rows, top row first.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
};

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  ~Backend();

  // Creates the window, the GL context and ImGui.
  Status init(const WindowOptions& options);

  bool should_close() const;
  void set_title(const std::string& title);  // only when it changed
  void request_close();
  // Full screen on the monitor the window is on (or the primary one), and back to the window's
  // size and place before.
  void set_fullscreen(bool fullscreen);
  bool fullscreen() const;
  // The window's size, as a user dragging its border sets it (--monkey; no smaller than the
  // headless sizes, 200 x 200).
  void set_window_size(int width, int height);
  void cancel_close();  // the close asked for (the window's button) waits for an answer
  void new_frame();     // polls events, starts an ImGui frame
  // Waits until `earliest` (time()), then for an event or until `latest` (infinity: for an
  // event), whichever comes first; events already waiting end the second wait at once. A key
  // going down ends the first one too: ImGui 1.86 sees a key only if a frame begins while it is
  // down (a shortcut typed quickly would otherwise go down and up within one wait).
  void wait(double earliest, double latest);
  // The browser's page: gives the canvas the pixels it covers and the content scale the page's
  // devicePixelRatio, counting a change as an event. Nothing on the desktop.
  void follow_page();
  // Whether a font has arrived since the last call (the browser fetches the large fallback fonts
  // when a sentence first needs them): the fonts are to be loaded again.
  bool take_fonts_changed() { return std::exchange(fonts_changed_, false); }
  // Events of any kind so far: input, resizing, focus, exposure, files dropped.
  std::uint64_t input_events() const { return events_.count; }
  // A press held back for the next frame: a mouse press that came with the pointer's move (a
  // tap), or a key tapped again while it was shown down (new_frame()).
  bool press_waiting() const { return tap_timing_.press_waiting() || !waiting_keys_.empty(); }
  // The primary display's refresh rate in Hz; 0 when it does not say.
  double refresh_rate() const;
  // Screenshots must not depend on where the pointer happens to be (Xvfb puts it mid-screen).
  void set_ignore_mouse(bool ignore) { ignore_mouse_ = ignore; }
  void end_frame();  // renders ImGui and presents
  void present();    // shows a frame already rendered with render_without_present()
  // Waits until the GL has finished every command so far (benchmarks: with a software renderer
  // the drawing happens on the CPU, and it belongs to the frame's time).
  void finish();
  // Renders ImGui into the back buffer without presenting (for screenshots), then reads it.
  void render_without_present();
  // The current back buffer.
  Image read_pixels() const;

  // Loads the UI fonts at a pixel size (times the content scale). Call between frames.
  // `detail` > 1 rasterizes the glyphs that many times larger while keeping the layout (for an
  // offscreen render at that scale). An error when a system font is missing (ImGui's built-in
  // font stands in) or the atlas cannot be uploaded.
  Status load_fonts(float pixel_size, float detail);
  // Notes the characters of `text` that the loaded fonts lack (Chinese, Japanese, Korean, ...);
  // returns true when there are new ones, which the next load_fonts() takes from a fallback font
  // (DroidSansFallbackFull, from fonts-droid-fallback) if it is installed. Characters are only
  // ever added, up to a few thousand, so a sentence typed and erased does not reload the fonts
  // again and again.
  bool add_characters(const std::string& text);
  // Characters past U+FFFF (emoji), which ImGui's 16-bit characters cannot hold, each with the
  // private-use stand-in the text holds for it (view::TextEscapes): the next load_fonts() draws
  // each stand-in with its character's glyph, from Symbola (fonts-symbola) when it is installed
  // and has one; without, the stand-in is ImGui's missing-glyph mark.
  void set_wide_characters(std::vector<std::pair<char32_t, char32_t>> stand_in_and_character);
  std::size_t wide_character_count() const { return wide_characters_.size(); }
  // After render_without_present(): draws the same frame at `scale` times the pixels into an
  // offscreen framebuffer and returns it; an error when the size is more than the GL allows.
  Result<Image> render_offscreen(int scale);
  float content_scale() const { return content_scale_; }
  // Windows shown from pictures kept from earlier frames in the last frame (render/list_cache.hpp).
  int windows_reused() const { return ui_renderer_ ? ui_renderer_->lists_replayed() : 0; }
  void framebuffer_size(int& width, int& height) const;
  double time() const;  // seconds since the start, or the clock set by set_clock()
  // Input the app makes up itself (--monkey, app/shell/monkey.hpp): called in new_frame() after
  // the window's events, just before ImGui's frame begins, so that what it sets in ImGuiIO is
  // what the frame sees; characters it types go to ImGui and into `typed` (typed_characters()).
  using InputHook = std::function<void(std::vector<unsigned>& typed)>;
  void set_input_hook(InputHook hook) { input_hook_ = std::move(hook); }
  // A clock of the caller's (--monkey: a frame is 1/60 s): time() returns it while it is set.
  void set_clock(std::optional<double> seconds) { clock_ = seconds; }
  // Files dropped onto the window since the last call.
  std::vector<std::string> take_dropped_files();
  // The characters typed for this frame, as code points, in order: the last of ImGui's input
  // queue (io.InputQueueCharacters), which holds 16-bit characters (an emoji is U+FFFD there).
  const std::vector<unsigned>& typed_characters() const { return typed_; }

 private:
  GLFWwindow* window_ = nullptr;
  bool imgui_ready_ = false;
  std::string title_;
  struct WindowedPlace {
    int x = 0, y = 0, width = 0, height = 0;
  };
  std::optional<WindowedPlace> windowed_;  // while full screen: where the window was
  bool ignore_mouse_ = false;
  float content_scale_ = 1.0f;
  WindowEvents events_;
  std::vector<int> held_up_;  // keys that came up before the last frame, shown down to it alone
  std::vector<int> waiting_keys_;  // taps to show in a frame to come, oldest first
  void press_after_move();         // a tap shown to ImGui a frame late
  view::TapTiming tap_timing_;
  std::vector<unsigned> typed_;  // see typed_characters()
  InputHook input_hook_;
  std::optional<double> clock_;
  static constexpr std::size_t kMaxExtraCharacters = 4096;
  std::set<unsigned short> extra_characters_;  // asked for by add_characters(), kept for good
  std::vector<unsigned short>
      extra_ranges_;  // ... as ImGui glyph ranges, alive as long as the fonts
  std::vector<std::pair<char32_t, char32_t>> wide_characters_;  // see set_wide_characters()
  struct WideFont;  // Symbola, read when the first wide character comes
  struct WideFontDeleter {
    void operator()(WideFont* font) const;
  };
  std::unique_ptr<WideFont, WideFontDeleter> wide_font_;
  bool wide_font_tried_ = false;
  int fonts_arrived_ = 0;  // the browser's fonts fetched so far
  bool fonts_changed_ = false;
  void add_wide_glyphs(float size);  // load_fonts(): before the atlas is built ...
  void draw_wide_glyphs();           // ... and after
  struct WideGlyph {
    int rect = 0;  // ImGui's custom rectangle
    char32_t character = 0;
    float scale = 1;
  };
  std::vector<WideGlyph> wide_glyphs_;               // of the atlas last built
  std::unique_ptr<render::UiRenderer> ui_renderer_;  // released before the GL context goes
};

// The fonts loaded by load_fonts(): regular, bold and monospaced, in that order in ImGui's atlas.
enum class FontRole { Regular = 0, Bold = 1, Mono = 2 };

}  // namespace attnviz::platform
