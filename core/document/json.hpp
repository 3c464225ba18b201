// JSON as AttnViz reads it: the one parser of its files (scenarios, lessons, the app's view
// state), with the project's rules and the project's messages, and the small helpers their
// readers share.
//
// Rules: // and /* */ comments are allowed (teachers annotate their files); text nested deeper
// than kMaxJsonDepth levels is refused before it is parsed (the parser, and copying and writing
// JSON, recurse: a file 300,000 levels deep would overflow the stack).
#pragma once

#include "core/base/status.hpp"

#include "core/base/float_text.hpp"
#include "core/base/types.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include <string>
#include <string_view>

namespace attnviz {

using Json = nlohmann::json;

inline constexpr int kMaxJsonDepth = 32;

// The nesting depth of JSON text (comments allowed); counting stops once past kMaxJsonDepth.
int json_nesting_depth(std::string_view json_text);

// Parses JSON text by the rules above. On failure, one line for a person:
//   "the JSON is nested deeper than 32 levels"
//   "malformed JSON at line 3, column 14: syntax error while parsing value - ..."
//   "malformed JSON: number overflow parsing '1e999'"
Result<Json> parse_json(std::string_view json_text);

// The member `key` of an object, or null when it has none.
const Json* find_member(const Json& object, const char* key);

// What a value is, for a message: "null", "true/false", "a string", "a list", "an object" or
// "a number".
std::string json_type_name(const Json& value);

// A value for a message: its JSON, cut to 40 characters, safe for any content (invalid UTF-8 is
// replaced).
std::string json_shown(const Json& value);

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
std::string without_exception_id(const std::string& what);

// What a file says wrong, as one line: the key path, then what is wrong
// ("weights.W_Q[1]: expected 8 rows, got 7"). Thrown by JsonReader, caught where a file is read.
struct JsonFailure {
  std::string message;
};

// The reader of every file AttnViz reads (scenarios, lessons, the view state): each value read by
// its key path, which every message names; a wrong value throws JsonFailure, an unknown key is a
// warning. (The view state is lenient: a wrong setting is a warning, and the others are kept.)
class JsonReader {
 public:
  explicit JsonReader(std::vector<std::string>& warnings) : warnings_(warnings) {}

  [[noreturn]] static void fail(const std::string& path, const std::string& message) {
    throw JsonFailure{path + ": " + message};
  }

  void warn_unknown_keys(const Json& object, const std::string& path,
                         const std::set<std::string_view>& known) {
    for (const auto& [key, value] : object.items())
      if (!known.contains(key))
        warnings_.push_back("unknown key \"" + (path.empty() ? "" : path + ".") + key +
                            "\" (ignored)");
  }

  void warning(std::string message) { warnings_.push_back(std::move(message)); }

  const Json* find(const Json& object, const char* key) const { return find_member(object, key); }

  static std::string string(const Json& value, const std::string& path) {
    if (!value.is_string()) fail(path, "expected a string, got " + json_type_name(value));
    return value.get<std::string>();
  }

  static bool boolean(const Json& value, const std::string& path) {
    if (!value.is_boolean()) fail(path, "expected true or false, got " + json_type_name(value));
    return value.get<bool>();
  }

  static double number(const Json& value, const std::string& path) {
    if (!value.is_number()) fail(path, "expected a number, got " + json_type_name(value));
    const double x = value.get<double>();
    if (!std::isfinite(x)) fail(path, "the number is not finite");
    return x;
  }

  static float single(const Json& value, const std::string& path) {
    const double x = number(value, path);
    // Values that round to the largest float (as 3.4028235e38 does) are in range.
    const auto as_float = static_cast<float>(x);
    if (std::isinf(as_float))
      fail(path, format_double(x) + " is outside the float range (about ±3.4e38)");
    return as_float;
  }

  static std::int64_t integer(const Json& value, const std::string& path, std::int64_t low,
                              std::int64_t high) {
    const double x = number(value, path);
    if (x != std::floor(x)) fail(path, "expected a whole number, got " + format_double(x));
    if (x < static_cast<double>(low) || x > static_cast<double>(high))
      fail(path, "must be between " + std::to_string(low) + " and " + std::to_string(high) +
                     ", got " + format_double(x));
    return static_cast<std::int64_t>(x);
  }

  static const Json& list(const Json& value, const std::string& path, std::size_t expected_size,
                          const std::string& what) {
    if (!value.is_array())
      fail(path, "expected a list of " + what + ", got " + json_type_name(value));
    if (value.size() != expected_size)
      fail(path, "expected " + std::to_string(expected_size) + " " + what + ", got " +
                     std::to_string(value.size()));
    return value;
  }

  // A (rows, cols) matrix of floats: a list of `rows` lists of `cols` numbers.
  static void matrix(const Json& value, const std::string& path, Eigen::Index rows,
                     Eigen::Index cols, Matrix& out) {
    list(value, path, static_cast<std::size_t>(rows), "rows");
    out.resize(rows, cols);
    for (Eigen::Index r = 0; r < rows; ++r) {
      const std::string row_path = path + "[" + std::to_string(r) + "]";
      const Json& row = list(value[static_cast<std::size_t>(r)], row_path,
                             static_cast<std::size_t>(cols), "numbers");
      for (Eigen::Index c = 0; c < cols; ++c)
        out(r, c) =
            single(row[static_cast<std::size_t>(c)], row_path + "[" + std::to_string(c) + "]");
    }
  }

  static std::string format_double(double x) { return shortest_text(x); }

 private:
  std::vector<std::string>& warnings_;
};

}  // namespace attnviz
