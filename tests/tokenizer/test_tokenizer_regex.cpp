// The pre-tokenizer regex engine and the pre-tokenizers built on it.
#include <gtest/gtest.h>

#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/regex.h"
#include "engine/tokenizer/unicode.h"

namespace inferscope::tok {
namespace {

using Words = std::vector<std::string>;

// All matches of `pattern` in `text`, leftmost-first, as UTF-8.
Words matches(const std::string& pattern, const std::string& text) {
  auto regex = Regex::compile(pattern);
  EXPECT_TRUE(regex.is_ok()) << regex.message();
  if (!regex) return {};
  const std::vector<uint32_t> cps = utf8_to_codepoints(text);
  Words out;
  size_t pos = 0, begin = 0, end = 0;
  while (regex->search(cps.data(), cps.size(), pos, &begin, &end)) {
    out.push_back(codepoints_to_utf8(std::vector<uint32_t>(cps.begin() + begin, cps.begin() + end)));
    pos = end > begin ? end : begin + 1;
  }
  return out;
}

TEST(TokenizerRegex, Basics) {
  EXPECT_EQ(matches("ab|a", "aab"), (Words{"a", "ab"}));  // leftmost alternative wins
  EXPECT_EQ(matches("a+", "caaab"), (Words{"aaa"}));
  EXPECT_EQ(matches("[0-9]{1,3}", "12345"), (Words{"123", "45"}));
  EXPECT_EQ(matches("x{2}", "xxxxx"), (Words{"xx", "xx"}));
  EXPECT_EQ(matches("(?:ab)+", "abababa"), (Words{"ababab"}));
  EXPECT_EQ(matches("\\s+(?!\\S)", "a   b"), (Words{"  "}));
  EXPECT_EQ(matches("a(?=b)", "acab"), (Words{"a"}));
  EXPECT_EQ(matches("\\s+$", "a  b  "), (Words{"  "}));
  EXPECT_EQ(matches("[^a-c]+", "abxyzc"), (Words{"xyz"}));
  EXPECT_EQ(matches("[\\-\\]]+", "a-]-b"), (Words{"-]-"}));
  EXPECT_EQ(matches(".+", "ab\ncd"), (Words{"ab", "cd"}));
  EXPECT_EQ(matches("\\\\+", "a\\\\b\\"), (Words{"\\\\", "\\"}));  // escaped backslash
  EXPECT_EQ(matches("[\\\\x]+", "a\\x\\b"), (Words{"\\x\\"}));
  EXPECT_EQ(matches("a{,2}", "a{,2}"), (Words{"a{,2}"}));  // not a quantifier: literal text
}

TEST(TokenizerRegex, UnicodeCategories) {
  EXPECT_EQ(matches("\\p{L}+", "héllo wörld 123"), (Words{"héllo", "wörld"}));
  EXPECT_EQ(matches("\\p{N}+", "x١٢٣y42"), (Words{"١٢٣", "42"}));  // Arabic-Indic digits
  EXPECT_EQ(matches("\\p{P}+", "hi, there!?"), (Words{",", "!?"}));
  EXPECT_EQ(matches("[^\\s\\p{L}\\p{N}]+", "a+b=c 🦙"), (Words{"+", "=", "🦙"}));
  EXPECT_EQ(matches("\\P{L}+", "ab12cd"), (Words{"12"}));
  EXPECT_EQ(matches("[\\p{Lu}]+", "abCDe"), (Words{"CD"}));
}

TEST(TokenizerRegex, RejectsWhatItCannotDo) {
  for (const char* bad : {"(", "a)", "[abc", "a{2", "\\p{Xx}", "(?<name>a)", "a*?", "(?:a*)*", "\\q", "*a"}) {
    EXPECT_FALSE(Regex::compile(bad).is_ok()) << bad;
  }
}

TEST(PreTokenizer, Gpt2) {
  auto pre = PreTokenizer::create("gpt-2");
  ASSERT_TRUE(pre.is_ok()) << pre.message();
  EXPECT_EQ(pre->split_raw("Hello world!  It's 2024\t\nok"),
            (Words{"Hello", " world", "!", " ", " It", "'s", " 2024", "\t", "\n", "ok"}));
}

TEST(PreTokenizer, Llama3GroupsDigitsByThree) {
  auto pre = PreTokenizer::create("llama-bpe");
  ASSERT_TRUE(pre.is_ok()) << pre.message();
  EXPECT_TRUE(pre->traits().add_bos);
  EXPECT_TRUE(pre->traits().ignore_merges);
  EXPECT_EQ(pre->split_raw("1234567 I'LL go\n\n  x"),
            (Words{"123", "456", "7", " I", "'LL", " go", "\n\n", " ", " x"}));
}

TEST(PreTokenizer, Qwen2SplitsEveryDigit) {
  auto pre = PreTokenizer::create("qwen2");
  ASSERT_TRUE(pre.is_ok()) << pre.message();
  EXPECT_EQ(pre->split_raw("abc123"), (Words{"abc", "1", "2", "3"}));
}

// o200k (gpt-oss): case runs split words, contractions stay on their word, digits in threes.
TEST(PreTokenizer, Gpt4oSplitsCaseRunsAndKeepsContractions) {
  auto pre = PreTokenizer::create("gpt-4o");
  ASSERT_TRUE(pre.is_ok()) << pre.message();
  EXPECT_FALSE(pre->traits().add_bos);
  EXPECT_EQ(pre->split_raw("HelloWorld I'm GPT4o's 1234567 x\n\ny"),
            (Words{"Hello", "World", " I'm", " GPT", "4", "o's", " ", "123", "456", "7", " x", "\n\n", "y"}));
}

TEST(PreTokenizer, ListsApplyInTurn) {
  // starcoder: digits first, one by one, then GPT-2's pattern on what is between them.
  auto pre = PreTokenizer::create("starcoder");
  ASSERT_TRUE(pre.is_ok()) << pre.message();
  EXPECT_EQ(pre->split_raw("x 42y"), (Words{"x", " ", "4", "2", "y"}));
  // deepseek-coder: CJK runs stay together; digits one by one.
  auto ds = PreTokenizer::create("deepseek-coder");
  ASSERT_TRUE(ds.is_ok()) << ds.message();
  EXPECT_EQ(ds->split_raw("我想12 ok"), (Words{"我想", "1", "2", " ok"}));
}

TEST(PreTokenizer, NonAsciiWhitespaceCountsAsSpace) {
  auto pre = PreTokenizer::create("gpt-2");
  ASSERT_TRUE(pre.is_ok());
  // U+3000 IDEOGRAPHIC SPACE before a letter: \s+(?!\S) leaves nothing for ' ?\p{L}+' to take.
  EXPECT_EQ(pre->split_raw("a\xE3\x80\x80" "b"), (Words{"a", "\xE3\x80\x80", "b"}));
}

TEST(PreTokenizer, EveryKnownNameCompiles) {
  for (const char* name :
       {"default", "llama3", "llama-v3", "llama-bpe", "falcon3", "deepseek-llm", "deepseek-coder", "deepseek-v3",
        "falcon", "mpt", "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es",
        "jina-v2-de", "jina-v2-code", "roberta-bpe", "refact", "command-r", "qwen2", "deepseek-r1-qwen", "megrez",
        "stablelm2", "olmo", "dbrx", "smaug-bpe", "poro-chat", "chatglm-bpe", "viking", "jais", "tekken", "smollm",
        "codeshell", "bloom", "gpt3-finnish", "exaone", "chameleon", "minerva-7b", "gpt-4o", "llama4"}) {
    auto pre = PreTokenizer::create(name);
    EXPECT_TRUE(pre.is_ok()) << name << ": " << pre.message();
    if (pre) {
      const std::string text = "Hello, wörld! 12345 \xF0\x9F\xA6\x99  \n\t x";
      std::string joined;
      for (const std::string& w : pre->split_raw(text)) joined += w;
      EXPECT_EQ(joined, text) << name;  // splitting never loses or adds text
    }
  }
  EXPECT_FALSE(PreTokenizer::create("no-such-thing").is_ok());
}

// Greedy runs of one class backtrack without a frame per character: a million spaces split in
// linear time and memory.
TEST(PreTokenizer, LongWhitespaceRunIsLinear) {
  for (const char* name : {"gpt-2", "llama-bpe", "qwen2", "deepseek-llm"}) {
    auto pre = PreTokenizer::create(name);
    ASSERT_TRUE(pre.is_ok());
    const std::string spaces(1000000, ' ');
    const Words words = pre->split_raw(spaces + "x");
    ASSERT_EQ(words.size(), 2u) << name;
    EXPECT_EQ(words[0].size(), spaces.size() - 1) << name;
    EXPECT_EQ(words[1], " x") << name;
  }
}

TEST(PreTokenizer, ByteEncodesWords) {
  auto pre = PreTokenizer::create("gpt-2");
  ASSERT_TRUE(pre.is_ok());
  std::vector<std::string> words;
  pre->split(" é", words);
  EXPECT_EQ(words, (Words{"\xC4\xA0\xC3\x83\xC2\xA9"}));  // "Ġ" "Ã" "©"
}

}  // namespace
}  // namespace inferscope::tok
