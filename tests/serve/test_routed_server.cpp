// A server with edge-cloud routing (serve --route): a second server on loopback plays the cloud
// tier. A long prompt is passed through to the cloud and its reply comes back unchanged (whole
// and streamed); a short one and a private one are answered here; a cloud killed mid-test falls
// back to the local model; with no fallback the client gets a 502.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/serve/openai_server.h"
#include "tests/support/raw_http.h"
#include "tests/support/stories_server.h"

namespace inferscope::serve {
namespace {

using nlohmann::json;

std::unique_ptr<OpenAiServer> start(ServerOptions o) { return testing::start_stories_server(std::move(o)); }

// An edge server routing to `cloud`: 1 ms a prefilled token, a 150 ms threshold.
std::unique_ptr<OpenAiServer> edge_for(const OpenAiServer& cloud, route::Fallback fallback = route::Fallback::Cloud) {
  route::RouteConfig config;
  config.clouds.push_back({"http://127.0.0.1:" + std::to_string(cloud.port()) + "/v1", cloud.model_name(), "",
                           std::chrono::seconds(30)});
  config.routing.threshold = std::chrono::milliseconds(150);
  config.routing.prefill_tokens_per_s = 1000;
  config.routing.fallback = fallback;
  config.routing.private_patterns = {"\\bsecret\\b"};
  ServerOptions o;
  o.route = std::move(config);
  return start(std::move(o));
}

std::string long_prompt() {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "The little dog ran to the park. ";
  return text;
}

json completion(const std::string& prompt, bool stream = false) {
  return {{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 0}, {"stream", stream}};
}

bool routed_to(const testing::RawReply& reply, const std::string& tier) {
  return reply.text.find("X-Inferscope-Route: " + tier + "\r\n") != std::string::npos;
}

TEST(RoutedServer, LongPromptsPassThroughToTheCloudShortAndPrivateOnesStay) {
  auto cloud = start({});
  ASSERT_TRUE(cloud);
  auto edge = edge_for(*cloud);
  ASSERT_TRUE(edge);
  const std::int64_t cloud_before = cloud->requests_served();
  const auto routed = testing::raw_post(edge->port(), "/v1/completions", completion(long_prompt()).dump());
  EXPECT_EQ(routed.status, 200) << routed.text;
  EXPECT_TRUE(routed_to(routed, "cloud")) << routed.text.substr(0, 400);
  EXPECT_EQ(cloud->requests_served(), cloud_before + 1);
  // The cloud's own answer to the same request, for comparison: the same text.
  const auto direct = testing::raw_post(cloud->port(), "/v1/completions", completion(long_prompt()).dump());
  const std::string routed_body = testing::raw_body(routed);
  EXPECT_NE(routed_body.find(json::parse(testing::raw_body(direct))["choices"][0]["text"].dump()), std::string::npos);

  const auto streamed = testing::raw_post(edge->port(), "/v1/completions", completion(long_prompt(), true).dump());
  EXPECT_TRUE(routed_to(streamed, "cloud"));
  EXPECT_NE(streamed.text.find("data: [DONE]"), std::string::npos);

  const auto short_one = testing::raw_post(edge->port(), "/v1/completions", completion("Once upon a time").dump());
  EXPECT_EQ(short_one.status, 200);
  EXPECT_TRUE(routed_to(short_one, "local"));
  const auto secret = testing::raw_post(edge->port(), "/v1/completions", completion(long_prompt() + " secret").dump());
  EXPECT_TRUE(routed_to(secret, "local"));
  const json chat = {{"messages", {{{"role", "system"}, {"content", "The secret is 42."}}, {{"role", "user"}, {"content", long_prompt()}}}},
                     {"max_tokens", 8}};
  EXPECT_TRUE(routed_to(testing::raw_post(edge->port(), "/v1/chat/completions", chat.dump()), "local"))
      << "a private word in any message keeps the chat here";
}

TEST(RoutedServer, ACloudKilledMidTestFallsBackOrFailsAsConfigured) {
  auto cloud = start({});
  ASSERT_TRUE(cloud);
  auto edge = edge_for(*cloud);
  auto strict = edge_for(*cloud, route::Fallback::None);
  ASSERT_TRUE(edge && strict);
  EXPECT_TRUE(routed_to(testing::raw_post(edge->port(), "/v1/completions", completion(long_prompt()).dump()), "cloud"));
  cloud->stop();
  const auto fallback = testing::raw_post(edge->port(), "/v1/completions", completion(long_prompt()).dump());
  EXPECT_EQ(fallback.status, 200) << fallback.text;
  EXPECT_TRUE(routed_to(fallback, "local (fallback)")) << fallback.text.substr(0, 400);
  EXPECT_FALSE(json::parse(testing::raw_body(fallback))["choices"][0]["text"].get<std::string>().empty());
  const auto refused = testing::raw_post(strict->port(), "/v1/completions", completion(long_prompt()).dump());
  EXPECT_EQ(refused.status, 502) << refused.text;
  EXPECT_NE(refused.text.find("cloud_failed"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::serve
