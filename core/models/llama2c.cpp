#include "core/models/llama2c.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

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
  Llama2cConfig& c = model.config_;

  // The header: version 0's 7 int32, or version 1's magic, version, 7 int32 and a byte, padded
  // to 256 bytes.
  constexpr std::uint32_t kMagic = 0x616b3432u;  // "ak42"
  constexpr std::size_t kVersion0Header = 7 * sizeof(std::int32_t);
  constexpr std::size_t kVersion1Header = 256;
  std::uint32_t magic = 0;
  if (file.size() >= sizeof magic) std::memcpy(&magic, file.data(), sizeof magic);
  std::size_t header_bytes = kVersion0Header;
  std::int32_t header[7];
  if (magic == kMagic) {
    if (file.size() < kVersion1Header)
      return Status::error(path + ": too short for a llama2.c version 1 header (" +
                           std::to_string(file.size()) + " bytes)");
    std::int32_t version = 0;
    std::memcpy(&version, file.data() + 4, sizeof version);
    if (version != 1)
      return Status::error(path + ": a llama2.c checkpoint of version " + std::to_string(version) +
                           (version == 2 ? " (int8-quantized weights)" : "") +
                           "; versions 0 and 1 (fp32) are read");
    c.version = 1;
    std::memcpy(header, file.data() + 8, sizeof header);
    c.shared_classifier = file.data()[8 + sizeof header] != 0;
    header_bytes = kVersion1Header;
  } else {
    if (file.size() < kVersion0Header)
      return Status::error(path + ": too short for a llama2.c header (" +
                           std::to_string(file.size()) + " bytes)");
    std::memcpy(header, file.data(), sizeof header);
    c.version = 0;
    c.shared_classifier = header[5] > 0;  // version 0: a negative vocab_size, an own classifier
  }
  c.dim = header[0];
  c.hidden_dim = header[1];
  c.n_layers = header[2];
  c.n_heads = header[3];
  c.n_kv_heads = header[4];
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

  // The arrays in file order: how many floats each takes, and where its pointer goes (none for
  // version 0's legacy RoPE tables, which are skipped).
  const std::int64_t L = c.n_layers, d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size,
                     s = c.seq_len, hs = c.head_size();
  Llama2cWeights& w = model.weights_;
  struct Array {
    std::int64_t floats;
    const float** target;
  };
  const Array embedding{times(v, d), &w.token_embedding}, rms_att{times(L, d), &w.rms_att},
      wq{times(L, times(d, d)), &w.wq}, wk{times(L, times(kv, d)), &w.wk},
      wv{times(L, times(kv, d)), &w.wv}, wo{times(L, times(d, d)), &w.wo},
      rms_ffn{times(L, d), &w.rms_ffn}, w1{times(L, times(h, d)), &w.w1},
      w2{times(L, times(d, h)), &w.w2}, w3{times(L, times(h, d)), &w.w3},
      rms_final{d, &w.rms_final}, classifier{c.shared_classifier ? 0 : times(v, d), &w.classifier};
  std::vector<Array> arrays;
  if (c.version == 0)
    arrays = {embedding,
              rms_att,
              wq,
              wk,
              wv,
              wo,
              rms_ffn,
              w1,
              w2,
              w3,
              rms_final,
              Array{times(s, hs / 2), nullptr},
              Array{times(s, hs / 2), nullptr},
              classifier};
  else
    arrays = {rms_att, rms_ffn, rms_final, embedding, wq, wk, wv, wo, w1, w2, w3, classifier};
  std::int64_t floats = 0;
  for (const Array& array : arrays) {
    if (array.floats < 0 || floats > std::numeric_limits<std::int64_t>::max() / 8 - array.floats)
      return Status::error(path + ": header: sizes too large for any file");
    floats += array.floats;
  }
  const std::int64_t needed = static_cast<std::int64_t>(header_bytes) + 4 * floats;
  if (static_cast<std::int64_t>(file.size()) != needed)
    return Status::error(
        path + ": " + std::to_string(file.size()) + " bytes, but its header (dim " +
        std::to_string(c.dim) + ", " + std::to_string(c.n_layers) + " layers, vocabulary " +
        std::to_string(c.vocab_size) + ") needs " + std::to_string(needed) +
        (static_cast<std::int64_t>(file.size()) < needed ? ": truncated" : ": trailing data"));
  // The data starts at byte 28 or 256, multiples of 4 from a page-aligned map.
  const float* at = reinterpret_cast<const float*>(file.data() + header_bytes);
  for (const Array& array : arrays) {
    // NaN or infinity in a weight would reach every number shown: refuse the file.
    if (array.target != nullptr)
      for (std::int64_t i = 0; i < array.floats; ++i)
        if (!std::isfinite(at[i]))
          return Status::error(
              path + ": a weight is not a finite number (float " +
              std::to_string(at - reinterpret_cast<const float*>(file.data() + header_bytes) + i) +
              " of the data)");
    if (array.target != nullptr) *array.target = at;
    at += array.floats;
  }
  if (c.shared_classifier) w.classifier = w.token_embedding;
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
  Status checked = model.set_weights(std::move(config), std::move(weights), source,
                                     "llama2.c version " + std::to_string(c.version) + ", fp32");
  if (!checked) return checked;
  return model;
}

Result<Transformer> load_llama2c(const std::string& path) {
  Result<Llama2cModel> checkpoint = Llama2cModel::load(path);
  if (!checkpoint) return checkpoint.status();
  return std::move(*checkpoint).to_transformer();
}

}  // namespace attnviz
