// Gemma's SentencePiece specifics on a small synthetic vocabulary (no Gemma vocabulary is in the
// test data): the key layout of llama.cpp's SPM vocab files (ggml-vocab-llama-spm.gguf) with
// Gemma's special ids (PAD 0, EOS 1, BOS 2, UNK 3, <start_of_turn> 106, <end_of_turn> 107, "\n"
// 108, as in Gemma's tokenizer) and add_space_prefix = false. Every expected id is derived by
// hand from the table below and SentencePiece's merge rule (merge the adjacent pair whose
// concatenation is the highest-scoring token, leftmost first; leftover characters fall back to
// <0xXX> byte tokens).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope {
namespace {

using Ids = std::vector<int32_t>;

// tokenizer.ggml.token_type values
constexpr int32_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;

constexpr int32_t kPad = 0, kEos = 1, kBos = 2, kUnk = 3, kMask = 4;
constexpr int32_t kStartOfTurn = 106, kEndOfTurn = 107, kNewline = 108;
constexpr int32_t kByte0 = 109;  // <0x00>; <0xXX> is kByte0 + 0xXX
constexpr int32_t byte_id(int b) { return kByte0 + b; }

// Normal pieces after the byte tokens, with their scores (higher merges first).
struct Piece {
  const char* text;
  float score;
};
constexpr Piece kPieces[] = {
    {"\xE2\x96\x81", -100.0f},  // 365 "▁"
    {"us", -1.0f},              // 366
    {"er", -2.0f},              // 367
    {"user", -0.5f},            // 368   u s e r -> us e r -> us er -> user
    {"mo", -3.0f},              // 369
    {"de", -4.0f},              // 370
    {"del", -5.0f},             // 371
    {"model", -2.5f},           // 372   m o d e l -> mo d e l -> mo de l -> mo del -> model
    {"He", -6.0f},              // 373
    {"ll", -7.0f},              // 374
    {"llo", -8.0f},             // 375
    {"Hello", -9.0f},           // 376   H e l l o -> He l l o -> He ll o -> He llo -> Hello
    {"\xE2\x96\x81w", -10.0f},  // 377 "▁w"
    {"or", -11.0f},             // 378
    {"ld", -12.0f},             // 379
    {"orld", -13.0f},           // 380
    {"\xE2\x96\x81world", -14.0f},  // 381 "▁world": ▁ w o r l d -> ▁w or ld -> ▁w orld -> ▁world
};
constexpr int32_t kSpace = 365, kUser = 368, kModel = 372, kHello = 376, kWorld = 381;
constexpr int32_t kVocabSize = 382;

struct VocabOptions {
  int32_t end_of_turn_type = kControl;
  int32_t start_of_turn_type = kControl;
  bool with_template = true;
};

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/" + name);
  EXPECT_TRUE(in.good()) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::shared_ptr<const gguf::File> make_gemma_vocab(const VocabOptions& options = {}) {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  const auto add = [&](std::string text, float score, int32_t type) {
    tokens.push_back(std::move(text));
    scores.push_back(score);
    types.push_back(type);
  };
  add("<pad>", 0.0f, kControl);
  add("<eos>", 0.0f, kControl);
  add("<bos>", 0.0f, kControl);
  add("<unk>", 0.0f, kUnknown);
  add("<mask>", 0.0f, kUserDefined);
  add("[@BOS@]", 0.0f, kUserDefined);
  // Gemma's GGUFs type the <unusedN> placeholders as control tokens (llama.cpp logs them as
  // "control token ... is not marked as EOG"), so they are special texts too.
  for (int i = 6; i < kStartOfTurn; ++i) add("<unused" + std::to_string(i - 6) + ">", 0.0f, kControl);
  add("<start_of_turn>", 0.0f, options.start_of_turn_type);
  add("<end_of_turn>", 0.0f, options.end_of_turn_type);
  add("\n", 0.0f, kNormal);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0.0f, kByte);
  for (const Piece& p : kPieces) add(p.text, p.score, kNormal);
  EXPECT_EQ(tokens.size(), static_cast<size_t>(kVocabSize));

  gguf::Writer w;
  w.add_string("general.architecture", "gemma");
  w.add_string("general.name", "gemma-synthetic-vocab");
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string("tokenizer.ggml.pre", "default");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_f32_array("tokenizer.ggml.scores", scores);
  w.add_i32_array("tokenizer.ggml.token_type", types);
  w.add_u32("tokenizer.ggml.bos_token_id", kBos);
  w.add_u32("tokenizer.ggml.eos_token_id", kEos);
  w.add_u32("tokenizer.ggml.unknown_token_id", kUnk);
  w.add_u32("tokenizer.ggml.padding_token_id", kPad);
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_bool("tokenizer.ggml.add_eos_token", false);
  w.add_bool("tokenizer.ggml.add_space_prefix", false);
  if (options.with_template) w.add_string("tokenizer.chat_template", fixture("gemma-it.jinja"));
  auto bytes = w.write_to_memory();
  EXPECT_TRUE(bytes.is_ok()) << bytes.message();
  if (!bytes) return nullptr;
  auto file = gguf::File::parse(std::move(*bytes), "gemma-synthetic.gguf");
  EXPECT_TRUE(file.is_ok()) << file.message();
  return file ? *file : nullptr;
}

std::shared_ptr<const Tokenizer> make_tokenizer(const gguf::File& file) {
  auto tok = Tokenizer::from_gguf(file);
  EXPECT_TRUE(tok.is_ok()) << tok.message();
  return tok ? *tok : nullptr;
}

class GemmaTokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = make_gemma_vocab();
    ASSERT_TRUE(file_);
    tok_ = make_tokenizer(*file_);
    ASSERT_TRUE(tok_);
  }
  std::shared_ptr<const gguf::File> file_;
  std::shared_ptr<const Tokenizer> tok_;
};

TEST_F(GemmaTokenizer, VocabularyTable) {
  EXPECT_EQ(tok_->n_vocab(), kVocabSize);
  EXPECT_EQ(tok_->kind(), TokenizerKind::SentencePiece);
  EXPECT_EQ(tok_->token_text(kSpace), "\xE2\x96\x81");
  EXPECT_EQ(tok_->token_text(kUser), "user");
  EXPECT_EQ(tok_->token_text(kModel), "model");
  EXPECT_EQ(tok_->token_text(kHello), "Hello");
  EXPECT_EQ(tok_->token_text(kWorld), "\xE2\x96\x81world");
  EXPECT_EQ(tok_->token_text(byte_id(0x41)), "<0x41>");
  EXPECT_TRUE(tok_->load_warnings().empty());
}

TEST_F(GemmaTokenizer, SpecialIds) {
  EXPECT_EQ(tok_->bos_id(), kBos);
  EXPECT_EQ(tok_->eos_id(), kEos);
  EXPECT_TRUE(tok_->add_bos());
  EXPECT_FALSE(tok_->add_eos());
  // EOT by its text (the file names none): <end_of_turn>, not <start_of_turn> or <eos>.
  EXPECT_EQ(tok_->eot_id(), kEndOfTurn);
  EXPECT_TRUE(tok_->is_end_of_generation(kEndOfTurn));
  EXPECT_TRUE(tok_->is_end_of_generation(kEos));
  EXPECT_FALSE(tok_->is_end_of_generation(kStartOfTurn));
  EXPECT_FALSE(tok_->is_end_of_generation(kBos));
  EXPECT_FALSE(tok_->is_end_of_generation(kPad));
  EXPECT_TRUE(tok_->is_control(kStartOfTurn));
  EXPECT_TRUE(tok_->is_control(kEndOfTurn));
}

TEST_F(GemmaTokenizer, NoLeadingSpaceIsInserted) {
  EXPECT_EQ(tok_->encode("Hello", false, false), (Ids{kHello}));
  EXPECT_EQ(tok_->encode("user", false, false), (Ids{kUser}));
  EXPECT_EQ(tok_->encode("Hello world", false, false), (Ids{kHello, kWorld}));
  // A space the text has is kept (and not doubled).
  EXPECT_EQ(tok_->encode(" Hello", false, false), (Ids{kSpace, kHello}));
  EXPECT_EQ(tok_->encode(" world", false, false), (Ids{kWorld}));
  // Not after a special token either.
  EXPECT_EQ(tok_->encode("<start_of_turn>user", false, true), (Ids{kStartOfTurn, kUser}));
  // Pieces decode to the text as it was: nothing to strip.
  EXPECT_EQ(tok_->decode(Ids{kHello, kWorld}), "Hello world");
  EXPECT_EQ(tok_->decode(tok_->encode(" Hello world", false, false)), " Hello world");
}

TEST_F(GemmaTokenizer, BosIsAddedOnce) {
  EXPECT_EQ(tok_->encode("Hello", true, false), (Ids{kBos, kHello}));
  EXPECT_EQ(tok_->encode("", true, false), (Ids{kBos}));
  EXPECT_EQ(tok_->encode("", false, false), Ids{});
  // "<bos>" in the text is the control token only with parse_special.
  EXPECT_EQ(tok_->encode("<bos>Hello", false, true), (Ids{kBos, kHello}));
  EXPECT_EQ(tok_->decode(Ids{kBos, kHello}), "<bos>Hello");
}

TEST_F(GemmaTokenizer, SpecialTokensAreRecognisedInText) {
  EXPECT_EQ(tok_->encode("<start_of_turn>model\nHello<end_of_turn>\n", false, true),
            (Ids{kStartOfTurn, kModel, kNewline, kHello, kEndOfTurn, kNewline}));
  // Without parse_special, control-token texts are plain text: characters and bytes.
  const Ids plain = tok_->encode("<start_of_turn>model\nHello<end_of_turn>\n", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kStartOfTurn), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kEndOfTurn), 0);
  EXPECT_EQ(tok_->decode(plain), "<start_of_turn>model\nHello<end_of_turn>\n");
  // "<end_of_turn>": no two adjacent characters form a piece and no character is one, so every
  // character becomes its byte token.
  EXPECT_EQ(tok_->encode("<end_of_turn>", false, false),
            (Ids{byte_id('<'), byte_id('e'), byte_id('n'), byte_id('d'), byte_id('_'), byte_id('o'), byte_id('f'),
                 byte_id('_'), byte_id('t'), byte_id('u'), byte_id('r'), byte_id('n'), byte_id('>')}));
  // Longest match first: "<unused10>" is not "<unused1>" followed by "0>".
  EXPECT_EQ(tok_->encode("<unused10><unused1>", false, true), (Ids{6 + 10, 6 + 1}));
  // User-defined tokens are cut out of the text even without parse_special. "world" without
  // the "▁" merges to w + "orld" (380): there is no "world" piece.
  EXPECT_EQ(tok_->encode("Hello<mask>world", false, false), (Ids{kHello, kMask, byte_id('w'), 380}));
}

TEST_F(GemmaTokenizer, UnknownCharactersBecomeByteTokens) {
  // é = C3 A9, 😀 = F0 9F 98 80, tab = 09; none is a piece.
  EXPECT_EQ(tok_->encode("\xC3\xA9", false, false), (Ids{byte_id(0xC3), byte_id(0xA9)}));
  EXPECT_EQ(tok_->encode("Hello\xF0\x9F\x98\x80", false, false),
            (Ids{kHello, byte_id(0xF0), byte_id(0x9F), byte_id(0x98), byte_id(0x80)}));
  EXPECT_EQ(tok_->encode("\tHello", false, false), (Ids{byte_id(0x09), kHello}));
  // "Hi": "H" and "i" are not pieces on their own ("He" is, but no "Hi").
  EXPECT_EQ(tok_->encode("Hi", false, false), (Ids{byte_id('H'), byte_id('i')}));
  EXPECT_EQ(tok_->decode(Ids{byte_id(0xC3), byte_id(0xA9)}), "\xC3\xA9");
  EXPECT_EQ(tok_->decode(tok_->encode("Hello \xF0\x9F\x98\x80 world", false, false)), "Hello \xF0\x9F\x98\x80 world");
}

TEST_F(GemmaTokenizer, StreamingHoldsSplitCharactersBack) {
  // A reply as the model would generate it: the byte tokens of "é" arrive one by one, and
  // nothing of the character shows until it is complete.
  StreamingDetokenizer stream(*tok_);
  EXPECT_EQ(stream.push(kHello), "Hello");
  EXPECT_EQ(stream.push(byte_id(0xC3)), "");
  EXPECT_EQ(stream.push(byte_id(0xA9)), "\xC3\xA9");
  EXPECT_EQ(stream.push(kWorld), " world");
  EXPECT_EQ(stream.flush(), "");
}

TEST_F(GemmaTokenizer, ChatTemplateConversationTokenIds) {
  auto t = ChatTemplate::from_gguf(*file_, *tok_);
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_EQ(t->family(), ChatFamily::Gemma);
  EXPECT_EQ(t->bos_token(), "<bos>");
  EXPECT_EQ(t->stop_token_ids(), (Ids{kEos, kEndOfTurn}));

  const std::vector<ChatMessage> conversation = {
      {"user", "Hello world"},
      {"assistant", "Hello"},
      {"user", "H\xC3\xA9"},
  };
  auto rendered = t->render(conversation, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  EXPECT_EQ(*rendered,
            "<bos><start_of_turn>user\nHello world<end_of_turn>\n"
            "<start_of_turn>model\nHello<end_of_turn>\n"
            "<start_of_turn>user\nH\xC3\xA9<end_of_turn>\n"
            "<start_of_turn>model\n");
  // As `generate --chat` tokenizes it: the template wrote <bos>, so the tokenizer adds none.
  const bool add_special = !rendered->starts_with(t->bos_token());
  EXPECT_FALSE(add_special);
  const Ids ids = tok_->encode(*rendered, add_special, true);
  const Ids expected = {
      kBos,
      kStartOfTurn, kUser, kNewline, kHello, kWorld, kEndOfTurn, kNewline,
      kStartOfTurn, kModel, kNewline, kHello, kEndOfTurn, kNewline,
      kStartOfTurn, kUser, kNewline, byte_id('H'), byte_id(0xC3), byte_id(0xA9), kEndOfTurn, kNewline,
      kStartOfTurn, kModel, kNewline,
  };
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(tok_->decode(ids), *rendered);

  // Gemma refuses a system message (the template raises).
  auto refused = t->render({{"system", "x"}, {"user", "Hello"}}, true);
  EXPECT_FALSE(refused.is_ok());
}

TEST(GemmaTokenizerVariants, EndOfTurnTypedUserDefinedIsTreatedAsControl) {
  // Some converters type <start_of_turn>/<end_of_turn> as user-defined. llama.cpp makes an
  // end-of-generation text a control token (with a warning); <start_of_turn> stays user-defined
  // and is then cut out of text even without parse_special.
  VocabOptions options;
  options.end_of_turn_type = kUserDefined;
  options.start_of_turn_type = kUserDefined;
  auto file = make_gemma_vocab(options);
  ASSERT_TRUE(file);
  auto tok = make_tokenizer(*file);
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->eot_id(), kEndOfTurn);
  EXPECT_TRUE(tok->is_end_of_generation(kEndOfTurn));
  EXPECT_TRUE(tok->is_control(kEndOfTurn));
  EXPECT_FALSE(tok->is_control(kStartOfTurn));
  ASSERT_EQ(tok->load_warnings().size(), 1u);
  EXPECT_NE(tok->load_warnings()[0].find("<end_of_turn>"), std::string::npos) << tok->load_warnings()[0];
  EXPECT_EQ(tok->encode("<start_of_turn>user", false, false), (Ids{kStartOfTurn, kUser}));
  EXPECT_EQ(tok->encode("<end_of_turn>", false, true), (Ids{kEndOfTurn}));
  EXPECT_NE(tok->encode("<end_of_turn>", false, false), (Ids{kEndOfTurn}));
}

TEST(GemmaTokenizerVariants, WithSpacePrefixTheSameVocabularyPrependsOne) {
  // Contrast: the llama default (add_space_prefix absent = true) puts "▁" before the text.
  auto file = make_gemma_vocab();
  ASSERT_TRUE(file);
  gguf::Writer w;
  w.copy_metadata(*file, "");
  ASSERT_TRUE(w.remove("tokenizer.ggml.add_space_prefix"));
  auto bytes = w.write_to_memory();
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  auto with_prefix = gguf::File::parse(std::move(*bytes), "spm-with-prefix.gguf");
  ASSERT_TRUE(with_prefix.is_ok()) << with_prefix.message();
  auto tok = make_tokenizer(**with_prefix);
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("Hello", false, false), (Ids{kSpace, kHello}));
  EXPECT_EQ(tok->encode("Hello world", false, false), (Ids{kSpace, kHello, kWorld}));
}

}  // namespace
}  // namespace inferscope
