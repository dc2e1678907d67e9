#include "engine/reply/reply_routing.h"

#include <chrono>

#include "engine/route/cloud_pass_through.h"

namespace inferscope::reply {

std::unique_ptr<ReplyRouting> ReplyRouting::create(route::RouteConfig config) {
  auto routing = std::unique_ptr<ReplyRouting>(new ReplyRouting(std::move(config)));
  for (const route::CloudTier& tier : routing->config_.clouds) {
    route::CloudClient cloud(tier);
    auto rtt = cloud.probe();
    if (!rtt) {
      routing->unreachable_.push_back(rtt.message());
      continue;
    }
    routing->router_.observe_cloud_rtt(*rtt);
    routing->clouds_.push_back(std::move(cloud));
  }
  return routing;
}

namespace {

// The head with the tier that answers, before its first text.
void announce(ReplyHead& head, ReplySource source, const route::CloudClient& cloud, ReplySink& sink) {
  head.source = source;
  head.cloud_model = cloud.tier().model;
  sink.answering(head);
}

}  // namespace

CloudAnswer ReplyRouting::ask_clouds(const route::CloudRequest& request, const std::optional<CloudForward>& forwarded,
                                     ReplyHead& head, ReplySink& sink) {
  CloudAnswer failed;
  failed.failures = clouds_.empty() ? "no cloud tier is reachable" : "";
  for (const route::CloudClient& cloud : clouds_) {
    CloudAnswer answer = forwarded ? forward(cloud, *forwarded, head, sink) : ask(cloud, request, head, sink);
    if (answer.kind != CloudAnswer::Kind::Failed) return answer;
    failed.failures += (failed.failures.empty() ? "" : "; ") + answer.failures;
    sink.notice(ReplyNotice::RouteTierFailed, cloud.tier().endpoint + " failed: " + answer.failures);
  }
  return failed;
}

CloudAnswer ReplyRouting::ask(const route::CloudClient& cloud, const route::CloudRequest& request, ReplyHead& head,
                              ReplySink& sink) {
  bool streamed = false;
  auto reply = cloud.complete(request, [&](const std::string& piece) {
    if (!streamed) announce(head, ReplySource::Cloud, cloud, sink);
    streamed = true;
    sink.text({piece});
    return true;  // a cloud's reply is read to its end
  });
  CloudAnswer answer;
  answer.model = cloud.tier().model;
  if (!reply) {
    answer.kind = streamed ? CloudAnswer::Kind::FailedMidway : CloudAnswer::Kind::Failed;
    answer.failures = reply.message();
    return answer;
  }
  if (!streamed) announce(head, ReplySource::Cloud, cloud, sink);
  router_.observe_cloud_rtt(reply->ttft_ms);
  answer.kind = CloudAnswer::Kind::Answered;
  answer.reply = std::move(*reply);
  return answer;
}

// The tier's status line counts as its first token; its bytes go to the sink's front end.
CloudAnswer ReplyRouting::forward(const route::CloudClient& cloud, const CloudForward& forwarded, ReplyHead& head,
                                  ReplySink& sink) {
  const auto start = std::chrono::steady_clock::now();
  auto pipe = route::CloudPassThrough::start(cloud, forwarded.api_path, forwarded.body);
  CloudAnswer answer;
  answer.model = cloud.tier().model;
  if (!pipe->wait_for_head(cloud.tier().timeout)) {
    pipe->abandon();
    answer.failures = pipe->error();
    return answer;
  }
  router_.observe_cloud_rtt(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  announce(head, ReplySource::CloudForwarded, cloud, sink);
  sink.forwarded(std::move(pipe));
  answer.kind = CloudAnswer::Kind::Forwarded;
  return answer;
}

}  // namespace inferscope::reply
