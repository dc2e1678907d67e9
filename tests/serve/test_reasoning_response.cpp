// A reply's thinking in the OpenAI bodies, where DeepSeek's API and llama.cpp's server put it:
// message.reasoning_content beside content, and delta.reasoning_content in a stream.
#include <gtest/gtest.h>

#include "engine/serve/openai_response.h"

namespace inferscope::serve {
namespace {

const ReplyIdentity kChat{Api::Chat, "chatcmpl-1", 1, "m"};

TEST(ReasoningResponse, WholeChatReplyCarriesReasoningContent) {
  const auto j = completion_json(kChat, "It is 4.", "stop", Usage{3, 9}, nlohmann::json(), "2 + 2 = 4");
  const auto& message = j["choices"][0]["message"];
  EXPECT_EQ(message["content"], "It is 4.");
  EXPECT_EQ(message["reasoning_content"], "2 + 2 = 4");
  const auto plain = completion_json(kChat, "Hi", "stop", Usage{1, 1}, nlohmann::json());
  EXPECT_FALSE(plain["choices"][0]["message"].contains("reasoning_content"));
}

TEST(ReasoningResponse, StreamedThinkingIsReasoningContentDelta) {
  const auto thinking = chunk_json(kChat, "hmm", nlohmann::json(), false, nullptr, nullptr, true);
  EXPECT_EQ(thinking["choices"][0]["delta"]["reasoning_content"], "hmm");
  EXPECT_FALSE(thinking["choices"][0]["delta"].contains("content"));
  const auto answer = chunk_json(kChat, "4", nlohmann::json(), false, nullptr, nullptr);
  EXPECT_EQ(answer["choices"][0]["delta"]["content"], "4");
}

}  // namespace
}  // namespace inferscope::serve
