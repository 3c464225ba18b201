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

}  // namespace

std::string attention_to_json(const TransformerForward& forward,
                              const std::vector<ModelToken>& tokens,
                              const AttentionExportOptions& options) {
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
  out += "},\n  ";

  append_key(out, "tokens");
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
    if (c.token_types > 0) {  // BERT: the sentence (0: A, 1: B) and its token type
      out += ", ";
      append_int(out, "type", t.sentence);
    }
    out += "}";
  }
  out += tokens.empty() ? "],\n  " : "\n  ],\n  ";

  append_key(out, "interventions");
  out += "[";
  bool first_intervention = true;
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      const HeadIntervention& i = forward.intervention(l, h);
      if (!i.changes_anything()) continue;
      out += first_intervention ? "" : ", ";
      first_intervention = false;
      out += "{";
      append_int(out, "layer", l);
      out += ", ";
      append_int(out, "head", h);
      out += ", ";
      append_key(out, "pattern");
      out += i.pattern == HeadIntervention::Pattern::Computed  ? "\"computed\""
             : i.pattern == HeadIntervention::Pattern::Uniform ? "\"uniform\""
                                                               : "\"previous-token\"";
      out += ", ";
      append_key(out, "output_scale");
      append_json_number(out, i.output_scale);
      out += "}";
    }
  out += "],\n  ";

  append_key(out, "layers");
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
      if (options.intermediates) {
        const int g = c.kv_head_of(h);
        out += ",\n          ";
        append_key(out, "queries");
        append_columns(out, a.queries, h * c.d_head, c.d_head, 12);
        out += ",\n          ";
        append_key(out, "keys");
        append_columns(out, a.keys, g * c.d_head, c.d_head, 12);
        out += ",\n          ";
        append_key(out, "values");
        append_columns(out, a.values, g * c.d_head, c.d_head, 12);
        out += ",\n          ";
        append_key(out, "scores");  // q · k before the 1/√d_head; masked: null
        append_json_matrix(out, forward.raw_scores(l, h), 12);
        out += ",\n          ";
        append_key(out, "output");
        append_columns(out, a.head_outputs, h * c.d_head, c.d_head, 12);
      }
      out += "}";
    }
    out += "\n      ]";
    if (options.intermediates) {
      const std::pair<const char*, const RowMatrix*> kept[] = {
          {"normalized", &a.normalized},
          {"attention_output", &a.attention_output},
          {"residual_mid", &a.residual_mid},
          {"mlp_output", &a.mlp_output},
          {"residual_out", &a.residual_out}};
      for (const auto& [name, matrix] : kept) {
        out += ",\n      ";
        append_key(out, name);
        append_json_matrix(out, matrix->matrix(), 8);
      }
    }
    out += "}";
  }
  out += c.n_layers ? "\n  ]" : "]";
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
