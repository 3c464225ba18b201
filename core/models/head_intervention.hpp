// What a teacher does to one head of a real model: the pattern it attends with and the scale of
// its output (TransformerForward applies it), and which of its matrices a weight edit names
// (Transformer::set_head_weight). Scenario files record both (core/document).
#pragma once

#include <optional>
#include <string_view>

namespace attnviz {

// What a teacher does to one head.
struct HeadIntervention {
  enum class Pattern {
    Computed,       // the softmax of the scores, as the model computes it
    Uniform,        // every visible key alike: 1 / (i + 1)
    PreviousToken,  // all on key i − 1 (the first token on itself)
  };
  Pattern pattern = Pattern::Computed;
  float output_scale = 1.0f;  // multiplies the head's output; 0 knocks the head out (ablation)

  bool ablated() const { return output_scale == 0.0f; }
  bool changes_anything() const { return pattern != Pattern::Computed || output_scale != 1.0f; }
  bool operator==(const HeadIntervention&) const = default;
};

// "computed", "uniform", "previous_token" (the names scenario files and the CLI use).
std::string_view to_string(HeadIntervention::Pattern pattern);
std::optional<HeadIntervention::Pattern> parse_head_pattern(std::string_view name);

// Which of a layer's attention matrices a weight edit names.
enum class HeadMatrix { Query, Key, Value, Output };
// "W_Q", "W_K", "W_V", "W_O" (the names the app and scenario files use).
std::string_view to_string(HeadMatrix matrix);
std::optional<HeadMatrix> parse_head_matrix(std::string_view name);

}  // namespace attnviz
