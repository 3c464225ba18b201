#include "core/models/llama2c_tokenizer.hpp"

#include "core/models/mapped_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace attnviz {

Result<Llama2cTokenizer> Llama2cTokenizer::load(const std::string& path, int vocab_size) {
  Result<MappedFile> mapped = MappedFile::open(path);
  if (!mapped) return mapped.status();
  return parse(std::string_view(reinterpret_cast<const char*>(mapped->data()), mapped->size()),
               path, vocab_size);
}

Result<Llama2cTokenizer> Llama2cTokenizer::parse(std::string_view file, const std::string& path,
                                                 int vocab_size) {
  if (vocab_size < kMinVocabSize || vocab_size > kMaxVocabSize)
    return Status::error(path + ": a vocabulary of " + std::to_string(vocab_size) +
                         " tokens (a llama2.c tokenizer has " + std::to_string(kMinVocabSize) +
                         " ... " + std::to_string(kMaxVocabSize) +
                         ": <unk>, BOS, EOS, the 256 bytes, then merged tokens)");
  std::size_t at = 0;
  const auto read = [&](void* into, std::size_t bytes) {
    if (file.size() - at < bytes) return false;
    std::memcpy(into, file.data() + at, bytes);
    at += bytes;
    return true;
  };
  std::int32_t max_length = 0;
  if (!read(&max_length, 4) || max_length < 1 || max_length > 4096)
    return Status::error(path + ": not a llama2.c tokenizer (its longest token: " +
                         std::to_string(max_length) + " bytes)");
  Llama2cTokenizer tokenizer;
  // Each token takes at least 8 bytes of the file: no more are reserved than it can hold.
  const std::size_t fits = std::min(static_cast<std::size_t>(vocab_size), file.size() / 8);
  tokenizer.pieces_.reserve(fits);
  tokenizer.scores_.reserve(fits);
  for (int id = 0; id < vocab_size; ++id) {
    float score = 0;
    std::int32_t length = 0;
    if (!read(&score, 4) || !read(&length, 4))
      return Status::error(path + ": ends at token " + std::to_string(id) + " of " +
                           std::to_string(vocab_size));
    if (length < 0 || length > max_length || !std::isfinite(score))
      return Status::error(path + ": token " + std::to_string(id) + ": length " +
                           std::to_string(length) + " (the file's longest is " +
                           std::to_string(max_length) + ")");
    std::string piece(static_cast<std::size_t>(length), '\0');
    if (!read(piece.data(), piece.size()))
      return Status::error(path + ": ends inside token " + std::to_string(id));
    tokenizer.pieces_.push_back(std::move(piece));
    tokenizer.scores_.push_back(score);
  }
  if (at != file.size())
    return Status::error(path + ": " + std::to_string(file.size() - at) +
                         " bytes after the last of " + std::to_string(vocab_size) + " tokens");
  // Byte fallback encodes byte b as token b + 3: those 256 tokens must be the bytes.
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    if (tokenizer.pieces_[static_cast<std::size_t>(byte) + 3] != name)
      return Status::error(path + ": token " + std::to_string(byte + 3) + " is not the byte " +
                           name + " (llama2.c's tokens 3 ... 258 are the 256 bytes)");
  }
  tokenizer.sorted_.resize(tokenizer.pieces_.size());
  std::iota(tokenizer.sorted_.begin(), tokenizer.sorted_.end(), 0);
  std::stable_sort(tokenizer.sorted_.begin(), tokenizer.sorted_.end(), [&](int a, int b) {
    return tokenizer.pieces_[static_cast<std::size_t>(a)] <
           tokenizer.pieces_[static_cast<std::size_t>(b)];
  });
  return tokenizer;
}

int Llama2cTokenizer::lookup(std::string_view piece) const {
  const auto found = std::lower_bound(
      sorted_.begin(), sorted_.end(), piece,
      [&](int id, std::string_view p) { return pieces_[static_cast<std::size_t>(id)] < p; });
  return found != sorted_.end() && pieces_[static_cast<std::size_t>(*found)] == piece ? *found : -1;
}

std::vector<int> Llama2cTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  std::vector<std::size_t> covered;
  encode_covering(text, ids, covered);
  return ids;
}

void Llama2cTokenizer::encode_covering(std::string_view text, std::vector<int>& ids,
                                       std::vector<std::size_t>& covered) const {
  ids.assign(1, kBos);
  covered.assign(1, 0);
  if (text.empty()) return;
  // 1. A leading space, as SentencePiece adds one.
  if (const int space = lookup(" "); space >= 0) {
    ids.push_back(space);
    covered.push_back(0);
  }
  // 2. Each UTF-8 character as its token, or its bytes as byte tokens.
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    while (i + length < text.size() && length < 4 &&
           (static_cast<unsigned char>(text[i + length]) & 0xC0) == 0x80)
      ++length;
    const int id = lookup(text.substr(i, length));
    if (id >= 0) {
      ids.push_back(id);
      covered.push_back(length);
    } else {
      for (std::size_t b = 0; b < length; ++b) {
        ids.push_back(static_cast<unsigned char>(text[i + b]) + 3);
        covered.push_back(1);
      }
    }
    i += length;
  }
  // 3. Merge the best-scoring adjacent pair until none merges (BOS takes no part).
  std::string joined;
  for (;;) {
    float best_score = -1e10f;
    int best_id = -1;
    std::size_t best_at = 0;
    for (std::size_t i = 1; i + 1 < ids.size(); ++i) {
      joined = piece(ids[i]) + piece(ids[i + 1]);
      const int id = lookup(joined);
      if (id >= 0 && scores_[static_cast<std::size_t>(id)] > best_score) {
        best_score = scores_[static_cast<std::size_t>(id)];
        best_id = id;
        best_at = i;
      }
    }
    if (best_id < 0) break;
    ids[best_at] = best_id;
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(best_at) + 1);
    covered[best_at] += covered[best_at + 1];
    covered.erase(covered.begin() + static_cast<std::ptrdiff_t>(best_at) + 1);
  }
}

std::string Llama2cTokenizer::decode(int previous, int token) const {
  if (token < 0 || token >= size()) return {};
  std::string_view text = piece(token);
  if (previous == kBos && !text.empty() && text.front() == ' ') text.remove_prefix(1);
  unsigned byte = 0;
  if (text.size() == 6 && std::sscanf(std::string(text).c_str(), "<0x%02X>", &byte) == 1)
    return std::string(1, static_cast<char>(byte));
  return std::string(text);
}

namespace {

// The byte of a byte token's piece "<0xHH>", or -1.
int byte_of_piece(std::string_view piece) {
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  const int high = hex(piece[3]), low = hex(piece[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

}  // namespace

Result<std::vector<ModelToken>> Llama2cTokenizer::tokenize(std::string_view text) const {
  if (text.size() > kMaxTokenizedTextBytes)
    return Status::error("the text is " + std::to_string(text.size()) +
                         " bytes; a model's tokens are shown for at most " +
                         std::to_string(kMaxTokenizedTextBytes >> 20) + " MiB");
  std::vector<int> ids;
  std::vector<std::size_t> covered;
  encode_covering(text, ids, covered);
  std::vector<ModelToken> tokens(ids.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ModelToken& token = tokens[i];
    token.id = ids[i];
    const std::string& text_of_piece = piece(ids[i]);
    if (i == 0) {  // BOS
      token.bytes = text_of_piece;
      token.shown = "<s>";
      token.special = true;
    } else if (const int byte = byte_of_piece(text_of_piece); byte >= 0) {
      token.bytes = std::string(1, static_cast<char>(byte));
    } else {
      token.bytes = text_of_piece;
    }
    token.byte_begin = static_cast<int>(at);
    at += covered[i];
    token.byte_end = static_cast<int>(at);
  }
  show_tokens(tokens);
  return tokens;
}

}  // namespace attnviz
