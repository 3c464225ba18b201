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
