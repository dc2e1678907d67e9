// Byte-level BPE (tokenizer.ggml.model = "gpt2"): the pre-tokenizer splits text into words,
// each word is byte-encoded, and merges from tokenizer.ggml.merges are applied lowest rank
// first (leftmost on ties), as llama.cpp and Hugging Face tokenizers do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/core/status.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/vocab.h"

namespace inferscope::gguf {
class File;
}

namespace inferscope::tok {

class BpeModel {
 public:
  // Reads tokenizer.ggml.merges and builds the pre-tokenizer named by the vocabulary.
  static Result<std::unique_ptr<BpeModel>> create(const Vocab& vocab, const gguf::File& file);

  void encode(std::string_view text, std::vector<int32_t>& out) const;
  const PreTokenizer& pre_tokenizer() const { return pre_; }
  size_t merge_count() const { return merges_.size(); }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // symbol id of the concatenation
  };
  // (left symbol, right symbol) -> Merge, open addressing over a flat array.
  class MergeTable {
   public:
    void reserve(size_t n);
    bool insert(uint64_t key, Merge merge);  // false (and no change) when the key exists
    const Merge* find(uint64_t key) const;
    size_t size() const { return size_; }

   private:
    static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are >= 0: no real key looks like this
    struct Slot {
      uint64_t key = kEmpty;
      Merge merge{};
    };
    static size_t slot_of(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20); }
    void grow();

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
  };

  BpeModel(const Vocab& vocab, PreTokenizer pre) : vocab_(vocab), pre_(std::move(pre)) {}
  // Symbol ids: token ids for texts in the vocabulary, ids from n_vocab up for merge parts that
  // are not tokens. -1 for a text that is neither.
  int32_t symbol_id(std::string_view text) const;
  int32_t intern(std::string_view text);
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  const Vocab& vocab_;
  PreTokenizer pre_;
  MergeTable merges_;
  std::vector<std::unique_ptr<std::string>> extra_texts_;  // stable storage for extra_ids_ keys
  std::unordered_map<std::string_view, int32_t, StringViewHash, std::equal_to<>> extra_ids_;
};

}  // namespace inferscope::tok
