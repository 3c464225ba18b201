// Scenario files: reading them (writing them: scenario_write.cpp). Index:
//   [SECTION] Parse
#include "core/document/scenario.hpp"

#include "core/base/float_text.hpp"
#include "core/document/file_io.hpp"
#include "core/document/json.hpp"
#include "core/text/lexicon.hpp"
#include "core/text/tokenizer.hpp"
#include "core/text/utf8.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace attnviz {

// The one reader of AttnViz's files (core/document/json.hpp): a key path in every message.
using Reader = JsonReader;
using Failure = JsonFailure;

// -----------------------------------------------------------------------------
// [SECTION] Parse
// -----------------------------------------------------------------------------
namespace {

const std::set<std::string_view> kTopLevelKeys = {
    "format",        "version",      "title",    "description", "mode",       "target",
    "source",        "d_model",      "heads",    "d_k",         "d_v",        "d_att",
    "compatibility", "temperature",  "hard",     "causal",      "positional", "seed",
    "max_tokens",    "embeddings",   "weights",  "mask",        "view",       "dimension_names",
    "model",         "mask_pattern", "kv_groups"};

int dimension(Reader& reader, const Json& root, const char* key, int fallback, int high) {
  const Json* value = reader.find(root, key);
  return value ? static_cast<int>(reader.integer(*value, key, 1, high)) : fallback;
}

void parse_weights(Reader& reader, const Json& weights, OneLayerSpec& scenario) {
  if (!weights.is_object())
    Reader::fail("weights", "expected an object, got " + json_type_name(weights));
  std::set<std::string_view> known;
  for (ParameterName name : kAllParameterNames) known.insert(to_string(name));
  reader.warn_unknown_keys(weights, "weights", known);

  const AttentionConfig& config = scenario.config;
  for (ParameterName name : kAllParameterNames) {
    const std::string key(to_string(name));
    const Json* value = reader.find(weights, key.c_str());
    if (!value) continue;
    const std::string path = "weights." + key;
    const Shape shape = expected_shape(name, config);
    if (name == ParameterName::W_O) {
      reader.matrix(*value, path, shape.rows, shape.cols, scenario.parameters.W_O);
      continue;
    }
    reader.list(*value, path, static_cast<std::size_t>(config.heads), "heads (one per head)");
    for (int head = 0; head < config.heads; ++head) {
      const std::string head_path = path + "[" + std::to_string(head) + "]";
      const Json& head_value = (*value)[static_cast<std::size_t>(head)];
      if (name == ParameterName::v_a) {
        reader.list(head_value, head_path, static_cast<std::size_t>(shape.cols), "numbers");
        RowVector& v_a = additive_vector(scenario.parameters, head);
        for (Eigen::Index c = 0; c < shape.cols; ++c)
          v_a[c] = reader.single(head_value[static_cast<std::size_t>(c)],
                                 head_path + "[" + std::to_string(c) + "]");
      } else {
        reader.matrix(head_value, head_path, shape.rows, shape.cols,
                      parameter(scenario.parameters, name, head));
      }
    }
  }
}

void parse_embeddings(Reader& reader, const Json& embeddings, OneLayerSpec& scenario) {
  if (!embeddings.is_object())
    Reader::fail("embeddings",
                 "expected an object mapping words to vectors, got " + json_type_name(embeddings));
  for (const auto& [word, vector] : embeddings.items()) {
    const std::string path = "embeddings.\"" + word + "\"";
    if (word.empty()) Reader::fail("embeddings", "a word is empty");
    reader.list(vector, path, static_cast<std::size_t>(scenario.config.d_model),
                "numbers (d_model)");
    std::vector<float> values(static_cast<std::size_t>(scenario.config.d_model));
    for (std::size_t d = 0; d < values.size(); ++d)
      values[d] = reader.single(vector[d], path + "[" + std::to_string(d) + "]");
    scenario.embeddings[word] = std::move(values);
  }
}

void parse_dimension_names(Reader& reader, const Json& names, OneLayerSpec& scenario) {
  const auto d_model = static_cast<std::size_t>(scenario.config.d_model);
  if (!names.is_array())
    Reader::fail("dimension_names", "expected a list of names (one per embedding dimension), got " +
                                        json_type_name(names));
  if (names.size() > d_model)
    Reader::fail("dimension_names", std::to_string(names.size()) + " names, but d_model is " +
                                        std::to_string(d_model) + " (at most one per dimension)");
  for (std::size_t d = 0; d < names.size(); ++d) {
    const std::string path = "dimension_names[" + std::to_string(d) + "]";
    std::string name = reader.string(names[d], path);
    if (name.find_first_not_of(' ') == std::string::npos) Reader::fail(path, "the name is empty");
    scenario.dimension_names.push_back(std::move(name));
  }
}

// Indices in a model file are checked against the model when it is opened; here only that they
// are whole numbers in a range no model reaches.
constexpr std::int64_t kMaxModelIndex = (std::int64_t{1} << 24) - 1;

// "weights": [{"layer": 0, "matrix": "W_Q", "head": 1, "cells": [[row, col, value], ...]}, ...]
// (W_K and W_V name their key/value head as "kv_head"). Sorted, one entry per cell.
std::vector<ModelWeightEdit> parse_weight_edits(Reader& reader, const Json& blocks) {
  if (!blocks.is_array())
    Reader::fail("model.weights",
                 "expected a list of changed matrices, got " + json_type_name(blocks));
  std::vector<ModelWeightEdit> edits;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const std::string path = "model.weights[" + std::to_string(b) + "]";
    const Json& block = blocks[b];
    if (!block.is_object())
      Reader::fail(path,
                   "expected an object such as {\"layer\": 0, \"matrix\": \"W_Q\", \"head\": "
                   "1, \"cells\": [[0, 0, 0.5]]}, got " +
                       json_type_name(block));
    reader.warn_unknown_keys(block, path, {"layer", "matrix", "head", "kv_head", "cells"});
    const Json* layer = reader.find(block, "layer");
    const Json* matrix = reader.find(block, "matrix");
    const Json* cells = reader.find(block, "cells");
    if (!layer || !matrix || !cells)
      Reader::fail(path, "needs a \"layer\", a \"matrix\" and its \"cells\"");
    ModelWeightEdit edit;
    edit.layer = static_cast<int>(reader.integer(*layer, path + ".layer", 0, 4095));
    const std::string matrix_name = reader.string(*matrix, path + ".matrix");
    const std::optional<HeadMatrix> parsed = parse_head_matrix(matrix_name);
    if (!parsed)
      Reader::fail(path + ".matrix",
                   "expected \"W_Q\", \"W_K\", \"W_V\" or \"W_O\", got \"" + matrix_name + "\"");
    edit.matrix = *parsed;
    const bool shared = edit.matrix == HeadMatrix::Key || edit.matrix == HeadMatrix::Value;
    const char* head_key = shared ? "kv_head" : "head";
    const Json* head = reader.find(block, head_key);
    if (!head)
      Reader::fail(path, std::string("needs a \"") + head_key + "\"" +
                             (shared ? " (W_K and W_V belong to a key/value head)" : ""));
    edit.head = static_cast<int>(reader.integer(*head, path + "." + head_key, 0, 4095));
    if (!cells->is_array())
      Reader::fail(path + ".cells",
                   "expected a list of [row, column, value], got " + json_type_name(*cells));
    for (std::size_t i = 0; i < cells->size(); ++i) {
      const std::string cell_path = path + ".cells[" + std::to_string(i) + "]";
      const Json& cell = (*cells)[i];
      reader.list(cell, cell_path, 3, "numbers: [row, column, value]");
      edit.row = static_cast<int>(reader.integer(cell[0], cell_path + "[0]", 0, kMaxModelIndex));
      edit.col = static_cast<int>(reader.integer(cell[1], cell_path + "[1]", 0, kMaxModelIndex));
      edit.value = reader.single(cell[2], cell_path + "[2]");
      edits.push_back(edit);
    }
  }
  std::stable_sort(edits.begin(), edits.end(),
                   [](const auto& a, const auto& b) { return a.key() < b.key(); });
  for (std::size_t i = 1; i < edits.size(); ++i)
    if (edits[i].key() == edits[i - 1].key()) {
      const ModelWeightEdit& e = edits[i];
      Reader::fail("model.weights",
                   "layer " + std::to_string(e.layer) + ", " + std::string(to_string(e.matrix)) +
                       " of head " + std::to_string(e.head) + ", cell [" + std::to_string(e.row) +
                       ", " + std::to_string(e.col) + "] is given twice");
    }
  return edits;
}

// "embeddings": [{"token": 317, "cells": [[dimension, value], ...]}, ...]. Sorted, one entry per
// number.
std::vector<ModelEmbeddingEdit> parse_embedding_edits(Reader& reader, const Json& tokens) {
  if (!tokens.is_array())
    Reader::fail("model.embeddings",
                 "expected a list of changed embeddings, got " + json_type_name(tokens));
  std::vector<ModelEmbeddingEdit> edits;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const std::string path = "model.embeddings[" + std::to_string(t) + "]";
    const Json& entry = tokens[t];
    if (!entry.is_object())
      Reader::fail(path,
                   "expected an object such as {\"token\": 317, \"cells\": [[0, 0.5]]}, got " +
                       json_type_name(entry));
    reader.warn_unknown_keys(entry, path, {"token", "text", "cells"});
    const Json* token = reader.find(entry, "token");
    const Json* cells = reader.find(entry, "cells");
    if (!token || !cells)
      Reader::fail(path, "needs a \"token\" (its id in the model's vocabulary) and its \"cells\"");
    ModelEmbeddingEdit edit;
    edit.token = static_cast<int>(reader.integer(*token, path + ".token", 0, kMaxModelIndex));
    if (!cells->is_array())
      Reader::fail(path + ".cells",
                   "expected a list of [dimension, value], got " + json_type_name(*cells));
    for (std::size_t i = 0; i < cells->size(); ++i) {
      const std::string cell_path = path + ".cells[" + std::to_string(i) + "]";
      const Json& cell = (*cells)[i];
      reader.list(cell, cell_path, 2, "numbers: [dimension, value]");
      edit.dimension =
          static_cast<int>(reader.integer(cell[0], cell_path + "[0]", 0, kMaxModelIndex));
      edit.value = reader.single(cell[1], cell_path + "[1]");
      edits.push_back(edit);
    }
  }
  std::stable_sort(edits.begin(), edits.end(),
                   [](const auto& a, const auto& b) { return a.key() < b.key(); });
  for (std::size_t i = 1; i < edits.size(); ++i)
    if (edits[i].key() == edits[i - 1].key())
      Reader::fail("model.embeddings", "token " + std::to_string(edits[i].token) + ", dimension " +
                                           std::to_string(edits[i].dimension) + " is given twice");
  return edits;
}

// "main", "encoder" or "cross" (ModelSpec::part, an intervention's part).
ModelPart parse_part(Reader& reader, const Json& value, const std::string& path) {
  const std::string name = reader.string(value, path);
  const std::optional<ModelPart> named = model_part_named(name);
  if (!named)
    Reader::fail(path, "expected \"main\", \"encoder\" or \"cross\", got \"" + name + "\"");
  return *named;
}

ModelSpec parse_model(Reader& reader, const Json& model) {
  if (!model.is_object())
    Reader::fail("model",
                 "expected an object with the model's \"name\", got " + json_type_name(model));
  reader.warn_unknown_keys(model, "model",
                           {"name", "interventions", "hide_special_tokens", "text_b", "pair_filter",
                            "weights", "embeddings", "part", "decoder_text"});
  ModelSpec spec;
  const Json* name = reader.find(model, "name");
  if (!name) Reader::fail("model.name", "missing (a shipped model's name or a model's path)");
  spec.model = reader.string(*name, "model.name");
  if (spec.model.find_first_not_of(' ') == std::string::npos)
    Reader::fail("model.name", "the name is empty");
  if (const Json* hide = reader.find(model, "hide_special_tokens"))
    spec.hide_special_tokens = reader.boolean(*hide, "model.hide_special_tokens");
  if (const Json* text_b = reader.find(model, "text_b"))
    spec.text_b = reader.string(*text_b, "model.text_b");
  if (const Json* filter = reader.find(model, "pair_filter")) {
    const std::string filter_name = reader.string(*filter, "model.pair_filter");
    const std::optional<PairFilter> named = pair_filter_named(filter_name);
    if (!named)
      Reader::fail("model.pair_filter",
                   "expected \"all\", \"A->A\", \"A->B\", \"B->A\" or \"B->B\", got \"" +
                       filter_name + "\"");
    spec.pair_filter = *named;
  }
  if (const Json* part = reader.find(model, "part"))
    spec.part = parse_part(reader, *part, "model.part");
  if (const Json* decoder_text = reader.find(model, "decoder_text"))
    spec.decoder_text = reader.string(*decoder_text, "model.decoder_text");
  if (const Json* weights = reader.find(model, "weights"))
    spec.weight_edits = parse_weight_edits(reader, *weights);
  if (const Json* embeddings = reader.find(model, "embeddings"))
    spec.embedding_edits = parse_embedding_edits(reader, *embeddings);
  const Json* changes = reader.find(model, "interventions");
  if (!changes) return spec;
  if (!changes->is_array())
    Reader::fail("model.interventions",
                 "expected a list of changes to heads, got " + json_type_name(*changes));
  for (std::size_t i = 0; i < changes->size(); ++i) {
    const std::string path = "model.interventions[" + std::to_string(i) + "]";
    const Json& change = (*changes)[i];
    if (!change.is_object())
      Reader::fail(path,
                   "expected an object such as {\"layer\": 0, \"head\": 1, \"scale\": 0}, got " +
                       json_type_name(change));
    reader.warn_unknown_keys(change, path, {"part", "layer", "head", "scale", "pattern"});
    const Json* layer = reader.find(change, "layer");
    const Json* head = reader.find(change, "head");
    if (!layer || !head) Reader::fail(path, "needs a \"layer\" and a \"head\" (counted from 0)");
    ModelHeadChange entry;
    if (const Json* part = reader.find(change, "part"))
      entry.part = parse_part(reader, *part, path + ".part");
    entry.layer = static_cast<int>(reader.integer(*layer, path + ".layer", 0, 4095));
    entry.head = static_cast<int>(reader.integer(*head, path + ".head", 0, 4095));
    if (const Json* scale = reader.find(change, "scale")) {
      const double value = reader.number(*scale, path + ".scale");
      if (!(std::abs(value) <= 1000))
        Reader::fail(path + ".scale",
                     "must be between -1000 and 1000 (0 knocks the head out), got " +
                         Reader::format_double(value));
      entry.change.output_scale = static_cast<float>(value);
    }
    if (const Json* pattern = reader.find(change, "pattern")) {
      const std::string pattern_name = reader.string(*pattern, path + ".pattern");
      const auto parsed = parse_head_pattern(pattern_name);
      if (!parsed)
        Reader::fail(path + ".pattern",
                     "expected \"computed\", \"uniform\" or \"previous_token\", got \"" +
                         pattern_name + "\"");
      entry.change.pattern = *parsed;
    }
    if (spec.intervention_in(entry.part, entry.layer, entry.head).changes_anything())
      Reader::fail(path, "layer " + std::to_string(entry.layer) + ", head " +
                             std::to_string(entry.head) + " is changed twice");
    spec.set_intervention_in(entry.part, entry.layer, entry.head, entry.change);
  }
  return spec;
}

// "mask_pattern": {"kind": "window", "width": 3, "global": [0]} (docs/formats.md).
MaskPattern parse_mask_pattern(Reader& reader, const Json& value) {
  if (!value.is_object())
    Reader::fail("mask_pattern",
                 "expected an object such as {\"kind\": \"window\", \"width\": 3}, got " +
                     json_type_name(value));
  reader.warn_unknown_keys(value, "mask_pattern", {"kind", "width", "dilation", "block", "global"});
  MaskPattern pattern;
  const Json* kind = reader.find(value, "kind");
  if (!kind) Reader::fail("mask_pattern.kind", "missing (window, dilated or blocks)");
  const std::string name = reader.string(*kind, "mask_pattern.kind");
  bool known = false;
  for (const auto k :
       {MaskPattern::Kind::Window, MaskPattern::Kind::Dilated, MaskPattern::Kind::Blocks})
    if (to_string(k) == name) pattern.kind = k, known = true;
  if (!known)
    Reader::fail("mask_pattern.kind",
                 "expected \"window\", \"dilated\" or \"blocks\", got \"" + name + "\"");
  const auto whole = [&](const char* key, int& out) {
    if (const Json* v = reader.find(value, key))
      out = static_cast<int>(
          reader.integer(*v, std::string("mask_pattern.") + key, 1, Limits::kMaxTokens));
  };
  whole("width", pattern.width);
  whole("dilation", pattern.dilation);
  whole("block", pattern.block);
  if (const Json* global = reader.find(value, "global")) {
    if (!global->is_array())
      Reader::fail("mask_pattern.global",
                   "expected a list of token positions (from 0), got " + json_type_name(*global));
    for (std::size_t i = 0; i < global->size(); ++i)
      pattern.global_tokens.push_back(static_cast<int>(
          reader.integer((*global)[i], "mask_pattern.global[" + std::to_string(i) + "]", 0,
                         Limits::kMaxTokens - 1)));
  }
  return pattern;
}

void parse_mask(Reader& reader, const Json& mask, const Scenario& read, OneLayerSpec& scenario) {
  const auto n_query =
      tokenize(read.target, static_cast<std::size_t>(read.max_tokens)).tokens.size();
  const auto n_key =
      scenario.mode == Mode::Cross
          ? tokenize(scenario.source, static_cast<std::size_t>(read.max_tokens)).tokens.size()
          : n_query;
  reader.list(mask, "mask", n_query, "rows (one per target token)");
  scenario.mask.resize(static_cast<Eigen::Index>(n_query), static_cast<Eigen::Index>(n_key));
  for (std::size_t i = 0; i < n_query; ++i) {
    const std::string row_path = "mask[" + std::to_string(i) + "]";
    reader.list(mask[i], row_path, n_key, "entries (one per key token)");
    for (std::size_t j = 0; j < n_key; ++j) {
      const Json& cell = mask[i][j];
      const std::string path = row_path + "[" + std::to_string(j) + "]";
      bool allowed = false;
      if (cell.is_boolean())
        allowed = cell.get<bool>();
      else
        allowed = reader.integer(cell, path, 0, 1) == 1;
      scenario.mask(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = allowed ? 1 : 0;
    }
  }
}

Scenario parse_root(Reader& reader, const Json& root) {
  if (!root.is_object())
    Reader::fail("scenario", "expected a JSON object, got " + json_type_name(root));
  reader.warn_unknown_keys(root, "", kTopLevelKeys);

  if (const Json* format = reader.find(root, "format")) {
    if (!format->is_string() || format->get<std::string>() != kScenarioFormat)
      Reader::fail("format", "this is not an AttnViz scenario (expected \"attnviz-scenario\")");
  } else {
    reader.warning("no \"format\" key: reading the file as an AttnViz scenario");
  }
  if (const Json* version = reader.find(root, "version")) {
    const auto v = reader.integer(*version, "version", 1, 1000000);
    if (v > kModelScenarioVersion)
      Reader::fail("version", "version " + std::to_string(v) +
                                  " was written by a newer AttnViz; this one reads versions 1 "
                                  "and 2");
  }

  // What the file says of the sentence, then of what reads it: the one-layer model's settings
  // and weights (read and checked even beside a model, whose file may keep them: they are not
  // kept), or a model.
  Scenario s;
  OneLayerSpec one;
  std::optional<ModelSpec> model;
  if (const Json* v = reader.find(root, "model")) model = parse_model(reader, *v);
  if (const Json* v = reader.find(root, "title")) s.title = reader.string(*v, "title");
  if (const Json* v = reader.find(root, "description"))
    s.description = reader.string(*v, "description");
  if (const Json* v = reader.find(root, "mode")) {
    const auto mode = parse_mode(reader.string(*v, "mode"));
    if (!mode)
      Reader::fail("mode", "expected \"self\" or \"cross\", got \"" + v->get<std::string>() + "\"");
    one.mode = *mode;
  }
  const Json* target = reader.find(root, "target");
  if (!target) throw Failure{"target: missing (the sentence the queries come from)"};
  s.target = reader.string(*target, "target");
  if (const Json* v = reader.find(root, "source")) one.source = reader.string(*v, "source");
  if (const Json* v = reader.find(root, "max_tokens"))
    s.max_tokens = static_cast<int>(reader.integer(*v, "max_tokens", 1, Limits::kMaxTokens));
  if (!model && tokenize(s.target, 1).total_tokens == 0)
    Reader::fail("target", "the sentence has no tokens (it is empty or only spaces)");
  if (one.mode == Mode::Cross && tokenize(one.source, 1).total_tokens == 0)
    Reader::fail("source", "cross mode needs a source sentence with at least one token");

  AttentionConfig& c = one.config;
  c.d_model = dimension(reader, root, "d_model", 8, Limits::kMaxDModel);
  c.heads = dimension(reader, root, "heads", 2, Limits::kMaxHeads);
  const bool divisible = c.d_model % c.heads == 0;
  const Json* d_k = reader.find(root, "d_k");
  if (!d_k && !divisible)
    Reader::fail("d_k", "missing, and d_model (" + std::to_string(c.d_model) +
                            ") is not divisible by heads (" + std::to_string(c.heads) +
                            "): give d_k and d_v explicitly");
  c.d_k = dimension(reader, root, "d_k", divisible ? c.d_model / c.heads : 1, Limits::kMaxHeadDim);
  c.d_v = dimension(reader, root, "d_v", c.d_k, Limits::kMaxHeadDim);
  c.d_att = dimension(reader, root, "d_att", c.d_k, Limits::kMaxHeadDim);
  if (const Json* v = reader.find(root, "compatibility")) {
    const std::string name = reader.string(*v, "compatibility");
    const auto compatibility = parse_compatibility(name);
    if (!compatibility)
      Reader::fail(
          "compatibility",
          "expected one of dot, scaled_dot, general, additive, cosine; got \"" + name + "\"");
    c.compatibility = *compatibility;
  }
  if (const Json* v = reader.find(root, "temperature")) {
    const double t = reader.number(*v, "temperature");
    const auto as_float = static_cast<float>(t);  // compared as stored: 0.001 is the float 1e-3f
    if (!(as_float >= Limits::kMinTemperature && as_float <= Limits::kMaxTemperature))
      Reader::fail("temperature",
                   "must be between 0.001 and 1000, got " + Reader::format_double(t));
    c.temperature = as_float;
  }
  if (const Json* v = reader.find(root, "kv_groups")) {
    c.kv_groups = static_cast<int>(reader.integer(*v, "kv_groups", 1, c.heads));
    if (c.heads % c.kv_groups != 0)
      Reader::fail("kv_groups", "must divide heads: " + std::to_string(c.heads) +
                                    " heads cannot be shared out among " +
                                    std::to_string(c.kv_groups) + " key/value groups");
    if (c.kv_groups == c.heads) c.kv_groups = 0;  // one group per head: ordinary multi-head
  }
  if (const Json* v = reader.find(root, "hard")) c.hard = reader.boolean(*v, "hard");
  if (const Json* v = reader.find(root, "causal")) c.causal = reader.boolean(*v, "causal");
  if (const Json* v = reader.find(root, "positional")) {
    const std::string name = reader.string(*v, "positional");
    const auto positional = parse_positional(name);
    if (!positional)
      Reader::fail("positional", "expected \"none\" or \"sinusoidal\", got \"" + name + "\"");
    one.positional = *positional;
  }
  if (const Json* v = reader.find(root, "seed")) {
    if (v->is_number_unsigned())
      one.seed = v->get<std::uint64_t>();
    else
      one.seed = static_cast<std::uint64_t>(reader.integer(*v, "seed", 0, std::int64_t{1} << 53));
  }

  if (turn_off_causal_in_cross(one)) reader.warning(std::string(kCausalOffInCross));

  one.parameters = seeded_parameters(c, one.seed);
  if (const Json* v = reader.find(root, "weights")) parse_weights(reader, *v, one);
  if (const Json* v = reader.find(root, "embeddings")) parse_embeddings(reader, *v, one);
  if (const Json* v = reader.find(root, "dimension_names")) parse_dimension_names(reader, *v, one);
  if (const Json* v = reader.find(root, "mask")) parse_mask(reader, *v, s, one);
  if (const Json* v = reader.find(root, "mask_pattern")) {
    if (one.mask.size() > 0)
      Reader::fail("mask_pattern", "the scenario has a mask too: give mask or mask_pattern");
    one.mask_pattern = parse_mask_pattern(reader, *v);
  }
  if (const Json* v = reader.find(root, "view")) {
    if (!v->is_object()) Reader::fail("view", "expected an object, got " + json_type_name(*v));
    s.view_json = v->dump();
  }
  if (model)
    s.spec = std::move(*model);
  else
    s.spec = std::move(one);
  return s;
}

}  // namespace

Result<Scenario> parse_scenario(std::string_view json_text) {
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Status::error("the file is empty");
  Result<Json> parsed = parse_json(json_text);
  if (!parsed) return parsed.status();
  std::vector<std::string> warnings;
  try {
    Reader reader(warnings);
    Scenario scenario = parse_root(reader, *parsed);
    return Result<Scenario>(std::move(scenario), std::move(warnings));
  } catch (const Failure& failure) {
    return Result<Scenario>(Status::error(failure.message), std::move(warnings));
  } catch (const Json::exception& e) {
    return Result<Scenario>(Status::error(std::string("unexpected JSON content: ") + e.what()),
                            std::move(warnings));
  }
}

Result<Scenario> load_scenario_file(const std::string& path) {
  const Result<std::string> text = read_file(path, kMaxScenarioBytes);
  if (!text) return text.status();
  Result<Scenario> load = parse_scenario(*text);
  const std::string name = path == "-" ? "<stdin>" : path;
  for (std::string& warning : load.warnings) warning = name + ": " + warning;
  if (!load.ok())
    return Result<Scenario>(Status::error(name + ": " + load.error()), std::move(load.warnings));
  return load;
}

std::string_view to_string(MaskPattern::Kind kind) {
  switch (kind) {
    case MaskPattern::Kind::Dilated:
      return "dilated";
    case MaskPattern::Kind::Blocks:
      return "blocks";
    case MaskPattern::Kind::Window:
      break;
  }
  return "window";
}

std::string_view pair_filter_name(PairFilter filter) {
  switch (filter) {
    case PairFilter::All:
      return "all";
    case PairFilter::AToA:
      return "A->A";
    case PairFilter::AToB:
      return "A->B";
    case PairFilter::BToA:
      return "B->A";
    case PairFilter::BToB:
      return "B->B";
  }
  return "all";
}

std::string_view pair_filter_label(PairFilter filter) {
  switch (filter) {
    case PairFilter::All:
      return "all to all";
    case PairFilter::AToA:
      return "A \u2192 A";
    case PairFilter::AToB:
      return "A \u2192 B";
    case PairFilter::BToA:
      return "B \u2192 A";
    case PairFilter::BToB:
      return "B \u2192 B";
  }
  return "all to all";
}

std::optional<PairFilter> pair_filter_named(std::string_view name) {
  for (const PairFilter filter : kPairFilters)
    if (pair_filter_name(filter) == name) return filter;
  return std::nullopt;
}

int pair_filter_from(PairFilter filter) {
  return filter == PairFilter::All
             ? -1
             : (filter == PairFilter::AToA || filter == PairFilter::AToB ? 0 : 1);
}

int pair_filter_to(PairFilter filter) {
  return filter == PairFilter::All
             ? -1
             : (filter == PairFilter::AToA || filter == PairFilter::BToA ? 0 : 1);
}

HeadIntervention ModelSpec::intervention_in(ModelPart in, int layer, int head) const {
  for (const ModelHeadChange& entry : interventions)
    if (entry.part == in && entry.layer == layer && entry.head == head) return entry.change;
  return {};
}

void ModelSpec::set_weight(const ModelWeightEdit& edit) {
  auto it = std::lower_bound(weight_edits.begin(), weight_edits.end(), edit,
                             [](const auto& a, const auto& b) { return a.key() < b.key(); });
  if (it != weight_edits.end() && it->key() == edit.key())
    it->value = edit.value;
  else
    weight_edits.insert(it, edit);
}

void ModelSpec::set_weight_block(int layer, HeadMatrix matrix, int head,
                                 std::vector<ModelWeightEdit> cells) {
  const auto block = [&](const ModelWeightEdit& e) {
    return std::tuple(e.layer, e.matrix, e.head);
  };
  const auto at = std::tuple(layer, matrix, head);
  const auto first = std::lower_bound(weight_edits.begin(), weight_edits.end(), at,
                                      [&](const auto& e, const auto& b) { return block(e) < b; });
  const auto last = std::upper_bound(first, weight_edits.end(), at,
                                     [&](const auto& b, const auto& e) { return b < block(e); });
  for (ModelWeightEdit& cell : cells) {
    cell.layer = layer;
    cell.matrix = matrix;
    cell.head = head;
  }
  std::sort(cells.begin(), cells.end(),
            [](const auto& a, const auto& b) { return a.key() < b.key(); });
  cells.erase(std::unique(cells.begin(), cells.end(),
                          [](const auto& a, const auto& b) { return a.key() == b.key(); }),
              cells.end());
  const auto position = weight_edits.erase(first, last);
  weight_edits.insert(position, cells.begin(), cells.end());
}

void ModelSpec::set_embedding(const ModelEmbeddingEdit& edit) {
  auto it = std::lower_bound(embedding_edits.begin(), embedding_edits.end(), edit,
                             [](const auto& a, const auto& b) { return a.key() < b.key(); });
  if (it != embedding_edits.end() && it->key() == edit.key())
    it->value = edit.value;
  else
    embedding_edits.insert(it, edit);
}

void ModelSpec::reset_embedding(int token) {
  std::erase_if(embedding_edits, [&](const ModelEmbeddingEdit& e) { return e.token == token; });
}

void ModelSpec::set_intervention_in(ModelPart in, int layer, int head,
                                    const HeadIntervention& change) {
  const auto at = std::tuple(in, layer, head);
  auto it = std::lower_bound(
      interventions.begin(), interventions.end(), at,
      [](const ModelHeadChange& entry, const auto& key) { return entry.key() < key; });
  const bool present = it != interventions.end() && it->key() == at;
  if (!change.changes_anything()) {
    if (present) interventions.erase(it);
  } else if (present) {
    it->change = change;
  } else {
    interventions.insert(it, ModelHeadChange{in, layer, head, change});
  }
}

std::string_view model_part_name(ModelPart part) {
  switch (part) {
    case ModelPart::Main:
      return "main";
    case ModelPart::Encoder:
      return "encoder";
    case ModelPart::Cross:
      return "cross";
  }
  return "main";
}

std::optional<ModelPart> model_part_named(std::string_view name) {
  for (const ModelPart part : {ModelPart::Main, ModelPart::Encoder, ModelPart::Cross})
    if (model_part_name(part) == name) return part;
  return std::nullopt;
}

std::string_view model_part_label(ModelPart part) {
  switch (part) {
    case ModelPart::Main:
      return "decoder self-attention";
    case ModelPart::Encoder:
      return "encoder self-attention";
    case ModelPart::Cross:
      return "cross-attention";
  }
  return "";
}

std::string scenario_title(const Scenario& scenario) {
  if (!scenario.title.empty()) return scenario.title;
  // The sentence's characters (an invalid byte as U+FFFD), every run of spaces, tabs and line
  // breaks one space, none at either end; `cut` remembers where a cut at a space would go.
  std::string title;
  std::size_t characters = 0, cut = std::string::npos;
  bool space_owed = false, longer = false;
  const std::string_view text = scenario.target;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    char32_t c = decode_utf8(text, i, length);
    i += length;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space_owed = !title.empty();
      continue;
    }
    if (characters + (space_owed ? 1 : 0) + 1 > kMaxSentenceTitleLength) {
      longer = true;
      break;
    }
    if (space_owed) {
      cut = title.size();
      title += ' ';
      ++characters;
      space_owed = false;
    }
    if (title.empty() && c >= 'a' && c <= 'z') c = c - 'a' + 'A';
    append_utf8(title, c);
    ++characters;
  }
  if (longer) {
    // At the last space, unless that leaves less than half: then inside the word.
    if (cut != std::string::npos &&
        utf8_length(std::string_view(title).substr(0, cut)) >= kMaxSentenceTitleLength / 2)
      title.resize(cut);
    title += "\xe2\x80\xa6";  // …
  }
  return title;
}

bool turn_off_causal_in_cross(OneLayerSpec& spec) {
  if (spec.mode != Mode::Cross || !spec.config.causal) return false;
  spec.config.causal = false;
  return true;
}

bool set_mode(OneLayerSpec& spec, Mode mode, const std::string& target) {
  spec.mode = mode;
  if (mode == Mode::Cross && spec.source.empty()) spec.source = target;
  return turn_off_causal_in_cross(spec);
}

OneLayerSpec OneLayerSpec::seeded(const AttentionConfig& config, std::uint64_t seed) {
  OneLayerSpec spec;
  spec.config = config;
  spec.seed = seed;
  spec.parameters = seeded_parameters(config, seed);
  return spec;
}

const OneLayerSpec& no_one_layer() {
  static const OneLayerSpec defaults = OneLayerSpec::seeded(AttentionConfig{}, 7);
  return defaults;
}

const OneLayerSpec& Scenario::one_layer() const {
  const OneLayerSpec* held = std::get_if<OneLayerSpec>(&spec);
  return held ? *held : no_one_layer();
}

Scenario make_scenario(std::string target, const AttentionConfig& config, std::uint64_t seed) {
  Scenario scenario;
  scenario.target = std::move(target);
  scenario.spec = OneLayerSpec::seeded(config, seed);
  return scenario;
}

void apply_config(OneLayerSpec& scenario, const AttentionConfig& config) {
  const int old_d_model = scenario.config.d_model;
  scenario.config = config;
  normalize_kv_groups(scenario.config);
  reshape_parameters(scenario.parameters, config, scenario.seed);
  if (config.d_model == old_d_model) return;
  if (scenario.dimension_names.size() > static_cast<std::size_t>(config.d_model))
    scenario.dimension_names.resize(static_cast<std::size_t>(config.d_model));
  std::vector<float> defaults(static_cast<std::size_t>(config.d_model));
  for (auto& [word, vector] : scenario.embeddings) {
    const std::size_t kept = std::min(vector.size(), defaults.size());
    default_embedding(lowercase_key(word), config.d_model, defaults.data());
    std::copy(vector.begin(), vector.begin() + static_cast<std::ptrdiff_t>(kept), defaults.begin());
    vector = defaults;
  }
}

std::string_view dimension_name(const OneLayerSpec& scenario, int index) {
  if (index < 0) return {};
  const auto d = static_cast<std::size_t>(index);
  if (!scenario.dimension_names.empty())
    return d < scenario.dimension_names.size() ? std::string_view(scenario.dimension_names[d])
                                               : std::string_view();
  return d < kFeatureCount ? kFeatureNames[d] : std::string_view();
}

}  // namespace attnviz
