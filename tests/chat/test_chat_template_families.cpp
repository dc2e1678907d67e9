// Real chat templates (tests/chat/templates/, as the models ship them) rendered for one
// conversation. The expected strings are written out by hand from each family's documented
// prompt format, not produced by this code.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "tests/support/testdata.h"
#include "tests/support/tokenizers.h"

namespace inferscope {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
};
const std::vector<ChatMessage> kNoSystem(kConversation.begin() + 1, kConversation.end());

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/" + name);
  EXPECT_TRUE(in.good()) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<std::string> try_render(const std::string& name, const std::string& bos, const std::string& eos,
                               const std::vector<ChatMessage>& messages, const jinja::RenderOptions& options = {}) {
  auto t = ChatTemplate::from_source(fixture(name), bos, eos);
  if (!t) return t.status();
  return t->render(messages, true, options);
}

std::string render(const std::string& name, const std::string& bos, const std::string& eos,
                   const std::vector<ChatMessage>& messages = kConversation) {
  auto r = try_render(name, bos, eos, messages);
  EXPECT_TRUE(r.is_ok()) << name << ": " << r.message();
  return r ? *r : "<error>";
}

TEST(ChatTemplateFamilies, ChatMLQwen2) {
  EXPECT_EQ(render("chatml-qwen2.jinja", "", "<|endoftext|>"),
            "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
            "<|im_start|>user\nHello<|im_end|>\n"
            "<|im_start|>assistant\nHi there<|im_end|>\n"
            "<|im_start|>user\nWho are you<|im_end|>\n"
            "<|im_start|>assistant\n");
  // Without a system message Qwen2 supplies its default one.
  EXPECT_EQ(render("chatml-qwen2.jinja", "", "<|endoftext|>", {{"user", "Hello"}}),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHello<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateFamilies, ChatMLQwen25) {
  EXPECT_EQ(render("chatml-qwen2.5-instruct.jinja", "", "<|im_end|>"),
            "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
            "<|im_start|>user\nHello<|im_end|>\n"
            "<|im_start|>assistant\nHi there<|im_end|>\n"
            "<|im_start|>user\nWho are you<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render("chatml-qwen2.5-instruct.jinja", "", "<|im_end|>", {{"user", "Hello"}}),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHello<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateFamilies, Llama2) {
  // BOS before every [INST]; the system prompt in <<SYS>> inside the first one; no generation prompt.
  EXPECT_EQ(render("llama-2-chat.jinja", "<s>", "</s>"),
            "<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s>"
            "<s>[INST] Who are you [/INST]");
}

TEST(ChatTemplateFamilies, Llama3) {
  EXPECT_EQ(render("llama-3-instruct.jinja", "<|begin_of_text|>", "<|end_of_text|>"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // Contents are trimmed.
  EXPECT_EQ(render("llama-3-instruct.jinja", "<|begin_of_text|>", "", {{"user", "  Hello \n"}}),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateFamilies, Llama31DateHeader) {
  EXPECT_EQ(render("llama-3.1-instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"
            "You are a helpful assistant<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // No system message: the header is still written, with an empty system text.
  EXPECT_EQ(render("llama-3.1-instruct.jinja", "<|begin_of_text|>", "<|eot_id|>", {{"user", "Hello"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateFamilies, Llama32DateFromStrftimeNow) {
  jinja::RenderOptions options;
  options.now_unix_seconds = 1725364800;  // 2024-09-03 12:00 UTC
  auto r = try_render("llama-3.2-instruct.jinja", "<|begin_of_text|>", "<|eot_id|>", {{"user", "Hello"}}, options);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(*r,
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 03 Sep 2024\n\n<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateFamilies, MistralV02HasNoSystemRole) {
  EXPECT_EQ(render("mistral-v0.2-instruct.jinja", "<s>", "</s>", kNoSystem),
            "<s>[INST] Hello [/INST]Hi there</s>[INST] Who are you [/INST]");
  auto r = try_render("mistral-v0.2-instruct.jinja", "<s>", "</s>", kConversation);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.message().find("Conversation roles must alternate user/assistant/user/assistant/..."), std::string::npos);
}

TEST(ChatTemplateFamilies, MistralV1SystemJoinsFirstUserTurn) {
  EXPECT_EQ(render("mistral-v1-instruct.jinja", "<s>", "</s>"),
            "<s> [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]");
}

TEST(ChatTemplateFamilies, MistralV3SystemJoinsLastUserTurn) {
  EXPECT_EQ(render("mistral-v3-instruct.jinja", "<s>", "</s>"),
            "<s>[INST] Hello[/INST] Hi there</s>[INST] You are a helpful assistant\n\nWho are you[/INST]");
  auto r = try_render("mistral-v3-instruct.jinja", "<s>", "</s>", {{"user", "a"}, {"user", "b"}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.message().find("conversation roles must alternate"), std::string::npos);
}

TEST(ChatTemplateFamilies, MistralV7SystemPromptBlock) {
  EXPECT_EQ(render("mistral-v7-small-3.1.jinja", "<s>", "</s>"),
            "<s>[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT]"
            "[INST]Hello[/INST]Hi there</s>[INST]Who are you[/INST]");
  // Without a system message the template writes its default one, dated by strftime_now.
  jinja::RenderOptions options;
  options.now_unix_seconds = 1725364800;  // 2024-09-03 12:00 UTC
  auto r = try_render("mistral-v7-small-3.1.jinja", "<s>", "</s>", {{"user", "Hello"}}, options);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(r->rfind("<s>[SYSTEM_PROMPT]You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI", 0), 0u)
      << *r;
  EXPECT_NE(r->find("The current date is 2024-09-03."), std::string::npos) << *r;
  EXPECT_TRUE(r->ends_with("\"Where do you travel from?\")[/SYSTEM_PROMPT][INST]Hello[/INST]")) << *r;
}

TEST(ChatTemplateFamilies, Phi35) {
  EXPECT_EQ(render("phi-3.5-mini-instruct.jinja", "<s>", "<|endoftext|>"),
            "<|system|>\nYou are a helpful assistant<|end|>\n"
            "<|user|>\nHello<|end|>\n"
            "<|assistant|>\nHi there<|end|>\n"
            "<|user|>\nWho are you<|end|>\n"
            "<|assistant|>\n");
}

TEST(ChatTemplateFamilies, GemmaRaisesOnSystemRole) {
  auto r = try_render("gemma-it.jinja", "<bos>", "<eos>", kConversation);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.message().find("System role not supported"), std::string::npos);
  EXPECT_EQ(render("gemma-it.jinja", "<bos>", "<eos>", kNoSystem),
            "<bos><start_of_turn>user\nHello<end_of_turn>\n"
            "<start_of_turn>model\nHi there<end_of_turn>\n"
            "<start_of_turn>user\nWho are you<end_of_turn>\n"
            "<start_of_turn>model\n");
}

TEST(ChatTemplateFamilies, ZephyrNeedsTrimBlocks) {
  EXPECT_EQ(render("zephyr.jinja", "<s>", "</s>"),
            "<|system|>\nYou are a helpful assistant</s>\n"
            "<|user|>\nHello</s>\n"
            "<|assistant|>\nHi there</s>\n"
            "<|user|>\nWho are you</s>\n"
            "<|assistant|>\n");
}

TEST(ChatTemplateFamilies, DeepSeekLlm) {
  EXPECT_EQ(render("deepseek-llm-chat.jinja", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
            "<｜begin▁of▁sentence｜>You are a helpful assistant\n\n"
            "User: Hello\n\n"
            "Assistant: Hi there<｜end▁of▁sentence｜>"
            "User: Who are you\n\n"
            "Assistant:");
}

TEST(ChatTemplateFamilies, DeepSeekCoder) {
  EXPECT_EQ(render("deepseek-coder-instruct.jinja", "<｜begin▁of▁sentence｜>", "<|EOT|>"),
            "<｜begin▁of▁sentence｜>You are a helpful assistant"
            "### Instruction:\nHello\n"
            "### Response:\nHi there\n<|EOT|>\n"
            "### Instruction:\nWho are you\n"
            "### Response:\n");
  // Without a system message the template's own default comes first.
  EXPECT_EQ(render("deepseek-coder-instruct.jinja", "", "<|EOT|>", {{"user", "Hi"}}),
            "You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, "
            "and you only answer questions related to computer science. For politically sensitive questions, security "
            "and privacy issues, and other non-computer science questions, you will refuse to answer\n"
            "### Instruction:\nHi\n### Response:\n");
}

TEST(ChatTemplateFamilies, Phi3MiniFromTheGgufFile) {
  // ggml-vocab-phi-3.gguf carries Phi-3-mini's template, which drops system messages and
  // writes <|assistant|> after every user turn.
  auto tok = testing::load_tokenizer("llama.cpp-vocab/ggml-vocab-phi-3.gguf");
  ASSERT_TRUE(tok);
  auto file = gguf::File::open(testing::testdata("llama.cpp-vocab/ggml-vocab-phi-3.gguf"));
  ASSERT_TRUE(file.is_ok()) << file.message();
  auto t = ChatTemplate::from_gguf(**file, *tok);
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_TRUE(t->has_template());
  EXPECT_EQ(t->family(), ChatFamily::Phi3);
  auto r = t->render(kConversation, true);
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(*r,
            "<s><|user|>\nHello<|end|>\n<|assistant|>\n"
            "Hi there<|end|>\n"
            "<|user|>\nWho are you<|end|>\n<|assistant|>\n");
}

}  // namespace
}  // namespace inferscope
