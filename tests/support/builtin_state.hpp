// The app's state with the built-in scenario loaded, as the app starts; a built-in lesson.
#pragma once

#include "app/session/app_state.hpp"

#include <doctest/doctest.h>

namespace attnviz::testing {

// `path`: the file it is said to come from ("" for none).
inline void load_builtin_scenario(app::AppState& state, const std::string& path = "") {
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load, path, {});
}

// A built-in lesson by id, number or name part (core/lessons/lesson.hpp, find_builtin_lesson).
inline Lesson builtin_lesson(const char* name) {
  const auto builtin = find_builtin_lesson(name);
  REQUIRE(builtin);
  Result<Lesson> load = parse_lesson(builtin->json, std::string(builtin->id));
  REQUIRE(load.ok());
  return *load;
}

}  // namespace attnviz::testing
