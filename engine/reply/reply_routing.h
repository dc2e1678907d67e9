// Edge-cloud routing of replies (docs/ROUTING.md): the deployment config, the router with its
// moving averages, and the cloud tiers that answered their probe. ask_clouds has the tiers
// answer in order, their text streamed into the reply's sink or (for a request the server
// forwards) their own reply passed through. Thread-safe: the router locks its measurements.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/reply/reply_request.h"
#include "engine/reply/reply_sink.h"
#include "engine/route/cloud_client.h"
#include "engine/route/route_config.h"
#include "engine/route/router.h"

namespace inferscope::reply {

// How the cloud tiers did with a reply.
struct CloudAnswer {
  enum class Kind { Answered, Forwarded, Failed, FailedMidway } kind = Kind::Failed;
  std::string model;                       // the tier that answered
  std::optional<route::CloudReply> reply;  // Answered: its text and timings
  std::string failures;                    // Failed: why each tier failed; FailedMidway: why
};

class ReplyRouting {
 public:
  // Probes every cloud tier of `config`: those that answer are asked, in order, later; why the
  // others did not is unreachable()'s.
  static std::unique_ptr<ReplyRouting> create(route::RouteConfig config);

  const route::RouteConfig& config() const { return config_; }
  route::Router& router() { return router_; }
  size_t reachable() const { return clouds_.size(); }
  const std::vector<std::string>& unreachable() const { return unreachable_; }

  // The reachable tiers in order until one answers `request` (its text into `sink`), or with
  // `forward` passes its own reply through (sink.forwarded). The head, its source and cloud
  // model set, goes to sink.answering before the tier's first text. A tier that fails before
  // any is left for the next; one that fails in the middle of its reply ends the attempt.
  CloudAnswer ask_clouds(const route::CloudRequest& request, const std::optional<CloudForward>& forward,
                         ReplyHead& head, ReplySink& sink);

 private:
  explicit ReplyRouting(route::RouteConfig config) : config_(std::move(config)), router_(config_.routing) {}
  CloudAnswer ask(const route::CloudClient& cloud, const route::CloudRequest& request, ReplyHead& head,
                  ReplySink& sink);
  CloudAnswer forward(const route::CloudClient& cloud, const CloudForward& forward, ReplyHead& head, ReplySink& sink);

  route::RouteConfig config_;
  route::Router router_;
  std::vector<route::CloudClient> clouds_;  // the tiers that answered their probe
  std::vector<std::string> unreachable_;
};

}  // namespace inferscope::reply
