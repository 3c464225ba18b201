// Undo inside a sentence field goes back a word or a burst at a time (app/session/text_undo.hpp).
#include "app/session/text_undo.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

// A sentence field being typed into: a character every 0.1 s.
struct Field {
  TextUndo undo;
  std::string text;
  double now = 0;
  explicit Field(std::string start) : text(std::move(start)) { undo.reset(text); }
  void type(const std::string& characters) {
    for (char c : characters) {
      text += c;
      undo.changed(text, now += 0.1);
    }
  }
  void backspace() {
    text.pop_back();
    undo.changed(text, now += 0.1);
  }
  // Ctrl+Z and Ctrl+Shift+Z as the field does them: the text shown becomes what they give.
  std::optional<std::string> undo_once() { return apply(undo.undo(text)); }
  std::optional<std::string> redo_once() { return apply(undo.redo(text)); }

 private:
  std::optional<std::string> apply(std::optional<std::string> next) {
    if (next) text = *next;
    return next;
  }
};

using Text = std::optional<std::string>;

}  // namespace

TEST_CASE("undo in a text field takes back a word at a time") {
  Field f("i like");
  f.type(" to eat apple");
  REQUIRE(f.text == "i like to eat apple");
  CHECK(f.undo_once() == Text("i like to eat "));
  CHECK(f.undo_once() == Text("i like to "));
  CHECK(f.undo_once() == Text("i like "));
  CHECK(f.undo_once() == Text("i like"));
  CHECK_FALSE(f.undo_once());
}

TEST_CASE("redo in a text field goes forward again until something is typed") {
  Field f("");
  f.type("the cat");
  REQUIRE(f.undo_once() == Text("the "));
  CHECK(f.redo_once() == Text("the cat"));
  REQUIRE(f.undo_once() == Text("the "));
  f.type("dog");
  CHECK_FALSE(f.redo_once());  // typing drops what was undone
  CHECK(f.undo_once() == Text("the "));
}

TEST_CASE("deleting is a step of its own and so is a pause") {
  Field f("a");
  f.type("bc");  // "abc": one step
  f.backspace();
  f.backspace();  // the same step
  f.now += 2.0;   // a pause: a step even within a word
  f.type("xy");
  REQUIRE(f.text == "axy");
  CHECK(f.undo_once() == Text("a"));    // "xy"
  CHECK(f.undo_once() == Text("abc"));  // the deleting
  CHECK(f.undo_once() == Text("a"));    // the typing
}

TEST_CASE("a space typed after a pause ends the word before it") {
  Field f("");
  f.type("a b");
  f.now += 2.0;
  f.type(" one two");
  REQUIRE(f.text == "a b one two");
  CHECK(f.undo_once() == Text("a b one "));
  CHECK(f.undo_once() == Text("a b "));
  CHECK(f.undo_once() == Text("a "));
}

TEST_CASE("a paste is one step") {
  Field f("i like ");
  f.undo.changed("i like to eat apple pie", 1.0);
  f.text = "i like to eat apple pie";
  CHECK(f.undo_once() == Text("i like "));
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
