#include "cli/model_commands.hpp"

#include "cli/allocation_counter.hpp"
#include "cli/cli_errors.hpp"
#include "cli/training_commands.hpp"
#include "core/base/float_text.hpp"
#include "core/document/file_io.hpp"
#include "core/figures/format.hpp"
#include "core/models/alignment.hpp"
#include "core/models/blas.hpp"
#include "core/models/encoder_decoder.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"
#include "core/models/model_export.hpp"
#include "core/models/sampling.hpp"
#include "core/models/transformer_forward.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnviz::cli {
namespace {

struct Ablation {
  // An encoder–decoder's heads: the decoder's self-attention (no prefix), the encoder's
  // ("encoder:1.2"), the cross-attention ("cross:1.2").
  enum class Part { Self, Encoder, Cross };
  Part part = Part::Self;
  int layer = 0, head = 0;  // from 0 (as the JSON's indices)
  std::string written;      // as the command line gave it ("--ablate cross:1.2"), for messages
  // --ablate counts layers and heads from 1, as the app and the heads table show them;
  // --ablate-from-0 from 0, as the JSON's indices (and --ablate before it counted from 1).
  bool from_zero = false;
};

struct ModelArguments {
  std::string command;  // info, tokens, attention, predict, generate, heads, bench
  std::string model;
  std::optional<std::string> text;        // --text, or --prompt for generate
  std::optional<std::string> text_b;      // --text-b: an encoder's second sentence
  std::vector<int> mask;                  // --mask P,Q: grad's positions an encoder predicts
  std::optional<std::string> source;      // --source: an encoder–decoder's source (attention)
  std::optional<std::string> on_text;     // heads --on: the text the app's badges read
  std::optional<std::string> alignments;  // heads --alignments: an encoder–decoder's
                                          // aligned sentences (core/models/alignment.hpp)
  bool target = false;                    // tokens --target: the target's side
  std::string output;                     // -o
  bool weights_only = false;
  int top = 10;
  SamplingSettings sampling;
  bool sampling_given = false;
  int tokens = -1;  // generate: how many; bench: the text's length
  std::uint64_t seed = 1;
  int threads = 1;
  int repeat = 0;
  bool all_logits = false;
  bool count_products = false;      // bench --products
  std::string bench_mode = "full";  // full | append | last-layer
  std::vector<Ablation> ablations;
};

constexpr const char* kCommands[] = {"info",  "tokens", "attention", "predict",   "generate",
                                     "heads", "bench",  "fill",      "translate", "grad"};

// The options each command takes (any other is a usage error, not silently ignored).
bool takes(const std::string& command, const std::string& option) {
  const auto in = [&](std::initializer_list<const char*> options) {
    return std::any_of(options.begin(), options.end(), [&](const char* o) { return option == o; });
  };
  const bool sampling = in({"--temperature", "--top-k", "--top-p"});
  if (command == "tokens") return in({"--text", "--text-b", "--target"});
  const bool ablation = in({"--ablate", "--ablate-from-0"});
  if (command == "translate") return ablation || in({"--text"});
  if (command == "heads") return in({"--text", "--on", "--alignments"});
  if (command == "grad") return in({"--text", "--text-b", "--mask", "--source", "-o", "--output"});
  if (command == "attention")
    return ablation || in({"--text", "--text-b", "--source", "-o", "--output", "--weights-only"});
  if (command == "fill") return ablation || in({"--text", "--text-b", "--top"});
  if (command == "predict") return sampling || ablation || in({"--text", "--top"});
  if (command == "generate")
    return sampling || ablation || in({"--text", "--prompt", "--tokens", "--seed"});
  if (command == "bench")
    return ablation ||
           in({"--tokens", "--mode", "--all-logits", "--threads", "--repeat", "--products"});
  return false;  // info
}

template <typename T>
bool parse_number(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  std::from_chars_result result;
  if constexpr (std::is_floating_point_v<T>)
    result = attnviz::parse_number(text.data(), end, value);
  else
    result = std::from_chars(text.data(), end, value);
  return result.ec == std::errc() && result.ptr == end;
}

Status parse(int argc, char** argv, ModelArguments& args) {
  if (argc < 3)
    return Status::error(
        "model needs a command: info, tokens, attention, predict, generate, heads, fill, "
        "translate or bench");
  args.command = argv[2];
  if (std::find(std::begin(kCommands), std::end(kCommands), args.command) == std::end(kCommands))
    return Status::error("unknown model command '" + args.command + "' (see --help)");
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](std::string& out) {
      if (i + 1 >= argc) return Status::error(arg + " needs a value");
      out = argv[++i];
      return Status::success();
    };
    std::string text;
    const auto integer = [&](int& out, int low, int high) {
      if (Status got = value(text); !got) return got;
      if (!parse_number(text, out) || out < low || out > high)
        return Status::error(arg + " " + text + ": expected a whole number from " +
                             std::to_string(low) + " to " + std::to_string(high));
      return Status::success();
    };
    const auto real = [&](float& out, float low, float high, const char* range) {
      if (Status got = value(text); !got) return got;
      double number = 0.0;  // read as a double: 1e300 is out of range, not "not a number"
      if (!parse_number(text, number) || !std::isfinite(number) || number < low || number > high)
        return Status::error(arg + " " + text + ": expected a number " + range);
      out = static_cast<float>(number);
      return Status::success();
    };
    Status problem = Status::success();
    const bool known_option = arg.size() > 1 && arg[0] == '-' &&
                              std::any_of(std::begin(kCommands), std::end(kCommands),
                                          [&](const char* command) { return takes(command, arg); });
    if (known_option && !takes(args.command, arg))
      return Status::error(arg + " does not apply to model " + args.command + " (see --help)");
    if (arg == "--text" || arg == "--prompt") {
      std::string given;
      problem = value(given);
      if (problem && args.text)
        problem = Status::error("the text is given twice (--text, --prompt)");
      args.text = given;
    } else if (arg == "--text-b") {
      std::string given;
      problem = value(given);
      args.text_b = given;
    } else if (arg == "--mask") {
      std::string given;
      problem = value(given);
      for (std::size_t at = 0; problem.is_ok() && at <= given.size();) {
        const std::size_t comma = std::min(given.find(',', at), given.size());
        int position = 0;
        if (!parse_number(given.substr(at, comma - at), position) || position < 0 ||
            position > 1'000'000)
          problem = Status::error(
              "--mask: expected token positions from 0, separated by commas "
              "(--mask 3 or --mask 2,5), not '" +
              given + "'");
        else if (std::find(args.mask.begin(), args.mask.end(), position) == args.mask.end())
          args.mask.push_back(position);
        at = comma + 1;
      }
    } else if (arg == "--source") {
      std::string given;
      problem = value(given);
      args.source = given;
    } else if (arg == "--alignments") {
      std::string given;
      problem = value(given);
      args.alignments = given;
    } else if (arg == "--on") {
      std::string given;
      problem = value(given);
      args.on_text = given;
    } else if (arg == "--target") {
      args.target = true;
    } else if (arg == "-o" || arg == "--output") {
      problem = value(args.output);
      if (problem && args.output.empty()) problem = Status::error(arg + " needs a file name");
    } else if (arg == "--weights-only") {
      args.weights_only = true;
    } else if (arg == "--top") {
      problem = integer(args.top, 1, 1000);
    } else if (arg == "--temperature") {
      problem =
          real(args.sampling.temperature, 0.0f, 1000.0f, "from 0 (the most likely token) to 1000");
      args.sampling_given = true;
    } else if (arg == "--top-k") {
      problem = integer(args.sampling.top_k, 0, 1 << 24);
      args.sampling_given = true;
    } else if (arg == "--top-p") {
      problem = real(args.sampling.top_p, 0.0f, 1.0f, "above 0 and at most 1");
      if (problem && !(args.sampling.top_p > 0.0f))
        problem = Status::error("--top-p " + text + ": expected a number above 0 and at most 1");
      args.sampling_given = true;
    } else if (arg == "--tokens") {
      problem = integer(args.tokens, 1, 1 << 20);
    } else if (arg == "--seed") {  // a seed asks for sampling (at temperature 1 by default)
      if (problem = value(text); problem && !parse_number(text, args.seed))
        problem = Status::error("--seed " + text +
                                ": expected a whole number from 0 to 18446744073709551615");
      args.sampling_given = true;
    } else if (arg == "--threads") {
      problem = integer(args.threads, 1, 16);
    } else if (arg == "--repeat") {
      problem = integer(args.repeat, 1, 1 << 20);
    } else if (arg == "--all-logits") {
      args.all_logits = true;
    } else if (arg == "--products") {
      args.count_products = true;
    } else if (arg == "--mode") {
      problem = value(args.bench_mode);
      if (problem && args.bench_mode != "full" && args.bench_mode != "append" &&
          args.bench_mode != "last-layer")
        problem =
            Status::error("--mode " + args.bench_mode + ": expected full, append or last-layer");
    } else if (arg == "--ablate" || arg == "--ablate-from-0") {
      problem = value(text);
      Ablation ablation;
      ablation.from_zero = arg == "--ablate-from-0";
      ablation.written = arg + " " + text;
      std::string_view numbers = text;
      for (const auto& [prefix, part] :
           {std::pair{std::string_view("encoder:"), Ablation::Part::Encoder},
            std::pair{std::string_view("cross:"), Ablation::Part::Cross}})
        if (numbers.starts_with(prefix)) {
          ablation.part = part;
          numbers.remove_prefix(prefix.size());
        }
      const std::string layer_head(numbers);
      const std::size_t dot = layer_head.find('.');
      const int first = ablation.from_zero ? 0 : 1;
      if (problem &&
          (dot == std::string::npos || !parse_number(layer_head.substr(0, dot), ablation.layer) ||
           !parse_number(layer_head.substr(dot + 1), ablation.head) || ablation.layer < 0 ||
           ablation.head < 0))
        problem = Status::error(ablation.written + ": expected LAYER.HEAD, counted from " +
                                std::to_string(first) + " (" + arg + " " +
                                (ablation.from_zero ? "1.3" : "2.4") +
                                "), with encoder: or cross: before it for an encoder–decoder's "
                                "encoder and cross-attention heads");
      else if (problem && !ablation.from_zero && (ablation.layer == 0 || ablation.head == 0))
        problem = Status::error(
            ablation.written +
            ": layers and heads count from 1, as the app and `model heads` show them (the first "
            "head of the first layer is --ablate 1.1); --ablate-from-0 " +
            text + " counts from 0, as the JSON's indices");
      ablation.layer -= first;
      ablation.head -= first;
      args.ablations.push_back(ablation);
    } else if (arg.size() > 1 && arg[0] == '-') {
      problem = Status::error("unknown option '" + arg + "' (see --help)");
    } else if (args.model.empty()) {
      args.model = arg;
    } else {
      problem = Status::error("unexpected argument '" + arg + "' (see --help)");
    }
    if (!problem) return problem;
  }
  if (args.model.empty()) return Status::error("model " + args.command + " needs a MODEL");
  const bool needs_text = args.command == "tokens" ||
                          (args.command == "attention" && !args.source) ||
                          args.command == "predict" || args.command == "fill" ||
                          args.command == "translate" || args.command == "grad";
  if (needs_text && !args.text)
    return Status::error("model " + args.command + " needs --text TEXT");
  if (args.command == "grad" && args.output.empty())
    return Status::error("model grad needs -o G.safetensors (- for standard output)");
  if (args.command == "bench" && args.tokens < 1)
    return Status::error("model bench needs --tokens N");
  // Named as the options are spelled: "--temperature: expected a number of 0 or more ...".
  if (Status checked = check(args.sampling); !checked)
    return Status::error("--" + checked.message());
  return Status::success();
}

// The ablations (checked against the model's shape already) applied to a forward pass (and,
// for an encoder–decoder, its encoder's).
void apply_ablations(const ModelArguments& args, TransformerForward& forward,
                     TransformerForward* encoder = nullptr) {
  HeadIntervention knocked_out;
  knocked_out.output_scale = 0.0f;
  for (const Ablation& a : args.ablations) {  // in range: checked when the model was opened
    Status set = Status::success();
    if (a.part == Ablation::Part::Encoder && encoder)
      set = encoder->set_intervention(a.layer, a.head, knocked_out);
    else if (a.part == Ablation::Part::Cross)
      set = forward.set_cross_intervention(a.layer, a.head, knocked_out);
    else
      set = forward.set_intervention(a.layer, a.head, knocked_out);
    if (!set) print_error(set.message());
  }
}

// The tokens of --text (and --text-b), or of the start token alone when the text gives none.
Result<std::vector<ModelToken>> text_tokens(const Model& model, const std::string& text,
                                            const std::optional<std::string>& text_b) {
  Result<std::vector<ModelToken>> tokens = read_text(
      model, text,
      text_b ? std::optional<std::string_view>(*text_b) : std::optional<std::string_view>());
  if (!tokens) return tokens;
  const int context = model.transformer.config().context;
  if (static_cast<int>(tokens->size()) > context)
    return Status::error("the text is " + std::to_string(tokens->size()) +
                         " tokens; the model reads at most " + std::to_string(context));
  return tokens;
}

std::vector<int> ids_of(const std::vector<ModelToken>& tokens) {
  std::vector<int> ids;
  ids.reserve(tokens.size());
  for (const ModelToken& t : tokens) ids.push_back(t.id);
  return ids;
}

// The model run on `text`, the ablations applied: the forward pass and the text's tokens.
struct TextRun {
  std::vector<ModelToken> tokens;
  TransformerForward forward;
};
Result<TextRun> run_on_text(const Model& model, const ModelArguments& args,
                            const std::string& text) {
  Result<std::vector<ModelToken>> tokens = text_tokens(model, text, args.text_b);
  if (!tokens) return tokens.status();
  TextRun run{std::move(*tokens), TransformerForward(model.transformer)};
  apply_ablations(args, run.forward);
  if (Status status = run.forward.run(ids_of(run.tokens), token_types(run.tokens)); !status)
    return status;
  return run;
}

// The columns `text` takes in a terminal: East Asian wide characters and emoji take two.
int display_width(const std::string& text) {
  int width = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = std::max<std::size_t>(utf8_character_length(text, at), 1);
    const std::uint32_t c =
        length > 1 ? decode_code_point(std::string_view(text).substr(at, length)) : 0;
    const bool wide = (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) ||
                      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
                      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
                      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1FAFF) ||
                      (c >= 0x20000 && c <= 0x3FFFD);
    const bool combining =
        (c >= 0x0300 && c <= 0x036F) || c == 0x200D || (c >= 0xFE00 && c <= 0xFE0F);
    width += combining ? 0 : wide ? 2 : 1;
    at += length;
  }
  return width;
}

// `text` with each byte that is part of no UTF-8 character replaced by U+FFFD; `replaced`
// counts them.
std::string valid_utf8(const std::string& text, int& replaced) {
  std::string out;
  replaced = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_character_length(text, at);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++replaced;
      ++at;
    } else {
      out.append(text, at, length);
      at += length;
    }
  }
  return out;
}

std::string count_of(std::size_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

int command_info(const Model& model) {
  const TransformerConfig& c = model.transformer.config();
  const bool llama = c.architecture == "llama";
  std::printf("model         %s\n", model.name.c_str());
  std::printf("file          %s (%s)\n", model.transformer.source().c_str(),
              model.transformer.format().c_str());
  const std::string bert =
      std::string(
          "an encoder: attention both ways, LayerNorm after each sublayer, learned "
          "positions, ") +
      std::to_string(c.token_types) + " token types, GELU MLP; " +
      (model.transformer.predicts_tokens() ? "a masked-language-model head (model fill)"
                                           : "no masked-language-model head");
  if (const Transformer* encoder = model.transformer.encoder()) {
    const TransformerConfig& e = encoder->config();
    std::printf(
        "architecture  %s: an encoder–decoder (translation): LayerNorm after each sublayer, %s "
        "positions, %s MLP; the decoder attends to itself (causal) and to the encoder's output "
        "(cross-attention)\n",
        c.architecture.c_str(), c.architecture == "marian" ? "sinusoidal" : "learned",
        c.feed_forward == FeedForwardKind::Silu ? "SiLU (swish)" : "GELU");
    std::printf("encoder       %d layers, %d heads per layer, %d wide; MLP width %d\n", e.n_layers,
                e.n_heads, e.d_head, e.d_ff);
    std::printf(
        "decoder       %d layers, %d heads per layer, %d wide (self and cross); MLP width "
        "%d\n",
        c.n_layers, c.n_heads, c.d_head, c.d_ff);
    std::printf("d_model       %d\n", c.d_model);
    std::printf("vocabulary    %d tokens (shared by source and target)\n", c.vocab_size);
    std::printf("context       %d tokens each side\n", c.context);
    std::printf("parameters    %s\n",
                view::format_thousands(model.transformer.parameter_count()).c_str());
    std::printf("tokenizer     %s\n", model.tokenizer.description().c_str());
    return kExitOk;
  }
  std::printf("architecture  %s: %s\n", c.architecture.c_str(),
              !c.causal() ? bert.c_str()
              : llama     ? "RMSNorm, rotary positions (RoPE), SwiGLU MLP"
                          : "LayerNorm, learned positions, GELU MLP");
  std::printf("layers        %d\n", c.n_layers);
  if (c.n_kv_heads != c.n_heads)
    std::printf(
        "heads         %d per layer, %d wide; every %d share one key/value head "
        "(grouped-query attention: %d key/value heads)\n",
        c.n_heads, c.d_head, c.queries_per_kv_head(), c.n_kv_heads);
  else
    std::printf("heads         %d per layer, %d wide\n", c.n_heads, c.d_head);
  std::printf("d_model       %d\n", c.d_model);
  std::printf("MLP width     %d\n", c.d_ff);
  std::printf("vocabulary    %d tokens\n", c.vocab_size);
  std::printf("context       %d tokens\n", c.context);
  std::printf("parameters    %s\n",
              view::format_thousands(model.transformer.parameter_count()).c_str());
  std::printf("tokenizer     %s\n", model.tokenizer.description().c_str());
  return kExitOk;
}

int command_tokens(const Model& model, const ModelArguments& args) {
  Result<std::vector<ModelToken>> tokens =
      args.target ? model.tokenizer.tokenize_target(*args.text)
                  : model.tokenizer.tokenize(
                        *args.text, args.text_b ? std::optional<std::string_view>(*args.text_b)
                                                : std::optional<std::string_view>());
  if (!tokens) {
    print_error(tokens.error());
    return kExitBadInput;
  }
  std::printf("%5s  %7s  %-20s %s\n", "#", "id", "token", "bytes");
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    const ModelToken& t = (*tokens)[i];
    // Padded by characters, not bytes.
    const int characters = display_width(t.shown);
    std::printf("%5zu  %7d  %s%*s %d-%d%s%s\n", i, t.id, t.shown.c_str(),
                std::max(0, 20 - characters), "", t.byte_begin, t.byte_end,
                t.special ? "  (special)" : "", t.sentence == 1 ? "  (text B)" : "");
  }
  std::printf("%s\n", count_of(tokens->size(), "token", "tokens").c_str());
  return kExitOk;
}

// An encoder–decoder run on --source, and on --text as the target (the start token first) or,
// without it, on the greedy translation.
struct TranslationRun {
  std::vector<ModelToken> source, target;
  EncoderDecoderForward forward;
};
Result<TranslationRun> run_translation(const Model& model, const ModelArguments& args,
                                       const std::string& source_text,
                                       const std::optional<std::string>& target_text) {
  Result<std::vector<ModelToken>> source = read_text(model, source_text);
  if (!source) return source.status();
  const int context = model.transformer.encoder()->config().context;
  if (static_cast<int>(source->size()) > context)
    return Status::error("the source is " + std::to_string(source->size()) +
                         " tokens; the model reads at most " + std::to_string(context));
  TranslationRun run{std::move(*source), {}, EncoderDecoderForward(model.transformer)};
  apply_ablations(args, run.forward.decoder(), &run.forward.encoder());
  const std::vector<int> source_ids = ids_of(run.source);
  if (target_text) {
    Result<std::vector<ModelToken>> target = read_target(model, *target_text);
    if (!target) return target.status();
    if (static_cast<int>(target->size()) > model.transformer.config().context)
      return Status::error("the target is " + std::to_string(target->size()) +
                           " tokens; the model reads at most " +
                           std::to_string(model.transformer.config().context));
    run.target = std::move(*target);
    if (Status status = run.forward.run(source_ids, ids_of(run.target)); !status) return status;
    return run;
  }
  // At most twice the source and ten more (a translation runs about as long as its source).
  const int limit = 2 * static_cast<int>(source_ids.size()) + 10;
  Result<std::vector<int>> ids = greedy_translation(
      run.forward, source_ids, model.tokenizer.start_token(), model.tokenizer.stop_token(), limit);
  if (!ids) return ids.status();
  run.target = target_tokens_of(model, *ids);
  return run;
}

int command_attention(const Model& model, const ModelArguments& args) {
  if (model.transformer.encoder()) {
    if (!args.source) {
      print_error(model.name +
                  " is an encoder–decoder: it reads a source, --source TEXT, and the decoder a "
                  "target, --text TEXT (without it, the greedy translation)");
      return kExitUsage;
    }
    Result<TranslationRun> run = run_translation(model, args, *args.source, args.text);
    if (!run) {
      print_error(run.error());
      return kExitBadInput;
    }
    AttentionExportOptions options;
    options.intermediates = !args.weights_only;
    const std::string json = attention_to_json(run->forward.decoder(), run->target, options,
                                               &run->forward.encoder(), &run->source);
    if (Status status = write_file(args.output.empty() ? "-" : args.output, json); !status) {
      print_error(status.message());
      return kExitBadInput;
    }
    return kExitOk;
  }
  if (args.source) {
    print_error("--source is an encoder–decoder's source text; " + model.name +
                " reads one text: --text TEXT");
    return kExitUsage;
  }
  Result<TextRun> run = run_on_text(model, args, *args.text);
  if (!run) {
    print_error(run.error());
    return kExitBadInput;
  }
  TransformerForward& forward = run->forward;
  const std::vector<ModelToken>& tokens = run->tokens;
  AttentionExportOptions options;
  options.intermediates = !args.weights_only;
  const std::string json = attention_to_json(forward, tokens, options);
  if (Status status = write_file(args.output.empty() ? "-" : args.output, json); !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  return kExitOk;
}

// An encoder predicts no next token: a message pointing to model fill.
bool refuse_encoder(const Model& model, const char* command) {
  if (model.transformer.config().causal()) return false;
  print_error(model.name +
              " is an encoder (BERT): it sees the whole text and predicts no next "
              "token, so it cannot " +
              command +
              "; model fill MODEL --text \"... [MASK] ...\" "
              "shows what it guesses for a masked word");
  return true;
}

int command_predict(const Model& model, const ModelArguments& args) {
  if (refuse_encoder(model, "predict")) return kExitBadInput;
  Result<TextRun> run = run_on_text(model, args, *args.text);
  if (!run) {
    print_error(run.error());
    return kExitBadInput;
  }
  TransformerForward& forward = run->forward;
  const std::vector<ModelToken>& tokens = run->tokens;
  const RowVector logits = forward.last_logits();
  const std::vector<float> probabilities =
      next_token_probabilities(std::span(logits.data(), logits.size()), args.sampling);
  // The end of the text, as the model reads it, and what was knocked out.
  std::string tail;
  for (std::size_t i = tokens.size() > 3 ? tokens.size() - 3 : 0; i < tokens.size(); ++i)
    tail += tokens[i].shown;
  std::string knocked_out;
  for (const Ablation& a : args.ablations)  // as --ablate takes them, counted from 1
    knocked_out += (knocked_out.empty() ? "" : ", ") + std::to_string(a.layer + 1) + "." +
                   std::to_string(a.head + 1);
  std::printf("after \"%s%s\" (%s%s), the next token:\n", tokens.size() > 3 ? "…" : "",
              tail.c_str(), count_of(tokens.size(), "token", "tokens").c_str(),
              knocked_out.empty() ? "" : ("; --ablate " + knocked_out).c_str());
  std::printf("%4s  %7s  %-20s %s\n", "rank", "id", "token", "probability");
  int rank = 1;
  for (const Candidate& candidate : top_candidates(probabilities, args.top)) {
    if (candidate.probability <= 0.0f) break;
    const std::string shown = model.tokenizer.shown(candidate.token);
    const int characters = display_width(shown);
    std::printf("%4d  %7d  %s%*s %.4f\n", rank++, candidate.token, shown.c_str(),
                std::max(0, 20 - characters), "", candidate.probability);
  }
  return kExitOk;
}

int command_generate(const Model& model, const ModelArguments& args) {
  if (refuse_encoder(model, "generate")) return kExitBadInput;
  Result<TextRun> run = run_on_text(model, args, args.text.value_or(""));
  if (!run) {
    print_error(run.error());
    return kExitBadInput;
  }
  TransformerForward& forward = run->forward;
  const std::vector<ModelToken>& tokens = run->tokens;
  SamplingSettings settings = args.sampling;
  if (!args.sampling_given) settings.temperature = 0.0f;  // greedy unless asked otherwise
  const int count = args.tokens > 0 ? args.tokens : 64;
  Result<std::vector<int>> added =
      generate(forward, count, settings, args.seed, model.tokenizer.stop_token());
  if (!added) {
    print_error(added.error());
    return kExitBadInput;
  }
  std::string text = args.text.value_or("");
  int previous = tokens.back().id;
  for (const int id : *added) {
    text += model.tokenizer.text_of(previous, id);
    previous = id;
  }
  // Tokens drawn at random may end inside a character, or join bytes that make none.
  int replaced = 0;
  std::printf("%s\n", valid_utf8(text, replaced).c_str());
  if (replaced > 0)
    std::cerr << "attnviz-cli: warning: "
              << count_of(static_cast<std::size_t>(replaced), "byte", "bytes")
              << " of the generated text form no character: shown as U+FFFD\n";
  const int context = model.transformer.config().context;
  if (static_cast<int>(added->size()) < count && forward.size() >= context)
    std::cerr << "attnviz-cli: note: stopped after " << added->size()
              << " tokens: the model's context of " << context << " tokens is full\n";
  return kExitOk;
}

// An encoder–decoder's cross-attention heads: each one's alignment precision on aligned sentences
// (the folder's alignments.json, or --alignments FILE), beside the diagonal's.
int command_cross_heads(const Model& model, const ModelArguments& args) {
  if (args.text) {
    print_error(
        "--text: an encoder–decoder's heads are measured on aligned sentences "
        "(--alignments FILE, or the folder's alignments.json)");
    return kExitUsage;
  }
  const std::string path = args.alignments.value_or(model.location.folder + "/alignments.json");
  Result<std::vector<AlignedSentences>> sentences = load_aligned_sentences(path);
  if (!sentences) {
    print_error(sentences.error() +
                (args.alignments ? "" : " (pass the aligned sentences as --alignments FILE)"));
    return kExitBadInput;
  }
  Result<CrossAlignment> measured = measure_cross_alignment(model, *sentences);
  if (!measured) {
    print_error(measured.error());
    return kExitBadInput;
  }
  std::printf("%5s %4s  %-10s %9s  %s\n", "layer", "head", "role", "alignment", "--ablate");
  int best = 0;
  for (int layer = 0; layer < measured->layers; ++layer)
    for (int head = 0; head < measured->heads; ++head) {
      const float precision = measured->at(layer, head);
      if (precision > measured->precision[static_cast<std::size_t>(best)])
        best = layer * measured->heads + head;
      std::printf("%5d %4d  %-10s %9.3f  cross:%d.%d\n", layer + 1, head + 1,
                  precision >= role_threshold(HeadRole::Alignment) ? "alignment" : "-", precision,
                  layer + 1, head + 1);
    }
  std::printf(
      "cross-attention alignment on %d target tokens of %d sentence pairs (%s): the share whose "
      "row looks most at a source word they translate; the diagonal %.3f; the best, layer %d "
      "head %d, %.3f. Layers and heads count from 1, as --ablate takes them and the app shows "
      "them.\n",
      measured->counted, measured->sentences, path.c_str(), measured->diagonal,
      best / measured->heads + 1, best % measured->heads + 1,
      measured->precision[static_cast<std::size_t>(best)]);
  return kExitOk;
}

int command_heads(const Model& model, const ModelArguments& args) {
  if (model.transformer.encoder()) return command_cross_heads(model, args);
  if (args.alignments) {
    print_error("--alignments measures an encoder–decoder's cross-attention heads; " + model.name +
                " has none");
    return kExitUsage;
  }
  const std::string text = args.text.value_or(std::string(default_role_text(model)));
  Result<HeadRoleProbe> probe = role_probe(model, text);
  if (!probe) {
    print_error(probe.error());
    return kExitBadInput;
  }
  Result<std::vector<HeadScores>> heads = detect_head_roles(model.transformer, *probe);
  if (!heads) {
    print_error(heads.error());
    return kExitBadInput;
  }
  // --on TEXT: each head's score for its role on that text, as the app's badges show it beside
  // the probe's (role_score_on_text on the same forward pass the app runs).
  std::vector<std::optional<float>> on_text;
  if (args.on_text) {
    Result<TextRun> run = run_on_text(model, args, *args.on_text);
    if (!run) {
      print_error(run.error());
      return kExitBadInput;
    }
    const int n = run->forward.size();
    std::vector<int> ids;
    std::vector<bool> special;
    for (const ModelToken& token : run->tokens) {
      ids.push_back(token.id);
      special.push_back(token.special);
    }
    std::vector<float> matrix(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    for (const HeadScores& s : *heads) {
      std::fill(matrix.begin(), matrix.end(), 0.0f);  // (n_query, n_key)
      for (int i = 0; i < n; ++i) {
        const std::span<const float> row = run->forward.attention_row(s.layer, s.head, i);
        std::copy(row.begin(), row.end(), matrix.begin() + static_cast<std::ptrdiff_t>(i) * n);
      }
      on_text.push_back(role_score_on_text(s.role, MatrixView{matrix.data(), n, n, n}, ids, special,
                                           model.transformer.config().causal()));
    }
  }
  // An encoder's table adds next-token and special-token (a decoder's are 0 by construction).
  const bool encoder = !model.transformer.config().causal();
  std::printf("%5s %4s  %-15s %6s", "layer", "head", "role", "score");
  if (args.on_text) std::printf(" %7s", "on text");
  std::printf("  %9s %8s", "induction", "previous");
  if (encoder) std::printf(" %6s", "next");
  std::printf(" %6s", "first");
  if (encoder) std::printf(" %8s", "special");
  std::printf(" %5s %6s %10s  %s\n", "self", "broad", "positional", "--ablate");
  for (const HeadScores& s : *heads) {
    const float score = s.role == HeadRole::Mixed ? 0.0f : s.score(s.role);
    // Rounded to two decimals, as every other column and the app's badges.
    char score_text[16] = "-";
    if (s.role != HeadRole::Mixed)
      std::snprintf(score_text, sizeof score_text, "%.2f", static_cast<double>(score));
    std::printf("%5d %4d  %-15s %6s", s.layer + 1, s.head + 1,
                std::string(to_string(s.role)).c_str(), score_text);
    if (args.on_text) {
      const std::optional<float>& here = on_text[static_cast<std::size_t>(&s - heads->data())];
      if (here)
        std::printf(" %7.2f", static_cast<double>(*here));
      else
        std::printf(" %7s", "-");
    }
    std::printf("  %9.2f %8.2f", s.score(HeadRole::Induction), s.score(HeadRole::PreviousToken));
    if (encoder) std::printf(" %6.2f", s.score(HeadRole::NextToken));
    std::printf(" %6.2f", s.score(HeadRole::FirstToken));
    if (encoder) std::printf(" %8.2f", s.score(HeadRole::SpecialToken));
    std::printf(" %5.2f %6.2f %10.2f  %d.%d\n", s.score(HeadRole::Self), s.score(HeadRole::Broad),
                s.score(HeadRole::Positional), s.layer + 1, s.head + 1);
  }
  std::printf(
      "layers and heads count from 1, as --ablate takes them and the app shows them. Measured "
      "on %zu tokens of "
      "text and %d random tokens written twice.\n",
      probe->text.size(), probe->random_length);
  if (args.on_text)
    std::printf(
        "on text: the role's score on the --on text, as the app's badge shows it after the "
        "probe's (-: that text cannot measure it; induction needs a token written twice).\n");
  return kExitOk;
}

// Each [MASK] of the text, and the words the encoder puts there, most likely first.
int command_fill(const Model& model, const ModelArguments& args) {
  if (model.transformer.config().causal()) {
    print_error(model.name +
                " is a decoder: it fills no masked word (it predicts the next one: "
                "model predict)");
    return kExitBadInput;
  }
  if (!model.transformer.predicts_tokens()) {
    print_error(model.name +
                " has no masked-language-model head (a BertModel file without "
                "cls.predictions.*): it fills no masked word");
    return kExitBadInput;
  }
  const int mask = model.tokenizer.mask_token();
  Result<TextRun> run = run_on_text(model, args, *args.text);
  if (!run) {
    print_error(run.error());
    return kExitBadInput;
  }
  std::vector<int> masked;
  for (std::size_t i = 0; i < run->tokens.size(); ++i)
    if (run->tokens[i].id == mask) masked.push_back(static_cast<int>(i));
  if (mask < 0 || masked.empty()) {
    print_error(
        "the text has no [MASK]: write [MASK] where a word should be guessed (\"God "
        "said, let there be [MASK].\")");
    return kExitBadInput;
  }
  SamplingSettings all;  // the plain softmax: temperature 1, every token
  for (const int position : masked) {
    const RowVector logits = run->forward.logits(position);
    const std::vector<float> probabilities =
        next_token_probabilities(std::span(logits.data(), logits.size()), all);
    std::printf("[MASK] at token %d:\n", position);
    std::printf("%4s  %7s  %-20s %s\n", "rank", "id", "token", "probability");
    int rank = 1;
    for (const Candidate& candidate : top_candidates(probabilities, args.top)) {
      if (candidate.probability <= 0.0f) break;
      const std::string shown = model.tokenizer.shown(candidate.token);
      std::printf("%4d  %7d  %s%*s %.4f\n", rank++, candidate.token, shown.c_str(),
                  std::max(0, 20 - display_width(shown)), "", candidate.probability);
    }
  }
  return kExitOk;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int command_bench(const Model& model, const ModelArguments& args) {
  const TransformerConfig& c = model.transformer.config();
  if (args.tokens > c.context) {
    print_error("--tokens " + std::to_string(args.tokens) + ": the model reads at most " +
                std::to_string(c.context));
    return kExitUsage;
  }
  blas::set_threads(args.threads);
  std::vector<int> tokens;
  tokens.reserve(static_cast<std::size_t>(args.tokens));
  for (int i = 0; i < args.tokens; ++i)  // deterministic ids spread over the vocabulary
    tokens.push_back(static_cast<int>((static_cast<long long>(i) * 7919 + 13) % c.vocab_size));
  const std::span<const int> all(tokens), but_last = all.first(tokens.size() - 1);
  // An encoder–decoder: the same ids as the source, and as the target after the start token
  // (N tokens on each side); the encoder runs again only in full mode.
  std::unique_ptr<EncoderDecoderForward> pair;
  std::unique_ptr<TransformerForward> alone;
  std::vector<int> target;
  if (model.transformer.encoder()) {
    pair = std::make_unique<EncoderDecoderForward>(model.transformer);
    target.push_back(model.tokenizer.start_token() >= 0 ? model.tokenizer.start_token() : 0);
    target.insert(target.end(), tokens.begin(), tokens.end() - 1);
  } else {
    alone = std::make_unique<TransformerForward>(model.transformer);
  }
  TransformerForward& forward = pair ? pair->decoder() : *alone;
  apply_ablations(args, forward, pair ? &pair->encoder() : nullptr);
  // The forward pass on the whole text, or on all of it but its last token.
  const auto run_on = [&](bool whole) {
    if (!pair) return forward.run(whole ? all : but_last);
    const std::span<const int> target_ids(target);
    return pair->run(all, whole ? target_ids : target_ids.first(target.size() - 1));
  };
  std::vector<float> logits(static_cast<std::size_t>(c.vocab_size) *
                            (args.all_logits ? tokens.size() : 1));
  bool toggle = false;
  // One timed step: what the app does after a change, all of the forward pass it needs.
  const auto step = [&]() -> Status {
    if (args.bench_mode == "append") {
      if (Status s = run_on(false); !s) return s;  // drops the last position: no work
    } else if (args.bench_mode == "last-layer") {
      HeadIntervention scaled;
      scaled.output_scale = toggle ? 0.0f : 1.0f;  // an ablation switched on and off
      toggle = !toggle;
      if (Status set = forward.set_intervention(c.n_layers - 1, 0, scaled); !set) return set;
    } else {
      forward.weights_changed(0);  // every layer, every position again
      if (pair) pair->encoder().weights_changed(0);
    }
    if (Status s = run_on(true); !s) return s;
    if (args.all_logits)
      forward.all_logits(logits.data());
    else
      forward.logits(forward.size() - 1, logits.data());
    return Status::success();
  };
  // Warm-up: the first run sizes every buffer.
  const auto warm_start = std::chrono::steady_clock::now();
  int warm_runs = 0;
  do {
    if (args.bench_mode == "append" && warm_runs == 0) (void)run_on(true);
    if (Status s = step(); !s) {
      print_error(s.message());
      return kExitBadInput;
    }
    ++warm_runs;
  } while (warm_runs < 2 || (warm_runs < 100 && seconds_since(warm_start) < 0.2));
  const double per_run = seconds_since(warm_start) / warm_runs;
  const int repeat =
      args.repeat > 0 ? args.repeat : static_cast<int>(std::clamp(1.0 / per_run, 5.0, 1e5));
  std::vector<double> samples(static_cast<std::size_t>(repeat));
  start_counting_allocations();
  bool ok = true;
  for (double& sample : samples) {
    const auto start = std::chrono::steady_clock::now();
    ok = step().is_ok() && ok;
    sample = seconds_since(start) * 1e6;
  }
  const long allocations = stop_counting_allocations();
  if (!ok) {
    print_error("a forward pass failed");
    return kExitBadInput;
  }
  std::sort(samples.begin(), samples.end());
  const auto quantile = [&](double q) {
    return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5)];
  };
  std::printf("median_us=%.2f p90_us=%.2f allocations=%ld repeat=%d blas=\"%s\" threads=%d\n",
              quantile(0.5), quantile(0.9), allocations, repeat, blas::backend().c_str(),
              args.threads);
  if (args.count_products) {
    // As many runs again, each product timed (apart from the runs above: reading the clock
    // around every product costs a little): what the products take of a run, per run.
    blas::count_products(true);
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeat; ++r) ok = step().is_ok() && ok;
    const double run_us = seconds_since(start) * 1e6 / repeat;
    const blas::ProductCounts counts = blas::product_counts();
    blas::count_products(false);
    if (!ok) {
      print_error("a forward pass failed");
      return kExitBadInput;
    }
    const auto gflops = [](double flops, double seconds) {
      return seconds > 0.0 ? flops / seconds * 1e-9 : 0.0;
    };
    std::printf(
        "run_us=%.2f weight_products=%lld weight_us=%.2f weight_gflops=%.2f other_products=%lld "
        "other_us=%.2f other_gflops=%.2f\n",
        run_us, counts.weight_products / repeat, counts.weight_seconds * 1e6 / repeat,
        gflops(counts.weight_flops, counts.weight_seconds), counts.other_products / repeat,
        counts.other_seconds * 1e6 / repeat, gflops(counts.other_flops, counts.other_seconds));
  }
  return kExitOk;
}

}  // namespace

int command_translate(const Model& model, const ModelArguments& args) {
  Result<TranslationRun> run = run_translation(model, args, *args.text, std::nullopt);
  if (!run) {
    print_error(run.error());
    return kExitBadInput;
  }
  std::string translation;
  for (std::size_t i = 1; i < run->target.size(); ++i)
    translation += model.tokenizer.text_of(run->target[i - 1].id, run->target[i].id);
  std::printf("%s\n", translation.c_str());
  return kExitOk;
}

std::string model_help() {
  std::string models;
  for (const std::string& name : shipped_model_names())
    models += (models.empty() ? "" : ", ") + name;
  return R"(attnviz-cli model — real trained models from the command line

Usage:
  attnviz-cli model info      MODEL
  attnviz-cli model tokens    MODEL --text TEXT [--text-b TEXT] [--target]
  attnviz-cli model attention MODEL --text TEXT [--text-b TEXT] [-o OUT.json] [--weights-only]
  attnviz-cli model attention MODEL --source TEXT [--text TRANSLATION] [-o OUT.json]
  attnviz-cli model translate MODEL --text TEXT
  attnviz-cli model predict   MODEL --text TEXT [--top N] [SAMPLING]
  attnviz-cli model generate  MODEL [--prompt TEXT] [--tokens N] [SAMPLING] [--seed S]
  attnviz-cli model fill      MODEL --text "... [MASK] ..." [--text-b TEXT] [--top N]
  attnviz-cli model heads     MODEL [--text TEXT] [--on TEXT] | --alignments FILE
  attnviz-cli model bench     MODEL --tokens N [--mode full|append|last-layer]
                              [--all-logits] [--threads T] [--repeat R] [--products]
  attnviz-cli model grad      MODEL --text TEXT [--text-b TEXT] [--mask P,Q] -o G.safetensors
  attnviz-cli model grad      ENCODER-DECODER --source TEXT --text TRANSLATION -o G.safetensors

MODEL is a model folder (Hugging Face GPT-2, BERT or Marian), a llama2.c checkpoint (.bin, its
tokenizer beside it), or a shipped model's name. Shipped: )" +
         (models.empty() ? std::string("none found") : models) + R"(.

  info       the architecture, the sizes, the file and its format, the tokenizer
  tokens     how the model's tokenizer cuts TEXT: positions, ids, tokens as read, bytes; an
             encoder–decoder's source (--target: its target side)
  attention  every layer's and head's weights and intermediates as JSON (--weights-only: the
             weights alone). An encoder (BERT) reads [CLS] TEXT [SEP], with --text-b a pair.
             An encoder–decoder (Marian) reads --source, and its decoder the start token and
             --text (teacher forcing) or, without --text, the greedy translation
  translate  an encoder–decoder's greedy translation of TEXT
  predict    a decoder's most likely next tokens (--top N, default 10)
  generate   a decoder's continuation of --prompt by --tokens N (default 64), greedy unless
             SAMPLING or --seed is given
  fill       an encoder's likeliest tokens at each [MASK] of TEXT
  heads      each head's detected role and scores on TEXT (a built-in text by default); an
             encoder–decoder's cross-attention heads' alignment precision on aligned pairs
  grad       the gradient of a loss over TEXT for every weight, under the file's own tensor
             names and shapes (a tied embedding: the sum of both uses); the loss on standard
             error. A decoder's (GPT-2, llama2.c): the mean next-token loss (each token
             predicts the next). An encoder's (BERT with its MLM head): the tokens at --mask's
             positions (as model tokens counts them, [CLS] 0) replaced by [MASK] and predicted;
             without --mask, every token predicted where it stands. An encoder–decoder's
             (Marian, BART): the mean loss of the decoder reading --source and predicting
             --text's tokens and the end token, each after the start token and the ones before
  bench      times the forward pass on N tokens: median_us=... p90_us=... allocations=...

SAMPLING: --temperature T (0: the most likely), --top-k K (0: every token), --top-p P;
--seed S alone samples at temperature 1.

--ablate L.H knocks head H of layer L out, counted from 1 as the app and `model heads` show
them (--ablate 1.1 is the first head of the first layer); repeat it for more heads. For an
encoder–decoder, L.H is a decoder self-attention head, encoder:L.H an encoder head and
cross:L.H a cross-attention head. --ablate-from-0 L.H counts from 0, as the JSON's indices.
attention, translate, predict, generate, fill and bench take them.

heads measures each head's role on a probe (a held-out text, or --text, and random tokens
written twice); --on TEXT adds each head's score for its role on TEXT, the second number of the
app's badges.

OUT may be - (standard output); a file is written whole or not at all. Bad input: one line on
standard error, status 1; a mistake in the command line: status 2. docs/cli.md has it all.
)";
}

int run_model_command(int argc, char** argv) {
  ModelArguments args;
  if (Status status = parse(argc, argv, args); !status) {
    print_error(status.message());
    return kExitUsage;
  }
  Result<Model> model = open_model(args.model);
  if (!model) {
    print_error(model.error());
    return kExitBadInput;
  }
  for (const std::string& warning : model.warnings)
    std::cerr << "attnviz-cli: warning: " << warning << '\n';
  const Transformer* encoder = model->transformer.encoder();
  for (const Ablation& a : args.ablations) {
    if (a.part != Ablation::Part::Self && !encoder) {
      print_error("--ablate encoder: and cross: name an encoder–decoder's heads; " + model->name +
                  " is not one");
      return kExitUsage;
    }
    const TransformerConfig& c =
        a.part == Ablation::Part::Encoder ? encoder->config() : model->transformer.config();
    if (a.layer >= c.n_layers || a.head >= c.n_heads) {
      print_error(a.written + ": the model" +
                  (a.part == Ablation::Part::Encoder ? "'s encoder" : "") + " has " +
                  std::to_string(c.n_layers) + " layers of " + std::to_string(c.n_heads) +
                  " heads (" +
                  (a.from_zero ? "0.0 to " + std::to_string(c.n_layers - 1) + "." +
                                     std::to_string(c.n_heads - 1) + " counted from 0"
                               : "1.1 to " + std::to_string(c.n_layers) + "." +
                                     std::to_string(c.n_heads) + " counted from 1") +
                  ")");
      return kExitUsage;
    }
  }
  const bool encoder_decoder_command = args.command == "info" || args.command == "tokens" ||
                                       args.command == "attention" || args.command == "translate" ||
                                       args.command == "bench" || args.command == "heads" ||
                                       args.command == "grad";
  if (encoder && !encoder_decoder_command) {
    print_error(model->name + " is an encoder–decoder (" +
                model->transformer.config().architecture +
                "): model translate MODEL --text TEXT, or model attention MODEL --source TEXT "
                "[--text TRANSLATION]");
    return kExitBadInput;
  }
  if (!encoder && args.command == "translate") {
    print_error(model->name + " is not an encoder–decoder: it translates nothing");
    return kExitBadInput;
  }
  if (args.target && !model->tokenizer.reads_targets()) {
    print_error("--target tokenizes an encoder–decoder's target; " + model->name +
                " reads one kind of text");
    return kExitUsage;
  }
  if (args.command == "translate") return command_translate(*model, args);
  if (args.command == "info") return command_info(*model);
  if (args.command == "tokens") return command_tokens(*model, args);
  if (args.command == "attention") return command_attention(*model, args);
  if (args.command == "predict") return command_predict(*model, args);
  if (args.command == "generate") return command_generate(*model, args);
  if (args.command == "heads") return command_heads(*model, args);
  if (args.command == "fill") return command_fill(*model, args);
  if (args.command == "grad")
    return command_grad(*model, {*args.text, args.text_b, args.mask, args.source, args.output});
  return command_bench(*model, args);
}

}  // namespace attnviz::cli
