#include "core/document/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <iostream>
#include <iterator>

namespace attnviz {
namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  std::string contents;
  if (path == "-") {
    contents.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (contents.size() > max_bytes)
      return Status::error("standard input is larger than " + std::to_string(max_bytes) + " bytes");
    return contents;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(system_error("cannot open", path));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    ::close(fd);
    return Status::error("cannot read '" + path + "': it is a folder");
  }
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    ::close(fd);
    return Status::error("'" + path + "' is " + std::to_string(info.st_size) +
                         " bytes; the limit is " + std::to_string(max_bytes));
  }
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      Status status = Status::error(system_error("cannot read", path));
      ::close(fd);
      return status;
    }
    contents.append(buffer, static_cast<std::size_t>(got));
    if (contents.size() > max_bytes) {
      ::close(fd);
      return Status::error("'" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return contents;
}

Status write_file_atomic(const std::string& path, std::string_view contents) {
  if (path == "-") {
    std::cout.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    std::cout.flush();
    return std::cout ? Status::ok() : Status::error("cannot write to standard output");
  }
  std::string temporary = folder_of(path) + "/.attnviz-save-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) return Status::error(system_error("cannot save into the folder of", path));
  const auto fail = [&](const std::string& what) {
    Status status = Status::error(system_error(what, path));
    ::close(fd);
    ::unlink(temporary.c_str());
    return status;
  };
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    written += static_cast<std::size_t>(n);
  }
  // Keep the permissions of the file being replaced; a new file gets the usual 0644.
  struct stat old_info {};
  const mode_t mode = ::stat(path.c_str(), &old_info) == 0 ? (old_info.st_mode & 07777) : 0644;
  if (::fchmod(fd, mode) != 0) return fail("cannot set permissions for");
  if (::fsync(fd) != 0) return fail("cannot flush");
  if (::close(fd) != 0) {
    Status status = Status::error(system_error("cannot close", path));
    ::unlink(temporary.c_str());
    return status;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    Status status = Status::error(system_error("cannot replace", path));
    ::unlink(temporary.c_str());
    return status;
  }
  return Status::ok();
}

}  // namespace attnviz
