// Which platform the app is built for, for the few places that differ beyond app/platform/:
// the desktop (GLFW and OpenGL 3.3) or the browser (Emscripten, WebGL 2; browser.hpp).
#pragma once

#include <string>

namespace attnviz::platform {

#ifdef __EMSCRIPTEN__
inline constexpr bool kBrowser = true;
#else
inline constexpr bool kBrowser = false;
#endif

// The browser's frames: after run_page_frames() the page calls `frame` for every frame it shows
// (requestAnimationFrame), and main() returns; the other hooks answer the page (index.html: a
// tap's frames drawn at once, whether a text field is edited) and its tests (where the last
// frame drew things). Never called on the desktop, whose loop is the app's own.
struct PageHooks {
  void* app = nullptr;
  void (*frame)(void* app) = nullptr;
  void (*run_frames_now)(void* app, int frames) = nullptr;
  bool (*wants_text)(void* app) = nullptr;
  std::string (*layout_json)(void* app) = nullptr;
  // Whether the frame just drawn left nothing to draw until the next input (the page's "ready"
  // signal for its tests: browser.hpp's frame_drawn()).
  bool (*settled)(void* app) = nullptr;
};
void run_page_frames(const PageHooks& hooks);
void stop_page_frames();  // the app quit
// After each frame the page shows: the first one's time noted, the frames counted and the page
// told when the app has settled (ready), and the page's text box given the keyboard while a text
// field is edited (browser.hpp).
void after_page_frame(long frames_drawn, bool wants_text);
// Tells the user why the app could not start, over the page (on the desktop, standard error has).
void show_start_error(const std::string& message);

// Offers a file the app wrote to the user: in the browser as a download (browser.hpp), a folder
// as one ZIP of its files; on the desktop it is where the user chose, and nothing more is done.
void offer_download(const std::string& path);
// The browser build: whether a shipped model's files are in the page's memory; when not, starts
// fetching them from beside the page (models/, once) and returns false. A path is the user's own
// file: true.
bool model_files_ready(const std::string& model);
// Opens the browser's file picker for a file to open (scenario, lesson, model); the file
// arrives as one dropped on the window. On the desktop: nothing (the app's own dialog is used).
void pick_file_to_open(bool model);

}  // namespace attnviz::platform
