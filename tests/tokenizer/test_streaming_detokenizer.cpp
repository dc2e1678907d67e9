// StreamingDetokenizer: text comes out as soon as it is complete UTF-8, never split mid-character.
#include <gtest/gtest.h>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/testdata.h"
#include "tests/support/tokenizers.h"

namespace inferscope {
namespace {

std::shared_ptr<const Tokenizer> load(const std::string& relative) { return testing::load_tokenizer(relative); }

const std::string kLlama = "\xF0\x9F\xA6\x99";  // U+1F999, four bytes

std::string stream(const Tokenizer& tok, const std::vector<int32_t>& ids, std::vector<std::string>* parts) {
  StreamingDetokenizer detok(tok);
  std::string all;
  for (int32_t id : ids) {
    std::string part = detok.push(id);
    if (parts) parts->push_back(part);
    all += part;
  }
  all += detok.flush();
  return all;
}

TEST(TokenizerStreaming, HoldsEmojiSplitAcrossByteTokens) {
  auto tok = load("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  ASSERT_TRUE(tok);
  // Llama 2 has no piece for the emoji: "▁" then four <0xXX> byte tokens.
  const std::vector<int32_t> ids = tok->encode(kLlama + "!", false, false);
  ASSERT_EQ(ids.size(), 6u);
  std::vector<std::string> parts;
  EXPECT_EQ(stream(*tok, ids, &parts), " " + kLlama + "!");
  EXPECT_EQ(parts, (std::vector<std::string>{" ", "", "", "", kLlama, "!"}));
}

TEST(TokenizerStreaming, HoldsCharactersSplitAcrossByteLevelTokens) {
  auto tok = load("llama.cpp-vocab/ggml-vocab-gpt-2.gguf");
  ASSERT_TRUE(tok);
  const std::string text = "Hello " + kLlama + " \xE4\xBD\xA0\xE5\xA5\xBD world";  // 你好
  const std::vector<int32_t> ids = tok->encode(text, false, false);
  std::vector<std::string> parts;
  EXPECT_EQ(stream(*tok, ids, &parts), text);
  for (const std::string& part : parts) {
    // Every part is complete UTF-8 on its own.
    size_t i = 0;
    while (i < part.size()) {
      const auto c = static_cast<unsigned char>(part[i]);
      const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      ASSERT_LE(i + len, part.size()) << "part ends inside a character";
      i += len;
    }
  }
}

int32_t find_token(const Tokenizer& tok, const std::string& text) {
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.token_text(id) == text) return id;
  }
  return -1;
}

TEST(TokenizerStreaming, ReplacesBytesThatCannotBecomeValid) {
  auto tok = load("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  ASSERT_TRUE(tok);
  const int32_t f0 = find_token(*tok, "<0xF0>");
  const int32_t a9 = find_token(*tok, "<0xA9>");
  const int32_t a = find_token(*tok, "a");
  ASSERT_GE(f0, 0);
  ASSERT_GE(a9, 0);
  ASSERT_GE(a, 0);
  StreamingDetokenizer detok(*tok);
  // An incomplete tail comes out replaced at flush.
  EXPECT_EQ(detok.push(f0), "");
  EXPECT_EQ(detok.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(detok.flush(), "");
  // A continuation byte with no lead is replaced at once; the stream carries on.
  EXPECT_EQ(detok.push(a9), "\xEF\xBF\xBD");
  EXPECT_EQ(detok.push(a), "a");
  // A lead byte followed by something that is not a continuation.
  EXPECT_EQ(detok.push(f0), "");
  EXPECT_EQ(detok.push(a), "\xEF\xBF\xBD" "a");
  EXPECT_EQ(detok.flush(), "");
}

TEST(TokenizerStreaming, HidesControlTokensInGeneratedText) {
  auto tok = load("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  ASSERT_TRUE(tok);
  const int32_t a = find_token(*tok, "a");
  ASSERT_GE(a, 0);
  // BOS (<s>, id 1) is a control token; <unk> (id 0) is not hidden (llama.cpp prints it).
  StreamingDetokenizer shown(*tok);
  EXPECT_EQ(shown.push(1), "<s>");
  StreamingDetokenizer hidden(*tok, StreamingDetokenizer::ControlTokens::Hidden);
  EXPECT_EQ(hidden.push(1), "");
  EXPECT_EQ(hidden.push(a), "a");
  EXPECT_FALSE(tok->is_hidden_in_generated_text(0));
  EXPECT_FALSE(tok->is_hidden_in_generated_text(a));
}

}  // namespace
}  // namespace inferscope
