// Draws Dear ImGui's draw data with OpenGL 3.3, in place of the imgui_impl_opengl3 backend's
// RenderDrawData, and owns the font texture.
//
// The difference is for software GL (Mesa's llvmpipe: Xvfb, virtual machines, remote desktops),
// which pays per small triangle: each row of glyphs ImGui draws in one colour becomes a single
// quad from a cache of rasterized strings (render/text_cache.hpp), so the same pixels cost a
// fraction. Everything else is drawn as ImGui made it. Draw-list callbacks are honoured as by
// the backend: ImDrawCallback_ResetRenderState restores this renderer's state, and after any
// other callback the commands are drawn with whatever program and blending the callback set.
#pragma once

#include "app/raster/convex_bands.hpp"
#include "app/render/list_cache.hpp"
#include "app/render/text_cache.hpp"
#include "core/base/status.hpp"

#include <string>
#include <vector>

struct ImDrawData;
struct ImDrawList;
struct ImDrawVert;

namespace attnviz::render {

class UiRenderer {
 public:
  UiRenderer() = default;
  UiRenderer(const UiRenderer&) = delete;
  UiRenderer& operator=(const UiRenderer&) = delete;
  ~UiRenderer();

  // Builds the program and buffers (needs the GL context).
  Status init();
  // After ImGui's font atlas is built (or rebuilt): uploads it and makes it ImGui's font texture.
  Status load_font_atlas();
  // Draws into the bound framebuffer; the viewport covers DisplaySize * FramebufferScale.
  // `reuse_unchanged`: windows whose drawing did not change may be shown from pictures kept from
  // earlier frames (render/list_cache.hpp); off for a one-off render at another scale.
  void render(ImDrawData* draw_data, bool reuse_unchanged = true);
  // Off: every glyph drawn as ImGui made it (for comparing pictures and timings).
  void set_text_cache(bool on) {
    text_cache_on_ = on;
    list_cache_.clear();
  }
  // Off: every triangle drawn as ImGui made it, not reshaped for a software GL (for comparing).
  void set_reshape(bool on) {
    reshape_on_ = on;
    list_cache_.clear();
  }
  // Off: every window drawn every frame, none shown from a kept picture (for comparing).
  void set_list_cache(bool on) {
    list_cache_on_ = on;
    list_cache_.clear();
  }
  int lists_replayed() const { return list_cache_.replayed(); }  // in the last frame

 private:
  void set_up_state(const ImDrawData* draw_data, int framebuffer_width, int framebuffer_height);
  // The program that only samples its texture (kept pictures, pictures made on the CPU), its
  // projection the frame's.
  void use_picture_program(const ImDrawData* draw_data);
  // Draws the rewritten list's commands into the frame. A picture made on the CPU
  // (render/image_texture.hpp) is drawn by the program that only samples.
  void draw_commands(const ImDrawList* list, const ImDrawData* draw_data);
  // Shows the picture of the list the list cache was last asked about (its pieces), with this
  // renderer's state set up for the frame.
  void draw_picture(const ImDrawData* draw_data);
  // Rewrites one draw list into vertices_/indices_: text rows collapsed into cached strings.
  void rewrite(const ImDrawList* list, const ImDrawData* draw_data);
  // Reshapes the command's triangles from indices_[first] on for a software GL (see the .cpp):
  // solid convex fans cut into bands, every rectangle on an even triangle, an even count.
  void reshape_for_software_gl(unsigned first, const ImDrawData* draw_data);
  // The fan's triangles at indices_[first, end) as bands into reshaped_; false if it is not a
  // solid convex polygon worth it.
  bool split_fan(unsigned first, unsigned end, const ImDrawData* draw_data);
  void emit_triangle(unsigned a, unsigned b, unsigned c);
  void emit_rectangle(const unsigned* six);

  unsigned program_ = 0;
  int projection_ = -1, sampler_ = -1;
  unsigned picture_program_ = 0;
  int picture_projection_ = -1;
  unsigned vertex_array_ = 0, vertex_buffer_ = 0, index_buffer_ = 0;
  TextCache text_;
  bool text_cache_on_ = true;
  bool reshape_on_ = true;
  bool list_cache_on_ = true;
  ListCache list_cache_;
  std::vector<ListCache::Area>
      drawn_areas_;  // this frame's lists so far that changed (or cannot be kept)
  // Per draw list, reused every frame.
  std::vector<ImDrawVert> vertices_;
  std::vector<unsigned> indices_;
  struct Range {
    unsigned first, count;  // in indices_
  };
  std::vector<Range> ranges_;   // one per command
  std::vector<GlyphQuad> row_;  // the glyphs of the text row being collected
  // Scratch for reshape_for_software_gl().
  std::vector<unsigned> reshaped_;
  std::vector<view::Point> polygon_, band_points_;
  std::vector<unsigned> band_triangles_;
};

}  // namespace attnviz::render
