// The routing decision: latency_aware against the threshold and the cloud's round trip, the
// prefix cache's part in the prediction, local_first / cloud_first, busy and missing tiers,
// private prompts that never leave, and the fallbacks.
#include <gtest/gtest.h>

#include "engine/route/router.h"

namespace inferscope::route {
namespace {

RoutingRules rules(RoutePolicy policy, double prefill_tokens_per_s = 1000) {
  RoutingRules r;
  r.policy = policy;
  r.threshold = std::chrono::milliseconds(150);
  r.prefill_tokens_per_s = prefill_tokens_per_s;  // 1 ms a token
  r.private_patterns = {"\\bpassword\\b", "\\d{3}-\\d{2}-\\d{4}"};
  return r;
}

RouteInputs prompt_of(std::int64_t tokens, std::int64_t cached = 0, std::string_view text = "a question") {
  RouteInputs in;
  in.prompt = text;
  in.prompt_tokens = tokens;
  in.cached_tokens = cached;
  return in;
}

TEST(Router, LatencyAwareSendsLongPromptsToTheCloudAndShortOnesLocally) {
  Router router(rules(RoutePolicy::LatencyAware));
  router.observe_cloud_rtt(40);
  const RouteDecision short_one = router.decide(prompt_of(100));
  EXPECT_EQ(short_one.tier, Tier::Local) << short_one.reason;
  EXPECT_DOUBLE_EQ(short_one.predicted_local_ttft_ms, 100);
  const RouteDecision long_one = router.decide(prompt_of(2000));
  EXPECT_EQ(long_one.tier, Tier::Cloud) << long_one.reason;
  EXPECT_NE(long_one.reason.find("exceeds the 150 ms threshold"), std::string::npos) << long_one.reason;
  // The prefix cache holds most of it: only the rest is prefilled.
  EXPECT_EQ(router.decide(prompt_of(2000, 1900)).tier, Tier::Local);
}

TEST(Router, ASlowCloudKeepsEvenALongPromptLocal) {
  Router router(rules(RoutePolicy::LatencyAware));
  router.observe_cloud_rtt(5000);
  const RouteDecision d = router.decide(prompt_of(2000));
  EXPECT_EQ(d.tier, Tier::Local);
  EXPECT_NE(d.reason.find("no shorter"), std::string::npos) << d.reason;
}

TEST(Router, MeasurementsMoveThePrediction) {
  Router router(rules(RoutePolicy::LatencyAware, 0));
  EXPECT_DOUBLE_EQ(router.predicted_local_ttft_ms(500), 0);  // nothing known yet: local
  router.observe_local_prefill(100, 50);                      // 0.5 ms a token
  EXPECT_DOUBLE_EQ(router.predicted_local_ttft_ms(500), 250);
  router.observe_local_prefill(100, 150);  // 1.5 ms a token, averaged in
  EXPECT_GT(router.predicted_local_ttft_ms(500), 250);
  EXPECT_LT(router.predicted_local_ttft_ms(500), 750);
}

TEST(Router, PoliciesBusyAndMissingTiers) {
  EXPECT_EQ(Router(rules(RoutePolicy::LocalFirst)).decide(prompt_of(5000)).tier, Tier::Local);
  EXPECT_EQ(Router(rules(RoutePolicy::CloudFirst)).decide(prompt_of(1)).tier, Tier::Cloud);
  RouteInputs busy = prompt_of(1);
  busy.local_busy = true;
  EXPECT_EQ(Router(rules(RoutePolicy::LocalFirst)).decide(busy).tier, Tier::Cloud);
  RouteInputs no_cloud = prompt_of(5000);
  no_cloud.cloud_available = false;
  EXPECT_EQ(Router(rules(RoutePolicy::CloudFirst)).decide(no_cloud).tier, Tier::Local);
}

TEST(Router, PrivatePromptsNeverLeaveAndDoNotFallBackToTheCloud) {
  for (RoutePolicy policy : {RoutePolicy::CloudFirst, RoutePolicy::Privacy, RoutePolicy::LatencyAware}) {
    Router router(rules(policy));
    RouteInputs in = prompt_of(5000, 0, "my PASSWORD is hunter2");
    in.local_busy = true;
    const RouteDecision d = router.decide(in);
    EXPECT_EQ(d.tier, Tier::Local) << policy_name(policy);
    EXPECT_TRUE(d.private_match);
    EXPECT_FALSE(router.fallback_after(Tier::Local, d).has_value());
  }
  Router router(rules(RoutePolicy::Privacy));
  EXPECT_TRUE(router.decide(prompt_of(1, 0, "ssn 123-45-6789")).private_match);
  EXPECT_EQ(router.decide(prompt_of(5000, 0, "passwords in general")).tier, Tier::Cloud);  // a whole word only
}

TEST(Router, Fallbacks) {
  RoutingRules r = rules(RoutePolicy::LatencyAware);
  const RouteDecision plain;
  EXPECT_EQ(Router(r).fallback_after(Tier::Local, plain), Tier::Cloud);
  EXPECT_EQ(Router(r).fallback_after(Tier::Cloud, plain), Tier::Local);
  r.fallback = Fallback::Local;
  EXPECT_FALSE(Router(r).fallback_after(Tier::Local, plain).has_value());
  EXPECT_EQ(Router(r).fallback_after(Tier::Cloud, plain), Tier::Local);
  r.fallback = Fallback::None;
  EXPECT_FALSE(Router(r).fallback_after(Tier::Cloud, plain).has_value());
}

}  // namespace
}  // namespace inferscope::route
