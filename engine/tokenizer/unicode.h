// Unicode helpers for the tokenizers: UTF-8 decoding/encoding that never fails, general
// categories, the White_Space property, NFD, lowercase, and GPT-2's byte <-> character mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::tok {

// Unicode general categories. The order matches tools/gen_unicode_data.py.
enum class GeneralCategory : uint8_t {
  Cn, Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps,
  Pe, Pi, Pf, Po, Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co,
};

// Major classes as bits, for regex classes such as \p{L}.
enum CategoryBit : uint32_t {
  kCatLetter = 1u << 0,       // L*
  kCatMark = 1u << 1,         // M*
  kCatNumber = 1u << 2,       // N*
  kCatPunctuation = 1u << 3,  // P*
  kCatSymbol = 1u << 4,       // S*
  kCatSeparator = 1u << 5,    // Z*
  kCatOther = 1u << 6,        // C* (control, format, surrogate, private use, unassigned)
  kCatUpper = 1u << 7,        // Lu
  kCatLower = 1u << 8,        // Ll
  kCatTitle = 1u << 9,        // Lt
  kCatModifierLetter = 1u << 10,  // Lm
  kCatOtherLetter = 1u << 11,     // Lo
  kCatDecimal = 1u << 12,     // Nd
};

constexpr uint32_t kReplacementChar = 0xFFFD;

GeneralCategory general_category(uint32_t cp);
uint32_t category_bits(uint32_t cp);  // CategoryBit set of cp's category
// The White_Space property (what Python's and Rust's regex mean by \s).
bool is_whitespace(uint32_t cp);
uint32_t to_lower(uint32_t cp);  // simple one-to-one mapping; cp itself when none
// Appends the full canonical decomposition of cp (Hangul included); cp itself when none.
void append_nfd(uint32_t cp, std::vector<uint32_t>& out);

// Length of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
int utf8_sequence_length(uint8_t lead);
// Decodes one code point at text[pos]; invalid or truncated input decodes as U+FFFD and
// consumes one byte. Returns the number of bytes consumed.
size_t utf8_decode(std::string_view text, size_t pos, uint32_t* cp);
std::vector<uint32_t> utf8_to_codepoints(std::string_view text);
// As llama.cpp's tokenizer reads text (unicode_cpt_from_utf8): a sequence decodes by its bit
// pattern alone, so overlong forms and surrogates keep their values (C0 AF reads as '/'); a bad
// lead or continuation byte, a truncated sequence or a value past U+10FFFF is U+FFFD for one
// byte, as in utf8_decode.
std::vector<uint32_t> utf8_to_codepoints_by_pattern(std::string_view text);
void append_utf8(uint32_t cp, std::string& out);
std::string codepoints_to_utf8(const std::vector<uint32_t>& cps);
bool utf8_is_valid(std::string_view text);

// SentencePiece's space, U+2581, which SentencePiece-style vocabularies write for ' '.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";
// s with every `from` replaced by `to`.
void replace_all(std::string& s, std::string_view from, std::string_view to);

// GPT-2 byte-level encoding: every byte maps to one printable code point (space -> U+0120 'Ġ').
uint32_t byte_to_gpt2_char(uint8_t byte);
int gpt2_char_to_byte(uint32_t cp);  // -1 when cp is not one of the 256 characters
// Byte-encodes raw bytes into the UTF-8 of their GPT-2 characters.
std::string gpt2_byte_encode(std::string_view bytes);

}  // namespace inferscope::tok
