// Word alignments between a source and a target sentence, and how well an encoder–decoder's
// cross-attention heads find them (Bahdanau's picture, issue 39).
//
// The links come from the Bibles' markup: each word of the World English Bible and of the
// Reina-Valera 1909 is tagged with the Strong's numbers of the Greek or Hebrew words it
// translates, so that an English word and a Spanish word that share a number translate each
// other (tests/reference/alignments/make_mark_alignments.py writes them for the Gospel of Mark,
// which no model here was trained on).
//
// A head's alignment precision, as models/train/train_marian.py measures it while training:
//   1. the source and the target, their words joined by spaces, read as the model reads them;
//      each token belongs to the word its last byte is in (a special token to none; a token that
//      is only a space to the word after it);
//   2. the decoder reads the target (teacher forcing); the row of the cross-attention that
//      outputs target token t (its input is the token before t) weighs most one source token;
//   3. over the target tokens whose word has a link, the share where that source token's word is
//      linked to t's word.
// The diagonal baseline is the same share for the source token at t's relative position.
#pragma once

#include "core/base/status.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

struct Model;

struct AlignedSentences {
  std::string reference;                                // "Mark 1:1"
  std::vector<std::string> source_words, target_words;  // as the texts are split at spaces
  std::vector<std::vector<int>> links;  // per target word: the source words it translates
};

// The aligned sentences of a file written by make_mark_alignments.py: {"verses": [{"reference",
// "english": [[word, [number, ...]], ...], "spanish": [...]}, ...]}; English is the source. An
// error naming the verse and the key for anything else.
Result<std::vector<AlignedSentences>> read_aligned_sentences(std::string_view json_text);
Result<std::vector<AlignedSentences>> load_aligned_sentences(const std::string& path);

struct CrossAlignment {
  int layers = 0, heads = 0;
  std::vector<float> precision;  // (layers · heads), by layer then head
  float diagonal = 0;            // the baseline
  int counted = 0;               // target tokens with a link
  int sentences = 0;             // sentence pairs read
  float at(int layer, int head) const {
    return precision[static_cast<std::size_t>(layer * heads + head)];
  }
};

// Every cross-attention head's alignment precision on `sentences`, the model as it is (an
// encoder–decoder). An error for another model, or when no sentence has a linked token.
Result<CrossAlignment> measure_cross_alignment(const Model& model,
                                               std::span<const AlignedSentences> sentences);

}  // namespace attnviz
