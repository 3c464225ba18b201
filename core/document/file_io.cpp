#include "core/document/file_io.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>

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

namespace {

// Why a write failed, for a person: "cannot write '<path>': <reason>".
Status write_error(const std::string& path, const std::string& reason) {
  return Status::error("cannot write '" + path + "': " + reason);
}

Status write_error_from_errno(const std::string& path, int error_number) {
  return write_error(path, std::strerror(error_number));
}

// Writes every byte to a descriptor (retrying short writes and interruptions); 0 or an errno.
int write_all(int fd, std::string_view contents) {
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// The descriptor a path names, if it is one of the names for an open descriptor of this
// process: /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N,
// /proc/thread-self/fd/N, /proc/<this process>/fd/N. Opening such a name would open the file
// again from its start (or, for a pipe, a new end); writing to the descriptor continues the
// stream where it is.
std::optional<int> descriptor_named(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"), own}) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = 0;
    const char* first = path.data() + prefix.size();
    const char* last = path.data() + path.size();
    const auto [end, error] = std::from_chars(first, last, fd);
    if (error == std::errc() && end == last && fd >= 0) return fd;
  }
  return std::nullopt;
}

// The permission bits a new file gets: 0666 less the process's umask (read without changing
// it, which umask(2) cannot do: another thread may be creating a file meanwhile).
mode_t new_file_mode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) != 0) continue;
    unsigned mask = 0;
    const char* first = line.data() + 6;
    while (*first == ' ' || *first == '\t') ++first;
    const auto [end, error] = std::from_chars(first, line.data() + line.size(), mask, 8);
    if (error == std::errc()) return static_cast<mode_t>(0666 & ~mask);
  }
  return 0644;  // no /proc (the browser build): the usual umask 022
}

// What a path is to be written as, once its symbolic links are followed.
struct Target {
  enum class Kind { Descriptor, NewFile, RegularFile, Device, Socket } kind = Kind::NewFile;
  std::string path;         // the final path (the file a chain of links names)
  int fd = -1;              // Descriptor: the open descriptor
  struct stat existing {};  // RegularFile: its mode, owner and links
};

Result<Target> resolve_target(const std::string& given) {
  constexpr int kMaxLinks = 40;  // as the kernel's own limit for a path
  Target target;
  target.path = given;
  for (int links = 0;; ++links) {
    if (const std::optional<int> fd = descriptor_named(target.path)) {
      if (::fcntl(*fd, F_GETFD) < 0)
        return write_error(given, "descriptor " + std::to_string(*fd) + " is not open");
      target.kind = Target::Kind::Descriptor;
      target.fd = *fd;
      return target;
    }
    struct stat info {};
    if (::lstat(target.path.c_str(), &info) != 0) {
      if (errno == ENOTDIR) return write_error(given, "a part of its path is a file, not a folder");
      if (errno != ENOENT) return write_error_from_errno(given, errno);
      target.kind = Target::Kind::NewFile;  // its folder is checked when the file is made
      return target;
    }
    if (S_ISLNK(info.st_mode)) {
      if (links == kMaxLinks) return write_error(given, "too many levels of symbolic links");
      std::string link(static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 255) + 1, '\0');
      const ssize_t length = ::readlink(target.path.c_str(), link.data(), link.size());
      if (length < 0) return write_error_from_errno(given, errno);
      if (static_cast<std::size_t>(length) >= link.size())
        return write_error(given, "its symbolic link changed while it was read");
      link.resize(static_cast<std::size_t>(length));
      if (link.empty() || link[0] != '/') {
        // A relative link is relative to the link's own folder. A link of /proc that names no
        // path ("pipe:[1234]", another process's descriptor) is opened as it is: the kernel
        // follows it to the pipe or socket.
        if (target.path.rfind("/proc/", 0) == 0 && link.find(":[") != std::string::npos) {
          target.kind = Target::Kind::Device;
          return target;
        }
        link = folder_of(target.path) + "/" + link;
      }
      target.path = std::move(link);
      continue;
    }
    if (S_ISDIR(info.st_mode)) return write_error(given, "it is a folder");
    if (S_ISREG(info.st_mode)) {
      target.kind = Target::Kind::RegularFile;
      target.existing = info;
    } else {
      target.kind = S_ISSOCK(info.st_mode) ? Target::Kind::Socket : Target::Kind::Device;
    }
    return target;
  }
}

// A device, a named pipe, a terminal: opened for writing (never created, never truncated) and
// written to. A named pipe waits here for its reader, as any writer of one does.
Status write_in_place(const std::string& given, const std::string& path,
                      std::string_view contents) {
  int fd = -1;
  do fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return write_error_from_errno(given, errno);
  const int written = write_all(fd, contents);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (written != 0) return write_error_from_errno(given, written);
  if (closed != 0 && closed != EINTR) return write_error_from_errno(given, closed);
  return Status::success();
}

// A Unix-domain socket: connected to, and sent the contents as a stream.
Status write_to_socket(const std::string& given, const std::string& path,
                       std::string_view contents) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path)
    return write_error(given, "the socket's path is too long to connect to");
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return write_error_from_errno(given, errno);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    return write_error(given, std::string("cannot connect to the socket: ") + std::strerror(error));
  }
  std::size_t sent = 0;
  while (sent < contents.size()) {
    const ssize_t n = ::send(fd, contents.data() + sent, contents.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      return write_error_from_errno(given, error);
    }
    sent += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return Status::success();
}

// A regular file or a new one: a temporary file beside the final target, flushed, renamed.
Status write_replacing(const std::string& given, const Target& target, std::string_view contents) {
  const std::string folder = folder_of(target.path);
  std::string temporary = folder + "/.attnviz-save-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return write_error(given, "the folder '" + folder + "' does not exist");
    if (error == ENOTDIR) return write_error(given, "'" + folder + "' is not a folder");
    return write_error(
        given, "cannot create a file in the folder '" + folder + "': " + std::strerror(error));
  }
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return write_error_from_errno(given, error);
  };
  if (const int error = write_all(fd, contents); error != 0) return fail(error);
  const bool existed = target.kind == Target::Kind::RegularFile;
  const mode_t mode = existed ? (target.existing.st_mode & 07777) : new_file_mode();
  // The owner too, where this process may give it (root may; others keep their own).
  if (existed && (target.existing.st_uid != ::geteuid() || target.existing.st_gid != ::getegid()) &&
      ::fchown(fd, target.existing.st_uid, target.existing.st_gid) != 0) {
  }
  if (::fchmod(fd, mode) != 0) return fail(errno);
  if (::fsync(fd) != 0) return fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return write_error_from_errno(given, error);
  }
  if (::rename(temporary.c_str(), target.path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return write_error_from_errno(given, error);
  }
  // The rename itself reaches the disk when the folder is flushed (best effort: some file
  // systems cannot flush a folder).
  const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd >= 0) {
    static_cast<void>(::fsync(folder_fd));
    ::close(folder_fd);
  }
  return Status::success();
}

}  // namespace

Status check_writable(const std::string& path) {
  if (path.empty()) return Status::error("cannot write a file without a name");
  if (path == "-") return Status::success();
  Result<Target> target = resolve_target(path);
  if (!target) return target.status();
  if (target->kind != Target::Kind::NewFile && target->kind != Target::Kind::RegularFile)
    return Status::success();
  const std::string folder = folder_of(target->path);
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) {
    if (errno == ENOENT) return write_error(path, "the folder '" + folder + "' does not exist");
    if (errno == ENOTDIR) return write_error(path, "'" + folder + "' is not a folder");
    return write_error_from_errno(path, errno);
  }
  if (!S_ISDIR(info.st_mode)) return write_error(path, "'" + folder + "' is not a folder");
  return Status::success();
}

Status write_file(const std::string& path, std::string_view contents) {
  if (path.empty()) return Status::error("cannot write a file without a name");
  if (path == "-") {
    std::cout.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    std::cout.flush();
    return std::cout ? Status::success() : Status::error("cannot write to standard output");
  }
  Result<Target> target = resolve_target(path);
  if (!target) return target.status();
  switch (target->kind) {
    case Target::Kind::Descriptor: {
      // What this process has buffered for the stream goes first.
      std::cout.flush();
      std::cerr.flush();
      std::fflush(nullptr);
      if (const int error = write_all(target->fd, contents); error != 0)
        return write_error_from_errno(path, error);
      return Status::success();
    }
    case Target::Kind::Device:
      return write_in_place(path, target->path, contents);
    case Target::Kind::Socket:
      return write_to_socket(path, target->path, contents);
    case Target::Kind::NewFile:
    case Target::Kind::RegularFile:
      break;
  }
  return write_replacing(path, *target, contents);
}

}  // namespace attnviz
