// AttnViz core: matrix types, enums, the attention configuration and the engine's limits.
// The core library depends on Eigen and the standard library only (no GL, GLFW or ImGui).
#pragma once

#include "core/base/status.hpp"

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnviz {

// Row-major float matrices: a matrix is an array of rows, as in the file format, the JSON
// output and the heatmap textures. Row-vector convention throughout: Q = X · W_Q.
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using ColumnVector = Eigen::Matrix<float, Eigen::Dynamic, 1>;
// 1 = the query may attend to the key, 0 = masked.
using MaskMatrix = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// True when every entry is finite, in one vectorized pass: x - x is 0 for a finite x and NaN for
// ±inf or NaN, and a sum with a NaN in it is NaN. (Eigen's allFinite() is not vectorized.)
template <typename Derived>
bool all_finite(const Eigen::DenseBase<Derived>& m) {
  return !std::isnan((m.derived().array() - m.derived().array()).sum());
}
// The same for count floats in a row, 64 at a time with four independent sums
// (core/base/types.cpp): the engine checks every weight and intermediate it is given or makes, on
// every recompute.
bool all_finite(const float* values, Eigen::Index count);
inline bool all_finite(const Matrix& m) {
  return all_finite(m.data(), m.size());
}
inline bool all_finite(const RowVector& m) {
  return all_finite(m.data(), m.size());
}

enum class Mode { Self, Cross };
enum class Compatibility { Dot, ScaledDot, General, Additive, Cosine };
enum class Positional { None, Sinusoidal };

std::string_view to_string(Mode mode);
std::string_view to_string(Compatibility compatibility);
std::string_view to_string(Positional positional);
std::optional<Mode> parse_mode(std::string_view text);
std::optional<Compatibility> parse_compatibility(std::string_view text);
std::optional<Positional> parse_positional(std::string_view text);

// The explicit limits of a scenario, chosen so that the app stays interactive at the limit. The
// four score matrices of every head are kept (16 bytes per query-key pair per head), and the
// projections cost tokens x d_model x heads x (2 d_k + d_v); so tokens are capped at 512 and the
// heads side by side (heads x d_k, heads x d_v) at 1024 wide, as in BERT-large. At the limit
// (512 tokens, d_model 1024, 16 heads of 64) a recompute takes 35 to 80 ms on one core and
// 120 MB; at classroom sizes, microseconds (docs/engine.md, "Limits"). One head may still be
// 256 wide (a lesson shows what a large d_k does to the softmax). `attnviz-cli bench` measures
// the engine past the token limit (its kMaxBenchTokens).
struct Limits {
  static constexpr int kMaxTokens = 512;  // per sentence (the default cap is lower)
  static constexpr int kDefaultMaxTokens = 256;
  static constexpr int kMaxDModel = 1024;
  static constexpr int kMaxHeads = 16;
  static constexpr int kMaxHeadDim = 256;      // d_k, d_v, d_att
  static constexpr int kMaxHeadsWidth = 1024;  // heads x d_k and heads x d_v
  static constexpr float kMinTemperature = 1e-3f;
  static constexpr float kMaxTemperature = 1e3f;
};

struct AttentionConfig {
  int d_model = 8;
  int heads = 2;
  int d_k = 4;    // query/key width per head
  int d_v = 4;    // value width per head
  int d_att = 4;  // hidden width of the additive (Bahdanau) scorer
  Compatibility compatibility = Compatibility::ScaledDot;
  float temperature = 1.0f;  // divides the scores before the softmax
  bool hard = false;         // one-hot argmax instead of the softmax
  bool causal = false;       // query i may only see keys j <= i
  // Grouped-query attention: the heads share this many key/value heads, head h using the W_K and
  // W_V of the first head of its group (h / (heads / kv_groups)) · (heads / kv_groups). 0 (or
  // `heads`) is ordinary multi-head attention, 1 is multi-query. Must divide `heads`.
  int kv_groups = 0;

  bool operator==(const AttentionConfig&) const = default;
};

// The number of key/value heads: kv_groups, or `heads` when it is 0.
inline int kv_group_count(const AttentionConfig& config) {
  return config.kv_groups > 0 ? config.kv_groups : config.heads;
}
// The head whose W_K and W_V head h uses: the first head of h's group (h itself without groups).
inline int kv_source_head(const AttentionConfig& config, int h) {
  const int per_group = config.heads / kv_group_count(config);
  return per_group > 0 ? h / per_group * per_group : h;
}
// True when some heads share keys and values (fewer groups than heads).
inline bool shares_keys(const AttentionConfig& config) {
  return kv_group_count(config) < config.heads;
}

// The name of the stage that scales the scores: "÷√d_k", "÷√d_k ÷T", "÷T", "no scaling".
std::string_view scaling_stage_name(Compatibility compatibility, float temperature);

// kv_groups made valid for `heads`: 0 when it equals heads or does not divide them (after the
// number of heads changed), so that one config has one spelling.
void normalize_kv_groups(AttentionConfig& config);

// Checks every field against Limits: ok, or a message that names the field ("heads must be
// between 1 and 16, got 0").
Status validate(const AttentionConfig& config);

}  // namespace attnviz
