#include "app/render/image_texture.hpp"

#include "app/platform/gl.hpp"
#include "app/raster/canvas.hpp"
#include "app/render/gl_helpers.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdint>

namespace attnviz::render {

namespace {
constexpr std::size_t kComparedTexels =
    65536;                       // uploads up to this size are compared with the last
std::uint64_t last_version = 0;  // the last upload's, of any picture (the GL thread's)
}  // namespace

// Uploads pixels waiting for this drawing, and sets the blending: premultiplied colours (they are
// multiplied by their alpha already), or none for an opaque picture (it covers what is under it).
void ImageTexture::before_drawing(const ImDrawList*, const ImDrawCmd* command) {
  auto* texture = static_cast<ImageTexture*>(command->UserCallbackData);
  if (const view::Canvas* canvas = texture->pending_) {
    texture->pending_ = nullptr;
    constexpr std::uint32_t kClear = 0;  // no pixels (no memory for them): nothing shows
    if (const std::uint32_t* pixels = canvas->pixels())
      texture->upload(canvas->width(), canvas->height(), pixels);
    else
      texture->upload(1, 1, &kClear);
  }
  if (texture->alpha_ == Alpha::Opaque)
    glDisable(GL_BLEND);
  else
    glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

void ImageTexture::upload_when_drawn(const view::Canvas& canvas) {
  if (canvas.width() <= 0 || canvas.height() <= 0) {
    pending_ = nullptr;
    forget_pixels();
    return;
  }
  if (!texture_) texture_ = create_nearest_texture();  // the draw list needs its name now
  pending_ = &canvas;
}

ImageTexture::~ImageTexture() {
  if (texture_) glDeleteTextures(1, &texture_);
}

void ImageTexture::forget_pixels() {
  width_ = height_ = 0;
  uploaded_.clear();
  version_ = ++last_version;
}

bool ImageTexture::starts_picture(const ImDrawCmd& command) {
  return command.UserCallback == &before_drawing;
}

bool ImageTexture::version_of(const ImDrawCmd& command, unsigned& texture, std::uint64_t& version) {
  if (!starts_picture(command)) return false;
  const auto* image = static_cast<const ImageTexture*>(command.UserCallbackData);
  texture = image->texture_;
  version = image->version_;
  return image->pending_ == nullptr;
}

void ImageTexture::upload(int width, int height, const std::uint32_t* pixels) {
  if (width <= 0 || height <= 0) {
    forget_pixels();
    return;
  }
  const std::size_t count = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  if (width == width_ && height == height_ && uploaded_.size() == count &&
      std::equal(pixels, pixels + count, uploaded_.begin()))
    return;  // the texture holds these already
  if (count <= kComparedTexels)
    uploaded_.assign(pixels, pixels + count);
  else
    uploaded_.clear();
  version_ = ++last_version;
  // Nearest: exact at one texel per pixel, sharp cells when stretched, and cheaper for a software
  // GL.
  if (!texture_) texture_ = create_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, texture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (width != width_ || height != height_) {  // a new size: reallocate once, BGRA in memory
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, width, height, 0, platform::kTextureLayout,
                 GL_UNSIGNED_BYTE, nullptr);
    width_ = width;
    height_ = height;
  }
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
}

void ImageTexture::draw(ImDrawList* list, const ImVec2& p0, const ImVec2& p1) const {
  draw(list, p0, p1, ImVec2(0, 0), ImVec2(1, 1));
}

void ImageTexture::draw(ImDrawList* list, const ImVec2& p0, const ImVec2& p1, const ImVec2& uv0,
                        const ImVec2& uv1) const {
  if (empty()) return;
  list->AddCallback(&before_drawing, const_cast<ImageTexture*>(this));
  list->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(texture_)), p0, p1, uv0,
                 uv1);
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace attnviz::render
