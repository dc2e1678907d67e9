#include "engine/route/router.h"

#include <cstdio>

namespace inferscope::route {

namespace {

constexpr double kSmoothing = 0.3;  // weight of a new measurement in the moving averages

double smoothed(double average, double sample) { return average == 0 ? sample : average + kSmoothing * (sample - average); }

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f ms", ms);
  return text;
}

}  // namespace

const char* tier_name(Tier tier) { return tier == Tier::Local ? "local" : "cloud"; }

Router::Router(RoutingRules rules) : rules_(std::move(rules)) {
  for (const std::string& p : rules_.private_patterns) private_.emplace_back(p, std::regex::ECMAScript | std::regex::icase);
  if (rules_.prefill_tokens_per_s > 0) ms_per_token_ = 1000.0 / rules_.prefill_tokens_per_s;
}

bool Router::matches_private(std::string_view prompt) const {
  for (const std::regex& r : private_) {
    if (std::regex_search(prompt.begin(), prompt.end(), r)) return true;
  }
  return false;
}

double Router::predicted_local_ttft_ms(std::int64_t tokens_to_prefill) const {
  std::lock_guard lock(mutex_);
  return static_cast<double>(tokens_to_prefill) * ms_per_token_;
}

bool Router::knows_prefill_rate() const {
  std::lock_guard lock(mutex_);
  return ms_per_token_ > 0;
}

void Router::observe_local_prefill(std::int64_t tokens, double ms) {
  if (tokens <= 0 || ms <= 0) return;
  std::lock_guard lock(mutex_);
  ms_per_token_ = smoothed(ms_per_token_, ms / static_cast<double>(tokens));
}

void Router::observe_cloud_rtt(double ms) {
  if (ms < 0) return;
  std::lock_guard lock(mutex_);
  cloud_rtt_ms_ = smoothed(cloud_rtt_ms_.value_or(0), ms);
}

RouteDecision Router::decide(const RouteInputs& in) const {
  RouteDecision d;
  d.predicted_local_ttft_ms = predicted_local_ttft_ms(in.prompt_tokens - in.cached_tokens);
  {
    std::lock_guard lock(mutex_);
    d.cloud_rtt_ms = cloud_rtt_ms_;
  }
  d.private_match = matches_private(in.prompt);
  const bool local_ok = in.local_available && !in.local_busy;
  if (d.private_match) {
    d.tier = Tier::Local;
    d.reason = "the prompt matches a private pattern: it stays on this machine";
    return d;
  }
  if (!in.cloud_available) {
    d.tier = Tier::Local;
    d.reason = "no cloud tier is available";
    return d;
  }
  if (!local_ok) {
    d.tier = Tier::Cloud;
    d.reason = in.local_available ? "the local model is busy (its queue is full)" : "the local model is not available";
    return d;
  }
  switch (rules_.policy) {
    case RoutePolicy::LocalFirst:
      d.reason = "policy local_first";
      return d;
    case RoutePolicy::CloudFirst:
      d.tier = Tier::Cloud;
      d.reason = "policy cloud_first";
      return d;
    case RoutePolicy::Privacy:  // private prompts were kept above; the rest as latency_aware
    case RoutePolicy::LatencyAware:
      return latency_aware(in, std::move(d));
  }
  return d;
}

RouteDecision Router::latency_aware(const RouteInputs& in, RouteDecision d) const {
  const double threshold = static_cast<double>(rules_.threshold.count());
  const std::string predicted = "predicted local time to first token " + format_ms(d.predicted_local_ttft_ms) + " (" +
                                std::to_string(in.prompt_tokens - in.cached_tokens) + " tokens to prefill)";
  if (d.predicted_local_ttft_ms <= threshold) {
    d.reason = predicted + " is within the " + format_ms(threshold) + " threshold";
    return d;
  }
  if (d.cloud_rtt_ms && *d.cloud_rtt_ms >= d.predicted_local_ttft_ms) {
    d.reason = predicted + " exceeds the threshold, but the cloud's round trip (" + format_ms(*d.cloud_rtt_ms) +
               ") is no shorter";
    return d;
  }
  d.tier = Tier::Cloud;
  d.reason = predicted + " exceeds the " + format_ms(threshold) + " threshold" +
             (d.cloud_rtt_ms ? "; the cloud's round trip is " + format_ms(*d.cloud_rtt_ms) : std::string());
  return d;
}

std::optional<Tier> Router::fallback_after(Tier failed, const RouteDecision& decision) const {
  if (failed == Tier::Local) {
    if (rules_.fallback == Fallback::Cloud && !decision.private_match) return Tier::Cloud;
    return std::nullopt;
  }
  if (rules_.fallback == Fallback::None) return std::nullopt;
  return Tier::Local;  // a failed cloud falls back to local (fallback cloud or local)
}

}  // namespace inferscope::route
