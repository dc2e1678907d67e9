// How a reply went: who answered it, its text, the local generation's result or the cloud's
// reply, what the semantic cache and the router decided; or why it could not be given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/route/cloud_client.h"
#include "engine/route/router.h"
#include "engine/runtime/generate_request.h"
#include "engine/semantic/semantic_cache.h"

namespace inferscope::reply {

enum class ReplySource {
  Local,          // the loaded model generated it
  SemanticCache,  // an earlier reply to a question that means the same
  Cloud,          // a cloud tier, its text streamed in
  CloudForwarded, // a cloud tier, its own reply passed through (ReplyRequest::forward)
};

// What the semantic cache did for a reply, and how long each step took.
struct CacheReport {
  std::string scope;             // the scope key the question was looked up (or stored) under
  semantic::CacheLookup lookup;  // empty when only the new reply was embedded (skip_lookup)
  bool looked_up = false;
  double setup_ms = 0;   // configuring the cache and making its embedder
  double embed_ms = 0;   // embedding the question
  double search_ms = 0;  // the lookup
};

// Decided before any text (ReplySink::answering).
struct ReplyHead {
  ReplySource source = ReplySource::Local;
  int64_t prompt_tokens = 0;                   // the assembled prompt's
  std::optional<CacheReport> cache;            // the semantic cache was asked
  std::optional<route::RouteDecision> route;   // routing is on
  std::string cloud_model;                     // the cloud tier that answers
  std::string fallback;                        // why the cloud did not answer, when local answers instead
};

struct ReplyOutcome {
  ReplyHead head;
  std::string text;                  // the answer as delivered (cut before a stop string)
  std::string reasoning;             // the thinking before it, apart (a local reply's)
  bool stopped_at_string = false;    // a stop string ended it
  std::optional<GenerateResult> local;      // Local: the generation's result
  std::optional<route::CloudReply> cloud;   // Cloud: the tier's reply
  std::string cached_prompt;                // SemanticCache: the question first given that reply
  bool drafted_with_model = false;  // a draft model drafted for it
};

// Why a reply could not be given, for front ends that answer each case their own way (the
// server's status codes).
enum class ReplyFailure {
  BadRequest,  // the conversation or prompt cannot be generated from (empty, too long)
  Draft,       // the speculative draft cannot be used
  Cloud,       // the cloud tier failed with no fallback allowed, or in the middle of its reply
  Generation,  // the local generation failed
};

struct ReplyError {
  ReplyFailure kind = ReplyFailure::Generation;
  std::string message;
};

}  // namespace inferscope::reply
