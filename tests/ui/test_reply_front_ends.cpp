// One reply path, three front ends: the same greedy chat request through the app's controller,
// the OpenAI server and `inferscope-cli generate --chat` gives the same reply, word for word.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/raw_http.h"
#include "tests/support/stories_server.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_thread.h"

namespace inferscope::ui {
namespace {

constexpr const char* kQuestion = "Tell me a story about a cat.";
constexpr int kMaxTokens = 24;

std::string appReply(EngineController* engine) {
  QSignalSpy loaded(engine, &EngineController::modelLoaded);
  engine->loadModel(testing::bundledModel(), LoadOptions{});
  EXPECT_TRUE(testing::waitForSignal(loaded, 10000));
  ChatRequest request;
  request.messages = {{QStringLiteral("user"), QString::fromLatin1(kQuestion)}};
  request.maxTokens = kMaxTokens;
  request.sampling.temperature = 0;
  QSignalSpy chunks(engine, &EngineController::tokens);
  QSignalSpy finished(engine, &EngineController::replyFinished);
  engine->generate(request);
  EXPECT_TRUE(testing::waitForSignal(finished, 20000));
  QString text;
  for (const auto& args : chunks) text += args.front().toString();
  return text.toStdString();
}

std::string serverReply() {
  auto server = inferscope::testing::start_stories_server();
  if (!server) return {};
  const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", kQuestion}}}},
                               {"max_tokens", kMaxTokens},
                               {"temperature", 0}};
  const auto reply = inferscope::testing::raw_post(server->port(), "/v1/chat/completions", body.dump());
  EXPECT_EQ(reply.status, 200) << reply.text;
  return nlohmann::json::parse(inferscope::testing::raw_body(reply))["choices"][0]["message"]["content"];
}

std::string cliReply() {
  using inferscope::testing::quoted;
  const auto run = inferscope::testing::run_cli("generate --chat --json --temperature 0 --max-tokens " +
                                                std::to_string(kMaxTokens) + " --prompt " + quoted(kQuestion));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out, nullptr, false);
  return j.is_object() ? j["text"].get<std::string>() : std::string();
}

TEST(ReplyFrontEnds, TheAppTheServerAndTheCliGiveTheSameGreedyReply) {
  EngineThread thread;
  const std::string app = appReply(thread.controller());
  const std::string server = serverReply();
  const std::string cli = cliReply();
  ASSERT_FALSE(app.empty());
  EXPECT_EQ(server, app);
  EXPECT_EQ(cli, app);
}

}  // namespace
}  // namespace inferscope::ui
