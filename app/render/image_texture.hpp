// A picture made on the CPU (premultiplied RGBA8, e.g. view::Canvas) shown as one textured quad
// in an ImGui draw list. The texture is allocated once per size and refreshed with
// glTexSubImage2D; the quad is drawn with premultiplied-alpha blending, or with none for an
// opaque picture (a software GL then shades it for less), set by a draw-list callback, and
// ImGui's own state is restored after. The texture keeps its texels in BGRA order (the GL
// reorders them on upload), which Mesa's llvmpipe copies and blends without running a shader
// where nothing else is drawn, when the quad is drawn by a program that only samples it.
#pragma once

#include <cstdint>
#include <vector>

struct ImDrawCmd;
struct ImDrawList;
struct ImVec2;

namespace attnviz::view {
class Canvas;
}

namespace attnviz::render {

class ImageTexture {
 public:
  enum class Alpha { Premultiplied, Opaque };  // Opaque: every texel's alpha is 1
  ImageTexture() = default;
  explicit ImageTexture(Alpha alpha) : alpha_(alpha) {}
  ImageTexture(const ImageTexture&) = delete;
  ImageTexture& operator=(const ImageTexture&) = delete;
  ~ImageTexture();

  // `pixels`: width * height RGBA8 texels, rows top first, premultiplied alpha. The same pixels
  // as the last upload's (up to 65,536 of them) are not uploaded again.
  void upload(int width, int height, const std::uint32_t* pixels);
  // The canvas's pixels, uploaded just before the picture is next drawn (at the end of the frame:
  // the canvas may be drawing them on a thread of its own until then). The canvas must live
  // until then.
  void upload_when_drawn(const view::Canvas& canvas);
  // Draws the whole picture, or the part between texture coordinates uv0 and uv1, into [p0, p1]
  // (screen coordinates).
  void draw(ImDrawList* list, const ImVec2& p0, const ImVec2& p1) const;
  void draw(ImDrawList* list, const ImVec2& p0, const ImVec2& p1, const ImVec2& uv0,
            const ImVec2& uv1) const;
  bool empty() const { return texture_ == 0 || ((width_ == 0 || height_ == 0) && !pending_); }

  // For a draw-list command: whether it is the callback draw() adds before its quad, and if so
  // the texture that quad shows and the version of its pixels (no two uploads anywhere share
  // one). False as well while pixels wait to be uploaded: they are about to change.
  static bool version_of(const ImDrawCmd& command, unsigned& texture, std::uint64_t& version);
  // Whether the command is the callback draw() adds before its quad, whose colour is white: a
  // renderer may draw that quad with a program that only samples the texture.
  static bool starts_picture(const ImDrawCmd& command);

 private:
  static void before_drawing(const ImDrawList* list, const ImDrawCmd* command);  // the callback
  void forget_pixels();  // no picture now: a new version

  Alpha alpha_ = Alpha::Premultiplied;
  const view::Canvas* pending_ = nullptr;  // pixels to upload before the next drawing
  unsigned texture_ = 0;
  int width_ = 0, height_ = 0;
  std::uint64_t version_ = 0;
  // A small picture's last pixels: uploading the same ones again changes nothing (no upload, the
  // same version), so that a window showing it can be kept (render/list_cache.hpp).
  std::vector<std::uint32_t> uploaded_;
};

}  // namespace attnviz::render
