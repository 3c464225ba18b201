// attnviz-cli model ...: real trained models from the command line (docs/cli.md, "model").
//   info       architecture, sizes, file format, tokenizer
//   tokens     how the model's tokenizer cuts a text: ids, tokens as read, byte ranges
//   attention  every layer's and head's weights (and every intermediate) as JSON
//   predict    the next token's most likely candidates
//   generate   a continuation, greedy or sampled with a seed
//   heads      each head's detected role and scores
//   bench      times the forward pass (median, p90, heap allocations)
//   fill       an encoder's guesses at each [MASK]
//   translate  an encoder–decoder's greedy translation
// --ablate L.H (repeatable, from 1 as the app counts; --ablate-from-0 from 0) knocks heads out.
#pragma once

#include <string>

namespace attnviz::cli {

// What `attnviz-cli model --help` prints: the model commands alone.
std::string model_help();

// argv[1] is "model". Returns the process's exit status (0, 1 bad input, 2 usage).
int run_model_command(int argc, char** argv);

}  // namespace attnviz::cli
