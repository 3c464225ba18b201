// The models trained here for issue 38, as the engine reads them (not as their training scripts
// measured them): tokens per word on everyday sentences; gpt2-web's previous-token and induction
// heads, and bert-web's previous-token, next-token and [CLS] heads, found by the engine's
// detectors on text they never saw (the Gospel of Mark); bert-web's guesses at a [MASK].
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"
#include "core/models/sampling.hpp"
#include "core/models/transformer_forward.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
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

}  // namespace attnviz
