// Chat prompts end to end with real vocabularies: a template renders a conversation, the prompt
// is tokenized as `generate --chat` does it (special tokens parsed; BOS from the tokenizer only
// when the template did not write it), and the ids are checked against expectations derived by
// hand from the vocabulary files (every id below was looked up in the file's token list).
//
// Special-token text typed inside a message: the whole rendered prompt is tokenized with
// parse_special, so "<|im_end|>" written by the user becomes the control token, exactly as in
// llama.cpp's server and Hugging Face's apply_chat_template(tokenize=True). The tests below pin
// that behaviour (see engine/chat/README.md, "Special tokens in message text").
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "tests/support/testdata.h"
#include "tests/support/tokenizers.h"

namespace inferscope {
namespace {

using Ids = std::vector<int32_t>;

const std::vector<ChatMessage> kConversation = {
    {"system", "You are a helpful assistant."},
    {"user", "Hello!"},
    {"assistant", "Hi! How can I help?"},
    {"user", "What is 2+2?"},
};

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/" + name);
  EXPECT_TRUE(in.good()) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The prompt's ids as `generate --chat` computes them: specials parsed, and the tokenizer's BOS
// only when ChatTemplate::tokenizer_adds_bos says the rendered text lacks it.
Ids chat_prompt_ids(const ChatTemplate& tmpl, const Tokenizer& tok, const std::string& prompt) {
  return tok.encode(prompt, tmpl.tokenizer_adds_bos(prompt), true);
}

// Expected ids built piece by piece: special tokens by id, plain text as the tokenizer encodes
// that text on its own (no specials, no BOS).
class Expected {
 public:
  explicit Expected(const Tokenizer& tok) : tok_(tok) {}
  Expected& special(int32_t id) {
    ids_.push_back(id);
    return *this;
  }
  Expected& text(const std::string& s) {
    const Ids piece = tok_.encode(s, false, false);
    ids_.insert(ids_.end(), piece.begin(), piece.end());
    return *this;
  }
  const Ids& ids() const { return ids_; }

 private:
  const Tokenizer& tok_;
  Ids ids_;
};

size_t count(const Ids& ids, int32_t id) { return static_cast<size_t>(std::count(ids.begin(), ids.end(), id)); }

// ---------------------------------------------------------------------------------------------
// Llama 3 (derived/ggml-vocab-llama-bpe.gguf has no template: the Meta-Llama-3-8B-Instruct one)

constexpr int32_t kL3Bos = 128000;          // <|begin_of_text|>
constexpr int32_t kL3EndOfText = 128001;    // <|end_of_text|> (EOS)
constexpr int32_t kL3StartHeader = 128006;  // <|start_header_id|>
constexpr int32_t kL3EndHeader = 128007;    // <|end_header_id|>
constexpr int32_t kL3Eot = 128009;          // <|eot_id|>

class ChatLlama3 : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = testing::load_tokenizer("derived/ggml-vocab-llama-bpe.gguf");
    ASSERT_TRUE(tok_);
    auto file = gguf::File::open(testing::testdata("derived/ggml-vocab-llama-bpe.gguf"));
    ASSERT_TRUE(file.is_ok()) << file.message();
    ASSERT_FALSE((*file)->has("tokenizer.chat_template"));
    auto t = ChatTemplate::from_tokenizer(fixture("llama-3-instruct.jinja"), *tok_);
    ASSERT_TRUE(t.is_ok()) << t.message();
    tmpl_ = std::make_unique<ChatTemplate>(std::move(*t));
  }
  std::shared_ptr<const Tokenizer> tok_;
  std::unique_ptr<ChatTemplate> tmpl_;
};

TEST_F(ChatLlama3, VocabularyFacts) {
  EXPECT_EQ(tok_->token_text(kL3Bos), "<|begin_of_text|>");
  EXPECT_EQ(tok_->token_text(kL3EndOfText), "<|end_of_text|>");
  EXPECT_EQ(tok_->token_text(kL3StartHeader), "<|start_header_id|>");
  EXPECT_EQ(tok_->token_text(kL3EndHeader), "<|end_header_id|>");
  EXPECT_EQ(tok_->token_text(kL3Eot), "<|eot_id|>");
  EXPECT_EQ(tok_->bos_id(), kL3Bos);
  EXPECT_EQ(tok_->eos_id(), kL3EndOfText);
  EXPECT_EQ(tok_->eot_id(), kL3Eot);  // found by its text: the file names no EOT id
  EXPECT_TRUE(tok_->add_bos());
  EXPECT_EQ(tmpl_->family(), ChatFamily::Llama3);
  EXPECT_EQ(tmpl_->bos_token(), "<|begin_of_text|>");
}

TEST_F(ChatLlama3, ConversationTokenIds) {
  auto rendered = tmpl_->render(kConversation, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  const Ids ids = chat_prompt_ids(*tmpl_, *tok_, *rendered);

  // Hand-derived: "system" 9125, "user" 882, "assistant" 78191, "\n\n" (ĊĊ) 271; "Hello" 9906,
  // "!" 0; "Hi" 13347, " How" 2650, " can" 649, " I" 358, " help" 1520, "?" 30; "What" 3923,
  // " is" 374, " " 220, "2" 17, "+" 10; "You" 2675, " are" 527, " a" 264, " helpful" 11190,
  // " assistant" 18328, "." 13. Llama 3's pre-tokenizer splits " 2" into " " and "2".
  const Ids expected = {
      kL3Bos,
      kL3StartHeader, 9125, kL3EndHeader, 271, 2675, 527, 264, 11190, 18328, 13, kL3Eot,
      kL3StartHeader, 882, kL3EndHeader, 271, 9906, 0, kL3Eot,
      kL3StartHeader, 78191, kL3EndHeader, 271, 13347, 0, 2650, 649, 358, 1520, 30, kL3Eot,
      kL3StartHeader, 882, kL3EndHeader, 271, 3923, 374, 220, 17, 10, 17, 30, kL3Eot,
      kL3StartHeader, 78191, kL3EndHeader, 271,
  };
  EXPECT_EQ(ids, expected);

  // The same from the text between the specials, each encoded on its own.
  Expected e(*tok_);
  e.special(kL3Bos);
  for (const ChatMessage& m : kConversation) {
    e.special(kL3StartHeader).text(m.role).special(kL3EndHeader).text("\n\n" + m.content).special(kL3Eot);
  }
  e.special(kL3StartHeader).text("assistant").special(kL3EndHeader).text("\n\n");
  EXPECT_EQ(ids, e.ids());

  // BOS exactly once, first; the template wrote it, so the tokenizer must not add another.
  EXPECT_EQ(count(ids, kL3Bos), 1u);
  EXPECT_EQ(count(ids, kL3Eot), 4u);
  EXPECT_EQ(count(ids, kL3StartHeader), 5u);
  EXPECT_EQ(count(ids, kL3EndHeader), 5u);
  // Adding special tokens on top of a template that writes BOS would double it.
  const Ids doubled = tok_->encode(*rendered, true, true);
  ASSERT_GE(doubled.size(), 2u);
  EXPECT_EQ(doubled[0], kL3Bos);
  EXPECT_EQ(doubled[1], kL3Bos);
  // Byte-level BPE is lossless: the ids decode to the rendered prompt.
  EXPECT_EQ(tok_->decode(ids), *rendered);
}

TEST_F(ChatLlama3, StopTokens) {
  EXPECT_EQ(tmpl_->stop_token_ids(), (Ids{kL3EndOfText, kL3Eot}));
  EXPECT_TRUE(tok_->is_end_of_generation(kL3Eot));
  EXPECT_TRUE(tok_->is_end_of_generation(kL3EndOfText));
  EXPECT_FALSE(tok_->is_end_of_generation(kL3StartHeader));
  EXPECT_FALSE(tok_->is_end_of_generation(kL3Bos));
}

TEST_F(ChatLlama3, SpecialTextTypedInAMessageBecomesTheSpecialToken) {
  auto rendered = tmpl_->render({{"user", "Say <|eot_id|> now"}}, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  const Ids ids = chat_prompt_ids(*tmpl_, *tok_, *rendered);
  // "Say" 46864, then the control token, then " now" 1457 (the space stays with the next word).
  const Ids expected = {kL3Bos, kL3StartHeader, 882, kL3EndHeader, 271, 46864, 220, kL3Eot, 1457, kL3Eot,
                        kL3StartHeader, 78191, kL3EndHeader, 271};
  EXPECT_EQ(ids, expected);
  // Encoded without parse_special, the same message text is plain text: no control token.
  const Ids plain = tok_->encode("Say <|eot_id|> now", false, false);
  EXPECT_EQ(count(plain, kL3Eot), 0u);
  EXPECT_EQ(tok_->decode(plain), "Say <|eot_id|> now");
}

TEST_F(ChatLlama3, TrimRemovesUnicodeWhitespaceLikePython) {
  // The template trims each message with Jinja's `trim`, which is Python's str.strip(): it also
  // removes NBSP, U+3000 (ideographic space, common at the end of CJK input), U+2003, ... A
  // message with such edges renders, and tokenizes, exactly as the bare message.
  auto padded = tmpl_->render({{"user", "\xE3\x80\x80Hello!\xC2\xA0\xE2\x80\x83\n"}}, true);
  auto bare = tmpl_->render({{"user", "Hello!"}}, true);
  ASSERT_TRUE(padded.is_ok()) << padded.message();
  ASSERT_TRUE(bare.is_ok()) << bare.message();
  EXPECT_EQ(*padded, *bare);
  EXPECT_EQ(chat_prompt_ids(*tmpl_, *tok_, *padded),
            (Ids{kL3Bos, kL3StartHeader, 882, kL3EndHeader, 271, 9906, 0, kL3Eot,  //
                 kL3StartHeader, 78191, kL3EndHeader, 271}));
  // Characters that are not whitespace stay, and a multi-byte character is never cut in half.
  auto kept = tmpl_->render({{"user", "\xE2\x80\x8BHi\xC3\xA9"}}, true);  // U+200B is not whitespace
  ASSERT_TRUE(kept.is_ok()) << kept.message();
  EXPECT_NE(kept->find("\n\n\xE2\x80\x8BHi\xC3\xA9<|eot_id|>"), std::string::npos);
}

TEST(ChatTemplateStrings, StripAndSplitUsePythonsCharacters) {
  auto t = ChatTemplate::from_source(
      "{{ messages[0].content | trim }}|{{ messages[0].content.strip() }}|{{ messages[0].content.split() | join(',') }}|"
      "{{ messages[1].content.strip('\xC3\xA9') }}|{{ messages[1].content.lstrip('\xC3\xA8') }}",
      "", "");
  ASSERT_TRUE(t.is_ok()) << t.message();
  auto r = t->render({{"user", "\xE3\x80\x80" "a\xE2\x80\x83" "b c\x1c"}, {"user", "\xC3\xA9\xC3\xA8x\xC3\xA9"}}, false);
  ASSERT_TRUE(r.is_ok()) << r.message();
  // Python: '\u3000a\u2003b c\x1c'.strip() == 'a\u2003b c'; .split() == ['a', 'b', 'c'];
  // 'éèxé'.strip('é') == 'èx'; 'éèxé'.lstrip('è') == 'éèxé' (é and è share their first byte).
  EXPECT_EQ(*r,
            "a\xE2\x80\x83" "b c|a\xE2\x80\x83" "b c|a,b,c|\xC3\xA8x|\xC3\xA9\xC3\xA8x\xC3\xA9");

  // Invalid UTF-8 (truncated or stray bytes) is kept as it is; only whole whitespace goes.
  auto trim = ChatTemplate::from_source("{% for m in messages %}[{{ m.content | trim }}]{% endfor %}", "", "");
  ASSERT_TRUE(trim.is_ok()) << trim.message();
  auto bad = trim->render(
      {{"user", " \xE3\x80 "}, {"user", "\x80 x \xE3"}, {"user", "\xE3\x80\x80\x80"}, {"user", " "}}, false);
  ASSERT_TRUE(bad.is_ok()) << bad.message();
  EXPECT_EQ(*bad, "[\xE3\x80][\x80 x \xE3][\xE3\x80\x80\x80][]");
}

// ---------------------------------------------------------------------------------------------
// Qwen2 (derived/ggml-vocab-qwen2.gguf with the Qwen2-7B-Instruct ChatML template)

constexpr int32_t kQwEndOfText = 151643;  // <|endoftext|> (EOS, also the file's BOS id)
constexpr int32_t kQwImStart = 151644;    // <|im_start|>
constexpr int32_t kQwImEnd = 151645;      // <|im_end|>

class ChatQwen2 : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = testing::load_tokenizer("derived/ggml-vocab-qwen2.gguf");
    ASSERT_TRUE(tok_);
    auto t = ChatTemplate::from_tokenizer(fixture("chatml-qwen2.jinja"), *tok_);
    ASSERT_TRUE(t.is_ok()) << t.message();
    tmpl_ = std::make_unique<ChatTemplate>(std::move(*t));
  }
  std::shared_ptr<const Tokenizer> tok_;
  std::unique_ptr<ChatTemplate> tmpl_;
};

TEST_F(ChatQwen2, VocabularyFacts) {
  EXPECT_EQ(tok_->token_text(kQwEndOfText), "<|endoftext|>");
  EXPECT_EQ(tok_->token_text(kQwImStart), "<|im_start|>");
  EXPECT_EQ(tok_->token_text(kQwImEnd), "<|im_end|>");
  EXPECT_FALSE(tok_->add_bos());
  EXPECT_EQ(tok_->eos_id(), kQwEndOfText);
  EXPECT_EQ(tok_->eot_id(), kQwImEnd);  // <|im_end|> wins over <|endoftext|>
  EXPECT_EQ(tmpl_->family(), ChatFamily::ChatML);
}

TEST_F(ChatQwen2, ConversationTokenIds) {
  auto rendered = tmpl_->render(kConversation, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  const Ids ids = chat_prompt_ids(*tmpl_, *tok_, *rendered);

  // Hand-derived: "system" 8948, "user" 872, "assistant" 77091, "\n" 198; "You" 2610, " are" 525,
  // " a" 264, " helpful" 10950, " assistant" 17847, "." 13; "Hello" 9707, "!" 0; "Hi" 13048,
  // " How" 2585, " can" 646, " I" 358, " help" 1492, "?" 30; "What" 3838, " is" 374, " " 220,
  // "2" 17, "+" 10. The "\n" after a role and the one after <|im_end|> stay single tokens
  // because a special token ends the text around them.
  const Ids expected = {
      kQwImStart, 8948, 198, 2610, 525, 264, 10950, 17847, 13, kQwImEnd, 198,
      kQwImStart, 872, 198, 9707, 0, kQwImEnd, 198,
      kQwImStart, 77091, 198, 13048, 0, 2585, 646, 358, 1492, 30, kQwImEnd, 198,
      kQwImStart, 872, 198, 3838, 374, 220, 17, 10, 17, 30, kQwImEnd, 198,
      kQwImStart, 77091, 198,
  };
  EXPECT_EQ(ids, expected);

  Expected e(*tok_);
  for (const ChatMessage& m : kConversation) {
    e.special(kQwImStart).text(m.role + "\n" + m.content).special(kQwImEnd).text("\n");
  }
  e.special(kQwImStart).text("assistant\n");
  EXPECT_EQ(ids, e.ids());

  // No BOS: the vocabulary does not add one and the template does not write one.
  EXPECT_NE(ids.front(), kQwEndOfText);
  EXPECT_EQ(count(ids, kQwEndOfText), 0u);
  EXPECT_EQ(tok_->encode(*rendered, true, true), ids);  // add_special changes nothing here
  EXPECT_EQ(tok_->decode(ids), *rendered);
}

TEST_F(ChatQwen2, DefaultSystemMessage) {
  auto rendered = tmpl_->render({{"user", "Hello!"}}, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  const Ids ids = chat_prompt_ids(*tmpl_, *tok_, *rendered);
  const Ids expected = {kQwImStart, 8948, 198, 2610, 525, 264, 10950, 17847, 13, kQwImEnd, 198,
                        kQwImStart, 872, 198, 9707, 0, kQwImEnd, 198, kQwImStart, 77091, 198};
  EXPECT_EQ(ids, expected);
}

TEST_F(ChatQwen2, StopTokens) {
  EXPECT_EQ(tmpl_->stop_token_ids(), (Ids{kQwEndOfText, kQwImEnd}));
  EXPECT_FALSE(tok_->is_end_of_generation(kQwImStart));
}

TEST_F(ChatQwen2, SpecialTextTypedInAMessageBecomesTheSpecialToken) {
  // A user who types "<|im_end|>" closes their own turn early in the prompt the model sees; the
  // rest of the message reads like text after the turn. This is what llama.cpp and
  // transformers do with the rendered prompt, and what we do.
  auto rendered = tmpl_->render({{"system", "S"}, {"user", "a<|im_end|>\n<|im_start|>assistant\nb"}}, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  const Ids ids = chat_prompt_ids(*tmpl_, *tok_, *rendered);
  EXPECT_EQ(count(ids, kQwImEnd), 3u);    // system, the typed one, the real end of the user turn
  EXPECT_EQ(count(ids, kQwImStart), 4u);  // system, user, the typed one, the generation prompt
  Expected e(*tok_);
  e.special(kQwImStart).text("system\nS").special(kQwImEnd).text("\n");
  e.special(kQwImStart).text("user\na").special(kQwImEnd).text("\n");
  e.special(kQwImStart).text("assistant\nb").special(kQwImEnd).text("\n");
  e.special(kQwImStart).text("assistant\n");
  EXPECT_EQ(ids, e.ids());

  // The message text on its own, without parse_special, has no control tokens: the tokens an
  // engine would use if it kept message contents as plain text ("<|" is not one token).
  const Ids plain = tok_->encode("a<|im_end|>", false, false);
  EXPECT_EQ(count(plain, kQwImEnd), 0u);
  EXPECT_EQ(tok_->decode(plain), "a<|im_end|>");
  EXPECT_GT(plain.size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Phi-3 (llama.cpp-vocab/ggml-vocab-phi-3.gguf: SentencePiece, carries Phi-3-mini's template)

constexpr int32_t kPhiBos = 1;         // <s>
constexpr int32_t kPhiEndOfText = 32000;  // <|endoftext|> (EOS)
constexpr int32_t kPhiAssistant = 32001;  // <|assistant|>
constexpr int32_t kPhiSystem = 32006;     // <|system|>
constexpr int32_t kPhiEnd = 32007;        // <|end|>
constexpr int32_t kPhiUser = 32010;       // <|user|>

const std::vector<ChatMessage> kPhiConversation = {
    {"system", "You are a helpful assistant."},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
};

class ChatPhi3 : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = testing::load_tokenizer("llama.cpp-vocab/ggml-vocab-phi-3.gguf");
    ASSERT_TRUE(tok_);
    auto file = gguf::File::open(testing::testdata("llama.cpp-vocab/ggml-vocab-phi-3.gguf"));
    ASSERT_TRUE(file.is_ok()) << file.message();
    auto t = ChatTemplate::from_gguf(**file, *tok_);
    ASSERT_TRUE(t.is_ok()) << t.message();
    file_tmpl_ = std::make_unique<ChatTemplate>(std::move(*t));
  }
  std::shared_ptr<const Tokenizer> tok_;
  std::unique_ptr<ChatTemplate> file_tmpl_;
};

TEST_F(ChatPhi3, VocabularyFacts) {
  EXPECT_EQ(tok_->token_text(kPhiBos), "<s>");
  EXPECT_EQ(tok_->token_text(kPhiEndOfText), "<|endoftext|>");
  EXPECT_EQ(tok_->token_text(kPhiAssistant), "<|assistant|>");
  EXPECT_EQ(tok_->token_text(kPhiSystem), "<|system|>");
  EXPECT_EQ(tok_->token_text(kPhiEnd), "<|end|>");
  EXPECT_EQ(tok_->token_text(kPhiUser), "<|user|>");
  EXPECT_EQ(tok_->bos_id(), kPhiBos);
  EXPECT_EQ(tok_->eos_id(), kPhiEndOfText);
  EXPECT_EQ(tok_->eot_id(), kPhiEnd);
  EXPECT_TRUE(tok_->add_bos());
  EXPECT_TRUE(file_tmpl_->has_template());
  EXPECT_EQ(file_tmpl_->family(), ChatFamily::Phi3);
}

// llama.cpp gives Phi-3's special tokens (all but <unk>, <s>, <|endoftext|>) the rstrip
// attribute (general.name contains "phi3"), as the added tokens of Phi-3's tokenizer.json have
// it: the "\n" after <|user|>, <|end|>, <|assistant|>, <|system|> is eaten, and the text after a
// special token gets SentencePiece's prefix space. Hand-derived: "▁Hello" 15043, "▁Hi" 6324,
// "▁there" 727, "▁Who" 11644, "▁are" 526, "▁you" 366, "▁You" 887, "▁a" 263, "▁helpful" 8444,
// "▁assistant" 20255, "." 29889.
TEST_F(ChatPhi3, FileTemplateConversationTokenIds) {
  auto rendered = file_tmpl_->render(kPhiConversation, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  ASSERT_TRUE(rendered->starts_with("<s>"));  // the template writes BOS itself
  const Ids ids = chat_prompt_ids(*file_tmpl_, *tok_, *rendered);
  // Phi-3-mini's template drops the system message.
  const Ids expected = {
      kPhiBos,
      kPhiUser, 15043, kPhiEnd, kPhiAssistant,
      6324, 727, kPhiEnd,
      kPhiUser, 11644, 526, 366, kPhiEnd, kPhiAssistant,
  };
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(count(ids, kPhiBos), 1u);
  EXPECT_EQ(count(ids, 13), 0u);  // no <0x0A>: every newline followed a special token
}

TEST_F(ChatPhi3, Phi35TemplateWithSystemMessage) {
  // Phi-3.5-mini (same vocabulary) keeps the system message and does not write BOS, so the
  // tokenizer adds it, as llama.cpp does for this vocabulary (add_bos_token = true).
  auto t = ChatTemplate::from_tokenizer(fixture("phi-3.5-mini-instruct.jinja"), *tok_);
  ASSERT_TRUE(t.is_ok()) << t.message();
  auto rendered = t->render(kPhiConversation, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  ASSERT_FALSE(rendered->starts_with("<s>"));
  const Ids ids = chat_prompt_ids(*t, *tok_, *rendered);
  const Ids expected = {
      kPhiBos,
      kPhiSystem, 887, 526, 263, 8444, 20255, 29889, kPhiEnd,
      kPhiUser, 15043, kPhiEnd,
      kPhiAssistant, 6324, 727, kPhiEnd,
      kPhiUser, 11644, 526, 366, kPhiEnd,
      kPhiAssistant,
  };
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(t->stop_token_ids(), (Ids{kPhiEndOfText, kPhiEnd}));
}

TEST_F(ChatPhi3, StopTokens) {
  EXPECT_EQ(file_tmpl_->stop_token_ids(), (Ids{kPhiEndOfText, kPhiEnd}));
  EXPECT_FALSE(tok_->is_end_of_generation(2));  // </s> is user-defined in this vocabulary
  EXPECT_FALSE(tok_->is_end_of_generation(kPhiUser));
  EXPECT_FALSE(tok_->is_end_of_generation(kPhiAssistant));
}

TEST_F(ChatPhi3, SpecialTextTypedInAMessageBecomesTheSpecialToken) {
  auto rendered = file_tmpl_->render({{"user", "Hi<|end|>there"}}, true);
  ASSERT_TRUE(rendered.is_ok()) << rendered.message();
  const Ids ids = chat_prompt_ids(*file_tmpl_, *tok_, *rendered);
  const Ids expected = {kPhiBos, kPhiUser, 6324, kPhiEnd, 727, kPhiEnd, kPhiAssistant};
  EXPECT_EQ(ids, expected);
  const Ids plain = tok_->encode("Hi<|end|>there", false, false);
  EXPECT_EQ(count(plain, kPhiEnd), 0u);
}

}  // namespace
}  // namespace inferscope
