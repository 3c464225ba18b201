#include "app/session/file_actions.hpp"

#include "app/session/view_state.hpp"
#include "core/document/file_io.hpp"
#include "core/figures/format.hpp"
#include "core/figures/svg.hpp"
#include "core/models/model_files.hpp"
#include "core/pipeline/export.hpp"

#include <filesystem>

namespace attnviz::app {
namespace {

std::vector<std::string> labels(const Tokenization& tokens) {
  std::vector<std::string> out;
  out.reserve(tokens.tokens.size());
  for (const Token& token : tokens.tokens) out.push_back(token.text);
  return out;
}

Status need_result(const AppState& state) {
  return state.computed.has_result ? Status::success()
                                   : Status::error("there is nothing computed to export yet");
}

}  // namespace

Status prepare_model_scenario(AppState& state, Scenario& scenario, const std::string& file_path) {
  if (!scenario.model()) return Status::success();
  ModelSpec& spec = *scenario.edit_model();
  std::error_code error;
  const std::filesystem::path beside = std::filesystem::path(file_path).parent_path() / spec.model;
  if (!file_path.empty() && std::filesystem::path(spec.model).is_relative() &&
      std::filesystem::exists(beside, error))
    spec.model = beside.string();
  // A shipped model the browser build has still to fetch: computed once its files are there (a
  // model that does not open then says so in the status bar).
  if (state.computed.model_files_ready && !state.computed.model_files_ready(spec.model))
    return Status::success();
  Pipeline trial;
  trial.set_threads(state.computed.pipeline.threads());
  if (Status status = trial.run(scenario); !status) return status;
  state.computed.pipeline = std::move(trial);
  state.computed.version = 0;  // computed again (at once: the model is open) on the next look
  return Status::success();
}

std::string recorded_model_name(const std::string& path_or_name) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path given = fs::weakly_canonical(fs::path(path_or_name), error);
  if (error || !fs::exists(given, error)) return path_or_name;
  const fs::path folder = fs::is_directory(given, error) ? given : given.parent_path();
  for (const std::string& shipped : shipped_model_folders()) {
    const fs::path root = fs::weakly_canonical(fs::path(shipped), error);
    if (!error && folder.parent_path() == root) return folder.filename().string();
  }
  return path_or_name;
}

Status open_model(AppState& state, const std::string& path_or_name) {
  Scenario candidate = state.document.scenario();
  candidate.spec = ModelSpec::named(recorded_model_name(path_or_name));
  if (Status status = prepare_model_scenario(state, candidate, ""); !status)
    return Status::error("not opened: " + status.message());
  // A translation model opens on its cross-attention, the picture it is opened for (Bahdanau's):
  // the other two are a click away.
  if (state.computed.pipeline.can(Capability::SourceAndTarget))
    candidate.edit_model()->part = ModelPart::Cross;
  if (state.lesson.active()) state.leave_lesson();
  state.apply(edits::set_model(*candidate.model()));
  state.selection.layer = 0;
  ++state.view_generation;
  return Status::success();
}

void leave_model(AppState& state) {
  if (!state.document.scenario().model()) return;
  state.apply(edits::set_model(std::nullopt));
  state.selection.layer = 0;
  ++state.view_generation;
}

Status open_scenario(AppState& state, RecentFiles& recent, const std::string& path) {
  Result<Scenario> load = load_scenario_file(path);
  if (load.ok())  // a model that does not open opens nothing
    if (Status status = prepare_model_scenario(state, *load, path); !status)
      return Status::error("not opened: " + path + ": " + status.message());
  if (!load.ok()) {
    recent.remove(path);               // a recent file that no longer opens leaves the list
    static_cast<void>(recent.save());  // best effort (recent_files.hpp)
    return Status::error("not opened: " + load.error());
  }
  const std::string view_json = load->view_json;
  state.leave_lesson();
  state.load(std::move(*load), path, std::move(load.warnings));
  apply_view_state(view_json, state, state.file_warnings);
  recent.add(path);
  static_cast<void>(recent.save());  // best effort (recent_files.hpp)
  return Status::success();
}

Status save_scenario(AppState& state, RecentFiles& recent, const std::string& path) {
  // A file must open again: a scenario that does not compute (an empty sentence) is not saved;
  // autosave keeps the work meanwhile.
  if (!state.computed.error.empty())
    return Status::error("not saved: " + state.computed.error +
                         " (fix it first; your work is kept)");
  Scenario document = state.document.scenario();
  document.view_json = view_state_to_json(state);
  // A custom mask is saved at the size of the current sentences (cells past its edge allowed).
  if (OneLayerSpec* one = document.edit_one_layer(); one && one->mask.size() > 0) {
    const auto rows = static_cast<Eigen::Index>(state.pipeline().target().tokens.size());
    const auto cols = static_cast<Eigen::Index>(state.pipeline().keys().tokens.size());
    MaskMatrix fitted = MaskMatrix::Ones(rows, cols);
    const Eigen::Index r = std::min(rows, one->mask.rows()), c = std::min(cols, one->mask.cols());
    fitted.topLeftCorner(r, c) = one->mask.topLeftCorner(r, c);
    one->mask = fitted;
  }
  if (Status status = save_scenario_file(path, document); !status) return status;
  state.document.saved(path, std::move(document.view_json));
  recent.add(path);
  static_cast<void>(recent.save());  // best effort (recent_files.hpp)
  return Status::success();
}

Status export_heatmap_svg(const AppState& state, const std::string& path) {
  if (Status status = need_result(state); !status) return status;
  const AttentionResult& r = state.result();
  const int head = state.selection.head;  // in range: AppState::recompute_if_needed keeps it so
  view::SvgOptions options;
  options.title = "Attention weights, head " + std::to_string(view::shown_number(head));
  options.dark = state.ui.theme == Theme::Dark;
  options.scale_top = state.ui.heatmap_top(r.heads[static_cast<std::size_t>(head)].weights);
  return write_file(
      path, view::heatmap_svg(r.heads[static_cast<std::size_t>(head)].weights,
                              labels(state.pipeline().target()), labels(state.pipeline().keys()),
                              state.ui.colormap, options));
}

Status export_arrows_svg(const AppState& state, const std::string& path, bool all_heads) {
  if (Status status = need_result(state); !status) return status;
  view::SvgOptions options;
  options.title = all_heads ? "Queries and the keys they attend to, all heads"
                            : "Queries and the keys they attend to, head " +
                                  std::to_string(view::shown_number(state.selection.head));
  options.dark = state.ui.theme == Theme::Dark;
  return write_file(path, view::arrows_svg(state.result(), labels(state.pipeline().target()),
                                           labels(state.pipeline().keys()),
                                           all_heads ? view::kSvgAllHeads : state.selection.head,
                                           state.ui.arrow_threshold, options));
}

Status export_matrices_csv(const AppState& state, const std::string& folder) {
  if (Status status = need_result(state); !status) return status;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return Status::error("cannot create the folder '" + folder + "': " + error.message());
  return attnviz::export_matrices_csv(folder, state.document.scenario(), state.pipeline());
}

Status export_result_json(const AppState& state, const std::string& path) {
  if (Status status = need_result(state); !status) return status;
  return write_file(path, result_to_json(state.document.scenario(), state.pipeline()));
}

}  // namespace attnviz::app
