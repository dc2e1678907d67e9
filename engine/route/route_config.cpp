#include "engine/route/route_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace inferscope::route {

namespace {

// "150ms", "2s", "1.5 s" or a plain number of milliseconds.
Result<std::chrono::milliseconds> parse_duration(const std::string& text, const std::string& field) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return Status::error(field + ": '" + text + "' is not a duration (e.g. 150ms, 2s)");
  }
  std::string unit = text.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  double ms = 0;
  if (unit.empty() || unit == "ms") ms = value;
  else if (unit == "s") ms = value * 1000;
  else return Status::error(field + ": unknown unit '" + unit + "' (ms or s)");
  if (!(ms >= 0 && ms < 1e9)) return Status::error(field + ": '" + text + "' is out of range");
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

// "8GB", "512MiB", "1.5 GiB" or a plain number of bytes (KB/MB/GB are powers of 1000).
Result<std::uint64_t> parse_size(const std::string& text, const std::string& field) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return Status::error(field + ": '" + text + "' is not a size (e.g. 8GB)");
  }
  std::string unit = text.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name && value >= 0 && value * scale < 1.8e19) return static_cast<std::uint64_t>(value * scale);
  }
  return Status::error(field + ": '" + text + "' is not a size (B, KB, MB, GB, KiB, MiB, GiB)");
}

std::string scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

Result<CloudTier> read_cloud(const YAML::Node& node) {
  if (!node.IsMap()) return Status::error("cloud: each tier is a map {endpoint, model, ...}");
  CloudTier tier;
  tier.endpoint = scalar(node, "endpoint");
  tier.model = scalar(node, "model");
  if (tier.endpoint.rfind("http://", 0) != 0 && tier.endpoint.rfind("https://", 0) != 0) {
    return Status::error("cloud.endpoint must be an http:// or https:// URL, got '" + tier.endpoint + "'");
  }
  while (!tier.endpoint.empty() && tier.endpoint.back() == '/') tier.endpoint.pop_back();
  tier.api_key = scalar(node, "api_key");
  if (const std::string env = scalar(node, "api_key_env"); !env.empty()) {
    const char* value = std::getenv(env.c_str());
    if (value == nullptr) return Status::error("cloud.api_key_env: the environment variable " + env + " is not set");
    tier.api_key = value;
  }
  if (const std::string timeout = scalar(node, "timeout"); !timeout.empty()) {
    auto t = parse_duration(timeout, "cloud.timeout");
    if (!t) return t.status();
    tier.timeout = *t;
  }
  return tier;
}

Result<RoutePolicy> read_policy(const std::string& name) {
  if (name.empty() || name == "latency_aware") return RoutePolicy::LatencyAware;
  if (name == "local_first") return RoutePolicy::LocalFirst;
  if (name == "cloud_first") return RoutePolicy::CloudFirst;
  if (name == "privacy") return RoutePolicy::Privacy;
  return Status::error("routing.policy: unknown '" + name + "' (latency_aware, local_first, cloud_first, privacy)");
}

Result<Fallback> read_fallback(const std::string& name) {
  if (name.empty() || name == "cloud") return Fallback::Cloud;
  if (name == "local" || name == "edge") return Fallback::Local;
  if (name == "none") return Fallback::None;
  return Status::error("routing.fallback: unknown '" + name + "' (cloud, local, none)");
}

Status read_routing(const YAML::Node& node, RoutingRules& rules) {
  if (!node) return Status::ok();
  if (!node.IsMap()) return Status::error("routing must be a map {policy, threshold, fallback, private}");
  auto policy = read_policy(scalar(node, "policy"));
  if (!policy) return policy.status();
  rules.policy = *policy;
  if (const std::string t = scalar(node, "threshold"); !t.empty()) {
    auto threshold = parse_duration(t, "routing.threshold");
    if (!threshold) return threshold.status();
    rules.threshold = *threshold;
  }
  auto fallback = read_fallback(scalar(node, "fallback"));
  if (!fallback) return fallback.status();
  rules.fallback = *fallback;
  if (const YAML::Node patterns = node["private"]) {
    if (!patterns.IsSequence()) return Status::error("routing.private must be a list of regular expressions");
    for (const YAML::Node& p : patterns) {
      const std::string pattern = p.as<std::string>();
      try {
        std::regex check(pattern, std::regex::ECMAScript | std::regex::icase);
      } catch (const std::regex_error& e) {
        return Status::error("routing.private: '" + pattern + "' is not a regular expression: " + e.what());
      }
      rules.private_patterns.push_back(pattern);
    }
  }
  if (const std::string rate = scalar(node, "prefill_tokens_per_s"); !rate.empty()) {
    rules.prefill_tokens_per_s = std::atof(rate.c_str());
    if (!(rules.prefill_tokens_per_s > 0)) return Status::error("routing.prefill_tokens_per_s must be positive");
  }
  return Status::ok();
}

Status read_config(const YAML::Node& root, RouteConfig& config) {
  if (!root.IsMap()) return Status::error("the routing config must be a map with cloud, edge and routing");
  if (const YAML::Node cloud = root["cloud"]) {
    if (cloud.IsSequence()) {
      for (const YAML::Node& tier : cloud) {
        auto t = read_cloud(tier);
        if (!t) return t.status();
        config.clouds.push_back(std::move(*t));
      }
    } else {
      auto t = read_cloud(cloud);
      if (!t) return t.status();
      config.clouds.push_back(std::move(*t));
    }
  }
  if (const YAML::Node edge = root["edge"]) {
    if (!edge.IsMap()) return Status::error("edge must be a map {model, cache_size}");
    config.edge.model = scalar(edge, "model");
    if (const std::string size = scalar(edge, "cache_size"); !size.empty()) {
      auto bytes = parse_size(size, "edge.cache_size");
      if (!bytes) return bytes.status();
      config.edge.cache_bytes = *bytes;
    }
    if (const std::string enabled = scalar(edge, "enabled"); !enabled.empty()) config.edge.enabled = enabled != "false";
  }
  INFERSCOPE_RETURN_IF_ERROR(read_routing(root["routing"], config.routing));
  if (config.clouds.empty() && !config.edge.enabled) return Status::error("the config has no tier: no cloud and the edge disabled");
  return Status::ok();
}

}  // namespace

Result<RouteConfig> parse_route_config(const std::string& text) {
  RouteConfig config;
  try {
    INFERSCOPE_RETURN_IF_ERROR(read_config(YAML::Load(text), config));
  } catch (const YAML::Exception& e) {
    return Status::error(std::string("the routing config does not parse: ") + e.what());
  }
  return config;
}

Result<RouteConfig> load_route_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::error("cannot read the routing config " + path);
  std::ostringstream text;
  text << in.rdbuf();
  auto config = parse_route_config(text.str());
  if (!config) return Status::error(path + ": " + config.message());
  return config;
}

const char* policy_name(RoutePolicy policy) {
  switch (policy) {
    case RoutePolicy::LatencyAware: return "latency_aware";
    case RoutePolicy::LocalFirst: return "local_first";
    case RoutePolicy::CloudFirst: return "cloud_first";
    case RoutePolicy::Privacy: return "privacy";
  }
  return "?";
}

}  // namespace inferscope::route
