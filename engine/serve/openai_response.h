// The OpenAI API's response bodies: chat and text completions (whole, and as the chunks of a
// server-sent-event stream), embeddings, the model list. Field names and shapes as OpenAI's
// client libraries read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/runtime/generate_request.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope::serve {

enum class Api { Chat, Text };

// What identifies one reply's objects: "chatcmpl-..."/"cmpl-...", its creation time and model.
struct ReplyIdentity {
  Api api = Api::Chat;
  std::string id;
  std::int64_t created = 0;  // Unix seconds
  std::string model;
};

// One generated token with its alternatives, for "logprobs".
struct TokenChoice {
  std::int32_t id = 0;
  std::vector<TokenLogprob> top;  // the raw distribution's most likely tokens
};

// OpenAI's finish_reason for the engine's stop reason: "stop" or "length".
std::string finish_reason(const std::string& stop_reason, bool stop_string_matched);

// The "logprobs" object of one choice (chat: {"content": [...]}; text: the legacy arrays).
nlohmann::json logprobs_json(Api api, const Tokenizer& tokenizer, const std::vector<TokenChoice>& tokens);

struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
};

// The whole reply (stream: false).
// reasoning: the model's thinking before `text`, as message.reasoning_content (the field
// DeepSeek's API and llama.cpp's server use); a plain completion gets it before its text.
nlohmann::json completion_json(const ReplyIdentity& reply, const std::string& text, const std::string& finish,
                               const Usage& usage, const nlohmann::json& logprobs, const std::string& reasoning = "");
// One streamed chunk: the role (chat, first chunk), a piece of text (delta.reasoning_content
// when it is thinking), or the last one with its finish_reason (and usage).
nlohmann::json chunk_json(const ReplyIdentity& reply, const std::string& text, const nlohmann::json& logprobs,
                          bool first, const std::string* finish, const Usage* usage, bool reasoning = false);
// "data: <json>\n\n" and the stream's end, "data: [DONE]\n\n".
std::string sse_event(const nlohmann::json& j);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

nlohmann::json embeddings_json(const std::string& model, const std::vector<std::vector<float>>& vectors,
                               std::int64_t prompt_tokens);
nlohmann::json models_json(const std::vector<std::string>& ids, std::int64_t created);

}  // namespace inferscope::serve
