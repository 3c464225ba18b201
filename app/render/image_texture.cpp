#include "app/render/image_texture.hpp"

#include "app/platform/gl.hpp"
#include "app/render/gl_helpers.hpp"

#include <imgui.h>

#include <cstdint>

namespace attnviz::render {

namespace {

// The picture's colours are already multiplied by their alpha.
void use_premultiplied_blending(const ImDrawList*, const ImDrawCmd*) {
  glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

// The picture covers what is under it.
void use_no_blending(const ImDrawList*, const ImDrawCmd*) { glDisable(GL_BLEND); }

}  // namespace

ImageTexture::~ImageTexture() {
  if (texture_) glDeleteTextures(1, &texture_);
}

void ImageTexture::upload(int width, int height, const std::uint32_t* pixels) {
  if (width <= 0 || height <= 0) {
    width_ = height_ = 0;
    return;
  }
  // Nearest: exact at one texel per pixel, sharp cells when stretched, and cheaper for a software GL.
  if (!texture_) texture_ = create_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, texture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (width != width_ || height != height_) {  // a new size: reallocate once
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    width_ = width;
    height_ = height;
  } else {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  }
}

void ImageTexture::draw(ImDrawList* list, const ImVec2& p0, const ImVec2& p1) const {
  draw(list, p0, p1, ImVec2(0, 0), ImVec2(1, 1));
}

void ImageTexture::draw(ImDrawList* list, const ImVec2& p0, const ImVec2& p1, const ImVec2& uv0, const ImVec2& uv1) const {
  if (empty()) return;
  list->AddCallback(alpha_ == Alpha::Opaque ? &use_no_blending : &use_premultiplied_blending, nullptr);
  list->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(texture_)), p0, p1, uv0, uv1);
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace attnviz::render
