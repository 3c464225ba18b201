// JSON as AttnViz reads it: the one parser of its files (scenarios, lessons, the app's view
// state), with the project's rules and the project's messages, and the small helpers their
// readers share.
//
// Rules: // and /* */ comments are allowed (teachers annotate their files); text nested deeper
// than kMaxJsonDepth levels is refused before it is parsed (the parser, and copying and writing
// JSON, recurse: a file 300,000 levels deep would overflow the stack).
#pragma once

#include "core/base/status.hpp"

#include <nlohmann/json.hpp>

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

}  // namespace attnviz
