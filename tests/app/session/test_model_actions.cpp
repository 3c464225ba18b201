// Model mode without a window: opening a shipped model for the text typed so far, knocking a head
// out, undo back to the one-layer scenario, saving and reopening a model's scenario with its
// interventions and selected layer, and models that cannot be opened.
#include "app/session/file_actions.hpp"
#include "app/session/history.hpp"
#include "app/session/status_line.hpp"
#include "app/session/view_state.hpp"
#include "core/models/model_files.hpp"
#include "tests/support/builtin_state.hpp"
#include "tests/support/replace_scenario.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include "tests/support/model_run_of.hpp"

#include <filesystem>
#include <fstream>

namespace attnviz::app {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

struct Fixture {
  AppState state;
  History history;
  RecentFiles recent{""};
  double now = 0;
  Fixture() {
    testing::load_builtin_scenario(state);
    state.recompute_if_needed();
    frame();
  }
  void frame() {
    now += 1.0;
    history.observe(state, false, now);
  }
};

}  // namespace

TEST_CASE("opening a shipped model keeps the text, is one undo step, and names the model") {
  Fixture f;
  const std::string one_layer = scenario_to_json(f.state.document.scenario());
  const std::string text = f.state.document.scenario().target;
  const std::string description = f.state.document.scenario().description;
  REQUIRE(description.find("apple") != std::string::npos);
  REQUIRE(open_model(f.state, "stories260K"));
  f.frame();
  // The one-layer scenario's description (the title's tooltip) tells of the toy: set aside.
  CHECK(f.state.document.scenario().description.empty());
  REQUIRE(f.state.pipeline().can(Capability::TrainedWeights));
  CHECK(f.state.document.scenario().model()->model == "stories260K");
  CHECK(f.state.document.scenario().target == text);
  CHECK(f.state.pipeline().layer_count() == 5);
  CHECK(f.state.pipeline().target().tokens.front().text == "<s>");
  CHECK(window_title(f.state).find("stories260K") != std::string::npos);
  CHECK(shape_summary(f.state).find("5 layers \xc3\x97 8 heads (4 key/value heads)") !=
        std::string::npos);

  REQUIRE(f.history.undo(f.state, f.now));
  f.state.recompute_if_needed();
  CHECK_FALSE(f.state.pipeline().can(Capability::TrainedWeights));
  CHECK(scenario_to_json(f.state.document.scenario()) == one_layer);
  CHECK(f.state.pipeline().layer_count() == 1);
  REQUIRE(f.history.redo(f.state));
  f.state.recompute_if_needed();
  CHECK(f.state.pipeline().can(Capability::TrainedWeights));
}

TEST_CASE("a model opened over a cross scenario sets its source and title aside, and says so") {
  // Lesson 7's scenario, left: "Cross-attention: ..." over a French source.
  Fixture f;
  testing::replace_scenario(f.state.document, [](Scenario& s) {
    s.title = "Cross-attention: looking at another sentence";
    s.edit_one_layer()->mode = Mode::Cross;
    s.edit_one_layer()->config.causal = false;
    s.edit_one_layer()->source = "le chat mange";
  });
  f.frame();
  static_cast<void>(f.state.document.take_notice());
  const std::string cross = scenario_to_json(f.state.document.scenario());
  REQUIRE(open_model(f.state, "gpt2-kjv-tiny"));
  f.frame();
  // A decoder has no cross-attention: the title no longer claims one, and the notice says what
  // went where.
  CHECK(f.state.document.scenario().title.empty());
  CHECK(window_title(f.state).find("Cross-attention") == std::string::npos);
  CHECK(f.state.document.take_notice() ==
        "the one-layer scenario's source sentence (\"le chat mange\") and title "
        "(\"Cross-attention: looking at another sentence\") are set aside (Ctrl+Z, or Models > "
        "Back to the one-layer scenario, brings them back)");
  // Undo brings both back, as does leaving the model.
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(scenario_to_json(f.state.document.scenario()) == cross);
  REQUIRE(f.history.redo(f.state));
  leave_model(f.state);
  CHECK(f.state.document.scenario().title == "Cross-attention: looking at another sentence");
  CHECK(f.state.document.scenario().description.find("apple") != std::string::npos);
  CHECK(f.state.document.scenario().one_layer().source == "le chat mange");
  CHECK(f.state.document.scenario().one_layer().mode == Mode::Cross);
}

TEST_CASE("a knocked-out head changes the layers above and the prediction, undo restores both") {
  Fixture f;
  REQUIRE(open_model(f.state, "gpt2-kjv-tiny"));
  f.state.apply(
      edits::set_target("And God said, Let there be light: and there was light. And God"));
  f.frame();
  // The pipeline the views read may be another after a recompute (app/session/compute_worker.hpp):
  // it is asked for each time.
  const auto last_logits = [&] {
    return model_run_of(f.state.pipeline())->forward().last_logits();
  };
  const RowVector before = last_logits();
  const Matrix layer0 = f.state.pipeline().layer(0).output;
  const Matrix layer1 = f.state.pipeline().layer(1).output;
  HeadIntervention ablate;
  ablate.output_scale = 0;
  f.state.apply(edits::set_head_intervention(0, 2, ablate));
  f.frame();
  CHECK(f.history.undo_label(f.state) == "knock out layer 1, head 3");  // as the views number them
  const AttentionResult& knocked = f.state.pipeline().layer(0);         // head 2 adds nothing now
  const Eigen::Index d_head = knocked.heads[2].V.cols();
  CHECK(knocked.concat.middleCols(2 * d_head, d_head).cwiseAbs().maxCoeff() == 0.0f);
  CHECK((f.state.pipeline().layer(0).output - layer0).cwiseAbs().maxCoeff() > 0.0f);
  CHECK((f.state.pipeline().layer(1).output - layer1).cwiseAbs().maxCoeff() > 0.0f);
  CHECK((last_logits() - before).cwiseAbs().maxCoeff() > 1e-3f);
  CHECK(shape_summary(f.state).find("1 head changed") != std::string::npos);

  REQUIRE(f.history.undo(f.state, f.now));
  f.state.recompute_if_needed();
  CHECK(f.state.document.scenario().model()->interventions.empty());
  CHECK((last_logits() - before).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE("a model's scenario saves and opens again with its interventions and selected layer") {
  TempDir dir;
  Fixture f;
  REQUIRE(open_model(f.state, "gpt2-kjv-tiny"));
  HeadIntervention uniform;
  uniform.pattern = HeadIntervention::Pattern::Uniform;
  f.state.apply(edits::set_head_intervention(1, 3, uniform));
  f.state.selection.layer = 1;
  f.state.selection.head = 3;
  const std::string path = (dir.path / "kjv.json").string();
  REQUIRE(save_scenario(f.state, f.recent, path));
  const std::string saved = testing::read_whole_file(path);
  CHECK(saved.find("\"version\": 2") != std::string::npos);
  CHECK(saved.find("\"name\": \"gpt2-kjv-tiny\"") != std::string::npos);  // portable: the name
  CHECK(saved.find("\"layer\": 1") != std::string::npos);

  Fixture other;
  REQUIRE(open_scenario(other.state, other.recent, path));
  other.state.recompute_if_needed();
  CHECK(other.state.pipeline().can(Capability::TrainedWeights));
  CHECK(*other.state.document.scenario().model() == *f.state.document.scenario().model());
  CHECK(other.state.selection.layer == 1);
  CHECK(other.state.selection.head == 3);
  CHECK_FALSE(other.state.unsaved());
}

TEST_CASE("a model path inside the shipped models' folder is recorded as the model's name") {
  const std::vector<std::string> folders = shipped_model_folders();
  REQUIRE_FALSE(folders.empty());
  const fs::path folder = fs::path(folders.front()) / "stories260K";
  CHECK(recorded_model_name(folder.string()) == "stories260K");
  CHECK(recorded_model_name((folder / "stories260K.bin").string()) == "stories260K");
  CHECK(recorded_model_name("/somewhere/else/model.bin") == "/somewhere/else/model.bin");
}

TEST_CASE("a model that cannot be opened changes nothing and says why") {
  TempDir dir;
  Fixture f;
  const std::string before = scenario_to_json(f.state.document.scenario());
  const std::uint64_t version = f.state.document.version();
  Status status = open_model(f.state, (dir.path / "nothing-here").string());
  CHECK_FALSE(status);
  CHECK(status.message().find("nothing-here") != std::string::npos);
  const fs::path broken = dir.path / "broken.bin";
  std::ofstream(broken) << "not a model";
  status = open_model(f.state, broken.string());
  CHECK_FALSE(status);
  CHECK(status.message().find("not opened") == 0);
  CHECK(f.state.document.version() == version);
  CHECK(scenario_to_json(f.state.document.scenario()) == before);
  CHECK_FALSE(f.state.pipeline().can(Capability::TrainedWeights));

  // A file naming a missing model: the state keeps what it had.
  const fs::path file = dir.path / "missing.json";
  std::ofstream(file) << R"({"version": 2, "model": {"name": "gpt-17"}, "target": "hello"})";
  status = open_scenario(f.state, f.recent, file.string());
  CHECK_FALSE(status);
  CHECK(status.message().find("gpt-17") != std::string::npos);
  CHECK(scenario_to_json(f.state.document.scenario()) == before);
}

TEST_CASE("leaving the model returns to the one-layer scenario as it was") {
  Fixture f;
  const std::string one_layer = scenario_to_json(f.state.document.scenario());
  REQUIRE(open_model(f.state, "stories260K"));
  f.state.selection.layer = 3;
  leave_model(f.state);
  f.state.recompute_if_needed();
  CHECK_FALSE(f.state.pipeline().can(Capability::TrainedWeights));
  CHECK(f.state.selection.layer == 0);
  CHECK(scenario_to_json(f.state.document.scenario()) == one_layer);
}

}  // namespace attnviz::app

namespace attnviz::app {

TEST_CASE(
    "editing a model's weights: views follow, undo and Reset model take it back, Save keeps it") {
  TempDir dir;
  Fixture f;
  REQUIRE(open_model(f.state, "stories260K"));
  f.state.apply(edits::set_target("Once upon a time there was a little girl"));
  f.frame();
  const auto last_logits = [&] {
    return model_run_of(f.state.pipeline())->forward().last_logits();
  };
  const RowVector before = last_logits();
  const Matrix layer1 = f.state.pipeline().layer(1).heads[2].weights;

  // A weight of layer 2's W_Q, head 3: layer 1 stays, layer 2's head 3 and the prediction change.
  // (The result may come from the other pipeline, which computed the text in one pass rather than
  // as it was typed: the same numbers to float rounding, hence the tolerances.)
  f.state.apply(edits::set_model_weight({2, HeadMatrix::Query, 3, 0, 0, 4.0f}));
  f.frame();
  CHECK(f.state.unsaved());
  CHECK((f.state.pipeline().layer(1).heads[2].weights - layer1).cwiseAbs().maxCoeff() < 1e-5f);
  CHECK((last_logits() - before).cwiseAbs().maxCoeff() > 1e-4f);
  CHECK(model_run_of(f.state.pipeline())
            ->model()
            .transformer.head_weight(2, 3, HeadMatrix::Query, 0, 0) == 4.0f);
  CHECK(shape_summary(f.state).find("1 weight edited") != std::string::npos);
  // What is not a number is no edit.
  const std::uint64_t version = f.state.document.version();
  f.state.apply(edits::set_model_weight({2, HeadMatrix::Query, 3, 0, 1, std::nanf("")}));
  f.state.apply(edits::set_model_embedding({5, 0, std::numeric_limits<float>::infinity()}));
  CHECK(f.state.document.version() == version);

  REQUIRE(f.history.undo(f.state, f.now));
  f.state.recompute_if_needed();
  CHECK_FALSE(f.state.document.scenario().model()->weights_edited());
  CHECK((last_logits() - before).cwiseAbs().maxCoeff() < 1e-4f);
  REQUIRE(f.history.redo(f.state));
  f.state.recompute_if_needed();
  f.frame();

  // A whole block (the matrix menu) and an embedding, saved and opened again.
  std::vector<float> zeros(64 * 8, 0.0f);
  f.state.apply(edits::set_model_weight_block(0, HeadMatrix::Value, 1, 64, 8, zeros));
  f.frame();
  const int token = model_run_of(f.state.pipeline())->model_tokens()[3].id;
  f.state.apply(edits::set_model_embedding({token, 7, -1.25f}));
  f.frame();
  CHECK(f.state.document.scenario().model()->weight_edits.size() == 1 + 64 * 8);
  const RowVector edited = last_logits();
  const std::string path = (dir.path / "edited.json").string();
  REQUIRE(save_scenario(f.state, f.recent, path));
  const std::string saved = testing::read_whole_file(path);
  CHECK(saved.find("\"kv_head\": 1") != std::string::npos);
  CHECK(saved.find("\"token\": " + std::to_string(token)) != std::string::npos);
  Fixture other;
  REQUIRE(open_scenario(other.state, other.recent, path));
  other.state.recompute_if_needed();
  CHECK(*other.state.document.scenario().model() == *f.state.document.scenario().model());
  CHECK((model_run_of(other.state.pipeline())->forward().last_logits() - edited)
            .cwiseAbs()
            .maxCoeff() < 1e-4f);

  // Reset model: every weight as trained, one undo step.
  f.state.apply(edits::reset_model_weights());
  f.frame();
  f.state.recompute_if_needed();
  CHECK_FALSE(f.state.document.scenario().model()->weights_edited());
  CHECK((last_logits() - before).cwiseAbs().maxCoeff() < 1e-4f);
  REQUIRE(f.history.undo(f.state, f.now));
  f.state.recompute_if_needed();
  CHECK((last_logits() - edited).cwiseAbs().maxCoeff() < 1e-4f);
}

}  // namespace attnviz::app

namespace attnviz::app {

// A block edited whole is hundreds of cells: the undo history counts them against its budget, and
// drops its oldest steps rather than grow past it.
TEST_CASE("the undo history's memory budget counts a model's weight edits") {
  Fixture f;
  REQUIRE(open_model(f.state, "stories260K"));
  f.state.recompute_if_needed();
  History small(std::size_t{256} << 10);  // 256 KiB
  double now = 0;
  small.observe(f.state, false, now);
  const std::vector<float> values(64 * 8, 0.5f);  // a whole W_Q block: 512 cells, 12 KiB
  for (int head = 0; head < 8; ++head)
    for (int layer = 0; layer < 5; ++layer) {
      f.state.apply(edits::set_model_weight_block(layer, HeadMatrix::Query, head, 64, 8, values));
      now += 2.0;
      small.observe(f.state, false, now);
    }
  // 40 steps of up to 480 KiB each would be past the budget: the oldest went.
  CHECK(small.steps() < 20);
  CHECK(small.steps() >= 2);
}

}  // namespace attnviz::app

namespace attnviz::app {

TEST_CASE("a mask pattern replaces a custom mask, and undo brings the mask back") {
  Fixture f;
  testing::replace_scenario(f.state.document,
                            [](Scenario& s) { s.edit_one_layer()->mask = MaskMatrix::Ones(2, 2); });
  f.frame();
  MaskPattern blocks;
  blocks.kind = MaskPattern::Kind::Blocks;
  blocks.block = 2;
  f.state.apply(edits::set_mask_pattern(blocks));
  f.frame();
  CHECK(f.state.document.scenario().one_layer().mask.size() == 0);
  CHECK(f.state.document.scenario().one_layer().mask_pattern == blocks);
  REQUIRE(f.state.pipeline().mask() != nullptr);
  CHECK((*f.state.pipeline().mask())(0, 2) == 0);  // another block
  CHECK(shape_summary(f.state).find("blocks mask (b 2)") != std::string::npos);
  REQUIRE(f.history.undo(f.state, f.now));
  f.state.recompute_if_needed();
  CHECK(f.state.document.scenario().one_layer().mask.size() == 4);
  CHECK_FALSE(f.state.document.scenario().one_layer().mask_pattern);
}

}  // namespace attnviz::app
