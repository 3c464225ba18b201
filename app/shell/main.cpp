// attnviz: the desktop app.
#include "app/session/options.hpp"
#include "app/shell/app.hpp"
#include "core/base/version.hpp"

#include <iostream>
#include <string>
#include <vector>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>

namespace {
attnviz::app::App* g_app = nullptr;
std::string g_layout;
}  // namespace

// For the browser build's tests (tests/web/): where the last frame drew things, as JSON ("" before
// the app has started).
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_layout_json() {
  g_layout = g_app ? g_app->layout_text() : std::string();
  return g_layout.c_str();
}

// For the page's touch handler (app/platform/web/index.html): the frames of a tap drawn now, then
// whether a text field is being edited (the page's hidden text box then takes the keyboard
// within the touch's own handler, where iOS opens its on-screen keyboard).
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_run_frames(int frames) {
  if (g_app) g_app->run_frames_now(frames);
}
extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_wants_text() {
  return g_app && g_app->wants_text() ? 1 : 0;
}
#endif

int main(int argc, char** argv) {
  using namespace attnviz::app;
  Options options;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (const attnviz::Status parsed = parse_options(args, options); !parsed) {
    std::cerr << "attnviz: error: " << parsed.message() << '\n';
    return 2;
  }
  if (options.help) {
    std::cout << usage();
    return 0;
  }
  if (options.version) {
    std::cout << "attnviz " << attnviz::kVersion << '\n';
    return 0;
  }
#ifdef __EMSCRIPTEN__
  // The page calls the app's frames after main() returns (app.cpp): it lives as long as the page.
  g_app = new App(std::move(options));  // NOLINT(cppcoreguidelines-owning-memory)
  return g_app->run();
#else
  App app(std::move(options));
  return app.run();
#endif
}
