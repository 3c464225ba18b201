// The one JSON reader (core/document/json.hpp): its rules (comments, the depth limit) and its
// messages, which scenario files, lessons and the app's view state all show.
#include "core/document/json.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz {
namespace {

std::string nested_lists(int levels) {
  return std::string(levels, '[') + "1" + std::string(levels, ']');
}

}  // namespace

TEST_CASE("json: comments are allowed") {
  const Result<Json> parsed = parse_json("// a teacher's note\n{\"a\": /* one */ 1}");
  REQUIRE(parsed.ok());
  CHECK((*parsed)["a"] == 1);
}

TEST_CASE("json: nesting up to the limit parses, past it is refused before parsing") {
  CHECK(parse_json(nested_lists(kMaxJsonDepth)).ok());
  const Result<Json> deep = parse_json(nested_lists(kMaxJsonDepth + 1));
  CHECK_FALSE(deep.ok());
  CHECK(deep.error() == "the JSON is nested deeper than 32 levels");
  // Far too deep for the parser's recursion: refused all the same.
  CHECK(parse_json(nested_lists(300000)).error() == "the JSON is nested deeper than 32 levels");
}

TEST_CASE("json: brackets in strings and comments do not count as nesting") {
  CHECK(json_nesting_depth(R"({"a": "[[[[", "b": [1]})") == 2);
  CHECK(json_nesting_depth("[1, // [[[[\n 2]") == 1);
  CHECK(json_nesting_depth("[1, /* [[[[ */ 2]") == 1);
  CHECK(json_nesting_depth(R"(["\"[[", 2])") == 1);  // an escaped quote does not end the string
}

TEST_CASE("json: a syntax error says where, without nlohmann's exception id") {
  const Result<Json> parsed = parse_json("{\n  \"a\": 1,\n}");
  CHECK_FALSE(parsed.ok());
  CHECK(parsed.error().rfind("malformed JSON at line 3, column 1: ", 0) == 0);
  CHECK(parsed.error().find("json.exception") == std::string::npos);
  CHECK(parse_json("").error().rfind("malformed JSON at line 1, column 1: ", 0) == 0);
}

TEST_CASE("json: a number too large for a double is malformed JSON") {
  CHECK(parse_json("[1e999]").error() == "malformed JSON: number overflow parsing '1e999'");
}

TEST_CASE("json: the helpers name types and show values briefly") {
  const Json object =
      Json::parse(R"({"s": "x", "n": 1.5, "b": true, "l": [], "o": {}, "z": null})");
  CHECK(json_type_name(object["s"]) == "a string");
  CHECK(json_type_name(object["n"]) == "a number");
  CHECK(json_type_name(object["b"]) == "true/false");
  CHECK(json_type_name(object["l"]) == "a list");
  CHECK(json_type_name(object["o"]) == "an object");
  CHECK(json_type_name(object["z"]) == "null");
  CHECK(find_member(object, "n") == &object["n"]);
  CHECK(find_member(object, "missing") == nullptr);
  CHECK(json_shown(Json(std::string(100, 'a'))) == "\"" + std::string(36, 'a') + "...");
  CHECK(json_shown(Json(std::string("\xFF"))) == "\"\xEF\xBF\xBD\"");
  CHECK(without_exception_id("[json.exception.type_error.302] type must be string") ==
        "type must be string");
}

}  // namespace attnviz
