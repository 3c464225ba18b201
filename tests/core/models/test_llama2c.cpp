// stories260K, a real pretrained Llama-architecture model (assets/models/stories260K/), read and
// run: greedy generation from an empty prompt must print exactly what llama2.c's own run.c
// prints (EXPECTED-greedy.txt: its first two paragraphs, recorded with run.c -t 0); damaged files
// give clear errors.
#include "core/models/llama2c.hpp"
#include "core/models/llama2c_tokenizer.hpp"
#include "core/models/reference_forward.hpp"
#include "core/models/transformer_forward.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;

const fs::path kModelDir = fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/stories260K";

Llama2cModel load_model(const fs::path& path = kModelDir / "stories260K.bin") {
  Result<Llama2cModel> model = Llama2cModel::load(path.string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  return std::move(*model);
}

Transformer load_transformer() {
  Result<Transformer> model = load_llama2c((kModelDir / "stories260K.bin").string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  return std::move(*model);
}

// run.c's greedy loop: BOS, then the most likely token each step, printed as decoded, until BOS
// comes again or 256 positions. `next_logits(token)` gives the logits after `token`.
std::string greedy_text(const Llama2cTokenizer& tokenizer,
                        const std::function<std::vector<float>(int)>& next_logits) {
  std::string text;
  int token = Llama2cTokenizer::kBos;
  for (int position = 0; position < 256; ++position) {
    const int next = argmax(next_logits(token));
    if (next == Llama2cTokenizer::kBos) break;
    text += tokenizer.decode(token, next);
    token = next;
  }
  // EXPECTED-greedy.txt holds its first two paragraphs (what llama2.c documents for the model).
  const std::size_t first = text.find('\n');
  const std::size_t second = first == std::string::npos ? first : text.find('\n', first + 1);
  return second == std::string::npos ? text : text.substr(0, second + 1);
}

// The file with `edit` applied to its bytes, written into `dir`.
fs::path damaged(const testing::TempDir& dir, const std::function<void(std::string&)>& edit) {
  std::string bytes = testing::read_whole_file(kModelDir / "stories260K.bin");
  edit(bytes);
  fs::path path = dir.path / "damaged.bin";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string load_error(const fs::path& path) {
  Result<Llama2cModel> model = Llama2cModel::load(path.string());
  REQUIRE_FALSE(model.ok());
  return model.error();
}

void set_header(std::string& bytes, int index, std::int32_t value) {
  std::memcpy(bytes.data() + 4 * index, &value, 4);
}

}  // namespace

TEST_CASE("stories260K: the header read as the model card says") {
  const Llama2cModel model = load_model();
  const Llama2cConfig& c = model.config();
  CHECK(c.dim == 64);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.n_kv_heads == 4);
  CHECK(c.hidden_dim == 172);
  CHECK(c.vocab_size == 512);
  CHECK(c.seq_len == 512);
  CHECK(c.shared_classifier);
}

TEST_CASE("stories260K: greedy generation from an empty prompt is llama2.c's, word for word") {
  const Transformer model = load_transformer();
  Result<Llama2cTokenizer> tokenizer =
      Llama2cTokenizer::load((kModelDir / "tok512.bin").string(), model.config().vocab_size);
  REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.error());
  const std::string expected = testing::read_whole_file(kModelDir / "EXPECTED-greedy.txt");

  SUBCASE("the plain reference, one token at a time") {
    ReferenceForward forward(model);
    CHECK(greedy_text(*tokenizer, [&](int token) {
            Result<std::vector<float>> logits = forward.step(token);
            REQUIRE(logits.ok());
            return *logits;
          }) == expected);
    // Every head's attention over the tokens so far is kept, and is a distribution.
    const int last = forward.positions() - 1;
    REQUIRE(last > 10);
    for (int layer = 0; layer < 5; ++layer)
      for (int head = 0; head < 8; ++head) {
        const std::vector<float>& alpha = forward.row(last, layer).attention[head];
        REQUIRE(alpha.size() == static_cast<std::size_t>(last + 1));
        CHECK(std::accumulate(alpha.begin(), alpha.end(), 0.0) ==
              doctest::Approx(1.0).epsilon(1e-5));
      }
  }
  SUBCASE("the fast pass, the text growing by a token each run (its key/value cache)") {
    TransformerForward forward(model);
    std::vector<int> tokens;
    CHECK(greedy_text(*tokenizer, [&](int token) {
            tokens.push_back(token);
            REQUIRE(forward.run(tokens).is_ok());
            CHECK(forward.last_work().first_position == static_cast<int>(tokens.size()) - 1);
            const RowVector logits = forward.last_logits();
            return std::vector<float>(logits.data(), logits.data() + logits.size());
          }) == expected);
  }
}

TEST_CASE("stories260K's tokenizer: text in, the same text out, unknown characters as bytes") {
  const Llama2cModel model = load_model();
  Result<Llama2cTokenizer> tokenizer =
      Llama2cTokenizer::load((kModelDir / "tok512.bin").string(), model.config().vocab_size);
  REQUIRE(tokenizer.ok());
  for (const std::string text : {"Once upon a time, there was a little girl named Lily.",
                                 "caf\xc3\xa9 \xe2\x9c\x93", "  two  spaces"}) {
    const std::vector<int> ids = tokenizer->encode(text);
    REQUIRE(ids.size() > 1);
    CHECK(ids.front() == Llama2cTokenizer::kBos);
    std::string back;
    for (std::size_t i = 1; i < ids.size(); ++i) back += tokenizer->decode(ids[i - 1], ids[i]);
    CHECK(back == text);
  }
  // Merges happen: far fewer tokens than characters for plain English.
  CHECK(tokenizer->encode("Once upon a time").size() < 10);
}

TEST_CASE("a damaged checkpoint is refused with a message naming the file and the fault") {
  testing::TempDir dir;
  CHECK(load_error(dir.path / "missing.bin").find("cannot open") != std::string::npos);
  const std::string truncated =
      load_error(damaged(dir, [](std::string& b) { b.resize(b.size() - 100); }));
  CHECK(truncated.find("truncated") != std::string::npos);
  CHECK(truncated.find("damaged.bin") != std::string::npos);
  CHECK(load_error(damaged(dir, [](std::string& b) { b += "extra"; })).find("trailing") !=
        std::string::npos);
  CHECK(load_error(damaged(dir, [](std::string& b) { b.resize(10); })).find("too short") !=
        std::string::npos);
  // Absurd sizes: never used to size anything.
  CHECK(load_error(damaged(dir, [](std::string& b) { set_header(b, 0, -64); })).find("dim") !=
        std::string::npos);
  CHECK(load_error(damaged(dir, [](std::string& b) {
          set_header(b, 2, 1 << 30);
        })).find("n_layers") != std::string::npos);
  CHECK(load_error(damaged(dir, [](std::string& b) {
          set_header(b, 5, std::numeric_limits<std::int32_t>::min());
        })).find("vocab_size") != std::string::npos);
  CHECK(load_error(damaged(dir, [](std::string& b) { set_header(b, 4, 3); })).find("evenly") !=
        std::string::npos);
  // A weight that is not a number.
  CHECK(load_error(damaged(dir, [](std::string& b) {
          const float nan = std::numeric_limits<float>::quiet_NaN();
          std::memcpy(b.data() + 28 + 4 * 1000, &nan, 4);
        })).find("not a finite number") != std::string::npos);
}

// stories260K rewritten as llama2.c's export.py writes version 1: the "ak42" header padded to 256
// bytes, then the arrays in version 1's order (norms first, no RoPE tables).
std::string as_version1(const std::string& v0, int version = 1) {
  std::int32_t h[7];
  std::memcpy(h, v0.data(), sizeof h);
  const std::size_t L = 5, d = 64, hidden = 172, kv = 32, V = 512, S = 512, hs = 8;
  // Version 0's arrays, in floats: emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final.
  const std::size_t sizes[] = {V * d,          L * d,          L * d * d, L * kv * d,
                               L * kv * d,     L * d * d,      L * d,     L * hidden * d,
                               L * d * hidden, L * hidden * d, d};
  std::vector<std::string> parts;
  std::size_t at = 28;
  for (const std::size_t floats : sizes) {
    parts.push_back(v0.substr(at, 4 * floats));
    at += 4 * floats;
  }
  at += 2 * 4 * S * hs / 2;  // the legacy RoPE tables
  REQUIRE(at == v0.size());  // shared classifier: nothing after
  std::string out(256, '\0');
  const std::uint32_t magic = 0x616b3432u;
  std::memcpy(out.data(), &magic, 4);
  std::memcpy(out.data() + 4, &version, 4);
  std::memcpy(out.data() + 8, h, sizeof h);
  out[8 + sizeof h] = 1;  // shared classifier
  for (const int i : {1, 6, 10, 0, 2, 3, 4, 5, 7, 8, 9}) out += parts[static_cast<std::size_t>(i)];
  return out;
}

TEST_CASE("llama2.c version 1 (\"ak42\") reads as the same model, version 2 is refused by name") {
  testing::TempDir dir;
  const std::string v0 = testing::read_whole_file(kModelDir / "stories260K.bin");
  const fs::path v1_path = dir.path / "stories260K-v1.bin";
  std::ofstream(v1_path, std::ios::binary) << as_version1(v0);
  Result<Transformer> v1 = load_llama2c(v1_path.string());
  REQUIRE_MESSAGE(v1.ok(), v1.error());
  CHECK(v1->format() == "llama2.c version 1, fp32");
  const Transformer original = load_transformer();
  CHECK(original.format() == "llama2.c version 0, fp32");
  // The same numbers: the same logits for the same text.
  TransformerForward a(original), b(*v1);
  const std::vector<int> tokens = {1, 403, 407, 261, 378, 381};
  REQUIRE(a.run(tokens).is_ok());
  REQUIRE(b.run(tokens).is_ok());
  CHECK((a.last_logits() - b.last_logits()).cwiseAbs().maxCoeff() == 0.0f);

  std::string cut = as_version1(v0);
  cut.resize(cut.size() - 4);
  std::ofstream(dir.path / "cut.bin", std::ios::binary) << cut;
  CHECK(load_error(dir.path / "cut.bin").find("truncated") != std::string::npos);
  std::ofstream(dir.path / "short.bin", std::ios::binary) << as_version1(v0).substr(0, 100);
  CHECK(load_error(dir.path / "short.bin").find("too short for a llama2.c version 1 header") !=
        std::string::npos);
  std::ofstream(dir.path / "v2.bin", std::ios::binary) << as_version1(v0, 2);
  CHECK(load_error(dir.path / "v2.bin")
            .find("version 2 (int8-quantized weights); versions 0 and "
                  "1 (fp32) are read") != std::string::npos);
}

TEST_CASE("a damaged tokenizer file is refused") {
  testing::TempDir dir;
  std::string bytes = testing::read_whole_file(kModelDir / "tok512.bin");
  const fs::path short_path = dir.path / "short.bin";
  std::ofstream(short_path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  Result<Llama2cTokenizer> cut = Llama2cTokenizer::load(short_path.string(), 512);
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().find("short.bin") != std::string::npos);
  // A vocabulary of another size than the model's.
  CHECK_FALSE(Llama2cTokenizer::load((kModelDir / "tok512.bin").string(), 500).ok());
}

TEST_CASE("the forward passes refuse ids outside the vocabulary and texts past the context") {
  const Transformer model = load_transformer();
  ReferenceForward reference(model);
  CHECK_FALSE(reference.step(600).ok());
  CHECK_FALSE(reference.step(-1).ok());
  CHECK(reference.step(1).ok());
  TransformerForward forward(model);
  const std::vector<int> bad = {1, 600};
  const Status refused = forward.run(bad);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.message() == "token 1 has id 600, outside the vocabulary of 512");
  CHECK(forward.size() == 0);  // nothing changed
  const std::vector<int> too_long(513, 1);
  CHECK(forward.run(too_long).message() == "513 tokens: the model's context holds 512");
}

}  // namespace attnviz
