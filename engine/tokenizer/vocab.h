// The vocabulary as GGUF metadata describes it (GGUF-FORMATS.md 5.4): token texts, scores and
// types, the special-token ids with llama.cpp's per-model defaults, the add-BOS/EOS flags, and
// the text -> id index every tokenizer model looks tokens up in.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::gguf {
class File;
}

namespace inferscope::tok {

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

// Token attributes: the type as a bit plus the strip flags llama.cpp sets for some models.
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 6,  // eat whitespace before the token when it is split out of text
  kAttrRstrip = 1u << 7,  // eat whitespace after it
};

enum class VocabKind { kSentencePiece, kBytePairEncoding, kWordPiece };

struct TokenData {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
};

// Hash for maps keyed by string_view. Deliberately not noexcept: libstdc++ then stores each
// node's hash, so walking a bucket compares hashes instead of rehashing every key it passes.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Text -> token id: open addressing over a flat array of (hash tag, id) slots; the texts stay in
// the vocabulary. One probe usually touches one cache line plus the token's own text, which
// keeps loading 150k-token vocabularies (and the lookups of every merge) fast.
class TokenIndex {
 public:
  void build(const std::vector<TokenData>& tokens);
  int32_t find(std::string_view text) const;

 private:
  struct Slot {
    uint32_t tag = 0;  // high bits of the hash
    int32_t id = -1;   // -1: empty
  };
  static uint64_t hash(std::string_view text) { return std::hash<std::string_view>{}(text); }

  const std::vector<TokenData>* tokens_ = nullptr;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

class Vocab {
 public:
  // Reads and validates the tokenizer.ggml.* keys. Errors name the file and key.
  static Result<std::unique_ptr<Vocab>> load(const gguf::File& file);

  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

  VocabKind kind() const { return kind_; }
  const std::string& model_name() const { return model_name_; }
  const std::string& pre_name() const { return pre_name_; }
  const std::string& source() const { return source_; }  // file path, for messages
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  bool is_valid(int32_t id) const { return id >= 0 && id < size(); }
  const TokenData& token(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }

  // Id of the token with exactly this text (the last one when texts repeat), or -1.
  int32_t find(std::string_view text) const { return index_.find(text); }
  size_t max_token_length() const { return max_token_length_; }

  int32_t bos_id() const { return bos_; }
  int32_t eos_id() const { return eos_; }
  int32_t eot_id() const { return eot_; }
  int32_t eom_id() const { return eom_; }
  int32_t unk_id() const { return unk_; }
  int32_t sep_id() const { return sep_; }
  int32_t cls_id() const { return cls_; }
  int32_t pad_id() const { return pad_; }
  int32_t mask_id() const { return mask_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  bool is_end_of_generation(int32_t id) const { return eog_.count(id) != 0; }

  // Control, user-defined and unknown tokens, longest text first: the texts that are cut out
  // of the input before the model's own algorithm runs.
  const std::vector<int32_t>& special_tokens() const { return special_tokens_; }
  // Things about the metadata that were tolerated (out-of-range optional ids, ...).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Vocab() = default;
  Status read(const gguf::File& file);
  Status read_special_ids(const gguf::File& file);
  void detect_special_tokens(const std::string& general_name);
  void apply_harmony_rules();

  VocabKind kind_ = VocabKind::kSentencePiece;
  std::string model_name_;
  std::string pre_name_;
  std::string source_;
  std::vector<TokenData> tokens_;
  TokenIndex index_;  // refers to tokens_, which is never resized after it is built
  size_t max_token_length_ = 0;

  int32_t bos_ = -1, eos_ = -1, eot_ = -1, eom_ = -1, unk_ = -1, sep_ = -1, cls_ = -1, pad_ = -1,
          mask_ = -1, fim_pad_ = -1, fim_rep_ = -1, fim_sep_ = -1;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_space_prefix_ = false;
  std::unordered_set<int32_t> eog_;
  std::vector<int32_t> special_tokens_;
  std::vector<std::string> warnings_;
};

}  // namespace inferscope::tok
