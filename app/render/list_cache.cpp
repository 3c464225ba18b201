#include "app/render/list_cache.hpp"

#include "app/platform/gl.hpp"
#include "app/render/gl_helpers.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/render/image_texture.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnviz::render {

namespace {

bool equal(const ImVec4& a, const ImVec4& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}

// The list's owner: a window's name, or null for lists that belong to no window.
const char* owner_of(const ImDrawList& list) {
  return list._OwnerName;
}

}  // namespace

ListCache::~ListCache() {
  clear();
}

bool ListCache::Area::overlaps(const Area& other) const {
  return !empty() && !other.empty() && x < other.x + other.width && other.x < x + width &&
         y < other.y + other.height && other.y < y + height;
}

ListCache::Area ListCache::area_of(const ImDrawList& list, const ImDrawData& draw_data,
                                   int framebuffer_width, int framebuffer_height) {
  // The bounding box of what each command draws, within its clip rectangle (a window's first
  // command clips to the whole screen, though it draws only the window's frame).
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool any = false;
  for (const ImDrawCmd& command : list.CmdBuffer) {
    if (command.UserCallback) {  // a callback may draw anywhere in its clip rectangle
      if (command.UserCallback == ImDrawCallback_ResetRenderState) continue;
      x0 = any ? std::min(x0, command.ClipRect.x) : command.ClipRect.x;
      y0 = any ? std::min(y0, command.ClipRect.y) : command.ClipRect.y;
      x1 = any ? std::max(x1, command.ClipRect.z) : command.ClipRect.z;
      y1 = any ? std::max(y1, command.ClipRect.w) : command.ClipRect.w;
      any = true;
      continue;
    }
    if (command.ElemCount == 0) continue;
    const ImDrawIdx* indices = list.IdxBuffer.Data + command.IdxOffset;
    const ImDrawVert* vertices = list.VtxBuffer.Data + command.VtxOffset;
    ImVec2 low = vertices[indices[0]].pos, high = low;
    for (unsigned k = 1; k < command.ElemCount; ++k) {
      const ImVec2 p = vertices[indices[k]].pos;
      low.x = std::min(low.x, p.x), low.y = std::min(low.y, p.y);
      high.x = std::max(high.x, p.x), high.y = std::max(high.y, p.y);
    }
    low.x = std::max(low.x, command.ClipRect.x), low.y = std::max(low.y, command.ClipRect.y);
    high.x = std::min(high.x, command.ClipRect.z), high.y = std::min(high.y, command.ClipRect.w);
    if (high.x <= low.x || high.y <= low.y) continue;
    x0 = any ? std::min(x0, low.x) : low.x;
    y0 = any ? std::min(y0, low.y) : low.y;
    x1 = any ? std::max(x1, high.x) : high.x;
    y1 = any ? std::max(y1, high.y) : high.y;
    any = true;
  }
  if (!any) return {};
  const ImVec2 origin = draw_data.DisplayPos, scale = draw_data.FramebufferScale;
  const float width = static_cast<float>(framebuffer_width),
              height = static_cast<float>(framebuffer_height);
  const auto pixel = [](float v, float high) {
    return static_cast<int>(std::clamp(v, 0.0f, high));
  };
  Area area;
  area.x = pixel(std::floor((x0 - origin.x) * scale.x), width);
  area.y = pixel(std::floor((y0 - origin.y) * scale.y), height);
  area.width = pixel(std::ceil((x1 - origin.x) * scale.x), width) - area.x;
  area.height = pixel(std::ceil((y1 - origin.y) * scale.y), height) - area.y;
  return area;
}

bool ListCache::Command::operator==(const Command& other) const {
  return equal(clip, other.clip) && texture == other.texture && callback == other.callback &&
         callback_data == other.callback_data && vertex_offset == other.vertex_offset &&
         index_offset == other.index_offset && count == other.count;
}

ListCache::Entry* ListCache::find(const ImDrawList& list) {
  const char* owner = owner_of(list);
  if (!owner) return nullptr;
  for (Entry& entry : entries_)
    if (!entry.seen && entry.owner == owner) return &entry;
  Entry& added = entries_.emplace_back();
  added.owner = owner;
  return &added;
}

bool ListCache::same(const Entry& entry, const ImDrawList& list) {
  const auto bytes_equal = [](const auto& stored, const auto& current) {
    return stored.size() == static_cast<std::size_t>(current.Size) &&
           (stored.empty() ||
            std::memcmp(stored.data(), current.Data, stored.size() * sizeof(stored[0])) == 0);
  };
  if (!bytes_equal(entry.vertices, list.VtxBuffer) || !bytes_equal(entry.indices, list.IdxBuffer))
    return false;
  if (entry.commands.size() != static_cast<std::size_t>(list.CmdBuffer.Size)) return false;
  for (int c = 0; c < list.CmdBuffer.Size; ++c) {
    const ImDrawCmd& command = list.CmdBuffer[c];
    const Command current{command.ClipRect,         command.GetTexID(), command.UserCallback,
                          command.UserCallbackData, command.VtxOffset,  command.IdxOffset,
                          command.ElemCount};
    if (!(entry.commands[static_cast<std::size_t>(c)] == current)) return false;
  }
  return true;
}

void ListCache::store(Entry& entry, const ImDrawList& list) {
  entry.vertices.assign(list.VtxBuffer.begin(), list.VtxBuffer.end());
  entry.indices.assign(list.IdxBuffer.begin(), list.IdxBuffer.end());
  entry.commands.clear();
  for (const ImDrawCmd& command : list.CmdBuffer)
    entry.commands.push_back({command.ClipRect, command.GetTexID(), command.UserCallback,
                              command.UserCallbackData, command.VtxOffset, command.IdxOffset,
                              command.ElemCount});
}

ListCache::Use ListCache::use(const ImDrawList& list, const ImDrawData& draw_data, const Area& area,
                              bool under, ImTextureID font_texture) {
  Entry* entry = find(list);
  current_ = entry ? static_cast<std::size_t>(entry - entries_.data()) : entries_.size();
  if (!entry) return Use::Draw;
  entry->seen = true;
  bool keepable = !under && !area.empty() && !entry->cannot_record;
  // Textures: the font's, pictures made on the CPU (ImageTexture) whose pixels are versioned, and
  // heatmaps, whose content is.
  callback_states_.clear();
  unsigned callback_texture = 0;  // the texture of the last such callback: its quad follows
  for (int c = 0; c < list.CmdBuffer.Size && keepable; ++c) {
    const ImDrawCmd& command = list.CmdBuffer[c];
    if (command.UserCallback == ImDrawCallback_ResetRenderState) continue;
    if (command.UserCallback) {
      std::uint64_t version = 0;
      std::array<std::uint64_t, 3> heatmap{};
      if (ImageTexture::version_of(command, callback_texture, version)) {
        callback_states_.push_back(version);
      } else if (HeatmapRenderer::state_of(command, callback_texture, heatmap)) {
        callback_states_.insert(callback_states_.end(), heatmap.begin(), heatmap.end());
      } else {
        keepable = false;
      }
      continue;
    }
    const ImTextureID texture = command.GetTexID();
    keepable =
        texture == font_texture ||
        (callback_texture != 0 &&
         texture == reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(callback_texture)));
  }
  if (!keepable) {
    entry->picture_valid = false;
    entry->vertices.clear();
    entry->indices.clear();
    entry->commands.clear();
    entry->callback_states.clear();
    return Use::Draw;
  }
  const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  const ImVec2 position = draw_data.DisplayPos, scale = draw_data.FramebufferScale;
  const bool unchanged =
      same(*entry, list) && entry->callback_states == callback_states_ && entry->area == area &&
      entry->display_position.x == position.x && entry->display_position.y == position.y &&
      entry->framebuffer_scale.x == scale.x && entry->framebuffer_scale.y == scale.y &&
      equal(entry->background, background);
  if (!unchanged) {
    store(*entry, list);
    entry->callback_states = callback_states_;
    entry->area = area;
    entry->display_position = position;
    entry->framebuffer_scale = scale;
    entry->background = background;
    entry->picture_valid = false;
    return Use::Draw;
  }
  return entry->picture_valid ? Use::Replay : Use::Record;
}

void ListCache::record(unsigned framebuffer, int framebuffer_height) {
  if (current_ >= entries_.size()) return;
  Entry* entry = &entries_[current_];
  const Area& area = entry->area;
  if (!entry->framebuffer) glGenFramebuffers(1, &entry->framebuffer);
  if (!entry->texture) entry->texture = create_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, entry->texture);
  if (entry->texture_width != area.width || entry->texture_height != area.height) {
    // BGRA in memory (an unsized format given BGRA texels): llvmpipe copies such a texture into
    // the frame a row at a time, without running a shader.
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, area.width, area.height, 0, platform::kTextureLayout,
                 GL_UNSIGNED_BYTE, nullptr);
    entry->texture_width = area.width;
    entry->texture_height = area.height;
  }
  glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, entry->framebuffer);
  glFramebufferTexture2D(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, entry->texture,
                         0);
  const bool complete = glCheckFramebufferStatus(GL_DRAW_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  if (complete) {
    // The area's rows bottom up in the frame (GL's y runs upwards), top down into the picture.
    const int bottom = framebuffer_height - area.y - area.height;
    glDisable(GL_SCISSOR_TEST);
    glBlitFramebuffer(area.x, bottom, area.x + area.width, bottom + area.height, 0, area.height,
                      area.width, 0, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glEnable(GL_SCISSOR_TEST);
  }
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, framebuffer);
  if (!complete) {
    release(*entry);
    entry->cannot_record = true;
    return;
  }
  find_pieces(*entry);
  entry->picture_valid = true;
}

bool ListCache::picture(Picture& picture) {
  if (current_ >= entries_.size() || !entries_[current_].picture_valid) return false;
  const Entry& entry = entries_[current_];
  picture.texture = entry.texture;
  picture.area = entry.area;
  picture.pieces = &entry.pieces;
  ++replayed_;
  return true;
}

// The tiles each triangle's bounding box touches within its command's clip rectangle, unless the
// triangle is wholly transparent (all three vertices of alpha 0: it changes no pixel).
void ListCache::find_pieces(Entry& entry) {
  const Area& area = entry.area;
  cover_.reset(area.width, area.height, kTile);
  const ImVec2 origin = entry.display_position, scale = entry.framebuffer_scale;
  const auto to_x = [&](float x) { return (x - origin.x) * scale.x - static_cast<float>(area.x); };
  const auto to_y = [&](float y) { return (y - origin.y) * scale.y - static_cast<float>(area.y); };
  for (const Command& command : entry.commands) {
    const ImDrawIdx* indices = entry.indices.data() + command.index_offset;
    const ImDrawVert* vertices = entry.vertices.data() + command.vertex_offset;
    for (unsigned k = 0; k + 3 <= command.count; k += 3) {
      const ImDrawVert& a = vertices[indices[k]];
      const ImDrawVert& b = vertices[indices[k + 1]];
      const ImDrawVert& c = vertices[indices[k + 2]];
      if (((a.col | b.col | c.col) & IM_COL32_A_MASK) == 0) continue;
      cover_.add(to_x(std::max(command.clip.x, std::min({a.pos.x, b.pos.x, c.pos.x}))),
                 to_y(std::max(command.clip.y, std::min({a.pos.y, b.pos.y, c.pos.y}))),
                 to_x(std::min(command.clip.z, std::max({a.pos.x, b.pos.x, c.pos.x}))),
                 to_y(std::min(command.clip.w, std::max({a.pos.y, b.pos.y, c.pos.y}))));
    }
  }
  cover_.pieces(entry.pieces);
}

void ListCache::release(Entry& entry) {
  if (entry.framebuffer) glDeleteFramebuffers(1, &entry.framebuffer);
  if (entry.texture) glDeleteTextures(1, &entry.texture);
  entry.framebuffer = entry.texture = 0;
  entry.texture_width = entry.texture_height = 0;
  entry.picture_valid = false;
}

void ListCache::end_frame() {
  current_ = entries_.size();
  for (Entry& entry : entries_)
    if (!entry.seen) release(entry);
  entries_.erase(
      std::remove_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.seen; }),
      entries_.end());
  for (Entry& entry : entries_) entry.seen = false;
}

void ListCache::clear() {
  for (Entry& entry : entries_) release(entry);
  entries_.clear();
  current_ = 0;
}

}  // namespace attnviz::render
