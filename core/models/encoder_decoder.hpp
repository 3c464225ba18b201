// An encoder–decoder (Marian, BART) run on a source and a target: the encoder's forward pass over
// the source, and the decoder's over the target, its cross-attention reading the encoder's output.
// Each part computes only what changed (transformer_forward.hpp): typing the target reuses the
// encoder and the cross-attention's keys and values; a new source computes everything.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer_forward.hpp"

#include <memory>
#include <span>
#include <vector>

namespace attnviz {

class EncoderDecoderForward {
 public:
  // `decoder` has an encoder (Transformer::encoder()); both must outlive this.
  explicit EncoderDecoderForward(const Transformer& decoder);

  // The source's ids (with its end token) through the encoder, then the target's (the start token
  // first) through the decoder. An error (nothing changed in the part that failed) for an id
  // outside the vocabulary, an empty text or one past the context.
  Status run(std::span<const int> source, std::span<const int> target);

  TransformerForward& encoder() { return encoder_; }
  TransformerForward& decoder() { return decoder_; }
  const TransformerForward& encoder() const { return encoder_; }
  const TransformerForward& decoder() const { return decoder_; }

  // The decoder's most likely next token after position `position` of its last run: the index of
  // its largest logit, the first of equal ones, as argmax over decoder().logits(position). It
  // reads first the unembedding's rows whose bias lets them win (marian-web-es's
  // final_logits_bias is −100 on the 7,330 source pieces it never writes), gathered once; a row
  // left out is read only when |x|·|row| + its bias could reach the best logit found (Cauchy–
  // Schwarz), so the answer is the full argmax's. The model's weights may not change while this
  // object lives (nothing changes an encoder–decoder's).
  int most_likely_next(int position);
  // The same for `count` positions from `first`, into out[0..count), in one product.
  void most_likely_next(int first, int count, std::span<int> out);

 private:
  TransformerForward encoder_;
  TransformerForward decoder_;
  // The rows most_likely_next reads first, and the bound of the others (built at its first call).
  struct NextTokenRows {
    std::vector<int> open_ids;       // the rows read every step, in id order
    std::vector<float> open_rows;    // (open_ids.size(), d_model), those rows gathered
    blas::PackedMatrix open_packed;  // the same rows packed (k d_model, n open), or empty
    std::vector<float> open_bias;    // (open_ids.size())
    std::vector<int> closed_ids;     // the others, in id order
    std::vector<float> closed_norm;  // (closed_ids.size()): each row's Euclidean norm
    std::vector<float> closed_bias;  // (closed_ids.size())
    std::vector<float> logits;       // scratch: (positions, open_ids.size())
  };
  std::unique_ptr<NextTokenRows> next_token_rows_;
  NextTokenRows& next_token_rows();
};

// The greedy translation of `source`: from `start`, the most likely token each step (the KV cache
// computes one position a step) until `stop` (not included) or `limit` tokens after the start.
// The forward pass is left on the whole translation (start included, stop not).
// What the decoder read last (the translation before a keystroke) is checked first as a draft,
// all its positions in one pass; its tokens are kept while each is the most likely after the
// ones before it, and the steps go on from the first that is not. The tokens are the steps'
// (the draft's positions are computed in one product rather than one at a time: the same to
// float rounding, so a translation could differ only where two logits tie to ~1e-6).
Result<std::vector<int>> greedy_translation(EncoderDecoderForward& forward,
                                            std::span<const int> source, int start, int stop,
                                            int limit);
// The same, plainly: every step reads every row of the logits (the reference the fast search is
// tested against).
Result<std::vector<int>> greedy_translation_reference(EncoderDecoderForward& forward,
                                                      std::span<const int> source, int start,
                                                      int stop, int limit);

}  // namespace attnviz
