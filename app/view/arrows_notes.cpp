#include "app/view/arrows_notes.hpp"

#include "core/figures/format.hpp"

#include <algorithm>

namespace attnviz::view {
namespace {

bool drawn(float alpha, float threshold) {
  return alpha >= threshold && alpha > 0;
}

bool row_masked(const HeadResult& head, int i) {
  return head.fully_masked_rows.size() > i && head.fully_masked_rows(i) != 0;
}

// The heads of the scope that the result has.
template <class Use>
void for_each_head(const AttentionResult& result, const ArrowsScope& scope, Use&& use) {
  for (const int h : scope.heads)
    if (h >= 0 && h < static_cast<int>(result.heads.size()))
      use(result.heads[static_cast<std::size_t>(h)]);
}

std::string quoted(std::string_view name) {
  return "\"" + std::string(name) + "\"";
}

}  // namespace

bool arrows_draw_a_line(const AttentionResult& result, const ArrowsScope& scope) {
  bool any = false;
  for_each_head(result, scope, [&](const HeadResult& head) {
    const Matrix& w = head.weights;  // (n_query, n_key)
    switch (scope.focus) {
      case ArrowsFocus::None:
        for (Eigen::Index i = 0; i < w.rows() && !any; ++i)
          for (Eigen::Index j = 0; j < w.cols() && !any; ++j) any = drawn(w(i, j), scope.threshold);
        break;
      case ArrowsFocus::Query:
        if (scope.index >= 0 && scope.index < w.rows())
          for (Eigen::Index j = 0; j < w.cols() && !any; ++j)
            any = drawn(w(scope.index, j), scope.threshold);
        break;
      case ArrowsFocus::Key:
        if (scope.index >= 0 && scope.index < w.cols())
          for (Eigen::Index i = 0; i < w.rows() && !any; ++i)
            any = drawn(w(i, scope.index), scope.threshold);
        break;
    }
  });
  return any;
}

ArrowsNote arrows_empty_note(const AttentionResult& result, const ArrowsScope& scope) {
  if (arrows_draw_a_line(result, scope)) return {};
  const std::string below = " < " + format_significant(scope.threshold);
  const std::string in_head = !scope.all_heads && scope.heads.size() == 1
                                  ? " in head " + std::to_string(shown_number(scope.heads[0]))
                                  : std::string();
  const std::string spread = ": attention spread thin";
  switch (scope.focus) {
    case ArrowsFocus::None: {
      bool every_row_masked = true;
      for_each_head(result, scope, [&](const HeadResult& head) {
        for (int i = 0; i < static_cast<int>(head.weights.rows()); ++i)
          if (!row_masked(head, i)) every_row_masked = false;
      });
      if (every_row_masked) {
        const std::string text = "every key is masked for every query" + in_head;
        return {text, text};
      }
      return {"every \xce\xb1" + below + in_head + spread, "every \xce\xb1" + below + in_head};
    }
    case ArrowsFocus::Query: {
      bool masked = true;
      for_each_head(result, scope, [&](const HeadResult& head) {
        masked = masked && row_masked(head, scope.index);
      });
      if (masked)
        return {quoted(scope.name) + " attends to no key" + in_head + ": every key is masked",
                quoted(scope.name) + " attends to no key" + in_head};
      const std::string text = "every \xce\xb1 of " + quoted(scope.name) + below + in_head;
      return {text + spread, text};
    }
    case ArrowsFocus::Key: {
      float largest = 0;
      for_each_head(result, scope, [&](const HeadResult& head) {
        if (scope.index >= 0 && scope.index < head.weights.cols())
          largest = std::max(largest, head.weights.col(scope.index).maxCoeff());
      });
      const std::string text = largest > 0
                                   ? "every \xce\xb1 to " + quoted(scope.name) + below + in_head
                                   : "no query attends to " + quoted(scope.name) + in_head;
      return {text, text};
    }
  }
  return {};
}

std::vector<Connection> strongest_connections(const Matrix& weights, ArrowsFocus side, int index,
                                              int count) {
  std::vector<Connection> found;
  const bool query = side == ArrowsFocus::Query;
  if (side == ArrowsFocus::None || index < 0 || index >= (query ? weights.rows() : weights.cols()))
    return found;
  const int n = static_cast<int>(query ? weights.cols() : weights.rows());
  for (int o = 0; o < n; ++o) {
    const float a = query ? weights(index, o) : weights(o, index);
    if (a > 0) found.push_back({o, a});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Connection& a, const Connection& b) { return a.alpha > b.alpha; });
  if (static_cast<int>(found.size()) > count) found.resize(static_cast<std::size_t>(count));
  return found;
}

}  // namespace attnviz::view
