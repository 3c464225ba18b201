#include "core/engine/parameters.hpp"

#include "core/base/rng.hpp"

#include <cmath>

namespace attnviz {

std::string_view to_string(ParameterName name) {
  switch (name) {
    case ParameterName::W_Q:
      return "W_Q";
    case ParameterName::W_K:
      return "W_K";
    case ParameterName::W_V:
      return "W_V";
    case ParameterName::W_a:
      return "W_a";
    case ParameterName::W_1:
      return "W_1";
    case ParameterName::W_2:
      return "W_2";
    case ParameterName::v_a:
      return "v_a";
    case ParameterName::W_O:
      return "W_O";
  }
  return "?";
}

Shape expected_shape(ParameterName name, const AttentionConfig& c) {
  switch (name) {
    case ParameterName::W_Q:
      return {c.d_model, c.d_k};
    case ParameterName::W_K:
      return {c.d_model, c.d_k};
    case ParameterName::W_V:
      return {c.d_model, c.d_v};
    case ParameterName::W_a:
      return {c.d_k, c.d_k};
    case ParameterName::W_1:
      return {c.d_k, c.d_att};
    case ParameterName::W_2:
      return {c.d_k, c.d_att};
    case ParameterName::v_a:
      return {1, c.d_att};
    case ParameterName::W_O:
      return {static_cast<Eigen::Index>(c.heads) * c.d_v, c.d_model};
  }
  return {};
}

namespace {

// v_a is stored as a RowVector; this view lets every parameter be handled as a Matrix.
template <typename P>
auto& parameter_impl(P& parameters, ParameterName name, int head) {
  if (name == ParameterName::W_O) return parameters.W_O;
  auto& h = parameters.heads[static_cast<std::size_t>(head)];
  switch (name) {
    case ParameterName::W_Q:
      return h.W_Q;
    case ParameterName::W_K:
      return h.W_K;
    case ParameterName::W_V:
      return h.W_V;
    case ParameterName::W_a:
      return h.W_a;
    case ParameterName::W_1:
      return h.W_1;
    default:
      return h.W_2;
  }
}

bool is_per_head(ParameterName name) {
  return name != ParameterName::W_O;
}

Eigen::Index fan_in(ParameterName name, const Shape& shape) {
  return name == ParameterName::v_a ? shape.cols : shape.rows;
}

template <typename Dense>
void resize_keeping(Dense& matrix, Eigen::Index rows, Eigen::Index cols, std::uint64_t seed,
                    ParameterName name, int head, Eigen::Index fan) {
  if (matrix.rows() == rows && matrix.cols() == cols) return;
  Matrix resized(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c)
      resized(r, c) = (r < matrix.rows() && c < matrix.cols())
                          ? matrix(r, c)
                          : seeded_value(seed, name, head, r, c, fan);
  matrix = resized;
}

}  // namespace

Matrix& parameter(Parameters& p, ParameterName name, int head) {
  return parameter_impl(p, name, head);
}
const Matrix& parameter(const Parameters& p, ParameterName name, int head) {
  return parameter_impl(p, name, head);
}
RowVector& additive_vector(Parameters& p, int head) {
  return p.heads[static_cast<std::size_t>(head)].v_a;
}

float seeded_value(std::uint64_t seed, ParameterName name, int head, Eigen::Index row,
                   Eigen::Index col, Eigen::Index fan_in) {
  const std::uint64_t stream = rng::combine(
      rng::combine(seed, static_cast<std::uint64_t>(name) + 1), static_cast<std::uint64_t>(head));
  const std::uint64_t index =
      (static_cast<std::uint64_t>(row) << 32) | static_cast<std::uint64_t>(col);
  // uniform(-1, 1) has standard deviation 1/sqrt(3).
  const float scale = std::sqrt(3.0f / static_cast<float>(std::max<Eigen::Index>(fan_in, 1)));
  return scale * rng::value(stream, index);
}

void seed_parameter(Parameters& p, ParameterName name, int head, std::uint64_t seed) {
  const auto fill = [&](auto& matrix) {
    const Shape shape{matrix.rows(), matrix.cols()};
    for (Eigen::Index r = 0; r < matrix.rows(); ++r)
      for (Eigen::Index c = 0; c < matrix.cols(); ++c)
        matrix(r, c) = seeded_value(seed, name, head, r, c, fan_in(name, shape));
  };
  if (name == ParameterName::v_a)
    fill(additive_vector(p, head));
  else
    fill(parameter(p, name, head));
}

Parameters seeded_parameters(const AttentionConfig& config, std::uint64_t seed) {
  Parameters parameters;
  reshape_parameters(parameters, config, seed);
  return parameters;
}

void reshape_parameters(Parameters& p, const AttentionConfig& config, std::uint64_t seed) {
  p.heads.resize(static_cast<std::size_t>(config.heads));
  for (ParameterName name : kAllParameterNames) {
    const Shape shape = expected_shape(name, config);
    const int head_count = is_per_head(name) ? config.heads : 1;
    for (int head = 0; head < head_count; ++head) {
      if (name == ParameterName::v_a)
        resize_keeping(additive_vector(p, head), 1, shape.cols, seed, name, head,
                       fan_in(name, shape));
      else
        resize_keeping(parameter(p, name, head), shape.rows, shape.cols, seed, name, head,
                       fan_in(name, shape));
    }
  }
}

std::string describe_non_finite(float value) {
  return std::isnan(value) ? "is NaN" : (value > 0 ? "is +infinity" : "is -infinity");
}

namespace {

// Shape and finiteness of one parameter; builds a message (allocates) only on failure.
template <typename Dense>
std::string check_one(const Dense& matrix, const Shape& shape, ParameterName name, int head,
                      bool values) {
  const bool per_head = is_per_head(name);
  const auto prefix = [&] {
    return std::string(to_string(name)) + (per_head ? "[" + std::to_string(head) + "]" : "");
  };
  if (matrix.rows() != shape.rows || matrix.cols() != shape.cols)
    return prefix() + " is " + std::to_string(matrix.rows()) + "x" + std::to_string(matrix.cols()) +
           ", expected " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
  if (!values || all_finite(matrix)) return {};
  for (Eigen::Index r = 0; r < matrix.rows(); ++r)
    for (Eigen::Index c = 0; c < matrix.cols(); ++c)
      if (!std::isfinite(matrix(r, c))) {
        const std::string cell = name == ParameterName::v_a
                                     ? "[" + std::to_string(c) + "]"
                                     : "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
        return prefix() + cell + " " + describe_non_finite(matrix(r, c)) +
               ": weights must be finite numbers";
      }
  return {};
}

}  // namespace

namespace {

// Whether check_parameters() looks at this parameter's values.
bool values_checked(ParameterName name, const AttentionConfig& config, ValueCheck values) {
  const bool projection =
      name == ParameterName::W_Q || name == ParameterName::W_K || name == ParameterName::W_V;
  const bool used =
      projection || name == ParameterName::W_O ||
      (name == ParameterName::W_a && config.compatibility == Compatibility::General) ||
      ((name == ParameterName::W_1 || name == ParameterName::W_2 || name == ParameterName::v_a) &&
       config.compatibility == Compatibility::Additive);
  return values == ValueCheck::All || (values == ValueCheck::Used && used) ||
         (values == ValueCheck::UsedExceptProjections && used && !projection);
}

// Calls check(matrix, shape, name, head, check_values) for every parameter in order until one
// returns something that converts to true; returns that, or a default-constructed Result.
template <typename Result, typename Check>
Result first_problem(const Parameters& p, const AttentionConfig& config, ValueCheck values,
                     Check check) {
  for (ParameterName name : kAllParameterNames) {
    const Shape shape = expected_shape(name, config);
    const bool check_values = values_checked(name, config, values);
    const int head_count = is_per_head(name) ? config.heads : 1;
    for (int head = 0; head < head_count; ++head) {
      Result problem =
          name == ParameterName::v_a
              ? check(p.heads[static_cast<std::size_t>(head)].v_a, shape, name, head, check_values)
              : check(parameter(p, name, head), shape, name, head, check_values);
      if (problem) return problem;
    }
  }
  return Result{};
}

// A problem as check_one() finds it, true when there is one.
struct Message {
  std::string text;
  explicit operator bool() const { return !text.empty(); }
};

}  // namespace

Status check_parameters(const Parameters& p, const AttentionConfig& config, ValueCheck values) {
  if (p.heads.size() != static_cast<std::size_t>(config.heads))
    return Status::error("parameters have " + std::to_string(p.heads.size()) + " heads, expected " +
                         std::to_string(config.heads));
  Message problem = first_problem<Message>(
      p, config, values,
      [](const auto& matrix, const Shape& shape, ParameterName name, int head, bool check_values) {
        return Message{check_one(matrix, shape, name, head, check_values)};
      });
  return problem ? Status::error(std::move(problem.text)) : Status::success();
}

bool parameters_valid(const Parameters& p, const AttentionConfig& config, ValueCheck values) {
  if (p.heads.size() != static_cast<std::size_t>(config.heads)) return false;
  return !first_problem<bool>(
      p, config, values,
      [](const auto& matrix, const Shape& shape, ParameterName, int, bool check_values) {
        return matrix.rows() != shape.rows || matrix.cols() != shape.cols ||
               (check_values && !all_finite(matrix));
      });
}

}  // namespace attnviz
