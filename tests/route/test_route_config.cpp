// The deployment config: the issue's YAML example, the same as JSON, a list of cloud tiers, and
// clear errors for what does not parse or make sense.
#include <cstdlib>

#include <gtest/gtest.h>

#include "engine/route/route_config.h"

namespace inferscope::route {
namespace {

TEST(RouteConfig, ReadsTheYamlExample) {
  auto c = parse_route_config(R"(
cloud: {endpoint: https://cloud.example/v1, model: llama-70b-int4}
edge: {model: phi-3-mini-int8.gguf, cache_size: 8GB}
routing: {policy: latency_aware, threshold: 150ms, fallback: cloud}
)");
  ASSERT_TRUE(c) << c.message();
  ASSERT_EQ(c->clouds.size(), 1u);
  EXPECT_EQ(c->clouds[0].endpoint, "https://cloud.example/v1");
  EXPECT_EQ(c->clouds[0].model, "llama-70b-int4");
  EXPECT_EQ(c->edge.model, "phi-3-mini-int8.gguf");
  EXPECT_EQ(c->edge.cache_bytes, 8'000'000'000u);
  EXPECT_EQ(c->routing.policy, RoutePolicy::LatencyAware);
  EXPECT_EQ(c->routing.threshold.count(), 150);
  EXPECT_EQ(c->routing.fallback, Fallback::Cloud);
}

TEST(RouteConfig, ReadsJsonAndSeveralCloudTiers) {
  ::setenv("INFERSCOPE_TEST_CLOUD_KEY", "k3y", 1);
  auto c = parse_route_config(R"({"cloud": [{"endpoint": "http://a:8000/v1/", "model": "m"},
      {"endpoint": "http://b/v1", "model": "n", "api_key_env": "INFERSCOPE_TEST_CLOUD_KEY", "timeout": "2s"}],
      "routing": {"policy": "privacy", "private": ["\\bpassword\\b", "ssn"], "threshold": 1.5, "fallback": "none"}})");
  ASSERT_TRUE(c) << c.message();
  ASSERT_EQ(c->clouds.size(), 2u);
  EXPECT_EQ(c->clouds[0].endpoint, "http://a:8000/v1");  // the trailing slash dropped
  EXPECT_EQ(c->clouds[1].api_key, "k3y");
  EXPECT_EQ(c->clouds[1].timeout.count(), 2000);
  EXPECT_EQ(c->routing.policy, RoutePolicy::Privacy);
  EXPECT_EQ(c->routing.private_patterns.size(), 2u);
  EXPECT_EQ(c->routing.threshold.count(), 1);
  EXPECT_EQ(c->routing.fallback, Fallback::None);
  EXPECT_TRUE(c->edge.enabled);
}

TEST(RouteConfig, SaysWhatIsWrong) {
  const auto error = [](const char* text) {
    auto c = parse_route_config(text);
    EXPECT_FALSE(c) << text;
    return c ? std::string() : c.message();
  };
  EXPECT_NE(error("cloud: {endpoint: ftp://x, model: m}").find("http:// or https://"), std::string::npos);
  EXPECT_NE(error("routing: {policy: fastest}").find("unknown 'fastest'"), std::string::npos);
  EXPECT_NE(error("routing: {threshold: 3 weeks}").find("unknown unit"), std::string::npos);
  EXPECT_NE(error("routing: {private: ['(']}").find("not a regular expression"), std::string::npos);
  EXPECT_NE(error("edge: {cache_size: lots}").find("not a size"), std::string::npos);
  EXPECT_NE(error("cloud: {endpoint: http://x, model: m, api_key_env: INFERSCOPE_NO_SUCH_VARIABLE}").find("not set"),
            std::string::npos);
  EXPECT_NE(error("edge: {enabled: false}").find("no tier"), std::string::npos);
  EXPECT_NE(error("cloud: [unclosed").find("does not parse"), std::string::npos);
  EXPECT_NE(error("- just\n- a list").find("must be a map"), std::string::npos);
  auto missing = load_route_config("/nonexistent/route.yaml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::route
