// attnviz: the app (the desktop's, and the browser build's: app/platform/web/).
#include "app/platform/platform.hpp"
#include "app/session/options.hpp"
#include "app/shell/app.hpp"
#include "core/base/version.hpp"
#include "core/document/file_io.hpp"

#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace attnviz::app;
  // An export into a named pipe or a socket whose reader has gone is a failed export ("Broken
  // pipe" in the status bar), not the end of the app and of the class's unsaved work.
  std::signal(SIGPIPE, SIG_IGN);
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
  // A screenshot or layout that could not be written is refused before a window opens, not after
  // its frames (the path is checked again when the file is written).
  for (const std::optional<std::string>* output : {&options.screenshot, &options.layout_out}) {
    if (!*output) continue;
    if (const attnviz::Status writable = attnviz::check_writable(**output); !writable) {
      std::cerr << "attnviz: error: " << writable.message() << '\n';
      return 1;
    }
  }
  auto app = std::make_unique<App>(std::move(options));
  const int status = app->run();
  // In the browser the page calls the app's frames after main() returns (app.cpp): the app
  // lives as long as the page.
  if (attnviz::platform::kBrowser) static_cast<void>(app.release());
  return status;
}
