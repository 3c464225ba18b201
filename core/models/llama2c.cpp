#include "core/models/llama2c.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnviz {
namespace {

// Sizes past these are no model this app can show (and a header claiming them is broken).
constexpr std::int64_t kMaxDim = 1 << 16;
constexpr std::int64_t kMaxLayers = 1024;
constexpr std::int64_t kMaxVocab = 1 << 22;
constexpr std::int64_t kMaxSeqLen = 1 << 20;

// a · b, or -1 when it would pass the largest file we could map.
std::int64_t times(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / 4 / a) return -1;
  return a * b;
}

}  // namespace

Result<Llama2cModel> Llama2cModel::load(const std::string& path) {
  Result<MappedFile> mapped = MappedFile::open(path);
  if (!mapped) return mapped.status();
  Llama2cModel model;
  model.file_ = std::move(*mapped);
  const MappedFile& file = model.file_;
  constexpr std::size_t kHeaderBytes = 7 * sizeof(std::int32_t);
  if (file.size() < kHeaderBytes)
    return Status::error(path + ": too short for a llama2.c header (" +
                         std::to_string(file.size()) + " bytes)");
  std::int32_t header[7];
  std::memcpy(header, file.data(), kHeaderBytes);
  if (static_cast<std::uint32_t>(header[0]) == 0x616b3432u)
    return Status::error(path +
                         ": a llama2.c checkpoint of version 1 or later (\"ak42\"); only version "
                         "0 is read so far");
  Llama2cConfig& c = model.config_;
  c.dim = header[0];
  c.hidden_dim = header[1];
  c.n_layers = header[2];
  c.n_heads = header[3];
  c.n_kv_heads = header[4];
  c.shared_classifier = header[5] > 0;
  c.vocab_size = header[5] == std::numeric_limits<std::int32_t>::min() ? 0 : std::abs(header[5]);
  c.seq_len = header[6];
  const auto bad = [&](const char* what, std::int64_t value, std::int64_t limit) {
    return Status::error(path + ": header: " + what + " = " + std::to_string(value) +
                         " (expected 1 to " + std::to_string(limit) + ")");
  };
  if (c.dim < 1 || c.dim > kMaxDim) return bad("dim", c.dim, kMaxDim);
  if (c.hidden_dim < 1 || c.hidden_dim > 4 * kMaxDim)
    return bad("hidden_dim", c.hidden_dim, 4 * kMaxDim);
  if (c.n_layers < 1 || c.n_layers > kMaxLayers) return bad("n_layers", c.n_layers, kMaxLayers);
  if (c.n_heads < 1 || c.n_heads > c.dim) return bad("n_heads", c.n_heads, c.dim);
  if (c.n_kv_heads < 1 || c.n_kv_heads > c.n_heads)
    return bad("n_kv_heads", c.n_kv_heads, c.n_heads);
  if (c.vocab_size < 1 || c.vocab_size > kMaxVocab)
    return bad("vocab_size", c.vocab_size, kMaxVocab);
  if (c.seq_len < 1 || c.seq_len > kMaxSeqLen) return bad("seq_len", c.seq_len, kMaxSeqLen);
  if (c.dim % c.n_heads != 0 || c.head_size() % 2 != 0)
    return Status::error(path + ": header: dim " + std::to_string(c.dim) + " is not " +
                         std::to_string(c.n_heads) + " heads of an even size");
  if (c.n_heads % c.n_kv_heads != 0)
    return Status::error(path + ": header: " + std::to_string(c.n_heads) +
                         " query heads cannot share " + std::to_string(c.n_kv_heads) +
                         " key/value heads evenly");

  // The floats each array takes, in file order, and the file's size they add up to.
  const std::int64_t L = c.n_layers, d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size,
                     s = c.seq_len, hs = c.head_size();
  const std::int64_t counts[] = {
      times(v, d),                            // token_embedding
      times(L, d),                            // rms_att
      times(L, times(d, d)),                  // wq
      times(L, times(kv, d)),                 // wk
      times(L, times(kv, d)),                 // wv
      times(L, times(d, d)),                  // wo
      times(L, d),                            // rms_ffn
      times(L, times(h, d)),                  // w1
      times(L, times(d, h)),                  // w2
      times(L, times(h, d)),                  // w3
      d,                                      // rms_final
      times(s, hs / 2),                       // legacy RoPE table (real)
      times(s, hs / 2),                       // legacy RoPE table (imaginary)
      c.shared_classifier ? 0 : times(v, d),  // classifier
  };
  std::int64_t floats = 0;
  for (const std::int64_t count : counts) {
    if (count < 0 || floats > std::numeric_limits<std::int64_t>::max() / 8 - count)
      return Status::error(path + ": header: sizes too large for any file");
    floats += count;
  }
  const std::int64_t needed = static_cast<std::int64_t>(kHeaderBytes) + 4 * floats;
  if (static_cast<std::int64_t>(file.size()) != needed)
    return Status::error(
        path + ": " + std::to_string(file.size()) + " bytes, but its header (dim " +
        std::to_string(c.dim) + ", " + std::to_string(c.n_layers) + " layers, vocabulary " +
        std::to_string(c.vocab_size) + ") needs " + std::to_string(needed) +
        (static_cast<std::int64_t>(file.size()) < needed ? ": truncated" : ": trailing data"));
  // The data starts at byte 28: floats are read with memcpy-safe alignment only if the map's
  // base is aligned (it is: a page), and 28 is a multiple of 4.
  const auto* base = reinterpret_cast<const float*>(file.data() + kHeaderBytes);
  const float* at = base;
  const float* arrays[14];
  for (int i = 0; i < 14; ++i) {
    arrays[i] = at;
    at += counts[i];
  }
  Llama2cWeights& w = model.weights_;
  w.token_embedding = arrays[0];
  w.rms_att = arrays[1];
  w.wq = arrays[2];
  w.wk = arrays[3];
  w.wv = arrays[4];
  w.wo = arrays[5];
  w.rms_ffn = arrays[6];
  w.w1 = arrays[7];
  w.w2 = arrays[8];
  w.w3 = arrays[9];
  w.rms_final = arrays[10];
  w.classifier = c.shared_classifier ? arrays[0] : arrays[13];
  // NaN or infinity in a weight would reach every number shown: refuse the file.
  for (std::int64_t i = 0; i < floats - counts[11] - counts[12] - counts[13]; ++i)
    if (!std::isfinite(base[i]))
      return Status::error(path + ": a weight is not a finite number (float " + std::to_string(i) +
                           " of the data)");
  for (std::int64_t i = 0; i < counts[13]; ++i)
    if (!std::isfinite(arrays[13][i]))
      return Status::error(path + ": a classifier weight is not a finite number");
  return model;
}

Result<Transformer> Llama2cModel::to_transformer() && {
  const Llama2cConfig& c = config_;
  const Llama2cWeights& w = weights_;
  Transformer model;
  TransformerConfig config;
  config.architecture = "llama";
  config.d_model = c.dim;
  config.n_layers = c.n_layers;
  config.n_heads = c.n_heads;
  config.n_kv_heads = c.n_kv_heads;
  config.d_head = c.head_size();
  config.d_ff = c.hidden_dim;
  config.vocab_size = c.vocab_size;
  config.context = c.seq_len;
  config.norm = NormKind::RMSNorm;
  config.norm_epsilon = 1e-5f;
  config.positions = PositionKind::Rotary;
  config.feed_forward = FeedForwardKind::SwiGLU;

  // W (out, in) row-major in the file -> Wᵀ (in, out) row-major, owned.
  const auto transposed = [&model](const float* source, int out, int in) {
    float* target = model.allocate(static_cast<std::size_t>(out) * static_cast<std::size_t>(in));
    for (int o = 0; o < out; ++o)
      for (int i = 0; i < in; ++i)
        target[static_cast<std::ptrdiff_t>(i) * out + o] =
            source[static_cast<std::ptrdiff_t>(o) * in + i];
    return MatrixView{target, in, out, out};
  };
  const auto row = [](const float* base, int layer, int size) {
    return VectorView{base + static_cast<std::ptrdiff_t>(layer) * size, size};
  };
  TransformerWeights weights;
  weights.token_embedding = MatrixView{w.token_embedding, c.vocab_size, c.dim, c.dim};
  const int d = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  for (int l = 0; l < c.n_layers; ++l) {
    const auto at = [l](const float* base, int rows, int cols) {
      return base + static_cast<std::ptrdiff_t>(l) * rows * cols;
    };
    TransformerLayer layer;
    layer.attention_norm_weight = row(w.rms_att, l, d);
    layer.query = transposed(at(w.wq, d, d), d, d);    // (d_model, n_heads · d_head)
    layer.key = transposed(at(w.wk, kv, d), kv, d);    // (d_model, n_kv_heads · d_head)
    layer.value = transposed(at(w.wv, kv, d), kv, d);  // (d_model, n_kv_heads · d_head)
    layer.output = transposed(at(w.wo, d, d), d, d);   // (n_heads · d_head, d_model)
    layer.mlp_norm_weight = row(w.rms_ffn, l, d);
    layer.gate = transposed(at(w.w1, hidden, d), hidden, d);  // (d_model, d_ff)
    layer.up = transposed(at(w.w3, hidden, d), hidden, d);    // (d_model, d_ff)
    layer.down = transposed(at(w.w2, d, hidden), d, hidden);  // (d_ff, d_model)
    weights.layers.push_back(layer);
  }
  weights.final_norm_weight = VectorView{w.rms_final, d};
  weights.unembedding = MatrixView{w.classifier, c.vocab_size, d, d};
  std::string source = file_.path();
  model.keep_file(std::move(file_));
  Status checked =
      model.set_weights(std::move(config), std::move(weights), source, "llama2.c version 0, fp32");
  if (!checked) return checked;
  return model;
}

Result<Transformer> load_llama2c(const std::string& path) {
  Result<Llama2cModel> checkpoint = Llama2cModel::load(path);
  if (!checkpoint) return checkpoint.status();
  return std::move(*checkpoint).to_transformer();
}

}  // namespace attnviz
