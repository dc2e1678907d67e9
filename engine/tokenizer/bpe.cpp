// BPE merges are indexed by the pair of symbol ids (one 64-bit key) rather than by string
// pairs, so loading 150k merges costs three hash lookups each and encoding never builds strings.
#include "engine/tokenizer/bpe.h"

#include <queue>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/unicode.h"

namespace inferscope::tok {
namespace {

constexpr const char* kKeyMerges = "tokenizer.ggml.merges";

struct Symbol {
  int32_t prev;
  int32_t next;
  int32_t id;  // symbol id; -1 for a character that is neither a token nor a merge part
  size_t start;
  size_t length;  // 0 once merged into its left neighbour
};

struct Bigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  int32_t left_id;
  int32_t right_id;
  int32_t result;
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    // Lowest rank on top, then leftmost.
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

// "<0xAB>": a byte token's text in a vocabulary that is not byte-encoded.
std::string byte_token_text(uint8_t byte) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("<0x") + kHex[byte >> 4] + kHex[byte & 15] + ">";
}

}  // namespace

void BpeModel::MergeTable::reserve(size_t n) {
  size_t capacity = 16;
  while (capacity < n * 2) capacity *= 2;
  if (capacity <= slots_.size()) return;
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  size_ = 0;
  for (const Slot& slot : old) {
    if (slot.key != kEmpty) insert(slot.key, slot.merge);
  }
}

bool BpeModel::MergeTable::insert(uint64_t key, Merge merge) {
  if ((size_ + 1) * 2 > slots_.size()) reserve(size_ + 1 > 8 ? (size_ + 1) * 2 : 16);
  for (size_t i = slot_of(key) & mask_;; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.key == key) return false;
    if (slot.key == kEmpty) {
      slot = {key, merge};
      ++size_;
      return true;
    }
  }
}

const BpeModel::Merge* BpeModel::MergeTable::find(uint64_t key) const {
  if (slots_.empty()) return nullptr;
  for (size_t i = slot_of(key) & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.key == key) return &slot.merge;
    if (slot.key == kEmpty) return nullptr;
  }
}

Result<std::unique_ptr<BpeModel>> BpeModel::create(const Vocab& vocab, const gguf::File& file) {
  Result<PreTokenizer> pre = PreTokenizer::create(vocab.pre_name());
  if (!pre) {
    return Status::error(file.error_prefix() + "metadata key 'tokenizer.ggml.pre': " + pre.message());
  }
  std::unique_ptr<BpeModel> model(new BpeModel(vocab, std::move(pre).value()));

  Result<const std::vector<std::string>*> merges = file.get_string_array(kKeyMerges);
  if (!merges) return merges.status();
  const std::vector<std::string>& entries = **merges;
  model->merges_.reserve(entries.size());
  std::string joined;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& entry = entries[i];
    // "<left> <right>": split at the first space after the first character (a left part may
    // itself be a space in vocabularies that are not byte-encoded).
    const size_t space = entry.size() > 1 ? entry.find(' ', 1) : std::string::npos;
    if (space == std::string::npos || space + 1 >= entry.size()) {
      return Status::error(file.error_prefix() + "metadata key '" + kKeyMerges + "' entry " + std::to_string(i) +
                           " is '" + entry + "', expected '<left> <right>'");
    }
    const std::string_view left(entry.data(), space);
    const std::string_view right(entry.data() + space + 1, entry.size() - space - 1);
    joined.assign(left);
    joined.append(right);
    const int32_t left_id = model->intern(left);
    const int32_t right_id = model->intern(right);
    const int32_t result = model->intern(joined);
    // The first occurrence of a pair defines its rank.
    model->merges_.insert(pair_key(left_id, right_id), Merge{static_cast<int32_t>(i), result});
  }
  return model;
}

int32_t BpeModel::symbol_id(std::string_view text) const {
  const int32_t id = vocab_.find(text);
  if (id >= 0) return id;
  auto it = extra_ids_.find(text);
  return it == extra_ids_.end() ? -1 : it->second;
}

int32_t BpeModel::intern(std::string_view text) {
  const int32_t id = symbol_id(text);
  if (id >= 0) return id;
  extra_texts_.push_back(std::make_unique<std::string>(text));
  const auto new_id = static_cast<int32_t>(vocab_.size() + extra_ids_.size());
  extra_ids_.emplace(*extra_texts_.back(), new_id);
  return new_id;
}

void BpeModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<std::string> words;
  if (pre_.traits().spm_style) {
    std::string escaped(text);
    replace_all(escaped, " ", kSpmSpace);
    pre_.split(escaped, words);
  } else {
    pre_.split(text, words);
  }
  for (const std::string& word : words) encode_word(word, out);
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  // gemma4: a run of newlines that is a token stays whole (llama.cpp's special case).
  if (pre_.traits().ignore_merges || (pre_.traits().spm_style && word.find_first_not_of('\n') == std::string::npos)) {
    const int32_t id = vocab_.find(word);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  // Words are byte-encoded, so every character is valid UTF-8 of 1 or 2 bytes.
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t pos = 0; pos < word.size();) {
    const size_t len = std::min<size_t>(utf8_sequence_length(static_cast<uint8_t>(word[pos])), word.size() - pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, pos + len < word.size() ? index + 1 : -1, symbol_id(word.substr(pos, len)),
                       pos, len});
    pos += len;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const int32_t left_id = symbols[static_cast<size_t>(left)].id;
    const int32_t right_id = symbols[static_cast<size_t>(right)].id;
    if (left_id < 0 || right_id < 0) return;
    const Merge* merge = merges_.find(pair_key(left_id, right_id));
    if (!merge) return;
    queue.push({merge->rank, left, right, left_id, right_id, merge->result});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(b.left)];
    Symbol& r = symbols[static_cast<size_t>(b.right)];
    // Stale when either side has merged since the pair was queued.
    if (l.length == 0 || r.length == 0 || l.id != b.left_id || r.id != b.right_id || l.next != b.right) continue;
    l.length += r.length;
    l.id = b.result;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    if (s.id >= 0 && s.id < vocab_.size()) {
      out.push_back(s.id);
      continue;
    }
    // A piece that is not a token: its single bytes, where those are tokens (llama.cpp): the
    // byte-encoded characters, or gemma4's <0xXX> byte tokens.
    for (char c : word.substr(s.start, s.length)) {
      const int32_t id = pre_.traits().spm_style ? vocab_.find(byte_token_text(static_cast<uint8_t>(c)))
                                                 : vocab_.find(std::string_view(&c, 1));
      if (id >= 0) out.push_back(id);
    }
  }
}

}  // namespace inferscope::tok
