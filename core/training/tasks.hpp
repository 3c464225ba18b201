// What a model is trained on: batches of texts made from a seed, so that the same seed gives the
// same batches on every machine.
//   induction  random spans (4 to 16 tokens), each written twice, one after the other: the
//              second copy can only be predicted by finding the first (an induction head), and
//              only it is predicted (from its second token on)
//   copy       "spam=spam", reverse "spam=maps", sort "spam=amps": a random word, a separator,
//              the answer; only the answer's tokens are predicted
//   text       windows of a text (any UTF-8: the class's own), every token predicting the next
// Every made-up text starts with the start token (GPT-2's <|endoftext|>).
#pragma once

#include "core/base/status.hpp"
#include "core/training/training_pass.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

enum class TrainingTaskKind { Induction, Copy, Reverse, Sort, Text };

// "induction", "copy", "reverse", "sort", "text"; an error naming the tasks for another name.
Result<TrainingTaskKind> training_task_kind(std::string_view name);
std::string_view to_string(TrainingTaskKind kind);

struct TrainingTask {
  TrainingTaskKind kind = TrainingTaskKind::Induction;
  int texts = 16;             // per batch
  int length = 64;            // tokens per text
  int start = 0;              // the token every text starts with
  int separator = 0;          // copy, reverse, sort: between the word and the answer
  std::vector<int> alphabet;  // the ids random spans and words are drawn from (ordered: sort)
  std::vector<int> corpus;    // text: the whole text's ids
};

// Checks a task: at least two letters in the alphabet (or a text of at least two tokens), a
// length of at least 8 (a text: shortened to the text), at least one text a batch.
Status check_task(TrainingTask& task);

// Batch `step` of the task under `seed`.
TrainingBatch task_batch(const TrainingTask& task, std::uint64_t seed, int step);

}  // namespace attnviz
