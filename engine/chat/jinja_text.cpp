#include "engine/chat/jinja_text.h"

#include <cstdint>

namespace inferscope::jinja {

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Needles up to this long use the library's search, whose worst case is about haystack x
// needle byte comparisons; they are charged as if compared eight bytes at a time.
constexpr size_t kShortNeedle = 64;

// Knuth-Morris-Pratt: never looks at a haystack byte twice.
size_t find_long(std::string_view haystack, std::string_view needle, size_t from) {
  std::vector<uint32_t> border(needle.size(), 0);  // border[i]: longest proper border of needle[0..i]
  for (size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = border[k - 1];
    if (needle[i] == needle[k]) ++k;
    border[i] = static_cast<uint32_t>(k);
  }
  for (size_t i = from, k = 0; i < haystack.size(); ++i) {
    while (k > 0 && haystack[i] != needle[k]) k = border[k - 1];
    if (haystack[i] == needle[k]) ++k;
    if (k == needle.size()) return i + 1 - k;
  }
  return std::string_view::npos;
}

}  // namespace

size_t char_length_at(std::string_view s, size_t pos) {
  size_t len = 1;
  while (pos + len < s.size() && is_continuation(s[pos + len])) ++len;
  return len;
}

size_t char_start_before(std::string_view s, size_t end) {
  size_t pos = end - 1;
  while (pos > 0 && is_continuation(s[pos])) --pos;
  return pos;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += !is_continuation(c);
  return n;
}

std::vector<size_t> char_offsets(std::string_view s, Budget& budget) {
  budget.work(s.size());
  std::vector<size_t> offsets;
  for (size_t i = 0; i < s.size(); i += char_length_at(s, i)) offsets.push_back(i);
  offsets.push_back(s.size());
  return offsets;
}

bool is_python_space(std::string_view ch) {
  if (ch.size() == 1) {
    const unsigned char c = static_cast<unsigned char>(ch[0]);
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  }
  if (ch == "\xC2\x85" || ch == "\xC2\xA0" || ch == "\xE1\x9A\x80" || ch == "\xE3\x80\x80") return true;
  if (ch.size() == 3 && ch[0] == '\xE2') {
    const unsigned char b1 = static_cast<unsigned char>(ch[1]), b2 = static_cast<unsigned char>(ch[2]);
    if (b1 == 0x80) return b2 <= 0x8A || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF;  // U+2000-200A, 2028, 2029, 202F
    if (b1 == 0x81) return b2 == 0x9F;                                             // U+205F
  }
  return false;
}

size_t find_text(std::string_view haystack, std::string_view needle, size_t from, Budget& budget) {
  if (from > haystack.size()) return std::string_view::npos;
  const size_t scanned = haystack.size() - from;
  if (needle.size() <= kShortNeedle) {
    budget.work(scanned * (needle.size() / 8 + 1));
    return haystack.find(needle, from);
  }
  budget.work(scanned + needle.size() * sizeof(uint32_t));
  return find_long(haystack, needle, from);
}

}  // namespace inferscope::jinja
