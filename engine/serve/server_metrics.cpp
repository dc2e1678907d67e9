#include "engine/serve/server_metrics.h"

#include <sstream>

namespace inferscope::serve {

void ServerMetrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  requests_[{endpoint, status}] += 1;
}

void ServerMetrics::count_reply(const GenerateResult& result) {
  std::lock_guard lock(mutex_);
  prompt_tokens_ += static_cast<std::int64_t>(result.prompt_token_ids.size());
  reused_tokens_ += result.reused_tokens;
  generated_tokens_ += static_cast<std::int64_t>(result.token_ids.size());
  last_decode_tokens_per_s_ = result.timings.decode_tokens_per_s;
  kv_blocks_ = result.memory.kv_blocks;
  if (result.token_ids.empty()) return;  // no first token: no time to it
  ttft_count_ += 1;
  ttft_sum_ms_ += result.timings.ttft_ms;
  for (std::size_t b = 0; b < kTtftBucketsMs.size(); ++b) {
    if (result.timings.ttft_ms <= kTtftBucketsMs[b]) ttft_buckets_[b] += 1;
  }
}

std::string ServerMetrics::prometheus_text(const ScrapeState& now) const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  auto metric = [&](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  // A metric with one unlabelled sample.
  auto single = [&](const char* name, const char* type, const char* help, auto value) {
    metric(name, type, help);
    out << name << ' ' << value << '\n';
  };
  metric("inferscope_requests_total", "counter", "HTTP requests by endpoint and status");
  for (const auto& [key, n] : requests_) {
    out << "inferscope_requests_total{endpoint=\"" << key.first << "\",status=\"" << key.second << "\"} " << n << '\n';
  }
  single("inferscope_prompt_tokens_total", "counter", "prompt tokens of finished replies", prompt_tokens_);
  single("inferscope_generated_tokens_total", "counter", "tokens generated", generated_tokens_);
  single("inferscope_decode_tokens_per_second", "gauge", "decode speed of the last reply", last_decode_tokens_per_s_);
  metric("inferscope_time_to_first_token_ms", "histogram", "request start to first generated token");
  for (std::size_t b = 0; b < kTtftBucketsMs.size(); ++b) {
    out << "inferscope_time_to_first_token_ms_bucket{le=\"" << kTtftBucketsMs[b] << "\"} " << ttft_buckets_[b] << '\n';
  }
  out << "inferscope_time_to_first_token_ms_bucket{le=\"+Inf\"} " << ttft_count_ << '\n';
  out << "inferscope_time_to_first_token_ms_sum " << ttft_sum_ms_ << '\n';
  out << "inferscope_time_to_first_token_ms_count " << ttft_count_ << '\n';
  single("inferscope_requests_running", "gauge", "generations running together", now.running);
  single("inferscope_requests_waiting", "gauge", "generations waiting in the queue", now.waiting);
  single("inferscope_kv_blocks_in_use", "gauge", "paged KV blocks referenced by sequences as the last reply ended", kv_blocks_.referenced);
  single("inferscope_kv_blocks_cached", "gauge", "paged KV blocks kept for the prefix cache", kv_blocks_.cached);
  single("inferscope_prefix_cache_hit_rate", "gauge", "prompt tokens reused from the prefix cache over prompt tokens",
         prompt_tokens_ == 0 ? 0.0 : static_cast<double>(reused_tokens_) / static_cast<double>(prompt_tokens_));
  const semantic::CacheStats& cache = now.semantic_cache;
  single("inferscope_semantic_cache_lookups_total", "counter", "completions looked up in the semantic cache", cache.lookups);
  single("inferscope_semantic_cache_hits_total", "counter", "completions answered from the semantic cache", cache.hits);
  single("inferscope_semantic_cache_hit_rate", "gauge", "semantic cache hits over lookups", cache.hit_rate());
  single("inferscope_semantic_cache_entries", "gauge", "replies the semantic cache holds", cache.entries);
  return out.str();
}

}  // namespace inferscope::serve
