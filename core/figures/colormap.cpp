#include "core/figures/colormap.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::view {
namespace {

constexpr double kPi = 3.14159265358979323846;

// OKLab to linear sRGB (Björn Ottosson's published definition of OKLab).
void oklab_to_linear(double L, double a, double b, double rgb[3]) {
  const double l_ = L + 0.3963377774 * a + 0.2158037573 * b;
  const double m_ = L - 0.1055613458 * a - 0.0638541728 * b;
  const double s_ = L - 0.0894841775 * a - 1.2914855480 * b;
  const double l = l_ * l_ * l_, m = m_ * m_ * m_, s = s_ * s_ * s_;
  rgb[0] = +4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s;
  rgb[1] = -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s;
  rgb[2] = -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s;
}

double linear_to_srgb(double x) {
  return x <= 0.0031308 ? 12.92 * x : 1.055 * std::pow(x, 1.0 / 2.4) - 0.055;
}

bool in_gamut(double L, double a, double b) {
  double rgb[3];
  oklab_to_linear(L, a, b, rgb);
  for (double c : rgb)
    if (c < -1e-6 || c > 1.0 + 1e-6) return false;
  return true;
}

// OKLCh with the chroma reduced until the colour fits sRGB (hue and lightness kept).
Rgba8 from_lch(double L, double C, double hue_degrees) {
  const double h = hue_degrees * kPi / 180.0;
  double low = 0.0, high = C;
  if (!in_gamut(L, C * std::cos(h), C * std::sin(h))) {
    for (int i = 0; i < 30; ++i) {
      const double mid = 0.5 * (low + high);
      (in_gamut(L, mid * std::cos(h), mid * std::sin(h)) ? low : high) = mid;
    }
    C = low;
  }
  Rgba8 out;
  oklab_to_srgb(static_cast<float>(L), static_cast<float>(C * std::cos(h)),
                static_cast<float>(C * std::sin(h)), out);
  return out;
}

double mix(double a, double b, double t) {
  return a + (b - a) * t;
}

Colormap make_sequential() {
  Colormap map;
  for (int i = 0; i < kColormapSize; ++i) {
    const double t = i / double(kColormapSize - 1);
    const double L = mix(0.30, 0.93, t);
    const double hue = mix(295.0, 100.0, t);          // violet -> blue -> teal -> green -> yellow
    const double C = 0.13 + 0.05 * std::pow(t, 3.0);  // a little more colour at the bright end
    map[size_t(i)] = from_lch(L, C, hue);
  }
  return map;
}

Colormap make_color_blind_safe() {
  // A straight line in OKLab between a dark blue and a light yellow passes near grey.
  const double h0 = 255.0 * kPi / 180.0, h1 = 100.0 * kPi / 180.0;
  const double a0 = 0.10 * std::cos(h0), b0 = 0.10 * std::sin(h0);
  const double a1 = 0.13 * std::cos(h1), b1 = 0.13 * std::sin(h1);
  Colormap map;
  for (int i = 0; i < kColormapSize; ++i) {
    const double t = i / double(kColormapSize - 1);
    const double L = mix(0.28, 0.94, t), a = mix(a0, a1, t), b = mix(b0, b1, t);
    const double C = std::hypot(a, b), hue = std::atan2(b, a) * 180.0 / kPi;
    map[size_t(i)] = from_lch(L, C, hue);
  }
  return map;
}

// Blue below zero, red above: lightness goes from `zero_lightness` at 0 to `end_lightness` at
// ±1 and the colour grows from none to `end_chroma`.
Colormap make_diverging(double zero_lightness, double end_lightness, double end_chroma) {
  Colormap map;
  for (int i = 0; i < kColormapSize; ++i) {
    const double t = i / double(kColormapSize - 1) * 2.0 - 1.0;  // -1 .. 1
    const double u = std::abs(t);
    const double L = mix(zero_lightness, end_lightness, std::pow(u, 0.9));
    const double C = end_chroma * std::pow(u, 0.8);
    map[size_t(i)] = from_lch(L, C, t < 0 ? 255.0 : 25.0);
  }
  return map;
}

}  // namespace

std::string_view to_string(ColormapId id) {
  switch (id) {
    case ColormapId::Sequential:
      return "sequential";
    case ColormapId::ColorBlindSafe:
      return "color-blind safe";
    case ColormapId::Diverging:
      return "diverging";
    case ColormapId::DivergingDark:
      return "diverging (dark)";
  }
  return "?";
}

bool oklab_to_srgb(float L, float a, float b, Rgba8& out) {
  double rgb[3];
  oklab_to_linear(L, a, b, rgb);
  bool inside = true;
  std::uint8_t* channels[3] = {&out.r, &out.g, &out.b};
  for (int c = 0; c < 3; ++c) {
    if (rgb[c] < -1e-6 || rgb[c] > 1.0 + 1e-6) inside = false;
    const double encoded = linear_to_srgb(std::clamp(rgb[c], 0.0, 1.0));
    *channels[c] = static_cast<std::uint8_t>(std::lround(encoded * 255.0));
  }
  out.a = 255;
  return inside;
}

const Colormap& colormap(ColormapId id) {
  static const std::array<Colormap, kColormapCount> maps = {
      make_sequential(), make_color_blind_safe(), make_diverging(0.97, 0.52, 0.16),
      // The dark theme's window is at OKLab L 0.24: zero a step above it, the ends as light as
      // the light map's are dark, with a little more colour.
      make_diverging(0.32, 0.68, 0.17)};  // immutable tables
  return maps[static_cast<std::size_t>(id)];
}

int colormap_index(float t) {
  if (!(t >= 0.0f)) return 0;  // NaN and negatives
  return std::min(kColormapSize - 1, static_cast<int>(std::lround(t * (kColormapSize - 1))));
}

Rgba8 sample(ColormapId id, float t) {
  return colormap(id)[size_t(colormap_index(t))];
}

float contrast_scale_top(const Matrix& weights) {
  float top = 0.0f;
  for (Eigen::Index i = 0; i < weights.size(); ++i)
    if (std::isfinite(weights.data()[i])) top = std::max(top, weights.data()[i]);
  return top > 1e-6f ? top : 1.0f;
}

MaskedLook masked_look(bool dark) {
  // Light: lighter than every weight colour but the brightest, darker than the window (247).
  // Dark: between the window (28) and the sequential map's darkest entry, with light stripes.
  return dark ? MaskedLook{{58, 58, 58, 255}, {118, 118, 118, 255}}
              : MaskedLook{{226, 226, 226, 255}, {160, 160, 160, 255}};
}

Rgba8 sample_diverging(float value, float limit, ColormapId map) {
  const float t = limit > 0.0f ? 0.5f + 0.5f * std::clamp(value / limit, -1.0f, 1.0f) : 0.5f;
  return sample(map, t);
}

float relative_luminance(Rgba8 c) {
  const auto linear = [](std::uint8_t v) {
    const double x = v / 255.0;
    return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
  };
  return static_cast<float>(0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b));
}

Rgba8 text_colour_on(Rgba8 background) {
  // Pick the higher WCAG contrast: (L1 + 0.05) / (L2 + 0.05).
  const float lum = relative_luminance(background);
  const float with_black = (lum + 0.05f) / 0.05f;
  const float with_white = 1.05f / (lum + 0.05f);
  return with_black >= with_white ? Rgba8{0, 0, 0, 255} : Rgba8{255, 255, 255, 255};
}

}  // namespace attnviz::view
