// What the fuzz targets share: a fatal report (libFuzzer saves the input as a crash), UTF-8
// validation, and the shared test data folder (INFERSCOPE_TESTDATA_DIR, from CMake).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace inferscope::fuzz {

[[noreturn]] inline void fail(const char* target, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s: %s\n", target, what, detail.c_str());
  std::abort();
}

// Strict UTF-8: no overlong forms, surrogates or code points past U+10FFFF. An oracle of the
// fuzzers' own, independent of engine/tokenizer/unicode.h's decoder, which is under test.
inline bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

inline std::string testdata(const std::string& relative) { return std::string(INFERSCOPE_TESTDATA_DIR) + "/" + relative; }

}  // namespace inferscope::fuzz
