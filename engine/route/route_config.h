// The edge-cloud deployment a user writes (docs/ROUTING.md), YAML or JSON: the edge tier (the
// local model), one or more cloud tiers (any OpenAI-compatible endpoint: vLLM, a llama.cpp
// server, another Inferscope), and the routing rules:
//
//   cloud: {endpoint: https://cloud.example/v1, model: llama-70b-int4, api_key_env: CLOUD_KEY}
//   edge: {model: phi-3-mini-int8.gguf, cache_size: 8GB}
//   routing: {policy: latency_aware, threshold: 150ms, fallback: cloud, private: ["\\bSSN\\b"]}
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::route {

enum class RoutePolicy { LatencyAware, LocalFirst, CloudFirst, Privacy };
enum class Fallback { Cloud, Local, None };

struct CloudTier {
  std::string endpoint;  // base URL with the API's path, e.g. http://gpu-box:8000/v1
  std::string model;     // the model name the endpoint serves
  std::string api_key;   // sent as a bearer token; from api_key or the api_key_env variable
  std::chrono::milliseconds timeout{60000};
};

struct EdgeTier {
  std::string model;              // GGUF file ("" = the one the command line gives)
  std::uint64_t cache_bytes = 0;  // KV memory for cached prefixes (0 = the default)
  bool enabled = true;
};

struct RoutingRules {
  RoutePolicy policy = RoutePolicy::LatencyAware;
  std::chrono::milliseconds threshold{150};  // latency_aware: the local time to first token allowed
  Fallback fallback = Fallback::Cloud;       // where a request goes when its tier fails or is busy
  std::vector<std::string> private_patterns;  // regular expressions (case-insensitive): never sent out
  double prefill_tokens_per_s = 0;            // the local prefill rate until one is measured (0: measure)
};

struct RouteConfig {
  EdgeTier edge;
  std::vector<CloudTier> clouds;  // tried in order
  RoutingRules routing;
};

Result<RouteConfig> parse_route_config(const std::string& text);
Result<RouteConfig> load_route_config(const std::string& path);

const char* policy_name(RoutePolicy policy);

}  // namespace inferscope::route
