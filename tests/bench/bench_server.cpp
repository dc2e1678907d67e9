// The OpenAI server's throughput (docs/SERVER.md): N streaming clients at once against
// `serve --parallel N`, for each N of --clients: aggregate generated tokens/s, per-client
// tokens/s, and time to first token p50/p99 over every request of --rounds rounds; then the
// server's overhead (HTTP, JSON, SSE) per request of --tokens tokens: one request through the
// server (one client) against the same request to the engine directly (Session::generate, wall
// time), alternating, 2 x rounds + 1 pairs, the median of the pairs' ratios (each pair measured
// back to back, so the machine's drift cancels), for each --stream-pace (ms; 0: every token
// wakes the HTTP thread at once). Plain executable, by hand:
//   build/tests/bench/bench_server --model tinyllama-q4_0.gguf [--clients 1,2,4,8] [--tokens 64]
//                                  [--rounds 3] [--threads N] [--prompt TEXT] [--stream-pace 0,50]
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
  std::vector<int> stream_paces = {0, 50};  // ms, for the overhead
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

GenerateRequest engine_request(const Options& o) {
  GenerateRequest request;
  request.prompt = o.prompt;
  request.max_tokens = o.tokens;
  request.sampling.temperature = 0;
  return request;
}

// The same request to the engine directly, wall time (ms).
double engine_once(Session& session, const Options& o) {
  const auto start = Clock::now();
  auto result = session.generate(engine_request(o));
  if (!result) {
    std::fprintf(stderr, "error: %s\n", result.message().c_str());
    std::exit(1);
  }
  return ms_between(start, Clock::now());
}

std::unique_ptr<serve::OpenAiServer> start_server(std::shared_ptr<const Model> model, const Options& o, int parallel,
                                                  std::chrono::milliseconds pace = serve::ServerOptions{}.stream_pace) {
  serve::ServerOptions so;
  so.stream_pace = pace;
  so.port = 0;
  so.parallel = parallel;
  so.max_waiting = static_cast<std::size_t>(parallel);
  so.session = session_options(o);
  auto server = serve::OpenAiServer::start(std::move(model), so);
  if (!server) {
    std::fprintf(stderr, "error: %s\n", server.message().c_str());
    std::exit(1);
  }
  return std::move(*server);
}

// Alternates one request through the server and one to the engine (each warmed up first) and
// prints both medians and the median of the pairs' server/engine ratios.
void print_overhead(std::shared_ptr<const Model> model, const Options& o, int pace_ms) {
  auto server = start_server(model, o, 1, std::chrono::milliseconds(pace_ms));
  auto session = Session::create(model, session_options(o));
  if (!session) return;
  stream_once(server->port(), o);
  engine_once(**session, o);
  std::vector<double> server_ms, engine_ms, ratios;
  for (int pair = 0; pair < 2 * o.rounds + 1; ++pair) {
    server_ms.push_back(stream_once(server->port(), o).total_ms);
    engine_ms.push_back(engine_once(**session, o));
    ratios.push_back(server_ms.back() / engine_ms.back());
  }
  std::printf("\none request of %d tokens, stream pace %d ms, %zu pairs: through the server (1 client) %.1f ms, "
              "engine %.1f ms (medians); server/engine per pair: median %.3f (min %.3f, max %.3f): overhead %+.1f%%\n",
              o.tokens, pace_ms, ratios.size(), percentile(server_ms, 0.5), percentile(engine_ms, 0.5), percentile(ratios, 0.5),
              percentile(ratios, 0.0), percentile(ratios, 1.0), 100.0 * (percentile(ratios, 0.5) - 1.0));
}

// One row of the table.
void run_clients(std::shared_ptr<const Model> model, const Options& o, int n) {
  auto server = start_server(std::move(model), o, n);
  const int port = server->port();
  stream_once(port, o);  // warm up
  std::vector<double> ttfts;
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
    }
  }
  const double aggregate = tokens * 1000.0 / wall_ms;
  std::printf("| %7d | %10.1f | %10.1f | %9.1f | %9.1f |\n", n, aggregate, aggregate / n, percentile(ttfts, 0.5),
              percentile(ttfts, 0.99));
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
    else if (key == "--stream-pace") o.stream_paces = parse_list(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  if (o.model.empty()) {
    std::fprintf(stderr, "usage: bench_server --model FILE [--clients 1,2,4,8] [--tokens 64] [--rounds 3] [--threads N] "
                         "[--stream-pace 0,50]\n");
    return 2;
  }
  auto model = Model::load(o.model);
  if (!model) {
    std::fprintf(stderr, "error: %s\n", model.message().c_str());
    return 1;
  }
  std::printf("%s: %d tokens per request, %d rounds, temperature 0, streaming\n\n", o.model.c_str(), o.tokens, o.rounds);
  std::printf("| clients | tokens/s   | per client | TTFT p50  | TTFT p99  |\n|---|---|---|---|---|\n");
  for (int n : o.clients) run_clients(*model, o, n);
  for (int pace : o.stream_paces) print_overhead(*model, o, pace);
  return 0;
}
