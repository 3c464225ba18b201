// How attnviz-cli ends and says what went wrong, the same in every command: one line on
// standard error, "attnviz-cli: error: ...", and the exit status (0 done, 1 bad input, 2 a
// mistake in the command line).
#pragma once

#include <iostream>
#include <string>

namespace attnviz::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

inline void print_error(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "attnviz-cli: error: " << line << '\n';
}

}  // namespace attnviz::cli
