// The document: every edit goes through it, changes what it says and bumps the version; loading
// and saving set what "unsaved" means.
#include <doctest/doctest.h>
#include "tests/support/replace_scenario.hpp"

#include <cmath>
#include <limits>

#include "app/session/app_state.hpp"
#include "app/session/document.hpp"
#include "tests/support/builtin_state.hpp"

namespace attnviz::app {
namespace {

Document builtin_document(const std::string& path = "") {
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  Document document;
  document.load(*load, path);
  return document;
}

}  // namespace

TEST_CASE("a loaded document is saved, an edit makes it unsaved and bumps the version") {
  Document document = builtin_document("/tmp/week3.json");
  CHECK(document.path() == "/tmp/week3.json");
  CHECK_FALSE(document.unsaved());
  const std::uint64_t version = document.version();
  document.set_target("the cat sat");
  CHECK(document.scenario().target == "the cat sat");
  CHECK(document.version() == version + 1);
  CHECK(document.unsaved());
  CHECK(document.opened().target != "the cat sat");  // what Reset goes back to stays
}

TEST_CASE("a save records the path and the view, and is no edit") {
  Document document = builtin_document();
  document.set_title("Week 3");
  const std::uint64_t version = document.version();
  document.saved("/tmp/week3.json", R"({"head":1})");
  CHECK(document.version() == version);
  CHECK_FALSE(document.unsaved());
  CHECK(document.path() == "/tmp/week3.json");
  CHECK(document.scenario().view_json == R"({"head":1})");
  document.mark_never_saved();
  CHECK(document.unsaved());
}

TEST_CASE("cross attention starts with the target as its source") {
  Document document = builtin_document();
  REQUIRE(document.scenario().one_layer().source.empty());
  document.set_mode(Mode::Cross);
  CHECK(document.scenario().one_layer().mode == Mode::Cross);
  CHECK(document.scenario().one_layer().source == document.scenario().target);
}

TEST_CASE("a weight outside its matrix, or not finite, is no edit") {
  Document document = builtin_document();
  const std::uint64_t version = document.version();
  document.set_weight(ParameterName::W_K, 1, 2, 3, 0.375f);
  CHECK(document.scenario().one_layer().parameters.heads[1].W_K(2, 3) == 0.375f);
  CHECK(document.version() == version + 1);
  const Matrix& W_K = document.scenario().one_layer().parameters.heads[1].W_K;
  document.set_weight(ParameterName::W_K, 1, static_cast<int>(W_K.rows()), 0, 1.0f);
  document.set_weight(ParameterName::W_K, 1, 0, -1, 1.0f);
  document.set_weight(ParameterName::W_K, 1, 0, 0, std::numeric_limits<float>::quiet_NaN());
  CHECK(document.version() == version + 1);
}

TEST_CASE("a matrix's menu: zero, scale, then reset to the matrix as opened") {
  Document document = builtin_document();
  const Matrix opened = document.scenario().one_layer().parameters.heads[0].W_Q;
  document.apply_to_matrix(ParameterName::W_Q, 0, MatrixAction::Double, 0);
  CHECK(document.scenario().one_layer().parameters.heads[0].W_Q.isApprox(opened * 2.0f));
  document.apply_to_matrix(ParameterName::W_Q, 0, MatrixAction::Zero, 0);
  CHECK(document.scenario().one_layer().parameters.heads[0].W_Q.isZero());
  document.apply_to_matrix(ParameterName::W_Q, 0, MatrixAction::Reset, 0);
  CHECK(document.scenario().one_layer().parameters.heads[0].W_Q == opened);
  document.apply_to_matrix(ParameterName::W_Q, 0, MatrixAction::Randomize, 99);
  CHECK(document.scenario().one_layer().parameters.heads[0].W_Q != opened);
}

TEST_CASE("an embedding edit keeps the rest of the row as shown, and a reset takes it back") {
  Document document = builtin_document();
  Token token;
  token.text = "Apple";
  token.key = "apple";
  const int d_model = document.scenario().one_layer().config.d_model;
  const std::vector<float> shown(static_cast<std::size_t>(d_model), 0.25f);
  document.set_embedding_value(token, 1, -1.0f, shown.data());
  const auto found = document.scenario().one_layer().embeddings.find("Apple");
  REQUIRE(found != document.scenario().one_layer().embeddings.end());
  REQUIRE(found->second.size() == static_cast<std::size_t>(d_model));
  CHECK(found->second[0] == 0.25f);
  CHECK(found->second[1] == -1.0f);
  document.reset_embeddings({&token});
  CHECK(document.scenario().one_layer().embeddings.count("Apple") == 0);
}

TEST_CASE("AppState::edit() computes the edit at once, the document alone at the next recompute") {
  AppState state;
  testing::load_builtin_scenario(state);
  state.recompute_if_needed();
  state.apply(edits::set_target("the cat sat on the mat"));
  CHECK(state.computed.version == state.document.version());
  CHECK(state.pipeline().target().tokens.size() == 6);
  state.document.set_target("the cat");
  CHECK(state.pipeline().target().tokens.size() == 6);  // not yet
  state.recompute_if_needed();
  CHECK(state.pipeline().target().tokens.size() == 2);
}

TEST_CASE("the selection is kept within the selected layer's result, also without a recompute") {
  AppState state;
  testing::load_builtin_scenario(state);
  state.recompute_if_needed();
  state.selection = {
      .layer = 3, .head = 9, .query = 40, .key = 12};  // as an option or a lesson may set it
  state.recompute_if_needed();  // nothing to compute: the selection is still brought in range
  CHECK(state.selection.layer == 0);
  CHECK(state.selection.head == 1);
  CHECK(state.selection.query == 4);
  CHECK(state.selection.key == 4);
  CHECK(&state.result() == &state.pipeline().layer(0));
  state.selection.key = -7;
  state.recompute_if_needed();
  CHECK(state.selection.key == -1);  // none
}

TEST_CASE("the editors' head follows the document when its last compute failed") {
  AppState state;
  testing::load_builtin_scenario(state);
  state.recompute_if_needed();
  state.selection.head = 1;
  state.apply(edits::set_target(""));  // fails: the result keeps two heads
  AttentionConfig one_head = state.document.scenario().one_layer().config;
  one_head.heads = 1;
  state.apply(edits::set_config(one_head));
  CHECK_FALSE(state.computed.error.empty());
  CHECK(state.result().heads.size() == 2);
  CHECK(state.selection.head == 1);  // the views show the result
  CHECK(state.edited_head() == 0);   // the weights editor shows the document
}

// Cross-attention has no causal mask (core/document/scenario.hpp, kCausalOffInCross).
TEST_CASE("switching to cross mode turns the causal mask off, as one edit, and says so once") {
  AppState state;
  testing::load_builtin_scenario(state);
  AttentionConfig causal = state.document.scenario().one_layer().config;
  causal.causal = true;
  state.apply(edits::set_config(causal));
  CHECK(state.document.take_notice().empty());  // self-attention keeps its mask
  const std::uint64_t version = state.document.version();
  state.apply(edits::set_mode(Mode::Cross));
  CHECK(state.document.version() == version + 1);  // one edit: one undo step
  CHECK(state.document.scenario().one_layer().mode == Mode::Cross);
  CHECK_FALSE(state.document.scenario().one_layer().config.causal);
  CHECK(state.computed.error.empty());  // it computes
  const std::string notice = state.document.take_notice();
  CHECK(notice.rfind("Causal mask off", 0) == 0);  // what was done, first
  CHECK(notice.find("cross-attention") != std::string::npos);
  CHECK(state.document.take_notice().empty());  // said once
  state.apply(edits::set_mode(Mode::Self));
  CHECK_FALSE(state.document.scenario().one_layer().config.causal);  // it stays off
  CHECK(state.document.take_notice().empty());
}

TEST_CASE("in cross mode no edit turns the causal mask on") {
  AppState state;
  testing::load_builtin_scenario(state);
  state.apply(edits::set_mode(Mode::Cross));
  AttentionConfig causal = state.document.scenario().one_layer().config;
  causal.causal = true;
  causal.hard = true;
  state.apply(edits::set_config(causal));
  CHECK_FALSE(state.document.scenario().one_layer().config.causal);
  CHECK(state.document.scenario().one_layer().config.hard);  // the rest of the settings are taken
  CHECK_FALSE(state.document.take_notice().empty());
  testing::replace_scenario(state.document,
                            [](Scenario& s) { s.edit_one_layer()->config.causal = true; });
  CHECK_FALSE(state.document.scenario().one_layer().config.causal);
  state.recompute_if_needed();
  CHECK(state.computed.error.empty());
}

TEST_CASE("a cross scenario with the causal mask, loaded or put back, has it off") {
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  Scenario both = *load;
  both.edit_one_layer()->mode = Mode::Cross;
  both.edit_one_layer()->source = "je mange une pomme";
  both.edit_one_layer()->config.causal =
      true;  // made in code: parse_scenario would have turned it off
  Document document;
  document.load(both, "");
  CHECK_FALSE(document.scenario().one_layer().config.causal);
  CHECK_FALSE(document.opened().one_layer().config.causal);
  CHECK_FALSE(document.unsaved());
  CHECK_FALSE(document.take_notice().empty());
  document.replace(both);
  CHECK_FALSE(document.scenario().one_layer().config.causal);
}

// An untitled scenario is called by its sentence (scenario_title) until the user names it.
TEST_CASE("an untitled scenario's title follows its sentence, a named one's stays") {
  Document document = builtin_document();
  REQUIRE(document.scenario().title.empty());
  CHECK(scenario_title(document.scenario()) == "I like to eat apple");
  document.set_target("the animal was tired");
  CHECK(scenario_title(document.scenario()) == "The animal was tired");
  document.set_title("Pronouns");
  document.set_target("the cat sat");
  CHECK(scenario_title(document.scenario()) == "Pronouns");
  document.set_title("");  // renamed to nothing: untitled again
  CHECK(scenario_title(document.scenario()) == "The cat sat");
}

}  // namespace attnviz::app

namespace attnviz::app {

// In model mode the scenario has no one-layer model: its edits are no edits (and nothing
// crashes); the model's edits are. Leaving the model gives the one-layer model back as it was.
TEST_CASE("a model's document takes no one-layer edit, and gives the one-layer model back") {
  Document document = builtin_document();
  document.set_seed(1234);
  const std::string one_layer = scenario_to_json(document.scenario());
  document.set_model(ModelSpec::named("stories260K"));
  REQUIRE(document.scenario().has_model());
  const std::uint64_t version = document.version();
  AttentionConfig config = document.scenario().one_layer().config;
  config.heads = 1;
  document.set_config(config);
  document.set_seed(5);
  document.set_mode(Mode::Cross);
  document.set_source("le chat");
  document.set_weight(ParameterName::W_Q, 0, 0, 0, 3.0f);
  document.draw_weights();
  document.set_mask_pattern(MaskPattern{});
  CHECK(document.version() == version);  // none of them an edit
  document.set_head_intervention(0, 1, HeadIntervention{HeadIntervention::Pattern::Uniform, 1.0f});
  CHECK(document.version() == version + 1);
  document.set_model(std::nullopt);
  CHECK_FALSE(document.scenario().has_model());
  CHECK(scenario_to_json(document.scenario()) == one_layer);  // the seed 1234 too
}

}  // namespace attnviz::app
