#include "core/base/types.hpp"

#include "core/engine/lanes.hpp"

#include <array>
#include <utility>

namespace attnviz {

bool all_finite(const float* values, Eigen::Index count) {
  using lanes::add_finiteness;
  using lanes::kLanes;
  // One multiply-add per 16 floats (lanes::add_finiteness()), in 4 independent sums (the loop
  // is unrolled so that they stay in registers).
  lanes::Lanes sums[4] = {lanes::zero(), lanes::zero(), lanes::zero(), lanes::zero()};
  Eigen::Index i = 0;
  for (; i + 4 * kLanes <= count; i += 4 * kLanes)
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k)
      sums[k] = add_finiteness(sums[k], lanes::load(values + i + k * kLanes));
  for (; i + kLanes <= count; i += kLanes)
    sums[0] = add_finiteness(sums[0], lanes::load(values + i));
  if (i < count)
    sums[1] = add_finiteness(sums[1], lanes::load_partial(values + i, count - i, 0.0f));
  return lanes::all_finite((sums[0] + sums[1]) + (sums[2] + sums[3]));
}

namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> lookup(const std::array<std::pair<Enum, std::string_view>, N>& names,
                           std::string_view text) {
  for (const auto& [value, name] : names)
    if (name == text) return value;
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names,
                         Enum value) {
  for (const auto& [candidate, name] : names)
    if (candidate == value) return name;
  return "?";
}

constexpr std::array<std::pair<Mode, std::string_view>, 2> kModeNames{{
    {Mode::Self, "self"},
    {Mode::Cross, "cross"},
}};
constexpr std::array<std::pair<Compatibility, std::string_view>, 5> kCompatibilityNames{{
    {Compatibility::Dot, "dot"},
    {Compatibility::ScaledDot, "scaled_dot"},
    {Compatibility::General, "general"},
    {Compatibility::Additive, "additive"},
    {Compatibility::Cosine, "cosine"},
}};
constexpr std::array<std::pair<Positional, std::string_view>, 2> kPositionalNames{{
    {Positional::None, "none"},
    {Positional::Sinusoidal, "sinusoidal"},
}};

std::string out_of_range(std::string_view field, int low, int high, int value) {
  return std::string(field) + " must be between " + std::to_string(low) + " and " +
         std::to_string(high) + ", got " + std::to_string(value);
}

}  // namespace

std::string_view to_string(Mode mode) {
  return name_of(kModeNames, mode);
}
std::string_view to_string(Compatibility c) {
  return name_of(kCompatibilityNames, c);
}
std::string_view to_string(Positional p) {
  return name_of(kPositionalNames, p);
}
std::optional<Mode> parse_mode(std::string_view text) {
  return lookup(kModeNames, text);
}
std::optional<Compatibility> parse_compatibility(std::string_view text) {
  return lookup(kCompatibilityNames, text);
}
std::optional<Positional> parse_positional(std::string_view text) {
  return lookup(kPositionalNames, text);
}

void normalize_kv_groups(AttentionConfig& config) {
  if (config.kv_groups <= 0 || config.kv_groups >= config.heads ||
      config.heads % config.kv_groups != 0)
    config.kv_groups = 0;
}

Status validate(const AttentionConfig& config) {
  if (config.d_model < 1 || config.d_model > Limits::kMaxDModel)
    return Status::error(out_of_range("d_model", 1, Limits::kMaxDModel, config.d_model));
  if (config.heads < 1 || config.heads > Limits::kMaxHeads)
    return Status::error(out_of_range("heads", 1, Limits::kMaxHeads, config.heads));
  if (config.d_k < 1 || config.d_k > Limits::kMaxHeadDim)
    return Status::error(out_of_range("d_k", 1, Limits::kMaxHeadDim, config.d_k));
  if (config.d_v < 1 || config.d_v > Limits::kMaxHeadDim)
    return Status::error(out_of_range("d_v", 1, Limits::kMaxHeadDim, config.d_v));
  if (config.d_att < 1 || config.d_att > Limits::kMaxHeadDim)
    return Status::error(out_of_range("d_att", 1, Limits::kMaxHeadDim, config.d_att));
  for (const auto& [name, width] : {std::pair{"d_k", config.d_k}, std::pair{"d_v", config.d_v}})
    if (config.heads * width > Limits::kMaxHeadsWidth)
      return Status::error(
          std::string("heads x ") + name + " is " + std::to_string(config.heads) + " x " +
          std::to_string(width) + " = " + std::to_string(config.heads * width) + "; at most " +
          std::to_string(Limits::kMaxHeadsWidth) + " (fewer heads or a smaller " + name + ")");
  if (config.kv_groups < 0 || config.kv_groups > config.heads)
    return Status::error(out_of_range("kv_groups", 0, config.heads, config.kv_groups));
  if (config.kv_groups > 0 && config.heads % config.kv_groups != 0)
    return Status::error("kv_groups must divide heads: " + std::to_string(config.heads) +
                         " heads cannot be shared out among " + std::to_string(config.kv_groups) +
                         " key/value groups");
  if (!(config.temperature >= Limits::kMinTemperature &&
        config.temperature <= Limits::kMaxTemperature))
    return Status::error("temperature must be between 0.001 and 1000, got " +
                         std::to_string(config.temperature));
  return Status::success();
}

std::string_view scaling_stage_name(Compatibility compatibility, float temperature) {
  const bool root = compatibility == Compatibility::ScaledDot, tempered = temperature != 1.0f;
  if (root && tempered)
    return "\xc3\xb7\xe2\x88\x9a"
           "d_k \xc3\xb7T";
  if (root)
    return "\xc3\xb7\xe2\x88\x9a"
           "d_k";
  if (tempered) return "\xc3\xb7T";
  return "no scaling";
}

}  // namespace attnviz
