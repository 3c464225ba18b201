#include "core/models/model_export.hpp"

#include "core/base/json_text.hpp"

#include <cmath>
#include <utility>

namespace attnviz {
namespace {

void append_key(std::string& out, const char* key) {
  out += '"';
  out += key;
  out += "\": ";
}

void append_int(std::string& out, const char* key, long long value) {
  append_key(out, key);
  out += std::to_string(value);
}

// Columns [first, first + count) of a kept matrix, as rows.
void append_columns(std::string& out, const RowMatrix& m, int first, int count, int indent) {
  append_json_matrix(out, m.matrix().middleCols(first, count), indent);
}

// "[{id, text, bytes, special (, type)}, ...]"
void append_tokens(std::string& out, const std::vector<ModelToken>& tokens, bool types) {
  out += "[";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const ModelToken& t = tokens[i];
    out += i ? ",\n    {" : "\n    {";
    append_int(out, "id", t.id);
    out += ", ";
    append_key(out, "text");
    append_json_string(out, t.shown);
    out += ", ";
    append_key(out, "bytes");
    out += "[" + std::to_string(t.byte_begin) + ", " + std::to_string(t.byte_end) + "]";
    out += ", ";
    append_key(out, "special");
    out += t.special ? "true" : "false";
    if (types) {  // BERT: the sentence (0: A, 1: B) and its token type
      out += ", ";
      append_int(out, "type", t.sentence);
    }
    out += "}";
  }
  out += tokens.empty() ? "]" : "\n  ]";
}

// A head's kept Q (its own columns of `queries`), K and V (of `keys`, `values`: column block
// `kv_head`), raw scores and output.
void append_head_intermediates(std::string& out, const RowMatrix& queries, const RowMatrix& keys,
                               const RowMatrix& values, const Matrix& scores,
                               const RowMatrix& outputs, int head, int kv_head, int d_head) {
  out += ",\n          ";
  append_key(out, "queries");
  append_columns(out, queries, head * d_head, d_head, 12);
  out += ",\n          ";
  append_key(out, "keys");
  append_columns(out, keys, kv_head * d_head, d_head, 12);
  out += ",\n          ";
  append_key(out, "values");
  append_columns(out, values, kv_head * d_head, d_head, 12);
  out += ",\n          ";
  append_key(out, "scores");  // q · k before the 1/√d_head; masked: null
  append_json_matrix(out, scores, 12);
  out += ",\n          ";
  append_key(out, "output");
  append_columns(out, outputs, head * d_head, d_head, 12);
}

// The heads knocked out or given a pattern: "[{layer, head, (cross: true,) pattern,
// output_scale}, ...]", self-attention's then cross-attention's.
void append_interventions(std::string& out, const TransformerForward& forward) {
  const TransformerConfig& c = forward.model().config();
  out += "[";
  bool first = true;
  const auto append_one = [&](int l, int h, const HeadIntervention& i, bool cross) {
    if (!i.changes_anything()) return;
    out += first ? "{" : ", {";
    first = false;
    append_int(out, "layer", l);
    out += ", ";
    append_int(out, "head", h);
    out += cross ? ", \"cross\": true, " : ", ";
    append_key(out, "pattern");
    out += i.pattern == HeadIntervention::Pattern::Computed  ? "\"computed\""
           : i.pattern == HeadIntervention::Pattern::Uniform ? "\"uniform\""
                                                             : "\"previous-token\"";
    out += ", ";
    append_key(out, "output_scale");
    append_json_number(out, i.output_scale);
    out += "}";
  };
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) append_one(l, h, forward.intervention(l, h), false);
  if (c.cross_attention)
    for (int l = 0; l < c.n_layers; ++l)
      for (int h = 0; h < c.n_heads; ++h) append_one(l, h, forward.cross_intervention(l, h), true);
  out += "]";
}

// Every layer of `forward`: "[{layer, heads: [...], intermediates}, ...]"; a decoder's with
// cross-attention adds "cross_heads" (weights (n_query, n_source)) and its intermediates.
void append_layers(std::string& out, const TransformerForward& forward,
                   const AttentionExportOptions& options) {
  const TransformerConfig& c = forward.model().config();
  out += "[";
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerActivations& a = forward.layer(l);
    out += l ? ",\n    {" : "\n    {";
    append_int(out, "layer", l);
    out += ",\n      ";
    append_key(out, "heads");
    out += "[";
    for (int h = 0; h < c.n_heads; ++h) {
      out += h ? ",\n        {" : "\n        {";
      append_int(out, "head", h);
      out += ", ";
      append_int(out, "kv_head", c.kv_head_of(h));
      out += ",\n          ";
      append_key(out, "weights");
      append_json_matrix(out, forward.attention(l, h), 12);
      if (options.intermediates)
        append_head_intermediates(out, a.queries, a.keys, a.values, forward.raw_scores(l, h),
                                  a.head_outputs, h, c.kv_head_of(h), c.d_head);
      out += "}";
    }
    out += "\n      ]";
    if (c.cross_attention) {
      out += ",\n      ";
      append_key(out, "cross_heads");
      out += "[";
      for (int h = 0; h < c.n_heads; ++h) {
        out += h ? ",\n        {" : "\n        {";
        append_int(out, "head", h);
        out += ",\n          ";
        append_key(out, "weights");  // (n_query, n_source)
        append_json_matrix(out, forward.cross_attention(l, h), 12);
        if (options.intermediates)
          append_head_intermediates(out, a.cross_queries, a.cross_keys, a.cross_values,
                                    forward.cross_raw_scores(l, h), a.cross_head_outputs, h, h,
                                    c.d_head);
        out += "}";
      }
      out += "\n      ]";
    }
    if (options.intermediates) {
      std::vector<std::pair<const char*, const RowMatrix*>> kept = {
          {"normalized", &a.normalized},
          {"attention_output", &a.attention_output},
          {"residual_mid", &a.residual_mid},
          {"mlp_output", &a.mlp_output},
          {"residual_out", &a.residual_out}};
      if (c.cross_attention)
        kept.insert(kept.begin() + 3, {{"cross_attention_output", &a.cross_attention_output},
                                       {"residual_cross", &a.residual_cross}});
      for (const auto& [name, matrix] : kept) {
        out += ",\n      ";
        append_key(out, name);
        append_json_matrix(out, matrix->matrix(), 8);
      }
    }
    out += "}";
  }
  out += c.n_layers ? "\n  ]" : "]";
}

}  // namespace

std::string attention_to_json(const TransformerForward& forward,
                              const std::vector<ModelToken>& tokens,
                              const AttentionExportOptions& options,
                              const TransformerForward* encoder,
                              const std::vector<ModelToken>* source_tokens) {
  const Transformer& model = forward.model();
  const TransformerConfig& c = model.config();
  std::string out = "{\n  \"format\": \"attnviz-model-attention\",\n  \"version\": 1,\n  ";
  append_key(out, "model");
  out += "{";
  append_key(out, "source");
  append_json_string(out, model.source());
  out += ", ";
  append_key(out, "file_format");
  append_json_string(out, model.format());
  out += ", ";
  append_key(out, "architecture");
  append_json_string(out, c.architecture);
  const std::pair<const char*, int> sizes[] = {
      {"layers", c.n_layers}, {"heads", c.n_heads}, {"kv_heads", c.n_kv_heads},
      {"d_model", c.d_model}, {"d_head", c.d_head}, {"vocab_size", c.vocab_size},
      {"context", c.context}};
  for (const auto& [key, value] : sizes) {
    out += ", ";
    append_int(out, key, value);
  }
  if (encoder) {  // an encoder–decoder: the sizes above are its decoder's
    const TransformerConfig& e = encoder->model().config();
    out += ", ";
    append_int(out, "encoder_layers", e.n_layers);
    out += ", ";
    append_int(out, "encoder_heads", e.n_heads);
  }
  out += "},\n  ";

  if (source_tokens) {
    append_key(out, "source_tokens");
    append_tokens(out, *source_tokens, false);
    out += ",\n  ";
  }
  append_key(out, "tokens");
  append_tokens(out, tokens, c.token_types > 0);
  out += ",\n  ";
  append_key(out, "interventions");
  append_interventions(out, forward);
  out += ",\n  ";

  append_key(out, "layers");
  append_layers(out, forward, options);
  if (encoder) {
    out += ",\n  ";
    append_key(out, "encoder_interventions");
    append_interventions(out, *encoder);
    out += ",\n  ";
    append_key(out, "encoder_layers");
    append_layers(out, *encoder, options);
    if (options.intermediates) {
      out += ",\n  ";
      append_key(out, "encoder_output");  // what the cross-attention reads (n_source, d_model)
      append_json_matrix(out, encoder->final_normalized().matrix(), 4);
    }
  }
  if (options.intermediates && forward.size() > 0) {
    out += ",\n  ";
    append_key(out, "final_normalized");
    append_json_matrix(out, forward.final_normalized().matrix(), 4);
  }
  if (forward.size() > 0 && c.causal()) {  // the next token's logits, after the last position
    out += ",\n  ";
    append_key(out, "logits");
    append_json_matrix(out, forward.last_logits(), 4);
  } else if (forward.size() > 0 && model.predicts_tokens()) {
    // An encoder's logits at its [MASK] tokens (at the last position when there is none).
    std::vector<int> positions;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i].special && tokens[i].shown == "[MASK]")
        positions.push_back(static_cast<int>(i));
    if (positions.empty()) positions.push_back(forward.size() - 1);
    out += ",\n  ";
    append_key(out, "logit_positions");
    out += "[";
    for (std::size_t i = 0; i < positions.size(); ++i)
      out += (i ? ", " : "") + std::to_string(positions[i]);
    out += "],\n  ";
    append_key(out, "logits");
    Matrix logits(static_cast<Eigen::Index>(positions.size()), c.vocab_size);  // (masks, vocab)
    for (std::size_t i = 0; i < positions.size(); ++i)
      forward.logits(positions[i], logits.row(static_cast<Eigen::Index>(i)).data());
    append_json_matrix(out, logits, 4);
  }
  out += "\n}\n";
  return out;
}

}  // namespace attnviz
