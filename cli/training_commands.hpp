// The training commands of attnviz-cli (core/training/):
//   model grad MODEL --text T -o G.safetensors   the gradient of the mean next-token loss over T
//                                                (an encoder's: the masked-language-model loss)
//   train --task TASK ... -o DIR                 trains a model and saves its folder
#pragma once

#include "core/models/model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnviz::cli {

struct GradRequest {
  std::string text;
  std::optional<std::string> text_b;  // an encoder's second sentence
  std::vector<int> mask;              // an encoder's positions to mask and predict
  std::optional<std::string> source;  // an encoder–decoder's source (text is then its target)
  std::string output;                 // "-": standard output
};

// The gradient of `model` (a GPT-2, a llama2.c checkpoint, a BERT with its MLM head, a Marian or
// a BART) on the request's text, written to its output under the model file's tensor names; prints
// the loss. Returns the process's exit status.
int command_grad(const Model& model, const GradRequest& request);

std::string train_help();
int run_train_command(int argc, char** argv);

}  // namespace attnviz::cli
