// build_chat_prompt: the conversation in the model's chat format, trimmed to leave the reply
// room in the context.
#include <string>

#include <gtest/gtest.h>

#include "engine/chat/chat_template.h"
#include "engine/model/model.h"
#include "engine/chat/chat_prompt.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

class ChatPromptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::load(INFERSCOPE_SOURCE_DIR "/models/stories260K.gguf");
    ASSERT_TRUE(model) << model.message();
    model_ = *model;
    auto tmpl = ChatTemplate::from_gguf(model_->file(), model_->tokenizer());
    ASSERT_TRUE(tmpl) << tmpl.message();
    template_ = std::make_unique<ChatTemplate>(std::move(*tmpl));
  }
  size_t prompt_tokens(const GenerateRequest& req) const {
    return model_->tokenizer().encode(req.prompt, req.add_special, req.parse_special).size();
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<ChatTemplate> template_;
};

TEST_F(ChatPromptTest, RendersTheWholeConversationWhenItFits) {
  const std::vector<ChatMessage> messages = {
      {"user", "Hello there"}, {"assistant", "Once upon a time"}, {"user", "Go on"}};
  auto prompt = build_chat_prompt(model_->tokenizer(), *template_, messages, 2048, 64);
  ASSERT_TRUE(prompt) << prompt.message();
  auto expected = template_->render(messages, true);
  ASSERT_TRUE(expected);
  const GenerateRequest& req = prompt->request;
  EXPECT_EQ(req.prompt, *expected);
  EXPECT_EQ(req.max_tokens, 64);
  EXPECT_TRUE(req.parse_special);
  EXPECT_EQ(req.stop_token_ids, template_->stop_token_ids());
  EXPECT_EQ(prompt->dropped_messages, 0u);
  EXPECT_EQ(prompt->fallback_reason, "");
}

TEST_F(ChatPromptTest, DropsTheOldestTurnsToLeaveRoomForTheReply) {
  const std::string long_text(300, 'a');
  const std::vector<ChatMessage> messages = {{"system", "Be brief."}, {"user", long_text}, {"assistant", long_text},
                                             {"user", "first question"}, {"assistant", "an answer"},
                                             {"user", "last question"}};
  const int64_t n_ctx = 128;
  auto prompt = build_chat_prompt(model_->tokenizer(), *template_, messages, n_ctx, 32);
  ASSERT_TRUE(prompt) << prompt.message();
  const GenerateRequest& req = prompt->request;
  EXPECT_LE(static_cast<int64_t>(prompt_tokens(req)) + 32, n_ctx);
  EXPECT_NE(req.prompt.find("Be brief."), std::string::npos) << "the system message stays";
  EXPECT_NE(req.prompt.find("last question"), std::string::npos);
  EXPECT_EQ(req.prompt.find(long_text), std::string::npos) << "the oldest turns go";
  EXPECT_GE(prompt->dropped_messages, 2u);
}

TEST_F(ChatPromptTest, RefusesAMessageThatCannotFit) {
  const std::vector<ChatMessage> messages = {{"user", std::string(400, 'b')}};
  auto prompt = build_chat_prompt(model_->tokenizer(), *template_, messages, 64, 16);
  ASSERT_FALSE(prompt);
  EXPECT_NE(prompt.message().find("context of 64 tokens"), std::string::npos) << prompt.message();
}

}  // namespace
}  // namespace inferscope
