#include "app/panels/linformer_view.hpp"

#include "app/panels/pair_grid.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/colormap.hpp"
#include "core/figures/format.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/variants/flash_attention.hpp"
#include "core/variants/linformer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace attnviz::app {

namespace {

// The most k the sweep computes (past it, k is sampled evenly): each is a whole Linformer pass.
constexpr int kMostSweep = 64;

bool mouse_in(float x, float y, float w, float h) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  return mouse.x >= x && mouse.x < x + w && mouse.y >= y && mouse.y < y + h;
}

}  // namespace

void LinformerView::draw(const AppState& state, PanelContext& /*context*/) {
  font_ = ImGui::GetFontSize();
  const int n_key = static_cast<int>(state.result().n_key);
  ImGui::SameLine(0, font_);
  ImGui::TextUnformatted("k");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font_ * 7.0f);
  int k = std::clamp(k_, 1, std::max(1, n_key));
  if (ImGui::SliderInt("##linformer_k", &k, 1, std::max(1, n_key))) k_ = k;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("summary keys: the n keys and values are projected to k rows (E·K, F·V)");
  ImGui::SameLine(0, font_);
  ImGui::Checkbox("F = E", &shared_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the paper's key-value sharing: one projection for the keys and the values");
  continue_line_if_fits(ImGui::CalcTextSize("New E, F").x + font_, font_);
  if (ImGui::Button("New E, F")) seed_ += 2;  // E from seed_, F from seed_ + 1
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "draw other random projections (seed %llu; the lessons and the CLI's "
        "default use 7)",
        static_cast<unsigned long long>(seed_));
  if (!update(state)) {
    draw_error();
    return;
  }
  const Palette& colours = palette(state.ui.theme);
  if (!ImGui::BeginChild("##linformer_body", ImVec2(0, 0), false)) {
    ImGui::EndChild();
    return;
  }
  const ImVec2 available = ImGui::GetContentRegionAvail();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float sweep_w = std::min(available.x * 0.45f, font_ * 22.0f);
  const float body_h = std::max(font_ * 8.0f, available.y - line * 3.2f);
  draw_weights(state, origin, ImVec2(available.x - sweep_w - font_, body_h));
  draw_sweep(ImVec2(origin.x + available.x - sweep_w, origin.y), ImVec2(sweep_w, body_h), colours);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + body_h + line * 0.4f));
  char text[420];
  std::snprintf(
      text, sizeof text,
      "Scores computed: n \xc2\xb7 k = %lld, against n\xc2\xb2 = %lld for full attention. "
      "Largest difference of the output from full attention at k = %d: %s (E and F are "
      "random: even k = n is not exact, as E = F = I would be).",
      static_cast<long long>(pairs_), static_cast<long long>(pairs_full_), computed_k_,
      view::format_number(difference_, 3).c_str());
  text_wrapped_at_spaces(text, available.x);
  ImGui::EndChild();
  state.frame.values.set("linformer.k", computed_k_);
  state.frame.values.set("linformer.largest_difference", difference_);
  state.frame.layout.labels_of(view::ViewId::Cheaper)
      .add(static_cast<int>(weights_.rows()), static_cast<int>(weights_.rows()), font_ - 2.0f,
           false);
}

bool LinformerView::update(const AppState& state) {
  const AttentionResult& r = state.result();
  const int head = state.selection.head;
  const int n = static_cast<int>(r.n_key);
  const int k = std::clamp(k_, 1, std::max(1, n));
  // The sweep over every k does not depend on k: kept when only k changed.
  const bool same_sweep =
      computed_of_.holds(r.version, head, std::get<2>(computed_of_.inputs()), shared_, seed_);
  if (!computed_of_.changed(r.version, head, k, shared_, seed_)) return error_.empty();
  computed_k_ = k;
  error_.clear();
  const AttentionConfig& c = r.config;
  float scale = 1;
  if (!score_scale_or_error(c, "Linformer", scale, error_)) return false;
  if (c.causal || state.pipeline().mask()) {
    error_ =
        "Linformer has no causal or custom mask: a summary key mixes every position, the "
        "later ones too. Turn the causal mask and the mask pattern off in the Input panel.";
    return false;
  }
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  // Full attention, for the differences: the head's own output (no mask here).
  const Matrix& full = h.output;  // (n_query, d_v)
  const auto run = [&](int summaries, Matrix* weights) -> Result<float> {
    Result<LinformerResult> lin = seeded_linformer(h.Q, h.K, h.V, scale, summaries, seed_, shared_);
    if (!lin) return lin.status();
    if (weights) {
      *weights = lin->weights;
      const ColumnVector moved = (lin->output - full).cwiseAbs().rowwise().maxCoeff();
      moved_.assign(moved.data(), moved.data() + moved.size());
    }
    return (lin->output - full).cwiseAbs().maxCoeff();
  };
  Result<float> now = run(k, &weights_);
  if (!now) {
    error_ = now.error();
    return false;
  }
  difference_ = *now;
  pairs_ = static_cast<std::int64_t>(r.n_query) * k;
  pairs_full_ = static_cast<std::int64_t>(r.n_query) * n;
  if (!same_sweep) {  // every k (sampled past kMostSweep), once per result
    differences_.clear();
    sweep_k_.clear();
    const int step = std::max(1, (n + kMostSweep - 1) / kMostSweep);
    for (int s = 1; s <= n; s += step) {
      Result<float> d = run(s, nullptr);
      differences_.push_back(d ? *d : 0.0f);
      sweep_k_.push_back(s);
    }
  }
  return true;
}

void LinformerView::draw_weights(const AppState& state, ImVec2 origin, ImVec2 size) {
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const auto& queries = state.pipeline().target().tokens;
  const int rows = static_cast<int>(weights_.rows()), cols = static_cast<int>(weights_.cols());
  const float label_w = std::min(widest_token(state, queries) + font_ * 0.4f, font_ * 7.0f);
  const float header_h = font_ * 2.5f;  // the title, then the key numbers and "moved"
  const float cell =
      std::clamp(std::min((size.x - label_w - font_ * 7.0f) / static_cast<float>(cols),
                          (size.y - header_h) / static_cast<float>(rows)),
                 font_ * 1.15f, font_ * 2.2f);
  const ImVec2 grid(origin.x + label_w, origin.y + header_h);
  list->AddText(ImVec2(grid.x, origin.y), colours.text_dim, "\xce\xb1 over the k summaries");
  for (int i = 0; i < rows; ++i) {
    const char* name = state.frame.visual_text(queries[static_cast<std::size_t>(i)].text);
    const float label_size = font_ - 2.0f;
    const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(label_size, FLT_MAX, 0, name);
    list->AddText(ImGui::GetFont(), label_size,
                  ImVec2(grid.x - font_ * 0.3f - ts.x,
                         grid.y + cell * (static_cast<float>(i) + 0.5f) - ts.y * 0.5f),
                  colours.text, name);
    for (int j = 0; j < cols; ++j) {
      const ImVec2 p0(grid.x + cell * static_cast<float>(j), grid.y + cell * static_cast<float>(i));
      list->AddRectFilled(p0, ImVec2(p0.x + cell, p0.y + cell),
                          to_imgui(view::sample(state.ui.colormap, weights_(i, j))));
    }
  }
  const float grid_w = cell * static_cast<float>(cols), grid_h = cell * static_cast<float>(rows);
  list->AddRect(ImVec2(grid.x - 1, grid.y - 1), ImVec2(grid.x + grid_w + 1, grid.y + grid_h + 1),
                with_alpha(colours.text_dim, 0.5f));
  // Beside the grid: how far each query's output moved from full attention, as a bar (the
  // largest outlined).
  const float bars_x = grid.x + grid_w + font_ * 0.6f;
  const float bars_w = std::min(font_ * 6.0f, origin.x + size.x - bars_x - font_ * 0.2f);
  float moved_w = 0;
  if (bars_w > font_ * 1.5f && static_cast<int>(moved_.size()) == rows) {
    moved_w = bars_w + font_ * 0.6f;
    list->AddText(ImVec2(bars_x, origin.y + font_ * 1.25f), colours.text_dim, "moved");
    float top = 1e-6f;
    int most = 0;
    for (int i = 0; i < rows; ++i) {
      if (moved_[static_cast<std::size_t>(i)] > top) most = i;
      top = std::max(top, moved_[static_cast<std::size_t>(i)]);
    }
    for (int i = 0; i < rows; ++i) {
      const float y = grid.y + cell * static_cast<float>(i);
      const ImVec2 p0(bars_x, y + cell * 0.2f);
      const ImVec2 p1(bars_x + bars_w * moved_[static_cast<std::size_t>(i)] / top, y + cell * 0.8f);
      list->AddRectFilled(p0, p1, with_alpha(colours.text_dim, 0.55f));
      if (i == most) list->AddRect(p0, p1, colours.selection, 0.0f, 0, 2.0f);
    }
    if (ImGui::IsWindowHovered() && mouse_in(bars_x, grid.y, bars_w, grid_h)) {
      const int i =
          std::clamp(static_cast<int>((ImGui::GetIO().MousePos.y - grid.y) / cell), 0, rows - 1);
      ImGui::SetTooltip(
          "\"%s\": its output moved %s from full attention (the largest "
          "difference of its numbers)",
          state.frame.visual_text(queries[static_cast<std::size_t>(i)].text),
          view::format_number(moved_[static_cast<std::size_t>(i)], 3).c_str());
      state.frame.hovered_next = {Side::Query, i};
    }
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && mouse.x >= grid.x && mouse.x < grid.x + grid_w &&
      mouse.y >= grid.y && mouse.y < grid.y + grid_h) {
    const int i = std::clamp(static_cast<int>((mouse.y - grid.y) / cell), 0, rows - 1);
    const int j = std::clamp(static_cast<int>((mouse.x - grid.x) / cell), 0, cols - 1);
    ImGui::SetTooltip(
        "\"%s\" gives summary key %d a weight of %s\n(a summary key is a mix of "
        "every key, E's row %d)",
        state.frame.visual_text(queries[static_cast<std::size_t>(i)].text), j + 1,
        view::format_number(weights_(i, j), 3).c_str(), j + 1);
    state.frame.hovered_next = {Side::Query, i};
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(label_w + grid_w + moved_w, header_h + grid_h));
}

void LinformerView::draw_sweep(ImVec2 origin, ImVec2 size, const Palette& colours) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float title_h = font_ * 1.3f, axis_h = font_ * 1.3f;
  list->AddText(origin, colours.text_dim, "largest difference, k = 1 \xe2\x80\xa6 n");
  const ImVec2 plot(origin.x, origin.y + title_h);
  const float plot_w = size.x, plot_h = std::max(font_ * 3.0f, size.y - title_h - axis_h);
  float top = 1e-6f;
  for (const float d : differences_) top = std::max(top, d);
  const int count = static_cast<int>(differences_.size());
  const float bar = plot_w / static_cast<float>(std::max(1, count));
  for (int b = 0; b < count; ++b) {
    const float height = plot_h * differences_[static_cast<std::size_t>(b)] / top;
    const bool current =
        sweep_k_[static_cast<std::size_t>(b)] <= computed_k_ &&
        (b + 1 == count || sweep_k_[static_cast<std::size_t>(b) + 1] > computed_k_);
    const ImVec2 p0(plot.x + bar * static_cast<float>(b) + 1.0f, plot.y + plot_h - height);
    list->AddRectFilled(p0, ImVec2(p0.x + std::max(1.0f, bar - 2.0f), plot.y + plot_h),
                        current ? colours.selection : with_alpha(colours.text_dim, 0.5f));
  }
  list->AddLine(ImVec2(plot.x, plot.y + plot_h), ImVec2(plot.x + plot_w, plot.y + plot_h),
                colours.text_dim);
  char text[48];
  std::snprintf(text, sizeof text, "k = 1");
  list->AddText(ImVec2(plot.x, plot.y + plot_h + 2.0f), colours.text_dim, text);
  std::snprintf(text, sizeof text, "k = %d", sweep_k_.empty() ? 1 : sweep_k_.back());
  list->AddText(ImVec2(plot.x + plot_w - ImGui::CalcTextSize(text).x, plot.y + plot_h + 2.0f),
                colours.text_dim, text);
  std::snprintf(text, sizeof text, "%s", view::format_number(top, 2).c_str());
  list->AddText(ImVec2(plot.x + 2.0f, plot.y), colours.text_dim, text);
}

}  // namespace attnviz::app
