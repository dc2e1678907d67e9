// WordPiece. Normalization follows Hugging Face's BertNormalizer + BertPreTokenizer with
// lowercase = strip_accents = true (what bge and most uncased BERTs use). llama.cpp maps each
// code point to the first code point of its NFD instead of decomposing fully; the two agree on
// precomposed Latin letters and differ only where a decomposition has more than one base
// character (Hangul syllables), where full decomposition is what BERT does.
#include "engine/tokenizer/wordpiece.h"

#include "engine/tokenizer/unicode.h"

namespace inferscope::tok {
namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581

bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_bert_punctuation(uint32_t cp) {
  // ASCII symbols such as $ + < = > ^ ` | ~ count as punctuation too.
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
    return true;
  }
  return (category_bits(cp) & kCatPunctuation) != 0;
}

}  // namespace

std::vector<std::string> WordPieceModel::split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  const auto finish = [&]() {
    if (!current.empty()) words.push_back(std::move(current));
    current.clear();
  };
  std::vector<uint32_t> decomposed;
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp = 0;
    pos += utf8_decode(text, pos, &cp);
    // Tab and line breaks separate words; every other control or format character (also
    // U+000B, U+000C, U+0085) is dropped before whitespace is looked at, as in BertNormalizer.
    if (cp == '\t' || cp == '\n' || cp == '\r') {
      finish();
      continue;
    }
    if (cp == 0 || cp == kReplacementChar || (category_bits(cp) & kCatOther)) continue;
    if (is_whitespace(cp)) {
      finish();
      continue;
    }
    decomposed.clear();
    append_nfd(cp, decomposed);
    for (uint32_t d : decomposed) {
      if (general_category(d) == GeneralCategory::Mn) continue;  // strip accents
      const uint32_t lower = to_lower(d);
      if (is_bert_punctuation(lower) || is_cjk(lower)) {
        finish();
        append_utf8(lower, current);
        finish();
      } else {
        append_utf8(lower, current);
      }
    }
  }
  finish();
  return words;
}

void WordPieceModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  const size_t max_len = vocab_.max_token_length();
  std::string word;
  for (const std::string& w : split_words(text)) {
    word.assign(kWordStart);
    word += w;
    const size_t n = word.size();
    const size_t first_token = out.size();
    // Longest piece from each position; a word with any unmatched rest becomes [UNK].
    for (size_t i = 0; i < n;) {
      size_t j = std::min(n, i + max_len);
      int32_t id = -1;
      for (; j > i; --j) {
        id = vocab_.find(std::string_view(word).substr(i, j - i));
        if (id >= 0) break;
      }
      if (id < 0) {
        out.resize(first_token);
        break;
      }
      out.push_back(id);
      i = j;
    }
    if (out.size() == first_token && vocab_.unk_id() >= 0) out.push_back(vocab_.unk_id());
  }
}

}  // namespace inferscope::tok
