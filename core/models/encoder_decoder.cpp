#include "core/models/encoder_decoder.hpp"

#include <algorithm>

namespace attnviz {

EncoderDecoderForward::EncoderDecoderForward(const Transformer& decoder)
    : encoder_(*decoder.encoder()), decoder_(decoder) {}

Status EncoderDecoderForward::run(std::span<const int> source, std::span<const int> target) {
  if (source.empty()) return Status::error("the source gives no tokens");
  if (target.empty()) return Status::error("the target has no tokens (not even its start)");
  if (Status status = encoder_.run(source); !status) return status;
  return decoder_.run(target, {}, &encoder_.final_normalized());
}

Result<std::vector<int>> greedy_translation(EncoderDecoderForward& forward,
                                            std::span<const int> source, int start, int stop,
                                            int limit) {
  const int vocab = forward.decoder().model().config().vocab_size;
  limit = std::min(limit, forward.decoder().model().config().context - 1);
  std::vector<int> target{start};
  std::vector<float> logits(static_cast<std::size_t>(vocab));
  for (;;) {
    if (Status status = forward.run(source, target); !status) return status;
    if (static_cast<int>(target.size()) > limit) break;
    forward.decoder().logits(forward.decoder().size() - 1, logits.data());
    const int next =
        static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (next == stop) break;
    target.push_back(next);
  }
  return target;
}

}  // namespace attnviz
