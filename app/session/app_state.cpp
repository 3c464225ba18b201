#include "app/session/app_state.hpp"


#include <algorithm>

namespace attnviz::app {

std::string_view to_string(CenterView view) {
  return view::view_info(view).name;
}

std::optional<CenterView> parse_center_view(std::string_view name) {
  return view::parse_centre_view(name);
}

float UiSettings::heatmap_top(const Matrix& weights) const {
  return heatmap_contrast ? view::contrast_scale_top(weights) : 1.0f;
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
  ++load_version;
  mark_edited();
  saved_version = edit_version;
}

namespace {

// In self-attention a token is both a query and a key.
bool marks(const TokenRef& token, int index, Side side, bool cross) {
  return token.valid() && token.index == index && (token.side == side || (!cross && !token.this_side_only));
}

}  // namespace

bool AppState::highlights_query(int index) const {
  return marks(hovered, index, Side::Query, pipeline.cross()) || marks(pinned, index, Side::Query, pipeline.cross());
}

bool AppState::highlights_key(int index) const {
  return marks(hovered, index, Side::Key, pipeline.cross()) || marks(pinned, index, Side::Key, pipeline.cross());
}

void AppState::start_lesson(Lesson next, int step) {
  lesson.lesson = std::move(next);
  ui.heatmap_contrast = false;  // the lessons' words ("the brightest cell") assume the 0 .. 1 scale
  scenario_path.clear();  // the lesson's scenario is in no file: Save asks where (never over the file open before)
  go_to_lesson_step(step);
}

void AppState::go_to_lesson_step(int step) {
  if (!lesson.active()) return;
  const int count = static_cast<int>(lesson.lesson->steps.size());
  lesson.step = std::clamp(step, 0, count - 1);
  lesson.prediction.reset();
  const LessonStep& s = lesson.lesson->steps[static_cast<std::size_t>(lesson.step)];
  Scenario step_scenario = s.scenario;
  if (step_scenario.title.empty())  // it keeps a name after the lesson, and in a file saved from it
    step_scenario.title = lesson.lesson->title + ", step " + std::to_string(lesson.step + 1);
  load(std::move(step_scenario), scenario_path, {});
  recompute_if_needed();
  lesson.step_version = edit_version;
  // Panels: those the step names (all when it names none), and the lesson band.
  if (s.panels.empty()) {
    ui.visible = view::kAllPanels;
  } else {
    ui.visible.fill(false);
    for (const std::string& name : s.panels)
      if (const auto id = view::parse_panel(name)) ui.visible[static_cast<std::size_t>(*id)] = true;
  }
  ui.visible[static_cast<std::size_t>(view::PanelId::Lesson)] = true;
  if (const auto view = parse_center_view(s.view)) {
    ui.center_view = *view;
    ui.visible[static_cast<std::size_t>(view::PanelId::Centre)] = true;
  }
  if (s.head) selection.head = *s.head;
  if (!s.query.empty()) selection.query = std::max(0, resolve_token(pipeline.target(), s.query));
  pinned = {};
  if (!s.key.empty()) pinned = {Side::Key, resolve_token(pipeline.keys(), s.key)};
  if (s.predict) {
    selection.head = s.predict->head;
    selection.query = std::max(0, resolve_token(pipeline.target(), s.predict->query));
  }
}

const std::vector<std::string>& AppState::broken_lesson_claims() {
  if (claims_version == edit_version) return broken_claims;
  claims_version = edit_version;
  broken_claims.clear();
  const LessonStep* step = lesson.current();
  recompute_if_needed();
  if (step && edit_version != lesson.step_version && compute_error.empty())
    for (CheckFailure& failure : check_failures(*step, pipeline)) broken_claims.push_back(std::move(failure.reason));
  return broken_claims;
}

void AppState::leave_lesson() {
  lesson = {};
  pinned = {};
  ui.visible = view::kAllPanels;
}

}  // namespace attnviz::app
