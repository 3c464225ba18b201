// The kinds of lesson checks, as one table (lesson_checks.cpp): each row is a check's name as
// lesson files write it, what it needs of the scenario (a real model, the one-layer model,
// self-attention, a mask pattern), its parameters, and how it is evaluated. Reading a check and
// evaluating it are written once, for every row; adding a kind of check is adding its row.
// Internal to core/lessons (lesson.cpp reads and evaluates through it).
#pragma once

#include "core/document/json.hpp"
#include "core/lessons/lesson.hpp"

#include <optional>
#include <string>

namespace attnviz::lessons {

// A file's mistake: "steps[2].checks[0].key: missing" (the key path, then what is wrong), thrown
// as the one reader of AttnViz's files throws it (core/document/json.hpp).
using Failure = JsonFailure;
[[noreturn]] inline void fail(const std::string& path, const std::string& message) {
  JsonReader::fail(path, message);
}

// The members of a lesson's objects, read by that reader with the key path in every message.
std::string string_at(const Json& object, const char* key, const std::string& path,
                      bool required = false);
int int_at(const Json& object, const char* key, const std::string& path, int fallback, int low,
           int high);
// A token reference: a string (text or "#N") or a number (an index).
std::string token_at(const Json& object, const char* key, const std::string& path);
void require_token(const Tokenization& tokens, const std::string& reference,
                   const std::string& path, const char* sentence);

// A real model's layers and heads are known once it is open: a lesson names them freely, and a
// check on one the model lacks fails when it is evaluated.
inline constexpr int kMostModelLayersOrHeads = 4096;

// The check `value` at `path` of a step whose scenario is `scenario` (its tokens: `queries`,
// `keys`); throws Failure.
LessonCheck parse_check(const Json& value, const std::string& path, const Scenario& scenario,
                        const Tokenization& queries, const Tokenization& keys);

// Why a claim does not hold, as a clause for a student ("\"al\" attends most to ..."), and
// whether it is about words the sentence no longer has.
struct Problem {
  std::string reason;
  bool words_gone = false;
};
using MaybeProblem = std::optional<Problem>;

// Whether a check's claim holds on `pipeline`, which computed `scenario`.
MaybeProblem check_problem(const Scenario& scenario, const LessonCheck& check,
                           const Pipeline& pipeline);

}  // namespace attnviz::lessons
