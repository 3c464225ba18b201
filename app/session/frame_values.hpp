// What the views say of the frame they drew, for the tests and --layout-out: values by key, in
// one sink that the frame loop clears as each frame begins, so that a view that was not drawn
// says nothing. A key with a dot nests: "flash.step" is "step" in the layout JSON's "flash"
// object (app/shell/headless.cpp writes them all). A view sets its own keys and nothing else.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attnviz::app {

class FrameValues {
 public:
  using Value = std::variant<long long, double, std::string, std::vector<std::string>>;

  void set(std::string_view key, int value) { set(key, Value(static_cast<long long>(value))); }
  void set(std::string_view key, long long value) { set(key, Value(value)); }
  void set(std::string_view key, double value) { set(key, Value(value)); }
  void set(std::string_view key, float value) { set(key, Value(static_cast<double>(value))); }
  void set(std::string_view key, std::string value) { set(key, Value(std::move(value))); }
  void set(std::string_view key, const char* value) { set(key, Value(std::string(value))); }
  void set(std::string_view key, Value value) {
    values_.insert_or_assign(std::string(key), std::move(value));
  }
  // One more item of the list at `key` (made when there is none).
  void append(std::string_view key, std::string item) {
    auto it = values_.find(key);
    if (it == values_.end() || !std::holds_alternative<std::vector<std::string>>(it->second))
      it = values_.insert_or_assign(std::string(key), std::vector<std::string>()).first;
    std::get<std::vector<std::string>>(it->second).push_back(std::move(item));
  }
  const Value* find(std::string_view key) const {
    const auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Value, std::less<>>& all() const { return values_; }
  void clear() { values_.clear(); }

 private:
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace attnviz::app
