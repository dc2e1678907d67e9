// SPM merge loop: a doubly linked list of symbols over the input and a max-heap of candidate
// pairs keyed by (score, leftmost first). Pairs go stale when a neighbour merges; they are
// recognised by their length no longer matching and skipped.
#include "engine/tokenizer/spm.h"

#include <queue>
#include <string>

namespace inferscope::tok {
namespace {

// Byte length of a UTF-8 character from its first byte, by its high nibble as llama.cpp counts
// (invalid lead bytes still give a length; the caller clamps at the end of the text).
int char_length(uint8_t lead) {
  static constexpr int kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

struct Symbol {
  int32_t prev;
  int32_t next;
  size_t start;
  size_t length;  // 0 once merged into its left neighbour
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  size_t length;
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    // std::priority_queue puts the "largest" on top: highest score, then leftmost.
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmModel::SpmModel(const Vocab& vocab) : vocab_(vocab) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    int32_t id = vocab.find(std::string_view(name, 6));
    if (id < 0) {
      const char raw = static_cast<char>(b);
      id = vocab.find(std::string_view(&raw, 1));
    }
    if (id < 0) id = vocab.unk_id();
    byte_tokens_[b] = id;
  }
}

void SpmModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min<size_t>(char_length(static_cast<uint8_t>(text[pos])), text.size() - pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, pos + len < text.size() ? index + 1 : -1, pos, len});
    pos += len;
  }

  std::vector<Bigram> storage;
  storage.reserve(symbols.size());
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{}, std::move(storage));
  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const size_t length = l.length + r.length;
    const int32_t id = vocab_.find(text.substr(l.start, length));
    if (id < 0) return;
    queue.push({vocab_.token(id).score, left, right, length});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(b.left)];
    Symbol& r = symbols[static_cast<size_t>(b.right)];
    if (l.length == 0 || r.length == 0 || l.length + r.length != b.length) continue;
    l.length += r.length;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int32_t i = 0; i >= 0 && i < static_cast<int32_t>(symbols.size()); i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.start, s.length);
    const int32_t id = vocab_.find(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_id = byte_tokens_[static_cast<uint8_t>(c)];
      if (byte_id >= 0) out.push_back(byte_id);
    }
  }
}

}  // namespace inferscope::tok
