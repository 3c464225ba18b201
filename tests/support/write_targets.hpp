// Every kind of path a save or an export may be given (issue 36), each in a fresh temporary
// folder: a new file, a symbolic link, a chain of two, a dangling link, a file of mode 0600, a
// file with two hard links, a named pipe with a reader, a descriptor (/dev/fd/N of a pipe and of
// a file the "shell" opened), a character device made with mknod inside the folder (as root;
// skipped with a message otherwise), a folder, a missing folder. check_every_write_target runs
// one writer (a function given a path) through all of them: what it writes to a plain new file
// is what every other target must receive, nothing may replace what a path pointed at, and no
// temporary file may be left behind.
#pragma once

#include "core/base/status.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace attnviz::testing {

using Writer = std::function<Status(const std::string& path)>;

// The names in a folder, sorted (to see that no temporary file is left).
inline std::vector<std::string> names_in(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline struct stat lstat_of(const std::filesystem::path& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info;
}

// Reads a descriptor to its end.
inline std::string read_all(int fd) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

inline void check_every_write_target(const Writer& write) {
  namespace fs = std::filesystem;
  TempDir reference_dir;
  REQUIRE(write((reference_dir.path / "plain.out").string()));
  const std::string expected = read_whole_file(reference_dir.path / "plain.out");
  REQUIRE_FALSE(expected.empty());
  CHECK(names_in(reference_dir.path) == std::vector<std::string>{"plain.out"});

  SUBCASE("a symbolic link stays a link; the file it names gets the contents") {
    TempDir dir;
    { std::ofstream(dir.path / "real.out") << "old"; }
    fs::create_symlink("real.out", dir.path / "link.out");
    REQUIRE(write((dir.path / "link.out").string()));
    CHECK(fs::is_symlink(dir.path / "link.out"));
    CHECK(fs::read_symlink(dir.path / "link.out") == "real.out");
    CHECK(read_whole_file(dir.path / "real.out") == expected);
    CHECK(names_in(dir.path) == std::vector<std::string>{"link.out", "real.out"});
  }
  SUBCASE("a chain of two links into another folder: both stay, the last file is written") {
    TempDir dir;
    fs::create_directory(dir.path / "sub");
    { std::ofstream(dir.path / "sub" / "real.out") << "old"; }
    fs::create_symlink(dir.path / "sub" / "real.out", dir.path / "sub" / "second.out");
    fs::create_symlink("sub/second.out", dir.path / "first.out");
    REQUIRE(write((dir.path / "first.out").string()));
    CHECK(fs::is_symlink(dir.path / "first.out"));
    CHECK(fs::is_symlink(dir.path / "sub" / "second.out"));
    CHECK(read_whole_file(dir.path / "sub" / "real.out") == expected);
    CHECK(names_in(dir.path) == std::vector<std::string>{"first.out", "sub"});
    CHECK(names_in(dir.path / "sub") == std::vector<std::string>{"real.out", "second.out"});
  }
  SUBCASE("a dangling link creates the file it names") {
    TempDir dir;
    fs::create_symlink("made.out", dir.path / "dangling.out");
    REQUIRE(write((dir.path / "dangling.out").string()));
    CHECK(fs::is_symlink(dir.path / "dangling.out"));
    CHECK(read_whole_file(dir.path / "made.out") == expected);
    CHECK(names_in(dir.path) == std::vector<std::string>{"dangling.out", "made.out"});
  }
  SUBCASE("a file of mode 0600 stays 0600") {
    TempDir dir;
    const fs::path path = dir.path / "private.out";
    { std::ofstream(path) << "old"; }
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    REQUIRE(write(path.string()));
    CHECK((lstat_of(path).st_mode & 07777) == 0600);
    CHECK(read_whole_file(path) == expected);
    CHECK(names_in(dir.path) == std::vector<std::string>{"private.out"});
  }
  SUBCASE("a file of mode 0755 stays 0755") {
    TempDir dir;
    const fs::path path = dir.path / "shared.out";
    { std::ofstream(path) << "old"; }
    REQUIRE(::chmod(path.c_str(), 0755) == 0);
    REQUIRE(write(path.string()));
    CHECK((lstat_of(path).st_mode & 07777) == 0755);
  }
  SUBCASE("a file with two hard links: the path written gets a new file, the other keeps the old") {
    TempDir dir;
    { std::ofstream(dir.path / "a.out") << "old"; }
    fs::create_hard_link(dir.path / "a.out", dir.path / "b.out");
    REQUIRE(write((dir.path / "a.out").string()));
    CHECK(read_whole_file(dir.path / "a.out") == expected);
    CHECK(read_whole_file(dir.path / "b.out") == "old");  // docs/formats.md says why
    CHECK(names_in(dir.path) == std::vector<std::string>{"a.out", "b.out"});
  }
  SUBCASE("a named pipe with a reader gets the whole text and stays a pipe") {
    TempDir dir;
    const fs::path fifo = dir.path / "pipe.out";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // The reader opens first; a second write end held by the test meanwhile means the reader
    // sees the end only once the test lets go of it, so a writer that fails, or that replaces
    // the pipe instead of writing into it, makes the case fail rather than wait for ever.
    const int reader_fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader_fd >= 0);
    const int held = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    REQUIRE(held >= 0);
    REQUIRE(::fcntl(reader_fd, F_SETFL, 0) == 0);  // reads wait for the writer
    std::string received;
    std::thread reader([&] { received = read_all(reader_fd); });
    const Status status = write(fifo.string());
    ::close(held);
    reader.join();
    ::close(reader_fd);
    REQUIRE(status);
    CHECK(received == expected);
    CHECK(S_ISFIFO(lstat_of(fifo).st_mode));
    CHECK(names_in(dir.path) == std::vector<std::string>{"pipe.out"});
  }
  SUBCASE("/dev/fd/N and /proc/self/fd/N of a pipe reach the pipe") {
    for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
      int ends[2];
      REQUIRE(::pipe(ends) == 0);
      std::string received;
      std::thread reader([&] { received = read_all(ends[0]); });
      const Status status = write(prefix + std::to_string(ends[1]));
      ::close(ends[1]);
      reader.join();
      ::close(ends[0]);
      CHECK_MESSAGE(status, prefix);
      CHECK_MESSAGE(received == expected, prefix);
    }
  }
  SUBCASE("/dev/fd/N of a file the shell opened continues the file at its position") {
    TempDir dir;
    const fs::path path = dir.path / "redirected.out";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "before\n", 7) == 7);
    const ino_t inode = lstat_of(path).st_ino;
    const Status status = write("/dev/fd/" + std::to_string(fd));
    ::close(fd);
    REQUIRE(status);
    CHECK(read_whole_file(path) == "before\n" + expected);
    CHECK(lstat_of(path).st_ino == inode);
    CHECK(names_in(dir.path) == std::vector<std::string>{"redirected.out"});
  }
  SUBCASE("a character device made with mknod c 1 3 stays a device") {
    if (::geteuid() != 0) {
      MESSAGE("skipped: mknod needs root");
      return;
    }
    TempDir dir;
    const fs::path device = dir.path / "null.out";
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
      MESSAGE("skipped: mknod is not allowed here (" << std::strerror(errno) << ")");
      return;
    }
    const struct stat before = lstat_of(device);
    const Status status = write(device.string());
    CHECK_MESSAGE(status, status.message());
    const struct stat after = lstat_of(device);
    CHECK(S_ISCHR(after.st_mode));
    CHECK(after.st_rdev == before.st_rdev);
    CHECK(after.st_ino == before.st_ino);
    CHECK(names_in(dir.path) == std::vector<std::string>{"null.out"});
  }
  SUBCASE("a folder where a file is expected: a message naming it, the folder untouched") {
    TempDir dir;
    fs::create_directory(dir.path / "folder.out");
    const Status status = write((dir.path / "folder.out").string());
    REQUIRE_FALSE(status);
    CHECK(status.message().find("folder.out") != std::string::npos);
    CHECK(status.message().find('\n') == std::string::npos);
    CHECK(fs::is_directory(dir.path / "folder.out"));
    CHECK(fs::is_empty(dir.path / "folder.out"));
    CHECK(names_in(dir.path) == std::vector<std::string>{"folder.out"});
  }
  SUBCASE("a missing folder: a message naming the path, nothing made") {
    TempDir dir;
    const Status status = write((dir.path / "missing" / "x.out").string());
    REQUIRE_FALSE(status);
    CHECK(status.message().find("missing") != std::string::npos);
    CHECK(status.message().find("does not exist") != std::string::npos);
    CHECK(names_in(dir.path).empty());
  }
}

}  // namespace attnviz::testing
