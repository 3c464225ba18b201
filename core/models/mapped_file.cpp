#include "core/models/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace attnviz {

Result<std::string> read_capped(const std::string& path, std::size_t limit) {
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  const std::string most = limit >= (std::size_t{1} << 20) ? std::to_string(limit >> 20) + " MiB"
                                                           : std::to_string(limit) + " bytes";
  if (!error && bytes > limit)
    return Status::error(path + ": " + std::to_string(bytes) + " bytes, more than the " + most +
                         " this file may have");
  if (!error && bytes == 0 && std::filesystem::is_regular_file(path, error)) return std::string();
  Result<MappedFile> mapped = MappedFile::open(path);
  if (!mapped) return mapped.status();
  if (mapped->size() > limit)
    return Status::error(path + ": more than the " + most + " this file may have");
  return std::string(reinterpret_cast<const char*>(mapped->data()), mapped->size());
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(const_cast<std::uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<std::uint8_t*>(data_), size_);
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  if (info.st_size <= 0) {
    ::close(fd);
    return Status::error(path + ": the file is empty");
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  void* mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED)
    return Status::error(path + ": cannot map the file (" + std::strerror(errno) + ")");
  MappedFile file;
  file.data_ = static_cast<const std::uint8_t*>(mapped);
  file.size_ = size;
  file.path_ = path;
  return file;
}

}  // namespace attnviz
