// One virtual X screen (Xvfb) for many runs of the app: `xvfb-run -a` starts and stops a server for
// every run, which costs a tenth of a second or more each time (far more on a busy machine), and
// a GUI test that runs the app a hundred times pays it a hundred times. The server picks a free
// display number itself (-displayfd), is not reset between clients (-noreset: a client that
// connects while the server resets after the last one left is refused), and is stopped when the
// object goes.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace attnviz::testing {

class VirtualScreen {
 public:
  // `screen`: WIDTHxHEIGHTxDEPTH, as xvfb-run's -s '-screen 0 ...'.
  explicit VirtualScreen(const std::string& screen) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(fds[0]);
      const int null = ::open("/dev/null", O_RDWR);
      if (null >= 0) {
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
      }
      const std::string fd = std::to_string(fds[1]);
      ::execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", screen.c_str(),
               "-nolisten", "tcp", "-noreset", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    // Xvfb writes its display number once it accepts clients; a minute is far more than a
    // start takes even on a loaded machine.
    std::string number;
    pollfd wait{fds[0], POLLIN, 0};
    char c = 0;
    while (::poll(&wait, 1, 60000) > 0 && ::read(fds[0], &c, 1) == 1 && c != '\n') number += c;
    ::close(fds[0]);
    if (number.empty()) stop();
    REQUIRE_MESSAGE(!number.empty(), "Xvfb did not start (run third_party/install-deps.sh test)");
    display_ = ":" + number;
  }
  ~VirtualScreen() { stop(); }
  VirtualScreen(const VirtualScreen&) = delete;
  VirtualScreen& operator=(const VirtualScreen&) = delete;

  // ":N", for DISPLAY.
  const std::string& display() const { return display_; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  pid_t pid_ = -1;
  std::string display_;
};

}  // namespace attnviz::testing
