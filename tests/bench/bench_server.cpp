// The OpenAI server's throughput (docs/SERVER.md): N streaming clients at once against
// `serve --parallel N`, for each N of --clients: aggregate generated tokens/s, per-client
// tokens/s, and time to first token p50/p99 over every request of --rounds rounds; then the
// time of one request through the server (one client) against the engine's own time for it
// (prefill + decode, what `generate` measures) on the same model and settings: the server's
// overhead (HTTP, JSON, SSE) per request of --tokens tokens. Plain executable, by hand:
//   build/tests/bench/bench_server --model tinyllama-q4_0.gguf [--clients 1,2,4,8] [--tokens 64]
//                                  [--rounds 3] [--threads N] [--prompt TEXT]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/serve/openai_server.h"
#include "tests/support/raw_http.h"

namespace {

using namespace inferscope;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  std::vector<int> clients = {1, 2, 4, 8};
  int tokens = 64;
  int rounds = 3;
  int threads = 0;
  std::string prompt = "Once upon a time, in a small village by the sea, there lived";
};

struct Stream {
  double ttft_ms = 0;
  double total_ms = 0;
  long tokens = 0;
};

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One streamed completion; its tokens are the final chunk's usage.completion_tokens.
Stream stream_once(int port, const Options& o) {
  const nlohmann::json body = {{"prompt", o.prompt}, {"max_tokens", o.tokens}, {"temperature", 0}, {"stream", true}};
  Stream s;
  const auto start = Clock::now();
  bool first = true;
  const testing::RawReply reply = testing::raw_post(port, "/v1/completions", body.dump(), [&](const std::string& piece) {
    if (first && piece.find("data: {") != std::string::npos) {
      s.ttft_ms = ms_between(start, Clock::now());
      first = false;
    }
  });
  s.total_ms = ms_between(start, Clock::now());
  const std::size_t at = reply.text.rfind("\"completion_tokens\":");
  if (at != std::string::npos) s.tokens = std::atol(reply.text.c_str() + at + 20);
  return s;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

SessionOptions session_options(const Options& o) {
  SessionOptions so;
  so.n_threads = o.threads;
  return so;
}

// The engine's own time for the same request, first token to last (median of the rounds).
double engine_request_ms(std::shared_ptr<const Model> model, const Options& o) {
  auto session = Session::create(model, session_options(o));
  if (!session) return 0;
  std::vector<double> times;
  for (int r = 0; r < o.rounds + 1; ++r) {
    GenerateRequest request;
    request.prompt = o.prompt;
    request.max_tokens = o.tokens;
    request.sampling.temperature = 0;
    auto result = (*session)->generate(request);
    if (result && r > 0) times.push_back(result->timings.ttft_ms + result->timings.decode_ms);  // the first warms up
  }
  return percentile(times, 0.5);
}

// One row of the table; with n == 1, *one_client_ms: the median request time.
void run_clients(std::shared_ptr<const Model> model, const Options& o, int n, double* one_client_ms) {
  serve::ServerOptions so;
  so.port = 0;
  so.parallel = n;
  so.max_waiting = static_cast<std::size_t>(n);
  so.session = session_options(o);
  auto server = serve::OpenAiServer::start(model, so);
  if (!server) {
    std::fprintf(stderr, "error: %s\n", server.message().c_str());
    std::exit(1);
  }
  const int port = (*server)->port();
  stream_once(port, o);  // warm up
  std::vector<double> ttfts, request_ms;
  double tokens = 0, wall_ms = 0;
  for (int r = 0; r < o.rounds; ++r) {
    std::vector<Stream> streams(static_cast<std::size_t>(n));
    std::vector<std::thread> clients;
    const auto start = Clock::now();
    for (int c = 0; c < n; ++c) clients.emplace_back([&, c] { streams[static_cast<std::size_t>(c)] = stream_once(port, o); });
    for (std::thread& t : clients) t.join();
    wall_ms += ms_between(start, Clock::now());
    for (const Stream& s : streams) {
      ttfts.push_back(s.ttft_ms);
      tokens += static_cast<double>(s.tokens);
      request_ms.push_back(s.total_ms);
    }
  }
  const double aggregate = tokens * 1000.0 / wall_ms;
  std::printf("| %7d | %10.1f | %10.1f | %9.1f | %9.1f |\n", n, aggregate, aggregate / n, percentile(ttfts, 0.5),
              percentile(ttfts, 0.99));
  if (n == 1) *one_client_ms = percentile(request_ms, 0.5);
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    out.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    if (!p) break;
    ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--model") o.model = argv[i + 1];
    else if (key == "--clients") o.clients = parse_list(argv[i + 1]);
    else if (key == "--tokens") o.tokens = std::atoi(argv[i + 1]);
    else if (key == "--rounds") o.rounds = std::atoi(argv[i + 1]);
    else if (key == "--threads") o.threads = std::atoi(argv[i + 1]);
    else if (key == "--prompt") o.prompt = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  if (o.model.empty()) {
    std::fprintf(stderr, "usage: bench_server --model FILE [--clients 1,2,4,8] [--tokens 64] [--rounds 3] [--threads N]\n");
    return 2;
  }
  auto model = Model::load(o.model);
  if (!model) {
    std::fprintf(stderr, "error: %s\n", model.message().c_str());
    return 1;
  }
  std::printf("%s: %d tokens per request, %d rounds, temperature 0, streaming\n\n", o.model.c_str(), o.tokens, o.rounds);
  std::printf("| clients | tokens/s   | per client | TTFT p50  | TTFT p99  |\n|---|---|---|---|---|\n");
  double server_ms = 0;
  for (int n : o.clients) run_clients(*model, o, n, &server_ms);
  const double engine_ms = engine_request_ms(*model, o);
  std::printf("\none request of %d tokens: engine %.1f ms, through the server (1 client) %.1f ms: overhead %.1f%%\n",
              o.tokens, engine_ms, server_ms, engine_ms > 0 ? 100.0 * (server_ms - engine_ms) / engine_ms : 0.0);
  return 0;
}
