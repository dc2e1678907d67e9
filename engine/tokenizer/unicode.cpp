// Lookups over the generated tables in unicode_data.cpp, plus UTF-8 and GPT-2 byte mapping.
#include "engine/tokenizer/unicode.h"

#include <algorithm>
#include <array>

#include "engine/tokenizer/unicode_data.h"

namespace inferscope::tok {
namespace {

// The Basic Multilingual Plane is looked up in a flat table (64 KiB) built once from the
// ranges; the tokenizers' hot loops call general_category() for every code point.
struct BmpCategories {
  std::array<uint8_t, 0x10000> table{};
  BmpCategories() {
    for (size_t i = 0; i < unicode_data::kCategoryRangeCount; ++i) {
      const uint32_t first = unicode_data::kCategoryRanges[i].first;
      if (first >= 0x10000) break;
      const uint32_t end = i + 1 < unicode_data::kCategoryRangeCount
                               ? std::min<uint32_t>(unicode_data::kCategoryRanges[i + 1].first, 0x10000)
                               : 0x10000;
      std::fill(table.begin() + first, table.begin() + end, unicode_data::kCategoryRanges[i].category);
    }
  }
};

const BmpCategories& bmp_categories() {
  static const BmpCategories categories;
  return categories;
}

constexpr uint32_t kCategoryBits[] = {
    /*Cn*/ kCatOther,
    /*Lu*/ kCatLetter | kCatUpper,
    /*Ll*/ kCatLetter | kCatLower,
    /*Lt*/ kCatLetter | kCatTitle,
    /*Lm*/ kCatLetter | kCatModifierLetter,
    /*Lo*/ kCatLetter | kCatOtherLetter,
    /*Mn*/ kCatMark, /*Mc*/ kCatMark, /*Me*/ kCatMark,
    /*Nd*/ kCatNumber | kCatDecimal, /*Nl*/ kCatNumber, /*No*/ kCatNumber,
    /*Pc*/ kCatPunctuation, /*Pd*/ kCatPunctuation, /*Ps*/ kCatPunctuation, /*Pe*/ kCatPunctuation,
    /*Pi*/ kCatPunctuation, /*Pf*/ kCatPunctuation, /*Po*/ kCatPunctuation,
    /*Sm*/ kCatSymbol, /*Sc*/ kCatSymbol, /*Sk*/ kCatSymbol, /*So*/ kCatSymbol,
    /*Zs*/ kCatSeparator, /*Zl*/ kCatSeparator, /*Zp*/ kCatSeparator,
    /*Cc*/ kCatOther, /*Cf*/ kCatOther, /*Cs*/ kCatOther, /*Co*/ kCatOther,
};
static_assert(sizeof(kCategoryBits) / sizeof(kCategoryBits[0]) == 30);

// Hangul syllable decomposition constants (Unicode 3.12).
constexpr uint32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161,
                   kTrailBase = 0x11A7;
constexpr uint32_t kVowelCount = 21, kTrailCount = 28, kSyllableCount = 11172;

struct Gpt2ByteMap {
  std::array<uint32_t, 256> to_char{};
  std::array<int16_t, 512> to_byte{};  // every mapped character is below U+0200
  Gpt2ByteMap() {
    to_byte.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      // Printable Latin-1 bytes stand for themselves; the rest move to U+0100 and up, in order.
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_char[b] = printable ? static_cast<uint32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const Gpt2ByteMap& gpt2_map() {
  static const Gpt2ByteMap map;
  return map;
}

}  // namespace

GeneralCategory general_category(uint32_t cp) {
  if (cp < 0x10000) return static_cast<GeneralCategory>(bmp_categories().table[cp]);
  if (cp > 0x10FFFF) return GeneralCategory::Cn;
  const auto* begin = unicode_data::kCategoryRanges;
  const auto* end = begin + unicode_data::kCategoryRangeCount;
  const auto* it = std::upper_bound(begin, end, cp, [](uint32_t value, const unicode_data::CategoryRange& r) {
    return value < r.first;
  });
  return static_cast<GeneralCategory>((it - 1)->category);
}

uint32_t category_bits(uint32_t cp) { return kCategoryBits[static_cast<int>(general_category(cp))]; }

bool is_whitespace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

uint32_t to_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  const auto* begin = unicode_data::kLowercase;
  const auto* end = begin + unicode_data::kLowercaseCount;
  const auto* it = std::lower_bound(begin, end, cp, [](const unicode_data::CaseMapping& m, uint32_t value) {
    return m.from < value;
  });
  return (it != end && it->from == cp) ? it->to : cp;
}

void append_nfd(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp < 0xC0) {
    out.push_back(cp);
    return;
  }
  if (cp >= kHangulBase && cp < kHangulBase + kSyllableCount) {
    const uint32_t index = cp - kHangulBase;
    out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
    out.push_back(kVowelBase + (index % (kVowelCount * kTrailCount)) / kTrailCount);
    if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
    return;
  }
  const auto* begin = unicode_data::kDecompositions;
  const auto* end = begin + unicode_data::kDecompositionCount;
  const auto* it = std::lower_bound(begin, end, cp, [](const unicode_data::Decomposition& d, uint32_t value) {
    return d.cp < value;
  });
  if (it == end || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  out.insert(out.end(), unicode_data::kDecompositionPool + it->offset,
             unicode_data::kDecompositionPool + it->offset + it->length);
}

int utf8_sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

namespace {

// One code point at text[pos] by its bit pattern alone (overlong forms and surrogates keep their
// values); a bad lead or continuation byte, a truncated sequence or a value past U+10FFFF is
// U+FFFD for one byte. Returns the bytes consumed.
size_t utf8_decode_pattern(std::string_view text, size_t pos, uint32_t* cp) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  }
  const int len = utf8_sequence_length(lead);
  uint32_t value = lead & (0x7F >> len);
  bool formed = len > 1 && pos + len <= text.size();
  for (int i = 1; formed && i < len; ++i) {
    const auto c = static_cast<uint8_t>(text[pos + i]);
    formed = (c & 0xC0) == 0x80;
    value = (value << 6) | (c & 0x3F);
  }
  if (!formed || value > 0x10FFFF) {
    *cp = kReplacementChar;
    return 1;
  }
  *cp = value;
  return static_cast<size_t>(len);
}

}  // namespace

size_t utf8_decode(std::string_view text, size_t pos, uint32_t* cp) {
  const size_t len = utf8_decode_pattern(text, pos, cp);
  // Overlong forms and surrogates are not valid UTF-8 either.
  static constexpr uint32_t kMinValue[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (len > 1 && (*cp < kMinValue[len] || (*cp >= 0xD800 && *cp <= 0xDFFF))) {
    *cp = kReplacementChar;
    return 1;
  }
  return len;
}

std::vector<uint32_t> utf8_to_codepoints(std::string_view text) {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp = 0;
    pos += utf8_decode(text, pos, &cp);
    cps.push_back(cp);
  }
  return cps;
}

std::vector<uint32_t> utf8_to_codepoints_by_pattern(std::string_view text) {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp = 0;
    pos += utf8_decode_pattern(text, pos, &cp);
    cps.push_back(cp);
  }
  return cps;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string codepoints_to_utf8(const std::vector<uint32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (uint32_t cp : cps) append_utf8(cp, out);
  return out;
}

bool utf8_is_valid(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_decode(text, pos, &cp);
    if (cp == kReplacementChar && n == 1 && static_cast<uint8_t>(text[pos]) >= 0x80) return false;
    pos += n;
  }
  return true;
}

uint32_t byte_to_gpt2_char(uint8_t byte) { return gpt2_map().to_char[byte]; }

int gpt2_char_to_byte(uint32_t cp) { return cp < 512 ? gpt2_map().to_byte[cp] : -1; }

std::string gpt2_byte_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) append_utf8(byte_to_gpt2_char(static_cast<uint8_t>(c)), out);
  return out;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size() + s.size() / 2);
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  s.swap(out);
}

}  // namespace inferscope::tok
