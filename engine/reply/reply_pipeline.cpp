#include "engine/reply/reply_pipeline.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat/chat_prompt.h"
#include "engine/reply/reply_scope.h"

namespace inferscope::reply {

namespace {

constexpr int kCalibrationTokens = 32;  // tokens of the prompt a routing calibration prefills

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// A reply that ended by itself (at its end, its length or a stop string): the cache may keep it.
bool storable(const GenerateResult& result, bool stopped_at_string) {
  const std::string& why = result.stop_reason;
  return stopped_at_string || why == "eos" || why == "end_of_turn" || why == "max_tokens";
}

route::CloudRequest cloud_request(const ReplyRequest& r) {
  route::CloudRequest c;
  c.messages = r.messages;
  c.prompt = r.prompt;
  c.max_tokens = r.max_tokens;
  c.temperature = r.sampling.temperature;
  c.top_p = r.sampling.top_p;
  if (r.sampling.seed != SamplingParams::kRandomSeed) c.seed = static_cast<long long>(r.sampling.seed);
  return c;
}

}  // namespace

// A request assembled: the generation's request, what the cache looks up (the question, the
// system prompt, the history) and what routing's private patterns see (every message).
struct ReplyPipeline::Prompt {
  GenerateRequest request;
  int64_t tokens = 0;  // the prompt's
  semantic::ConversationTurns turns;
  std::string routed_text;
  bool chat = false;
};

Result<std::unique_ptr<ReplyPipeline>> ReplyPipeline::create(Session& session, ReplyPipelineOptions options) {
  const Model& model = session.model();
  auto chat = ChatTemplate::for_chat(model.file(), model.tokenizer());
  if (!chat) return chat.status();
  return std::unique_ptr<ReplyPipeline>(new ReplyPipeline(session, std::move(*chat), std::move(options)));
}

ReplyResult ReplyPipeline::answer(const ReplyRequest& request, ReplySink& sink) {
  StartedReply started = start(request, sink);
  if (auto* outcome = std::get_if<ReplyOutcome>(&started)) return std::move(*outcome);
  if (auto* error = std::get_if<ReplyError>(&started)) return std::move(*error);
  LocalReply& local = std::get<LocalReply>(started);
  auto result = session_.generate(local.request(), [&](const TokenEvent& event) { return local.on_token(event); });
  return local.finish(std::move(result));
}

StartedReply ReplyPipeline::start(const ReplyRequest& request, ReplySink& sink) {
  auto assembled = assemble(request, sink);
  if (auto* error = std::get_if<ReplyError>(&assembled)) return std::move(*error);
  Prompt& prompt = std::get<Prompt>(assembled);
  ReplyHead head;
  head.prompt_tokens = prompt.tokens;

  std::optional<ReplyCache::Probe> probe;
  if (request.cache.enabled && cache_ && !prompt.turns.prompt.empty()) {
    CacheReport report;
    probe = look_up(request, prompt, sink, report);
    if (probe) head.cache = std::move(report);
    if (probe && probe->lookup.hit) {
      head.source = ReplySource::SemanticCache;
      sink.answering(head);
      const semantic::CacheHit& hit = *probe->lookup.hit;
      sink.text({hit.reply});
      ReplyOutcome outcome;
      outcome.head = std::move(head);
      outcome.text = hit.reply;
      outcome.cached_prompt = hit.matched_prompt;
      return outcome;
    }
  }

  auto draft = drafts_.prepare(request.draft);
  if (!draft) return ReplyError{ReplyFailure::Draft, "the speculative draft cannot be used: " + draft.message()};
  prompt.request.draft = std::move(*draft);

  if (routing_) {
    head.route = decide_route(prompt);
    if (head.route->tier == route::Tier::Cloud) {
      if (auto answered = answer_from_cloud(request, *head.route, sink, head)) return std::move(*answered);
    }
  }

  head.source = ReplySource::Local;
  sink.answering(head);
  LocalReply local(*this, sink, std::move(prompt.request), request.stop,
                   prompt.chat ? reasoning_format_of(template_.source()) : ReasoningFormat::None);
  local.head_ = std::move(head);
  local.probe_ = std::move(probe);
  return local;
}

std::variant<ReplyPipeline::Prompt, ReplyError> ReplyPipeline::assemble(const ReplyRequest& r, ReplySink& sink) const {
  const Tokenizer& tokenizer = session_.model().tokenizer();
  Prompt p;
  p.chat = r.is_chat();
  if (p.chat) {
    if (!template_.fallback_reason().empty()) sink.notice(ReplyNotice::ChatFormat, template_.fallback_reason());
    auto chat = build_chat_prompt(tokenizer, template_, r.messages, session_.n_ctx(), r.max_tokens);
    if (!chat) return ReplyError{ReplyFailure::BadRequest, chat.message()};
    if (!chat->fallback_reason.empty()) sink.notice(ReplyNotice::ChatFormat, chat->fallback_reason);
    p.request = std::move(chat->request);
    std::vector<semantic::HistoryMessage> conversation;
    for (const ChatMessage& m : r.messages) {
      p.routed_text += m.content + "\n";
      conversation.push_back({m.role, m.content});
    }
    p.turns = semantic::split_turns(conversation);
  } else {
    p.request.prompt = r.prompt;
    p.routed_text = r.prompt;
    p.turns.prompt = r.prompt;
  }
  const GenerateRequest& g = p.request;
  p.tokens = static_cast<int64_t>(tokenizer.encode(g.prompt, g.add_special, g.parse_special).size());
  if (!p.chat && p.tokens >= session_.n_ctx()) {
    return ReplyError{ReplyFailure::BadRequest, "the prompt is " + std::to_string(p.tokens) +
                                                    " tokens; the context holds " + std::to_string(session_.n_ctx())};
  }
  p.request.max_tokens = r.max_tokens;
  p.request.sampling = r.sampling;
  p.request.beam_width = r.beam_width;
  p.request.top_logprobs = r.top_logprobs;
  return p;
}

// The question embedded and looked up under its reply's scope; nothing (after a notice) when
// the cache cannot be used for it.
std::optional<ReplyCache::Probe> ReplyPipeline::look_up(const ReplyRequest& request, const Prompt& prompt,
                                                        ReplySink& sink, CacheReport& report) {
  const auto start = std::chrono::steady_clock::now();
  auto embedder = embedder_for(request.cache.embedding_model);
  Status configured = embedder ? Status::ok() : embedder.status();
  if (configured && request.cache.options) configured = cache_->configure(*request.cache.options);
  if (!configured) {
    sink.notice(ReplyNotice::CacheSkipped, "the semantic cache was skipped: " + configured.message());
    return std::nullopt;
  }
  report.setup_ms = ms_since(start);
  semantic::CacheScopeInputs scope = reply_scope_inputs(session_.model(), prompt.request, session_.options());
  scope.weight_config = options_.weight_config;
  scope.system_prompt = prompt.turns.system;
  scope.history = prompt.turns.history;
  scope.history_policy = prompt.chat ? semantic::HistoryPolicy::full_history : semantic::HistoryPolicy::last_turn_only;
  for (size_t i = 0; i < request.stop.size(); ++i) scope.sampling.other["stop " + std::to_string(i)] = request.stop[i];
  for (const auto& [key, value] : request.scope_extras) scope.sampling.other[key] = value;
  auto probe = cache_->probe(**embedder, std::move(scope), prompt.turns.prompt, !request.cache.skip_lookup);
  if (!probe) {
    sink.notice(ReplyNotice::CacheSkipped, "the semantic cache was skipped: " + probe.message());
    return std::nullopt;
  }
  const std::string notice = cache_->notice();
  if (!notice.empty()) sink.notice(ReplyNotice::CacheMemoryOnly, "the semantic cache runs in memory only: " + notice);
  if (const auto& rejected = probe->lookup.rejected) {
    sink.notice(ReplyNotice::CacheGuard, "the guard refused '" + rejected->matched_prompt + "' (similarity " +
                                             std::to_string(rejected->similarity) + "): " + rejected->reason);
  }
  report.scope = probe->scope;
  report.lookup = probe->lookup;
  report.looked_up = !request.cache.skip_lookup;
  report.embed_ms = probe->embed_ms;
  report.search_ms = probe->search_ms;
  return std::move(*probe);
}

// The embedder of `path` ("" = the chat model's hidden states; none: the one there is, else the
// chat model's), made when it changed.
Result<std::shared_ptr<SharedEmbedder>> ReplyPipeline::embedder_for(const std::optional<std::string>& path) {
  if (embedder_ && (!path || path == embedder_path_)) return embedder_;
  const std::string file = path.value_or("");
  std::shared_ptr<const Model> model = session_.shared_model();
  if (!file.empty()) {
    auto loaded = Model::load(file);
    if (!loaded) return Status::error("the embedding model could not be loaded: " + loaded.message());
    model = std::move(*loaded);
  }
  EmbedderOptions options;
  options.n_threads = session_.thread_setting();
  options.n_ctx = options_.embedding_context;
  embedder_ = std::make_shared<SharedEmbedder>(std::move(model), options);
  embedder_path_ = file;
  return embedder_;
}

// Which tier answers: the router's decision on the prompt's text and length, after a prefill
// on the session measured the local rate when nothing told it one yet.
std::optional<route::RouteDecision> ReplyPipeline::decide_route(const Prompt& prompt) {
  route::Router& router = routing_->router();
  const route::RouteConfig& config = routing_->config();
  if (options_.calibrate_routing && config.edge.enabled && !router.knows_prefill_rate()) calibrate(prompt.request);
  route::RouteInputs in;
  in.prompt = prompt.routed_text;
  in.prompt_tokens = prompt.tokens;
  in.local_available = config.edge.enabled;
  in.local_busy = options_.local_busy && options_.local_busy();
  in.cloud_available = routing_->reachable() > 0;
  return router.decide(in);
}

// The reply from the cloud tiers, or nothing when the local model is to answer instead (the
// fallback, with its notice and in the head).
std::optional<StartedReply> ReplyPipeline::answer_from_cloud(const ReplyRequest& request,
                                                             const route::RouteDecision& decision, ReplySink& sink,
                                                             ReplyHead& head) {
  CloudAnswer answer = routing_->ask_clouds(cloud_request(request), request.forward, head, sink);
  if (answer.kind == CloudAnswer::Kind::FailedMidway) {
    return ReplyError{ReplyFailure::Cloud, "the cloud tier failed in the middle of the reply: " + answer.failures};
  }
  if (answer.kind != CloudAnswer::Kind::Failed) {
    ReplyOutcome outcome;
    outcome.head = head;
    if (answer.reply) {
      outcome.text = answer.reply->text;
      outcome.cloud = std::move(answer.reply);
    }
    return outcome;
  }
  if (!routing_->router().fallback_after(route::Tier::Cloud, decision) || !routing_->config().edge.enabled) {
    return ReplyError{ReplyFailure::Cloud, "the cloud tier failed and routing allows no fallback: " + answer.failures};
  }
  head.fallback = "the cloud tier failed (" + answer.failures + "); the local model answers";
  sink.notice(ReplyNotice::RouteFallback, head.fallback);
  return std::nullopt;
}

// Times a prefill of kCalibrationTokens tokens of the prompt (repeated when shorter).
void ReplyPipeline::calibrate(const GenerateRequest& request) {
  const std::vector<int32_t> tokens =
      session_.model().tokenizer().encode(request.prompt, request.add_special, request.parse_special);
  if (tokens.empty()) return;
  std::vector<int32_t> sample;
  while (static_cast<int>(sample.size()) < kCalibrationTokens) sample.insert(sample.end(), tokens.begin(), tokens.end());
  sample.resize(kCalibrationTokens);
  std::vector<float> logits;
  const auto start = std::chrono::steady_clock::now();
  if (session_.evaluate(sample, logits)) routing_->router().observe_local_prefill(kCalibrationTokens, ms_since(start));
}

void ReplyPipeline::observe_prefill(const GenerateResult& result) {
  if (!routing_) return;
  routing_->router().observe_local_prefill(static_cast<int64_t>(result.prompt_token_ids.size()) - result.reused_tokens,
                                           result.timings.prefill_ms);
}

bool LocalReply::deliver(const std::vector<ReasoningSegment>& segments, const TokenEvent* event) {
  bool wanted = true;
  for (size_t i = 0; i < segments.size(); ++i) {
    const ReasoningSegment& s = segments[i];
    (s.reasoning ? reasoning_ : delivered_) += s.text;
    ReplyPiece piece{s.text, -1, {}, s.reasoning};
    if (event != nullptr && i == 0) {
      piece.token = event->id;
      piece.top_logprobs = event->top_logprobs;
    }
    wanted = sink_->text(piece) && wanted;
  }
  if (segments.empty() && event != nullptr) {
    wanted = sink_->text({"", event->id, event->top_logprobs, reasoning_split_.in_reasoning()});  // a token held back
  }
  return wanted;
}

bool LocalReply::on_token(const TokenEvent& event) {
  const bool wanted = deliver(reasoning_split_.push(stops_.push(event.text)), &event);
  return wanted && !stops_.stopped() && !sink_->cancelled();
}

std::variant<ReplyOutcome, ReplyError> LocalReply::finish(Result<GenerateResult> result) {
  deliver(reasoning_split_.push(stops_.flush()), nullptr);
  deliver(reasoning_split_.flush(), nullptr);
  if (!result) return ReplyError{ReplyFailure::Generation, result.message()};
  ReplyCache* cache = pipeline_->cache();
  if (probe_ && cache && storable(*result, stops_.stopped())) {
    const Status stored = cache->store(*probe_, delivered_);
    if (!stored) sink_->notice(ReplyNotice::CacheNotStored, "the reply was not stored in the semantic cache: " + stored.message());
  }
  if (head_.route) pipeline_->observe_prefill(*result);
  ReplyOutcome outcome;
  outcome.head = head_;
  outcome.text = delivered_;
  outcome.reasoning = reasoning_;
  outcome.stopped_at_string = stops_.stopped();
  outcome.drafted_with_model = request_.draft.source == DraftSource::Model && request_.draft.model != nullptr;
  outcome.local = std::move(*result);
  return outcome;
}

}  // namespace inferscope::reply
