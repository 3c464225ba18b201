#include "app/render/ui_renderer.hpp"

#include "app/platform/gl.hpp"
#include "app/render/gl_helpers.hpp"
#include "app/render/image_texture.hpp"
#include "app/render/shader_sources.hpp"

#include <imgui.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace attnviz::render {

namespace {

constexpr unsigned kPosition = 0, kUv = 1, kColour = 2;
constexpr int kMaxRowGlyphs = 64;

bool same(const ImVec2& a, const ImVec2& b) {
  return a.x == b.x && a.y == b.y;
}

// Whether the six indices at `index` draw ImGui's glyph quad: vertices a, a+1, a+2, a+3 as
// triangles (0 1 2) (0 2 3), an axis-aligned rectangle of one colour, textured left to right
// and top to bottom from somewhere other than the white texel.
bool glyph_quad(const ImDrawVert* vertices, const ImDrawIdx* index, const ImVec2& white) {
  const unsigned a = index[0];
  if (index[1] != a + 1 || index[2] != a + 2 || index[3] != a || index[4] != a + 2 ||
      index[5] != a + 3)
    return false;
  const ImDrawVert& top_left = vertices[a];
  const ImDrawVert& top_right = vertices[a + 1];
  const ImDrawVert& bottom_right = vertices[a + 2];
  const ImDrawVert& bottom_left = vertices[a + 3];
  return top_left.pos.y == top_right.pos.y && bottom_left.pos.y == bottom_right.pos.y &&
         top_left.pos.x == bottom_left.pos.x && top_right.pos.x == bottom_right.pos.x &&
         top_left.uv.y == top_right.uv.y && bottom_left.uv.y == bottom_right.uv.y &&
         top_left.uv.x == bottom_left.uv.x && top_right.uv.x == bottom_right.uv.x &&
         top_left.pos.x < top_right.pos.x && top_left.pos.y < bottom_left.pos.y &&
         top_left.uv.x < top_right.uv.x && top_left.uv.y < bottom_left.uv.y &&
         top_left.col == top_right.col && top_left.col == bottom_right.col &&
         top_left.col == bottom_left.col && !same(top_left.uv, white);
}

// Whether triangles (a b c) (d e f) are ImGui's quad: (0 1 2) (0 2 3) over an axis-aligned
// rectangle.
bool axis_aligned_quad(const ImDrawVert* vertices, const unsigned* index) {
  if (index[3] != index[0] || index[4] != index[2]) return false;
  const ImVec2 p0 = vertices[index[0]].pos, p1 = vertices[index[1]].pos;
  const ImVec2 p2 = vertices[index[2]].pos, p3 = vertices[index[5]].pos;
  const bool rows_first = p0.y == p1.y && p1.x == p2.x && p2.y == p3.y && p3.x == p0.x;
  const bool columns_first = p0.x == p1.x && p1.y == p2.y && p2.x == p3.x && p3.y == p0.y;
  return rows_first || columns_first;
}

}  // namespace

UiRenderer::~UiRenderer() {
  if (program_) glDeleteProgram(program_);
  if (picture_program_) glDeleteProgram(picture_program_);
  if (vertex_buffer_) glDeleteBuffers(1, &vertex_buffer_);
  if (index_buffer_) glDeleteBuffers(1, &index_buffer_);
  if (vertex_array_) glDeleteVertexArrays(1, &vertex_array_);
}

Status UiRenderer::init() {
  const Result<unsigned> program =
      link_program("UI", kUiVertexShader, kUiFragmentShader,
                   {{kPosition, "Position"}, {kUv, "UV"}, {kColour, "Color"}});
  if (!program) return program.status();
  program_ = *program;
  projection_ = glGetUniformLocation(program_, "ProjMtx");
  sampler_ = glGetUniformLocation(program_, "Texture");
  const Result<unsigned> picture_program =
      link_program("picture", kPictureVertexShader, kPictureFragmentShader,
                   {{kPosition, "Position"}, {kUv, "UV"}});
  if (!picture_program) return picture_program.status();
  picture_program_ = *picture_program;
  picture_projection_ = glGetUniformLocation(picture_program_, "ProjMtx");
  glUseProgram(picture_program_);
  glUniform1i(glGetUniformLocation(picture_program_, "Picture"), 0);  // unit 0 always
  glUseProgram(0);
  glGenVertexArrays(1, &vertex_array_);
  glGenBuffers(1, &vertex_buffer_);
  glGenBuffers(1, &index_buffer_);
  glBindVertexArray(vertex_array_);
  glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, index_buffer_);
  glEnableVertexAttribArray(kPosition);
  glEnableVertexAttribArray(kUv);
  glEnableVertexAttribArray(kColour);
  const auto at = [](std::size_t bytes) { return reinterpret_cast<const void*>(bytes); };
  glVertexAttribPointer(kPosition, 2, GL_FLOAT, GL_FALSE, sizeof(ImDrawVert),
                        at(offsetof(ImDrawVert, pos)));
  glVertexAttribPointer(kUv, 2, GL_FLOAT, GL_FALSE, sizeof(ImDrawVert),
                        at(offsetof(ImDrawVert, uv)));
  glVertexAttribPointer(kColour, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(ImDrawVert),
                        at(offsetof(ImDrawVert, col)));
  glBindVertexArray(0);
  return Status::success();
}

Status UiRenderer::load_font_atlas() {
  list_cache_.clear();  // the pictures were drawn with the old glyphs
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  unsigned char* alpha = nullptr;
  int width = 0, height = 0;
  atlas->GetTexDataAsAlpha8(&alpha, &width,
                            &height);  // builds the atlas if needed; ImGui keeps the bytes
  const unsigned texture = text_.load_atlas(alpha, width, height);
  if (!texture)
    return Status::error("cannot create the font texture (" + std::to_string(width) + "x" +
                         std::to_string(height) + ")");
  atlas->SetTexID(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(texture)));
  return Status::success();
}

void UiRenderer::set_up_state(const ImDrawData* draw_data, int framebuffer_width,
                              int framebuffer_height) {
  glEnable(GL_BLEND);
  glBlendEquation(GL_FUNC_ADD);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_STENCIL_TEST);
  glEnable(GL_SCISSOR_TEST);
#ifndef __EMSCRIPTEN__  // OpenGL ES has filled polygons only, and no glPolygonMode
  glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
#endif
  glViewport(0, 0, framebuffer_width, framebuffer_height);
  float projection[16];
  ui_projection(*draw_data, projection);
  glUseProgram(program_);
  glUniformMatrix4fv(projection_, 1, GL_FALSE, projection);
  glUniform1i(sampler_, 0);
  glActiveTexture(GL_TEXTURE0);
  glBindVertexArray(vertex_array_);
  glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
}

void UiRenderer::rewrite(const ImDrawList* list, const ImDrawData* draw_data) {
  vertices_.clear();
  indices_.clear();
  ranges_.clear();
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  const bool cache_text =
      text_cache_on_ && text_.ready();  // else glyph by glyph from the same texture
  const float v_scale = text_.atlas_v_scale();
  const ImVec2 origin = draw_data->DisplayPos, scale = draw_data->FramebufferScale;
  for (const ImDrawCmd& command : list->CmdBuffer) {
    const unsigned first = static_cast<unsigned>(indices_.size());
    if (command.UserCallback || command.ElemCount == 0) {
      ranges_.push_back({first, 0});
      continue;
    }
    const ImDrawVert* vertices = list->VtxBuffer.Data + command.VtxOffset;
    const ImDrawIdx* indices = list->IdxBuffer.Data + command.IdxOffset;
    // The command's vertices, copied; its indices, rebased onto the copy.
    unsigned low = UINT_MAX, high = 0;
    for (unsigned k = 0; k < command.ElemCount; ++k) {
      low = std::min<unsigned>(low, indices[k]);
      high = std::max<unsigned>(high, indices[k]);
    }
    const unsigned base = static_cast<unsigned>(vertices_.size());
    vertices_.insert(vertices_.end(), vertices + low, vertices + high + 1);
    const bool font_texture = text_.ready() && command.GetTexID() == atlas->TexID;
    if (!font_texture) {
      for (unsigned k = 0; k < command.ElemCount; ++k) indices_.push_back(base + indices[k] - low);
      reshape_for_software_gl(first, draw_data);
      ranges_.push_back({first, static_cast<unsigned>(indices_.size()) - first});
      continue;
    }
    for (unsigned v = base; v < vertices_.size(); ++v)
      vertices_[v].uv.y *= v_scale;  // the atlas's rows of the texture
    if (!cache_text) {
      for (unsigned k = 0; k < command.ElemCount; ++k) indices_.push_back(base + indices[k] - low);
      reshape_for_software_gl(first, draw_data);
      ranges_.push_back({first, static_cast<unsigned>(indices_.size()) - first});
      continue;
    }

    // Text rows: consecutive glyph quads of one colour, left to right on overlapping lines.
    row_.clear();
    ImU32 row_colour = 0;
    unsigned row_first_index = 0;  // where the row's quads start in `indices`
    const auto flush_row = [&](unsigned end_index) {
      TextCache::Placed placed{};
      if (row_.size() >= 2 && text_.place(row_.data(), static_cast<int>(row_.size()), placed)) {
        const auto at = static_cast<unsigned>(vertices_.size());
        const auto display = [&](float x, float y) {
          return ImVec2(x / scale.x + origin.x, y / scale.y + origin.y);
        };
        vertices_.push_back(
            {display(placed.x0, placed.y0), ImVec2(placed.u0, placed.v0), row_colour});
        vertices_.push_back(
            {display(placed.x1, placed.y0), ImVec2(placed.u1, placed.v0), row_colour});
        vertices_.push_back(
            {display(placed.x1, placed.y1), ImVec2(placed.u1, placed.v1), row_colour});
        vertices_.push_back(
            {display(placed.x0, placed.y1), ImVec2(placed.u0, placed.v1), row_colour});
        for (unsigned corner : {0u, 1u, 2u, 0u, 2u, 3u}) indices_.push_back(at + corner);
      } else {
        for (unsigned k = row_first_index; k < end_index; ++k)
          indices_.push_back(base + indices[k] - low);
      }
      row_.clear();
    };
    unsigned k = 0;
    while (k < command.ElemCount) {
      if (k + 6 <= command.ElemCount && glyph_quad(vertices, indices + k, atlas->TexUvWhitePixel)) {
        const ImDrawVert& top_left = vertices[indices[k]];
        const ImDrawVert& bottom_right = vertices[indices[k] + 2];
        const GlyphQuad glyph{(top_left.pos.x - origin.x) * scale.x,
                              (top_left.pos.y - origin.y) * scale.y,
                              (bottom_right.pos.x - origin.x) * scale.x,
                              (bottom_right.pos.y - origin.y) * scale.y,
                              top_left.uv.x,
                              top_left.uv.y,
                              bottom_right.uv.x,
                              bottom_right.uv.y};
        const bool continues = !row_.empty() && top_left.col == row_colour &&
                               row_.size() < kMaxRowGlyphs && glyph.x0 >= row_.back().x0 &&
                               glyph.y0 < row_.back().y1 && glyph.y1 > row_.back().y0 &&
                               glyph.x0 - row_.back().x1 < 2.0f * (glyph.y1 - glyph.y0);
        if (!continues) {
          flush_row(k);
          row_first_index = k;
          row_colour = top_left.col;
        }
        row_.push_back(glyph);
        k += 6;
        continue;
      }
      flush_row(k);
      const unsigned end = std::min(k + 3, command.ElemCount);
      for (; k < end; ++k) indices_.push_back(base + indices[k] - low);
      row_first_index = k;
    }
    flush_row(command.ElemCount);
    reshape_for_software_gl(first, draw_data);
    ranges_.push_back({first, static_cast<unsigned>(indices_.size()) - first});
  }
}

// Mesa's llvmpipe (the software GL of Xvfb, virtual machines and remote desktops) shades every
// 4x4 block of pixels a triangle touches, once per triangle. Two things make that cheaper here,
// and change no pixel:
//   - It draws two triangles that make an axis-aligned rectangle as one rectangle (no block along
//     the diagonal shaded twice, whole 64x64 tiles at once), but looks for them only in draws
//     whose index count is a multiple of six, pairing triangles 0-1, 2-3, ..., and only when the
//     window has no depth or stencil buffer. So a rectangle (ImGui's fills, images, strings,
//     glyphs) that would start on an odd triangle gets a zero-area triangle before it, and an odd
//     count one at the end; other GL drivers skip a zero-area triangle at once.
//   - ImGui fills a rounded rectangle, a circle or any convex shape as a fan of long slivers from
//     one corner, each touching a row of blocks across the shape. A solid fan (one colour, the
//     white texel) bigger than a few blocks is cut into horizontal bands instead, each mostly one
//     rectangle (view/convex_bands.hpp).
void UiRenderer::emit_triangle(unsigned a, unsigned b, unsigned c) {
  reshaped_.insert(reshaped_.end(), {a, b, c});
}

void UiRenderer::emit_rectangle(const unsigned* six) {
  if (reshaped_.size() % 6 != 0)
    reshaped_.insert(reshaped_.end(), {six[0], six[0], six[0]});  // zero area
  reshaped_.insert(reshaped_.end(), six, six + 6);
}

bool UiRenderer::split_fan(unsigned first, unsigned end, const ImDrawData* draw_data) {
  constexpr float kMinBlocks = 8;                      // smaller fans touch few blocks anyway
  const ImDrawVert apex = vertices_[indices_[first]];  // a copy: vertices_ grows below
  const ImVec2 origin = draw_data->DisplayPos, scale = draw_data->FramebufferScale;
  // The polygon: the apex, then each triangle's second corner and the last one's third.
  polygon_.clear();
  float x_min = apex.pos.x, x_max = x_min, y_min = apex.pos.y, y_max = y_min;
  const auto corner = [&](unsigned index) {
    const ImDrawVert& v = vertices_[index];
    if (v.col != apex.col || v.uv.x != apex.uv.x || v.uv.y != apex.uv.y) return false;  // not solid
    polygon_.push_back(
        {(v.pos.x - origin.x) * scale.x, (v.pos.y - origin.y) * scale.y});  // in framebuffer pixels
    x_min = std::min(x_min, v.pos.x), x_max = std::max(x_max, v.pos.x);
    y_min = std::min(y_min, v.pos.y), y_max = std::max(y_max, v.pos.y);
    return true;
  };
  if (!corner(indices_[first])) return false;
  for (unsigned k = first; k < end; k += 3)
    if (!corner(indices_[k + 1])) return false;
  if (!corner(indices_[end - 1])) return false;
  if ((x_max - x_min) * scale.x * (y_max - y_min) * scale.y < kMinBlocks * 16) return false;
  band_points_.clear();
  band_triangles_.clear();
  if (!view::split_convex_into_bands(polygon_.data(), static_cast<int>(polygon_.size()), 4.0f,
                                     band_points_, band_triangles_))
    return false;
  const auto base = static_cast<unsigned>(vertices_.size());
  for (const view::Point& p : band_points_)
    vertices_.push_back(
        {ImVec2(p.x / scale.x + origin.x, p.y / scale.y + origin.y), apex.uv, apex.col});
  for (unsigned& index : band_triangles_) index += base;
  const std::size_t count = band_triangles_.size();
  for (std::size_t t = 0; t < count;) {
    if (t + 6 <= count && axis_aligned_quad(vertices_.data(), &band_triangles_[t])) {
      emit_rectangle(&band_triangles_[t]);
      t += 6;
    } else {
      emit_triangle(band_triangles_[t], band_triangles_[t + 1], band_triangles_[t + 2]);
      t += 3;
    }
  }
  return true;
}

void UiRenderer::reshape_for_software_gl(unsigned first, const ImDrawData* draw_data) {
  const unsigned end = static_cast<unsigned>(indices_.size());
  if (!reshape_on_ || first >= end) return;
  reshaped_.clear();
  for (unsigned k = first; k < end;) {
    if (k + 6 <= end && axis_aligned_quad(vertices_.data(), &indices_[k])) {
      emit_rectangle(&indices_[k]);
      k += 6;
      continue;
    }
    // A fan: triangles (a b c) (a c d) (a d e) ... around one apex, all of one colour (an
    // anti-aliased fill's fringe follows its fan, starting from the same apex).
    const ImDrawVert& apex = vertices_[indices_[k]];
    const auto same_fill = [&](unsigned index) {
      const ImDrawVert& v = vertices_[index];
      return v.col == apex.col && v.uv.x == apex.uv.x && v.uv.y == apex.uv.y;
    };
    unsigned fan_end = k + 3;
    while (fan_end + 3 <= end && indices_[fan_end] == indices_[k] &&
           indices_[fan_end + 1] == indices_[fan_end - 1] && same_fill(indices_[fan_end + 2]))
      fan_end += 3;
    if (fan_end - k >= 9 && split_fan(k, fan_end, draw_data)) {
      k = fan_end;
      continue;
    }
    emit_triangle(indices_[k], indices_[k + 1], indices_[k + 2]);
    k += 3;
  }
  if (reshaped_.size() % 6 != 0)
    reshaped_.insert(reshaped_.end(), {indices_[first], indices_[first], indices_[first]});
  indices_.resize(first);
  indices_.insert(indices_.end(), reshaped_.begin(), reshaped_.end());
}

void UiRenderer::render(ImDrawData* draw_data, bool reuse_unchanged) {
  const int framebuffer_width =
      static_cast<int>(draw_data->DisplaySize.x * draw_data->FramebufferScale.x);
  const int framebuffer_height =
      static_cast<int>(draw_data->DisplaySize.y * draw_data->FramebufferScale.y);
  if (framebuffer_width <= 0 || framebuffer_height <= 0 || !program_) return;
  GLint target = 0;  // the framebuffer drawn into (the window's, or an offscreen one)
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &target);
  text_.begin_frame();
  const bool reuse = reuse_unchanged && list_cache_on_;
  if (reuse) list_cache_.begin_frame();
  set_up_state(draw_data, framebuffer_width, framebuffer_height);
  drawn_areas_.clear();
  for (int l = 0; l < draw_data->CmdListsCount; ++l) {
    const ImDrawList* list = draw_data->CmdLists[l];
    ListCache::Use use = ListCache::Use::Draw;
    ListCache::Area area;
    if (reuse) {
      area = ListCache::area_of(*list, *draw_data, framebuffer_width, framebuffer_height);
      // Under it: lists drawn this frame that differ from the last, or cannot be kept. A list
      // that is the same as in the last frame (kept or about to be) draws the same pixels.
      const bool under =
          std::any_of(drawn_areas_.begin(), drawn_areas_.end(),
                      [&](const ListCache::Area& drawn) { return drawn.overlaps(area); });
      use = list_cache_.use(*list, *draw_data, area, under, ImGui::GetIO().Fonts->TexID);
      if (use == ListCache::Use::Draw) drawn_areas_.push_back(area);
    }
    if (use == ListCache::Use::Replay) {
      draw_picture(draw_data);
      continue;
    }
    rewrite(list, draw_data);
    glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(vertices_.size() * sizeof(ImDrawVert)),
                 vertices_.data(), GL_STREAM_DRAW);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER,
                 static_cast<GLsizeiptr>(indices_.size() * sizeof(unsigned)), indices_.data(),
                 GL_STREAM_DRAW);
    draw_commands(list, draw_data);
    // Kept from now on: the list's area of the frame, copied as drawn.
    if (use == ListCache::Use::Record)
      list_cache_.record(static_cast<unsigned>(target), framebuffer_height);
  }
  if (reuse) list_cache_.end_frame();
  glBindVertexArray(0);
  glDisable(GL_SCISSOR_TEST);
}

void UiRenderer::draw_picture(const ImDrawData* draw_data) {
  ListCache::Picture picture;
  if (!list_cache_.picture(picture) || picture.pieces->empty()) return;
  // A rectangle per piece, from the same texels of the picture (its row 0 is the area's top row),
  // drawn without blending by a program that only samples: a copy, which llvmpipe makes as one
  // (a memory copy per row) where a 64x64 tile holds nothing else. Nearest filtering at texel
  // centres, so exactly.
  const ListCache::Area& area = picture.area;
  const ImVec2 origin = draw_data->DisplayPos, scale = draw_data->FramebufferScale;
  const float width = static_cast<float>(area.width), height = static_cast<float>(area.height);
  const ImU32 white = IM_COL32_WHITE;
  vertices_.clear();
  indices_.clear();
  for (const view::PixelRect& piece : *picture.pieces) {
    const float x0 = static_cast<float>(piece.x), x1 = static_cast<float>(piece.x + piece.width);
    const float y0 = static_cast<float>(piece.y), y1 = static_cast<float>(piece.y + piece.height);
    const auto corner = [&](float x, float y) {
      return ImDrawVert{ImVec2((static_cast<float>(area.x) + x) / scale.x + origin.x,
                               (static_cast<float>(area.y) + y) / scale.y + origin.y),
                        ImVec2(x / width, y / height), white};
    };
    const auto at = static_cast<unsigned>(vertices_.size());
    vertices_.insert(vertices_.end(),
                     {corner(x0, y0), corner(x1, y0), corner(x1, y1), corner(x0, y1)});
    for (unsigned k : {0u, 1u, 2u, 0u, 2u, 3u})
      indices_.push_back(at + k);  // a rectangle llvmpipe draws as one
  }
  glBindBuffer(GL_ARRAY_BUFFER, vertex_buffer_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(vertices_.size() * sizeof(ImDrawVert)),
               vertices_.data(), GL_STREAM_DRAW);
  glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(indices_.size() * sizeof(unsigned)),
               indices_.data(), GL_STREAM_DRAW);
  const int framebuffer_height = static_cast<int>(draw_data->DisplaySize.y * scale.y);
  glScissor(area.x, framebuffer_height - area.y - area.height, area.width, area.height);
  glDisable(GL_BLEND);
  use_picture_program(draw_data);
  glBindTexture(GL_TEXTURE_2D, picture.texture);
  glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(indices_.size()), GL_UNSIGNED_INT, nullptr);
  glUseProgram(program_);
  glEnable(GL_BLEND);
}

void UiRenderer::use_picture_program(const ImDrawData* draw_data) {
  float projection[16];
  ui_projection(*draw_data, projection);
  glUseProgram(picture_program_);
  glUniformMatrix4fv(picture_projection_, 1, GL_FALSE, projection);
}

void UiRenderer::draw_commands(const ImDrawList* list, const ImDrawData* draw_data) {
  const int framebuffer_width =
      static_cast<int>(draw_data->DisplaySize.x * draw_data->FramebufferScale.x);
  const int framebuffer_height =
      static_cast<int>(draw_data->DisplaySize.y * draw_data->FramebufferScale.y);
  const ImVec2 clip_origin = draw_data->DisplayPos, clip_scale = draw_data->FramebufferScale;
  for (int c = 0; c < list->CmdBuffer.Size; ++c) {
    const ImDrawCmd& command = list->CmdBuffer[c];
    if (command.UserCallback) {
      if (command.UserCallback == ImDrawCallback_ResetRenderState) {
        set_up_state(draw_data, framebuffer_width, framebuffer_height);
      } else {
        command.UserCallback(list, &command);
        if (ImageTexture::starts_picture(command)) use_picture_program(draw_data);
      }
      continue;
    }
    const Range range = ranges_[static_cast<std::size_t>(c)];
    if (range.count == 0) continue;
    // The clip rectangle in the frame's pixels (GL's y runs upwards), rounded as always.
    const float x0 = (command.ClipRect.x - clip_origin.x) * clip_scale.x;
    const float y0 = (command.ClipRect.y - clip_origin.y) * clip_scale.y;
    const float x1 = (command.ClipRect.z - clip_origin.x) * clip_scale.x;
    const float y1 = (command.ClipRect.w - clip_origin.y) * clip_scale.y;
    if (x1 <= x0 || y1 <= y0) continue;
    glScissor(static_cast<int>(x0), static_cast<int>(static_cast<float>(framebuffer_height) - y1),
              static_cast<int>(x1 - x0), static_cast<int>(y1 - y0));
    glBindTexture(GL_TEXTURE_2D,
                  static_cast<GLuint>(reinterpret_cast<std::intptr_t>(command.GetTexID())));
    glDrawElements(
        GL_TRIANGLES, static_cast<GLsizei>(range.count), GL_UNSIGNED_INT,
        reinterpret_cast<const void*>(static_cast<std::size_t>(range.first) * sizeof(unsigned)));
  }
}

}  // namespace attnviz::render
