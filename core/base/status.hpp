// The one error convention of AttnViz, core/ and app/ alike:
//   Status     an operation that may fail: ok, or a one-line message saying why, for a person.
//   Result<T>  a value that may fail to come: the value, or the message; with the non-fatal
//              findings on the way (warnings: an unknown key in a file, a value clamped).
// A message names what failed and why ("scenario.json: weights.W_Q: expected 4 rows"), never
// a stack of prefixes; the caller adds where it came from only when it knows more.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

class [[nodiscard]] Status {
 public:
  // Success. (Named so that `status.ok()` on a Status does not compile: it would call a static
  // function and be true whatever the status; ask `is_ok()` or the status itself.)
  static Status success() { return Status(); }
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

template <class T>
class [[nodiscard]] Result {
 public:
  // Success, with what was found on the way.
  Result(T value, std::vector<std::string> found = {})  // NOLINT(google-explicit-constructor)
      : value_(std::move(value)), warnings(std::move(found)) {}
  // Failure: `status` must not be ok.
  Result(const Status& status,
         std::vector<std::string> found = {})  // NOLINT(google-explicit-constructor)
      : error_(status.message()), warnings(std::move(found)) {}
  static Result failure(std::string message) { return Result(Status::error(std::move(message))); }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }  // "" on success
  Status status() const { return ok() ? Status::success() : Status::error(error_); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  std::string error_;

 public:
  std::vector<std::string> warnings;  // non-fatal findings, in the order met
};

}  // namespace attnviz
