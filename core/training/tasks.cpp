#include "core/training/tasks.hpp"

#include "core/base/rng.hpp"

#include <algorithm>

namespace attnviz {
namespace {

// SplitMix64 as a stream: the n-th draw of a seeded sequence.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return rng::mix(state_++); }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t state_;
};

// Random spans (4 to 16 tokens), each written twice, one after the other, to the end of the text
// (what is left when a span no longer fits twice: random tokens). Only the second copy is
// predicted, from its second token on: the only tokens a model can know, by finding the first
// copy. The rest would add only noise to the gradient.
void induction_text(const TrainingTask& task, Draws& draws, int* tokens, int* targets) {
  const int T = task.length;
  const auto letters = static_cast<int>(task.alphabet.size());
  const auto letter = [&] { return task.alphabet[static_cast<std::size_t>(draws.below(letters))]; };
  std::fill(targets, targets + T, -1);
  tokens[0] = task.start;
  int at = 1;
  std::vector<int> span;
  for (;;) {
    const int room = (T - at) / 2;
    if (room < 2) {
      while (at < T) tokens[at++] = letter();
      break;
    }
    span.resize(static_cast<std::size_t>(std::min(room, 4 + draws.below(13))));  // 4..16
    for (int& token : span) token = letter();
    for (int token : span) tokens[at++] = token;
    const int second = at;
    for (int token : span) tokens[at++] = token;
    for (int k = 1; k < static_cast<int>(span.size()); ++k)
      targets[second + k - 1] = tokens[second + k];
  }
}

// Words, a separator and their answers, one after the other, each after the start token; the
// targets are the answers' tokens (and the start token after each).
void answer_texts(const TrainingTask& task, Draws& draws, int* tokens, int* targets) {
  const int T = task.length;
  const auto letters = static_cast<int>(task.alphabet.size());
  std::fill(tokens, tokens + T, task.start);
  std::fill(targets, targets + T, -1);
  int at = 0;
  std::vector<int> word;
  for (;;) {
    const int size = 3 + draws.below(std::min(8, std::max(1, (T - 3) / 2 - 2)));
    if (at + 2 * size + 2 > T) break;
    word.resize(static_cast<std::size_t>(size));
    for (int& letter : word) letter = draws.below(letters);
    std::vector<int> answer = word;
    if (task.kind == TrainingTaskKind::Reverse) std::reverse(answer.begin(), answer.end());
    if (task.kind == TrainingTaskKind::Sort) std::sort(answer.begin(), answer.end());
    tokens[at++] = task.start;
    for (int letter : word) tokens[at++] = task.alphabet[static_cast<std::size_t>(letter)];
    tokens[at++] = task.separator;
    for (int letter : answer) {
      targets[at - 1] = task.alphabet[static_cast<std::size_t>(letter)];
      tokens[at++] = task.alphabet[static_cast<std::size_t>(letter)];
    }
    if (at < T) targets[at - 1] = task.start;
  }
}

}  // namespace

Result<TrainingTaskKind> training_task_kind(std::string_view name) {
  for (TrainingTaskKind kind :
       {TrainingTaskKind::Induction, TrainingTaskKind::Copy, TrainingTaskKind::Reverse,
        TrainingTaskKind::Sort, TrainingTaskKind::Text})
    if (name == to_string(kind)) return kind;
  return Result<TrainingTaskKind>::failure("no task \"" + std::string(name) +
                                           "\": the tasks are induction, copy, reverse, sort "
                                           "and text");
}

std::string_view to_string(TrainingTaskKind kind) {
  switch (kind) {
    case TrainingTaskKind::Induction:
      return "induction";
    case TrainingTaskKind::Copy:
      return "copy";
    case TrainingTaskKind::Reverse:
      return "reverse";
    case TrainingTaskKind::Sort:
      return "sort";
    case TrainingTaskKind::Text:
      return "text";
  }
  return "induction";
}

Status check_task(TrainingTask& task) {
  if (task.texts < 1 || task.texts > 4096)
    return Status::error("a batch holds 1 to 4096 texts, not " + std::to_string(task.texts));
  if (task.kind == TrainingTaskKind::Text) {
    if (task.corpus.size() < 2)
      return Status::error("the text is too short to train on: it needs at least two tokens");
    task.length = static_cast<int>(
        std::min<std::size_t>(static_cast<std::size_t>(task.length), task.corpus.size() - 1));
  } else if (task.alphabet.size() < 2) {
    return Status::error("a task needs at least two tokens to draw from");
  }
  if (task.length < 2 || (task.kind != TrainingTaskKind::Text && task.length < 8))
    return Status::error("texts of " + std::to_string(task.length) +
                         " tokens are too short to train on (at least 8)");
  return Status::success();
}

TrainingBatch task_batch(const TrainingTask& task, std::uint64_t seed, int step) {
  TrainingBatch batch;
  batch.texts = task.texts;
  batch.length = task.length;
  const auto n = static_cast<std::size_t>(task.texts) * static_cast<std::size_t>(task.length);
  batch.tokens.assign(n, task.start);
  batch.targets.assign(n, -1);
  for (int b = 0; b < task.texts; ++b) {
    Draws draws(rng::combine(
        seed, static_cast<std::uint64_t>(step) * 4096u + static_cast<std::uint64_t>(b)));
    int* tokens = batch.tokens.data() + static_cast<std::ptrdiff_t>(b) * task.length;
    int* targets = batch.targets.data() + static_cast<std::ptrdiff_t>(b) * task.length;
    switch (task.kind) {
      case TrainingTaskKind::Induction:
        induction_text(task, draws, tokens, targets);
        break;
      case TrainingTaskKind::Copy:
      case TrainingTaskKind::Reverse:
      case TrainingTaskKind::Sort:
        answer_texts(task, draws, tokens, targets);
        break;
      case TrainingTaskKind::Text: {
        const std::size_t windows = task.corpus.size() - static_cast<std::size_t>(task.length);
        const std::size_t first = draws.next() % windows;
        for (int i = 0; i < task.length; ++i) {
          tokens[i] = task.corpus[first + static_cast<std::size_t>(i)];
          targets[i] = task.corpus[first + static_cast<std::size_t>(i) + 1];
        }
        break;
      }
    }
  }
  return batch;
}

}  // namespace attnviz
