// generate --route against a cloud tier played by Inferscope's own server in this process: a
// long prompt goes to the cloud and a short one stays local under latency_aware; a private
// prompt stays local; a dead cloud falls back to the local model.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/stories_server.h"

namespace inferscope {
namespace {

using testing::quoted;
using testing::run_cli;

// A config whose local prefill is 1 ms a token (so 150 tokens reach the threshold).
std::string write_config(const std::string& name, int port, const std::string& model = "stories260K.gguf") {
  const auto path = testing::scratch_dir("route-" + name) / "route.yaml";
  std::ofstream(path) << "cloud: {endpoint: http://127.0.0.1:" << port << "/v1, model: " << model << "}\n"
                      << "routing: {policy: latency_aware, threshold: 150ms, fallback: cloud,\n"
                      << "          prefill_tokens_per_s: 1000, private: ['\\bsecret\\b']}\n";
  return path.string();
}

nlohmann::json routed(const std::string& config, const std::string& prompt) {
  const auto run = run_cli("generate --json --temperature 0 --max-tokens 8 --route " + quoted(config) +
                           " --prompt " + quoted(prompt));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << run.out << run.err;
  return j.is_object() ? j["route"] : nlohmann::json();
}

std::string long_prompt() {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "The little dog ran to the park. ";
  return text;
}

TEST(CliRoute, LatencyAwareSendsALongPromptToTheCloudAndKeepsAShortOneLocal) {
  auto cloud = testing::start_stories_server();
  ASSERT_TRUE(cloud);
  const std::string config = write_config("latency", cloud->port());
  const auto short_one = routed(config, "Once upon a time");
  EXPECT_EQ(short_one["tier"], "local") << short_one.dump();
  const auto long_one = routed(config, long_prompt());
  EXPECT_EQ(long_one["tier"], "cloud") << long_one.dump();
  EXPECT_GT(long_one["predicted_local_ttft_ms"].get<double>(), 150);
  EXPECT_TRUE(long_one["cloud_rtt_ms"].is_number());
  EXPECT_GE(cloud->requests_served(), 2);  // the probe and the completion
  const auto secret = routed(config, long_prompt() + " This is secret.");
  EXPECT_EQ(secret["tier"], "local") << secret.dump();
  EXPECT_TRUE(secret["private_match"].get<bool>());
}

TEST(CliRoute, ACloudThatFailsOrIsDeadFallsBackToTheLocalModel) {
  auto cloud = testing::start_stories_server();
  ASSERT_TRUE(cloud);
  // The cloud answers its probe but refuses the completion (it does not serve that model).
  const auto refused = run_cli("generate --temperature 0 --max-tokens 8 --route " +
                               quoted(write_config("refused", cloud->port(), "llama-70b")) + " --prompt " +
                               quoted(long_prompt()));
  EXPECT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("the cloud tier failed"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("404"), std::string::npos) << refused.err;
  EXPECT_FALSE(refused.out.empty());

  const std::string config = write_config("dead", cloud->port());
  cloud->stop();
  const auto run = run_cli("generate --temperature 0 --max-tokens 8 --route " + quoted(config) + " --prompt " +
                           quoted(long_prompt()));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("not reachable"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("route: the local model answers"), std::string::npos) << run.err;
  EXPECT_FALSE(run.out.empty());
}

}  // namespace
}  // namespace inferscope
