// generate --route CONFIG (docs/ROUTING.md) as the CLI shows it: the decision on stderr as the
// reply starts, and generate --json's "route" object. The routing itself is the reply
// pipeline's (engine/reply).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/reply/reply_outcome.h"

namespace inferscope::cli {

inline const char* kRouteOptionHelp =
    "route the request by a deployment config (YAML/JSON: cloud, edge, routing; docs/ROUTING.md)";

// {decided, tier, reason, predicted_local_ttft_ms, cloud_rtt_ms, private_match[, fallback]}.
nlohmann::json route_json(const reply::ReplyHead& head);
// Which tier answers and why, and why the cloud did not when it fell back.
void print_route(const reply::ReplyHead& head);

}  // namespace inferscope::cli
