// attnviz-cli: the attention engine from the command line.
//   compute   every intermediate of a scenario as JSON
//   heatmap   the attention weights as a text heatmap
//   tokens    how a sentence is tokenized and embedded
//   init      a complete scenario file with every weight filled in, ready to edit
//   export    every matrix as CSV files (and the JSON of compute)
//   svg       the heatmap or the arrows as an SVG picture, for papers and slides
//   bench     times a full recompute of attention (median, p90, heap allocations)
//   model     real trained models: info, tokens, attention, predict, generate, fill, heads,
//             bench
#include "cli/bench.hpp"
#include "cli/cli_errors.hpp"
#include "cli/model_commands.hpp"
#include "cli/training_commands.hpp"
#include "core/base/float_text.hpp"
#include "core/base/version.hpp"
#include "core/document/file_io.hpp"
#include "core/document/scenario.hpp"
#include "core/figures/format.hpp"
#include "core/figures/svg.hpp"
#include "core/pipeline/export.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/training/attention_fit.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace attnviz;
using attnviz::cli::kExitBadInput;
using attnviz::cli::kExitOk;
using attnviz::cli::kExitUsage;
using attnviz::cli::print_error;

constexpr const char* kHelp = R"(attnviz-cli — compute attention the way AttnViz shows it

Usage:
  attnviz-cli compute  [SCENARIO] [-o OUT.json]
                       [--variant METHOD [--head H] [VARIANT OPTIONS]]
  attnviz-cli heatmap  [SCENARIO] [--head H]
  attnviz-cli tokens   [--max-tokens N] [--d-model D] (TEXT... | --text TEXT)
  attnviz-cli init     [SCENARIO] [-o OUT.json]
  attnviz-cli fit      [SCENARIO] --target PATTERN [--head H] [--steps N] [--lr RATE]
                       [-o OUT.json]
  attnviz-cli export   [SCENARIO] [--csv DIR] [--json OUT.json [--variant METHOD ...]]
  attnviz-cli svg      [SCENARIO] [--heatmap OUT.svg] [--arrows OUT.svg]
                       [--head H | --all-heads] [--threshold T]
                       [--colormap sequential|color-blind] [--theme light|dark] [--contrast]
  attnviz-cli bench    --tokens N --d-model D --heads H [--d-k K] [--d-v K] [--cross M]
                       [--compat dot|scaled_dot|general|additive|cosine] [--causal]
                       [--threads T] [--repeat R]
  attnviz-cli model    info|tokens|attention|translate|predict|generate|fill|heads|bench|grad
                       MODEL ...   (attnviz-cli model --help: each with its options)
  attnviz-cli train    --task induction|copy|reverse|sort|text FILE [--steps N] [--seed S]
                       [--from MODEL] -o DIR   (attnviz-cli train --help: every option)
  attnviz-cli --help | --version

SCENARIO is a file (SCENARIO.json, or - for standard input) or --builtin, the scenario built
into AttnViz, then any of:
  --text SENTENCE    the sentence (the target, whose words ask the queries) in place of the
                     scenario's
  --mode self|cross  self- or cross-attention; cross starts with the sentence as its source
                     when the scenario has none, and has no causal mask
  --source SENTENCE  the source sentence (keys and values) of cross-attention
--text, --mode or --source alone use the built-in scenario: heatmap --text "the animal was
tired" prints what the app shows after that sentence is typed into it.

Commands:
  compute   Computes every intermediate (X, and per head Q, K, V, scores, scaled and
            masked scores, weights, output; then concat and the final output) and writes
            them as JSON to OUT.json, or to standard output.
            --variant METHOD adds a "variant" object: a cheaper attention method on head H
            (--head, default 0), its intermediates, its output beside the full attention it
            stands for, the largest difference, and the pairs it computed. METHOD and its
            options (dot-product scores, but for shared_keys):
              flash      --tile QxK (queries x keys per tile; default 4x4)
              linformer  --k K summary keys (default 4) [--share-projection] [--seed S]
              reformer   --buckets B (1 or even) --chunk C --rounds R [--seed S]
              window     --width W            dilated  --width W --dilation D
              blocks     --block B            (these three: [--global I,J,...], from 0)
              decode     one token at a time with a KV cache (self-attention)
              shared_keys  the scenario's kv_groups against every head its own K and V,
                         and the weights and K/V cache per token of every number of groups
  heatmap   Prints the scenario's title (an untitled one's is its sentence), then the
            attention weights of one head (default: every head) as a text heatmap:
            queries down the side, keys across the top.
  tokens    Prints the tokens of TEXT, one per line under a line naming the columns: the
            token's number, the token, its kind, where its embedding comes from (lexicon
            or hashed), and the embedding's first values.
  init      Writes the scenario back with every weight filled in (those missing from
            the file are drawn from its seed): a complete file to edit by hand.
  fit       Gradient descent on head H's W_Q and W_K (--head, default 0) until its attention
            matches PATTERN: previous-word, next-word, same-word, first-word or pronoun-noun
            (docs/cli.md says what each asks). At most N steps (--steps, default 500) at
            learning rate RATE (--lr, default 1), stopping once no row's attention is more than
            0.1 from its target. Writes the scenario with the moved weights (every weight, as
            init does); the loss before and after goes to standard error. Dot-product scores
            with the softmax only (not hard attention).
  export    --csv DIR writes every matrix as a CSV file into the folder DIR (which must
            exist): X_target.csv, X_source.csv (cross mode), per head h (counted from 1,
            as the app and the SVG figures count heads: --head 0 is head1) head{h}_Q.csv,
            head{h}_K.csv, head{h}_V.csv, head{h}_scores.csv, head{h}_scaled_scores.csv,
            head{h}_masked_scores.csv, head{h}_weights.csv, head{h}_output.csv, then
            concat.csv and output.csv; tokens or dimensions (d1, d2, ...) label the first
            row and column; masked scores are written -inf. --json OUT.json writes what compute
            writes (with --variant, its variant object too).
  svg       --heatmap OUT.svg draws the weights of one head (--head, default 0) as a
            heatmap; --arrows OUT.svg draws a line from each query to each key with
            weight >= T (--threshold, default 0.02; at most the strongest 1000), for
            every head (default, or --all-heads) or one (--head). --contrast runs the
            heatmap's colours from 0 to the head's largest weight instead of to 1.
  bench     Times a full recompute of attention (every intermediate, all heads, W_O) on
            random inputs of the given shape, after warm-up, and prints one line:
            median_us=... p90_us=... allocations=... (heap allocations made by the timed
            recomputes; 0 is expected). --d-k defaults to d_model/heads, --d-v to d_k;
            --cross M gives the keys and values a source of M tokens; --repeat R times R
            recomputes (default: about a second's worth, at least 20); --threads T runs
            the engine on T threads, this one included (1-16, default 1).
  model     Real trained models: GPT-2, BERT and Marian folders as Hugging Face writes them,
            llama2.c checkpoints, or a shipped model's name (gpt2-web, bert-web,
            marian-web-es, gpt2-kjv-tiny and its -shuffled control, stories260K): their tokens,
            every layer's and head's attention as JSON, the next token, a masked word, a
            translation, the heads' roles, and heads knocked out with --ablate L.H (counted
            from 1, as the app shows them).
            attnviz-cli model --help prints the model commands alone, with their options.

Every OUT file may be - (standard output), /dev/stdout, /dev/stderr or /dev/fd/N (the
stream itself), a device or a named pipe (written into, never replaced), or a symbolic link
(the file it names is written; the link stays). A file is written whole or not at all: a
temporary file beside it is renamed over it (docs/formats.md). --csv names a folder: - is
refused there.

On bad input a one-line message goes to standard error, the exit status is 1, and
no output file is written or touched; a mistake in the command line itself (an unknown
option, a missing or out-of-range value, an empty --text of a scenario command, --source for
self-attention) exits
with status 2. Warnings go to standard
error (and, for compute, into the JSON). The scenario format is described in docs/formats.md.
)";

struct Arguments {
  std::string command;
  std::optional<std::string> scenario_path;
  bool builtin = false;
  std::optional<std::string> output_path;
  std::optional<int> head;
  std::optional<std::string> csv_folder, json_path, heatmap_path, arrows_path;
  bool all_heads = false;
  float threshold = 0.02f;
  view::ColormapId colormap = view::ColormapId::Sequential;
  bool dark = false;
  bool contrast = false;  // svg: the heatmap's colours up to the head's largest α
  int max_tokens = Limits::kDefaultMaxTokens;
  int d_model = 8;
  std::vector<std::string> words;
  // The scenario's sentences and mode, replaced (--text, --source, --mode).
  std::optional<std::string> text, source;
  std::optional<Mode> mode;
  // compute --variant: a cheaper attention method on one head (core/pipeline/variants_run.hpp).
  std::optional<VariantRequest> variant;
  std::vector<std::string> variant_options;  // its options given (--tile, --k, ...)
  bool variant_named = false;                // --variant was given
  // fit: gradient descent on one head's W_Q and W_K toward a target pattern.
  std::optional<TargetPattern> fit_target;
  int fit_steps = 500;
  float fit_learning_rate = FitSettings{}.learning_rate;
};

bool parse_int(const std::string& text, int low, int high, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= low && out <= high;
}

// "3x2" → 3 and 2; "4" → 4 and 4.
bool parse_tile(const std::string& text, int& queries, int& keys) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos) {
    keys = queries = 0;
    return parse_int(text, 1, Limits::kMaxTokens, queries) && (keys = queries) > 0;
  }
  return parse_int(text.substr(0, x), 1, Limits::kMaxTokens, queries) &&
         parse_int(text.substr(x + 1), 1, Limits::kMaxTokens, keys);
}

// Reads the arguments after the command into args; an error says which is wrong.
Status parse_arguments(int argc, char** argv, Arguments& args) {
  args.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* flag) -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      (void)flag;
      return std::string(argv[++i]);
    };
    if (arg == "-o" || arg == "--output") {
      auto v = value("-o");
      if (!v) return Status::error(arg + " needs a file name");
      args.output_path = *v;
    } else if (arg == "--builtin") {
      args.builtin = true;
    } else if (arg == "--head") {
      auto v = value("--head");
      int head = 0;
      if (!v || !parse_int(*v, 0, Limits::kMaxHeads - 1, head))
        return Status::error("--head needs a head number");
      args.head = head;
    } else if (arg == "--csv" || arg == "--json" || arg == "--heatmap" || arg == "--arrows") {
      auto v = value(arg.c_str());
      if (!v)
        return Status::error(arg + " needs " + (arg == "--csv" ? "a folder name" : "a file name"));
      if (arg == "--csv" && *v == "-")
        return Status::error(
            "--csv writes a folder of files, which standard output ('-') cannot hold: name a "
            "folder");
      (arg == "--csv"       ? args.csv_folder
       : arg == "--json"    ? args.json_path
       : arg == "--heatmap" ? args.heatmap_path
                            : args.arrows_path) = *v;
    } else if (arg == "--all-heads") {
      args.all_heads = true;
    } else if (arg == "--threshold") {
      auto v = value("--threshold");
      float t = 0;
      const char* end = v ? v->data() + v->size() : nullptr;
      if (!v || parse_number(v->data(), end, t).ptr != end || !(t >= 0.0f && t <= 1.0f))
        return Status::error("--threshold needs a number from 0 to 1");
      args.threshold = t;
    } else if (arg == "--colormap") {
      auto v = value("--colormap");
      if (v && *v == "sequential")
        args.colormap = view::ColormapId::Sequential;
      else if (v && (*v == "color-blind" || *v == "colour-blind"))
        args.colormap = view::ColormapId::ColorBlindSafe;
      else
        return Status::error("--colormap needs sequential or color-blind");
    } else if (arg == "--theme") {
      auto v = value("--theme");
      if (!v || (*v != "light" && *v != "dark"))
        return Status::error("--theme needs light or dark");
      args.dark = *v == "dark";
    } else if (arg == "--contrast") {
      args.contrast = true;
    } else if (arg == "--max-tokens") {
      auto v = value("--max-tokens");
      if (!v || !parse_int(*v, 1, Limits::kMaxTokens, args.max_tokens))
        return Status::error("--max-tokens needs a number from 1 to " +
                             std::to_string(Limits::kMaxTokens));
    } else if (arg == "--text" || arg == "--source") {
      auto v = value(arg.c_str());
      if (!v) return Status::error(arg + " needs a sentence");
      if (tokenize(*v, 1).total_tokens == 0)
        return Status::error(arg + " needs a sentence with at least one word, got " +
                             (v->empty() ? "an empty one" : "only spaces"));
      (arg == "--text" ? args.text : args.source) = *v;
    } else if (arg == "--mode") {
      auto v = value("--mode");
      const std::optional<Mode> mode = v ? parse_mode(*v) : std::nullopt;
      if (!mode) return Status::error("--mode needs self or cross");
      args.mode = mode;
    } else if (arg == "--variant") {
      auto v = value("--variant");
      const std::optional<VariantMethod> method = v ? parse_variant_method(*v) : std::nullopt;
      if (!method) return Status::error("--variant needs one of " + variant_method_names());
      if (!args.variant) args.variant = VariantRequest{};
      args.variant->method = *method;
      args.variant_named = true;
    } else if (arg == "--tile" || arg == "--k" || arg == "--buckets" || arg == "--chunk" ||
               arg == "--rounds" || arg == "--width" || arg == "--dilation" || arg == "--block" ||
               arg == "--global" || arg == "--seed" || arg == "--share-projection") {
      if (!args.variant) args.variant = VariantRequest{};
      args.variant_options.push_back(arg);
      VariantRequest& request = *args.variant;
      if (arg == "--share-projection") {
        request.share_projection = true;
        continue;
      }
      auto v = value(arg.c_str());
      if (!v) return Status::error(arg + " needs a value");
      int number = 0;
      const auto whole = [&](int low, int high) { return parse_int(*v, low, high, number); };
      // The methods check their settings' ranges and name them; here, only that they are numbers.
      if (arg == "--tile") {
        if (!parse_tile(*v, request.flash.query_block, request.flash.key_block))
          return Status::error("--tile needs QUERIESxKEYS (each 1 to " +
                               std::to_string(Limits::kMaxTokens) + "), or one number, got '" + *v +
                               "'");
      } else if (arg == "--global") {
        request.global_tokens.clear();
        for (std::size_t start = 0; start <= v->size();) {
          const std::size_t comma = std::min(v->find(',', start), v->size());
          if (!parse_int(v->substr(start, comma - start), 0, Limits::kMaxTokens - 1, number))
            return Status::error("--global needs token numbers from 0, separated by commas");
          request.global_tokens.push_back(number);
          start = comma + 1;
        }
      } else if (arg == "--seed") {
        if (!whole(0, std::numeric_limits<int>::max()))
          return Status::error("--seed needs a whole number");
        request.seed = static_cast<std::uint64_t>(number);
        request.reformer.seed = request.seed;
      } else if (!whole(-1000000, 1000000)) {
        return Status::error(arg + " needs a whole number");
      } else {
        (arg == "--k"          ? request.summaries
         : arg == "--buckets"  ? request.reformer.buckets
         : arg == "--chunk"    ? request.reformer.chunk
         : arg == "--rounds"   ? request.reformer.rounds
         : arg == "--width"    ? request.width
         : arg == "--dilation" ? request.dilation
                               : request.block) = number;
      }
    } else if (arg == "--target" && args.command == "fit") {
      auto v = value("--target");
      Result<TargetPattern> pattern =
          v ? parse_target_pattern(*v) : Result<TargetPattern>::failure("--target needs a pattern");
      if (!pattern) return Status::error("--target: " + pattern.error());
      args.fit_target = *pattern;
    } else if (arg == "--steps" && args.command == "fit") {
      auto v = value("--steps");
      if (!v || !parse_int(*v, 0, 1'000'000, args.fit_steps))
        return Status::error("--steps needs a whole number from 0 to 1000000");
    } else if (arg == "--lr" && args.command == "fit") {
      auto v = value("--lr");
      float rate = 0;
      const char* end = v ? v->data() + v->size() : nullptr;
      if (!v || parse_number(v->data(), end, rate).ptr != end || !(rate > 0.0f && rate <= 100.0f))
        return Status::error("--lr needs a learning rate above 0 and at most 100");
      args.fit_learning_rate = rate;
    } else if (arg == "--d-model") {
      auto v = value("--d-model");
      if (!v || !parse_int(*v, 1, Limits::kMaxDModel, args.d_model))
        return Status::error("--d-model needs a number from 1 to " +
                             std::to_string(Limits::kMaxDModel));
    } else if (arg.size() > 1 && arg[0] == '-' && args.command != "tokens") {
      return Status::error("unknown option '" + arg + "' (see --help)");
    } else if (args.command == "tokens") {
      args.words.push_back(arg);
    } else if (!args.scenario_path) {
      args.scenario_path = arg;
    } else {
      return Status::error("unexpected argument '" + arg + "' (see --help)");
    }
  }
  if (args.command == "tokens") {
    if (args.source || args.mode)
      return Status::error("tokens takes the text alone: --source and --mode are for a scenario");
    if (args.text) args.words.push_back(*args.text);
    return args.words.empty() ? Status::error("tokens needs some text") : Status::success();
  }
  if (args.builtin && args.scenario_path)
    return Status::error("give a scenario file or --builtin, not both");
  if (!args.scenario_path && (args.text || args.source || args.mode))
    args.builtin = true;  // a sentence of one's own in the built-in scenario, as the app starts
  if (!args.builtin && !args.scenario_path)
    return Status::error(args.command + " needs a scenario file, --builtin or --text SENTENCE");
  if (args.source && args.mode == Mode::Self)
    return Status::error(
        "--source is the source sentence of cross-attention: not with --mode self");
  if (args.variant && args.command != "compute" && !(args.command == "export" && args.json_path))
    return Status::error("--variant and its options go with compute, or export --json");
  if (!args.variant_named && !args.variant_options.empty())
    return Status::error(args.variant_options.front() +
                         " is a setting of a variant: give --variant NAME too");
  if (args.command == "fit" && !args.fit_target)
    return Status::error("fit needs --target: " + target_pattern_names());
  if (args.command == "export" && !args.csv_folder && !args.json_path)
    return Status::error("export needs --csv DIR or --json FILE");
  if (args.command == "svg") {
    if (!args.heatmap_path && !args.arrows_path)
      return Status::error("svg needs --heatmap FILE or --arrows FILE");
    if (args.all_heads && args.head) return Status::error("give --head or --all-heads, not both");
    if (args.all_heads && !args.arrows_path)
      return Status::error("--all-heads draws arrows: give --arrows FILE");
  }
  return Status::success();
}

// A scenario loaded and computed.
struct Computed {
  Scenario scenario;
  Pipeline pipeline;
  std::vector<std::string> load_warnings;
};

// The sentences and mode of the command line in place of the scenario's, as the app's Input panel
// changes them: the sentence, then the mode (cross starts with that sentence as its source when
// there is none, and turns the causal mask off: a warning), then the source. The error is a usage
// error: --source for a scenario in self mode.
Status apply_sentences(const Arguments& args, Scenario& scenario,
                       std::vector<std::string>& warnings) {
  if (args.text) scenario.target = *args.text;
  OneLayerSpec* one = scenario.edit_one_layer();
  if ((args.mode || args.source) && !one)
    return Status::error(
        "--mode and --source are the one-layer scenario's, and this scenario names a model");
  if (args.mode && set_mode(*one, *args.mode, scenario.target))
    warnings.push_back("--mode cross: " + std::string(kCausalOffInCross));
  if (args.source) {
    if (one->mode != Mode::Cross)
      return Status::error(
          "--source is the source sentence of cross-attention, and the scenario is "
          "self-attention: add --mode cross");
    one->source = *args.source;
  }
  return Status::success();
}

// Loads the scenario, puts in the sentences of the command line and computes it; prints
// warnings. Returns kExitOk, or the exit status after printing the error.
int load_and_compute(const Arguments& args, Computed& computed) {
  Result<Scenario> load = args.builtin ? parse_scenario(builtin_scenario_json())
                                       : load_scenario_file(*args.scenario_path);
  if (!load.ok()) {
    print_error(load.error());
    return kExitBadInput;
  }
  computed.scenario = std::move(*load);
  computed.load_warnings = std::move(load.warnings);
  if (Status status = apply_sentences(args, computed.scenario, computed.load_warnings); !status) {
    print_error(status.message());
    return kExitUsage;
  }
  if (Status status = computed.pipeline.run(computed.scenario); !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  for (const std::vector<std::string>* list :
       {&std::as_const(computed.load_warnings), &computed.pipeline.warnings()})
    for (const std::string& warning : *list)
      std::cerr << "attnviz-cli: warning: " << warning << '\n';
  return kExitOk;
}

// Writes text to the output path (standard output by default), atomically.
int write_output(const Arguments& args, const std::string& text) {
  if (Status status = write_file(args.output_path.value_or("-"), text); !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  return kExitOk;
}

// The result document, with the "variant" object when --variant asks for one; an error printed
// (and "" returned) when the variant cannot run.
std::optional<std::string> result_document(const Arguments& args, const Computed& c) {
  std::string json = result_to_json(c.scenario, c.pipeline, c.load_warnings);
  if (!args.variant) return json;
  VariantRequest request = *args.variant;
  request.head = args.head.value_or(0);
  Result<std::string> variant = variant_to_json(c.scenario, c.pipeline, request);
  if (!variant) {
    print_error("--variant " + std::string(to_string(request.method)) + ": " + variant.error());
    return std::nullopt;
  }
  json.insert(json.rfind('}'), "  ,\"variant\": " + *variant + "\n");
  return json;
}

int command_compute(const Arguments& args) {
  Computed c;
  if (const int status = load_and_compute(args, c); status != kExitOk) return status;
  const std::optional<std::string> json = result_document(args, c);
  return json ? write_output(args, *json) : kExitBadInput;
}

int command_heatmap(const Arguments& args) {
  Computed c;
  if (const int status = load_and_compute(args, c); status != kExitOk) return status;
  const int heads = c.scenario.one_layer().config.heads;
  if (args.head && *args.head >= heads) {
    print_error("--head " + std::to_string(*args.head) + ": the scenario has " +
                std::to_string(heads) + " heads (0 to " + std::to_string(heads - 1) + ")");
    return kExitBadInput;
  }
  std::cout << scenario_title(c.scenario) << "\n\n";  // an untitled scenario's: its sentence
  for (int head = 0; head < heads; ++head)
    if (!args.head || *args.head == head) std::cout << weights_to_text(c.pipeline, head) << '\n';
  return kExitOk;
}

int command_tokens(const Arguments& args) {
  std::string text;
  for (const std::string& word : args.words) text += (text.empty() ? "" : " ") + word;
  const Tokenization tokenization = tokenize(text, static_cast<std::size_t>(args.max_tokens));
  Matrix X;  // (n_tokens, d_model)
  std::vector<EmbeddingSource> sources;
  embed_tokens(tokenization.tokens, args.d_model, {}, Positional::None, X, &sources);
  static constexpr const char* kKinds[] = {"word", "punctuation", "symbol", "ideograph"};
  constexpr Eigen::Index kValuesShown = 8;
  // The columns, named: "from" is where the embedding comes from (lexicon or hashed).
  const std::string values_heading = X.cols() > kValuesShown
                                         ? "embedding (first " + std::to_string(kValuesShown) +
                                               " of d_model " + std::to_string(X.cols()) + ")"
                                         : "embedding (d_model " + std::to_string(X.cols()) + ")";
  std::printf("%3s  %-16s %-12s %-8s %s\n", "#", "token", "kind", "from", values_heading.c_str());
  for (std::size_t i = 0; i < tokenization.tokens.size(); ++i) {
    const Token& token = tokenization.tokens[i];
    // Padded by characters, not bytes: a Hebrew, Arabic or accented word lines up too.
    const int pad = std::max(0, 16 - static_cast<int>(utf8_length(token.text)));
    std::printf("%3zu  %s%*s %-12s %-8s [", i, token.text.c_str(), pad, "",
                kKinds[static_cast<int>(token.kind)], std::string(to_string(sources[i])).c_str());
    for (Eigen::Index d = 0; d < std::min(X.cols(), kValuesShown); ++d) {
      const double value = X(static_cast<Eigen::Index>(i), d);
      std::printf("%s%.2f", d ? " " : "", std::abs(value) < 0.005 ? 0.0 : value);  // never "-0.00"
    }
    std::printf("%s]\n", X.cols() > kValuesShown ? " ..." : "");
  }
  std::printf("%zu tokens\n", tokenization.tokens.size());
  if (tokenization.truncated())
    std::cerr << "attnviz-cli: warning: the text has " << tokenization.total_tokens
              << " tokens; only the first " << tokenization.tokens.size() << " are kept\n";
  if (tokenization.invalid_utf8_bytes)
    std::cerr << "attnviz-cli: warning: " << tokenization.invalid_utf8_bytes
              << " invalid UTF-8 byte(s) shown as U+FFFD\n";
  return kExitOk;
}

// Gradient descent on head --head's W_Q and W_K toward the --target pattern; the scenario with
// the moved weights is the output, what happened goes to standard error.
int command_fit(const Arguments& args) {
  Computed c;
  if (const int status = load_and_compute(args, c); status != kExitOk) return status;
  OneLayerSpec* one = c.scenario.edit_one_layer();
  if (!one) {
    print_error("fit moves the one-layer scenario's W_Q and W_K, and this scenario names a model");
    return kExitBadInput;
  }
  const int head = args.head.value_or(0);
  if (head >= one->config.heads) {
    print_error("--head " + std::to_string(head) + ": the scenario has " +
                std::to_string(one->config.heads) + " heads (0 to " +
                std::to_string(one->config.heads - 1) + ")");
    return kExitBadInput;
  }
  if (Status status = check_fit_config(one->config); !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  FitInput input;
  input.X_query = &c.pipeline.X_target();
  input.X_key = &c.pipeline.X_keys();
  input.allowed = {c.pipeline.mask(), one->config.causal && !c.pipeline.cross()};
  input.config = one->config;
  const Matrix target = target_attention(*args.fit_target, c.pipeline.target(), c.pipeline.keys(),
                                         c.pipeline.cross(), input.allowed);  // (n_query, n_key)
  input.target = &target;
  // Under grouped-query attention the head's keys are its group's.
  const int key_head = kv_source_head(one->config, head);
  Matrix W_Q = one->parameters.heads[static_cast<std::size_t>(head)].W_Q;
  Matrix W_K = one->parameters.heads[static_cast<std::size_t>(key_head)].W_K;
  FitGradient before, after;
  if (Status status = fit_gradient(input, W_Q, W_K, before); !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  if (before.target_rows == 0) {
    print_error("--target " + std::string(to_string(*args.fit_target)) +
                ": no word of this sentence has a target (" +
                std::string(describe(*args.fit_target)) + ")");
    return kExitBadInput;
  }
  FitSettings settings;
  settings.learning_rate = args.fit_learning_rate;
  int steps = 0;
  if (Status status = gradient_descent(input, settings, args.fit_steps, W_Q, W_K, after, &steps);
      !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  one->parameters.heads[static_cast<std::size_t>(head)].W_Q = W_Q;
  one->parameters.heads[static_cast<std::size_t>(key_head)].W_K = W_K;
  std::fprintf(stderr,
               "attnviz-cli: fit head %d (%s, %d of %d rows): loss %.4f -> %.4f in %d steps; %s "
               "(at most %.2f of a row's attention misplaced)\n",
               head, std::string(describe(*args.fit_target)).c_str(), after.target_rows,
               static_cast<int>(target.rows()), before.loss, after.loss, steps,
               after.mismatch <= kFitMatched ? "the heatmap matches" : "not matched yet",
               after.mismatch);
  return write_output(args, scenario_to_json(c.scenario));
}

int command_init(const Arguments& args) {
  Computed c;
  if (const int status = load_and_compute(args, c); status != kExitOk) return status;
  return write_output(args, scenario_to_json(c.scenario));
}

int command_export(const Arguments& args) {
  Computed c;
  if (const int status = load_and_compute(args, c); status != kExitOk) return status;
  // Everything is computed first; the CSV files go first, as their folder may be missing.
  std::string json;
  if (args.json_path) {
    const std::optional<std::string> document = result_document(args, c);
    if (!document) return kExitBadInput;
    json = *document;
  }
  if (args.csv_folder)
    if (Status status = export_matrices_csv(*args.csv_folder, c.scenario, c.pipeline); !status) {
      print_error(status.message());
      return kExitBadInput;
    }
  if (args.json_path)
    if (Status status = write_file(*args.json_path, json); !status) {
      print_error(status.message());
      return kExitBadInput;
    }
  return kExitOk;
}

int command_svg(const Arguments& args) {
  Computed c;
  if (const int status = load_and_compute(args, c); status != kExitOk) return status;
  const int heads = c.scenario.one_layer().config.heads;
  if (args.head && *args.head >= heads) {
    print_error("--head " + std::to_string(*args.head) + ": the scenario has " +
                std::to_string(heads) + " heads (0 to " + std::to_string(heads - 1) + ")");
    return kExitBadInput;
  }
  const AttentionResult& r = c.pipeline.result();
  const auto texts = [](const Tokenization& tokenization) {
    std::vector<std::string> out;
    for (const Token& token : tokenization.tokens) out.push_back(token.text);
    return out;
  };
  const std::vector<std::string> queries = texts(c.pipeline.target()),
                                 keys = texts(c.pipeline.keys());
  const std::string suffix = " \xe2\x80\x94 " + scenario_title(c.scenario);
  view::SvgOptions options;
  options.dark = args.dark;
  // Everything is drawn before anything is written.
  std::string heatmap, arrows;
  if (args.heatmap_path) {
    const int head = args.head.value_or(0);
    options.title = "\xce\xb1, head " + std::to_string(view::shown_number(head)) + " of " +
                    std::to_string(heads) +
                    suffix;  // the figure counts as the app does: --head 0 is head 1
    const Matrix& weights = r.heads[static_cast<std::size_t>(head)].weights;
    if (args.contrast) options.scale_top = view::contrast_scale_top(weights);
    heatmap = view::heatmap_svg(r.heads[static_cast<std::size_t>(head)].weights, queries, keys,
                                args.colormap, options);
  }
  if (args.arrows_path) {
    const int head = args.head.value_or(view::kSvgAllHeads);
    options.title =
        (head == view::kSvgAllHeads ? std::string("every head")
                                    : "head " + std::to_string(view::shown_number(head))) +
        suffix;
    options.key_heading = c.pipeline.cross() ? "keys (source)" : "keys (same sentence)";
    arrows = view::arrows_svg(r, queries, keys, head, args.threshold, options);
  }
  for (const auto& [path, text] :
       {std::pair{&args.heatmap_path, &heatmap}, std::pair{&args.arrows_path, &arrows}})
    if (*path)
      if (Status status = write_file(**path, *text); !status) {
        print_error(status.message());
        return kExitBadInput;
      }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kHelp;
    return kExitUsage;
  }
  const std::string first = argv[1];
  // Help wherever it is asked for: "attnviz-cli bench --help" too.
  for (int i = 1; i < argc; ++i)
    if (const std::string arg = argv[i];
        arg == "--help" || arg == "-h" || (i == 1 && arg == "help")) {
      // "attnviz-cli model --help" (or "model predict --help"): the model commands alone.
      std::cout << (first == "model" && i > 1   ? attnviz::cli::model_help()
                    : first == "train" && i > 1 ? attnviz::cli::train_help()
                                                : std::string(kHelp));
      return kExitOk;
    }
  if (first == "--version") {
    std::cout << "attnviz-cli " << attnviz::kVersion << '\n';
    return kExitOk;
  }
  if (first == "model") return attnviz::cli::run_model_command(argc, argv);
  if (first == "train") return attnviz::cli::run_train_command(argc, argv);
  if (first == "bench") {
    attnviz::cli::BenchOptions options;
    if (attnviz::Status status = attnviz::cli::parse_bench_options(argc, argv, options); !status) {
      print_error(status.message());
      return kExitUsage;
    }
    const attnviz::Result<attnviz::cli::BenchResult> result = attnviz::cli::run_bench(options);
    if (!result) {
      print_error(result.error());
      return kExitBadInput;
    }
    std::printf("median_us=%.2f p90_us=%.2f allocations=%ld\n", result->median_us, result->p90_us,
                result->allocations);
    return kExitOk;
  }
  Arguments args;
  if (first != "compute" && first != "heatmap" && first != "tokens" && first != "init" &&
      first != "export" && first != "svg" && first != "fit") {
    print_error("unknown command '" + first + "' (see --help)");
    return kExitUsage;
  }
  if (attnviz::Status status = parse_arguments(argc, argv, args); !status) {
    print_error(status.message());
    return kExitUsage;
  }
  if (args.command == "compute") return command_compute(args);
  if (args.command == "heatmap") return command_heatmap(args);
  if (args.command == "tokens") return command_tokens(args);
  if (args.command == "export") return command_export(args);
  if (args.command == "svg") return command_svg(args);
  if (args.command == "fit") return command_fit(args);
  return command_init(args);
}
