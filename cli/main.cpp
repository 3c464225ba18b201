// attnviz-cli: the attention engine from the command line.
//   compute   every intermediate of a scenario as JSON
//   heatmap   the attention weights as a text heatmap
//   tokens    how a sentence is tokenized and embedded
//   init      a complete scenario file with every weight filled in, ready to edit
//   export    every matrix as CSV files (and the JSON of compute)
//   svg       the heatmap or the arrows as an SVG picture, for papers and slides
//   bench     times a full recompute of attention (median, p90, heap allocations)
#include "cli/bench.hpp"
#include "core/base/version.hpp"
#include "core/document/file_io.hpp"
#include "core/document/scenario.hpp"
#include "core/figures/format.hpp"
#include "core/figures/svg.hpp"
#include "core/pipeline/export.hpp"
#include "core/pipeline/pipeline.hpp"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace attnviz;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

constexpr const char* kHelp = R"(attnviz-cli — compute attention the way AttnViz shows it

Usage:
  attnviz-cli compute  (SCENARIO.json | --builtin) [-o OUT.json]
  attnviz-cli heatmap  (SCENARIO.json | --builtin) [--head H]
  attnviz-cli tokens   [--max-tokens N] [--d-model D] TEXT...
  attnviz-cli init     (SCENARIO.json | --builtin) [-o OUT.json]
  attnviz-cli export   (SCENARIO.json | --builtin) [--csv DIR] [--json OUT.json]
  attnviz-cli svg      (SCENARIO.json | --builtin) [--heatmap OUT.svg] [--arrows OUT.svg]
                       [--head H | --all-heads] [--threshold T]
                       [--colormap sequential|color-blind] [--theme light|dark] [--contrast]
  attnviz-cli bench    --tokens N --d-model D --heads H [--d-k K] [--d-v K] [--cross M]
                       [--compat dot|scaled_dot|general|additive|cosine] [--causal]
                       [--threads T] [--repeat R]
  attnviz-cli --help | --version

Commands:
  compute   Computes every intermediate (X, and per head Q, K, V, scores, scaled and
            masked scores, weights, output; then concat and the final output) and writes
            them as JSON to OUT.json, or to standard output.
  heatmap   Prints the attention weights of one head (default: every head) as a text
            heatmap: queries down the side, keys across the top.
  tokens    Prints the tokens of TEXT, one per line, with their kind and where their
            embedding comes from (lexicon or hashed), and the first embedding values.
  init      Writes the scenario back with every weight filled in (those missing from
            the file are drawn from its seed): a complete file to edit by hand.
  export    --csv DIR writes every matrix as a CSV file into the folder DIR (which must
            exist): X_target.csv, X_source.csv (cross mode), per head h head{h}_Q.csv,
            head{h}_K.csv, head{h}_V.csv, head{h}_scores.csv, head{h}_scaled_scores.csv,
            head{h}_masked_scores.csv, head{h}_weights.csv, head{h}_output.csv, then
            concat.csv and output.csv; tokens or dimensions label the first row and
            column; masked scores are written -inf. --json OUT.json writes what compute
            writes.
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

A SCENARIO of "-" reads standard input; --builtin uses the scenario built into AttnViz.
On bad input a one-line message goes to standard error, the exit status is 1, and
no output file is written or touched; a mistake in the command line itself (an unknown
option, a missing or out-of-range value) exits with status 2. Warnings go to standard
error (and, for compute, into the JSON). The scenario format is described in docs/formats.md.
)";

void print_error(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "attnviz-cli: error: " << line << '\n';
}

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
};

bool parse_int(const std::string& text, int low, int high, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= low && out <= high;
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
      if (!v || std::from_chars(v->data(), end, t).ptr != end || !(t >= 0.0f && t <= 1.0f))
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
  if (args.command == "tokens")
    return args.words.empty() ? Status::error("tokens needs some text") : Status::ok();
  if (args.builtin && args.scenario_path)
    return Status::error("give a scenario file or --builtin, not both");
  if (!args.builtin && !args.scenario_path)
    return Status::error(args.command + " needs a scenario file (or --builtin)");
  if (args.command == "export" && !args.csv_folder && !args.json_path)
    return Status::error("export needs --csv DIR or --json FILE");
  if (args.command == "svg") {
    if (!args.heatmap_path && !args.arrows_path)
      return Status::error("svg needs --heatmap FILE or --arrows FILE");
    if (args.all_heads && args.head) return Status::error("give --head or --all-heads, not both");
    if (args.all_heads && !args.arrows_path)
      return Status::error("--all-heads draws arrows: give --arrows FILE");
  }
  return Status::ok();
}

// A scenario loaded and computed.
struct Computed {
  Scenario scenario;
  Pipeline pipeline;
  std::vector<std::string> load_warnings;
};

// Loads the scenario and computes it; prints warnings. Returns false after printing the error.
bool load_and_compute(const Arguments& args, Computed& computed) {
  Result<Scenario> load = args.builtin ? parse_scenario(builtin_scenario_json())
                                       : load_scenario_file(*args.scenario_path);
  if (!load.ok()) {
    print_error(load.error());
    return false;
  }
  computed.scenario = std::move(*load);
  computed.load_warnings = std::move(load.warnings);
  if (Status status = computed.pipeline.run(computed.scenario); !status) {
    print_error(status.message());
    return false;
  }
  for (const std::vector<std::string>* list :
       {&std::as_const(computed.load_warnings), &computed.pipeline.warnings()})
    for (const std::string& warning : *list)
      std::cerr << "attnviz-cli: warning: " << warning << '\n';
  return true;
}

// Writes text to the output path (standard output by default), atomically.
int write_output(const Arguments& args, const std::string& text) {
  if (Status status = write_file_atomic(args.output_path.value_or("-"), text); !status) {
    print_error(status.message());
    return kExitBadInput;
  }
  return kExitOk;
}

int command_compute(const Arguments& args) {
  Computed c;
  if (!load_and_compute(args, c)) return kExitBadInput;
  return write_output(args, result_to_json(c.scenario, c.pipeline, c.load_warnings));
}

int command_heatmap(const Arguments& args) {
  Computed c;
  if (!load_and_compute(args, c)) return kExitBadInput;
  const int heads = c.scenario.config.heads;
  if (args.head && *args.head >= heads) {
    print_error("--head " + std::to_string(*args.head) + ": the scenario has " +
                std::to_string(heads) + " heads (0 to " + std::to_string(heads - 1) + ")");
    return kExitBadInput;
  }
  if (!c.scenario.title.empty()) std::cout << c.scenario.title << "\n\n";
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
  for (std::size_t i = 0; i < tokenization.tokens.size(); ++i) {
    const Token& token = tokenization.tokens[i];
    // Padded by characters, not bytes: a Hebrew, Arabic or accented word lines up too.
    const int pad = std::max(0, 16 - static_cast<int>(utf8_length(token.text)));
    std::printf("%3zu  %s%*s %-12s %-8s [", i, token.text.c_str(), pad, "",
                kKinds[static_cast<int>(token.kind)], std::string(to_string(sources[i])).c_str());
    for (Eigen::Index d = 0; d < std::min<Eigen::Index>(X.cols(), 8); ++d) {
      const double value = X(static_cast<Eigen::Index>(i), d);
      std::printf("%s%.2f", d ? " " : "", std::abs(value) < 0.005 ? 0.0 : value);  // never "-0.00"
    }
    std::printf("%s]\n", X.cols() > 8 ? " ..." : "");
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

int command_init(const Arguments& args) {
  Computed c;
  if (!load_and_compute(args, c)) return kExitBadInput;
  return write_output(args, scenario_to_json(c.scenario));
}

int command_export(const Arguments& args) {
  Computed c;
  if (!load_and_compute(args, c)) return kExitBadInput;
  // Everything is computed first; the CSV files go first, as their folder may be missing.
  const std::string json =
      args.json_path ? result_to_json(c.scenario, c.pipeline, c.load_warnings) : std::string();
  if (args.csv_folder)
    if (Status status = export_matrices_csv(*args.csv_folder, c.scenario, c.pipeline); !status) {
      print_error(status.message());
      return kExitBadInput;
    }
  if (args.json_path)
    if (Status status = write_file_atomic(*args.json_path, json); !status) {
      print_error(status.message());
      return kExitBadInput;
    }
  return kExitOk;
}

int command_svg(const Arguments& args) {
  Computed c;
  if (!load_and_compute(args, c)) return kExitBadInput;
  const int heads = c.scenario.config.heads;
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
  const std::string suffix = c.scenario.title.empty() ? "" : " \xe2\x80\x94 " + c.scenario.title;
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
      if (Status status = write_file_atomic(**path, *text); !status) {
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
      std::cout << kHelp;
      return kExitOk;
    }
  if (first == "--version") {
    std::cout << "attnviz-cli " << attnviz::kVersion << '\n';
    return kExitOk;
  }
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
      first != "export" && first != "svg") {
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
  return command_init(args);
}
