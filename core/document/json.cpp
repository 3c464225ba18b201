#include "core/document/json.hpp"

#include <algorithm>

namespace attnviz {

// Outside strings and comments (the parser skips // and /* */ comments, so a quote or bracket
// in one must not count).
int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
      const bool line_comment = text[i + 1] == '/';
      // As nlohmann's lexer: a line comment ends at a line break or NUL.
      const std::size_t end = line_comment
                                  ? text.find_first_of(std::string_view("\n\r\0", 3), i + 2)
                                  : text.find("*/", i + 2);
      if (end == std::string_view::npos) break;  // the comment runs to the end of the text
      i = line_comment ? end : end + 1;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if (c == ']' || c == '}')
      --depth;
    if (deepest > kMaxJsonDepth) break;
  }
  return deepest;
}

std::string without_exception_id(const std::string& what) {
  const std::size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

Result<Json> parse_json(std::string_view json_text) {
  if (json_nesting_depth(json_text) > kMaxJsonDepth)
    return Status::error("the JSON is nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels");
  try {
    return Json::parse(json_text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line 3, ...".
    std::string message = without_exception_id(e.what());
    if (message.rfind("parse error at ", 0) == 0) message = message.substr(15);
    return Status::error("malformed JSON at " + message);
  } catch (const Json::exception& e) {  // e.g. a number too large for a double: 1e999
    return Status::error("malformed JSON: " + without_exception_id(e.what()));
  }
}

const Json* find_member(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string json_type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "true/false";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

std::string json_shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace attnviz
