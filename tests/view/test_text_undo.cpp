// Undo inside a sentence field goes back a word or a burst at a time (app/text_undo.hpp).
#include "app/text_undo.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

// Types `text` at the end of the field, a character every 0.1 s from `now` on.
void type(TextUndo& undo, std::string& field, const std::string& text, double& now) {
  for (char c : text) {
    field += c;
    undo.changed(field, now += 0.1);
  }
}

}  // namespace

TEST_CASE("undo in a text field takes back a word at a time") {
  TextUndo undo;
  std::string field = "i like";
  undo.reset(field);
  double now = 0;
  type(undo, field, " to eat apple", now);
  REQUIRE(field == "i like to eat apple");
  CHECK(undo.undo(field) == std::optional<std::string>("i like to eat "));
  CHECK(undo.undo("i like to eat ") == std::optional<std::string>("i like to "));
  CHECK(undo.undo("i like to ") == std::optional<std::string>("i like "));
  CHECK(undo.undo("i like ") == std::optional<std::string>("i like"));
  CHECK_FALSE(undo.undo("i like"));
}

TEST_CASE("redo in a text field goes forward again until something is typed") {
  TextUndo undo;
  std::string field;
  undo.reset(field);
  double now = 0;
  type(undo, field, "the cat", now);
  REQUIRE(undo.undo(field) == std::optional<std::string>("the "));
  CHECK(undo.redo("the ") == std::optional<std::string>("the cat"));
  REQUIRE(undo.undo("the cat") == std::optional<std::string>("the "));
  field = "the ";
  type(undo, field, "dog", now);
  CHECK_FALSE(undo.redo(field));  // typing drops what was undone
  CHECK(undo.undo(field) == std::optional<std::string>("the "));
}

TEST_CASE("deleting is a step of its own and so is a pause") {
  TextUndo undo;
  std::string field = "a";
  undo.reset(field);
  double now = 0;
  type(undo, field, "bc", now);  // "abc": one step
  field = "ab";
  undo.changed(field, now += 0.1);  // Backspace
  field = "a";
  undo.changed(field, now += 0.1);  // Backspace: the same step
  type(undo, field, "x", now += 2.0);  // after a pause: a step even within a word
  type(undo, field, "y", now);
  REQUIRE(field == "axy");
  CHECK(undo.undo(field) == std::optional<std::string>("a"));   // "xy"
  CHECK(undo.undo("a") == std::optional<std::string>("abc"));  // the deleting
  CHECK(undo.undo("abc") == std::optional<std::string>("a"));  // the typing
}

TEST_CASE("a paste is one step") {
  TextUndo undo;
  std::string field = "i like ";
  undo.reset(field);
  undo.changed("i like to eat apple pie", 1.0);
  CHECK(undo.undo("i like to eat apple pie") == std::optional<std::string>("i like "));
}

TEST_CASE("a field entered again starts with nothing to undo") {
  TextUndo undo;
  undo.reset("one");
  undo.changed("one two", 1.0);
  undo.reset("one two");
  CHECK_FALSE(undo.can_undo());
  CHECK_FALSE(undo.undo("one two"));
}

}  // namespace attnviz::app
