// A toy family of models, added the way docs/architecture.md says to add one: this file and
// nothing else. "Random attention" is two layers of three heads whose weights are drawn from a
// seed: no norm, no MLP, nothing to edit, no prediction. A scenario whose model is named
// "random:SEED" (attnviz --model random:7) runs it.
//
// It stays in the tests to prove the seam: tests/family/test_random_family.cpp runs every view of
// the app on it (the app built with this file: attnviz_random_family), and the core tests check
// that a pipeline picks it and that its stages explain themselves.
#include "tests/family/random_attention.hpp"

#include "core/base/rng.hpp"
#include "core/document/scenario.hpp"
#include "core/text/tokenizer.hpp"

#include <cmath>
#include <string>

namespace attnviz::testing {

namespace {

constexpr int kLayers = 2, kHeads = 3, kModel = 4, kHead = 2;

class RandomAttentionRun final : public Run {
 public:
  Status run(const Scenario& scenario) override {
    const std::string& name = scenario.model()->model;
    std::uint64_t seed = 0;
    for (const char c : name.substr(kRandomModelPrefix.size())) {
      if (c < '0' || c > '9' || seed > 1'000'000'000)
        return Status::error("random:SEED: SEED is a number");
      seed = seed * 10 + static_cast<std::uint64_t>(c - '0');
    }
    Tokenization tokens = tokenize(scenario.target, static_cast<std::size_t>(scenario.max_tokens));
    if (tokens.tokens.empty()) return Status::error("the text has no tokens: type a word");
    const Eigen::Index n = static_cast<Eigen::Index>(tokens.tokens.size());
    std::uint64_t drawn = 0;  // values drawn from the seed's stream, in [-1, 1)
    const auto random = [&](Eigen::Index rows, Eigen::Index cols) {
      Matrix m(rows, cols);
      for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = rng::value(seed, drawn++);
      return m;
    };
    tokens_ = std::move(tokens);
    X_ = random(n, kModel);  // (n, d_model): each token a random vector
    layers_.resize(kLayers);
    weights_.resize(kLayers);
    for (int l = 0; l < kLayers; ++l) {
      AttentionResult& r = layers_[static_cast<std::size_t>(l)];
      Weights& w = weights_[static_cast<std::size_t>(l)];
      r.n_query = r.n_key = n;
      r.config.d_model = kModel;
      r.config.heads = kHeads;
      r.config.d_k = r.config.d_v = r.config.d_att = kHead;
      r.config.compatibility = Compatibility::ScaledDot;
      r.heads.resize(kHeads);
      r.concat.resize(n, kHeads * kHead);  // (n, heads · d_head)
      w.heads.resize(kHeads);
      for (int h = 0; h < kHeads; ++h) {
        HeadResult& head = r.heads[static_cast<std::size_t>(h)];
        HeadParameters& p = w.heads[static_cast<std::size_t>(h)];
        // 1. Q, K, V: X times random weights.                                    (n, d_head)
        p.W_Q = random(kModel, kHead);
        p.W_K = random(kModel, kHead);
        p.W_V = random(kModel, kHead);
        head.Q = X_ * p.W_Q;
        head.K = X_ * p.W_K;
        head.V = X_ * p.W_V;
        // 2. Scores, scaled; no mask.                                            (n, n)
        head.raw_scores = head.Q * head.K.transpose();
        head.scaled_scores = head.raw_scores / std::sqrt(static_cast<float>(kHead));
        head.masked_scores = head.scaled_scores;
        // 3. α: the softmax of each row.                                         (n, n)
        head.weights = head.masked_scores;
        for (Eigen::Index i = 0; i < n; ++i) {
          const float top = head.weights.row(i).maxCoeff();
          head.weights.row(i) = (head.weights.row(i).array() - top).exp().matrix();
          head.weights.row(i) /= head.weights.row(i).sum();
        }
        // 4. α · V.                                                              (n, d_head)
        head.output = head.weights * head.V;
        head.fully_masked_rows = RowFlags::Zero(n);
        r.concat.middleCols(h * kHead, kHead) = head.output;
      }
      w.W_O = random(kHeads * kHead, kModel);  // (heads · d_head, d_model)
      r.output = r.concat * w.W_O;             // (n, d_model)
      r.version = next_run_number();
    }
    run_count_ = next_run_number();
    return Status::success();
  }

  Capabilities capabilities() const override { return {}; }
  std::span<const AttentionStack> stacks() const override { return {&stack_, 1}; }
  const Tokenization& target() const override { return tokens_; }
  const Tokenization& keys() const override { return tokens_; }
  int layer_count() const override { return kLayers; }
  const AttentionResult& layer(int index) const override {
    return layers_[static_cast<std::size_t>(index)];
  }
  const Matrix& attention_input(int) const override { return X_; }
  const Matrix& X_target() const override { return X_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  void set_threads(int threads) override { threads_ = threads; }
  int threads() const override { return threads_; }
  std::uint64_t run_count() const override { return run_count_; }

  // X → Q K V → S → ÷√d → α → α·V → concat → ·W_O, each stage with what it was computed from.
  void block_stages(int layer, int head, std::vector<BlockStage>& stages) const override {
    stages.clear();
    if (layer < 0 || layer >= kLayers || head < 0 || head >= kHeads) return;
    const AttentionResult& r = layers_[static_cast<std::size_t>(layer)];
    const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
    const HeadParameters& p =
        weights_[static_cast<std::size_t>(layer)].heads[static_cast<std::size_t>(head)];
    StageList list(stages, layer, head, r);
    const auto add = [&](StageId id, std::string title, const Matrix& m, StageAxis rows,
                         StageAxis cols, StageRecipe::Kind kind) -> BlockStage& {
      BlockStage& stage = list.add(id, std::move(title), m, rows, cols,
                                   id == StageId::V ? StageJoin::Gap : StageJoin::Arrow);
      stage.recipe.kind = kind;
      return stage;
    };
    using Kind = StageRecipe::Kind;
    using Axis = StageAxis;
    add(StageId::X, "X = random", X_, Axis::Queries, Axis::Other, Kind::Embedding);
    const auto projection = [&](BlockStage& stage, const Matrix& W, std::string_view result,
                                std::string_view weight) {
      stage.recipe.input = &X_;
      stage.recipe.weight = &W;
      stage.recipe.result_name = result;
      stage.recipe.input_name = "X";
      stage.recipe.weight_name = weight;
    };
    projection(add(StageId::Q, "Q = XW_Q", h.Q, Axis::Queries, Axis::Other, Kind::Projection),
               p.W_Q, "Q", "W_Q");
    projection(add(StageId::K, "K = XW_K", h.K, Axis::Keys, Axis::Other, Kind::Projection), p.W_K,
               "K", "W_K");
    projection(add(StageId::V, "V = XW_V", h.V, Axis::Keys, Axis::Other, Kind::Projection), p.W_V,
               "V", "W_V");
    add(StageId::Scores, "S = QK\xe2\x8a\xa4", h.raw_scores, Axis::Queries, Axis::Keys,
        Kind::Scores);
    add(StageId::Scaled,
        "\xc3\xb7\xe2\x88\x9a"
        "d_k",
        h.scaled_scores, Axis::Queries, Axis::Keys, Kind::Scaling);
    add(StageId::Weights, "\xce\xb1 = softmax", h.weights, Axis::Queries, Axis::Keys, Kind::Softmax)
        .probabilities = true;
    add(StageId::HeadOutput, "\xce\xb1\xc2\xb7V", h.output, Axis::Queries, Axis::Other,
        Kind::WeightedSum);
    add(StageId::Concat, "concat", r.concat, Axis::Queries, Axis::Other, Kind::Concat).recipe.d_v =
        kHead;
    BlockStage& output = add(StageId::Output, "\xc2\xb7W_O", r.output, Axis::Queries, Axis::Other,
                             Kind::OutputProjection);
    output.recipe.other = &r.concat;
    output.recipe.weight = &weights_[static_cast<std::size_t>(layer)].W_O;
  }

 private:
  struct Weights {
    std::vector<HeadParameters> heads;
    Matrix W_O;
  };
  Tokenization tokens_;
  Matrix X_;
  std::vector<AttentionResult> layers_;
  std::vector<Weights> weights_;
  std::vector<std::string> warnings_;
  AttentionStack stack_{"random self-attention", StackKind::Self,  0, kLayers, kHeads,
                        TokenSide::Target,       TokenSide::Target};
  int threads_ = 1;
  std::uint64_t run_count_ = 0;
};

// Registered as the program starts: from then on every Pipeline knows the family.
const bool registered = [] {
  register_run_family(
      {"random attention",
       [](const Scenario& scenario) {
         return scenario.model() && scenario.model()->model.starts_with(kRandomModelPrefix);
       },
       [] { return std::unique_ptr<Run>(std::make_unique<RandomAttentionRun>()); }});
  return true;
}();

}  // namespace

bool random_family_registered() {
  return registered;
}

}  // namespace attnviz::testing
