// A change to the document that no named edit makes (a custom mask, a weight moved in code): the
// scenario changed as a copy and put back whole, as undo puts a step back (Document::replace).
#pragma once

#include "app/session/document.hpp"

#include <utility>

namespace attnviz::testing {

template <typename Change>
void replace_scenario(app::Document& document, Change&& change) {
  Scenario scenario = document.scenario();
  std::forward<Change>(change)(scenario);
  document.replace(std::move(scenario));
}

}  // namespace attnviz::testing
