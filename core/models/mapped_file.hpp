// A file mapped read-only into memory: a model's weights are read where they lie, not copied.
#pragma once

#include "core/base/status.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnviz {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  ~MappedFile();

  // The whole file, or an error naming it (missing, unreadable, a folder, empty).
  static Result<MappedFile> open(const std::string& path);

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::string path_;
};

// The whole of a small file (a tokenizer's, a config) as text: an error naming it when it is
// missing or unreadable, or longer than `limit` bytes (checked before it is read). An empty file
// is "".
Result<std::string> read_capped(const std::string& path, std::size_t limit);

}  // namespace attnviz
