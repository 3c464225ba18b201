// Scenario files: writing them, every weight a row on one line (reading them: scenario.cpp).
#include "core/base/float_text.hpp"
#include "core/document/file_io.hpp"
#include "core/document/json.hpp"
#include "core/document/scenario.hpp"

#include <string>

namespace attnviz {

using OrderedJson = nlohmann::ordered_json;

namespace {

// A float as the shortest decimal that reads back to the same float, held as a double that
// prints the same way (0.1f is written "0.1", not "0.10000000149011612").
double shortest(float value) {
  return shortest_as_double(value);
}

template <typename Dense>
OrderedJson rows_of(const Dense& matrix) {
  OrderedJson rows = OrderedJson::array();
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    OrderedJson row = OrderedJson::array();
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) row.push_back(shortest(matrix(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Pretty-prints with lists of scalars kept on one line, so a matrix reads as rows.
void write_pretty(const OrderedJson& value, int indent, std::string& out) {
  const auto is_scalar_list = [](const OrderedJson& v) {
    if (!v.is_array()) return false;
    for (const auto& element : v)
      if (element.is_structured()) return false;
    return true;
  };
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  if (value.is_object() && !value.empty()) {
    out += "{\n";
    std::size_t i = 0;
    for (const auto& [key, element] : value.items()) {
      out += pad + OrderedJson(key).dump() + ": ";
      write_pretty(element, indent + 2, out);
      out += ++i < value.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + "}";
  } else if (value.is_array() && !value.empty() && !is_scalar_list(value)) {
    out += "[\n";
    for (std::size_t i = 0; i < value.size(); ++i) {
      out += pad;
      write_pretty(value[i], indent + 2, out);
      out += i + 1 < value.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + "]";
  } else {
    std::string line = value.dump();
    if (value.is_array()) {  // a space after each comma: [0.5, -1, 2]
      std::string spaced;
      bool in_string = false;
      for (char c : line) {
        spaced += c;
        if (c == '"') in_string = !in_string;
        if (c == ',' && !in_string) spaced += ' ';
      }
      line = std::move(spaced);
    }
    out += line;
  }
}

// A scenario in model mode: the model, its changes and the text (the one-layer settings and
// weights are not the model's: they are not written).
std::string model_scenario_to_json(const Scenario& s, const ModelSpec& spec, OrderedJson root) {
  OrderedJson model = OrderedJson::object();
  model["name"] = spec.model;
  if (!spec.interventions.empty()) {
    OrderedJson changes = OrderedJson::array();
    for (const ModelHeadChange& entry : spec.interventions) {
      OrderedJson change = OrderedJson::object();
      if (entry.part != ModelPart::Main) change["part"] = std::string(model_part_name(entry.part));
      change["layer"] = entry.layer;
      change["head"] = entry.head;
      if (entry.change.output_scale != 1.0f) change["scale"] = shortest(entry.change.output_scale);
      if (entry.change.pattern != HeadIntervention::Pattern::Computed)
        change["pattern"] = to_string(entry.change.pattern);
      changes.push_back(std::move(change));
    }
    model["interventions"] = std::move(changes);
  }
  if (spec.hide_special_tokens) model["hide_special_tokens"] = true;
  if (!spec.text_b.empty()) model["text_b"] = spec.text_b;
  if (spec.part != ModelPart::Main) model["part"] = std::string(model_part_name(spec.part));
  if (!spec.decoder_text.empty()) model["decoder_text"] = spec.decoder_text;
  if (spec.pair_filter != PairFilter::All)
    model["pair_filter"] = std::string(pair_filter_name(spec.pair_filter));
  if (!spec.weight_edits.empty()) {  // a block per matrix of a head, its cells in order
    OrderedJson blocks = OrderedJson::array();
    const std::vector<ModelWeightEdit>& edits = spec.weight_edits;
    for (std::size_t i = 0; i < edits.size();) {
      const ModelWeightEdit& first = edits[i];
      const bool shared = first.matrix == HeadMatrix::Key || first.matrix == HeadMatrix::Value;
      OrderedJson block = OrderedJson::object();
      block["layer"] = first.layer;
      block["matrix"] = to_string(first.matrix);
      block[shared ? "kv_head" : "head"] = first.head;
      OrderedJson cells = OrderedJson::array();
      for (; i < edits.size() && edits[i].layer == first.layer && edits[i].matrix == first.matrix &&
             edits[i].head == first.head;
           ++i)
        cells.push_back(OrderedJson::array({edits[i].row, edits[i].col, shortest(edits[i].value)}));
      block["cells"] = std::move(cells);
      blocks.push_back(std::move(block));
    }
    model["weights"] = std::move(blocks);
  }
  if (!spec.embedding_edits.empty()) {  // one entry per token
    OrderedJson tokens = OrderedJson::array();
    const std::vector<ModelEmbeddingEdit>& edits = spec.embedding_edits;
    for (std::size_t i = 0; i < edits.size();) {
      const int token = edits[i].token;
      OrderedJson cells = OrderedJson::array();
      for (; i < edits.size() && edits[i].token == token; ++i)
        cells.push_back(OrderedJson::array({edits[i].dimension, shortest(edits[i].value)}));
      OrderedJson entry = OrderedJson::object();
      entry["token"] = token;
      entry["cells"] = std::move(cells);
      tokens.push_back(std::move(entry));
    }
    model["embeddings"] = std::move(tokens);
  }
  root["model"] = std::move(model);
  root["target"] = s.target;
  if (s.max_tokens != Limits::kDefaultMaxTokens) root["max_tokens"] = s.max_tokens;
  if (!s.view_json.empty()) root["view"] = OrderedJson::parse(Json::parse(s.view_json).dump());
  std::string out;
  write_pretty(root, 0, out);
  out += '\n';
  return out;
}

}  // namespace

std::string scenario_to_json(const Scenario& s) {
  OrderedJson root;
  root["format"] = kScenarioFormat;
  root["version"] = s.has_model() ? kModelScenarioVersion : kScenarioVersion;
  if (!s.title.empty()) root["title"] = s.title;
  if (!s.description.empty()) root["description"] = s.description;
  if (const ModelSpec* model = s.model()) return model_scenario_to_json(s, *model, std::move(root));
  const OneLayerSpec& one = s.one_layer();
  root["mode"] = to_string(one.mode);
  root["target"] = s.target;
  if (one.mode == Mode::Cross || !one.source.empty()) root["source"] = one.source;
  const AttentionConfig& c = one.config;
  root["d_model"] = c.d_model;
  root["heads"] = c.heads;
  root["d_k"] = c.d_k;
  root["d_v"] = c.d_v;
  root["d_att"] = c.d_att;
  if (shares_keys(c)) root["kv_groups"] = c.kv_groups;
  root["compatibility"] = to_string(c.compatibility);
  root["temperature"] = shortest(c.temperature);
  root["hard"] = c.hard;
  root["causal"] = c.causal;
  root["positional"] = to_string(one.positional);
  root["seed"] = one.seed;
  if (s.max_tokens != Limits::kDefaultMaxTokens) root["max_tokens"] = s.max_tokens;
  if (!one.embeddings.empty()) {
    OrderedJson embeddings = OrderedJson::object();
    for (const auto& [word, vector] : one.embeddings) {
      OrderedJson values = OrderedJson::array();
      for (float x : vector) values.push_back(shortest(x));
      embeddings[word] = std::move(values);
    }
    root["embeddings"] = std::move(embeddings);
  }
  if (!one.dimension_names.empty()) root["dimension_names"] = one.dimension_names;
  OrderedJson weights = OrderedJson::object();
  for (ParameterName name : kAllParameterNames) {
    const std::string key(to_string(name));
    if (name == ParameterName::W_O) {
      weights[key] = rows_of(one.parameters.W_O);
      continue;
    }
    OrderedJson per_head = OrderedJson::array();
    for (int head = 0; head < c.heads; ++head) {
      if (name == ParameterName::v_a)
        per_head.push_back(rows_of(one.parameters.heads[static_cast<std::size_t>(head)].v_a)[0]);
      else
        per_head.push_back(rows_of(parameter(one.parameters, name, head)));
    }
    weights[key] = std::move(per_head);
  }
  root["weights"] = std::move(weights);
  if (one.mask.size() > 0) {
    OrderedJson mask = OrderedJson::array();
    for (Eigen::Index i = 0; i < one.mask.rows(); ++i) {
      OrderedJson row = OrderedJson::array();
      for (Eigen::Index j = 0; j < one.mask.cols(); ++j) row.push_back(int(one.mask(i, j)));
      mask.push_back(std::move(row));
    }
    root["mask"] = std::move(mask);
  }
  if (one.mask_pattern) {
    const MaskPattern& p = *one.mask_pattern;
    OrderedJson pattern = OrderedJson::object();
    pattern["kind"] = to_string(p.kind);
    if (p.kind == MaskPattern::Kind::Blocks) {
      pattern["block"] = p.block;
    } else {
      pattern["width"] = p.width;
      if (p.kind == MaskPattern::Kind::Dilated) pattern["dilation"] = p.dilation;
    }
    if (!p.global_tokens.empty()) pattern["global"] = p.global_tokens;
    root["mask_pattern"] = std::move(pattern);
  }
  // The view object is written with sorted keys, as the reader keeps it: a file reads back
  // exactly as written.
  if (!s.view_json.empty()) root["view"] = OrderedJson::parse(Json::parse(s.view_json).dump());
  std::string out;
  write_pretty(root, 0, out);
  out += '\n';
  return out;
}

Status save_scenario_file(const std::string& path, const Scenario& scenario) {
  return write_file(path, scenario_to_json(scenario));
}

}  // namespace attnviz
