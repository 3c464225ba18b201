#include "core/pipeline/export.hpp"

#include "core/base/json_text.hpp"
#include "core/document/file_io.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>

namespace attnviz {
namespace {

void append_number(std::string& out, float value) {
  append_json_number(out, value);
}

void append_string(std::string& out, std::string_view text) {
  append_json_string(out, text);
}

template <typename Dense>
void append_matrix(std::string& out, const Dense& matrix) {
  append_json_matrix(out, matrix, 4);
}

void append_tokens(std::string& out, const Tokenization& tokenization) {
  out += '[';
  for (std::size_t i = 0; i < tokenization.tokens.size(); ++i) {
    if (i) out += ", ";
    append_string(out, tokenization.tokens[i].text);
  }
  out += ']';
}

// A key with a value written by `write`, then a comma and a newline.
template <typename Write>
void field(std::string& out, const char* key, Write&& write, bool last = false) {
  out += "  ";
  append_string(out, key);
  out += ": ";
  write();
  out += last ? "\n" : ",\n";
}

}  // namespace

std::string result_to_json(const Scenario& scenario, const Pipeline& pipeline,
                           const std::vector<std::string>& extra_warnings) {
  const AttentionResult& r = pipeline.result();
  const AttentionConfig& c = r.config;
  std::string out;
  out.reserve(4096 + static_cast<std::size_t>(r.n_query * r.n_key * c.heads) * 40);
  out += "{\n";
  field(out, "format", [&] { append_string(out, "attnviz-result"); });
  field(out, "version", [&] { out += "1"; });
  // An encoder–decoder's cross-attention part is cross-attention too (its keys: the source's).
  const bool cross_part = pipeline.can(Capability::SourceAndTarget) && pipeline.cross();
  field(out, "mode",
        [&] { append_string(out, cross_part ? "cross" : to_string(scenario.one_layer().mode)); });
  field(out, "config", [&] {
    out += "{\"d_model\": " + std::to_string(c.d_model) +
           ", \"heads\": " + std::to_string(c.heads) + ", \"d_k\": " + std::to_string(c.d_k) +
           ", \"d_v\": " + std::to_string(c.d_v) + ", \"d_att\": " + std::to_string(c.d_att) +
           ", \"compatibility\": ";
    append_string(out, to_string(c.compatibility));
    out += ", \"temperature\": ";
    append_number(out, c.temperature);
    out += std::string(", \"hard\": ") + (c.hard ? "true" : "false") +
           ", \"causal\": " + (c.causal ? "true" : "false") + ", \"positional\": ";
    append_string(out, to_string(scenario.one_layer().positional));
    out += '}';
  });
  field(out, "target_tokens", [&] { append_tokens(out, pipeline.target()); });
  field(out, "source_tokens", [&] { append_tokens(out, pipeline.keys()); });
  field(out, "X_target", [&] { append_matrix(out, pipeline.X_target()); });
  field(out, "X_source", [&] { append_matrix(out, pipeline.X_keys()); });
  field(out, "heads", [&] {
    out += '[';
    for (std::size_t h = 0; h < r.heads.size(); ++h) {
      const HeadResult& head = r.heads[h];
      out += h ? ", {\n" : "{\n";
      field(out, "Q", [&] { append_matrix(out, head.Q); });
      field(out, "K", [&] { append_matrix(out, head.K); });
      field(out, "V", [&] { append_matrix(out, head.V); });
      field(out, "scores", [&] { append_matrix(out, head.raw_scores); });
      field(out, "scaled_scores", [&] { append_matrix(out, head.scaled_scores); });
      field(out, "masked_scores", [&] { append_matrix(out, head.masked_scores); });
      field(out, "weights", [&] { append_matrix(out, head.weights); });
      field(out, "output", [&] { append_matrix(out, head.output); });
      field(out, "fully_masked_rows", [&] {
        out += '[';
        bool first = true;
        for (Eigen::Index i = 0; i < head.fully_masked_rows.size(); ++i)
          if (head.fully_masked_rows[i]) {
            out += first ? "" : ", ";
            out += std::to_string(i);
            first = false;
          }
        out += ']';
      });
      field(
          out, "overflow", [&] { out += head.overflow ? "true" : "false"; }, true);
      out += "}";
    }
    out += ']';
  });
  field(out, "concat", [&] { append_matrix(out, r.concat); });
  field(out, "output", [&] { append_matrix(out, r.output); });
  field(
      out, "warnings",
      [&] {
        out += '[';
        bool first = true;
        for (const auto* list : {&extra_warnings, &pipeline.warnings()})
          for (const std::string& warning : *list) {
            out += first ? "" : ", ";
            append_string(out, warning);
            first = false;
          }
        out += ']';
      },
      true);
  out += "}\n";
  return out;
}

std::string matrix_to_csv(const Matrix& matrix, const std::vector<std::string>& column_labels,
                          const std::vector<std::string>& row_labels) {
  const auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
  };
  std::string out;
  if (!column_labels.empty()) {
    if (!row_labels.empty()) out += "\"\",";
    for (std::size_t c = 0; c < column_labels.size(); ++c)
      out += (c ? "," : "") + quoted(column_labels[c]);
    out += '\n';
  }
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    if (!row_labels.empty()) out += quoted(row_labels[static_cast<std::size_t>(r)]) + ",";
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) {
      if (c) out += ',';
      if (std::isfinite(matrix(r, c)))
        append_number(out, matrix(r, c));
      else
        out += std::isnan(matrix(r, c)) ? "nan" : (matrix(r, c) > 0 ? "inf" : "-inf");
    }
    out += '\n';
  }
  return out;
}

std::vector<CsvFile> matrices_to_csv(const Scenario& scenario, const Pipeline& pipeline) {
  (void)scenario;  // the mode is the pipeline's (cross() tells)
  const AttentionResult& r = pipeline.result();
  const auto texts = [](const Tokenization& tokenization) {
    std::vector<std::string> out;
    out.reserve(tokenization.tokens.size());
    for (const Token& token : tokenization.tokens) out.push_back(token.text);
    return out;
  };
  // Heads and dimensions are counted from 1 in the names and labels, as the app shows them (its
  // head 1 is head1_*.csv, its dimension 1 the column d1): a teacher reads the files beside it.
  const auto dimensions = [](Eigen::Index count, const std::string& prefix = "") {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(count));
    for (Eigen::Index d = 1; d <= count; ++d) out.push_back(prefix + "d" + std::to_string(d));
    return out;
  };
  const auto head_name = [](std::size_t h) { return "head" + std::to_string(h + 1) + "_"; };
  const std::vector<std::string> queries = texts(pipeline.target()), keys = texts(pipeline.keys());

  std::vector<CsvFile> files;
  files.reserve(4 + r.heads.size() * 8);
  files.push_back({"X_target.csv", matrix_to_csv(pipeline.X_target(),
                                                 dimensions(pipeline.X_target().cols()), queries)});
  if (pipeline.cross())
    files.push_back({"X_source.csv",
                     matrix_to_csv(pipeline.X_keys(), dimensions(pipeline.X_keys().cols()), keys)});
  for (std::size_t h = 0; h < r.heads.size(); ++h) {
    const HeadResult& head = r.heads[h];
    const std::string prefix = head_name(h);
    files.push_back({prefix + "Q.csv", matrix_to_csv(head.Q, dimensions(head.Q.cols()), queries)});
    files.push_back({prefix + "K.csv", matrix_to_csv(head.K, dimensions(head.K.cols()), keys)});
    files.push_back({prefix + "V.csv", matrix_to_csv(head.V, dimensions(head.V.cols()), keys)});
    files.push_back({prefix + "scores.csv", matrix_to_csv(head.raw_scores, keys, queries)});
    files.push_back(
        {prefix + "scaled_scores.csv", matrix_to_csv(head.scaled_scores, keys, queries)});
    files.push_back(
        {prefix + "masked_scores.csv", matrix_to_csv(head.masked_scores, keys, queries)});
    files.push_back({prefix + "weights.csv", matrix_to_csv(head.weights, keys, queries)});
    files.push_back({prefix + "output.csv",
                     matrix_to_csv(head.output, dimensions(head.output.cols()), queries)});
  }
  std::vector<std::string> concat_labels;
  concat_labels.reserve(static_cast<std::size_t>(r.concat.cols()));
  for (std::size_t h = 0; h < r.heads.size(); ++h)
    for (const std::string& d : dimensions(r.heads[h].output.cols(), head_name(h)))
      concat_labels.push_back(d);
  files.push_back({"concat.csv", matrix_to_csv(r.concat, concat_labels, queries)});
  files.push_back({"output.csv", matrix_to_csv(r.output, dimensions(r.output.cols()), queries)});
  return files;
}

Status export_matrices_csv(const std::string& folder, const Scenario& scenario,
                           const Pipeline& pipeline) {
  const std::vector<CsvFile> files = matrices_to_csv(scenario, pipeline);
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(folder, error);
  if (!std::filesystem::exists(status))
    return Status::error("cannot export into '" + folder + "': no such folder");
  if (!std::filesystem::is_directory(status))
    return Status::error("cannot export into '" + folder + "': it is not a folder");
  for (const CsvFile& file : files) {
    const std::string path = (std::filesystem::path(folder) / file.name).string();
    if (Status written = write_file(path, file.contents); !written) return written;
  }
  return Status::success();
}

std::string weights_to_text(const Pipeline& pipeline, int head) {
  const AttentionResult& r = pipeline.result();
  const Matrix& weights = r.heads[static_cast<std::size_t>(head)].weights;
  const auto& queries = pipeline.target().tokens;
  const auto& keys = pipeline.keys().tokens;
  // Display width of a label, counting code points (close enough for a terminal).
  const auto width = [](const std::string& text) { return utf8_length(text); };
  const auto pad = [&](const std::string& text, std::size_t to) {
    const std::size_t w = width(text);
    return text + std::string(w < to ? to - w : 0, ' ');
  };
  std::size_t label_width = 5;
  for (const Token& t : queries)
    label_width = std::max(label_width, std::min<std::size_t>(width(t.text), 16));
  static constexpr const char* kShades[] = {" ", "░", "▒", "▓", "█"};
  constexpr std::size_t kCell = 7;

  // The head counted from 1, as the app and the SVG figures count it.
  std::string out =
      "head " + std::to_string(head + 1) + ": attention weights (rows: queries, columns: keys)\n";
  out += std::string(label_width + 1, ' ');
  for (const Token& t : keys) {
    std::string label = t.text;
    if (width(label) > kCell - 1) label = std::string(utf8_prefix(label, kCell - 2)) + "…";
    out += pad(label, kCell);
  }
  out += '\n';
  for (Eigen::Index i = 0; i < weights.rows(); ++i) {
    const std::string& query = queries[static_cast<std::size_t>(i)].text;
    out += pad(width(query) > label_width ? std::string(utf8_prefix(query, label_width - 1)) + "…"
                                          : query,
               label_width) +
           " ";
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
      const float w = weights(i, j);
      const int shade = std::clamp(static_cast<int>(std::lround(w * 4.0f)), 0, 4);
      char number[16];
      std::snprintf(number, sizeof number, "%.2f", static_cast<double>(w));
      out += std::string(kShades[shade]) + number + "  ";
    }
    out += '\n';
  }
  return out;
}

}  // namespace attnviz
