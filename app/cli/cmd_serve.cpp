// serve: an OpenAI-compatible HTTP server for one model (engine/serve, docs/SERVER.md), until
// SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/semantic_cache_cli.h"
#include "engine/serve/openai_server.h"

namespace inferscope::cli {

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

// The first line of the file, without surrounding whitespace; "" when it cannot be read.
std::string read_key_file(const std::string& path) {
  std::ifstream in(path);
  std::string key;
  std::getline(in, key);
  const auto first = key.find_first_not_of(" \t\r");
  const auto last = key.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : key.substr(first, last - first + 1);
}

}  // namespace

int run_serve(int argc, char** argv) {
  Args args(argc, argv, "serve",
            "Serves the model over the OpenAI API: POST /v1/chat/completions, /v1/completions, /v1/embeddings;\n"
            "GET /v1/models, /health, /metrics. Loopback only unless an API key is given.\n"
            "Example: inferscope-cli serve --model tinyllama-q4_0.gguf --port 8080 --parallel 4",
            joined({kModelOption,
             {"host", "ADDR", "address to listen on (default 127.0.0.1; another needs --api-key)"},
             {"port", "N", "port to listen on (default 8080; 0: any free port, printed at start)"},
             {"api-key", "KEY", "clients must send 'Authorization: Bearer KEY'"},
             {"api-key-file", "FILE", "the API key, read from the file's first line"},
             {"insecure-no-key", nullptr, "serve a non-loopback address without an API key"},
             {"parallel", "N", "generations decoded together (default 1)"},
             {"queue", "N", "generations waiting behind them before 503 (default 16)"},
             {"max-body", "BYTES", "largest request body (default 1048576; larger: 413)"},
             {"max-tokens-limit", "N", "largest max_tokens a request may ask (default 4096)"},
             {"model-name", "NAME", "the model id /v1/models lists (default: the file's name)"},
             {"stream-pace", "MS", "a stream's tokens go out at most this often, together (default 50; 0: each at once)"},
             {"route", "CONFIG", "hand requests to a cloud tier by a deployment config (YAML/JSON; docs/ROUTING.md)"},
             kEmbeddingModelOption, kSemanticCacheOption, kCacheThresholdOption, kNoCacheGuardOption,
             kCacheDatabaseOption},
            session_option_specs()));
  if (!args.ok()) return args.exit_code();
  serve::ServerOptions options;
  options.host = args.string("host", options.host);
  options.port = static_cast<int>(args.integer("port", options.port, 0, 65535));
  options.api_key = args.string("api-key", "");
  if (args.has("api-key-file")) {
    options.api_key = read_key_file(args.string("api-key-file"));
    if (options.api_key.empty()) args.fail("--api-key-file " + args.string("api-key-file") + " holds no key");
  }
  options.insecure_no_key = args.flag("insecure-no-key");
  options.parallel = static_cast<int>(args.integer("parallel", 1, 1, 64));
  options.max_waiting = static_cast<std::size_t>(args.integer("queue", 16, 0, 4096));
  options.limits.max_body_bytes = static_cast<std::size_t>(args.integer("max-body", 1 << 20, 1024, int64_t(1) << 30));
  options.limits.max_tokens = static_cast<int32_t>(args.integer("max-tokens-limit", 4096, 1, 1 << 20));
  options.limits.default_max_tokens = std::min(options.limits.default_max_tokens, options.limits.max_tokens);
  options.model_name = args.string("model-name", "");
  options.stream_pace = std::chrono::milliseconds(args.integer("stream-pace", options.stream_pace.count(), 0, 1000));
  if (args.flag("semantic-cache")) options.semantic_cache = {semantic_cache_database(args), semantic_cache_options(args)};
  if (!args.ok() || !read_session_options(args, &options.session)) return args.exit_code();
  auto model = load_model_from_args(args);
  if (!model) return 1;
  if (args.has("embedding-model")) {
    auto embedding = Model::load(args.string("embedding-model"));
    if (!embedding) return fail(embedding.status());
    options.embedding_model = *embedding;
  }
  if (args.has("route")) {
    auto config = route::load_route_config(args.string("route"));
    if (!config) return fail(config.status());
    options.route = std::move(*config);
  }
  options.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  auto server = serve::OpenAiServer::start(model, std::move(options));
  if (!server) return fail(server.status());
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::fprintf(stderr, "serving %s on http://%s:%d/v1 (Ctrl+C stops)\n", (*server)->model_name().c_str(),
               (*server)->host().c_str(), (*server)->port());
  std::fflush(stderr);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::fprintf(stderr, "stopping after %lld requests\n", static_cast<long long>((*server)->requests_served()));
  (*server)->stop();
  return 0;
}

}  // namespace inferscope::cli
