// generate --route CONFIG (docs/ROUTING.md): the deployment config read, the cloud tier probed,
// the local prefill rate measured (unless the config gives one), the request routed, and a
// request the cloud answers streamed from it, falling back to the local model when it fails.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/chat/chat_template.h"
#include "engine/route/cloud_client.h"
#include "engine/route/route_config.h"
#include "engine/route/router.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

inline const char* kRouteOptionHelp =
    "route the request by a deployment config (YAML/JSON: cloud, edge, routing; docs/ROUTING.md)";

struct RoutedRequest {
  route::RouteDecision decision;
  std::optional<route::CloudReply> cloud;  // set when the cloud answered (it was printed as it came)
  std::string fallback;                    // why the first tier chosen did not answer ("" = it did)
};

// What the cloud receives: the chat messages (with --chat) or the plain prompt.
struct CloudAsk {
  std::vector<ChatMessage> messages;
  std::string prompt;
};

// Decides and, for the cloud, answers (printing the text as it streams unless `json`). A
// request left to the local model comes back without `cloud`; an error when no tier can answer.
Result<RoutedRequest> route_request(const route::RouteConfig& config, Session& session, const GenerateRequest& req,
                                    const CloudAsk& ask, bool json);

nlohmann::json route_json(const RoutedRequest& routed);
// The decision on stderr: which tier answers and why.
void print_route(const RoutedRequest& routed);

}  // namespace inferscope::cli
