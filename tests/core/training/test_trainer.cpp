// AdamW and its schedule against the formulas worked out here, the tasks' texts, and the
// trainer: the same seed gives the same weights bit for bit, a short run learns what it is
// given, and its saved folder opens as a model whose forward pass is the trainer's.
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"
#include "core/training/optimizer.hpp"
#include "core/training/tasks.hpp"
#include "core/training/trainer.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace attnviz {
namespace {

TrainingTask letters_task(TrainingTaskKind kind) {
  TrainingTask task;
  task.kind = kind;
  task.texts = 4;
  task.length = 40;
  task.start = 256;
  task.separator = '=';
  for (int letter = 'a'; letter <= 'z'; ++letter) task.alphabet.push_back(letter);
  return task;
}

}  // namespace

TEST_CASE("AdamW's step is Loshchilov and Hutter's, worked out by hand") {
  ParameterTable table;
  table.add("matrix", {1, 2});  // decays
  table.add("bias", {1});       // does not
  AdamWSettings s;
  s.learning_rate = 0.1f;
  s.warmup_steps = 0;
  s.total_steps = 100;
  s.weight_decay = 0.5f;
  s.clip_norm = 0.0f;
  AdamW adam(s, table);
  std::vector<float> values = {1.0f, -2.0f, 3.0f};
  std::vector<float> gradient = {0.5f, -0.25f, 2.0f};
  adam.step(table, values.data(), gradient.data());
  // Step 1: m̂ = g, v̂ = g², so the update is lr · (sign(g) + decay · w) (ε aside).
  CHECK(values[0] == doctest::Approx(1.0f - 0.1f * (1.0f + 0.5f * 1.0f)).epsilon(1e-6));
  CHECK(values[1] == doctest::Approx(-2.0f - 0.1f * (-1.0f + 0.5f * -2.0f)).epsilon(1e-6));
  CHECK(values[2] == doctest::Approx(3.0f - 0.1f * 1.0f).epsilon(1e-6));
  // Step 2 with the same gradient: m̂ and v̂ are still g and g² (bias corrected), at lr(1).
  const float lr = learning_rate_at(s, 1);
  const float before = values[2];
  gradient = {0.5f, -0.25f, 2.0f};
  adam.step(table, values.data(), gradient.data());
  CHECK(values[2] == doctest::Approx(before - lr * 1.0f).epsilon(1e-6));
  // A frozen tensor does not move.
  const std::vector<float> kept = values;
  adam.step(table, values.data(), gradient.data(), {true, false});
  CHECK(values[0] == kept[0]);
  CHECK(values[1] == kept[1]);
  CHECK(values[2] != kept[2]);
}

TEST_CASE("the gradient is clipped to its largest norm before AdamW reads it") {
  ParameterTable table;
  table.add("w", {2});
  AdamWSettings s;
  s.clip_norm = 1.0f;
  AdamW adam(s, table);
  std::vector<float> values = {0.0f, 0.0f}, gradient = {3.0f, 4.0f};
  CHECK(adam.step(table, values.data(), gradient.data()) == doctest::Approx(5.0));
  CHECK(gradient[0] == doctest::Approx(0.6f));
  CHECK(gradient[1] == doctest::Approx(0.8f));
}

TEST_CASE("the learning rate warms up, falls along a cosine to a tenth, and stays there") {
  AdamWSettings s;
  s.learning_rate = 1.0f;
  s.warmup_steps = 10;
  s.total_steps = 110;
  CHECK(learning_rate_at(s, 0) == doctest::Approx(0.1f));
  CHECK(learning_rate_at(s, 9) == doctest::Approx(1.0f));
  CHECK(learning_rate_at(s, 10) == doctest::Approx(1.0f));
  CHECK(learning_rate_at(s, 60) == doctest::Approx(0.55f));  // halfway: (1 + 0.1) / 2
  CHECK(learning_rate_at(s, 110) == doctest::Approx(0.1f));
  CHECK(learning_rate_at(s, 5000) == doctest::Approx(0.1f));
}

TEST_CASE(
    "the tasks' texts: spans written twice, and answers that are the word copied, reversed "
    "or sorted") {
  const TrainingTask induction = letters_task(TrainingTaskKind::Induction);
  const TrainingBatch a = task_batch(induction, 3, 7), b = task_batch(induction, 3, 7);
  CHECK(a.tokens == b.tokens);  // the same seed and step, the same batch
  CHECK(a.tokens != task_batch(induction, 4, 7).tokens);
  CHECK(a.tokens != task_batch(induction, 3, 8).tokens);
  CHECK(a.tokens[0] == 256);
  // Only the second copies are predicted: each target is the next token, which came `m` tokens
  // before too (a span of m, 4 to 16), with the token before it.
  int predicted = 0;
  for (int i = 0; i + 1 < 40; ++i) {
    const int target = a.targets[static_cast<std::size_t>(i)];
    if (target < 0) continue;
    ++predicted;
    CHECK(target == a.tokens[i + 1]);
    bool copied = false;
    for (int m = 4; m <= 16 && i - m >= 1; ++m)
      copied = copied || (a.tokens[i + 1 - m] == a.tokens[i + 1] && a.tokens[i - m] == a.tokens[i]);
    CHECK(copied);
  }
  CHECK(predicted >= 8);
  CHECK(a.targets[0] == -1);  // the first copy is not predicted
  for (const TrainingTaskKind kind :
       {TrainingTaskKind::Copy, TrainingTaskKind::Reverse, TrainingTaskKind::Sort}) {
    CAPTURE(to_string(kind));
    const TrainingBatch batch = task_batch(letters_task(kind), 1, 0);
    int answers = 0;
    for (int t = 0; t < batch.texts; ++t) {
      const int* tokens = batch.tokens.data() + static_cast<std::ptrdiff_t>(t) * 40;
      const int* targets = batch.targets.data() + static_cast<std::ptrdiff_t>(t) * 40;
      for (int i = 0; i < 40; ++i) {
        if (tokens[i] != 256 || i + 1 >= 40 || tokens[i + 1] == 256) continue;
        int end = i + 1;
        while (end < 40 && tokens[end] != '=') ++end;
        if (end >= 40) break;
        std::vector<int> word(tokens + i + 1, tokens + end), answer = word;
        if (kind == TrainingTaskKind::Reverse) std::reverse(answer.begin(), answer.end());
        if (kind == TrainingTaskKind::Sort) std::sort(answer.begin(), answer.end());
        for (std::size_t k = 0; k < answer.size(); ++k) {
          CHECK(tokens[end + 1 + static_cast<int>(k)] == answer[k]);
          CHECK(targets[end + static_cast<int>(k)] == answer[k]);  // predicted from the one before
        }
        CHECK(targets[i] == -1);  // the word itself is not predicted
        ++answers;
      }
    }
    CHECK(answers >= 4);
  }
  TrainingTask text = letters_task(TrainingTaskKind::Text);
  text.corpus = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  REQUIRE(check_task(text).is_ok());
  CHECK(text.length == 9);  // shortened to the text
  const TrainingBatch window = task_batch(text, 1, 0);
  CHECK(window.targets[0] == window.tokens[0] + 1);
  TrainingTask empty = letters_task(TrainingTaskKind::Text);
  CHECK(check_task(empty).message().find("too short") != std::string::npos);
  CHECK(training_task_kind("copy").ok());
  CHECK(training_task_kind("translate").error().find("induction, copy, reverse, sort") !=
        std::string::npos);
}

TEST_CASE("training is deterministic: the same seed gives the same weights, bit for bit") {
  TrainingSettings s;
  s.steps = 12;
  s.texts = 4;
  s.length = 24;
  s.d_model = 16;
  s.score_every = 4;
  s.optimizer.total_steps = 12;
  const auto run = [&](std::uint64_t seed) {
    TrainingSettings with = s;
    with.seed = seed;
    Result<Trainer> trainer = Trainer::make(with);
    REQUIRE(trainer.ok());
    while (!trainer->done()) REQUIRE(trainer->step().ok());
    return std::pair{trainer->values(), trainer->record_json()};
  };
  const auto [first, first_record] = run(5);
  const auto [second, second_record] = run(5);
  const auto [other, other_record] = run(6);
  CHECK(first == second);
  CHECK(first_record == second_record);
  CHECK(first != other);
}

TEST_CASE("a step on three threads is the step on one: the same losses, the weights to rounding") {
  TrainingSettings s;
  s.steps = 30;
  s.texts = 7;  // three threads: parts of 2, 2 and 3 texts
  s.length = 24;
  s.d_model = 16;
  s.score_every = 10;
  s.optimizer.total_steps = 30;
  s.optimizer.warmup_steps = 5;
  const auto run = [&](int threads) {
    TrainingSettings with = s;
    with.threads = threads;
    Result<Trainer> trainer = Trainer::make(with);
    REQUIRE_MESSAGE(trainer.ok(), trainer.error());
    while (!trainer->done()) REQUIRE(trainer->step().ok());
    return std::pair{trainer->values(), trainer->losses()};
  };
  const auto [one, one_losses] = run(1);
  const auto [three, three_losses] = run(3);
  const auto [again, again_losses] = run(3);
  CHECK(three == again);  // the same threads: bit for bit
  double loss_difference = 0.0, weight_difference = 0.0, largest_weight = 0.0;
  for (std::size_t i = 0; i < one_losses.size(); ++i)
    loss_difference =
        std::max(loss_difference, static_cast<double>(std::fabs(one_losses[i] - three_losses[i])));
  for (std::size_t i = 0; i < one.size(); ++i) {
    weight_difference =
        std::max(weight_difference, static_cast<double>(std::fabs(one[i] - three[i])));
    largest_weight = std::max(largest_weight, static_cast<double>(std::fabs(one[i])));
  }
  MESSAGE("after 30 steps: largest loss difference " << loss_difference << ", weight difference "
                                                     << weight_difference << " (of "
                                                     << largest_weight << ")");
  CHECK(loss_difference < 1e-4);
  CHECK(weight_difference < 1e-3 * largest_weight);
  // More threads than texts: refused.
  TrainingSettings crowded = s;
  crowded.threads = 8;
  CHECK(Trainer::make(crowded).error().find("at most one a text") != std::string::npos);
}

TEST_CASE("a short run learns its text, and its saved folder opens as that model") {
  TrainingSettings s;
  s.task = TrainingTaskKind::Text;
  for (int i = 0; i < 40; ++i) s.text += "the cat sat on the mat. ";
  s.steps = 300;
  s.length = 24;
  s.texts = 8;
  s.d_model = 32;
  s.attention_only = false;
  s.optimizer.total_steps = 300;
  s.optimizer.warmup_steps = 50;
  Result<Trainer> trainer = Trainer::make(s);
  REQUIRE(trainer.ok());
  while (!trainer->done()) REQUIRE(trainer->step().ok());
  const std::vector<float>& losses = trainer->losses();
  MESSAGE("loss " << losses.front() << " -> " << losses.back());
  CHECK(losses.front() > 5.0f);  // about log 257: nothing known
  CHECK(losses.back() < 0.3f);   // the text learned

  testing::TempDir dir;
  const std::string folder = (dir.path / "cat").string();
  REQUIRE(trainer->save(folder).is_ok());
  Result<Model> model = open_model(folder);
  REQUIRE_MESSAGE(model.ok(), model.error());
  Result<std::vector<ModelToken>> tokens = read_text(*model, "the cat sat on the m");
  REQUIRE(tokens.ok());
  std::vector<int> ids;
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  CHECK(ids.front() == 't');  // a byte model: one token a byte
  TransformerForward forward(model->transformer);
  REQUIRE(forward.run(ids).is_ok());
  const RowVector logits = forward.last_logits();
  int best = 0;
  for (int t = 1; t < logits.size(); ++t)
    if (logits[t] > logits[best]) best = t;
  CHECK(best == 'a');  // "the m" -> "a"
  // The saved weights are the trainer's, bit for bit.
  const TransformerWeights& saved = model->transformer.weights();
  const TransformerWeights trained = trainer->weights();
  CHECK(saved.layers[1].key.at(3, 5) == trained.layers[1].key.at(3, 5));
  CHECK(saved.position_embedding.at(7, 2) == trained.position_embedding.at(7, 2));
  // train.json: the loss of every step, the scores every score_every steps.
  const nlohmann::json record =
      nlohmann::json::parse(testing::read_whole_file(dir.path / "cat/train.json"));
  CHECK(record["format"] == "attnviz-training");
  CHECK(record["task"] == "text");
  CHECK(record["loss"].size() == 300);
  CHECK(record["scores"].size() == 1 + 300 / 25);
  CHECK(record["scores"][1]["step"] == 25);
  CHECK(record["scores"][1]["induction"].size() == 8);  // 2 layers of 4 heads
}

TEST_CASE("training refuses settings out of range and models it does not train") {
  TrainingSettings s;
  s.d_model = 30;  // not a multiple of 4 heads
  CHECK(Trainer::make(s).error().find("multiple of the heads") != std::string::npos);
  s = {};
  s.steps = -1;
  CHECK(Trainer::make(s).error().find("steps") != std::string::npos);
  s = {};
  s.optimizer.learning_rate = std::nanf("");
  CHECK(Trainer::make(s).error().find("learning rate") != std::string::npos);
  s = {};
  s.task = TrainingTaskKind::Text;
  s.text = "a";
  CHECK(Trainer::make(s).error().find("too short") != std::string::npos);
  Result<Model> stories = open_model("stories260K");
  REQUIRE(stories.ok());
  CHECK(Trainer::make({}, &*stories).error().find("GPT-2 models only") != std::string::npos);
}

}  // namespace attnviz

namespace attnviz {

TEST_CASE("training on from a model that copies already: its phase change is behind it, step 0") {
  Result<Model> kjv = open_model("gpt2-kjv-tiny");
  REQUIRE(kjv.ok());
  TrainingSettings s;
  s.steps = 1;
  s.texts = 2;
  s.length = 32;
  Result<Trainer> trainer = Trainer::make(s, &*kjv);
  REQUIRE_MESSAGE(trainer.ok(), trainer.error());
  REQUIRE(trainer->phase_change_step().has_value());
  CHECK(*trainer->phase_change_step() == 0);
  // Its probe is drawn from its own vocabulary, past its first ids, and written twice.
  const std::vector<int>& probe = trainer->probe();
  REQUIRE(probe.size() == 49);  // the start token and 24 tokens twice (its context is 128)
  for (std::size_t i = 1; i <= 24; ++i) {
    CHECK(probe[i] == probe[i + 24]);
    CHECK(probe[i] >= 3);
  }
  CHECK(trainer->from() == "gpt2-kjv-tiny");
}

}  // namespace attnviz
