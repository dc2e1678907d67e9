// ChatTemplate::for_chat and render_or_plain: a file whose template runs past a limit, uses
// syntax the interpreter lacks or is oversized still chats, in the plain format, with the reason
// kept for the front end to show; a good template is used as it is.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/chat/chat_prompt.h"
#include "tests/support/chat_models.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::HostileTemplate;

const std::vector<ChatMessage> kConversation = {{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "A story, please."}};
const char* const kPlainConversation = "User: Hi\nAssistant: Hello!\nUser: A story, please.\nAssistant:";

// stories260K's vocabulary in a file (in memory) whose chat template is `source`.
std::shared_ptr<const gguf::File> vocab_with_template(const std::string& source) {
  auto vocab = gguf::File::open(testing::testdata("stories260K.gguf"));
  EXPECT_TRUE(vocab) << vocab.message();
  if (!vocab) return nullptr;
  gguf::Writer writer;
  writer.copy_metadata(**vocab, "");
  writer.add_string("tokenizer.chat_template", source);
  auto bytes = writer.write_to_memory();
  EXPECT_TRUE(bytes) << bytes.message();
  auto file = gguf::File::parse(std::move(*bytes), "chat-model.gguf");
  EXPECT_TRUE(file) << file.message();
  return file ? *file : nullptr;
}

ChatTemplate for_chat(const std::string& source) {
  auto file = vocab_with_template(source);
  auto tok = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(tok) << tok.message();
  auto t = ChatTemplate::for_chat(*file, **tok);
  EXPECT_TRUE(t) << t.message();
  return std::move(*t);
}

class HostileChatTemplate : public ::testing::TestWithParam<HostileTemplate> {};

TEST_P(HostileChatTemplate, FallsBackToThePlainFormatNamingTheLimit) {
  const ChatTemplate t = for_chat(GetParam().source);
  EXPECT_FALSE(t.has_template());
  EXPECT_NE(t.fallback_reason().find(GetParam().stops_with), std::string::npos) << t.fallback_reason();
  auto prompt = t.render(kConversation, true);
  ASSERT_TRUE(prompt) << prompt.message();
  EXPECT_EQ(*prompt, kPlainConversation);
}

INSTANTIATE_TEST_SUITE_P(All, HostileChatTemplate, ::testing::ValuesIn(testing::hostile_templates()),
                         [](const ::testing::TestParamInfo<HostileTemplate>& info) { return std::string(info.param.name); });

TEST(ChatTemplateFallback, AGoodTemplateIsUsed) {
  const ChatTemplate t = for_chat("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}");
  EXPECT_TRUE(t.has_template());
  EXPECT_EQ(t.fallback_reason(), "");
  EXPECT_EQ(*t.render(kConversation, false), "<user>Hi<assistant>Hello!<user>A story, please.");
}

TEST(ChatTemplateFallback, UnsupportedSyntaxAndOversizedTemplatesFallBack) {
  EXPECT_NE(for_chat("{% include 'other.jinja' %}").fallback_reason().find("include"), std::string::npos);
  EXPECT_NE(for_chat("{{ messages | frobnicate }}").fallback_reason().find("unknown filter 'frobnicate'"), std::string::npos);
  const ChatTemplate huge = for_chat(std::string(kMaxChatTemplateBytes + 1, 'x'));
  EXPECT_NE(huge.fallback_reason().find("over the limit"), std::string::npos) << huge.fallback_reason();
  // The strict entry point still reports them as errors.
  auto file = vocab_with_template("{% include 'other.jinja' %}");
  auto tok = Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok);
  EXPECT_FALSE(ChatTemplate::from_gguf(*file, **tok));
}

// Passes the three-message trial at load, then runs away on longer conversations.
constexpr const char* kLongConversationBomb =
    "{% if messages | length > 3 %}{% for i in range(1000000000) %}{% endfor %}{% endif %}"
    "{% for m in messages %}[{{ m.content }}]{% endfor %}";

TEST(ChatTemplateFallback, RenderFallsBackWhenALimitStopsIt) {
  auto t = ChatTemplate::from_source(kLongConversationBomb, "", "");
  ASSERT_TRUE(t) << t.message();
  std::string reason = "stale";
  auto short_prompt = t->render_or_plain(kConversation, true, &reason);
  ASSERT_TRUE(short_prompt) << short_prompt.message();
  EXPECT_EQ(*short_prompt, "[Hi][Hello!][A story, please.]");
  EXPECT_EQ(reason, "");

  std::vector<ChatMessage> longer = kConversation;
  longer.push_back({"assistant", "Once upon a time."});
  longer.push_back({"user", "More."});
  auto long_prompt = t->render_or_plain(longer, true, &reason);
  ASSERT_TRUE(long_prompt) << long_prompt.message();
  EXPECT_EQ(*long_prompt, "User: Hi\nAssistant: Hello!\nUser: A story, please.\nAssistant: Once upon a time.\nUser: More.\nAssistant:");
  EXPECT_NE(reason.find("step limit"), std::string::npos) << reason;
}

TEST(ChatTemplateFallback, ErrorsTheTemplateRaisesAreNotHidden) {
  auto t = ChatTemplate::from_source("{{ raise_exception('System role not supported') }}", "", "");
  ASSERT_TRUE(t);
  std::string reason;
  auto r = t->render_or_plain(kConversation, true, &reason);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("System role not supported"), std::string::npos);
  EXPECT_EQ(reason, "");
}

TEST(ChatTemplateFallback, ChatPromptCarriesTheReason) {
  auto model = Model::load(INFERSCOPE_SOURCE_DIR "/models/stories260K.gguf");
  ASSERT_TRUE(model) << model.message();
  auto t = ChatTemplate::from_tokenizer(kLongConversationBomb, (*model)->tokenizer());
  ASSERT_TRUE(t) << t.message();
  std::vector<ChatMessage> longer = kConversation;
  longer.push_back({"assistant", "Once upon a time."});
  longer.push_back({"user", "More."});
  auto prompt = build_chat_prompt((*model)->tokenizer(), *t, longer, 512, 16);
  ASSERT_TRUE(prompt) << prompt.message();
  EXPECT_NE(prompt->fallback_reason.find("step limit"), std::string::npos) << prompt->fallback_reason;
  EXPECT_TRUE(prompt->request.prompt.starts_with("User: Hi\n")) << prompt->request.prompt;
  EXPECT_TRUE(prompt->request.add_special) << "the plain format has no BOS of its own";

  // Too long for the context: the oldest turns go, and the prompt stays in the plain format.
  longer.insert(longer.begin() + 1, {{"assistant", std::string(400, 'x')}, {"user", "And then?"}});
  auto trimmed = build_chat_prompt((*model)->tokenizer(), *t, longer, 128, 16);
  ASSERT_TRUE(trimmed) << trimmed.message();
  EXPECT_GT(trimmed->dropped_messages, 0u);
  EXPECT_NE(trimmed->fallback_reason.find("step limit"), std::string::npos) << trimmed->fallback_reason;
  EXPECT_TRUE(trimmed->request.prompt.ends_with("User: More.\nAssistant:")) << trimmed->request.prompt;
  EXPECT_EQ(trimmed->request.prompt.find(std::string(400, 'x')), std::string::npos);
}

}  // namespace
}  // namespace inferscope
