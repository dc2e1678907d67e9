// The cloud tier's client against a real OpenAI-compatible server (Inferscope's, in-process on
// loopback, playing the cloud): the probe's round trip, a chat and a text completion streamed
// through unchanged (the same text the server gives whole), the API key, and a dead endpoint.
#include <gtest/gtest.h>

#include "engine/route/cloud_client.h"
#include "tests/support/stories_server.h"

namespace inferscope::route {
namespace {

std::unique_ptr<serve::OpenAiServer> cloud_server(const std::string& key = {}) {
  serve::ServerOptions o;
  o.api_key = key;
  return testing::start_stories_server(o);
}

CloudTier tier_of(const serve::OpenAiServer& server, const std::string& key = {}) {
  CloudTier t;
  t.endpoint = "http://127.0.0.1:" + std::to_string(server.port()) + "/v1";
  t.model = server.model_name();
  t.api_key = key;
  t.timeout = std::chrono::seconds(30);
  return t;
}

CloudRequest greedy_chat() {
  CloudRequest r;
  r.messages = {{"user", "Tell me a story about a dog."}};
  r.max_tokens = 24;
  r.temperature = 0;
  return r;
}

TEST(CloudClient, ProbesAndStreamsAChatThrough) {
  auto server = cloud_server();
  ASSERT_TRUE(server);
  CloudClient cloud(tier_of(*server));
  auto rtt = cloud.probe();
  ASSERT_TRUE(rtt) << rtt.message();
  EXPECT_GT(*rtt, 0);
  std::string streamed;
  int pieces = 0;
  auto reply = cloud.complete(greedy_chat(), [&](const std::string& piece) {
    streamed += piece;
    ++pieces;
    return true;
  });
  ASSERT_TRUE(reply) << reply.message();
  EXPECT_FALSE(reply->text.empty());
  EXPECT_EQ(streamed, reply->text);
  EXPECT_GT(pieces, 1);  // piece by piece, as the server streamed it
  EXPECT_GT(reply->ttft_ms, 0);
  EXPECT_LE(reply->ttft_ms, reply->total_ms);
  EXPECT_GT(reply->completion_tokens, 0);
  // The same request again: greedy, so the same text.
  auto again = cloud.complete(greedy_chat(), {});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->text, reply->text);

  CloudRequest text;
  text.prompt = "Once upon a time";
  text.max_tokens = 8;
  text.temperature = 0;
  auto completion = cloud.complete(text, {});
  ASSERT_TRUE(completion) << completion.message();
  EXPECT_FALSE(completion->text.empty());
}

TEST(CloudClient, SendsTheKeyAndReportsRefusalsAndDeadEndpoints) {
  auto server = cloud_server("s3cret");
  ASSERT_TRUE(server);
  auto refused = CloudClient(tier_of(*server, "wrong")).complete(greedy_chat(), {});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("401"), std::string::npos) << refused.message();
  EXPECT_TRUE(CloudClient(tier_of(*server, "s3cret")).complete(greedy_chat(), {}));
  const CloudTier tier = tier_of(*server, "s3cret");
  server->stop();
  CloudClient dead(tier);
  EXPECT_FALSE(dead.probe());
  auto failed = dead.complete(greedy_chat(), {});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.message().find("failed"), std::string::npos) << failed.message();
}

}  // namespace
}  // namespace inferscope::route
