// The app's state with the built-in scenario loaded, as the app starts.
#pragma once

#include "app/app_state.hpp"

#include <doctest/doctest.h>

namespace attnviz::testing {

inline void load_builtin_scenario(app::AppState& state) {
  ScenarioLoad load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load.scenario, "", {});
}

}  // namespace attnviz::testing
