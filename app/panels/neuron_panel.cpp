// The Neuron view: one query against one key, in the selected head, dimension by dimension.
//   - q and k as rows of coloured cells (d_k dimensions), and q⊙k as signed bars: which
//     dimensions make the match and which work against it (for `general` the row q·W_a comes
//     first; for `additive` the hidden units tanh(q·W₁ + k·W₂) and v_a; for `cosine` the norms);
//   - the chain of numbers: the score q·k = Σ q⊙k → the scaled score → α after the softmax, each
//     with a sparkline of its last 200 values (one per recompute), so dragging a weight shows how
//     each of them moves;
//   - the query's whole row of α as bars (the chosen key highlighted, the scaled scores above),
//     for the context the softmax needs. A click on a bar chooses that key.
// The key defaults to the one with the largest α when the query or head changes.
//   [SECTION] Selectors
//   [SECTION] Vectors
//   [SECTION] The chain and its history
//   [SECTION] The row of α
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/view/cell_history.hpp"
#include "app/view/follow_scroll.hpp"
#include "app/view/formula.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

using view::is_masked;

float largest_magnitude(const float* values, int n) {
  return view::largest_magnitude(values, static_cast<std::size_t>(n));
}

using view::Series;
constexpr int kHistory = Series::kCapacity;

class NeuronPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const AttentionResult& r = state.result();
    const int head = state.selection.head;
    const int query = state.selection.query;
    const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
    // A new query or head: the key it attends to most.
    // A key pinned by a lesson step (or kept from another view) is the one looked at, when a new
    // scenario or step arrives; else the strongest key of the query.
    const bool new_document = state.document.load_version() != key_load_version_;
    key_load_version_ = state.document.load_version();
    const bool pinned_key =
        state.pinned.valid() && state.pinned.side == Side::Key && state.pinned.index < r.n_key;
    if (new_document && pinned_key) {
      key_ = state.pinned.index;
      key_head_ = head;
      key_query_ = query;
    } else if (head != key_head_ || query != key_query_ || key_ < 0 || key_ >= r.n_key) {
      key_ = strongest_key(h, query);
      key_head_ = head;
      key_query_ = query;
    }
    draw_selectors(state, context, h, query);
    const int key = key_;
    record_history(r, h, head, query, key);
    fill_vectors(state, h, head, query, key);

    ImVec2 origin = ImGui::GetCursorScreenPos();
    ImVec2 available = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    if (available.x < font * 8 || available.y < font * 2) return;
    // Heights: the vectors, the chain with its sparklines, then the row of α takes the rest, and
    // at least room for its bars and two lines of names: else the view scrolls down to it.
    const float vectors_h = vectors_height();
    const float chain_h = font * 5.4f;
    const float gap = font * 0.6f;
    const float row_least = font * 7.0f;
    const float needed = vectors_h + gap + chain_h + gap + row_least;
    const bool scrolling = needed > available.y + 0.5f;
    const ImVec2 panel_origin = origin, panel_available = available;
    if (scrolling) {
      ImGui::SetNextWindowContentSize(ImVec2(0.0f, needed));
      ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
      ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
      ImGui::BeginChild("##neuron_scroll", available, false);
      ImGui::PopStyleColor();
      ImGui::PopStyleVar();
      origin = ImGui::GetCursorScreenPos();  // scrolled
      available = ImVec2(available.x - ImGui::GetStyle().ScrollbarSize, needed);
    }
    float y = origin.y;
    draw_vectors(state, context, {origin.x, y, available.x, vectors_h}, query, key);
    y += vectors_h + gap;
    draw_chain(state, context, {origin.x, y, available.x, chain_h}, h, head, query, key);
    y += chain_h + gap;
    const float rest = origin.y + available.y - y;
    if (rest >= font * 4.0f) draw_row(state, {origin.x, y, available.x, rest}, h, head, query, key);
    if (scrolling) {
      ImGui::SetCursorScreenPos(origin);
      ImGui::Dummy(available);
      ImGui::EndChild();
    }
    ImGui::SetCursorScreenPos(panel_origin);
    ImGui::Dummy(panel_available);
  }

 private:
  // The chosen key, and the (head, query) it was chosen for.
  int key_ = -1, key_head_ = -1, key_query_ = -1;
  // The row of α scrolls sideways to show the key explained when it, the query or what the
  // panels show changes (view/follow_scroll.hpp).
  view::FollowedToken followed_key_, followed_query_;
  std::uint64_t view_generation_ = 0;
  std::uint64_t key_load_version_ =
      0;  // AppState::load_version when key_ was last chosen for a new document

  // The history: one entry per result version, for one (head, query, key, score function).
  view::CellHistory history_;  // of the cell shown (app/view/cell_history.hpp)

  // The rows of the vectors section, rebuilt every frame (pointers into the result or into the
  // buffers below, which keep their capacity: no allocation in the steady state).
  struct VectorRow {
    const char* name = "";
    const char* tip = "";  // what the row is, for its tooltip
    const float* values = nullptr;
    float limit = 1;
    bool bars = false;          // signed bars (the contributions) instead of cells
    int left = -1, right = -1;  // bars: the rows multiplied
  };
  std::array<VectorRow, 6> rows_{};
  int row_count_ = 0;
  int dims_ = 0;                      // the vectors' length (d_k, or d_att for additive)
  std::vector<float> contributions_;  // the terms of the score
  std::vector<float> hidden_;         // additive: tanh(q·W₁ + k·W₂)
  float sum_ = 0;                     // Σ contributions
  enum class Tip { Query, Key, Projected, QueryPart, KeyPart, Hidden, Va, Contribution };
  std::array<Tip, 6> row_kinds_{};
  bool additive_ok_ = true;  // the additive weights match the result (else no hidden units)
  // The α chart's key names, kept between frames (one allocation per shape).
  std::vector<float> label_widths_;
  char note_[256] = {};  // a line under the vectors (cosine: the division by the norms)

  static int strongest_key(const HeadResult& h, int query) {
    int best = 0;
    for (Eigen::Index j = 1; j < h.weights.cols(); ++j)
      if (h.weights(query, j) > h.weights(query, best)) best = static_cast<int>(j);
    return best;
  }

  // -----------------------------------------------------------------------------
  // [SECTION] Selectors
  // -----------------------------------------------------------------------------

  void draw_selectors(const AppState& state, PanelContext& context, const HeadResult& h,
                      int query) {
    const auto& keys = state.pipeline().keys().tokens;
    const float font = ImGui::GetFontSize();
    const int n_key = static_cast<int>(state.result().n_key);
    char preview[96], item[112];

    ImGui::AlignTextToFramePadding();
    draw_query_selector(state, context, "##neuron_query", 7.5f, 0.3f);
    ImGui::SameLine();
    ImGui::TextUnformatted("key");
    ImGui::SameLine();
    std::snprintf(preview, sizeof preview, "%d: %s", view::shown_number(key_),
                  state.frame.visual_text(keys[static_cast<std::size_t>(key_)].text));
    ImGui::SetNextItemWidth(std::min(font * 7.5f, ImGui::GetContentRegionAvail().x * 0.35f));
    if (ImGui::BeginCombo("##neuron_key", preview, ImGuiComboFlags_HeightLarge)) {
      if (ImGui::Selectable("the largest \xce\xb1")) key_ = strongest_key(h, query);
      ImGui::Separator();
      for (int j = 0; j < n_key; ++j) {
        char alpha[16] = "masked";
        if (!is_masked(h.masked_scores(query, j)))
          view::format_number_into(alpha, sizeof alpha, h.weights(query, j), 2);
        std::snprintf(item, sizeof item, "%d: %s   \xce\xb1 = %s##k%d", view::shown_number(j),
                      state.frame.visual_text(keys[static_cast<std::size_t>(j)].text), alpha, j);
        if (ImGui::Selectable(item, j == key_)) key_ = j;
        if (ImGui::IsItemHovered()) state.frame.hovered_next = {Side::Key, j};
        if (j == key_) ImGui::SetItemDefaultFocus();
      }
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    draw_head_selector(state, context, "##neuron_head");
  }

  // -----------------------------------------------------------------------------
  // [SECTION] Vectors
  // -----------------------------------------------------------------------------

  static const HeadParameters* parameters_of(const AppState& state, int head) {
    if (!state.computed.error.empty()) return nullptr;  // the result is older than the weights
    const Parameters& p = state.document.scenario().one_layer().parameters;
    if (head < 0 || static_cast<std::size_t>(head) >= p.heads.size()) return nullptr;
    return &p.heads[static_cast<std::size_t>(head)];
  }

  void add_row(const char* name, const char* tip, Tip kind, const float* values, float limit,
               bool bars = false, int left = -1, int right = -1) {
    VectorRow& row = rows_[static_cast<std::size_t>(row_count_)];
    row = VectorRow{name, tip, values, limit, bars, left, right};
    row_kinds_[static_cast<std::size_t>(row_count_)] = kind;
    ++row_count_;
  }

  void fill_vectors(const AppState& state, const HeadResult& h, int head, int query, int key) {
    const AttentionConfig& c = state.result().config;
    row_count_ = 0;
    additive_ok_ = true;
    note_[0] = '\0';
    const float* q = h.Q.row(query).data();
    const float* k = h.K.row(key).data();
    if (c.compatibility == Compatibility::Additive) {
      const HeadParameters* p = parameters_of(state, head);
      dims_ = static_cast<int>(h.query_projection.cols());
      additive_ok_ = p && p->v_a.size() == dims_ && h.key_projection.cols() == dims_;
      const float* qw = h.query_projection.row(query).data();
      const float* kw = h.key_projection.row(key).data();
      const float shared = std::max(largest_magnitude(qw, dims_), largest_magnitude(kw, dims_));
      add_row("qW\xe2\x82\x81", "the query's part of each hidden unit: q\xc2\xb7W\xe2\x82\x81",
              Tip::QueryPart, qw, shared);
      add_row("kW\xe2\x82\x82", "the key's part of each hidden unit: k\xc2\xb7W\xe2\x82\x82",
              Tip::KeyPart, kw, shared);
      if (!additive_ok_) return;
      hidden_.resize(static_cast<std::size_t>(dims_));
      contributions_.resize(static_cast<std::size_t>(dims_));
      sum_ = 0;
      for (int a = 0; a < dims_; ++a) {
        hidden_[static_cast<std::size_t>(a)] = std::tanh(qw[a] + kw[a]);
        contributions_[static_cast<std::size_t>(a)] =
            p->v_a[a] * hidden_[static_cast<std::size_t>(a)];
        sum_ += contributions_[static_cast<std::size_t>(a)];
      }
      add_row("h", "the hidden units: h = tanh(qW\xe2\x82\x81 + kW\xe2\x82\x82), between -1 and 1",
              Tip::Hidden, hidden_.data(), 1.0f);
      add_row("v_a", "v_a weighs each hidden unit", Tip::Va, p->v_a.data(),
              largest_magnitude(p->v_a.data(), dims_));
      add_row("v_a\xe2\x8a\x99h", "each hidden unit's share of the score: v_a[a]\xc2\xb7h[a]",
              Tip::Contribution, contributions_.data(),
              largest_magnitude(contributions_.data(), dims_), true, 3, 2);
      return;
    }
    dims_ = static_cast<int>(h.Q.cols());
    const float* left = q;
    if (c.compatibility == Compatibility::General) left = h.query_projection.row(query).data();
    contributions_.resize(static_cast<std::size_t>(dims_));
    sum_ = 0;
    for (int d = 0; d < dims_; ++d) {
      contributions_[static_cast<std::size_t>(d)] = left[d] * k[d];
      sum_ += contributions_[static_cast<std::size_t>(d)];
    }
    float shared = std::max(largest_magnitude(q, dims_), largest_magnitude(k, dims_));
    if (left != q) shared = std::max(shared, largest_magnitude(left, dims_));
    const bool general = c.compatibility == Compatibility::General;
    add_row("q", "the query vector q (a row of Q = X\xc2\xb7W_Q)", Tip::Query, q, shared);
    if (general)
      add_row("qW_a", "q\xc2\xb7W_a: the query seen through W_a", Tip::Projected, left, shared);
    add_row("k", "the key vector k (a row of K = X\xc2\xb7W_K)", Tip::Key, k, shared);
    add_row(
        general ? "qW_a\xe2\x8a\x99k" : "q\xe2\x8a\x99k",
        "each dimension's share of the score: positive helps the match, negative works against it",
        Tip::Contribution, contributions_.data(), largest_magnitude(contributions_.data(), dims_),
        true, general ? 1 : 0, general ? 2 : 1);
    if (c.compatibility == Compatibility::Cosine) {
      // The cosine divides the sum by both lengths.
      char dot[32], qn[32], kn[32], cosine[32];
      view::format_number_into(dot, sizeof dot, sum_, 2);
      view::format_number_into(qn, sizeof qn,
                               h.query_norms.size() > query ? h.query_norms[query] : 0.0f, 2);
      view::format_number_into(kn, sizeof kn, h.key_norms.size() > key ? h.key_norms[key] : 0.0f,
                               2);
      view::format_number_into(cosine, sizeof cosine, h.raw_scores(query, key), 2);
      std::snprintf(note_, sizeof note_,
                    "cosine = \xce\xa3 / (|q|\xc2\xb7|k|) = %s / (%s\xc2\xb7%s) = %s", dot, qn, kn,
                    cosine);
    }
  }

  // How row r is written in a formula: q₄, k₃, q₄W_a, v_a, h.
  std::string factor_name(int r, int query, int key) const {
    switch (row_kinds_[static_cast<std::size_t>(r)]) {
      case Tip::Query:
        return view::indexed("q", query);
      case Tip::Key:
        return view::indexed("k", key);
      case Tip::Projected:
        return view::indexed("q", query) + "W_a";
      default:
        return rows_[static_cast<std::size_t>(r)].name;
    }
  }

  float cell_height() const { return ImGui::GetFontSize() * 1.35f; }
  float bar_height() const { return ImGui::GetFontSize() * 3.0f; }
  float vectors_height() const {
    const float font = ImGui::GetFontSize();
    float h = 0;
    for (int r = 0; r < row_count_; ++r)
      h += (rows_[static_cast<std::size_t>(r)].bars ? bar_height() : cell_height()) + font * 0.25f;
    if (!additive_ok_ || note_[0] != '\0') h += font * 1.3f;
    return h;
  }

  void draw_vectors(const AppState& state, PanelContext& context, const view::Rect& area, int query,
                    int key) {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const ImGuiIO& io = ImGui::GetIO();
    // Columns: names, the dimensions, then the sums.
    float name_w = 0;
    for (int r = 0; r < row_count_; ++r)
      name_w = std::max(name_w, ImGui::CalcTextSize(rows_[static_cast<std::size_t>(r)].name).x);
    name_w += font * 0.5f;
    const float sum_w = ImGui::CalcTextSize("\xce\xa3 = -00.00").x + font * 0.8f;
    const float grid_w = std::max(font, area.w - name_w - sum_w);
    const int shown = std::max(
        1, std::min(dims_, static_cast<int>(grid_w / 3.0f)));  // at least 3 px per dimension
    const float cw = std::min(font * 3.2f, grid_w / static_cast<float>(shown));
    const float small = std::max(8.0f, std::round(font * 0.78f));
    ImFont* value_font = ImGui::GetFont();
    const bool values = cw >= value_font->CalcTextSizeA(small, FLT_MAX, 0, "-0.00").x + 3.0f;
    const float x0 = area.x + name_w;
    char text[32];
    int hovered_row = -1, hovered_dim = -1;
    float y = area.y;
    for (int r = 0; r < row_count_; ++r) {
      const VectorRow& row = rows_[static_cast<std::size_t>(r)];
      const float h = row.bars ? bar_height() : cell_height();
      const ImVec2 name_size = ImGui::CalcTextSize(row.name);
      list->AddText(ImVec2(x0 - font * 0.4f - name_size.x, y + (h - name_size.y) * 0.5f),
                    colours.text, row.name);
      if (row.bars) {
        // A baseline, and one bar per dimension, up for positive and down for negative.
        const float mid = y + h * 0.5f, half = h * 0.5f - 1.0f;
        list->AddLine(ImVec2(x0, mid), ImVec2(x0 + cw * static_cast<float>(shown), mid),
                      with_alpha(colours.text_dim, 0.6f));
        for (int d = 0; d < shown; ++d) {
          const float v = std::isfinite(row.values[d]) ? row.values[d] : 0.0f;
          const float length = half * std::clamp(v / row.limit, -1.0f, 1.0f);
          const float bx = x0 + cw * static_cast<float>(d), inset = cw >= 6.0f ? cw * 0.15f : 0.0f;
          const ImU32 fill = to_imgui(view::sample_diverging(v >= 0 ? row.limit : -row.limit,
                                                             row.limit, state.ui.diverging()));
          list->AddRectFilled(ImVec2(bx + inset, std::min(mid, mid - length)),
                              ImVec2(bx + cw - inset, std::max(mid, mid - length) + 0.5f),
                              with_alpha(fill, 0.35f + 0.65f * std::abs(v) / row.limit));
          if (values) {  // the number on the other side of the baseline
            view::format_number_into(text, sizeof text, row.values[d], 2);
            const ImVec2 size = value_font->CalcTextSizeA(small, FLT_MAX, 0, text);
            const float ty = v >= 0 ? mid + 1.0f : mid - size.y - 1.0f;
            list->AddText(value_font, small, ImVec2(bx + (cw - size.x) * 0.5f, ty),
                          colours.text_dim, text);
          }
        }
        // The sum, with a bold Σ.
        text[0] = '=';
        text[1] = ' ';
        view::format_number_into(text + 2, sizeof text - 2, sum_, 2);
        if (context.bold_font) ImGui::PushFont(context.bold_font);
        list->AddText(ImVec2(x0 + cw * static_cast<float>(shown) + font * 0.4f, mid - font * 0.5f),
                      colours.text, "\xce\xa3");
        const float sigma_w = ImGui::CalcTextSize("\xce\xa3 ").x;
        if (context.bold_font) ImGui::PopFont();
        list->AddText(
            ImVec2(x0 + cw * static_cast<float>(shown) + font * 0.4f + sigma_w, mid - font * 0.5f),
            colours.text, text);
      } else {
        for (int d = 0; d < shown; ++d) {
          const float v = row.values[d];
          const ImU32 fill = to_imgui(
              view::sample_diverging(std::isfinite(v) ? v : 0.0f, row.limit, state.ui.diverging()));
          const ImVec2 p0(x0 + cw * static_cast<float>(d), y), p1(p0.x + cw, y + h);
          list->AddRectFilled(p0, p1, fill);
          if (cw >= 8.0f && d > 0) list->AddLine(p0, ImVec2(p0.x, p1.y), colours.grid);
          if (values) {
            view::format_number_into(text, sizeof text, v, 2);
            const ImVec2 size = value_font->CalcTextSizeA(small, FLT_MAX, 0, text);
            const ImVec4 f = ImGui::ColorConvertU32ToFloat4(fill);
            const view::Rgba8 rgba{static_cast<std::uint8_t>(f.x * 255.0f),
                                   static_cast<std::uint8_t>(f.y * 255.0f),
                                   static_cast<std::uint8_t>(f.z * 255.0f), 255};
            list->AddText(value_font, small,
                          ImVec2(p0.x + (cw - size.x) * 0.5f, y + (h - size.y) * 0.5f),
                          to_imgui(view::text_colour_on(rgba)), text);
          }
        }
        list->AddRect(ImVec2(x0 - 1, y - 1),
                      ImVec2(x0 + cw * static_cast<float>(shown) + 1, y + h + 1),
                      with_alpha(colours.text_dim, 0.5f));
      }
      if (ImGui::IsWindowHovered() && io.MousePos.y >= y && io.MousePos.y < y + h) {
        if (io.MousePos.x >= x0 && io.MousePos.x < x0 + cw * static_cast<float>(shown))
          hovered_row = r,
          hovered_dim = std::clamp(static_cast<int>((io.MousePos.x - x0) / cw), 0, shown - 1);
        else if (io.MousePos.x >= area.x && io.MousePos.x < x0)
          hovered_row = r, hovered_dim = -1;
      }
      y += h + font * 0.25f;
    }
    if (shown < dims_) {
      char more[64];
      std::snprintf(more, sizeof more, "+%d more dimensions (in the sum)", dims_ - shown);
      list->AddText(ImVec2(x0, y - font * 0.2f), colours.text_dim, more);
    }
    if (!additive_ok_)
      list->AddText(ImVec2(area.x, y), colours.text_dim,
                    "the weights changed since this result: no hidden units to show");
    else if (note_[0] != '\0')
      list->AddText(ImVec2(x0, y), colours.text, note_);

    if (hovered_row < 0) return;
    const VectorRow& row = rows_[static_cast<std::size_t>(hovered_row)];
    const Tip kind = row_kinds_[static_cast<std::size_t>(hovered_row)];
    if (kind == Tip::Query || kind == Tip::Projected || kind == Tip::QueryPart)
      state.frame.hovered_next = {Side::Query, query};
    if (kind == Tip::Key || kind == Tip::KeyPart) state.frame.hovered_next = {Side::Key, key};
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(font * 34.0f);
    ImGui::TextDisabled("%s", row.tip);
    if (hovered_dim >= 0) {
      std::string line;
      switch (kind) {
        case Tip::Hidden:
          line = view::hidden_unit_formula(query, key, hovered_dim, rows_[0].values[hovered_dim],
                                           rows_[1].values[hovered_dim]);
          break;
        case Tip::Contribution:
          if (row.left >= 0 && row.right >= 0)
            line = view::contribution_formula(
                factor_name(row.left, query, key), factor_name(row.right, query, key), hovered_dim,
                rows_[static_cast<std::size_t>(row.left)].values[hovered_dim],
                rows_[static_cast<std::size_t>(row.right)].values[hovered_dim]);
          break;
        default: {
          char value[48];
          view::format_number_into(value, sizeof value, row.values[hovered_dim], 3);
          line = std::string(row.name) + "[" + std::to_string(view::shown_number(hovered_dim)) +
                 "] = " + value;
          break;
        }
      }
      ImGui::TextUnformatted(line.c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // -----------------------------------------------------------------------------
  // [SECTION] The chain and its history
  // -----------------------------------------------------------------------------

  void record_history(const AttentionResult& r, const HeadResult& h, int head, int query, int key) {
    history_.record(r.version, head, query, key, r.config.compatibility, h.raw_scores(query, key),
                    h.scaled_scores(query, key), h.weights(query, key));
  }

  // A sparkline of one series in `box`, scaled to its own range (printed at the left).
  void draw_sparkline(ImDrawList* list, const AppState& state, const Series& series,
                      const view::Rect& box, ImU32 colour, bool hint_when_empty) const {
    const Palette& colours = palette(state.ui.theme);
    list->AddRectFilled(ImVec2(box.x, box.y), ImVec2(box.right(), box.bottom()),
                        with_alpha(colours.text_dim, 0.08f), ImGui::GetFontSize() * 0.15f);
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int k = 0; k < series.count(); ++k) {
      const float v = series.at(k);
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    if (lo > hi) return;
    if (series.count() < 2 && hint_when_empty) {  // nothing to draw yet: say what will be
      const float size = ImGui::GetFontSize() * 0.78f;
      for (const char* hint : {"edit a weight to see it change", "edit a weight", ""}) {
        const ImVec2 extent = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, hint);
        if (extent.x > box.w - 12.0f) continue;
        list->AddText(ImGui::GetFont(), size,
                      ImVec2(box.x + 4.0f, box.y + (box.h - extent.y) * 0.5f), colours.text_dim,
                      hint);
        break;
      }
    }
    if (hi - lo < 1e-6f * std::max(1.0f, std::abs(hi)))
      lo -= 0.5f, hi += 0.5f;  // flat: a line in the middle
    const float pad = 2.0f;
    const auto point = [&](int k) {
      const float t = kHistory > 1 ? static_cast<float>(kHistory - series.count() + k) /
                                         static_cast<float>(kHistory - 1)
                                   : 1.0f;
      const float u = (series.at(k) - lo) / (hi - lo);
      return ImVec2(box.x + pad + t * (box.w - 2 * pad),
                    box.bottom() - pad - u * (box.h - 2 * pad));
    };
    for (int k = 0; k < series.count(); ++k) {
      if (!std::isfinite(series.at(k))) {
        list->PathStroke(colour, 0, 1.5f);
        continue;
      }
      list->PathLineTo(point(k));
    }
    list->PathStroke(colour, 0, 1.5f);
    if (std::isfinite(series.at(series.count() - 1)))
      list->AddCircleFilled(point(series.count() - 1), 2.5f, colour);
  }

  void draw_chain(const AppState& state, PanelContext& context, const view::Rect& area,
                  const HeadResult& h, int head, int query, int key) {
    const AttentionResult& r = state.result();
    const AttentionConfig& c = r.config;
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const ImGuiIO& io = ImGui::GetIO();
    const float arrow_w = font * 1.6f;
    const float card_w = (area.w - 2 * arrow_w) / 3.0f;
    const bool masked = is_masked(h.masked_scores(query, key));
    const bool fully_masked = h.fully_masked_rows.size() > query && h.fully_masked_rows(query) != 0;

    const char* score_label = "score q\xc2\xb7k";
    switch (c.compatibility) {
      case Compatibility::Dot:
      case Compatibility::ScaledDot:
        break;
      case Compatibility::General:
        score_label = "score q\xc2\xb7W_a\xc2\xb7k";
        break;
      case Compatibility::Additive:
        score_label = "score \xce\xa3 v_a\xc2\xb7h";
        break;
      case Compatibility::Cosine:
        score_label = "cosine";
        break;
    }
    const std::string_view scaling = view::scaling_stage_name(c.compatibility, c.temperature);
    char scaled_label[48];
    if (scaling == "no scaling")
      std::snprintf(scaled_label, sizeof scaled_label, "scaled (none)");
    else
      std::snprintf(scaled_label, sizeof scaled_label, "scaled %.*s",
                    static_cast<int>(scaling.size()), scaling.data());
    const char* labels[3] = {score_label, scaled_label,
                             c.hard ? "\xce\xb1 (argmax)" : "\xce\xb1 (softmax)"};
    const Series* series[3] = {&history_.scores, &history_.scaled, &history_.weights};
    const float values[3] = {h.raw_scores(query, key), h.scaled_scores(query, key),
                             h.weights(query, key)};
    const ImU32 head_ink = head_colour(state.ui.theme, head);

    for (int s = 0; s < 3; ++s) {
      const float x = area.x + static_cast<float>(s) * (card_w + arrow_w);
      const view::Rect card{x, area.y, card_w, area.h};
      list->AddRect(ImVec2(card.x, card.y), ImVec2(card.right(), card.bottom()),
                    with_alpha(colours.text_dim, 0.35f), font * 0.2f);
      list->PushClipRect(ImVec2(card.x, card.y), ImVec2(card.right(), card.bottom()), true);
      list->AddText(ImVec2(x + font * 0.4f, area.y + font * 0.2f), colours.text_dim, labels[s]);
      // The value, large; then the change since the previous result.
      char text[48];
      if (s == 2 && (masked || fully_masked))
        std::snprintf(text, sizeof text, "0 (masked)");
      else
        view::format_number_into(text, sizeof text, values[s], s == 2 ? 3 : 2);
      if (s == 1 && masked)
        std::snprintf(text + std::strlen(text), sizeof text - std::strlen(text),
                      " \xe2\x86\x92 \xe2\x88\x92\xe2\x88\x9e");
      if (context.bold_font) ImGui::PushFont(context.bold_font);
      const float big = font * 1.35f;
      list->AddText(ImGui::GetFont(), big, ImVec2(x + font * 0.4f, area.y + font * 1.3f),
                    colours.text, text);
      const float value_w = ImGui::GetFont()->CalcTextSizeA(big, FLT_MAX, 0, text).x;
      if (context.bold_font) ImGui::PopFont();
      const Series& history = *series[s];
      if (history.count() >= 2) {
        const float change = history.at(history.count() - 1) - history.at(history.count() - 2);
        if (std::isfinite(change) && change != 0.0f) {
          char delta[48];
          delta[0] = '+';
          view::format_number_into(change > 0 ? delta + 1 : delta,
                                   static_cast<int>(sizeof delta) - 1, change, s == 2 ? 3 : 2);
          list->AddText(ImVec2(x + font * 0.9f + value_w, area.y + font * 1.55f),
                        change > 0 ? to_imgui(view::sample_diverging(1, 1, state.ui.diverging()))
                                   : to_imgui(view::sample_diverging(-1, 1, state.ui.diverging())),
                        delta);
        }
      }
      const view::Rect spark{x + font * 0.4f, area.y + font * 3.0f, card_w - font * 0.8f,
                             area.h - font * 3.4f};
      draw_sparkline(list, state, history, spark, head_ink, s == 0);
      list->PopClipRect();
      // The arrow to the next card.
      if (s < 2) {
        const char* arrow = "\xe2\x86\x92";
        const ImVec2 size = ImGui::CalcTextSize(arrow);
        list->AddText(ImVec2(card.right() + (arrow_w - size.x) * 0.5f, area.y + font * 1.5f),
                      colours.text_dim, arrow);
      }
      if (ImGui::IsWindowHovered() && card.contains(io.MousePos.x, io.MousePos.y))
        draw_card_tooltip(state, h, head, query, key, s);
    }
  }

  void draw_card_tooltip(const AppState& state, const HeadResult& h, int head, int query, int key,
                         int stage) const {
    const AttentionResult& r = state.result();
    const AttentionConfig& c = r.config;
    const HeadParameters* p = parameters_of(state, head);
    std::string formula;
    switch (stage) {
      case 0:
        if (c.compatibility != Compatibility::Additive ||
            (p && p->v_a.size() == h.query_projection.cols()))
          formula = view::score_formula(c.compatibility, h, p ? *p : kNoParameters, query, key);
        break;
      case 1: {
        formula = view::scaled_formula(c.compatibility, c.d_k, c.temperature, query, key,
                                       h.raw_scores(query, key), h.scaled_scores(query, key));
        const float m = h.masked_scores(query, key);
        if (is_masked(m))
          formula += "\n" + view::mask_formula(c.causal && key > query ? view::MaskReason::Causal
                                                                       : view::MaskReason::Custom,
                                               query, key, h.scaled_scores(query, key), m);
        break;
      }
      default:
        formula = c.hard ? view::hardmax_formula(h.masked_scores.row(query).data(), r.n_key, query,
                                                 key, h.weights(query, key))
                         : view::softmax_formula(h.masked_scores.row(query).data(), r.n_key, query,
                                                 key, h.weights(query, key));
        break;
    }
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
    ImGui::TextUnformatted(formula.c_str());
    ImGui::TextDisabled(
        "the line: the last %d values (one per recompute) of this query, key and head", kHistory);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // -----------------------------------------------------------------------------
  // [SECTION] The row of α
  // -----------------------------------------------------------------------------

  void draw_row(const AppState& state, const view::Rect& area, const HeadResult& h, int head,
                int query, int key) {
    const AttentionResult& r = state.result();
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    const float font = ImGui::GetFontSize();
    const ImGuiIO& io = ImGui::GetIO();
    const int n_key = static_cast<int>(r.n_key);

    char heading[160];
    const bool fully_masked = h.fully_masked_rows.size() > query && h.fully_masked_rows(query) != 0;
    if (fully_masked)
      std::snprintf(heading, sizeof heading,
                    "every key is masked for \"%s\": no softmax, every \xce\xb1 is 0",
                    state.frame.visual_text(queries[static_cast<std::size_t>(query)].text));
    else
      std::snprintf(heading, sizeof heading,
                    "\xce\xb1 of every key for \"%s\" (scaled scores above the bars)",
                    state.frame.visual_text(queries[static_cast<std::size_t>(query)].text));
    list->AddText(ImVec2(area.x, area.y), fully_masked ? colours.highlight : colours.text_dim,
                  heading);
    const float small = std::max(8.0f, std::round(font * 0.78f));
    int hovered = -1, hovered_key = -1;
    for (int j = 0; j < n_key; ++j)
      if (state.highlights_key(j)) hovered_key = j;
    // The keys' names under the bars, every one whole: on one line where they fit, else
    // staggered on two; the bars widen for them, and scroll sideways past the view's width.
    label_widths_.resize(static_cast<std::size_t>(n_key));
    float widest = 0;
    for (int j = 0; j < n_key; ++j) {
      const std::size_t k = static_cast<std::size_t>(j);
      label_widths_[k] = ImGui::CalcTextSize(state.frame.visual_text(keys[k].text)).x;
      widest = std::max(widest, label_widths_[k]);
    }
    const float name_gap = font * 0.3f;
    float bw = std::min(font * 3.0f, area.w / static_cast<float>(n_key));
    std::vector<view::SlotLabel> labels = view::place_staggered_slot_labels(
        0.0f, bw * static_cast<float>(n_key), bw, label_widths_, name_gap, key, hovered_key);
    const bool two_lines = std::any_of(labels.begin(), labels.end(),
                                       [](const view::SlotLabel& l) { return l.line > 0; });
    if (two_lines && bw < view::staggered_slot_width(widest, name_gap)) {
      bw = view::staggered_slot_width(widest, name_gap);
      labels = view::place_staggered_slot_labels(0.0f, bw * static_cast<float>(n_key), bw,
                                                 label_widths_, name_gap, key, hovered_key);
    }
    const float row_w = bw * static_cast<float>(n_key);
    const bool scrolling = row_w > area.w + 0.5f;
    const float scrollbar = scrolling ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    const float label_h = font * (two_lines ? 2.25f : 1.2f);
    const float chart_top = area.y + font * 1.3f;  // under the heading: scrolls sideways
    const float top = chart_top + small;
    const float chart_h = area.bottom() - top - label_h - scrollbar;
    if (chart_h < font) return;
    float left = area.x;
    if (scrolling) {
      ImGui::SetCursorScreenPos(ImVec2(area.x, chart_top));
      ImGui::SetNextWindowContentSize(ImVec2(row_w, 0.0f));
      ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
      ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
      ImGui::BeginChild("##neuron_row", ImVec2(area.w, area.bottom() - chart_top), false,
                        ImGuiWindowFlags_HorizontalScrollbar);
      ImGui::PopStyleColor();
      ImGui::PopStyleVar();
      // Both followed each frame, so that a change to either is seen.
      const bool key_moved = followed_key_.changed_to(key);
      const bool query_moved = followed_query_.changed_to(query);
      const bool replaced = state.view_generation != view_generation_;
      view_generation_ = state.view_generation;
      if ((key_moved || query_moved || replaced) && key >= 0 && key < n_key)
        ImGui::SetScrollX(view::scroll_to_show(ImGui::GetScrollX(), bw * static_cast<float>(key),
                                               bw * static_cast<float>(key + 1), area.w, row_w,
                                               bw));
      // For the tests: the keys [first, last) at least partly in sight.
      const float scrolled = ImGui::GetScrollX();
      state.frame.values.set("neuron.first_key", static_cast<int>(scrolled / bw));
      state.frame.values.set(
          "neuron.last_key",
          std::min(n_key, static_cast<int>(std::ceil((scrolled + area.w) / bw))));
      list = ImGui::GetWindowDrawList();
      left = ImGui::GetCursorScreenPos().x;  // scrolled
    }
    const float gap = bw >= 8.0f ? std::max(1.0f, bw * 0.12f) : 0.0f;
    const float base = top + chart_h;
    list->AddLine(ImVec2(left, base), ImVec2(left + row_w, base),
                  with_alpha(colours.text_dim, 0.6f));
    const bool scores_fit =
        bw >= ImGui::GetFont()->CalcTextSizeA(small, FLT_MAX, 0, "-0.00").x + 2.0f;
    char text[32];
    int labelled = 0;
    for (int j = 0; j < n_key; ++j) {
      const float x = left + bw * static_cast<float>(j);
      const float alpha =
          std::isfinite(h.weights(query, j)) ? std::clamp(h.weights(query, j), 0.0f, 1.0f) : 0.0f;
      const bool chosen = j == key, marked = state.highlights_key(j);
      const ImU32 fill = chosen ? head_colour(state.ui.theme, head)
                                : with_alpha(colours.text_dim, marked ? 0.8f : 0.45f);
      // No weight: the masked look as a thin band on the base line, not a bar a weight could be.
      const float masked_h = std::min(chart_h, std::max(3.0f, font * 0.3f));
      if (is_masked(h.masked_scores(query, j)))
        draw_masked_cell(list, ImVec2(x + gap * 0.5f, base - masked_h),
                         ImVec2(x + bw - gap * 0.5f, base), state.ui.theme);
      else
        list->AddRectFilled(ImVec2(x + gap * 0.5f, base - chart_h * alpha),
                            ImVec2(x + bw - gap * 0.5f, base), fill);
      if (marked)
        list->AddRect(ImVec2(x, top), ImVec2(x + bw, base + label_h), colours.highlight, 0, 0,
                      2.0f);
      if (chosen)
        list->AddRect(ImVec2(x, top), ImVec2(x + bw, base + label_h), colours.selection, 0, 0,
                      2.0f);
      // The scaled score above the bar (−∞ where masked).
      const float m = h.masked_scores(query, j);
      if (scores_fit) {
        if (is_masked(m))
          std::snprintf(text, sizeof text, "\xe2\x88\x92\xe2\x88\x9e");
        else
          view::format_number_into(text, sizeof text, h.scaled_scores(query, j), 2);
        const ImVec2 size = ImGui::GetFont()->CalcTextSizeA(small, FLT_MAX, 0, text);
        list->AddText(ImGui::GetFont(), small,
                      ImVec2(x + (bw - size.x) * 0.5f,
                             base - (is_masked(m) ? masked_h : chart_h * alpha) - size.y - 1.0f),
                      colours.text_dim, text);
      }
      const view::SlotLabel& label = labels[static_cast<std::size_t>(j)];
      list->AddText(
          ImVec2(left + label.x, base + font * (0.1f + 1.05f * static_cast<float>(label.line))),
          chosen ? colours.selection : (marked ? colours.highlight : colours.text),
          state.frame.visual_text(keys[static_cast<std::size_t>(j)].text));
      ++labelled;
      if (ImGui::IsWindowHovered() && io.MousePos.x >= x && io.MousePos.x < x + bw &&
          io.MousePos.y >= top && io.MousePos.y < base + label_h)
        hovered = j;
    }
    if (scrolling) ImGui::EndChild();
    state.frame.layout.labels_of(view::ViewId::Neuron).add(n_key, labelled, font, scrolling);
    if (hovered < 0) return;
    state.frame.hovered_next = {Side::Key, hovered};
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) key_ = hovered;
    const AttentionConfig& c = r.config;
    const std::string formula =
        c.hard ? view::hardmax_formula(h.masked_scores.row(query).data(), r.n_key, query, hovered,
                                       h.weights(query, hovered))
               : view::softmax_formula(h.masked_scores.row(query).data(), r.n_key, query, hovered,
                                       h.weights(query, hovered));
    char tip_heading[256];
    std::snprintf(tip_heading, sizeof tip_heading, "key %d \"%s\": click to look at this key",
                  view::shown_number(hovered),
                  state.frame.visual_text(keys[static_cast<std::size_t>(hovered)].text));
    draw_formula_tooltip(tip_heading, formula.c_str());
  }

  static inline const HeadParameters kNoParameters{};
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Neuron, NeuronPanel);

}  // namespace attnviz::app
