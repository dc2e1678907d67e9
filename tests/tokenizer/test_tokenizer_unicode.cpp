// Unicode tables and UTF-8 helpers used by the tokenizers.
#include <gtest/gtest.h>

#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/wordpiece.h"

namespace inferscope::tok {
namespace {

TEST(TokenizerUnicode, Categories) {
  EXPECT_EQ(general_category('A'), GeneralCategory::Lu);
  EXPECT_EQ(general_category('z'), GeneralCategory::Ll);
  EXPECT_EQ(general_category('5'), GeneralCategory::Nd);
  EXPECT_EQ(general_category('!'), GeneralCategory::Po);
  EXPECT_EQ(general_category('$'), GeneralCategory::Sc);
  EXPECT_EQ(general_category(' '), GeneralCategory::Zs);
  EXPECT_EQ(general_category('\n'), GeneralCategory::Cc);
  EXPECT_EQ(general_category(0x4E00), GeneralCategory::Lo);   // 一
  EXPECT_EQ(general_category(0x0301), GeneralCategory::Mn);   // combining acute
  EXPECT_EQ(general_category(0x1F999), GeneralCategory::So);  // 🦙
  EXPECT_EQ(general_category(0x10400), GeneralCategory::Lu);  // Deseret, outside the BMP
  EXPECT_EQ(general_category(0x10FFFF), GeneralCategory::Cn);
  EXPECT_EQ(general_category(0x110000), GeneralCategory::Cn);
  EXPECT_TRUE(category_bits(0x00E9) & kCatLetter);
  EXPECT_TRUE(category_bits(0x0661) & kCatNumber);
}

TEST(TokenizerUnicode, Whitespace) {
  for (uint32_t cp : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2000u, 0x200Au, 0x2028u,
                      0x2029u, 0x202Fu, 0x205Fu, 0x3000u}) {
    EXPECT_TRUE(is_whitespace(cp)) << cp;
  }
  for (uint32_t cp : {0x08u, 0x1Fu, 0x61u, 0x200Bu, 0xFEFFu}) EXPECT_FALSE(is_whitespace(cp)) << cp;
}

TEST(TokenizerUnicode, LowercaseAndDecomposition) {
  EXPECT_EQ(to_lower('A'), 'a');
  EXPECT_EQ(to_lower(0xC4), 0xE4u);    // Ä
  EXPECT_EQ(to_lower(0x0416), 0x0436u);  // Ж
  EXPECT_EQ(to_lower(0x4E00), 0x4E00u);
  std::vector<uint32_t> out;
  append_nfd(0xE9, out);  // é
  EXPECT_EQ(out, (std::vector<uint32_t>{'e', 0x0301}));
  out.clear();
  append_nfd(0xD55C, out);  // 한
  EXPECT_EQ(out, (std::vector<uint32_t>{0x1112, 0x1161, 0x11AB}));
  out.clear();
  append_nfd(0x1E69, out);  // ṩ: s + dot below + dot above
  EXPECT_EQ(out, (std::vector<uint32_t>{'s', 0x0323, 0x0307}));
  out.clear();
  append_nfd('x', out);
  EXPECT_EQ(out, (std::vector<uint32_t>{'x'}));
}

TEST(TokenizerUnicode, Utf8) {
  EXPECT_EQ(utf8_to_codepoints("a\xC3\xA9\xE4\xB8\x80\xF0\x9F\xA6\x99"),
            (std::vector<uint32_t>{'a', 0xE9, 0x4E00, 0x1F999}));
  // Invalid bytes decode as U+FFFD one byte at a time.
  EXPECT_EQ(utf8_to_codepoints("\xFF" "a\xC3"), (std::vector<uint32_t>{kReplacementChar, 'a', kReplacementChar}));
  EXPECT_EQ(utf8_to_codepoints("\xC0\xAF"), (std::vector<uint32_t>{kReplacementChar, kReplacementChar}));  // overlong
  EXPECT_EQ(utf8_to_codepoints("\xED\xA0\x80").front(), kReplacementChar);  // surrogate
  EXPECT_TRUE(utf8_is_valid("h\xC3\xA9llo \xEF\xBF\xBD"));
  EXPECT_FALSE(utf8_is_valid("h\xC3"));
  EXPECT_EQ(codepoints_to_utf8({0x24, 0xA2, 0x20AC, 0x10348}), "$\xC2\xA2\xE2\x82\xAC\xF0\x90\x8D\x88");
}

TEST(TokenizerUnicode, Gpt2ByteMapping) {
  EXPECT_EQ(byte_to_gpt2_char(' '), 0x120u);  // Ġ
  EXPECT_EQ(byte_to_gpt2_char('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(byte_to_gpt2_char('A'), static_cast<uint32_t>('A'));
  EXPECT_EQ(byte_to_gpt2_char(0xAD), 0x143u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(gpt2_char_to_byte(byte_to_gpt2_char(static_cast<uint8_t>(b))), b);
  EXPECT_EQ(gpt2_char_to_byte(0x20), -1);  // a raw space is not a byte-level character
  EXPECT_EQ(gpt2_byte_encode("a b"), "a\xC4\xA0" "b");
}

TEST(TokenizerUnicode, BertBasicTokenization) {
  using Words = std::vector<std::string>;
  EXPECT_EQ(WordPieceModel::split_words("Hello, World!"), (Words{"hello", ",", "world", "!"}));
  EXPECT_EQ(WordPieceModel::split_words("Führer CAFÉ naïve"), (Words{"fuhrer", "cafe", "naive"}));
  EXPECT_EQ(WordPieceModel::split_words("我想apple"), (Words{"我", "想", "apple"}));
  EXPECT_EQ(WordPieceModel::split_words("a\x0B" "b\tc\xC2\xA0" "d"), (Words{"ab", "c", "d"}));  // \v dropped, NBSP splits
  EXPECT_EQ(WordPieceModel::split_words("$5+x~"), (Words{"$", "5", "+", "x", "~"}));
  EXPECT_EQ(WordPieceModel::split_words("   "), Words{});
}

}  // namespace
}  // namespace inferscope::tok
