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

void AppState::apply(const Edit& edit) {
  document.apply(edit);
  recompute_if_needed();
}

bool AppState::apply_queued_edits() {
  const bool any = !edits.empty();
  for (const Edit& edit : edits.take()) document.apply(edit);
  recompute_if_needed();
  if (any) frame.redraw_within(1.0 / 60.0);  // the panels drawn before show it in the next frame
  return any;
}

void AppState::recompute_if_needed() {
  const ModelSpec* model = document.scenario().model();
  if (model && computed.model_files_ready && !computed.model_files_ready(model->model)) {
    computed.downloading = model->model;
    frame.redraw_within(0.1);  // until the files are there
    return;
  }
  computed.downloading.clear();
  if (document.scenario().model()) {
    // A new version to compute: the result on screen is still the one before it. When what the
    // panels show was replaced (a file opened, a lesson step), no change was made by hand.
    if (computed.version != document.version() && computed.version_in_flight != document.version())
      follow_model_change(computed.before,
                          computed.shown_scenario && computed.shown_generation == view_generation
                              ? &*computed.shown_scenario
                              : nullptr,
                          document.scenario(), computed.pipeline.current());
    computed.shown_generation = view_generation;
    if (computed.version != document.version() || computed.computing()) recompute_model();
    // Roles measured off this thread (an encoder–decoder's cross heads, in the second after it
    // opens): the frames keep coming until they show; a picture waits for them.
    if (const Run& shown = computed.pipeline.current(); shown.roles_pending()) {
      if (computed.wait_for_model > std::chrono::seconds(1))
        shown.wait_for_roles();
      else
        frame.redraw_within(0.1);
    }
  } else if (computed.version != document.version()) {
    computed.before.clear();
    computed.shown_scenario.reset();
    computed.version_in_flight = 0;  // a model's result still to come is no longer wanted
    computed.version = document.version();
    const Status status = computed.pipeline.run(document.scenario());
    computed.error = status ? std::string() : status.message();
    computed.has_result = computed.has_result || status.is_ok();
  }
  if (!computed.has_result) return;
  // Also when nothing was computed: a lesson step, a command-line option or a view state may
  // have chosen a head or query the result does not have.
  const Pipeline& p = computed.pipeline;
  selection.layer = std::clamp(selection.layer, 0, p.layer_count() - 1);
  const AttentionResult& r = p.layer(selection.layer);
  selection.head = std::clamp(selection.head, 0, static_cast<int>(r.heads.size()) - 1);
  selection.query = std::clamp(selection.query, 0, static_cast<int>(r.n_query) - 1);
  selection.key = std::clamp(selection.key, -1, static_cast<int>(r.n_key) - 1);
}

void AppState::recompute_model() {
  using Clock = std::chrono::steady_clock;
  // A full recompute of the model shown, as measured (a keystroke costs less, a knocked-out head
  // in the first layer that much): short enough, it runs here and now.
  const Run& shown = computed.pipeline.current();
  const double full_ms =
      shown.full_run_ms_per_token() * static_cast<double>(shown.sequence_length() + 1);
  if (!computed.computing() && full_ms < computed.on_this_thread_ms) {
    if (!computed.products && computed.product_threads > 1)
      computed.products = std::make_unique<ProductWorkers>(computed.product_threads);
    const blas::SplitProducts split(computed.products.get());
    computed.version = document.version();
    const Status status = computed.pipeline.run(document.scenario());
    computed.error = status ? std::string() : status.message();
    computed.has_result = computed.has_result || status.is_ok();
    if (status) computed.shown_scenario = document.scenario();
    return;
  }
  if (!computed.worker)
    computed.worker = std::make_unique<ComputeWorker>(computed.pipeline.threads());
  // The frame of an edit waits a little for its result; the frames after it only look.
  std::chrono::nanoseconds wait(0);
  if (computed.version != document.version() && computed.version_in_flight != document.version()) {
    computed.worker->request(document.scenario(), document.version(), selection.layer);
    computed.version_in_flight = document.version();
    computed.requested_scenario = document.scenario();
    wait = computed.wait_for_model;
  }
  if (computed.wait_for_model > std::chrono::seconds(1)) wait = computed.wait_for_model;
  // Every finished computation newer than what is shown is shown, the latest request's last.
  const Clock::time_point deadline = Clock::now() + wait;
  while (std::optional<ComputeWorker::Finished> done = computed.worker->collect(
             computed.pipeline, std::max(std::chrono::nanoseconds(0), deadline - Clock::now()),
             computed.version + 1)) {
    if (done->version <= computed.version) continue;  // older than what is shown: dropped
    computed.error = done->status ? std::string() : done->status.message();
    computed.has_result = computed.has_result || done->status.is_ok();
    computed.version = done->version;
    // The result on screen is of the latest request, or of one before it whose scenario is gone.
    if (done->status) {
      if (done->version == computed.version_in_flight && computed.requested_scenario)
        computed.shown_scenario = computed.requested_scenario;
      else
        computed.shown_scenario.reset();
    }
    if (done->version == computed.version_in_flight) {
      computed.version_in_flight = 0;
      break;
    }
  }
  // Until the latest arrives, the frames keep coming to show it.
  if (computed.computing()) frame.redraw_within(1.0 / 60.0);
}

int AppState::edited_head() const {
  const int heads = static_cast<int>(document.scenario().one_layer().parameters.heads.size());
  return std::clamp(selection.head, 0, std::max(0, heads - 1));
}

void AppState::load(Scenario next, std::string path, std::vector<std::string> warnings) {
  document.load(std::move(next), std::move(path));
  file_warnings = std::move(warnings);
  selection = {};
  frame.hovered = frame.hovered_next = {};
  ++view_generation;
}

namespace {

// In self-attention a token is both a query and a key.
bool marks(const TokenRef& token, int index, Side side, bool cross) {
  return token.valid() && token.index == index &&
         (token.side == side || (!cross && !token.this_side_only));
}

}  // namespace

bool AppState::highlights_query(int index) const {
  const bool cross = computed.pipeline.cross();
  return marks(frame.hovered, index, Side::Query, cross) ||
         marks(pinned, index, Side::Query, cross);
}

bool AppState::highlights_key(int index) const {
  const bool cross = computed.pipeline.cross();
  return marks(frame.hovered, index, Side::Key, cross) || marks(pinned, index, Side::Key, cross);
}

void AppState::start_lesson(Lesson next, int step) {
  lesson.lesson = std::move(next);
  ui.heatmap_contrast = false;  // the lessons' words ("the brightest cell") assume the 0 .. 1 scale
  document.forget_path();  // the lesson's scenario is in no file: Save asks where (never over the
                           // file open before)
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
  load(std::move(step_scenario), document.path(), {});
  recompute_if_needed();
  lesson.step_version = document.version();
  lesson_change_seen = {};  // the step as it begins: nothing changed
  lesson_change_version = document.version();
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
  // The Cheaper attention view's part, as its setting reads it (the lesson checked the name).
  if (std::string not_read; !s.method.empty())
    read_view_setting("cheaper_method", Json(s.method), ui.views, not_read);
  // The Training view's gradient descent on W_Q and W_K, toward the step's target.
  if (std::string not_read; !s.fit.empty()) {
    read_view_setting("training", Json("weights"), ui.views, not_read);
    read_view_setting("fit_target", Json(s.fit), ui.views, not_read);
  }
  if (s.layer) selection.layer = *s.layer;
  if (s.head) selection.head = *s.head;
  if (!s.query.empty()) selection.query = std::max(0, resolve_token(pipeline().target(), s.query));
  pinned = {};
  if (!s.key.empty()) pinned = {Side::Key, resolve_token(pipeline().keys(), s.key)};
  if (s.predict) {
    selection.layer = s.predict->layer;
    selection.head = s.predict->head;
    selection.query = std::max(0, resolve_token(pipeline().target(), s.predict->query));
  }
}

const StudentChange& AppState::lesson_change() {
  if (lesson_change_version == document.version()) return lesson_change_seen;
  lesson_change_version = document.version();
  lesson_change_seen = {};
  const LessonStep* step = lesson.current();
  recompute_if_needed();
  if (step && document.version() != lesson.step_version && computed.error.empty())
    lesson_change_seen = student_change(*step, document.scenario(), computed.pipeline);
  return lesson_change_seen;
}

void AppState::leave_lesson() {
  lesson = {};
  lesson_change_seen = {};
  pinned = {};
  ui.visible = view::kAllPanels;
  ++view_generation;  // the panels change places: none keeps a scroll position from the lesson
}

}  // namespace attnviz::app
