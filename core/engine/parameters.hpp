// The learnable parameters of multi-head attention, per head and for the output projection.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

struct HeadParameters {
  Matrix W_Q;     // (d_model, d_k)   queries:  Q = X_query · W_Q
  Matrix W_K;     // (d_model, d_k)   keys:     K = X_key · W_K
  Matrix W_V;     // (d_model, d_v)   values:   V = X_key · W_V
  Matrix W_a;     // (d_k, d_k)       general:  score = q · W_a · kᵀ
  Matrix W_1;     // (d_k, d_att)     additive: score = v_a · tanh(q · W_1 + k · W_2)ᵀ
  Matrix W_2;     // (d_k, d_att)
  RowVector v_a;  // (1, d_att)
};

struct Parameters {
  std::vector<HeadParameters> heads;
  Matrix W_O;  // (heads · d_v, d_model)   output = concat · W_O
};

// The parameter matrices by name, as they appear in scenario files and messages.
enum class ParameterName { W_Q, W_K, W_V, W_a, W_1, W_2, v_a, W_O };
inline constexpr std::array<ParameterName, 8> kAllParameterNames = {
    ParameterName::W_Q, ParameterName::W_K, ParameterName::W_V, ParameterName::W_a,
    ParameterName::W_1, ParameterName::W_2, ParameterName::v_a, ParameterName::W_O};
std::string_view to_string(ParameterName name);

// The shape a parameter must have under `config` (v_a is a 1-row matrix).
struct Shape {
  Eigen::Index rows = 0, cols = 0;
};
Shape expected_shape(ParameterName name, const AttentionConfig& config);

// Access by name; `head` is ignored for W_O.
Matrix& parameter(Parameters& parameters, ParameterName name, int head);
const Matrix& parameter(const Parameters& parameters, ParameterName name, int head);
RowVector& additive_vector(Parameters& parameters, int head);

// The seeded value of one cell: uniform, scaled to a standard deviation of 1/sqrt(fan_in).
// Depends only on (seed, name, head, row, col) and the fan-in, so reshaping keeps old cells.
float seeded_value(std::uint64_t seed, ParameterName name, int head, Eigen::Index row,
                   Eigen::Index col, Eigen::Index fan_in);

// Every parameter drawn from the seed.
Parameters seeded_parameters(const AttentionConfig& config, std::uint64_t seed);

// Fills one parameter (of its current shape) from the seed.
void seed_parameter(Parameters& parameters, ParameterName name, int head, std::uint64_t seed);

// Resizes to `config`, keeping every existing value whose cell still exists and drawing only
// the new cells from the seed (heads added, rows or columns added).
void reshape_parameters(Parameters& parameters, const AttentionConfig& config, std::uint64_t seed);

// Which values check_parameters() looks at (it checks every shape): every parameter's (All);
// those of the parameters that the config's compatibility function uses (Used: W_Q, W_K, W_V and
// W_O, with W_a for general, W_1, W_2 and v_a for additive); or those but W_Q, W_K and W_V, for a
// caller that checks those as it copies them (UsedExceptProjections: AttentionEngine).
enum class ValueCheck { All, Used, UsedExceptProjections };

// Ok when every parameter has the shape `config` asks for and only finite values; otherwise a
// message naming the first bad entry, e.g. "W_Q[1][3][0] is NaN".
Status check_parameters(const Parameters& parameters, const AttentionConfig& config,
                        ValueCheck values = ValueCheck::All);

// check_parameters(...).is_ok() without building any string: for a caller on every recompute,
// which asks check_parameters() for the message only when this is false.
bool parameters_valid(const Parameters& parameters, const AttentionConfig& config,
                      ValueCheck values = ValueCheck::All);

// "is NaN", "is +infinity" or "is -infinity".
std::string describe_non_finite(float value);

}  // namespace attnviz
