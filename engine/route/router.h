// Decides, per request, whether the local model (the edge tier) or a cloud tier answers, and
// why (docs/ROUTING.md). Prompts that match a private pattern never leave the machine, under
// any policy and any fallback. latency_aware predicts the local time to first token from the
// tokens left to prefill (the prompt less what the prefix cache holds) at the measured prefill
// rate, and sends the request to the cloud when that exceeds the threshold and the cloud's
// measured round trip is shorter. Measurements are moving averages; thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/route/route_config.h"

namespace inferscope::route {

enum class Tier { Local, Cloud };
const char* tier_name(Tier tier);

struct RouteInputs {
  std::string_view prompt;     // the text the private patterns are matched against
  std::int64_t prompt_tokens = 0;
  std::int64_t cached_tokens = 0;  // of them, what the prefix cache would reuse
  bool local_available = true;     // the edge tier is enabled and loaded
  bool local_busy = false;         // its queue is full
  bool cloud_available = true;     // a cloud tier is configured and not known dead
};

struct RouteDecision {
  Tier tier = Tier::Local;
  std::string reason;
  double predicted_local_ttft_ms = 0;
  std::optional<double> cloud_rtt_ms;  // the moving average, when measured
  bool private_match = false;
};

class Router {
 public:
  explicit Router(RoutingRules rules);

  RouteDecision decide(const RouteInputs& in) const;
  // Where a request goes after `failed` failed (or was busy): the other tier when the fallback
  // rule and privacy allow it, else nothing.
  std::optional<Tier> fallback_after(Tier failed, const RouteDecision& decision) const;

  // A local prefill of `tokens` took `ms`; a cloud round trip (probe or first token) took `ms`.
  void observe_local_prefill(std::int64_t tokens, double ms);
  void observe_cloud_rtt(double ms);
  double predicted_local_ttft_ms(std::int64_t tokens_to_prefill) const;
  // Whether it has a local prefill rate: one measured, or the config's.
  bool knows_prefill_rate() const;
  bool matches_private(std::string_view prompt) const;
  const RoutingRules& rules() const { return rules_; }

 private:
  RouteDecision latency_aware(const RouteInputs& in, RouteDecision d) const;

  RoutingRules rules_;
  std::vector<std::regex> private_;
  mutable std::mutex mutex_;
  double ms_per_token_ = 0;  // 0: no measurement nor prior
  std::optional<double> cloud_rtt_ms_;
};

}  // namespace inferscope::route
