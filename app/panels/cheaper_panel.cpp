// The Cheaper attention view: FlashAttention (core/variants/flash_attention.hpp) stepped through
// on the selected head, tile by tile. On the left the n_query × n_key scores, cut into tiles: the
// tiles computed so far in colour, the current one outlined, the ones not reached yet blank, the
// ones the mask hides entirely crossed out (never loaded). On the right the current tile's rows:
// each row's running maximum m and sum ℓ before and after it, and the factor exp(m_old − m_new)
// that rescales what the earlier tiles added up. Under them, the scores held at once against the
// full matrix, and at the last tile the output O / ℓ against full attention.
//
// Its other parts, chosen in the method list (kMethod, saved in the view state):
// Linformer (linformer_view.hpp), Reformer (reformer_view.hpp), sparse patterns
// (sparse_view.hpp), shared keys: multi-query and grouped-query attention (shared_keys_view.hpp),
// and decoding with a KV cache (decoding_view.hpp).
#include "app/panels/decoding_view.hpp"
#include "app/panels/linformer_view.hpp"
#include "app/panels/pair_grid.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/reformer_view.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/shared_keys_view.hpp"
#include "app/panels/sparse_view.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/view/memo.hpp"
#include "core/figures/colormap.hpp"
#include "core/figures/format.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/variants/flash_attention.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace attnviz::app {
namespace {

enum class Method { Flash, Linformer, Reformer, Sparse, SharedKeys, Decoding };  // kCheaperMethods

// The part shown, saved in the view state as "cheaper_method" (a lesson step's "method").
const ViewSetting<Method> kMethod{
    "cheaper_method", 130, Method::Flash,
    [](const Json& value, const std::string& path, JsonReader&, const Method&) {
      return static_cast<Method>(view_json::one_of(
          value, path, view::kCheaperMethods,
          "\"flash\", \"linformer\", \"reformer\", \"sparse\", \"shared_keys\" or \"decoding\""));
    },
    [](const Method& method) {
      return method == Method::Flash
                 ? OrderedJson()
                 : OrderedJson(
                       std::string(view::kCheaperMethods[static_cast<std::size_t>(method)]));
    }};

class CheaperPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const AttentionResult& r = state.result();
    font_ = ImGui::GetFontSize();
    draw_method(state, context);
    if (const Method method = kMethod.in(state.ui.views); method != Method::Flash) {
      parts_[static_cast<std::size_t>(method) - 1]->draw(state, context);
      return;
    }
    draw_header(state);
    if (!update(state)) {
      ImGui::Spacing();
      text_wrapped_at_spaces(error_, ImGui::GetContentRegionAvail().x, true);
      return;
    }
    follow_query(state);
    draw_controls();
    state.frame.values.set("flash.step", step_);
    state.frame.values.set("flash.tiles", static_cast<int>(flash_.tiles.size()));
    state.frame.values.set("flash.largest_difference", largest_difference_);
    // The rest scrolls when it does not fit: the scores' grid never shrinks below readable rows.
    if (!ImGui::BeginChild("##cheaper_body", ImVec2(0, 0), false)) {
      ImGui::EndChild();
      return;
    }
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    // The tile's rows beside the scores when there is room, else under them.
    const float table_w = font_ * 20.0f;
    const bool beside = available.x >= table_w + font_ * 18.0f;
    const float rows =
        static_cast<float>(std::min(settings_.query_block, static_cast<int>(r.n_query)));
    const float table_h = line * (rows + 1.6f);
    const float summary_h = line * 3.2f;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 grid =
        draw_grid(state, r, origin,
                  ImVec2(beside ? available.x - table_w - font_ : available.x,
                         available.y - summary_h - (beside ? 0.0f : table_h + line * 0.5f)));
    const ImVec2 table_at = beside ? ImVec2(origin.x + available.x - table_w, origin.y)
                                   : ImVec2(origin.x, origin.y + grid.y + line * 0.5f);
    draw_rows(state, table_at,
              ImVec2(beside ? table_w : std::min(available.x, table_w * 1.3f),
                     beside ? std::max(grid.y, table_h) : table_h));
    const float below = beside ? std::max(grid.y, table_h) : grid.y + line * 0.5f + table_h;
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + below + line * 0.4f));
    draw_summary(r, available.x);
    ImGui::EndChild();
  }

 private:
  float font_ = 16;
  // The other parts, in the order of Method (after Flash).
  std::array<std::unique_ptr<CheaperPart>, 5> parts_ = {
      std::make_unique<LinformerView>(), std::make_unique<ReformerView>(),
      std::make_unique<SparseView>(), std::make_unique<SharedKeysView>(),
      std::make_unique<DecodingView>()};
  FlashSettings settings_{4, 4};
  int step_ = 0;             // the tile shown: 0 .. tiles − 1
  int followed_query_ = -1;  // the selected query when step_ last followed it
  // What the trace was computed for.
  // What the trace is of: the result's version, the head, the tiles' rows and columns.
  view::Memo<std::uint64_t, int, int, int> trace_of_;
  FlashResult flash_;
  std::string error_;
  float largest_difference_ = 0;
  Matrix scores_;  // (n_query, n_key): the scores the tiles compute, for colour

  // ---------------------------------------------------------------------------------------------
  // The method and the head, on one line; each method's settings follow.
  void draw_method(const AppState& state, PanelContext& context) {
    static constexpr const char* kMethods[] = {"FlashAttention",  "Linformer",   "Reformer",
                                               "Sparse patterns", "Shared keys", "Decoding"};
    static constexpr const char* kAbout[] = {
        "Dao et al., 2022: attention computed tile by tile, keeping per query row only a\n"
        "running maximum m, a running sum \xe2\x84\x93 and a running output, never the whole\n"
        "matrix of scores. The result is exactly full attention.",
        "Wang et al., 2020: the n keys and values projected to k summary rows, so each\n"
        "query computes k scores instead of n. An approximation: how close, the view\n"
        "shows for every k.",
        "Kitaev et al., 2020: queries and keys hashed into buckets by random rotations;\n"
        "a query only meets the keys of its own bucket (in its chunk and the one before).",
        "Child et al., 2019; Longformer, 2020: each query sees a window, a dilated window or\n"
        "its block of keys, and a few global tokens see (and are seen by) everything.",
        "Multi-query (Shazeer, 2019) and grouped-query attention (Ainslie et al., 2023):\n"
        "heads share keys and values, so fewer weights and a smaller K/V cache.",
        "A decoder generates one token at a time: each step adds one key and one value to a\n"
        "cache, and only the new query is computed. Every row equals full causal attention."};
    int method = static_cast<int>(kMethod.in(state.ui.views));
    ImGui::AlignTextToFramePadding();
    ImGui::SetNextItemWidth(font_ * 9.0f);
    if (ImGui::Combo("##cheaper_method", &method, kMethods, IM_ARRAYSIZE(kMethods)))
      kMethod.in(context.ui.views) = static_cast<Method>(method);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kAbout[method]);
    ImGui::SameLine(0, font_);
    draw_head_selector(state, context, "##cheaper_head");
  }

  void draw_header(const AppState& state) {
    (void)state;
    ImGui::SameLine(0, font_);
    ImGui::TextUnformatted("tile");
    ImGui::SameLine();
    int queries = settings_.query_block, keys = settings_.key_block;
    ImGui::SetNextItemWidth(font_ * 5.5f);
    if (ImGui::InputInt("##tile_queries", &queries, 1, 1))
      settings_.query_block = std::clamp(queries, 1, Limits::kMaxTokens);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("queries per tile (B_r)");
    ImGui::SameLine(0, font_ * 0.3f);
    ImGui::TextUnformatted("\xc3\x97");
    ImGui::SameLine(0, font_ * 0.3f);
    ImGui::SetNextItemWidth(font_ * 5.5f);
    if (ImGui::InputInt("##tile_keys", &keys, 1, 1))
      settings_.key_block = std::clamp(keys, 1, Limits::kMaxTokens);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("keys per tile (B_c)");
  }

  // The trace for the current head and settings; false (error_ says why) when there is none.
  bool update(const AppState& state) {
    const AttentionResult& r = state.result();
    const int head = state.selection.head;
    // The same head and tiles as before, of an earlier result: the step shown is kept.
    const bool same_tiles = trace_of_.holds(std::get<0>(trace_of_.inputs()), head,
                                            settings_.query_block, settings_.key_block);
    if (!trace_of_.changed(r.version, head, settings_.query_block, settings_.key_block))
      return error_.empty();
    error_.clear();
    const AttentionConfig& c = r.config;
    float scale = 1;
    if (!score_scale_or_error(c, "FlashAttention", scale, error_)) return false;
    const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
    const MaskMatrix* mask = state.pipeline().mask();  // the custom mask or the pattern's
    Result<FlashResult> flash =
        flash_attention(h.Q, h.K, h.V, scale, c.causal, mask, settings_, true);
    if (!flash) {
      error_ = flash.error();
      return false;
    }
    flash_ = std::move(*flash);
    largest_difference_ = (flash_.output - h.output).cwiseAbs().maxCoeff();
    scores_ = h.masked_scores;  // the same scores, −∞ where masked (the tiles compute them)
    const int tiles = static_cast<int>(flash_.tiles.size());
    if (!same_tiles) step_ = 0;  // new tiles: from the first
    step_ = std::clamp(step_, 0, std::max(0, tiles - 1));
    return true;
  }

  // When another query is selected (a click on a token, a lesson step), the stepper goes to the
  // first tile of that query's row.
  void follow_query(const AppState& state) {
    const int query = state.selection.query;
    if (query == followed_query_) return;
    followed_query_ = query;
    const auto& tiles = flash_.tiles;
    for (std::size_t t = 0; t < tiles.size(); ++t)
      if (query >= tiles[t].query_begin && query < tiles[t].query_end) {
        step_ = static_cast<int>(t);
        return;
      }
  }

  void draw_controls() {
    const int tiles = static_cast<int>(flash_.tiles.size());
    draw_stepper("##flash_steps", step_, tiles, "next tile \xe2\x96\xb6", "tile");
    ImGui::SameLine(0, font_);
    const FlashTile& tile = flash_.tiles[static_cast<std::size_t>(step_)];
    ImGui::AlignTextToFramePadding();
    ImGui::Text("tile %d of %d: queries %d\xe2\x80\x93%d \xc3\x97 keys %d\xe2\x80\x93%d%s",
                step_ + 1, tiles, tile.query_begin + 1, tile.query_end, tile.key_begin + 1,
                tile.key_end, tile.skipped ? " (all masked: skipped)" : "");
  }

  // The scores, tile by tile, up to the current one.
  // Draws the grid at `origin` within `size` (its cells no smaller than readable rows: it may
  // reach past); returns the size it took.
  ImVec2 draw_grid(const AppState& state, const AttentionResult& r, ImVec2 origin, ImVec2 size) {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const auto& queries = state.pipeline().target().tokens;
    const int n_query = static_cast<int>(r.n_query), n_key = static_cast<int>(r.n_key);
    const float label_w = std::min(widest_token(state, queries) + font_ * 0.4f, font_ * 7.0f);
    const float header_h = font_ * 1.3f;
    const float cell = std::clamp(std::min((size.x - label_w) / static_cast<float>(n_key),
                                           (size.y - header_h) / static_cast<float>(n_query)),
                                  font_ * 1.15f, font_ * 2.2f);
    const ImVec2 grid(origin.x + label_w, origin.y + header_h);
    const FlashTile& current = flash_.tiles[static_cast<std::size_t>(step_)];
    // Which tile each cell belongs to, and whether it is computed by now.
    const auto tile_index = [&](int i, int j) {
      const int tiles_across = (n_key + settings_.key_block - 1) / settings_.key_block;
      return (i / settings_.query_block) * tiles_across + j / settings_.key_block;
    };
    float limit = 1e-6f;
    for (Eigen::Index i = 0; i < scores_.rows(); ++i)
      for (Eigen::Index j = 0; j < scores_.cols(); ++j)
        if (std::isfinite(scores_(i, j))) limit = std::max(limit, std::fabs(scores_(i, j)));
    char text[16];
    float numbers_end = -FLT_MAX;  // key numbers across the top, none over another
    for (int j = 0; j < n_key; ++j) {
      std::snprintf(text, sizeof text, "%d", view::shown_number(j));
      const ImVec2 ts = ImGui::CalcTextSize(text);
      const float x = grid.x + cell * (static_cast<float>(j) + 0.5f) - ts.x * 0.5f;
      if (x < numbers_end + font_ * 0.25f) continue;
      list->AddText(ImVec2(x, origin.y), colours.text_dim, text);
      numbers_end = x + ts.x;
    }
    int labelled = 0;
    const float label_size = std::min(font_, std::max(font_ - 2.0f, cell));
    for (int i = 0; i < n_query; ++i) {
      const char* name = state.frame.visual_text(queries[static_cast<std::size_t>(i)].text);
      const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(label_size, FLT_MAX, 0, name);
      list->PushClipRect(ImVec2(origin.x, grid.y),
                         ImVec2(grid.x - font_ * 0.2f, grid.y + cell * static_cast<float>(n_query)),
                         true);
      const bool in_tile = i >= current.query_begin && i < current.query_end;
      list->AddText(ImGui::GetFont(), label_size,
                    ImVec2(grid.x - font_ * 0.3f - ts.x,
                           grid.y + cell * (static_cast<float>(i) + 0.5f) - ts.y * 0.5f),
                    in_tile ? colours.selection : colours.text, name);
      list->PopClipRect();
      ++labelled;
      for (int j = 0; j < n_key; ++j) {
        const ImVec2 p0(grid.x + cell * static_cast<float>(j),
                        grid.y + cell * static_cast<float>(i));
        const ImVec2 p1(p0.x + cell, p0.y + cell);
        const int t = tile_index(i, j);
        const float s = scores_(i, j);
        if (!std::isfinite(s)) {
          draw_masked_cell(list, p0, p1, state.ui.theme);
        } else if (t <= step_) {
          list->AddRectFilled(p0, p1,
                              to_imgui(view::sample_diverging(s, limit, state.ui.diverging())));
        } else {
          list->AddRectFilled(p0, p1, with_alpha(colours.text_dim, 0.08f));
        }
      }
    }
    state.frame.layout.labels_of(view::ViewId::Cheaper).add(n_query, labelled, label_size, false);
    // The tiles' borders; skipped ones crossed out; the current one outlined.
    const float grid_w = cell * static_cast<float>(n_key),
                grid_h = cell * static_cast<float>(n_query);
    for (const FlashTile& tile : flash_.tiles) {
      const ImVec2 p0(grid.x + cell * static_cast<float>(tile.key_begin),
                      grid.y + cell * static_cast<float>(tile.query_begin));
      const ImVec2 p1(grid.x + cell * static_cast<float>(tile.key_end),
                      grid.y + cell * static_cast<float>(tile.query_end));
      list->AddRect(p0, p1, with_alpha(colours.text_dim, 0.6f), 0.0f, 0, 1.0f);
      if (tile.skipped) {
        list->AddLine(p0, p1, with_alpha(colours.text_dim, 0.5f), 1.0f);
        list->AddLine(ImVec2(p0.x, p1.y), ImVec2(p1.x, p0.y), with_alpha(colours.text_dim, 0.5f),
                      1.0f);
      }
    }
    const ImVec2 c0(grid.x + cell * static_cast<float>(current.key_begin),
                    grid.y + cell * static_cast<float>(current.query_begin));
    const ImVec2 c1(grid.x + cell * static_cast<float>(current.key_end),
                    grid.y + cell * static_cast<float>(current.query_end));
    list->AddRect(c0, c1, colours.selection, 0.0f, 0, std::max(2.0f, font_ * 0.15f));
    // Hover: the cell's score and tile.
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (ImGui::IsWindowHovered() && mouse.x >= grid.x && mouse.x < grid.x + grid_w &&
        mouse.y >= grid.y && mouse.y < grid.y + grid_h) {
      const int i = std::clamp(static_cast<int>((mouse.y - grid.y) / cell), 0, n_query - 1);
      const int j = std::clamp(static_cast<int>((mouse.x - grid.x) / cell), 0, n_key - 1);
      const int t = tile_index(i, j);
      const float s = scores_(i, j);
      ImGui::SetTooltip("query %d \"%s\", key %d: score %s\ntile %d%s", view::shown_number(i),
                        state.frame.visual_text(queries[static_cast<std::size_t>(i)].text),
                        view::shown_number(j),
                        std::isfinite(s) ? view::format_number(s, 2).c_str() : "masked", t + 1,
                        t > step_ ? " (not computed yet)" : "");
      state.frame.hovered_next = {Side::Query, i};
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) step_ = t;  // go to that tile
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(label_w + grid_w, header_h + grid_h));
    return ImVec2(label_w + grid_w, header_h + grid_h);
  }

  // The current tile's rows: m, ℓ and the rescale factor.
  void draw_rows(const AppState& state, ImVec2 at, ImVec2 size) {
    const FlashTile& tile = flash_.tiles[static_cast<std::size_t>(step_)];
    const auto& queries = state.pipeline().target().tokens;
    ImGui::SetCursorScreenPos(at);
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("##flash_rows", 4, flags, size)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("query", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("m: max");
    ImGui::TableSetupColumn("exp(m\xe2\x82\x92\xe2\x88\x92m)");
    ImGui::TableSetupColumn("\xe2\x84\x93: sum");
    ImGui::TableHeadersRow();
    const auto shown = [](float v) {
      return std::isfinite(v) ? view::format_number(v, 2) : std::string("\xe2\x88\x92\xe2\x88\x9e");
    };
    for (int r = 0; r < tile.query_end - tile.query_begin; ++r) {
      const auto k = static_cast<std::size_t>(r);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(
          state.frame.visual_text(queries[static_cast<std::size_t>(tile.query_begin + r)].text));
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%s \xe2\x86\x92 %s", shown(tile.max_before[k]).c_str(),
                  shown(tile.max_after[k]).c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(tile.skipped ? "\xe2\x80\x94" : shown(tile.rescale[k]).c_str());
      if (ImGui::IsItemHovered() && !tile.skipped)
        ImGui::SetTooltip("%s",
                          !std::isfinite(tile.max_before[k])
                              ? "the row's first keys: nothing added up yet to rescale"
                          : tile.rescale[k] < 1.0f
                              ? "this tile raised the row's maximum: what the earlier tiles "
                                "added up is worth exp(m_old \xe2\x88\x92 m_new) of itself now"
                              : "the maximum did not change: the earlier sum stands");
      ImGui::TableSetColumnIndex(3);
      ImGui::Text("%s \xe2\x86\x92 %s", shown(tile.sum_before[k]).c_str(),
                  shown(tile.sum_after[k]).c_str());
    }
    ImGui::EndTable();
  }

  void draw_summary(const AttentionResult& r, float width) {
    std::int64_t pairs = 0;
    for (int t = 0; t <= step_; ++t) pairs += flash_.tiles[static_cast<std::size_t>(t)].pairs;
    char text[320];
    std::snprintf(text, sizeof text,
                  "Scores held at once: %lld (one tile); full attention holds %lld. Scores "
                  "computed so far: %lld of %lld.",
                  static_cast<long long>(flash_.scores_held),
                  static_cast<long long>(r.n_query * r.n_key), static_cast<long long>(pairs),
                  static_cast<long long>(flash_.pairs_computed));
    text_wrapped_at_spaces(text, width);
    if (step_ + 1 == static_cast<int>(flash_.tiles.size())) {
      std::snprintf(text, sizeof text,
                    "Every tile done: each row's output is O / \xe2\x84\x93. Largest difference "
                    "from full attention: %.1e.",
                    static_cast<double>(largest_difference_));
      text_wrapped_at_spaces(text, width);
    } else {
      text_wrapped_at_spaces(
          "At the last tile each row's output is O / \xe2\x84\x93: step on, or click a tile.",
          width, true);
    }
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Cheaper, CheaperPanel);

}  // namespace attnviz::app
