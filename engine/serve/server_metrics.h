// The server's counters for GET /metrics, in Prometheus' text format: requests by endpoint and
// status, prompt and generated tokens, the last reply's decode tokens/s, a time-to-first-token
// histogram, the requests running and waiting, the KV blocks in use as the last reply ended and
// the prefix cache's hit rate (reused prompt tokens over prompt tokens), and the semantic
// cache's lookups, hits and entries. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "engine/runtime/generate_request.h"
#include "engine/semantic/semantic_cache.h"

namespace inferscope::serve {

// What the server reads as /metrics is scraped.
struct ScrapeState {
  std::size_t running = 0, waiting = 0;  // generations
  semantic::CacheStats semantic_cache;   // all zero when the server keeps none
};

class ServerMetrics {
 public:
  static constexpr std::array<double, 9> kTtftBucketsMs = {25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

  void count_request(const std::string& endpoint, int status);
  void count_reply(const GenerateResult& result);

  std::string prometheus_text(const ScrapeState& now) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::int64_t> requests_;
  std::int64_t prompt_tokens_ = 0, reused_tokens_ = 0, generated_tokens_ = 0;
  double last_decode_tokens_per_s_ = 0;
  KvBlockStats kv_blocks_;
  std::array<std::int64_t, kTtftBucketsMs.size()> ttft_buckets_{};
  std::int64_t ttft_count_ = 0;
  double ttft_sum_ms_ = 0;
};

}  // namespace inferscope::serve
