// Writing computed attention out: the JSON result document (attnviz-cli compute), CSV of one
// matrix or of every matrix, and a plain-text heatmap for terminals.
#pragma once

#include "core/base/status.hpp"
#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"

#include <string>
#include <vector>

namespace attnviz {

// The "attnviz-result" JSON document described in docs/cli.md. Numbers are written as the
// shortest decimal that reads back to the same float; masked scores (-inf) and numbers that
// overflowed are written as null.
std::string result_to_json(const Scenario& scenario, const Pipeline& pipeline,
                           const std::vector<std::string>& extra_warnings = {});

// Comma-separated rows; a header row of column labels when given.
std::string matrix_to_csv(const Matrix& matrix, const std::vector<std::string>& column_labels = {},
                          const std::vector<std::string>& row_labels = {});

// Every matrix of a computed scenario as CSV, one file each, in this order:
//   X_target.csv, X_source.csv (cross mode only), then per head h, counted from 1 as the app
//   shows heads (the engine's heads[0] is head1_*.csv):
//   head{h}_Q.csv, head{h}_K.csv, head{h}_V.csv, head{h}_scores.csv, head{h}_scaled_scores.csv,
//   head{h}_masked_scores.csv, head{h}_weights.csv, head{h}_output.csv; then concat.csv and
//   output.csv.
// The first row holds the column labels and the first column the row labels: tokens for rows
// and for the key columns of scores and weights ("i", "like", ...), dimensions elsewhere, also
// counted from 1 as the app shows them ("d1", "d2", ...; "head1_d1", ... for concat: head 1's
// first value dimension, the app's "h1·1"). Rows of Q, scores, weights, outputs and X_target are
// the target tokens; rows of K, V and X_source the key tokens. Numbers are the shortest decimals
// that read back to the same float (as matrix_to_csv); a masked score is written "-inf", and a
// number that overflowed "inf", "-inf" or "nan".
struct CsvFile {
  std::string name;  // file name, e.g. "head1_weights.csv"
  std::string contents;
};
std::vector<CsvFile> matrices_to_csv(const Scenario& scenario, const Pipeline& pipeline);

// Writes matrices_to_csv into an existing folder, each file atomically (write_file).
// Everything is computed before the first file is written; an error names the folder or file.
Status export_matrices_csv(const std::string& folder, const Scenario& scenario,
                           const Pipeline& pipeline);

// The attention weights of one head as a text heatmap: query labels down the side, key labels
// across the top, each cell a shade block and the weight to two decimals.
std::string weights_to_text(const Pipeline& pipeline, int head);

}  // namespace attnviz
