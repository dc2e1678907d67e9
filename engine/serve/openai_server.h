// An OpenAI-compatible HTTP server for one loaded model (cpp-httplib, Debian's
// libcpp-httplib-dev): POST /v1/chat/completions (through the model's chat template) and
// /v1/completions, streamed as server-sent events or whole; POST /v1/embeddings; GET /v1/models,
// /health and /metrics (Prometheus text). A completion is a reply of the engine's pipeline
// (engine/reply/reply_pipeline.h): its local generations run on the server's own Session
// through a GenerationQueue (up to `parallel` together, a bounded queue behind them: 503 beyond
// it); with a semantic cache, a completion whose prompt means the same as one answered before
// gets that reply at once (X-Inferscope-Cache: hit); with routing, one the router sends to a
// cloud tier is passed through to it and its reply back unchanged (X-Inferscope-Route).
// Bad input gets a 4xx with an OpenAI error object. Loopback only, unless an API key is set.
//
//   auto server = OpenAiServer::start(model, options);   // binds, then serves on its threads
//   (*server)->port();  ...  (*server)->stop();          // or the destructor
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <vector>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/core/status.h"
#include "engine/embedding/shared_embedder.h"
#include "engine/model/model.h"
#include "engine/reply/reply_pipeline.h"
#include "engine/route/route_config.h"
#include "engine/runtime/session.h"
#include "engine/semantic/semantic_cache.h"
#include "engine/serve/openai_request.h"
#include "engine/serve/server_metrics.h"

namespace httplib {
class Server;
class Request;
class Response;
}  // namespace httplib

namespace inferscope::serve {

class GenerationQueue;

// The semantic cache of completions (docs/SERVER.md): the stored replies live in `database`
// (the app's, say; "" = in memory only), keyed by everything that decides a reply.
struct CompletionCacheOptions {
  std::string database;
  semantic::SemanticCacheOptions cache;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;          // 0: any free port (port() says which)
  std::string api_key;      // "": none (loopback only, unless insecure_no_key)
  bool insecure_no_key = false;  // serve a non-loopback address without a key
  int parallel = 1;              // generations decoded together
  std::size_t max_waiting = 16;  // generations queued behind them; more get 503
  RequestLimits limits;
  std::chrono::seconds request_timeout{600};  // a whole (non-streamed) reply, or a stream's silence
  // A stream's pieces go out at most this often (together); 0: every token at once (ReplyChannel).
  std::chrono::milliseconds stream_pace{50};
  std::string model_name;                     // the id /v1/models lists; "" = the file's name
  SessionOptions session;                     // the server's own session on the model
  std::shared_ptr<const Model> embedding_model;  // /v1/embeddings and the semantic cache; null: the chat model's hidden state
  std::optional<CompletionCacheOptions> semantic_cache;  // absent: every completion is generated
  // Edge-cloud routing (docs/ROUTING.md): completions the router sends to a cloud tier are
  // passed through to it and its reply back unchanged; absent: everything runs here.
  std::optional<route::RouteConfig> route;
  std::function<void(const std::string&)> log;  // one line per routing decision; null: silent
};

class OpenAiServer {
 public:
  static Result<std::unique_ptr<OpenAiServer>> start(std::shared_ptr<const Model> model, ServerOptions options);
  ~OpenAiServer();

  // Stops accepting, ends the running generations and waits for the threads.
  void stop();
  int port() const { return port_; }
  const std::string& host() const { return options_.host; }
  const std::string& model_name() const { return options_.model_name; }
  std::int64_t requests_served() const { return requests_.load(); }

 private:
  OpenAiServer() = default;
  Status bind();
  void route();
  void answer_generation(const httplib::Request& req, httplib::Response& res, bool chat);
  void answer_embeddings(const httplib::Request& req, httplib::Response& res);
  bool authorized(const httplib::Request& req) const;
  Status make_pipeline();
  bool known_model(const std::string& name) const;
  void log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  std::shared_ptr<const Model> model_;
  ServerOptions options_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<GenerationQueue> queue_;
  std::shared_ptr<SharedEmbedder> embedder_;   // /v1/embeddings' and the semantic cache's
  std::unique_ptr<reply::ReplyPipeline> pipeline_;
  std::shared_ptr<reply::ReplyCache> cache_;   // with options_.semantic_cache
  ServerMetrics metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  int port_ = 0;
  std::int64_t started_at_ = 0;  // Unix seconds
  std::atomic<std::int64_t> requests_{0};
  std::atomic<std::uint64_t> next_id_{1};
};

}  // namespace inferscope::serve
