// attnviz: the desktop app.
#include "app/session/options.hpp"
#include "app/shell/app.hpp"
#include "core/base/version.hpp"

#include <iostream>
#include <string>
#include <vector>

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
  App app(std::move(options));
  return app.run();
}
