#include "engine/serve/openai_server.h"

#include <httplib.h>

#include <filesystem>

#include "engine/chat/chat_prompt.h"
#include "engine/runtime/reply_scope.h"
#include "engine/serve/api_key.h"
#include "engine/serve/cloud_pass_through.h"
#include "engine/serve/generation_queue.h"
#include "engine/serve/openai_response.h"
#include "engine/serve/reply_channel.h"
#include "engine/serve/stop_strings.h"

namespace inferscope::serve {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kStreamPoll{100};
constexpr const char* kRetryAfterSeconds = "1";

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
  if (error.http_status == 503) res.set_header("Retry-After", kRetryAfterSeconds);
  send_json(res, error.http_status, error.body());
}

// A generation as the handler prepared it: the engine's request, what the client asked for.
struct PreparedReply {
  GenerateRequest request;
  TextRequest text;
  ReplyIdentity identity;
};

// What the job shares with the HTTP thread answering it.
struct LiveReply {
  ReplyChannel channel;
  StopStrings stops;
  std::string delivered;  // the reply's text as sent (cut at a stop string); the worker's
  LiveReply(std::vector<std::string> stop, std::chrono::milliseconds pace) : channel(pace), stops(std::move(stop)) {}
};

// A reply the semantic cache may keep: one that ended by itself, at its length or at a stop
// string (not one cancelled or cut short by the context).
bool storable(const GenerateResult& result, const LiveReply& live) {
  const std::string& why = result.stop_reason;
  return live.stops.stopped() || why == "eos" || why == "end_of_turn" || why == "max_tokens";
}

// After a cache miss: where the finished reply is stored.
struct CacheStore {
  CompletionCache* cache = nullptr;
  std::optional<CompletionCache::Probe> probe;
};

GenerationJob make_job(const PreparedReply& prepared, std::shared_ptr<LiveReply> live, ServerMetrics& metrics,
                       route::Router* router, std::shared_ptr<CacheStore> store) {
  GenerationJob job;
  job.request = prepared.request;
  const bool logprobs = prepared.text.logprobs;
  job.on_token = [live, logprobs](const TokenEvent& event) {
    ReplyChannel::Piece piece{live->stops.push(event.text), std::nullopt};
    if (logprobs && event.id >= 0) piece.token = TokenChoice{event.id, event.top_logprobs};
    live->delivered += piece.text;
    const bool wanted = live->channel.push(std::move(piece));
    return wanted && !live->stops.stopped();
  };
  job.on_done = [live, &metrics, router, store](Result<GenerateResult> result) {
    const std::string held = live->stops.flush();
    live->delivered += held;
    if (!held.empty()) live->channel.push({held, std::nullopt});
    if (result && store->probe && storable(*result, *live)) (void)store->cache->store(*store->probe, live->delivered);
    if (result) metrics.count_reply(*result);
    if (result && router) {
      router->observe_local_prefill(static_cast<std::int64_t>(result->prompt_token_ids.size()) - result->reused_tokens,
                                    result->timings.prefill_ms);
    }
    live->channel.finish(std::move(result));
  };
  return job;
}

Usage usage_of(const GenerateResult& r) {
  return {static_cast<std::int64_t>(r.prompt_token_ids.size()), static_cast<std::int64_t>(r.token_ids.size())};
}

// Waits for the whole reply and answers it as one object.
void answer_whole(httplib::Response& res, const PreparedReply& prepared, LiveReply& live, const Tokenizer& tokenizer,
                  std::chrono::seconds timeout) {
  std::string text;
  std::vector<TokenChoice> tokens;
  const auto deadline = Clock::now() + timeout;
  for (bool done = false; !done;) {
    if (Clock::now() > deadline) {
      live.channel.abandon();
      return send_error(res, ApiError{504, "the reply took longer than the server's request timeout", "server_error", "", "timeout"});
    }
    for (ReplyChannel::Piece& p : live.channel.take(kStreamPoll, done)) {
      text += p.text;
      if (p.token) tokens.push_back(std::move(*p.token));
    }
  }
  const Result<GenerateResult>& result = live.channel.result();
  if (!result) return send_error(res, server_error(result.message()));
  const json logprobs = prepared.text.logprobs ? logprobs_json(prepared.identity.api, tokenizer, tokens) : json();
  send_json(res, 200, completion_json(prepared.identity, text,
                                      finish_reason(result->stop_reason, live.stops.stopped()), usage_of(result.value()), logprobs));
}

// Streams the reply as server-sent events: a chunk per batch of pieces, the last chunk with the
// finish reason and usage, then [DONE]. A client that goes away abandons the reply.
void answer_streamed(httplib::Response& res, const PreparedReply& prepared, std::shared_ptr<LiveReply> live,
                     const Tokenizer& tokenizer) {
  auto first = std::make_shared<bool>(true);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [prepared, live, first, &tokenizer](std::size_t, httplib::DataSink& sink) {
        bool done = false;
        for (ReplyChannel::Piece& p : live->channel.take(kStreamPoll, done)) {
          if (p.text.empty() && !p.token && !*first) continue;
          const json logprobs = p.token ? logprobs_json(prepared.identity.api, tokenizer, {*p.token}) : json();
          const std::string event = sse_event(chunk_json(prepared.identity, p.text, logprobs, *first, nullptr, nullptr));
          *first = false;
          if (!sink.write(event.data(), event.size())) return false;
        }
        if (!sink.is_writable()) return false;
        if (!done) return true;
        const Result<GenerateResult>& result = live->channel.result();
        std::string tail;
        if (!result) {
          tail = sse_event(server_error(result.message()).body());
        } else {
          const std::string finish = finish_reason(result->stop_reason, live->stops.stopped());
          const Usage usage = usage_of(result.value());
          tail = sse_event(chunk_json(prepared.identity, "", json(), *first, &finish, &usage));
        }
        tail += kSseDone;
        sink.write(tail.data(), tail.size());
        sink.done();
        return true;
      },
      [live](bool success) {
        if (!success) live->channel.abandon();
      });
}

// Answers with a reply from the semantic cache, whole or as one streamed chunk and the last.
// Its finish reason: "length" when it has max_tokens tokens, else "stop".
void answer_cached(httplib::Response& res, const PreparedReply& prepared, const std::string& reply,
                   const Tokenizer& tokenizer) {
  const GenerateRequest& r = prepared.request;
  const Usage usage{static_cast<std::int64_t>(tokenizer.encode(r.prompt, r.add_special, r.parse_special).size()),
                    static_cast<std::int64_t>(tokenizer.encode(reply, false, false).size())};
  const std::string finish = usage.completion_tokens >= r.max_tokens ? "length" : "stop";
  res.set_header("X-Inferscope-Cache", "hit");
  if (!prepared.text.stream) return send_json(res, 200, completion_json(prepared.identity, reply, finish, usage, json()));
  res.set_header("Cache-Control", "no-cache");
  std::string events = sse_event(chunk_json(prepared.identity, reply, json(), true, nullptr, nullptr));
  events += sse_event(chunk_json(prepared.identity, "", json(), false, &finish, &usage));
  events += kSseDone;
  res.set_content(events, "text/event-stream");
}

}  // namespace

Result<std::unique_ptr<OpenAiServer>> OpenAiServer::start(std::shared_ptr<const Model> model, ServerOptions options) {
  if (model->config().is_encoder()) return Status::error("an embedding model cannot be served for chat; give a chat model");
  if (!is_loopback_host(options.host) && options.api_key.empty() && !options.insecure_no_key) {
    return Status::error("serving " + options.host +
                         " (not loopback) needs an API key (--api-key or --api-key-file); --insecure-no-key serves it "
                         "to anyone who can reach it");
  }
  std::unique_ptr<OpenAiServer> server(new OpenAiServer());
  if (options.model_name.empty()) options.model_name = std::filesystem::path(model->file().path()).filename().string();
  auto session = Session::create(model, options.session);
  if (!session) return session.status();
  auto chat = ChatTemplate::for_chat(model->file(), model->tokenizer());
  if (!chat) return chat.status();
  server->model_ = std::move(model);
  server->options_ = std::move(options);
  server->session_ = std::move(*session);
  INFERSCOPE_RETURN_IF_ERROR(server->session_->reserve_sequences(server->options_.parallel));
  server->template_ = std::make_unique<ChatTemplate>(std::move(*chat));
  server->queue_ = std::make_unique<GenerationQueue>(*server->session_, server->options_.parallel,
                                                     server->options_.max_waiting);
  server->embedder_ = std::make_unique<SharedEmbedder>(
      server->options_.embedding_model ? server->options_.embedding_model : server->model_,
      server->session_->thread_setting());
  INFERSCOPE_RETURN_IF_ERROR(server->open_cache());
  server->started_at_ = unix_seconds();
  server->start_routing();
  INFERSCOPE_RETURN_IF_ERROR(server->bind());
  return server;
}

OpenAiServer::~OpenAiServer() { stop(); }

void OpenAiServer::stop() {
  if (http_) http_->stop();
  if (listener_.joinable()) listener_.join();
  queue_.reset();  // ends the running generations; streams still open see them end
  http_.reset();
}

Status OpenAiServer::bind() {
  http_ = std::make_unique<httplib::Server>();
  const std::size_t threads = static_cast<std::size_t>(options_.parallel) + options_.max_waiting + 4;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Address reuse after a restart, but not SO_REUSEPORT (cpp-httplib's default), which would let
  // a second server share the port and take some of its clients.
  http_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http_->set_payload_max_length(options_.limits.max_body_bytes);
  http_->set_read_timeout(std::chrono::seconds(30));
  http_->set_write_timeout(options_.request_timeout);
  route();
  port_ = options_.port == 0 ? http_->bind_to_any_port(options_.host) : options_.port;
  if (options_.port != 0 && !http_->bind_to_port(options_.host, options_.port)) port_ = -1;
  if (port_ < 0) {
    return Status::error("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                         " (address in use, or not this machine's?)");
  }
  listener_ = std::thread([this] {
    http_->listen_after_bind();
    listener_done_ = true;
  });
  // stop() does nothing to a server that is not running yet (the join would then wait forever):
  // return once it runs, or once its listener gave up.
  while (!http_->is_running() && !listener_done_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!http_->is_running()) return Status::error("the server on " + options_.host + " stopped as it started");
  return Status::ok();
}

bool OpenAiServer::authorized(const httplib::Request& req) const {
  if (options_.api_key.empty()) return true;
  return same_key(bearer_token(req.get_header_value("Authorization")), options_.api_key);
}

bool OpenAiServer::known_model(const std::string& name) const {
  return name.empty() || name == options_.model_name || name == model_->file().path();
}

void OpenAiServer::route() {
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    requests_ += 1;
    if (req.path == "/health" || authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, unauthorized("missing or wrong API key: send 'Authorization: Bearer <key>'"));
    return httplib::Server::HandlerResponse::Handled;
  });
  http_->set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    metrics_.count_request(req.path, res.status);
  });
  http_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return;
    if (res.status == 413) return send_error(res, too_large("the request body is larger than the server's limit"));
    if (res.status == 404) return send_error(res, not_found("no such endpoint: " + req.method + " " + req.path));
    send_error(res, ApiError{res.status, "the request could not be served", "invalid_request_error", "", ""});
  });
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
    send_error(res, server_error("the request failed: " + what));
  });
  http_->Get("/health", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, {{"status", "ok"}}); });
  http_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, models_json({options_.model_name}, started_at_));
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    ScrapeState now{queue_->running(), queue_->waiting(), cache_ ? cache_->stats() : semantic::CacheStats{}};
    res.set_content(metrics_.prometheus_text(now), "text/plain; version=0.0.4");
  });
  http_->Post("/v1/chat/completions",
              [this](const httplib::Request& req, httplib::Response& res) { answer_generation(req, res, true); });
  http_->Post("/v1/completions",
              [this](const httplib::Request& req, httplib::Response& res) { answer_generation(req, res, false); });
  http_->Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) { answer_embeddings(req, res); });
}

void OpenAiServer::answer_generation(const httplib::Request& req, httplib::Response& res, bool chat) {
  PreparedReply prepared;
  std::string routed_text;  // what the private patterns are matched against: every message
  semantic::ConversationTurns turns;  // what the semantic cache looks up
  const Tokenizer& tokenizer = model_->tokenizer();
  if (chat) {
    Parsed<ChatCompletionRequest> parsed = parse_chat_completion(req.body, options_.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
    ChatCompletionRequest& r = std::get<ChatCompletionRequest>(parsed);
    std::vector<semantic::HistoryMessage> conversation;
    for (const ChatMessage& m : r.messages) {
      routed_text += m.content + "\n";
      conversation.push_back({m.role, m.content});
    }
    turns = semantic::split_turns(conversation);
    auto prompt = build_chat_prompt(tokenizer, *template_, std::move(r.messages), session_->n_ctx(), r.text.max_tokens);
    if (!prompt) return send_error(res, bad_request(prompt.message(), "messages"));
    prepared.request = std::move(prompt->request);
    prepared.text = std::move(r.text);
  } else {
    Parsed<CompletionRequest> parsed = parse_completion(req.body, options_.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
    CompletionRequest& r = std::get<CompletionRequest>(parsed);
    const std::size_t tokens = tokenizer.encode(r.prompt, true, false).size();
    if (static_cast<std::int64_t>(tokens) >= session_->n_ctx()) {
      return send_error(res, bad_request("the prompt is " + std::to_string(tokens) + " tokens; the context holds " +
                                             std::to_string(session_->n_ctx()),
                                         "prompt"));
    }
    routed_text = r.prompt;
    turns.prompt = r.prompt;
    prepared.request.prompt = std::move(r.prompt);
    prepared.text = std::move(r.text);
  }
  if (!known_model(prepared.text.model)) {
    return send_error(res, not_found("the model '" + prepared.text.model + "' is not served here; GET /v1/models lists it"));
  }
  prepared.request.max_tokens = prepared.text.max_tokens;
  prepared.request.sampling = prepared.text.sampling;
  prepared.request.top_logprobs = prepared.text.top_logprobs;
  prepared.identity = {chat ? Api::Chat : Api::Text, (chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id_++),
                       unix_seconds(), options_.model_name};
  auto store = std::make_shared<CacheStore>();
  if (cache_ && !prepared.text.logprobs && !turns.prompt.empty()) {
    auto probe = cache_->look_up(cache_scope(prepared.request, prepared.text, turns, chat), turns.prompt);
    if (!probe && options_.log) options_.log("semantic cache: the lookup failed: " + probe.message());
    if (probe && probe->hit) return answer_cached(res, prepared, probe->hit->reply, tokenizer);
    if (probe) *store = {cache_.get(), std::move(*probe)};
    res.set_header("X-Inferscope-Cache", "miss");
  }
  auto live = std::make_shared<LiveReply>(prepared.text.stop, options_.stream_pace);
  if (router_ && answered_by_cloud(req, res, chat, routed_text, prepared.request)) return;
  if (!queue_->submit(make_job(prepared, live, metrics_, router_.get(), store))) {
    return send_error(res, overloaded("the server is busy: " + std::to_string(options_.max_waiting) +
                                      " requests wait already; retry shortly"));
  }
  if (prepared.text.stream) answer_streamed(res, prepared, live, tokenizer);
  else answer_whole(res, prepared, *live, tokenizer, options_.request_timeout);
}

Status OpenAiServer::open_cache() {
  if (!options_.semantic_cache) return Status::ok();
  auto cache = CompletionCache::open(*options_.semantic_cache, *embedder_);
  if (!cache) return cache.status();
  cache_ = std::move(*cache);
  if (!cache_->notice().empty() && options_.log) options_.log("semantic cache: in memory only: " + cache_->notice());
  return Status::ok();
}

semantic::CacheScopeInputs OpenAiServer::cache_scope(const GenerateRequest& request, const TextRequest& text,
                                                     const semantic::ConversationTurns& turns, bool chat) const {
  semantic::CacheScopeInputs in = reply_scope_inputs(*model_, request, session_->options());
  in.system_prompt = turns.system;
  in.history = turns.history;
  in.history_policy = chat ? semantic::HistoryPolicy::full_history : semantic::HistoryPolicy::last_turn_only;
  in.sampling.other["endpoint"] = chat ? "chat" : "text";
  for (std::size_t i = 0; i < text.stop.size(); ++i) in.sampling.other["stop " + std::to_string(i)] = text.stop[i];
  return in;
}

void OpenAiServer::start_routing() {
  if (!options_.route) return;
  router_ = std::make_unique<route::Router>(options_.route->routing);
  for (const route::CloudTier& tier : options_.route->clouds) {
    route::CloudClient cloud(tier);
    auto rtt = cloud.probe();
    if (!rtt) {
      if (options_.log) options_.log("route: the cloud tier is not reachable: " + rtt.message());
      continue;
    }
    router_->observe_cloud_rtt(*rtt);
    clouds_.push_back(std::move(cloud));
  }
}

bool OpenAiServer::answered_by_cloud(const httplib::Request& req, httplib::Response& res, bool chat,
                                     const std::string& prompt_text, const GenerateRequest& request) {
  route::RouteInputs in;
  in.prompt = prompt_text;
  in.prompt_tokens = static_cast<std::int64_t>(
      model_->tokenizer().encode(request.prompt, request.add_special, request.parse_special).size());
  in.local_available = options_.route->edge.enabled;
  in.local_busy = queue_->waiting() >= options_.max_waiting;
  in.cloud_available = !clouds_.empty();
  const route::RouteDecision decision = router_->decide(in);
  const auto log = [this](const std::string& line) {
    if (options_.log) options_.log(line);
  };
  log(std::string("route: ") + route::tier_name(decision.tier) + ": " + decision.reason);
  if (decision.tier == route::Tier::Local) {
    res.set_header("X-Inferscope-Route", "local");
    return false;
  }
  const auto start = Clock::now();
  for (const route::CloudClient& cloud : clouds_) {
    auto pipe = CloudPassThrough::start(cloud, chat ? "/chat/completions" : "/completions", req.body);
    if (!pipe->wait_for_head(cloud.tier().timeout)) {
      pipe->abandon();
      log("route: " + cloud.tier().endpoint + " failed: " + pipe->error());
      continue;
    }
    router_->observe_cloud_rtt(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    res.status = pipe->status();
    res.set_header("X-Inferscope-Route", "cloud");
    const std::string type = pipe->content_type();
    res.set_chunked_content_provider(
        type.empty() ? "application/json" : type,
        [pipe](std::size_t, httplib::DataSink& sink) {
          bool done = false;
          const std::string bytes = pipe->take(kStreamPoll, done);
          if (!bytes.empty() && !sink.write(bytes.data(), bytes.size())) return false;
          if (done) sink.done();
          return true;
        },
        [pipe](bool success) {
          if (!success) pipe->abandon();
        });
    return true;
  }
  if (!router_->fallback_after(route::Tier::Cloud, decision) || !options_.route->edge.enabled) {
    send_error(res, ApiError{502, "the cloud tier failed and there is no fallback", "server_error", "", "cloud_failed"});
    return true;
  }
  log("route: the cloud tier failed; the local model answers");
  res.set_header("X-Inferscope-Route", "local (fallback)");
  return false;
}

void OpenAiServer::answer_embeddings(const httplib::Request& req, httplib::Response& res) {
  Parsed<EmbeddingRequest> parsed = parse_embedding(req.body, options_.limits);
  if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
  const EmbeddingRequest& r = std::get<EmbeddingRequest>(parsed);
  std::vector<std::vector<float>> vectors;
  std::int64_t tokens = 0;
  for (const std::string& text : r.inputs) {
    auto e = embedder_->embed(text);
    if (!e) return send_error(res, server_error(e.message()));
    tokens += static_cast<std::int64_t>(e->tokens.size());
    vectors.push_back(std::move(e->values));
  }
  send_json(res, 200, embeddings_json(r.model.empty() ? options_.model_name : r.model, vectors, tokens));
}

}  // namespace inferscope::serve
