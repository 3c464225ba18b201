// Windows whose drawing did not change, kept as pictures.
//
// When one weight moves, ImGui rebuilds every window's draw list, but much of the screen looks as
// it did (the sentence's tokens, the menu bar). A software GL (Mesa's llvmpipe: Xvfb, virtual
// machines, remote desktops) pays for every pixel of every window every frame. This keeps a
// window's pixels in a texture once its draw list has come out the same two frames running (a
// copy of its area of the frame it was drawn in), and while it stays the same the renderer puts
// them back (textured rectangles that llvmpipe copies a row at a time) instead of drawing it.
// Only the parts of the picture where the list draws something are put back (Picture::pieces):
// the rest is what lies under it (mostly the background the frame is cleared to), and a window's
// area is mostly that (the Weights window's frame surrounds its grids, which are windows of their
// own). Reading a picture costs a software GL more than clearing: pictures are read from memory
// once a frame, not cache.
//
// Only a list that draws nothing but ImGui's own geometry from the font texture, pictures made
// on the CPU (render/image_texture.hpp) and heatmaps (render/heatmap_renderer.hpp) is kept, and
// only while those pictures' pixels keep their version and the heatmaps their content, colormap
// and range: no other callbacks, no other textures, whose contents could change under an
// unchanged list. And only while what lies under it stays as it was: every list drawn earlier in
// the frame under it must be the same as in the last frame too.
#pragma once

#include "app/raster/tile_cover.hpp"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::render {

class ListCache {
 public:
  ListCache() = default;
  ListCache(const ListCache&) = delete;
  ListCache& operator=(const ListCache&) = delete;
  ~ListCache();

  // Framebuffer pixels, (0, 0) at the top left.
  struct Area {
    int x = 0, y = 0, width = 0, height = 0;
    bool empty() const { return width <= 0 || height <= 0; }
    bool overlaps(const Area& other) const;
    bool operator==(const Area&) const = default;
  };
  // Where a list draws, in framebuffer pixels on the screen: the bounding box of each command's
  // vertices within its clip rectangle (a callback's whole clip rectangle), all together.
  static Area area_of(const ImDrawList& list, const ImDrawData& draw_data, int framebuffer_width,
                      int framebuffer_height);

  enum class Use {
    Draw,    // draw the list as usual
    Record,  // draw it as usual, then keep its area of the frame as its picture (record())
    Replay,  // show the picture (picture()); the list need not be drawn
  };
  void begin_frame() { replayed_ = 0; }
  // Once per list, in drawing order. `under` is whether a list drawn earlier this frame lies in
  // `area` that was not the same as in the last frame (Use::Draw); `font_texture` the texture of
  // ImGui's geometry. The list it was asked about is the one record() and picture() act on.
  Use use(const ImDrawList& list, const ImDrawData& draw_data, const Area& area, bool under,
          ImTextureID font_texture);
  // For Record, once the list is drawn into `framebuffer` (the frame's, still bound, of
  // `framebuffer_height` pixels): copies the list's area of it into the list's picture: the list
  // drawn over the background the frame is cleared to and over what lies under it, which is the
  // same every frame the picture is shown (see use()). If the picture cannot be made, the list is
  // drawn every frame from then on.
  void record(unsigned framebuffer, int framebuffer_height);

  // The picture of the list use() was last asked about, to be shown (Replay); counted as shown
  // this frame.
  struct Picture {
    unsigned texture = 0;  // BGRA8, nearest filtering, clamped, row 0 at the top of the area
    Area area;             // where it goes in the frame
    const std::vector<view::PixelRect>* pieces =
        nullptr;  // the parts that are not all background, in the area's pixels
  };
  bool picture(Picture& picture);
  // Side of the square tiles pieces are made of: a tile is in a piece when a triangle that is not
  // wholly transparent may touch it (its bounding box within its clip rectangle).
  static constexpr int kTile = 16;
  // After the last list: forgets windows that were not drawn this frame.
  void end_frame();
  void clear();

  int replayed() const { return replayed_; }  // lists shown from pictures this frame

 private:
  struct Command {
    ImVec4 clip;
    ImTextureID texture;
    ImDrawCallback callback;
    void* callback_data;
    unsigned vertex_offset, index_offset, count;
    bool operator==(const Command& other) const;
  };
  struct Entry {
    std::string owner;
    std::vector<ImDrawVert> vertices;
    std::vector<ImDrawIdx> indices;
    std::vector<Command> commands;
    // What decides the pixels of its callbacks' quads: the versions of the pictures made on the
    // CPU it shows, and its heatmaps' content versions, colormaps and ranges.
    std::vector<std::uint64_t> callback_states;
    Area area;
    ImVec2 display_position, framebuffer_scale;
    ImVec4 background;
    bool picture_valid = false;  // the texture holds this list's pixels
    bool cannot_record = false;  // its framebuffer could not be made: always drawn
    bool seen = false;           // drawn this frame
    unsigned framebuffer = 0, texture = 0;
    int texture_width = 0, texture_height = 0;
    std::vector<view::PixelRect> pieces;  // the parts of the picture shown: where the list draws
  };
  void find_pieces(Entry& entry);
  Entry* find(const ImDrawList& list);  // adds an entry for a new owner; null for no owner
  static bool same(const Entry& entry, const ImDrawList& list);
  static void store(Entry& entry, const ImDrawList& list);
  static void release(Entry& entry);

  std::vector<Entry> entries_;
  std::vector<std::uint64_t> callback_states_;  // use()'s, for the list asked about
  std::size_t current_ = 0;  // the entry use() was last asked about (entries_.size(): none)
  int replayed_ = 0;
  view::TileCover cover_;  // find_pieces()'s working tiles
};

}  // namespace attnviz::render
