// The C++ side of the comparison with an independent BERT tokenizer (compare.py): reads texts,
// one JSON string a line, and writes each text's ids as a JSON array a line, encoded by AttnViz's
// BertTokenizer from the vocab.txt (and tokenizer_config.json) in FOLDER. On the way it checks
// what the reference cannot tell: every piece's bytes are inside the text, in order, and a word's
// pieces share its bytes.
//   attnviz_bert_encode FOLDER TEXTS.jsonl > IDS.jsonl
// Exit status 1 on any fault.
#include "core/models/bert_tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <string>

namespace {

int run(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: attnviz_bert_encode FOLDER TEXTS.jsonl\n";
    return 2;
  }
  attnviz::Result<attnviz::BertTokenizer> tokenizer = attnviz::BertTokenizer::load_folder(argv[1]);
  if (!tokenizer) {
    std::cerr << "attnviz_bert_encode: " << tokenizer.error() << "\n";
    return 1;
  }
  std::ifstream in(argv[2]);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string text = nlohmann::json::parse(line).get<std::string>();
    const auto pieces = tokenizer->tokenize(text);
    nlohmann::json ids = nlohmann::json::array();
    std::size_t previous_begin = 0;
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const auto& piece = pieces[k];
      ids.push_back(piece.id);
      const bool inside = piece.byte_begin <= piece.byte_end && piece.byte_end <= text.size() &&
                          piece.byte_begin >= previous_begin;
      const bool shares =
          piece.first_piece || (k > 0 && pieces[k - 1].byte_begin == piece.byte_begin);
      if (!inside || !shares) {
        std::cerr << "attnviz_bert_encode: line " << number << ": piece " << k << " has bytes ["
                  << piece.byte_begin << ", " << piece.byte_end << ")\n";
        return 1;
      }
      previous_begin = piece.byte_begin;
    }
    std::cout << ids.dump() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "attnviz_bert_encode: " << e.what() << "\n";
    return 1;
  }
}
