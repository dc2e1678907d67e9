// Request parsing: the OpenAI fields read as the engine's settings, and every malformed, wrongly
// typed or out-of-range field refused with a 4xx naming it.
#include <gtest/gtest.h>

#include "engine/serve/openai_request.h"

namespace inferscope::serve {
namespace {

template <class T>
ApiError error_of(const Parsed<T>& parsed) {
  EXPECT_TRUE(std::holds_alternative<ApiError>(parsed));
  return std::holds_alternative<ApiError>(parsed) ? std::get<ApiError>(parsed) : ApiError{};
}

TEST(OpenAiRequest, ReadsAChatRequest) {
  const RequestLimits limits;
  auto parsed = parse_chat_completion(R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}],
      "max_tokens": 12, "temperature": 0, "top_p": 0.5, "seed": 7, "stop": "\n", "stream": true,
      "logprobs": true, "top_logprobs": 3})",
                                      limits);
  ASSERT_TRUE(std::holds_alternative<ChatCompletionRequest>(parsed)) << error_of(parsed).message;
  const auto& r = std::get<ChatCompletionRequest>(parsed);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].content, "Hi there");
  EXPECT_EQ(r.text.max_tokens, 12);
  EXPECT_EQ(r.text.sampling.temperature, 0.0f);
  EXPECT_EQ(r.text.sampling.top_p, 0.5f);
  EXPECT_EQ(r.text.sampling.seed, 7u);
  EXPECT_EQ(r.text.stop, std::vector<std::string>{"\n"});
  EXPECT_TRUE(r.text.stream);
  EXPECT_EQ(r.text.top_logprobs, 3);
  EXPECT_EQ(r.text.sampling.top_k, SamplingParams{}.top_k);  // not given: the engine's default
}

TEST(OpenAiRequest, RefusesBadInputNamingTheField) {
  const RequestLimits limits;
  const auto chat = [&](const char* body) { return error_of(parse_chat_completion(body, limits)); };
  EXPECT_EQ(chat("{not json").message, "the request body is not valid JSON");
  EXPECT_EQ(chat("[1, 2]").http_status, 400);
  EXPECT_EQ(chat(R"({"messages": []})").param, "messages");
  EXPECT_EQ(chat(R"({"messages": [{"role": "wizard", "content": "x"}]})").param, "messages");
  EXPECT_EQ(chat(R"({"messages": [{"role": "user", "content": 5}]})").param, "messages");
  const char* user = R"("messages": [{"role": "user", "content": "hi"}])";
  EXPECT_EQ(chat((std::string("{") + user + R"(, "max_tokens": "ten"})").c_str()).param, "max_tokens");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "max_tokens": 1000000})").c_str()).param, "max_tokens");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "max_tokens": 1.5})").c_str()).param, "max_tokens");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "temperature": 3})").c_str()).param, "temperature");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "stream": "yes"})").c_str()).param, "stream");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "stop": ["a", 1]})").c_str()).param, "stop");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "n": 2})").c_str()).param, "n");
  EXPECT_EQ(chat((std::string("{") + user + R"(, "top_logprobs": 50})").c_str()).param, "top_logprobs");

  EXPECT_EQ(error_of(parse_completion(R"({"prompt": ""})", limits)).param, "prompt");
  EXPECT_EQ(error_of(parse_completion(R"({"prompt": ["a"]})", limits)).param, "prompt");
  EXPECT_EQ(error_of(parse_embedding(R"({"input": []})", limits)).param, "input");
  EXPECT_EQ(error_of(parse_embedding(R"({"input": ["a", 2]})", limits)).param, "input");
  const ApiError e = chat("{");
  EXPECT_EQ(e.body()["error"]["type"], "invalid_request_error");
}

TEST(OpenAiRequest, ReadsCompletionAndEmbeddingRequests) {
  const RequestLimits limits;
  auto completion = parse_completion(R"({"prompt": "Once upon a time", "logprobs": 2, "max_tokens": 5})", limits);
  ASSERT_TRUE(std::holds_alternative<CompletionRequest>(completion));
  EXPECT_EQ(std::get<CompletionRequest>(completion).text.top_logprobs, 2);
  EXPECT_TRUE(std::get<CompletionRequest>(completion).text.logprobs);
  auto embedding = parse_embedding(R"({"input": ["one", "two"], "model": "bge"})", limits);
  ASSERT_TRUE(std::holds_alternative<EmbeddingRequest>(embedding));
  EXPECT_EQ(std::get<EmbeddingRequest>(embedding).inputs.size(), 2u);
}

}  // namespace
}  // namespace inferscope::serve
