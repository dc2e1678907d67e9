// The tokenizer of a GGUF model: text <-> token ids with llama.cpp's semantics for the three
// vocabulary kinds llama.cpp converts most models to (SentencePiece-style "llama", byte-level
// BPE "gpt2", WordPiece "bert"), built from the tokenizer.ggml.* metadata alone.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"

namespace inferscope {

namespace gguf {
class File;
}
namespace tok {
class Vocab;
class SpmModel;
class BpeModel;
class WordPieceModel;
}  // namespace tok

enum class TokenizerKind { SentencePiece, BytePairEncoding, WordPiece };

class Tokenizer {
 public:
  // Reads the vocabulary from `file` (which need not outlive the tokenizer). Bad metadata
  // (missing or mistyped keys, arrays of the wrong length, ids outside the vocabulary,
  // malformed merges, unknown tokenizer.ggml.model / .pre) is an error naming file and key.
  static Result<std::shared_ptr<const Tokenizer>> from_gguf(const gguf::File& file);
  ~Tokenizer();

  TokenizerKind kind() const;
  const std::string& model_name() const;  // tokenizer.ggml.model: "llama", "gpt2", "bert"
  const std::string& pre_name() const;    // tokenizer.ggml.pre or "default"
  int32_t n_vocab() const;

  // add_special: BOS (and EOS) as the metadata asks (tokenizer.ggml.add_bos_token /
  // add_eos_token, with llama.cpp's per-model defaults when absent); WordPiece adds [CLS] and
  // [SEP]. parse_special: control-token texts inside `text` become those tokens; user-defined
  // tokens are always cut out of the text (as in llama.cpp and Hugging Face).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes a token stands for: SPM U+2581 -> ' ' and <0xAB> -> the byte; BPE byte-level
  // characters -> bytes; control, user-defined and unknown tokens -> their text; WordPiece
  // word-initial pieces start with ' '. Unused/undefined tokens and invalid ids -> "".
  std::string token_to_piece(int32_t id) const;
  // The concatenated pieces (SentencePiece output keeps its leading space). WordPiece joins
  // continuations to their word, puts spaces between words and drops the leading space.
  std::string decode(std::span<const int32_t> ids) const;
  const std::string& token_text(int32_t id) const;  // as stored in the vocabulary ("" if invalid)

  int32_t bos_id() const;  // -1 when absent
  int32_t eos_id() const;
  int32_t eot_id() const;
  bool add_bos() const;
  bool add_eos() const;
  // Whether encode puts a space before the text (SentencePiece's add_space_prefix; not Gemma 3).
  bool adds_space_prefix() const;
  // Whether the vocabulary writes a space as U+2581 (SentencePiece, Gemma 4's BPE): a literal
  // U+2581 in the text then comes back as a space.
  bool spaces_as_u2581() const;
  bool is_end_of_generation(int32_t id) const;  // EOS, EOT, EOM and similar end tokens
  bool is_valid(int32_t id) const;
  bool is_control(int32_t id) const;  // control (and unknown) tokens, e.g. to hide in a UI
  // Control tokens (BOS, <|im_start|>, ...; not unknown ones) print nothing in generated text,
  // as in llama.cpp's output without special tokens.
  bool is_hidden_in_generated_text(int32_t id) const;

  // What the metadata had that was tolerated rather than refused (for `inspect`).
  const std::vector<std::string>& load_warnings() const;

 private:
  struct Fragment {
    int32_t token;  // -1 for raw text
    size_t offset;
    size_t length;
  };

  Tokenizer();
  std::vector<Fragment> partition(std::string_view text, bool parse_special) const;

  std::unique_ptr<tok::Vocab> vocab_;
  std::unique_ptr<tok::SpmModel> spm_;
  std::unique_ptr<tok::BpeModel> bpe_;
  std::unique_ptr<tok::WordPieceModel> wordpiece_;
};

}  // namespace inferscope

#include "engine/tokenizer/streaming_detokenizer.h"
