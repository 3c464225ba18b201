#include "core/models/alignment.hpp"

#include "core/models/encoder_decoder.hpp"
#include "core/models/mapped_file.hpp"
#include "core/models/model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace attnviz {

namespace {

using Json = nlohmann::json;

constexpr std::size_t kMostAlignmentBytes = 64u << 20;  // 64 MiB
constexpr std::size_t kMostSentences = 100000;

// [[word, [number, ...]], ...] -> the words and each word's numbers.
Status read_words(const Json& list, const std::string& where, std::vector<std::string>& words,
                  std::vector<std::set<std::string>>& numbers) {
  if (!list.is_array()) return Status::error(where + ": expected a list of [word, [numbers]]");
  for (const Json& entry : list) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_array())
      return Status::error(where + ": each word is [\"word\", [\"G746\", ...]]");
    words.push_back(entry[0].get<std::string>());
    std::set<std::string>& mine = numbers.emplace_back();
    for (const Json& number : entry[1]) {
      if (!number.is_string()) return Status::error(where + ": a Strong's number is a string");
      mine.insert(number.get<std::string>());
    }
  }
  return Status::success();
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The word (counted from 0, split at spaces) each token's last byte is in, −1 for a special
// token. A token that is only a space (SentencePiece's "▁" before a piece it could not join)
// belongs to the word after it, as the space begins that word.
std::vector<int> words_of(std::span<const ModelToken> tokens, const std::string& text) {
  std::vector<int> out;
  out.reserve(tokens.size());
  for (const ModelToken& token : tokens) {
    if (token.special || token.byte_end <= token.byte_begin ||
        static_cast<std::size_t>(token.byte_end) > text.size()) {
      out.push_back(-1);
      continue;
    }
    const auto last = text.begin() + token.byte_end - 1;
    out.push_back(static_cast<int>(std::count(text.begin(), last, ' ') + (*last == ' ' ? 1 : 0)));
  }
  return out;
}

}  // namespace

Result<std::vector<AlignedSentences>> read_aligned_sentences(std::string_view json_text) {
  const Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (root.is_discarded()) return Status::error("the alignments are not valid JSON");
  if (!root.is_object() || !root.contains("verses") || !root["verses"].is_array())
    return Status::error("the alignments have no \"verses\" list");
  const Json& verses = root["verses"];
  if (verses.size() > kMostSentences)
    return Status::error("the alignments hold " + std::to_string(verses.size()) +
                         " verses; at most " + std::to_string(kMostSentences) + " are read");
  std::vector<AlignedSentences> out;
  out.reserve(verses.size());
  for (std::size_t i = 0; i < verses.size(); ++i) {
    const Json& verse = verses[i];
    std::string where = "verse " + std::to_string(i + 1);
    if (!verse.is_object() || !verse.contains("english") || !verse.contains("spanish"))
      return Status::error(where + ": needs \"english\" and \"spanish\"");
    AlignedSentences sentences;
    if (verse.contains("reference") && verse["reference"].is_string()) {
      sentences.reference = verse["reference"].get<std::string>();
      where += " (" + sentences.reference + ")";
    }
    std::vector<std::set<std::string>> source_numbers, target_numbers;
    if (Status status = read_words(verse["english"], where + ".english", sentences.source_words,
                                   source_numbers);
        !status)
      return status;
    if (Status status = read_words(verse["spanish"], where + ".spanish", sentences.target_words,
                                   target_numbers);
        !status)
      return status;
    // Target word t is linked to source word s when they share a number.
    for (const std::set<std::string>& numbers : target_numbers) {
      std::vector<int>& links = sentences.links.emplace_back();
      for (std::size_t s = 0; s < source_numbers.size(); ++s)
        if (std::any_of(numbers.begin(), numbers.end(),
                        [&](const std::string& n) { return source_numbers[s].count(n) > 0; }))
          links.push_back(static_cast<int>(s));
    }
    out.push_back(std::move(sentences));
  }
  return out;
}

Result<std::vector<AlignedSentences>> load_aligned_sentences(const std::string& path) {
  Result<std::string> text = read_capped(path, kMostAlignmentBytes);
  if (!text) return text.status();
  Result<std::vector<AlignedSentences>> read = read_aligned_sentences(*text);
  if (!read) return Status::error(path + ": " + read.status().message());
  return read;
}

Result<CrossAlignment> measure_cross_alignment(const Model& model,
                                               std::span<const AlignedSentences> sentences) {
  const Transformer& decoder = model.transformer;
  if (!decoder.encoder())
    return Status::error(model.name + " has no cross-attention (it is not an encoder–decoder)");
  CrossAlignment out;
  out.layers = decoder.config().n_layers;
  out.heads = decoder.config().n_heads;
  std::vector<double> right(static_cast<std::size_t>(out.layers * out.heads), 0.0);
  double diagonal = 0;
  EncoderDecoderForward forward(decoder);
  for (const AlignedSentences& pair : sentences) {
    // 1. The two sentences as the model reads them, each token's word.
    const std::string source_text = joined(pair.source_words);
    const std::string target_text = joined(pair.target_words);
    Result<std::vector<ModelToken>> source = read_text(model, source_text);
    Result<std::vector<ModelToken>> target = read_target(model, target_text);
    if (!source || !target) continue;
    if (static_cast<int>(source->size()) > decoder.encoder()->config().context ||
        static_cast<int>(target->size()) > decoder.config().context)
      continue;
    const std::vector<int> source_words = words_of(*source, source_text);
    const std::vector<int> target_words = words_of(*target, target_text);
    std::vector<int> source_ids, target_ids;
    for (const ModelToken& t : *source) source_ids.push_back(t.id);
    for (const ModelToken& t : *target) target_ids.push_back(t.id);
    // 2. Teacher forcing: the decoder reads the start token and the target.
    if (!forward.run(source_ids, target_ids)) continue;
    ++out.sentences;
    // The target's tokens after the start token, and an end token after them, as the model was
    // trained to output (the diagonal's length counts it, as train_marian.py does).
    const int n_target = static_cast<int>(target->size());  // start + pieces: pieces + 1 rows
    const int n_source = static_cast<int>(source->size());
    for (int piece = 0; piece + 1 < n_target; ++piece) {
      const int word = target_words[static_cast<std::size_t>(piece + 1)];
      if (word < 0 || static_cast<std::size_t>(word) >= pair.links.size()) continue;
      const std::vector<int>& links = pair.links[static_cast<std::size_t>(word)];
      if (links.empty()) continue;
      ++out.counted;
      const auto linked = [&](int key) {
        const int source_word = source_words[static_cast<std::size_t>(key)];
        return source_word >= 0 &&
               std::find(links.begin(), links.end(), source_word) != links.end();
      };
      // 3. The row that outputs the piece (its input: the token before), each head's argmax.
      for (int layer = 0; layer < out.layers; ++layer)
        for (int head = 0; head < out.heads; ++head) {
          const std::span<const float> row =
              forward.decoder().cross_attention_row(layer, head, piece);
          const int key = static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
          if (linked(key)) right[static_cast<std::size_t>(layer * out.heads + head)] += 1;
        }
      const int key = static_cast<int>(
          std::nearbyint((piece + 0.5) * n_source / static_cast<double>(n_target) - 0.5));
      if (linked(std::clamp(key, 0, n_source - 1))) diagonal += 1;
    }
  }
  if (out.counted == 0)
    return Status::error("no target token of these sentences has a link " + model.name +
                         " could read");
  out.precision.reserve(right.size());
  for (const double r : right) out.precision.push_back(static_cast<float>(r / out.counted));
  out.diagonal = static_cast<float>(diagonal / out.counted);
  return out;
}

}  // namespace attnviz
