#include "core/document/file_io.hpp"

#include "tests/support/temp_dir.hpp"
#include "tests/support/write_targets.hpp"

#include <doctest/doctest.h>

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnviz {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

std::string slurp(const fs::path& path) {
  return testing::read_whole_file(path);
}

}  // namespace

TEST_CASE("write_file creates a file with the contents") {
  TempDir dir;
  REQUIRE(write_file((dir.path / "a.json").string(), "hello"));
  CHECK(slurp(dir.path / "a.json") == "hello");
}

TEST_CASE("write_file replaces a file and leaves no temporary file") {
  TempDir dir;
  std::ofstream(dir.path / "a.json") << "old contents";
  REQUIRE(write_file((dir.path / "a.json").string(), "new"));
  CHECK(slurp(dir.path / "a.json") == "new");
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("write_file into a missing folder fails and says why") {
  TempDir dir;
  const Status status = write_file((dir.path / "nope" / "a.json").string(), "x");
  CHECK_FALSE(status);
  CHECK(status.message() == "cannot write '" + (dir.path / "nope" / "a.json").string() +
                                "': the folder '" + (dir.path / "nope").string() +
                                "' does not exist");
}

TEST_CASE("check_writable gives write_file's errors and creates nothing") {
  TempDir dir;
  std::ofstream(dir.path / "plain") << "kept";
  fs::create_directory(dir.path / "folder");
  fs::create_symlink(dir.path / "nope" / "target.png", dir.path / "dangling");
  const std::string missing = (dir.path / "nope" / "a.png").string();
  CHECK(check_writable(missing).message() ==
        write_file(missing, "x").message());  // the same line, said before anything is drawn
  CHECK(check_writable(missing).message().find("' does not exist") != std::string::npos);
  CHECK(check_writable((dir.path / "folder").string()).message().find("it is a folder") !=
        std::string::npos);
  const std::string through_file = (dir.path / "plain" / "a.png").string();
  CHECK(check_writable(through_file).message().find("not a folder") != std::string::npos);
  CHECK(check_writable(through_file).message() == write_file(through_file, "x").message());
  CHECK(check_writable((dir.path / "dangling").string()).message().find("does not exist") !=
        std::string::npos);  // a link to a missing folder is followed
  CHECK(check_writable((dir.path / "new.png").string()));
  CHECK(check_writable((dir.path / "plain").string()));
  CHECK(check_writable("-"));
  CHECK(check_writable("/dev/null"));
  CHECK_FALSE(check_writable(""));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 3);  // plain, folder, dangling: nothing made
  CHECK_FALSE(fs::exists(dir.path / "nope"));
}

TEST_CASE("write_file writes through every kind of target and replaces none") {
  testing::check_every_write_target(
      [](const std::string& path) { return write_file(path, "the contents\n"); });
}

TEST_CASE("write_file gives a new file 0666 less the umask") {
  TempDir dir;
  const mode_t old_mask = ::umask(027);
  const Status status = write_file((dir.path / "new.txt").string(), "x");
  ::umask(old_mask);
  REQUIRE(status);
  CHECK((testing::lstat_of(dir.path / "new.txt").st_mode & 07777) == 0640);
}

TEST_CASE("write_file refuses a loop of symbolic links with one line") {
  TempDir dir;
  fs::create_symlink("b", dir.path / "a");
  fs::create_symlink("a", dir.path / "b");
  const Status status = write_file((dir.path / "a").string(), "x");
  REQUIRE_FALSE(status);
  CHECK(status.message().find("symbolic links") != std::string::npos);
  CHECK(fs::is_symlink(dir.path / "a"));
  CHECK(fs::is_symlink(dir.path / "b"));
  CHECK(testing::names_in(dir.path) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("write_file to a descriptor that is not open says so") {
  const Status status = write_file("/dev/fd/987", "x");
  REQUIRE_FALSE(status);
  CHECK(status.message() == "cannot write '/dev/fd/987': descriptor 987 is not open");
}

TEST_CASE("write_file sends to a listening Unix socket") {
  TempDir dir;
  const std::string path = (dir.path / "listening.sock").string();
  const int server = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(server >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof address.sun_path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(server, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(server, 1) == 0);
  std::string received;
  std::thread reader([&] {
    // A writer that does not connect (that replaced the socket with a file) fails the case
    // after 20 seconds rather than leaving it waiting.
    pollfd waiting{server, POLLIN, 0};
    if (::poll(&waiting, 1, 20000) != 1) return;
    const int connection = ::accept(server, nullptr, nullptr);
    if (connection < 0) return;
    received = testing::read_all(connection);
    ::close(connection);
  });
  const Status status = write_file(path, std::string(200000, 's'));
  reader.join();
  ::close(server);
  REQUIRE(status);
  CHECK(received == std::string(200000, 's'));
  CHECK(S_ISSOCK(testing::lstat_of(path).st_mode));
}

TEST_CASE("write_file on a full disk keeps the old file and leaves no temporary file") {
  // A full disk, as a file-size limit: every write past 4 KiB fails (EFBIG, as ENOSPC would),
  // in a child process so that the limit stays there.
  TempDir dir;
  const fs::path path = dir.path / "kept.json";
  { std::ofstream(path) << "the old contents"; }
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(3);
    const Status status = write_file(path.string(), std::string(100000, 'n'));
    const bool named = status.message().find(path.string()) != std::string::npos &&
                       status.message().find("too large") != std::string::npos;
    ::_exit(status ? 1 : named ? 0 : 2);
  }
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  REQUIRE(WIFEXITED(wait_status));
  CHECK(WEXITSTATUS(wait_status) == 0);  // 1: it said it wrote; 2: the message was wrong
  CHECK(testing::read_whole_file(path) == "the old contents");
  CHECK(testing::names_in(dir.path) == std::vector<std::string>{"kept.json"});
}

TEST_CASE("write_file in a read-only folder keeps the old file") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: root ignores folder permissions");
    return;
  }
  TempDir dir;
  const fs::path path = dir.path / "kept.json";
  { std::ofstream(path) << "old"; }
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  const Status status = write_file(path.string(), "new");
  fs::permissions(dir.path, fs::perms::owner_all);
  REQUIRE_FALSE(status);
  CHECK(status.message().find(path.string()) != std::string::npos);
  CHECK(testing::read_whole_file(path) == "old");
  CHECK(testing::names_in(dir.path) == std::vector<std::string>{"kept.json"});
}

TEST_CASE("read_file reads what was written") {
  TempDir dir;
  std::ofstream(dir.path / "b.txt") << "abc\n";
  const Result<std::string> contents = read_file((dir.path / "b.txt").string(), 100);
  REQUIRE(contents.ok());
  CHECK(*contents == "abc\n");
}

TEST_CASE("read_file refuses a file over the size limit") {
  TempDir dir;
  std::ofstream(dir.path / "big.txt") << std::string(1000, 'x');
  const Result<std::string> contents = read_file((dir.path / "big.txt").string(), 100);
  CHECK_FALSE(contents.ok());
  CHECK(contents.error().find("limit") != std::string::npos);
}

TEST_CASE("read_file of a missing file names it") {
  const Result<std::string> contents = read_file("/nonexistent/attnviz.json", 100);
  CHECK(contents.error().find("/nonexistent/attnviz.json") != std::string::npos);
}

}  // namespace attnviz
