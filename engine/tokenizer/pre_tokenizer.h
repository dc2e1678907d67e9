// Byte-level BPE pre-tokenization: splits text into words with the regex list that llama.cpp
// selects for each `tokenizer.ggml.pre` value, then byte-encodes each word (GPT-2 mapping; not
// for Gemma 4's SentencePiece-style BPE, PreTokenizerTraits::spm_style).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/tokenizer/regex.h"

namespace inferscope::tok {

// Per-pre-tokenizer settings that llama.cpp ties to the name.
struct PreTokenizerTraits {
  bool add_bos = false;        // default for tokenizer.ggml.add_bos_token
  bool ignore_merges = false;  // a word that is already a token is not split (Llama 3)
  bool clear_bos = false;      // chatglm-bpe has no BOS
  // Gemma 4's SentencePiece-style BPE: spaces become U+2581 before the split, words are merged
  // as UTF-8 (no byte-level encoding), a piece that is no token falls back to <0xXX> byte
  // tokens, and BOS is added whatever the file says (as llama.cpp does).
  bool spm_style = false;
};

class PreTokenizer {
 public:
  // `name` is tokenizer.ggml.pre ("default" when absent). Unknown names are an error.
  static Result<PreTokenizer> create(const std::string& name);
  // The settings tied to `name`, without compiling its regexes. Unknown names are an error.
  static Result<PreTokenizerTraits> traits_for(const std::string& name);

  // Appends the byte-encoded words of `text` to `words` (as UTF-8 when spm_style).
  void split(std::string_view text, std::vector<std::string>& words) const;
  // The same split without byte-encoding: the words as UTF-8 (tests, diagnostics).
  std::vector<std::string> split_raw(std::string_view text) const;

  const std::string& name() const { return name_; }
  const PreTokenizerTraits& traits() const { return traits_; }

 private:
  std::vector<size_t> split_lengths(const std::vector<uint32_t>& cps) const;

  std::string name_;
  PreTokenizerTraits traits_;
  std::vector<Regex> regexes_;
};

}  // namespace inferscope::tok
