// Heatmaps at any size for the cost of one quad: a stack of matrices lives in one float texture
// (allocated once per shape, refreshed with glTexSubImage2D when the result changes) and a
// fragment shader colours each texel through a colormap texture. The quad is drawn with
// ImGui's draw lists: a callback switches to the heatmap shader, the image is drawn, and
// ImGui's own state is restored (as implot's OpenGL backend does).
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/engine/attention.hpp"
#include "core/figures/colormap.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

struct ImDrawList;
struct ImDrawCmd;
struct ImVec2;

namespace attnviz::render {

// A vertical stack of equally shaped matrices (e.g. one per head) in one R32F texture.
class MatrixStackTexture {
 public:
  MatrixStackTexture() = default;
  MatrixStackTexture(const MatrixStackTexture&) = delete;
  MatrixStackTexture& operator=(const MatrixStackTexture&) = delete;
  ~MatrixStackTexture();

  // Uploads when `version` differs from the last upload; reallocates only on a shape change.
  // Non-finite values are uploaded as they are (the shader clamps them). `marks_masked`: the
  // matrices are weights with view::kMaskedCell in masked cells, drawn hatched.
  void update(const std::vector<const Matrix*>& stack, std::uint64_t version,
              bool marks_masked = false);
  bool marks_masked() const { return marks_masked_; }
  unsigned texture() const { return texture_; }
  // Changes with every upload, and differs between stacks: the same content while it is the same.
  std::uint64_t content_version() const { return content_version_; }
  int rows_per_block() const { return rows_; }
  int blocks() const { return blocks_; }

 private:
  unsigned texture_ = 0;
  int rows_ = 0, cols_ = 0, blocks_ = 0;
  std::uint64_t version_ = 0;          // the caller's, of the last upload
  std::uint64_t content_version_ = 0;  // this texture's content (see content_version())
  bool uploaded_ = false;
  bool marks_masked_ = false;
};

class HeatmapRenderer {
 public:
  HeatmapRenderer() = default;
  HeatmapRenderer(const HeatmapRenderer&) = delete;
  HeatmapRenderer& operator=(const HeatmapRenderer&) = delete;
  ~HeatmapRenderer();

  // Creates the colormap texture. Shaders are linked on first use, inside ImGui's render pass.
  Status init();
  // `dark`: the theme, for the masked cells' greys (core/figures/colormap.hpp: masked_look).
  void begin_frame(bool dark) {
    params_used_ = 0;
    dark_ = dark;
  }
  // False when the shader failed to build: views then draw cells with ImGui rectangles.
  bool ok() const { return !failed_; }
  const std::string& error() const { return error_; }

  // Draws block `block` of the stack into [p0, p1] with values in [low, high] on the colormap;
  // masked cells hatched when the stack marks them.
  void draw(ImDrawList* list, const MatrixStackTexture& stack, int block, const ImVec2& p0,
            const ImVec2& p1, view::ColormapId colormap, float low, float high);

  // For a draw-list command: whether it is the callback draw() adds before its quad, and if so
  // the texture that quad shows and what else decides its pixels (the texture's content version,
  // the colormap and the range), so that a list drawing the same heatmaps can be kept as a
  // picture (render/list_cache.hpp).
  static bool state_of(const ImDrawCmd& command, unsigned& texture,
                       std::array<std::uint64_t, 3>& state);

  MatrixStackTexture weights;  // α of every head, stacked, masked cells marked (the views share it)
  // Puts the result's α of every head into `weights` when the result changed since the last time.
  void upload_weights(const AttentionResult& result);

 private:
  struct DrawParams {
    HeatmapRenderer* renderer;
    int colormap_row;
    bool masked_marked;  // values below -0.5 are masked cells
    bool dark;           // the theme, for their greys
    float low, high;
    unsigned texture;               // the stack's
    std::uint64_t content_version;  // ... and its content's, when drawn
  };
  static void on_draw(const ImDrawList* list, const ImDrawCmd* command);
  void bind(const DrawParams& params);
  bool link_program();

  unsigned colormaps_ = 0;
  unsigned program_ = 0;
  int uniform_projection_ = -1, uniform_values_ = -1, uniform_colormaps_ = -1, uniform_row_ = -1,
      uniform_range_ = -1, uniform_masked_marked_ = -1, uniform_masked_base_ = -1,
      uniform_masked_stripe_ = -1, uniform_stripe_ = -1;
  bool dark_ = false;
  bool failed_ = false;
  std::string error_;
  std::vector<const Matrix*> weights_stack_;  // for upload_weights: keeps its capacity
  std::vector<Matrix> shown_weights_;         // ... and the weights with masked cells marked
  std::uint64_t weights_version_ = 0;         // the result's version they were made for
  std::array<DrawParams, 512>
      params_{};  // heatmaps per frame: the Model view of GPT-2 small has 144
  int params_used_ = 0;
};

}  // namespace attnviz::render
