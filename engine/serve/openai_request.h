// The OpenAI API's request bodies, parsed and checked before anything runs: wrong JSON, wrong
// types, values out of range and requests over the server's limits each become an ApiError
// naming the field (never an exception). Sampling fields left out keep the engine's defaults
// (llama.cpp's, as llama.cpp's server does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/sampling/sampling_params.h"
#include "engine/serve/api_error.h"

namespace inferscope::serve {

struct RequestLimits {
  std::size_t max_body_bytes = std::size_t{1} << 20;  // larger bodies get 413
  int32_t max_tokens = 4096;                           // a larger max_tokens is refused
  int32_t default_max_tokens = 512;                    // when the request gives none
  std::size_t max_messages = 512;
  std::size_t max_stop_strings = 4;
  std::size_t max_embedding_inputs = 256;
  int32_t max_top_logprobs = 20;
};

// What chat and text completions share.
struct TextRequest {
  std::string model;  // as the client named it ("" = the served model)
  int32_t max_tokens = 0;
  SamplingParams sampling;
  std::vector<std::string> stop;  // the reply ends before the first of these texts
  bool stream = false;
  bool logprobs = false;
  int32_t top_logprobs = 0;  // alternatives per token when logprobs
};

struct ChatCompletionRequest {
  TextRequest text;
  std::vector<ChatMessage> messages;  // roles system, user, assistant; at least one
};

struct CompletionRequest {
  TextRequest text;
  std::string prompt;
};

struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> inputs;  // "input": one string or an array of them
};

template <class T>
using Parsed = std::variant<T, ApiError>;

Parsed<ChatCompletionRequest> parse_chat_completion(std::string_view body, const RequestLimits& limits);
Parsed<CompletionRequest> parse_completion(std::string_view body, const RequestLimits& limits);
Parsed<EmbeddingRequest> parse_embedding(std::string_view body, const RequestLimits& limits);

}  // namespace inferscope::serve
