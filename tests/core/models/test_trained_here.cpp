// The models trained here for issues 38 and 39, as the engine reads them (not as their training
// scripts measured them): tokens per word on everyday sentences; gpt2-web's previous-token and
// induction heads, and bert-web's previous-token, next-token and [CLS] heads, found by the
// engine's detectors on text they never saw (the Gospel of Mark); bert-web's guesses at a
// [MASK]; marian-web-es's translation and its cross heads' alignment on Mark, against its log.
#include "core/models/alignment.hpp"
#include "core/models/encoder_decoder.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"
#include "core/models/sampling.hpp"
#include "core/models/transformer_forward.hpp"
#include "core/pipeline/model_run.hpp"
#include "core/pipeline/pipeline.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attnviz {
namespace {

std::string shipped(const char* name) {
  return (std::filesystem::path(ATTNVIZ_SOURCE_DIR) / "assets/models" / name).string();
}

// Mark 1:1–5 in the World English Bible (114 tokens for gpt2-web, whose context is 128): a book
// neither model was trained on.
constexpr const char* kMark =
    "The beginning of the Good News of Jesus Christ, the Son of God. As it is written in the "
    "prophets, \"Behold, I send my messenger before your face, who will prepare your way before "
    "you: the voice of one crying in the wilderness, 'Make ready the way of the Lord! Make his "
    "paths straight!'\" John came baptizing in the wilderness and preaching the baptism of "
    "repentance for forgiveness of sins. All the country of Judea and all those of Jerusalem went "
    "out to him. They were baptized by him in the Jordan river, confessing their sins.";

// Sentences of everyday English in no Bible (train_gpt2.py's EVERYDAY_SENTENCES).
const std::vector<std::string> kEveryday = {
    "The teacher asked the students to open their books.",
    "My sister bought a new bicycle last week.",
    "We walked to the park after dinner and played until it was dark.",
    "Please close the window because it is cold outside.",
    "The children laughed when the dog chased its tail.",
    "He wrote a short letter to his friend in another city.",
    "She was tired, so she went to bed early.",
    "The train was late, and the passengers waited on the platform.",
    "I think the answer to the question is in the second chapter.",
    "They planted trees along the road in the spring.",
};

int words_in(const std::string& text) {
  std::istringstream in(text);
  int count = 0;
  for (std::string word; in >> word;) ++count;
  return count;
}

Model open(const char* name) {
  Result<Model> model = open_model(shipped(name));
  REQUIRE_MESSAGE(model.ok(), model.error());
  return std::move(*model);
}

const HeadScores& strongest(const std::vector<HeadScores>& heads, HeadRole role) {
  return *std::max_element(heads.begin(), heads.end(), [role](const auto& a, const auto& b) {
    return a.score(role) < b.score(role);
  });
}

}  // namespace

TEST_CASE("gpt2-web and bert-web read everyday English as words: about 1.3 tokens a word") {
  for (const char* name : {"gpt2-web", "bert-web"}) {
    const Model model = open(name);
    int tokens = 0, words = 0;
    for (const std::string& sentence : kEveryday) {
      Result<std::vector<ModelToken>> read = model.tokenizer.tokenize(sentence);
      REQUIRE(read.ok());
      for (const ModelToken& token : *read) tokens += token.special ? 0 : 1;  // not [CLS], [SEP]
      words += words_in(sentence);
    }
    const double per_word = static_cast<double>(tokens) / words;
    MESSAGE(std::string(name) << ": " << tokens << " tokens for " << words
                              << " words: " << per_word);
    CHECK(per_word <= 1.35);
  }
}

TEST_CASE("gpt2-web on Mark: a previous-token head and induction heads that need it") {
  const Model model = open("gpt2-web");
  Result<HeadRoleProbe> probe = role_probe(model, kMark);
  REQUIRE_MESSAGE(probe.ok(), probe.error());
  Result<std::vector<HeadScores>> heads = detect_head_roles(model.transformer, *probe);
  REQUIRE_MESSAGE(heads.ok(), heads.error());
  const HeadScores& previous = strongest(*heads, HeadRole::PreviousToken);
  const HeadScores& induction = strongest(*heads, HeadRole::Induction);
  MESSAGE("previous-token: layer " << previous.layer << " head " << previous.head << " "
                                   << previous.score(HeadRole::PreviousToken)
                                   << "; induction: " << induction.layer << "." << induction.head
                                   << " " << induction.score(HeadRole::Induction));
  CHECK(previous.score(HeadRole::PreviousToken) >= 0.5f);
  CHECK(previous.role == HeadRole::PreviousToken);
  CHECK(induction.score(HeadRole::Induction) >= 0.3f);
  CHECK(induction.layer > previous.layer);  // the circuit: the copier reads what the other wrote
  // A decoder has no next-token head: its query never sees the key after it.
  CHECK(strongest(*heads, HeadRole::NextToken).score(HeadRole::NextToken) == 0.0f);
}

// Mark 1:4–5 (WEB), 50 tokens of bert-web with [CLS] and [SEP] (its context is 64).
constexpr const char* kMarkShort =
    "John came baptizing in the wilderness and preaching the baptism of repentance for "
    "forgiveness of sins. All the country of Judea and all those of Jerusalem went out to him. "
    "They were baptized by him in the Jordan river, confessing their sins.";

TEST_CASE("bert-web on Mark: heads a class can name, both ways") {
  const Model model = open("bert-web");
  Result<HeadRoleProbe> probe = role_probe(model, kMarkShort);
  REQUIRE_MESSAGE(probe.ok(), probe.error());
  Result<std::vector<HeadScores>> heads = detect_head_roles(model.transformer, *probe);
  REQUIRE_MESSAGE(heads.ok(), heads.error());
  const auto report = [](const char* what, const HeadScores& s, HeadRole role) {
    MESSAGE(std::string(what) << ": layer " << s.layer << " head " << s.head << " " << s.score(role)
                              << " (role " << to_string(s.role) << ")");
  };
  const HeadScores& previous = strongest(*heads, HeadRole::PreviousToken);
  const HeadScores& next = strongest(*heads, HeadRole::NextToken);
  const HeadScores& special = strongest(*heads, HeadRole::SpecialToken);
  const HeadScores& broad = strongest(*heads, HeadRole::Broad);
  report("previous-token", previous, HeadRole::PreviousToken);
  report("next-token", next, HeadRole::NextToken);
  report("[CLS]/[SEP]", special, HeadRole::SpecialToken);
  report("broad", broad, HeadRole::Broad);
  CHECK(previous.score(HeadRole::PreviousToken) >= 0.4f);
  CHECK(next.score(HeadRole::NextToken) >= 0.4f);  // a head no decoder can have
  CHECK(next.role == HeadRole::NextToken);
  CHECK(broad.score(HeadRole::Broad) >= 0.8f);
  // On these 50 tokens the first layer's [CLS] heads give [CLS] and [SEP] about 0.38 of a row;
  // on a sentence of a class's length, more than half (below).
  CHECK(special.score(HeadRole::SpecialToken) >= 0.3f);
}

TEST_CASE("bert-web on short verses of Mark: [CLS] heads, named special-token heads") {
  const Model model = open("bert-web");
  // Mark 1:1, 1:12 and 1:17 (WEB): 15 to 22 tokens with [CLS] and [SEP].
  for (const char* verse :
       {"The beginning of the Good News of Jesus Christ, the Son of God.",
        "Immediately the Spirit drove him out into the wilderness.",
        "Jesus said to them, \"Come after me, and I will make you into fishers for men.\""}) {
    Result<HeadRoleProbe> probe = role_probe(model, verse);
    REQUIRE_MESSAGE(probe.ok(), probe.error());
    Result<std::vector<HeadScores>> heads = detect_head_roles(model.transformer, *probe);
    REQUIRE_MESSAGE(heads.ok(), heads.error());
    const HeadScores& special = strongest(*heads, HeadRole::SpecialToken);
    MESSAGE(std::string(verse) << ": layer " << special.layer << " head " << special.head
                               << " on [CLS]/[SEP] " << special.score(HeadRole::SpecialToken)
                               << ", on the first token " << special.score(HeadRole::FirstToken));
    CHECK(special.score(HeadRole::SpecialToken) >= 0.5f);
    // Its weight is on [CLS], the first token; [CLS] being special, the head is named a
    // special-token head ("[CLS]/[SEP]" in the Model view), not a first-token one.
    CHECK(special.score(HeadRole::FirstToken) >= role_threshold(HeadRole::FirstToken));
    CHECK(special.role == HeadRole::SpecialToken);
  }
}

TEST_CASE("bert-web fills a mask from both sides: earth, son, and light from the words after") {
  const Model model = open("bert-web");
  const auto top = [&](const std::string& text) {
    Result<std::vector<ModelToken>> tokens = read_text(model, text);
    REQUIRE(tokens.ok());
    std::vector<int> ids;
    int mask = -1;
    for (const ModelToken& token : *tokens) {
      if (token.id == model.tokenizer.mask_token()) mask = static_cast<int>(ids.size());
      ids.push_back(token.id);
    }
    REQUIRE(mask >= 0);
    TransformerForward forward(model.transformer);
    REQUIRE(forward.run(ids, token_types(*tokens)).is_ok());
    const RowVector logits = forward.logits(mask);
    const std::vector<Candidate> best = top_candidates(
        next_token_probabilities(std::span<const float>(logits.data(), logits.size()), {}), 3);
    MESSAGE(text << " -> " << model.tokenizer.shown(best[0].token) << " " << best[0].probability
                 << ", " << model.tokenizer.shown(best[1].token) << ", "
                 << model.tokenizer.shown(best[2].token));
    return model.tokenizer.shown(best[0].token);
  };
  CHECK(top("In the beginning God created the heavens and the [MASK].") == "earth");
  CHECK(top("She gave birth to a [MASK].") == "son");
  // The words after the mask decide: the first half of Genesis 1:3 alone gives "so"; with the
  // rest of the verse after the mask, "light". (Issue 38 asks for "light" from the first half
  // alone: not yet.)
  CHECK(top("God said, \"Let there be [MASK],\" and there was light.") == "light");
  CHECK(top("God said, let there be [MASK].") != "light");
}

// ---------------------------------------------------------------------------------------------
// marian-web-es (issue 39): the translation model trained here, as the engine reads it, against
// what its training script (torch) wrote in train.log when it saved the model: the CHECK line
// (a sentence's ids, its greedy translation, the encoder's first output row) and the last eval
// line (every cross head's alignment precision on Mark, which it never saw).
namespace {

// The line of train.log that starts with `prefix` (after the time), the last one.
std::string log_line(const std::string& model, const std::string& prefix) {
  std::ifstream in(shipped(model.c_str()) + "/train.log");
  std::string line, found;
  while (std::getline(in, line)) {
    const std::size_t at = line.find("] ");
    if (at != std::string::npos && line.compare(at + 2, prefix.size(), prefix) == 0)
      found = line.substr(at + 2);
  }
  return found;
}

// "… the row that outputs the piece best L1H0 0.612 (0.31 0.10 … | …); …" -> the numbers in the
// parentheses after `marker`, by layer then head.
std::vector<float> logged_precisions(const std::string& line, const std::string& marker) {
  std::vector<float> out;
  const std::size_t at = line.find(marker);
  if (at == std::string::npos) return out;
  const std::size_t open = line.find('(', at), close = line.find(')', at);
  std::istringstream in(line.substr(open + 1, close - open - 1));
  for (std::string word; in >> word;)
    if (word != "|") out.push_back(std::stof(word));
  return out;
}

}  // namespace

TEST_CASE("marian-web-es reads everyday English as words, and translates as its training did") {
  const Model model = open("marian-web-es");
  int words = 0, tokens = 0;
  for (const std::string& sentence : kEveryday) {
    Result<std::vector<ModelToken>> read = read_text(model, sentence);
    REQUIRE(read.ok());
    tokens += static_cast<int>(read->size()) - 1;  // not </s>
    words += words_in(sentence);
  }
  const double per_word = static_cast<double>(tokens) / words;
  MESSAGE("marian-web-es: " << per_word << " tokens a word");
  CHECK(per_word <= 1.4);

  // train.log's CHECK line: {"source", "ids", "translation", "memory_first"} from torch.
  const std::string check = log_line("marian-web-es", "CHECK ");
  REQUIRE_FALSE(check.empty());
  const nlohmann::json logged = nlohmann::json::parse(check.substr(6));
  Result<std::vector<ModelToken>> source = read_text(model, logged["source"].get<std::string>());
  REQUIRE(source.ok());
  std::vector<int> ids;
  for (const ModelToken& t : *source) ids.push_back(t.id);
  CHECK(ids == logged["ids"].get<std::vector<int>>());
  EncoderDecoderForward forward(model.transformer);
  const Result<std::vector<int>> greedy =
      greedy_translation(forward, ids, model.tokenizer.start_token(), model.tokenizer.stop_token(),
                         2 * static_cast<int>(ids.size()) + 10);
  REQUIRE(greedy.ok());
  std::string translation;
  for (std::size_t i = 1; i < greedy->size(); ++i)
    translation += model.tokenizer.text_of((*greedy)[i - 1], (*greedy)[i]);
  CHECK(translation == logged["translation"].get<std::string>());
  const std::vector<float> memory = logged["memory_first"].get<std::vector<float>>();
  const RowMatrix& encoded =
      forward.encoder().layer(model.transformer.encoder()->config().n_layers - 1).residual_out;
  float largest = 0;
  for (std::size_t j = 0; j < memory.size(); ++j)
    largest =
        std::max(largest, std::abs(encoded.matrix()(0, static_cast<Eigen::Index>(j)) - memory[j]));
  MESSAGE("the encoder's first row against torch's: largest difference " << largest);
  CHECK(largest < 1e-4f);
}

TEST_CASE(
    "marian-web-es's greedy search (rows it may write first, the last translation as a "
    "draft) gives the plain steps' tokens") {
  const Model model = open("marian-web-es");
  const Result<std::vector<AlignedSentences>> sentences =
      load_aligned_sentences(shipped("marian-web-es") + "/alignments.json");
  REQUIRE_MESSAGE(sentences.ok(), sentences.error());
  REQUIRE(sentences->size() >= 60);
  EncoderDecoderForward fast(model.transformer), plain(model.transformer);
  // `english` translated by `forward` as the app does, checked against the plain steps' tokens;
  // -> the number of translated tokens.
  const auto same_both_ways = [&](EncoderDecoderForward& forward, const std::string& english) {
    Result<std::vector<ModelToken>> source = read_text(model, english);
    REQUIRE(source.ok());
    std::vector<int> ids;
    for (const ModelToken& t : *source) ids.push_back(t.id);
    const int limit = 2 * static_cast<int>(ids.size()) + 10;
    const int start = model.tokenizer.start_token(), stop = model.tokenizer.stop_token();
    const auto fast_tokens = greedy_translation(forward, ids, start, stop, limit);
    const auto every_row = greedy_translation_reference(plain, ids, start, stop, limit);
    REQUIRE(fast_tokens.ok());
    REQUIRE(every_row.ok());
    CHECK_MESSAGE(*fast_tokens == *every_row, english);
    CHECK(forward.decoder().tokens() == *fast_tokens);  // the pass left on the translation
    return static_cast<int>(fast_tokens->size());
  };
  // 60 verses of Mark through one pass: each verse's draft is the verse before's translation.
  int tokens = 0;
  for (std::size_t s = 0; s < 60; ++s) {
    std::string english;
    for (const std::string& word : (*sentences)[s].source_words)
      english += (english.empty() ? "" : " ") + word;
    tokens += same_both_ways(fast, english);
  }
  MESSAGE("60 verses of Mark, " << tokens << " translated tokens: the same ids both ways");

  // Typed word by word into one pass, as a class types a source: each translation starts from
  // the one before as its draft, and is still the steps' own.
  const std::string typed = "God gives eternal life to those who believe in him.";
  EncoderDecoderForward typing(model.transformer);
  for (std::size_t end = typed.find(' ');; end = typed.find(' ', end + 1)) {
    same_both_ways(typing, typed.substr(0, end));
    if (end == std::string::npos) break;
  }
}

TEST_CASE("marian-web-es's cross heads align words as its training measured, one above 0.6") {
  const Model model = open("marian-web-es");
  const Result<std::vector<AlignedSentences>> sentences =
      load_aligned_sentences(shipped("marian-web-es") + "/alignments.json");
  REQUIRE_MESSAGE(sentences.ok(), sentences.error());
  const Result<CrossAlignment> measured = measure_cross_alignment(model, *sentences);
  REQUIRE_MESSAGE(measured.ok(), measured.error());
  const std::vector<float> logged =
      logged_precisions(log_line("marian-web-es", "eval step"), "the row that outputs the piece");
  REQUIRE(logged.size() == measured->precision.size());
  float largest = 0;
  for (std::size_t i = 0; i < logged.size(); ++i)
    largest = std::max(largest, std::abs(logged[i] - measured->precision[i]));
  MESSAGE("every head's precision against train.log's: largest difference "
          << largest << "; the diagonal " << measured->diagonal);
  CHECK(largest <= 0.011f);  // the log prints two decimals
  const auto best = std::max_element(measured->precision.begin(), measured->precision.end());
  MESSAGE("the best head " << (best - measured->precision.begin()) << ": " << *best);
  CHECK(*best > 0.6f);
  CHECK(measured->diagonal == doctest::Approx(0.32).epsilon(0.1));
}

TEST_CASE(
    "marian-web-es opens without waiting for its cross heads' alignment, measured on a thread "
    "of its own") {
  Scenario scenario;
  scenario.target = "God gives eternal life to those who believe.";
  scenario.spec = ModelSpec::named(shipped("marian-web-es"));
  scenario.edit_model()->part = ModelPart::Cross;
  Pipeline pipeline;
  const Status ran = pipeline.run(scenario);
  REQUIRE_MESSAGE(ran.is_ok(), ran.message());
  const Run& run = pipeline.current();
  CHECK(run.can(Capability::HeadRoles));  // measured yet or not
  if (run.roles_pending())
    CHECK(run.roles().empty());  // nothing shown half-measured
  else
    MESSAGE("the measurement had ended by the first run's end");
  run.wait_for_roles();
  CHECK_FALSE(run.roles_pending());
  REQUIRE(run.roles().size() == 12);  // 3 layers of 4 cross heads

  // Each is measure_cross_alignment's precision on the folder's first kAlignmentSentences pairs.
  const Model model = open("marian-web-es");
  Result<std::vector<AlignedSentences>> sentences =
      load_aligned_sentences(shipped("marian-web-es") + "/alignments.json");
  REQUIRE_MESSAGE(sentences.ok(), sentences.error());
  REQUIRE(sentences->size() >= static_cast<std::size_t>(kAlignmentSentences));
  sentences->resize(static_cast<std::size_t>(kAlignmentSentences));
  const Result<CrossAlignment> measured = measure_cross_alignment(model, *sentences);
  REQUIRE_MESSAGE(measured.ok(), measured.error());
  for (int layer = 0; layer < 3; ++layer)
    for (int head = 0; head < 4; ++head) {
      CAPTURE(layer);
      CAPTURE(head);
      const HeadScores* scores = run.role_of(layer, head);
      REQUIRE(scores != nullptr);
      CHECK(scores->score(HeadRole::Alignment) ==
            doctest::Approx(measured->at(layer, head)).epsilon(1e-6));
      CHECK((scores->role == HeadRole::Alignment) ==
            (measured->at(layer, head) >= role_threshold(HeadRole::Alignment)));
    }
  CHECK(run.role_of(1, 0)->role == HeadRole::Alignment);  // the head taught to align
}

}  // namespace attnviz
