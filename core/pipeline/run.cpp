#include "core/pipeline/run.hpp"

#include "core/document/scenario.hpp"

#include <atomic>
#include <mutex>

namespace attnviz {

const std::vector<EmbeddingSource>& Run::target_sources() const {
  static const std::vector<EmbeddingSource> none;
  return none;
}

Matrix Run::stack_weights(int stack, int layer, int head) const {
  if (stack != shown_stack() || layer < 0 || layer >= layer_count()) return {};
  const AttentionResult& result = this->layer(layer);
  if (head < 0 || static_cast<std::size_t>(head) >= result.heads.size()) return {};
  return result.heads[static_cast<std::size_t>(head)].weights;
}

const std::string& Run::translation() const {
  static const std::string none;
  return none;
}

const std::vector<int>& Run::shown_positions() const {
  const std::size_t n = sequence_length();
  if (identity_positions_.size() != n) {
    identity_positions_.resize(n);
    for (std::size_t i = 0; i < n; ++i) identity_positions_[i] = static_cast<int>(i);
  }
  return identity_positions_;
}

BlockStage& StageList::add(StageId id, std::string title, const Matrix& matrix, StageAxis rows,
                           StageAxis cols, StageJoin join) {
  BlockStage& stage = stages_.emplace_back();
  stage.id = id;
  stage.title = std::move(title);
  stage.matrix = &matrix;
  stage.rows = rows;
  stage.cols = cols;
  stage.join = join;
  stage.recipe.layer = layer_;
  stage.recipe.head = head_;
  stage.recipe.config = &result_.config;
  stage.recipe.head_result = &result_.heads[static_cast<std::size_t>(head_)];
  return stage;
}

namespace {

struct Families {
  std::mutex mutex;
  std::vector<std::unique_ptr<RunFamily>> registered;  // in the order they came; never removed
};

Families& families() {
  static Families instance;
  return instance;
}

}  // namespace

void register_run_family(RunFamily family) {
  Families& all = families();
  const std::lock_guard lock(all.mutex);
  all.registered.push_back(std::make_unique<RunFamily>(std::move(family)));
}

const RunFamily* registered_family_for(const Scenario& scenario) {
  Families& all = families();
  const std::lock_guard lock(all.mutex);
  for (auto it = all.registered.rbegin(); it != all.registered.rend(); ++it)
    if ((*it)->claims(scenario)) return it->get();
  return nullptr;
}

std::uint64_t next_run_number() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

}  // namespace attnviz
