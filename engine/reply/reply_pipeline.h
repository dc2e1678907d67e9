// The path of a reply, once for every front end (the app's chat, the OpenAI server, `generate`):
//
//   assemble the prompt      the conversation in the model's chat format, or a plain prompt
//   look the question up     the semantic cache: a hit is the reply, and nothing runs
//   set up the draft         speculative decoding's draft model or layer-skip depth
//   route                    edge-cloud routing: a cloud tier may answer (or, failing, fall back)
//   generate                 the local model, its pieces cut at stop strings, into the sink
//   store                    the reply in the semantic cache, after a miss
//   feed the router          the local prefill's rate, for the next decisions
//
// answer() runs it all on the calling thread (the app's engine thread, the CLI). The server
// runs the local generation in its queue: start() stops at the local generation and hands it
// over as a LocalReply, whose on_token and finish the queue's worker calls. The front ends hear
// the reply through a ReplySink.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "engine/chat/chat_template.h"
#include "engine/chat/reasoning_split.h"
#include "engine/core/status.h"
#include "engine/embedding/shared_embedder.h"
#include "engine/reply/draft_models.h"
#include "engine/reply/reply_cache.h"
#include "engine/reply/reply_outcome.h"
#include "engine/reply/reply_request.h"
#include "engine/reply/reply_routing.h"
#include "engine/reply/reply_sink.h"
#include "engine/reply/stop_strings.h"
#include "engine/runtime/session.h"

namespace inferscope::reply {

struct ReplyPipelineOptions {
  // How the weights were loaded (a requantize-on-load mix: "q4_0+gptq"), for the cache's scope.
  std::string weight_config = "as stored";
  // The semantic cache's embedder; null: made from the chat model's hidden states, or from a
  // request's CacheUse::embedding_model.
  std::shared_ptr<SharedEmbedder> embedder;
  int64_t embedding_context = 512;  // tokens of a question that an embedder made here reads
  // The local model's queue is full (the server's): routing may send the request away.
  std::function<bool()> local_busy;
  // When the router knows no prefill rate, a short prefill on the session measures one before
  // the first decision. Off where the session runs on another thread (the server's queue).
  bool calibrate_routing = true;
};

class ReplyPipeline;

// A reply whose local generation is the caller's to run (the server's queue): generate
// request(), pass each token to on_token (on the generating thread; false stops it), then the
// result to finish. The pipeline and the sink must outlive it.
class LocalReply {
 public:
  const GenerateRequest& request() const { return request_; }
  const ReplyHead& head() const { return head_; }
  bool on_token(const TokenEvent& event);
  std::variant<ReplyOutcome, ReplyError> finish(Result<GenerateResult> result);

 private:
  friend class ReplyPipeline;
  LocalReply(ReplyPipeline& pipeline, ReplySink& sink, GenerateRequest request, std::vector<std::string> stops,
             ReasoningFormat reasoning)
      : pipeline_(&pipeline),
        sink_(&sink),
        request_(std::move(request)),
        stops_(std::move(stops)),
        reasoning_split_(reasoning, request_.prompt) {}
  // Sends the segments of one piece of text (the token's own data with the first).
  bool deliver(const std::vector<ReasoningSegment>& segments, const TokenEvent* event);

  ReplyPipeline* pipeline_;
  ReplySink* sink_;
  GenerateRequest request_;
  ReplyHead head_;
  std::optional<ReplyCache::Probe> probe_;  // a miss's, to store the reply under
  StopStrings stops_;
  ReasoningSplitter reasoning_split_;
  std::string delivered_;  // the answer
  std::string reasoning_;
};

using ReplyResult = std::variant<ReplyOutcome, ReplyError>;
using StartedReply = std::variant<ReplyOutcome, LocalReply, ReplyError>;

class ReplyPipeline {
 public:
  // `session` must outlive the pipeline; the model's chat template is read here.
  static Result<std::unique_ptr<ReplyPipeline>> create(Session& session, ReplyPipelineOptions options = {});

  ReplyResult answer(const ReplyRequest& request, ReplySink& sink);
  // Everything up to the local generation: a reply the cache or a cloud tier gave is finished;
  // a local one comes back as a LocalReply. Several threads may start replies at once when
  // their requests change nothing of the pipeline (no draft model, no embedding model of
  // their own: the server's).
  StartedReply start(const ReplyRequest& request, ReplySink& sink);

  // Between replies: the semantic cache (null: off) and the routing (null: every reply local).
  void set_cache(std::shared_ptr<ReplyCache> cache) { cache_ = std::move(cache); }
  void set_routing(std::shared_ptr<ReplyRouting> routing) { routing_ = std::move(routing); }
  ReplyCache* cache() const { return cache_.get(); }

  const ChatTemplate& chat_template() const { return template_; }
  // The draft model kept for the session (its memory shows while a reply drafts with it).
  const std::shared_ptr<DraftModel>& draft_model() const { return drafts_.current(); }

 private:
  friend class LocalReply;
  struct Prompt;
  ReplyPipeline(Session& session, ChatTemplate chat_template, ReplyPipelineOptions options)
      : session_(session), template_(std::move(chat_template)), options_(std::move(options)), drafts_(session) {}

  std::variant<Prompt, ReplyError> assemble(const ReplyRequest& request, ReplySink& sink) const;
  std::optional<ReplyCache::Probe> look_up(const ReplyRequest& request, const Prompt& prompt, ReplySink& sink,
                                           CacheReport& report);
  Result<std::shared_ptr<SharedEmbedder>> embedder_for(const std::optional<std::string>& path);
  std::optional<route::RouteDecision> decide_route(const Prompt& prompt);
  void calibrate(const GenerateRequest& request);
  std::optional<StartedReply> answer_from_cloud(const ReplyRequest& request, const route::RouteDecision& decision,
                                                ReplySink& sink, ReplyHead& head);
  void observe_prefill(const GenerateResult& result);

  Session& session_;
  ChatTemplate template_;
  ReplyPipelineOptions options_;
  DraftModels drafts_;
  std::shared_ptr<ReplyCache> cache_;
  std::shared_ptr<ReplyRouting> routing_;
  std::shared_ptr<SharedEmbedder> embedder_ = options_.embedder;
  std::optional<std::string> embedder_path_;  // the file embedder_ reads ("" = the chat model); none: options'
};

}  // namespace inferscope::reply
