// How a front end hears a reply as the pipeline produces it (engine/reply/reply_pipeline.h):
// who answers, the text as it comes, notices that do not stop it, and whether to stop. The app
// paces the pieces for its window, the server writes OpenAI JSON or events, the CLI prints.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/reply/reply_outcome.h"
#include "engine/route/cloud_pass_through.h"
#include "engine/runtime/generate_request.h"

namespace inferscope::reply {

// Something the user may want to know that does not stop the reply.
enum class ReplyNotice {
  ChatFormat,       // the model's chat template is not used: the plain format is
  CacheSkipped,     // the semantic cache could not be used for this reply (it is generated)
  CacheMemoryOnly,  // the cache's database could not be used: its entries live in memory
  CacheGuard,       // the false-hit guard refused a near question's reply
  CacheNotStored,   // the reply could not be stored in the cache
  RouteTierFailed,  // a cloud tier failed before its reply began: the next one is asked
  RouteFallback,    // no cloud tier answered: the local model does
};

// A piece of a reply: text (possibly empty, mid-character), and for a token the local model
// generated its id and, when asked for, its most likely alternatives. `reasoning`: the text is
// the model's thinking before its answer (engine/chat/reasoning_split.h), not the answer.
struct ReplyPiece {
  std::string text;
  int32_t token = -1;  // -1: not one token (a detokenizer's tail, a cloud's or the cache's text)
  std::vector<TokenLogprob> top_logprobs;
  bool reasoning = false;
};

class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // Who answers, before any text.
  virtual void answering(const ReplyHead&) {}
  // The next piece; false stops the reply (a local one ends "cancelled").
  virtual bool text(const ReplyPiece& piece) = 0;
  virtual void notice(ReplyNotice, const std::string&) {}
  // A cloud tier's own reply to ReplyRequest::forward, its status line received: the front end
  // passes its bytes on.
  virtual void forwarded(std::shared_ptr<route::CloudPassThrough>) {}
  // Asked between tokens: true stops the reply (cancelled) within one step.
  virtual bool cancelled() const { return false; }
};

}  // namespace inferscope::reply
