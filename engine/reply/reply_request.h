// What a reply is asked for, whichever front end asks (the app's chat, the server's OpenAI
// endpoints, `inferscope-cli generate`): the conversation or the prompt, the sampling, the
// speculative draft, and what the semantic cache and the edge-cloud router may do with it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/runtime/generate_request.h"
#include "engine/sampling/sampling_params.h"
#include "engine/semantic/semantic_cache.h"

namespace inferscope::reply {

// Where speculative decoding's drafts come from. A draft model is named by its file: the
// pipeline opens it for its session and keeps it while the file stays the same.
struct DraftSettings {
  DraftSource source = DraftSource::None;
  int32_t max_tokens = 8;       // the longest draft
  int32_t layers = 1;           // LayerSkip: 1 .. the model's layers
  std::string model_path;       // Model
  bool resident_weights = true;  // Model: its weights copied into memory (false: used mapped)
};

// The semantic cache's part in a reply (docs/SEMANTIC-CACHE.md).
struct CacheUse {
  bool enabled = false;       // look the question up; after a miss, store the reply
  bool skip_lookup = false;   // generate even if the cache has a reply, then store it
  // The app's settings for this reply: the threshold, the guard and the retention, and the
  // embedding model (a BERT-family GGUF; "": the chat model's own hidden states). Absent: as
  // the cache and the pipeline's embedder were made.
  std::optional<semantic::SemanticCacheOptions> options;
  std::optional<std::string> embedding_model;
};

// A request an OpenAI-compatible cloud tier takes as it is (the server's client's request): when
// the reply is routed to the cloud, it is passed through unchanged and so is the tier's reply.
struct CloudForward {
  std::string api_path;  // "/chat/completions", "/completions"
  std::string body;
};

struct ReplyRequest {
  // A conversation in the model's chat format, ending with the user's turn; or, when empty, a
  // plain prompt (a text completion).
  std::vector<ChatMessage> messages;
  std::string prompt;
  int32_t max_tokens = 128;
  SamplingParams sampling;
  int32_t beam_width = 1;
  int32_t top_logprobs = 0;
  std::vector<std::string> stop;  // the reply ends just before the first of these strings
  DraftSettings draft;
  CacheUse cache;
  // Whatever else decides the reply, for the semantic cache's scope (the server's endpoint).
  std::map<std::string, std::string> scope_extras;
  std::optional<CloudForward> forward;

  bool is_chat() const { return !messages.empty(); }
};

}  // namespace inferscope::reply
