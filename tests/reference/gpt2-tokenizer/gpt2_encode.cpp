// The C++ side of the comparison with GPT-2's reference encoder (compare.py): reads texts, one
// JSON string a line, and writes each text's ids as a JSON array a line, encoded by AttnViz's
// Gpt2Tokenizer from the tokenizer files in FOLDER. On the way it checks, for every text, what
// the reference cannot tell: decoding gives the text back, and tokenize() agrees with encode()
// (the same ids, the tokens' bytes joined are the text, their byte ranges tile it).
//   attnviz_gpt2_encode FOLDER TEXTS.jsonl > IDS.jsonl
//   attnviz_gpt2_encode --shown FOLDER TEXTS.jsonl   each text's tokens as shown, not its ids
// First line of output: "# tokens=N merges=M end_of_text=E". Exit status 1 on any fault.
#include "core/models/gpt2_tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

int fail(int line, const std::string& text, const std::string& what) {
  std::cerr << "attnviz_gpt2_encode: line " << line << " "
            << nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
            << ": " << what << "\n";
  return 1;
}

int run(int argc, char** argv) {
  const bool shown = argc == 4 && std::string(argv[1]) == "--shown";
  if (argc != 3 && !shown) {
    std::cerr << "usage: attnviz_gpt2_encode [--shown] FOLDER TEXTS.jsonl\n";
    return 2;
  }
  if (shown) ++argv;
  attnviz::Result<attnviz::Gpt2Tokenizer> tokenizer = attnviz::Gpt2Tokenizer::load_folder(argv[1]);
  if (!tokenizer) {
    std::cerr << "attnviz_gpt2_encode: " << tokenizer.error() << "\n";
    return 1;
  }
  std::ifstream input(argv[2], std::ios::binary);
  if (!input) {
    std::cerr << "attnviz_gpt2_encode: cannot open " << argv[2] << "\n";
    return 1;
  }
  std::cout << "# tokens=" << tokenizer->size() << " merges=" << tokenizer->merge_count()
            << " end_of_text=" << tokenizer->end_of_text() << "\n";
  std::string line;
  int number = 0;
  while (std::getline(input, line)) {
    ++number;
    const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_string()) return fail(number, line, "not a JSON string");
    const std::string text = parsed.get<std::string>();
    const std::vector<int> ids = tokenizer->encode(text);
    attnviz::Result<std::string> decoded = tokenizer->decode(ids);
    if (!decoded) return fail(number, text, decoded.error());
    if (*decoded != text)
      return fail(number, text, "decodes to " + nlohmann::json(*decoded).dump());
    attnviz::Result<std::vector<attnviz::ModelToken>> tokens = tokenizer->tokenize(text);
    if (!tokens) return fail(number, text, tokens.error());
    if (tokens->size() != ids.size()) return fail(number, text, "tokenize() has another count");
    std::string joined;
    int at = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const attnviz::ModelToken& token = (*tokens)[i];
      if (token.id != ids[i]) return fail(number, text, "tokenize() has another id");
      if (token.byte_begin != at || token.byte_end < token.byte_begin)
        return fail(number, text, "the byte ranges do not tile the text");
      if (text.compare(static_cast<std::size_t>(token.byte_begin),
                       static_cast<std::size_t>(token.byte_end - token.byte_begin),
                       token.bytes) != 0)
        return fail(number, text, "a token's range is not its bytes");
      if (token.shown.empty() || token.special) return fail(number, text, "a token shows nothing");
      joined += token.bytes;
      at = token.byte_end;
    }
    if (joined != text || at != static_cast<int>(text.size()))
      return fail(number, text, "the tokens' bytes are not the text");
    if (shown) {
      std::vector<std::string> names;
      for (const attnviz::ModelToken& token : *tokens) names.push_back(token.shown);
      std::cout << nlohmann::json(names).dump() << "\n";
    } else {
      std::cout << nlohmann::json(ids).dump() << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {  // out of memory, a stream that throws
    std::cerr << "attnviz_gpt2_encode: " << error.what() << "\n";
    return 1;
  }
}
