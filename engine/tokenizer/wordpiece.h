// WordPiece (tokenizer.ggml.model = "bert"): BERT's basic tokenizer (clean control characters,
// split on whitespace, NFD + strip accents + lowercase, split punctuation and CJK characters
// into words of their own), then greedy longest-match-first over each word. In the GGUF
// vocabulary word-initial pieces carry a leading U+2581 and "##" continuations do not.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocab.h"

namespace inferscope::tok {

class WordPieceModel {
 public:
  explicit WordPieceModel(const Vocab& vocab) : vocab_(vocab) {}

  void encode(std::string_view text, std::vector<int32_t>& out) const;
  // BERT's basic tokenization alone: the normalized words (tests, diagnostics).
  static std::vector<std::string> split_words(std::string_view text);

 private:
  const Vocab& vocab_;
};

}  // namespace inferscope::tok
