// SentencePiece-style tokenization (tokenizer.ggml.model = "llama"), the way llama.cpp does it:
// start from single UTF-8 characters, repeatedly merge the adjacent pair whose concatenation is
// the vocabulary token with the highest score, and spell characters that never became a token
// as <0xXX> byte tokens.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocab.h"

namespace inferscope::tok {

class SpmModel {
 public:
  explicit SpmModel(const Vocab& vocab);

  // `text` is already escaped: spaces replaced by U+2581, prefix space added by the caller.
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  // The token for one raw byte: <0xXX>, else the one-byte text, else the unknown token (-1 if none).
  int32_t byte_token(uint8_t byte) const { return byte_tokens_[byte]; }

 private:
  const Vocab& vocab_;
  std::array<int32_t, 256> byte_tokens_{};
};

}  // namespace inferscope::tok
