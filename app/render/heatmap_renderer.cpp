#include "app/render/heatmap_renderer.hpp"

#include "app/platform/gl.hpp"
#include "app/render/gl_helpers.hpp"
#include "app/render/shader_sources.hpp"
#include "app/view/values.hpp"
#include "core/base/float_text.hpp"

#include <imgui.h>

#include <bit>
#include <cstdio>
#include <vector>

namespace attnviz::render {
namespace {

std::uint64_t last_content_version = 0;  // the last upload's, of any stack (the GL thread's)

}  // namespace

// -----------------------------------------------------------------------------
// MatrixStackTexture
// -----------------------------------------------------------------------------

MatrixStackTexture::~MatrixStackTexture() {
  if (texture_) glDeleteTextures(1, &texture_);
}

void HeatmapRenderer::upload_weights(const AttentionResult& result) {
  if (weights.texture() && result.version == weights_version_) return;
  weights_version_ = result.version;
  // Copies that keep their storage while the shapes do: no allocation per result.
  shown_weights_.resize(result.heads.size());
  weights_stack_.clear();
  for (std::size_t h = 0; h < result.heads.size(); ++h) {
    view::mark_masked_cells(result.heads[h].weights, result.heads[h].masked_scores,
                            shown_weights_[h]);
    weights_stack_.push_back(&shown_weights_[h]);
  }
  weights.update(weights_stack_, result.version, true);
}

void MatrixStackTexture::update(const std::vector<const Matrix*>& stack, std::uint64_t version,
                                bool marks_masked) {
  if (uploaded_ && version == version_) return;
  marks_masked_ = marks_masked;
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
  content_version_ = ++last_content_version;
  uploaded_ = true;
}

// -----------------------------------------------------------------------------
// HeatmapRenderer
// -----------------------------------------------------------------------------

HeatmapRenderer::~HeatmapRenderer() {
  if (colormaps_) glDeleteTextures(1, &colormaps_);
  if (program_) glDeleteProgram(program_);
}

Status HeatmapRenderer::init() {
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
    failed_ = true;
    return Status::error("cannot create the colormap texture");
  }
  return Status::success();
}

bool HeatmapRenderer::link_program() {
  // Use the vertex attribute locations of the UI's program (bound right now), so the vertex
  // array set up for it feeds this program unchanged.
  GLint imgui_program = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &imgui_program);
  std::vector<std::pair<unsigned, const char*>> attributes;
  for (const char* attribute : {"Position", "UV", "Color"}) {
    const GLint location = glGetAttribLocation(static_cast<GLuint>(imgui_program), attribute);
    if (location >= 0) attributes.emplace_back(static_cast<unsigned>(location), attribute);
  }
  const Result<unsigned> program =
      render::link_program("heatmap", kHeatmapVertexShader, kHeatmapFragmentShader, attributes);
  if (!program) {
    error_ = program.error();
    failed_ = true;
    return false;
  }
  program_ = *program;
  uniform_projection_ = glGetUniformLocation(program_, "ProjMtx");
  uniform_values_ = glGetUniformLocation(program_, "Values");
  uniform_colormaps_ = glGetUniformLocation(program_, "Colormaps");
  uniform_row_ = glGetUniformLocation(program_, "ColormapRow");
  uniform_range_ = glGetUniformLocation(program_, "Range");
  uniform_masked_marked_ = glGetUniformLocation(program_, "MaskedMarked");
  uniform_masked_base_ = glGetUniformLocation(program_, "MaskedBase");
  uniform_masked_stripe_ = glGetUniformLocation(program_, "MaskedStripe");
  uniform_stripe_ = glGetUniformLocation(program_, "Stripe");
  return true;
}

void HeatmapRenderer::on_draw(const ImDrawList*, const ImDrawCmd* command) {
  const auto* params = static_cast<const DrawParams*>(command->UserCallbackData);
  params->renderer->bind(*params);
}

bool HeatmapRenderer::state_of(const ImDrawCmd& command, unsigned& texture,
                               std::array<std::uint64_t, 3>& state) {
  if (command.UserCallback != &HeatmapRenderer::on_draw) return false;
  const auto* params = static_cast<const DrawParams*>(command.UserCallbackData);
  texture = params->texture;
  state = {params->content_version,
           static_cast<std::uint64_t>(params->colormap_row) |
               std::uint64_t{params->masked_marked} << 32 | std::uint64_t{params->dark} << 33,
           std::uint64_t{float_bits(params->low)} << 32 | float_bits(params->high)};
  return true;
}

void HeatmapRenderer::bind(const DrawParams& params) {
  if (failed_ || (!program_ && !link_program())) return;
  float projection[16];
  ui_projection(*ImGui::GetDrawData(), projection);
  glUseProgram(program_);
  glDisable(GL_BLEND);  // every cell is opaque (ImGui's state, blending on, comes back after)
  glUniformMatrix4fv(uniform_projection_, 1, GL_FALSE, projection);
  glUniform1i(uniform_values_, 0);  // ImGui binds the image's texture to unit 0
  glUniform1i(uniform_colormaps_, 1);
  glUniform1f(uniform_row_,
              (static_cast<float>(params.colormap_row) + 0.5f) / view::kColormapCount);
  glUniform2f(uniform_range_, params.low, params.high);
  const view::MaskedLook look = view::masked_look(params.dark);
  glUniform1f(uniform_masked_marked_, params.masked_marked ? 1.0f : 0.0f);
  glUniform3f(uniform_masked_base_, look.base.r / 255.0f, look.base.g / 255.0f,
              look.base.b / 255.0f);
  glUniform3f(uniform_masked_stripe_, look.stripe.r / 255.0f, look.stripe.g / 255.0f,
              look.stripe.b / 255.0f);
  // The stripes in framebuffer pixels: as wide on a picture exported at a larger scale.
  const float scale = std::max(1.0f, ImGui::GetDrawData()->FramebufferScale.x);
  glUniform2f(uniform_stripe_, view::kMaskedStripePeriod * scale, view::kMaskedStripeWidth * scale);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, colormaps_);
  glActiveTexture(GL_TEXTURE0);
}

void HeatmapRenderer::draw(ImDrawList* list, const MatrixStackTexture& stack, int block,
                           const ImVec2& p0, const ImVec2& p1, view::ColormapId colormap, float low,
                           float high) {
  if (!stack.texture() || params_used_ >= static_cast<int>(params_.size())) return;
  DrawParams& params = params_[static_cast<std::size_t>(params_used_++)];
  params = {this, static_cast<int>(colormap),     stack.marks_masked(), dark_,
            low,  high > low ? high : low + 1.0f, stack.texture(),      stack.content_version()};
  const float blocks = static_cast<float>(stack.blocks());
  list->AddCallback(&HeatmapRenderer::on_draw, &params);
  list->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(stack.texture())), p0, p1,
                 ImVec2(0.0f, static_cast<float>(block) / blocks),
                 ImVec2(1.0f, static_cast<float>(block + 1) / blocks));
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace attnviz::render
