#include "cli/training_commands.hpp"
#include "cli/cli_errors.hpp"

#include "core/base/float_text.hpp"
#include "core/document/file_io.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/safetensors.hpp"
#include "core/training/parameters.hpp"
#include "core/training/trainer.hpp"
#include "core/training/training_pass.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnviz::cli {
namespace {

template <typename T>
bool parse_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && at == end;
}

}  // namespace

namespace {

// The batch `model grad` differentiates: a decoder's next-token loss over the text; an encoder's
// masked-language-model loss (BertForMaskedLM's, with labels): the tokens at `mask` replaced by
// [MASK] and predicted, or, without `mask`, every token predicted where it stands.
Result<TrainingBatch> grad_batch(const Model& model, const GradRequest& request,
                                 std::string& what) {
  const TransformerConfig& c = model.transformer.config();
  Result<std::vector<ModelToken>> tokens =
      read_text(model, request.text,
                request.text_b ? std::optional<std::string_view>(*request.text_b)
                               : std::optional<std::string_view>());
  if (!tokens) return Result<TrainingBatch>::failure(tokens.error());
  std::vector<int> ids;
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  const auto n = static_cast<int>(ids.size());
  if (n > c.context)
    return Result<TrainingBatch>::failure("the text is " + std::to_string(n) +
                                          " tokens, more than " + model.name + "'s context (" +
                                          std::to_string(c.context) + ")");
  if (c.causal()) {
    if (!request.mask.empty())
      return Result<TrainingBatch>::failure(
          "--mask is for an encoder (BERT): a decoder's loss is each token predicting the next");
    if (n < 2)
      return Result<TrainingBatch>::failure(
          "the text is " + std::to_string(n) +
          " token: a gradient needs at least two (each token predicts the next)");
    what = "the mean next-token cross-entropy over the text";
    return next_token_batch(ids);
  }
  if (!model.transformer.predicts_tokens())
    return Result<TrainingBatch>::failure(
        model.name +
        " has no masked-language-model head (a BertModel): it predicts no tokens, so "
        "there is no loss to differentiate; a BertForMaskedLM file has the head");
  TrainingBatch batch;
  batch.texts = 1;
  batch.length = n;
  batch.tokens = ids;
  for (const ModelToken& token : *tokens) batch.token_types.push_back(token.sentence);
  if (request.mask.empty()) {
    batch.targets = ids;
    what =
        "the mean cross-entropy of the masked-language-model head predicting every token where "
        "it stands (labels = the text's ids)";
    return batch;
  }
  const int mask = model.tokenizer.mask_token();
  if (mask < 0)
    return Result<TrainingBatch>::failure(model.name + "'s vocabulary has no [MASK] token");
  batch.targets.assign(ids.size(), -1);
  for (int position : request.mask) {
    if (position < 0 || position >= n)
      return Result<TrainingBatch>::failure(
          "--mask " + std::to_string(position) + ": the text is " + std::to_string(n) +
          " tokens, positions 0 to " + std::to_string(n - 1) + " (model tokens shows them)");
    batch.tokens[static_cast<std::size_t>(position)] = mask;
    batch.targets[static_cast<std::size_t>(position)] = ids[static_cast<std::size_t>(position)];
  }
  what =
      "the mean cross-entropy of the masked-language-model head at the --mask positions, "
      "their tokens replaced by [MASK]";
  return batch;
}

// A BERT file's own name for a tensor named as BertForMaskedLM's (what bert_file_tensors gives):
// without "bert." in a BertModel-style file, with .gamma/.beta in an older one.
std::string bert_name_in(const SafetensorsFile* file, const std::string& name) {
  if (file == nullptr || file->find(name) != nullptr) return name;
  const bool prefixed = file->find("bert.embeddings.word_embeddings.weight") != nullptr;
  const std::string bare = !prefixed && name.starts_with("bert.") ? name.substr(5) : name;
  if (file->find(bare) != nullptr) return bare;
  for (const auto& [now, old] :
       {std::pair<std::string, std::string>{"LayerNorm.weight", "LayerNorm.gamma"},
        std::pair<std::string, std::string>{"LayerNorm.bias", "LayerNorm.beta"}}) {
    if (!bare.ends_with(now)) continue;
    const std::string older = bare.substr(0, bare.size() - now.size()) + old;
    if (file->find(older) != nullptr) return older;
  }
  return bare;
}

}  // namespace

namespace {

// Writes a gradient under the file's names with what it is the gradient of, the loss and the
// counts in the header's metadata, and says so on standard error.
int write_gradient(const ParameterTable& named, const std::vector<float>& gradient,
                   const std::string& what, float loss, const TrainingBatch& batch,
                   std::size_t weights, const std::string& output) {
  int predictions = 0;
  for (int target : batch.targets) predictions += target >= 0 ? 1 : 0;
  std::vector<std::pair<std::string, std::string>> metadata{
      {"format", "pt"},
      {"what", "the gradient of " + what},
      {"loss", shortest_text(loss)},
      {"tokens", std::to_string(batch.length)},
      {"predictions", std::to_string(predictions)}};
  if (batch.source_length > 0)
    metadata.emplace_back("source_tokens", std::to_string(batch.source_length));
  const std::string bytes = safetensors_bytes(named, gradient.data(), metadata);
  if (Status written = write_file(output, bytes); !written) {
    print_error(written.message());
    return kExitBadInput;
  }
  std::fprintf(stderr, "loss %s over %d predictions; gradient of %zu weights written to %s\n",
               shortest_text(loss).c_str(), predictions, weights,
               output == "-" ? "standard output" : output.c_str());
  return kExitOk;
}

// An encoder–decoder's gradient (Marian, BART): the decoder reads the source's encoding and the
// start token then the target's pieces, and predicts each piece and then the end token
// (MarianMTModel's loss with labels = the target's pieces and the end token).
int grad_encoder_decoder(const Model& model, const GradRequest& request) {
  if (!request.source) {
    print_error(
        "model grad of an encoder–decoder needs --source TEXT (what its encoder reads) "
        "and --text TRANSLATION (what its decoder should write)");
    return kExitUsage;
  }
  if (request.text_b || !request.mask.empty()) {
    print_error("--text-b and --mask are an encoder's (BERT's); " + model.name +
                " is an encoder–decoder: --source TEXT --text TRANSLATION");
    return kExitUsage;
  }
  const Transformer& decoder = model.transformer;
  const Transformer& encoder = *decoder.encoder();
  Result<std::vector<ModelToken>> source = read_text(model, *request.source);
  Result<std::vector<ModelToken>> target =
      source ? read_target(model, request.text) : Result<std::vector<ModelToken>>(source);
  if (!target) {
    print_error(target.error());
    return kExitBadInput;
  }
  TrainingBatch batch;
  batch.texts = 1;
  batch.source_length = static_cast<int>(source->size());
  for (const ModelToken& token : *source) batch.source_tokens.push_back(token.id);
  batch.length = static_cast<int>(target->size());
  for (const ModelToken& token : *target) batch.tokens.push_back(token.id);
  // Each position predicts the token after it; the last, the end token.
  batch.targets.assign(batch.tokens.begin() + 1, batch.tokens.end());
  batch.targets.push_back(model.tokenizer.stop_token());
  if (batch.source_length > encoder.config().context || batch.length > decoder.config().context) {
    print_error("the source is " + std::to_string(batch.source_length) + " tokens and the target " +
                std::to_string(batch.length) + " with the start token; " + model.name +
                " reads at most " + std::to_string(decoder.config().context) + " of each");
    return kExitBadInput;
  }
  const TransformerWeights& weights = decoder.weights();
  const bool tied = weights.unembedding.data == weights.token_embedding.data;
  Result<ParameterTable> table =
      encoder_decoder_parameter_table(encoder.config(), decoder.config(), tied);
  Result<TrainingPass> pass =
      table ? TrainingPass::make_encoder_decoder(encoder.config(), decoder.config())
            : Result<TrainingPass>::failure(table.error());
  if (!pass) {
    print_error(model.name + ": " + pass.error());
    return kExitBadInput;
  }
  std::vector<float> values(table->size()), gradient(table->size(), 0.0f);
  const EncoderDecoderWeights views = encoder_decoder_weights_of(encoder.config(), decoder.config(),
                                                                 *table, values.data(), weights);
  copy_weights(encoder.weights(), views.encoder, values.data());
  copy_weights(weights, views.decoder, values.data());
  Result<float> loss = pass->loss_and_gradient(views.decoder, views.encoder, values.data(),
                                               values.size(), gradient.data(), batch);
  if (!loss) {
    print_error(loss.error());
    return kExitBadInput;
  }
  // The file's names, nn.Linear's weights (out, in); a tensor the file saves as a copy of the
  // shared embedding (each stack's embed_tokens, a tied lm_head) gets the shared gradient too,
  // as PyTorch's one parameter has it.
  ParameterTable named;
  std::vector<float> file_gradient;
  encoder_decoder_file_tensors(*table, gradient.data(), named, file_gradient);
  Result<SafetensorsFile> file = SafetensorsFile::open(
      (std::filesystem::path(model.location.folder) / "model.safetensors").string());
  const ParameterTensor shared = *named.find("model.shared.weight");
  for (const char* copy : {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight",
                           "lm_head.weight"}) {
    if (!file || file->find(copy) == nullptr || named.find(copy) != nullptr) continue;
    named.add(copy, shared.shape);
    file_gradient.insert(
        file_gradient.end(), file_gradient.begin() + static_cast<std::ptrdiff_t>(shared.offset),
        file_gradient.begin() + static_cast<std::ptrdiff_t>(shared.offset + shared.count()));
  }
  return write_gradient(
      named, file_gradient,
      "the mean cross-entropy of the decoder predicting the target's tokens and the end token, "
      "reading the source",
      *loss, batch, table->size(), request.output);
}

}  // namespace

int command_grad(const Model& model, const GradRequest& request) {
  const TransformerConfig& c = model.transformer.config();
  const ModelFormat format = model.location.format;
  if (model.transformer.encoder() != nullptr) return grad_encoder_decoder(model, request);
  if (request.source) {
    print_error("--source is an encoder–decoder's (Marian, BART); " + model.name +
                " reads one text: model grad MODEL --text TEXT");
    return kExitUsage;
  }
  std::string what;
  Result<TrainingBatch> batch = grad_batch(model, request, what);
  if (!batch) {
    print_error(batch.error());
    return kExitBadInput;
  }
  const TransformerWeights& weights = model.transformer.weights();
  const bool tied = weights.unembedding.data == weights.token_embedding.data;
  Result<ParameterTable> table = parameter_table_of(c, tied);
  if (!table) {
    print_error(model.name + ": " + table.error());
    return kExitBadInput;
  }
  std::vector<float> values(table->size()), gradient(table->size(), 0.0f);
  const TransformerWeights copy = weights_of(c, *table, values.data());
  copy_weights(weights, copy, values.data());
  Result<TrainingPass> pass = TrainingPass::make(c);
  if (!pass) {
    print_error(pass.error());
    return kExitBadInput;
  }
  Result<float> loss = pass->loss_and_gradient(copy, values.data(), gradient.data(), *batch);
  if (!loss) {
    print_error(loss.error());
    return kExitBadInput;
  }
  // The file's own names: a llama2.c checkpoint's arrays (run.c's names, layers stacked, (out,
  // in)); a BERT's nn.Linear weights (out, in), under its file's names. GPT2LMHeadModel's files put
  // "transformer." before all but lm_head. A file that saves a tied tensor apart (lm_head.weight,
  // cls.predictions.decoder.weight equal to the embedding; decoder.bias) gets the gradient under
  // both names, as PyTorch's one parameter has it.
  ParameterTable named;
  std::optional<SafetensorsFile> file;
  if (format != ModelFormat::Llama2c)
    if (Result<SafetensorsFile> opened = SafetensorsFile::open(
            (std::filesystem::path(model.location.folder) / "model.safetensors").string()))
      file = std::move(*opened);
  const auto saved = [&file](const char* name) { return file && file->find(name) != nullptr; };
  const auto add_tied_copy = [&](const std::string& embedding, const std::string& head_name) {
    const ParameterTensor& source = *named.find(embedding);
    const std::vector<int> shape = source.shape;
    const std::size_t offset = source.offset, count = source.count();
    named.add(head_name, shape);
    gradient.insert(gradient.end(), gradient.begin() + static_cast<std::ptrdiff_t>(offset),
                    gradient.begin() + static_cast<std::ptrdiff_t>(offset + count));
  };
  if (format == ModelFormat::Llama2c) {
    std::vector<float> file_gradient;
    llama2c_file_tensors(c, *table, gradient.data(), named, file_gradient);
    gradient = std::move(file_gradient);
  } else if (format == ModelFormat::HuggingFaceBert) {
    std::vector<float> file_gradient;
    ParameterTable canonical;
    bert_file_tensors(*table, gradient.data(), canonical, file_gradient);
    gradient = std::move(file_gradient);
    for (const ParameterTensor& tensor : canonical.tensors())
      named.add(bert_name_in(file ? &*file : nullptr, tensor.name), tensor.shape);
    const SafetensorsFile* names = file ? &*file : nullptr;
    if (tied && saved("cls.predictions.decoder.weight"))
      add_tied_copy(bert_name_in(names, "bert.embeddings.word_embeddings.weight"),
                    "cls.predictions.decoder.weight");
    // BertForMaskedLM's decoder.bias is cls.predictions.bias (one parameter, tied or not).
    if (saved("cls.predictions.decoder.bias"))
      add_tied_copy("cls.predictions.bias", "cls.predictions.decoder.bias");
  } else {
    const std::string prefix = saved("transformer.wte.weight") ? "transformer." : "";
    for (const ParameterTensor& tensor : table->tensors())
      named.add((tensor.name == "lm_head.weight" ? "" : prefix) + tensor.name, tensor.shape);
    if (tied && saved("lm_head.weight")) add_tied_copy(prefix + "wte.weight", "lm_head.weight");
  }
  return write_gradient(named, gradient, what, *loss, *batch, table->size(), request.output);
}

std::string train_help() {
  return R"(attnviz-cli train — train a model and save it as a folder the app opens

  attnviz-cli train --task TASK [--seed S] [--steps N] [--threads T] [--from MODEL] -o DIR
                    [--layers L] [--heads H] [--width D] [--mlp] [--texts B] [--length T]
                    [--lr RATE] [--warmup N] [--score-every K] [--quiet]

TASK: induction (random spans written twice: a head learns to copy), copy ("spam=spam"),
reverse ("spam=maps"), sort ("spam=amps"), or text FILE (any UTF-8 text, read letter by
letter by a new model, or by --from MODEL's tokenizer).
A new model reads bytes: GPT-2's layout, 257 tokens (the bytes and <|endoftext|>), L layers
(2) of H heads (4), width D (32), attention only unless --mlp. --from MODEL goes on training a
GPT-2 model (fine-tuning) with its tokenizer.
Defaults: --seed 1 --steps 4000, 16 texts of 32 tokens a step, AdamW at learning rate 0.003
(warm-up 1000 steps, then a cosine down to a tenth), the gradient clipped to norm 1: the
induction task's phase change comes near step 800 (about 15 s on one thread).
DIR gets config.json, model.safetensors, vocab.json, merges.txt and train.json: the loss of
every step and, every K steps (25), each head's induction and previous-token scores on a probe
(24 different tokens written twice), and the step of the phase change (a head's induction score
reaching 0.3). The same seed and settings give the same files, bit for bit.
--threads T (1 to 64, at most one a text) splits each step's texts among T threads, their
gradients added in thread order: the same T gives the same files bit for bit; another T adds
the same numbers in another order (the weights differ by rounding).
)";
}

int run_train_command(int argc, char** argv) {
  TrainingSettings settings;
  std::string output, from, text_file;
  bool quiet = false, task_given = false;
  int threads = 1;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    const auto next = [&]() {
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    const auto whole = [&](int& out, int low, int high) {
      if (!next() || !parse_whole(value, out) || out < low || out > high) {
        print_error(arg + ": expected a whole number from " + std::to_string(low) + " to " +
                    std::to_string(high));
        return false;
      }
      return true;
    };
    bool ok = true;
    if (arg == "--task") {
      if (!next()) {
        print_error("--task needs a task: induction, copy, reverse, sort or text FILE");
        return kExitUsage;
      }
      Result<TrainingTaskKind> kind = training_task_kind(value);
      if (!kind) {
        print_error(kind.error());
        return kExitUsage;
      }
      settings.task = *kind;
      task_given = true;
      if (*kind == TrainingTaskKind::Text) {
        if (!next() || (value.size() > 1 && value[0] == '-')) {
          print_error("--task text needs the FILE to train on");
          return kExitUsage;
        }
        text_file = value;
      }
    } else if (arg == "--seed") {
      ok = next() && parse_whole(value, settings.seed);
      if (!ok) print_error("--seed: expected a whole number of 0 or more");
    } else if (arg == "--steps") {
      ok = whole(settings.steps, 0, 10'000'000);
    } else if (arg == "--threads") {
      ok = whole(threads, 1, 1024);
    } else if (arg == "--layers") {
      ok = whole(settings.layers, 1, 48);
    } else if (arg == "--heads") {
      ok = whole(settings.heads, 1, 64);
    } else if (arg == "--width") {
      ok = whole(settings.d_model, 1, 4096);
    } else if (arg == "--texts") {
      ok = whole(settings.texts, 1, 4096);
    } else if (arg == "--length") {
      ok = whole(settings.length, 8, 4096);
    } else if (arg == "--warmup") {
      ok = whole(settings.optimizer.warmup_steps, 0, 10'000'000);
    } else if (arg == "--score-every") {
      ok = whole(settings.score_every, 1, 10'000'000);
    } else if (arg == "--lr") {
      double rate = 0.0;
      ok = next() &&
           parse_number(value.data(), value.data() + value.size(), rate).ec == std::errc() &&
           std::isfinite(rate) && rate > 0.0 && rate <= 1.0;
      if (!ok) print_error("--lr: expected a learning rate above 0 and at most 1");
      settings.optimizer.learning_rate = static_cast<float>(rate);
    } else if (arg == "--mlp") {
      settings.attention_only = false;
    } else if (arg == "--from") {
      ok = next();
      from = value;
      if (!ok) print_error("--from needs a MODEL");
    } else if (arg == "-o" || arg == "--output") {
      ok = next();
      output = value;
      if (!ok) print_error("-o needs a folder");
    } else if (arg == "--quiet") {
      quiet = true;
    } else {
      print_error("unknown option or argument '" + arg + "' (see attnviz-cli train --help)");
      return kExitUsage;
    }
    if (!ok) return kExitUsage;
  }
  if (!task_given) {
    print_error("train needs --task: induction, copy, reverse, sort or text FILE");
    return kExitUsage;
  }
  if (output.empty()) {
    print_error("train needs -o DIR: the folder the model is saved in");
    return kExitUsage;
  }
  settings.threads = threads;
  settings.optimizer.total_steps = settings.steps;
  if (!text_file.empty()) {
    Result<std::string> text = read_file(text_file, 64u << 20);
    if (!text) {
      print_error(text.error());
      return kExitBadInput;
    }
    settings.text = std::move(*text);
  }
  std::optional<Model> model;
  if (!from.empty()) {
    Result<Model> opened = open_model(from);
    if (!opened) {
      print_error(opened.error());
      return kExitBadInput;
    }
    model.emplace(std::move(*opened));
  }
  Result<Trainer> trainer = Trainer::make(settings, model ? &*model : nullptr);
  if (!trainer) {
    print_error(trainer.error());
    return kExitBadInput;
  }
  const TransformerConfig& c = trainer->config();
  if (!quiet)
    std::fprintf(stderr, "training %s: %d layers of %d heads, width %d, %zu weights; %d steps\n",
                 std::string(to_string(settings.task)).c_str(), c.n_layers, c.n_heads, c.d_model,
                 trainer->table().size(), settings.steps);
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!trainer->done()) {
    Result<float> loss = trainer->step();
    if (!loss) {
      print_error("step " + std::to_string(trainer->steps_taken() + 1) + ": " + loss.error());
      return kExitBadInput;
    }
    const int step = trainer->steps_taken();
    if (!quiet && (step % 100 == 0 || trainer->done())) {
      const HeadScoresAt& scores = trainer->scores().back();
      int best = 0;
      for (std::size_t h = 0; h < scores.induction.size(); ++h)
        if (scores.induction[h] > scores.induction[static_cast<std::size_t>(best)])
          best = static_cast<int>(h);
      std::fprintf(stderr, "step %6d  loss %.4f  best induction %.2f (layer %d, head %d)  %.1f s\n",
                   step, static_cast<double>(*loss),
                   scores.induction.empty() ? 0.0 : static_cast<double>(scores.induction[best]),
                   best / c.n_heads + 1, best % c.n_heads + 1, seconds());
    }
  }
  if (Status saved = trainer->save(output); !saved) {
    print_error(saved.message());
    return kExitBadInput;
  }
  if (!quiet) {
    if (trainer->phase_change_step())
      std::fprintf(stderr, "phase change at step %d (a head's induction score reached %.1f)\n",
                   *trainer->phase_change_step(),
                   static_cast<double>(role_threshold(HeadRole::Induction)));
    std::fprintf(stderr, "saved %s in %.1f s\n", output.c_str(), seconds());
  }
  return kExitOk;
}

}  // namespace attnviz::cli
