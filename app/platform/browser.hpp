// The browser build's platform (issue 27): what a page has that a desktop window has otherwise.
// Compiled only by Emscripten (app/platform/browser.cpp); the page around it is
// app/platform/web/index.html.
#pragma once

#include <string>

struct GLFWwindow;

namespace attnviz::platform::browser {

// The page's devicePixelRatio: screen pixels per CSS pixel (2 on most phones and HiDPI laptops,
// more when the page is zoomed in).
float device_pixel_ratio();
// The canvas's size on the page in screen pixels (its CSS size times the ratio); `width` and
// `height` unchanged when the page has not laid it out yet.
void canvas_pixel_size(int& width, int& height);
// Gives the canvas as many pixels as it covers on the screen, so that text is as sharp as the
// screen allows, and `content_scale` the ratio; true when either changed.
bool fit_canvas(GLFWwindow* window, float& content_scale);

// platform.hpp's offer_download() and pick_file_to_open() are defined here for the browser: a
// download of the file in the page's memory, named after it; the browser's own file picker,
// whose files GLFW copies into the page's memory and hands over as files dropped on the window.

// Starts fetching a font file from beside the page (fonts/), once, into the folder the desktop
// finds it in (/usr/share/fonts/truetype/...); fonts_arrived() counts those that have arrived.
void fetch_font(const char* file);
int fonts_arrived();

// The clipboard, for ImGui's Ctrl+C and Ctrl+V (Emscripten's GLFW has none): set_clipboard()
// writes the system clipboard too where the browser allows; clipboard() is the last text pasted
// into the page or copied from it.
void set_clipboard(const char* text);
const char* clipboard();

// The page in full screen (the browser's Fullscreen API; F11 and View > Full screen), or not.
bool page_fullscreen();
void set_page_fullscreen(bool fullscreen);

// While a text field is edited (ImGui's WantTextInput), the page's hidden text box has the
// keyboard focus, so that an on-screen keyboard opens and input methods work (index.html).
void follow_text_input(bool wanted);

// Shows `text` over the page (the app could not start: a bad address, no WebGL 2).
void show_error(const std::string& text);
// Notes that the first frame is on the screen: the page's Module.attnvizFirstFrameMs, the time
// from the page's start (performance.now()), and a line in the console.
void first_frame_drawn();
// After every frame the page shows: Module.attnvizFrames, the frames drawn so far;
// Module.attnvizSettled, whether that frame left nothing to draw until the next input (no frame
// due by itself: no settling frames, computation or download pending); and, the first time it
// is, Module.attnvizReady, the time from the page's start (performance.now()) at which the app
// had started and drawn everything it had to (the tests wait for it, not for a fixed time).
void frame_drawn(long frames, bool settled);

// What the app remembers between runs (autosave, recent files) is kept in the page's IndexedDB:
// index.html mounts it at the state folder before main() and writes it back after changes.

}  // namespace attnviz::platform::browser
