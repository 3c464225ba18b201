// A view's own saved settings, registered by the view's file: each is a key of the scenario's
// "view" object (app/session/view_state.hpp) with its type, its default, how it is read (through
// JsonReader: every message names its key path) and written (nothing when it is the default, so
// that files from before the setting stay as they were). Its value is kept in UiSettings::views,
// so that it is saved with the view state whether or not the view was ever drawn. Adding a view
// with a setting is then its row in core/figures/views.hpp and its file, nothing else:
//
//   const ViewSetting<Section> kSection{"layers_view", 130, Section::Lens, read_section,
//                                       write_section};
//   ...  kSection.in(context.ui.views) = Section::Rollout;
#pragma once

#include "core/document/json.hpp"

#include <any>
#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::app {

using OrderedJson = nlohmann::ordered_json;

// The values of every registered setting (by registration), each its default until set.
class ViewSettingValues {
 public:
  template <typename T>
  T& at(std::size_t index, const T& fallback) {
    if (values_.size() <= index) values_.resize(index + 1);
    if (!values_[index].has_value()) values_[index] = fallback;
    return std::any_cast<T&>(values_[index]);
  }
  template <typename T>
  const T& at(std::size_t index, const T& fallback) const {
    if (index >= values_.size() || !values_[index].has_value()) return fallback;
    return std::any_cast<const T&>(values_[index]);
  }

 private:
  std::vector<std::any> values_;
};

// A registered setting without its type: what the view state reads and writes.
struct ViewSettingEntry {
  std::string_view key;  // in the "view" object: "sampling"
  // Where it is written among the view state's keys (view_state.cpp ranks its own 0 to 110).
  int rank = 0;
  // Throws JsonFailure for a value it refuses (the setting is then left as it was).
  std::function<void(const Json& value, const std::string& path, JsonReader& reader,
                     ViewSettingValues& values)>
      read;
  std::function<void(const ViewSettingValues& values, OrderedJson& view)> write;
};

// Every setting registered, by rank.
std::vector<const ViewSettingEntry*> registered_view_settings();
// Registers a setting (at static initialisation); returns its index in ViewSettingValues.
std::size_t register_view_setting(ViewSettingEntry entry);

template <typename T>
class ViewSetting {
 public:
  // `read` returns the value read over the current one (a part of it may be left as it is),
  // throwing JsonFailure through JsonReader for a wrong one; `write` returns it as JSON, or null
  // to leave it out (the default, as a rule).
  using Reader = T (*)(const Json& value, const std::string& path, JsonReader& reader,
                       const T& current);
  using Writer = OrderedJson (*)(const T& value);
  ViewSetting(std::string_view key, int rank, T fallback, Reader read, Writer write)
      : fallback_(std::move(fallback)) {
    index_ = register_view_setting(
        {key, rank,
         [this, read](const Json& value, const std::string& path, JsonReader& reader,
                      ViewSettingValues& values) {
           in(values) = read(value, path, reader, in(values));
         },
         [this, key, write](const ViewSettingValues& values, OrderedJson& view) {
           if (OrderedJson json = write(in(values)); !json.is_null())
             view[std::string(key)] = std::move(json);
         }});
  }
  ViewSetting(const ViewSetting&) = delete;
  ViewSetting& operator=(const ViewSetting&) = delete;

  T& in(ViewSettingValues& values) const { return values.at(index_, fallback_); }
  const T& in(const ViewSettingValues& values) const { return values.at(index_, fallback_); }
  const T& fallback() const { return fallback_; }

 private:
  T fallback_;
  std::size_t index_ = 0;
};

// What the settings' readers share: each throws JsonFailure through JsonReader, "view.theme:
// expected "light" or "dark", got "blue"" (the view state adds "(ignored)").
namespace view_json {

[[noreturn]] void expected(const std::string& path, const std::string& what, const Json& value);
// A whole number in [low, high].
int whole_number(const Json& value, const std::string& path, int low, int high,
                 const std::string& what);
// A number in [low, high] (or (low, high] when !low_included).
float number_in(const Json& value, const std::string& path, double low, double high,
                bool low_included, const std::string& what);
bool flag(const Json& value, const std::string& path);
// One of `names`: its index.
template <std::size_t N>
std::size_t one_of(const Json& value, const std::string& path,
                   const std::array<std::string_view, N>& names, const std::string& what) {
  if (value.is_string())
    for (std::size_t i = 0; i < N; ++i)
      if (value.get_ref<const std::string&>() == names[i]) return i;
  expected(path, what, value);
}

}  // namespace view_json

// Reads `value` into the setting named `key`, as a file's view state would (a lesson step's
// "method" is the Cheaper view's "cheaper_method"); false, with `message` saying why, when no
// setting has that key or the value is refused.
bool read_view_setting(std::string_view key, const Json& value, ViewSettingValues& values,
                       std::string& message);

}  // namespace attnviz::app
