#include "core/pipeline/export.hpp"

#include "core/document/file_io.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <filesystem>
#include <string>
#include <vector>

namespace attnviz {
namespace {

struct Computed {
  Scenario scenario;
  Pipeline pipeline;
  Computed(bool causal) {
    Result<Scenario> load = parse_scenario(builtin_scenario_json());
    REQUIRE(load.ok());
    scenario = *load;
    scenario.edit_one_layer()->config.causal = causal;
    REQUIRE(pipeline.run(scenario));
  }
};

}  // namespace

TEST_CASE("the result JSON holds the engine's numbers exactly") {
  Computed c(false);
  const auto json = nlohmann::json::parse(result_to_json(c.scenario, c.pipeline));
  const HeadResult& head = c.pipeline.result().heads[1];
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      CHECK(json["heads"][1]["weights"][i][j].get<float>() == head.weights(i, j));
  CHECK(json["output"][4][1].get<float>() == c.pipeline.result().output(4, 1));
  CHECK(json["target_tokens"][4] == "apple");
  CHECK(json["config"]["heads"] == 2);
}

TEST_CASE("masked scores are written as null") {
  Computed c(true);
  const auto json = nlohmann::json::parse(result_to_json(c.scenario, c.pipeline));
  CHECK(json["heads"][0]["masked_scores"][0][1].is_null());
  CHECK(json["heads"][0]["masked_scores"][1][0].is_number());
}

TEST_CASE("CSV rows hold the matrix values with labels when given") {
  Matrix m(2, 2);
  m << 0.5f, -1.25f, 3.0f, 1e-7f;
  CHECK(matrix_to_csv(m) == "0.5,-1.25\n3,1e-07\n");
  CHECK(matrix_to_csv(m, {"a", "b\"c"}, {"x", "y"}) ==
        "\"\",\"a\",\"b\"\"c\"\n\"x\",0.5,-1.25\n\"y\",3,1e-07\n");
}

TEST_CASE("the text heatmap labels rows and columns with the tokens") {
  Computed c(false);
  const std::string text = weights_to_text(c.pipeline, 0);
  CHECK(text.find("apple") != std::string::npos);
  CHECK(text.rfind("head 1: ", 0) == 0);  // counted from 1, as the app shows heads
}

}  // namespace attnviz

// -----------------------------------------------------------------------------
// Every matrix as CSV
// -----------------------------------------------------------------------------
namespace attnviz {
namespace {

// One CSV line split into fields ("" quotes doubled inside quoted fields).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        fields.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

struct Csv {
  std::vector<std::string> header, row_labels;
  std::vector<std::vector<float>> values;
};

Csv parse_csv(const std::string& text) {
  Csv csv;
  std::size_t start = 0;
  bool first = true;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    REQUIRE(end != std::string::npos);  // every line ends with a newline
    std::vector<std::string> fields = csv_fields(text.substr(start, end - start));
    start = end + 1;
    REQUIRE(!fields.empty());
    const std::string label = fields.front();
    fields.erase(fields.begin());
    if (first) {
      CHECK(label.empty());  // the corner
      csv.header = fields;
      first = false;
      continue;
    }
    csv.row_labels.push_back(label);
    std::vector<float> row;
    for (const std::string& field : fields) {
      float value = 0;
      const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
      REQUIRE_MESSAGE(ec == std::errc(), field);
      REQUIRE_MESSAGE(ptr == field.data() + field.size(), field);
      row.push_back(value);
    }
    csv.values.push_back(row);
  }
  return csv;
}

const CsvFile* find_csv(const std::vector<CsvFile>& files, const std::string& name) {
  for (const CsvFile& file : files)
    if (file.name == name) return &file;
  return nullptr;
}

// The file's numbers are exactly the matrix's (a masked -inf reads back as -inf).
void check_same(const std::vector<CsvFile>& files, const std::string& name, const Matrix& matrix) {
  CAPTURE(name);
  const CsvFile* file = find_csv(files, name);
  REQUIRE(file != nullptr);
  const Csv csv = parse_csv(file->contents);
  REQUIRE(csv.values.size() == static_cast<std::size_t>(matrix.rows()));
  REQUIRE(csv.header.size() == static_cast<std::size_t>(matrix.cols()));
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    REQUIRE(csv.values[static_cast<std::size_t>(r)].size() ==
            static_cast<std::size_t>(matrix.cols()));
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) {
      CAPTURE(r);
      CAPTURE(c);
      CHECK(csv.values[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] == matrix(r, c));
    }
  }
}

std::vector<std::string> token_texts(const Tokenization& tokenization) {
  std::vector<std::string> out;
  for (const Token& token : tokenization.tokens) out.push_back(token.text);
  return out;
}

}  // namespace

TEST_CASE("every matrix has a CSV file named after it") {
  Computed c(false);
  const std::vector<CsvFile> files = matrices_to_csv(c.scenario, c.pipeline);
  std::vector<std::string> names;
  names.reserve(files.size());
  for (const CsvFile& file : files) names.push_back(file.name);
  std::vector<std::string> expected = {"X_target.csv"};
  for (int h = 1; h <= 2; ++h)  // heads counted from 1, as the app shows them
    for (const char* m :
         {"Q", "K", "V", "scores", "scaled_scores", "masked_scores", "weights", "output"})
      expected.push_back("head" + std::to_string(h) + "_" + m + ".csv");
  expected.push_back("concat.csv");
  expected.push_back("output.csv");
  CHECK(names == expected);  // self mode: no X_source.csv
}

TEST_CASE("CSV values equal the engine's numbers exactly") {
  Computed c(true);  // causal: masked scores hold -inf
  const std::vector<CsvFile> files = matrices_to_csv(c.scenario, c.pipeline);
  const AttentionResult& r = c.pipeline.result();
  check_same(files, "X_target.csv", c.pipeline.X_target());
  for (std::size_t h = 0; h < r.heads.size(); ++h) {
    const HeadResult& head = r.heads[h];
    const std::string p = "head" + std::to_string(h + 1) + "_";  // the app's head h + 1
    check_same(files, p + "Q.csv", head.Q);
    check_same(files, p + "K.csv", head.K);
    check_same(files, p + "V.csv", head.V);
    check_same(files, p + "scores.csv", head.raw_scores);
    check_same(files, p + "scaled_scores.csv", head.scaled_scores);
    check_same(files, p + "masked_scores.csv", head.masked_scores);
    check_same(files, p + "weights.csv", head.weights);
    check_same(files, p + "output.csv", head.output);
  }
  check_same(files, "concat.csv", r.concat);
  check_same(files, "output.csv", r.output);
}

TEST_CASE("masked scores are written as -inf in CSV") {
  Computed c(true);
  const std::vector<CsvFile> files = matrices_to_csv(c.scenario, c.pipeline);  // outlives `file`
  const CsvFile* file = find_csv(files, "head1_masked_scores.csv");
  REQUIRE(file != nullptr);
  // The second line is the first query's row: it sees key 0 only.
  const std::size_t first = file->contents.find('\n') + 1;
  const std::vector<std::string> row =
      csv_fields(file->contents.substr(first, file->contents.find('\n', first) - first));
  REQUIRE(row.size() == 6);
  CHECK(row[0] == "i");
  CHECK(row[1] != "-inf");
  for (std::size_t j = 2; j < row.size(); ++j) CHECK(row[j] == "-inf");
  CHECK(file->contents.find("nan") == std::string::npos);
}

TEST_CASE("CSV headers and row labels are the tokens or the dimensions") {
  Computed c(false);
  const std::vector<CsvFile> files = matrices_to_csv(c.scenario, c.pipeline);
  const std::vector<std::string> tokens = {"i", "like", "to", "eat", "apple"};
  const Csv weights = parse_csv(find_csv(files, "head2_weights.csv")->contents);
  CHECK(weights.header == tokens);
  CHECK(weights.row_labels == tokens);
  const Csv q = parse_csv(find_csv(files, "head1_Q.csv")->contents);
  CHECK(q.header == std::vector<std::string>{"d1", "d2", "d3", "d4"});
  CHECK(q.row_labels == tokens);
  const Csv concat = parse_csv(find_csv(files, "concat.csv")->contents);
  REQUIRE(concat.header.size() == 8);
  CHECK(concat.header[0] == "head1_d1");
  CHECK(concat.header[7] == "head2_d4");
}

// A teacher reads the files beside the app, which counts heads and dimensions from 1 (the
// Heatmaps view's "head 1", the Weights panel's rows 1, 2, ..., W_O's "h2·3"): the app's head 1
// is head1_*.csv, and the app's dimension 1 is the column d1.
TEST_CASE("CSV files and labels count heads and dimensions from 1, as the app does") {
  Computed c(false);
  const std::vector<CsvFile> files = matrices_to_csv(c.scenario, c.pipeline);
  const AttentionResult& r = c.pipeline.result();
  for (const CsvFile& file : files) {
    CAPTURE(file.name);
    CHECK(file.name.rfind("head0_", 0) == std::string::npos);
    CHECK(file.contents.find("\"d0\"") == std::string::npos);
    CHECK(file.contents.find("_d0\"") == std::string::npos);
  }
  // The app's head 2 (the engine's heads[1]) is head2_*.csv.
  const CsvFile* head2 = find_csv(files, "head2_weights.csv");
  REQUIRE(head2 != nullptr);
  const Csv weights = parse_csv(head2->contents);
  REQUIRE(weights.values.size() == 5);
  CHECK(weights.values[4][0] == r.heads[1].weights(4, 0));
  CHECK(find_csv(files, "head3_weights.csv") == nullptr);
  const Csv x = parse_csv(find_csv(files, "X_target.csv")->contents);
  REQUIRE(x.header.size() == 8);
  CHECK(x.header.front() == "d1");
  CHECK(x.header.back() == "d8");
  const Csv output = parse_csv(find_csv(files, "output.csv")->contents);
  CHECK(output.header.back() == "d8");
}

TEST_CASE("cross attention adds X_source with the source tokens as rows") {
  Result<Scenario> load = parse_scenario(R"({"format": "attnviz-scenario", "mode": "cross",
      "target": "the cat", "source": "le chat noir, ok"})");
  REQUIRE(load.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(*load));
  const std::vector<CsvFile> files = matrices_to_csv(*load, pipeline);
  REQUIRE(find_csv(files, "X_source.csv") != nullptr);
  check_same(files, "X_source.csv", pipeline.X_keys());
  check_same(files, "head1_K.csv", pipeline.result().heads[0].K);
  const Csv x_source = parse_csv(find_csv(files, "X_source.csv")->contents);
  CHECK(x_source.row_labels == token_texts(pipeline.keys()));  // "," survives the quoting
  const Csv weights = parse_csv(find_csv(files, "head1_weights.csv")->contents);
  CHECK(weights.header == token_texts(pipeline.keys()));
  CHECK(weights.row_labels == token_texts(pipeline.target()));
}

TEST_CASE("export_matrices_csv writes every file into the folder") {
  Computed c(false);
  testing::TempDir dir;
  REQUIRE(export_matrices_csv(dir.path.string(), c.scenario, c.pipeline));
  for (const CsvFile& file : matrices_to_csv(c.scenario, c.pipeline)) {
    CAPTURE(file.name);
    CHECK(testing::read_whole_file(dir.path / file.name) == file.contents);
  }
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path)) ++count;
  CHECK(count == 19);  // no temporary file left behind
}

TEST_CASE("export_matrices_csv into a missing folder fails naming it and writes nothing") {
  Computed c(false);
  testing::TempDir dir;
  const std::string missing = (dir.path / "no-such-folder").string();
  const Status status = export_matrices_csv(missing, c.scenario, c.pipeline);
  CHECK_FALSE(status);
  CHECK(status.message().find(missing) != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path));
  // A file where the folder should be.
  const std::string file = (dir.path / "a-file").string();
  REQUIRE(write_file(file, "x"));
  const Status not_folder = export_matrices_csv(file, c.scenario, c.pipeline);
  CHECK_FALSE(not_folder);
  CHECK(not_folder.message().find("not a folder") != std::string::npos);
}

}  // namespace attnviz
