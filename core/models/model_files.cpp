#include "core/models/model_files.hpp"

#include "core/models/hf_bert.hpp"
#include "core/models/hf_encoder_decoder.hpp"
#include "core/models/hf_files.hpp"
#include "core/models/hf_gpt2.hpp"
#include "core/models/llama2c.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace attnviz {
namespace {

namespace fs = std::filesystem;

bool is_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

bool present(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

// llama2.c's tokenizer files: tokenizer.bin, tok512.bin, ...
bool is_llama2c_tokenizer(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name == "tokenizer.bin") return true;
  if (name.size() <= 7 || name.rfind("tok", 0) != 0 || path.extension() != ".bin") return false;
  return std::all_of(name.begin() + 3, name.end() - 4, [](char c) { return c >= '0' && c <= '9'; });
}

// The .bin files of a folder that are not tokenizers: the llama2.c checkpoints it may hold.
std::vector<fs::path> checkpoints_in(const fs::path& folder) {
  std::vector<fs::path> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error))
    if (entry.path().extension() == ".bin" && is_file(entry.path()) &&
        !is_llama2c_tokenizer(entry.path()) && entry.path().filename() != "pytorch_model.bin")
      found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

std::string parent_of(const fs::path& path) {
  return path.parent_path().empty() ? std::string(".") : path.parent_path().string();
}

// Which Hugging Face reader the folder's config.json asks for: BERT when its model_type is
// "bert" or an architecture's name starts with "Bert"; GPT-2 otherwise (whose reader says what
// is wrong with a config it cannot read).
ModelFormat hugging_face_format(const fs::path& folder) {
  Result<hf::Config> config = hf::Config::read(folder / "config.json");
  if (!config) return ModelFormat::HuggingFaceGpt2;
  const nlohmann::json& json = config->json();
  if (json.contains("model_type") && json["model_type"] == "bert")
    return ModelFormat::HuggingFaceBert;
  if (json.contains("model_type") &&
      (json["model_type"] == "marian" || json["model_type"] == "bart"))
    return ModelFormat::HuggingFaceEncoderDecoder;
  if (json.contains("architectures") && json["architectures"].is_array())
    for (const nlohmann::json& name : json["architectures"]) {
      if (!name.is_string()) continue;
      const std::string architecture = name.get<std::string>();
      if (architecture.rfind("Bert", 0) == 0) return ModelFormat::HuggingFaceBert;
      if (architecture.rfind("Marian", 0) == 0 || architecture.rfind("Bart", 0) == 0)
        return ModelFormat::HuggingFaceEncoderDecoder;
    }
  return ModelFormat::HuggingFaceGpt2;
}

// What the path holds, or an error naming it.
Result<ModelLocation> locate_path(const fs::path& path) {
  if (is_folder(path)) {
    if (present(path / "config.json"))
      return ModelLocation{hugging_face_format(path), path.string(), path.string()};
    // stories260K/stories260K.bin: a folder named after the checkpoint it holds.
    fs::path name = path.filename();
    if (name.empty()) name = path.parent_path().filename();  // "stories260K/"
    const fs::path checkpoint = path / (name.string() + ".bin");
    if (!name.empty() && is_file(checkpoint))
      return ModelLocation{ModelFormat::Llama2c, checkpoint.string(), path.string()};
    // A folder renamed or copied: its one checkpoint, whatever its name.
    const std::vector<fs::path> checkpoints = checkpoints_in(path);
    if (checkpoints.size() == 1)
      return ModelLocation{ModelFormat::Llama2c, checkpoints.front().string(), path.string()};
    if (checkpoints.size() > 1)
      return Status::error(path.string() + ": holds " + std::to_string(checkpoints.size()) +
                           " llama2.c checkpoints (" + checkpoints[0].filename().string() + ", " +
                           checkpoints[1].filename().string() +
                           (checkpoints.size() > 2 ? ", ..." : "") + "): name the one to open");
    return Status::error(path.string() +
                         ": not a model folder (no config.json of a Hugging Face GPT-2 or BERT "
                         "model, and no .bin llama2.c checkpoint)");
  }
  if (is_file(path)) {
    const std::string file_name = path.filename().string();
    if (path.extension() == ".safetensors" || file_name == "config.json")
      return ModelLocation{hugging_face_format(parent_of(path)), path.string(), parent_of(path)};
    if (file_name == "pytorch_model.bin")
      return Status::error(path.string() +
                           ": PyTorch's pickle format, which AttnViz does not read: download "
                           "model.safetensors (with config.json) instead");
    if (is_llama2c_tokenizer(path)) {
      const std::vector<fs::path> beside = checkpoints_in(fs::path(parent_of(path)));
      return Status::error(path.string() +
                           ": a llama2.c tokenizer, not a model: name the checkpoint beside it" +
                           (beside.size() == 1 ? " (" + beside.front().string() + ")" : ""));
    }
    if (path.extension() == ".bin")
      return ModelLocation{ModelFormat::Llama2c, path.string(), parent_of(path)};
    return Status::error(path.string() +
                         ": not a model file AttnViz reads (a Hugging Face GPT-2 or BERT folder or "
                         "its model.safetensors, or a llama2.c .bin checkpoint)");
  }
  if (present(path)) return Status::error(path.string() + ": not a file or a folder");
  return Status::error(path.string() + ": no such file or folder");
}

}  // namespace

std::vector<std::string> shipped_model_folders() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("ATTNVIZ_MODELS_DIR"); env && *env)
    candidates.emplace_back(env);
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error && executable.has_parent_path()) {
    candidates.push_back(executable.parent_path() / "assets" / "models");
    candidates.push_back(executable.parent_path().parent_path() / "assets" / "models");
  }
#ifdef __EMSCRIPTEN__
  candidates.emplace_back("/assets/models");  // the browser build's page (index.html makes it)
#endif
#ifdef ATTNVIZ_SHIPPED_MODELS_DIR
  candidates.emplace_back(ATTNVIZ_SHIPPED_MODELS_DIR);
#endif
  std::vector<std::string> folders;
  for (const fs::path& candidate : candidates) {
    if (!is_folder(candidate)) continue;
    const fs::path canonical = fs::weakly_canonical(candidate, error);
    const std::string text = error ? candidate.string() : canonical.string();
    if (std::find(folders.begin(), folders.end(), text) == folders.end()) folders.push_back(text);
  }
  return folders;
}

std::vector<std::string> shipped_model_names() {
  std::vector<std::string> names;
  for (const std::string& folder : shipped_model_folders()) {
    std::error_code error;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
      std::string name = it->path().filename().string();
      if (!is_folder(it->path()) || name.empty() || name.front() == '.') continue;
      // A folder whose files are still to come counts: its .download lists them (the browser
      // build fetches a shipped model's files the first time it is needed).
      std::error_code missing;
      if (!locate_model(it->path().string()).ok() && !fs::exists(it->path() / ".download", missing))
        continue;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  // The first ones in their order, then the rest sorted.
  const auto rank = [](const std::string& name) {
    const auto* first =
        std::find(std::begin(kFirstShippedModels), std::end(kFirstShippedModels), name);
    return static_cast<int>(first - std::begin(kFirstShippedModels));
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return std::pair(rank(a), a) < std::pair(rank(b), b);
  });
  return names;
}

std::string model_kind_words(const std::string& path_or_name) {
  const Result<ModelLocation> location = locate_model(path_or_name);
  if (!location) return "";
  switch (location->format) {
    case ModelFormat::HuggingFaceGpt2:
      return "decoder, GPT-2";
    case ModelFormat::HuggingFaceBert:
      return "encoder, BERT";
    case ModelFormat::HuggingFaceEncoderDecoder:
      return "encoder–decoder, Marian or BART";
    case ModelFormat::Llama2c:
      return "decoder, llama2.c";
  }
  return "";
}

Result<ModelLocation> locate_model(const std::string& path_or_name) {
  if (path_or_name.empty()) return Status::error("no model named (an empty path)");
  const fs::path path(path_or_name);
  const bool bare_name =
      path_or_name.find('/') == std::string::npos && path_or_name != "." && path_or_name != "..";
  if (present(path) || !bare_name) return locate_path(path);

  // A shipped model: assets/models/<name>/ (or a file <name> there).
  const std::vector<std::string> folders = shipped_model_folders();
  for (const std::string& folder : folders) {
    const fs::path candidate = fs::path(folder) / path_or_name;
    if (present(candidate)) return locate_path(candidate);
  }
  std::string known;
  std::string near;  // the same name but for case: stories260k -> stories260K
  if (!folders.empty()) {
    std::vector<std::string> names;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(folders.front(), error))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    const auto lower = [](std::string text) {
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return text;
    };
    for (const std::string& name : names) {
      known += (known.empty() ? "" : ", ") + name;
      if (lower(name) == lower(path_or_name)) near = name;
    }
  }
  if (!near.empty())
    return Status::error(
        path_or_name + ": no such file or folder, and no model of that name ships; did you mean " +
        near + "?");
  return Status::error(path_or_name + ": no such file or folder, and no model of that name ships " +
                       (folders.empty() ? std::string("(no assets/models folder found)")
                                        : "(the shipped models: " + known + ")"));
}

Result<Transformer> load_model(const std::string& path_or_name) {
  Result<ModelLocation> location = locate_model(path_or_name);
  if (!location) return location.status();
  switch (location->format) {
    case ModelFormat::HuggingFaceGpt2:
      return load_hf_gpt2(location->path);
    case ModelFormat::HuggingFaceBert:
      return load_hf_bert(location->path);
    case ModelFormat::HuggingFaceEncoderDecoder:
      return load_hf_encoder_decoder(location->path);
    case ModelFormat::Llama2c:
      break;
  }
  return load_llama2c(location->path);
}

}  // namespace attnviz
