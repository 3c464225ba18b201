#include "app/app_state.hpp"

#include <algorithm>

namespace attnviz::app {

namespace {
constexpr std::string_view kCenterViewNames[kCenterViewCount] = {"heatmaps", "pipeline", "neuron",
                                                                 "geometry", "compare"};
}  // namespace

std::string_view to_string(CenterView view) { return kCenterViewNames[static_cast<int>(view)]; }

std::optional<CenterView> parse_center_view(std::string_view name) {
  for (int i = 0; i < kCenterViewCount; ++i)
    if (kCenterViewNames[i] == name) return static_cast<CenterView>(i);
  return std::nullopt;
}

void AppState::recompute_if_needed() {
  if (computed_version == edit_version) return;
  computed_version = edit_version;
  const Status status = pipeline.run(scenario);
  compute_error = status ? std::string() : status.message();
  has_result = has_result || status.is_ok();
  if (!has_result) return;
  const AttentionResult& r = pipeline.result();
  selection.head = std::clamp(selection.head, 0, static_cast<int>(r.heads.size()) - 1);
  selection.query = std::clamp(selection.query, 0, static_cast<int>(r.n_query) - 1);
}

void AppState::load(Scenario next, std::string path, std::vector<std::string> warnings) {
  opened = next;
  scenario = std::move(next);
  scenario_path = std::move(path);
  file_warnings = std::move(warnings);
  selection = {};
  hovered = hovered_next = {};
  mark_edited();
}

bool AppState::highlights_query(int index) const {
  if (!hovered.valid()) return false;
  // In self-attention a token is both a query and a key.
  return hovered.index == index && (hovered.side == Side::Query || !pipeline.cross());
}

bool AppState::highlights_key(int index) const {
  if (!hovered.valid()) return false;
  return hovered.index == index && (hovered.side == Side::Key || !pipeline.cross());
}

}  // namespace attnviz::app
