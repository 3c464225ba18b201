// An encoder–decoder (Marian, BART) run on a source and a target: the encoder's forward pass over
// the source, and the decoder's over the target, its cross-attention reading the encoder's output.
// Each part computes only what changed (transformer_forward.hpp): typing the target reuses the
// encoder and the cross-attention's keys and values; a new source computes everything.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer_forward.hpp"

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

 private:
  TransformerForward encoder_;
  TransformerForward decoder_;
};

// The greedy translation of `source`: from `start`, the most likely token each step (the KV cache
// computes one position a step) until `stop` (not included) or `limit` tokens after the start.
// The forward pass is left on the whole translation (start included, stop not).
Result<std::vector<int>> greedy_translation(EncoderDecoderForward& forward,
                                            std::span<const int> source, int start, int stop,
                                            int limit);

}  // namespace attnviz
