// The training commands of attnviz-cli (core/training/):
//   model grad MODEL --text T -o G.safetensors   the gradient of the mean next-token loss over T
//   train --task TASK ... -o DIR                 trains a model and saves its folder
#pragma once

#include "core/models/model.hpp"

#include <string>

namespace attnviz::cli {

// The gradient of `model` (a GPT-2) on `text`, written to `output` ("-": standard output) under
// the model file's tensor names; prints the loss. Returns the process's exit status.
int command_grad(const Model& model, const std::string& text, const std::string& output);

std::string train_help();
int run_train_command(int argc, char** argv);

}  // namespace attnviz::cli
