#include "app/cli/route_cli.h"

#include <cstdio>

namespace inferscope::cli {

namespace {

bool answered_by_cloud(const reply::ReplyHead& head) {
  return head.source == reply::ReplySource::Cloud || head.source == reply::ReplySource::CloudForwarded;
}

}  // namespace

nlohmann::json route_json(const reply::ReplyHead& head) {
  const route::RouteDecision& d = *head.route;
  nlohmann::json j = {{"decided", route::tier_name(d.tier)},
                      {"tier", answered_by_cloud(head) ? "cloud" : "local"},
                      {"reason", d.reason},
                      {"predicted_local_ttft_ms", d.predicted_local_ttft_ms},
                      {"cloud_rtt_ms", d.cloud_rtt_ms ? nlohmann::json(*d.cloud_rtt_ms) : nlohmann::json()},
                      {"private_match", d.private_match}};
  if (!head.fallback.empty()) j["fallback"] = head.fallback;
  return j;
}

void print_route(const reply::ReplyHead& head) {
  std::fprintf(stderr, "route: %s answers: %s\n", answered_by_cloud(head) ? "the cloud" : "the local model",
               head.route->reason.c_str());
  if (!head.fallback.empty()) std::fprintf(stderr, "route: %s\n", head.fallback.c_str());
}

}  // namespace inferscope::cli
