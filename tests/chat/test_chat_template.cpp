// ChatTemplate around the interpreter: family labels, the plain format for files without a
// template, errors, and the stop tokens taken from the vocabulary and the template.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "tests/support/tokenizers.h"

namespace inferscope {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/" + name);
  EXPECT_TRUE(in.good()) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ChatFamily, RecognizedFromTheTemplatesMarkers) {
  const std::pair<const char*, ChatFamily> cases[] = {
      {"chatml-qwen2.jinja", ChatFamily::ChatML},
      {"chatml-qwen2.5-instruct.jinja", ChatFamily::ChatML},
      {"llama-2-chat.jinja", ChatFamily::Llama2},
      {"llama-3-instruct.jinja", ChatFamily::Llama3},
      {"llama-3.1-instruct.jinja", ChatFamily::Llama3},
      {"llama-3.2-instruct.jinja", ChatFamily::Llama3},
      {"mistral-v0.2-instruct.jinja", ChatFamily::Mistral},
      {"mistral-v1-instruct.jinja", ChatFamily::Mistral},
      {"mistral-v3-instruct.jinja", ChatFamily::Mistral},
      {"mistral-v7-small-3.1.jinja", ChatFamily::Mistral},
      {"phi-3.5-mini-instruct.jinja", ChatFamily::Phi3},
      {"gemma-it.jinja", ChatFamily::Gemma},
      {"zephyr.jinja", ChatFamily::Zephyr},
      {"deepseek-llm-chat.jinja", ChatFamily::DeepSeek},
      {"deepseek-coder-instruct.jinja", ChatFamily::DeepSeek},
  };
  for (const auto& [name, family] : cases) {
    EXPECT_EQ(chat_family_name(detect_chat_family(fixture(name))), std::string(chat_family_name(family))) << name;
  }
  EXPECT_EQ(detect_chat_family(""), ChatFamily::None);
  EXPECT_EQ(detect_chat_family("{{ messages[0]['content'] }}"), ChatFamily::Other);
  EXPECT_STREQ(chat_family_name(ChatFamily::ChatML), "chatml");
  EXPECT_STREQ(chat_family_name(ChatFamily::None), "none");
}

TEST(ChatTemplate, PlainFormatWhenTheFileHasNoTemplate) {
  auto t = ChatTemplate::from_source("", "<s>", "</s>");
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_FALSE(t->has_template());
  EXPECT_EQ(t->family(), ChatFamily::None);
  auto r = t->render({{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Tell a story"}}, true);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(*r, "Be brief.\n\nUser: Hi\nAssistant: Hello!\nUser: Tell a story\nAssistant:");
  auto no_prompt = t->render({{"user", "Hi"}}, false);
  ASSERT_TRUE(no_prompt.is_ok());
  EXPECT_EQ(*no_prompt, "User: Hi\n");
}

TEST(ChatTemplate, TemplateErrorsAreStatuses) {
  auto bad = ChatTemplate::from_source("{% for m in messages %}{{ m.content }}", "", "");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.message().find("chat template"), std::string::npos);
  EXPECT_NE(bad.message().find("endfor"), std::string::npos);
  auto raising = ChatTemplate::from_source("{{ raise_exception('no ' + messages[0].role) }}", "", "");
  ASSERT_TRUE(raising.is_ok());
  auto r = raising->render({{"tool", "x"}}, true);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.message().find("no tool"), std::string::npos);
}

TEST(ChatTemplate, ContentIsDataNotTemplateCode) {
  auto t = ChatTemplate::from_source(fixture("chatml-qwen2.jinja"), "", "");
  ASSERT_TRUE(t.is_ok());
  auto r = t->render({{"system", "{{ 7 * 6 }}"}, {"user", "{% if true %}x{% endif %}"}}, false);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(*r, "<|im_start|>system\n{{ 7 * 6 }}<|im_end|>\n<|im_start|>user\n{% if true %}x{% endif %}<|im_end|>\n");
}

TEST(ChatTemplateStopTokens, Phi3VocabularyEndTokens) {
  // Phi-3: EOS is <|endoftext|> (32000); <|end|> (32007) ends a turn. </s> (2) is a user-defined
  // token there, not an end token.
  auto tok = testing::load_tokenizer("llama.cpp-vocab/ggml-vocab-phi-3.gguf");
  ASSERT_TRUE(tok);
  auto t = ChatTemplate::from_tokenizer(fixture("phi-3.5-mini-instruct.jinja"), *tok);
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_EQ(t->stop_token_ids(), (std::vector<int32_t>{32000, 32007}));
  EXPECT_EQ(t->bos_token(), "<s>");
}

TEST(ChatTemplateStopTokens, TemplateEndOfTurnMarkerJoinsTheVocabularysEnds) {
  // deepseek-coder's vocabulary ends generation at <｜end▁of▁sentence｜> (32014) only; its
  // instruct template closes each reply with <|EOT|> (32021), which must stop generation too.
  auto tok = testing::load_tokenizer("llama.cpp-vocab/ggml-vocab-deepseek-coder.gguf");
  ASSERT_TRUE(tok);
  auto plain = ChatTemplate::from_tokenizer("", *tok);
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(plain->stop_token_ids(), (std::vector<int32_t>{32014}));
  auto coder = ChatTemplate::from_tokenizer(fixture("deepseek-coder-instruct.jinja"), *tok);
  ASSERT_TRUE(coder.is_ok()) << coder.message();
  EXPECT_EQ(coder->stop_token_ids(), (std::vector<int32_t>{32014, 32021}));
}

}  // namespace
}  // namespace inferscope
