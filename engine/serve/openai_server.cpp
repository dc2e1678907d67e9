#include "engine/serve/openai_server.h"

#include <httplib.h>

#include <filesystem>

#include "engine/serve/api_key.h"
#include "engine/serve/generation_queue.h"
#include "engine/serve/openai_response.h"
#include "engine/serve/reply_channel.h"

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

// A completion as the handler prepared it: what the client asked for, how to answer it.
struct PreparedReply {
  TextRequest text;
  ReplyIdentity identity;
};

// A local reply on its way from the generation worker to the HTTP thread answering it: the
// pipeline's sink, whose pieces (cut at the stop strings) go into the channel the HTTP thread
// reads, and the pipeline's LocalReply, run by the queue.
class ServerReply : public reply::ReplySink {
 public:
  ServerReply(std::chrono::milliseconds pace, bool logprobs, std::function<void(const std::string&)> log)
      : channel(pace), logprobs_(logprobs), log_(std::move(log)) {}

  bool text(const reply::ReplyPiece& piece) override {
    ReplyChannel::Piece p{piece.text, std::nullopt, piece.reasoning};
    if (logprobs_ && piece.token >= 0) p.token = TokenChoice{piece.token, piece.top_logprobs};
    return channel.push(std::move(p));
  }
  void answering(const reply::ReplyHead& head) override {
    if (head.route) log(std::string("route: ") + route::tier_name(head.route->tier) + ": " + head.route->reason);
    if (!head.fallback.empty()) log("route: " + head.fallback);
  }
  void notice(reply::ReplyNotice kind, const std::string& message) override {
    const bool routing = kind == reply::ReplyNotice::RouteTierFailed || kind == reply::ReplyNotice::RouteFallback;
    if (kind != reply::ReplyNotice::RouteFallback) log((routing ? "route: " : "semantic cache: ") + message);
  }
  void forwarded(std::shared_ptr<route::CloudPassThrough> pipe) override { pipe_ = std::move(pipe); }
  const std::shared_ptr<route::CloudPassThrough>& pipe() const { return pipe_; }

  ReplyChannel channel;
  bool stopped_at_string = false;  // written by the worker before channel.finish, read after it

 private:
  void log(const std::string& line) const {
    if (log_) log_(line);
  }
  bool logprobs_;
  std::function<void(const std::string&)> log_;
  std::shared_ptr<route::CloudPassThrough> pipe_;
};

// The queue's job for the pipeline's local reply: its tokens and its end go through the
// LocalReply (stop strings, the cache, the router), then to the channel.
GenerationJob make_job(std::shared_ptr<reply::LocalReply> local, std::shared_ptr<ServerReply> live,
                       ServerMetrics& metrics) {
  GenerationJob job;
  job.request = local->request();
  job.on_token = [local, live](const TokenEvent& event) { return local->on_token(event); };
  job.on_done = [local, live, &metrics](Result<GenerateResult> result) {
    if (result) metrics.count_reply(*result);
    std::variant<reply::ReplyOutcome, reply::ReplyError> finished = local->finish(std::move(result));
    if (auto* error = std::get_if<reply::ReplyError>(&finished)) {
      live->channel.finish(Status::error(error->message));
      return;
    }
    reply::ReplyOutcome& outcome = std::get<reply::ReplyOutcome>(finished);
    live->stopped_at_string = outcome.stopped_at_string;
    live->channel.finish(std::move(*outcome.local));
  };
  return job;
}

Usage usage_of(const GenerateResult& r) {
  return {static_cast<std::int64_t>(r.prompt_token_ids.size()), static_cast<std::int64_t>(r.token_ids.size())};
}

// Waits for the whole reply and answers it as one object.
void answer_whole(httplib::Response& res, const PreparedReply& prepared, ServerReply& live, const Tokenizer& tokenizer,
                  std::chrono::seconds timeout) {
  std::string text, reasoning;
  std::vector<TokenChoice> tokens;
  const auto deadline = Clock::now() + timeout;
  for (bool done = false; !done;) {
    if (Clock::now() > deadline) {
      live.channel.abandon();
      return send_error(res, ApiError{504, "the reply took longer than the server's request timeout", "server_error", "", "timeout"});
    }
    for (ReplyChannel::Piece& p : live.channel.take(kStreamPoll, done)) {
      (p.reasoning ? reasoning : text) += p.text;
      if (p.token) tokens.push_back(std::move(*p.token));
    }
  }
  const Result<GenerateResult>& result = live.channel.result();
  if (!result) return send_error(res, server_error(result.message()));
  const json logprobs = prepared.text.logprobs ? logprobs_json(prepared.identity.api, tokenizer, tokens) : json();
  send_json(res, 200, completion_json(prepared.identity, text,
                                      finish_reason(result->stop_reason, live.stopped_at_string), usage_of(result.value()), logprobs,
                                      reasoning));
}

// Streams the reply as server-sent events: a chunk per batch of pieces, the last chunk with the
// finish reason and usage, then [DONE]. A client that goes away abandons the reply.
void answer_streamed(httplib::Response& res, const PreparedReply& prepared, std::shared_ptr<ServerReply> live,
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
          const std::string event =
              sse_event(chunk_json(prepared.identity, p.text, logprobs, *first, nullptr, nullptr, p.reasoning));
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
          const std::string finish = finish_reason(result->stop_reason, live->stopped_at_string);
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
void answer_cached(httplib::Response& res, const PreparedReply& prepared, const reply::ReplyOutcome& outcome,
                   const Tokenizer& tokenizer) {
  const std::string& reply = outcome.text;
  const Usage usage{outcome.head.prompt_tokens, static_cast<std::int64_t>(tokenizer.encode(reply, false, false).size())};
  const std::string finish = usage.completion_tokens >= prepared.text.max_tokens ? "length" : "stop";
  res.set_header("X-Inferscope-Cache", "hit");
  if (!prepared.text.stream) return send_json(res, 200, completion_json(prepared.identity, reply, finish, usage, json()));
  res.set_header("Cache-Control", "no-cache");
  std::string events = sse_event(chunk_json(prepared.identity, reply, json(), true, nullptr, nullptr));
  events += sse_event(chunk_json(prepared.identity, "", json(), false, &finish, &usage));
  events += kSseDone;
  res.set_content(events, "text/event-stream");
}

// A cloud tier's own reply, its status and content type, its bytes passed on as they come.
void answer_forwarded(httplib::Response& res, std::shared_ptr<route::CloudPassThrough> pipe) {
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
}

ApiError reply_error(const reply::ReplyError& error, bool chat) {
  switch (error.kind) {
    case reply::ReplyFailure::BadRequest:
      return bad_request(error.message, chat ? "messages" : "prompt");
    case reply::ReplyFailure::Cloud:
      return ApiError{502, error.message, "server_error", "", "cloud_failed"};
    case reply::ReplyFailure::Draft:
    case reply::ReplyFailure::Generation:
      break;
  }
  return server_error(error.message);
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
  server->model_ = std::move(model);
  server->options_ = std::move(options);
  server->session_ = std::move(*session);
  INFERSCOPE_RETURN_IF_ERROR(server->session_->reserve_sequences(server->options_.parallel));
  server->queue_ = std::make_unique<GenerationQueue>(*server->session_, server->options_.parallel,
                                                     server->options_.max_waiting);
  EmbedderOptions embedding;
  embedding.n_threads = server->session_->thread_setting();
  server->embedder_ = std::make_shared<SharedEmbedder>(
      server->options_.embedding_model ? server->options_.embedding_model : server->model_, embedding);
  INFERSCOPE_RETURN_IF_ERROR(server->make_pipeline());
  server->started_at_ = unix_seconds();
  INFERSCOPE_RETURN_IF_ERROR(server->bind());
  return server;
}

OpenAiServer::~OpenAiServer() { stop(); }

void OpenAiServer::stop() {
  if (http_) http_->stop();
  if (listener_.joinable()) listener_.join();
  queue_.reset();  // ends the running generations; streams still open see them end
  http_.reset();
  pipeline_.reset();
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
  reply::ReplyRequest request;
  PreparedReply prepared;
  if (chat) {
    Parsed<ChatCompletionRequest> parsed = parse_chat_completion(req.body, options_.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
    ChatCompletionRequest& r = std::get<ChatCompletionRequest>(parsed);
    request.messages = std::move(r.messages);
    prepared.text = std::move(r.text);
  } else {
    Parsed<CompletionRequest> parsed = parse_completion(req.body, options_.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return send_error(res, *e);
    CompletionRequest& r = std::get<CompletionRequest>(parsed);
    request.prompt = std::move(r.prompt);
    prepared.text = std::move(r.text);
  }
  const TextRequest& text = prepared.text;
  if (!known_model(text.model)) {
    return send_error(res, not_found("the model '" + text.model + "' is not served here; GET /v1/models lists it"));
  }
  request.max_tokens = text.max_tokens;
  request.sampling = text.sampling;
  request.top_logprobs = text.top_logprobs;
  request.stop = text.stop;
  request.cache.enabled = !text.logprobs;  // a cached reply has no logprobs to give
  request.scope_extras = {{"endpoint", chat ? "chat" : "text"}};
  request.forward = reply::CloudForward{chat ? "/chat/completions" : "/completions", req.body};
  prepared.identity = {chat ? Api::Chat : Api::Text, (chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id_++),
                       unix_seconds(), options_.model_name};

  auto live = std::make_shared<ServerReply>(options_.stream_pace, text.logprobs, options_.log);
  reply::StartedReply started = pipeline_->start(request, *live);
  if (auto* error = std::get_if<reply::ReplyError>(&started)) return send_error(res, reply_error(*error, chat));
  if (auto* outcome = std::get_if<reply::ReplyOutcome>(&started)) {
    if (outcome->head.source == reply::ReplySource::SemanticCache) {
      return answer_cached(res, prepared, *outcome, model_->tokenizer());
    }
    return answer_forwarded(res, live->pipe());
  }
  auto local = std::make_shared<reply::LocalReply>(std::move(std::get<reply::LocalReply>(started)));
  const reply::ReplyHead& head = local->head();
  if (head.cache) res.set_header("X-Inferscope-Cache", "miss");
  if (head.route) res.set_header("X-Inferscope-Route", head.fallback.empty() ? "local" : "local (fallback)");
  if (!queue_->submit(make_job(local, live, metrics_))) {
    return send_error(res, overloaded("the server is busy: " + std::to_string(options_.max_waiting) +
                                      " requests wait already; retry shortly"));
  }
  if (text.stream) answer_streamed(res, prepared, live, model_->tokenizer());
  else answer_whole(res, prepared, *live, model_->tokenizer(), options_.request_timeout);
}

// The pipeline of the server's replies: its generations in the queue (whose fullness routing
// sees), the semantic cache and the routing when the options ask for them.
Status OpenAiServer::make_pipeline() {
  reply::ReplyPipelineOptions options;
  options.embedder = embedder_;
  options.local_busy = [this] { return queue_->waiting() >= options_.max_waiting; };
  options.calibrate_routing = false;  // the session runs on the queue's worker
  auto pipeline = reply::ReplyPipeline::create(*session_, std::move(options));
  if (!pipeline) return pipeline.status();
  pipeline_ = std::move(*pipeline);
  if (options_.semantic_cache) {
    auto cache = reply::ReplyCache::open(options_.semantic_cache->database, options_.semantic_cache->cache);
    if (!cache) return cache.status();
    cache_ = std::move(*cache);
    if (!cache_->notice().empty()) log("semantic cache: in memory only: " + cache_->notice());
    pipeline_->set_cache(cache_);
  }
  if (options_.route) {
    std::shared_ptr<reply::ReplyRouting> routing = reply::ReplyRouting::create(*options_.route);
    for (const std::string& why : routing->unreachable()) log("route: the cloud tier is not reachable: " + why);
    pipeline_->set_routing(std::move(routing));
  }
  return Status::ok();
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
