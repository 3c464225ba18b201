// What a teacher does to one head of a real model: the pattern it attends with and the scale of
// its output. TransformerForward applies it; scenario files record it (core/document).
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

}  // namespace attnviz
