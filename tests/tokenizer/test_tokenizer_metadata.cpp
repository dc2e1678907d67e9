// Tokenizers built from small hand-made GGUF files: the algorithms on vocabularies whose
// answer can be worked out by hand, and bad metadata, which must give an error naming the
// file and key rather than a crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope {
namespace {

using Ids = std::vector<int32_t>;

// Assembles a GGUF v3 file with metadata only (no tensors).
class GgufBuilder {
 public:
  GgufBuilder& str(std::string key, const std::string& v) { return kv(std::move(key), 8, [&] { put_str(v); }); }
  GgufBuilder& u32(std::string key, uint32_t v) { return kv(std::move(key), 4, [&] { put(v); }); }
  GgufBuilder& i32(std::string key, int32_t v) { return kv(std::move(key), 5, [&] { put(v); }); }
  GgufBuilder& boolean(std::string key, bool v) { return kv(std::move(key), 7, [&] { put(uint8_t{v}); }); }
  GgufBuilder& strings(std::string key, const std::vector<std::string>& v) {
    return kv(std::move(key), 9, [&] {
      put(uint32_t{8});
      put(uint64_t{v.size()});
      for (const auto& s : v) put_str(s);
    });
  }
  GgufBuilder& floats(std::string key, const std::vector<float>& v) {
    return kv(std::move(key), 9, [&] {
      put(uint32_t{6});
      put(uint64_t{v.size()});
      for (float f : v) put(f);
    });
  }
  GgufBuilder& ints(std::string key, const std::vector<int32_t>& v) {
    return kv(std::move(key), 9, [&] {
      put(uint32_t{5});
      put(uint64_t{v.size()});
      for (int32_t x : v) put(x);
    });
  }

  Result<std::shared_ptr<const gguf::File>> file(const std::string& name = "synthetic.gguf") const {
    std::vector<uint8_t> bytes;
    const auto append = [&](const void* p, size_t n) {
      bytes.insert(bytes.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    };
    append("GGUF", 4);
    const uint32_t version = 3;
    const uint64_t n_tensors = 0, n_kv = count_;
    append(&version, 4);
    append(&n_tensors, 8);
    append(&n_kv, 8);
    append(body_.data(), body_.size());
    while (bytes.size() % 32 != 0) bytes.push_back(0);
    return gguf::File::parse(std::move(bytes), name);
  }

  Result<std::shared_ptr<const Tokenizer>> tokenizer() const {
    auto f = file();
    if (!f) return f.status();
    return Tokenizer::from_gguf(**f);
  }

 private:
  template <class T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    body_.insert(body_.end(), p, p + sizeof(T));
  }
  void put_str(const std::string& s) {
    put(uint64_t{s.size()});
    body_.insert(body_.end(), s.begin(), s.end());
  }
  template <class F>
  GgufBuilder& kv(std::string key, uint32_t type, F value) {
    put_str(key);
    put(type);
    value();
    ++count_;
    return *this;
  }

  std::vector<uint8_t> body_;
  uint64_t count_ = 0;
};

const std::string kSp = "\xE2\x96\x81";  // U+2581

// A SentencePiece vocabulary: 0 <unk>, 1 <s>, 2 </s>, then pieces with scores, and byte
// tokens for 'x' and 0xC3/0xA9 only.
GgufBuilder spm_vocab() {
  GgufBuilder b;
  b.str("general.architecture", "llama");
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens",
            {"<unk>", "<s>", "</s>", kSp, "a", "b", "c", kSp + "a", "ab", "bc", kSp + "ab", "<0x78>", "<0xC3>", "<0xA9>"});
  b.floats("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -2, -2, -3, -1, -0.5f, -4, 0, 0, 0});
  b.ints("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6});
  return b;
}

TEST(TokenizerSynthetic, SentencePieceMergesByScore) {
  auto tok = spm_vocab().tokenizer();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  // "▁abc": the best pair first is "bc" (-0.5) over "ab" (-1) and "▁a" (-3): ▁ a bc, then ▁a.
  EXPECT_EQ((*tok)->encode("abc", false, false), (Ids{7, 9}));
  // "▁ab": "ab" (-1) then "▁ab" (-4).
  EXPECT_EQ((*tok)->encode("ab", true, false), (Ids{1, 10}));
  // No piece for 'x' or 'é' (C3 A9): byte fallback.
  EXPECT_EQ((*tok)->encode("x\xC3\xA9", false, false), (Ids{3, 11, 12, 13}));
  EXPECT_EQ((*tok)->decode(Ids{3, 11, 12, 13}), " x\xC3\xA9");
  // A byte with no <0xXX> token becomes <unk>.
  EXPECT_EQ((*tok)->encode("y", false, false), (Ids{3, 0}));
}

TEST(TokenizerSynthetic, SentencePieceWithoutSpacePrefix) {
  auto b = spm_vocab();
  b.boolean("tokenizer.ggml.add_space_prefix", false);
  b.boolean("tokenizer.ggml.add_eos_token", true);
  auto tok = b.tokenizer();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  EXPECT_EQ((*tok)->encode("ab", true, false), (Ids{1, 8, 2}));
}

// A byte-level BPE vocabulary over "l", "o", "w", "Ġ" with merges l+o, lo+w, Ġ+lo.
GgufBuilder bpe_vocab() {
  GgufBuilder b;
  b.str("general.architecture", "gpt2");
  b.str("tokenizer.ggml.model", "gpt2");
  b.str("tokenizer.ggml.pre", "gpt-2");
  b.strings("tokenizer.ggml.tokens", {"l", "o", "w", "\xC4\xA0", "lo", "low", "\xC4\xA0lo", "<|endoftext|>"});
  b.ints("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 1, 1, 3});
  b.strings("tokenizer.ggml.merges", {"l o", "lo w", "\xC4\xA0 lo"});
  b.u32("tokenizer.ggml.bos_token_id", 7);
  b.u32("tokenizer.ggml.eos_token_id", 7);
  return b;
}

TEST(TokenizerSynthetic, BytePairMergesByRank) {
  auto tok = bpe_vocab().tokenizer();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  // "low": l+o (rank 0), then lo+w (1). "Ġlow": l+o, then lo+w (rank 1) wins over Ġ+lo (2),
  // which is stale by the time it comes up.
  EXPECT_EQ((*tok)->encode("low low", false, false), (Ids{5, 3, 5}));
  EXPECT_EQ((*tok)->decode(Ids{5, 3, 5}), "low low");
  EXPECT_EQ((*tok)->encode(" lo", false, false), (Ids{6}));
  // Characters that are not tokens are dropped, as llama.cpp does ('x' is not in the vocabulary).
  EXPECT_EQ((*tok)->encode("lox", false, false), (Ids{4}));
  EXPECT_FALSE((*tok)->add_bos());
  EXPECT_EQ((*tok)->encode("<|endoftext|>", false, true), (Ids{7}));
  EXPECT_TRUE((*tok)->is_end_of_generation(7));
}

// Harmony's special tokens (gpt-oss's o200k_harmony vocabulary), as llama.cpp treats them: the
// reply ends at <|return|> or <|call|>, not at <|end|>, which only closes a message; the
// message markers and <|end|> print in generated text and are cut out of plain text. Without
// <|return|> and <|call|>, <|end|> ends generation as in Phi-3.
TEST(TokenizerSynthetic, HarmonyEndsAtReturnOrCallNotEnd) {
  const std::vector<std::string> harmony = {"l", "o", "<|start|>", "<|channel|>", "<|message|>", "<|end|>",
                                            "<|return|>", "<|call|>", "<|endoftext|>"};
  GgufBuilder h;
  h.str("general.architecture", "gpt-oss");
  h.str("tokenizer.ggml.model", "gpt2");
  h.str("tokenizer.ggml.pre", "gpt-4o");
  h.strings("tokenizer.ggml.tokens", harmony);
  h.ints("tokenizer.ggml.token_type", {1, 1, 3, 3, 3, 3, 3, 3, 3});
  h.strings("tokenizer.ggml.merges", {"l o"});
  h.u32("tokenizer.ggml.eos_token_id", 6);
  auto tok = h.tokenizer();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  EXPECT_TRUE((*tok)->is_end_of_generation(6));   // <|return|>
  EXPECT_TRUE((*tok)->is_end_of_generation(7));   // <|call|>
  EXPECT_FALSE((*tok)->is_end_of_generation(5));  // <|end|>
  EXPECT_FALSE((*tok)->is_end_of_generation(3));  // <|channel|>
  EXPECT_FALSE((*tok)->is_hidden_in_generated_text(3));
  EXPECT_FALSE((*tok)->is_hidden_in_generated_text(5));
  EXPECT_TRUE((*tok)->is_hidden_in_generated_text(6));
  EXPECT_EQ((*tok)->encode("<|channel|>l<|end|>", false, false), (Ids{3, 0, 5})) << "cut out of plain text";

  GgufBuilder phi;
  phi.str("general.architecture", "phi3");
  phi.str("tokenizer.ggml.model", "gpt2");
  phi.strings("tokenizer.ggml.tokens", {"l", "o", "<|end|>", "<|endoftext|>"});
  phi.ints("tokenizer.ggml.token_type", {1, 1, 3, 3});
  phi.strings("tokenizer.ggml.merges", {"l o"});
  auto phi_tok = phi.tokenizer();
  ASSERT_TRUE(phi_tok.is_ok()) << phi_tok.message();
  EXPECT_TRUE((*phi_tok)->is_end_of_generation(2));
}

void expect_error(const GgufBuilder& b, const std::string& key) {
  auto tok = b.tokenizer();
  ASSERT_FALSE(tok.is_ok());
  EXPECT_NE(tok.message().find("synthetic.gguf"), std::string::npos) << tok.message();
  EXPECT_NE(tok.message().find(key), std::string::npos) << tok.message();
}

TEST(TokenizerSynthetic, ScoresOfWrongLength) {
  GgufBuilder b;
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  b.floats("tokenizer.ggml.scores", {0, 0, 0});
  expect_error(b, "tokenizer.ggml.scores");
}

TEST(TokenizerSynthetic, ScoresOfWrongType) {
  GgufBuilder b;
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  b.strings("tokenizer.ggml.scores", {"0", "0", "0", "0"});
  expect_error(b, "tokenizer.ggml.scores");
}

TEST(TokenizerSynthetic, TokenTypesOfWrongLength) {
  GgufBuilder b;
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  b.ints("tokenizer.ggml.token_type", {2, 3, 3, 1, 1});
  expect_error(b, "tokenizer.ggml.token_type");
}

TEST(TokenizerSynthetic, SpecialIdOutsideVocabulary) {
  GgufBuilder b;
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  b.u32("tokenizer.ggml.bos_token_id", 4);
  expect_error(b, "tokenizer.ggml.bos_token_id");
}

TEST(TokenizerSynthetic, NoneMarkerAndOptionalIdsAreTolerated) {
  GgufBuilder b;
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  b.u32("tokenizer.ggml.seperator_token_id", 0xFFFFFFFFu);  // "none", as stories260K has
  b.u32("tokenizer.ggml.padding_token_id", 4);              // unused by the tokenizer: a warning
  b.boolean("tokenizer.ggml.add_bos_token", false);
  auto tok = b.tokenizer();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  EXPECT_EQ((*tok)->load_warnings().size(), 1u);
  EXPECT_FALSE((*tok)->add_bos());
  // No "▁" piece and no byte tokens: each byte of U+2581 falls back to <unk>.
  EXPECT_EQ((*tok)->encode("a", true, false), (Ids{0, 0, 0, 3}));
}

TEST(TokenizerSynthetic, BadOrMissingKeys) {
  {
    GgufBuilder b;
    b.strings("tokenizer.ggml.tokens", {"a"});
    expect_error(b, "tokenizer.ggml.model");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "llama");
    expect_error(b, "tokenizer.ggml.tokens");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "sentencepiece");
    b.strings("tokenizer.ggml.tokens", {"a"});
    expect_error(b, "tokenizer.ggml.model");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "t5");
    b.strings("tokenizer.ggml.tokens", {"a"});
    expect_error(b, "tokenizer.ggml.model");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "llama");
    b.strings("tokenizer.ggml.tokens", {});
    expect_error(b, "tokenizer.ggml.tokens");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "llama");
    b.strings("tokenizer.ggml.tokens", {"a"});
    b.str("tokenizer.ggml.bos_token_id", "1");
    expect_error(b, "tokenizer.ggml.bos_token_id");
  }
}

TEST(TokenizerSynthetic, BadBpeMetadata) {
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "gpt2");
    b.str("tokenizer.ggml.pre", "no-such-pre-tokenizer");
    b.strings("tokenizer.ggml.tokens", {"a", "b", "ab"});
    b.strings("tokenizer.ggml.merges", {"a b"});
    expect_error(b, "tokenizer.ggml.pre");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "gpt2");
    b.strings("tokenizer.ggml.tokens", {"a", "b", "ab"});
    expect_error(b, "tokenizer.ggml.merges");
  }
  {
    GgufBuilder b;
    b.str("tokenizer.ggml.model", "gpt2");
    b.strings("tokenizer.ggml.tokens", {"a", "b", "ab"});
    b.strings("tokenizer.ggml.merges", {"a b", "ab"});
    expect_error(b, "tokenizer.ggml.merges");
  }
}

// Odd but well-formed metadata: unknown type values, empty and repeated texts, a malformed
// byte-token name. Loading and round trips must not crash.
TEST(TokenizerSynthetic, OddTokenTypesAndTexts) {
  GgufBuilder b;
  b.str("tokenizer.ggml.model", "llama");
  b.strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "", "a", "a", "<0xZZ>", "\xFF"});
  b.ints("tokenizer.ggml.token_type", {2, 3, 3, 99, -7, 1, 6, 4});
  auto tok = b.tokenizer();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  const Ids ids = (*tok)->encode("aa\xFF<0xZZ>", true, true);
  EXPECT_FALSE(ids.empty());
  for (int32_t id = -2; id < (*tok)->n_vocab() + 2; ++id) (void)(*tok)->token_to_piece(id);
  (void)(*tok)->decode(ids);
  EXPECT_EQ((*tok)->token_to_piece(6), "<0xZZ>");
}

}  // namespace
}  // namespace inferscope
