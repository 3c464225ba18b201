// The app's state with the built-in scenario loaded, as the app starts; a built-in lesson; frames
// until a model's result is in.
#pragma once

#include "app/session/app_state.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

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

// Calls recompute_if_needed as frames would until the model's result for the document as it is
// now is in (or 20 s pass).
inline void frames_until_computed(app::AppState& state) {
  for (int frame = 0; frame < 2000 && (state.computed.computing() ||
                                       state.computed.version != state.document.version());
       ++frame) {
    state.recompute_if_needed();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE_FALSE(state.computed.computing());
  REQUIRE(state.computed.version == state.document.version());
}

}  // namespace attnviz::testing
