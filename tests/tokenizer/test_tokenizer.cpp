// Tokenizer behaviour on real model files: BOS/EOS handling, special tokens, pieces and
// decoding against llama.cpp's reference runs, and load time of a large vocabulary.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/testdata.h"
#include "tests/support/tokenizers.h"

namespace inferscope {
namespace {

std::shared_ptr<const Tokenizer> load(const std::string& relative) { return testing::load_tokenizer(relative); }

nlohmann::json load_json(const std::string& relative) {
  std::ifstream in(testing::testdata(relative));
  return nlohmann::json::parse(in);
}

using Ids = std::vector<int32_t>;

// Time limits hold for optimized builds; unoptimized or sanitized builds only report the time.
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
constexpr bool kCheckTimes = true;
#else
constexpr bool kCheckTimes = false;
#endif

TEST(Tokenizer, Stories260KPromptWithBos) {
  auto tok = load("stories260K.gguf");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->kind(), TokenizerKind::SentencePiece);
  EXPECT_EQ(tok->model_name(), "llama");
  EXPECT_EQ(tok->pre_name(), "default");
  EXPECT_EQ(tok->n_vocab(), 512);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_TRUE(tok->add_bos());
  EXPECT_FALSE(tok->add_eos());
  EXPECT_EQ(tok->encode("Once upon a time", true, false), (Ids{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok->encode("Once upon a time", false, false), (Ids{403, 407, 261, 378}));
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_FALSE(tok->is_end_of_generation(1));
}

TEST(Tokenizer, Llama2TinyRandomPromptWithBos) {
  auto tok = load("llama-2-tiny-random.gguf");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->n_vocab(), 32000);
  EXPECT_EQ(tok->encode("Once upon a time", true, false), (Ids{1, 9038, 2501, 263, 931}));
}

// Every reference run of llama.cpp: the prompt ids, each generated token's piece, and the
// generated text as the decoding of the generated ids.
TEST(Tokenizer, MatchesLlamaCppReferenceRuns) {
  const std::pair<const char*, const char*> runs[] = {
      {"stories260K.gguf", "reference/stories260K.llama.cpp-b4747.json"},
      {"llama-2-tiny-random.gguf", "reference/llama-2-tiny-random.llama.cpp-b4747.json"},
      {"derived/stories260K-moe4-identical.gguf", "reference/stories260K-moe4-identical.llama.cpp-b4747.json"},
      {"derived/stories260K-moe4-distinct.gguf", "reference/stories260K-moe4-distinct.llama.cpp-b4747.json"},
      {"derived/stories260K-qwen2moe.gguf", "reference/stories260K-qwen2moe.llama.cpp-b4747.json"},
  };
  for (const auto& [model, reference] : runs) {
    SCOPED_TRACE(model);
    auto tok = load(model);
    ASSERT_TRUE(tok);
    const nlohmann::json ref = load_json(reference);
    const bool add_bos = ref["add_bos"].get<bool>();
    EXPECT_EQ(tok->encode(ref["prompt"].get<std::string>(), add_bos, false), ref["prompt_ids"].get<Ids>());
    Ids generated;
    for (const auto& step : ref["steps"]) {
      const int32_t id = step["id"].get<int32_t>();
      generated.push_back(id);
      EXPECT_EQ(tok->token_to_piece(id), step["piece"].get<std::string>()) << "token " << id;
    }
    EXPECT_EQ(tok->decode(generated), ref["greedy_text"].get<std::string>());
  }
}

TEST(Tokenizer, BertMatchesLlamaCppWithClsSep) {
  auto tok = load("derived/tiny-random-bert-bge.gguf");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->kind(), TokenizerKind::WordPiece);
  const nlohmann::json ref = load_json("reference/tiny-random-bert-bge.llama.cpp-b4747.json");
  ASSERT_TRUE(ref["add_special"].get<bool>());
  for (const auto& sentence : ref["sentences"]) {
    const std::string text = sentence["text"].get<std::string>();
    EXPECT_EQ(tok->encode(text, true, false), sentence["ids"].get<Ids>()) << text;
  }
}

TEST(Tokenizer, WordPieceDecodeJoinsContinuations) {
  auto tok = load("llama.cpp-vocab/ggml-vocab-bert-bge.gguf");
  ASSERT_TRUE(tok);
  const Ids ids = tok->encode("Hello world", true, false);
  EXPECT_EQ(ids, (Ids{101, 7592, 2088, 102}));
  EXPECT_EQ(tok->decode(ids), "[CLS] hello world [SEP]");
  const Ids word = tok->encode("Tokenization, naïve CAFÉ", false, false);
  EXPECT_GT(word.size(), 4u);  // "token" "##ization" ...
  EXPECT_EQ(tok->decode(word), "tokenization , naive cafe");
  EXPECT_EQ(tok->token_to_piece(7592), " hello");
}

TEST(Tokenizer, OlderVocabulariesLoad) {
  auto baichuan = load("llama.cpp-vocab/ggml-vocab-baichuan.gguf");
  ASSERT_TRUE(baichuan);
  EXPECT_EQ(baichuan->kind(), TokenizerKind::SentencePiece);
  EXPECT_EQ(baichuan->n_vocab(), 64000);
  EXPECT_EQ(baichuan->pre_name(), "default");
  const Ids ids = baichuan->encode("Hello world! 你好", true, false);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(baichuan->decode(Ids(ids.begin() + 1, ids.end())), " Hello world! 你好");

  auto neox = load("llama.cpp-vocab/ggml-vocab-gpt-neox.gguf");
  ASSERT_TRUE(neox);
  EXPECT_EQ(neox->kind(), TokenizerKind::BytePairEncoding);
  EXPECT_EQ(neox->pre_name(), "default");  // no tokenizer.ggml.pre in this file
  EXPECT_EQ(neox->n_vocab(), 50432);
  EXPECT_EQ(neox->bos_id(), 0);
  EXPECT_FALSE(neox->add_bos());
  const std::string text = "Hello world!    Indented code 12345 \xF0\x9F\xA6\x99";
  EXPECT_EQ(neox->decode(neox->encode(text, true, false)), text);
}

TEST(Tokenizer, ByteLevelBpeSpecialTokens) {
  auto tok = load("derived/ggml-vocab-llama-bpe.gguf");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->kind(), TokenizerKind::BytePairEncoding);
  EXPECT_EQ(tok->pre_name(), "llama-bpe");
  EXPECT_TRUE(tok->add_bos());
  EXPECT_EQ(tok->bos_id(), 128000);
  EXPECT_EQ(tok->eos_id(), 128001);
  EXPECT_EQ(tok->eot_id(), 128009);  // found by its text <|eot_id|>
  EXPECT_TRUE(tok->is_end_of_generation(128001));
  EXPECT_TRUE(tok->is_end_of_generation(128009));
  EXPECT_FALSE(tok->is_end_of_generation(128000));

  const std::string text = "<|begin_of_text|>Hello<|eot_id|>";
  EXPECT_EQ(tok->encode(text, false, true), (Ids{128000, 9906, 128009}));
  EXPECT_EQ(tok->encode(text, true, true), (Ids{128000, 128000, 9906, 128009}));
  const Ids plain = tok->encode(text, false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 128000), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 128009), 0);
  EXPECT_EQ(tok->decode(plain), text);
  EXPECT_EQ(tok->encode("Hello world", true, false), (Ids{128000, 9906, 1917}));
  EXPECT_EQ(tok->token_to_piece(128009), "<|eot_id|>");
  EXPECT_EQ(tok->token_text(1917), "\xC4\xA0world");  // "Ġworld"
  EXPECT_EQ(tok->token_to_piece(1917), " world");
  EXPECT_EQ(tok->token_to_piece(-1), "");
  EXPECT_EQ(tok->token_to_piece(tok->n_vocab()), "");
  EXPECT_FALSE(tok->is_valid(tok->n_vocab()));
}

TEST(Tokenizer, QwenEndOfTurn) {
  auto tok = load("derived/ggml-vocab-qwen2.gguf");
  ASSERT_TRUE(tok);
  EXPECT_FALSE(tok->add_bos());
  EXPECT_EQ(tok->encode("Hi", true, false), tok->encode("Hi", false, false));
  EXPECT_EQ(tok->eot_id(), 151645);  // <|im_end|>
  EXPECT_TRUE(tok->is_end_of_generation(151643));
  EXPECT_TRUE(tok->is_end_of_generation(151645));
  EXPECT_EQ(tok->encode("<|im_start|>user\nHi<|im_end|>", false, true).front(), 151644);
  EXPECT_EQ(tok->token_to_piece(151700), "");  // [PAD151700]: unused
}

TEST(Tokenizer, SentencePieceSpecialTokens) {
  auto tok = load("llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
  ASSERT_TRUE(tok);
  // A special token is followed by a prefix space, as at the start of text.
  EXPECT_EQ(tok->encode("<s>Hello", false, true), (Ids{1, 15043}));
  const Ids plain = tok->encode("<s>Hello", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_EQ(tok->encode("Hello", true, false), (Ids{1, 15043}));
  EXPECT_EQ(tok->encode("", true, false), (Ids{1}));
  EXPECT_EQ(tok->encode("", false, false), Ids{});
  EXPECT_EQ(tok->token_to_piece(13), "\n");  // <0x0A>
  EXPECT_EQ(tok->token_to_piece(15043), " Hello");
  EXPECT_EQ(tok->token_to_piece(1), "<s>");
  EXPECT_EQ(tok->decode(tok->encode("\xF0\x9F\xA6\x99 llama", false, false)), " \xF0\x9F\xA6\x99 llama");
}

TEST(Tokenizer, UserDefinedTokensAreSplitWithoutParseSpecial) {
  // Phi-3 types </s> as user-defined: it is cut out of plain text too, and (as llama.cpp does
  // for phi-3) eats the whitespace after it.
  auto tok = load("llama.cpp-vocab/ggml-vocab-phi-3.gguf");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->eot_id(), 32007);  // <|end|>
  EXPECT_TRUE(tok->is_end_of_generation(32000));
  const Ids ids = tok->encode("Hi</s>   there", false, false);
  EXPECT_EQ(ids, tok->encode("Hi</s>there", false, false));
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 1);
  // The text after it starts a new fragment with its own prefix space (llama.cpp's SPM flow), so
  // decode gives spaces the text did not have (what fuzz_tokenizer's round trip allows for).
  EXPECT_EQ(tok->decode(tok->encode("Hi</s>there", false, false)), " Hi</s> there");
  // Control tokens need parse_special.
  EXPECT_EQ(tok->encode("<|assistant|>", false, true), (Ids{32001}));
  EXPECT_NE(tok->encode("<|assistant|>", false, false), (Ids{32001}));
}

TEST(Tokenizer, RealVocabulariesLoadWithoutWarnings) {
  for (const char* name : {"llama.cpp-vocab/ggml-vocab-baichuan.gguf", "llama.cpp-vocab/ggml-vocab-gpt-neox.gguf",
                           "llama.cpp-vocab/ggml-vocab-starcoder.gguf", "llama.cpp-vocab/ggml-vocab-phi-3.gguf",
                           "stories260K.gguf", "derived/tiny-random-bert-bge.gguf"}) {
    auto tok = load(name);
    ASSERT_TRUE(tok) << name;
    for (const std::string& w : tok->load_warnings()) ADD_FAILURE() << name << ": " << w;
  }
}

TEST(Tokenizer, LoadsLargeVocabularyQuickly) {
  auto file = gguf::File::open(testing::testdata("derived/ggml-vocab-qwen2.gguf"));
  ASSERT_TRUE(file.is_ok()) << file.message();
  const auto start = std::chrono::steady_clock::now();
  auto tok = Tokenizer::from_gguf(**file);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(tok.is_ok()) << tok.message();
  EXPECT_EQ((*tok)->n_vocab(), 151936);
  RecordProperty("load_ms", std::to_string(ms));
  if (kCheckTimes) {
    EXPECT_LT(ms, 1000.0) << "151k tokens + 151k merges took " << ms << " ms";
  }
}

TEST(Tokenizer, LongInputsStayFast) {
  auto tok = load("derived/ggml-vocab-llama-bpe.gguf");
  ASSERT_TRUE(tok);
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "The quick brown fox jumps over the lazy dog 12345.\n    ";
  text += std::string(20000, ' ') + "end";
  const auto start = std::chrono::steady_clock::now();
  const Ids ids = tok->encode(text, false, false);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(tok->decode(ids), text);
  RecordProperty("encode_ms", std::to_string(ms));
  if (kCheckTimes) {
    EXPECT_LT(ms, 2000.0) << ids.size() << " tokens took " << ms << " ms";
  }
}

}  // namespace
}  // namespace inferscope
