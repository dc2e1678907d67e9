#include "app/cli/route_cli.h"

#include <chrono>
#include <cstdio>

namespace inferscope::cli {

namespace {

constexpr int kCalibrationTokens = 32;

// Times a prefill of kCalibrationTokens tokens of the prompt (repeated when shorter) on the session.
void measure_prefill(Session& session, const std::vector<int32_t>& prompt, route::Router& router) {
  std::vector<int32_t> tokens;
  while (!prompt.empty() && static_cast<int>(tokens.size()) < kCalibrationTokens) {
    tokens.insert(tokens.end(), prompt.begin(), prompt.end());
  }
  tokens.resize(std::min<std::size_t>(tokens.size(), kCalibrationTokens));
  std::vector<float> logits;
  const auto start = std::chrono::steady_clock::now();
  if (tokens.empty() || !session.evaluate(tokens, logits)) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  router.observe_local_prefill(static_cast<std::int64_t>(tokens.size()), ms);
}

route::CloudRequest cloud_request(const GenerateRequest& req, const CloudAsk& ask) {
  route::CloudRequest r;
  r.messages = ask.messages;
  r.prompt = ask.prompt;
  r.max_tokens = req.max_tokens;
  r.temperature = req.sampling.temperature;
  r.top_p = req.sampling.top_p;
  if (req.sampling.seed != SamplingParams::kRandomSeed) r.seed = static_cast<long long>(req.sampling.seed);
  return r;
}

// The first cloud tier that answers, printing as it streams; why none did otherwise.
Result<route::CloudReply> ask_cloud(const std::vector<route::CloudClient>& clouds, const route::CloudRequest& request,
                                    route::Router& router, bool json) {
  std::string why = "no cloud tier is configured";
  for (const route::CloudClient& cloud : clouds) {
    auto reply = cloud.complete(request, [&](const std::string& piece) {
      if (!json) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
      return true;
    });
    if (reply) {
      router.observe_cloud_rtt(reply->ttft_ms);
      return reply;
    }
    why = reply.message();
  }
  return Status::error(why);
}

}  // namespace

Result<RoutedRequest> route_request(const route::RouteConfig& config, Session& session, const GenerateRequest& req,
                                    const CloudAsk& ask, bool json) {
  route::Router router(config.routing);
  std::vector<route::CloudClient> clouds;
  for (const route::CloudTier& tier : config.clouds) {
    route::CloudClient cloud(tier);
    auto rtt = cloud.probe();
    if (!rtt) {
      std::fprintf(stderr, "route: the cloud tier is not reachable: %s\n", rtt.message().c_str());
      continue;
    }
    router.observe_cloud_rtt(*rtt);
    clouds.push_back(std::move(cloud));
  }
  const std::vector<int32_t> tokens = session.model().tokenizer().encode(req.prompt, req.add_special, req.parse_special);
  if (config.routing.prefill_tokens_per_s <= 0 && config.edge.enabled) measure_prefill(session, tokens, router);
  route::RouteInputs in;
  in.prompt = ask.messages.empty() ? std::string_view(ask.prompt) : std::string_view(ask.messages.back().content);
  in.prompt_tokens = static_cast<std::int64_t>(tokens.size());
  in.local_available = config.edge.enabled;
  in.cloud_available = !clouds.empty();
  RoutedRequest routed;
  routed.decision = router.decide(in);
  if (routed.decision.tier == route::Tier::Local) return routed;
  auto reply = ask_cloud(clouds, cloud_request(req, ask), router, json);
  if (reply) {
    routed.cloud = std::move(*reply);
    return routed;
  }
  if (!router.fallback_after(route::Tier::Cloud, routed.decision) || !config.edge.enabled) {
    return Status::error("the cloud tier failed and there is no fallback: " + reply.message());
  }
  routed.fallback = "the cloud tier failed (" + reply.message() + "); the local model answers";
  return routed;
}

nlohmann::json route_json(const RoutedRequest& routed) {
  const route::RouteDecision& d = routed.decision;
  nlohmann::json j = {{"decided", route::tier_name(d.tier)},
                      {"tier", routed.cloud ? "cloud" : "local"},
                      {"reason", d.reason},
                      {"predicted_local_ttft_ms", d.predicted_local_ttft_ms},
                      {"cloud_rtt_ms", d.cloud_rtt_ms ? nlohmann::json(*d.cloud_rtt_ms) : nlohmann::json()},
                      {"private_match", d.private_match}};
  if (!routed.fallback.empty()) j["fallback"] = routed.fallback;
  return j;
}

void print_route(const RoutedRequest& routed) {
  std::fprintf(stderr, "route: %s answers: %s\n", routed.cloud ? "the cloud" : "the local model",
               routed.decision.reason.c_str());
  if (!routed.fallback.empty()) std::fprintf(stderr, "route: %s\n", routed.fallback.c_str());
}

}  // namespace inferscope::cli
