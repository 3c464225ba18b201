// Which reader a model needs, from what the user named: a folder or file path, or the name of a
// model that ships with AttnViz (assets/models/<name>/).
//   a folder with config.json                  Hugging Face BERT (hf_bert.hpp) when its
//                                              model_type is "bert" (or an architecture is
//                                              Bert…); Marian or BART (hf_encoder_decoder.hpp)
//                                              when it is "marian" or "bart" (Marian…, Bart…);
//                                              else Hugging Face GPT-2 (hf_gpt2.hpp)
//   a model.safetensors or config.json file    the same, the folder it is in
//   a folder <name>/ holding <name>.bin        llama2.c (stories260K/stories260K.bin)
//   a .bin file                                llama2.c checkpoint (llama2c.hpp)
//   a bare name (no '/') that is no path       the shipped model of that name
// An existing path wins over a shipped model's name.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"

#include <string>
#include <vector>

namespace attnviz {

enum class ModelFormat { HuggingFaceGpt2, HuggingFaceBert, HuggingFaceEncoderDecoder, Llama2c };

struct ModelLocation {
  ModelFormat format = ModelFormat::HuggingFaceGpt2;
  std::string path;    // what the reader opens: the GPT-2 folder or file, the llama2.c .bin
  std::string folder;  // where the model's other files (its tokenizer) lie
};

// The folders a shipped model's name is looked up in, in order: $ATTNVIZ_MODELS_DIR when set;
// assets/models beside the executable, or one folder up from it (a build folder inside the
// source tree); the source tree's assets/models the binary was built from. Only the ones that
// exist.
std::vector<std::string> shipped_model_folders();
// The shipped models' names (the sub-folders of those folders that hold a model, or whose
// `.download` lists the files still to come: the browser build's), each once: what the app's
// Models menu lists. The models that read a class's English as words come first (gpt2-web, then
// bert-web, then the translation model marian-web-es: kFirstShippedModels), the others after
// them, sorted.
inline constexpr const char* kFirstShippedModels[] = {"gpt2-web", "bert-web", "marian-web-es"};
std::vector<std::string> shipped_model_names();
// What kind of model a shipped name (or path) is, in a few words for a menu: "decoder, GPT-2",
// "encoder, BERT", "decoder, llama2.c"; empty when it cannot be located.
std::string model_kind_words(const std::string& path_or_name);

// Where the model `path_or_name` is and which reader it needs, or an error saying why not.
Result<ModelLocation> locate_model(const std::string& path_or_name);

// The model, loaded by the reader its location needs.
Result<Transformer> load_model(const std::string& path_or_name);

}  // namespace attnviz
