#include "app/panels/theme.hpp"

#include "core/figures/head_colours.hpp"

#include <algorithm>

namespace attnviz::app {

void apply_theme(Theme theme, float scale) {
  ImGuiStyle style;
  if (theme == Theme::Dark) {
    ImGui::StyleColorsDark(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.11f, 0.13f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0.13f, 0.13f, 0.15f, 1.0f);
  } else {
    ImGui::StyleColorsLight(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.96f, 1.0f);
    style.Colors[ImGuiCol_TitleBg] = ImVec4(0.88f, 0.89f, 0.91f, 1.0f);
    style.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.80f, 0.85f, 0.93f, 1.0f);
    style.Colors[ImGuiCol_FrameBg] = ImVec4(1.0f, 1.0f, 1.0f, 1.0f);
    style.Colors[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.22f);
    style.FrameBorderSize = 1.0f;  // white fields on a light background need an edge
  }
  style.Colors[ImGuiCol_PopupBg].w = 1.0f;  // menus and tooltips opaque: nothing shows through them
  style.WindowRounding = 4.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.WindowBorderSize = 1.0f;
  style.FramePadding = ImVec2(6, 3);
  style.ItemSpacing = ImVec2(8, 5);
  style.WindowPadding = ImVec2(10, 8);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

namespace {

constexpr ImU32 rgb(int r, int g, int b, int a = 255) {
  return IM_COL32(r, g, b, a);
}

const Palette kLight = {rgb(25, 25, 30),    rgb(110, 110, 120), rgb(255, 255, 255, 160),
                        rgb(230, 120, 0),   rgb(20, 90, 200),   rgb(225, 228, 236),
                        rgb(255, 214, 153), rgb(247, 247, 245)};
const Palette kDark = {rgb(235, 235, 240), rgb(150, 150, 160), rgb(0, 0, 0, 140), rgb(255, 170, 60),
                       rgb(110, 170, 255), rgb(52, 56, 66),    rgb(120, 90, 40),  rgb(28, 28, 33)};

}  // namespace

const Palette& palette(Theme theme) {
  return theme == Theme::Dark ? kDark : kLight;
}

ImU32 head_colour(Theme theme, int head, float alpha) {
  const view::Rgba8 c = view::head_colour(head, theme == Theme::Dark);
  return IM_COL32(c.r, c.g, c.b, static_cast<int>(std::clamp(alpha, 0.0f, 1.0f) * 255.0f + 0.5f));
}

}  // namespace attnviz::app
