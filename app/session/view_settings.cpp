#include "app/session/view_settings.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace attnviz::app {
namespace {

// Pointers stay put as settings are added (each registers at static initialisation, from its
// view's file, in no known order).
std::vector<std::unique_ptr<ViewSettingEntry>>& entries() {
  static std::vector<std::unique_ptr<ViewSettingEntry>> registered;
  return registered;
}

}  // namespace

std::size_t register_view_setting(ViewSettingEntry entry) {
  entries().push_back(std::make_unique<ViewSettingEntry>(std::move(entry)));
  return entries().size() - 1;
}

std::vector<const ViewSettingEntry*> registered_view_settings() {
  std::vector<const ViewSettingEntry*> sorted;
  for (const auto& entry : entries()) sorted.push_back(entry.get());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->rank < b->rank; });
  return sorted;
}

namespace view_json {

void expected(const std::string& path, const std::string& what, const Json& value) {
  JsonReader::fail(path, "expected " + what + ", got " + json_shown(value));
}

int whole_number(const Json& value, const std::string& path, int low, int high,
                 const std::string& what) {
  const double x = value.is_number() ? value.get<double>() : 0.5;
  if (!std::isfinite(x) || x != std::floor(x) || x < low || x > high) expected(path, what, value);
  return static_cast<int>(x);
}

float number_in(const Json& value, const std::string& path, double low, double high,
                bool low_included, const std::string& what) {
  const double x = value.is_number() ? value.get<double>() : low - 1;
  if (!std::isfinite(x) || x > high || x < low || (!low_included && x == low))
    expected(path, what, value);
  return static_cast<float>(x);
}

bool flag(const Json& value, const std::string& path) {
  if (!value.is_boolean()) expected(path, "true or false", value);
  return value.get<bool>();
}

}  // namespace view_json

bool read_view_setting(std::string_view key, const Json& value, ViewSettingValues& values,
                       std::string& message) {
  for (const auto& entry : entries())
    if (entry->key == key) {
      std::vector<std::string> warnings;
      JsonReader reader(warnings);
      try {
        entry->read(value, std::string(key), reader, values);
      } catch (const JsonFailure& failure) {
        message = failure.message;
        return false;
      }
      return true;
    }
  message = std::string(key) + ": no view has this setting";
  return false;
}

}  // namespace attnviz::app
