#include "app/render/text_cache.hpp"

#include "app/platform/gl.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnviz::render {

namespace {

// A texel of white at this coverage: R, G, B, A bytes in memory order.
constexpr std::uint32_t white_with_alpha(std::uint8_t alpha) {
  return 0x00FFFFFFu | static_cast<std::uint32_t>(alpha) << 24;
}

// FNV-1a over the bytes of a float sequence.
std::uint64_t hash_floats(std::uint64_t hash, const float* values, int count) {
  for (int i = 0; i < count; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &values[i], sizeof bits);
    for (int b = 0; b < 4; ++b) {
      hash ^= (bits >> (8 * b)) & 0xFFu;
      hash *= 0x100000001b3ull;
    }
  }
  return hash;
}

}  // namespace

TextCache::~TextCache() {
  if (texture_) glDeleteTextures(1, &texture_);
}

unsigned TextCache::load_atlas(const unsigned char* alpha, int width, int height) {
  ready_ = false;
  atlas_alpha_ = alpha;
  atlas_width_ = width;
  atlas_height_ = height;
  // The cache's rows below the atlas, as many as the GL's largest texture leaves room for (WebGL's
  // is often 8192: an atlas at twice the pixels, on a HiDPI screen, may leave fewer than
  // kCacheHeight, or none, and strings are then drawn glyph by glyph).
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
  cache_height_ = std::clamp(max_size - height, 0, kCacheHeight);
  texture_height_ = height + cache_height_;
  slots_.clear();
  shelf_x_ = shelf_y_ = shelf_height_ = 0;
  full_ = false;
  if (!alpha || width <= 0 || height <= 0) return 0;
  if (!texture_) {
    glGenTextures(1, &texture_);
    glBindTexture(GL_TEXTURE_2D, texture_);
    // As ImGui's atlas: bilinear (cached strings are sampled at texel centres, so exactly).
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  }
  glBindTexture(GL_TEXTURE_2D, texture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, texture_height_, 0, GL_RGBA, GL_UNSIGNED_BYTE,
               nullptr);
  std::vector<std::uint32_t> white(static_cast<std::size_t>(width) *
                                   static_cast<std::size_t>(height));
  for (std::size_t i = 0; i < white.size(); ++i) white[i] = white_with_alpha(alpha[i]);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, white.data());
  white.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(cache_height_),
               white_with_alpha(0));
  if (cache_height_ > 0)
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, height, width, cache_height_, GL_RGBA, GL_UNSIGNED_BYTE,
                    white.data());
  ready_ = glGetError() == GL_NO_ERROR;
  return ready_ ? texture_ : 0;
}

void TextCache::begin_frame() {
  if (!full_) return;
  slots_.clear();
  shelf_x_ = shelf_y_ = shelf_height_ = 0;
  full_ = false;
}

bool TextCache::allocate(int width, int height, Slot& slot) {
  if (width > atlas_width_ || height > cache_height_) return false;
  if (shelf_x_ + width > atlas_width_) {  // next shelf
    shelf_y_ += shelf_height_;
    shelf_x_ = 0;
    shelf_height_ = 0;
  }
  if (shelf_y_ + height > cache_height_) {
    full_ = true;
    return false;
  }
  slot = {shelf_x_, shelf_y_, width, height};
  shelf_x_ += width + 1;  // a texel of space: bilinear samples never reach a neighbour
  shelf_height_ = std::max(shelf_height_, height + 1);
  return true;
}

float TextCache::sample(float u, float v) const {
  const float x = u * static_cast<float>(atlas_width_) - 0.5f,
              y = v * static_cast<float>(atlas_height_) - 0.5f;
  const float fx = std::floor(x), fy = std::floor(y);
  const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
  const float tx = x - fx, ty = y - fy;
  const auto texel = [&](int xi, int yi) -> float {
    xi = std::clamp(xi, 0, atlas_width_ - 1);
    yi = std::clamp(yi, 0, atlas_height_ - 1);
    return atlas_alpha_[static_cast<std::size_t>(yi) * static_cast<std::size_t>(atlas_width_) +
                        static_cast<std::size_t>(xi)];
  };
  const float top = texel(x0, y0) + (texel(x0 + 1, y0) - texel(x0, y0)) * tx;
  const float bottom = texel(x0, y0 + 1) + (texel(x0 + 1, y0 + 1) - texel(x0, y0 + 1)) * tx;
  return (top + (bottom - top) * ty) * (1.0f / 255.0f);
}

// Each glyph covers the pixels whose centres lie in [x0, x1) x [y0, y1) (GL's fill rule for the
// two triangles of a quad), sampled where GL would interpolate the texture coordinates; glyphs
// that overlap are combined as blending one after the other in one colour would.
void TextCache::rasterize(const GlyphQuad* glyphs, int count, float origin_x, float origin_y,
                          int width, int height) {
  std::vector<float>& coverage = coverage_;
  coverage.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0.0f);
  for (int g = 0; g < count; ++g) {
    const GlyphQuad& q = glyphs[g];
    const int px0 = std::max(0, static_cast<int>(std::ceil(q.x0 - origin_x - 0.5f)));
    const int px1 = std::min(width, static_cast<int>(std::ceil(q.x1 - origin_x - 0.5f)));
    const int py0 = std::max(0, static_cast<int>(std::ceil(q.y0 - origin_y - 0.5f)));
    const int py1 = std::min(height, static_cast<int>(std::ceil(q.y1 - origin_y - 0.5f)));
    const float du = (q.u1 - q.u0) / (q.x1 - q.x0), dv = (q.v1 - q.v0) / (q.y1 - q.y0);
    for (int py = py0; py < py1; ++py) {
      const float v = q.v0 + (origin_y + static_cast<float>(py) + 0.5f - q.y0) * dv;
      float* row = &coverage[static_cast<std::size_t>(py) * static_cast<std::size_t>(width)];
      for (int px = px0; px < px1; ++px) {
        const float u = q.u0 + (origin_x + static_cast<float>(px) + 0.5f - q.x0) * du;
        const float a = sample(u, v);
        row[px] = a + row[px] * (1.0f - a);
      }
    }
  }
  texels_.resize(coverage.size());
  for (std::size_t i = 0; i < coverage.size(); ++i)
    texels_[i] = white_with_alpha(static_cast<std::uint8_t>(std::lround(coverage[i] * 255.0f)));
}

bool TextCache::place(const GlyphQuad* glyphs, int count, Placed& placed) {
  if (!ready_ || full_ || count <= 0) return false;
  float x0 = glyphs[0].x0, y0 = glyphs[0].y0, x1 = glyphs[0].x1, y1 = glyphs[0].y1;
  for (int g = 1; g < count; ++g) {
    x0 = std::min(x0, glyphs[g].x0);
    y0 = std::min(y0, glyphs[g].y0);
    x1 = std::max(x1, glyphs[g].x1);
    y1 = std::max(y1, glyphs[g].y1);
  }
  placed.x0 = std::floor(x0);
  placed.y0 = std::floor(y0);
  placed.x1 = std::ceil(x1);
  placed.y1 = std::ceil(y1);
  const int width = static_cast<int>(placed.x1 - placed.x0),
            height = static_cast<int>(placed.y1 - placed.y0);
  if (width <= 0 || height <= 0) return false;
  // The key: every glyph relative to the string's whole-pixel origin.
  std::uint64_t key = 0xcbf29ce484222325ull;
  for (int g = 0; g < count; ++g) {
    const GlyphQuad& q = glyphs[g];
    const float relative[8] = {q.x0 - placed.x0,
                               q.y0 - placed.y0,
                               q.x1 - placed.x0,
                               q.y1 - placed.y0,
                               q.u0,
                               q.v0,
                               q.u1,
                               q.v1};
    key = hash_floats(key, relative, 8);
  }
  auto found = slots_.find(key);
  if (found == slots_.end()) {
    Slot slot{};
    if (!allocate(width, height, slot)) return false;
    rasterize(glyphs, count, placed.x0, placed.y0, width, height);
    glBindTexture(GL_TEXTURE_2D, texture_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexSubImage2D(GL_TEXTURE_2D, 0, slot.x, atlas_height_ + slot.y, width, height, GL_RGBA,
                    GL_UNSIGNED_BYTE, texels_.data());
    found = slots_.emplace(key, slot).first;
  }
  const Slot& slot = found->second;
  const float texture_width = static_cast<float>(atlas_width_),
              texture_height = static_cast<float>(texture_height_);
  placed.u0 = static_cast<float>(slot.x) / texture_width;
  placed.u1 = static_cast<float>(slot.x + slot.width) / texture_width;
  placed.v0 = static_cast<float>(atlas_height_ + slot.y) / texture_height;
  placed.v1 = static_cast<float>(atlas_height_ + slot.y + slot.height) / texture_height;
  return true;
}

}  // namespace attnviz::render
