// vocab.json, the vocabulary of GPT-2's and Marian's tokenizers: one JSON object of tokens and
// their ids, {"token": id, ...}, read without building a JSON tree.
#pragma once

#include "core/base/status.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

// A token as a message shows it: a JSON string, at most 60 characters ("...\"" after).
std::string json_quoted(std::string_view text);

struct VocabularyEntry {
  std::string symbols;  // the key as written (unescaped)
  std::int64_t id = 0;  // as written (not yet checked against the vocabulary's size)
};

// The entries in the file's order, or an error naming `path`: not valid JSON, not one object,
// a value that is not a whole number, more than `max_tokens` entries.
Result<std::vector<VocabularyEntry>> read_vocabulary_json(std::string_view text,
                                                          std::size_t max_tokens,
                                                          const std::string& path);
// The entries' keys by id: an error naming `path` unless there is at least one, every id is in
// 0 .. count − 1 and held by one key only, and no key is empty or longer than `max_key_bytes`.
// The keys are moved out of `entries`.
Result<std::vector<std::string>> keys_by_id(std::vector<VocabularyEntry>& entries,
                                            const std::string& path, std::size_t max_key_bytes);

}  // namespace attnviz
