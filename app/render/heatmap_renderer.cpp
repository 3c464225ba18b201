#include "app/render/heatmap_renderer.hpp"

#include "app/platform/gl.hpp"
#include "app/render/shader_sources.hpp"

#include <imgui.h>

#include <cstdio>
#include <vector>

namespace attnviz::render {

namespace {

// A 2-D texture sampled at texel centres: no filtering, no wrapping.
unsigned create_nearest_texture() {
  unsigned texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return texture;
}

}  // namespace

// -----------------------------------------------------------------------------
// MatrixStackTexture
// -----------------------------------------------------------------------------

MatrixStackTexture::~MatrixStackTexture() {
  if (texture_) glDeleteTextures(1, &texture_);
}

void MatrixStackTexture::update(const std::vector<const Matrix*>& stack, std::uint64_t version) {
  if (uploaded_ && version == version_) return;
  if (stack.empty() || stack[0]->size() == 0) return;
  const int rows = static_cast<int>(stack[0]->rows()), cols = static_cast<int>(stack[0]->cols());
  const int blocks = static_cast<int>(stack.size());
  if (!texture_) texture_ = create_nearest_texture();
  glBindTexture(GL_TEXTURE_2D, texture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (rows != rows_ || cols != cols_ || blocks != blocks_) {  // a new shape: reallocate once
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, cols, rows * blocks, 0, GL_RED, GL_FLOAT, nullptr);
    rows_ = rows, cols_ = cols, blocks_ = blocks;
  }
  for (int b = 0; b < blocks; ++b)  // row-major matrices: texel row r is matrix row r
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, b * rows, cols, rows, GL_RED, GL_FLOAT,
                    stack[static_cast<std::size_t>(b)]->data());
  version_ = version;
  uploaded_ = true;
}

// -----------------------------------------------------------------------------
// HeatmapRenderer
// -----------------------------------------------------------------------------

HeatmapRenderer::~HeatmapRenderer() {
  if (colormaps_) glDeleteTextures(1, &colormaps_);
  if (program_) glDeleteProgram(program_);
}

bool HeatmapRenderer::init(std::string& error) {
  std::vector<std::uint8_t> texels;
  texels.reserve(static_cast<std::size_t>(view::kColormapSize * view::kColormapCount * 4));
  for (int map = 0; map < view::kColormapCount; ++map)
    for (const view::Rgba8& c : view::colormap(static_cast<view::ColormapId>(map)))
      texels.insert(texels.end(), {c.r, c.g, c.b, c.a});
  colormaps_ = create_nearest_texture();
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, view::kColormapSize, view::kColormapCount, 0, GL_RGBA,
               GL_UNSIGNED_BYTE, texels.data());
  if (glGetError() != GL_NO_ERROR) {
    error = "cannot create the colormap texture";
    failed_ = true;
    return false;
  }
  return true;
}

namespace {

unsigned compile(GLenum kind, const char* source, std::string& error) {
  const unsigned shader = glCreateShader(kind);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    error = std::string("heatmap shader does not compile: ") + log;
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

}  // namespace

bool HeatmapRenderer::link_program() {
  // Use the vertex attribute locations of ImGui's own program (bound right now), so the vertex
  // array ImGui set up feeds this program unchanged.
  GLint imgui_program = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &imgui_program);
  const unsigned vertex = compile(GL_VERTEX_SHADER, kHeatmapVertexShader, error_);
  const unsigned fragment = vertex ? compile(GL_FRAGMENT_SHADER, kHeatmapFragmentShader, error_) : 0;
  if (!vertex || !fragment) {
    if (vertex) glDeleteShader(vertex);
    failed_ = true;
    return false;
  }
  program_ = glCreateProgram();
  glAttachShader(program_, vertex);
  glAttachShader(program_, fragment);
  for (const char* attribute : {"Position", "UV", "Color"}) {
    const GLint location = glGetAttribLocation(static_cast<GLuint>(imgui_program), attribute);
    if (location >= 0) glBindAttribLocation(program_, static_cast<GLuint>(location), attribute);
  }
  glLinkProgram(program_);
  glDeleteShader(vertex);
  glDeleteShader(fragment);
  GLint ok = 0;
  glGetProgramiv(program_, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetProgramInfoLog(program_, sizeof log, nullptr, log);
    error_ = std::string("heatmap shader does not link: ") + log;
    glDeleteProgram(program_);
    program_ = 0;
    failed_ = true;
    return false;
  }
  uniform_projection_ = glGetUniformLocation(program_, "ProjMtx");
  uniform_values_ = glGetUniformLocation(program_, "Values");
  uniform_colormaps_ = glGetUniformLocation(program_, "Colormaps");
  uniform_row_ = glGetUniformLocation(program_, "ColormapRow");
  uniform_range_ = glGetUniformLocation(program_, "Range");
  return true;
}

void HeatmapRenderer::on_draw(const ImDrawList*, const ImDrawCmd* command) {
  const auto* params = static_cast<const DrawParams*>(command->UserCallbackData);
  params->renderer->bind(*params);
}

void HeatmapRenderer::bind(const DrawParams& params) {
  if (failed_ || (!program_ && !link_program())) return;
  const ImDrawData* draw_data = ImGui::GetDrawData();
  const float L = draw_data->DisplayPos.x, R = L + draw_data->DisplaySize.x;
  const float T = draw_data->DisplayPos.y, B = T + draw_data->DisplaySize.y;
  const float projection[16] = {2.0f / (R - L), 0, 0, 0, 0, 2.0f / (T - B), 0, 0, 0, 0, -1, 0,
                                (R + L) / (L - R), (T + B) / (B - T), 0, 1};
  glUseProgram(program_);
  glUniformMatrix4fv(uniform_projection_, 1, GL_FALSE, projection);
  glUniform1i(uniform_values_, 0);  // ImGui binds the image's texture to unit 0
  glUniform1i(uniform_colormaps_, 1);
  glUniform1f(uniform_row_, (static_cast<float>(params.colormap_row) + 0.5f) / view::kColormapCount);
  glUniform2f(uniform_range_, params.low, params.high);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, colormaps_);
  glActiveTexture(GL_TEXTURE0);
}

void HeatmapRenderer::draw(ImDrawList* list, const MatrixStackTexture& stack, int block,
                           const ImVec2& p0, const ImVec2& p1, view::ColormapId colormap,
                           float low, float high) {
  if (!stack.texture() || params_used_ >= static_cast<int>(params_.size())) return;
  DrawParams& params = params_[static_cast<std::size_t>(params_used_++)];
  params = {this, static_cast<int>(colormap), low, high > low ? high : low + 1.0f};
  const float blocks = static_cast<float>(stack.blocks());
  list->AddCallback(&HeatmapRenderer::on_draw, &params);
  list->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(stack.texture())), p0, p1,
                 ImVec2(0.0f, static_cast<float>(block) / blocks),
                 ImVec2(1.0f, static_cast<float>(block + 1) / blocks));
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace attnviz::render
