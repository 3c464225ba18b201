// The colour of each attention head (one per head, repeating past 8), for the light and the
// dark theme: distinguishable, and readable on both backgrounds. Pure data (no ImGui), shared by
// the app's views and the SVG export.
#pragma once

#include "core/figures/colormap.hpp"

#include <array>

namespace attnviz::view {

inline constexpr int kHeadColourCount = 8;

inline constexpr std::array<Rgba8, kHeadColourCount> kHeadColoursLight = {{{31, 119, 180, 255},
                                                                           {214, 39, 40, 255},
                                                                           {44, 160, 44, 255},
                                                                           {148, 103, 189, 255},
                                                                           {255, 127, 14, 255},
                                                                           {23, 190, 207, 255},
                                                                           {227, 119, 194, 255},
                                                                           {140, 86, 75, 255}}};

inline constexpr std::array<Rgba8, kHeadColourCount> kHeadColoursDark = {{{100, 170, 240, 255},
                                                                          {250, 110, 100, 255},
                                                                          {110, 210, 110, 255},
                                                                          {190, 150, 240, 255},
                                                                          {255, 170, 80, 255},
                                                                          {90, 220, 230, 255},
                                                                          {245, 150, 215, 255},
                                                                          {200, 150, 130, 255}}};

// The colour of `head` (>= 0) on a light or dark background.
constexpr Rgba8 head_colour(int head, bool dark) {
  const auto index =
      static_cast<std::size_t>((head % kHeadColourCount + kHeadColourCount) % kHeadColourCount);
  return dark ? kHeadColoursDark[index] : kHeadColoursLight[index];
}

}  // namespace attnviz::view
