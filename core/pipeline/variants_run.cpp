#include "core/pipeline/variants_run.hpp"

#include "core/base/json_text.hpp"
#include "core/engine/attention.hpp"
#include "core/variants/grouped_query.hpp"
#include "core/variants/kv_cache.hpp"
#include "core/variants/linformer.hpp"
#include "core/variants/sparse_masks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace attnviz {

namespace {

constexpr std::array<std::pair<VariantMethod, std::string_view>, 8> kMethods = {{
    {VariantMethod::Flash, "flash"},
    {VariantMethod::Linformer, "linformer"},
    {VariantMethod::Reformer, "reformer"},
    {VariantMethod::Window, "window"},
    {VariantMethod::Dilated, "dilated"},
    {VariantMethod::Blocks, "blocks"},
    {VariantMethod::Decode, "decode"},
    {VariantMethod::SharedKeys, "shared_keys"},
}};

// The variant object, written field by field: `"key": value` lines, indented by four spaces.
class Writer {
 public:
  template <typename Write>
  void field(std::string_view key, Write&& write) {
    out_ += first_ ? "{\n    " : ",\n    ";
    first_ = false;
    append_json_string(out_, key);
    out_ += ": ";
    write(out_);
  }
  void number(std::string_view key, double value) {
    field(key, [&](std::string& out) { append_json_number(out, static_cast<float>(value)); });
  }
  void integer(std::string_view key, std::int64_t value) {
    field(key, [&](std::string& out) { out += std::to_string(value); });
  }
  void text(std::string_view key, std::string_view value) {
    field(key, [&](std::string& out) { append_json_string(out, value); });
  }
  void boolean(std::string_view key, bool value) {
    field(key, [&](std::string& out) { out += value ? "true" : "false"; });
  }
  template <typename Dense>
  void matrix(std::string_view key, const Dense& value) {
    field(key, [&](std::string& out) { append_json_matrix(out, value, 6); });
  }
  template <typename T>
  void list(std::string_view key, const std::vector<T>& values) {
    field(key, [&](std::string& out) {
      out += '[';
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        if constexpr (std::is_floating_point_v<T>)
          append_json_number(out, static_cast<float>(values[i]));
        else
          out += std::to_string(values[i]);
      }
      out += ']';
    });
  }
  std::string finish() { return (first_ ? std::string("{") : std::move(out_)) + "\n  }"; }

 private:
  std::string out_;
  bool first_ = true;
};

Matrix mask_as_matrix(const MaskMatrix& mask) {
  return mask.cast<float>();
}

}  // namespace

std::string_view to_string(VariantMethod method) {
  for (const auto& [value, name] : kMethods)
    if (value == method) return name;
  return "flash";
}

std::optional<VariantMethod> parse_variant_method(std::string_view name) {
  for (const auto& [value, known] : kMethods)
    if (known == name) return value;
  return std::nullopt;
}

std::string variant_method_names() {
  std::string out;
  for (const auto& [value, name] : kMethods) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

Result<float> variant_score_scale(const AttentionConfig& config, std::string_view method) {
  if (config.compatibility != Compatibility::Dot &&
      config.compatibility != Compatibility::ScaledDot)
    return Status::error(std::string(method) +
                         " computes dot-product scores: set the score function to dot or scaled "
                         "dot");
  if (config.hard)
    return Status::error(std::string(method) + " computes a softmax: turn hard attention off");
  const float scale = config.compatibility == Compatibility::ScaledDot
                          ? 1.0f / std::sqrt(static_cast<float>(config.d_k))
                          : 1.0f;
  return scale / config.temperature;
}

Result<DecodedSentence> decode_sentence(const Parameters& parameters, const AttentionConfig& config,
                                        int head, const Matrix& X, float scale) {
  const HeadParameters& own = parameters.heads[static_cast<std::size_t>(head)];
  const HeadParameters& kv =
      parameters.heads[static_cast<std::size_t>(kv_source_head(config, head))];
  KvCacheDecoder decoder(own.W_Q, kv.W_K, kv.W_V, scale);
  DecodedSentence decoded;
  for (Eigen::Index t = 0; t < X.rows(); ++t) {
    Result<DecodeStep> step = decoder.step(X.row(t));
    if (!step) return step.status();
    decoded.steps.push_back(std::move(*step));
  }
  decoded.keys = decoder.keys();
  decoded.values = decoder.values();
  return decoded;
}

Result<std::string> variant_to_json(const Scenario& scenario, const Pipeline& pipeline,
                                    const VariantRequest& request) {
  if (!pipeline.can(Capability::EditableParameters))
    return Status::error("the variants run on the one-layer scenario, not on a real model");
  const AttentionResult& r = pipeline.result();
  const AttentionConfig& c = r.config;
  if (request.head < 0 || request.head >= static_cast<int>(r.heads.size()))
    return Status::error("the scenario has " + std::to_string(r.heads.size()) +
                         " heads: --head must be 0 to " + std::to_string(r.heads.size() - 1));
  // Every method but shared keys computes dot-product scores itself; shared keys is the engine's.
  const bool own_scores = request.method != VariantMethod::SharedKeys;
  Result<float> scaled = own_scores ? variant_score_scale(c, to_string(request.method)) : 1.0f;
  if (!scaled) return scaled.status();
  const float scale = *scaled;
  const HeadResult& h = r.heads[static_cast<std::size_t>(request.head)];
  const MaskMatrix* custom = pipeline.mask();  // the custom mask fitted, or the pattern's
  const bool self = !pipeline.cross();
  const std::string method(to_string(request.method));
  const auto refuse_mask = [&](const char* why) -> Status {
    if (custom) return Status::error(method + " does not take the scenario's custom mask: " + why);
    return Status::success();
  };

  Writer w;
  w.text("method", method);
  w.integer("head", request.head);
  if (own_scores) w.number("scale", scale);
  Matrix output, full;  // (n_query, d_v)
  std::int64_t pairs = 0, pairs_full = 0;
  switch (request.method) {
    case VariantMethod::Flash: {
      Result<FlashResult> flash =
          flash_attention(h.Q, h.K, h.V, scale, c.causal, custom, request.flash, true);
      if (!flash) return flash.status();
      w.integer("query_block", request.flash.query_block);
      w.integer("key_block", request.flash.key_block);
      w.integer("scores_held", flash->scores_held);
      w.integer("scores_of_full_attention", r.n_query * r.n_key);
      w.list("row_max", flash->row_max);
      w.list("row_sum", flash->row_sum);
      w.field("tiles", [&](std::string& out) {
        out += '[';
        for (std::size_t t = 0; t < flash->tiles.size(); ++t) {
          const FlashTile& tile = flash->tiles[t];
          out += t ? ",\n      {" : "\n      {";
          out += "\"queries\": [" + std::to_string(tile.query_begin) + ", " +
                 std::to_string(tile.query_end) + "], \"keys\": [" +
                 std::to_string(tile.key_begin) + ", " + std::to_string(tile.key_end) +
                 "], \"skipped\": " + (tile.skipped ? "true" : "false") +
                 ", \"pairs\": " + std::to_string(tile.pairs) + ", \"rescale\": [";
          for (std::size_t k = 0; k < tile.rescale.size(); ++k) {
            if (k) out += ", ";
            append_json_number(out, tile.rescale[k]);
          }
          out += "]}";
        }
        out += "\n    ]";
      });
      output = flash->output;
      full = h.output;
      pairs = flash->pairs_computed;
      break;
    }
    case VariantMethod::Linformer: {
      if (c.causal)
        return Status::error(
            "linformer has no causal mask (a summary key mixes every position): turn causal off");
      if (Status status = refuse_mask("a summary key mixes every position"); !status) return status;
      const int n = static_cast<int>(r.n_key);
      if (request.summaries < 1 || request.summaries > n)
        return Status::error("--k, the number of summary keys, must be between 1 and n = " +
                             std::to_string(n) + ", got " + std::to_string(request.summaries));
      const Matrix E = linformer_projection(request.summaries, n, request.seed);
      const Matrix F = request.share_projection
                           ? E
                           : linformer_projection(request.summaries, n, request.seed + 1);
      Result<LinformerResult> lin = linformer_attention(h.Q, h.K, h.V, E, F, scale);
      if (!lin) return lin.status();
      w.integer("k", request.summaries);
      w.boolean("shared_projection", request.share_projection);
      w.matrix("E", E);
      w.matrix("summary_keys", lin->summary_keys);
      w.matrix("summary_values", lin->summary_values);
      w.matrix("weights", lin->weights);
      output = lin->output;
      Result<FlashResult> plain = full_attention(h.Q, h.K, h.V, scale, false, nullptr);
      if (!plain) return plain.status();
      full = plain->output;
      pairs = lin->pairs;
      break;
    }
    case VariantMethod::Reformer: {
      if (!self) return Status::error("reformer shares queries and keys: it needs self-attention");
      if (Status status = refuse_mask("its buckets decide who meets whom"); !status) return status;
      Result<ReformerResult> lsh = reformer_attention(h.Q, h.V, scale, c.causal, request.reformer);
      if (!lsh) return lsh.status();
      w.integer("buckets", request.reformer.buckets);
      w.integer("chunk", request.reformer.chunk);
      w.integer("rounds", request.reformer.rounds);
      w.field("bucket_of_token", [&](std::string& out) {
        out += '[';
        for (std::size_t k = 0; k < lsh->rounds.size(); ++k) {
          out += k ? ", [" : "[";
          for (std::size_t i = 0; i < lsh->rounds[k].bucket.size(); ++i)
            out += (i ? ", " : "") + std::to_string(lsh->rounds[k].bucket[i]);
          out += ']';
        }
        out += ']';
      });
      w.matrix("pairs_mask", mask_as_matrix(lsh->pairs));
      w.matrix("weights", lsh->weights);
      output = lsh->output;
      Result<FlashResult> plain = full_attention(h.Q, lsh->keys, h.V, scale, c.causal, nullptr);
      if (!plain) return plain.status();
      full = plain->output;
      pairs = lsh->pairs_computed;
      break;
    }
    case VariantMethod::Window:
    case VariantMethod::Dilated:
    case VariantMethod::Blocks: {
      const int n_query = static_cast<int>(r.n_query), n_key = static_cast<int>(r.n_key);
      Result<MaskMatrix> mask = request.method == VariantMethod::Blocks
                                    ? block_mask(n_query, n_key, request.block)
                                : request.method == VariantMethod::Window
                                    ? window_mask(n_query, n_key, request.width)
                                    : dilated_mask(n_query, n_key, request.width, request.dilation);
      if (!mask) return mask.status();
      if (!request.global_tokens.empty()) {
        mask = with_global_tokens(*mask, request.global_tokens);
        if (!mask) return mask.status();
      }
      Result<FlashResult> sparse = full_attention(h.Q, h.K, h.V, scale, c.causal, &*mask);
      if (!sparse) return sparse.status();
      if (request.method == VariantMethod::Blocks)
        w.integer("block", request.block);
      else
        w.integer("width", request.width);
      if (request.method == VariantMethod::Dilated) w.integer("dilation", request.dilation);
      w.list("global_tokens", request.global_tokens);
      w.matrix("mask", mask_as_matrix(*mask));
      output = sparse->output;
      Result<FlashResult> plain = full_attention(h.Q, h.K, h.V, scale, c.causal, nullptr);
      if (!plain) return plain.status();
      full = plain->output;
      const PairCount count = count_pairs(*mask, c.causal);
      pairs = count.computed;
      pairs_full = count.full;
      break;
    }
    case VariantMethod::SharedKeys: {
      // The scenario as it is (its kv_groups) against every head having its own K and V.
      const int groups = kv_group_count(c);
      w.integer("kv_groups", groups);
      w.integer("key_value_head", kv_source_head(c, request.head));
      w.field("choices", [&](std::string& out) {
        out += '[';
        bool first = true;
        for (const int g : kv_group_choices(c.heads)) {
          const Result<GroupedQueryCost> cost = grouped_query_cost(c, g);
          if (!cost) continue;
          out += first ? "\n      {" : ",\n      {";
          first = false;
          out += "\"groups\": " + std::to_string(g) +
                 ", \"query_weights\": " + std::to_string(cost->query_weights) +
                 ", \"key_value_weights\": " + std::to_string(cost->key_value_weights) +
                 ", \"output_weights\": " + std::to_string(cost->output_weights) +
                 ", \"cache_per_token\": " + std::to_string(cost->cache_per_token) + "}";
        }
        out += "\n    ]";
      });
      AttentionConfig own = c;
      own.kv_groups = 0;
      AttentionEngine multi_head;
      const Matrix& keys = self ? pipeline.X_target() : pipeline.X_keys();
      if (Status status = multi_head.compute(pipeline.X_target(), keys,
                                             scenario.one_layer().parameters, own, custom);
          !status)
        return status;
      output = h.output;
      full = multi_head.result().heads[static_cast<std::size_t>(request.head)].output;
      pairs = r.n_query * r.n_key;
      break;
    }
    case VariantMethod::Decode: {
      if (!self) return Status::error("decode feeds a sentence to itself: it needs self-attention");
      if (Status status = refuse_mask("a decoder sees every earlier token"); !status) return status;
      Result<DecodedSentence> decoded = decode_sentence(scenario.one_layer().parameters, c,
                                                        request.head, pipeline.X_target(), scale);
      if (!decoded) return decoded.status();
      output.resize(static_cast<Eigen::Index>(decoded->steps.size()), h.V.cols());
      std::vector<std::int64_t> work, work_without_cache;
      for (const DecodeStep& step : decoded->steps) {
        output.row(step.position) = step.output;
        work.push_back(step.work);
        work_without_cache.push_back(step.work_without_cache);
        pairs += step.cache_length;
      }
      w.list("work_per_step", work);
      w.list("work_per_step_without_cache", work_without_cache);
      Result<FlashResult> plain = full_attention(h.Q, h.K, h.V, scale, true, nullptr);
      if (!plain) return plain.status();
      full = plain->output;
      pairs_full = r.n_query * (r.n_query + 1) / 2;
      break;
    }
  }
  if (pairs_full == 0) pairs_full = r.n_query * r.n_key;
  w.integer("pairs_computed", pairs);
  w.integer("pairs_of_full_attention", pairs_full);
  w.matrix("output", output);
  w.matrix("full_attention_output", full);
  w.number("largest_difference",
           output.size() > 0 ? static_cast<double>((output - full).cwiseAbs().maxCoeff()) : 0.0);
  return w.finish();
}

}  // namespace attnviz
