#include "app/panels/model_weights.hpp"

#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/format.hpp"
#include "core/models/model.hpp"
#include "core/pipeline/run.hpp"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

namespace attnviz::app {
namespace {

constexpr std::array<HeadMatrix, 4> kMatrices = {HeadMatrix::Query, HeadMatrix::Key,
                                                 HeadMatrix::Value, HeadMatrix::Output};

bool shared(HeadMatrix matrix) {
  return matrix == HeadMatrix::Key || matrix == HeadMatrix::Value;
}

float magnitude(const Matrix& m) {
  return m.size() > 0 ? std::max(m.cwiseAbs().maxCoeff(), 1e-6f) : 1.0f;
}

// What the matrix menu does to a block or to the tokens' embeddings.
enum class Action { Zero, Half, Double, Reset };

std::optional<Action> menu_items(const char* reset_label, const char* reset_tooltip) {
  std::optional<Action> action;
  if (ImGui::MenuItem("Zero")) action = Action::Zero;
  if (ImGui::MenuItem("Scale \xc3\x97 0.5")) action = Action::Half;
  if (ImGui::MenuItem("Scale \xc3\x97 2")) action = Action::Double;
  ImGui::Separator();
  if (ImGui::MenuItem(reset_label)) action = Action::Reset;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", reset_tooltip);
  return action;
}

void apply(Action action, Matrix& values) {
  switch (action) {
    case Action::Zero:
      values.setZero();
      break;
    case Action::Half:
      values *= 0.5f;
      break;
    case Action::Double:
      values = (values * 2.0f).cwiseMax(-FLT_MAX).cwiseMin(FLT_MAX);
      break;
    case Action::Reset:
      break;
  }
}

}  // namespace

const char* ModelWeights::token_label(const void* context, int index,
                                      char* buffer,  // NOLINT(readability-non-const-parameter)
                                      int size) {
  const auto* self = static_cast<const ModelWeights*>(context);
  (void)buffer;
  (void)size;
  const Run& run = *self->run_;
  const int position = run.shown_positions()[static_cast<std::size_t>(index)];
  return self->state_->frame.visual_text(
      run.model_tokens()[static_cast<std::size_t>(position)].shown);
}

void ModelWeights::draw(const AppState& state, PanelContext& context) {
  const Run* run = &state.pipeline().current();
  if (!run->trained_model()) return;
  state_ = &state;
  run_ = run;
  draw_header(state, context, *run);
  update(state, *run);
  build_specs(state, *run);

  const float font = ImGui::GetFontSize();
  const ImVec2 size = ImGui::GetContentRegionAvail();
  ImGui::PushStyleVar(ImGuiStyleVar_ScrollbarSize, std::round(font * 0.8f));
  if (ImGui::BeginChild("##model grids", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)),
                        false,
                        ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoBackground)) {
    const ImVec2 inner = ImGui::GetContentRegionAvail();
    std::array<MatrixEditor::StripGrid, 5> grids;  // per head | W_O | X
    for (std::size_t k = 0; k < grids.size(); ++k) grids[k] = {&specs_[k], k >= 3};
    const int count = specs_[4].rows > 0 ? 5 : 4;
    editor_.begin_frame(state.ui.theme, context.bold_font);
    editor_.draw_strip(std::span(grids.data(), static_cast<std::size_t>(count)), inner,
                       [&](int index, const MatrixGridSpec& spec, const MatrixGridEvents& events) {
                         if (index < 4)
                           handle_block(context, blocks_[static_cast<std::size_t>(index)], spec,
                                        events);
                         else
                           handle_embeddings(state, context, *run, spec, events);
                       });
    state.frame.redraw_within(editor_.next_change_in());
  }
  ImGui::EndChild();
  ImGui::PopStyleVar();
}

void ModelWeights::draw_header(const AppState& state, PanelContext& context, const Run& run) {
  draw_head_selector(state, context, "##model weights head");
  const ModelSpec* spec =
      state.document.scenario().model() ? &*state.document.scenario().model() : nullptr;
  const bool edited = spec && spec->weights_edited();
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.2f);
  ImGui::BeginDisabled(!edited);
  if (ImGui::Button("Reset model")) context.edits.push(edits::reset_model_weights());
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "every weight and embedding back as trained (the model's files are never written)");
  ImGui::SameLine();
  if (!edited) {
    ImGui::TextDisabled("as trained: drag or type a cell to change %s",
                        run.trained_model()->name.c_str());
    return;
  }
  std::size_t tokens = 0;  // the edits are sorted by token: count where the token changes
  for (std::size_t i = 0; i < spec->embedding_edits.size(); ++i)
    if (i == 0 || spec->embedding_edits[i].token != spec->embedding_edits[i - 1].token) ++tokens;
  char text[160];
  std::snprintf(text, sizeof text, "changed: %s weight%s, %s token embedding%s",
                view::format_thousands(static_cast<long long>(spec->weight_edits.size())).c_str(),
                spec->weight_edits.size() == 1 ? "" : "s",
                view::format_thousands(static_cast<long long>(tokens)).c_str(),
                tokens == 1 ? "" : "s");
  ImGui::TextColored(ImGui::GetStyleColorVec4(ImGuiCol_PlotHistogram), "%s", text);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Save writes them into the scenario file; the model on disk stays as trained");
}

void ModelWeights::update(const AppState& state, const Run& run) {
  const Transformer& transformer = run.trained_model()->transformer;
  const TransformerConfig& config = transformer.config();
  const int layer = std::clamp(state.selection.layer, 0, config.n_layers - 1);
  const int head = std::clamp(state.selection.head, 0, config.n_heads - 1);
  if (!built_of_.changed(state.document.version(), run.run_count(), layer, head, &transformer))
    return;
  built_layer_ = layer;
  built_head_ = head;
  static const ModelSpec kNothingChanged;
  const ModelSpec& spec =
      state.document.scenario().model() ? *state.document.scenario().model() : kNothingChanged;
  const TransformerWeights& on_disk = transformer.weights_on_disk();
  const TransformerLayer& disk_layer = on_disk.layers[static_cast<std::size_t>(layer)];
  const int d = config.d_head;

  // 1. Each block: its cells on disk, then the document's edits of it (sorted: one range).
  for (std::size_t i = 0; i < kMatrices.size(); ++i) {
    Block& block = blocks_[i];
    block.matrix = kMatrices[i];
    block.head = shared(block.matrix) ? config.kv_head_of(head) : head;
    const MatrixView& whole = matrix_of(disk_layer, block.matrix);
    const bool output = block.matrix == HeadMatrix::Output;
    const int rows = output ? d : config.d_model, cols = output ? config.d_model : d;
    const int row0 = output ? block.head * d : 0, col0 = output ? 0 : block.head * d;
    block.values.resize(rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) block.values(r, c) = whole.at(row0 + r, col0 + c);
    const auto key = std::tuple(layer, block.matrix, block.head);
    const auto first = std::lower_bound(spec.weight_edits.begin(), spec.weight_edits.end(), key,
                                        [](const ModelWeightEdit& e, const auto& k) {
                                          return std::tuple(e.layer, e.matrix, e.head) < k;
                                        });
    block.edited = 0;
    for (auto it = first;
         it != spec.weight_edits.end() && std::tuple(it->layer, it->matrix, it->head) == key; ++it)
      if (it->row < rows && it->col < cols) {
        block.values(it->row, it->col) = it->value;
        ++block.edited;
      }
    block.limit = magnitude(block.values);
  }

  // 2. X: the shown tokens' rows of the embedding matrix, with the document's edits.
  const std::vector<int>& shown = run.shown_positions();
  const int n = static_cast<int>(shown.size());
  x_rows_.resize(n, config.d_model);
  x_ids_.resize(static_cast<std::size_t>(n));
  std::set<int> edited_tokens;
  const float font = ImGui::GetFontSize();
  x_label_width_ = 0;
  for (int i = 0; i < n; ++i) {
    const ModelToken& token =
        run.model_tokens()[static_cast<std::size_t>(shown[static_cast<std::size_t>(i)])];
    x_ids_[static_cast<std::size_t>(i)] = token.id;
    for (int c = 0; c < config.d_model; ++c)
      x_rows_(i, c) = on_disk.token_embedding.at(token.id, c);
    const auto first =
        std::lower_bound(spec.embedding_edits.begin(), spec.embedding_edits.end(), token.id,
                         [](const ModelEmbeddingEdit& e, int id) { return e.token < id; });
    for (auto it = first; it != spec.embedding_edits.end() && it->token == token.id; ++it)
      if (it->dimension < config.d_model) {
        x_rows_(i, it->dimension) = it->value;
        edited_tokens.insert(token.id);
      }
    x_label_width_ = std::min(
        font * 7.0f,
        std::max(x_label_width_, ImGui::CalcTextSize(state.frame.visual_text(token.shown)).x));
  }
  x_edited_tokens_ = static_cast<int>(edited_tokens.size());
  x_limit_ = magnitude(x_rows_);
}

void ModelWeights::build_specs(const AppState& state, const Run& run) {
  const TransformerConfig& config = run.trained_model()->transformer.config();
  const int layer = built_layer_, head = built_head_;
  const int group = config.queries_per_kv_head();
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    Block& block = blocks_[i];
    MatrixGridSpec& spec = specs_[i];
    spec = {};
    spec.id = to_string(block.matrix).data();
    // Under grouped-query attention W_K and W_V are the key/value head's: the title says which.
    if (shared(block.matrix) && group > 1)
      std::snprintf(block.title, sizeof block.title, "%s (kv %d)", spec.id,
                    view::shown_number(block.head));
    else
      std::snprintf(block.title, sizeof block.title, "%s", spec.id);
    spec.title = block.title;
    spec.values = block.values.data();
    spec.rows = static_cast<int>(block.values.rows());
    spec.cols = static_cast<int>(block.values.cols());
    spec.limit = block.limit;
    spec.colormap = state.ui.diverging();
    spec.row_label = number_label;
    spec.column_label = number_label;
    spec.row_label_width = ImGui::CalcTextSize(std::to_string(spec.rows).c_str()).x;
    spec.accent = head_colour(state.ui.theme, head);
    spec.title_tooltip = block.tooltip;
    char changed[48] = "";
    if (block.edited > 0)
      std::snprintf(changed, sizeof changed, "; %d cell%s changed", block.edited,
                    block.edited == 1 ? "" : "s");
    char sharing[96] = "";
    if (shared(block.matrix) && group > 1)
      std::snprintf(sharing, sizeof sharing, ", key/value head %d, shared by heads %d to %d",
                    view::shown_number(block.head), view::shown_number(block.head * group),
                    view::shown_number(block.head * group + group - 1));
    const char* role =
        block.matrix == HeadMatrix::Query ? "turns each token's normalized residual into its query"
        : block.matrix == HeadMatrix::Key ? "turns each token's normalized residual into its key"
        : block.matrix == HeadMatrix::Value
            ? "turns each token's normalized residual into its value"
            : "maps the head's output back into the residual stream";
    std::snprintf(block.tooltip, sizeof block.tooltip,
                  "%s (%d \xc3\x97 %d), layer %d, head %d%s: %s%s", spec.title, spec.rows,
                  spec.cols, view::shown_number(layer), view::shown_number(head), sharing, role,
                  changed);
  }
  MatrixGridSpec& x = specs_[4];
  x = {};
  x.id = "X";
  x.title = "X (embeddings)";
  x.values = x_rows_.data();
  x.rows = static_cast<int>(x_rows_.rows());
  x.cols = static_cast<int>(x_rows_.cols());
  x.limit = x_limit_;
  x.colormap = state.ui.diverging();
  x.row_label = token_label;
  x.column_label = number_label;
  x.label_context = this;
  x.row_label_width = x_label_width_;
  x.selected_row = state.selection.query;
  if (state.frame.hovered.valid() && state.highlights_query(state.frame.hovered.index))
    x.highlight_row = state.frame.hovered.index;
  std::snprintf(x_tooltip_, sizeof x_tooltip_,
                "X (tokens \xc3\x97 d_model = %d \xc3\x97 %d): each token's embedding, its row of "
                "the embedding matrix (before positions). An edit changes that token wherever it "
                "appears%s.%s",
                x.rows, x.cols,
                run.trained_model()->transformer.weights().unembedding.data ==
                        run.trained_model()->transformer.weights().token_embedding.data
                    ? ", and its score as the next token (the model reads its "
                      "embeddings out again)"
                    : "",
                x_edited_tokens_ > 0 ? " Tokens of this text changed: see the header." : "");
  x.title_tooltip = x_tooltip_;
}

void ModelWeights::handle_block(PanelContext& context, Block& block, const MatrixGridSpec& spec,
                                const MatrixGridEvents& events) {
  if (events.edited) {
    context.edits.push(edits::set_model_weight(
        {built_layer_, block.matrix, block.head, events.row, events.col, events.value}));
    if (std::isfinite(events.value)) block.values(events.row, events.col) = events.value;
  }
  if (!editor_.begin_menu(spec, events.open_menu)) return;
  ImGui::TextDisabled("%s, layer %d, %s %d", spec.title, view::shown_number(built_layer_),
                      shared(block.matrix) ? "key/value head" : "head",
                      view::shown_number(block.head));
  ImGui::Separator();
  const std::optional<Action> action =
      menu_items("Reset (as trained)", "this matrix back to the values in the model's files");
  editor_.end_menu();
  if (!action) return;
  const int rows = static_cast<int>(block.values.rows()),
            cols = static_cast<int>(block.values.cols());
  if (*action == Action::Reset) {
    context.edits.push(
        edits::set_model_weight_block(built_layer_, block.matrix, block.head, rows, cols, {}));
    return;
  }
  Matrix next = block.values;
  apply(*action, next);
  context.edits.push(  // row-major: the block's cells row by row
      edits::set_model_weight_block(built_layer_, block.matrix, block.head, rows, cols,
                                    {next.data(), next.data() + next.size()}));
}

void ModelWeights::handle_embeddings(const AppState& state, PanelContext& context, const Run& run,
                                     const MatrixGridSpec& spec, const MatrixGridEvents& events) {
  const int rows = static_cast<int>(x_rows_.rows());
  if (events.hovered_row >= 0) state.frame.hovered_next = TokenRef{Side::Query, events.hovered_row};
  if (events.label_clicked >= 0 && events.label_clicked < rows)
    context.selection.query = events.label_clicked;
  if (events.label_hovered >= 0 && events.label_hovered < rows) {
    const int id = x_ids_[static_cast<std::size_t>(events.label_hovered)];
    ImGui::SetTooltip(
        "\"%s\": token %d of the vocabulary\nclick: make it the query \xc2\xb7 "
        "right-click: reset its embedding",
        token_label(this, events.label_hovered, nullptr, 0), id);
  }
  if (events.edited && events.row < rows && events.col < x_rows_.cols()) {
    context.edits.push(edits::set_model_embedding(
        {x_ids_[static_cast<std::size_t>(events.row)], events.col, events.value}));
    if (std::isfinite(events.value)) x_rows_(events.row, events.col) = events.value;
  }
  if (events.label_menu >= 0) {
    x_menu_row_ = events.label_menu;
    ImGui::OpenPopup("##model token menu");
  }
  if (ImGui::BeginPopup("##model token menu")) {
    if (x_menu_row_ >= 0 && x_menu_row_ < rows) {
      ImGui::TextDisabled("\"%s\"", token_label(this, x_menu_row_, nullptr, 0));
      ImGui::Separator();
      if (ImGui::MenuItem("Reset its embedding (as trained)"))
        context.edits.push(
            edits::reset_model_embeddings({x_ids_[static_cast<std::size_t>(x_menu_row_)]}));
    }
    ImGui::EndPopup();
  }
  if (!editor_.begin_menu(spec, events.open_menu)) return;
  ImGui::TextDisabled("X: the embeddings of the tokens of %s", run.trained_model()->name.c_str());
  ImGui::Separator();
  const bool reset = ImGui::MenuItem("Reset these tokens (as trained)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the embeddings of every token of the text back to the model's files");
  editor_.end_menu();
  if (reset) context.edits.push(edits::reset_model_embeddings(x_ids_));
}

}  // namespace attnviz::app
