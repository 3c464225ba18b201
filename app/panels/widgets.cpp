#include "app/panels/widgets.hpp"

#include "app/panels/theme.hpp"
#include "app/view/formula.hpp"
#include "app/view/layout.hpp"
#include "core/figures/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz::app {

ImU32 with_alpha(ImU32 colour, float alpha) {
  ImVec4 c = ImGui::ColorConvertU32ToFloat4(colour);
  c.w *= std::clamp(alpha, 0.0f, 1.0f);
  return ImGui::ColorConvertFloat4ToU32(c);
}

bool draw_query_selector(const AppState& state, PanelContext& context, const char* id,
                         float max_width_em, float max_width_fraction) {
  const AttentionResult& r = state.result();
  const auto& queries = state.pipeline().target().tokens;
  const float font = ImGui::GetFontSize();
  const int n_query = static_cast<int>(r.n_query);
  const int query = state.selection.query;
  ImGui::TextUnformatted("query");
  ImGui::SameLine();
  char preview[96];
  std::snprintf(preview, sizeof preview, "%d: %s", view::shown_number(query),
                state.frame.visual_text(queries[static_cast<std::size_t>(query)].text));
  ImGui::SetNextItemWidth(
      std::min(font * max_width_em, ImGui::GetContentRegionAvail().x * max_width_fraction));
  bool chosen = false;
  if (ImGui::BeginCombo(id, preview, ImGuiComboFlags_HeightLarge)) {
    for (int i = 0; i < n_query; ++i) {
      char item[96];
      std::snprintf(item, sizeof item, "%d: %s##q%d", view::shown_number(i),
                    state.frame.visual_text(queries[static_cast<std::size_t>(i)].text), i);
      if (ImGui::Selectable(item, i == query)) context.selection.query = i, chosen = true;
      if (ImGui::IsItemHovered()) state.frame.hovered_next = {Side::Query, i};
      if (i == query) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return chosen;
}

namespace {

// A combo of `count` things numbered from 1: "3" shown, entries `item` ("head %d") for each.
bool draw_numbered_combo(const char* id, int count, int& value, const char* item_format) {
  char preview[16];
  std::snprintf(preview, sizeof preview, "%d", view::shown_number(value));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 3.2f);
  bool chosen = false;
  if (ImGui::BeginCombo(id, preview)) {
    for (int k = 0; k < count; ++k) {
      char item[32];
      std::snprintf(item, sizeof item, item_format, view::shown_number(k));
      if (ImGui::Selectable(item, k == value)) value = k, chosen = true;
      if (k == value) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return chosen;
}

}  // namespace

bool draw_head_combo(const char* id, int heads, int& head) {
  return draw_numbered_combo(id, heads, head, "head %d");
}

bool draw_layer_combo(const char* id, int layers, int& layer) {
  return draw_numbered_combo(id, layers, layer, "layer %d");
}

void draw_layer_selector(const AppState& state, PanelContext& context, const char* id) {
  const int layers = state.pipeline().layer_count();
  if (layers < 2) return;
  int layer = state.selection.layer;
  ImGui::TextUnformatted("layer");
  ImGui::SameLine();
  const std::string combo_id = std::string(id) + "_layer";
  if (draw_layer_combo(combo_id.c_str(), layers, layer)) context.selection.layer = layer;
  ImGui::SameLine();
}

void draw_head_selector(const AppState& state, PanelContext& context, const char* id) {
  draw_layer_selector(state, context, id);
  const int heads = static_cast<int>(state.result().heads.size());
  int head = state.selection.head;
  const float font = ImGui::GetFontSize();
  ImGui::TextUnformatted("head");
  ImGui::SameLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float swatch = font * 0.8f, frame = ImGui::GetFrameHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + (frame - swatch) * 0.5f),
                                            ImVec2(p.x + swatch, p.y + (frame + swatch) * 0.5f),
                                            head_colour(state.ui.theme, head), font * 0.15f);
  ImGui::Dummy(ImVec2(swatch, frame));
  ImGui::SameLine(0, font * 0.3f);
  if (draw_head_combo(id, heads, head)) context.selection.head = head;
}

bool fits_after_last_item(float width, float spacing) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  return ImGui::GetItemRectMax().x + spacing + width <= right;
}

bool fits_after_last_item(float width) {
  return fits_after_last_item(width, ImGui::GetStyle().ItemSpacing.x);
}

void continue_line_if_fits(float width, float spacing) {
  if (fits_after_last_item(width, spacing)) ImGui::SameLine(0, spacing);
}

void draw_stepper(const char* id, int& step, int count, const char* next_label, const char* unit) {
  ImGui::PushID(id);
  ImGui::BeginDisabled(step <= 0);
  if (ImGui::Button("|\xe2\x97\x80")) step = 0;
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("first %s", unit);
  ImGui::SameLine();
  if (ImGui::Button("\xe2\x97\x80 back")) --step;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(step + 1 >= count);
  if (ImGui::Button(next_label)) ++step;
  ImGui::SameLine();
  if (ImGui::Button("\xe2\x96\xb6|")) step = count - 1;
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("last %s", unit);
  ImGui::EndDisabled();
  ImGui::PopID();
  step = std::clamp(step, 0, std::max(0, count - 1));
}

void draw_no_room_note() {
  const ImVec2 available = ImGui::GetContentRegionAvail();
  if (available.x < ImGui::GetFontSize() * 2.0f || available.y < ImGui::GetTextLineHeight()) return;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + available.x);
  ImGui::TextDisabled("No room: enlarge the window or make the text smaller.");
  ImGui::PopTextWrapPos();
}

float row_label_size(float row_height) {
  return view::token_label_size(row_height, ImGui::GetFontSize());
}

std::string wrap_text_at_spaces(std::string_view text, float width) {
  const auto width_of = [](std::string_view part) {
    return ImGui::CalcTextSize(part.data(), part.data() + part.size()).x;
  };
  std::string wrapped;
  wrapped.reserve(text.size() + 16);
  for (const std::string_view line : view::wrap_at_spaces(text, width, width_of)) {
    wrapped.append(line.data(), line.size());
    wrapped += '\n';
  }
  if (!wrapped.empty()) wrapped.pop_back();
  return wrapped;
}

void draw_full_attention_note(const AppState& state, const char* value) {
  const bool cheaper = state.ui.center_view == view::ViewId::Cheaper;
  state.frame.values.set(value, cheaper ? 1 : 0);
  if (!cheaper) return;
  text_wrapped_at_spaces(
      "full attention, as computed: the Cheaper attention view shows the cheaper method's",
      ImGui::GetContentRegionAvail().x, true);
}

void text_wrapped_at_spaces(std::string_view text, float width, bool dimmed) {
  const std::string wrapped = wrap_text_at_spaces(text, width);
  if (dimmed)
    ImGui::TextDisabled("%s", wrapped.c_str());
  else
    ImGui::TextUnformatted(wrapped.c_str(), wrapped.c_str() + wrapped.size());
}

// Draws `text` turned a quarter turn anticlockwise (read bottom to top), its first character at
// the bottom: the glyphs of the horizontal text are laid out, then their vertices are turned
// about `bottom_left`. The text is cut to `max_length` pixels: it is laid out unclipped (the clip
// rectangle would cut the horizontal text before it is turned), and the turned glyphs are drawn
// clipped to the caller's clip rectangle (a scrolled window's).
void add_text_upwards(ImDrawList* list, ImVec2 bottom_left, ImU32 colour, const char* text,
                      float max_length) {
  ImFont* font = ImGui::GetFont();
  const float height = ImGui::GetFontSize();
  const char* end = nullptr;
  font->CalcTextSizeA(height, max_length, 0.0f, text, nullptr, &end);
  const ImVec2 clip_min = list->GetClipRectMin(), clip_max = list->GetClipRectMax();
  list->PushClipRectFullScreen();
  const int begin = list->VtxBuffer.Size;
  list->AddText(font, height, bottom_left, colour, text, end);
  for (int k = begin; k < list->VtxBuffer.Size; ++k) {
    ImVec2& p = list->VtxBuffer[k].pos;
    const float along = p.x - bottom_left.x, across = p.y - bottom_left.y;
    p = ImVec2(bottom_left.x + across, bottom_left.y + height - along);
  }
  list->CmdBuffer.back().ClipRect = ImVec4(clip_min.x, clip_min.y, clip_max.x, clip_max.y);
  list->PopClipRect();
}

void record_item_centre(const AppState& state, const std::string& key) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  state.frame.values.set(key + "_x", static_cast<double>((a.x + b.x) * 0.5f));
  state.frame.values.set(key + "_y", static_cast<double>((a.y + b.y) * 0.5f));
}

bool command_menu_item(CommandSource& commands, std::string_view id, const char* label) {
  const char* keys = commands.keys(id);
  if (!ImGui::MenuItem(label ? label : commands.label(id).c_str(), keys[0] ? keys : nullptr,
                       commands.checked(id), commands.enabled(id)))
    return false;
  commands.run(id);
  return true;
}

void draw_formula_tooltip(const char* heading, const char* formula) {
  const float width = ImGui::GetFontSize() * 36.0f;
  ImGui::BeginTooltip();
  text_wrapped_at_spaces(heading, width, true);
  text_wrapped_at_spaces(formula, width);
  ImGui::EndTooltip();
}

float widest_token(const AppState& state, const std::vector<Token>& tokens) {
  float widest = 0;
  for (const Token& token : tokens)
    widest = std::max(widest, ImGui::CalcTextSize(state.frame.visual_text(token.text)).x);
  return widest;
}

void add_vertical_text(ImDrawList* list, ImVec2 layout, ImVec2 anchor, ImU32 colour,
                       const char* text) {
  const int first = list->VtxBuffer.Size;
  const float width = ImGui::CalcTextSize(text).x;
  list->AddText(layout, colour, text);
  // Rotate the new vertices by -90° about the layout point and move it to the anchor:
  // (x, y) -> (anchor.x + (y - layout.y), anchor.y - (x - layout.x)); then shift so the text's
  // end sits at the anchor.
  for (int i = first; i < list->VtxBuffer.Size; ++i) {
    ImDrawVert& v = list->VtxBuffer[i];
    const float dx = v.pos.x - layout.x, dy = v.pos.y - layout.y;
    v.pos = ImVec2(anchor.x + dy, anchor.y - dx + width);
  }
}

void draw_colour_scale(ImDrawList* list, ImVec2 at, float bar_w, view::ColormapId colormap,
                       const char* top_text, ImU32 top_colour, ImU32 zero_colour) {
  const float font = ImGui::GetFontSize();
  const float y0 = at.y + font * 0.15f;
  list->AddText(ImVec2(at.x - font * 0.9f, at.y), zero_colour, "0");
  const int steps = 48;
  for (int i = 0; i < steps; ++i) {
    const float t0 = static_cast<float>(i) / steps, t1 = static_cast<float>(i + 1) / steps;
    list->AddRectFilled(ImVec2(at.x + bar_w * t0, y0),
                        ImVec2(at.x + bar_w * t1 + 0.5f, y0 + font * 0.8f),
                        to_imgui(view::sample(colormap, (t0 + t1) * 0.5f)));
  }
  list->AddText(ImVec2(at.x + bar_w + font * 0.3f, at.y), top_colour, top_text);
}

void draw_masked_cell(ImDrawList* list, ImVec2 p0, ImVec2 p1, Theme theme) {
  const view::MaskedLook look = view::masked_look(theme == Theme::Dark);
  list->AddRectFilled(p0, p1, to_imgui(look.base));
  const float w = p1.x - p0.x, h = p1.y - p0.y;
  if (w <= 0 || h <= 0) return;
  list->PushClipRect(p0, p1, true);
  // Lines from the top edge down to the left at 45°, every period along the diagonal, starting
  // where the shader's stripes would (x + y a multiple of the period).
  const float period = view::kMaskedStripePeriod;
  const float first = period - std::fmod(p0.x + p0.y, period);
  for (float d = first; d < w + h + period; d += period)
    list->AddLine(ImVec2(p0.x + d, p0.y), ImVec2(p0.x + d - h, p1.y), to_imgui(look.stripe),
                  view::kMaskedStripeWidth * 0.75f);
  list->PopClipRect();
}

void draw_cell_grid_lines(ImDrawList* list, const view::HeatmapGeometry& g, int rows, int cols,
                          ImU32 colour) {
  // Each way on its own: cells may be wide and thin (many queries, few keys), and lines between
  // rows a pixel tall would cover them. Only the lines inside the clip rectangle (a scrolled grid
  // is larger than what is seen of it).
  const ImVec2 clip_min = list->GetClipRectMin(), clip_max = list->GetClipRectMax();
  if (g.cell_w >= 8.0f)
    for (int j = 1; j < cols; ++j) {
      const float x = g.grid.x + g.cell_w * static_cast<float>(j);
      if (x < clip_min.x - 1.0f || x > clip_max.x + 1.0f) continue;
      list->AddLine(ImVec2(x, g.grid.y), ImVec2(x, g.grid.bottom()), colour);
    }
  if (g.cell_h >= 8.0f)
    for (int i = 1; i < rows; ++i) {
      const float y = g.grid.y + g.cell_h * static_cast<float>(i);
      if (y < clip_min.y - 1.0f || y > clip_max.y + 1.0f) continue;
      list->AddLine(ImVec2(g.grid.x, y), ImVec2(g.grid.right(), y), colour);
    }
}

std::string fit_text(std::string_view text, float width) {
  const auto width_of = [](std::string_view part) {
    return ImGui::CalcTextSize(part.data(), part.data() + part.size()).x;
  };
  if (width_of(text) <= width) return std::string(text);
  constexpr std::string_view kEllipsis = "\xe2\x80\xa6";
  const float room = width - width_of(kEllipsis);
  std::size_t fits = 0;  // bytes of the longest start that fits, at a character's end
  for (std::size_t end = 1; end <= text.size(); ++end) {
    if (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
      continue;  // inside a character
    if (width_of(text.substr(0, end)) > room) break;
    fits = end;
  }
  return std::string(text.substr(0, fits)) + std::string(kEllipsis);
}

std::string fit_label(const view::VisualText& shown, const std::string& text, float width) {
  const char* seen = shown(text);
  if (ImGui::CalcTextSize(seen).x <= width) return seen;
  const std::string fitted = fit_text(text, width);
  return shown(fitted);  // copied before `fitted` goes
}

void draw_mask_pattern_controls(const AppState& state, PanelContext& context) {
  const Scenario& s = state.document.scenario();
  static constexpr const char* kChoices[] = {"no pattern", "window", "dilated window", "blocks"};
  int choice =
      s.one_layer().mask_pattern ? 1 + static_cast<int>(s.one_layer().mask_pattern->kind) : 0;
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(font * 8.5f);
  const char* preview = !s.one_layer().mask_pattern && s.one_layer().mask.size() > 0
                            ? "custom mask"
                            : kChoices[choice];
  if (ImGui::BeginCombo("##mask pattern", preview)) {
    for (int k = 0; k < 4; ++k)
      if (ImGui::Selectable(kChoices[k],
                            k == choice && (k > 0 || s.one_layer().mask.size() == 0))) {
        if (k == 0) {
          context.edits.push(edits::set_mask_pattern(std::nullopt));
        } else {
          MaskPattern pattern = s.one_layer().mask_pattern.value_or(MaskPattern{});
          pattern.kind = static_cast<MaskPattern::Kind>(k - 1);
          context.edits.push(edits::set_mask_pattern(pattern));
        }
      }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Sparse attention: each query sees only some keys, fewer pairs to compute.\n"
        "window: the w keys around it; dilated: the same w keys d apart; blocks: its own\n"
        "block of b (Child et al., 2019; Longformer). Hidden cells are hatched in the views.");
  if (!s.one_layer().mask_pattern) {
    ImGui::SameLine();
    ImGui::TextUnformatted("mask");
    return;
  }
  MaskPattern pattern = *s.one_layer().mask_pattern;
  const auto number = [&](const char* id, const char* label, int& value, const char* tip) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 4.5f);
    int v = value;
    if (ImGui::InputInt(id, &v, 1, 1)) value = std::clamp(v, 1, Limits::kMaxTokens);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    ImGui::SameLine(0, font * 0.25f);
    ImGui::TextUnformatted(label);
  };
  if (pattern.kind == MaskPattern::Kind::Blocks) {
    number("##mask block", "b", pattern.block, "positions per block");
  } else {
    number("##mask width", "w", pattern.width, "keys each query sees, around its own position");
    if (pattern.kind == MaskPattern::Kind::Dilated)
      number("##mask dilation", "d", pattern.dilation, "positions between those keys");
  }
  if (!(pattern == *s.one_layer().mask_pattern))
    context.edits.push(edits::set_mask_pattern(pattern));
}

}  // namespace attnviz::app
