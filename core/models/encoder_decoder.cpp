#include "core/models/encoder_decoder.hpp"

#include "core/models/blas.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz {

EncoderDecoderForward::EncoderDecoderForward(const Transformer& decoder)
    : encoder_(*decoder.encoder()), decoder_(decoder) {}

Status EncoderDecoderForward::run(std::span<const int> source, std::span<const int> target) {
  if (source.empty()) return Status::error("the source gives no tokens");
  if (target.empty()) return Status::error("the target has no tokens (not even its start)");
  if (Status status = encoder_.run(source); !status) return status;
  return decoder_.run(target, {}, &encoder_.final_normalized());
}

// Rows whose bias is this far under the largest are left out of the rows read every step.
constexpr float kClosedBiasGap = 30.0f;

EncoderDecoderForward::NextTokenRows& EncoderDecoderForward::next_token_rows() {
  if (next_token_rows_) return *next_token_rows_;
  auto rows = std::make_unique<NextTokenRows>();
  const TransformerWeights& w = decoder_.model().weights();
  const MatrixView& unembedding = w.unembedding;  // (vocab_size, d_model)
  const int d = unembedding.cols;
  float top_bias = 0.0f;
  if (!w.unembedding_bias.empty())
    top_bias =
        *std::max_element(w.unembedding_bias.data, w.unembedding_bias.data + unembedding.rows);
  for (int v = 0; v < unembedding.rows; ++v) {
    const float bias = w.unembedding_bias.empty() ? 0.0f : w.unembedding_bias.data[v];
    const float* row = unembedding.data + static_cast<std::ptrdiff_t>(v) * unembedding.stride;
    // (a NaN bias is read every step, as the full argmax would meet it)
    if (!(bias < top_bias - kClosedBiasGap)) {
      rows->open_ids.push_back(v);
      rows->open_rows.insert(rows->open_rows.end(), row, row + d);
      rows->open_bias.push_back(bias);
    } else {
      double squares = 0.0;
      for (int k = 0; k < d; ++k) squares += static_cast<double>(row[k]) * row[k];
      rows->closed_ids.push_back(v);
      rows->closed_norm.push_back(static_cast<float>(std::sqrt(squares)));
      rows->closed_bias.push_back(bias);
    }
  }
  // Packed once for the kernel (where it runs), so that a pass over many positions does not
  // pack these rows again: OpenBLAS would copy all of them into its panels at every product.
  if (blas::packed_available() && !rows->open_ids.empty())
    rows->open_packed.pack(d, static_cast<int>(rows->open_ids.size()), rows->open_rows.data(), d,
                           /*transposed=*/true);
  next_token_rows_ = std::move(rows);
  return *next_token_rows_;
}

int EncoderDecoderForward::most_likely_next(int position) {
  int next = 0;
  most_likely_next(position, 1, std::span<int>(&next, 1));
  return next;
}

void EncoderDecoderForward::most_likely_next(int first, int count, std::span<int> out) {
  NextTokenRows& rows = next_token_rows();
  const TransformerWeights& w = decoder_.model().weights();
  const MatrixView& unembedding = w.unembedding;  // (vocab_size, d_model)
  const int d = unembedding.cols;
  if (unembedding.empty() || rows.open_ids.empty()) {  // nothing gathered: read them all
    for (int i = 0; i < count; ++i) {
      const RowVector logits = decoder_.logits(first + i);  // (vocab_size)
      out[static_cast<std::size_t>(i)] = static_cast<int>(
          std::max_element(logits.data(), logits.data() + logits.size()) - logits.data());
    }
    return;
  }
  // 1. The open rows' logits of every position asked, one product over the gathered rows for
  // each block of positions (the scratch stays within kBlock rows of logits).
  constexpr int kBlock = 32;
  const int open = static_cast<int>(rows.open_ids.size());
  rows.logits.resize(static_cast<std::size_t>(std::min(count, kBlock)) *
                     static_cast<std::size_t>(open));
  for (int i = 0; i < count; ++i) {
    if (i % kBlock == 0) {
      const int block = std::min(kBlock, count - i);
      const float* x = decoder_.final_normalized().row(first + i);  // (block, d_model)
      if (block >= 2 && !rows.open_packed.empty())
        blas::gemm(block, x, d, rows.open_packed, rows.logits.data(), open);  // (block, open)
      else
        blas::gemm(block, open, d, x, d, rows.open_rows.data(), d, rows.logits.data(), open,
                   /*transpose_b=*/true);  // (block, open rows)
    }
    const float* x = decoder_.final_normalized().row(first + i);  // (d_model)
    const float* logits = rows.logits.data() + static_cast<std::ptrdiff_t>(i % kBlock) * open;
    int best = -1;
    float best_logit = 0.0f;
    for (int r = 0; r < open; ++r) {
      const float logit = logits[r] + rows.open_bias[static_cast<std::size_t>(r)];
      // NaN as max_element meets it: never larger, never replaced (the first row's stays)
      if (best < 0 || logit > best_logit) {
        best = rows.open_ids[static_cast<std::size_t>(r)];
        best_logit = logit;
      }
    }
    // 2. A closed row v can win only if x · row_v + bias_v ≥ the best: x · row_v ≤ |x| |row_v|.
    // The bound gets a relative margin for the float products' rounding; a row that passes is
    // computed as logits() does, and wins on a larger logit or an equal one at a smaller id
    // (max_element's first of equal ones).
    double squares = 0.0;
    for (int k = 0; k < d; ++k) squares += static_cast<double>(x[k]) * x[k];
    const float x_norm = static_cast<float>(std::sqrt(squares));
    for (std::size_t c = 0; c < rows.closed_ids.size(); ++c) {
      const float reach = rows.closed_norm[c] * x_norm * (1.0f + 1e-4f) + 1e-6f;
      if (!(rows.closed_bias[c] + reach >= best_logit)) continue;
      const int v = rows.closed_ids[c];
      const float* row = unembedding.data + static_cast<std::ptrdiff_t>(v) * unembedding.stride;
      float logit = 0.0f;
      blas::gemm(1, 1, d, x, d, row, d, &logit, 1, /*transpose_b=*/true);
      logit += rows.closed_bias[c];
      if (logit > best_logit || (logit == best_logit && v < best)) {
        best = v;
        best_logit = logit;
      }
    }
    out[static_cast<std::size_t>(i)] = best;
  }
}

Result<std::vector<int>> greedy_translation(EncoderDecoderForward& forward,
                                            std::span<const int> source, int start, int stop,
                                            int limit) {
  limit = std::min(limit, forward.decoder().model().config().context - 1);
  std::vector<int> target{start};
  // 1. The draft: the translation the decoder read last (the source's before a keystroke, as a
  // rule), checked in one pass over all its positions: the weights are read once, not once a
  // token. Each position's most likely next token is what a step would choose after the tokens
  // before it; the draft's tokens are kept while they are those choices.
  std::vector<int> draft = forward.decoder().tokens();
  if (draft.size() > static_cast<std::size_t>(limit) + 1)
    draft.resize(static_cast<std::size_t>(limit) + 1);
  if (draft.size() >= 2 && draft.front() == start) {
    if (Status status = forward.run(source, draft); !status) return status;
    std::vector<int> chosen(draft.size());
    forward.most_likely_next(0, static_cast<int>(draft.size()), chosen);
    for (std::size_t i = 0; i < draft.size(); ++i) {
      if (static_cast<int>(target.size()) > limit) break;
      if (chosen[i] == stop) {  // finished within the draft: the pass left on the translation
        if (Status status = forward.run(source, target); !status) return status;
        return target;
      }
      target.push_back(chosen[i]);
      if (i + 1 >= draft.size() || draft[i + 1] != chosen[i]) break;  // the steps go on from here
    }
  }
  // 2. One token a step (the KV cache computes its position alone) until the stop or the limit.
  for (;;) {
    if (Status status = forward.run(source, target); !status) return status;
    if (static_cast<int>(target.size()) > limit) break;
    const int next = forward.most_likely_next(forward.decoder().size() - 1);
    if (next == stop) break;
    target.push_back(next);
  }
  return target;
}

Result<std::vector<int>> greedy_translation_reference(EncoderDecoderForward& forward,
                                                      std::span<const int> source, int start,
                                                      int stop, int limit) {
  const int vocab = forward.decoder().model().config().vocab_size;
  limit = std::min(limit, forward.decoder().model().config().context - 1);
  std::vector<int> target{start};
  std::vector<float> logits(static_cast<std::size_t>(vocab));  // (vocab_size)
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
