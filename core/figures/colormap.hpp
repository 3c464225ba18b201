// Colormaps, generated in the OKLab colour space (a space in which equal steps look like equal
// changes), so that no table is copied from elsewhere:
//   - Sequential: lightness rises linearly from dark violet through teal to light yellow; a
//     perceptually uniform map for weights in [0, 1].
//   - ColorBlindSafe: a straight line in OKLab from dark blue through grey to yellow: it varies
//     only along the blue-yellow axis that red-green colour blindness keeps.
//   - Diverging: blue for negative, near-white for zero, red for positive (weights, embeddings).
//   - DivergingDark: the same hues for the dark theme: a dark grey at zero, blue and red growing
//     lighter and more coloured away from it, so that zeros sit quietly on a dark window
//     instead of glaring white.
#pragma once

#include "core/base/types.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace attnviz::view {

struct Rgba8 {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  bool operator==(const Rgba8&) const = default;
};

enum class ColormapId { Sequential = 0, ColorBlindSafe = 1, Diverging = 2, DivergingDark = 3 };
inline constexpr int kColormapCount = 4;
inline constexpr int kColormapSize = 256;
std::string_view to_string(ColormapId id);

using Colormap = std::array<Rgba8, kColormapSize>;

// The colormap's 256 entries (computed once and cached).
const Colormap& colormap(ColormapId id);

// The entry for t in [0, 1] (clamped; NaN gives entry 0), as the shader picks it.
Rgba8 sample(ColormapId id, float t);
// The index the shader samples for t: round(t * 255).
int colormap_index(float t);

// The top of a weights heatmap's contrast scale (0 .. the largest weight, instead of 0 .. 1):
// the largest finite weight, or 1 when every weight is 0 (every key masked) or none is finite.
float contrast_scale_top(const Matrix& weights);

// For a value in [-limit, limit] on a diverging map (Diverging or DivergingDark).
Rgba8 sample_diverging(float value, float limit, ColormapId map = ColormapId::Diverging);

// A masked cell (a key the mask hides from a query) holds no weight, so no colormap colour: it is
// drawn hatched, diagonal stripes of `stripe` kMaskedStripeWidth pixels wide every
// kMaskedStripePeriod pixels on `base`: two neutral greys per theme, never "0.00" in the colour of
// a weight of 0.
struct MaskedLook {
  Rgba8 base, stripe;
};
MaskedLook masked_look(bool dark);
inline constexpr float kMaskedStripePeriod = 6.0f;
inline constexpr float kMaskedStripeWidth = 2.0f;

// Black or white, whichever reads better on the background.
Rgba8 text_colour_on(Rgba8 background);

// Relative luminance (WCAG) in [0, 1].
float relative_luminance(Rgba8 colour);

// OKLab -> sRGB; false when the colour is outside the sRGB gamut (then clamped).
bool oklab_to_srgb(float L, float a, float b, Rgba8& out);

}  // namespace attnviz::view
