// Fuzz target: llama2.c checkpoints (version 0 and version 1) from arbitrary bytes. The input is
// the file. Loaded; when it loads, the header is consistent (every size at least 1, dim a whole
// number of heads of an even size, the query heads shared evenly by the key/value heads, the
// version 0 or 1), the file holds exactly what the header needs, every weight the model reads
// is a finite number (each one touched), the Transformer made from it agrees with the header,
// and a forward pass over its first tokens runs. Every error names the file. The file goes to
// a temporary folder of this process.
#include "core/models/llama2c.hpp"
#include "core/models/transformer_forward.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// The folder this target writes its files in.
const std::string& scratch_folder() {
  return attnviz::fuzz::scratch_folder("llama2c", {"fuzz.bin"});
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

void check_finite(const float* values, std::int64_t count) {
  FUZZ_CHECK(values != nullptr);
  for (std::int64_t i = 0; i < count; ++i) FUZZ_CHECK(std::isfinite(values[i]));
}

void check_views(const attnviz::Transformer& model) {
  const auto finite_matrix = [](const attnviz::MatrixView& m) {
    FUZZ_CHECK(!m.empty() && m.stride >= m.cols);
    for (int r = 0; r < m.rows; ++r)
      for (int c = 0; c < m.cols; ++c) FUZZ_CHECK(std::isfinite(m.at(r, c)));
  };
  const auto finite_vector = [](const attnviz::VectorView& v) {
    FUZZ_CHECK(v.size >= 1);
    check_finite(v.data, v.size);
  };
  const attnviz::TransformerConfig& c = model.config();
  const attnviz::TransformerWeights& w = model.weights();
  finite_matrix(w.token_embedding);
  finite_matrix(w.unembedding);
  FUZZ_CHECK(w.unembedding.rows == c.vocab_size && w.unembedding.cols == c.d_model);
  finite_vector(w.final_norm_weight);
  for (const attnviz::TransformerLayer& l : w.layers) {
    FUZZ_CHECK(l.query.rows == c.d_model && l.query.cols == c.n_heads * c.d_head);
    FUZZ_CHECK(l.key.cols == c.n_kv_heads * c.d_head && l.value.cols == c.n_kv_heads * c.d_head);
    FUZZ_CHECK(l.up.cols == c.d_ff && l.gate.cols == c.d_ff && l.down.rows == c.d_ff);
    for (const attnviz::MatrixView* m :
         {&l.query, &l.key, &l.value, &l.output, &l.gate, &l.up, &l.down})
      finite_matrix(*m);
    finite_vector(l.attention_norm_weight);
    finite_vector(l.mlp_norm_weight);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch_folder() + "/fuzz.bin";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(file != nullptr);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, file) == size);
  FUZZ_CHECK(std::fclose(file) == 0);

  attnviz::Result<attnviz::Llama2cModel> checkpoint = attnviz::Llama2cModel::load(path);
  if (!checkpoint) {
    FUZZ_CHECK(starts_with(checkpoint.error(), path + ": "));
    return 0;
  }
  const attnviz::Llama2cConfig c = checkpoint->config();
  FUZZ_CHECK(c.version == 0 || c.version == 1);
  FUZZ_CHECK(c.dim >= 1 && c.hidden_dim >= 1 && c.n_layers >= 1 && c.vocab_size >= 1 &&
             c.seq_len >= 1);
  FUZZ_CHECK(c.n_heads >= 1 && c.dim % c.n_heads == 0 && c.head_size() % 2 == 0);
  FUZZ_CHECK(c.n_kv_heads >= 1 && c.n_heads % c.n_kv_heads == 0);
  // The file holds the header and exactly the arrays it names.
  const std::int64_t L = c.n_layers, d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size,
                     s = c.seq_len;
  const std::int64_t floats = v * d + 2 * L * d + L * d * d * 2 + L * kv * d * 2 + 3 * L * h * d +
                              d + (c.version == 0 ? s * (d / c.n_heads) : 0) +
                              (c.shared_classifier ? 0 : v * d);
  FUZZ_CHECK(static_cast<std::int64_t>(size) == (c.version == 0 ? 28 : 256) + 4 * floats);
  const attnviz::Llama2cWeights& w = checkpoint->weights();
  check_finite(w.token_embedding, v * d);
  check_finite(w.classifier, v * d);
  check_finite(w.rms_att, L * d);
  check_finite(w.rms_ffn, L * d);
  check_finite(w.rms_final, d);
  for (const float* m : {w.wq, w.wo}) check_finite(m, L * d * d);
  for (const float* m : {w.wk, w.wv}) check_finite(m, L * kv * d);
  for (const float* m : {w.w1, w.w2, w.w3}) check_finite(m, L * h * d);

  attnviz::Result<attnviz::Transformer> model = std::move(*checkpoint).to_transformer();
  if (!model) {
    FUZZ_CHECK(starts_with(model.error(), path));
    return 0;
  }
  const attnviz::TransformerConfig& config = model->config();
  FUZZ_CHECK(config.architecture == "llama");
  FUZZ_CHECK(config.d_model == c.dim && config.n_layers == c.n_layers &&
             config.n_heads == c.n_heads && config.n_kv_heads == c.n_kv_heads &&
             config.d_head * c.n_heads == c.dim && config.d_ff == c.hidden_dim &&
             config.vocab_size == c.vocab_size && config.context == c.seq_len);
  FUZZ_CHECK(static_cast<int>(model->weights().layers.size()) == c.n_layers);
  check_views(*model);
  // A forward pass over the first tokens runs (its numbers may overflow: the weights are any
  // finite floats).
  std::vector<int> tokens;
  for (int i = 0; i < std::min(c.seq_len, 3); ++i) tokens.push_back(i % c.vocab_size);
  attnviz::TransformerForward forward(*model);
  FUZZ_CHECK(forward.run(tokens).ok());
  FUZZ_CHECK(forward.size() == static_cast<int>(tokens.size()));
  return 0;
}
