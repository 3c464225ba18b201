#include "core/models/vocabulary_json.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace attnviz {

std::string json_quoted(std::string_view text) {
  std::string shown = nlohmann::json(std::string(text))
                          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  constexpr std::size_t kLongest = 60;
  if (shown.size() > kLongest) shown = shown.substr(0, kLongest) + "...\"";
  return shown;
}

namespace {

// A SAX reader of {"token": id, ...}: iterative (no nesting depth can exhaust the stack), and
// the first thing that is not a token and its id stops it with a message.
class VocabularyReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit VocabularyReader(std::size_t max_tokens) : max_tokens_(max_tokens) {}
  std::vector<VocabularyEntry> entries;
  std::string error;  // the first fault, "" when none

  bool null() override { return value_is("null"); }
  bool boolean(bool) override { return value_is("true or false"); }
  bool number_integer(number_integer_t value) override { return id(value); }
  bool number_unsigned(number_unsigned_t value) override {
    return id(value > static_cast<number_unsigned_t>(INT64_MAX) ? INT64_MAX
                                                                : static_cast<std::int64_t>(value));
  }
  bool number_float(number_float_t, const string_t& written) override {
    return value_is("the number " + written + ", not a whole number");
  }
  bool string(string_t&) override { return value_is("a string"); }
  bool binary(binary_t&) override { return value_is("binary"); }
  bool start_object(std::size_t) override {
    if (depth_++ == 0) return true;
    return value_is("an object");
  }
  bool key(string_t& key) override {
    key_ = key;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return fail("not a JSON object of tokens and their ids (an array)");
    return value_is("an array");
  }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& exception) override {
    std::string what = exception.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> the reason.
    if (const std::size_t colon = what.find(": "); colon != std::string::npos)
      what = what.substr(colon + 2);
    return fail("not valid JSON (at byte " + std::to_string(position) + "): " + what);
  }

 private:
  std::size_t max_tokens_;
  int depth_ = 0;
  std::string key_;

  bool fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }
  bool value_is(const std::string& what) {
    if (depth_ == 0) return fail("not a JSON object of tokens and their ids");
    return fail("the value of " + json_quoted(key_) + " is " + what + ", not a token id");
  }
  bool id(std::int64_t value) {
    if (depth_ == 0) return fail("not a JSON object of tokens and their ids (a number)");
    if (entries.size() >= max_tokens_)
      return fail("more than " + std::to_string(max_tokens_) + " tokens");
    entries.push_back({key_, value});
    return true;
  }
};

}  // namespace

Result<std::vector<VocabularyEntry>> read_vocabulary_json(std::string_view text,
                                                          std::size_t max_tokens,
                                                          const std::string& path) {
  VocabularyReader reader(max_tokens);
  const bool parsed = nlohmann::json::sax_parse(text, &reader);
  if (!parsed || !reader.error.empty())
    return Status::error(path + ": " +
                         (reader.error.empty() ? std::string("not valid JSON") : reader.error));
  return std::move(reader.entries);
}

Result<std::vector<std::string>> keys_by_id(std::vector<VocabularyEntry>& entries,
                                            const std::string& path, std::size_t max_key_bytes) {
  const std::size_t count = entries.size();
  if (count == 0) return Status::error(path + ": no tokens");
  std::vector<std::string> keys(count);
  std::vector<bool> taken(count, false);
  for (VocabularyEntry& entry : entries) {
    const std::string key = json_quoted(entry.symbols);
    if (entry.id < 0 || entry.id >= static_cast<std::int64_t>(count))
      return Status::error(path + ": " + key + " has the id " + std::to_string(entry.id) +
                           ", outside 0 ... " + std::to_string(count - 1) + " (the file has " +
                           std::to_string(count) + " tokens)");
    const auto id = static_cast<std::size_t>(entry.id);
    if (taken[id])
      return Status::error(path + ": " + json_quoted(keys[id]) + " and " + key +
                           " both have the id " + std::to_string(id));
    if (entry.symbols.empty()) return Status::error(path + ": an empty token (\"\")");
    if (entry.symbols.size() > max_key_bytes)
      return Status::error(path + ": " + key + " is longer than " + std::to_string(max_key_bytes) +
                           " bytes");
    taken[id] = true;
    keys[id] = std::move(entry.symbols);
  }
  return keys;
}

}  // namespace attnviz
