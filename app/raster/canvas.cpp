#include "app/raster/canvas.hpp"

#include "core/base/threads.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <system_error>

namespace attnviz::view {

namespace {

constexpr std::uint32_t pack(Rgba8 c) {
  return static_cast<std::uint32_t>(c.r) | static_cast<std::uint32_t>(c.g) << 8 |
         static_cast<std::uint32_t>(c.b) << 16 | static_cast<std::uint32_t>(c.a) << 24;
}

// Ends of a line: an anti-aliased butt cap, or a hard cut where a curve's segments meet (so that
// the joint is covered once, not twice).
constexpr std::uint32_t kCapStart = 1, kCapEnd = 2;

// Coordinates this far outside any canvas (or not numbers) draw nothing, and never overflow a
// float-to-int conversion.
constexpr float kFar = 1e6f;

// A colour premultiplied by its alpha, at full coverage.
struct Paint {
  float red, green, blue, opacity;
};

// A straight-alpha colour (R in the lowest byte) with its alpha times `opacity_scale`.
Paint paint_of(std::uint32_t rgba, float opacity_scale) {
  const float opacity = opacity_scale * static_cast<float>(rgba >> 24) * (1.0f / 255.0f);
  return {static_cast<float>(rgba & 0xFFu) * (1.0f / 255.0f) * opacity,
          static_cast<float>((rgba >> 8) & 0xFFu) * (1.0f / 255.0f) * opacity,
          static_cast<float>((rgba >> 16) & 0xFFu) * (1.0f / 255.0f) * opacity, opacity};
}

// "Over" in premultiplied alpha, `coverage` of the way: dst = src + dst * (1 - src alpha).
inline void blend(float* pixel, const Paint& paint, float coverage) {
  const float keep = 1.0f - coverage * paint.opacity;
  pixel[0] = paint.red * coverage + pixel[0] * keep;
  pixel[1] = paint.green * coverage + pixel[1] * keep;
  pixel[2] = paint.blue * coverage + pixel[2] * keep;
  pixel[3] = paint.opacity * coverage + pixel[3] * keep;
}

}  // namespace

void Canvas::begin(int width, int height) {
  width_ = std::max(width, 0);
  height_ = std::max(height, 0);
  recording_.clear();
}

void Canvas::line(float x0, float y0, float x1, float y1, float thickness, Rgba8 colour) {
  if (colour.a == 0 || !(thickness > 0)) return;
  recording_.push_back(Line{x0, y0, x1, y1, thickness, pack(colour), kCapStart | kCapEnd});
}

void Canvas::curve(const float p0[2], const float p1[2], const float p2[2], const float p3[2],
                   float thickness, Rgba8 colour, int segments) {
  if (colour.a == 0 || !(thickness > 0)) return;
  segments = std::max(segments, 1);
  float previous[2] = {p0[0], p0[1]};
  for (int s = 1; s <= segments; ++s) {
    const float t = static_cast<float>(s) / static_cast<float>(segments), u = 1.0f - t;
    const float b0 = u * u * u, b1 = 3 * u * u * t, b2 = 3 * u * t * t, b3 = t * t * t;
    const float point[2] = {b0 * p0[0] + b1 * p1[0] + b2 * p2[0] + b3 * p3[0],
                            b0 * p0[1] + b1 * p1[1] + b2 * p2[1] + b3 * p3[1]};
    const std::uint32_t caps = (s == 1 ? kCapStart : 0) | (s == segments ? kCapEnd : 0);
    recording_.push_back(
        Line{previous[0], previous[1], point[0], point[1], thickness, pack(colour), caps});
    previous[0] = point[0];
    previous[1] = point[1];
  }
}

void Canvas::disc(float centre_x, float centre_y, float radius, Rgba8 colour) {
  if (colour.a == 0 || !(radius > 0)) return;
  recording_.push_back(Round{centre_x, centre_y, radius, 0.0f, pack(colour)});
}

void Canvas::ring(float centre_x, float centre_y, float radius, float thickness, Rgba8 colour) {
  if (colour.a == 0 || !(radius > 0) || !(thickness > 0)) return;
  recording_.push_back(Round{centre_x, centre_y, radius, thickness, pack(colour)});
}

Canvas::~Canvas() {
  wait();
}

void Canvas::wait() const {
  if (drawing_.valid()) drawing_.get();
}

const std::uint32_t* Canvas::pixels() const {
  wait();
  const std::size_t count = static_cast<std::size_t>(width()) * static_cast<std::size_t>(height());
  return pixels_.size() == count && count > 0 ? pixels_.data() : nullptr;
}

bool Canvas::end() {
  if (recording_ == drawn_ && width_ == drawn_width_ && height_ == drawn_height_) return false;
  wait();  // the last drawing reads drawn_
  drawn_.swap(recording_);
  drawn_width_ = width_;
  drawn_height_ = height_;
  try {
    drawing_ = std::async(kAsyncLaunch, [this] { draw(); });
  } catch (const std::system_error&) {  // no thread to be had: draw here
    draw();
  }
  return true;
}

void Canvas::draw() {
  const std::size_t count =
      static_cast<std::size_t>(drawn_width_) * static_cast<std::size_t>(drawn_height_);
  try {
    accumulated_.assign(count * 4, 0.0f);
    pixels_.resize(count);
  } catch (const std::bad_alloc&) {  // no memory for the image: no pixels, nothing drawn
    accumulated_ = {};
    pixels_ = {};
    return;
  }
  for (const Shape& shape : drawn_) std::visit([this](const auto& s) { rasterize(s); }, shape);
  for (std::size_t i = 0; i < count; ++i) {
    const float* p = &accumulated_[i * 4];
    const auto byte = [](float v) {
      return static_cast<std::uint32_t>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f);
    };
    pixels_[i] = byte(p[0]) | byte(p[1]) << 8 | byte(p[2]) << 16 | byte(p[3]) << 24;
  }
}

// Walks the line along its longer ("major") axis; in each column (or row) only the pixels within
// reach of the line are visited, each covered by how far its centre is from the line's core, and
// blended "over" in premultiplied alpha: dst = src + dst * (1 - src alpha).
void Canvas::rasterize(const Line& l) {
  const float dx = l.x1 - l.x0, dy = l.y1 - l.y0;
  const float length = std::sqrt(dx * dx + dy * dy);
  for (float coordinate : {l.x0, l.y0, l.x1, l.y1})
    if (!(std::abs(coordinate) < kFar)) return;
  if (!(length > 1e-3f) || !(l.thickness < kFar)) return;
  const bool x_major = std::abs(dx) >= std::abs(dy);
  // Unit vector along the line, split into its major and minor components.
  const float u_major = (x_major ? dx : dy) / length, u_minor = (x_major ? dy : dx) / length;
  const float width = std::max(l.thickness, 1.0f);  // thinner lines are 1 px wide and fainter
  const float half = width * 0.5f;
  const Paint paint = paint_of(l.rgba, std::min(l.thickness, 1.0f));
  const bool cap_start = (l.caps & kCapStart) != 0, cap_end = (l.caps & kCapEnd) != 0;

  const float origin_major = x_major ? l.x0 : l.y0, origin_minor = x_major ? l.y0 : l.x0;
  const float major0 = std::min(origin_major, x_major ? l.x1 : l.y1);
  const float major1 = std::max(origin_major, x_major ? l.x1 : l.y1);
  const int major_limit = x_major ? drawn_width_ : drawn_height_,
            minor_limit = x_major ? drawn_height_ : drawn_width_;
  // A thick line's corners reach past its ends by half its width times the sine of its angle.
  const float overhang = half * std::abs(u_minor) + 1.0f;
  const int first = std::max(0, static_cast<int>(std::floor(major0 - overhang)));
  const int last = std::min(major_limit - 1, static_cast<int>(std::ceil(major1 + overhang)));
  const float slope = u_minor / u_major;  // minor per major
  // Pixel centres closer to the centre line than half + 0.5 (across it) have some coverage; along
  // the minor axis that is this far from the centre.
  const float reach = (half + 0.5f) / std::abs(u_major);
  const float along_spread =
      reach * std::abs(u_minor) + 1.0f;  // how far along a column's pixels differ
  // Stride of one step along each axis in the pixel array.
  const std::size_t stride_major = x_major ? 4 : static_cast<std::size_t>(drawn_width_) * 4;
  const std::size_t stride_minor = x_major ? static_cast<std::size_t>(drawn_width_) * 4 : 4;
  for (int m = first; m <= last; ++m) {
    const float pm =
        static_cast<float>(m) + 0.5f - origin_major;  // from the start, along the major axis
    const float centre = origin_minor + pm * slope;
    const int lo = std::max(0, static_cast<int>(std::ceil(centre - reach - 0.5f)));
    const int hi = std::min(minor_limit - 1, static_cast<int>(std::floor(centre + reach - 0.5f)));
    if (hi < lo) continue;
    // The ends need the cap's coverage only in the columns near them.
    const float along_centre = pm * u_major + (centre - origin_minor) * u_minor;
    const bool near_an_end =
        along_centre - along_spread < 1.0f || along_centre + along_spread > length - 1.0f;
    float* pixel = accumulated_.data() + static_cast<std::size_t>(m) * stride_major +
                   static_cast<std::size_t>(lo) * stride_minor;
    // Signed distance across the line, stepping by -u_major per pixel along the column.
    float across = pm * u_minor - (static_cast<float>(lo) + 0.5f - origin_minor) * u_major;
    float along = pm * u_major + (static_cast<float>(lo) + 0.5f - origin_minor) * u_minor;
    for (int n = lo; n <= hi; ++n, pixel += stride_minor, across -= u_major, along += u_minor) {
      float coverage = std::min(half + 0.5f - std::abs(across), 1.0f);
      if (coverage <= 0.0f) continue;
      if (near_an_end) {
        const float start =
            cap_start ? std::clamp(along + 0.5f, 0.0f, 1.0f) : (along >= 0.0f ? 1.0f : 0.0f);
        const float end = cap_end ? std::clamp(length - along + 0.5f, 0.0f, 1.0f)
                                  : (along < length ? 1.0f : 0.0f);
        coverage *= std::min(start, end);
        if (coverage <= 0.0f) continue;
      }
      blend(pixel, paint, coverage);
    }
  }
}

// Coverage from the distance d of a pixel's centre to the shape's centre: a disc covers
// radius + 0.5 - d of it (1 inside, 0 a pixel out), a ring half + 0.5 - |d - radius|.
void Canvas::rasterize(const Round& r) {
  for (float value : {r.centre_x, r.centre_y, r.radius, r.thickness})
    if (!(std::abs(value) < kFar)) return;
  const bool is_ring = r.thickness > 0.0f;
  const float half =
      is_ring ? std::max(r.thickness, 1.0f) * 0.5f : 0.0f;  // thinner rings: 1 px, fainter
  const Paint paint = paint_of(r.rgba, is_ring ? std::min(r.thickness, 1.0f) : 1.0f);
  const float reach = r.radius + half + 0.5f;  // beyond this from the centre: no coverage
  const int x_first = std::max(0, static_cast<int>(std::floor(r.centre_x - reach)));
  const int x_last = std::min(drawn_width_ - 1, static_cast<int>(std::ceil(r.centre_x + reach)));
  const int y_first = std::max(0, static_cast<int>(std::floor(r.centre_y - reach)));
  const int y_last = std::min(drawn_height_ - 1, static_cast<int>(std::ceil(r.centre_y + reach)));
  for (int y = y_first; y <= y_last; ++y) {
    const float dy = static_cast<float>(y) + 0.5f - r.centre_y;
    float* pixel = accumulated_.data() +
                   (static_cast<std::size_t>(y) * static_cast<std::size_t>(drawn_width_) +
                    static_cast<std::size_t>(x_first)) *
                       4;
    for (int x = x_first; x <= x_last; ++x, pixel += 4) {
      const float dx = static_cast<float>(x) + 0.5f - r.centre_x;
      const float distance = std::sqrt(dx * dx + dy * dy);
      const float edge =
          is_ring ? half + 0.5f - std::abs(distance - r.radius) : r.radius + 0.5f - distance;
      const float coverage = std::min(edge, 1.0f);
      if (coverage > 0.0f) blend(pixel, paint, coverage);
    }
  }
}

}  // namespace attnviz::view
