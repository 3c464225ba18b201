// Word alignments and the cross-attention heads' alignment precision (core/models/alignment.hpp):
// the file of aligned sentences read and refused; on a tiny BART written by the tests, the
// precision of every head counted here by hand from the forward pass's own cross-attention rows
// (the row that outputs each linked token, its argmax, the source word it falls in), and the
// diagonal baseline. What the shipped translation model's heads score on Mark is checked in
// test_trained_here.cpp.
#include "core/models/alignment.hpp"
#include "core/models/encoder_decoder.hpp"
#include "core/models/model.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_encoder_decoder.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace attnviz {
namespace {

// "ab a" in English and in Spanish, the words crossed: Spanish "ab" translates English "a".
constexpr const char* kCrossed = R"({"verses": [
  {"reference": "Test 1:1",
   "english": [["ab", ["G1"]], ["a", ["G2"]]],
   "spanish": [["ab", ["G2"]], ["a", ["G1", "G9"]]]},
  {"reference": "Test 1:2",
   "english": [["ab", ["G1"]], ["a", []]],
   "spanish": [["ab", []], ["a", ["G1"]]]}
]})";

}  // namespace

TEST_CASE("aligned sentences: each target word linked to the source words sharing a number") {
  const Result<std::vector<AlignedSentences>> read = read_aligned_sentences(kCrossed);
  REQUIRE_MESSAGE(read.ok(), read.error());
  REQUIRE(read->size() == 2);
  const AlignedSentences& first = (*read)[0];
  CHECK(first.reference == "Test 1:1");
  CHECK(first.source_words == std::vector<std::string>{"ab", "a"});
  CHECK(first.target_words == std::vector<std::string>{"ab", "a"});
  CHECK(first.links == std::vector<std::vector<int>>{{1}, {0}});
  CHECK((*read)[1].links == std::vector<std::vector<int>>{{}, {0}});

  const auto refused = [](const char* json, const std::string& says) {
    const Result<std::vector<AlignedSentences>> bad = read_aligned_sentences(json);
    REQUIRE_FALSE(bad.ok());
    CHECK_MESSAGE(bad.error().find(says) != std::string::npos, bad.error());
  };
  refused("{", "not valid JSON");
  refused("{}", "no \"verses\"");
  refused(R"({"verses": [{"english": []}]})", "verse 1: needs \"english\" and \"spanish\"");
  refused(R"({"verses": [{"reference": "X 1:1", "english": [["a"]], "spanish": []}]})",
          "verse 1 (X 1:1).english");
  refused(R"({"verses": [{"english": [["a", [7]]], "spanish": []}]})", "a string");
  const Result<std::vector<AlignedSentences>> missing =
      load_aligned_sentences("/nonexistent/alignments.json");
  CHECK_FALSE(missing.ok());
}

TEST_CASE("a cross head's alignment precision, counted by hand from its rows") {
  testing::TempDir dir;
  const std::filesystem::path folder = testing::write_tiny_bart_folder(dir);
  const Result<Model> model = open_model(folder.string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  const Result<std::vector<AlignedSentences>> sentences = read_aligned_sentences(kCrossed);
  REQUIRE(sentences.ok());
  const Result<CrossAlignment> measured = measure_cross_alignment(*model, *sentences);
  REQUIRE_MESSAGE(measured.ok(), measured.error());
  CHECK(measured->layers == testing::kLayers);
  CHECK(measured->heads == testing::kHeads);
  CHECK(measured->sentences == 2);
  // Linked target tokens: "ab" and "␣a" of the first verse, "␣a" of the second.
  CHECK(measured->counted == 3);

  // By hand: the source <s> ab ␣a </s> (words −, 0, 1, −) and the target <pad> <s> ab ␣a; the row
  // that outputs target token t is row t − 1.
  EncoderDecoderForward forward(model->transformer);
  const std::vector<int> source{1, 258, 259, 0}, target{260, 1, 258, 259};
  REQUIRE(forward.run(source, target));
  const std::vector<int> source_word{-1, 0, 1, -1};
  // (row, the source words linked) for each verse's linked tokens.
  const std::vector<std::pair<int, std::vector<int>>> first{{1, {1}}, {2, {0}}};
  const std::vector<std::pair<int, std::vector<int>>> second{{2, {0}}};
  for (int layer = 0; layer < testing::kLayers; ++layer)
    for (int head = 0; head < testing::kHeads; ++head) {
      const Matrix alpha = forward.decoder().cross_attention(layer, head);  // (4, 4)
      int right = 0;
      for (const auto* verse : {&first, &second})
        for (const auto& [row, links] : *verse) {
          Eigen::Index key = 0;
          alpha.row(row).maxCoeff(&key);
          const int word = source_word[static_cast<std::size_t>(key)];
          right += std::find(links.begin(), links.end(), word) != links.end();
        }
      CAPTURE(layer);
      CAPTURE(head);
      CHECK(measured->at(layer, head) == doctest::Approx(right / 3.0));
    }
  // The diagonal: rows 1 and 2 at keys 1 and 2 (words 0 and 1): the first verse's links are
  // crossed, so it is wrong twice; the second's row 2 (word 1, linked to 0) is wrong too.
  CHECK(measured->diagonal == 0.0f);

  // A model with no cross-attention is refused.
  const Result<Model> decoder = open_model("stories260K");
  REQUIRE(decoder.ok());
  const Result<CrossAlignment> refused = measure_cross_alignment(*decoder, *sentences);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().find("has no cross-attention") != std::string::npos);
}

}  // namespace attnviz
