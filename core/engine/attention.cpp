// The attention engine: validation, buffers, and the stages run in order over heads and bands of
// queries, on the helper threads. The stages themselves are core/engine/attention_stages.cpp,
// their inner loops core/engine/kernels.hpp; a plain reference of the same computation is
// core/engine/reference_attention.hpp (the tests compare the two).
//
// Speed (docs/performance.md): the projections of every head are one product, made in place
// from each head's own weights at classroom sizes (no packed copy, no copy out); a head's scores
// are made a band of queries at a time, so that they stay in cache from the product that makes
// them to the one that uses them; 16 rows at a time go from raw to scaled and masked scores in
// one pass and to weights in two, 16 floats at a time (core/engine/lanes.hpp), with the 16 rows'
// maxima and sums reduced together; and no product touches the heap, at any size. Products up to
// kSmallProductFlops multiply-adds (every product of a classroom recompute) skip Eigen's GEMM,
// whose fixed cost per call exceeds them, for a kernel over blocks of rows by panels of 16-float
// groups of columns (multiply_by_size()).#include "core/engine/attention.hpp"

#include "core/engine/attention_stages.hpp"
#include "core/engine/kernels.hpp"
#include "core/engine/workers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

namespace attnviz {

// -----------------------------------------------------------------------------
// [SECTION] Engine
// -----------------------------------------------------------------------------

void AttentionEngine::prepare_buffers(Eigen::Index n_query, Eigen::Index n_key,
                                      const AttentionConfig& config, bool self_attention) {
  // Eigen's resize() keeps the allocation when the size is unchanged.
  const Eigen::Index heads = config.heads;
  // Kᵀ for the small products of the scores (key_scores()); empty when they are done by GEMM.
  const bool transposed_keys =
      config.compatibility != Compatibility::Additive && small_product(n_query, config.d_k, n_key);
  // V's rows grouped for the weighted sum (stages::keys_per_value_group()); empty when it is a
  // product over rows of V.
  const Eigen::Index keys_per_group = stages::keys_per_value_group(config, n_query, n_key);
  const Eigen::Index value_group_rows =
      keys_per_group > 0 ? (n_key + keys_per_group - 1) / keys_per_group : 0;
  result_.heads.resize(static_cast<std::size_t>(config.heads));
  for (HeadResult& head : result_.heads) {
    head.Q.resize(n_query, config.d_k);
    head.K.resize(n_key, config.d_k);
    head.V.resize(n_key, config.d_v);
    head.raw_scores.resize(n_query, n_key);
    head.scaled_scores.resize(n_query, n_key);
    head.masked_scores.resize(n_query, n_key);
    head.weights.resize(n_query, n_key);
    head.output.resize(n_query, config.d_v);
    head.fully_masked_rows.resize(n_query);
    head.key_transposed.resize(transposed_keys ? config.d_k : 0, transposed_keys ? n_key : 0);
    head.value_groups.resize(value_group_rows, value_group_rows > 0 ? kLanes : 0);
    switch (config.compatibility) {
      case Compatibility::General:
        head.query_projection.resize(n_query, config.d_k);
        break;
      case Compatibility::Additive:
        head.query_projection.resize(n_query, config.d_att);
        head.key_projection.resize(n_key, config.d_att);
        head.key_projection_transposed.resize(config.d_att, n_key);
        break;
      case Compatibility::Cosine:
        head.query_norms.resize(n_query);
        head.key_norms.resize(n_key);
        break;
      default:
        break;
    }
  }
  // The products of every head, unless the projections go straight from each head's weights to
  // its Q, K and V (compute() has sized the weights' buffer that the projections read).
  const Eigen::Index query_columns = project_directly_ ? 0 : heads * config.d_k;
  const Eigen::Index key_value_columns = project_directly_ ? 0 : heads * (config.d_k + config.d_v);
  if (self_attention) {
    projections_.resize(project_directly_ ? 0 : n_query, query_columns + key_value_columns);
    query_projections_.resize(0, 0);
  } else {
    query_projections_.resize(project_directly_ ? 0 : n_query, query_columns);
    projections_.resize(project_directly_ ? 0 : n_key, key_value_columns);
  }
  result_.concat.resize(n_query, heads * config.d_v);
  result_.output.resize(n_query, config.d_model);
  result_.n_query = n_query;
  result_.n_key = n_key;
  result_.config = config;
}

Status AttentionEngine::compute(const Matrix& X_query, const Matrix& X_key,
                                const Parameters& given_parameters, const AttentionConfig& config,
                                const MaskMatrix* custom_mask) {
  // Validate everything before touching the result, so that an error keeps the last one.
  if (Status status = validate(config); !status) return status;
  if (given_parameters.heads.size() != static_cast<std::size_t>(config.heads))
    return check_parameters(given_parameters, config, ValueCheck::Used);
  // Grouped-query attention: every head of a group takes its W_K and W_V from the group's first
  // head (kv_source_head), copied into shared_parameters_ (its buffers kept between calls). Each
  // head still computes its own K and V from them, so the rest of the engine is unchanged.
  if (shares_keys(config)) {
    shared_parameters_ = given_parameters;
    for (int h = 0; h < config.heads; ++h) {
      const auto source = static_cast<std::size_t>(kv_source_head(config, h));
      HeadParameters& head = shared_parameters_.heads[static_cast<std::size_t>(h)];
      head.W_K = given_parameters.heads[source].W_K;  // (d_model, d_k)
      head.W_V = given_parameters.heads[source].W_V;  // (d_model, d_v)
    }
  }
  const Parameters& parameters = shares_keys(config) ? shared_parameters_ : given_parameters;
  if (X_query.rows() == 0) return Status::error("there are no query tokens");
  if (X_key.rows() == 0) return Status::error("there are no key tokens");
  if (X_query.cols() != config.d_model || X_key.cols() != config.d_model)
    return Status::error("embeddings have " + std::to_string(X_query.cols()) +
                         " dimensions but d_model is " + std::to_string(config.d_model));
  // Self-attention passes one matrix twice: it is checked once.
  const Matrix* const inputs[] = {&X_query, &X_key};
  for (const Matrix* X : std::span(inputs, &X_query == &X_key ? 1 : 2)) {
    if (all_finite(*X)) continue;
    for (Eigen::Index r = 0; r < X->rows(); ++r)
      for (Eigen::Index c = 0; c < X->cols(); ++c)
        if (!std::isfinite((*X)(r, c)))
          return Status::error(std::string(X == &X_query ? "X_query" : "X_key") + "[" +
                               std::to_string(r) + "][" + std::to_string(c) + "] " +
                               describe_non_finite((*X)(r, c)) +
                               ": embeddings must be finite numbers");
  }
  // Every shape, and the values of the parameters this compatibility function uses: W_Q, W_K and
  // W_V are checked with step 1's copy, below (heads wider than 8: where they are), and on an
  // error the check of all of them names the first bad entry. (A weight that is not used, say
  // W_a with dot products, may be anything until it is.)
  if (!parameters_valid(parameters, config, ValueCheck::UsedExceptProjections))
    return check_parameters(parameters, config, ValueCheck::Used);
  if (custom_mask && (custom_mask->rows() != X_query.rows() || custom_mask->cols() != X_key.rows()))
    return Status::error("the mask is " + std::to_string(custom_mask->rows()) + "x" +
                         std::to_string(custom_mask->cols()) + " but attention is " +
                         std::to_string(X_query.rows()) + "x" + std::to_string(X_key.rows()));
  // Step 1, part 1: the projection weights checked, and copied (paired or packed) into the
  // engine's own buffers; result() is still untouched.
  project_directly_ = stages::projects_directly(config, X_query.rows(), X_key.rows());
  bool weights_finite = false;
  if (project_directly_) {
    packed_weights_.resize(0, 0);
    paired_weights_.resize(stages::paired_weights_rows(config), kLanes);
    weights_finite = stages::check_and_pair_projection_weights(parameters, config, paired_weights_);
  } else {
    paired_weights_.resize(0, 0);
    packed_weights_.resize(config.d_model,
                           static_cast<Eigen::Index>(config.heads) * (2 * config.d_k + config.d_v));
    weights_finite = stages::pack_projection_weights(parameters, config, packed_weights_);
  }
  if (!weights_finite) return check_parameters(parameters, config, ValueCheck::Used);

  const bool self_attention = &X_query == &X_key;
  prepare_buffers(X_query.rows(), X_key.rows(), config, self_attention);
  // With threads (set_threads()), a step with enough work is split into one task per thread: the
  // packed projections by bands of columns, the heads by ranges (pairs of heads kept together
  // for the projections made in place), W_O by bands of rows. A step with less runs on this
  // thread alone: a fork-join costs about a microsecond here (waking a helper, then one core
  // reading what the other wrote), more than a small step gains. Every number is computed by the
  // same code either way (set_threads(): bit for bit the same but for Eigen's GEMM blocking).
  const int threads = this->threads();
  const Eigen::Index n_query = X_query.rows(), n_key = X_key.rows(), heads = config.heads;
  const Eigen::Index projection_work =
      (n_query * heads * config.d_k + n_key * heads * (config.d_k + config.d_v)) * config.d_model;
  const Eigen::Index head_work = heads * n_query * n_key * (config.d_k + config.d_v + kSoftmaxWork);
  const Eigen::Index output_work = n_query * heads * config.d_v * config.d_model;
  const auto tasks_for = [&](Eigen::Index work) { return work >= kParallelWork ? threads : 1; };
  const auto run_tasks = [&](int tasks, auto&& task) {
    if (tasks > 1)
      workers_->run(tasks, task);
    else
      task(0);
  };
  if (!project_directly_) {
    const int tasks = tasks_for(projection_work);
    run_tasks(tasks,
              [&](int t) { project_packed(X_query, X_key, config, self_attention, t, tasks); });
  }
  // Ranges of heads (each making its heads' projections when they are made in place), an even
  // number each but the last, so that no pair is split.
  const int head_tasks = tasks_for(head_work + (project_directly_ ? projection_work : 0));
  int heads_per_task = static_cast<int>((heads + head_tasks - 1) / head_tasks);
  heads_per_task += heads_per_task % 2 != 0 && heads_per_task < config.heads ? 1 : 0;
  run_tasks((config.heads + heads_per_task - 1) / heads_per_task, [&](int t) {
    const int first = t * heads_per_task, last = std::min(config.heads, first + heads_per_task);
    if (project_directly_)
      stages::project_directly(result_.heads, parameters, paired_weights_, config, X_query, X_key,
                               first, last);
    for (int h = first; h < last; ++h) {
      compute_head(h, parameters.heads[static_cast<std::size_t>(h)], config, self_attention,
                   custom_mask);
      const HeadResult& head = result_.heads[static_cast<std::size_t>(h)];
      copy_rows(head.output.data(), config.d_v,
                result_.concat.data() + static_cast<Eigen::Index>(h) * config.d_v,
                result_.concat.cols(), head.output.rows(),
                config.d_v);  // concat[:, h·d_v ...] = output (n_query, d_v)
    }
  });
  result_.fully_masked_row_count = 0;
  result_.overflow = false;
  for (const HeadResult& head : result_.heads) {
    result_.fully_masked_row_count += static_cast<int>(head.fully_masked_rows.cast<int>().sum());
    result_.overflow = result_.overflow || head.overflow;
  }
  const int output_tasks = tasks_for(output_work);
  const Eigen::Index rows_per_task = (n_query + output_tasks - 1) / output_tasks;
  run_tasks(output_tasks, [&](int t) {
    const Eigen::Index first = std::min(n_query, t * rows_per_task),
                       rows = std::min(rows_per_task, n_query - first);
    if (rows > 0)
      multiply_by_size(result_.concat.middleRows(first, rows), parameters.W_O,
                       result_.output.middleRows(first, rows));  // (rows, d_model)
  });
  result_.overflow = result_.overflow || !all_finite(result_.output);
  ++result_.version;
  return Status::success();
}

AttentionEngine::AttentionEngine() = default;
AttentionEngine::~AttentionEngine() = default;
AttentionEngine::AttentionEngine(AttentionEngine&&) noexcept = default;
AttentionEngine& AttentionEngine::operator=(AttentionEngine&&) noexcept = default;

void AttentionEngine::set_threads(int threads) {
  threads = std::clamp(threads, 1, kMaxThreads);
  if (threads == this->threads()) return;
  workers_.reset();
  if (threads > 1) workers_ = std::make_unique<Workers>(threads);
}

int AttentionEngine::threads() const {
  return workers_ ? workers_->threads() : 1;
}

// Task `task` of `tasks` of the packed projections: its band of the columns of each product.
void AttentionEngine::project_packed(const Matrix& X_query, const Matrix& X_key,
                                     const AttentionConfig& config, bool self_attention, int task,
                                     int tasks) {
  const auto band = [&](const Matrix& X, Eigen::Index first_column, Eigen::Index columns,
                        Matrix& dst) {
    const Eigen::Index per_task = ((columns + tasks - 1) / tasks + kLanes - 1) / kLanes * kLanes;
    const Eigen::Index first = std::min(columns, task * per_task),
                       width = std::min(per_task, columns - first);
    if (width > 0)
      multiply_by_size(X, packed_weights_.middleCols(first_column + first, width),
                       dst.middleCols(first, width));
  };
  const Eigen::Index query_columns = static_cast<Eigen::Index>(config.heads) * config.d_k;
  if (self_attention) {
    band(X_query, 0, packed_weights_.cols(),
         projections_);  // (n, H·(2·d_k + d_v)): [Q … | K … | V …]
  } else {
    band(X_query, 0, query_columns, query_projections_);  // (n_query, H·d_k)
    band(X_key, query_columns, packed_weights_.cols() - query_columns,
         projections_);  // (n_key, H·(d_k + d_v))
  }
}

void AttentionEngine::compute_head(int h, const HeadParameters& parameters,
                                   const AttentionConfig& config, bool self_attention,
                                   const MaskMatrix* custom_mask) {
  HeadResult& head = result_.heads[static_cast<std::size_t>(h)];
  // 1. Projections (compute()): made in place, or this head's columns of the products of every
  // head.
  if (!project_directly_) {
    const Eigen::Index key_offset =
        self_attention ? static_cast<Eigen::Index>(config.heads) * config.d_k : 0;
    stages::extract_head_projections(head, h, config,
                                     self_attention ? projections_ : query_projections_, 0,
                                     projections_, key_offset);
  }
  // 2 to 6, a band of queries at a time (all of them in a classroom): its scores, from raw to
  // weights, stay in L2 cache from the product that makes them to the one that uses them.
  const Eigen::Index n_query = head.Q.rows(), band = stages::rows_per_band(head.K.rows());
  for (Eigen::Index first = 0; first < n_query; first += band) {
    const Eigen::Index rows = std::min(band, n_query - first);
    // 2. Compatibility of these queries with every key.
    stages::compatibility_scores(head, parameters, config, first, rows);
    // 3 to 5. Scale, mask and the weights, row by row.
    stages::scale_mask_softmax(head, config, custom_mask, first, rows);
    // 6. Weighted sum of the values.
    stages::weighted_sum(head, first, rows);
  }
}

}  // namespace attnviz
