// The font texture, and text drawn as one quad per string instead of one per glyph.
//
// A software GL (Mesa's llvmpipe: Xvfb, virtual machines, remote desktops) pays for every small
// triangle, and text is much of what AttnViz draws (numbers in every cell). ImGui draws a string
// as a row of glyph quads of one colour; the renderer hands each such row to this cache, which
// rasterizes it once on the CPU (sampling the font atlas exactly as GL's bilinear filter would,
// at the same pixel positions) into the rows below the atlas in the same texture. The row is then
// drawn as one quad with the same colour, so the pixels are the same.
//
// The texture is white with the coverage as alpha, four bytes per texel: a software GL (llvmpipe)
// samples RGBA8 about a fifth faster than one byte per texel read through a swizzle, and text and
// every solid fill are sampled from it. (ImGui's own RGBA atlas is never built.)
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace attnviz::render {

struct GlyphQuad {
  float x0, y0, x1, y1;  // framebuffer pixels
  float u0, v0, u1, v1;  // in the font atlas
};

class TextCache {
 public:
  TextCache() = default;
  TextCache(const TextCache&) = delete;
  TextCache& operator=(const TextCache&) = delete;
  ~TextCache();

  // Uploads the font atlas (`alpha`: width x height coverage bytes, kept alive by ImGui) with room
  // for strings below it, and forgets every cached string. Returns the texture, or 0 on failure.
  unsigned load_atlas(const unsigned char* alpha, int width, int height);
  // Once per frame, before place(): starts over when the cache filled up in the last frame.
  void begin_frame();
  bool ready() const { return ready_; }
  unsigned texture() const { return texture_; }
  // The font atlas's v coordinates scaled into the texture.
  float atlas_v_scale() const {
    return static_cast<float>(atlas_height_) / static_cast<float>(texture_height_);
  }

  struct Placed {
    float x0, y0, x1, y1;  // framebuffer pixels: whole pixels around the glyphs
    float u0, v0, u1, v1;  // in the combined texture
  };
  // The string made of these glyphs (left to right, one colour), rasterized if new. False when
  // the cache has no room left this frame (then draw the glyphs as they are).
  bool place(const GlyphQuad* glyphs, int count, Placed& placed);

  int strings_cached() const { return static_cast<int>(slots_.size()); }

 private:
  struct Slot {
    int x, y, width, height;  // in the cache region, texels
  };
  bool allocate(int width, int height, Slot& slot);
  void rasterize(const GlyphQuad* glyphs, int count, float origin_x, float origin_y, int width,
                 int height);
  float sample(float u, float v) const;  // bilinear, as GL_LINEAR with texel centres at +0.5

  unsigned texture_ = 0;
  bool ready_ = false;  // the texture holds the current atlas
  const unsigned char* atlas_alpha_ = nullptr;
  int atlas_width_ = 0, atlas_height_ = 0, texture_height_ = 0;
  static constexpr int kCacheHeight = 1024;  // texel rows for strings below the atlas, at most
  int cache_height_ = 0;                     // ... as many as the GL allows
  // Shelf packing: strings fill rows left to right; a new shelf starts below the tallest.
  int shelf_x_ = 0, shelf_y_ = 0, shelf_height_ = 0;
  bool full_ = false;  // no room left: cleared at the next frame
  std::unordered_map<std::uint64_t, Slot> slots_;
  std::vector<float> coverage_;        // one string's coverage while rasterizing
  std::vector<std::uint32_t> texels_;  // ... and its texels
};

}  // namespace attnviz::render
