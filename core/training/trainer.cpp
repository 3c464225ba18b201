#include "core/training/trainer.hpp"

#include "core/base/float_text.hpp"
#include "core/base/rng.hpp"
#include "core/document/file_io.hpp"
#include "core/models/gpt2_tokenizer.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/safetensors.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

namespace attnviz {
namespace {

constexpr int kEndOfText = 256;  // a byte model's <|endoftext|>
constexpr std::uint64_t kProbeSeed = 7;

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else {  // every byte's symbol is below U+0800: two bytes
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

Status check_settings(const TrainingSettings& s, bool from_scratch) {
  const auto out_of = [](const char* what, long long value, long long low, long long high) {
    return Status::error(std::string(what) + " must be " + std::to_string(low) + " to " +
                         std::to_string(high) + ", not " + std::to_string(value));
  };
  if (s.steps < 0 || s.steps > 10'000'000) return out_of("steps", s.steps, 0, 10'000'000);
  if (s.texts < 1 || s.texts > 4096) return out_of("texts per batch", s.texts, 1, 4096);
  if (s.length < 8 || s.length > 4096) return out_of("tokens per text", s.length, 8, 4096);
  if (s.score_every < 1) return out_of("steps between scores", s.score_every, 1, 1'000'000);
  if (s.threads < 1 || s.threads > 64) return out_of("threads", s.threads, 1, 64);
  if (s.threads > s.texts)
    return Status::error("threads: at most one a text (" + std::to_string(s.texts) +
                         " texts a step), not " + std::to_string(s.threads));
  if (from_scratch) {
    if (s.layers < 1 || s.layers > 48) return out_of("layers", s.layers, 1, 48);
    if (s.heads < 1 || s.heads > 64) return out_of("heads", s.heads, 1, 64);
    if (s.d_model < 1 || s.d_model > 4096) return out_of("width", s.d_model, 1, 4096);
    if (s.d_model % s.heads != 0)
      return Status::error("the width (" + std::to_string(s.d_model) +
                           ") must be a multiple of the heads (" + std::to_string(s.heads) + ")");
  }
  const AdamWSettings& o = s.optimizer;
  if (!(o.learning_rate > 0.0f && o.learning_rate <= 1.0f))
    return Status::error("the learning rate must be above 0 and at most 1");
  if (!(o.weight_decay >= 0.0f && o.weight_decay < 1.0f) || !(o.clip_norm >= 0.0f) ||
      !(o.beta1 >= 0.0f && o.beta1 < 1.0f) || !(o.beta2 >= 0.0f && o.beta2 < 1.0f) ||
      !(o.epsilon > 0.0f) || o.warmup_steps < 0)
    return Status::error("the optimizer's settings are out of range");
  return Status::success();
}

}  // namespace

std::string byte_vocabulary_json() {
  nlohmann::ordered_json vocab;
  for (unsigned b = 0; b < 256; ++b) {  // byte b, as GPT-2's bytes_to_unicode writes it
    std::string symbol;
    append_utf8(symbol,
                static_cast<char32_t>(Gpt2Tokenizer::byte_symbol(static_cast<unsigned char>(b))));
    vocab[symbol] = b;
  }
  vocab["<|endoftext|>"] = kEndOfText;
  return vocab.dump() + "\n";
}

std::string safetensors_bytes(const ParameterTable& table, const float* values,
                              const std::vector<std::pair<std::string, std::string>>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) {
    nlohmann::ordered_json meta;
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = meta;
  }
  std::size_t offset = 0;
  for (const ParameterTensor& tensor : table.tensors()) {
    const std::size_t bytes = tensor.count() * sizeof(float);
    header[tensor.name] = {
        {"dtype", "F32"}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  const std::uint64_t length = text.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((length >> (8 * i)) & 0xFF);
  out += text;
  for (const ParameterTensor& tensor : table.tensors()) {
    const std::size_t count = tensor.count();
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t bits = float_bits(values[tensor.offset + i]);
      for (int k = 0; k < 4; ++k) out += static_cast<char>((bits >> (8 * k)) & 0xFF);
    }
  }
  return out;
}

Result<Trainer> Trainer::make(const TrainingSettings& settings, const Model* from) {
  if (Status ok = check_settings(settings, from == nullptr); !ok)
    return Result<Trainer>::failure(ok.message());
  Trainer t;
  t.settings_ = settings;
  if (from == nullptr) {
    t.config_ = gpt2_config(kEndOfText + 1, settings.length, settings.layers, settings.heads,
                            settings.d_model);
  } else {
    t.config_ = from->transformer.config();
    if (from->location.format != ModelFormat::HuggingFaceGpt2)
      return Result<Trainer>::failure(from->name +
                                      ": training continues GPT-2 models only (this one is "
                                      "another kind)");
    if (settings.length > t.config_.context)
      return Result<Trainer>::failure("texts of " + std::to_string(settings.length) +
                                      " tokens are longer than " + from->name + "'s context (" +
                                      std::to_string(t.config_.context) + ")");
  }
  Result<ParameterTable> table = gpt2_parameter_table(t.config_);
  if (!table) return Result<Trainer>::failure(table.error());
  t.table_ = std::move(*table);
  t.values_.assign(t.table_.size(), 0.0f);
  t.gradient_.assign(t.table_.size(), 0.0f);
  const bool attention_only = from == nullptr && settings.attention_only;
  if (from == nullptr) {
    initialize_gpt2(t.config_, t.table_, settings.seed, attention_only, t.values_.data(),
                    settings.initial);
    t.vocab_json_ = byte_vocabulary_json();
    t.merges_txt_ = "#version: 0.2\n";
  } else {
    // A copy of the model's weights, through its views (edits made in the app included).
    const TransformerWeights& source = from->transformer.weights();
    if (source.unembedding.data != source.token_embedding.data)
      return Result<Trainer>::failure(from->name +
                                      ": its output matrix is not its token embedding (untied): "
                                      "training here keeps them one");
    copy_weights(source, t.weights(), t.values_.data());
    for (const char* name : {"vocab.json", "merges.txt"}) {
      Result<std::string> text =
          read_file((std::filesystem::path(from->location.folder) / name).string(), 64u << 20);
      if (!text) return Result<Trainer>::failure(text.error());
      (std::string(name) == "vocab.json" ? t.vocab_json_ : t.merges_txt_) = std::move(*text);
    }
    t.from_ = from->name;
  }
  for (const ParameterTensor& tensor : t.table_.tensors())
    t.frozen_.push_back(attention_only && is_mlp_tensor(tensor));

  Result<TrainingPass> pass = TrainingPass::make(t.config_, attention_only);
  if (!pass) return Result<Trainer>::failure(pass.error());
  t.pass_.emplace(std::move(*pass));
  for (int helper = 1; helper < settings.threads; ++helper) {
    Result<TrainingPass> more = TrainingPass::make(t.config_, attention_only);
    if (!more) return Result<Trainer>::failure(more.error());
    t.helper_passes_.push_back(std::move(*more));
    t.helper_gradients_.emplace_back(t.table_.size(), 0.0f);
  }
  t.optimizer_.emplace(settings.optimizer, t.table_);

  // The task's tokens: the letters a–z of a byte model; past the first 3 ids of another.
  TrainingTask& task = t.task_;
  task.kind = settings.task;
  task.texts = settings.texts;
  task.length = settings.length;
  if (from == nullptr) {
    task.start = kEndOfText;
    task.separator = '=';
    for (int letter = 'a'; letter <= 'z'; ++letter) task.alphabet.push_back(letter);
    if (settings.task == TrainingTaskKind::Text)
      for (unsigned char byte : settings.text) task.corpus.push_back(byte);
  } else {
    task.start = std::max(from->tokenizer.start_token(), 0);
    Result<std::vector<ModelToken>> equals = read_text(*from, "=");
    task.separator = equals && !equals->empty() ? equals->back().id : task.start;
    for (int id = 3; id < t.config_.vocab_size && task.alphabet.size() < 1000; ++id)
      if (id != task.start && id != task.separator) task.alphabet.push_back(id);
    if (settings.task == TrainingTaskKind::Text) {
      Result<std::vector<ModelToken>> tokens = read_text(*from, settings.text);
      if (!tokens) return Result<Trainer>::failure(tokens.error());
      for (const ModelToken& token : *tokens) task.corpus.push_back(token.id);
    }
  }
  if (Status ok = check_task(task); !ok) return Result<Trainer>::failure(ok.message());
  // The probe: the start token, then 24 different task tokens (fewer in a short text or a small
  // alphabet) in a random order, written twice: every token of the second copy occurred once
  // before, so the token after its occurrence is what an induction head looks at.
  const int m = std::min(
      {24, (std::min(t.config_.context, 4096) - 1) / 2, static_cast<int>(task.alphabet.size())});
  std::vector<int> shuffled = task.alphabet;
  for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i)
    std::swap(shuffled[i], shuffled[i + rng::combine(kProbeSeed, i) % (shuffled.size() - i)]);
  const std::vector<int> span(shuffled.begin(), shuffled.begin() + m);
  t.probe_.push_back(task.start);
  t.probe_.insert(t.probe_.end(), span.begin(), span.end());
  t.probe_.insert(t.probe_.end(), span.begin(), span.end());
  t.scores_.push_back(t.measure_heads());
  // A model that copies already (one trained elsewhere): its phase change is behind it, step 0.
  const std::vector<float>& first = t.scores_.front().induction;
  if (!first.empty() &&
      *std::max_element(first.begin(), first.end()) >= role_threshold(HeadRole::Induction))
    t.phase_change_ = 0;
  return t;
}

HeadScoresAt Trainer::measure_heads() {
  HeadScoresAt at;
  at.step = step_;
  const TrainingBatch batch = next_token_batch(probe_);
  if (!pass_->loss(weights(), batch)) return at;
  const int n = static_cast<int>(probe_.size());
  probe_attention_.clear();
  probe_attention_step_ = step_;
  for (int l = 0; l < config_.n_layers; ++l) {
    for (int h = 0; h < config_.n_heads; ++h) {
      const MatrixView weights{pass_->attention(0, l, h), n, n, n};
      probe_attention_.push_back(Eigen::Map<const Matrix>(weights.data, n, n));
      const auto score = [&](HeadRole role) {
        return role_score_on_text(role, weights, probe_, {}, true).value_or(0.0f);
      };
      at.induction.push_back(score(HeadRole::Induction));
      at.previous_token.push_back(score(HeadRole::PreviousToken));
    }
  }
  return at;
}

Result<float> Trainer::step() {
  if (done()) return Result<float>::failure("the training has run all its steps");
  const TrainingBatch batch = task_batch(task_, settings_.seed, step_);
  Result<float> loss = loss_and_gradient(batch);
  if (!loss) return loss;
  optimizer_->step(table_, values_.data(), gradient_.data(), frozen_);
  ++step_;
  losses_.push_back(*loss);
  if (step_ % settings_.score_every == 0 || done()) {
    scores_.push_back(measure_heads());
    const HeadScoresAt& now = scores_.back();
    const float best = now.induction.empty()
                           ? 0.0f
                           : *std::max_element(now.induction.begin(), now.induction.end());
    if (!phase_change_ && best >= role_threshold(HeadRole::Induction)) phase_change_ = step_;
  }
  return loss;
}

Result<float> Trainer::loss_and_gradient(const TrainingBatch& batch) {
  std::fill(gradient_.begin(), gradient_.end(), 0.0f);
  const TransformerWeights w = weights();
  const int parts = std::min(settings_.threads, batch.texts);
  if (parts == 1) return pass_->loss_and_gradient(w, values_.data(), gradient_.data(), batch);
  // Part k: texts [texts · k / parts, texts · (k + 1) / parts), its loss the mean over its own
  // targets; the batch's is the mean over all, so each part counts by its share of the targets.
  std::vector<TrainingBatch> part(static_cast<std::size_t>(parts));
  std::vector<int> targets(static_cast<std::size_t>(parts), 0);
  const auto T = static_cast<std::size_t>(batch.length);
  for (int k = 0; k < parts; ++k) {
    const auto first = static_cast<std::size_t>(batch.texts * k / parts),
               last = static_cast<std::size_t>(batch.texts * (k + 1) / parts);
    TrainingBatch& b = part[static_cast<std::size_t>(k)];
    b.texts = static_cast<int>(last - first);
    b.length = batch.length;
    b.tokens.assign(batch.tokens.begin() + static_cast<std::ptrdiff_t>(first * T),
                    batch.tokens.begin() + static_cast<std::ptrdiff_t>(last * T));
    b.targets.assign(batch.targets.begin() + static_cast<std::ptrdiff_t>(first * T),
                     batch.targets.begin() + static_cast<std::ptrdiff_t>(last * T));
    for (int target : b.targets) targets[static_cast<std::size_t>(k)] += target >= 0 ? 1 : 0;
  }
  std::vector<std::optional<Result<float>>> losses(static_cast<std::size_t>(parts));
  const auto run = [&](int k) {
    const auto at = static_cast<std::size_t>(k);
    if (targets[at] == 0) return;  // nothing to predict in this part
    if (k == 0) {
      losses[at] = pass_->loss_and_gradient(w, values_.data(), gradient_.data(), part[at]);
      return;
    }
    ParameterBuffer& gradient = helper_gradients_[at - 1];
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    losses[at] =
        helper_passes_[at - 1].loss_and_gradient(w, values_.data(), gradient.data(), part[at]);
  };
  std::vector<std::thread> threads;
  for (int k = 1; k < parts; ++k) threads.emplace_back(run, k);
  run(0);
  for (std::thread& thread : threads) thread.join();
  // Combined in thread order: the same threads give the same sums, bit for bit.
  int total = 0;
  for (int count : targets) total += count;
  if (total == 0) return Result<float>::failure("nothing to predict: a text needs two tokens");
  double loss = 0.0;
  for (int k = 0; k < parts; ++k) {
    const auto at = static_cast<std::size_t>(k);
    if (targets[at] == 0) continue;
    if (!*losses[at]) return *losses[at];
    loss += static_cast<double>(**losses[at]) * targets[at] / total;
  }
  const float share0 = static_cast<float>(targets[0]) / static_cast<float>(total);
  for (float& g : gradient_) g *= share0;
  for (int k = 1; k < parts; ++k) {
    const auto at = static_cast<std::size_t>(k);
    if (targets[at] == 0) continue;
    const float share = static_cast<float>(targets[at]) / static_cast<float>(total);
    const ParameterBuffer& gradient = helper_gradients_[at - 1];
    for (std::size_t i = 0; i < gradient_.size(); ++i) gradient_[i] += share * gradient[i];
  }
  return static_cast<float>(loss);
}

std::string Trainer::record_json() const {
  nlohmann::ordered_json json;
  json["format"] = "attnviz-training";
  json["version"] = 1;
  json["task"] = std::string(to_string(settings_.task));
  json["from"] = from_.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(from_);
  json["seed"] = settings_.seed;
  json["steps"] = step_;
  if (settings_.threads > 1) json["threads"] = settings_.threads;  // one: left out, as before
  json["model"] = {
      {"layers", config_.n_layers},
      {"heads", config_.n_heads},
      {"d_model", config_.d_model},
      {"d_ff", config_.d_ff},
      {"context", config_.context},
      {"vocab_size", config_.vocab_size},
      {"attention_only", frozen_.end() != std::find(frozen_.begin(), frozen_.end(), true)},
      {"parameters", table_.size()}};
  const AdamWSettings& o = settings_.optimizer;
  json["optimizer"] = {{"name", "AdamW"},
                       {"learning_rate", shortest_as_double(o.learning_rate)},
                       {"beta1", shortest_as_double(o.beta1)},
                       {"beta2", shortest_as_double(o.beta2)},
                       {"epsilon", shortest_as_double(o.epsilon)},
                       {"weight_decay", shortest_as_double(o.weight_decay)},
                       {"clip_norm", shortest_as_double(o.clip_norm)},
                       {"warmup_steps", o.warmup_steps},
                       {"total_steps", o.total_steps}};
  json["batch"] = {{"texts", task_.texts}, {"length", task_.length}};
  nlohmann::ordered_json losses = nlohmann::ordered_json::array();
  for (float loss : losses_) losses.push_back(shortest_as_double(loss));
  json["loss"] = losses;
  json["probe"] = probe_;
  nlohmann::ordered_json scores = nlohmann::ordered_json::array();
  for (const HeadScoresAt& at : scores_) {
    nlohmann::ordered_json induction = nlohmann::ordered_json::array(),
                           previous = nlohmann::ordered_json::array();
    for (float s : at.induction) induction.push_back(shortest_as_double(s));
    for (float s : at.previous_token) previous.push_back(shortest_as_double(s));
    scores.push_back({{"step", at.step}, {"induction", induction}, {"previous_token", previous}});
  }
  json["scores"] = scores;
  json["phase_change_step"] =
      phase_change_ ? nlohmann::ordered_json(*phase_change_) : nlohmann::ordered_json(nullptr);
  return json.dump(1) + "\n";
}

std::vector<Matrix> Trainer::probe_attention() {
  // Kept by the last measure when it was of this step (every score_every steps): not run twice.
  if (probe_attention_step_ != step_) measure_heads();
  return probe_attention_;
}

Status Trainer::save(const std::string& folder) const {
  return save_gpt2_folder(folder, config_, table_, values_.data(), vocab_json_, merges_txt_,
                          record_json(), from_.empty());
}

Status save_gpt2_folder(const std::string& folder, const TransformerConfig& c,
                        const ParameterTable& table, const float* values,
                        const std::string& vocab_json, const std::string& merges_txt,
                        const std::string& record_json, bool made_here) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder))
    return Status::error(folder + ": cannot make the folder" +
                         (error ? " (" + error.message() + ")" : std::string()));
  const auto path = [&](const char* name) {
    return (std::filesystem::path(folder) / name).string();
  };
  nlohmann::ordered_json config = {{"model_type", "gpt2"},
                                   {"architectures", {"GPT2LMHeadModel"}},
                                   {"vocab_size", c.vocab_size},
                                   {"n_positions", c.context},
                                   {"n_ctx", c.context},
                                   {"n_embd", c.d_model},
                                   {"n_layer", c.n_layers},
                                   {"n_head", c.n_heads},
                                   {"n_inner", c.d_ff},
                                   {"activation_function", "gelu_new"},
                                   {"layer_norm_epsilon", shortest_as_double(c.norm_epsilon)}};
  if (made_here) config["bos_token_id"] = config["eos_token_id"] = kEndOfText;
  const std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", "pt"}, {"made_by", "AttnViz (core/training)"}};
  for (const auto& [name, contents] :
       {std::pair{"config.json", config.dump(2) + "\n"},
        std::pair{"model.safetensors", safetensors_bytes(table, values, metadata)},
        std::pair{"vocab.json", vocab_json}, std::pair{"merges.txt", merges_txt},
        std::pair{"train.json", record_json}})
    if (Status ok = write_file(path(name), contents); !ok) return ok;
  return Status::success();
}

}  // namespace attnviz
