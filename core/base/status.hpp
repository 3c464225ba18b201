// A small success-or-message result used across the core library's public API.
#pragma once

#include <string>
#include <utility>

namespace attnviz {

class Status {
 public:
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message), false); }

  bool is_ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  Status() = default;
  Status(std::string message, bool ok) : message_(std::move(message)), ok_(ok) {}
  std::string message_;
  bool ok_ = true;
};

}  // namespace attnviz
