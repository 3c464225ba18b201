// Shared by the model-tokenizer fuzz targets: the invariants of a tokenize() result
// (core/models/model_tokens.hpp) against the text it came from.
#pragma once

#include "core/models/model_tokens.hpp"
#include "tests/fuzz/fuzz_common.hpp"

#include <string_view>
#include <vector>

namespace attnviz::fuzz {

// The ranges tile the text in order; every non-special token with bytes shows something, in
// valid UTF-8; `bytes_are_text`: each non-special token's bytes are the text it covers.
inline void check_model_tokens(const std::vector<ModelToken>& tokens, std::string_view text,
                               const std::vector<int>& ids, bool bytes_are_text) {
  FUZZ_CHECK(tokens.size() == ids.size());
  int at = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const ModelToken& token = tokens[i];
    FUZZ_CHECK(token.id == ids[i]);
    FUZZ_CHECK(token.byte_begin == at);
    FUZZ_CHECK(token.byte_end >= token.byte_begin);
    FUZZ_CHECK(static_cast<std::size_t>(token.byte_end) <= text.size());
    at = token.byte_end;
    FUZZ_CHECK(valid_utf8(token.shown));
    if (token.special) continue;
    FUZZ_CHECK(token.bytes.empty() || !token.shown.empty());
    if (bytes_are_text)
      FUZZ_CHECK(text.substr(static_cast<std::size_t>(token.byte_begin),
                             static_cast<std::size_t>(token.byte_end - token.byte_begin)) ==
                 token.bytes);
  }
  FUZZ_CHECK(static_cast<std::size_t>(at) == text.size());
}

}  // namespace attnviz::fuzz
