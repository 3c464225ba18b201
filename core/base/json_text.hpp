// Writing JSON text by hand, fast and exactly: numbers as the shortest decimal that reads back
// to the same float (null for NaN and infinities, which JSON cannot hold), strings escaped,
// matrices as arrays of rows. The result documents of core/pipeline and core/models use these.
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <string>
#include <string_view>

namespace attnviz {

void append_json_number(std::string& out, float value);
void append_json_string(std::string& out, std::string_view text);

// [[row 0], [row 1], ...], a row a line, indented by `indent` spaces.
template <typename Dense>
void append_json_matrix(std::string& out, const Dense& matrix, int indent = 4) {
  const std::string row_start = "\n" + std::string(static_cast<std::size_t>(indent), ' ') + "[";
  out += '[';
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    if (r) out += ',';
    out += row_start;
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) {
      if (c) out += ',';
      append_json_number(out, static_cast<float>(matrix(r, c)));
    }
    out += ']';
  }
  if (matrix.rows())
    out += "\n" + std::string(static_cast<std::size_t>(std::max(indent - 2, 0)), ' ');
  out += ']';
}

}  // namespace attnviz
