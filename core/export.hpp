// Writing computed attention out: the JSON result document (attnviz-cli compute), CSV of one
// matrix, and a plain-text heatmap for terminals.
#pragma once

#include "core/pipeline.hpp"
#include "core/scenario.hpp"

#include <string>

namespace attnviz {

// The "attnviz-result" JSON document described in README.md. Numbers are written as the
// shortest decimal that reads back to the same float; masked scores (-inf) and numbers that
// overflowed are written as null.
std::string result_to_json(const Scenario& scenario, const Pipeline& pipeline,
                           const std::vector<std::string>& extra_warnings = {});

// Comma-separated rows; a header row of column labels when given.
std::string matrix_to_csv(const Matrix& matrix, const std::vector<std::string>& column_labels = {},
                          const std::vector<std::string>& row_labels = {});

// The attention weights of one head as a text heatmap: query labels down the side, key labels
// across the top, each cell a shade block and the weight to two decimals.
std::string weights_to_text(const Pipeline& pipeline, int head);

}  // namespace attnviz
