#include "core/figures/colormap.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace attnviz::view {

TEST_CASE(
    "sequential and colour-blind-safe maps never get darker and always lighter over 4 steps") {
  // Neighbouring entries may round to the same 8-bit colour; lightness must never fall.
  for (ColormapId id : {ColormapId::Sequential, ColormapId::ColorBlindSafe}) {
    CAPTURE(to_string(id));
    const Colormap& map = colormap(id);
    for (int i = 1; i < kColormapSize; ++i)
      REQUIRE(relative_luminance(map[size_t(i)]) >= relative_luminance(map[size_t(i - 1)]));
    for (int i = 4; i < kColormapSize; ++i)
      REQUIRE(relative_luminance(map[size_t(i)]) > relative_luminance(map[size_t(i - 4)]));
  }
}

// A masked cell is hatched in two greys: neither may pass for a weight's colour, least of all the
// colour of a weight of 0 (the bottom entry), in either theme.
TEST_CASE("a masked cell's greys are neutral and unlike any weight's colour") {
  const auto distance = [](Rgba8 a, Rgba8 b) {
    return std::max({std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b)});
  };
  for (const bool dark : {false, true}) {
    CAPTURE(dark);
    const MaskedLook look = masked_look(dark);
    for (const Rgba8 grey : {look.base, look.stripe}) {
      CHECK(grey.r == grey.g);
      CHECK(grey.g == grey.b);
      for (ColormapId id : {ColormapId::Sequential, ColormapId::ColorBlindSafe}) {
        CHECK(distance(grey, colormap(id).front()) > 40);
        int nearest = 255;
        for (const Rgba8& entry : colormap(id)) nearest = std::min(nearest, distance(grey, entry));
        CHECK(nearest > 8);
      }
    }
    CHECK(distance(look.base, look.stripe) >= 40);
  }
}

TEST_CASE("sequential maps span dark to light") {
  for (ColormapId id : {ColormapId::Sequential, ColormapId::ColorBlindSafe}) {
    CHECK(relative_luminance(colormap(id).front()) < 0.06f);
    CHECK(relative_luminance(colormap(id).back()) > 0.7f);
  }
}

TEST_CASE("the colour-blind-safe map has no red-green component to lose") {
  // Along the blue-yellow axis, red and green rise together: green never falls below red by
  // much and blue falls as the map gets lighter.
  const Colormap& map = colormap(ColormapId::ColorBlindSafe);
  CHECK(map.front().b > map.front().r);
  CHECK(map.back().r > map.back().b);
  CHECK(map.back().g > map.back().b);
}

TEST_CASE("the diverging map is light at zero and dark at both ends with different hues") {
  const Rgba8 negative = sample_diverging(-1.0f, 1.0f), zero = sample_diverging(0.0f, 1.0f),
              positive = sample_diverging(1.0f, 1.0f);
  CHECK(relative_luminance(zero) > 0.85f);
  CHECK(relative_luminance(negative) < 0.35f);
  CHECK(relative_luminance(positive) < 0.35f);
  CHECK(negative.b > negative.r);  // blue below zero
  CHECK(positive.r > positive.b);  // red above
}

TEST_CASE(
    "the dark theme's diverging map is dark at zero and light at both ends with different hues") {
  const ColormapId dark = ColormapId::DivergingDark;
  const Rgba8 negative = sample_diverging(-1.0f, 1.0f, dark),
              zero = sample_diverging(0.0f, 1.0f, dark),
              positive = sample_diverging(1.0f, 1.0f, dark);
  const Rgba8 window{28, 28, 33, 255};  // the dark theme's window background (app/panels/theme.cpp)
  CHECK(relative_luminance(zero) < 0.06f);
  CHECK(relative_luminance(zero) > relative_luminance(window));  // a cell, not a hole
  CHECK(relative_luminance(negative) > 0.25f);
  CHECK(relative_luminance(positive) > 0.25f);
  CHECK(negative.b > negative.r);
  CHECK(positive.r > positive.b);
}

TEST_CASE("both diverging maps change lightness steadily away from zero on either side") {
  // The light map darkens away from zero, the dark map lightens: never back, by rounding at most.
  for (ColormapId id : {ColormapId::Diverging, ColormapId::DivergingDark}) {
    CAPTURE(to_string(id));
    const Colormap& map = colormap(id);
    const float sign = id == ColormapId::Diverging ? -1.0f : 1.0f;  // the direction lightness goes
    const int centre = kColormapSize / 2;
    for (int i = centre + 1; i < kColormapSize; ++i)
      REQUIRE(sign *
                  (relative_luminance(map[size_t(i)]) - relative_luminance(map[size_t(i - 1)])) >=
              -1e-3f);
    for (int i = centre - 2; i >= 0; --i)
      REQUIRE(sign *
                  (relative_luminance(map[size_t(i)]) - relative_luminance(map[size_t(i + 1)])) >=
              -1e-3f);
    CHECK(sign * (relative_luminance(map.back()) - relative_luminance(map[size_t(centre)])) > 0.1f);
    CHECK(sign * (relative_luminance(map.front()) - relative_luminance(map[size_t(centre)])) >
          0.1f);
  }
}

TEST_CASE("sample clamps and maps NaN to the first entry") {
  CHECK(sample(ColormapId::Sequential, -3.0f) == colormap(ColormapId::Sequential).front());
  CHECK(sample(ColormapId::Sequential, 7.0f) == colormap(ColormapId::Sequential).back());
  CHECK(colormap_index(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(colormap_index(0.5f) == 128);
}

TEST_CASE("text on a cell is black on light colours and white on dark ones") {
  CHECK(text_colour_on(Rgba8{250, 250, 240, 255}) == Rgba8{0, 0, 0, 255});
  CHECK(text_colour_on(Rgba8{30, 10, 60, 255}) == Rgba8{255, 255, 255, 255});
}

TEST_CASE("OKLab white and black convert to sRGB white and black") {
  Rgba8 white, black;
  CHECK(oklab_to_srgb(1.0f, 0.0f, 0.0f, white));
  CHECK(oklab_to_srgb(0.0f, 0.0f, 0.0f, black));
  CHECK(white == Rgba8{255, 255, 255, 255});
  CHECK(black == Rgba8{0, 0, 0, 255});
}

}  // namespace attnviz::view
