// The chat templates of the 2026 families (tests/chat/templates/2026: the 2026 llama.cpp's
// models/templates copies) rendered for one conversation against the reference renderer:
// Python's jinja2 configured as the hub library's apply_chat_template configures it (sandbox,
// trim_blocks, lstrip_blocks, loopcontrols, raise_exception, strftime_now, tojson), with
// tools=None and add_generation_prompt=True; its outputs are the .expected files (README.md).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"

namespace inferscope {
namespace {

struct TemplateCase {
  const char* name;
  const char* bos;
  const char* eos;
};
void PrintTo(const TemplateCase& c, std::ostream* os) { *os << c.name; }

std::string read(const std::string& file) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/chat/templates/2026/" + file, std::ios::binary);
  EXPECT_TRUE(in.good()) << file;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class ChatTemplates2026 : public ::testing::TestWithParam<TemplateCase> {};

TEST_P(ChatTemplates2026, RenderAsTheReferenceRenderer) {
  const TemplateCase& c = GetParam();
  auto t = ChatTemplate::from_source(read(std::string(c.name) + ".jinja"), c.bos, c.eos);
  ASSERT_TRUE(t) << t.message();
  const std::vector<ChatMessage> conversation = {
      {"system", "You are a helpful assistant"}, {"user", "Hello"}, {"assistant", "Hi there"}, {"user", "Who are you"}};
  jinja::RenderOptions options;
  options.now_unix_seconds = 1768478400;  // 2026-01-15 12:00 UTC, the reference rendering's clock
  auto rendered = t->render(conversation, true, options);
  ASSERT_TRUE(rendered) << rendered.message();
  EXPECT_EQ(*rendered, read(std::string(c.name) + ".expected"));
}

// A tool call and its result (the conversation in templates/2026/README.md): each family's own
// rendering of the call (Qwen's <tool_call> JSON, harmony's commentary channel to=functions.*,
// Mistral's [TOOL_CALLS] with its call id, ...) and of the result, as the reference renderer
// gives it.
TEST_P(ChatTemplates2026, RenderAToolCallAndItsResultAsTheReferenceRenderer) {
  const TemplateCase& c = GetParam();
  auto t = ChatTemplate::from_source(read(std::string(c.name) + ".jinja"), c.bos, c.eos);
  ASSERT_TRUE(t) << t.message();
  ChatMessage call{"assistant", ""};
  call.tool_calls = {{"call12345", "get_weather", R"({"city": "Oslo", "unit": "celsius"})"}};
  ChatMessage result{"tool", R"({"temperature": 7, "sky": "rain"})"};
  result.tool_call_id = "call12345";
  const std::vector<ChatMessage> conversation = {
      {"system", "You are a helpful assistant"}, {"user", "What is the weather in Oslo?"}, call, result};
  jinja::RenderOptions options;
  options.now_unix_seconds = 1768478400;
  auto rendered = t->render(conversation, true, options);
  ASSERT_TRUE(rendered) << rendered.message();
  EXPECT_EQ(*rendered, read(std::string(c.name) + ".tools.expected"));
}

// Without tools the templates see tools = None, as the hub library passes it (expected: jinja2
// with tools=None renders "DN").
TEST(ChatTemplateGlobals, ToolsIsNoneWhenThereAreNone) {
  auto t = ChatTemplate::from_source("{% if tools is defined %}D{% endif %}{% if tools is none %}N{% endif %}"
                                     "{% if tools %}T{% endif %}",
                                     "", "");
  ASSERT_TRUE(t) << t.message();
  auto rendered = t->render({{"user", "Hello"}}, true);
  ASSERT_TRUE(rendered) << rendered.message();
  EXPECT_EQ(*rendered, "DN");
}

INSTANTIATE_TEST_SUITE_P(
    Reference, ChatTemplates2026,
    ::testing::Values(TemplateCase{"Qwen-Qwen3-0.6B", "", "<|im_end|>"}, TemplateCase{"Qwen3.5-4B", "", "<|im_end|>"},
                      TemplateCase{"google-gemma-4-31B-it", "<bos>", "<eos>"},
                      TemplateCase{"LFM2.5-8B-A1B", "<|startoftext|>", "<|im_end|>"},
                      TemplateCase{"poolside-Laguna-XS.2", "", ""}, TemplateCase{"tencent-Hy3", "", ""},
                      TemplateCase{"ByteDance-Seed-OSS", "<seed:bos>", "<seed:eos>"},
                      TemplateCase{"HuggingFaceTB-SmolLM3-3B", "", "<|im_end|>"},
                      TemplateCase{"openai-gpt-oss-120b", "<|startoftext|>", "<|return|>"},
                      TemplateCase{"Mistral-Small-3.2-24B-Instruct-2506", "<s>", "</s>"},
                      TemplateCase{"unsloth-Apriel-1.5", "<s>", "</s>"}, TemplateCase{"Cohere2MoE", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"},
                      TemplateCase{"GigaChat3-10B-A1.8B", "<s>", "</s>"}, TemplateCase{"openbmb-MiniCPM5-1B", "<s>", "</s>"}),
    [](const ::testing::TestParamInfo<TemplateCase>& info) {
      std::string name = info.param.name;
      for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

}  // namespace
}  // namespace inferscope
